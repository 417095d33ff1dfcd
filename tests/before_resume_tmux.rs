//! Checks before resume, in a real terminal: `r` on a session whose directory has
//! uncommitted changes asks first (one key to go on or to cancel), a session whose
//! directory is gone is refused with the reason, an archived Codex thread asks before
//! Codex unarchives it, and a Claude Code session its agent may still be writing (live) asks
//! before a second `claude` opens it. Fake agents on PATH record each run's directory and argv.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::tmux::Tmux;

const HARNESS_ID: &str = "r7-PqLs_04VmYe2K";
const CODEX_ARCHIVED: &str = "019ceca8-05e8-7a3d-8e4f-5a6b7c8d9e01";

/// A fake agent `name` in `home/bin` that appends its directory and argv, one line a run.
fn recording_agent(home: &Path, name: &str) -> (PathBuf, PathBuf) {
    let bin = home.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let log = home.join(format!("{name}.log"));
    let script = format!(
        "#!/bin/sh\nprintf '%s|%s\\n' \"$PWD\" \"$*\" >> '{}'\n",
        log.display()
    );
    let fake = bin.join(name);
    std::fs::write(&fake, script).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    (bin, log)
}

fn git(dir: &Path, args: &[&str]) {
    let ok = Command::new("git")
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .current_dir(dir)
        .status()
        .expect("git")
        .success();
    assert!(ok, "git {args:?}");
}

/// The harness fixture record alone, unarchived, its `project_root` pointed at `root`.
fn harness_session_in(home: &Path, root: &Path) {
    let dir = home.join(".agent-harness/memory/sessions");
    let fx = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/harness/sessions");
    common::copy_tree(&fx, &dir);
    for f in std::fs::read_dir(&dir).unwrap().flatten() {
        let p = f.path();
        if p.extension().is_some_and(|e| e == "json")
            && !p
                .file_name()
                .unwrap()
                .to_string_lossy()
                .contains(HARNESS_ID)
        {
            // Only the one session: the search below then finds it alone.
            std::fs::remove_file(&p).unwrap();
        }
    }
    let p = dir.join(format!("{HARNESS_ID}.json"));
    let mut v: serde_json::Value = serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap();
    v["project_root"] = root.to_string_lossy().into_owned().into();
    // The fixture is archived, which the harness refuses to resume: a live one here.
    v["archived"] = false.into();
    std::fs::write(&p, serde_json::to_vec_pretty(&v).unwrap()).unwrap();
}

fn path_with(bin: &Path) -> String {
    format!("PATH={}:/usr/bin:/bin", bin.display())
}

#[test]
fn uncommitted_changes_ask_before_resume_and_one_key_answers() {
    let Some(t) = Tmux::new("checks") else { return };
    let repo = t.dir.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    git(&repo, &["init", "-q", "-b", "main"]);
    std::fs::write(repo.join("a.txt"), "one\n").unwrap();
    git(&repo, &["add", "a.txt"]);
    git(&repo, &["commit", "-q", "-m", "first"]);
    std::fs::write(repo.join("a.txt"), "two\n").unwrap();
    harness_session_in(&t.home(), &repo);
    let (bin, log) = recording_agent(&t.home(), "uv");
    t.run_env(&path_with(&bin), "");
    t.wait_listed();
    t.keys(&["r"]);
    let s = t.wait_for(" before resume ");
    assert!(s.contains("uncommitted changes"), "{s}");
    assert!(s.contains("y/enter resume anyway"), "{s}");
    // n cancels: nothing ran.
    t.keys(&["n"]);
    t.wait_until("the dialog to close", |s| !s.contains(" before resume "));
    assert!(!log.exists(), "the agent ran after n");
    // y goes on: the agent runs in the session's directory with its id.
    t.keys(&["r"]);
    t.wait_for(" before resume ");
    t.keys(&["y"]);
    t.wait_until("the agent to run", |_| log.exists());
    let ran = std::fs::read_to_string(&log).unwrap();
    let (dir, argv) = ran.trim().split_once('|').unwrap();
    assert_eq!(Path::new(dir), repo.canonicalize().unwrap());
    assert!(argv.contains(&format!("--resume {HARNESS_ID}")), "{argv}");
    // Back in the browser after the agent exits.
    t.wait_listed();
    t.keys(&["q"]);
    let end = t.wait_for("STTY-DONE");
    assert!(end.contains("EXIT=0"), "{end}");
}

#[test]
fn a_missing_directory_is_refused_with_the_reason() {
    let Some(t) = Tmux::new("refused") else {
        return;
    };
    let gone = t.dir.path().join("was-here");
    harness_session_in(&t.home(), &gone);
    let (bin, log) = recording_agent(&t.home(), "uv");
    t.run_env(&path_with(&bin), "");
    t.wait_listed();
    t.keys(&["r"]);
    let s = t.wait_for("not resuming:");
    assert!(s.contains("no longer exists"), "{s}");
    assert!(
        !s.contains(" before resume "),
        "a refusal asks nothing:\n{s}"
    );
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert!(!log.exists(), "the agent ran");
    t.keys(&["q"]);
    let end = t.wait_for("STTY-DONE");
    assert!(end.contains("EXIT=0"), "{end}");
}

#[test]
fn an_archived_codex_thread_asks_before_codex_unarchives_it() {
    let Some(t) = Tmux::new("unarchive") else {
        return;
    };
    let work = t.dir.path().join("tinyhttp");
    std::fs::create_dir_all(&work).unwrap();
    common::install_codex_fixtures(&t.home());
    // Only the archived thread, its directory one that exists here.
    let codex = t.home().join(".codex");
    std::fs::remove_dir_all(codex.join("sessions")).unwrap();
    let _ = std::fs::remove_dir_all(codex.join("ended"));
    for f in common::files_under(&codex.join("archived_sessions")) {
        let text = std::fs::read_to_string(&f).unwrap();
        let text = text.replace("/home/user/projects/tinyhttp", &work.to_string_lossy());
        std::fs::write(&f, text).unwrap();
        // Settled again (2026-03-16): a file written just now looks live, which asks too.
        let settled = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_773_619_200);
        let file = std::fs::File::options().write(true).open(&f).unwrap();
        file.set_modified(settled).unwrap();
    }
    let (bin, log) = recording_agent(&t.home(), "codex");
    // Archived threads are listed with `.`.
    t.run_env(&path_with(&bin), "");
    t.wait_listed();
    t.keys(&["."]);
    t.wait_stable("the archived thread", |s| s.contains("[codex]"));
    t.keys(&["r"]);
    let s = t.wait_for("unarchive");
    assert!(s.contains(CODEX_ARCHIVED) || s.contains("codex:"), "{s}");
    // n: nothing runs, the thread stays archived.
    t.keys(&["n"]);
    t.wait_until("the dialog to close", |s| !s.contains("y/enter"));
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert!(!log.exists(), "codex ran after n");
    // y: `codex unarchive`, then `codex resume`, both in the thread's directory.
    t.keys(&["r"]);
    t.wait_for("y/enter");
    t.keys(&["y"]);
    t.wait_until("codex to run twice", |_| {
        std::fs::read_to_string(&log).is_ok_and(|l| l.lines().count() >= 2)
    });
    let ran = std::fs::read_to_string(&log).unwrap();
    let runs: Vec<(&str, &str)> = ran.lines().map(|l| l.split_once('|').unwrap()).collect();
    assert_eq!(runs[0].1, format!("unarchive {CODEX_ARCHIVED}"), "{ran}");
    assert_eq!(runs[1].1, format!("resume {CODEX_ARCHIVED}"), "{ran}");
    for (dir, _) in &runs {
        assert_eq!(Path::new(dir), work.canonicalize().unwrap(), "{ran}");
    }
    t.wait_listed();
    t.keys(&["q"]);
    let end = t.wait_for("STTY-DONE");
    assert!(end.contains("EXIT=0"), "{end}");
}

#[test]
fn a_live_claude_session_asks_before_resume_and_one_key_answers() {
    let Some(t) = Tmux::new("live") else { return };
    let work = t.dir.path().join("parser-work");
    std::fs::create_dir_all(&work).unwrap();
    let work = work.canonicalize().unwrap();
    // Claude's project directory: every character outside [A-Za-z0-9] becomes `-`.
    let project_dir: String = work
        .to_string_lossy()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    let project = t.home().join(".claude/projects").join(project_dir);
    std::fs::create_dir_all(&project).unwrap();
    let id = "3c1d8f2a-6b4e-4f7a-9c2d-1e5b7a9c3f10";
    // Written just now and its last record a prompt nobody answered yet: live.
    let prompt = serde_json::json!({"type":"user","uuid":"7a000000-0000-4000-8000-000000000001",
        "parentUuid":null,"isSidechain":false,"sessionId":id,"cwd":work,
        "timestamp":"2026-03-15T10:00:20.000Z","message":{"role":"user",
        "content":"keep going on the parser"}});
    std::fs::write(project.join(format!("{id}.jsonl")), format!("{prompt}\n")).unwrap();
    let (bin, log) = recording_agent(&t.home(), "claude");
    t.run_env(&path_with(&bin), "");
    t.wait_listed();
    t.keys(&["r"]);
    let s = t.wait_for(" before resume ");
    assert!(s.contains("looks live"), "{s}");
    assert!(s.contains("y/enter resume anyway"), "{s}");
    // n cancels: no second claude on the transcript.
    t.keys(&["n"]);
    t.wait_until("the dialog to close", |s| !s.contains(" before resume "));
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert!(!log.exists(), "claude ran after n");
    // y goes on: `claude --resume <id>` in the session's launch directory.
    t.keys(&["r"]);
    t.wait_for(" before resume ");
    t.keys(&["y"]);
    t.wait_until("claude to run", |_| log.exists());
    let ran = std::fs::read_to_string(&log).unwrap();
    let (dir, argv) = ran.trim().split_once('|').unwrap();
    assert_eq!(Path::new(dir), work);
    assert_eq!(argv, format!("--resume {id}"));
    t.wait_listed();
    t.keys(&["q"]);
    let end = t.wait_for("STTY-DONE");
    assert!(end.contains("EXIT=0"), "{end}");
}
