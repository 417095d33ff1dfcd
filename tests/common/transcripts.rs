//! Generated Claude Code transcripts for the cold-start tests: small sessions across
//! project directories, each with its last activity in its records and an mtime of the
//! test's choosing, and each project directory dated as Claude leaves it (the creation of
//! its newest transcript).

use std::path::{Path, PathBuf};
use std::time::{Duration, UNIX_EPOCH};

/// 2026-03-01T00:00:00Z, the first session's creation.
const T0: u64 = 1_772_323_200;

/// The id of session `n`.
pub fn id(n: u64) -> String {
    format!("7f49e40a-ae2b-458e-babd-{n:012x}")
}

/// One transcript in `project`: session `n`, last active `active` seconds after `T0` (its
/// record's time; its mtime ten minutes later), its prompt `prompt`.
pub fn write(projects: &Path, project: &str, n: u64, active: u64, prompt: &str) -> PathBuf {
    let dir = projects.join(project);
    std::fs::create_dir_all(&dir).unwrap();
    let ts = chrono::DateTime::from_timestamp((T0 + active) as i64, 0).unwrap();
    let rec = serde_json::json!({"parentUuid":null,"isSidechain":false,"cwd":"/w",
        "sessionId":id(n),"type":"user","uuid":format!("u{n}"),
        "timestamp":ts.format("%Y-%m-%dT%H:%M:%SZ").to_string(),
        "message":{"role":"user","content":prompt}});
    let path = dir.join(format!("{}.jsonl", id(n)));
    std::fs::write(&path, format!("{rec}\n")).unwrap();
    let f = std::fs::File::options().write(true).open(&path).unwrap();
    f.set_modified(UNIX_EPOCH + Duration::from_secs(T0 + active + 600))
        .unwrap();
    path
}

/// `count` sessions an hour apart, `session N` in project directory `-w-p{N % projects}`;
/// then `resumed` (session `count`), created first in the project after the newest one's
/// but written after all of them. Each project directory's mtime is its newest creation,
/// so the newest project holds the newest session but for `resumed`: a cold start's guess
/// at its first screen (the newest projects' transcripts) leaves `resumed` out.
pub fn store(claude: &Path, count: u64, projects: u64) {
    let root = claude.join("projects");
    let project = |n: u64| format!("-w-p{}", n % projects);
    for n in 0..count {
        write(&root, &project(n), n, n * 3600, &format!("session {n}"));
    }
    let newest = (count - 1) % projects;
    let resumed = project(newest + 1);
    write(&root, &resumed, count, count * 3600 + 900, "resumed");
    for p in 0..projects.min(count) {
        let last = (0..count).filter(|n| n % projects == p).max().unwrap();
        let dir = std::fs::File::open(root.join(project(p))).unwrap();
        dir.set_modified(UNIX_EPOCH + Duration::from_secs(T0 + last * 3600))
            .unwrap();
    }
}
