//! Checks before resume in a temporary git repository: a different branch, a new commit, a
//! dirty tree and a missing directory, through `preflight::check` and `spool resume`.

mod common;

use std::path::Path;
use std::process::Command;

use chrono::{Duration, Utc};
use spool::model::{SessionSummary, StoreKind};
use spool::preflight::check;

fn git(dir: &Path, args: &[&str]) {
    let ok = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
        .args(args)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .expect("git")
        .status
        .success();
    assert!(ok, "git {args:?}");
}

/// A repository on `main` with one commit made now, and a session that was on `main` and
/// last active `ago` before now.
fn repo(ago: Duration) -> (tempfile::TempDir, SessionSummary) {
    let d = tempfile::tempdir().unwrap();
    git(d.path(), &["init", "-q", "-b", "main"]);
    std::fs::write(d.path().join("a.txt"), "one\n").unwrap();
    git(d.path(), &["add", "a.txt"]);
    git(d.path(), &["commit", "-q", "-m", "first"]);
    let mut s = SessionSummary::new(StoreKind::Claude, "s1", d.path().join("s1.jsonl"));
    s.cwd = Some(d.path().to_string_lossy().into_owned().into());
    s.set_git_branch(Some("main".into()));
    s.updated_at = Some(Utc::now() - ago);
    (d, s)
}

#[test]
fn a_clean_repository_on_the_recorded_branch_has_nothing_to_ask() {
    let (d, s) = repo(Duration::minutes(-5));
    let r = check(&s, d.path(), None, false);
    assert!(r.refusals.is_empty() && r.surprises.is_empty(), "{r:?}");
    assert!(r.notes.contains(&"branch main".to_string()), "{r:?}");
}

#[test]
fn another_branch_is_a_surprise() {
    let (d, s) = repo(Duration::minutes(-5));
    git(d.path(), &["checkout", "-q", "-b", "feature"]);
    let r = check(&s, d.path(), None, false);
    assert_eq!(
        r.surprises,
        ["on branch feature now; the session was on main"]
    );
}

#[test]
fn a_commit_after_the_last_activity_is_a_surprise() {
    let (d, s) = repo(Duration::hours(2));
    let r = check(&s, d.path(), None, false);
    assert_eq!(
        r.surprises,
        ["1 new commit since the session's last activity"]
    );
}

#[test]
fn a_dirty_tree_is_a_surprise() {
    let (d, s) = repo(Duration::minutes(-5));
    std::fs::write(d.path().join("a.txt"), "two\n").unwrap();
    let r = check(&s, d.path(), None, false);
    assert_eq!(r.surprises.len(), 1, "{r:?}");
    assert!(
        r.surprises[0].starts_with("uncommitted changes in 1 file"),
        "{r:?}"
    );
}

#[test]
fn a_missing_directory_or_a_session_in_use_is_refused() {
    let (d, s) = repo(Duration::minutes(-5));
    let gone = d.path().join("gone");
    let r = check(
        &s,
        &gone,
        Some("the session's directory no longer exists".into()),
        true,
    );
    assert_eq!(r.refusals.len(), 2, "{r:?}");
    assert!(r.refusals[0].contains("in use"));
    assert!(r.surprises.is_empty());
}

#[test]
fn spool_resume_refuses_a_missing_directory_on_stderr() {
    let h = common::Home::empty();
    common::install_claude_fixtures(h.path());
    // A `claude` on PATH, so the only failure is the directory.
    let bin = h.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let fake = bin.join("claude");
    std::fs::write(&fake, "#!/bin/sh\nexit 0\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = h
        .command(&["resume", "claude:5b0f6c1e-8d52-4c3a-9a41-2f7d3e9b6a10"])
        .env("PATH", format!("{}:/usr/bin:/bin", bin.display()))
        .env_remove("CLAUDE_CONFIG_DIR")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no longer exists"), "{err}");
}
