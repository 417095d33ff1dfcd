//! Codex in the real browser (tmux): its sessions are listed beside another store's, `F`
//! reaches the codex store (skipping empty stores), a cold start shows the newest rollouts
//! first and holds the selection as the rest arrive, and a warm start opens a searched
//! session in the pane.

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

/// A warm start on a Codex store whose active rollout also has an archived copy (issue 10:
/// the pane's lookup of a row not yet kept looks in the days its id names and the archive,
/// not a second walk of the whole store): a query finds the session, Enter opens it, the
/// pane reads its header and answer, and its row says it is also in the archive, as a full
/// discovery says.
#[test]
fn a_warm_codex_start_opens_a_searched_session_in_the_pane() {
    let Some(t) = Tmux::new("codex-warm") else {
        return;
    };
    let codex = t.home().join(".codex");
    common::install_codex_fixtures(&t.home());
    let name = "rollout-2026-03-14T10-15-02-019ceba0-ae55-7d10-9f2a-4b8e6c1d2a30.jsonl";
    std::fs::copy(
        codex.join("sessions/2026/03/14").join(name),
        codex.join("archived_sessions").join(name),
    )
    .unwrap();
    // The first run writes the catalog; the second, in its own terminal, starts from it
    // (one cache and state for both, every other store empty).
    let empty = t.dir.path().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let args = format!(
        "--codex-dir {} --loop-dir {e} --loom-dir {e} --harness-dir {e} --claude-dir {e} \
         --pi-dir {e}",
        codex.display(),
        e = empty.display()
    );
    let env = t.cache_env();
    t.run_env(&env, &args);
    t.wait_listed();
    let catalog = t.home().join(".cache/spool/catalog.bin");
    let since = std::time::Instant::now();
    while !catalog.exists() && since.elapsed().as_secs() < 20 {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(catalog.exists(), "the cold run wrote no catalog");
    t.keys(&["q"]);
    assert!(t.wait_for("STTY-DONE").contains("EXIT=0"));
    let Some(t) = Tmux::new("codex-warm2") else {
        return;
    };
    t.run_env(&env, &args);
    t.wait_listed();
    t.keys(&["/"]);
    t.type_text("trailing slash");
    t.wait_until("the session found", |s| {
        common::tmux::sidebar(s).contains("router trailing slash")
    });
    t.keys(&["Enter"]);
    let s = t.wait_until("its answer in the pane", |s| {
        common::tmux::pane(s).contains("Fixed: router.go keeps the trailing slash")
    });
    assert!(
        common::tmux::pane(&s).contains("codex 019ceba0-ae55-7d10-9f2a-4b8e6c1d2a30"),
        "{s}"
    );
    assert!(
        common::tmux::sidebar(&s).contains("duplicate in archive"),
        "{s}"
    );
    // Its token count, the last of its badges and held in the row's own text (decoded
    // from the catalog), read on the row after the interned ones, in the widest sidebar
    // (which cuts the count's last letters).
    t.keys(&[">"; 8]);
    t.wait_until("the row's token count after its other badges", |s| {
        (common::tmux::sidebar(s))
            .contains("duplicate in archive, branch main, effort medium, 9240 t")
    });
    t.keys(&["q"]);
    assert!(t.wait_for("STTY-DONE").contains("EXIT=0"));
}
