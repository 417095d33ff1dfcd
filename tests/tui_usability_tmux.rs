//! Real-terminal tests of issue 7's fixes that only a terminal shows: a message after
//! `d` Esc leaves and the key hints come back on their own; help at 40x12 scrolls; the
//! search box edits with readline keys and the terminal cursor follows.

mod common;

use common::tmux::{Tmux, selected_row};

#[test]
fn after_cancel_the_key_hints_come_back() {
    let Some(t) = Tmux::new("hints") else { return };
    t.run("--demo");
    t.wait_listed();
    // The top row, a pinned Loop session (deletable). A cold start keeps the selection on the first
    // row it showed, which may be a read-only Codex row if Codex's newest came first.
    t.keys(&["g"]);
    t.wait_until("the top row selected", |s| {
        selected_row(s).is_some_and(|r| r.contains("E2E job times out"))
    });
    t.keys(&["d"]);
    t.wait_for("delete session");
    t.keys(&["Escape"]);
    t.wait_for("cancelled");
    // No key pressed: the message expires and the hints return.
    t.wait_until("the hints to come back", |s| {
        s.contains("enter open") && !s.contains("cancelled")
    });
    // "nothing to undo" leaves at the next key.
    t.keys(&["U"]);
    t.wait_for("nothing to undo");
    t.keys(&["j"]);
    t.wait_until("the next key to clear the message", |s| {
        s.contains("enter open") && !s.contains("nothing to undo")
    });
    // The log still has both.
    t.keys(&["m"]);
    let log = t.wait_for("last 50 messages");
    assert!(
        log.contains("cancelled") && log.contains("nothing to undo"),
        "{log}"
    );
    t.keys(&["q", "q"]);
    t.wait_for("STTY-DONE");
}

#[test]
fn help_at_40x12_scrolls() {
    let Some(t) = Tmux::new("help40") else { return };
    t.run_sized("--demo", 40, 12);
    t.wait_listed();
    t.keys(&["?"]);
    let top = t.wait_for("↓ more");
    assert!(top.contains("1–"), "{top}");
    t.keys(&["j", "j"]);
    t.wait_for(" 3–");
    t.keys(&["G"]);
    let end = t.wait_for("end · j/k");
    assert!(end.contains("labels") || end.contains("error"), "{end}");
    t.keys(&["Escape"]);
    t.wait_until("help to close", |s| !s.contains("j/k"));
    t.keys(&["q"]);
    t.wait_for("STTY-DONE");
}

#[test]
fn the_search_box_edits_with_readline_keys() {
    let Some(t) = Tmux::new("edit") else { return };
    t.run("--demo");
    t.wait_listed();
    let cursor_x = || {
        t.tmux(&["display-message", "-p", "-t", "t", "#{cursor_x}"])
            .trim()
            .parse::<u16>()
            .unwrap()
    };
    t.keys(&["/"]);
    t.type_text("fix the parser");
    t.wait_for("/ fix the parser");
    t.keys(&["C-w"]);
    t.wait_until("ctrl-w to delete a word", |s| {
        s.contains("/ fix the ") && !s.contains("parser ")
    });
    t.keys(&["M-BSpace"]);
    t.wait_until("alt-backspace to delete a word", |s| {
        !s.contains("/ fix the")
    });
    t.keys(&["Home"]);
    t.wait_until("the cursor at the start", |_| cursor_x() == 2);
    let shown = t.tmux(&["display-message", "-p", "-t", "t", "#{cursor_flag}"]);
    assert_eq!(
        shown.trim(),
        "1",
        "the terminal cursor is visible in the search box"
    );
    t.type_text("py");
    t.wait_for("/ pyfix");
    t.keys(&["End"]);
    t.keys(&["C-u"]);
    t.wait_until("ctrl-u to clear to the start", |s| !s.contains("pyfix"));
    // Esc and q apart: sent together they read as Alt-q.
    t.keys(&["Escape"]);
    t.wait_for("/ search");
    t.keys(&["q"]);
    t.wait_for("STTY-DONE");
}
