//! Reader tests: the contract's examples A, B and C as exact fixtures, replay worked
//! examples, and every row of the malformed-input case table (section 6.2).

use std::path::PathBuf;

use serde_json::json;

use super::log::{Event, EventKind};
use super::replay::{self, Slot};
use super::scan::{LCall, LMsg, Record};
use super::view::{ORPHAN_NOTE, SYSTEM_LOGGED, SYSTEM_NOT_LOGGED};
use super::*;
use crate::model::{Entry, rfc3339};

pub const A: &[u8] = include_bytes!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/loom/sessions/20260314-091502.jsonl"
));
pub const B: &[u8] = include_bytes!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/loom/sessions/20260314-141500.jsonl"
));
pub const C: &[u8] = include_bytes!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/loom/sessions/20260314-162041.jsonl"
));
pub const A_SIDECAR: &[u8] = include_bytes!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/loom/sessions/.spool/20260314-091502.json"
));
pub const A_ID: &str = "20260314-091502";
pub const B_ID: &str = "20260314-141500";
pub const C_ID: &str = "20260314-162041";
pub const A_SUMMARY: &str = "* Goal: make TestRouteParams in router_test.go pass\n* Cause: router.go strips the trailing slash before matching\n* No files edited yet";
pub const META: &str =
    r#"{"kind":"meta","time":"2026-03-14T09:15:02+01:00","model":"m","cwd":"/p"}"#;

/// A loom home in a temp dir with the given sessions written.
pub fn home(files: &[(&str, &[u8])]) -> (tempfile::TempDir, LoomStore) {
    let d = tempfile::tempdir().unwrap();
    let sessions = d.path().join("sessions");
    std::fs::create_dir(&sessions).unwrap();
    for (name, bytes) in files {
        std::fs::write(sessions.join(name), bytes).unwrap();
    }
    let s = LoomStore::new(d.path());
    (d, s)
}

pub fn sessions(d: &tempfile::TempDir) -> PathBuf {
    d.path().join("sessions")
}

pub fn put_sidecar(d: &tempfile::TempDir, id: &str, bytes: &[u8]) {
    let spool = sessions(d).join(".spool");
    std::fs::create_dir_all(&spool).unwrap();
    std::fs::write(spool.join(format!("{id}.json")), bytes).unwrap();
}

pub fn row(s: &LoomStore, id: &str) -> SessionSummary {
    let c = s.discover().into_iter().find(|c| c.id == id).unwrap();
    s.summarize(&c).unwrap()
}

fn t(s: &str) -> Option<String> {
    Some(s.to_string())
}

fn msg_line(role: &str, content: &str) -> String {
    json!({"kind":"message","time":"2026-03-14T09:16:00+01:00","message":{"role":role,"content":content}}).to_string()
}

fn texts(w: &Window) -> Vec<(String, String)> {
    w.messages
        .iter()
        .map(|m| (m.role.as_str().to_string(), m.text.clone()))
        .collect()
}

#[test]
fn example_a_listing() {
    assert_eq!(A.len(), 1967);
    let (_d, s) = home(&[(&format!("{A_ID}.jsonl"), A)]);
    let r = row(&s, A_ID);
    assert_eq!(r.messages, 5);
    assert_eq!(r.title(), "why does router_test.go fail?");
    assert_eq!(r.first_prompt(), "why does router_test.go fail?");
    assert_eq!(r.summary(), A_SUMMARY);
    assert_eq!(r.created_at.map(rfc3339), t("2026-03-14T08:15:02Z"));
    assert_eq!(r.updated_at.map(rfc3339), t("2026-03-14T13:03:05Z"));
    assert_eq!(r.cwd.as_deref(), Some("/home/user/projects/tinyhttp"));
    assert_eq!(r.model.as_deref(), Some("gemma4:e4b-mlx"));
    assert_eq!(r.forked_from(), None);
    assert!(r.has_user_message && !r.unread && !r.archived && !r.pinned());
    assert!(r.badges().next().is_none() && r.error().is_none() && !r.read_only);
    assert_eq!(r.reference(), "loom:20260314-091502");
}

#[test]
fn example_a_sidecar_pins_and_is_read() {
    let (d, s) = home(&[(&format!("{A_ID}.jsonl"), A)]);
    put_sidecar(&d, A_ID, A_SIDECAR);
    let r = row(&s, A_ID);
    assert_eq!(r.pinned_at.map(rfc3339), t("2026-03-14T13:00:05Z"));
    // The tail after byte 1243 holds compact, system and a user message only.
    assert!(!r.unread && !r.archived);
    assert_eq!(r.title(), "why does router_test.go fail?");
    // A marker before line 6 (the last assistant) makes it unread.
    let line6 = A.split(|&b| b == b'\n').nth(5).unwrap().len() as u64;
    let cut = 1243 - line6 - 1;
    put_sidecar(
        &d,
        A_ID,
        format!(r#"{{"version":1,"read_bytes":{cut}}}"#).as_bytes(),
    );
    assert!(row(&s, A_ID).unread);
    put_sidecar(
        &d,
        A_ID,
        format!(r#"{{"version":1,"read_bytes":{}}}"#, cut + 1).as_bytes(),
    );
    assert!(!row(&s, A_ID).unread);
    // A marker past the end (log replaced) is not unread.
    put_sidecar(&d, A_ID, br#"{"version":1,"read_bytes":99999}"#);
    assert!(!row(&s, A_ID).unread);
    // Title and archive from the sidecar.
    put_sidecar(
        &d,
        A_ID,
        br#"{"version":1,"title":"Router fix","archived_at":"2026-03-14T10:00:00Z"}"#,
    );
    let r = row(&s, A_ID);
    assert_eq!(r.title(), "Router fix");
    assert!(r.archived && !r.pinned());
    // An invalid sidecar is ignored with a warning badge.
    put_sidecar(&d, A_ID, b"{oops");
    let r = row(&s, A_ID);
    assert_eq!(r.title(), "why does router_test.go fail?");
    assert_eq!(r.badges().count(), 1);
    assert!(
        r.badges()
            .next()
            .unwrap()
            .starts_with("spool state unreadable"),
        "{:?}",
        r.badges()
    );
    put_sidecar(&d, A_ID, br#"{"version":2,"title":"x"}"#);
    assert_eq!(row(&s, A_ID).title(), "why does router_test.go fail?");
}

#[test]
fn example_a_transcript() {
    let (_d, s) = home(&[(&format!("{A_ID}.jsonl"), A)]);
    let tr = s.transcript(A_ID, Span::All).unwrap();
    assert_eq!(tr.entries.len(), 8);
    assert!(
        matches!(&tr.entries[0], Entry::SystemPrompt { text, .. } if text.starts_with("You are loom"))
    );
    let msgs: Vec<_> = tr.messages().collect();
    assert_eq!(msgs.len(), 5);
    assert_eq!(
        msgs.iter().map(|m| m.index).collect::<Vec<_>>(),
        [0, 1, 2, 3, 4].map(Some)
    );
    assert_eq!(msgs[1].text, "");
    assert_eq!(msgs[1].tool_calls.len(), 1);
    assert_eq!(msgs[1].tool_calls[0].id, "call_1_0");
    assert_eq!(msgs[1].tool_calls[0].name, "bash");
    assert_eq!(
        msgs[1].tool_calls[0].arguments,
        json!({"command":"go test ./... 2>&1 | tail -5"})
    );
    assert_eq!(msgs[2].tool_call_id, t("call_1_0"));
    assert_eq!(msgs[2].tool_name, t("bash"));
    assert_eq!(msgs[2].timestamp.map(rfc3339), t("2026-03-14T08:15:25Z"));
    assert!(matches!(&tr.entries[5], Entry::Compaction { summary, .. } if summary == A_SUMMARY));
    assert!(matches!(&tr.entries[6], Entry::SystemPrompt { .. }));
    assert_eq!((tr.total_rounds, tr.first_round), (2, 0));
    assert!(tr.warnings.is_empty());
    let last = s.transcript(A_ID, Span::LastRounds(1)).unwrap();
    assert_eq!((last.total_rounds, last.first_round), (2, 1));
    assert_eq!(last.entries.len(), 1);
    assert_eq!(last.messages().next().unwrap().text, "ok, fix it");
    assert_eq!(
        s.transcript(A_ID, Span::LastRounds(5))
            .unwrap()
            .entries
            .len(),
        8
    );
}

#[test]
fn example_a_window() {
    let (_d, s) = home(&[(&format!("{A_ID}.jsonl"), A)]);
    let w = s.window(A_ID).unwrap();
    let tx = texts(&w);
    assert_eq!(w.messages.len(), 8, "7 messages plus the reopened notice");
    assert_eq!(tx[0].0, "system");
    assert!(tx[0].1.starts_with("You are loom, a coding agent."));
    assert_eq!(w.system_note.as_deref(), Some(SYSTEM_LOGGED));
    assert_eq!(
        tx[1],
        ("user".into(), format!("{SUMMARY_PREFIX}{A_SUMMARY}"))
    );
    assert!(tx[1].1.starts_with("[Context summary - earlier messages were compacted to save space. File contents mentioned below may be stale, re-read files before editing.]\n\n* Goal"));
    assert!(w.messages[1].is_virtual && w.messages[1].index.is_none());
    let idx: Vec<_> = w.messages.iter().map(|m| m.index).collect();
    assert_eq!(
        idx,
        [
            None,
            None,
            Some(0),
            Some(1),
            Some(2),
            Some(3),
            Some(4),
            None
        ]
    );
    assert_eq!(w.messages[4].tool_call_id, t("call_1_0"));
    assert_eq!(tx[6].1, "ok, fix it");
    assert_eq!(tx[7], ("user".into(), "[Session 20260314-091502 reopened. Time has passed since the messages above and file contents may have changed; re-read any file before editing it.]".into()));
    assert!(w.messages[7].is_virtual);
    assert!(w.messages.iter().all(|m| m.note.is_none()));
}

#[test]
fn example_b_fork_file() {
    let (_d, s) = home(&[(&format!("{B_ID}.jsonl"), B)]);
    let r = row(&s, B_ID);
    assert_eq!(r.messages, 7);
    assert_eq!(r.forked_from(), Some("loom:20260314-091502"));
    assert_eq!(r.title(), "why does router_test.go fail?");
    assert_eq!(r.summary(), "");
    assert_eq!(r.created_at.map(rfc3339), t("2026-03-14T13:15:00Z"));
    let w = s.window(B_ID).unwrap();
    assert_eq!(w.messages.len(), 9);
    assert!(!w.messages[1].is_virtual && w.messages[1].index == Some(0));
    assert!(
        w.messages[8]
            .text
            .starts_with("[Session 20260314-141500 reopened.")
    );
}

#[test]
fn example_c_crash() {
    let (_d, s) = home(&[(&format!("{C_ID}.jsonl"), C)]);
    let r = row(&s, C_ID);
    assert_eq!(r.messages, 3);
    assert_eq!(r.badges().collect::<Vec<_>>(), ["1 unreadable line"]);
    assert_eq!(r.updated_at.map(rfc3339), t("2026-03-14T15:21:09Z"));
    assert!(r.error().is_none());
    let w = s.window(C_ID).unwrap();
    let tx = texts(&w);
    assert_eq!(tx.len(), 3, "[SYS, u] plus the notice");
    assert_eq!(tx[1].1, "run the benchmarks and compare with bench.txt");
    assert!(tx[2].1.starts_with("[Session 20260314-162041 reopened."));
    let tr = s.transcript(C_ID, Span::All).unwrap();
    assert_eq!(
        tr.entries.last(),
        Some(&Entry::Notice("1 unreadable line skipped".into()))
    );
    let m: Vec<_> = tr.messages().collect();
    assert_eq!(m[1].tool_calls[1].id, "call_1_1");
    assert_eq!(m[2].tool_call_id, t("call_1_0"));
    assert_eq!(tr.warnings, ["1 unreadable line skipped"]);
}

fn slot(role: &str, calls: usize) -> Slot {
    let mut m = LMsg::new(role, role);
    m.tool_calls = (0..calls)
        .map(|_| LCall {
            name: "bash".into(),
            arguments: serde_json::Value::Null,
        })
        .collect();
    Slot {
        msg: m,
        index: None,
        time: String::new(),
        inserted: false,
    }
}

fn roles(w: &[Slot]) -> Vec<&str> {
    w.iter().map(|s| s.msg.role.as_str()).collect()
}

#[test]
fn compact_keeps_six_and_backtracks_over_tool_results() {
    // Example A at the compact record: start = max(1, 5-6) = 1.
    let w = vec![
        slot("system", 0),
        slot("user", 0),
        slot("assistant", 1),
        slot("tool", 0),
        slot("assistant", 0),
    ];
    let c = replay::compact(w, "S", "");
    assert_eq!(
        roles(&c),
        ["system", "user", "user", "assistant", "tool", "assistant"]
    );
    assert_eq!(c[1].msg.content, format!("{SUMMARY_PREFIX}S"));
    assert!(c[1].inserted);
    // len 10: start = 4 lands on a tool result, walks back to its assistant at 3.
    let w = vec![
        slot("system", 0),
        slot("user", 0),
        slot("assistant", 0),
        slot("assistant", 3),
        slot("tool", 0),
        slot("tool", 0),
        slot("tool", 0),
        slot("assistant", 0),
        slot("user", 0),
        slot("assistant", 0),
    ];
    let c = replay::compact(w, "", "");
    assert_eq!(c.len(), 9);
    assert_eq!(c[1].msg.content, SUMMARY_PREFIX);
    assert_eq!(c[2].msg.tool_calls.len(), 3);
    // The walk back stops at 1.
    let mut w = vec![slot("system", 0), slot("assistant", 7)];
    w.extend((0..7).map(|_| slot("tool", 0)));
    assert_eq!(replay::compact(w, "", "").len(), 10);
    // len 8: start 2 is kept as is.
    let w: Vec<Slot> = [
        "system",
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
    ]
    .iter()
    .map(|r| slot(r, 0))
    .collect();
    assert_eq!(
        roles(&replay::compact(w, "", "")),
        [
            "system",
            "user",
            "assistant",
            "user",
            "assistant",
            "user",
            "assistant",
            "user"
        ]
    );
}

#[test]
fn drop_orphaned_calls_checks_only_the_tail() {
    let d = |w: Vec<Slot>| roles(&replay::drop_orphaned_calls(w)).join(",");
    assert_eq!(
        d(vec![
            slot("system", 0),
            slot("user", 0),
            slot("assistant", 2),
            slot("tool", 0)
        ]),
        "system,user"
    );
    assert_eq!(
        d(vec![
            slot("system", 0),
            slot("user", 0),
            slot("assistant", 1),
            slot("tool", 0)
        ]),
        "system,user,assistant,tool"
    );
    assert_eq!(
        d(vec![
            slot("system", 0),
            slot("assistant", 1),
            slot("user", 0)
        ]),
        "system,assistant,user"
    );
    assert_eq!(
        d(vec![
            slot("system", 0),
            slot("user", 0),
            slot("assistant", 1)
        ]),
        "system,user"
    );
}

#[test]
fn replay_resets_and_ignores_system_meta_unknown() {
    let rec = |kind: &str, msg: Option<LMsg>, summary: &str| Event {
        kind: EventKind::Record(Box::new(Record {
            kind: kind.into(),
            message: msg,
            summary: summary.into(),
            ..Record::default()
        })),
    };
    let mut events = vec![
        rec("meta", None, ""),
        rec("system", Some(LMsg::new("system", "P1")), ""),
    ];
    for i in 0..8 {
        events.push(rec(
            "message",
            Some(LMsg::new(
                if i % 2 == 0 { "user" } else { "assistant" },
                i.to_string(),
            )),
            "",
        ));
    }
    events.push(rec("compact", None, "one"));
    events.push(rec("weird", Some(LMsg::new("user", "ignored")), ""));
    events.push(rec("message", None, ""));
    events.push(rec("compact", None, "two"));
    let (w, sys) = replay::replay(&events);
    assert_eq!(sys.unwrap().msg.content, "P1");
    let c: Vec<&str> = w.iter().map(|s| s.msg.content.as_str()).collect();
    // First compact: [SYS, S1, 2..7] (8 messages); second: start = 8-6 = 2 -> [SYS, S2, 2..7].
    assert_eq!(
        c,
        [
            "P1",
            &format!("{SUMMARY_PREFIX}two"),
            "2",
            "3",
            "4",
            "5",
            "6",
            "7"
        ]
    );
}

#[test]
fn mid_log_orphans_are_kept_and_flagged() {
    let calls = r#"{"kind":"message","time":"2026-03-14T09:16:00+01:00","message":{"role":"assistant","content":"","tool_calls":[{"function":{"name":"bash","arguments":{"command":"ls"}}}]}}"#;
    let log = [
        META,
        &msg_line("user", "go"),
        calls,
        &msg_line("user", "again"),
        &msg_line("assistant", "ok"),
    ]
    .join("\n");
    let (_d, s) = home(&[("20260314-091502.jsonl", log.as_bytes())]);
    let w = s.window("20260314-091502").unwrap();
    assert_eq!(w.messages.len(), 6);
    assert_eq!(w.messages[2].note.as_deref(), Some(ORPHAN_NOTE));
    assert_eq!(w.system_note.as_deref(), Some(SYSTEM_NOT_LOGGED));
    assert_eq!(w.messages[0].text, "");
}
