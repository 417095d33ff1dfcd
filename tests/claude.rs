//! Claude Code through the CLI and the browser's store side: the contract fixtures listed,
//! shown, windowed and paged (snapshots), discovery by `$CLAUDE_CONFIG_DIR` and
//! `--claude-dir`, resume and fork through a fake `claude` (argv and cwd checked), and the
//! no-write proof: no file under the Claude directory changes, by size, mtime or hash.

mod common;

use std::path::PathBuf;

use common::Home;

const A: &str = "claude:5b0f6c1e-8d52-4c3a-9a41-2f7d3e9b6a10";
const B: &str = "claude:9d2e7a44-1c3b-4f5e-8a6d-0b7c2e4f9a31";

fn home() -> Home {
    let h = Home::empty();
    common::install_claude_fixtures(h.path());
    h
}

#[test]
fn list_and_show_snapshots() {
    let h = home();
    insta::assert_snapshot!("claude_list_json", h.ok(&["list", "--json", "--all"]));
    insta::assert_snapshot!("claude_show_a_json", h.ok(&["show", A, "--json"]));
    insta::assert_snapshot!("claude_show_b", h.ok(&["show", B]));
    insta::assert_snapshot!("claude_show_b_window", h.ok(&["show", B, "--window"]));
    insta::assert_snapshot!("claude_show_a_last", h.ok(&["show", A, "--last", "1"]));
    insta::assert_snapshot!(
        "claude_show_b_last_json",
        h.ok(&["show", B, "--last", "1", "--json"])
    );
}

#[test]
fn format_filter_query_and_discovery_roots() {
    let h = home();
    let rows = h.ok(&["list", "--json", "--format", "claude"]);
    assert_eq!(rows.lines().count(), 2);
    let q = h.ok(&["list", "--json", "--query", "router trailing slash"]);
    assert!(
        q.lines().next().unwrap().contains(A),
        "best match first: {q}"
    );
    assert_eq!(h.ok(&["list", "--json", "--query", "qqqzzzxxx"]), "");
    // $CLAUDE_CONFIG_DIR moves the root; --claude-dir beats it.
    let moved = h.path().join("elsewhere");
    std::fs::rename(h.path().join(".claude"), &moved).unwrap();
    assert_eq!(h.ok(&["list", "--json"]).lines().count(), 0);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_spool"))
        .args(["list", "--json"])
        .env("HOME", h.path())
        .env("CLAUDE_CONFIG_DIR", &moved)
        .env("XDG_CONFIG_HOME", h.path().join(".config"))
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout).lines().count(), 2);
    let dir = moved.to_string_lossy().into_owned();
    assert_eq!(
        h.ok(&["--claude-dir", &dir, "list", "--json"])
            .lines()
            .count(),
        2
    );
}

#[test]
fn delete_is_refused_with_the_reason_and_archive_hides() {
    let h = home();
    let out = h.run(&["delete", A, "--yes"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("spool: spool does not delete Claude Code sessions"),
        "{err}"
    );
    assert!(err.contains("archive"), "{err}");
    h.ok(&["archive", A]);
    assert_eq!(h.ok(&["list", "--json"]).lines().count(), 1);
    assert_eq!(h.ok(&["list", "--json", "--archived"]).lines().count(), 1);
    // The state is in spool's data directory.
    let state = h
        .state_dir()
        .join("claude-code/5b0f6c1e-8d52-4c3a-9a41-2f7d3e9b6a10.json");
    assert!(state.is_file());
}

/// A session whose launch dir exists (`<home>/work/repo`), and a fake `claude` on PATH that
/// records its argv and cwd.
fn live_session(h: &Home) -> (PathBuf, PathBuf) {
    let repo = h.path().join("work/repo");
    std::fs::create_dir_all(repo.join("sub")).unwrap();
    let cwd = repo.to_string_lossy().into_owned();
    let proj = h
        .claude_dir()
        .join("projects")
        .join(spool::store::claude_store::project_name(&cwd));
    std::fs::create_dir_all(&proj).unwrap();
    // Started in the repo, later working in repo/sub: resume must run from the repo.
    let lines = [
        serde_json::json!({"type":"user","uuid":"u1","parentUuid":null,"cwd":format!("{cwd}/sub"),
            "sessionId":"c0ffee00-0000-4000-8000-000000000001","timestamp":"2026-03-14T09:00:00Z",
            "message":{"role":"user","content":"hello"}}),
        serde_json::json!({"type":"user","uuid":"u2","parentUuid":"u1","cwd":cwd,
            "sessionId":"c0ffee00-0000-4000-8000-000000000001","timestamp":"2026-03-14T09:00:01Z",
            "message":{"role":"user","content":"again"}}),
    ];
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(
        proj.join("c0ffee00-0000-4000-8000-000000000001.jsonl"),
        text,
    )
    .unwrap();
    common::fake_agent(h.path(), "claude")
}

#[test]
fn resume_and_fork_run_claude_in_the_launch_dir() {
    let h = home();
    let (bin, log) = live_session(&h);
    let repo = h.path().join("work/repo");
    let id = "c0ffee00-0000-4000-8000-000000000001";
    // Just written without an end of turn: live, so resume asks first (claude-code.md 8)
    // and, with no terminal to answer, does not start claude.
    let out = h.run_with_path(&bin, &["resume", &format!("claude:{id}")]);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("looks live"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!log.exists() || std::fs::read_to_string(&log).unwrap().is_empty());
    let out = h.run_with_path(&bin, &["resume", "--yes", &format!("claude:{id}")]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let got = std::fs::read_to_string(&log).unwrap();
    assert_eq!(got, format!("{}\n--resume\n{id}\n", repo.display()));
    let out = h.run_with_path(&bin, &["fork", &format!("claude:{id}")]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let got = std::fs::read_to_string(&log).unwrap();
    assert_eq!(
        got,
        format!("{}\n--resume\n{id}\n--fork-session\n", repo.display())
    );
    let printed = h.run_with_path(&bin, &["resume", &format!("claude:{id}"), "--print"]);
    assert_eq!(
        String::from_utf8_lossy(&printed.stdout),
        format!("cd {} && claude --resume {id}\n", repo.display())
    );
    // A fork cut is not something Claude's fork takes.
    let out = h.run_with_path(&bin, &["fork", &format!("claude:{id}"), "--at", "1"]);
    assert_eq!(out.status.code(), Some(2));
    // [resume] overrides both commands.
    let cfg = h.path().join("cfg.toml");
    std::fs::write(&cfg, "[resume]\nclaude = \"claude -r {id} --verbose\"\n").unwrap();
    let printed = h.run_with_path(
        &bin,
        &[
            "--config",
            cfg.to_str().unwrap(),
            "resume",
            &format!("claude:{id}"),
            "--print",
        ],
    );
    assert!(
        String::from_utf8_lossy(&printed.stdout).ends_with(&format!("claude -r {id} --verbose\n"))
    );
    // The fixture sessions' launch dirs do not exist here: --print still prints, warns.
    let out = h.run(&["resume", A, "--print"]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no longer exists"));
}

#[test]
fn no_subcommand_or_browser_action_writes_under_the_claude_directory() {
    let h = home();
    let (bin, _log) = live_session(&h);
    let claude = h.claude_dir();
    let before = common::fingerprint(&claude);
    let out_dir = h.path().join("exports");
    std::fs::create_dir_all(&out_dir).unwrap();
    let live = "claude:c0ffee00-0000-4000-8000-000000000001";
    for args in &common::every_subcommand("claude", [A, B, live], &out_dir) {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = h.run_with_path(&bin, &args);
        assert!(
            out.status.code().is_some_and(|c| c <= 2),
            "spool {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    assert_eq!(
        common::fingerprint(&claude),
        before,
        "a CLI subcommand changed the Claude directory"
    );
    // The browser's store side, every operation, and the pane's three views.
    common::every_store_action(&h.stores(), &[A, B, live], &out_dir);
    assert_eq!(
        common::fingerprint(&claude),
        before,
        "a browser action changed the Claude directory"
    );
}
