//! The transcript pane as a reader meets it: marking read once the end is shown, message
//! numbers and fork from here, tool calls as arguments and diffs, one fold opened at a time.

mod tui_common;

use std::sync::Arc;

use spool::app::{Action, App, Effect, Loaded, Options, Outcome, SessionOp};
use spool::model::Transcript;
use tui_common::*;

/// Answer the newest load in `fx` (else the pane's outstanding one) with `t`, built for its
/// summary; the effects of taking it.
fn answer_with(
    a: &mut App,
    fx: &[Effect],
    t: impl Fn(&spool::model::SessionSummary) -> Transcript,
) -> Vec<Effect> {
    let (token, s) = fx
        .iter()
        .rev()
        .find_map(|f| match f {
            Effect::Load { token, summary, .. } => Some((*token, summary.clone())),
            _ => None,
        })
        // Already asked for by an earlier update: answer the pane's newest request.
        .or_else(|| Some((a.pane.token, Box::new(a.pane_summary()?.clone()))))
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
            } => Some(summary.id.to_string()),
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
    assert!(
        !Config::parse("mark_read_on_open = false\n", "c")
            .unwrap()
            .mark_read_on_open
    );
}

/// A harness-style session: the system prompt as message #0, an edit call (a diff), a read
/// whose output is ten lines, a one-line result.
fn tools(s: &spool::model::SessionSummary) -> Transcript {
    use spool::model::{Entry, Role, ToolCall};
    let mut entries = Vec::new();
    let mut add = |mut m: spool::model::Message, i: usize| {
        m.index = Some(i);
        entries.push(Entry::Message(Box::new(m)));
    };
    add(
        msg(
            Role::System,
            "You are a coding agent.\nBe brief.\nRun the tests.",
            0,
        ),
        0,
    );
    add(
        msg(Role::User, "Rename x to y in a.rs, then show me b.rs", 1),
        1,
    );
    let mut call = msg(Role::Assistant, "", 2);
    call.tool_calls = vec![
        ToolCall {
            id: "edit1".into(),
            name: "edit".into(),
            arguments: serde_json::json!({
                "path": "a.rs",
                "old_string": "let x = 1;\nprint(x);",
                "new_string": "let y = 1;\nprint(y);"
            }),
        },
        ToolCall {
            id: "read1".into(),
            name: "read".into(),
            arguments: serde_json::json!({"path": "b.rs", "limit": 10}),
        },
    ];
    add(call, 2);
    let mut ok = msg(Role::Tool, "Edited a.rs.", 3);
    ok.tool_call_id = Some("edit1".into());
    add(ok, 3);
    let body: Vec<String> = (1..=10).map(|i| format!("b.rs line {i}")).collect();
    let mut read = msg(Role::Tool, &body.join("\n"), 4);
    read.tool_call_id = Some("read1".into());
    add(read, 4);
    add(msg(Role::Assistant, "Done: x is y now.", 5), 5);
    Transcript {
        summary: s.clone(),
        entries,
        total_rounds: 1,
        first_round: 0,
        warnings: vec![],
        todos: None,
    }
}

fn open_tools(a: &mut App) {
    let fx = a.update(Action::Down);
    answer_with(a, &fx, tools);
    a.update(Action::Open);
}

/// The whole wrapped document, whatever is scrolled into view.
fn doc_text(a: &mut App) -> Vec<String> {
    let (scroll, follow) = (a.pane.scroll, a.pane.follow);
    a.pane.scroll = 0;
    let rows = a.pane.visible(a.pane.total_lines());
    (a.pane.scroll, a.pane.follow) = (scroll, follow);
    rows.iter()
        .map(|l| l.iter().map(|(_, s)| s.as_str()).collect())
        .collect()
}

#[test]
fn tool_calls_read_as_arguments_and_diffs() {
    let mut a = loaded_app();
    open_tools(&mut a);
    insta::assert_snapshot!(screen(&mut a, 120, 40));
    let text = doc_text(&mut a).join("\n");
    // No raw JSON, no "1 lines", the system prompt one collapsed line.
    assert!(!text.contains("{\""), "{text}");
    assert!(
        !text.contains("1 lines") && text.contains("result · 1 line\n"),
        "{text}"
    );
    assert!(text.contains("▸ system prompt #0 (3 lines)"), "{text}");
    assert!(!text.contains("Be brief."), "{text}");
}

#[test]
fn diff_lines_are_coloured_by_the_theme() {
    use ratatui::style::Color;
    let mut a = loaded_app();
    open_tools(&mut a);
    let t = render(&mut a, 120, 40, &spool::ui::Theme::dark());
    let buf = t.backend().buffer();
    let colour_of = |needle: &str| {
        let area = buf.area;
        for y in 0..area.height {
            let row: String = (0..area.width).map(|x| buf[(x, y)].symbol()).collect();
            if let Some(at) = row.find(needle) {
                let x = row[..at].chars().count() as u16;
                return buf[(x, y)].fg;
            }
        }
        panic!("{needle:?} not on screen");
    };
    assert_eq!(colour_of("- let x = 1;"), Color::Red);
    assert_eq!(colour_of("+ let y = 1;"), Color::Green);
}

#[test]
fn o_opens_the_block_in_view_and_capital_o_opens_all() {
    let mut a = loaded_app();
    open_tools(&mut a);
    a.update(Action::Resize(120, 24));
    // Scroll so the read call is the top line: it is the block in view.
    let row = doc_text(&mut a)
        .iter()
        .position(|l| l.contains("⚙ read"))
        .unwrap();
    a.pane.follow = false;
    a.pane.scroll = row;
    a.update(Action::ToggleExpand);
    let text = doc_text(&mut a).join("\n");
    assert!(
        text.contains("b.rs line 10"),
        "the read output opened:\n{text}"
    );
    assert!(
        !text.contains("Be brief."),
        "the system prompt stayed shut:\n{text}"
    );
    // The opened block's first line stays on screen (the body is 18 rows).
    assert!(
        a.pane.scroll <= row && row < a.pane.scroll + 18,
        "{}",
        a.pane.scroll
    );
    a.update(Action::ToggleExpand);
    assert!(!doc_text(&mut a).join("\n").contains("b.rs line 10"));
    // O: every block.
    a.update(Action::ToggleExpandAll);
    let text = doc_text(&mut a).join("\n");
    assert!(
        text.contains("b.rs line 10") && text.contains("Be brief."),
        "{text}"
    );
    a.update(Action::ToggleExpandAll);
    assert!(!doc_text(&mut a).join("\n").contains("Be brief."));
}

#[test]
fn message_numbers_and_header_times_in_local_time_at_one_precision() {
    let mut o = Options::new(now());
    o.time = spool::app::TimeFmt::fixed(chrono::FixedOffset::east_opt(2 * 3600).unwrap());
    let mut a = App::new(o);
    a.update(Action::Resize(120, 40));
    a.update(Action::Rows(sample()));
    a.settle();
    open_tools(&mut a);
    let s = screen(&mut a, 120, 40);
    // Stored 07:00 / 08:00 UTC, shown at +02:00, to the minute, like the messages below.
    assert!(
        s.contains("created 2026-03-20 11:00 · updated 2026-03-20 12:00"),
        "{s}"
    );
    assert!(s.contains("▌ you #1 · 2026-03-20 11:01"), "{s}");
    assert!(!s.contains("T09:") && !s.contains(":00Z"), "{s}");
}

#[test]
fn a_loop_system_prompt_is_one_collapsed_line_like_the_other_stores() {
    use spool::store::{Span, Store, loop_store::LoopStore};
    // The demo's 62-round Loop session records its prompt as checkpoints only.
    let demo = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/demo/loop");
    let store = LoopStore::new(&demo);
    let id = "761f2baa-2426-459d-9b26-029e4cce8d41";
    let whole = store.transcript(id, Span::All).unwrap();
    assert!(matches!(
        whole.entries.first(),
        Some(spool::model::Entry::SystemPrompt { .. })
    ));
    // A page from the end does not start at the beginning: no prompt in it.
    let page = store.transcript(id, Span::LastRounds(3)).unwrap();
    assert!(
        !page
            .entries
            .iter()
            .any(|e| matches!(e, spool::model::Entry::SystemPrompt { .. }))
    );
    let mut a = loaded_app();
    let fx = a.update(Action::Down);
    answer_with(&mut a, &fx, |_| whole.clone());
    a.update(Action::Open);
    a.update(Action::Top);
    // The "left off" card sits above the transcript, not in it: the document opens with
    // the system prompt.
    let rows = doc_text(&mut a);
    assert!(
        rows[1].starts_with("▸ system prompt · ") && rows[1].ends_with(" lines)"),
        "{:?}",
        &rows[..4]
    );
    assert!(rows[3].starts_with("▌ you #0"), "{:?}", &rows[..4]);
}

#[test]
fn counts_of_one_are_singular_on_screen() {
    let mut a = loaded_app();
    search(&mut a, "flaky");
    let fx = a.update(Action::SearchAccept);
    answer_with(&mut a, &fx, tools);
    let s = screen(&mut a, 120, 40);
    assert!(s.contains(" 1 session "), "{s}");
    assert!(s.contains("result · 1 line "), "{s}");
    assert!(!s.contains(" 1 sessions") && !s.contains(" 1 lines"), "{s}");
}
