//! Codex in the real browser (tmux): its sessions are listed beside another store's, `F`
//! reaches the codex store (skipping empty stores), and an archived thread asks before
//! Codex unarchives it.

mod common;

use std::path::Path;

use common::tmux::Tmux;

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
