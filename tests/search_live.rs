//! The index while things happen: a first build commits in batches, so a search during it
//! finds what is indexed so far; a deleted session leaves the index at once (directly, in the
//! middle of a pass, and through the browser's indexer thread); `spool search`'s cheap
//! freshness check still follows appends, renames, archives and new sessions.

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{Home, json_lines};
use spool::app::Action;
use spool::loader::Event;
use spool::search::index::{Batches, Hooks, TextIndex, session_number};
use spool::search::query::TextQuery;
use spool::store::registry::Filter;
use spool::store::{Roots, Stores};

fn q(s: &str) -> TextQuery {
    TextQuery::parse(s).unwrap()
}

/// A batch of one session: commit after every session.
fn one_by_one() -> Batches {
    Batches {
        sessions: 1,
        every: Duration::from_secs(3600),
    }
}

/// The demo store, its readable sessions, and an empty directory for an index.
fn demo_index() -> (
    spool::demo::DemoStore,
    Stores,
    Vec<spool::model::SessionSummary>,
    tempfile::TempDir,
) {
    let demo = spool::demo::DemoStore::create().unwrap();
    let stores = Stores::open(&Roots::all_in(demo.path()));
    let rows = stores
        .list_all()
        .into_iter()
        .filter(|r| r.error().is_none())
        .collect();
    (demo, stores, rows, tempfile::tempdir().unwrap())
}

#[test]
fn a_first_build_is_searchable_batch_by_batch() {
    let (_demo, stores, rows, dir) = demo_index();
    let mut ix = TextIndex::open(dir.path()).unwrap();
    ix.set_batches(one_by_one());
    // After each commit, another reader (the browser's searcher, `spool search` in another
    // process) opens the index and counts what it can find.
    let seen = Arc::new(Mutex::new(Vec::new()));
    let (d, s) = (dir.path().to_path_buf(), seen.clone());
    ix.set_hooks(Hooks {
        committed: Some(Box::new(move |_, _| {
            let other = TextIndex::open(&d).unwrap();
            let all = other.listed().count();
            let hits = other.search(&q("the"), &|_| true, usize::MAX).unwrap();
            s.lock().unwrap().push((all, hits.len()));
        })),
        gone: None,
    });
    ix.update(&rows, &stores, &|_, _| {}).unwrap();
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), rows.len(), "one commit per session: {seen:?}");
    for (i, (all, hits)) in seen.iter().enumerate() {
        assert_eq!(*all, i + 1, "sessions visible after commit {i}");
        assert!(*hits <= *all, "{seen:?}");
    }
    assert!(seen[0].1 <= 1 && seen.last().unwrap().1 > 5, "{seen:?}");
}

#[test]
fn a_removed_session_leaves_the_index_at_once_even_mid_pass() {
    let (_demo, stores, rows, dir) = demo_index();
    let mut ix = TextIndex::open(dir.path()).unwrap();
    ix.update(&rows, &stores, &|_, _| {}).unwrap();
    let all = ix.session_count();
    let victim = &rows[0];
    let sid = session_number(victim.store, &victim.id);
    let is_hit = |ix: &TextIndex| {
        let key = (victim.store, victim.id.to_string());
        ix.search(&q("the"), &|k| *k == key, 10).unwrap().len()
    };
    assert_eq!(is_hit(&ix), 1);
    // Directly: the browser deleted it.
    ix.remove(&[sid], &stores).unwrap();
    assert_eq!(ix.session_count(), all - 1);
    assert_eq!(is_hit(&ix), 0);
    assert_eq!(
        is_hit(&TextIndex::open(dir.path()).unwrap()),
        0,
        "committed"
    );

    // In the middle of a rebuild: the session is dropped at the next batch's commit.
    spool::search::index::wipe(dir.path());
    let mut ix = TextIndex::open(dir.path()).unwrap();
    ix.set_batches(one_by_one());
    let asked = Arc::new(Mutex::new(0));
    let a = asked.clone();
    ix.set_hooks(Hooks {
        committed: None,
        gone: Some(Box::new(move || {
            let mut n = a.lock().unwrap();
            *n += 1;
            // Deleted once the pass is under way (its first batch committed).
            if *n == 3 { vec![sid] } else { Vec::new() }
        })),
    });
    ix.update(&rows, &stores, &|_, _| {}).unwrap();
    assert_eq!(ix.session_count(), all - 1);
    assert_eq!(is_hit(&TextIndex::open(dir.path()).unwrap()), 0);
}

/// The browser's path: the indexer thread indexes the listing, the browser reports a
/// deletion, and the next text search no longer finds the session.
#[test]
fn the_browsers_indexer_drops_a_deleted_session() {
    let demo = spool::demo::DemoStore::create().unwrap();
    let stores = Arc::new(Stores::open(&Roots::all_in(demo.path())));
    let rows = stores.list_all();
    let dir = tempfile::tempdir().unwrap();
    let (ix, rx) =
        common::search::indexing(dir.path(), &stores, &rows, env!("CARGO_BIN_EXE_spool"));
    let wait = |want: &dyn Fn(&Action) -> bool| loop {
        match rx.recv_timeout(Duration::from_secs(60)).expect("an answer") {
            Event::Action(a) if want(&a) => return a,
            _ => {}
        }
    };
    wait(&|a| matches!(a, Action::IndexProgress { done, total } if done == total));
    let all = Filter {
        all: true,
        ..Filter::default()
    };
    let found = |token: u64| {
        ix.search(token, q("the"), all.clone());
        match wait(&|a| matches!(a, Action::TextResults { token: t, .. } if *t == token)) {
            Action::TextResults { hits, .. } => hits,
            _ => unreachable!(),
        }
    };
    // Progress reaches its total when the last session is read, just before the commit:
    // ask until the searcher has reloaded.
    let mut token = 0;
    let mut ask_until = |ok: &dyn Fn(&[spool::search::index::Hit]) -> bool| {
        for _ in 0..100 {
            token += 1;
            let hits = found(token);
            if ok(&hits) {
                return hits;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        panic!("the searcher never answered as expected");
    };
    let before = ask_until(&|h| h.len() > 5);
    let victim = before[0].key.clone();
    ix.remove(std::slice::from_ref(&victim));
    let after = ask_until(&|h| h.iter().all(|h| h.key != victim));
    assert!(
        after.iter().all(|h| h.key != victim),
        "{victim:?} still found"
    );
    assert_eq!(after.len(), before.len() - 1);
}

fn search(h: &Home, query: &str) -> (i32, Vec<serde_json::Value>) {
    let out = h.run(&["search", "--json", "--all", query]);
    let rows = json_lines(&String::from_utf8_lossy(&out.stdout));
    (out.status.code().unwrap_or(-1), rows)
}

/// `spool search` trusts each session's directory entry and each store's state directories:
/// a rename (sidecar, or Loop's meta), an archive and an append all still show, at once.
#[test]
fn the_cheap_freshness_check_still_follows_every_change() {
    let h = Home::with_fixtures();
    let refs = |rows: &[serde_json::Value]| -> Vec<String> {
        rows.iter()
            .map(|r| r["ref"].as_str().unwrap().to_string())
            .collect()
    };
    let listed = json_lines(&h.ok(&["list", "--json"]));
    assert!(search(&h, "zyzzyvaqq").0 == 1);
    // A rename in every writable store: spool writes a sidecar or the Loop header.
    for row in &listed {
        let r = row["ref"].as_str().unwrap();
        if !["loop:", "loom:", "harness:"]
            .iter()
            .any(|p| r.starts_with(p))
        {
            continue;
        }
        let title = format!("zyzzyvaqq {}", r.replace(':', " "));
        let out = h.run(&["rename", r, &title]);
        if !out.status.success() {
            continue;
        }
        let (code, rows) = search(&h, "zyzzyvaqq");
        assert_eq!(code, 0, "rename of {r} not seen");
        assert!(refs(&rows).contains(&r.to_string()), "{r}: {rows:?}");
        // Archived: `--all` still finds it, the default filter no longer does.
        if h.run(&["archive", r]).status.success() {
            let out = h.run(&["search", "--json", &title.replace(':', " ")]);
            let rows = json_lines(&String::from_utf8_lossy(&out.stdout));
            assert!(
                !refs(&rows).contains(&r.to_string()),
                "archived {r} still shown"
            );
        }
    }
    // A new loom session, then an append to it.
    let dir = h.loom_dir().join("sessions");
    let path = dir.join("20260401-120000.jsonl");
    let meta =
        "{\"kind\":\"meta\",\"time\":\"2026-04-01T12:00:00Z\",\"model\":\"m\",\"cwd\":\"/tmp\"}\n";
    let line = |role: &str, text: &str| {
        format!(
            "{{\"kind\":\"message\",\"time\":\"2026-04-01T12:00:01Z\",\"message\":{{\"role\":\"{role}\",\"content\":\"{text}\"}}}}\n"
        )
    };
    std::fs::write(&path, format!("{meta}{}", line("user", "plonkwizard here"))).unwrap();
    assert_eq!(search(&h, "plonkwizard").0, 0, "a new session");
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    std::io::Write::write_all(&mut f, line("assistant", "glorpfish answered").as_bytes()).unwrap();
    drop(f);
    let (code, rows) = search(&h, "glorpfish");
    assert_eq!(
        (code, rows[0]["message"].as_u64()),
        (0, Some(1)),
        "an append"
    );
}
