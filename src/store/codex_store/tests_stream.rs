//! The streamed views (issues 9 and 11) against the whole read they replace: on every
//! fixture, on a generated rollout of several MB with compactions, forks' notices and tool
//! calls, plain and compressed.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::transcript::Ctx;
use super::*;
use crate::model::{Entry, Message};

/// The transcript, window and warnings as read whole before streaming.
fn whole(s: &CodexStore, id: &str) -> (Vec<Entry>, Vec<Message>, Vec<String>) {
    let e = s.entry(id).unwrap();
    let p = read::read(&e.path, read::Mode::Full).unwrap();
    let facts = listing::facts(&e.id, &p);
    let parent = facts.forked_from.clone().or(facts.parent_thread.clone());
    let turns = parent.as_deref().and_then(|p| s.parent_turns(p));
    let copied = listing::copied_range(&p.recs, &facts, turns.as_deref());
    let pref = CodexStore::parent_ref(&facts);
    let cx = Ctx {
        copied,
        parent: pref.clone(),
        offset: 0,
    };
    let entries = transcript::entries(&p.recs, &cx, 0);
    let window = view::window(&p.recs, copied, pref);
    (entries, window, CodexStore::warnings(&p, &facts))
}

/// Every view of `id` streamed equals the whole read.
fn same(s: &CodexStore, id: &str) {
    let (entries, window, warnings) = whole(s, id);
    let t = s.transcript(id, Span::All).unwrap();
    assert_eq!(t.entries, entries, "transcript of {id}");
    assert_eq!(t.warnings, warnings, "warnings of {id}");
    let w = s.window(id).unwrap();
    assert_eq!(w.messages, window, "window of {id}");
    assert_eq!(w.warnings, warnings, "window warnings of {id}");
    let e = s.entry(id).unwrap();
    if read::is_zst(&e.path) {
        // A compressed rollout's last rounds come from the passes: as cut from the whole.
        for n in [0, 1, 2, 5, usize::MAX] {
            let (cut, total, first) =
                crate::store::last_rounds(entries.clone(), Span::LastRounds(n));
            let t = s.transcript(id, Span::LastRounds(n)).unwrap();
            assert_eq!(
                (t.entries, t.total_rounds, t.first_round),
                (cut, total, first),
                "last {n} of {id}"
            );
        }
    }
    let raw = s.raw(id).unwrap();
    let f = read::open(&e.path).unwrap();
    let reference = if read::is_zst(&e.path) {
        let dec = zstd::stream::read::Decoder::new(f).unwrap();
        crate::store::lines::pretty_jsonl(dec, read::MAX_LINE).unwrap()
    } else {
        crate::store::lines::pretty_jsonl(f, read::MAX_LINE).unwrap()
    };
    assert_eq!(raw, reference, "raw of {id}");
    crate::store::lines::assert_raw_pages(id, &raw, |b| s.raw_page(id, b).unwrap());
}

fn fixture_home(sub: &str) -> (tempfile::TempDir, CodexStore) {
    let d = tempfile::tempdir().unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/codex");
    crate::store::test_fixtures::copy_settled(&src.join(sub), &d.path().join("codex"));
    let s = CodexStore::new(&d.path().join("codex"), &d.path().join("state"));
    (d, s)
}

/// Every readable rollout of a store, then each compressed in place of its plain file.
fn every(s: &CodexStore) -> usize {
    let ids: Vec<(String, PathBuf)> = s
        .discover_entries()
        .into_iter()
        .filter(|e| e.found == discover::Found::Rollout)
        .map(|e| (e.id, e.path))
        .collect();
    for (id, _) in &ids {
        same(s, id);
    }
    for (id, path) in &ids {
        let bytes = std::fs::read(path).unwrap();
        let zst = PathBuf::from(format!("{}.zst", path.display()));
        std::fs::write(&zst, zstd::encode_all(&bytes[..], 3).unwrap()).unwrap();
        std::fs::remove_file(path).unwrap();
        s.discover_entries();
        same(s, id);
    }
    ids.len()
}

#[test]
fn every_fixture_streams_as_read_whole() {
    let (_d, s) = fixture_home("");
    assert!(every(&s) >= 2);
    let (_d, s) = fixture_home("ended");
    assert!(every(&s) >= 5);
}

const ID: &str = "019cf222-0000-7000-8000-0000000000d1";

/// A rollout of several MB: turns of tool calls with bulky outputs, a web search without
/// output, an unanswered call, compactions with and without replacement history, a
/// subagent and injected context.
pub(super) fn generated(turns: usize, out_bytes: usize) -> Vec<Value> {
    let ts = "2026-03-15T08:00:00Z";
    let ri = |pl: Value| json!({"timestamp": ts, "type": "response_item", "payload": pl});
    let ev = |pl: Value| json!({"timestamp": ts, "type": "event_msg", "payload": pl});
    let mut v = vec![json!({"timestamp": ts, "type": "session_meta",
        "payload": {"id": ID, "timestamp": ts, "cwd": "/w", "source": "cli"}})];
    let bulk = "x".repeat(out_bytes);
    for t in 0..turns {
        v.push(json!({"timestamp": ts, "type": "turn_context",
            "payload": {"turn_id": format!("t{t}"), "model": if t % 7 == 0 {"gpt-5"} else {"gpt-5-codex"},
                "effort": "high"}}));
        v.push(ri(json!({"type": "message", "role": "user",
            "content": [{"type": "input_text", "text": "<environment_context>cwd</environment_context>"}]})));
        v.push(ev(
            json!({"type": "user_message", "message": format!("prompt {t}")}),
        ));
        v.push(ri(json!({"type": "message", "role": "user",
            "content": [{"type": "input_text", "text": format!("prompt {t}")}]})));
        v.push(ri(
            json!({"type": "reasoning", "summary": [{"type": "summary_text", "text": "think"}]}),
        ));
        for c in 0..3 {
            let id = format!("call_{t}_{c}");
            v.push(ri(
                json!({"type": "function_call", "name": "shell", "call_id": id,
                "arguments": "{\"cmd\":[\"ls\"]}"}),
            ));
            if !(t % 5 == 4 && c == 2) {
                v.push(ri(json!({"type": "function_call_output", "call_id": id,
                    "output": format!("{t}/{c} {bulk}")})));
            }
        }
        v.push(ri(
            json!({"type": "web_search_call", "action": {"query": "q"}}),
        ));
        if t == 3 {
            v.push(ri(
                json!({"type": "function_call", "name": "spawn_agent", "call_id": "sp",
                "arguments": "{}"}),
            ));
            v.push(ri(json!({"type": "function_call_output", "call_id": "sp",
                "output": "started 019cf222-0000-7000-8000-0000000000e1"})));
            v.push(ev(json!({"type": "sub_agent_activity",
                "agent_thread_id": "019CF222-0000-7000-8000-0000000000E1"})));
        }
        v.push(ri(json!({"type": "message", "role": "assistant",
            "content": [{"type": "output_text", "text": format!("done {t}")}]})));
        if t % 9 == 8 {
            let mut pl = json!({"message": format!("summary up to {t}")});
            if t % 2 == 0 {
                pl["replacement_history"] = json!([
                    {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "kept"}]},
                    {"type": "function_call", "name": "shell", "call_id": "old", "arguments": "{}"}]);
            }
            v.push(json!({"timestamp": ts, "type": "compacted", "payload": pl}));
        }
        if t == 11 {
            v.push(ev(json!({"type": "turn_aborted", "reason": "interrupted"})));
        }
    }
    v
}

#[test]
fn a_generated_rollout_of_several_mb_streams_as_read_whole() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path().join("codex");
    let rel = format!("sessions/2026/03/15/rollout-2026-03-15T09-00-00-{ID}.jsonl");
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    let text: String = generated(40, 20_000)
        .iter()
        .map(|l| format!("{l}\n"))
        .collect();
    assert!(text.len() > 2_000_000);
    std::fs::write(&p, text).unwrap();
    let s = CodexStore::new(&root, &d.path().join("state"));
    assert_eq!(every(&s), 1);
}
