//! The malformed-input case table (section 6.2), discovery and the sort key.

use serde_json::json;

use super::tests_read::{A, META, home, row, sessions};
use super::view::ORPHAN_NOTE;
use super::*;
use crate::model::{Entry, Role, rfc3339};

const ID: &str = "20260314-091502";

fn one(log: &str) -> (tempfile::TempDir, LoomStore) {
    home(&[(&format!("{ID}.jsonl"), log.as_bytes())])
}

fn msg(role: &str, content: &str) -> String {
    json!({"kind":"message","time":"2026-03-14T09:16:00+01:00","message":{"role":role,"content":content}}).to_string()
}

const CALL2: &str = r#"{"kind":"message","time":"2026-03-14T09:17:00+01:00","message":{"role":"assistant","content":"","tool_calls":[{"function":{"name":"a","arguments":null}},{"function":{"name":"b","arguments":{"x":1}}}]}}"#;

#[test]
fn garbage_and_truncated_lines_are_counted() {
    let log = [
        META,
        "not json",
        &msg("user", "hi"),
        "{\"kind\":\"message\",\"mess",
        "",
        "   ",
        "{\"kind\":5}",
        "{\"kind\":\"message\",\"message\":\"x\"}\n",
    ]
    .join("\n");
    let (_d, s) = one(&log);
    let r = row(&s, ID);
    assert_eq!(r.messages, 1);
    assert_eq!(r.badges().collect::<Vec<_>>(), ["4 unreadable lines"]);
    let tr = s.transcript(ID, Span::All).unwrap();
    let notices: Vec<_> = tr
        .entries
        .iter()
        .filter_map(|e| match e {
            Entry::Notice(n) => Some(n.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(
        notices,
        ["1 unreadable line skipped", "3 unreadable lines skipped"]
    );
}

#[test]
fn over_long_line_is_skipped_with_resync() {
    let d = tempfile::tempdir().unwrap();
    std::fs::create_dir(d.path().join("sessions")).unwrap();
    let path = d.path().join("sessions").join(format!("{ID}.jsonl"));
    {
        use std::io::Write;
        let mut f = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
        writeln!(f, "{META}").unwrap();
        writeln!(f, "{}", msg("user", "before")).unwrap();
        write!(
            f,
            "{{\"kind\":\"message\",\"message\":{{\"role\":\"tool\",\"content\":\""
        )
        .unwrap();
        let chunk = vec![b'x'; 1 << 20];
        for _ in 0..17 {
            f.write_all(&chunk).unwrap();
        }
        writeln!(f, "\"}}}}").unwrap();
        writeln!(f, "{}", msg("assistant", "after")).unwrap();
    }
    let s = LoomStore::new(d.path());
    let r = row(&s, ID);
    assert_eq!(
        r.messages, 2,
        "records on both sides of the long line are read"
    );
    assert!(r.error().unwrap().contains("16 MiB"));
    assert!(r.badges().any(|b| b.contains("16 MiB")));
    let tr = s.transcript(ID, Span::All).unwrap();
    let kinds: Vec<String> = tr
        .entries
        .iter()
        .map(|e| match e {
            Entry::Message(m) => m.text.clone(),
            Entry::Notice(n) => format!("notice: {n}"),
            _ => "other".into(),
        })
        .collect();
    assert_eq!(kinds.len(), 3);
    assert_eq!(kinds[0], "before");
    assert!(kinds[1].starts_with("notice: a line longer than 16 MiB"));
    assert_eq!(kinds[2], "after");
    let w = s.window(ID).unwrap();
    assert!(w.warnings.iter().any(|x| x.contains("resume")));
    assert!(matches!(s.fork(ID, None), Err(Error::Refused(_))));
    assert!(s.raw(ID).unwrap().contains("longer than 16 MiB, not shown"));
}

#[test]
fn no_meta_uses_the_id_as_local_time() {
    let (_d, s) = one(&msg("user", "hi"));
    let r = row(&s, ID);
    let local = chrono::NaiveDate::from_ymd_opt(2026, 3, 14)
        .unwrap()
        .and_hms_opt(9, 15, 2)
        .unwrap();
    let want = chrono::TimeZone::from_local_datetime(&chrono::Local, &local)
        .earliest()
        .unwrap();
    assert_eq!(r.created_at, Some(want.with_timezone(&chrono::Utc)));
    assert_eq!(r.cwd, None);
    assert_eq!(r.model, None);
}

#[test]
fn more_than_one_meta_uses_the_first_and_warns() {
    let second = r#"{"kind":"meta","time":"2026-03-15T10:00:00+01:00","model":"other","cwd":"/q"}"#;
    let (_d, s) = one(&[META, &msg("user", "hi"), second].join("\n"));
    let r = row(&s, ID);
    assert_eq!(r.cwd.as_deref(), Some("/p"));
    assert_eq!(
        r.created_at.map(rfc3339).as_deref(),
        Some("2026-03-14T08:15:02Z")
    );
    assert_eq!(
        r.updated_at.map(rfc3339).as_deref(),
        Some("2026-03-15T09:00:00Z")
    );
    assert_eq!(
        r.badges().collect::<Vec<_>>(),
        ["2 meta records (first used)"]
    );
}

#[test]
fn unknown_role_is_rendered_and_kept_in_replay() {
    let (_d, s) = one(&[META, &msg("user", "hi"), &msg("toolResult", "odd")].join("\n"));
    let tr = s.transcript(ID, Span::All).unwrap();
    let m: Vec<_> = tr.messages().collect();
    assert_eq!(m[1].role, Role::Other("toolResult".into()));
    assert_eq!(m[1].note.as_deref(), Some("unknown role"));
    let w = s.window(ID).unwrap();
    assert_eq!(w.messages[2].text, "odd");
    assert_eq!(w.messages[2].note.as_deref(), Some("unknown role"));
}

#[test]
fn stray_and_extra_tool_results_stay_unpaired() {
    let log = [
        META,
        &msg("tool", "stray"),
        &msg("user", "u"),
        CALL2,
        &msg("tool", "r1"),
        &msg("tool", "r2"),
        &msg("tool", "r3"),
    ]
    .join("\n");
    let (_d, s) = one(&log);
    let tr = s.transcript(ID, Span::All).unwrap();
    let ids: Vec<_> = tr.messages().map(|m| m.tool_call_id.clone()).collect();
    assert_eq!(
        ids,
        [
            None,
            None,
            None,
            Some("call_2_0".into()),
            Some("call_2_1".into()),
            None
        ]
    );
    let m: Vec<_> = tr.messages().collect();
    assert_eq!(
        m[2].tool_calls[0].arguments,
        json!({}),
        "null arguments display as {{}}"
    );
    assert_eq!(m[2].tool_calls[1].arguments, json!({"x":1}));
    let w = s.window(ID).unwrap();
    assert!(
        w.messages
            .iter()
            .all(|m| m.note.as_deref() != Some(ORPHAN_NOTE))
    );
    assert_eq!(w.messages.len(), 8);
}

#[test]
fn compact_without_summary_uses_empty_text() {
    let (_d, s) = one(&[
        META,
        &msg("user", "u"),
        r#"{"kind":"compact","time":"2026-03-14T09:20:00+01:00"}"#,
    ]
    .join("\n"));
    let w = s.window(ID).unwrap();
    assert_eq!(w.messages[1].text, SUMMARY_PREFIX);
    assert!(w.messages[1].is_virtual);
    assert_eq!(row(&s, ID).summary(), "");
}

#[test]
fn non_object_arguments_make_the_line_bad() {
    let bad = r#"{"kind":"message","message":{"role":"assistant","content":"","tool_calls":[{"function":{"name":"a","arguments":"ls"}}]}}"#;
    let (_d, s) = one(&[META, &msg("user", "u"), bad].join("\n"));
    let r = row(&s, ID);
    assert_eq!(
        (
            r.messages,
            r.badges().map(str::to_owned).collect::<Vec<_>>()
        ),
        (1, vec!["1 unreadable line".to_owned()])
    );
}

#[test]
fn empty_file_is_an_empty_session() {
    let (_d, s) = one("");
    let r = row(&s, ID);
    assert_eq!(r.messages, 0);
    assert!(r.is_empty() && !r.has_user_message);
    assert_eq!(r.title(), "(empty session)");
    assert!(r.updated_at.is_some(), "falls back to the file mtime");
    // A meta-only file (every loom start) is empty too.
    let (_d, s) = one(&format!("{META}\n"));
    assert!(row(&s, ID).is_empty());
}

#[test]
fn unreadable_file_is_an_error_row() {
    let (d, s) = home(&[]);
    let dir = sessions(&d).join(format!("{ID}.jsonl"));
    std::fs::create_dir(&dir).unwrap();
    let c = Candidate {
        id: ID.into(),
        path: dir,
        mtime: None,
        stat: None,
    };
    let r = s.summarize(&c).unwrap();
    assert!(r.error().is_some() && r.read_only);
    // Without root, a 0000 file is unreadable too.
    let p = sessions(&d).join("20260314-091503.jsonl");
    std::fs::write(&p, A).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o000)).unwrap();
    if std::fs::File::open(&p).is_err() {
        assert!(row(&s, "20260314-091503").error().is_some());
    }
}

#[test]
fn invalid_utf8_is_decoded_lossily_and_warned() {
    let mut log = format!("{META}\n").into_bytes();
    log.extend_from_slice(
        b"{\"kind\":\"message\",\"message\":{\"role\":\"user\",\"content\":\"caf\xe9\"}}\n",
    );
    let (_d, s) = home(&[(&format!("{ID}.jsonl"), &log)]);
    let r = row(&s, ID);
    assert_eq!(r.title(), "caf\u{fffd}");
    assert_eq!(
        r.badges().collect::<Vec<_>>(),
        ["1 line with invalid UTF-8"]
    );
}

#[test]
fn title_skips_inserted_user_messages_and_is_cut() {
    let long = "word ".repeat(40);
    let log = [
        META,
        &msg("user", "[Skill loaded: x]\nbody"),
        &msg(
            "user",
            "[Session 20260101-000000 reopened. Time has passed.]",
        ),
        &msg("user", &format!("  {long}\n")),
    ]
    .join("\n");
    let (_d, s) = one(&log);
    let r = row(&s, ID);
    assert_eq!(r.title().chars().count(), 80);
    assert!(r.title().starts_with("word word") && r.title().ends_with('…'));
    // Only inserted messages: fall back to the first user message.
    let (_d, s) = one(&[META, &msg("user", "[Context summary - x]\n\ns")].join("\n"));
    assert_eq!(row(&s, ID).title(), "[Context summary - x] s");
}

#[test]
fn discovery_filters_and_sorts_by_the_decided_key() {
    let (d, s) = home(&[
        ("20260314-091502.jsonl", b""),
        ("20260314-091502-2.jsonl", b""),
        ("20260314-091502-10.jsonl", b""),
        ("20260315-000000.jsonl", b""),
        ("notes.jsonl", b""),
        (".hidden.jsonl", b""),
        ("readme.txt", b""),
    ]);
    let dir = sessions(&d);
    std::fs::create_dir(dir.join("20260316-000000.jsonl")).unwrap();
    std::os::unix::fs::symlink(
        dir.join("20260315-000000.jsonl"),
        dir.join("20260317-000000.jsonl"),
    )
    .unwrap();
    // Names std's `read_dir` lists but loom does not (not UTF-8), and odd ones it does.
    use std::os::unix::ffi::OsStrExt;
    std::fs::write(dir.join(std::ffi::OsStr::from_bytes(b"x\xff.jsonl")), "").unwrap();
    std::fs::write(dir.join("with space.jsonl"), "").unwrap();
    let found = s.discover();
    for c in &found {
        assert_eq!(c.path, dir.join(format!("{}.jsonl", c.id)));
    }
    let ids: Vec<String> = found.into_iter().map(|c| c.id).collect();
    // The stat pass's survey finds the same candidates, in any order.
    let mut found = s.discover_unordered();
    found.sort_by_key(|c| ids.iter().position(|i| *i == c.id));
    assert_eq!(found, s.discover());
    assert_eq!(
        ids,
        [
            "20260315-000000",
            "20260314-091502-10",
            "20260314-091502-2",
            "20260314-091502",
            "with space",
            "notes"
        ]
    );
    let r = row(&s, "notes");
    assert!(r.read_only && r.badges().any(|b| b == "non-standard id"));
    assert_eq!(r.created_at, None);
    assert!(matches!(
        s.transcript("20260317-000000", Span::All),
        Err(Error::NotFound(_))
    ));
    assert!(matches!(s.window("../x"), Err(Error::NotFound(_))));
    assert!(
        LoomStore::new(&d.path().join("missing"))
            .discover()
            .is_empty()
    );
}

#[test]
fn id_regex_and_sort_key() {
    for ok in ["20260314-091502", "20260314-091502-1", "20260314-091502-99"] {
        assert!(is_standard_id(ok), "{ok}");
    }
    for bad in [
        "20260314-091502-0",
        "20260314-091502-100",
        "20260314-09150",
        "notes",
        "20260314_091502",
        "20260314-091502-01",
        "2026031a-091502",
    ] {
        assert!(!is_standard_id(bad), "{bad}");
    }
    assert!(sort_key("20260314-091502-10") > sort_key("20260314-091502-2"));
    assert_eq!(sort_key("20260314-091502"), Some(("20260314-091502", 0)));
}

#[test]
fn raw_pretty_prints_json_lines() {
    let (_d, s) = one(&[META, "garbage {", ""].join("\n"));
    let raw = s.raw(ID).unwrap();
    assert!(raw.starts_with("{\n  \"kind\": \"meta\",\n"));
    assert!(raw.ends_with("}\ngarbage {"));
}

#[test]
fn last_rounds_read_from_their_start_equal_the_whole_read_cut() {
    // Rounds with tool calls and results, a bad line, a compaction and a system record
    // between them, and an assistant reply before the first user message.
    let log = [
        META,
        &msg("assistant", "before any user"),
        &msg("user", "one"),
        CALL2,
        &msg("tool", "r1"),
        &msg("tool", "r2"),
        "not json",
        &msg("user", "two"),
        r#"{"kind":"compact","time":"2026-03-14T09:18:00+01:00","summary":"s"}"#,
        r#"{"kind":"system","time":"2026-03-14T09:18:00+01:00","message":{"role":"system","content":"sys"}}"#,
        &msg("assistant", "ok"),
        &msg("user", "three"),
        CALL2,
        &msg("tool", "r3"),
        "{\"kind\":\"message\",\"mess",
    ]
    .join("\n");
    let (_d, s) = one(&log);
    let path = s.log_path(ID).unwrap();
    let whole = log::read(&path, None, true).unwrap();
    for n in 0..5 {
        let summary = s.transcript(ID, Span::All).unwrap().summary;
        let want = view::transcript(&whole, summary, Span::LastRounds(n));
        let got = s.transcript(ID, Span::LastRounds(n)).unwrap();
        assert_eq!(got.entries, want.entries, "last {n}");
        assert_eq!(
            (got.total_rounds, got.first_round, &got.warnings),
            (want.total_rounds, want.first_round, &want.warnings),
            "last {n}"
        );
    }
}
