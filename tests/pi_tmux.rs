//! pi in the real browser (tmux): its sessions are listed beside another store's, `F`
//! reaches the pi store (skipping empty stores), a fork sits under its parent, and the pane
//! marks where another branch leaves the active path.

mod common;

use std::path::Path;

use common::tmux::Tmux;

#[test]
fn pi_rows_store_cycling_and_branch_marker() {
    let Some(t) = Tmux::new("pi") else { return };
    let fx = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/loom/sessions");
    common::copy_tree(&fx, &t.home().join(".loom/sessions"));
    common::install_pi_fixtures(&t.home());
    t.run("");
    let s = t.wait_listed();
    assert!(s.contains("router trailing slash"), "{s}");
    assert!(s.contains("run the benchmarks"), "{s}");
    // Loop, harness and Claude Code are empty: F goes to loom, then straight to pi.
    t.keys(&["F"]);
    t.wait_stable("only loom rows", |s| {
        s.contains("run the benchmarks") && !s.contains("router trailing slash")
    });
    t.keys(&["F"]);
    t.wait_stable("only pi rows", |s| {
        s.contains("router trailing slash") && !s.contains("run the benchmarks")
    });
    // The fork with a branch: the marker says how many branches leave the path there.
    t.keys(&["/"]);
    t.type_text("router_test");
    t.wait_until("the fork's row", |s| {
        s.contains("[pi]") && s.contains("why does router_test")
    });
    t.keys(&["Enter"]);
    // The transcript opens at its end, under the "left off" card: scroll up to the marker.
    t.wait_until("1 other branch leaves here", |s| {
        let seen = s.contains("1 other branch leaves here");
        if !seen {
            t.keys(&["k"]);
        }
        seen
    });
    // `q` quits from the pane. (Escapes sent with it in one go could be read apart, the
    // second glued to the `q` as Alt-q, which quits nothing.)
    t.keys(&["q"]);
    let end = t.wait_for("STTY-DONE");
    assert!(end.contains("EXIT=0"), "{end}");
}
