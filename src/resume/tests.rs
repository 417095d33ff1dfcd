//! Unit tests of template splitting, quoting, the option-like guard and the start checks.

use std::path::Path;

use super::plan::{contract_id, substitute};
use super::*;
use crate::model::{SessionSummary, StoreKind};

#[test]
fn words_split_like_a_shell_without_running_one() {
    assert_eq!(
        split_words(r#"uv run 'agent x.py' --name "a \"b\"" c\ d $(rm)"#).unwrap(),
        [
            "uv",
            "run",
            "agent x.py",
            "--name",
            "a \"b\"",
            "c d",
            "$(rm)"
        ]
    );
    assert!(split_words("a 'b").is_err());
}

#[test]
fn shell_line_quotes_everything_unsafe() {
    let p = ResumePlan {
        argv: vec!["uv".into(), "it's".into()],
        cwd: "/tmp/a b".into(),
        before: Vec::new(),
    };
    assert_eq!(p.shell_line(), r#"cd '/tmp/a b' && uv 'it'\''s'"#);
}

#[test]
fn option_like_ids_never_reach_an_argv_as_options() {
    let words = |t: &str| split_words(t).unwrap();
    let id = |w: &str| w.replace("{id}", "-rf");
    assert_eq!(
        substitute(&words("agent --resume {id} --memory-dir /m"), id).unwrap(),
        ["agent", "--resume=-rf", "--memory-dir", "/m"]
    );
    assert_eq!(
        substitute(&words("agent resume -- {id}"), id).unwrap(),
        ["agent", "resume", "--", "-rf"]
    );
    assert_eq!(substitute(&words("loom -r {id}"), id).unwrap_err(), "-rf");
    assert_eq!(substitute(&words("agent {id}"), id).unwrap_err(), "-rf");
    // Ids per contract: a loom log named `-rf.jsonl` is not a loom id.
    assert!(!contract_id(StoreKind::Loom, "-rf"));
    assert!(!contract_id(StoreKind::Loop, "-rf"));
    assert!(contract_id(StoreKind::Harness, "-rf"));
    assert!(contract_id(StoreKind::Loom, "20260314-091502"));
}

#[test]
fn hostile_paths_are_quoted_inert_and_exact() {
    let cwd = "/tmp/a\u{1b}]52;c;aGk=\u{7}\u{1b}[2J b\u{202e}c'd\\e\n\u{9b}f";
    let p = ResumePlan {
        argv: vec!["loom".into(), "--resume".into()],
        cwd: cwd.into(),
        before: Vec::new(),
    };
    let line = p.shell_line();
    assert!(!line.chars().any(crate::text::terminal_unsafe), "{line:?}");
    // bash reads the quoted word back to exactly the same bytes.
    let word = line
        .strip_prefix("cd ")
        .unwrap()
        .split(" && ")
        .next()
        .unwrap();
    let out = std::process::Command::new("bash")
        .args(["-c", &format!("printf %s {word}")])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8(out.stdout).unwrap(), cwd);
}

fn plan_in(cwd: &Path, program: &str) -> ResumePlan {
    ResumePlan {
        argv: vec![program.into(), "--resume".into()],
        cwd: cwd.to_path_buf(),
        before: Vec::new(),
    }
}

fn refusal(p: &ResumePlan) -> String {
    p.run().unwrap_err().to_string()
}

#[test]
fn a_failed_start_says_what_failed_first() {
    let d = tempfile::tempdir().unwrap();
    // A program missing from PATH is not reported as a missing directory.
    let e = refusal(&plan_in(d.path(), "spool-no-such-agent"));
    assert!(
        e.starts_with("spool-no-such-agent: command not found on PATH"),
        "{e}"
    );
    // A missing directory, a file where the directory should be, a program that is
    // not executable: each says so.
    let gone = d.path().join("gone");
    let e = refusal(&plan_in(&gone, "sh"));
    assert!(
        e.starts_with("the session's directory no longer exists"),
        "{e}"
    );
    let file = d.path().join("file");
    std::fs::write(&file, "").unwrap();
    let e = refusal(&plan_in(&file, "sh"));
    assert!(
        e.starts_with("the session's directory is not a directory"),
        "{e}"
    );
    let e = refusal(&plan_in(d.path(), "./file"));
    assert!(e.starts_with("./file: permission denied"), "{e}");
    // What works still runs.
    assert_eq!(plan_in(d.path(), "true").run().unwrap(), 0);
}

#[test]
fn a_harness_record_without_project_root_resumes_here() {
    let d = tempfile::tempdir().unwrap();
    let store = crate::store::harness_store::HarnessStore::new(d.path());
    let mut s = SessionSummary::new(StoreKind::Harness, "abc", d.path().join("abc.json"));
    s.has_user_message = true;
    let p = plan(&s, &store, &ResumeCommands::default()).unwrap();
    assert_eq!(p.cwd, std::env::current_dir().unwrap());
    // Other stores still need a recorded directory.
    s.store = StoreKind::Loom;
    assert!(plan(&s, &store, &ResumeCommands::default()).is_err());
}
