//! The browser opens its full-text index only to write or search it (issue 10): a warm start
//! whose index already holds every listed session at its current print maps none of the
//! index's files and holds no session table, and the first text search still finds text.

mod common;

use std::path::Path;
use std::sync::Arc;
use std::sync::mpsc;
use std::time::Duration;

use spool::app::Action;
use spool::loader::Event;
use spool::model::SessionSummary;
use spool::search::index::{self, TextIndex};
use spool::search::query::TextQuery;
use spool::store::registry::Filter;
use spool::store::{Roots, Stores};

/// Whether this process maps any file under `dir` (tantivy maps the segments it reads).
fn mapped(dir: &Path) -> bool {
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap_or_default();
    maps.contains(dir.to_str().unwrap())
}

fn wait(rx: &mpsc::Receiver<Event>, want: &dyn Fn(&Action) -> bool) -> Action {
    loop {
        match rx.recv_timeout(Duration::from_secs(60)).expect("an answer") {
            Event::Action(a) if want(&a) => return a,
            _ => {}
        }
    }
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let (src, dst) = (e.path(), to.join(e.file_name()));
        if src.is_dir() {
            copy_dir(&src, &dst);
        } else {
            std::fs::copy(&src, &dst).unwrap();
        }
    }
}

#[test]
fn a_current_index_stays_closed_until_a_search_and_the_search_finds_text() {
    let demo = spool::demo::DemoStore::create().unwrap();
    let stores = Arc::new(Stores::open(&Roots::all_in(demo.path())));
    let rows: Vec<SessionSummary> = stores.list_all();
    let built = tempfile::tempdir().unwrap();
    {
        let mut ix = TextIndex::open(built.path()).unwrap();
        ix.update(&rows, &stores, &|_, _| {}).unwrap();
    }
    // What the freshness check answers without opening the index.
    assert!(index::is_current(built.path(), &rows, &stores));
    assert!(
        !index::is_current(built.path(), &rows[1..], &stores),
        "an indexed session no longer listed must be dropped"
    );
    let mut new = rows.iter().find(|r| r.error().is_none()).unwrap().clone();
    new.id = "not-indexed-yet".into();
    let more: Vec<&SessionSummary> = rows.iter().chain([&new]).collect();
    assert!(
        !index::is_current(built.path(), &more, &stores),
        "a new session"
    );
    let empty = tempfile::tempdir().unwrap();
    assert!(
        !index::is_current(empty.path(), &rows, &stores),
        "no index yet"
    );

    // A copy this process never opened, so any mapping of it is the indexer's.
    let warm = tempfile::tempdir().unwrap();
    let dir = warm.path().join("ix");
    copy_dir(built.path(), &dir);
    let (ix, rx) = common::search::indexing(&dir, &stores, &rows, env!("CARGO_BIN_EXE_spool"));
    let done = wait(
        &rx,
        &|a| matches!(a, Action::IndexProgress { done, total } if done == total),
    );
    assert!(matches!(done, Action::IndexProgress { done: 0, total: 0 }));
    assert!(!mapped(&dir), "a current index was opened at a warm start");

    let all = Filter {
        all: true,
        ..Filter::default()
    };
    ix.search(1, TextQuery::parse("the").unwrap(), all);
    let hits = match wait(&rx, &|a| matches!(a, Action::TextResults { token: 1, .. })) {
        Action::TextResults { hits, .. } => hits,
        _ => unreachable!(),
    };
    assert!(
        hits.len() > 5,
        "the first search found {} sessions",
        hits.len()
    );
    assert!(mapped(&dir), "searched, so opened");
}
