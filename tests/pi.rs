//! pi through the CLI and the browser's store side: the contract fixtures listed, shown,
//! windowed and paged (snapshots), discovery by pi's own variables, settings and `--pi-dir`,
//! resume and fork through a fake `pi` (argv and cwd checked), and the no-write proof: no
//! file under pi's directory changes, by size, mtime or hash, across every subcommand and
//! browser action.

mod common;

use std::path::PathBuf;

use common::Home;

const A: &str = "pi:019ceba0-ae56-7f60-8a1b-2c3d4e5f6a7b";
const B: &str = "pi:019cec00-c780-7d2e-9f30-415263748596";

fn home() -> Home {
    let h = Home::empty();
    common::install_pi_fixtures(h.path());
    h
}

#[test]
fn list_and_show_snapshots() {
    let h = home();
    insta::assert_snapshot!("pi_list_json", h.ok(&["list", "--json", "--all"]));
    insta::assert_snapshot!("pi_show_a_json", h.ok(&["show", A, "--json"]));
    insta::assert_snapshot!("pi_show_b", h.ok(&["show", B]));
    insta::assert_snapshot!("pi_show_b_window", h.ok(&["show", B, "--window"]));
    insta::assert_snapshot!("pi_show_a_last", h.ok(&["show", A, "--last", "1"]));
    insta::assert_snapshot!(
        "pi_show_b_last_json",
        h.ok(&["show", B, "--last", "1", "--json"])
    );
}

#[test]
fn format_filter_and_discovery_roots() {
    let h = home();
    let rows = h.ok(&["list", "--json", "--format", "pi"]);
    assert_eq!(rows.lines().count(), 2);
    assert!(rows.contains("\"format\":\"pi\""), "{rows}");
    // The fork is listed with its parent's ref.
    assert!(rows.contains(&format!("\"forked_from\":\"{A}\"")), "{rows}");
    let moved = h.path().join("elsewhere");
    std::fs::rename(h.pi_dir(), &moved).unwrap();
    assert_eq!(h.ok(&["list", "--json"]).lines().count(), 0);
    let count = |envs: &[(&str, &std::path::Path)]| {
        let mut c = h.command(&["list", "--json"]);
        c.env_remove("PI_CODING_AGENT_DIR")
            .env_remove("PI_CODING_AGENT_SESSION_DIR");
        for (k, v) in envs {
            c.env(k, v);
        }
        String::from_utf8_lossy(&c.output().unwrap().stdout)
            .lines()
            .count()
    };
    // $PI_CODING_AGENT_SESSION_DIR names the root.
    assert_eq!(count(&[("PI_CODING_AGENT_SESSION_DIR", &moved)]), 2);
    // Else settings `sessionDir` in the agent dir ($PI_CODING_AGENT_DIR)...
    let agent = h.path().join("agent");
    std::fs::create_dir_all(&agent).unwrap();
    std::fs::write(
        agent.join("settings.json"),
        format!("{{\"sessionDir\":\"{}\"}}", moved.display()),
    )
    .unwrap();
    assert_eq!(count(&[("PI_CODING_AGENT_DIR", &agent)]), 2);
    // ...else <agent dir>/sessions.
    std::fs::write(agent.join("settings.json"), "{\"sessionDir\":\"\"}").unwrap();
    assert_eq!(count(&[("PI_CODING_AGENT_DIR", &agent)]), 0);
    std::fs::rename(&moved, agent.join("sessions")).unwrap();
    assert_eq!(count(&[("PI_CODING_AGENT_DIR", &agent)]), 2);
    // --pi-dir beats them all.
    let dir = agent.join("sessions").to_string_lossy().into_owned();
    assert_eq!(
        h.ok(&["--pi-dir", &dir, "list", "--json"]).lines().count(),
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
        err.starts_with("spool: spool does not delete pi sessions") && err.contains("archive"),
        "{err}"
    );
    h.ok(&["archive", A]);
    assert_eq!(h.ok(&["list", "--json"]).lines().count(), 1);
    assert_eq!(h.ok(&["list", "--json", "--archived"]).lines().count(), 1);
    let state = h
        .state_dir()
        .join("pi/019ceba0-ae56-7f60-8a1b-2c3d4e5f6a7b.json");
    assert!(state.is_file());
}

/// A session whose cwd exists (`<home>/work/repo`), and a fake `pi` on PATH that records
/// its argv and cwd: `(bin, log, session file)`.
fn live_session(h: &Home) -> (PathBuf, PathBuf, PathBuf) {
    let repo = h.path().join("work/repo");
    std::fs::create_dir_all(&repo).unwrap();
    let dir = h.pi_dir().join("--work-repo--");
    std::fs::create_dir_all(&dir).unwrap();
    let lines = [
        serde_json::json!({"type":"session","version":3,"id":"0199aaaa-0000-7000-8000-000000000001",
            "timestamp":"2026-03-14T09:00:00.000Z","cwd":repo}),
        serde_json::json!({"type":"message","id":"u1","parentId":null,"timestamp":"2026-03-14T09:00:01.000Z",
            "message":{"role":"user","content":"hello"}}),
    ];
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    let file = dir.join("2026-03-14T09-00-00-000Z_0199aaaa-0000-7000-8000-000000000001.jsonl");
    std::fs::write(&file, text).unwrap();
    let (bin, log) = common::fake_agent(h.path(), "pi");
    (bin, log, file)
}

#[test]
fn resume_and_fork_run_pi_in_the_header_cwd() {
    let h = home();
    let (bin, log, file) = live_session(&h);
    let repo = h.path().join("work/repo");
    let r = "pi:0199aaaa-0000-7000-8000-000000000001";
    // Just written, its leaf a user message: live, so resume asks first (pi.md 8) and,
    // with no terminal to answer, does not run pi.
    let out = h.run_with_path(&bin, &["resume", r]);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("looks live"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!log.exists() || std::fs::read_to_string(&log).unwrap().is_empty());
    let out = h.run_with_path(&bin, &["resume", "--yes", r]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let got = std::fs::read_to_string(&log).unwrap();
    assert_eq!(
        got,
        format!("{}\n--session\n{}\n", repo.display(), file.display())
    );
    let out = h.run_with_path(&bin, &["fork", r]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let got = std::fs::read_to_string(&log).unwrap();
    assert_eq!(
        got,
        format!("{}\n--fork\n{}\n", repo.display(), file.display())
    );
    let printed = h.run_with_path(&bin, &["resume", r, "--print"]);
    assert_eq!(
        String::from_utf8_lossy(&printed.stdout),
        format!("cd {} && pi --session {}\n", repo.display(), file.display())
    );
    let out = h.run_with_path(&bin, &["fork", r, "--at", "1"]);
    assert_eq!(out.status.code(), Some(2));
    // [resume] overrides both commands.
    let cfg = h.path().join("cfg.toml");
    std::fs::write(
        &cfg,
        "[resume]\npi = \"pi --verbose --session {path}\"\npi_fork = \"pi --fork {path} --x\"\n",
    )
    .unwrap();
    let c = cfg.to_str().unwrap();
    let printed = h.run_with_path(&bin, &["--config", c, "resume", r, "--print"]);
    assert!(
        String::from_utf8_lossy(&printed.stdout)
            .ends_with(&format!("pi --verbose --session {}\n", file.display()))
    );
    let printed = h.run_with_path(&bin, &["--config", c, "fork", r, "--print"]);
    assert!(
        String::from_utf8_lossy(&printed.stdout)
            .ends_with(&format!("pi --fork {} --x\n", file.display()))
    );
    // The fixtures' cwd does not exist here: --print still prints, warns.
    let out = h.run(&["resume", A, "--print"]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no longer exists"));
}

#[test]
fn no_subcommand_or_browser_action_writes_under_the_pi_directory() {
    let h = home();
    let (bin, _log, _) = live_session(&h);
    let pi = h.path().join(".pi");
    let before = common::fingerprint(&pi);
    let out_dir = h.path().join("exports");
    std::fs::create_dir_all(&out_dir).unwrap();
    let live = "pi:0199aaaa-0000-7000-8000-000000000001";
    for args in &common::every_subcommand("pi", [A, B, live], &out_dir) {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = h.run_with_path(&bin, &args);
        assert!(
            out.status.code().is_some_and(|c| c <= 2),
            "spool {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    assert_eq!(
        common::fingerprint(&pi),
        before,
        "a CLI subcommand changed the pi directory"
    );
    common::every_store_action(&h.stores(), &[A, B, live], &out_dir);
    assert_eq!(
        common::fingerprint(&pi),
        before,
        "a browser action changed the pi directory"
    );
}
