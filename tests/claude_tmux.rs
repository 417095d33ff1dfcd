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
