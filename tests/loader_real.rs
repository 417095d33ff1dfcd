//! The loader over the real stores (copies of the contract fixtures): reading sessions must
//! not look like a change to the watcher, and a real change must.

mod common;

use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

use common::Home;
use spool::app::{Action, View};
use spool::loader::{Event, Loader, Request};

/// The tests here count threads and watch timing: one at a time.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Drain events until every store has finished its first pass.
fn until_listed(rx: &mpsc::Receiver<Event>, stores: usize) -> Vec<spool::model::SessionSummary> {
    let mut rows = Vec::new();
    let mut done = 0;
    while done < stores {
        match rx
            .recv_timeout(Duration::from_secs(10))
            .expect("loader answers")
        {
            Event::Action(Action::Cached(r) | Action::Reread { rows: r, .. }) => {
                rows.extend(r.into_iter().map(std::sync::Arc::unwrap_or_clone))
            }
            Event::Action(Action::Progress { finished: true, .. }) => done += 1,
            _ => {}
        }
    }
    rows
}

/// Row updates (or removals) that arrive within `wait`.
fn row_events(rx: &mpsc::Receiver<Event>, wait: Duration) -> Vec<String> {
    let end = Instant::now() + wait;
    let mut seen = Vec::new();
    while let Some(left) = end.checked_duration_since(Instant::now()) {
        match rx.recv_timeout(left) {
            Ok(Event::Action(Action::Cached(r) | Action::Reread { rows: r, .. })) => {
                seen.extend(r.into_iter().map(|s| s.reference()));
            }
            Ok(Event::Action(Action::SessionChanged(k))) => seen.push(format!("changed {k:?}")),
            Ok(Event::Action(Action::Removed(k))) => seen.push(format!("removed {k:?}")),
            Ok(_) => {}
            Err(_) => break,
        }
    }
    seen
}

#[test]
fn reading_sessions_is_not_a_change_but_appending_is() {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let h = Home::with_fixtures();
    let stores = Arc::new(h.stores());
    let (tx, rx) = mpsc::channel();
    let loader = Loader::start(stores.clone(), tx);
    let rows = until_listed(&rx, stores.stores.len());
    assert!(rows.len() >= 9);
    // Open every session in every view: the watcher sees the reads (access events).
    for (token, s) in rows.iter().enumerate() {
        for view in [View::Transcript, View::Window, View::Raw] {
            loader.request(Request {
                token: token as u64,
                summary: s.clone(),
                view,
                rounds: Some(3),
            });
            std::thread::sleep(Duration::from_millis(5));
        }
    }
    let idle = row_events(&rx, Duration::from_millis(1500));
    assert!(idle.is_empty(), "reads were taken for changes: {idle:?}");

    // A real append shows up, re-summarized.
    let log = h.loom_dir().join("sessions/20260314-091502.jsonl");
    let mut f = std::fs::OpenOptions::new().append(true).open(&log).unwrap();
    use std::io::Write;
    writeln!(
        f,
        r#"{{"kind":"message","time":"2026-03-14T14:05:00+01:00","message":{{"role":"assistant","content":"done"}}}}"#
    )
    .unwrap();
    drop(f);
    let changed = row_events(&rx, Duration::from_secs(3));
    assert!(
        changed.iter().any(|r| r == "loom:20260314-091502"),
        "append not noticed: {changed:?}"
    );
}

/// spool's own background threads in this process (all named `spool-*`).
fn spool_threads() -> Vec<String> {
    std::fs::read_dir("/proc/self/task")
        .map(|d| {
            d.flatten()
                .filter_map(|t| std::fs::read_to_string(t.path().join("comm")).ok())
                .map(|n| n.trim().to_string())
                .filter(|n| n.starts_with("spool-"))
                .collect()
        })
        .unwrap_or_default()
}

fn wait_until_no_spool_threads(limit: Duration) {
    let end = Instant::now() + limit;
    while !spool_threads().is_empty() && Instant::now() < end {
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn dropping_the_loader_stops_its_threads() {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    wait_until_no_spool_threads(Duration::from_secs(5));
    let h = Home::with_fixtures();
    let stores = Arc::new(h.stores());
    let (tx, rx) = mpsc::channel();
    let loader = Loader::start(stores.clone(), tx);
    until_listed(&rx, stores.stores.len());
    assert!(!spool_threads().is_empty());
    drop(loader);
    wait_until_no_spool_threads(Duration::from_secs(5));
    assert_eq!(
        spool_threads(),
        Vec::<String>::new(),
        "loader threads outlived the loader"
    );
}

/// A cold start of a Codex store (no catalog, no hints) shows the rollouts with the newest
/// names first, found without an `lstat` of every rollout, and then lists exactly what a
/// full discovery does: the first batch holds the newest session, not the resumed one
/// only a full discovery finds, and the rows at the end are today's, one per id.
#[test]
fn a_cold_codex_start_shows_the_newest_rollouts_first_then_what_discovery_lists() {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let d = tempfile::tempdir().unwrap();
    let codex = d.path().join("codex");
    common::rollouts::store(&codex, 200);
    let empty = d.path().join("empty");
    let stores = Arc::new(spool::store::Stores::open(&spool::store::Roots {
        loop_dir: empty.clone(),
        loom_dir: empty.clone(),
        harness_dir: empty.clone(),
        claude_dir: empty.clone(),
        codex_dir: codex.clone(),
        pi_dir: empty,
        state_dir: d.path().join("state"),
    }));
    let (tx, rx) = mpsc::channel();
    let _loader = Loader::start(stores.clone(), tx);
    let mut first: Option<Vec<String>> = None;
    let mut rows = std::collections::BTreeMap::new();
    loop {
        match rx
            .recv_timeout(Duration::from_secs(10))
            .expect("loader answers")
        {
            Event::Action(Action::Cached(r)) => {
                let titles = r.iter().map(|s| s.title().to_string()).collect();
                first.get_or_insert(titles);
                rows.extend(
                    r.into_iter()
                        .map(|s| (s.id.to_string(), Arc::unwrap_or_clone(s))),
                );
            }
            Event::Action(Action::Removed(keys)) => {
                for (_, id) in keys {
                    rows.remove(&id);
                }
            }
            Event::Action(Action::Progress {
                finished: true,
                kind: spool::model::StoreKind::Codex,
                ..
            }) => break,
            _ => {}
        }
    }
    let first = first.expect("rows");
    assert!(
        first.len() < 200,
        "the first batch is a screenful: {}",
        first.len()
    );
    assert!(first.contains(&"session 199".to_string()), "{first:?}");
    assert!(!first.contains(&"resumed".to_string()), "{first:?}");
    // Today's list: a full discovery of a fresh store, each candidate summarized.
    let fresh = spool::store::Stores::open(&spool::store::Roots {
        codex_dir: codex,
        ..spool::store::Roots::all_in(d.path())
    });
    let codex_store = common::store_of(&fresh, spool::model::StoreKind::Codex);
    let want: std::collections::BTreeMap<_, _> = (codex_store.discover().iter())
        .filter_map(|c| codex_store.summarize(c))
        .map(|s| (s.id.to_string(), s))
        .collect();
    assert_eq!(want.len(), 201);
    // The newest is also in Codex's archive: the first batch's row says so, as today's.
    let dup = |s: &spool::model::SessionSummary| s.badges().any(|b| b == "duplicate in archive");
    assert!(dup(&want["019ceba0-ae55-7d10-9f2a-0000000000c7"]));
    assert_eq!(rows, want);
}

/// A cold start's Codex listing sends its first screen and then waits, before its full
/// discovery, until the terminal has read that frame (`tui::ack::after_frame`): the
/// discovery (both cores at 10k rollouts) ran while the frame was drawn and read (issue 10).
#[test]
fn a_cold_codex_listing_discovers_after_the_first_rows_frame_is_read() {
    use spool::model::StoreKind;
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    // The frame's request is out (the UI writes it once the rows are drawn), unanswered;
    // answered when `open` drops, whatever happens below.
    let open = spool::tui::ack::asked_for_tests(Duration::from_secs(60));
    let d = tempfile::tempdir().unwrap();
    let codex = d.path().join("codex");
    common::rollouts::store(&codex, 200);
    let stores = Arc::new(spool::store::Stores::open(&spool::store::Roots {
        codex_dir: codex,
        ..spool::store::Roots::all_in(&d.path().join("empty"))
    }));
    let (tx, rx) = mpsc::channel();
    let _loader = Loader::start(stores, tx);
    let next = |wait| rx.recv_timeout(wait);
    let discovered = |e: &Event| {
        matches!(
            e,
            Event::Action(Action::Progress {
                kind: StoreKind::Codex,
                ..
            })
        )
    };
    // The first screen comes at once.
    loop {
        let e = next(Duration::from_secs(10)).expect("the first screen");
        assert!(!discovered(&e), "discovered before its first screen");
        if matches!(&e, Event::Action(Action::Cached(r)) if !r.is_empty()) {
            break;
        }
    }
    // Nothing of the discovery while the terminal has not read the frame.
    while let Ok(e) = next(Duration::from_millis(500)) {
        assert!(!discovered(&e), "discovered before the frame was read");
    }
    drop(open);
    while !discovered(&next(Duration::from_secs(10)).expect("the discovery")) {}
}

/// A cold start of a Claude Code store (no catalog, no hints) guesses its first screen from
/// the newest project directories (issue 10) and the guess is wrong: `resumed`, in an older
/// project, was written after every other session. The browser's list, fed the loader's
/// events as the run loop feeds them (a frame after the first rows), keeps the selected
/// session on its screen row while the rest stream in, `resumed` goes in above it, and the
/// list ends in the order of every session read at once.
#[test]
fn a_cold_claude_start_guesses_its_first_screen_and_the_selection_holds() {
    use spool::app::{App, Options};
    use spool::model::StoreKind;
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let d = tempfile::tempdir().unwrap();
    let claude = d.path().join("claude");
    common::transcripts::store(&claude, 300, 6);
    let roots = spool::store::Roots {
        claude_dir: claude,
        ..spool::store::Roots::all_in(&d.path().join("empty"))
    };
    let stores = Arc::new(spool::store::Stores::open(&roots));
    let now = chrono::DateTime::from_timestamp(1_772_323_200 + 400 * 3600, 0).unwrap();
    let mut app = App::new(Options::new(now));
    app.update(Action::Resize(120, 30));
    spool::loader::set_screenful(app.list_rows_visible());
    let (tx, rx) = mpsc::channel();
    let _loader = Loader::start(stores, tx);
    let title = |app: &App, k: &(StoreKind, String)| app.list.get(k).unwrap().title().to_string();
    // (selected session, its screen row) once the first rows are drawn.
    let mut held: Option<((StoreKind, String), usize)> = None;
    loop {
        let e = rx
            .recv_timeout(Duration::from_secs(10))
            .expect("loader answers");
        let Event::Action(a) = e else { continue };
        let done = matches!(
            a,
            Action::Progress {
                finished: true,
                kind: StoreKind::Claude,
                ..
            }
        );
        app.update(a);
        app.settle();
        if held.is_none() && app.list.total_rows() > 0 {
            // The first frame: the newest project's newest session on top, `resumed` not
            // listed yet.
            app.list.shown();
            let k = app.selected().cloned().expect("a selection");
            assert_eq!(title(&app, &k), "session 299");
            assert!(
                !(0..app.list.len()).any(|i| { title(&app, &app.list.keys(i, 1)[0]) == "resumed" })
            );
            held = Some((k, app.list.cursor - app.list.offset));
        }
        if let Some((k, row)) = &held {
            assert_eq!(app.selected(), Some(k), "the selection moved");
            assert_eq!(app.list.cursor - app.list.offset, *row, "its row moved");
        }
        if done {
            break;
        }
    }
    let shown: Vec<String> = (app.list.keys(0, app.list.len()).iter())
        .map(|k| title(&app, k))
        .collect();
    assert_eq!(shown.len(), 301);
    assert_eq!(shown[..2], ["resumed", "session 299"]);
    // Every session read at once, as a warm start shows them: the same rows, the same order.
    let fresh = spool::store::Stores::open(&roots);
    let store = common::store_of(&fresh, StoreKind::Claude);
    let rows: Vec<_> = (store.discover().iter())
        .filter_map(|c| store.summarize(c))
        .collect();
    let mut all = App::new(Options::new(now));
    all.update(Action::Resize(120, 30));
    all.update(Action::Rows(rows));
    all.settle();
    let want: Vec<String> = (all.list.keys(0, all.list.len()).iter())
        .map(|k| title(&all, k))
        .collect();
    assert_eq!(shown, want);
}
