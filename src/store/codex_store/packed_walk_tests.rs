//! The packed walk gives what a discovery held as entries gives: the same survey and the
//! same kept-by-id table, duplicates and debris included.

use std::path::Path;

use super::super::{discover, found::ById};
use crate::catalog::packed::{Listed, Packed};
use crate::catalog::survey::Keyer;
use crate::store::Candidate;

const IDS: [&str; 4] = [
    "019c0001-0000-7000-8000-000000000001",
    "019c0002-0000-7000-8000-000000000002",
    "019c0003-0000-7000-8000-000000000003",
    "019c0004-0000-7000-8000-000000000004",
];

fn put(root: &Path, rel: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, "{}\n").unwrap();
}

/// Each candidate of a survey: id, path, mtime and key, in order.
fn seen(p: &Packed) -> Vec<String> {
    (0..p.count())
        .map(|i| p.with(i, |c| format!("{c:?} {}", p.keys[i])))
        .collect()
}

/// Rollouts in days, one with a `.zst` twin, one with an archived copy, one archived only,
/// one in the legacy flat layout, a pre-JSONL file and a segmented directory: the packed
/// walk's survey and table are those of a discovery held as entries.
#[test]
fn a_packed_walk_keeps_what_discovery_keeps() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path().join("codex");
    let id5 = "019c0005-0000-7000-8000-000000000005";
    let id6 = "019c0006-0000-7000-8000-000000000006";
    for (dir, time, id, ext) in [
        ("sessions/2026/03/14", "14T10-00-00", IDS[0], ".jsonl"),
        ("sessions/2026/03/14", "14T10-00-00", IDS[0], ".jsonl.zst"),
        ("sessions/2026/03/15", "15T10-00-00", IDS[1], ".jsonl"),
        ("archived_sessions", "15T10-00-00", IDS[1], ".jsonl"),
        ("archived_sessions", "13T10-00-00", IDS[2], ".jsonl"),
        ("sessions", "12T10-00-00", IDS[3], ".jsonl"),
        ("sessions/2026/03/15", "15T11-00-00", id5, ".json"),
        ("sessions/2026/03/16", "16T10-00-00", id6, "/part"),
    ] {
        put(&root, &format!("{dir}/rollout-2026-03-{time}-{id}{ext}"));
    }
    let entries = discover::discover_unordered(&root);
    assert_eq!(entries.len(), 6, "{entries:?}");
    let table = ById::new(&entries);
    let store = super::super::CodexStore::new(&root, &d.path().join("state"));
    let keyer = Keyer::new(&store);
    let (mut whole, stats) = Packed::pack(entries.iter().cloned().map(Candidate::from).collect());
    whole.keys = keyer.keys_packed(&whole, &stats);
    let (survey, by_id) = super::walk(&root, &keyer);
    assert_eq!(seen(&survey), seen(&whole));
    for e in &entries {
        let (a, b) = (by_id.get(&e.id).unwrap(), table.get(&e.id).unwrap());
        assert_eq!(format!("{a:?}"), format!("{b:?}"));
    }
    let dup = by_id.get(IDS[1]).unwrap();
    assert!(dup.duplicate_in_archive && !dup.archived, "{dup:?}");
    assert!(
        !by_id
            .get(IDS[0])
            .unwrap()
            .path
            .to_string_lossy()
            .ends_with(".zst")
    );
}
