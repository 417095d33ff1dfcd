//! Documents of a session: rounds, compaction placement, caps; the index round trip.

use super::*;
use crate::model::{Entry, Message, Role, Transcript};
use crate::store::Span;

fn transcript(entries: Vec<Entry>) -> Transcript {
    Transcript {
        summary: SessionSummary::new(StoreKind::Loom, "s", "/x"),
        entries,
        total_rounds: 2,
        first_round: 0,
        warnings: Vec::new(),
        todos: None,
    }
}

fn msg(i: usize, role: Role, text: &str) -> Entry {
    let mut m = Message::new(role, text);
    m.index = Some(i);
    Entry::Message(Box::new(m))
}

#[test]
fn docs_carry_message_round_and_role_and_caps() {
    let big = "x".repeat(PART_CAP * 3);
    let t = transcript(vec![
        msg(0, Role::System, "sys"),
        msg(1, Role::User, "first"),
        msg(2, Role::Tool, &big),
        Entry::Compaction {
            summary: "the summary".into(),
            timestamp: None,
        },
        msg(3, Role::User, "second"),
    ]);
    let d = docs(&t.summary, &t);
    let got: Vec<(Option<usize>, Option<usize>, Option<&str>)> = d
        .iter()
        .map(|d| (d.message, d.round, d.role.as_deref()))
        .collect();
    assert_eq!(
        got,
        vec![
            (None, None, None),
            (Some(0), Some(0), Some("system")),
            (Some(1), Some(0), Some("user")),
            (Some(2), Some(0), Some("tool")),
            (Some(3), Some(1), Some("compaction")),
            (Some(3), Some(1), Some("user")),
        ]
    );
    assert_eq!(d[3].text.len(), PART_CAP, "tool output capped");
}

#[test]
fn fingerprint_follows_the_file_and_the_sidecar() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("s.jsonl");
    std::fs::write(&p, "a").unwrap();
    let state = crate::store::sidecar::path(dir.path(), "s");
    let fp = || fingerprint(&p, &state);
    let a = fp();
    assert_eq!(a, fp());
    std::fs::write(&p, "ab").unwrap();
    let b = fp();
    assert_ne!(a, b, "an append");
    std::fs::create_dir(dir.path().join(".spool")).unwrap();
    std::fs::write(dir.path().join(".spool/s.json"), "{}").unwrap();
    assert_ne!(b, fp(), "a sidecar (rename, pin)");
}

/// A print as the first version took it, every file stat'ed by its path from the root: an
/// index built by that version must stay current under the faster way of taking prints.
fn print_by_paths(path: &std::path::Path, state_file: &std::path::Path) -> u64 {
    use std::hash::{DefaultHasher, Hash, Hasher};
    let stat = |p: &std::path::Path, h: &mut DefaultHasher| {
        let m = std::fs::metadata(p);
        m.is_ok().hash(h);
        if let Ok(m) = m {
            m.len().hash(h);
            let t = m.modified().ok();
            let t = t.and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok());
            t.map(|d| d.as_nanos()).hash(h);
        }
    };
    let mut h = DefaultHasher::new();
    path.hash(&mut h);
    stat(path, &mut h);
    if path.is_dir() {
        let mut names: Vec<_> = (std::fs::read_dir(path).unwrap().flatten())
            .map(|e| e.path())
            .collect();
        names.sort();
        for p in names {
            p.hash(&mut h);
            stat(&p, &mut h);
        }
    }
    stat(state_file, &mut h);
    stat(&path.parent().unwrap().join("archive.json"), &mut h);
    h.finish()
}

#[test]
fn prints_taken_in_one_pass_are_the_prints_taken_path_by_path() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    std::fs::create_dir(&a).unwrap();
    std::fs::write(a.join("messages.jsonl"), "one\n").unwrap();
    std::fs::write(a.join("meta.json"), "{}").unwrap();
    // A symlinked entry is followed, as `metadata` of its path follows it.
    std::fs::write(dir.path().join("elsewhere"), "twelve bytes").unwrap();
    std::os::unix::fs::symlink(dir.path().join("elsewhere"), a.join("linked")).unwrap();
    std::os::unix::fs::symlink(dir.path().join("nowhere"), a.join("dangling")).unwrap();
    std::fs::write(&b, "a single file").unwrap();
    std::fs::write(dir.path().join("archive.json"), "[]").unwrap();
    let state = |id| crate::store::sidecar::path(dir.path(), id);
    let mut pass = Prints::default();
    for _ in 0..2 {
        assert_eq!(pass.of(&a, &state("a")), print_by_paths(&a, &state("a")));
        assert_eq!(pass.of(&b, &state("b")), print_by_paths(&b, &state("b")));
    }
    // The archive file is stat'ed once a pass: a new pass sees it change.
    let before = pass.of(&b, &state("b"));
    std::fs::write(dir.path().join("archive.json"), "[\"b\"]").unwrap();
    assert_eq!(pass.of(&b, &state("b")), before, "one stat a pass");
    let now = Prints::default().of(&b, &state("b"));
    assert_ne!(now, before, "a new pass");
    assert_eq!(now, print_by_paths(&b, &state("b")));
}

/// The demo's stores and their rows, and an empty index in a temporary directory (kept
/// alive by the returned guards).
fn demo_and_index() -> (
    crate::demo::DemoStore,
    Stores,
    Vec<SessionSummary>,
    tempfile::TempDir,
    TextIndex,
) {
    let demo = crate::demo::DemoStore::create().unwrap();
    let stores = Stores::open(&crate::store::Roots::all_in(demo.path()));
    let rows = stores.list_all();
    let dir = tempfile::tempdir().unwrap();
    let ix = TextIndex::open(dir.path()).unwrap();
    (demo, stores, rows, dir, ix)
}

/// The browser's searcher shares its writer's session table (one copy in memory), and
/// re-reads the file only when another process wrote it.
#[test]
fn a_sharing_handle_uses_the_writers_table_and_rereads_another_processes() {
    let (_demo, stores, rows, dir, mut w) = demo_and_index();
    let r = TextIndex::open_sharing(&w).unwrap();
    assert!(r.sessions.same(&w.sessions), "one table, not two");
    w.update(&rows, &stores, &|_, _| {}).unwrap();
    let n = w.session_count();
    assert!(n > 10);
    assert_eq!(r.session_count(), n, "the searcher sees what was indexed");
    // Another process (its own handle) drops a session and writes the file.
    let mut other = TextIndex::open(dir.path()).unwrap();
    assert!(!other.sessions.same(&w.sessions));
    let sid = *other.sessions.get().map.keys().next().unwrap();
    other.remove(&[sid], &stores).unwrap();
    let mut r = r;
    assert!(r.refresh());
    assert_eq!(r.session_count(), n - 1, "re-read after another writer");
    assert_eq!(w.session_count(), n - 1, "still one table");
}

/// The index reads each session a piece at a time: for every session of every store in the
/// demo (compactions, tool results, thinking, damaged files), the streamed documents are
/// the documents of the whole transcript, in the same order (a snippet is found by its
/// place in that order), and a stop after document N reads no further.
#[test]
fn streamed_documents_are_the_whole_transcripts_documents() {
    use crate::store::Roots;
    let demo = crate::demo::DemoStore::create().unwrap();
    let stores = Stores::open(&Roots::all_in(demo.path()));
    let rows = stores.list_all();
    assert!(rows.len() > 20);
    let mut compared = 0;
    for row in &rows {
        let streamed = session_docs::session_docs(&stores, row);
        let whole = match stores.store_for(row).transcript(&row.id, Span::All) {
            Ok(t) => docs(row, &t),
            Err(_) => vec![title_doc(row)],
        };
        assert_eq!(streamed, whole, "{:?} {}", row.store, row.id);
        compared += usize::from(whole.len() > 1);
        let want = streamed.len() / 2;
        let mut seen = Vec::new();
        each_session_doc(&stores, row, &mut |ord, _| {
            seen.push(ord);
            ord < want
        });
        assert_eq!(seen, (0..=want).collect::<Vec<_>>(), "{}", row.id);
    }
    assert!(compared > 20, "sessions with messages: {compared}");
}

/// The searcher's handle shares the writer's directory, so each index file is mapped once:
/// two maps of every file counted the pages mapped around each touch twice in spool's RSS.
#[cfg(target_os = "linux")]
#[test]
fn a_sharing_handle_maps_each_index_file_once() {
    let (_demo, stores, rows, dir, mut w) = demo_and_index();
    let mut r = TextIndex::open_sharing(&w).unwrap();
    w.update(&rows, &stores, &|_, _| {}).unwrap();
    let q = crate::search::query::TextQuery::parse("the").unwrap();
    for ix in [&mut w, &mut r] {
        assert!(ix.refresh());
        assert!(!ix.search_rows(&q, &|_| true, 5, None).unwrap().is_empty());
    }
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
    let mut per_file = std::collections::HashMap::new();
    let under = dir.path().to_string_lossy().into_owned();
    for path in maps.lines().filter_map(|l| l.split_whitespace().nth(5)) {
        if path.starts_with(&under) {
            *per_file.entry(path.to_string()).or_insert(0) += 1;
        }
    }
    assert!(!per_file.is_empty(), "the searches read mapped index files");
    for (file, n) in per_file {
        assert_eq!(n, 1, "{file} is mapped {n} times");
    }
}

/// A writer lock held for a moment (another process committing, or a child process of
/// ours that has not reached `exec` yet and holds an inherited copy of the lock's
/// descriptor) is waited for: the update indexes the change instead of giving up as a
/// reader. Without the wait this failed `tests/search_fresh.rs` now and then under load.
#[test]
fn a_writer_lock_busy_for_a_moment_is_waited_for() {
    let (_demo, stores, rows, dir, mut ix) = demo_and_index();
    ix.update(&rows, &stores, &|_, _| {}).unwrap();
    let one = rows
        .iter()
        .find(|r| r.error().is_none() && r.path().is_file())
        .unwrap()
        .clone();
    std::io::Write::write_all(
        &mut std::fs::OpenOptions::new()
            .append(true)
            .open(one.path())
            .unwrap(),
        b"\n",
    )
    .unwrap();
    let other = TextIndex::open(dir.path()).unwrap();
    let held = other.writer().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let releaser = std::thread::spawn(move || {
        rx.recv().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        drop(held);
    });
    tx.send(()).unwrap();
    let r = ix.update_some(std::slice::from_ref(&one), &stores, &|_, _| {});
    releaser.join().unwrap();
    assert_eq!(
        r.unwrap(),
        Freshness::Updated {
            indexed: 1,
            removed: 0
        }
    );
}
