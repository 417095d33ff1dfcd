//! The background loader over an in-memory store: rows stream in batches with progress, the
//! pane worker answers with request tokens, and a new session appears via the watcher poll.
//! On a start with no catalog, a store that orders by name lists first.

mod tui_common;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, mpsc};
use std::time::Duration;

use spool::app::{Action, Loaded, View};
use spool::error::Result;
use spool::loader::{Event, Loader, Request};
use spool::model::{SessionSummary, StoreKind, Transcript, Window};
use spool::store::{Candidate, Span, Store, Stores};

/// A flag tests open (set true) and threads wait on.
type Gate = Arc<(Mutex<bool>, Condvar)>;

struct Fake {
    dir: PathBuf,
    ids: Arc<Mutex<Vec<String>>>,
    kind: StoreKind,
    /// Claims to order by name (as loom does).
    by_name: bool,
    /// `discover` waits until this opens (set true), when given.
    gate: Option<Arc<(Mutex<bool>, Condvar)>>,
    /// `discover` was called.
    discovered: Arc<AtomicBool>,
    /// The listing thread's nice value at each `summarize`, in order.
    nices: Arc<Mutex<Vec<i32>>>,
    /// `summarize` past this many calls waits until the gate opens, when given.
    hold_reads: Option<(usize, Gate)>,
}

impl Fake {
    fn new(dir: &Path, ids: Arc<Mutex<Vec<String>>>) -> Fake {
        Fake {
            dir: dir.to_path_buf(),
            ids,
            kind: StoreKind::Loom,
            by_name: false,
            gate: None,
            discovered: Arc::default(),
            nices: Arc::default(),
            hold_reads: None,
        }
    }
}

impl Store for Fake {
    fn kind(&self) -> StoreKind {
        self.kind
    }
    fn orders_by_name(&self) -> bool {
        self.by_name
    }
    fn sessions_dir(&self) -> &Path {
        &self.dir
    }
    fn discover(&self) -> Vec<Candidate> {
        self.discovered.store(true, Ordering::SeqCst);
        if let Some(g) = &self.gate {
            let open = g.0.lock().unwrap();
            drop(g.1.wait_while(open, |o| !*o).unwrap());
        }
        let ids = self.ids.lock().unwrap().clone();
        ids.into_iter()
            .map(|id| Candidate {
                path: self.dir.join(&id),
                id,
                mtime: None,
                stat: None,
            })
            .collect()
    }
    fn summarize(&self, c: &Candidate) -> Option<SessionSummary> {
        let nice = spool::priority::current_nice();
        let called = {
            let mut nices = self.nices.lock().unwrap();
            nices.push(nice);
            nices.len()
        };
        if let Some((_, g)) = self.hold_reads.as_ref().filter(|(n, _)| called > *n) {
            let open = g.0.lock().unwrap();
            drop(g.1.wait_while(open, |o| !*o).unwrap());
        }
        Some(tui_common::row(
            self.kind,
            &c.id,
            &format!("title {}", c.id),
            1,
        ))
    }
    fn transcript(&self, id: &str, span: Span) -> Result<Transcript> {
        let s = tui_common::row(StoreKind::Loom, id, "t", 1);
        let mut t = tui_common::transcript(&s);
        if let Span::LastRounds(n) = span {
            t.warnings = vec![format!("last {n}")];
        }
        Ok(t)
    }
    fn window(&self, id: &str) -> Result<Window> {
        Ok(tui_common::window(&tui_common::row(
            StoreKind::Loom,
            id,
            "t",
            1,
        )))
    }
    fn raw(&self, _id: &str) -> Result<String> {
        Ok("raw".into())
    }
    fn set_pinned(&self, _: &str, _: bool) -> Result<()> {
        Ok(())
    }
    fn set_unread(&self, _: &str, _: bool) -> Result<()> {
        Ok(())
    }
    fn set_archived(&self, _: &str, _: bool) -> Result<()> {
        Ok(())
    }
    fn rename(&self, _: &str, _: &str) -> Result<()> {
        Ok(())
    }
    fn fork(&self, id: &str, _: Option<usize>) -> Result<String> {
        Ok(format!("{id}-fork"))
    }
    fn delete(&self, _: &str) -> Result<()> {
        Ok(())
    }
}

/// The stores of a test with one store, its state under `dir`.
fn only(fake: Fake, dir: &Path) -> Arc<Stores> {
    Arc::new(Stores {
        stores: vec![Box::new(fake)],
        state_dir: dir.join("state"),
    })
}

/// The ids of a store of two sessions.
fn two_sessions() -> Arc<Mutex<Vec<String>>> {
    Arc::new(Mutex::new(vec!["s1".to_string(), "s2".to_string()]))
}

#[test]
fn rows_stream_with_progress_then_pane_answers_and_watch_adds_new_sessions() {
    let dir = tempfile::tempdir().unwrap();
    let ids = Arc::new(Mutex::new(
        (0..1000).map(|i| format!("s{i:04}")).collect::<Vec<_>>(),
    ));
    let stores = only(Fake::new(dir.path(), ids.clone()), dir.path());
    let (tx, rx) = mpsc::channel();
    let loader = Loader::start(stores, tx);
    let mut rows = 0;
    let mut batches = 0;
    let mut last: Option<(usize, usize, bool)> = None;
    while last.is_none_or(|(_, _, finished)| !finished) {
        match rx.recv_timeout(Duration::from_secs(10)).unwrap() {
            Event::Action(Action::Cached(r) | Action::Reread { rows: r, .. }) => {
                rows += r.len();
                batches += 1;
            }
            Event::Action(Action::Progress {
                done,
                total,
                finished,
                ..
            }) => last = Some((done, total, finished)),
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(rows, 1000);
    assert!(batches >= 4, "batches of at most 256: {batches}");
    assert_eq!(last, Some((1000, 1000, true)));

    let s = tui_common::row(StoreKind::Loom, "s0001", "t", 1);
    loader.request(Request {
        token: 7,
        summary: s.clone(),
        view: View::Transcript,
        rounds: Some(20),
    });
    match rx.recv_timeout(Duration::from_secs(10)).unwrap() {
        Event::Action(Action::Loaded {
            token: 7,
            content: Loaded::Transcript(t),
        }) => {
            assert_eq!(t.warnings, ["last 20"]);
        }
        other => panic!("{other:?}"),
    }

    // A new session shows up through the poll / watcher pass.
    ids.lock().unwrap().push("s9999".into());
    loader.poke();
    loop {
        match rx.recv_timeout(Duration::from_secs(10)).unwrap() {
            Event::Action(Action::Cached(r) | Action::Reread { rows: r, .. }) => {
                assert_eq!(r.len(), 1);
                assert_eq!(r[0].id, "s9999".into());
                break;
            }
            _ => continue,
        }
    }
}

/// A start with no catalog: the store that stats every session (agent-harness here) waits
/// until the name-ordered one (loom) has sent its first rows, so those two cores read loom's
/// directory first and its newest screenful is the first screen (issue 10's cold first paint).
#[test]
fn a_cold_start_lists_the_name_ordered_store_first() {
    let dir = tempfile::tempdir().unwrap();
    let gate = Arc::new((Mutex::new(false), Condvar::new()));
    let ids = |p: &str| Arc::new(Mutex::new((0..40).map(|i| format!("{p}{i:02}")).collect()));
    let named = Fake {
        by_name: true,
        gate: Some(gate.clone()),
        ..Fake::new(&dir.path().join("loom"), ids("loom"))
    };
    let statting = Fake {
        kind: StoreKind::Harness,
        ..Fake::new(&dir.path().join("harness"), ids("harness"))
    };
    let (named_looked, statting_looked) = (named.discovered.clone(), statting.discovered.clone());
    let stores = Arc::new(Stores {
        stores: vec![Box::new(named), Box::new(statting)],
        state_dir: dir.path().join("state"),
    });
    let (tx, rx) = mpsc::channel();
    let _loader = Loader::start(stores, tx);
    // loom is reading its directory (held at the gate); agent-harness has not started its own.
    while !named_looked.load(Ordering::SeqCst) {
        std::thread::sleep(Duration::from_millis(1));
    }
    std::thread::sleep(Duration::from_millis(30));
    assert!(
        !statting_looked.load(Ordering::SeqCst),
        "agent-harness's discovery waits for loom's first rows"
    );
    *gate.0.lock().unwrap() = true;
    gate.1.notify_all();
    let first = loop {
        match rx.recv_timeout(Duration::from_secs(10)).unwrap() {
            Event::Action(Action::Cached(r)) if !r.is_empty() => break r,
            _ => {}
        }
    };
    assert!(
        first.iter().all(|r| r.store == StoreKind::Loom),
        "{first:?}"
    );
    // Then agent-harness lists too.
    let mut harness = 0;
    while harness < 40 {
        if let Event::Action(Action::Cached(r)) = rx.recv_timeout(Duration::from_secs(10)).unwrap()
        {
            harness += r.iter().filter(|r| r.store == StoreKind::Harness).count();
        }
    }
}

/// A start with no catalog where no name-ordered store has rows (here there is none): the
/// first rows of a store that stats its sessions (Claude Code, Codex) are the first screen,
/// so they are read at the UI's priority; the rest of the listing then yields to keys. At
/// nice 10 the first screen waited for a core behind everything else on a busy machine.
#[test]
fn the_first_screens_rows_are_read_at_the_uis_priority_and_the_rest_yields() {
    let dir = tempfile::tempdir().unwrap();
    let ids = Arc::new(Mutex::new(
        (0..200).map(|i| format!("s{i:04}")).collect::<Vec<_>>(),
    ));
    let fake = Fake::new(dir.path(), ids);
    let nices = fake.nices.clone();
    let stores = only(fake, dir.path());
    let ui = spool::priority::current_nice();
    let (tx, rx) = mpsc::channel();
    let _loader = Loader::start(stores, tx);
    loop {
        if let Event::Action(Action::Progress { finished: true, .. }) =
            rx.recv_timeout(Duration::from_secs(10)).unwrap()
        {
            break;
        }
    }
    let nices = nices.lock().unwrap();
    assert_eq!(nices.len(), 200);
    assert_eq!(nices[0], ui, "the first screen's first row");
    if ui < spool::priority::BACKGROUND_NICE {
        assert_eq!(
            nices.last(),
            Some(&spool::priority::BACKGROUND_NICE),
            "rows after the first batch"
        );
    }
}

/// A start with no catalog and no guess at the store's newest (Claude Code stats every
/// transcript first): the first batch is the top 4 rows (`loader::ahead::FIRST_READ`), sent
/// while the rest of the first screenful (32 rows with no terminal) is not read yet (its
/// reads wait here until that batch has arrived); the rest of the screen comes next whole,
/// then the rest of the store. Every row once, in discovery's order.
#[test]
fn a_cold_start_sends_the_top_rows_before_reading_the_rest_of_the_screen() {
    let dir = tempfile::tempdir().unwrap();
    let ids = Arc::new(Mutex::new(
        (0..200).map(|i| format!("s{i:04}")).collect::<Vec<_>>(),
    ));
    let gate = Arc::new((Mutex::new(false), Condvar::new()));
    let fake = Fake {
        hold_reads: Some((4, gate.clone())),
        ..Fake::new(dir.path(), ids)
    };
    let stores = only(fake, dir.path());
    let (tx, rx) = mpsc::channel();
    let _loader = Loader::start(stores, tx);
    let mut batches: Vec<Vec<String>> = Vec::new();
    loop {
        match rx.recv_timeout(Duration::from_secs(10)).unwrap() {
            Event::Action(Action::Cached(r)) => {
                batches.push(r.iter().map(|r| r.id.to_string()).collect());
                *gate.0.lock().unwrap() = true;
                gate.1.notify_all();
            }
            Event::Action(Action::Progress { finished: true, .. }) => break,
            _ => {}
        }
    }
    let want = |range: std::ops::Range<usize>| -> Vec<String> {
        range.map(|i| format!("s{i:04}")).collect()
    };
    assert_eq!(batches[0], want(0..4), "{batches:?}");
    assert_eq!(batches[1], want(4..32), "{batches:?}");
    assert_eq!(batches.concat(), want(0..200));
}

/// A warm start with the head on screen surveys its stores while the catalog decodes
/// (issue 10: the surveys began only after the decode, one thread's ~150 ms of CPU at 100k
/// sessions, leaving the other core idle). The decode here waits for the store's discovery
/// to begin; when the surveys follow the decode, it never does. The check then still runs
/// against the catalog's metas and reports its store done.
#[test]
fn a_warm_start_surveys_its_stores_while_the_catalog_decodes() {
    let dir = tempfile::tempdir().unwrap();
    let fake = Fake::new(dir.path(), two_sessions());
    let discovered = fake.discovered.clone();
    let stores = only(fake, dir.path());
    let cache = dir.path().join("cache");
    let (tx, rx) = mpsc::channel();
    let (seen_tx, seen_rx) = mpsc::channel();
    let _loader = Loader::start_deferred(stores, tx, move || {
        let since = std::time::Instant::now();
        while !discovered.load(Ordering::SeqCst) && since.elapsed() < Duration::from_secs(3) {
            std::thread::sleep(Duration::from_millis(5));
        }
        seen_tx.send(discovered.load(Ordering::SeqCst)).unwrap();
        Some(spool::catalog::warm::Warm {
            cache,
            known: vec![Some(Vec::new())],
        })
    });
    let seen = seen_rx.recv_timeout(Duration::from_secs(10)).unwrap();
    assert!(seen, "the store was surveyed while the catalog decoded");
    let mut reread = 0;
    loop {
        match rx.recv_timeout(Duration::from_secs(10)).unwrap() {
            Event::Action(Action::Reread { rows, .. }) => reread += rows.len(),
            Event::Action(Action::Progress { finished: true, .. }) => break,
            _ => {}
        }
    }
    assert_eq!(reread, 2, "both sessions, new to the catalog, were read");
}

/// With `start_checking_early`, a store checks its sessions as soon as the catalog's metas
/// are handed over, while the catalog's thread is still sending the rows, and its news (the
/// sessions it read again) reaches the channel only after those rows.
#[test]
fn a_store_checks_while_the_rows_are_sent_and_its_news_follows_them() {
    let dir = tempfile::tempdir().unwrap();
    let fake = Fake::new(dir.path(), two_sessions());
    let reads = fake.nices.clone();
    let stores = only(fake, dir.path());
    let cache = dir.path().join("cache");
    let (tx, rx) = mpsc::channel();
    let (seen_tx, seen_rx) = mpsc::channel();
    let rows_tx = tx.clone();
    let _loader = Loader::start_checking_early(stores, tx, move |give| {
        give(Some(spool::catalog::warm::Warm {
            cache,
            known: vec![Some(Vec::new())],
        }));
        // Both sessions are new to the (empty) catalog: the check reads them again.
        let since = std::time::Instant::now();
        while reads.lock().unwrap().len() < 2 && since.elapsed() < Duration::from_secs(5) {
            std::thread::sleep(Duration::from_millis(5));
        }
        seen_tx.send(reads.lock().unwrap().len()).unwrap();
        let row = tui_common::row(StoreKind::Loom, "cached", "a cached row", 1);
        let _ = rows_tx.send(Event::Action(Action::Cached(vec![Arc::new(row)])));
    });
    let read = seen_rx.recv_timeout(Duration::from_secs(10)).unwrap();
    assert_eq!(
        read, 2,
        "the store was checked while the rows were being sent"
    );
    let mut cached = false;
    let mut reread = 0;
    loop {
        match rx.recv_timeout(Duration::from_secs(10)).unwrap() {
            Event::Action(Action::Cached(_)) => cached = true,
            Event::Action(Action::Reread { rows, .. }) => {
                assert!(cached, "the check's news came before the catalog's rows");
                reread += rows.len();
            }
            Event::Action(Action::Progress { finished: true, .. }) => break,
            _ => {}
        }
    }
    assert_eq!(reread, 2);
}
