//! The pi first screen from names (`newest`) against discovery.

use std::path::Path;
use std::time::{Duration, SystemTime};

use super::first_screen;
use crate::store::Candidate;

/// 2026-03-01T00:00:00Z, the day the test sessions are named in.
const T0: u64 = 1_772_323_200;

fn at(s: u64) -> SystemTime {
    SystemTime::UNIX_EPOCH + Duration::from_secs(T0 + s)
}

/// pi's name for a session started `s` seconds after `T0`.
fn name(s: u64, id: &str) -> String {
    let t = chrono::DateTime::from_timestamp((T0 + s) as i64, 0).unwrap();
    format!("{}_{id}.jsonl", t.format("%Y-%m-%dT%H-%M-%S-%3fZ"))
}

/// A file `rel` under `root` last written at `at(mtime)`.
fn put(root: &Path, rel: &str, mtime: u64) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let f = std::fs::File::create(&path).unwrap();
    f.set_modified(at(mtime)).unwrap();
}

fn dated(dir: &Path, t: u64) {
    let f = std::fs::File::open(dir).unwrap();
    f.set_modified(at(t)).unwrap();
}

fn seen(v: &[Candidate]) -> Vec<(String, std::path::PathBuf, Option<SystemTime>)> {
    (v.iter())
        .map(|c| (c.id.clone(), c.path.clone(), c.mtime))
        .collect()
}

/// The first screen is discovery's first `n` (id, path, mtime, `lstat`) when the newest
/// sessions by mtime are among the newest names: also when a newer name has an older mtime
/// (ordered by mtime), with sessions directly in the root, and with what discovery skips
/// (dot files, symlinks, a deeper level) or lists later (a name without a time) left out.
#[test]
fn the_first_screen_is_discoverys_first_rows() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path();
    for s in 0..40u64 {
        let dir = ["--w-a--", "--w-b--", "--w-c--"][(s % 3) as usize];
        // Session 38 was last written before 35 to 37: it sorts below them.
        let mtime = if s == 38 { 34 * 60 + 1 } else { s * 60 };
        put(
            root,
            &format!("{dir}/{}", name(s * 60, &format!("id{s:02}"))),
            mtime,
        );
    }
    put(root, &name(40 * 60, "top"), 40 * 60);
    // Newest of all by mtime, but without a time in its name: the full discovery's.
    put(root, "--w-a--/other-tool.jsonl", 99 * 60);
    put(root, &format!("--w-b--/.{}", name(98 * 60, "dot")), 98 * 60);
    put(
        root,
        &format!("--w-b--/deep/{}", name(97 * 60, "deep")),
        97 * 60,
    );
    std::os::unix::fs::symlink(
        root.join("--w-a--").join(name(0, "id00")),
        root.join("--w-c--").join(name(96 * 60, "link")),
    )
    .unwrap();
    let full = super::super::discover::discover(root);
    assert_eq!(full[0].id, "other-tool");
    for n in [1, 2, 5, 8, 20] {
        let got = first_screen(root, n);
        let want: Vec<Candidate> = (full.iter())
            .filter(|c| c.id != "other-tool")
            .take(n)
            .cloned()
            .collect();
        assert_eq!(seen(&got), seen(&want), "n = {n}");
        for (g, w) in got.iter().zip(&want) {
            assert_eq!(g.stat, w.stat);
        }
    }
    let ids: Vec<String> = first_screen(root, 8).into_iter().map(|c| c.id).collect();
    assert_eq!(ids[..6], ["top", "id39", "id37", "id36", "id35", "id38"]);
    assert!(first_screen(root, 0).is_empty());
    assert!(first_screen(&root.join("missing"), 5).is_empty());
}

/// A directory older than the newest names found so far is not listed (no file created in
/// it since could be named later than its mtime); one as new as them is. Each of the newer
/// directories holds the names wanted, so either thread's first listing rules the old one out.
#[test]
fn directories_older_than_the_newest_names_are_not_listed() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path();
    for s in 0..8u64 {
        let dir = ["--w-new--", "--w-new2--"][(s % 2) as usize];
        put(
            root,
            &format!("{dir}/{}", name(100 + s, &format!("n{s}"))),
            100 + s,
        );
        dated(&root.join(dir), 110);
    }
    // A newer name in an older directory than any name above: a copied file, say.
    put(root, &format!("--w-old--/{}", name(200, "old")), 200);
    dated(&root.join("--w-old--"), 50);
    let ids = |n| -> Vec<String> { first_screen(root, n).into_iter().map(|c| c.id).collect() };
    // Two wanted (four names): the older directory is not listed.
    assert_eq!(ids(2), ["n7", "n6"]);
    // Five wanted: ten names are not there yet, so the older directory is listed too.
    assert_eq!(ids(5), ["old", "n7", "n6", "n5", "n4"]);
    // As new as the newest names: listed.
    dated(&root.join("--w-old--"), 110);
    assert_eq!(ids(2), ["old", "n7"]);
}
