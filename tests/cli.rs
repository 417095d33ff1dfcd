//! The built binary against a fixture HOME: `list`, `show`, `export` and the action
//! subcommands behave as `shared/cli.md` says, with its exit codes.

mod common;

use common::{Home, json_lines};
use std::os::unix::fs::PermissionsExt;

#[test]
fn list_json_has_contract_keys_and_order() {
    let h = Home::with_fixtures();
    let rows = json_lines(&h.ok(&["list", "--json", "--all"]));
    assert!(rows.len() >= 3, "fixtures of every store are listed");
    let keys = [
        "ref",
        "format",
        "id",
        "title",
        "summary",
        "cwd",
        "created_at",
        "updated_at",
        "messages",
        "pinned",
        "unread",
        "archived",
        "forked_from",
        "path",
        "error",
        "ended",
    ];
    for r in &rows {
        let got: Vec<&str> = r.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(got, keys);
        let fmt = r["format"].as_str().unwrap();
        assert_eq!(
            r["ref"].as_str().unwrap(),
            format!("{fmt}:{}", r["id"].as_str().unwrap())
        );
    }
    // Pinned first (newest pin first), then by last activity, newest first.
    let pinned: Vec<bool> = rows
        .iter()
        .map(|r| r["pinned"].as_bool().unwrap())
        .collect();
    let first_unpinned = pinned.iter().position(|p| !p).unwrap_or(pinned.len());
    assert!(pinned[first_unpinned..].iter().all(|p| !p));
    let times: Vec<&str> = rows[first_unpinned..]
        .iter()
        .filter_map(|r| r["updated_at"].as_str())
        .collect();
    let mut sorted = times.clone();
    sorted.sort_by(|a, b| b.cmp(a));
    assert_eq!(times, sorted);
}

#[test]
fn archived_rows_are_hidden_unless_asked() {
    let h = Home::with_fixtures();
    let default = json_lines(&h.ok(&["list", "--json"]));
    assert!(
        default
            .iter()
            .all(|r| r["archived"] == false || !r["error"].is_null())
    );
    assert!(
        !default
            .iter()
            .any(|r| r["ref"] == "harness:r7-PqLs_04VmYe2K")
    );
    let archived = json_lines(&h.ok(&["list", "--json", "--archived"]));
    assert!(
        archived
            .iter()
            .any(|r| r["ref"] == "harness:r7-PqLs_04VmYe2K")
    );
    assert!(
        archived
            .iter()
            .all(|r| r["archived"] == true || !r["error"].is_null())
    );
}

#[test]
fn list_filters_by_format_query_and_limit() {
    let h = Home::with_fixtures();
    let rows = json_lines(&h.ok(&["list", "--json", "--all", "--format", "harness"]));
    assert_eq!(rows.len(), 3);
    // Fuzzy: the best match comes first, rows that cannot match are gone.
    let rows = json_lines(&h.ok(&["list", "--json", "--all", "--query", "pydantic"]));
    assert_eq!(rows[0]["id"], "r7-PqLs_04VmYe2K");
    let rows = json_lines(&h.ok(&["list", "--json", "--all", "--query", "zzqqxx"]));
    assert!(rows.is_empty());
    let rows = json_lines(&h.ok(&["list", "--json", "--all", "--limit", "1"]));
    assert_eq!(rows.len(), 1);
}

#[test]
fn list_table_is_aligned_for_people() {
    let h = Home::with_fixtures();
    let out = h.ok(&["list", "--format", "harness"]);
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines[0].contains("REF") && lines[0].contains("TITLE"));
    let col = lines[0].find("TITLE").unwrap();
    assert!(lines[1..].iter().all(|l| l.chars().count() > col));
}

#[test]
fn show_json_window_and_last() {
    let h = Home::with_fixtures();
    let v: serde_json::Value =
        serde_json::from_str(&h.ok(&["show", "harness:Qm3x", "--json"])).unwrap();
    assert_eq!(v["session"]["id"], "Qm3xT8vLk2pR9aZc");
    let msgs = v["messages"].as_array().unwrap();
    for m in msgs {
        for k in [
            "index",
            "role",
            "text",
            "tool_calls",
            "tool_call_id",
            "is_error",
            "timestamp",
            "virtual",
        ] {
            assert!(m.get(k).is_some(), "message lacks {k}");
        }
    }
    assert!(msgs.iter().any(|m| m["tool_calls"][0]["name"] == "grep"));

    let w: serde_json::Value =
        serde_json::from_str(&h.ok(&["show", "r7-PqLs", "--window", "--json"])).unwrap();
    let virt: Vec<&serde_json::Value> = w["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["virtual"] == true)
        .collect();
    assert_eq!(virt.len(), 1);
    assert_eq!(virt[0]["tool_call_id"], "call_w82");
    assert_eq!(
        virt[0]["text"],
        "Execution interrupted; outcome unknown. Inspect state before retrying."
    );

    let text = h.ok(&["show", "r7-PqLs", "--window"]);
    assert!(text.contains("inserted by replay"));
}

#[test]
fn unknown_and_ambiguous_refs_exit_2_with_one_sentence() {
    let h = Home::with_fixtures();
    let out = h.run(&["show", "nothing-like-this"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("no session matches"));

    // The candidates carry their titles, so the user can tell them apart.
    let out = h.run(&["show", "harness:"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("ambiguous"), "{err}");
    assert!(
        err.contains("harness:h2Jd9sWq0TzN4bXe \"List the TODO comments in src/\""),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");

    let out = h.run(&["list", "--no-such-flag"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn export_never_overwrites_and_is_private() {
    let h = Home::with_fixtures();
    let path = h.path().join("out.html");
    let p = path.to_str().unwrap();
    h.ok(&["export", "Qm3x", "--to", "html", "-o", p]);
    let html = std::fs::read_to_string(&path).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(html.contains("test_upload"));
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    let again = h.run(&["export", "Qm3x", "--to", "markdown", "-o", p]);
    assert_eq!(again.status.code(), Some(1));
    assert_eq!(std::fs::read_to_string(&path).unwrap(), html);

    let md = h.ok(&["export", "Qm3x"]);
    assert!(md.starts_with("# Why is test_upload flaky?"));
}

#[test]
fn held_harness_lease_refuses_writes_with_exit_1() {
    let h = Home::with_fixtures();
    let sessions = h.harness_dir().join("sessions");
    let record = sessions.join("Qm3xT8vLk2pR9aZc.json");
    let before = std::fs::read(&record).unwrap();
    let _held =
        spool::store::lease::take_lease(&sessions.join("Qm3xT8vLk2pR9aZc.lock"), "x").unwrap();
    for args in [
        vec!["archive", "Qm3x"],
        vec!["rename", "Qm3x", "New"],
        vec!["delete", "Qm3x", "--yes"],
    ] {
        let out = h.run(&args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("in use by another process"),
            "{args:?}"
        );
        assert_eq!(std::fs::read(&record).unwrap(), before, "{args:?}");
    }
}

#[test]
fn actions_round_trip_through_the_cli() {
    let h = Home::with_fixtures();
    let get = |h: &Home| {
        json_lines(&h.ok(&["list", "--json", "--all", "--format", "harness"]))
            .into_iter()
            .find(|r| r["id"] == "Qm3xT8vLk2pR9aZc")
            .unwrap()
    };
    h.ok(&["pin", "Qm3x"]);
    assert_eq!(get(&h)["pinned"], true);
    h.ok(&["unpin", "Qm3x"]);
    assert_eq!(get(&h)["pinned"], false);
    h.ok(&["unread", "Qm3x"]);
    assert_eq!(get(&h)["unread"], true);
    h.ok(&["read", "Qm3x"]);
    assert_eq!(get(&h)["unread"], false);
    h.ok(&["archive", "Qm3x"]);
    assert_eq!(get(&h)["archived"], true);
    h.ok(&["unarchive", "Qm3x"]);
    h.ok(&["rename", "Qm3x", "Flaky uploads"]);
    assert_eq!(get(&h)["title"], "Flaky uploads");
    let new_ref = h.ok(&["fork", "Qm3x"]);
    let new_ref = new_ref.trim();
    assert!(new_ref.starts_with("harness:"));
    let forked = json_lines(&h.ok(&["list", "--json", "--all"]))
        .into_iter()
        .find(|r| r["ref"] == new_ref)
        .unwrap();
    assert_eq!(forked["forked_from"], "harness:Qm3xT8vLk2pR9aZc");
    let out = h.run(&["delete", new_ref]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "no --yes and no terminal: refused"
    );
    h.ok(&["delete", new_ref, "--yes"]);
    assert_eq!(h.run(&["show", new_ref]).status.code(), Some(2));
}

#[test]
fn escape_sequences_in_sessions_never_reach_stdout() {
    let h = Home::empty();
    let dir = h.harness_dir().join("sessions");
    std::fs::create_dir_all(&dir).unwrap();
    let evil = "pwn \u{1b}]0;owned\u{7}\u{1b}[2J\u{9b}31m\u{202e}done";
    let rec = serde_json::json!({
        "id": "evil", "created_at": "2026-03-11T14:02:09+00:00",
        "updated_at": "2026-03-11T14:09:47+00:00", "summary": evil,
        "messages": [{"role":"user","content": evil}], "title": evil,
    });
    std::fs::write(dir.join("evil.json"), rec.to_string()).unwrap();
    for args in [
        vec!["list"],
        vec!["list", "--json"],
        vec!["show", "evil"],
        vec!["show", "evil", "--json"],
        vec!["show", "evil", "--raw"],
        vec!["show", "evil", "--window"],
    ] {
        let out = h.ok(&args);
        assert!(out.contains("pwn"), "{args:?}: {out}");
        for bad in ['\u{1b}', '\u{7}', '\u{9b}', '\u{202e}'] {
            assert!(!out.contains(bad), "{args:?} leaked {bad:?}");
        }
    }
}

#[test]
fn demo_store_lists_and_shows() {
    let h = Home::empty();
    let out = h.run(&["--demo", "list", "--json", "--all"]);
    assert!(out.status.success());
    let rows = json_lines(&String::from_utf8(out.stdout).unwrap());
    assert!(rows.len() >= 25, "the demo has at least 25 sessions");
    assert!(
        rows.iter().any(|r| !r["error"].is_null()),
        "one broken session"
    );
    for f in ["loop", "loom", "harness"] {
        assert!(rows.iter().any(|r| r["format"] == f), "demo lacks {f}");
    }
    let first = rows[0]["ref"].as_str().unwrap();
    h.ok(&["--demo", "show", first]);
    // The demo's projects exist inside the copy, so a Loop session can be forked (Loop
    // refuses to fork into a missing directory).
    let cwd = rows[0]["cwd"].as_str().unwrap();
    assert!(
        cwd.contains("spool-demo-") && cwd.ends_with("/projects/pixelforge"),
        "{cwd}"
    );
    let forked = h.ok(&["--demo", "fork", "loop:b6e4602a"]);
    assert!(forked.starts_with("loop:"), "{forked}");
}

#[test]
fn show_last_reads_only_the_last_rounds() {
    let h = Home::with_fixtures();
    let v: serde_json::Value =
        serde_json::from_str(&h.ok(&["show", "loop:3f6b", "--last", "1", "--json"])).unwrap();
    let idx: Vec<u64> = v["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["index"].as_u64().unwrap())
        .collect();
    assert_eq!(idx, [4, 5]);
    // Damage round 0: the last-round page must not read it, the full view must notice.
    let msgs = h.loop_dir().join(
        "sessions/767af75ec9c3c6ac7b4a00e5/3f6b2c1e-8a4d-4e2f-9b7c-1d2e3f4a5b6c/messages.jsonl",
    );
    let mut bytes = std::fs::read(&msgs).unwrap();
    bytes[0] = b'X';
    std::fs::write(&msgs, bytes).unwrap();
    h.ok(&["show", "loop:3f6b", "--last", "1", "--json"]);
    assert_eq!(
        h.run(&["show", "loop:3f6b", "--json"]).status.code(),
        Some(1)
    );
}

#[test]
fn show_window_replays_each_store() {
    let h = Home::with_fixtures();
    // loom example A: [SYS, summary, u, a, t, a, "ok, fix it"] plus the reopened notice.
    let w: serde_json::Value =
        serde_json::from_str(&h.ok(&["show", "loom:20260314-091502", "--window", "--json"]))
            .unwrap();
    let msgs = w["messages"].as_array().unwrap();
    assert_eq!(msgs.len(), 8);
    assert!(
        msgs[1]["text"]
            .as_str()
            .unwrap()
            .starts_with("[Context summary - ")
    );
    assert_eq!(msgs[1]["virtual"], true);
    assert!(
        msgs[7]["text"]
            .as_str()
            .unwrap()
            .starts_with("[Session 20260314-091502 reopened.")
    );
    // loom example C: the orphaned call is dropped, leaving [SYS, u].
    let w: serde_json::Value =
        serde_json::from_str(&h.ok(&["show", "loom:20260314-162041", "--window", "--json"]))
            .unwrap();
    let roles: Vec<&str> = w["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(&roles[..2], ["system", "user"]);
    assert!(!roles[2..].contains(&"assistant"));
    // Loop example 1: no repairs, six messages after the reconstructed system prompt (if any).
    let w: serde_json::Value =
        serde_json::from_str(&h.ok(&["show", "loop:3f6b", "--window", "--json"])).unwrap();
    let stored: Vec<&serde_json::Value> = w["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["virtual"] == false)
        .collect();
    assert_eq!(stored.len(), 6);
}

#[test]
fn outputs_match_the_expected_files() {
    let h = Home::with_fixtures();
    insta::assert_snapshot!("list_table_all", h.ok(&["list", "--all"]));
    insta::assert_snapshot!("list_json_all", h.ok(&["list", "--json", "--all"]));
    for (name, r) in [
        ("show_loop_example1", "loop:3f6b2c1e"),
        ("show_loom_example_a", "loom:20260314-091502"),
        ("show_harness_example_c", "harness:r7-PqLs_04VmYe2K"),
    ] {
        insta::assert_snapshot!(name, h.ok(&["show", r]));
        insta::assert_snapshot!(format!("{name}_window"), h.ok(&["show", r, "--window"]));
    }
}

#[test]
fn last_zero_is_a_usage_error_not_a_crash() {
    let h = Home::with_fixtures();
    let out = h.run(&["show", "loop:3f6b", "--last", "0"]);
    assert_eq!(out.status.code(), Some(2));
    // In words, not clap's "0 is not in 1..18446744073709551615".
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("a number of rounds, 1 or more"), "{err}");
    let lib = h.stores();
    for s in lib.list_all() {
        // Every store answers a zero-round page without panicking.
        let _ = lib
            .store_for(&s)
            .transcript(&s.id, spool::store::Span::LastRounds(0));
    }
}

#[test]
fn committed_bytes_missing_is_an_error_row() {
    let h = Home::with_fixtures();
    // loop.md section 8: a messages.jsonl shorter than start + bytes is an error row.
    let msgs = h.loop_dir().join(
        "sessions/767af75ec9c3c6ac7b4a00e5/3f6b2c1e-8a4d-4e2f-9b7c-1d2e3f4a5b6c/messages.jsonl",
    );
    std::fs::OpenOptions::new()
        .write(true)
        .open(&msgs)
        .unwrap()
        .set_len(100)
        .unwrap();
    let row = json_lines(&h.ok(&["list", "--json", "--format", "loop"]))
        .into_iter()
        .find(|r| r["id"] == "3f6b2c1e-8a4d-4e2f-9b7c-1d2e3f4a5b6c")
        .unwrap();
    assert_eq!(row["error"], "committed bytes missing");
    assert_eq!(
        std::fs::metadata(&msgs).unwrap().len(),
        100,
        "listing never writes"
    );
}

#[test]
fn resume_print_of_a_harness_record_without_project_root_runs_here() {
    let h = Home::with_fixtures();
    // harness.md: no project_root means the session resumes from any directory.
    let out = h.ok(&["resume", "harness:h2Jd", "--print"]);
    let here = std::env::current_dir().unwrap();
    assert!(
        out.starts_with(&format!("cd {} && ", here.display())),
        "{out}"
    );
    assert!(out.contains("--resume h2Jd9sWq0TzN4bXe"), "{out}");
}

#[test]
fn resume_print_prints_even_when_the_directory_is_gone() {
    let h = Home::with_fixtures();
    // Its project_root (/home/user/projects/uploader) does not exist here.
    let out = h.run(&["resume", "harness:Qm3x", "--print"]);
    assert_eq!(out.status.code(), Some(0));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.starts_with("cd /home/user/projects/uploader && uv run agent.py --resume"),
        "{stdout}"
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("spool: warning: the session's directory no longer exists"),
        "{err}"
    );
    // Running it is refused with the cause, first.
    let out = h.run(&["resume", "harness:Qm3x"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("spool: the session's directory no longer exists"),
        "{err}"
    );
}

#[test]
fn fork_before_the_first_user_message_is_refused_in_every_store() {
    let h = Home::with_fixtures();
    let before = h.ok(&["list", "--json", "--all"]).lines().count();
    // Message 0 everywhere; message 1 in harness, whose message 0 is the system prompt. Loop
    // forks only into an existing directory, which the demo's sessions have.
    for (r, at) in [
        ("--demo loop:4f2c", "0"),
        ("loom:20260314-091502", "0"),
        ("harness:Qm3x", "0"),
        ("harness:Qm3x", "1"),
    ] {
        let mut args: Vec<&str> = r.split(' ').collect();
        args.insert(args.len() - 1, "fork");
        args.extend(["--at", at]);
        let out = h.run(&args);
        assert_eq!(out.status.code(), Some(1), "{r} --at {at}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("empty session"), "{r} --at {at}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
    }
    assert_eq!(h.ok(&["list", "--json", "--all"]).lines().count(), before);
    // A cut that keeps a user message still forks.
    assert!(
        h.ok(&["--demo", "fork", "loop:4f2c", "--at", "7"])
            .starts_with("loop:")
    );
}

#[test]
fn deleting_an_unarchived_loop_session_archives_it_first() {
    let h = Home::with_fixtures();
    let out = h.ok(&["delete", "loop:3f6b", "--yes"]);
    assert!(out.is_empty());
    assert_eq!(h.run(&["show", "loop:3f6b"]).status.code(), Some(2));
}

#[test]
fn cli_papercuts() {
    let h = Home::with_fixtures();
    // `md` is what the help and the file extension say.
    assert!(h.ok(&["export", "Qm3x", "--to", "md"]).starts_with("# "));
    // `show` is for reading: no export banner; an export keeps it.
    assert!(!h.ok(&["show", "Qm3x"]).contains("Exported by spool"));
    assert!(h.ok(&["export", "Qm3x"]).contains("Exported by spool"));
    // A config file named on the command line must exist.
    let out = h.run(&["--config", "/nonexistent/spool.toml", "list"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        err.trim_end(),
        "spool: config file /nonexistent/spool.toml does not exist"
    );
}

/// Run `spool ARGS` into a pipe whose reader quits after one byte; returns spool's exit
/// code and what it wrote to stderr (or, with `merged`, stderr goes into the pipe too).
fn into_closed_pipe(args: &str, merged: bool) -> (i32, String) {
    let d = tempfile::tempdir().unwrap();
    let code = d.path().join("code");
    let err = d.path().join("err");
    let redirect = if merged { "2>&1" } else { "2>\"$2\"" };
    let script = format!("( \"$0\" {args} {redirect}; echo $? > \"$1\" ) | head -c 1 > /dev/null");
    let st = std::process::Command::new("sh")
        .args(["-c", &script, env!("CARGO_BIN_EXE_spool")])
        .arg(&code)
        .arg(&err)
        .env("HOME", d.path())
        .status()
        .unwrap();
    assert!(st.success());
    let code = std::fs::read_to_string(&code)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    (code, std::fs::read_to_string(&err).unwrap_or_default())
}

#[test]
fn a_closed_pipe_is_a_quiet_success() {
    // 170 KiB of output: more than a pipe holds, so the write after `head` quits fails.
    let args = "--demo show loop:761f --raw";
    assert_eq!(into_closed_pipe(args, false), (0, String::new()));
    // stderr is the same closed pipe: no panic (101) writing the error either.
    assert_eq!(into_closed_pipe(args, true).0, 0);
}

#[test]
fn show_json_left_off_takes_the_harness_state_todos() {
    let h = Home::with_fixtures();
    let out = h.ok(&["show", "--json", "harness:r7-PqLs_04VmYe2K"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    // `state.todos` holds one done and one in-progress item: only the open one is shown.
    assert_eq!(
        v["left_off"]["todos"],
        serde_json::json!([{"text": "Update cli.py callers", "status": "in_progress"}]),
        "{}",
        v["left_off"]
    );
}
