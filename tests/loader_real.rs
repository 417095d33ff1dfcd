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
