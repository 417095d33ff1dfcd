//! The streamed views (issues 9 and 11) against the whole read they replace: on every pi
//! fixture and on a generated session with branches, compactions, extension messages, v1
//! entries, bad, lossy and orphaned lines and duplicate ids.

use std::path::Path;

use serde_json::{Value, json};

use super::tests_read::{age, asst, fixture_root, header, raw_one, user};
use super::*;
use crate::model::{Entry, Message};
use crate::store::Span;

/// The whole read's transcript (its notices in front and the unlinked notice apart), window
/// and warnings, as `transcript` and `window` built them before streaming.
struct Whole {
    front: Vec<Entry>,
    body: Vec<Entry>,
    unlinked: Option<Entry>,
    window: Vec<Message>,
    warnings: Vec<String>,
}

fn whole(s: &PiStore, id: &str) -> Whole {
    let (path, l) = s.load_id(id, read::Mode::List).unwrap();
    let (parent, parent_ids, missing) = PiStore::parent_of(&l.parsed);
    let full = read::read(&path, read::Mode::Full).unwrap();
    let t = tree::build(&full.ents);
    let copied = stream::copied(&full.ents, &parent_ids);
    let cx = transcript::Ctx {
        labels: &l.facts.labels,
        copied: &copied,
        parent: parent.as_deref(),
    };
    let body = transcript::entries(&full.ents, &t, &t.path, &cx, 0);
    let on_path = t.on_path();
    let unlinked = t.orphans.iter().filter(|o| !on_path.contains(o)).count();
    let mut front = Vec::new();
    if !l.facts.labels.is_empty() {
        let list: Vec<String> = l.facts.labels.values().cloned().collect();
        front.push(Entry::Notice(format!("labels: {}", list.join(", "))));
    }
    front.extend(missing.map(Entry::Notice));
    Whole {
        front,
        body,
        unlinked: (unlinked > 0).then(|| {
            Entry::Notice(format!(
                "unlinked entries: {unlinked} entr{} whose parent is missing, off the active path",
                if unlinked == 1 { "y" } else { "ies" }
            ))
        }),
        window: window::messages(&full.ents, &t),
        warnings: PiStore::warnings(&full, &t),
    }
}

/// Every view of `id` streamed equals the whole read.
fn same(s: &PiStore, id: &str) {
    let w = whole(s, id);
    let t = s.transcript(id, Span::All).unwrap();
    let mut all = w.front.clone();
    all.extend(w.body.iter().cloned());
    all.extend(w.unlinked.clone());
    assert_eq!(t.entries, all, "transcript of {id}");
    assert_eq!(t.warnings, w.warnings, "warnings of {id}");
    let (_, total, _) = crate::store::last_rounds(w.body.clone(), Span::All);
    assert_eq!(
        (t.total_rounds, t.first_round),
        (total, 0),
        "rounds of {id}"
    );
    for n in [0, 1, 2, 3, 5, usize::MAX] {
        let (cut, total, first) = crate::store::last_rounds(w.body.clone(), Span::LastRounds(n));
        let mut want = if first == 0 {
            w.front.clone()
        } else {
            Vec::new()
        };
        want.extend(cut);
        let t = s.transcript(id, Span::LastRounds(n)).unwrap();
        assert_eq!(
            (t.entries, t.total_rounds, t.first_round),
            (want, total, first),
            "last {n} of {id}"
        );
        assert_eq!(t.warnings, w.warnings, "last {n} warnings of {id}");
    }
    let win = s.window(id).unwrap();
    assert_eq!(win.messages, w.window, "window of {id}");
    assert_eq!(win.warnings, w.warnings, "window warnings of {id}");
    let page = s.window_page(id, 2).unwrap();
    let keep = w.window.len().min(2);
    assert_eq!(
        page.messages,
        w.window[w.window.len() - keep..],
        "window page of {id}"
    );
    assert_eq!(page.omitted, w.window.len() - keep, "window page of {id}");
    let path = s.locate(id).unwrap();
    let reference =
        crate::store::lines::pretty_jsonl(read::open(&path).unwrap(), read::MAX_LINE).unwrap();
    let raw = s.raw(id).unwrap();
    assert_eq!(raw, reference, "raw of {id}");
    crate::store::lines::assert_raw_pages(id, &raw, |b| s.raw_page(id, b).unwrap());
}

/// Every session file of a store (by the id it is listed under).
fn every(s: &PiStore) -> usize {
    let ids: Vec<String> = s.list().into_iter().map(|r| r.id.to_string()).collect();
    for id in &ids {
        same(s, id);
    }
    ids.len()
}

#[test]
fn streamed_views_equal_the_whole_read_on_the_contract_fixtures() {
    let (_d, s) = fixture_root();
    assert_eq!(every(&s), 2);
}

#[test]
fn streamed_views_equal_the_whole_read_on_the_ended_fixtures() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/pi/ended/sessions");
    let d = tempfile::tempdir().unwrap();
    let root = d.path().join("sessions");
    for dir in std::fs::read_dir(&src).unwrap().flatten() {
        let to = root.join(dir.file_name());
        std::fs::create_dir_all(&to).unwrap();
        for f in std::fs::read_dir(dir.path()).unwrap().flatten() {
            std::fs::copy(f.path(), to.join(f.file_name())).unwrap();
            age(&to.join(f.file_name()));
        }
    }
    let s = PiStore::new(&root, &d.path().join("state"));
    assert!(every(&s) >= 7);
}

fn ent(kind: &str, id: &str, parent: &str, extra: Value) -> Value {
    let mut v =
        json!({"type":kind,"id":id,"parentId":parent,"timestamp":"2026-03-14T09:03:00.000Z"});
    v.as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    v
}

fn msg(id: &str, parent: &str, m: Value) -> Value {
    ent("message", id, parent, json!({ "message": m }))
}

/// A session with everything the views convert: rounds with tool calls, a branch left with a
/// summary, two compactions (one with a retained tail), extension messages shown and hidden
/// (before and after the cut of the last rounds), labels, names, bash runs, an orphan, a
/// duplicate id, bad and invalid-UTF-8 lines and a torn tail.
fn generated() -> Vec<u8> {
    let mut l: Vec<Value> = vec![
        header("g1"),
        ent(
            "model_change",
            "m0",
            "",
            json!({"provider":"p","modelId":"m"}),
        ),
    ];
    l[1]["parentId"] = Value::Null;
    let mut parent = "m0".to_string();
    for i in 0..12 {
        let (u, a, r, b) = (
            format!("u{i}"),
            format!("a{i}"),
            format!("r{i}"),
            format!("b{i}"),
        );
        l.push(user(&u, Some(&parent), &format!("prompt {i}")));
        l.push(msg(
            &a,
            &u,
            json!({"role":"assistant","content":[{"type":"thinking","thinking":"hm"},
            {"type":"toolCall","id":format!("c{i}"),"name":"bash","arguments":{"command":"ls"}}],
            "provider":"p","model":"m","stopReason":"toolUse"}),
        ));
        l.push(msg(&r, &a, json!({"role":"toolResult","toolCallId":format!("c{i}"),"toolName":"bash",
            "content":[{"type":"text","text":format!("output {i}")}],"details":{"diff":"-a\n+b"},"isError":i == 3})));
        l.push(asst(&b, &r, &format!("answer {i}")));
        parent = b;
        match i {
            2 => {
                // A branch from a1 that was left with a summary; the path goes on from b2.
                l.push(user("x1", Some("a1"), "abandoned idea"));
                l.push(asst("x2", "x1", "abandoned answer"));
                l.push(ent(
                    "branch_summary",
                    "bs",
                    "b2",
                    json!({"fromId":"x2","summary":"tried x"}),
                ));
                parent = "bs".into();
            }
            4 => {
                l.push(msg(
                    "h1",
                    &parent,
                    json!({"role":"custom","customType":"e","content":"shown","display":true}),
                ));
                l.push(msg(
                    "h2",
                    "h1",
                    json!({"role":"hookMessage","customType":"e","content":"hidden"}),
                ));
                l.push(ent(
                    "custom_message",
                    "cm",
                    "h2",
                    json!({"customType":"e","content":"cm shown","display":true}),
                ));
                l.push(ent(
                    "custom",
                    "cu",
                    "cm",
                    json!({"customType":"e","data":{"big":"state"}}),
                ));
                l.push(msg("sh", "cu", json!({"role":"bashExecution","command":"make","output":"ok","exitCode":2,"excludeFromContext":true})));
                parent = "sh".into();
            }
            5 => {
                l.push(ent(
                    "compaction",
                    "k1",
                    &parent,
                    json!({"summary":"first","firstKeptEntryId":"u4"}),
                ));
                parent = "k1".into();
            }
            7 => {
                l.push(ent(
                    "label",
                    "lb",
                    &parent,
                    json!({"targetId":"u6","label":"look"}),
                ));
                l.push(ent("session_info", "nm", "lb", json!({"name":"generated"})));
                l.push(ent(
                    "thinking_level_change",
                    "tl",
                    "nm",
                    json!({"thinkingLevel":"high"}),
                ));
                parent = "tl".into();
            }
            9 => {
                l.push(msg(
                    "h3",
                    &parent,
                    json!({"role":"custom","customType":"e","content":"late","display":true}),
                ));
                l.push(ent("compaction", "k2", "h3", json!({"summary":"second","retainedTail":[
                    {"role":"user","content":"kept prompt"},{"role":"assistant","content":[{"type":"text","text":"kept"}]}]})));
                parent = "k2".into();
            }
            _ => {}
        }
    }
    l.push(user("o1", Some("gone"), "orphan prompt"));
    l.push(user("u0", Some("o1"), "duplicate of u0"));
    let mut text = String::new();
    for v in &l[..l.len() - 2] {
        text.push_str(&format!("{v}\n"));
    }
    text.push_str("not json\n");
    text.push_str(&format!("{}\n{}\n", l[l.len() - 2], l[l.len() - 1]));
    let mut bytes = text.into_bytes();
    bytes.extend_from_slice(b"{\"type\":\"message\",\"id\":\"lossy\",\"parentId\":\"b11\",\"timestamp\":\"2026-03-14T09:03:00.000Z\",\"message\":{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"bad \xff byte\"}]}}\n");
    bytes.extend_from_slice(&format!("{}\n", asst("end", "lossy", "last answer")).into_bytes());
    bytes.extend_from_slice(b"{\"type\":\"message\",\"id\":\"torn");
    bytes
}

#[test]
fn streamed_views_equal_the_whole_read_on_a_generated_session() {
    let (_d, s, _) = raw_one("2026-03-14T09-00-00-000Z_g1.jsonl", &generated());
    same(&s, "g1");
    let t = s.transcript("g1", Span::All).unwrap();
    assert!(
        t.total_rounds >= 12 && !t.warnings.is_empty(),
        "{:?}",
        t.warnings
    );
    let w = s.window("g1").unwrap();
    assert_eq!(w.messages.first().map(|m| m.text.as_str()), Some("second"));
}

#[test]
fn a_line_rewritten_between_the_passes_shows_nothing_and_is_counted() {
    let (_d, s, p) = raw_one("2026-03-14T09-00-00-000Z_g1.jsonl", &generated());
    let (_, l) = s.load_id("g1", read::Mode::Scan).unwrap();
    let i = l.parsed.ents.iter().position(|e| e.id == "b0").unwrap();
    // pi rewrote the file: another entry now sits where b0's line was.
    let mut bytes = std::fs::read(&p).unwrap();
    let at = l.parsed.ents[i].at as usize;
    let key = memchr::memmem::find(&bytes[at..], b"\"id\":\"b0\"").unwrap() + at;
    bytes[key..key + 9].copy_from_slice(b"\"id\":\"zz\"");
    std::fs::write(&p, &bytes).unwrap();
    let mut lines = stream::Lines::open(&p, &l.parsed.ents).unwrap();
    assert_eq!(*lines.load(i), Value::Null);
    let a = l.parsed.ents.iter().position(|e| e.id == "a0").unwrap();
    assert_eq!(lines.load(a)["id"], "a0");
    assert_eq!(lines.changed, 1);
}

#[test]
fn the_first_pass_keeps_no_message_bodies() {
    let (_d, s, _) = raw_one("2026-03-14T09-00-00-000Z_g1.jsonl", &generated());
    let (_, l) = s.load_id("g1", read::Mode::Scan).unwrap();
    let held: Vec<&str> = l
        .parsed
        .ents
        .iter()
        .filter(|e| e.kind == "message" && !e.v.is_null())
        .map(|e| e.id.as_str())
        .collect();
    // Only the first user message (the title) is read whole, and the assistant line whose
    // text is invalid UTF-8 (its slim parse fails, so it is read lossily).
    assert_eq!(held, ["u0", "lossy"]);
    assert!(l.parsed.ents.iter().all(|e| e.len > 0));
}

/// The full-text index's read (`Store::index_entries_to`) takes the file the listed row names
/// and never looks for it by id (that listed the whole root for each session: most of a
/// first build's time at 10k), and sends the transcript's messages and compactions, numbered
/// as the transcript numbers them. A row whose file now names another session is found
/// again by its id.
#[test]
fn the_index_reads_the_listed_file_and_the_transcripts_messages() {
    use crate::model::SessionSummary;
    use crate::store::sink::gathered;
    let (_d, s, p) = raw_one("2026-03-14T09-00-00-000Z_g1.jsonl", &generated());
    let row = s.list().into_iter().find(|r| &*r.id == "g1").unwrap();
    let kept = |t: Option<crate::model::Transcript>| -> Vec<Entry> {
        let t = t.unwrap();
        // Labels (a note on their target) are left out: the index holds no notes.
        t.entries
            .into_iter()
            .filter_map(|e| match e {
                Entry::Message(mut m) => {
                    m.note = None;
                    Some(Entry::Message(m))
                }
                c @ Entry::Compaction { .. } => Some(c),
                _ => None,
            })
            .collect()
    };
    let want = kept(Some(s.transcript("g1", Span::All).unwrap()));
    assert!(want.len() > 10);
    let indexed = |r: &SessionSummary| kept(gathered(|all| s.index_entries_to(r, all)).unwrap());
    assert_eq!(indexed(&row), want);
    // Moved where discovery never looks (two levels down): the row's file is read all the
    // same, so it was not looked for.
    let deep = p
        .parent()
        .unwrap()
        .join("deeper")
        .join(p.file_name().unwrap());
    std::fs::create_dir_all(deep.parent().unwrap()).unwrap();
    std::fs::rename(&p, &deep).unwrap();
    assert!(s.transcript("g1", Span::All).is_err(), "not found by id");
    let mut moved = row.clone();
    moved.set_path(deep.clone());
    assert_eq!(indexed(&moved), want);
    // Back in place, and the row names another session's file: g1 is read, found by id.
    std::fs::rename(&deep, &p).unwrap();
    let other = p.with_file_name("2026-03-14T09-00-00-000Z_g2.jsonl");
    std::fs::write(&other, serde_json::to_string(&header("g2")).unwrap() + "\n").unwrap();
    let mut elsewhere = row.clone();
    elsewhere.set_path(other);
    assert_eq!(indexed(&elsewhere), want);
}
