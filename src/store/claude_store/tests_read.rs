//! The contract's examples (claude-code.md section 10) with their derived values asserted
//! exactly, and the reading rules of sections 3-5 and 7-8 on small hand-made files.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::*;
use crate::model::{Entry, Role, rfc3339};
use crate::store::Store;

pub const A: &str = "5b0f6c1e-8d52-4c3a-9a41-2f7d3e9b6a10";
pub const B: &str = "9d2e7a44-1c3b-4f5e-8a6d-0b7c2e4f9a31";

/// A Claude root with the contract fixtures, every file aged (not growing).
pub fn fixture_root() -> (tempfile::TempDir, ClaudeStore) {
    let d = tempfile::tempdir().unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/claude/projects");
    crate::store::test_fixtures::copy_settled(&src, &d.path().join("claude/projects"));
    let store = ClaudeStore::new(&d.path().join("claude"), &d.path().join("state"));
    (d, store)
}

/// Set a file's mtime to 2026-03-16 (settled, not live).
pub fn age(p: &Path) {
    crate::store::test_fixtures::settle(p);
}

/// A store holding one session `id` in project dir `proj` with these lines.
pub fn one(id: &str, proj: &str, lines: &[Value]) -> (tempfile::TempDir, ClaudeStore, PathBuf) {
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    raw_one(id, proj, text.as_bytes())
}

pub fn raw_one(id: &str, proj: &str, bytes: &[u8]) -> (tempfile::TempDir, ClaudeStore, PathBuf) {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("claude/projects").join(proj);
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(format!("{id}.jsonl"));
    std::fs::write(&p, bytes).unwrap();
    age(&p);
    let store = ClaudeStore::new(&d.path().join("claude"), &d.path().join("state"));
    (d, store, p)
}

pub fn row(store: &ClaudeStore, id: &str) -> SessionSummary {
    let c = store.discover().into_iter().find(|c| c.id == id).unwrap();
    store.summarize(&c).unwrap()
}

pub fn user(uuid: &str, parent: Option<&str>, text: &str, ts: &str) -> Value {
    json!({"parentUuid":parent,"isSidechain":false,"cwd":"/w","sessionId":"s1","type":"user",
           "message":{"role":"user","content":text},"uuid":uuid,"timestamp":ts})
}

pub fn asst(uuid: &str, parent: &str, id: &str, text: &str, ts: &str) -> Value {
    json!({"parentUuid":parent,"isSidechain":false,"cwd":"/w","sessionId":"s1","type":"assistant",
           "message":{"id":id,"role":"assistant","model":"claude-sonnet-4-6",
                      "content":[{"type":"text","text":text}],"stop_reason":"end_turn"},
           "uuid":uuid,"timestamp":ts})
}

fn messages(t: &Transcript) -> Vec<(String, String)> {
    t.messages()
        .map(|m| (m.role.as_str().to_string(), m.text.clone()))
        .collect()
}

#[test]
fn example_a_listing_fields() {
    let (_d, store) = fixture_root();
    let s = row(&store, A);
    assert_eq!(s.title(), "router trailing slash");
    assert_eq!(s.first_prompt(), "why does router_test.go fail?");
    assert_eq!(s.summary(), "");
    assert_eq!(s.messages, 6);
    assert_eq!(rfc3339(s.created_at.unwrap()), "2026-03-14T09:15:20.101Z");
    assert_eq!(rfc3339(s.updated_at.unwrap()), "2026-03-14T09:16:40.552Z");
    assert_eq!(s.cwd.as_deref(), Some("/home/user/projects/tinyhttp"));
    assert_eq!(s.model.as_deref(), Some("claude-sonnet-4-6"));
    assert!(s.badges().any(|b| b == "branch main"), "{:?}", s.badges());
    assert!(s.read_only && s.error().is_none() && !s.unread && !s.pinned());
    assert_eq!(
        project_name(s.cwd.as_deref().unwrap()),
        "-home-user-projects-tinyhttp"
    );
}

#[test]
fn example_a_transcript_merges_chunks_and_pairs_tools() {
    let (_d, store) = fixture_root();
    let t = store.transcript(A, Span::All).unwrap();
    let msgs: Vec<_> = t.messages().collect();
    // 2 prompts, 4 assistant messages (msg_01A's two lines are one), 2 tool results.
    assert_eq!(msgs.len(), 8);
    assert_eq!(
        msgs[1].thinking,
        vec!["Run the test suite first.".to_string()]
    );
    assert_eq!(msgs[1].tool_calls[0].id, "toolu_01");
    assert_eq!(msgs[2].tool_call_id.as_deref(), Some("toolu_01"));
    assert_eq!(msgs[2].tool_name.as_deref(), Some("Bash"));
    assert!(msgs[2].text.starts_with("--- FAIL: TestRouteParams"));
    assert_eq!(msgs[6].tool_name.as_deref(), Some("Edit"));
    assert!(
        msgs.iter().all(|m| m.note.is_none()),
        "every call is answered"
    );
    // turn_duration (line 7) is on the chain but hidden; titles are not messages.
    assert!(!t.entries.iter().any(|e| matches!(e, Entry::Notice(_))));
    assert_eq!(t.total_rounds, 2);
    assert!(t.warnings.is_empty());
    // The window of a session without compaction is the whole chain.
    assert_eq!(store.window(A).unwrap().messages.len(), 8);
}

#[test]
fn example_b_listing_fields() {
    let (_d, store) = fixture_root();
    let all = store.list();
    assert_eq!(all.len(), 2, "the subagent is not a top-level row");
    let s = row(&store, B);
    assert_eq!(s.title(), "Token-bucket rate limiter for the public API");
    assert_eq!(
        s.first_prompt(),
        "add a token-bucket rate limiter to the public endpoints"
    );
    assert!(
        s.summary()
            .contains("Goal: token-bucket limiter on public routes.")
    );
    assert_eq!(s.messages, 5);
    assert_eq!(rfc3339(s.updated_at.unwrap()), "2026-03-15T10:21:05Z");
    assert_eq!(s.cwd.as_deref(), Some("/home/user/projects/acme_api.v2"));
    assert_eq!(
        project_name("/home/user/projects/acme_api.v2"),
        "-home-user-projects-acme-api-v2"
    );
    assert_eq!(s.model.as_deref(), Some("claude-opus-4-6"));
    for b in [
        "branch feat/ratelimit",
        "1 subagent",
        "1 unreadable line",
        "truncated",
    ] {
        assert!(s.badges().any(|x| x == b), "{b}: {:?}", s.badges());
    }
}

#[test]
fn example_b_transcript_and_window() {
    let (_d, store) = fixture_root();
    let t = store.transcript(B, Span::All).unwrap();
    let m = messages(&t);
    assert_eq!(
        m.iter()
            .filter(|(r, _)| r == "user")
            .map(|(_, t)| t.as_str())
            .collect::<Vec<_>>(),
        [
            "/model opus",
            "add a token-bucket rate limiter to the public endpoints",
            "now add tests"
        ]
    );
    let notices: Vec<&str> = t
        .entries
        .iter()
        .filter_map(|e| match e {
            Entry::Notice(n) => Some(n.as_str()),
            _ => None,
        })
        .collect();
    assert!(notices.contains(&"context compacted (manual, 48211 tokens before)"));
    assert!(notices.contains(&"interrupted by the user"));
    // The subagent is a nested session right under the result of the call that spawned it,
    // with its own transcript; its messages do not take the parent's positions.
    let at = t
        .entries
        .iter()
        .position(|e| matches!(e, Entry::Nested(_)))
        .expect("the subagent is nested in the transcript");
    let Entry::Message(result) = &t.entries[at - 1] else {
        panic!("not under the call's result")
    };
    assert_eq!(result.tool_call_id.as_deref(), Some("toolu_11"));
    let Entry::Nested(child) = &t.entries[at] else {
        unreachable!()
    };
    assert_eq!(child.key, "a3f9c1e27b5d04e81");
    assert!(
        child
            .note
            .starts_with("subagent a3f9c1e27b5d04e81: 2 messages")
    );
    let texts: Vec<(&str, Option<usize>)> = child
        .entries
        .iter()
        .filter_map(|e| match e {
            Entry::Message(m) => Some((m.text.as_str(), m.index)),
            _ => None,
        })
        .collect();
    assert_eq!(
        texts,
        [
            (
                "List every public route and the file that registers it.",
                None
            ),
            (
                "Public routes are registered in api/routes.go (12 routes) and api/health.go (1 route).",
                None
            )
        ]
    );
    assert!(
        t.entries
            .iter()
            .any(|e| matches!(e, Entry::Compaction { .. }))
    );
    assert!(t.warnings.iter().any(|w| w.contains("cut off")));
    // The window: the summary, then lines 10-12 (the interruption marker is not a message).
    let w = store.window(B).unwrap();
    let roles: Vec<(&str, bool)> = w
        .messages
        .iter()
        .map(|m| (m.role.as_str(), m.is_virtual))
        .collect();
    assert_eq!(
        roles,
        [("user", true), ("user", false), ("assistant", false)]
    );
    assert!(
        w.messages[0]
            .text
            .starts_with("This session is being continued")
    );
    assert_eq!(w.messages[1].text, "now add tests");
}

#[test]
fn title_precedence_and_foreign_ids() {
    let base = [user(
        "u1",
        None,
        "first prompt here",
        "2026-03-14T09:00:00Z",
    )];
    let with = |extra: Vec<Value>| {
        let mut l = base.to_vec();
        l.extend(extra);
        let (_d, store, _) = one("s1", "-w", &l);
        row(&store, "s1").title().to_string()
    };
    assert_eq!(with(vec![]), "first prompt here");
    assert_eq!(
        with(vec![
            json!({"type":"summary","summary":"Old summary","leafUuid":"elsewhere"})
        ]),
        "Old summary"
    );
    assert_eq!(
        with(vec![json!({"type":"agent-name","agentName":"agent n"})]),
        "agent n"
    );
    assert_eq!(
        with(vec![
            json!({"type":"custom-title","customTitle":"mine","sessionId":"s1"}),
            json!({"type":"ai-title","aiTitle":"generated later","sessionId":"s1"}),
        ]),
        "mine"
    );
    assert_eq!(
        with(vec![
            json!({"type":"custom-title","customTitle":"other session's","sessionId":"zzz"}),
            json!({"type":"ai-title","aiTitle":"generated","sessionId":"s1"}),
        ]),
        "generated"
    );
    let long = "word ".repeat(40);
    let t = with(vec![
        json!({"type":"custom-title","customTitle":format!("a\u{7}b\n{long}")}),
    ]);
    assert!(
        t.starts_with("a b word") && t.ends_with('…') && t.chars().count() == 100,
        "{t}"
    );
    // Only a slash command: it is the title; nothing at all: "(no prompt)".
    let (_d, store, _) = one(
        "s2",
        "-w",
        &[user(
            "u1",
            None,
            "<command-name>/usage</command-name>",
            "2026-03-14T09:00:00Z",
        )],
    );
    assert_eq!(row(&store, "s2").title(), "/usage");
    let (_d, store, _) = one(
        "s3",
        "-w",
        &[json!({"type":"file-history-snapshot","snapshot":{}})],
    );
    let s = row(&store, "s3");
    assert_eq!(s.title(), "(no prompt)");
    assert!(s.is_empty());
}

#[test]
fn sessions_index_is_a_title_fallback_only() {
    let (d, store, _) = one(
        "s1",
        "-w",
        &[json!({"type":"file-history-snapshot","snapshot":{}})],
    );
    let idx = d.path().join("claude/projects/-w/sessions-index.json");
    std::fs::write(
        &idx,
        r#"{"version":1,"entries":[{"sessionId":"s1","summary":"From the index"}]}"#,
    )
    .unwrap();
    assert_eq!(row(&store, "s1").title(), "From the index");
    std::fs::write(&idx, "{broken").unwrap();
    assert_eq!(row(&store, "s1").title(), "(no prompt)");
}

#[test]
fn streamed_cumulative_chunks_keep_the_longer_block() {
    let mut a1 = asst("a1", "u1", "msg_1", "Hel", "2026-03-14T09:00:01Z");
    a1["message"]["stop_reason"] = Value::Null;
    let a2 = asst("a2", "a1", "msg_1", "Hello world", "2026-03-14T09:00:02Z");
    let (_d, store, _) = one(
        "s1",
        "-w",
        &[user("u1", None, "hi", "2026-03-14T09:00:00Z"), a1, a2],
    );
    let t = store.transcript("s1", Span::All).unwrap();
    assert_eq!(
        messages(&t),
        [
            ("user".into(), "hi".into()),
            ("assistant".into(), "Hello world".into())
        ]
    );
    assert_eq!(row(&store, "s1").messages, 2);
}

#[test]
fn rewind_branch_follows_the_active_leaf() {
    let lines = [
        user("u1", None, "first", "2026-03-14T09:00:00Z"),
        asst("a1", "u1", "m1", "answer one", "2026-03-14T09:00:01Z"),
        user("u2", Some("a1"), "abandoned", "2026-03-14T09:00:02Z"),
        user("u3", Some("a1"), "edited prompt", "2026-03-14T09:00:03Z"),
        asst("a3", "u3", "m3", "answer three", "2026-03-14T09:00:04Z"),
    ];
    let (_d, store, _) = one("s1", "-w", &lines);
    let t = store.transcript("s1", Span::All).unwrap();
    let texts: Vec<String> = messages(&t).into_iter().map(|(_, t)| t).collect();
    assert_eq!(
        texts,
        ["first", "answer one", "edited prompt", "answer three"]
    );
    assert!(
        t.entries
            .iter()
            .any(|e| matches!(e, Entry::Notice(n) if n == "1 alternative branch not shown"))
    );
}

#[test]
fn missing_parent_is_unlinked_and_no_uuids_is_file_order() {
    let lines = [
        user("u1", None, "first", "2026-03-14T09:00:00Z"),
        asst("a9", "lost", "m9", "orphan", "2026-03-14T09:00:01Z"),
        user("u2", Some("u1"), "second", "2026-03-14T09:00:02Z"),
    ];
    let (_d, store, _) = one("s1", "-w", &lines);
    let t = store.transcript("s1", Span::All).unwrap();
    let texts: Vec<String> = messages(&t).into_iter().map(|(_, t)| t).collect();
    assert_eq!(texts, ["first", "second", "orphan"]);
    let plain = [
        json!({"type":"user","message":{"role":"user","content":"a"}}),
        json!({"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"b"}]}}),
    ];
    let (_d, store, _) = one("s2", "-w", &plain);
    let t = store.transcript("s2", Span::All).unwrap();
    assert_eq!(messages(&t).len(), 2);
}

#[test]
fn fork_parent_and_launch_dir_and_internal_id() {
    let mut u = user("u1", None, "go", "2026-03-14T09:00:00Z");
    u["forkedFrom"] = json!({"sessionId":"parent-1","messageUuid":"u1"});
    u["cwd"] = json!("/repo/sub");
    let mut u2 = user("u2", Some("u1"), "more", "2026-03-14T09:00:01Z");
    u2["cwd"] = json!("/repo");
    let (_d, store, _) = one("s1", "-repo", &[u, u2]);
    let s = row(&store, "s1");
    assert_eq!(s.forked_from(), Some("claude:parent-1"));
    // The first cwd that owns the project dir, not the first cwd.
    assert_eq!(s.cwd.as_deref(), Some("/repo"));
    assert!(!s.badges().any(|b| b == "internal id s1"));
    let (_d, store, _) = one(
        "other",
        "-w",
        &[user("u1", None, "x", "2026-03-14T09:00:00Z")],
    );
    assert!(row(&store, "other").badges().any(|b| b == "internal id s1"));
    assert!(super::discover::owns(
        &format!("/{}", "a".repeat(250)),
        &format!("-{}-xyz", "a".repeat(199))
    ));
}

#[test]
fn persisted_output_is_read_only_from_the_sessions_tool_results() {
    let call = json!({"parentUuid":"u1","isSidechain":false,"type":"assistant","uuid":"a1","timestamp":"2026-03-14T09:00:01Z",
        "message":{"id":"m1","role":"assistant","content":[{"type":"tool_use","id":"toolu_9","name":"Bash","input":{}}]}});
    let result = json!({"parentUuid":"a1","isSidechain":false,"type":"user","uuid":"u2","timestamp":"2026-03-14T09:00:02Z",
        "message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_9","content":"<persisted-output>preview</persisted-output>"}]},
        "toolUseResult":{"persistedOutputPath":"/etc/passwd"}});
    let (d, store, _) = one(
        "s1",
        "-w",
        &[
            user("u1", None, "run", "2026-03-14T09:00:00Z"),
            call,
            result,
        ],
    );
    let t = store.transcript("s1", Span::All).unwrap();
    let tool = t.messages().find(|m| m.role == Role::Tool).unwrap();
    assert!(
        tool.text.contains("preview"),
        "missing side file: the inline preview"
    );
    let side = d.path().join("claude/projects/-w/s1/tool-results");
    std::fs::create_dir_all(&side).unwrap();
    std::fs::write(side.join("toolu_9.txt"), "the full output").unwrap();
    let t = store.transcript("s1", Span::All).unwrap();
    let tool = t.messages().find(|m| m.role == Role::Tool).unwrap();
    assert_eq!(tool.text, "the full output");
}

#[test]
fn last_rounds_read_from_the_end() {
    let mut lines = Vec::new();
    let mut parent: Option<String> = None;
    let pad = "x".repeat(2000);
    for i in 0..400 {
        let u = format!("u{i}");
        let a = format!("a{i}");
        lines.push(user(
            &u,
            parent.as_deref(),
            &format!("prompt {i} {pad}"),
            "2026-03-14T09:00:00Z",
        ));
        lines.push(asst(
            &a,
            &u,
            &format!("m{i}"),
            &format!("answer {i}"),
            "2026-03-14T09:00:01Z",
        ));
        parent = Some(a);
    }
    let (_d, store, p) = one("s1", "-w", &lines);
    assert!(std::fs::metadata(&p).unwrap().len() > 3 * 256 * 1024);
    let sdir = p.with_file_name("s1");
    let cx = Ctx {
        session_dir: &sdir,
        subagents: &[],
    };
    let (entries, _, first, whole) = window::last_rounds(&p, 2, &cx).unwrap();
    assert!(!whole, "a tail read does not reach the start of the file");
    assert!(first > 0);
    let t: Vec<String> = entries
        .iter()
        .filter_map(|e| match e {
            Entry::Message(m) => Some(m.text.chars().take(12).collect()),
            _ => None,
        })
        .collect();
    assert_eq!(
        t,
        ["prompt 398 x", "answer 398", "prompt 399 x", "answer 399"]
    );
    let tr = store.transcript("s1", Span::LastRounds(2)).unwrap();
    assert_eq!(tr.messages().count(), 4);
}

#[test]
fn state_lives_outside_the_store_and_delete_is_refused() {
    let (d, store) = fixture_root();
    store.set_pinned(A, true).unwrap();
    store.set_archived(A, true).unwrap();
    store.rename(A, "renamed in spool").unwrap();
    store.set_unread(A, true).unwrap();
    let s = row(&store, A);
    assert!(s.pinned() && s.archived && s.unread);
    assert_eq!(s.title(), "renamed in spool");
    store.set_unread(A, false).unwrap();
    assert!(!row(&store, A).unread);
    // The file the search index stats to notice a rename is the one written.
    let state_file = store.state_file(A);
    assert_eq!(
        state_file,
        d.path().join(format!("state/claude-code/{A}.json"))
    );
    let state: Value = serde_json::from_slice(&std::fs::read(&state_file).unwrap()).unwrap();
    assert_eq!(state["version"], 1);
    assert_eq!(state["read_upto"], "2026-03-14T09:16:40.552Z");
    let e = store.delete(A).unwrap_err().to_string();
    assert!(
        e.contains("never writes inside") && e.contains("archive"),
        "{e}"
    );
    let e = store.fork(A, None).unwrap_err().to_string();
    assert!(
        e.contains(&format!("claude --resume {A} --fork-session")),
        "{e}"
    );
    // Nothing but the transcripts the fixtures put there exists under the Claude root.
    let mut files = Vec::new();
    walk(&d.path().join("claude"), &mut files);
    assert_eq!(files.len(), 3, "{files:?}");
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        if e.file_type().unwrap().is_dir() {
            walk(&e.path(), out);
        } else {
            out.push(e.path());
        }
    }
}

#[test]
fn a_continuation_names_the_file_its_summary_covers() {
    let (d, store, _) = one(
        "old",
        "-w",
        &[user("u-old", None, "first part", "2026-03-14T09:00:00Z")],
    );
    let next = [
        json!({"type":"summary","summary":"Earlier work","leafUuid":"u-old"}),
        user("u-new", None, "second part", "2026-03-14T10:00:00Z"),
    ];
    let text: String = next.iter().map(|l| format!("{l}\n")).collect();
    let p = d.path().join("claude/projects/-w/new.jsonl");
    std::fs::write(&p, text).unwrap();
    age(&p);
    let t = store.transcript("new", Span::All).unwrap();
    assert!(
        matches!(&t.entries[0], Entry::Notice(n) if n == "continued from claude:old"),
        "{:?}",
        t.entries[0]
    );
    let t = store.transcript("old", Span::All).unwrap();
    assert!(!t.entries.iter().any(|e| matches!(e, Entry::Notice(_))));
}
