//! State tests for the one-key actions in the browser: the delete confirmation, the rename
//! prompt, the export dialog, fork from here, selection after delete / fork / undo, outcomes
//! updating rows at once, and the initial selection following the top row.

mod tui_common;

use std::path::PathBuf;
use std::sync::Arc;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use spool::app::{Action, App, Ctx, Dialog, Effect, Focus, Loaded, OpInput, Outcome, SessionOp};
use spool::export::Format;
use spool::model::{Entry, Role, StoreKind, Transcript};
use tui_common::*;

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

/// Press a key through the keymap, as the run loop does.
fn press(a: &mut App, code: KeyCode) -> Vec<Effect> {
    press_ev(a, key(code))
}

fn press_ev(a: &mut App, e: KeyEvent) -> Vec<Effect> {
    match a.keymap.lookup(a.ctx(), &e) {
        Some(action) => a.update(action),
        None => Vec::new(),
    }
}

fn typed(a: &mut App, s: &str) {
    for c in s.chars() {
        press(a, KeyCode::Char(c));
    }
}

/// The one session effect in `fx`: (op, session id, input).
fn session_fx(fx: &[Effect]) -> (SessionOp, String, OpInput) {
    let v: Vec<_> = fx
        .iter()
        .filter_map(|f| match f {
            Effect::Session { op, summary, input } => {
                Some((*op, summary.id.to_string(), input.clone()))
            }
            _ => None,
        })
        .collect();
    assert_eq!(v.len(), 1, "{fx:?}");
    v.into_iter().next().unwrap()
}

/// The run loop's answer to an operation: its (empty) outcome.
fn finish(a: &mut App) {
    a.update(Action::OpDone(Box::default()));
}

fn prompt_text(a: &App) -> (String, usize) {
    match &a.dialog {
        Some(Dialog::Rename { input, .. }) => (input.text(), input.cursor()),
        Some(Dialog::Export { path, .. }) => (path.text(), path.cursor()),
        other => panic!("no prompt open: {other:?}"),
    }
}

#[test]
fn delete_asks_first_and_n_or_esc_cancel() {
    let mut a = loaded_app();
    assert!(press(&mut a, KeyCode::Char('d')).is_empty());
    assert!(matches!(a.dialog, Some(Dialog::ConfirmDelete { .. })));
    assert_eq!(a.ctx(), Ctx::Confirm);
    // Movement keys do nothing while the dialog is open.
    assert!(press(&mut a, KeyCode::Char('j')).is_empty());
    assert_eq!(selected_id(&a), "20260314-091502");
    assert!(press(&mut a, KeyCode::Char('n')).is_empty());
    assert!(a.dialog.is_none());
    press(&mut a, KeyCode::Char('d'));
    assert!(press(&mut a, KeyCode::Esc).is_empty());
    assert!(a.dialog.is_none());
    assert_eq!(a.status.as_deref(), Some("cancelled"));
    // y and Enter confirm.
    for k in [KeyCode::Char('y'), KeyCode::Enter] {
        press(&mut a, KeyCode::Char('d'));
        let (op, id, _) = session_fx(&press(&mut a, k));
        assert_eq!((op, id.as_str()), (SessionOp::Delete, "20260314-091502"));
        assert!(a.dialog.is_none());
        finish(&mut a);
    }
}

#[test]
fn delete_moves_to_the_neighbour_and_undo_reselects() {
    let mut a = loaded_app();
    a.update(Action::Down); // the loop session, row 1
    let gone = a.selected().cloned().unwrap();
    let summary = a.list.get(&gone).cloned().unwrap();
    a.update(Action::Session(SessionOp::Delete));
    session_fx(&a.update(Action::DialogAccept));
    a.update(Action::OpDone(Box::new(Outcome {
        message: "deleted".into(),
        removed: vec![gone.clone()],
        undoable: Some(summary.clone()),
        ..Outcome::default()
    })));
    assert_eq!(a.status.as_deref(), Some("deleted"));
    assert!(a.list.get(&gone).is_none());
    assert_eq!(selected_id(&a), "Qm3xT8vLk2pR9aZc");
    assert_eq!(a.list.cursor, 1);
    // U acts on the deleted session, not on the selection.
    let (op, id, _) = session_fx(&a.update(Action::Session(SessionOp::UndoDelete)));
    assert_eq!((op, id.as_str()), (SessionOp::UndoDelete, "3f6b2c1e"));
    a.update(Action::OpDone(Box::new(Outcome {
        message: "restored".into(),
        rows: vec![summary],
        select: Some(gone.clone()),
        ..Outcome::default()
    })));
    assert_eq!(a.selected(), Some(&gone));
    assert_eq!(a.list.cursor, 1);
    // Nothing left to undo.
    assert!(a.update(Action::Session(SessionOp::UndoDelete)).is_empty());
    assert_eq!(a.status.as_deref(), Some("nothing to undo"));
}

#[test]
fn delete_of_the_last_row_selects_the_new_last_row() {
    let mut a = loaded_app();
    a.update(Action::Bottom);
    a.update(Action::Up); // the last real session (the error row is last)
    let k = a.selected().cloned().unwrap();
    a.update(Action::OpDone(Box::new(Outcome {
        message: "deleted".into(),
        removed: vec![k],
        ..Outcome::default()
    })));
    assert_eq!(selected_id(&a), "20260302-000000");
}

#[test]
fn rename_prompt_edits_and_commits() {
    let mut a = loaded_app();
    press(&mut a, KeyCode::Char('R'));
    assert_eq!(a.ctx(), Ctx::Prompt);
    assert_eq!(prompt_text(&a), ("Refactor session loader".into(), 23));
    // Letters type (even bound ones like q and d), Backspace deletes before the cursor.
    typed(&mut a, "qd");
    press(&mut a, KeyCode::Backspace);
    assert_eq!(prompt_text(&a), ("Refactor session loaderq".into(), 24));
    press(&mut a, KeyCode::Home);
    press(&mut a, KeyCode::Delete);
    typed(&mut a, "r");
    press(&mut a, KeyCode::End);
    press(&mut a, KeyCode::Left);
    press(&mut a, KeyCode::Delete);
    press(&mut a, KeyCode::Right); // already at the end
    assert_eq!(prompt_text(&a), ("refactor session loader".into(), 23));
    a.update(Action::Paste(" v2\n".into()));
    assert_eq!(prompt_text(&a), ("refactor session loader v2".into(), 26));
    let (op, id, input) = session_fx(&press(&mut a, KeyCode::Enter));
    assert_eq!((op, id.as_str()), (SessionOp::Rename, "20260314-091502"));
    assert_eq!(input, OpInput::Title("refactor session loader v2".into()));
    assert!(a.dialog.is_none());
}

#[test]
fn rename_ctrl_u_clears_esc_cancels_empty_is_refused() {
    let mut a = loaded_app();
    press(&mut a, KeyCode::Char('R'));
    press_ev(
        &mut a,
        KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL),
    );
    assert_eq!(prompt_text(&a), (String::new(), 0));
    // An empty title is refused and the prompt stays open.
    assert!(press(&mut a, KeyCode::Enter).is_empty());
    assert_eq!(a.status.as_deref(), Some("a title cannot be empty"));
    assert_eq!(a.ctx(), Ctx::Prompt);
    typed(&mut a, "x");
    assert!(press(&mut a, KeyCode::Esc).is_empty());
    assert!(a.dialog.is_none());
    assert_eq!(
        a.list.selected_summary().unwrap().title(),
        "Refactor session loader"
    );
    // An unchanged title writes nothing.
    press(&mut a, KeyCode::Char('R'));
    assert!(press(&mut a, KeyCode::Enter).is_empty());
    assert_eq!(a.status.as_deref(), Some("title unchanged"));
}

#[test]
fn export_dialog_cycles_format_and_edits_the_path() {
    let mut a = loaded_app();
    press(&mut a, KeyCode::Char('e'));
    match &a.dialog {
        Some(Dialog::Export { format, .. }) => assert_eq!(*format, Format::Markdown),
        other => panic!("{other:?}"),
    }
    assert_eq!(prompt_text(&a).0, "./refactor-session-loader.md");
    press(&mut a, KeyCode::Tab);
    assert_eq!(prompt_text(&a).0, "./refactor-session-loader.html");
    press(&mut a, KeyCode::Tab);
    assert_eq!(prompt_text(&a).0, "./refactor-session-loader.json");
    press(&mut a, KeyCode::BackTab);
    assert_eq!(prompt_text(&a).0, "./refactor-session-loader.html");
    // A path edited away from the extension keeps what was typed.
    press(&mut a, KeyCode::Char('x'));
    press(&mut a, KeyCode::Tab);
    assert_eq!(prompt_text(&a).0, "./refactor-session-loader.htmlx");
    press(&mut a, KeyCode::Backspace);
    let (op, _, input) = session_fx(&press(&mut a, KeyCode::Enter));
    assert_eq!(op, SessionOp::Export);
    assert_eq!(
        input,
        OpInput::Export {
            format: Format::Json,
            path: PathBuf::from("./refactor-session-loader.html"),
        }
    );
}

/// Three rounds: user messages at stored indexes 0, 2 and 5, each round tall enough to fill
/// the pane on its own.
fn three_rounds(s: &spool::model::SessionSummary) -> Transcript {
    let long = |t: &str| {
        (0..30)
            .map(|i| format!("{t} line {i}"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let mut entries = Vec::new();
    for (i, role, text) in [
        (0, Role::User, "first question".to_string()),
        (1, Role::Assistant, long("first answer")),
        (2, Role::User, "second question".to_string()),
        (3, Role::Assistant, long("second answer")),
        (4, Role::Assistant, "more".to_string()),
        (5, Role::User, "third question".to_string()),
        (6, Role::Assistant, long("third answer")),
    ] {
        let mut m = msg(role, &text, i as u32);
        m.index = Some(i);
        entries.push(Entry::Message(Box::new(m)));
    }
    Transcript {
        summary: s.clone(),
        entries,
        total_rounds: 3,
        first_round: 0,
        warnings: vec![],
        todos: None,
    }
}

fn open_three_rounds(a: &mut App) {
    let fx = a.update(Action::Open);
    let (token, s) = fx
        .iter()
        .find_map(|f| match f {
            Effect::Load { token, summary, .. } => Some((*token, summary.clone())),
            _ => None,
        })
        .or_else(|| Some((a.pane.token, Box::new(a.list.selected_summary()?.clone()))))
        .unwrap();
    a.update(Action::Loaded {
        token,
        content: Loaded::Transcript(Arc::new(three_rounds(&s))),
    });
    assert_eq!(a.focus, Focus::Pane);
}

fn top_line(a: &App) -> String {
    a.pane
        .visible(1)
        .first()
        .map(|l| l.iter().map(|(_, s)| s.as_str()).collect())
        .unwrap_or_default()
}

#[test]
fn fork_from_here_ends_with_the_round_in_view() {
    let mut a = loaded_app();
    open_three_rounds(&mut a);
    // The "left off" card folded to one line, so the rounds start near the top.
    a.update(Action::ToggleCard);
    // The pane starts at the bottom: the third round is in view, so the fork is all of it.
    let (op, id, input) = session_fx(&a.update(Action::Session(SessionOp::Fork)));
    finish(&mut a);
    assert_eq!((op, id.as_str()), (SessionOp::Fork, "20260314-091502"));
    assert_eq!(input, OpInput::ForkAt(None));
    // The first round in view: cut before the second question (#2), never before #0.
    a.update(Action::Top);
    let (_, _, input) = session_fx(&a.update(Action::Session(SessionOp::Fork)));
    finish(&mut a);
    assert_eq!(input, OpInput::ForkAt(Some(2)));
    // Scroll until the second question's heading is the top line, then one more: still
    // round two, which the fork includes. One line above it (the blank line before the
    // heading) is round two too.
    while !top_line(&a).contains("you") || a.pane.scroll < 5 {
        a.update(Action::Down);
        assert!(a.pane.scroll < 200, "never reached round two");
    }
    assert!(top_line(&a).contains("you #2"), "{}", top_line(&a));
    let (_, _, input) = session_fx(&a.update(Action::Session(SessionOp::Fork)));
    finish(&mut a);
    assert_eq!(input, OpInput::ForkAt(Some(5)));
    a.update(Action::Up);
    let (_, _, input) = session_fx(&a.update(Action::Session(SessionOp::Fork)));
    finish(&mut a);
    assert_eq!(input, OpInput::ForkAt(Some(5)));
    a.update(Action::Up);
    assert!(
        top_line(&a).contains("first answer line 29"),
        "{}",
        top_line(&a)
    );
    let (_, _, input) = session_fx(&a.update(Action::Session(SessionOp::Fork)));
    finish(&mut a);
    assert_eq!(input, OpInput::ForkAt(Some(2)));
    // From the list: the whole session.
    a.update(Action::ToggleFocus);
    let (_, _, input) = session_fx(&a.update(Action::Session(SessionOp::Fork)));
    finish(&mut a);
    assert_eq!(input, OpInput::ForkAt(None));
}

#[test]
fn the_fork_is_selected_when_it_arrives_with_its_parent_shown() {
    let mut a = loaded_app();
    a.update(Action::Down);
    a.update(Action::OpDone(Box::new(Outcome {
        message: "forked loop:3f6b2c1e into loop:9c9c9c9c".into(),
        select: Some((StoreKind::Loop, "9c9c9c9c".into())),
        ..Outcome::default()
    })));
    // Not listed yet: the selection stays until the loader brings the new row.
    assert_eq!(selected_id(&a), "3f6b2c1e");
    let mut fork = row(StoreKind::Loop, "9c9c9c9c", "Fix the flaky parser test", 0);
    fork.set_forked_from(Some("loop:3f6b2c1e".into()));
    let fx = a.update(Action::Rows(vec![fork]));
    assert_eq!(selected_id(&a), "9c9c9c9c");
    assert_eq!(a.list.cursor, 1);
    // The pane previews it, and its header names the parent.
    answer(&mut a, &fx);
    let s = screen(&mut a, 120, 20);
    assert!(s.contains("forked from loop:3f6b2c1e"), "{s}");
    assert!(s.contains("forked loop:3f6b2c1e into loop:9c9c9c9c"), "{s}");
}

#[test]
fn outcomes_update_rows_at_once() {
    let mut a = loaded_app();
    a.update(Action::Down); // loop:3f6b2c1e, unread
    let mut s = a.list.selected_summary().cloned().unwrap();
    s.pinned_at = hours_ago(0);
    a.update(Action::OpDone(Box::new(Outcome {
        message: "pinned loop:3f6b2c1e".into(),
        rows: vec![s.clone()],
        ..Outcome::default()
    })));
    // Newest pin first, and the selection followed it.
    assert_eq!(titles(&a)[0], "Fix the flaky parser test");
    assert_eq!((selected_id(&a).as_str(), a.list.cursor), ("3f6b2c1e", 0));
    // Archived: it leaves the default view and the selection moves to the next row.
    s.archived = true;
    a.update(Action::OpDone(Box::new(Outcome {
        message: "archived loop:3f6b2c1e".into(),
        rows: vec![s],
        ..Outcome::default()
    })));
    assert!(!titles(&a).contains(&"Fix the flaky parser test".to_string()));
    assert_eq!(selected_id(&a), "20260314-091502");
    // A failure is one line and the browser goes on.
    a.update(Action::OpDone(Box::new(Outcome::message(
        "loom:20260314-091502 is in use by another process",
    ))));
    assert_eq!(
        a.status.as_deref(),
        Some("loom:20260314-091502 is in use by another process")
    );
    assert!(a.dialog.is_none());
    a.update(Action::Down);
    assert_eq!(a.list.cursor, 1);
}

#[test]
fn initial_selection_follows_the_top_until_the_user_moves() {
    let mut a = app();
    let v = sample();
    a.update(Action::Rows(v[2..5].to_vec()));
    assert_eq!(selected_id(&a), "Qm3xT8vLk2pR9aZc");
    // Newer rows stream in above: the selection stays on the top row.
    a.update(Action::Rows(v[0..2].to_vec()));
    assert_eq!(selected_id(&a), "20260314-091502"); // pinned
    assert_eq!(a.list.cursor, 0);
    a.update(Action::Down);
    a.update(Action::Up);
    // The user moved: now the selection is pinned to the session.
    let mut bumped = v[0].clone();
    bumped.pinned_at = hours_ago(0);
    a.update(Action::Rows(vec![bumped]));
    assert_eq!(selected_id(&a), "20260314-091502");
    assert_eq!(a.list.cursor, 1);
}

#[test]
fn dialog_keys_map_through_the_table() {
    let mut a = loaded_app();
    a.update(Action::Session(SessionOp::Delete));
    for (k, want) in [('y', true), ('n', false)] {
        let got = a.keymap.lookup(Ctx::Confirm, &key(KeyCode::Char(k)));
        assert_eq!(matches!(got, Some(Action::DialogAccept)), want, "{k}");
    }
    assert!(a.keymap.conflicts().is_empty());
    // A click elsewhere does not act behind the dialog.
    a.update(Action::Click { col: 2, row: 6 });
    assert_eq!(a.list.cursor, 0);
    assert!(a.dialog.is_some());
}

#[test]
fn an_action_right_after_typing_acts_on_the_query_match() {
    let mut a = loaded_app();
    let top = selected_id(&a);
    // Type a query that selects another session, then act at once, before any tick.
    press(&mut a, KeyCode::Char('/'));
    typed(&mut a, "release notes");
    press(&mut a, KeyCode::Enter);
    let (op, id, _) = session_fx(&press(&mut a, KeyCode::Char('p')));
    assert_eq!(op, SessionOp::TogglePin);
    assert_ne!(id, top, "acted on the row that was on top before the query");
    let title = a
        .list
        .get(&(StoreKind::Harness, id.clone()))
        .map(|s| s.title());
    assert_eq!(title, Some("Write the release notes"));
}

#[test]
fn a_second_action_waits_for_the_first_to_finish() {
    let mut a = loaded_app();
    session_fx(&press(&mut a, KeyCode::Char('p')));
    assert!(a.op_pending);
    // Acting again before the answer would act on the row as it was: refused, said so.
    assert!(press(&mut a, KeyCode::Char('p')).is_empty());
    assert_eq!(
        a.status.as_deref(),
        Some("still working on the last action; try again in a moment")
    );
    finish(&mut a);
    assert!(!a.op_pending);
    session_fx(&press(&mut a, KeyCode::Char('p')));
}

#[test]
fn a_background_reread_begun_before_an_operation_does_not_undo_its_row() {
    let mut a = loaded_app();
    let k = a.selected().cloned().unwrap();
    let before = a.list.get(&k).cloned().unwrap();
    let was = before.pinned();
    // A watcher pass starts reading now, before the toggle...
    let since = std::time::Instant::now();
    // ...the toggle finishes and its re-read row is shown...
    let mut after = before.clone();
    after.pinned_flag = !was;
    after.pinned_at = None;
    a.update(Action::Session(SessionOp::TogglePin));
    a.update(Action::OpDone(Box::new(Outcome {
        message: "toggled".into(),
        rows: vec![after.clone()],
        finished: Some(std::time::Instant::now()),
        ..Outcome::default()
    })));
    assert_eq!(a.list.get(&k).unwrap().pinned(), !was);
    // ...and the pass's older row arrives after it: dropped.
    a.update(Action::Reread {
        rows: vec![std::sync::Arc::new(before.clone())],
        since,
    });
    assert_eq!(
        a.list.get(&k).unwrap().pinned(),
        !was,
        "a stale re-read undid the pin"
    );
    // A re-read begun after the operation is taken.
    let since = std::time::Instant::now();
    a.update(Action::Reread {
        rows: vec![std::sync::Arc::new(before)],
        since,
    });
    assert_eq!(a.list.get(&k).unwrap().pinned(), was);
}
