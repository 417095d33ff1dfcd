//! Every row of pi.md's malformed-input table (6.2) and every parsing rule of 6.1, on small
//! hand-made files.

use serde_json::json;

use super::tests_read::{age, asst, header, one, raw_one, row, user};
use super::*;
use crate::store::Store;

fn text(t: &Transcript) -> Vec<String> {
    t.messages().map(|m| m.text.clone()).collect()
}

#[test]
fn many_or_huge_files_stream_and_big_custom_entries_are_never_materialized() {
    // Case: extension `custom` entries holding huge state snapshots (kendex#177).
    let big = "z".repeat(3 * 1024 * 1024);
    let (_d, store, p) = one(&[
        user("u1", None, "hello"),
        json!({"type":"custom","id":"c1","parentId":"u1","timestamp":"2026-03-14T09:01:30.000Z",
               "customType":"ext","data":{"snapshot":big}}),
        asst("a1", "c1", "hi"),
    ]);
    let parsed = read::read(&p, read::Mode::List).unwrap();
    let c = parsed.ents.iter().find(|e| e.kind == "custom").unwrap();
    assert!(c.v.is_null(), "custom data is skipped, not materialized");
    assert_eq!(c.parent.as_deref(), Some("u1"), "its ids are still read");
    let a = parsed.ents.iter().find(|e| e.id == "a1").unwrap();
    assert!(
        a.v.is_null() && a.role.as_deref() == Some("assistant"),
        "messages are read slim"
    );
    let s = row(&store, "s1");
    assert_eq!((s.messages, s.title()), (2, "hello"));
    // The path runs through the custom entry: the transcript is whole, the custom hidden.
    let t = store.transcript("s1", Span::All).unwrap();
    assert_eq!(text(&t), ["hello", "hi"]);
    // Files over 8 MiB take `updated` from the entry timestamp (6.2, first row).
    let pad = "q".repeat(9 * 1024 * 1024);
    let mut u = user("u1", None, "x");
    u["message"]["content"] = json!(pad);
    let mut a = asst("a1", "u1", "y");
    a["message"]["timestamp"] = json!(1893456000000_i64);
    let (_d, store, _) = one(&[u, a]);
    assert_eq!(
        crate::model::rfc3339(row(&store, "s1").updated_at.unwrap()),
        "2026-03-14T09:02:00Z"
    );
}

#[test]
fn base64_images_are_sized_never_decoded() {
    let data = "A".repeat(4000);
    let (_d, store, _) = one(&[json!({"type":"message","id":"u1","parentId":null,
        "timestamp":"2026-03-14T09:01:00.000Z","message":{"role":"user","content":[
            {"type":"text","text":"what is this"},{"type":"image","data":data,"mimeType":"image/png"}]}})]);
    assert_eq!(row(&store, "s1").title(), "what is this");
    let t = store.transcript("s1", Span::All).unwrap();
    let m = t.messages().next().unwrap();
    assert_eq!(
        (m.images[0].mime_type.as_str(), m.images[0].bytes),
        ("image/png", 3000)
    );
}

#[test]
fn file_rewritten_shorter_is_read_again_from_scratch() {
    let (_d, store, p) = one(&[
        user("u1", None, "one"),
        asst("a1", "u1", "two"),
        user("u2", Some("a1"), "three"),
    ]);
    assert_eq!(row(&store, "s1").messages, 3);
    // pi deletes a branch by rewriting the file: nothing cached survives the shrink.
    std::fs::write(
        &p,
        format!("{}\n{}\n", header("s1"), user("u1", None, "one")),
    )
    .unwrap();
    age(&p);
    assert_eq!(row(&store, "s1").messages, 1);
    assert_eq!(text(&store.transcript("s1", Span::All).unwrap()), ["one"]);
}

#[test]
fn migrated_versions_link_v1_entries_in_memory_and_hook_messages_are_custom() {
    let h = json!({"type":"session","id":"v1s","timestamp":"2026-03-14T09:00:00.000Z","cwd":"/w"});
    let lines = [
        h,
        json!({"type":"message","timestamp":"2026-03-14T09:01:00.000Z","message":{"role":"user","content":"old one"}}),
        json!({"type":"message","timestamp":"2026-03-14T09:02:00.000Z","message":{"role":"hookMessage","customType":"h","content":"hook says","display":true}}),
        json!({"type":"message","timestamp":"2026-03-14T09:03:00.000Z","message":{"role":"assistant","content":[{"type":"text","text":"old two"}]}}),
    ];
    let body: String = lines.iter().map(|l| format!("{l}\n")).collect();
    let (_d, store, p) = raw_one("2026-03-14T09-00-00-000Z_v1s.jsonl", body.as_bytes());
    let before = std::fs::read(&p).unwrap();
    let s = row(&store, "v1s");
    assert_eq!(s.messages, 2);
    assert!(
        s.badges().any(|b| b.contains("old format")),
        "{:?}",
        s.badges()
    );
    let t = store.transcript("v1s", Span::All).unwrap();
    assert_eq!(text(&t), ["old one", "hook says", "old two"]);
    assert_eq!(t.messages().nth(1).unwrap().role.as_str(), "extension h");
    assert!(t.warnings.iter().any(|w| w.contains("without ids")));
    assert_eq!(std::fs::read(&p).unwrap(), before, "never migrated on disk");
}

#[test]
fn branched_from_and_converted_shapes_never_fail_the_file() {
    // Converted sessions with unusual shapes: wrong types become "other", never a failure.
    let (_d, store, _) = one(&[
        user("u1", None, "converted"),
        json!({"type":"message","id":"w1","parentId":"u1","timestamp":"2026-03-14T09:01:10.000Z","message":"not an object"}),
        json!({"type":"weird_import","id":"w2","parentId":"w1","timestamp":"2026-03-14T09:01:20.000Z"}),
        json!({"type":"message","id":"w3","parentId":"w2","timestamp":42,"message":{"role":"assistant","content":"plain string"}}),
        json!({"type":"message","id":"a1","parentId":"w3","timestamp":"2026-03-14T09:02:00.000Z","message":{"role":"assistant","content":[{"type":"text","text":"fine"}]}}),
    ]);
    let s = row(&store, "s1");
    assert!(s.error().is_none());
    let t = store.transcript("s1", Span::All).unwrap();
    assert_eq!(text(&t).first().map(String::as_str), Some("converted"));
    assert_eq!(text(&t).last().map(String::as_str), Some("fine"));
    let (_, l) = store.load_id("s1", read::Mode::List).unwrap();
    assert_eq!(l.facts.other, 1);
}

#[test]
fn bad_lines_skipped_and_counted_orphans_and_duplicates() {
    let body = format!(
        "{}\n{}\nnot json at all\n{}\n{}\n{}\n",
        header("s1"),
        user("u1", None, "first"),
        asst("a1", "u1", "reply"),
        asst("a1", "u1", "reply again"),
        user("o1", Some("gone"), "orphan")
    );
    let (_d, store, _) = raw_one("2026-03-14T09-00-00-000Z_s1.jsonl", body.as_bytes());
    let s = row(&store, "s1");
    assert!(
        s.badges().any(|b| b == "1 unreadable line"),
        "{:?}",
        s.badges()
    );
    // The leaf is the orphan (last line): its path is itself, the rest is unlinked.
    let t = store.transcript("s1", Span::All).unwrap();
    assert_eq!(text(&t), ["orphan"]);
    assert!(
        t.warnings.iter().any(|w| w.contains("duplicate entry id")),
        "{:?}",
        t.warnings
    );
    assert!(
        t.warnings
            .iter()
            .any(|w| w == "1 unreadable line(s) skipped")
    );
}

#[test]
fn invalid_header_is_an_error_row_still_viewable_and_not_pi_is_hidden() {
    let body = format!(
        "{}\n{}\n",
        user("u1", None, "no header here"),
        asst("a1", "u1", "ok")
    );
    let (_d, store, _) = raw_one("2026-03-14T09-00-00-000Z_bad.jsonl", body.as_bytes());
    let s = row(&store, "bad");
    assert_eq!(s.error(), Some("invalid header (pi would reset this file)"));
    let t = store.transcript("bad", Span::All).unwrap();
    assert_eq!(text(&t), ["no header here", "ok"]);
    let (_d, store, _) = raw_one("notes.jsonl", b"{\"hello\":1}\n");
    let s = row(&store, "notes");
    assert!(s.error().is_none() && s.is_empty() && s.cwd.is_none());
    assert_eq!(s.badges().next().unwrap(), "not a pi session");
    let f = crate::store::registry::Filter::default();
    assert!(!f.accepts(&s), "hidden by default");
}

#[test]
fn torn_tail_is_pending_while_growing_and_truncated_once_settled() {
    let body = format!(
        "{}\n{}\n{{\"type\":\"message\",\"id\":\"a1\"",
        header("s1"),
        user("u1", None, "q")
    );
    let (_d, store, p) = raw_one("2026-03-14T09-00-00-000Z_s1.jsonl", body.as_bytes());
    let s = row(&store, "s1");
    assert!(s.badges().any(|b| b == "truncated"));
    std::fs::File::options()
        .write(true)
        .open(&p)
        .unwrap()
        .set_modified(std::time::SystemTime::now())
        .unwrap();
    let s = row(&store, "s1");
    assert!(
        s.badges().any(|b| b == "still being written"),
        "{:?}",
        s.badges()
    );
    assert!(!s.badges().any(|b| b.contains("unreadable")));
    // A leaf user message in a file changed just now: live.
    assert!(s.badges().any(|b| b == "live"), "{:?}", s.badges());
}

#[test]
fn oversized_lines_symlinks_and_fifos_are_not_read() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path().join("sessions/--w--");
    std::fs::create_dir_all(&root).unwrap();
    let c = std::ffi::CString::new(root.join("x_fifo.jsonl").to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let store = PiStore::new(&d.path().join("sessions"), d.path());
    assert!(store.list().is_empty(), "a FIFO is not a session file");
    let e = read::open(&root.join("x_fifo.jsonl")).unwrap_err();
    assert!(e.to_string().contains("FIFO"), "{e}");
}

#[test]
fn errors_and_aborts_show_their_message_and_mark_the_leaf() {
    let (_d, store, _) = one(&[
        user("u1", None, "go"),
        json!({"type":"message","id":"a1","parentId":"u1","timestamp":"2026-03-14T09:02:00.000Z",
               "message":{"role":"assistant","content":[],"stopReason":"error","errorMessage":"overloaded"}}),
    ]);
    let s = row(&store, "s1");
    assert!(
        s.badges().any(|b| b == "ended with error"),
        "{:?}",
        s.badges()
    );
    let t = store.transcript("s1", Span::All).unwrap();
    let m = t.messages().last().unwrap();
    assert!(m.is_error && m.note.as_deref() == Some("error: overloaded"));
}
