//! Writer tests (section 8): exact file effects, the lease, injected faults, sidecar state,
//! fork and delete.

use std::os::unix::fs::PermissionsExt;

use serde_json::{Value, json};

use super::tests_read::{A, B, C, path, row, setup, with_files};
use super::*;
use crate::store::atomic::{self, Step};

fn read(store: &HarnessStore, name: &str) -> String {
    std::fs::read_to_string(path(store, name)).unwrap()
}

fn mode(store: &HarnessStore, name: &str) -> u32 {
    std::fs::metadata(path(store, name))
        .unwrap()
        .permissions()
        .mode()
        & 0o777
}

fn value(store: &HarnessStore, id: &str) -> Value {
    serde_json::from_str(&read(store, &format!("{id}.json"))).unwrap()
}

fn no_temps(store: &HarnessStore) {
    assert!(atomic::temp_files_in(store.sessions_dir()).is_empty());
    let spool = store.sessions_dir().join(".spool");
    if spool.exists() {
        assert!(atomic::temp_files_in(&spool).is_empty());
    }
}

#[test]
fn archive_changes_only_that_key_and_round_trips_byte_identically() {
    let (_d, store) = setup();
    let name = format!("{A}.json");
    let orig = read(&store, &name);
    store.set_archived(A, true).unwrap();
    let after = read(&store, &name);
    assert_eq!(
        after,
        orig.replace("\"archived\": false", "\"archived\": true")
    );
    assert_ne!(after, orig);
    assert_eq!(mode(&store, &name), 0o600);
    no_temps(&store);
    assert!(row(&store, A).archived);
    assert_eq!(
        row(&store, A).updated_at,
        crate::model::parse_time("2026-03-11T14:09:47+00:00"),
        "updated_at unchanged"
    );
    let lock = path(&store, &format!("{A}.lock"));
    assert!(
        lock.exists() && std::fs::metadata(&lock).unwrap().len() == 0,
        "lock kept"
    );
    store.set_archived(A, false).unwrap();
    assert_eq!(
        read(&store, &name),
        orig,
        "serialisation round-trip is byte-identical"
    );
    let mtime = std::fs::metadata(path(&store, &name))
        .unwrap()
        .modified()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(20));
    store.set_archived(A, false).unwrap(); // no change, no write
    let again = std::fs::metadata(path(&store, &name))
        .unwrap()
        .modified()
        .unwrap();
    assert_eq!(again, mtime);
}

#[test]
fn rename_sets_title_in_place_or_appends_it() {
    let (_d, store) = setup();
    let a = read(&store, &format!("{A}.json"));
    store.rename(A, "Flaky \"upload\" é\u{1}").unwrap();
    assert_eq!(
        read(&store, &format!("{A}.json")),
        a.replace(
            "\"title\": \"\"",
            "\"title\": \"Flaky \\\"upload\\\" é\\u0001\""
        )
    );
    assert_eq!(row(&store, A).title(), "Flaky \"upload\" é\u{1}");
    // B has no title key: appended last, nothing else touched (no defaults written back).
    let b = read(&store, &format!("{B}.json"));
    store.rename(B, "todos").unwrap();
    let want = format!(
        "{},\n  \"title\": \"todos\"\n}}\n",
        b.strip_suffix("\n}\n").unwrap()
    );
    assert_eq!(read(&store, &format!("{B}.json")), want);
    let (va, vb) = (value(&store, A), value(&store, B));
    assert_eq!(vb["updated_at"], "2026-02-20T08:43:02+00:00");
    assert_eq!(va["updated_at"], "2026-03-11T14:09:47+00:00");
    assert!(
        path(&store, &format!("{B}.lock")).exists(),
        "the writer took the lease"
    );
    assert_eq!(mode(&store, &format!("{B}.lock")), 0o600);
    no_temps(&store);
}

#[test]
fn messages_and_transcript_values_are_unchanged_by_metadata_writes() {
    let (_d, store) = setup();
    let before = value(&store, C);
    store.set_archived(C, false).unwrap();
    store.rename(C, "renamed").unwrap();
    let after = value(&store, C);
    for k in [
        "messages",
        "transcript",
        "compactions",
        "state",
        "summary",
        "updated_at",
    ] {
        assert_eq!(after[k], before[k], "{k}");
    }
    assert_eq!(after["archived"], false);
}

#[test]
fn held_lease_refuses_archive_rename_delete_and_changes_nothing() {
    let (_d, store) = setup();
    let name = format!("{A}.json");
    let orig = read(&store, &name);
    let held = lease::take_lease(&path(&store, &format!("{A}.lock")), A).unwrap();
    assert!(store.in_use(A));
    assert!(matches!(store.set_archived(A, true), Err(Error::InUse(ref i)) if i == A));
    assert!(matches!(store.rename(A, "x"), Err(Error::InUse(_))));
    assert!(matches!(store.delete(A), Err(Error::InUse(_))));
    assert_eq!(read(&store, &name), orig);
    no_temps(&store);
    // Sidecar state works while the session runs.
    store.set_pinned(A, true).unwrap();
    assert_eq!(read(&store, &name), orig);
    drop(held);
    store.set_archived(A, true).unwrap();
}

#[test]
fn injected_faults_leave_the_original_intact() {
    for step in [Step::Create, Step::Write, Step::Fsync, Step::Rename] {
        let (_d, store) = setup();
        let name = format!("{A}.json");
        let orig = read(&store, &name);
        atomic::inject_fault(step);
        assert!(store.set_archived(A, true).is_err(), "{step:?}");
        assert_eq!(read(&store, &name), orig, "{step:?}");
        no_temps(&store);
        let locks = || {
            std::fs::read_dir(store.sessions_dir())
                .unwrap()
                .flatten()
                .filter(|e| e.file_name().to_string_lossy().ends_with(".lock"))
                .count()
        };
        let locks_before = locks();
        atomic::inject_fault(step);
        assert!(store.fork(A, None).is_err(), "{step:?}");
        assert_eq!(store.list().len(), 3, "no half-made fork: {step:?}");
        assert_eq!(locks(), locks_before, "no orphan <new>.lock: {step:?}");
        no_temps(&store);
    }
}

#[test]
fn pin_keeps_timestamp_and_unpin_clears_it_in_the_sidecar_only() {
    let (_d, store) = setup();
    let orig = read(&store, &format!("{B}.json"));
    store.set_pinned(B, true).unwrap();
    let side = path(&store, &format!(".spool/{B}.json"));
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&side).unwrap()).unwrap();
    let at = v["pinned_at"].as_str().unwrap().to_string();
    assert_eq!(v["version"], 1);
    assert!(row(&store, B).pinned_at.is_some());
    std::fs::write(
        &side,
        format!("{{\"version\":1,\"pinned_at\":\"{at}\",\"keep\":7}}"),
    )
    .unwrap();
    store.set_pinned(B, true).unwrap();
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&side).unwrap()).unwrap();
    assert_eq!(v, json!({"version": 1, "pinned_at": at, "keep": 7}));
    store.set_pinned(B, false).unwrap();
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&side).unwrap()).unwrap();
    assert_eq!(v, json!({"version": 1, "pinned_at": null, "keep": 7}));
    assert!(!row(&store, B).pinned());
    assert_eq!(read(&store, &format!("{B}.json")), orig);
    assert!(
        !path(&store, &format!("{B}.lock")).exists(),
        "no lease for sidecar writes"
    );
    assert_eq!(mode(&store, &format!(".spool/{B}.json")), 0o600);
    no_temps(&store);
}

#[test]
fn mark_read_and_unread_move_the_marker() {
    let (_d, store) = setup();
    assert!(row(&store, C).unread);
    store.set_unread(C, false).unwrap();
    let side = path(&store, &format!(".spool/{C}.json"));
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&side).unwrap()).unwrap();
    assert_eq!(v["read_transcript_len"], 6);
    assert_ne!(v["read_at"], "2026-03-12T09:42:00Z");
    assert_eq!(v["pinned_at"], Value::Null);
    assert!(!row(&store, C).unread);
    store.set_unread(C, true).unwrap();
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&side).unwrap()).unwrap();
    assert_eq!(
        v["read_transcript_len"], 5,
        "index of the last assistant/tool entry"
    );
    assert!(row(&store, C).unread);
    no_temps(&store);
}

#[test]
fn fork_whole_copies_values_and_sets_branch_fields() {
    let (_d, store) = setup();
    let src = value(&store, C);
    let orig = read(&store, &format!("{C}.json"));
    let new = store.fork(C, None).unwrap();
    assert_eq!(new.len(), 16);
    assert!(valid_id(&new));
    let v = value(&store, &new);
    for k in [
        "messages",
        "transcript",
        "compactions",
        "state",
        "summary",
        "project_root",
    ] {
        assert_eq!(v[k], src[k], "{k}");
    }
    assert_eq!(v["id"], new.as_str());
    assert_eq!(v["title"], "pydantic-settings migration (branch)");
    assert_eq!(
        (&v["archived"], &v["status"]),
        (&json!(false), &json!("saved"))
    );
    assert_eq!(v["branched_from"], C);
    let created = v["created_at"].as_str().unwrap();
    assert_eq!(v["updated_at"], created);
    assert_eq!(created.len(), 25);
    assert!(created.ends_with("+00:00") && created.as_bytes()[10] == b'T');
    let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
    let mut want: Vec<&String> = src.as_object().unwrap().keys().collect();
    let bf = "branched_from".to_string();
    want.push(&bf);
    assert_eq!(keys, want, "key order kept, branched_from appended");
    assert_eq!(mode(&store, &format!("{new}.json")), 0o600);
    assert!(path(&store, &format!("{new}.lock")).exists());
    assert!(!store.in_use(&new), "lease released");
    assert_eq!(read(&store, &format!("{C}.json")), orig);
    let s = row(&store, &new);
    assert_eq!(s.forked_from(), Some(&*format!("harness:{C}")));
    assert!(!s.archived && s.error().is_none());
    no_temps(&store);
    // Untitled source: empty title, missing keys appended.
    let nb = store.fork(B, None).unwrap();
    let vb = value(&store, &nb);
    assert_eq!(vb["title"], "");
    assert_eq!(row(&store, &nb).title(), "List the TODO comments in src/");
    assert!(vb.get("transcript").is_none(), "defaults are not written");
}

#[test]
fn fork_at_a_point_cuts_before_a_user_message() {
    let (_d, store) = setup();
    // A second round on A, so there is a user message to cut before.
    let mut va = value(&store, A);
    for key in ["messages", "transcript"] {
        if let Some(Value::Array(m)) = va.get_mut(key) {
            m.push(json!({"role": "user", "content": "and now?"}));
            m.push(json!({"role": "assistant", "content": "done"}));
        }
    }
    std::fs::write(path(&store, &format!("{A}.json")), va.to_string()).unwrap();
    let new = store.fork(A, Some(5)).unwrap();
    let v = value(&store, &new);
    assert_eq!(v["messages"].as_array().unwrap().len(), 5);
    assert_eq!(v["transcript"], v["messages"]);
    assert_eq!(v["state"], json!({}));
    assert_eq!(v["compactions"], json!([]));
    for at in [0, 2, 3, 99] {
        let r = store.fork(A, Some(at));
        assert!(
            matches!(r, Err(Error::Refused(ref m)) if m.contains("user message")),
            "{at}"
        );
    }
    // Before the first user message (after the system prompt) the fork would be empty,
    // which the default list hides: refused, saying so.
    for id in [A, B] {
        let r = store.fork(id, Some(1));
        assert!(
            matches!(r, Err(Error::Refused(ref m)) if m.contains("empty session")),
            "{id}"
        );
    }
    let r = store.fork(C, Some(3));
    assert!(matches!(r, Err(Error::Refused(ref m)) if m.contains("compactions")));
    no_temps(&store);
}

#[test]
fn fork_refuses_when_context_differs_from_transcript() {
    let bytes = br#"{"id": "abc", "updated_at": "2026-03-01T10:05:00+00:00",
        "messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "b"}],
        "transcript": [{"role": "system", "content": "s"}, {"role": "user", "content": "a"}]}"#;
    let (_d, store) = with_files(&[("abc.json", bytes)]);
    let r = store.fork("abc", Some(1));
    assert!(matches!(r, Err(Error::Refused(ref m)) if m.contains("differs")));
    assert!(store.fork("abc", None).is_ok());
}

#[test]
fn delete_removes_record_and_sidecar_keeps_lock() {
    let (_d, store) = setup();
    store.set_pinned(C, true).unwrap();
    store.delete(C).unwrap();
    assert!(!path(&store, &format!("{C}.json")).exists());
    assert!(!path(&store, &format!(".spool/{C}.json")).exists());
    assert!(
        path(&store, &format!("{C}.lock")).exists(),
        "lock file is never deleted"
    );
    let ids: Vec<String> = store.list().into_iter().map(|s| s.id.to_string()).collect();
    assert_eq!(ids.len(), 2);
    assert!(!ids.contains(&C.to_string()));
    assert!(matches!(store.delete(C), Err(Error::NotFound(_))));
    assert!(matches!(
        store.set_archived("nope", true),
        Err(Error::NotFound(_))
    ));
    assert!(
        !path(&store, "nope.lock").exists(),
        "no lock file for a missing session"
    );
    no_temps(&store);
}

#[test]
fn temp_names_and_ids_have_the_harness_shapes() {
    for _ in 0..50 {
        let t = write::temp_name();
        assert_eq!(t.len(), 15);
        let mid = &t[3..11];
        assert!(t.starts_with("tmp") && t.ends_with(".tmp"));
        assert!(
            mid.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
        );
        let id = write::new_id();
        assert_eq!(id.len(), 16);
        assert!(valid_id(&id));
    }
}
