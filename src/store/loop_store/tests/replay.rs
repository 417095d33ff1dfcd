//! Context-window replay (section 6), including the contract's worked example.

use serde_json::json;

use super::*;
use crate::model::{Entry, Role};
use crate::store::Span;

#[test]
fn example_1_replays_unchanged() {
    let (_d, store) = fixture();
    let w = store.window(E1).unwrap();
    assert_eq!(w.messages.len(), 6);
    assert!(w.messages.iter().all(|m| !m.is_virtual));
    assert_eq!(w.system_note, None);
    assert!(w.warnings.is_empty());
}

fn checkpoint(first: u64, count: u64, summary: &str) -> serde_json::Value {
    json!({"id": "aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee", "firstKeptMessageIndex": first,
        "historyMessageCount": count, "summary": summary, "timestamp": 1773481000000u64,
        "provider": "openai", "model": "gpt-5.5",
        "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2}})
}

#[test]
fn worked_example_compaction() {
    let (d, store) = fixture();
    edit_header(&col(&d).join(E1), |h| {
        h.insert("compactions".into(), json!([checkpoint(4, 6, "S")]));
    });
    let w = store.window(E1).unwrap();
    assert_eq!(w.messages.len(), 3);
    assert_eq!(w.messages[0].role, Role::User);
    assert!(w.messages[0].is_virtual && w.messages[0].index.is_none());
    assert_eq!(
        w.messages[0].text,
        "The conversation history before this point was compacted into the following summary:\n\n<summary>\nS\n</summary>"
    );
    assert_eq!(
        (w.messages[1].index, w.messages[2].index),
        (Some(4), Some(5))
    );
    // The transcript still shows all 6, with a marker before index 4.
    let t = store.transcript(E1, Span::All).unwrap();
    assert_eq!(t.messages().count(), 6);
    let pos = t
        .entries
        .iter()
        .position(|e| matches!(e, Entry::Compaction { .. }))
        .unwrap();
    assert_eq!(pos, 4);
    match &t.entries[5] {
        Entry::Message(m) => assert_eq!(m.index, Some(4)),
        other => panic!("{other:?}"),
    }
    assert_eq!(row(&store, E1).summary(), "S");
}

#[test]
fn tool_repair_and_failed_assistants() {
    let (d, store) = fixture();
    let lines = [
        user("go"),
        assistant("", &[("c1", "bash"), ("c2", "read")], "toolUse"),
        tool_result("c1"),
        assistant("oops", &[], "error"),
        user("again"),
        assistant("done", &[], "stop"),
    ];
    make_v3(&col(&d), N1, header(N1, "/tmp"), &lines);
    let w = store.window(N1).unwrap();
    let shape: Vec<(Option<usize>, &str, bool)> = w
        .messages
        .iter()
        .map(|m| (m.index, m.role.as_str(), m.is_virtual))
        .collect();
    assert_eq!(
        shape,
        [
            (Some(0), "user", false),
            (Some(1), "assistant", false),
            (Some(2), "tool", false),
            (None, "tool", true),
            (Some(4), "user", false),
            (Some(5), "assistant", false)
        ]
    );
    let r = &w.messages[3];
    assert_eq!(
        (r.text.as_str(), r.tool_call_id.as_deref(), r.is_error),
        ("No result provided", Some("c2"), true)
    );
    assert_eq!(r.tool_name.as_deref(), Some("read"));
}

#[test]
fn repairs_follow_their_assistant_into_a_compaction() {
    let (d, store) = fixture();
    let lines = [
        user("a"),
        assistant("", &[("c1", "bash")], "toolUse"),
        user("b"),
        assistant("ok", &[], "stop"),
    ];
    let mut h = header(N1, "/tmp");
    h["compactions"] = json!([checkpoint(2, 4, "sum")]);
    make_v3(&col(&d), N1, h, &lines);
    let w = store.window(N1).unwrap();
    // The repair is attributed to message 1 (< 2), so it is cut with it.
    let idx: Vec<_> = w.messages.iter().map(|m| m.index).collect();
    assert_eq!(idx, [None, Some(2), Some(3)]);
}

#[test]
fn runtime_contexts_are_placed_by_user_ordinal() {
    let (d, store) = fixture();
    let mut second = user("second");
    second["content"] = json!([{"type": "text", "text": "second"}]);
    let lines = [
        user("first"),
        assistant("a", &[], "stop"),
        second,
        assistant("b", &[], "stop"),
    ];
    let mut h = header(N1, "/tmp");
    h["runtimeContexts"] = json!([
        {"userTurn": 0, "content": "CTX0", "timestamp": 5, "placement": "user"},
        {"userTurn": 1, "content": "CTX1", "timestamp": 6}
    ]);
    make_v3(&col(&d), N1, h, &lines);
    let w = store.window(N1).unwrap();
    assert_eq!(w.messages[0].text, "CTX0\n\nfirst");
    assert_eq!(w.messages[0].index, Some(0));
    assert_eq!(w.messages[2].text, "second");
    assert_eq!(
        (
            w.messages[3].text.as_str(),
            w.messages[3].index,
            w.messages[3].is_virtual
        ),
        ("CTX1", None, true)
    );
    // Array content gets a leading text block.
    let mut h = header(N1, "/tmp");
    h["runtimeContexts"] =
        json!([{"userTurn": 1, "content": "CTX1", "timestamp": 6, "placement": "user"}]);
    make_v3(&col(&d), N1, h, &lines);
    let w = store.window(N1).unwrap();
    assert_eq!(w.messages[2].text, "CTX1\nsecond");
    assert_eq!(w.messages.len(), 4);
}

#[test]
fn system_prompt_is_reconstructed_from_checkpoints() {
    let (d, store) = fixture();
    let lines = [user("a"), assistant("b", &[], "stop"), user("c")];
    let mut h = header(N1, "/tmp");
    h["systemPromptCheckpoints"] = json!([
        {"messageCount": 1, "timestamp": 1, "sections": {"identity": "<identity>\nI\n</identity>", "preamble": "P", "tools": "<tools>\nT\n</tools>"}},
        {"messageCount": 3, "timestamp": 2, "sections": {"identity": null, "skills": "<skills>\nS\n</skills>", "tools": "<tools>\nT2\n</tools>"}}
    ]);
    make_v3(&col(&d), N1, h, &lines);
    let w = store.window(N1).unwrap();
    assert_eq!(
        w.system_note.as_deref(),
        Some("system prompt reconstructed from the session's checkpoints (Loop renders it live)")
    );
    let s = &w.messages[0];
    assert_eq!(
        (s.role.clone(), s.is_virtual, s.index),
        (Role::System, true, None)
    );
    assert_eq!(
        s.text,
        "P\n\n<tools>\nT2\n</tools>\n\n<skills>\nS\n</skills>"
    );
    assert_eq!(w.messages.len(), 4);
}

#[test]
fn checkpoints_beyond_the_history_are_ignored_with_a_warning() {
    let (d, store) = fixture();
    let mut h = header(N1, "/tmp");
    h["systemPromptCheckpoints"] =
        json!([{"messageCount": 9, "timestamp": 1, "sections": {"preamble": "P"}}]);
    make_v3(&col(&d), N1, h, &[user("a")]);
    let w = store.window(N1).unwrap();
    assert_eq!(w.system_note, None);
    assert_eq!(w.messages.len(), 1);
    assert_eq!(
        w.warnings,
        ["system prompt checkpoints do not match the history; ignored"]
    );
}
