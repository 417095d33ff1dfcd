//! The full-text index kept fresh through the built binary and the library: the browser's
//! watcher re-indexing one session, and a warm `spool search` that sees new and hot
//! sessions and never shows a stale result.

mod common;

use std::path::Path;
use std::process::Command;

use common::search::search_json;
use spool::store::{Roots, Stores};

/// The browser's watcher re-indexes one session: `update_some` indexes only the rows given
/// that changed, and keeps every other session (`update` with one row would drop them).
#[test]
fn update_some_reindexes_only_the_changed_session() {
    use spool::search::index::{Freshness, TextIndex};
    let demo = spool::demo::DemoStore::create().unwrap();
    let stores = Stores::open(&Roots::all_in(demo.path()));
    let rows = stores.list_all();
    let dir = tempfile::tempdir().unwrap();
    let mut ix = TextIndex::open(dir.path()).unwrap();
    ix.update(&rows, &stores, &|_, _| {}).unwrap();
    let all = ix.session_count();
    assert!(all > 10);
    // Unchanged: nothing to do.
    // A session that is one file (loop's JSONL), so appending a line changes it.
    let one = rows
        .iter()
        .find(|r| r.error().is_none() && r.path().is_file())
        .unwrap()
        .clone();
    let r = ix.update_some(std::slice::from_ref(&one), &stores, &|_, _| {});
    assert_eq!(
        r.unwrap(),
        Freshness::Updated {
            indexed: 0,
            removed: 0
        }
    );
    // Appended to: that session alone is indexed again, the others stay.
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(one.path())
        .unwrap();
    std::io::Write::write_all(&mut f, b"\n").unwrap();
    drop(f);
    let r = ix.update_some(&[one], &stores, &|_, _| {});
    assert_eq!(
        r.unwrap(),
        Freshness::Updated {
            indexed: 1,
            removed: 0
        }
    );
    assert_eq!(ix.session_count(), all);
}

/// A loom log of one user message.
fn loom_log(dir: &Path, id: &str, text: &str) -> std::path::PathBuf {
    let p = dir.join(format!("{id}.jsonl"));
    let line = |kind: &str, rest: &str| {
        format!("{{\"kind\":\"{kind}\",\"time\":\"2026-01-01T10:00:00Z\"{rest}}}\n")
    };
    let body = line("meta", ",\"cwd\":\"/w\"")
        + &line(
            "message",
            &format!(",\"message\":{{\"role\":\"user\",\"content\":\"{text}\"}}"),
        );
    std::fs::write(&p, body).unwrap();
    p
}

fn append_user(p: &Path, text: &str) {
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new().append(true).open(p).unwrap();
    writeln!(
        f,
        "{{\"kind\":\"message\",\"time\":\"2026-01-02T10:00:00Z\",\"message\":{{\"role\":\"user\",\"content\":\"{text}\"}}}}"
    )
    .unwrap();
}

/// Backdate files and directories, so a check's stamps are trusted (`stamps::SETTLE`).
fn backdate(paths: &[&Path]) {
    let ok = Command::new("touch")
        .arg("-d")
        .arg("1 hour ago")
        .args(paths)
        .status()
        .unwrap();
    assert!(ok.success());
}

#[test]
fn a_warm_search_sees_new_sessions_hot_sessions_and_never_shows_a_stale_result() {
    let home = tempfile::tempdir().unwrap();
    let root = home.path().join("loom");
    let loom = root.join("sessions");
    std::fs::create_dir_all(&loom).unwrap();
    // More sessions than the 64 hot ones: the first written is cold.
    let all: Vec<std::path::PathBuf> = (0..70)
        .map(|i| {
            let id = format!("20260101-10{:02}{:02}", i / 60, i % 60);
            loom_log(&loom, &id, &format!("common word{i}"))
        })
        .collect();
    let mut refs: Vec<&Path> = all.iter().map(|p| p.as_path()).collect();
    refs.push(&loom);
    backdate(&refs);
    // The cold one has the oldest mtime, the hot one the newest.
    let (cold, hot) = (&all[0], &all[69]);
    for (p, when) in [(cold, "2 hours ago"), (hot, "30 minutes ago")] {
        let ok = Command::new("touch").args(["-d", when]).arg(p).status();
        assert!(ok.unwrap().success());
    }
    let dir = root.to_str().unwrap();
    let args = ["--loom-dir", dir];
    let (code, first) = search_json(home.path(), &args, "common");
    assert_eq!(code, 0);
    assert_eq!(first.len(), all.len(), "every session matches");
    // The first search was a full check: this one trusts the stamps.
    assert_eq!(search_json(home.path(), &args, "common").1.len(), all.len());

    // A new session moves the directory's mtime.
    loom_log(&loom, "20260101-110000", "zqnewsession");
    assert_eq!(search_json(home.path(), &args, "zqnewsession").1.len(), 1);
    search_json(home.path(), &args, "common");
    backdate(&[&loom]);
    search_json(home.path(), &args, "common");

    // A hot session written to is re-read.
    append_user(hot, "zqhotword");
    assert_eq!(search_json(home.path(), &args, "zqhotword").1.len(), 1);

    // A cold session written to, when a search returns it: checked and re-read first.
    append_user(cold, "common zqcoldtoo");
    // The gap `spool search --help` states, and the proof that these searches are warm
    // checks: a cold session's new text is not looked for.
    assert_eq!(search_json(home.path(), &args, "zqcoldtoo").0, 1);
    let id = cold.file_stem().unwrap().to_str().unwrap();
    let (_, rows) = search_json(home.path(), &args, "common");
    let row = rows
        .iter()
        .find(|r| r["id"] == id)
        .expect("cold session returned");
    let before = first.iter().find(|r| r["id"] == id).unwrap()["hits"].as_u64();
    let now = row["hits"].as_u64();
    assert_eq!(now, before.map(|n| n + 1), "its new message counted: {row}");
    assert_eq!(search_json(home.path(), &args, "zqcoldtoo").1.len(), 1);
}
