//! Section 6: every malformed case becomes an error row, a badge or a lenient rendering,
//! never a panic or a write.

use serde_json::json;

use super::tests_read::{path, row, setup, with_files};
use super::*;
use crate::model::{Role, rfc3339};

/// A minimal valid record for `id` with the given `messages` JSON and extra top-level text.
fn rec(id: &str, messages: &str, extra: &str) -> Vec<u8> {
    format!(
        "{{\"id\": \"{id}\", \"created_at\": \"2026-03-01T10:00:00+00:00\", \
         \"updated_at\": \"2026-03-01T10:05:00+00:00\", \"messages\": {messages}{extra}}}"
    )
    .into_bytes()
}

const SYS_USER: &str = r#"[{"role": "system", "content": "s"}, {"role": "user", "content": "hi"}]"#;

fn error_of(bytes: &[u8]) -> (Option<String>, bool) {
    let (_d, store) = with_files(&[("abc.json", bytes)]);
    let rows = store.list();
    assert_eq!(rows.len(), 1, "an error row, never a missing session");
    (rows[0].error().map(String::from), rows[0].read_only)
}

#[test]
fn unreadable_records_are_error_rows() {
    let (e, ro) = error_of(b"{\"id\": \"abc\",");
    assert!(e.unwrap().starts_with("unreadable record: invalid JSON"));
    assert!(ro);
    let mut bom = b"\xEF\xBB\xBF".to_vec();
    bom.extend(rec("abc", SYS_USER, ""));
    assert_eq!(
        error_of(&bom).0.as_deref(),
        Some("unreadable record: starts with a UTF-8 BOM")
    );
    assert_eq!(
        error_of(b"[1, 2]").0.as_deref(),
        Some("unreadable record: not a JSON object")
    );
    assert!(
        error_of(b"{\"id\": \"ab\xff\"}")
            .0
            .unwrap()
            .starts_with("unreadable record: invalid JSON")
    );
    let (_d, store) = with_files(&[("abc.json", b"{nope")]);
    assert!(matches!(
        store.transcript("abc", Span::All),
        Err(Error::Corrupt(_))
    ));
    assert!(matches!(store.window("abc"), Err(Error::Corrupt(_))));
    assert_eq!(
        store.raw("abc").unwrap(),
        "{nope",
        "raw shows the stored bytes"
    );
    assert!(matches!(
        store.set_archived("abc", true),
        Err(Error::Refused(_))
    ));
    assert!(matches!(
        store.set_pinned("abc", true),
        Err(Error::Refused(_))
    ));
    assert!(matches!(store.delete("abc"), Err(Error::Refused(_))));
    assert_eq!(std::fs::read(path(&store, "abc.json")).unwrap(), b"{nope");
}

#[test]
fn missing_required_keys_are_error_rows() {
    let no_id = br#"{"updated_at": "2026-03-01T10:05:00+00:00", "messages": []}"#;
    assert_eq!(error_of(no_id).0.as_deref(), Some("missing id"));
    let no_upd = br#"{"id": "abc", "messages": []}"#;
    assert_eq!(error_of(no_upd).0.as_deref(), Some("missing updated_at"));
    let no_msgs = br#"{"id": "abc", "updated_at": "2026-03-01T10:05:00+00:00"}"#;
    assert_eq!(error_of(no_msgs).0.as_deref(), Some("missing messages"));
}

#[test]
fn id_file_mismatch_is_a_read_only_error_row() {
    let (_d, store) = with_files(&[("abc.json", &rec("other", SYS_USER, ""))]);
    let s = row(&store, "abc");
    assert_eq!(s.error(), Some("id/file mismatch"));
    assert!(s.read_only);
    assert_eq!(&*s.id, "abc");
    assert_eq!(s.title(), "hi", "other fields hold what could be read");
    assert_eq!(s.badges().collect::<Vec<_>>(), ["record id other"]);
    // Readable for display, never written.
    let tr = store.transcript("abc", Span::All).unwrap();
    assert_eq!(tr.warnings, ["id/file mismatch: read-only"]);
    let before = std::fs::read(path(&store, "abc.json")).unwrap();
    assert!(matches!(
        store.set_archived("abc", true),
        Err(Error::Refused(_))
    ));
    assert!(matches!(store.rename("abc", "x"), Err(Error::Refused(_))));
    assert!(matches!(store.fork("abc", None), Err(Error::Refused(_))));
    assert!(matches!(store.delete("abc"), Err(Error::Refused(_))));
    assert_eq!(std::fs::read(path(&store, "abc.json")).unwrap(), before);
}

#[test]
fn non_array_history_is_an_error_row_with_raw_view() {
    let (_d, store) = with_files(&[
        ("abc.json", &rec("abc", "{\"role\": \"user\"}", "")),
        (
            "xyz.json",
            &rec("xyz", SYS_USER, ", \"transcript\": \"gone\""),
        ),
    ]);
    assert_eq!(row(&store, "abc").error(), Some("messages is not an array"));
    assert_eq!(
        row(&store, "xyz").error(),
        Some("transcript is not an array")
    );
    assert!(matches!(
        store.transcript("abc", Span::All),
        Err(Error::Corrupt(_))
    ));
    assert!(matches!(store.window("xyz"), Err(Error::Corrupt(_))));
    assert!(
        store
            .raw("abc")
            .unwrap()
            .contains("\"messages\": {\n    \"role\": \"user\"\n  }")
    );
}

#[test]
fn odd_entries_render_leniently_and_keep_positions() {
    let messages = r#"[
        {"role": "system", "content": "s"},
        42,
        {"content": "no role"},
        {"role": "user", "content": [{"type": "text", "text": "look"}, {"type": "image_url"}]},
        {"role": "assistant", "content": null, "reasoning_content": "hmm",
         "tool_calls": [{"id": "c1", "type": "function",
                         "function": {"name": "run_bash", "arguments": "{not json"}}]},
        {"role": "tool", "tool_call_id": "zz", "content": "stray"},
        {"role": "tool", "tool_call_id": "c1", "name": "run_bash", "content": "ok"}
    ]"#;
    let (_d, store) = with_files(&[("abc.json", &rec("abc", messages, ""))]);
    let s = row(&store, "abc");
    assert_eq!(s.error(), None);
    assert_eq!(s.messages, 6, "non-system entries, odd ones included");
    assert_eq!(s.title(), "look [image]");
    let tr = store.transcript("abc", Span::All).unwrap();
    let m: Vec<_> = tr.messages().collect();
    assert_eq!(m.len(), 7);
    assert_eq!((m[1].index, m[1].text.as_str()), (Some(1), "42"));
    assert_eq!(m[1].note.as_deref(), Some("unknown entry"));
    assert_eq!(m[2].note.as_deref(), Some("unknown entry"));
    assert_eq!(m[2].role, Role::Other("unknown".into()));
    assert_eq!(m[3].text, "look\n[image]");
    assert_eq!(m[4].text, "");
    assert_eq!(m[4].thinking, ["hmm"]);
    assert_eq!(m[4].tool_calls[0].arguments, json!("{not json"));
    assert_eq!(m[5].note.as_deref(), Some("no matching tool call"));
    assert_eq!(m[5].tool_name, None);
    assert_eq!(m[6].note, None);
    assert_eq!(m[6].tool_name.as_deref(), Some("run_bash"));
}

#[test]
fn non_finite_numbers_read_but_never_rewritten() {
    let extra = ", \"state\": {\"total_cost_usd\": NaN, \"x\": -Infinity}";
    let bytes = rec("abc", SYS_USER, extra);
    let (_d, store) = with_files(&[("abc.json", &bytes)]);
    let s = row(&store, "abc");
    assert_eq!(s.error(), None);
    assert_eq!(s.badges().collect::<Vec<_>>(), ["non-finite numbers"]);
    assert!(store.window("abc").unwrap().warnings[0].contains("NaN/Infinity"));
    assert_eq!(store.raw("abc").unwrap().as_bytes(), &bytes[..]);
    for r in [
        store.set_archived("abc", true),
        store.rename("abc", "t"),
        store.fork("abc", None).map(|_| ()),
    ] {
        assert!(
            matches!(r, Err(Error::Refused(ref m)) if m.contains("NaN")),
            "{r:?}"
        );
    }
    assert_eq!(std::fs::read(path(&store, "abc.json")).unwrap(), bytes);
    store.set_pinned("abc", true).unwrap(); // sidecar only: allowed
    assert!(row(&store, "abc").pinned());
}

#[test]
fn duplicate_keys_last_wins() {
    let extra = ", \"title\": \"first\", \"title\": \"second\"";
    let (_d, store) = with_files(&[("abc.json", &rec("abc", SYS_USER, extra))]);
    assert_eq!(row(&store, "abc").title(), "second");
}

#[test]
fn archived_uses_python_truthiness_and_writer_normalises() {
    for (v, want) in [
        ("1", true),
        ("\"\"", false),
        ("\"yes\"", true),
        ("[]", false),
        ("null", false),
    ] {
        let extra = format!(", \"archived\": {v}");
        let (_d, store) = with_files(&[("abc.json", &rec("abc", SYS_USER, &extra))]);
        assert_eq!(row(&store, "abc").archived, want, "{v}");
    }
    let (_d, store) = with_files(&[("abc.json", &rec("abc", SYS_USER, ", \"archived\": 1"))]);
    store.set_archived("abc", false).unwrap();
    let text = std::fs::read_to_string(path(&store, "abc.json")).unwrap();
    assert!(text.contains("\"archived\": false"));
}

#[test]
fn unparseable_updated_at_sorts_last_and_is_shown_raw() {
    let bytes = br#"{"id": "abc", "created_at": "2026-03-01T10:00:00+00:00", "updated_at": "last tuesday", "messages": []}"#;
    let (_d, store) = with_files(&[("abc.json", bytes)]);
    let s = row(&store, "abc");
    assert_eq!(s.error(), None);
    assert_eq!((s.updated_at, s.last_activity()), (None, None));
    assert_eq!(
        s.badges().collect::<Vec<_>>(),
        ["updated_at \"last tuesday\""]
    );
    assert!(!s.has_user_message);
}

#[test]
fn status_badges_and_lease_probe() {
    let (_d, store) = with_files(&[
        (
            "act.json",
            &rec("act", SYS_USER, ", \"status\": \"active\""),
        ),
        (
            "odd.json",
            &rec("odd", SYS_USER, ", \"status\": \"paused\""),
        ),
    ]);
    assert_eq!(
        row(&store, "act").badges().collect::<Vec<_>>(),
        ["interrupted"]
    );
    assert!(
        !path(&store, "act.lock").exists(),
        "the probe never creates the lock"
    );
    let held = lease::take_lease(&path(&store, "act.lock"), "act").unwrap();
    assert_eq!(row(&store, "act").badges().collect::<Vec<_>>(), ["running"]);
    assert!(store.in_use("act"));
    assert!(store.window("act").unwrap().warnings[0].starts_with("running"));
    drop(held);
    assert!(!store.in_use("act"));
    assert_eq!(row(&store, "odd").badges().collect::<Vec<_>>(), ["paused"]);
}

#[test]
fn branched_from_and_model_are_listed() {
    let extra = ", \"branched_from\": \"Qm3xT8vLk2pR9aZc\", \"model\": \"local/qwen\"";
    let (_d, store) = with_files(&[("abc.json", &rec("abc", SYS_USER, extra))]);
    let s = row(&store, "abc");
    assert_eq!(s.forked_from(), Some("harness:Qm3xT8vLk2pR9aZc"));
    assert_eq!(s.model.as_deref(), Some("local/qwen"));
    assert_eq!(
        s.created_at.map(rfc3339).as_deref(),
        Some("2026-03-01T10:00:00Z")
    );
}

#[test]
fn title_falls_back_to_summary_line_then_id() {
    let only_sys = r#"[{"role": "system", "content": "s"}]"#;
    let extra = ", \"summary\": \"\\n  First line\\nsecond\", \"title\": \"   \"";
    let (_d, store) = with_files(&[
        ("abc.json", &rec("abc", only_sys, extra)),
        ("xyz.json", &rec("xyz", only_sys, "")),
    ]);
    // Python's first line of "\n  First line" is "" -> falls through to the id.
    assert_eq!(row(&store, "abc").title(), "abc");
    assert_eq!(row(&store, "xyz").title(), "xyz");
    let long = format!(
        "{}{}",
        "<user_input>\n",
        "word ".repeat(40) + "\n</user_input>"
    );
    let msgs = json!([{"role": "user", "content": long}]).to_string();
    let (_d2, s2) = with_files(&[("lng.json", &rec("lng", &msgs, ""))]);
    let t = row(&s2, "lng").title().to_string();
    assert_eq!(t.chars().count(), 80);
    assert!(t.starts_with("word word"));
}

#[test]
fn invalid_or_stale_sidecar_never_breaks_the_row() {
    let (_d, store) = setup();
    let side = path(&store, ".spool/r7-PqLs_04VmYe2K.json");
    std::fs::write(&side, "{broken").unwrap();
    let s = row(&store, "r7-PqLs_04VmYe2K");
    assert!(!s.unread);
    assert_eq!(s.badges().count(), 2);
    assert!(
        s.badges()
            .nth(1)
            .unwrap()
            .starts_with("spool state unreadable")
    );
    std::fs::write(&side, r#"{"version":1,"read_transcript_len":99}"#).unwrap();
    assert!(!row(&store, "r7-PqLs_04VmYe2K").unread, "stale marker");
    std::fs::write(&side, r#"{"version":1,"read_transcript_len":6}"#).unwrap();
    assert!(!row(&store, "r7-PqLs_04VmYe2K").unread);
}

#[test]
fn recovery_notices_for_every_assistant_in_call_order() {
    let messages = r#"[
        {"role": "system", "content": "s"},
        {"role": "user", "content": "go"},
        {"role": "assistant", "tool_calls": [
            {"id": "a1", "type": "function", "function": {"name": "x", "arguments": "{}"}},
            {"id": "a2", "type": "function", "function": {"name": "y", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "a2", "content": "done"},
        {"role": "user", "content": "again"},
        {"role": "assistant", "tool_calls": [
            {"id": "b1", "type": "function", "function": {"name": "z", "arguments": "{}"}}]}
    ]"#;
    let (_d, store) = with_files(&[("abc.json", &rec("abc", messages, ""))]);
    let w = store.window("abc").unwrap();
    let shape: Vec<(Option<usize>, bool, Option<&str>)> = w
        .messages
        .iter()
        .map(|m| (m.index, m.is_virtual, m.tool_call_id.as_deref()))
        .collect();
    assert_eq!(
        shape,
        [
            (Some(0), false, None),
            (Some(1), false, None),
            (Some(2), false, None),
            (Some(3), false, Some("a2")),
            (None, true, Some("a1")),
            (Some(4), false, None),
            (Some(5), false, None),
            (None, true, Some("b1")),
        ]
    );
}
