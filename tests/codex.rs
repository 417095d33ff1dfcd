//! Codex CLI through the CLI and the browser's store side: the contract fixtures listed,
//! shown, windowed and paged (snapshots), discovery by `$CODEX_HOME` and `--codex-dir`,
//! resume, fork and unarchive through a fake `codex` (argv and cwd checked), full-text search,
//! and the no-write proof: no file under the Codex directory changes, by size, mtime or hash.

mod common;

use std::path::{Path, PathBuf};

use common::Home;

const A: &str = "codex:019ceba0-ae55-7d10-9f2a-4b8e6c1d2a30";
const B: &str = "codex:019ceca8-05e8-7a3d-8e4f-5a6b7c8d9e01";
const LIVE: &str = "019cf000-0000-7000-8000-000000000001";
const ARCHIVED: &str = "019cf000-0000-7000-8000-000000000002";

fn home() -> Home {
    let h = Home::empty();
    common::install_codex_fixtures(h.path());
    h
}

#[test]
fn list_and_show_snapshots() {
    let h = home();
    insta::assert_snapshot!("codex_list_json", h.ok(&["list", "--json", "--all"]));
    insta::assert_snapshot!("codex_show_a_json", h.ok(&["show", A, "--json"]));
    insta::assert_snapshot!("codex_show_b", h.ok(&["show", B]));
    insta::assert_snapshot!("codex_show_b_window", h.ok(&["show", B, "--window"]));
    insta::assert_snapshot!("codex_show_a_last", h.ok(&["show", A, "--last", "1"]));
    insta::assert_snapshot!(
        "codex_show_b_window_json",
        h.ok(&["show", B, "--window", "--json"])
    );
}

#[test]
fn derived_values_of_the_contract_examples() {
    let h = home();
    let rows = common::json_lines(&h.ok(&["list", "--json", "--all", "--format", "codex"]));
    assert_eq!(rows.len(), 2);
    let a = rows.iter().find(|r| r["ref"] == A).unwrap();
    assert_eq!(a["title"], "router trailing slash");
    assert_eq!(a["created_at"], "2026-03-14T09:15:02.101Z");
    assert_eq!(a["updated_at"], "2026-03-14T09:16:41.022Z");
    assert_eq!(a["messages"], 4);
    assert_eq!(a["summary"], "");
    assert_eq!(a["cwd"], "/home/user/projects/tinyhttp");
    assert_eq!(a["archived"], false);
    let b = rows.iter().find(|r| r["ref"] == B).unwrap();
    assert_eq!(b["title"], "why does router_test.go fail? (fork)");
    assert_eq!(b["messages"], 4);
    assert_eq!(b["archived"], true);
    assert_eq!(b["forked_from"], A);
    assert_eq!(b["updated_at"], "2026-03-14T14:05:11.300Z");
    assert!(
        b["summary"]
            .as_str()
            .unwrap()
            .starts_with("Goal: make trailing-slash handling configurable")
    );
    // Without the session index, A's title is Codex's preview.
    std::fs::remove_file(h.codex_dir().join("session_index.jsonl")).unwrap();
    let a = h.ok(&["list", "--json", "--format", "codex"]);
    assert!(
        a.contains("\"title\":\"why does router_test.go fail?\""),
        "{a}"
    );
    // Archived threads hide by default and show with --archived.
    assert_eq!(h.ok(&["list", "--json", "--archived"]).lines().count(), 1);
}

#[test]
fn format_filter_query_and_discovery_roots() {
    let h = home();
    let q = h.ok(&["list", "--json", "--query", "router trailing"]);
    assert!(q.lines().next().unwrap().contains(A), "{q}");
    // $CODEX_HOME moves the root; --codex-dir beats it.
    let moved = h.path().join("elsewhere");
    std::fs::rename(h.codex_dir(), &moved).unwrap();
    assert_eq!(h.ok(&["list", "--json", "--all"]).lines().count(), 0);
    let out = h
        .command(&["list", "--json", "--all"])
        .env("CODEX_HOME", &moved)
        .env_remove("XDG_DATA_HOME")
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout).lines().count(), 2);
    let dir = moved.to_string_lossy().into_owned();
    let rows = h.ok(&["--codex-dir", &dir, "list", "--json", "--all"]);
    assert_eq!(rows.lines().count(), 2);
}

#[test]
fn full_text_search_finds_a_codex_phrase() {
    let h = home();
    let out = h.ok(&["search", "strips the trailing slash", "--json"]);
    assert!(out.contains(A), "{out}");
}

#[test]
fn delete_is_refused_with_the_reason_and_archive_hides() {
    let h = home();
    let out = h.run(&["delete", A, "--yes"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("spool: spool does not delete Codex sessions"),
        "{err}"
    );
    assert!(err.contains("archive"), "{err}");
    h.ok(&["archive", A]);
    assert_eq!(h.ok(&["list", "--json"]).lines().count(), 0);
    let state = h
        .state_dir()
        .join("codex/019ceba0-ae55-7d10-9f2a-4b8e6c1d2a30.json");
    assert!(state.is_file());
    // Codex's own archive is not spool's to undo: the sentence says what to run.
    let out = h.run(&["unarchive", B]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("codex unarchive 019ceca8"), "{err}");
}

fn rollout(h: &Home, dir: &str, id: &str, cwd: &str, later_cwd: &str) -> PathBuf {
    let day = h.codex_dir().join(dir);
    std::fs::create_dir_all(&day).unwrap();
    let lines = [
        serde_json::json!({"timestamp":"2026-03-14T09:00:00Z","type":"session_meta",
            "payload":{"id":id,"timestamp":"2026-03-14T09:00:00Z","cwd":cwd,"source":"cli"}}),
        serde_json::json!({"timestamp":"2026-03-14T09:00:01Z","type":"turn_context",
            "payload":{"turn_id":"t1","cwd":later_cwd,"model":"gpt-5.5"}}),
        serde_json::json!({"timestamp":"2026-03-14T09:00:02Z","type":"event_msg",
            "payload":{"type":"user_message","message":"hello"}}),
    ];
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    let path = day.join(format!("rollout-2026-03-14T10-00-00-{id}.jsonl"));
    std::fs::write(&path, text).unwrap();
    path
}

/// Two threads whose directories exist (one archived by Codex), and a fake `codex` on PATH
/// that appends its cwd and argv to a log.
fn live_sessions(h: &Home) -> (PathBuf, PathBuf) {
    let repo = h.path().join("work/repo");
    std::fs::create_dir_all(repo.join("sub")).unwrap();
    let cwd = repo.to_string_lossy().into_owned();
    let sub = repo.join("sub").to_string_lossy().into_owned();
    // Started in the repo, the last turn in repo/sub: resume runs in repo/sub.
    rollout(h, "sessions/2026/03/14", LIVE, &cwd, &sub);
    rollout(h, "archived_sessions", ARCHIVED, &cwd, &cwd);
    let bin = h.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let log = h.path().join("codex.log");
    let script = format!(
        "#!/bin/sh\nprintf '%s\\n' \"$PWD\" \"$@\" >> '{}'\n",
        log.display()
    );
    let fake = bin.join("codex");
    std::fs::write(&fake, script).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    (bin, log)
}

fn run_with_path(h: &Home, bin: &Path, args: &[&str]) -> std::process::Output {
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    h.command(args)
        .env("PATH", path)
        .env_remove("CODEX_HOME")
        .env_remove("XDG_DATA_HOME")
        .output()
        .unwrap()
}

fn ok_with_path(h: &Home, bin: &Path, args: &[&str]) -> String {
    let out = run_with_path(h, bin, args);
    assert!(
        out.status.success(),
        "spool {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn resume_fork_and_unarchive_run_codex_in_the_current_dir() {
    let h = home();
    let (bin, log) = live_sessions(&h);
    let sub = h.path().join("work/repo/sub");
    let repo = h.path().join("work/repo");
    ok_with_path(&h, &bin, &["resume", &format!("codex:{LIVE}")]);
    ok_with_path(&h, &bin, &["fork", &format!("codex:{LIVE}")]);
    let got = std::fs::read_to_string(&log).unwrap();
    let s = sub.display();
    assert_eq!(got, format!("{s}\nresume\n{LIVE}\n{s}\nfork\n{LIVE}\n"));
    std::fs::remove_file(&log).unwrap();
    // An archived thread: refused with what to do, then run with --yes (unarchive first).
    let out = run_with_path(&h, &bin, &["resume", &format!("codex:{ARCHIVED}")]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("codex unarchive {ARCHIVED}")),
        "{err}"
    );
    assert!(err.contains("--yes"), "{err}");
    assert!(!log.exists(), "nothing ran without confirmation");
    ok_with_path(&h, &bin, &["resume", &format!("codex:{ARCHIVED}"), "--yes"]);
    let got = std::fs::read_to_string(&log).unwrap();
    let r = repo.display();
    assert_eq!(
        got,
        format!("{r}\nunarchive\n{ARCHIVED}\n{r}\nresume\n{ARCHIVED}\n")
    );
    // --print shows both steps; [resume] overrides the command.
    let printed = ok_with_path(
        &h,
        &bin,
        &["resume", &format!("codex:{ARCHIVED}"), "--print"],
    );
    assert_eq!(
        printed,
        format!("cd {r} && codex unarchive {ARCHIVED} && codex resume {ARCHIVED}\n")
    );
    let cfg = h.path().join("cfg.toml");
    std::fs::write(&cfg, "[resume]\ncodex = \"codex resume --yolo {id}\"\n").unwrap();
    let cfg = cfg.to_string_lossy().into_owned();
    let args = [
        "--config",
        &cfg,
        "resume",
        &format!("codex:{LIVE}"),
        "--print",
    ];
    let printed = ok_with_path(&h, &bin, &args);
    assert_eq!(printed, format!("cd {s} && codex resume --yolo {LIVE}\n"));
}

#[test]
fn no_subcommand_or_browser_action_writes_under_the_codex_directory() {
    let h = home();
    // A fake `codex` that does nothing: spool's own behaviour is what is checked here.
    let (bin, _log) = live_sessions(&h);
    std::fs::write(bin.join("codex"), "#!/bin/sh\nexit 0\n").unwrap();
    let codex = h.codex_dir();
    let before = common::fingerprint(&codex);
    let out_dir = h.path().join("exports");
    std::fs::create_dir_all(&out_dir).unwrap();
    let md = out_dir.join("a.md").to_string_lossy().into_owned();
    let html = out_dir.join("a.html").to_string_lossy().into_owned();
    let json = out_dir.join("a.json").to_string_lossy().into_owned();
    let live = format!("codex:{LIVE}");
    let runs: Vec<Vec<&str>> = vec![
        vec!["list"],
        vec!["list", "--json", "--all"],
        vec!["list", "--archived"],
        vec!["list", "--query", "router", "--format", "codex"],
        vec!["show", A],
        vec!["show", B, "--json"],
        vec!["show", B, "--window"],
        vec!["show", B, "--raw"],
        vec!["show", A, "--last", "1"],
        vec!["export", A],
        vec!["export", A, "--to", "markdown", "-o", &md],
        vec!["export", B, "--to", "html", "-o", &html],
        vec!["export", B, "--to", "json", "-o", &json],
        vec!["search", "trailing slash"],
        vec!["pin", A],
        vec!["unpin", A],
        vec!["read", B],
        vec!["unread", B],
        vec!["archive", B],
        vec!["unarchive", B],
        vec!["archive", A],
        vec!["unarchive", A],
        vec!["rename", A, "spool title"],
        vec!["fork", A, "--print"],
        vec!["fork", &live],
        vec!["delete", A, "--yes"],
        vec!["delete", B],
        vec!["undelete", A],
        vec!["resume", A, "--print"],
        vec!["resume", B],
        vec!["resume", &live],
    ];
    for args in &runs {
        let out = run_with_path(&h, &bin, args);
        assert!(
            out.status.code().is_some_and(|c| c <= 2),
            "spool {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    assert_eq!(
        common::fingerprint(&codex),
        before,
        "a CLI subcommand changed the Codex directory"
    );
    common::every_store_action(&h.stores(), &[A, B, live.as_str()], &out_dir);
    assert_eq!(
        common::fingerprint(&codex),
        before,
        "a browser action changed the Codex directory"
    );
}
