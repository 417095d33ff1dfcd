//! Claude Code in the real browser (tmux): its sessions are listed beside another store's,
//! `F` cycles through the stores that have sessions (skipping empty ones), a subagent shows
//! as a count on its parent's row and nested in the parent's transcript, never as a row, and
//! opens there to be read.

mod common;

use std::path::Path;

use common::tmux::{Tmux, run_demo};

#[test]
fn claude_rows_store_cycling_and_subagent_under_its_parent() {
    let Some(t) = Tmux::new("claude") else { return };
    let fx = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/loom/sessions");
    common::copy_tree(&fx, &t.home().join(".loom/sessions"));
    common::install_claude_fixtures(&t.home());
    t.run("");
    let s = t.wait_listed();
    assert!(s.contains("router trailing slash"), "{s}");
    assert!(s.contains("run the benchmarks"), "{s}");
    assert!(!s.contains("agent-a3f9"), "a subagent is not a row: {s}");
    // Loop is empty: the first F goes to loom; harness is empty: the second to claude.
    t.keys(&["F"]);
    t.wait_stable("only loom rows", |s| {
        s.contains("run the benchmarks") && !s.contains("router trailing slash")
    });
    t.keys(&["F"]);
    t.wait_stable("only claude rows", |s| {
        s.contains("router trailing slash") && !s.contains("run the benchmarks")
    });
    // The compacted session with a subagent: its count on the row, the subagent in the pane.
    t.keys(&["/"]);
    t.type_text("Token-bucket");
    t.wait_until("the row with its subagent count", |s| {
        s.contains("1 subagent") && s.contains("[claude]")
    });
    t.keys(&["Enter"]);
    t.wait_for("subagent a3f9c1e27b5d04e81: 2 messages");
    // `q` quits from the pane. (Escapes sent with it in one go could be read apart, the
    // second glued to the `q` as Alt-q, which quits nothing.)
    t.keys(&["q"]);
    let end = t.wait_for("STTY-DONE");
    assert!(end.contains("EXIT=0"), "{end}");
}

#[test]
fn a_subagent_opens_inside_its_parent_in_the_demo() {
    let Some(t) = Tmux::new("claude-subagent") else {
        return;
    };
    run_demo(&t);
    t.wait_listed();
    t.keys(&["/"]);
    t.type_text("harbor shells out");
    t.wait_until("the parent row with its subagent count", |s| {
        s.contains("1 subagent") && s.contains("[claude]")
    });
    t.keys(&["Enter"]);
    // Closed, the subagent is one line under the call that spawned it.
    let s = t.wait_for("▸ subagent b8e4b48043845d0f0: 2 messages");
    assert!(!s.contains("end of subagent"), "{s}");
    // Opened, its own transcript is read in the pane: its model, its answer, its end.
    t.keys(&["O"]);
    let s = t.wait_for("└ end of subagent");
    assert!(s.contains("▾ subagent b8e4b48043845d0f0"), "{s}");
    assert!(
        s.contains("│ ● assistant · claude-haiku-4-5-20251001"),
        "{s}"
    );
    assert!(s.contains("│   Three call sites: sync.rs:88"), "{s}");
    // `q` quits from the pane. (Escapes sent with it in one go could be read apart, the
    // second glued to the `q` as Alt-q, which quits nothing.)
    t.keys(&["q"]);
    let end = t.wait_for("STTY-DONE");
    assert!(end.contains("EXIT=0"), "{end}");
}

/// A cold start on a Claude Code store alone (issue 10): 1,200 sessions across 6 project
/// directories, written in an order that is not their mtimes' (so neither the listing's
/// order nor the files' creation says which is newest). The first frame with rows selects
/// the newest by mtime, and the selection holds while the rest arrive.
#[test]
fn a_cold_claude_start_shows_the_newest_first_and_the_selection_holds() {
    let Some(t) = Tmux::new("claude-cold") else {
        return;
    };
    let projects = t.home().join(".claude/projects");
    let count = 1200u64;
    for k in 0..count {
        let n = (k * 7) % count;
        let dir = projects.join(format!("-w-p{}", n % 6));
        std::fs::create_dir_all(&dir).unwrap();
        let at = 1_772_323_200 + n * 3600;
        let ts = chrono::DateTime::from_timestamp(at as i64, 0).unwrap();
        let id = format!("7f49e40a-ae2b-458e-babd-{n:012x}");
        let rec = serde_json::json!({"parentUuid":null,"isSidechain":false,"cwd":"/w",
            "sessionId":id,"type":"user","uuid":format!("u{n}"),
            "timestamp":ts.format("%Y-%m-%dT%H:%M:%SZ").to_string(),
            "message":{"role":"user","content":format!("session {n}")}});
        let path = dir.join(format!("{id}.jsonl"));
        std::fs::write(&path, format!("{rec}\n")).unwrap();
        let f = std::fs::File::options().write(true).open(&path).unwrap();
        f.set_modified(std::time::UNIX_EPOCH + std::time::Duration::from_secs(at + 600))
            .unwrap();
    }
    let header = format!("claude 7f49e40a-ae2b-458e-babd-{:012x}", count - 1);
    t.cold_start_selects("session 1199", "1,200 sessions", |_| {}, &header);
}

/// A cold start whose first screen is a guess (issue 10): the newest project directory's
/// newest transcripts are listed before every transcript is stat'ed, and `resumed`, written
/// last in an older project, is not among them. The first frame selects the guessed newest;
/// as the rest arrive `resumed` goes in above it (out of view, the selected row kept its
/// place on screen): one row up is it, and opened, the pane reads it.
#[test]
fn a_cold_claude_start_from_the_newest_projects_holds_the_selection() {
    let Some(t) = Tmux::new("claude-guess") else {
        return;
    };
    common::transcripts::store(&t.home().join(".claude"), 1200, 6);
    let up = |t: &Tmux| {
        t.keys(&["Up"]);
        t.wait_stable("the row above selected", |s| {
            common::tmux::selected_row(s).is_some_and(|r| r.starts_with("resumed "))
        });
    };
    let header = format!("claude {}", common::transcripts::id(1200));
    t.cold_start_selects("session 1199", "1,201 sessions", up, &header);
}
