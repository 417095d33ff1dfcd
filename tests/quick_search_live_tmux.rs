//! Real-terminal test of the quick search while sessions change on disk: the built `spool`
//! under tmux. A query stands while a session that matches it is written and another
//! matched one grows (its row is read again, and the quick search's items are replaced in
//! one batch, `search/quick/swap.rs`); both are in the results, and the one opened from
//! them is the one the pane shows.

mod common;

use std::io::Write;

use common::tmux::{Tmux, pane, selected_row, sidebar};

#[test]
fn a_query_stands_while_sessions_change_and_the_opened_result_is_in_the_pane() {
    let Some(t) = Tmux::new("quicklive") else {
        return;
    };
    common::install_fixtures(&t.home());
    t.run("");
    t.wait_listed();
    t.keys(&["/"]);
    t.type_text("router");
    t.wait_until("the fixture's match alone", |s| {
        let side = sidebar(s);
        side.contains("why does router_test.go fail?") && !side.contains("List the TODO")
    });
    t.keys(&["Enter"]);

    // While the query stands: a new session that matches it, and the matched one grows.
    let sessions = t.home().join(".loom/sessions");
    std::fs::write(
        sessions.join("20260315-080000.jsonl"),
        "{\"kind\":\"meta\",\"time\":\"2026-03-15T08:00:00Z\",\"cwd\":\"/tmp\"}\n\
         {\"kind\":\"message\",\"time\":\"2026-03-15T08:00:01Z\",\"message\":{\"role\":\"user\",\"content\":\"router twin: where do the params go?\"}}\n\
         {\"kind\":\"message\",\"time\":\"2026-03-15T08:00:02Z\",\"message\":{\"role\":\"assistant\",\"content\":\"The params live in the request context.\"}}\n",
    )
    .unwrap();
    let mut log = std::fs::OpenOptions::new()
        .append(true)
        .open(sessions.join("20260314-141500.jsonl"))
        .unwrap();
    writeln!(
        log,
        "{{\"kind\":\"message\",\"time\":\"2026-03-15T09:00:00Z\",\"message\":{{\"role\":\"assistant\",\"content\":\"fixed the route table\"}}}}"
    )
    .unwrap();
    drop(log);
    let both = t.wait_until("both matches, and nothing else", |s| {
        let side = sidebar(s);
        side.contains("router twin") && side.contains("why does router_test.go fail?")
    });
    assert!(!sidebar(&both).contains("List the TODO"), "{both}");
    // Enter opened the first match in the pane: back to the list, still filtered.
    t.keys(&["Escape"]);
    t.wait_until("the list focused, the query standing", |s| {
        s.contains("/ router") && !sidebar(s).contains("List the TODO")
    });

    // Select the new session and read it in the pane.
    for _ in 0..4 {
        if selected_row(&t.screen()).is_some_and(|r| r.contains("router twin")) {
            break;
        }
        t.keys(&["j"]);
        std::thread::sleep(std::time::Duration::from_millis(150));
    }
    let s = t.screen();
    assert!(
        selected_row(&s).is_some_and(|r| r.contains("router twin")),
        "{s}"
    );
    t.wait_until("the new session's answer in the pane", |s| {
        pane(s).contains("The params live in the request context.")
    });
    // And the grown one: its new answer in the pane.
    for _ in 0..4 {
        if selected_row(&t.screen()).is_some_and(|r| r.contains("router_test.go")) {
            break;
        }
        t.keys(&["k"]);
        std::thread::sleep(std::time::Duration::from_millis(150));
    }
    t.wait_until("the grown session's new answer in the pane", |s| {
        pane(s).contains("fixed the route table")
    });
    t.keys(&["q"]);
    let end = t.wait_for("STTY-DONE");
    assert!(end.contains("EXIT=0"), "{end}");
}
