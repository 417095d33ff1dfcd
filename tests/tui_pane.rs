//! The transcript pane as a reader meets it: marking read once the end is shown, message
//! numbers and fork from here, tool calls as arguments and diffs, one fold opened at a time.

mod tui_common;

use std::sync::Arc;

use spool::app::{Action, App, Effect, Loaded, Options, Outcome, SessionOp};
use spool::model::Transcript;
use tui_common::*;

/// Answer the newest load in `fx` with `t` (built for its summary); the effects of taking it.
fn answer_with(a: &mut App, fx: &[Effect], t: impl Fn(&spool::model::SessionSummary) -> Transcript) -> Vec<Effect> {
    let (token, s) = fx
        .iter()
        .rev()
        .find_map(|f| match f {
            Effect::Load { token, summary, .. } => Some((*token, summary.clone())),
            _ => None,
        })
        .expect("a load request");
    a.update(Action::Loaded {
        token,
        content: Loaded::Transcript(Arc::new(t(&s))),
    })
}

fn mark_reads(fx: &[Effect]) -> Vec<String> {
    fx.iter()
        .filter_map(|f| match f {
            Effect::Session {
                op: SessionOp::MarkRead,
                summary,
                ..
            } => Some(summary.id.clone()),
            _ => None,
        })
        .collect()
}

#[test]
fn showing_the_last_message_marks_the_session_read_once() {
    let mut a = loaded_app();
    // The second row is the unread one; moving to it previews it at its end.
    let fx = a.update(Action::Down);
    assert_eq!(selected_id(&a), "3f6b2c1e");
    let fx = answer_with(&mut a, &fx, transcript);
    assert_eq!(mark_reads(&fx), ["3f6b2c1e"]);
    // Through the store's read op, not holding up the next key; the dot goes at once.
    assert!(!a.op_pending);
    assert!(!a.list.selected_summary().unwrap().unread);
    assert!(mark_reads(&a.update(Action::Up)).is_empty());
    // A quiet answer: no status line for a success.
    let mut done = Outcome::message("");
    done.automatic = true;
    a.update(Action::OpDone(Box::new(done)));
    assert_eq!(a.status, None);
}

#[test]
fn not_marked_read_while_the_pane_is_hidden_or_when_turned_off() {
    // Narrow: the pane is not on screen until Enter.
    let mut a = loaded_app();
    a.update(Action::Resize(80, 24));
    a.update(Action::Down);
    let fx = a.update(Action::Open);
    let fx = answer_with(&mut a, &fx, transcript);
    assert_eq!(mark_reads(&fx), ["3f6b2c1e"]);

    let mut o = Options::new(now());
    o.mark_read_on_open = false;
    let mut a = App::new(o);
    a.update(Action::Resize(120, 32));
    a.update(Action::Rows(sample()));
    a.settle();
    let fx = a.update(Action::Down);
    let fx = answer_with(&mut a, &fx, transcript);
    assert!(mark_reads(&fx).is_empty());
    assert!(a.list.selected_summary().unwrap().unread);
}

#[test]
fn config_turns_mark_read_on_open_off() {
    use spool::config::Config;
    assert!(Config::parse("", "c").unwrap().mark_read_on_open);
    assert!(!Config::parse("mark_read_on_open = false\n", "c").unwrap().mark_read_on_open);
}
