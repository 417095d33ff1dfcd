//! Tests of the Loop store against the contract's examples (tests/fixtures/loop) and
//! hand-built malformed sessions.

mod read;
mod replay;
mod write;

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use tempfile::TempDir;

use super::LoopStore;
use crate::model::SessionSummary;
use crate::store::Store;

pub const COL: &str = "767af75ec9c3c6ac7b4a00e5";
pub const E1: &str = "3f6b2c1e-8a4d-4e2f-9b7c-1d2e3f4a5b6c";
pub const E2: &str = "b41e07d2-5c9a-4f13-a8e6-0f2d7c3b9e54";
pub const E3: &str = "e9d4a6b1-2f3c-4d5e-8a7b-6c5d4e3f2a1b";
/// An id for hand-built sessions.
pub const N1: &str = "11111111-2222-4333-8444-555555555555";

fn copy_tree(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for e in fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_tree(&e.path(), &dest);
        } else {
            fs::copy(e.path(), &dest).unwrap();
        }
    }
}

/// A private copy of the fixture agent directory and a store over it.
pub fn fixture() -> (TempDir, LoopStore) {
    let d = tempfile::tempdir().unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/loop");
    copy_tree(&src, d.path());
    let store = LoopStore::new(d.path());
    (d, store)
}

pub fn col(d: &TempDir) -> PathBuf {
    d.path().join("sessions").join(COL)
}

pub fn fixture_file(rel: &str) -> Vec<u8> {
    fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/loop/sessions")
            .join(COL)
            .join(rel),
    )
    .unwrap()
}

/// The row for `id` from a full listing.
pub fn row(store: &LoopStore, id: &str) -> SessionSummary {
    store
        .list()
        .into_iter()
        .find(|s| s.id == id.into())
        .unwrap_or_else(|| panic!("{id} not listed"))
}

pub fn read_json(p: &Path) -> Value {
    serde_json::from_slice(&fs::read(p).unwrap()).unwrap()
}

/// Edit a v3 session's header in place (test setup, not the store's writer).
pub fn edit_header(dir: &Path, f: impl FnOnce(&mut serde_json::Map<String, Value>)) {
    let p = dir.join("meta.json");
    let mut v = read_json(&p);
    f(v["header"].as_object_mut().unwrap());
    fs::write(&p, serde_json::to_string_pretty(&v).unwrap() + "\n").unwrap();
}

/// A valid header for hand-built sessions.
pub fn header(id: &str, cwd: &str) -> Value {
    json!({"format": "loop-session", "version": 2, "id": id, "cwd": cwd,
        "createdAt": "2026-03-01T10:00:00.000Z", "updatedAt": "2026-03-01T10:05:00.000Z",
        "permissionPreset": "read-only"})
}

/// Write a v3 session whose range is all of `lines` (each given without its newline).
pub fn make_v3(collection: &Path, id: &str, header: Value, lines: &[Value]) -> PathBuf {
    let mut bytes = Vec::new();
    for l in lines {
        bytes.extend_from_slice(serde_json::to_string(l).unwrap().as_bytes());
        bytes.push(b'\n');
    }
    make_v3_raw(collection, id, header, &bytes, lines.len())
}

/// Write a v3 session with exactly `bytes` committed and a matching generation.
pub fn make_v3_raw(
    collection: &Path,
    id: &str,
    header: Value,
    bytes: &[u8],
    count: usize,
) -> PathBuf {
    let dir = collection.join(id);
    fs::create_dir_all(&dir).unwrap();
    fs::write(dir.join("messages.jsonl"), bytes).unwrap();
    let meta = json!({"format": "loop-session", "version": 3, "header": header,
        "generation": super::history::sha256_hex(bytes), "start": 0,
        "bytes": bytes.len(), "messageCount": count});
    fs::write(
        dir.join("meta.json"),
        serde_json::to_string_pretty(&meta).unwrap() + "\n",
    )
    .unwrap();
    dir
}

pub fn user(text: &str) -> Value {
    json!({"role": "user", "content": text, "timestamp": 1772000000000u64})
}

pub fn assistant(text: &str, calls: &[(&str, &str)], stop: &str) -> Value {
    let mut content = vec![json!({"type": "text", "text": text})];
    for (id, name) in calls {
        content.push(json!({"type": "toolCall", "id": id, "name": name, "arguments": {}}));
    }
    json!({"role": "assistant", "content": content, "api": "openai-responses",
        "provider": "openai", "model": "gpt-5.5", "usage": {}, "stopReason": stop,
        "timestamp": 1772000001000u64})
}

pub fn tool_result(id: &str) -> Value {
    json!({"role": "toolResult", "toolCallId": id, "toolName": "bash",
        "content": [{"type": "text", "text": "ok"}], "isError": false, "timestamp": 1772000002000u64})
}

/// Discovery split over two threads finds what one thread finds, and the catalog's pass over
/// it catches a change made in a session of each half (issue 10).
#[test]
fn split_discovery_finds_every_session_and_a_change_in_each_half() {
    let d = tempfile::tempdir().unwrap();
    let store = LoopStore::new(d.path());
    let cols = [
        "aaaaaaaaaaaaaaaaaaaaaaaa",
        "bbbbbbbbbbbbbbbbbbbbbbbb",
        "cccccccccccccccccccccccc",
    ];
    let ids = [
        "11111111-2222-4333-8444-000000000001",
        "11111111-2222-4333-8444-000000000002",
        "11111111-2222-4333-8444-000000000003",
    ];
    for (c, id) in cols.iter().zip(ids) {
        let col = d.path().join("sessions").join(c);
        fs::create_dir_all(&col).unwrap();
        make_v3(&col, id, header(id, "/tmp"), &[user("hi")]);
    }
    let ids_of = |v: Vec<crate::store::Candidate>| {
        let mut v: Vec<String> = v.into_iter().map(|c| c.id).collect();
        v.sort();
        v
    };
    assert_eq!(ids_of(store.discover_split(2, true)), ids);
    assert_eq!(ids_of(store.discover_unordered()), ids);
    assert_eq!(
        ids_of(store.discover_split(2, true)),
        ids_of(store.discover_split(1, true))
    );
    let metas = store
        .discover()
        .iter()
        .map(|c| crate::catalog::pass::read(&store, c).meta)
        .collect();
    // A change in the first collection (first thread) and in the last (second thread).
    for (c, id) in [(cols[0], ids[0]), (cols[2], ids[2])] {
        let messages = d
            .path()
            .join("sessions")
            .join(c)
            .join(id)
            .join("messages.jsonl");
        let mut bytes = fs::read(&messages).unwrap();
        bytes.extend_from_slice(format!("{}\n", user("more")).as_bytes());
        fs::write(&messages, bytes).unwrap();
    }
    let checked =
        crate::catalog::check(&store, crate::catalog::ById::new(metas), &store.discover());
    let mut fresh: Vec<&str> = checked.fresh.iter().map(|e| e.meta.id.as_str()).collect();
    fresh.sort();
    assert_eq!(fresh, [ids[0], ids[2]]);
    assert!(checked.gone.is_empty());
    assert_eq!(checked.known.len(), 3);
}

/// `index.json` is no input of the row: only history paging reads it. Rewriting it with
/// garbage or deleting it leaves the row as it was, and the catalog's pass does not stamp it
/// (it cost every warm pass one `statx` per session, issue 10). A rewrite in place is not
/// read again; a rename or a delete still moves the session directory's own stamp.
#[test]
fn index_json_is_no_input_of_the_row_nor_of_its_key() {
    let (_d, store) = fixture();
    let candidates = store.discover();
    let c = candidates
        .iter()
        .find(|c| c.id == E1)
        .expect("the v3 fixture");
    let index = c.path.join("index.json");
    assert!(index.is_file());
    assert!(!store.summary_inputs(c).contains(&index));
    let before = store.summarize(c);
    let metas = (candidates.iter())
        .map(|c| crate::catalog::pass::read(&store, c).meta)
        .collect();
    fs::write(&index, b"not an index").unwrap();
    assert_eq!(store.summarize(c), before);
    let checked =
        crate::catalog::check(&store, crate::catalog::ById::new(metas), &store.discover());
    assert!(
        !checked.fresh.iter().any(|e| e.meta.id == E1),
        "an index.json rewrite re-read the row"
    );
    assert!(checked.gone.is_empty());
    fs::remove_file(&index).unwrap();
    assert_eq!(store.summarize(c), before);
    // Its messages still count: an append is read again.
    let metas = (candidates.iter())
        .map(|c| crate::catalog::pass::read(&store, c).meta)
        .collect();
    let messages = c.path.join("messages.jsonl");
    let mut bytes = fs::read(&messages).unwrap();
    bytes.extend_from_slice(format!("{}\n", user("uncommitted")).as_bytes());
    fs::write(&messages, bytes).unwrap();
    let checked =
        crate::catalog::check(&store, crate::catalog::ById::new(metas), &store.discover());
    assert!(checked.fresh.iter().any(|e| e.meta.id == E1));
}

/// A v3 session's directory is no input of its key: the stat pass takes no `statx` of it,
/// only of the two files the row is read from (issue 10). A file the row does not read,
/// added to the directory, re-reads nothing (its directory's mtime moved); `meta.json`
/// replaced by a rename with the same bytes, or `messages.jsonl` removed, is read again.
#[test]
fn a_sessions_directory_is_no_input_of_its_key_its_files_are() {
    let (_d, store) = fixture();
    let found = store.discover_unordered();
    let c = found.iter().find(|c| c.id == E1).expect("the v3 fixture");
    assert!(!store.summary_inputs(c).contains(&c.path));
    assert!(c.stat.is_none(), "discovery for a pass stats no session");
    let metas = || -> Vec<crate::catalog::Meta> {
        (store.discover().iter())
            .map(|c| crate::catalog::pass::read(&store, c).meta)
            .collect()
    };
    let reread = |metas| -> bool {
        let checked = crate::catalog::check(
            &store,
            crate::catalog::ById::new(metas),
            &store.discover_unordered(),
        );
        checked.fresh.iter().any(|e| e.meta.id == E1)
    };
    let before = metas();
    fs::write(c.path.join("notes.txt"), b"not the session's").unwrap();
    assert!(!reread(before), "a stray file re-read the row");
    let before = metas();
    let meta = c.path.join("meta.json");
    fs::write(c.path.join("meta.json.tmp"), fs::read(&meta).unwrap()).unwrap();
    fs::rename(c.path.join("meta.json.tmp"), &meta).unwrap();
    assert!(reread(before), "meta.json renamed over was not read again");
    let before = metas();
    fs::remove_file(c.path.join("messages.jsonl")).unwrap();
    assert!(reread(before), "messages.jsonl removed was not read again");
}
