//! The streamed views (one record read at a time from the listing's offsets, image payloads
//! elided) equal the whole-file read (every record decoded whole, then converted), on every
//! fixture and demo transcript and on a generated file with every feature the converter
//! pairs or merges across records.

use std::io::Write;
use std::path::Path;

use serde_json::json;

use super::tests_read::age;
use super::*;
use crate::model::Message;
use crate::store::Store;

/// The transcript as it was read before streaming: every line decoded whole, then converted.
fn whole(store: &ClaudeStore, id: &str) -> Transcript {
    let (path, mut l) = store.load_id(id).unwrap();
    let sdir = ClaudeStore::session_dir(&path, id);
    ClaudeStore::read_subagents(&sdir, &mut l.subagents);
    let cx = Ctx {
        session_dir: &sdir,
        subagents: &l.subagents,
    };
    let p = read::read(&path, read::Mode::Full).unwrap();
    let c = chain::build(&p.recs);
    let mut entries = transcript::entries(&p.recs, &c, &cx, 0);
    if let Some(parent) = ClaudeStore::continued(&path, &l.facts, id) {
        entries.insert(0, Entry::Notice(format!("continued from claude:{parent}")));
    }
    let (entries, total_rounds, first_round) = crate::store::last_rounds(entries, Span::All);
    Transcript {
        summary: l.summary.clone(),
        entries,
        total_rounds,
        first_round,
        warnings: ClaudeStore::warnings(&l.parsed, &l.facts),
        todos: None,
    }
}

fn whole_window(store: &ClaudeStore, id: &str) -> Vec<Message> {
    let (path, l) = store.load_id(id).unwrap();
    let sdir = ClaudeStore::session_dir(&path, id);
    let cx = Ctx {
        session_dir: &sdir,
        subagents: &l.subagents,
    };
    let p = read::read(&path, read::Mode::Full).unwrap();
    window::messages(&p.recs, &chain::build(&p.recs), &cx)
}

/// What a transcript shows, comparable.
fn key(t: &Transcript) -> impl PartialEq + std::fmt::Debug {
    (
        t.summary.to_json(),
        t.entries.clone(),
        t.total_rounds,
        t.first_round,
        t.warnings.clone(),
    )
}

/// Every session of `store` reads the same streamed as whole: transcript, `show`'s pieces,
/// the window and its head's count and tokens.
fn assert_same(store: &ClaudeStore) -> usize {
    let mut n = 0;
    for c in store.discover() {
        if !valid_id(&c.id) || store.load_id(&c.id).is_err() {
            continue;
        }
        n += 1;
        let want = whole(store, &c.id);
        let got = store.transcript(&c.id, Span::All).unwrap();
        assert_eq!(key(&got), key(&want), "{}", c.path.display());
        let mut pieces = crate::store::sink::Gather::default();
        store.transcript_to(&c.id, Span::All, &mut pieces).unwrap();
        assert_eq!(
            key(&pieces.finish().unwrap()),
            key(&want),
            "{}",
            c.path.display()
        );
        let msgs = whole_window(store, &c.id);
        let w = store.window(&c.id).unwrap();
        assert_eq!(w.messages, msgs, "window of {}", c.path.display());
        let mut last = crate::store::sink::LastMessages::new(1);
        store.window_to(&c.id, &mut last).unwrap();
        let w = last.finish().unwrap();
        assert_eq!(w.omitted, msgs.len().saturating_sub(1));
        let tokens: u64 = msgs.iter().map(Message::estimated_tokens).sum();
        let shown: u64 = w.messages.iter().map(Message::estimated_tokens).sum();
        assert_eq!(w.omitted_tokens + shown, tokens);
    }
    n
}

fn copy_root(src: &Path) -> (tempfile::TempDir, ClaudeStore) {
    let d = tempfile::tempdir().unwrap();
    crate::store::test_fixtures::copy_settled(src, &d.path().join("claude"));
    let store = ClaudeStore::new(&d.path().join("claude"), &d.path().join("state"));
    (d, store)
}

#[test]
fn streamed_views_equal_the_whole_file_read_on_every_fixture() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut n = 0;
    for dir in [
        "tests/fixtures/claude",
        "tests/fixtures/claude/ended",
        "assets/demo/claude",
    ] {
        let (_d, store) = copy_root(&root.join(dir));
        n += assert_same(&store);
    }
    assert!(n >= 8, "{n} sessions compared");
}

const ID: &str = "0b5e1a2c-3d4e-4f60-8a7b-9c0d1e2f3a4b";

/// A transcript of `rounds` rounds with every feature the converter merges or pairs across
/// records: assistant chunks of one message id (cumulative and not), tool calls answered
/// later, unanswered and in unlinked records, images stored twice (in the result and in
/// `toolUseResult`), a subagent linked by a progress record, persisted output, a compaction
/// half-way, a branch, queued prompts and API errors. `image` bytes of base64 per image.
pub fn generated(dir: &Path, rounds: usize, image: usize) -> std::path::PathBuf {
    let proj = dir.join("claude/projects/-home-u-p");
    let sdir = proj.join(ID);
    std::fs::create_dir_all(sdir.join("tool-results")).unwrap();
    std::fs::create_dir_all(sdir.join("subagents")).unwrap();
    let path = proj.join(format!("{ID}.jsonl"));
    let mut f = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    let b64 = "QUJD".repeat(image / 4);
    let mut parent = serde_json::Value::Null;
    let mut k = 0;
    let w = |v: serde_json::Value, f: &mut std::io::BufWriter<std::fs::File>| {
        writeln!(f, "{v}").unwrap();
    };
    let ts = |i: usize| format!("2026-03-14T09:{:02}:{:02}Z", (i / 60) % 60, i % 60);
    for r in 0..rounds {
        let mut rec = |v: serde_json::Value, parent: &mut serde_json::Value| {
            k += 1;
            let u = format!("00000000-0000-4000-8000-{k:012}");
            let mut v = v;
            v["uuid"] = json!(u);
            v["parentUuid"] = parent.clone();
            v["timestamp"] = json!(ts(k));
            v["sessionId"] = json!(ID);
            *parent = json!(u);
            v
        };
        let call = format!("toolu_{r:04}");
        let msg = format!("msg_{r:04}");
        let prompt = rec(
            json!({"type":"user","message":{"role":"user","content":[
                {"type":"text","text":format!("round {r}: fix the parser")},
                {"type":"image","source":{"type":"base64","media_type":"image/png","data":b64}}]}}),
            &mut parent,
        );
        w(prompt, &mut f);
        // Chunks of one message: thinking, then text growing (cumulative), then the call.
        for (i, blocks) in [
            json!([{"type":"thinking","thinking":"let me look"}]),
            json!([{"type":"text","text":"Looking"}]),
            json!([{"type":"text","text":"Looking at it"}]),
            json!([{"type":"tool_use","id":call,"name":"Read","input":{"file_path":"/p/a.png"}}]),
        ]
        .into_iter()
        .enumerate()
        {
            let mut v = rec(
                json!({"type":"assistant","message":{"id":msg,"role":"assistant","model":"claude-opus-4","content":blocks,"usage":{"input_tokens":i,"output_tokens":5}}}),
                &mut parent,
            );
            if r % 7 == 3 && i == 0 {
                v["isApiErrorMessage"] = json!(true);
            }
            w(v, &mut f);
        }
        if r % 5 == 4 {
            // Unanswered: the user interrupted.
            let v = rec(
                json!({"type":"user","message":{"role":"user","content":[{"type":"text","text":"[Request interrupted by user]"}]}}),
                &mut parent,
            );
            w(v, &mut f);
            continue;
        }
        if r % 4 == 1 {
            let agent = format!("a{r:03}");
            let progress = json!({"type":"progress","parentToolUseID":call,"data":{"agentId":agent,"message":{"big":b64}},"uuid":format!("p-{r}"),"timestamp":ts(r)});
            w(progress, &mut f);
            let sub = sdir.join("subagents").join(format!("agent-{agent}.jsonl"));
            std::fs::write(
                &sub,
                format!(
                    "{}\n{}\n",
                    json!({"type":"user","isSidechain":true,"uuid":"s1","parentUuid":null,"message":{"role":"user","content":format!("look at {r}")}}),
                    json!({"type":"assistant","isSidechain":true,"uuid":"s2","parentUuid":"s1","message":{"id":"m","role":"assistant","content":[{"type":"text","text":"done"}]}})
                ),
            )
            .unwrap();
            age(&sub);
        }
        let content = if r % 6 == 2 {
            std::fs::write(
                sdir.join("tool-results").join(format!("{call}.txt")),
                format!("full output of round {r}\n").repeat(100),
            )
            .unwrap();
            json!("<persisted-output>preview</persisted-output>")
        } else {
            json!([{"type":"text","text":format!("read {r}")},
                {"type":"image","source":{"type":"base64","media_type":"image/png","data":b64}}])
        };
        let result = rec(
            json!({"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":call,"content":content}]},
                "toolUseResult":{"type":"image","file":{"base64":b64,"type":"image/png"}}}),
            &mut parent,
        );
        w(result, &mut f);
        let answer = rec(
            json!({"type":"assistant","message":{"id":format!("{msg}b"),"role":"assistant","content":[{"type":"text","text":format!("fixed {r}")}]}}),
            &mut parent,
        );
        w(answer, &mut f);
        if r == rounds / 2 {
            let mut b = rec(
                json!({"type":"system","subtype":"compact_boundary","compactMetadata":{"trigger":"auto","preTokens":1234}}),
                &mut parent,
            );
            b["logicalParentUuid"] = b["parentUuid"].take();
            w(b, &mut f);
            let s = rec(
                json!({"type":"user","isCompactSummary":true,"message":{"role":"user","content":"This session is being continued from a previous conversation. Summary."}}),
                &mut parent,
            );
            w(s, &mut f);
        }
        if r == 2 {
            // An abandoned branch off the last answer.
            let mut alt = parent.clone();
            let v = rec(
                json!({"type":"user","message":{"role":"user","content":"never mind"}}),
                &mut alt,
            );
            w(v, &mut f);
        }
        if r % 9 == 8 {
            w(
                json!({"type":"attachment","timestamp":ts(r),"attachment":{"type":"queued_command","prompt":"and the tests"}}),
                &mut f,
            );
        }
    }
    // Unlinked: a call and its result whose parent was lost, and a call never answered.
    for (i, v) in [
        json!({"type":"assistant","uuid":"x1","parentUuid":"lost","message":{"id":"mx","role":"assistant","content":[{"type":"tool_use","id":"tx","name":"Bash","input":{}}]}}),
        json!({"type":"user","uuid":"x2","parentUuid":"x1","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"tx","content":"ok"}]}}),
        json!({"type":"assistant","uuid":"x3","parentUuid":"lost2","message":{"id":"my","role":"assistant","content":[{"type":"tool_use","id":"ty","name":"Bash","input":{}}]}}),
    ]
    .into_iter()
    .enumerate()
    {
        let mut v = v;
        v["timestamp"] = json!(ts(i));
        w(v, &mut f);
    }
    let last = json!({"type":"user","uuid":"z","parentUuid":parent,"timestamp":ts(k + 1),"message":{"role":"user","content":"thanks"}});
    w(last, &mut f);
    f.flush().unwrap();
    drop(f);
    age(&path);
    path
}

#[test]
fn streamed_views_equal_the_whole_file_read_on_a_generated_transcript() {
    let d = tempfile::tempdir().unwrap();
    let path = generated(d.path(), 60, 48 * 1024);
    assert!(std::fs::metadata(&path).unwrap().len() > 5_000_000);
    let store = ClaudeStore::new(&d.path().join("claude"), &d.path().join("state"));
    assert_eq!(assert_same(&store), 1);
    // The generated file holds what it claims: merged chunks, pairs, subagents, branches.
    let t = store.transcript(ID, Span::All).unwrap();
    let has = |f: &dyn Fn(&Entry) -> bool| t.entries.iter().any(f);
    assert!(has(&|e| matches!(e, Entry::Nested(_))));
    assert!(has(&|e| matches!(e, Entry::Compaction { .. })));
    assert!(has(
        &|e| matches!(e, Entry::Notice(n) if n.contains("alternative branch"))
    ));
    assert!(has(
        &|e| matches!(e, Entry::Notice(n) if n.starts_with("unlinked"))
    ));
    assert!(has(
        &|e| matches!(e, Entry::Message(m) if m.note.as_deref() == Some("no result (interrupted or still running)"))
    ));
    assert!(has(
        &|e| matches!(e, Entry::Message(m) if m.note.as_deref().is_some_and(|n| n.starts_with("full output")))
    ));
    assert!(has(
        &|e| matches!(e, Entry::Message(m) if m.images.first().is_some_and(|i| i.bytes == 48 * 1024 / 4 * 3))
    ));
}

#[test]
fn raw_a_record_at_a_time_and_its_last_page_are_the_raw_view() {
    let d = tempfile::tempdir().unwrap();
    generated(d.path(), 6, 1024);
    let store = ClaudeStore::new(&d.path().join("claude"), &d.path().join("state"));
    let whole = store.raw(ID).unwrap();
    let mut streamed = String::new();
    store
        .raw_to(ID, &mut |t| {
            streamed.push_str(t);
            Ok(())
        })
        .unwrap();
    assert_eq!(streamed, whole);
    // The smallest page still holds the last record, and says there is more before it.
    let (page, more) = store.raw_page(ID, 1).unwrap();
    assert!(more && !page.is_empty() && whole.ends_with(&page));
    assert!(page.contains("\"thanks\""), "{page}");
    assert_eq!(store.raw_page(ID, u64::MAX).unwrap(), (whole, false));
}
