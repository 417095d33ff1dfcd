//! What the Codex store keeps of its last discovery for the whole run (its by-id map for
//! `locate` and the rows' archive flags), counted by a counting allocator: bytes, not time.
//! The map of whole entries held each id twice beside the path (about 3.4 MB at 10k
//! rollouts of the benchmark corpus, issue 9's peak RSS).

mod common;

use common::counting::{Counting, live};
use spool::store::Store;
use spool::store::codex_store::CodexStore;

#[global_allocator]
static A: Counting = Counting;

const N: usize = 10_000;

/// Per rollout: the path once and a 48-byte slot (the id's 16 bytes, where the path lies in
/// the one buffer of paths, the mtime and the flags). The hash map of whole entries by their id text took the path plus
/// about 230 (the id twice, 96-byte buckets at the table's load).
#[test]
fn a_discovery_keeps_each_path_once_and_no_id_text() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path().join("codex");
    let day = root.join("sessions/2026/03/14");
    std::fs::create_dir_all(&day).unwrap();
    let mut path_len = 0;
    for i in 0..N {
        let p = day.join(format!(
            "rollout-2026-03-14T10-15-02-019ceba0-ae55-7d10-9f2a-{i:012x}.jsonl"
        ));
        std::fs::write(&p, "").unwrap();
        path_len = p.as_os_str().len();
    }
    let store = CodexStore::new(&root, &d.path().join("state"));
    let before = live();
    let found = store.discover();
    assert_eq!(found.len(), N);
    drop(found);
    let kept = live().saturating_sub(before);
    let per = kept / N;
    eprintln!("kept {kept} bytes for {N} rollouts: {per} a rollout (path {path_len})");
    assert!(
        per < path_len + 64,
        "{per} bytes kept per rollout (path {path_len})"
    );
}
