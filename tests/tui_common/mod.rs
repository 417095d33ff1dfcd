//! Shared helpers for the browser tests: fixed "now", summaries built in memory, a fake
//! transcript and window, and an App driven with actions only.
#![allow(dead_code)]

use std::sync::Arc;

use chrono::{DateTime, TimeZone, Utc};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use spool::app::{Action, App, Effect, Loaded, Options};
use spool::model::{Entry, Message, Role, SessionSummary, StoreKind, ToolCall, Transcript, Window};
use spool::ui::{self, Theme};

pub fn now() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 3, 20, 12, 0, 0).unwrap()
}

pub fn hours_ago(h: i64) -> Option<DateTime<Utc>> {
    Some(now() - chrono::Duration::hours(h))
}

pub fn row(kind: StoreKind, id: &str, title: &str, hours: i64) -> SessionSummary {
    let mut s = SessionSummary::new(kind, id, format!("/data/{kind}/sessions/{id}"));
    s.set_title(title);
    s.cwd = Some(format!("/home/u/src/proj-{}", kind.as_str()).into());
    s.created_at = hours_ago(hours + 1);
    s.updated_at = hours_ago(hours);
    s.messages = 4;
    s.has_user_message = true;
    s.set_first_prompt(format!("prompt for {title}"));
    s
}

/// Ten sessions across the three stores, one pinned, one unread, one error row.
pub fn sample() -> Vec<SessionSummary> {
    let mut v = vec![
        row(StoreKind::Loop, "3f6b2c1e", "Fix the flaky parser test", 2),
        row(
            StoreKind::Loom,
            "20260314-091502",
            "Refactor session loader",
            5,
        ),
        row(
            StoreKind::Harness,
            "Qm3xT8vLk2pR9aZc",
            "Write the release notes",
            30,
        ),
        row(
            StoreKind::Loop,
            "7a1d0e44",
            "日本語のタイトル 🎉 wide chars",
            50,
        ),
        row(
            StoreKind::Loom,
            "20260301-101010",
            "Investigate memory leak",
            200,
        ),
        row(
            StoreKind::Harness,
            "Zz9yX8wV7uT6sR5q",
            "Plan the database migration",
            800,
        ),
    ];
    v[1].pinned_at = hours_ago(1);
    v[0].unread = true;
    v[2].set_badges(["cwd missing"]);
    v.push(SessionSummary::error_row(
        StoreKind::Loom,
        "20260302-000000",
        "/data/loom/sessions/20260302-000000.jsonl",
        "line 3 is not valid JSON",
    ));
    let mut archived = row(StoreKind::Loop, "aaaa0001", "Old archived work", 3);
    archived.archived = true;
    v.push(archived);
    let mut empty = row(StoreKind::Loop, "eeee0001", "(empty)", 4);
    empty.has_user_message = false;
    v.push(empty);
    v
}

pub fn app() -> App {
    let mut a = App::new(Options::new(now()));
    a.update(Action::Resize(120, 32));
    a
}

pub fn loaded_app() -> App {
    let mut a = app();
    a.update(Action::Rows(sample()));
    a.settle();
    a
}

pub fn titles(a: &App) -> Vec<String> {
    a.list
        .keys(0, a.list.len())
        .iter()
        .map(|k| a.list.get(k).unwrap().title().to_string())
        .collect()
}

pub fn selected_id(a: &App) -> String {
    a.selected().map(|k| k.1.clone()).unwrap_or_default()
}

/// Type a query into the search bar and wait for the matcher.
pub fn search(a: &mut App, q: &str) {
    a.update(Action::FocusSearch);
    for c in q.chars() {
        a.update(Action::SearchInput(c));
    }
    a.settle();
}

pub fn msg(role: Role, text: &str, minute: u32) -> Message {
    let mut m = Message::new(role, text);
    m.timestamp = Some(Utc.with_ymd_and_hms(2026, 3, 20, 9, minute, 0).unwrap());
    m
}

pub fn transcript(s: &SessionSummary) -> Transcript {
    let mut u = msg(Role::User, "Why does the parser test fail on CI?", 0);
    u.index = Some(0);
    let mut a = msg(Role::Assistant, "Let me look at the test.", 1);
    a.index = Some(1);
    a.thinking = vec!["The failure is timing related.\nCheck the clock.".into()];
    a.model = Some("anthropic/claude".into());
    a.tool_calls = vec![ToolCall {
        id: "call_1".into(),
        name: "read_file".into(),
        arguments: serde_json::json!({"path": "tests/parser.rs"}),
    }];
    let mut t = msg(Role::Tool, "line 1\nline 2\nline 3\nline 4\nline 5", 2);
    t.index = Some(2);
    t.tool_call_id = Some("call_1".into());
    let mut e = msg(Role::Tool, "permission denied", 3);
    e.is_error = true;
    e.tool_call_id = Some("orphan".into());
    let mut a2 = msg(
        Role::Assistant,
        "The test depends on \u{1b}[31mwall-clock\u{1b}[0m time.",
        4,
    );
    a2.index = Some(4);
    Transcript {
        summary: s.clone(),
        entries: vec![
            Entry::Message(Box::new(u)),
            Entry::Message(Box::new(a)),
            Entry::Message(Box::new(t)),
            Entry::Message(Box::new(e)),
            Entry::Compaction {
                summary: "Earlier: set up the project.".into(),
                timestamp: Some(Utc.with_ymd_and_hms(2026, 3, 20, 9, 3, 30).unwrap()),
            },
            Entry::Message(Box::new(a2)),
        ],
        total_rounds: 3,
        first_round: 2,
        warnings: vec![],
        todos: None,
    }
}

pub fn window(s: &SessionSummary) -> Window {
    let mut v = Message::inserted(Role::User, "Summary of the earlier conversation: set up.");
    v.note = Some("compaction summary".into());
    Window {
        summary: s.clone(),
        messages: vec![
            Message::new(Role::System, "You are a coding agent."),
            v,
            msg(Role::User, "Why does the parser test fail on CI?", 0),
            msg(Role::Assistant, "It depends on wall-clock time.", 4),
        ],
        system_note: Some("reconstructed".into()),
        warnings: vec![],
        omitted: 0,
        omitted_tokens: 0,
    }
}

/// Answer the newest load effect the way the loader would.
pub fn answer(a: &mut App, fx: &[Effect]) {
    for f in fx {
        if let Effect::Load {
            token,
            summary,
            view,
            ..
        } = f
        {
            let content = match view {
                spool::app::View::Transcript => Loaded::Transcript(Arc::new(transcript(summary))),
                spool::app::View::Window => Loaded::Window(Arc::new(window(summary))),
                spool::app::View::Raw => Loaded::Raw(
                    Arc::new(
                        "{\"role\":\"user\",\"content\":\"hi\"}\n{\"role\":\"assistant\"}".into(),
                    ),
                    false,
                ),
            };
            a.update(Action::Loaded {
                token: *token,
                content,
            });
        }
    }
}

pub fn render(a: &mut App, w: u16, h: u16, theme: &Theme) -> Terminal<TestBackend> {
    a.update(Action::Resize(w, h));
    let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
    t.draw(|f| ui::draw(f, a, theme)).unwrap();
    t
}

pub fn screen(a: &mut App, w: u16, h: u16) -> String {
    let t = render(a, w, h, &Theme::mono());
    t.backend().to_string()
}
