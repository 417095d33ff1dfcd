//! State tests of what a new user runs into (issue 7): status messages that expire and a
//! log that keeps them, the help and log overlays that scroll, one line editor for the
//! search box and the prompts, the pane after a query that matches nothing, and the names
//! of unreadable and empty sessions.

mod tui_common;

use chrono::Duration;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use spool::app::{Action, App, Ctx, Dialog, Effect, Focus, Overlay, SessionOp};
use spool::model::{SessionSummary, StoreKind};
use tui_common::*;

fn press_mod(a: &mut App, code: KeyCode, m: KeyModifiers) -> Vec<Effect> {
    match a.keymap.lookup(a.ctx(), &KeyEvent::new(code, m)) {
        Some(action) => a.update(action),
        None => Vec::new(),
    }
}

fn press(a: &mut App, code: KeyCode) -> Vec<Effect> {
    press_mod(a, code, KeyModifiers::NONE)
}

fn typed(a: &mut App, s: &str) {
    for c in s.chars() {
        press(a, KeyCode::Char(c));
    }
}

fn tick_after(a: &mut App, secs: i64) {
    a.now += Duration::seconds(secs);
    a.update(Action::Tick);
}

#[test]
fn a_status_message_expires_and_the_next_key_clears_it() {
    let mut a = loaded_app();
    press(&mut a, KeyCode::Char('d'));
    press(&mut a, KeyCode::Esc);
    assert_eq!(a.status.as_deref(), Some("cancelled"));
    tick_after(&mut a, 4);
    assert_eq!(a.status.as_deref(), Some("cancelled"));
    tick_after(&mut a, 2);
    assert_eq!(a.status, None, "the hints come back after a few seconds");

    a.update(Action::Session(SessionOp::UndoDelete));
    assert_eq!(a.status.as_deref(), Some("nothing to undo"));
    press(&mut a, KeyCode::Char('j'));
    assert_eq!(a.status, None, "the next key clears the message");
    // The same message again is a new message (new time, logged again).
    a.update(Action::Session(SessionOp::UndoDelete));
    tick_after(&mut a, 3);
    assert_eq!(a.status.as_deref(), Some("nothing to undo"));
    assert_eq!(
        a.log.iter().collect::<Vec<_>>(),
        ["cancelled", "nothing to undo", "nothing to undo"]
    );
}

#[test]
fn the_message_log_keeps_the_last_fifty() {
    let mut a = loaded_app();
    for i in 0..60 {
        a.update(Action::OpDone(Box::new(spool::app::Outcome::message(
            format!("message {i}"),
        ))));
    }
    assert_eq!(a.log.len(), 50);
    assert_eq!(a.log.front().map(String::as_str), Some("message 10"));
    press(&mut a, KeyCode::Char('m'));
    assert_eq!(a.overlay, Some(Overlay::Messages));
    assert_eq!(a.ctx(), Ctx::Help);
    press(&mut a, KeyCode::Char('?'));
    assert_eq!(a.overlay, Some(Overlay::Help), "? switches to help");
    press(&mut a, KeyCode::Esc);
    assert_eq!(a.overlay, None);
}

#[test]
fn help_scrolls_when_it_does_not_fit_and_not_past_its_end() {
    let mut a = loaded_app();
    a.update(Action::Resize(40, 12));
    press(&mut a, KeyCode::Char('?'));
    assert_eq!(a.overlay, Some(Overlay::Help));
    press(&mut a, KeyCode::Char('j'));
    press(&mut a, KeyCode::Char('j'));
    assert_eq!(a.overlay_scroll, 2);
    press(&mut a, KeyCode::Char('k'));
    assert_eq!(a.overlay_scroll, 1);
    press(&mut a, KeyCode::PageDown);
    assert!(a.overlay_scroll > 5, "{}", a.overlay_scroll);
    press(&mut a, KeyCode::Char('G'));
    let end = a.overlay_scroll;
    press(&mut a, KeyCode::Char('j'));
    assert_eq!(a.overlay_scroll, end, "no scrolling past the end");
    press(&mut a, KeyCode::Char('k'));
    assert_eq!(
        a.overlay_scroll,
        end - 1,
        "one key up from the end moves at once"
    );
    // The list did not move underneath.
    assert_eq!(a.list.cursor, 0);
    // On a big screen everything fits: nothing to scroll.
    a.update(Action::Resize(140, 40));
    assert_eq!(a.overlay_scroll, 0);
}

#[test]
fn the_search_box_edits_like_a_shell_prompt() {
    let mut a = loaded_app();
    press(&mut a, KeyCode::Char('/'));
    typed(&mut a, "fix the parser");
    press_mod(&mut a, KeyCode::Char('w'), KeyModifiers::CONTROL);
    assert_eq!(a.query.text(), "fix the ");
    press_mod(&mut a, KeyCode::Backspace, KeyModifiers::ALT);
    assert_eq!(a.query.text(), "fix ");
    press(&mut a, KeyCode::Home);
    typed(&mut a, "x");
    assert_eq!((a.query.text().as_str(), a.query.cursor()), ("xfix ", 1));
    press(&mut a, KeyCode::Right);
    press_mod(&mut a, KeyCode::Char('u'), KeyModifiers::CONTROL);
    assert_eq!((a.query.text().as_str(), a.query.cursor()), ("ix ", 0));
    press(&mut a, KeyCode::End);
    press(&mut a, KeyCode::Left);
    press(&mut a, KeyCode::Backspace);
    assert_eq!(a.query.text(), "i ");
    a.settle();
    // The list matches what the box says.
    assert_eq!(a.list.query(), "i ");
    // Esc clears it all.
    press(&mut a, KeyCode::Esc);
    assert_eq!(a.query.text(), "");
    assert_eq!(a.list.query(), "");
}

#[test]
fn the_rename_prompt_has_the_same_editing_keys() {
    let mut a = loaded_app();
    press(&mut a, KeyCode::Char('R'));
    press_mod(&mut a, KeyCode::Char('w'), KeyModifiers::CONTROL);
    let text = |a: &App| match &a.dialog {
        Some(Dialog::Rename { input, .. }) => input.text(),
        other => panic!("{other:?}"),
    };
    assert_eq!(text(&a), "Refactor session ");
    press_mod(&mut a, KeyCode::Backspace, KeyModifiers::ALT);
    assert_eq!(text(&a), "Refactor ");
    press(&mut a, KeyCode::Left);
    press_mod(&mut a, KeyCode::Char('u'), KeyModifiers::CONTROL);
    assert_eq!(text(&a), " ");
}

#[test]
fn a_query_matching_nothing_empties_the_pane_and_clearing_it_brings_it_back() {
    let mut a = loaded_app();
    assert!(a.pane.key.is_some());
    search(&mut a, "zqxjzqxj");
    a.update(Action::Tick);
    assert!(a.list.is_empty());
    assert_eq!(a.pane.key, None, "no stale session in the pane");
    assert!(a.pane_summary().is_none());
    let fx = a.update(Action::Back);
    a.settle();
    let fx: Vec<_> = fx.into_iter().chain(a.update(Action::Tick)).collect();
    assert_eq!(a.focus, Focus::List);
    assert_eq!(a.pane.key.as_ref(), a.selected());
    assert!(a.pane.key.is_some());
    assert!(
        fx.iter().any(|f| matches!(f, Effect::Load { .. })),
        "the pane asks for the session again: {fx:?}"
    );
}

#[test]
fn unreadable_and_empty_sessions_have_one_kind_of_name() {
    // A Loop session whose messages cannot be read keeps the "New session" title Loop's
    // contract gives it, but the browser names it by id and reason.
    let mut corrupt = SessionSummary::new(StoreKind::Loop, "c0ffee00", "/x");
    corrupt.set_title("New session");
    corrupt.set_error(Some("messages.jsonl is shorter than meta.json says".into()));
    assert_eq!(
        corrupt.display_title(),
        "c0ffee00 — messages.jsonl is shorter than meta.json says"
    );
    let mut names = Vec::new();
    for (kind, id, title) in [
        (StoreKind::Loop, "e1", "New session"),
        (StoreKind::Loom, "20260101-000000", "(empty session)"),
        (StoreKind::Harness, "Hh", "Hh"),
    ] {
        let mut s = SessionSummary::new(kind, id, "/x");
        s.set_title(title);
        names.push(s.display_title());
    }
    assert_eq!(names, ["(empty)"; 3]);
}
