//! Discovery, listing, full open, paging and the malformed-input table (section 8).

use std::fs;
use std::os::unix::fs::symlink;

use serde_json::{Value, json};

use super::*;
use crate::error::Error;
use crate::model::{Entry, Role, parse_time};
use crate::store::Span;
use crate::store::loop_store::history::sha256_hex;
use crate::store::loop_store::{fallback_title, workspace_hash};

#[test]
fn fixtures_are_the_contract_bytes() {
    let m1 = fixture_file(&format!("{E1}/messages.jsonl"));
    assert_eq!(m1.len(), 1595);
    assert_eq!(
        sha256_hex(&m1),
        "a4a874afe01fb8367f33350fb89b0f9f47a6208e9bc69107159bf67216c7138f"
    );
    let m2 = fixture_file(&format!("{E2}/messages.jsonl"));
    assert_eq!(m2.len(), 1363);
    assert_eq!(
        sha256_hex(&m2[444..444 + 875]),
        "9af6c21046c7dcb258f7efeaf8af0aa88a5726f97ad27e7329e3318550584746"
    );
    assert_eq!(m2.len() - (444 + 875), 44);
    assert_eq!(m1[1111], b'\n');
    assert_eq!(m2[444 + 475], b'\n');
    assert_eq!(workspace_hash("/home/user/projects/acme-api"), COL);
}

#[test]
fn titles_normalise_and_fall_back() {
    assert_eq!(
        fallback_title("What does this   error\nmean?").as_deref(),
        Some("What does this error mean?")
    );
    assert_eq!(
        fallback_title("one two three four five six seven eight nine ten").as_deref(),
        Some("one two three four five six seven eight")
    );
    assert_eq!(fallback_title(" \u{200B}\n\t"), None);
}

#[test]
fn example_1_listing() {
    let (_d, store) = fixture();
    let s = row(&store, E1);
    assert_eq!(s.error(), None);
    assert_eq!(s.title(), "CI-only test failures from timezone");
    assert_eq!(s.pinned_at, parse_time("2026-03-14T10:02:11.482Z"));
    assert!(s.unread && !s.archived && !s.read_only);
    assert_eq!(s.messages, 6);
    assert_eq!(s.model.as_deref(), Some("openai/gpt-5.5"));
    assert_eq!(s.cwd.as_deref(), Some("/home/user/projects/acme-api"));
    assert_eq!(s.badges().collect::<Vec<_>>(), vec!["cwd missing"]);
    assert_eq!(s.created_at, parse_time("2026-03-14T09:35:01.870Z"));
    assert_eq!(s.updated_at, parse_time("2026-03-14T09:36:54.102Z"));
    assert!(s.has_user_message);
    assert_eq!(
        s.first_prompt(),
        "Why does npm test fail on CI but pass locally?"
    );
    assert_eq!(s.summary(), "");
    assert_eq!(s.forked_from(), None);
}

#[test]
fn example_2_listing_uses_fallback_of_committed_generation() {
    let (_d, store) = fixture();
    let s = row(&store, E2);
    assert_eq!(s.error(), None);
    assert_eq!(
        s.title(),
        "Rename the config loader to readSettings instead."
    );
    assert_eq!(s.messages, 4);
    assert!(!s.unread && !s.pinned() && !s.archived);
    assert_eq!(s.model.as_deref(), Some("local/qwen3-coder"));
}

#[test]
fn example_3_legacy_archived() {
    let (_d, store) = fixture();
    let s = row(&store, E3);
    assert_eq!(s.error(), None);
    assert!(s.archived && !s.pinned() && !s.unread);
    assert_eq!(s.messages, 4);
    assert_eq!(s.title(), "What does this error mean?");
    assert_eq!(s.first_prompt(), "What does this   error\nmean?");
    assert_eq!(s.path(), col(&_d).join(format!("{E3}.jsonl")));
    let t = store.transcript(E3, Span::All).unwrap();
    let msgs: Vec<_> = t.messages().collect();
    assert_eq!(msgs.len(), 4);
    assert_eq!(msgs[0].images[0].mime_type, "image/png");
    assert_eq!(msgs[0].images[0].bytes, 8);
    assert_eq!(msgs[1].tool_calls[0].id, "call_a");
    assert_eq!(msgs[2].tool_call_id.as_deref(), Some("call_a"));
    assert!(msgs[2].is_error);
}

#[test]
fn example_1_full_transcript() {
    let (_d, store) = fixture();
    let t = store.transcript(E1, Span::All).unwrap();
    assert!(t.warnings.is_empty(), "{:?}", t.warnings);
    assert_eq!((t.total_rounds, t.first_round), (2, 0));
    let m: Vec<_> = t.messages().collect();
    assert_eq!(m.len(), 6);
    let roles: Vec<&str> = m.iter().map(|x| x.role.as_str()).collect();
    assert_eq!(
        roles,
        [
            "user",
            "assistant",
            "tool",
            "assistant",
            "user",
            "assistant"
        ]
    );
    assert_eq!(m[1].thinking, vec!["Look at the test script first."]);
    assert_eq!(m[1].tool_calls[0].id, "call_01");
    assert_eq!(
        m[1].tool_calls[0].arguments,
        json!({"path": "package.json"})
    );
    assert_eq!(m[1].model.as_deref(), Some("openai/gpt-5.5"));
    assert_eq!(m[2].tool_call_id.as_deref(), Some("call_01"));
    assert_eq!(m[2].tool_name.as_deref(), Some("read"));
    assert_eq!(m[5].index, Some(5));
    // The default page holds all 6 (only 2 rounds).
    let p = store.transcript(E1, Span::LastRounds(3)).unwrap();
    assert_eq!(p.messages().count(), 6);
}

#[test]
fn last_rounds_reads_only_their_byte_range() {
    let (d, store) = fixture();
    let path = col(&d).join(E1).join("messages.jsonl");
    let mut b = fs::read(&path).unwrap();
    b[0] = b'X'; // line 0 is no longer JSON and the hash no longer matches
    fs::write(&path, &b).unwrap();
    assert!(matches!(
        store.transcript(E1, Span::All),
        Err(Error::Corrupt(_))
    ));
    let p = store.transcript(E1, Span::LastRounds(1)).unwrap();
    assert_eq!((p.total_rounds, p.first_round), (2, 1));
    let idx: Vec<_> = p.messages().map(|m| m.index).collect();
    assert_eq!(idx, [Some(4), Some(5)]);
    assert_eq!(
        p.messages().next().unwrap().text,
        "Make the tests timezone independent."
    );
}

#[test]
fn last_rounds_in_a_replaced_generation_and_stale_index() {
    let (d, store) = fixture();
    let p = store.transcript(E2, Span::LastRounds(1)).unwrap();
    let m: Vec<_> = p.messages().collect();
    assert_eq!((m[0].index, m.len()), (Some(2), 2));
    assert_eq!(m[0].text, "Thanks.");
    // A stale index is rebuilt in memory and never written back.
    let ip = col(&d).join(E1).join("index.json");
    let stale = br#"{"generation":"00","rounds":[{"messageIndex":0,"byteOffset":0}]}"#;
    fs::write(&ip, stale).unwrap();
    let p = store.transcript(E1, Span::LastRounds(1)).unwrap();
    assert_eq!(
        p.messages().map(|m| m.index).collect::<Vec<_>>(),
        [Some(4), Some(5)]
    );
    assert_eq!(fs::read(&ip).unwrap(), stale);
    // A lying offset (not at a line start) is stale too.
    let lying = json!({"generation": "a4a874afe01fb8367f33350fb89b0f9f47a6208e9bc69107159bf67216c7138f",
        "rounds": [{"messageIndex": 0, "byteOffset": 0}, {"messageIndex": 4, "byteOffset": 1100}]});
    fs::write(&ip, lying.to_string()).unwrap();
    let p = store.transcript(E1, Span::LastRounds(1)).unwrap();
    assert_eq!(p.messages().count(), 2);
    fs::remove_file(&ip).unwrap();
    assert_eq!(
        store
            .transcript(E1, Span::LastRounds(1))
            .unwrap()
            .first_round,
        1
    );
}

#[test]
fn discovery_skips_debris_symlinks_and_backups() {
    let (d, store) = fixture();
    let c = col(&d);
    fs::create_dir(c.join(".delete-abc")).unwrap();
    fs::create_dir(c.join(format!(".stage-{N1}"))).unwrap();
    fs::write(c.join(format!("{E1}.jsonl")), "garbage backup\n").unwrap();
    fs::write(c.join(format!("{N1}.jsonl.0123.tmp")), "x").unwrap();
    fs::write(c.join("notes.txt"), "x").unwrap();
    symlink(c.join(E1), c.join("aaaaaaaa-2222-4333-8444-555555555555")).unwrap();
    // An invalid published directory hides its backup and is an error row.
    fs::create_dir(c.join(N1)).unwrap();
    let legacy_hdr = serde_json::to_string(&header(N1, "/tmp")).unwrap();
    fs::write(c.join(format!("{N1}.jsonl")), legacy_hdr + "\n").unwrap();
    // A global (non-hash) collection is listed too.
    let g = d.path().join("sessions").join("web-chats");
    make_v3(
        &g,
        "22222222-2222-4333-8444-555555555555",
        header("22222222-2222-4333-8444-555555555555", "/tmp"),
        &[user("hi")],
    );
    let mut ids: Vec<String> = store.list().into_iter().map(|s| s.id.to_string()).collect();
    ids.sort();
    assert_eq!(
        ids,
        [N1, "22222222-2222-4333-8444-555555555555", E1, E2, E3]
    );
    let bad = row(&store, N1);
    assert!(bad.error().unwrap().contains("meta.json missing"));
    assert!(bad.read_only);
    assert!(
        row(&store, E1).error().is_none(),
        "the backup never replaces the directory"
    );
}

#[test]
fn unsupported_versions_are_skipped_silently() {
    let (d, store) = fixture();
    let c = col(&d);
    let dir = make_v3(&c, N1, header(N1, "/tmp"), &[user("hi")]);
    let mut meta = read_json(&dir.join("meta.json"));
    meta["version"] = json!(4);
    fs::write(dir.join("meta.json"), meta.to_string()).unwrap();
    assert!(store.list().iter().all(|s| s.id != N1.into()));
    meta["version"] = json!(3);
    meta["header"]["version"] = json!(3);
    fs::write(dir.join("meta.json"), meta.to_string()).unwrap();
    assert!(store.list().iter().all(|s| s.id != N1.into()));
}

#[test]
fn broken_metadata_gives_read_only_error_rows() {
    let (d, store) = fixture();
    let c = col(&d);
    let dir = make_v3(&c, N1, header(N1, "/tmp"), &[user("hi")]);
    fs::write(dir.join("meta.json"), "{not json").unwrap();
    let s = row(&store, N1);
    assert!(s.error().unwrap().contains("not valid JSON") && s.read_only);
    // Invalid header: error row, but what parsed is shown.
    let mut h = header(N1, "/tmp");
    h["permissionPreset"] = json!("anything-goes");
    make_v3(&c, N1, h, &[user("hi")]);
    let s = row(&store, N1);
    assert!(s.error().unwrap().contains("permissionPreset"));
    assert_eq!((s.cwd.as_deref(), s.read_only), (Some("/tmp"), true));
    // Header id differs from the directory name.
    make_v3(
        &c,
        N1,
        header("99999999-2222-4333-8444-555555555555", "/tmp"),
        &[user("hi")],
    );
    let s = row(&store, N1);
    assert!(s.error().unwrap().contains("does not match") && s.read_only);
}

#[test]
fn committed_bytes_rules() {
    let (d, store) = fixture();
    let c = col(&d);
    // Missing messages.jsonl with bytes == 0 is an empty session.
    let dir = make_v3(&c, N1, header(N1, "/tmp"), &[]);
    fs::remove_file(dir.join("messages.jsonl")).unwrap();
    let s = row(&store, N1);
    assert_eq!(
        (s.error().map(String::from), s.has_user_message, s.title()),
        (None, false, "New session")
    );
    assert_eq!(store.transcript(N1, Span::All).unwrap().entries.len(), 0);
    // Shorter than start + bytes.
    let dir = make_v3(&c, N1, header(N1, "/tmp"), &[user("hello there")]);
    fs::write(dir.join("messages.jsonl"), b"{\"role\"").unwrap();
    assert!(
        row(&store, N1)
            .error()
            .unwrap()
            .starts_with("committed bytes missing")
    );
    assert!(matches!(
        store.transcript(N1, Span::All),
        Err(Error::Corrupt(_))
    ));
    fs::remove_file(dir.join("messages.jsonl")).unwrap();
    assert!(
        row(&store, N1)
            .error()
            .unwrap()
            .starts_with("committed bytes missing")
    );
    // Hash mismatch: listing unaffected, open fails.
    let dir = make_v3(&c, N1, header(N1, "/tmp"), &[user("hello there")]);
    let mut b = fs::read(dir.join("messages.jsonl")).unwrap();
    b[30] = b'X';
    fs::write(dir.join("messages.jsonl"), &b).unwrap();
    assert_eq!(row(&store, N1).error(), None);
    let e = store.transcript(N1, Span::All).unwrap_err().to_string();
    assert!(e.contains("generation"), "{e}");
}

#[test]
fn range_shape_errors_fail_the_open() {
    let (d, store) = fixture();
    let c = col(&d);
    let h = || header(N1, "/tmp");
    make_v3_raw(
        &c,
        N1,
        h(),
        b"{\"role\":\"user\",\"content\":\"a\",\"timestamp\":1}",
        1,
    );
    assert!(
        store
            .transcript(N1, Span::All)
            .unwrap_err()
            .to_string()
            .contains("newline")
    );
    make_v3_raw(
        &c,
        N1,
        h(),
        b"{\"role\":\"user\",\"content\":\"a\",\"timestamp\":1}\n",
        2,
    );
    assert!(
        store
            .transcript(N1, Span::All)
            .unwrap_err()
            .to_string()
            .contains("messageCount")
    );
    make_v3_raw(
        &c,
        N1,
        h(),
        b"{\"role\":\"user\",\"content\":\"a\",\"timestamp\":1}\nnope\n",
        2,
    );
    assert!(
        store
            .transcript(N1, Span::All)
            .unwrap_err()
            .to_string()
            .contains("line 2")
    );
}

#[test]
fn bad_shapes_and_pairing_are_warnings() {
    let (d, store) = fixture();
    let lines = [
        user("do it"),
        assistant("", &[("c1", "bash")], "toolUse"),
        json!({"role": "user", "content": 5, "timestamp": 1}),
    ];
    make_v3(&col(&d), N1, header(N1, "/tmp"), &lines);
    let t = store.transcript(N1, Span::All).unwrap();
    assert_eq!(t.messages().count(), 3);
    assert_eq!(
        t.warnings,
        [
            "message 1: tool calls are not answered exactly once",
            "message 2: unsupported message shape"
        ]
    );
}

#[test]
fn invalid_sub_objects_make_read_only_rows_and_are_ignored() {
    let (d, store) = fixture();
    edit_header(&col(&d).join(E1), |h| {
        h["title"]["source"] = json!("robot");
        h.insert("compactions".into(), json!([{"id": "bad"}]));
    });
    let s = row(&store, E1);
    assert_eq!(s.error(), None);
    assert!(s.read_only);
    assert_eq!(s.title(), "Why does npm test fail on CI but");
    assert_eq!(s.summary(), "");
    assert!(s.badges().any(|b| b == "invalid title"));
    assert!(store.set_pinned(E1, false).is_err());
}

#[test]
fn non_canonical_pin_is_shown_pinned_and_read_only() {
    let (d, store) = fixture();
    edit_header(&col(&d).join(E1), |h| {
        h["pinnedAt"] = json!("2026-03-14T10:02:11Z");
    });
    let s = row(&store, E1);
    assert!(s.pinned() && s.pinned_flag && s.pinned_at.is_none() && s.read_only);
    assert!(s.badges().any(|b| b == "non-canonical pinnedAt"));
}

#[test]
fn invalid_prompt_timings_are_only_warnings() {
    let (d, store) = fixture();
    edit_header(&col(&d).join(E1), |h| {
        h["promptTimings"][1]["messageStartIndex"] = json!(2);
    });
    assert!(!row(&store, E1).read_only);
    let t = store.transcript(E1, Span::All).unwrap();
    assert_eq!(t.warnings, ["1 invalid prompt timings ignored"]);
}

#[test]
fn archive_json_states() {
    let (d, store) = fixture();
    let a = col(&d).join("archive.json");
    fs::remove_file(&a).unwrap();
    assert!(!row(&store, E3).archived);
    fs::write(&a, "[\"not-an-id\"]\n").unwrap();
    let rows = store.list();
    assert_eq!(rows.len(), 3);
    assert!(
        rows.iter()
            .all(|s| !s.archived && s.badges().any(|b| b == "archive state unreadable"))
    );
}

#[test]
fn legacy_blank_or_broken_lines_are_error_rows() {
    let (d, store) = fixture();
    let p = col(&d).join(format!("{E3}.jsonl"));
    let orig = fs::read_to_string(&p).unwrap();
    let blank = orig.replacen('\n', "\n\n", 2);
    fs::write(&p, &blank).unwrap();
    assert!(row(&store, E3).error().is_some());
    assert!(store.transcript(E3, Span::All).is_err());
    fs::write(&p, orig.clone() + "{oops\n").unwrap();
    assert!(row(&store, E3).error().unwrap().contains("line 6"));
    let bad_header = orig.replacen("\"read-only\"", "\"root\"", 1);
    fs::write(&p, bad_header).unwrap();
    assert!(row(&store, E3).error().is_some());
}

#[test]
fn raw_shows_meta_and_committed_lines_only() {
    let (_d, store) = fixture();
    let r = store.raw(E2).unwrap();
    assert!(r.contains("\"generation\": \"9af6c21046c7"));
    assert!(r.contains("readSettings instead"));
    assert!(
        !r.contains("loadSettings"),
        "bytes before start are unreachable"
    );
    assert!(
        !r.contains("Also rename"),
        "the uncommitted tail is not shown"
    );
    let v: Value = serde_json::from_str(
        r.split("// messages.jsonl")
            .next()
            .unwrap()
            .trim_start_matches("// meta.json\n"),
    )
    .unwrap();
    assert_eq!(v["bytes"], 875);
    assert!(store.raw(E3).unwrap().contains("\"runTimings\""));
}

#[test]
fn transcript_messages_convert_errors_and_display_names() {
    let (d, store) = fixture();
    let mut err = assistant("", &[], "error");
    err["errorMessage"] = json!("rate limited");
    let mut tr = tool_result("c1");
    tr["details"] = json!({"loopDisplayName": {"server": "github", "tool": "search"}});
    make_v3(
        &col(&d),
        N1,
        header(N1, "/tmp"),
        &[user("x"), err, assistant("", &[("c1", "q")], "toolUse"), tr],
    );
    let t = store.transcript(N1, Span::All).unwrap();
    let m: Vec<_> = t.messages().collect();
    assert!(m[1].is_error);
    assert_eq!(m[1].note.as_deref(), Some("error: rate limited"));
    assert_eq!(m[3].note.as_deref(), Some("MCP tool github/search"));
    assert_eq!(m[3].role, Role::Tool);
    assert!(matches!(t.entries[0], Entry::Message(_)));
}
