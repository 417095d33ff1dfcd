//! Unit tests of the Codex store: the contract examples' derived values, lineage (forks,
//! subagents), `.zst` rollouts, legacy files, and every row of the malformed-input table
//! (codex.md 6.1 and 6.2).

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::*;
use crate::model::Entry;

const A: &str = "019ceba0-ae55-7d10-9f2a-4b8e6c1d2a30";
const B: &str = "019ceca8-05e8-7a3d-8e4f-5a6b7c8d9e01";
const C: &str = "019cf111-0000-7000-8000-0000000000c1";

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/codex")
}

/// A Codex home with the contract fixtures, settled (old mtimes).
fn home() -> (tempfile::TempDir, CodexStore) {
    let d = tempfile::tempdir().unwrap();
    crate::store::test_fixtures::copy_settled(&fixtures(), &d.path().join("codex"));
    let s = CodexStore::new(&d.path().join("codex"), &d.path().join("state"));
    (d, s)
}

fn row(s: &CodexStore, id: &str) -> SessionSummary {
    s.list()
        .into_iter()
        .find(|r| r.id == id.into())
        .expect("listed")
}

fn write(root: &Path, rel: &str, lines: &[Value]) -> PathBuf {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&p, text).unwrap();
    crate::store::test_fixtures::settle(&p);
    p
}

fn meta(id: &str, extra: Value) -> Value {
    let mut p =
        json!({"id": id, "timestamp": "2026-03-15T08:00:00Z", "cwd": "/w", "source": "cli"});
    if let (Some(o), Value::Object(e)) = (p.as_object_mut(), extra) {
        o.extend(e);
    }
    json!({"timestamp":"2026-03-15T08:00:00Z","type":"session_meta","payload":p})
}

fn prompt(t: &str) -> Value {
    json!({"timestamp":"2026-03-15T08:00:01Z","type":"event_msg","payload":{"type":"user_message","message":t}})
}

fn answer(t: &str) -> Value {
    json!({"timestamp":"2026-03-15T08:00:02Z","type":"response_item","payload":{"type":"message",
        "role":"assistant","content":[{"type":"output_text","text":t}]}})
}

fn rel(id: &str) -> String {
    format!("sessions/2026/03/15/rollout-2026-03-15T09-00-00-{id}.jsonl")
}

#[test]
fn example_a_derived_values() {
    let (_d, s) = home();
    let a = row(&s, A);
    assert_eq!(a.title(), "router trailing slash");
    assert_eq!(a.messages, 4);
    assert_eq!(a.summary(), "");
    assert_eq!(a.model.as_deref(), Some("gpt-5.5"));
    assert_eq!(a.cwd.as_deref(), Some("/home/user/projects/tinyhttp"));
    assert_eq!(
        a.created_at.map(crate::model::rfc3339).as_deref(),
        Some("2026-03-14T09:15:02.101Z")
    );
    assert_eq!(
        a.updated_at.map(crate::model::rfc3339).as_deref(),
        Some("2026-03-14T09:16:41.022Z")
    );
    assert!(a.badges().any(|b| b == "branch main"), "{:?}", a.badges());
    assert!(a.badges().any(|b| b == "9240 tokens"), "{:?}", a.badges());
    assert!(!a.badges().any(|b| b == "mid-turn" || b == "interrupted"));
    // Pairs: call_A1 (exec_command) and call_A2 (apply_patch), each with its output.
    let t = s.transcript(A, Span::All).unwrap();
    let tools: Vec<(String, Option<String>)> = t
        .messages()
        .filter(|m| m.tool_call_id.is_some())
        .map(|m| (m.tool_call_id.clone().unwrap(), m.tool_name.clone()))
        .collect();
    assert_eq!(
        tools,
        [
            ("call_A1".to_string(), Some("exec_command".to_string())),
            ("call_A2".to_string(), Some("apply_patch".to_string()))
        ]
    );
    // Injected context never shows as a prompt: the user messages are the two typed ones.
    let users: Vec<&str> = t
        .messages()
        .filter(|m| m.role == crate::model::Role::User)
        .map(|m| m.text.as_str())
        .collect();
    assert_eq!(users, ["why does router_test.go fail?", "ok, fix it"]);
    let launch = s.launch(&a).unwrap();
    assert_eq!(launch.id, A);
    assert_eq!(launch.cwd.as_deref(), Some("/home/user/projects/tinyhttp"));
    assert!(!launch.unarchive_first);
}

#[test]
fn example_b_derived_values() {
    let (_d, s) = home();
    let b = row(&s, B);
    assert_eq!(b.title(), "why does router_test.go fail? (fork)");
    assert!(b.archived);
    assert_eq!(b.forked_from(), Some(&*format!("codex:{A}")));
    assert!(
        b.summary()
            .starts_with("Goal: make trailing-slash handling")
    );
    assert_eq!(b.messages, 4);
    for badge in [
        "archived in Codex",
        "2 copied",
        "1 bad line",
        "truncated",
        "mid-turn",
    ] {
        assert!(b.badges().any(|x| x == badge), "{badge}: {:?}", b.badges());
    }
    assert_eq!(b.cwd.as_deref(), Some("/home/user/projects/tinyhttp"));
    assert!(b.badges().any(|b| b == "effort high"));
    let launch = s.launch(&b).unwrap();
    assert_eq!(
        launch.cwd.as_deref(),
        Some("/home/user/projects/tinyhttp/internal")
    );
    assert!(launch.unarchive_first);
    // Copied records are marked; the window starts at the compaction.
    let t = s.transcript(B, Span::All).unwrap();
    let copied = t
        .messages()
        .filter(|m| m.note.as_deref() == Some(&*format!("copied from codex:{A}")))
        .count();
    assert_eq!(copied, 2);
    let w = s.window(B).unwrap();
    let texts: Vec<&str> = w.messages.iter().map(|m| m.text.as_str()).collect();
    assert_eq!(
        texts,
        [
            "keep the old behaviour behind a StrictSlash option instead",
            "Added Router.StrictSlash; the test now sets it to true."
        ]
    );
    assert!(w.messages[0].is_virtual && !w.messages[1].is_virtual);
}

#[test]
fn a_missing_parent_copies_nothing_and_says_so() {
    let (d, s) = home();
    std::fs::remove_file(d.path().join(format!(
        "codex/sessions/2026/03/14/rollout-2026-03-14T10-15-02-{A}.jsonl"
    )))
    .unwrap();
    let b = row(&s, B);
    assert!(
        b.badges().any(|x| x == "parent missing"),
        "{:?}",
        b.badges()
    );
    assert!(!b.badges().any(|x| x.ends_with("copied")));
}

#[test]
fn subagents_are_children_counted_on_the_parent() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path().join("codex");
    let spawn = json!({"timestamp":"2026-03-15T08:00:03Z","type":"event_msg",
        "payload":{"type":"sub_agent_activity","kind":"started","agent_thread_id":C}});
    write(
        &root,
        &rel(A),
        &[meta(A, json!({})), prompt("parent"), spawn],
    );
    let child_src = json!({"source":{"subagent":{"thread_spawn":{"parent_thread_id":A,"depth":1,
        "agent_nickname":"scout"}}}});
    write(
        &root,
        &rel(C),
        &[meta(C, child_src), prompt("look around"), answer("done")],
    );
    let s = CodexStore::new(&root, &d.path().join("state"));
    let rows = s.list();
    let parent = rows.iter().find(|r| r.id == A.into()).unwrap();
    assert!(parent.badges().any(|b| b == "1 subagent"));
    let child = rows.iter().find(|r| r.id == C.into()).unwrap();
    assert_eq!(child.child_of(), Some(&*format!("codex:{A}")));
    assert!(child.badges().any(|b| b == "subagent scout"));
    let f = crate::store::registry::Filter {
        all: true,
        ..Default::default()
    };
    assert!(!f.accepts(child) && f.accepts(parent));
    // A subagent resumes its parent.
    assert_eq!(s.launch(child).unwrap().id, A);
    let t = s.transcript(A, Span::All).unwrap();
    assert!(
        t.entries
            .iter()
            .any(|e| matches!(e, Entry::Notice(n) if *n == format!("subagent codex:{C}")))
    );
}

#[test]
fn exec_and_legacy_rollouts() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path().join("codex");
    write(
        &root,
        &rel(A),
        &[meta(A, json!({"source":"exec"})), prompt("run it")],
    );
    let legacy = [
        json!({"id": C, "timestamp": "2025-04-01T10:00:00Z", "instructions": "", "git": {"branch": "dev"}}),
        json!({"record_type": "state"}),
        json!({"type":"message","role":"user","content":[{"type":"input_text","text":"<environment_context>x</environment_context>"}]}),
        json!({"type":"message","role":"user","content":[{"type":"input_text","text":"legacy prompt"}]}),
        json!({"type":"message","role":"assistant","content":[{"type":"output_text","text":"ok"}]}),
    ];
    write(&root, &rel(C), &legacy);
    let s = CodexStore::new(&root, &d.path().join("state"));
    assert!(row(&s, A).badges().any(|b| b == "exec"));
    let l = row(&s, C);
    assert_eq!((l.title(), l.messages), ("legacy prompt", 2));
    assert!(l.badges().any(|b| b == "branch dev"));
}

#[test]
fn compressed_rollouts_read_like_plain_ones_and_plain_wins() {
    let (d, s) = home();
    let plain = row(&s, A);
    let dir = d.path().join("codex/sessions/2026/03/14");
    let name = format!("rollout-2026-03-14T10-15-02-{A}.jsonl");
    let bytes = std::fs::read(dir.join(&name)).unwrap();
    let zst = zstd::encode_all(&bytes[..], 3).unwrap();
    std::fs::write(dir.join(format!("{name}.zst")), zst).unwrap();
    // Both: the plain file is authoritative.
    assert_eq!(row(&s, A).path(), dir.join(&name));
    std::fs::remove_file(dir.join(&name)).unwrap();
    let z = row(&s, A);
    assert_eq!((z.title(), z.messages), (plain.title(), plain.messages));
    assert!(z.badges().any(|b| b == "compressed"));
    // The last round: "ok, fix it", the patch call, its output and the answer.
    let last = s.transcript(A, Span::LastRounds(1)).unwrap();
    assert_eq!(last.messages().count(), 4);
    assert_eq!(last.messages().next().unwrap().text, "ok, fix it");
    assert!(s.raw(A).unwrap().contains("\"session_meta\""));
}

// ---- the malformed-input table (codex.md 6.2) and parsing rules (6.1) ----

#[test]
fn empty_and_header_only_rollouts_are_empty_sessions() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path().join("codex");
    write(&root, &rel(A), &[]);
    write(&root, &rel(C), &[meta(C, json!({}))]);
    let s = CodexStore::new(&root, &d.path().join("state"));
    for id in [A, C] {
        let r = row(&s, id);
        assert!(r.is_empty() && r.error().is_none(), "{id}");
        assert_eq!(r.title(), "(no message yet)");
        assert_eq!(r.display_title(), "(empty)");
    }
}

#[test]
fn images_are_measured_never_rendered() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path().join("codex");
    let data = format!("data:image/png;base64,{}", "A".repeat(4096));
    let user = json!({"timestamp":"2026-03-15T08:00:01Z","type":"response_item","payload":{"type":"message",
        "role":"user","content":[{"type":"input_text","text":"look"},{"type":"input_image","image_url":data}]}});
    let call = json!({"timestamp":"2026-03-15T08:00:02Z","type":"response_item","payload":{"type":"function_call",
        "name":"view_image","arguments":"{\"path\":\"a.png\"}","call_id":"c1"}});
    let out = json!({"timestamp":"2026-03-15T08:00:03Z","type":"response_item","payload":{"type":"function_call_output",
        "call_id":"c1","output":[{"type":"input_image","image_url":data}]}});
    let mut typed = prompt("look");
    typed["payload"]["images"] = json!([data]);
    write(
        &root,
        &rel(A),
        &[meta(A, json!({})), user, typed, call, out],
    );
    let s = CodexStore::new(&root, &d.path().join("state"));
    let t = s.transcript(A, Span::All).unwrap();
    let json = serde_json::to_string(&t.to_json()).unwrap();
    assert!(!json.contains("AAAAAAAA"), "base64 leaked");
    let u = t
        .messages()
        .find(|m| m.role == crate::model::Role::User)
        .unwrap();
    assert_eq!(
        (u.images[0].mime_type.as_str(), u.images[0].bytes),
        ("image/png", 3072)
    );
    let tool = t.messages().find(|m| m.tool_call_id.is_some()).unwrap();
    assert_eq!(tool.text, "image (3 KB)");
}

#[test]
fn large_files_are_listed_from_head_and_tail_and_paged_from_the_end() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path().join("codex");
    let big = "x".repeat(300 * 1024);
    let mut lines = vec![meta(A, json!({})), prompt("first")];
    for i in 0..32 {
        lines.push(prompt(&format!("q{i} {big}")));
        lines.push(answer(&format!("a{i} {big}")));
    }
    lines.push(prompt("last question"));
    lines.push(answer("last answer"));
    let p = write(&root, &rel(A), &lines);
    assert!(std::fs::metadata(&p).unwrap().len() > read::LIST_FULL_SCAN);
    let parsed = read::read(&p, read::Mode::List).unwrap();
    assert!(!parsed.skimmed.is_empty(), "middle lines were not skimmed");
    let s = CodexStore::new(&root, &d.path().join("state"));
    let r = row(&s, A);
    assert_eq!((r.title(), r.messages), ("first", 1 + 64 + 2));
    let t = s.transcript(A, Span::LastRounds(1)).unwrap();
    let texts: Vec<&str> = t.messages().map(|m| m.text.as_str()).collect();
    assert_eq!(texts, ["last question", "last answer"]);
    assert!(
        t.warnings
            .iter()
            .any(|w| w.starts_with("read from the end"))
    );
}

#[test]
fn duplicate_in_archive_is_one_active_row_with_a_badge() {
    let (d, s) = home();
    let src = d.path().join(format!(
        "codex/sessions/2026/03/14/rollout-2026-03-14T10-15-02-{A}.jsonl"
    ));
    std::fs::copy(
        &src,
        d.path().join(format!(
            "codex/archived_sessions/rollout-2026-03-14T10-15-02-{A}.jsonl"
        )),
    )
    .unwrap();
    let rows: Vec<_> = s.list().into_iter().filter(|r| r.id == A.into()).collect();
    assert_eq!(rows.len(), 1);
    assert!(!rows[0].archived);
    assert!(rows[0].badges().any(|b| b == "duplicate in archive"));
}

#[test]
fn broken_session_index_lines_are_skipped_and_the_last_good_entry_wins() {
    let (d, s) = home();
    let idx = d.path().join("codex/session_index.jsonl");
    let text = format!(
        "{{\"id\":\"{A}\",\"thread_name\":\"old\"}}\nnot json\n{{\"id\":\"{A}\",\"thread_name\":\"newest\"}}\n{{\"id\":\"{A}\",\"thread_na"
    );
    std::fs::write(&idx, text).unwrap();
    assert_eq!(row(&s, A).title(), "newest");
    std::fs::write(
        &idx,
        format!(
            "{{\"id\":\"{A}\",\"thread_name\":\"x\"}}\n{{\"id\":\"{A}\",\"thread_name\":\"  \"}}\n"
        ),
    )
    .unwrap();
    assert_eq!(row(&s, A).title(), "why does router_test.go fail?");
}

#[test]
fn two_session_metas_are_a_copy_not_an_error() {
    let (_d, s) = home();
    let b = row(&s, B);
    assert!(b.error().is_none());
    assert!(!b.badges().any(|x| x.starts_with("meta id mismatch")));
}

#[test]
fn a_locked_or_corrupt_sqlite_database_is_ignored() {
    let (d, s) = home();
    std::fs::write(d.path().join("codex/state_5.sqlite"), b"not a database").unwrap();
    assert_eq!(row(&s, A).title(), "router trailing slash");
}

#[test]
fn bad_lines_are_skipped_and_counted_and_interleaved_writes_salvaged() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path().join("codex");
    let p = root.join(rel(A));
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    let torn = r#"{"timestamp":"2026-03-15T08:00:01Z","type":"event_msg","payl"#;
    let text = format!(
        "{}\nnot json at all\n{torn}{}\n{}\n",
        meta(A, json!({})),
        prompt("salvaged prompt"),
        json!({"timestamp":"2026-03-15T08:00:05Z","type":"response_item","payload":"not an object"})
    );
    std::fs::write(&p, text).unwrap();
    crate::store::test_fixtures::settle(&p);
    let s = CodexStore::new(&root, &d.path().join("state"));
    let r = row(&s, A);
    assert_eq!(r.title(), "salvaged prompt");
    assert!(r.badges().any(|b| b == "2 bad lines"), "{:?}", r.badges());
    let t = s.transcript(A, Span::All).unwrap();
    assert!(t.warnings.iter().any(|w| w.contains("salvaged")));
}

#[test]
fn a_torn_tail_is_pending_while_growing_and_truncated_once_settled() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path().join("codex");
    let p = root.join(rel(A));
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(
        &p,
        format!(
            "{}\n{}\n{{\"timestamp\":\"20",
            meta(A, json!({})),
            prompt("hi")
        ),
    )
    .unwrap();
    let s = CodexStore::new(&root, &d.path().join("state"));
    let r = row(&s, A);
    assert!(
        !r.badges()
            .any(|b| b == "truncated" || b.ends_with("bad line")),
        "{:?}",
        r.badges()
    );
    crate::store::test_fixtures::settle(&p);
    let r = row(&s, A);
    assert!(r.badges().any(|b| b == "truncated"), "{:?}", r.badges());
}

#[test]
fn no_leading_session_meta_is_listed_with_resume_disabled() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path().join("codex");
    write(&root, &rel(A), &[prompt("orphan"), meta(A, json!({}))]);
    let s = CodexStore::new(&root, &d.path().join("state"));
    let r = row(&s, A);
    assert!(r.badges().any(|b| b.contains("resume disabled")));
    assert!(s.launch(&r).is_err());
}

#[test]
fn invalid_utf8_is_decoded_lossily_and_warned() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path().join("codex");
    let p = root.join(rel(A));
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    let mut bytes = format!("{}\n", meta(A, json!({}))).into_bytes();
    bytes.extend_from_slice(
        b"{\"timestamp\":\"2026-03-15T08:00:01Z\",\"type\":\"event_msg\",\"payload\":{\"type\":\"user_message\",\"message\":\"caf\xe9\"}}\n",
    );
    std::fs::write(&p, bytes).unwrap();
    crate::store::test_fixtures::settle(&p);
    let s = CodexStore::new(&root, &d.path().join("state"));
    let r = row(&s, A);
    assert_eq!(r.title(), "caf\u{fffd}");
    assert!(r.badges().any(|b| b == "1 line with invalid UTF-8"));
}

#[test]
fn unsupported_layouts_are_warning_rows() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path().join("codex/sessions");
    std::fs::create_dir_all(root.join(format!("rollout-2026-03-15T09-00-00-{A}"))).unwrap();
    std::fs::write(
        root.join(format!("rollout-2026-03-15T09-00-00-{C}.json")),
        "{}",
    )
    .unwrap();
    let s = CodexStore::new(&d.path().join("codex"), &d.path().join("state"));
    let mut errors: Vec<String> = s
        .list()
        .into_iter()
        .filter_map(|r| r.error().map(String::from))
        .collect();
    errors.sort();
    assert_eq!(
        errors,
        [
            "unsupported legacy file (a pre-JSONL rollout)",
            "unsupported rollout layout"
        ]
    );
}
