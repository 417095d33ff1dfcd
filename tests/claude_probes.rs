//! What a warm `spool list` asks the filesystem about Claude Code's session directories,
//! counted with `strace` (issue 10): no open of an absent `<id>/subagents`, and no listing of
//! a `subagents/` whose link count says it holds no directory, with the output unchanged.
//! Skipped, with a note, where `strace` cannot run.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::Home;

/// Sessions in the fixture: half with `<id>/tool-results/` only, half with a subagent too.
const SESSIONS: usize = 40;

fn session(project: &Path, i: usize) {
    let id = format!("5b0f6c1e-8d52-4c3a-9a41-{i:012}");
    let rec = serde_json::json!({"type":"user","uuid":format!("u{i}"),"parentUuid":null,
        "sessionId":id,"timestamp":"2026-03-14T09:15:20.101Z","cwd":"/w",
        "message":{"role":"user","content":format!("task {i}")}});
    let file = project.join(format!("{id}.jsonl"));
    std::fs::write(&file, format!("{rec}\n")).unwrap();
    // Two days old: a transcript written in the last moments is live, and its row is read
    // again on each start whatever the catalog holds.
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(2 * 86_400);
    (std::fs::File::options().write(true).open(&file).unwrap())
        .set_modified(old)
        .unwrap();
    let dir = project.join(&id);
    std::fs::create_dir_all(dir.join("tool-results")).unwrap();
    std::fs::write(dir.join("tool-results/toolu_1.txt"), "out").unwrap();
    if i % 2 == 1 {
        std::fs::create_dir_all(dir.join("subagents")).unwrap();
        std::fs::write(dir.join("subagents/agent-a1.jsonl"), format!("{rec}\n")).unwrap();
    }
}

/// `spool list --json --all` over `h`'s Claude store only, under `strace` when `trace` is
/// given (`None`: strace could not run).
fn list(h: &Home, trace: Option<&Path>) -> Option<String> {
    let empty = h.path().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let e = empty.to_str().unwrap();
    let claude = h.claude_dir();
    let spool = [
        env!("CARGO_BIN_EXE_spool"),
        "--claude-dir",
        claude.to_str().unwrap(),
        "--codex-dir",
        e,
        "--pi-dir",
        e,
        "--loop-dir",
        e,
        "--loom-dir",
        e,
        "--harness-dir",
        e,
        "list",
        "--json",
        "--all",
    ];
    let mut c = match trace {
        Some(t) => {
            let mut c = Command::new("strace");
            c.args(["-f", "-qq", "-e", "trace=openat,getdents64,statx", "-o"])
                .arg(t)
                .arg("--")
                .args(spool);
            c
        }
        None => {
            let mut c = Command::new(spool[0]);
            c.args(&spool[1..]);
            c
        }
    };
    let out = c
        .env("HOME", h.path())
        .env("XDG_CACHE_HOME", h.path().join(".cache"))
        .env("XDG_CONFIG_HOME", h.path().join(".config"))
        .env("XDG_DATA_HOME", h.path().join(".data"))
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8(out.stdout).unwrap())
}

/// Whether the tempdir's filesystem counts subdirectories in a directory's link count, as
/// spool's rule requires (ext2/3/4, XFS, tmpfs).
fn counts_subdirs(dir: &Path) -> bool {
    let c = std::ffi::CString::new(dir.to_str().unwrap()).unwrap();
    let mut fs = std::mem::MaybeUninit::<libc::statfs>::zeroed();
    // SAFETY: a NUL-terminated path and a buffer of the size the call writes.
    if unsafe { libc::statfs(c.as_ptr(), fs.as_mut_ptr()) } != 0 {
        return false;
    }
    // SAFETY: the call succeeded. (`f_type` is an i64 here, a u32 or i32 elsewhere.)
    #[allow(clippy::unnecessary_cast)]
    let kind = unsafe { fs.assume_init() }.f_type as i64;
    [0xEF53, 0x5846_5342, 0x0102_1994].contains(&kind)
}

/// `SESSIONS` sessions in one project of `h`; the project's directory.
fn sessions(h: &Home) -> PathBuf {
    let project = h.claude_dir().join("projects/-w");
    std::fs::create_dir_all(&project).unwrap();
    for i in 0..SESSIONS {
        session(&project, i);
    }
    project
}

/// A cold `spool list`, then a warm one under strace; the trace (`None` where strace cannot
/// run). The warm list must print what the cold one did.
fn traced_warm_list(h: &Home) -> Option<String> {
    let cold = list(h, None).expect("spool list");
    assert_eq!(cold.lines().count(), SESSIONS);
    let trace = h.path().join("trace.txt");
    let warm = list(h, Some(&trace))?;
    assert_eq!(warm, cold, "the warm list prints what the cold one did");
    Some(std::fs::read_to_string(&trace).unwrap())
}

/// A warm list opens no `<id>/subagents` that is absent (the old code tried one for each of
/// the 40 session directories), and lists no `subagents/` without subdirectories (20 listings
/// before, two `getdents64` each). A nested workflow directory is still listed.
#[test]
fn a_warm_list_opens_no_absent_subagents_and_lists_no_leaf_one() {
    let h = Home::empty();
    let project = sessions(&h);
    let nested = project.join("5b0f6c1e-8d52-4c3a-9a41-000000000001/subagents/workflows/wf1");
    std::fs::create_dir_all(&nested).unwrap();
    std::fs::write(nested.join("agent-b1.jsonl"), "{}\n").unwrap();

    let Some(text) = traced_warm_list(&h) else {
        eprintln!("skipped: strace could not run here");
        return;
    };
    let calls = |f: &dyn Fn(&str) -> bool| text.lines().filter(|l| f(l)).count();
    // Any open naming a subagents tree, found or not (strace may split a call's line from
    // its result). The nested one's walk opens its `subagents/`, `workflows/` and `wf1/`.
    let opened = calls(&|l| l.contains("openat(") && l.contains("subagents"));
    let listed = calls(&|l| l.contains("getdents64("));
    eprintln!("opens of a subagents tree: {opened}, directory reads: {listed}");
    if counts_subdirs(h.path()) {
        assert!(opened <= 3, "{opened} opens of a subagents tree:\n{text}");
        assert!(listed <= 20, "{listed} directory reads:\n{text}");
    } else {
        // Every subagents/ is walked here, but no absent one is tried.
        assert!(opened <= SESSIONS / 2 + 2, "{opened} opens:\n{text}");
    }
}

/// A warm list takes one `statx` of each `subagents/` there is: the probe's, which also
/// keys it (issue 10: the key took a second one, 14.5k of a warm check's 284k at 100k
/// sessions). The output is unchanged.
#[test]
fn a_warm_list_stats_each_subagents_directory_once() {
    let h = Home::empty();
    sessions(&h);
    let Some(text) = traced_warm_list(&h) else {
        eprintln!("skipped: strace could not run here");
        return;
    };
    // The path ends in `subagents` (the directory itself, not below it), and it was found
    // (every session's directory is probed; half hold no `subagents/`).
    let stats = (text.lines())
        .filter(|l| l.contains("statx(") && l.contains("/subagents\"") && l.ends_with("= 0"))
        .count();
    assert_eq!(stats, SESSIONS / 2, "{text}");
}
