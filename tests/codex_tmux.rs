//! Codex in the real browser (tmux): its sessions are listed beside another store's, `F`
//! reaches the codex store (skipping empty stores), and a cold start shows the newest
//! rollouts first and holds the selection as the rest arrive.

mod common;

use std::path::Path;

use common::tmux::{Tmux, selected_row};

#[test]
fn codex_rows_and_store_cycling() {
    let Some(t) = Tmux::new("codex") else { return };
    let fx = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/loom/sessions");
    common::copy_tree(&fx, &t.home().join(".loom/sessions"));
    common::install_codex_fixtures(&t.home());
    t.run("");
    let s = t.wait_listed();
    assert!(s.contains("router trailing slash"), "{s}");
    assert!(s.contains("run the benchmarks"), "{s}");
    // Loop, harness and claude are empty: F goes to loom, then to codex.
    t.keys(&["F"]);
    t.wait_stable("only loom rows", |s| {
        s.contains("run the benchmarks") && !s.contains("router trailing slash")
    });
    t.keys(&["F"]);
    t.wait_stable("only codex rows", |s| {
        s.contains("router trailing slash") && !s.contains("run the benchmarks")
    });
    t.keys(&["q"]);
    let end = t.wait_for("STTY-DONE");
    assert!(end.contains("EXIT=0"), "{end}");
}

/// A cold start on a Codex store alone (issue 10): the first frame with rows holds the
/// newest session, found by the time in the rollouts' names before every rollout is
/// stat'ed, and selected; as the rest arrive, a session resumed later (created first, so
/// only the full discovery finds it early) is inserted above, and the selection stays put.
#[test]
fn a_cold_codex_start_shows_the_newest_first_and_the_selection_holds() {
    let Some(t) = Tmux::new("codex-cold") else {
        return;
    };
    common::rollouts::store(&t.home().join(".codex"), 1500);
    // The resumed session went in above the selection (out of view, the selected row kept
    // its place on screen): one row up is it, and opened, the pane reads it, not the one
    // selected before.
    let up = |t: &Tmux| {
        t.keys(&["Up"]);
        t.wait_stable("the row above selected", |s| {
            selected_row(s).is_some_and(|r| r.starts_with("resumed "))
        });
    };
    let header = "codex 019ceba0-ae55-7d10-9f2a-0000000005dc";
    t.cold_start_selects("session 1499", "1,501 sessions", up, header);
}
