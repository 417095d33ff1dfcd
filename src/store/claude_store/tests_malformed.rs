//! Every row of claude-code.md's malformed-input table (6.2) and the parsing rules of 6.1.

use serde_json::{Value, json};

use super::tests_read::{age, asst, one, raw_one, row, user};
use super::*;
use crate::model::{Entry, Role};
use crate::store::Store;

fn lines(v: &[Value]) -> String {
    v.iter().map(|l| format!("{l}\n")).collect()
}

#[test]
fn first_line_not_a_message_is_normal() {
    for first in [
        json!({"type":"pr-link","prNumber":3,"prUrl":"https://x/pull/3","timestamp":"2026-03-14T08:00:00Z"}),
        json!({"type":"summary","summary":"S","leafUuid":"u1"}),
        json!({"type":"file-history-snapshot","messageId":"u1","snapshot":{"timestamp":"2026-03-14T08:59:00Z"}}),
    ] {
        let (_d, store, _) = one(
            "s1",
            "-w",
            &[first, user("u1", None, "hello", "2026-03-14T09:00:00Z")],
        );
        let s = row(&store, "s1");
        assert_eq!(s.messages, 1);
        assert_eq!(s.first_prompt(), "hello");
        assert!(s.error().is_none());
    }
}

#[test]
fn base64_images_are_never_decoded_only_sized() {
    let data = "A".repeat(400_000);
    let u = json!({"parentUuid":null,"type":"user","uuid":"u1","timestamp":"2026-03-14T09:00:00Z",
        "message":{"role":"user","content":[{"type":"text","text":"look"},
            {"type":"image","source":{"type":"base64","media_type":"image/png","data":data}}]}});
    let (_d, store, _) = one("s1", "-w", &[u]);
    let t = store.transcript("s1", Span::All).unwrap();
    let m = t.messages().next().unwrap();
    assert_eq!(m.text, "look");
    assert_eq!(m.images[0].mime_type, "image/png");
    assert_eq!(m.images[0].bytes, 300_000);
}

#[test]
fn huge_tool_result_shows_the_first_64_kib() {
    let call = json!({"parentUuid":"u1","type":"assistant","uuid":"a1","timestamp":"2026-03-14T09:00:01Z",
        "message":{"id":"m1","role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Read","input":{}}]}});
    let res = json!({"parentUuid":"a1","type":"user","uuid":"u2","timestamp":"2026-03-14T09:00:02Z",
        "message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"y".repeat(3_000_000)}]}});
    let (_d, store, _) = one(
        "s1",
        "-w",
        &[
            user("u1", None, "read it", "2026-03-14T09:00:00Z"),
            call,
            res,
        ],
    );
    let t = store.transcript("s1", Span::All).unwrap();
    let tool = t.messages().find(|m| m.role == Role::Tool).unwrap();
    assert!(tool.text.len() < 70 * 1024);
    assert!(
        tool.text
            .ends_with(&format!("({} more bytes)", 3_000_000 - 64 * 1024))
    );
}

#[test]
fn large_files_list_without_building_their_bulky_values() {
    // A ~12 MiB file: the bulk is progress snapshots and tool output in the middle; the
    // custom title is at the end, and every assistant message in the middle counts.
    let mut v = vec![user("u1", None, "start", "2026-03-14T09:00:00Z")];
    let mut parent = "u1".to_string();
    for i in 0..12 {
        let a = format!("a{i}");
        v.push(asst(
            &a,
            &parent,
            &format!("m{i}"),
            "ok",
            "2026-03-14T09:00:01Z",
        ));
        v.push(json!({"type":"progress","data":{"type":"agent_progress","agentId":"x","snapshot":"p".repeat(1 << 20)}}));
        let u = format!("r{i}");
        v.push(json!({"parentUuid":a,"type":"user","uuid":u,"timestamp":"2026-03-14T09:00:02Z",
            "message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"big ".repeat(1000)}]}}));
        parent = u;
    }
    v.push(user(
        "u9",
        Some(&parent),
        "last prompt",
        "2026-03-14T10:00:00Z",
    ));
    v.push(json!({"type":"custom-title","customTitle":"big one","sessionId":"s1"}));
    let (_d, store, p) = one("s1", "-w", &v);
    assert!(std::fs::metadata(&p).unwrap().len() > 12 << 20);
    let parsed = read::read(&p, read::Mode::List).unwrap();
    // What the listing keeps of the whole file is a few kilobytes, not the snapshots.
    let kept: usize = parsed.recs.iter().map(|r| r.v.to_string().len()).sum();
    assert!(kept < 16 * 1024, "{kept} bytes kept");
    assert_eq!(parsed.bad, 0);
    let s = row(&store, "s1");
    assert_eq!(s.title(), "big one");
    assert_eq!(s.messages, 2 + 12);
    assert_eq!(
        crate::model::rfc3339(s.updated_at.unwrap()),
        "2026-03-14T10:00:00Z"
    );
}

#[test]
fn truncated_line_mid_file_is_bad_and_later_records_show() {
    let mut text = lines(&[user("u1", None, "one", "2026-03-14T09:00:00Z")]);
    text.push_str(
        "{\"type\":\"attachment\",\"attachment\":{\"type\":\"queued_command\",\"prompt\":\"cut\n",
    );
    text.push_str(&lines(&[user(
        "u2",
        Some("u1"),
        "two",
        "2026-03-14T09:00:02Z",
    )]));
    let (_d, store, _) = raw_one("s1", "-w", text.as_bytes());
    let s = row(&store, "s1");
    assert_eq!(s.messages, 2);
    assert!(s.badges().any(|b| b == "1 unreadable line"));
    assert!(!s.badges().any(|b| b == "truncated"));
    let t = store.transcript("s1", Span::All).unwrap();
    assert_eq!(t.messages().count(), 2);
}

#[test]
fn foreign_custom_title_is_ignored_and_custom_beats_later_ai_title() {
    let (_d, store, _) = one(
        "s1",
        "-w",
        &[
            user("u1", None, "p", "2026-03-14T09:00:00Z"),
            json!({"type":"custom-title","customTitle":"mine","sessionId":"s1"}),
            json!({"type":"custom-title","customTitle":"not mine","sessionId":"other"}),
            json!({"type":"ai-title","aiTitle":"later ai","sessionId":"s1"}),
        ],
    );
    assert_eq!(row(&store, "s1").title(), "mine");
}

#[test]
fn file_deleted_while_listed_is_an_error_row() {
    let (_d, store, p) = one("s1", "-w", &[user("u1", None, "p", "2026-03-14T09:00:00Z")]);
    let c = store.discover().remove(0);
    std::fs::remove_file(&p).unwrap();
    let s = store.summarize(&c).unwrap();
    assert_eq!(s.error(), Some("deleted (Claude cleanup?)"));
}

#[test]
fn sessions_index_absent_huge_or_invalid_is_ignored() {
    let (d, store, _) = one(
        "s1",
        "-w",
        &[user("u1", None, "the prompt", "2026-03-14T09:00:00Z")],
    );
    assert_eq!(row(&store, "s1").title(), "the prompt");
    let idx = d.path().join("claude/projects/-w/sessions-index.json");
    std::fs::write(&idx, "[1,2").unwrap();
    assert_eq!(row(&store, "s1").title(), "the prompt");
    // A stale index entry for this id does not beat the file's own first prompt? It does
    // not: it only stands in for titles the file lacks (rule 6 comes before the prompt),
    // so an index entry for another id changes nothing.
    std::fs::write(&idx, r#"{"entries":[{"sessionId":"zz","summary":"x"}]}"#).unwrap();
    assert_eq!(row(&store, "s1").title(), "the prompt");
}

#[test]
fn project_dir_matching_no_cwd_lists_normally() {
    let (_d, store, _) = one(
        "s1",
        "-moved-repo",
        &[user("u1", None, "p", "2026-03-14T09:00:00Z")],
    );
    let s = row(&store, "s1");
    assert!(s.error().is_none());
    assert_eq!(
        s.cwd.as_deref(),
        Some("/w"),
        "no owner: the first recorded cwd"
    );
}

#[test]
fn api_errors_render_as_errors_and_mark_the_ending() {
    let mut e = asst(
        "a1",
        "u1",
        "m1",
        "API Error: overloaded",
        "2026-03-14T09:00:01Z",
    );
    e["isApiErrorMessage"] = json!(true);
    e["message"]["model"] = json!("<synthetic>");
    let (_d, store, _) = one(
        "s1",
        "-w",
        &[user("u1", None, "p", "2026-03-14T09:00:00Z"), e],
    );
    let s = row(&store, "s1");
    assert_eq!(s.messages, 1, "API errors are not counted");
    assert!(s.badges().any(|b| b == "ended with API error"));
    assert_eq!(s.model, None);
    let t = store.transcript("s1", Span::All).unwrap();
    let m = t.messages().nth(1).unwrap();
    assert!(m.is_error && m.note.as_deref() == Some("API error"));
}

#[test]
fn torn_tail_is_pending_while_growing_and_truncated_once_settled() {
    let mut text = lines(&[user("u1", None, "p", "2026-03-14T09:00:00Z")]);
    text.push_str("{\"type\":\"assistant\",\"mess");
    let (_d, store, p) = raw_one("s1", "-w", text.as_bytes());
    // Written just now: still growing.
    std::fs::File::options()
        .write(true)
        .open(&p)
        .unwrap()
        .set_modified(std::time::SystemTime::now())
        .unwrap();
    let s = row(&store, "s1");
    assert!(
        !s.badges()
            .any(|b| b.contains("unreadable") || b == "truncated"),
        "{:?}",
        s.badges()
    );
    assert!(s.badges().any(|b| b == "live"));
    age(&p);
    let s = row(&store, "s1");
    assert!(s.badges().any(|b| b == "truncated"));
    assert!(s.badges().any(|b| b == "1 unreadable line"));
}

#[test]
fn parsing_rules_blank_lines_u2028_wrong_types_duplicates_lossy() {
    let mut text = String::new();
    text.push_str("\n   \n");
    // U+2028 inside a string is not a line break.
    text.push_str(&lines(&[user(
        "u1",
        None,
        "a\u{2028}b",
        "2026-03-14T09:00:00Z",
    )]));
    // Wrong types: kept, never fatal.
    text.push_str("{\"type\":\"user\",\"message\":7,\"timestamp\":5}\n");
    text.push_str("{\"type\":\"assistant\",\"message\":{\"content\":12}}\n");
    // Duplicate keys: first wins.
    text.push_str(
        "{\"type\":\"custom-title\",\"customTitle\":\"first\",\"customTitle\":\"second\"}\n",
    );
    let mut bytes = text.into_bytes();
    // Invalid UTF-8 inside a prompt: decoded lossily and counted.
    bytes.extend_from_slice(b"{\"parentUuid\":\"u1\",\"type\":\"user\",\"uuid\":\"u2\",\"message\":{\"role\":\"user\",\"content\":\"bad \xff byte\"}}\n");
    bytes.extend_from_slice(b"{\"type\":\"brand-new-kind\",\"x\":1}\n");
    let (_d, store, p) = raw_one("s1", "-w", &bytes);
    let s = row(&store, "s1");
    assert_eq!(s.title(), "first");
    assert_eq!(s.messages, 2);
    assert!(
        s.badges().any(|b| b == "1 line with invalid UTF-8"),
        "{:?}",
        s.badges()
    );
    assert!(
        !s.badges().any(|b| b.contains("unreadable")),
        "{:?}",
        s.badges()
    );
    let parsed = read::read(&p, read::Mode::Full).unwrap();
    assert_eq!(parsed.bad, 0);
    let f = listing::facts("s1", &parsed);
    assert_eq!(f.other_types, 1, "the unknown type is counted as other");
    let t = store.transcript("s1", Span::All).unwrap();
    let texts: Vec<&str> = t.messages().map(|m| m.text.as_str()).collect();
    assert_eq!(texts, ["a\u{2028}b", "bad \u{fffd} byte"]);
    assert!(
        !t.entries
            .iter()
            .any(|e| matches!(e, Entry::Notice(n) if n.contains("brand")))
    );
}

#[test]
fn oversized_lines_are_skipped_by_the_shared_splitter() {
    let data = b"{\"a\":1}\n0123456789abcdef\n{\"b\":2}";
    let mut seen = Vec::new();
    crate::store::lines::for_each_line(&data[..], 10, |l| {
        seen.push(match l {
            crate::store::lines::RawLine::TooLong { len, .. } => format!("too long {len}"),
            crate::store::lines::RawLine::Line { bytes, .. } => {
                String::from_utf8_lossy(bytes).into_owned()
            }
        })
    })
    .unwrap();
    assert_eq!(seen, ["{\"a\":1}", "too long 16", "{\"b\":2}"]);
}

#[test]
fn symlinked_or_fifo_transcripts_are_not_read() {
    let (d, store, p) = one("s1", "-w", &[user("u1", None, "p", "2026-03-14T09:00:00Z")]);
    let link = d.path().join("claude/projects/-w/s2.jsonl");
    std::os::unix::fs::symlink(&p, &link).unwrap();
    let fifo = d.path().join("claude/projects/-w/s3.jsonl");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let ids: Vec<String> = store.discover().into_iter().map(|c| c.id).collect();
    assert_eq!(ids, ["s1"]);
    assert!(read::open(&link).is_err() && read::open(&fifo).is_err());
}

#[test]
fn legacy_subagent_files_are_children_of_the_session_they_name() {
    let (d, store, _) = one("s1", "-w", &[user("u1", None, "p", "2026-03-14T09:00:00Z")]);
    let dir = d.path().join("claude/projects/-w");
    let sub = json!({"type":"user","isSidechain":true,"sessionId":"s1","agentId":"ab12","uuid":"x1",
        "message":{"role":"user","content":"sub task"}});
    std::fs::write(dir.join("agent-ab12.jsonl"), format!("{sub}\n")).unwrap();
    let ids: Vec<String> = store.discover().into_iter().map(|c| c.id).collect();
    assert_eq!(ids, ["s1"], "a subagent is never a top-level row");
    assert!(row(&store, "s1").badges().any(|b| b == "1 subagent"));
}

#[test]
fn cleanup_countdown_from_user_settings() {
    let (d, store, p) = one("s1", "-w", &[user("u1", None, "p", "2026-03-14T09:00:00Z")]);
    std::fs::write(
        d.path().join("claude/settings.json"),
        r#"{"cleanupPeriodDays":5}"#,
    )
    .unwrap();
    let two_days = std::time::SystemTime::now() - std::time::Duration::from_secs(2 * 86400);
    std::fs::File::options()
        .write(true)
        .open(&p)
        .unwrap()
        .set_modified(two_days)
        .unwrap();
    let s = row(&store, "s1");
    assert!(
        s.badges().any(|b| b == "deleted by Claude Code in 3 days"),
        "{:?}",
        s.badges()
    );
    assert_eq!(
        discover::cleanup_days(&d.path().join("nowhere")),
        Some(30.0)
    );
    std::fs::write(
        d.path().join("claude/settings.json"),
        r#"{"cleanupPeriodDays":0}"#,
    )
    .unwrap();
    assert_eq!(discover::cleanup_days(&d.path().join("claude")), None);
}
