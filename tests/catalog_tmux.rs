//! The first frame in a real terminal: it already holds rows (never "0 sessions" while
//! sessions exist), cold and warm, and the selected row holds still while a cold load
//! streams in.

mod common;

use common::tmux::{Tmux, selected_row};
use spool::corpus::{CorpusSpec, generate};

/// Capture as fast as tmux answers until the screen shows anything; that is the first frame.
fn first_frame(t: &Tmux, what: &str) -> String {
    t.wait_until(what, |s| s.contains("session"))
}

#[test]
fn the_first_frame_holds_rows_and_the_selection_holds_while_a_cold_load_streams() {
    let Some(t) = Tmux::new("catalog-first") else {
        return;
    };
    let corpus = t.dir.path().join("corpus");
    let spec = CorpusSpec {
        sessions: 1500,
        rounds_per_session: 2,
        seed: 3,
        big_transcript_mb: None,
    };
    generate(&corpus, &spec).unwrap();
    // A store whose directory exists but holds no session (an agent installed, never run).
    std::fs::create_dir_all(corpus.join("pi-empty")).unwrap();
    let args = format!(
        "--loop-dir {c}/loop --loom-dir {c}/loom --harness-dir {c}/harness --claude-dir {c}/claude \
         --pi-dir {c}/pi-empty",
        c = corpus.display()
    );
    // One cache and one state directory (read marks, pins) for every run below, each in
    // its own terminal and home.
    let env = t.cache_env();

    let roots = spool::store::Roots {
        loop_dir: corpus.join("loop"),
        loom_dir: corpus.join("loom"),
        harness_dir: corpus.join("harness"),
        claude_dir: corpus.join("claude"),
        codex_dir: t.home().join(".codex"),
        pi_dir: corpus.join("pi-empty"),
        state_dir: t.home().join("state"),
    };
    let stores = spool::store::Stores::open(&roots);
    let filter = spool::store::registry::Filter::default();
    let cache = t.home().join(".cache/spool");

    // Cold: no catalog, no hints.
    t.run_env(&env, &args);
    let first = first_frame(&t, "a cold first frame");
    assert!(
        !first.contains(" 0 sessions"),
        "empty first frame:\n{first}"
    );
    let picked = selected_row(&first).unwrap_or_else(|| panic!("no selected row:\n{first}"));
    // Until everything is loaded, every capture shows the same session selected.
    t.hold_selection(&picked, first);
    // Each store writes its section once its listing is shown: a quit right then can leave
    // a catalog newer than its head (a cache, so no harm, but the warm start below must
    // start from a head). Wait for the last store's write.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while spool::catalog::warm::head(&cache, &stores, &filter).is_none() {
        assert!(std::time::Instant::now() < deadline, "no head was written");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    t.keys(&["q"]);
    t.wait_for("EXIT=0");
    assert!(
        t.home().join(".cache/spool/catalog.bin").is_file(),
        "the cold run left a catalog"
    );
    assert!(
        t.home().join(".cache/spool/head.bin").is_file(),
        "the cold run left the catalog's head (the warm first frame below is drawn from it)"
    );
    // The cold pass recorded the empty store's section, so the head covers this run's
    // stores and a warm start can use it (beside any patch log: opening the selected
    // session marked it read, a change a running browser writes to the log).
    let cat = spool::catalog::load(&cache).expect("a catalog");
    assert!(
        cat.sections
            .iter()
            .any(|s| s.dir == corpus.join("pi-empty") && s.entries.is_empty()),
        "no section for the empty store"
    );
    assert!(
        spool::catalog::warm::head(&cache, &stores, &filter).is_some(),
        "the warm start would not use the head"
    );

    // Warm: the first frame is already the final list. A second terminal (its own tmux
    // server) with the same cache.
    let Some(w) = Tmux::new("catalog-warm") else {
        return;
    };
    w.run_env(&env, &args);
    let first = first_frame(&w, "a warm first frame");
    assert!(
        !first.contains(" 0 sessions"),
        "empty first frame:\n{first}"
    );
    let settled = w.wait_listed();
    let rows = |s: &str| -> Vec<String> {
        s.lines()
            // Marks aside: opening the selected session marks it read.
            .map(|l| l.split('│').next().unwrap_or(l).chars().skip(3).collect())
            .take(20)
            .collect()
    };
    assert_eq!(
        rows(&first),
        rows(&settled),
        "the warm first frame was not final"
    );
    // The head's announced count, not the few rows it holds.
    assert_eq!(
        count(&first),
        count(&settled),
        "the warm first frame's count:\n{first}"
    );

    // A change in this browser: pin the selected session. A running browser writes it to
    // the catalog's patch log, not to the catalog; wait until the log holds it (the head
    // with the log replayed shows it), then quit.
    // The selected session is the head's top row (a start selects the top).
    let top = spool::catalog::warm::head(&cache, &stores, &filter)
        .expect("a head")
        .rows[0]
        .clone();
    let pinned_in_catalog = || {
        let cat = spool::catalog::load(&cache).expect("a catalog");
        (cat.sections.iter())
            .flat_map(|s| s.entries.iter().filter_map(|e| e.row.as_deref()))
            .find(|r| (r.store, &r.id) == (top.store, &top.id))
            .map(|r| r.pinned())
    };
    w.keys(&["p"]);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while pinned_in_catalog() == Some(top.pinned()) {
        assert!(
            std::time::Instant::now() < deadline,
            "the pin never reached the catalog's log"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    w.keys(&["q"]);
    w.wait_for("EXIT=0");
    assert!(
        cache.join("catalog.log").is_file(),
        "the pin was folded into the catalog, not logged: this test no longer covers the log"
    );
    // The head beside the log: its rows are those of the catalog with the log replayed.
    let head = spool::catalog::warm::head(&cache, &stores, &filter)
        .expect("the next start would not use the head beside the patch log");
    let cat = spool::catalog::load(&cache).expect("a catalog");
    let (want, _) = spool::catalog::head::cut(&cat).expect("a head for the catalog");
    assert_eq!(head.rows[..], want.rows[..head.rows.len()]);
    assert_eq!(head.total, want.total);

    // The next start's first frame is the head's, and already shows the pin (marks and
    // order): it equals the settled screen, marks included.
    let Some(x) = Tmux::new("catalog-logged") else {
        return;
    };
    x.run_env(&env, &args);
    let first = first_frame(&x, "a first frame beside the log");
    let settled = x.wait_listed();
    assert_eq!(
        marked(&first),
        marked(&settled),
        "the first frame beside the log was not final"
    );
    assert_eq!(count(&first), count(&settled));
    x.keys(&["q"]);
    x.wait_for("EXIT=0");
}

/// The sidebar's first 20 lines, marks (unread, pinned) included.
fn marked(screen: &str) -> Vec<String> {
    (screen.lines())
        .map(|l| l.split('│').next().unwrap_or(l).to_string())
        .take(20)
        .collect()
}

/// The status bar's "N sessions".
fn count(screen: &str) -> Option<String> {
    let line = screen.lines().rev().find(|l| l.contains(" sessions"))?;
    let before = line.split(" sessions").next()?;
    Some(before.split_whitespace().last()?.to_string())
}
