//! The inbox in a real terminal: `i` over the demo store lists exactly the sessions
//! `spool list --inbox` names (waiting, errored, interrupted, with their counts), and
//! archiving one there (`a`) takes it out.

mod common;

use common::tmux::{BIN, Tmux};

/// The sidebar's columns of a screen (the pane may show a title too).
fn sidebar(screen: &str) -> String {
    screen
        .lines()
        .map(|l| l.chars().take(44).collect::<String>())
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn the_inbox_lists_what_needs_the_user_and_archiving_takes_it_out() {
    let Some(t) = Tmux::new("inbox") else { return };
    let out = std::process::Command::new(BIN)
        .args(["--demo", "list", "--json", "--inbox"])
        .env("HOME", t.home())
        .output()
        .unwrap();
    let rows: Vec<serde_json::Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let count = |e: &str| rows.iter().filter(|r| r["ended"] == e).count();
    let (w, e, i) = (count("waiting"), count("errored"), count("interrupted"));
    assert!(w > 0 && e > 0 && i > 0, "the demo has every inbox ending");
    assert_eq!(w + e + i, rows.len());
    let heading = format!("inbox  ?{w} waiting  !{e} errored  ~{i} interrupted");

    t.run("--demo");
    t.wait_listed();
    t.keys(&["i"]);
    let screen = t.wait_stable("the inbox", |s| s.contains(&heading));
    // Every inbox session is listed (titles are cut to the sidebar), and nothing else: the
    // list has exactly as many rows as the inbox has sessions.
    let side = sidebar(&screen);
    for r in &rows {
        let title: String = r["title"].as_str().unwrap().chars().take(16).collect();
        assert!(side.contains(&title), "{title} missing:\n{screen}");
    }
    // Each group sits under its heading, with its count, in this order.
    let heads = [
        format!("? waiting · {w}"),
        format!("! errored · {e}"),
        format!("~ interrupted · {i}"),
    ];
    let at: Vec<Option<usize>> = heads.iter().map(|h| side.find(h.as_str())).collect();
    assert!(
        at.iter().all(Option::is_some),
        "{heads:?} not all shown:\n{screen}"
    );
    assert!(at.windows(2).all(|p| p[0] < p[1]), "{screen}");
    let marks = ["? waiting", "! errored", "~ interrupted"];
    let listed = side
        .lines()
        .filter(|l| {
            let l = l.trim_start_matches(['▌', ' ']);
            marks
                .iter()
                .any(|m| l.starts_with(m) && !l.starts_with(&format!("{m} ·")))
        })
        .count();
    // Rows whose badges fill the detail line may show no mark; none is outside the inbox.
    assert!(listed <= rows.len(), "{screen}");

    // The top row (the first waiting session) is handled: archive it.
    t.keys(&["a"]);
    let after = format!("inbox  ?{} waiting  !{e} errored  ~{i} interrupted", w - 1);
    let screen = t.wait_until("the archived session to leave", |s| s.contains(&after));
    let first: String = rows[0]["title"]
        .as_str()
        .unwrap()
        .chars()
        .take(16)
        .collect();
    assert!(!sidebar(&screen).contains(&first), "{screen}");
    t.keys(&["q"]);
    t.wait_for("STTY-DONE");
}

#[test]
fn the_left_off_card_shows_the_harness_todos_and_folds_with_l() {
    let Some(t) = Tmux::new("card") else { return };
    let fx =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/harness/sessions");
    common::copy_tree(&fx, &t.home().join(".agent-harness/memory/sessions"));
    t.run("");
    t.wait_listed();
    // The session with a todo list in `state` (archived in the fixture: `.` lists it).
    t.keys(&["."]);
    t.keys(&["/"]);
    t.type_text("pydantic");
    t.keys(&["Enter"]);
    let s = t.wait_stable("the card", |s| s.contains("▾ left off"));
    // The open todo from `state.todos`, not the done one.
    assert!(s.contains("[in_progress] Update cli.py callers"), "{s}");
    assert!(!s.contains("Define Settings model"), "{s}");
    assert!(
        s.contains("tokens ("),
        "the context size and its method:\n{s}"
    );
    t.keys(&["l"]);
    let s = t.wait_stable("the folded card", |s| s.contains("▸ left off"));
    // The one line: the last request, then the counts (cut to the pane).
    assert!(s.contains("▸ left off Now update cli.py"), "{s}");
    assert!(!s.contains("[in_progress] Update cli.py callers"), "{s}");
    t.keys(&["q"]);
    let end = t.wait_for("STTY-DONE");
    assert!(end.contains("EXIT=0"), "{end}");
}
