//! Writer tests (section 8): sidecar writes never touch the log, 0600/0700 modes, no temp
//! files, injected faults keep originals, fork output equals example B, delete/undo.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use serde_json::Value;

use super::tests_read::{A, A_ID, A_SIDECAR, B, C, C_ID, home, put_sidecar, row, sessions};
use super::*;
use crate::store::atomic::{self, Step};
use std::path::PathBuf;

fn mode(p: &Path) -> u32 {
    std::fs::metadata(p).unwrap().permissions().mode() & 0o777
}

fn side(d: &tempfile::TempDir, id: &str) -> Value {
    let p = sessions(d).join(".spool").join(format!("{id}.json"));
    serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap()
}

fn a_home() -> (tempfile::TempDir, LoomStore) {
    home(&[(&format!("{A_ID}.jsonl"), A), (&format!("{C_ID}.jsonl"), C)])
}

fn log_of(d: &tempfile::TempDir, id: &str) -> Vec<u8> {
    std::fs::read(sessions(d).join(format!("{id}.jsonl"))).unwrap()
}

/// `*.jsonl` names in sessions/.
fn logs(d: &tempfile::TempDir) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(sessions(d))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".jsonl"))
        .collect();
    v.sort();
    v
}

fn no_temps(d: &tempfile::TempDir) {
    assert!(atomic::temp_files_in(&sessions(d)).is_empty());
    assert!(atomic::temp_files_in(&sessions(d).join(".spool")).is_empty());
}

#[test]
fn pin_unpin_writes_only_the_sidecar() {
    let (d, s) = a_home();
    s.set_pinned(A_ID, true).unwrap();
    let v = side(&d, A_ID);
    assert_eq!(v["version"], 1);
    let at = v["pinned_at"].as_str().unwrap().to_string();
    assert!(at.ends_with('Z') && crate::model::parse_time(&at).is_some());
    assert!(row(&s, A_ID).pinned());
    // Pinning again keeps the first pin time.
    s.set_pinned(A_ID, true).unwrap();
    assert_eq!(side(&d, A_ID)["pinned_at"], Value::from(at));
    s.set_pinned(A_ID, false).unwrap();
    assert_eq!(side(&d, A_ID)["pinned_at"], Value::Null);
    assert!(!row(&s, A_ID).pinned());
    assert_eq!(log_of(&d, A_ID), A);
    let spool = sessions(&d).join(".spool");
    assert_eq!(mode(&spool), 0o700);
    assert_eq!(mode(&spool.join(format!("{A_ID}.json"))), 0o600);
    no_temps(&d);
}

#[test]
fn mark_read_stores_the_last_complete_line() {
    let (d, s) = a_home();
    s.set_unread(A_ID, false).unwrap();
    let v = side(&d, A_ID);
    assert_eq!(
        (v["read_bytes"].as_u64(), v["read_messages"].as_u64()),
        (Some(1967), Some(5))
    );
    assert!(v["read_at"].as_str().is_some());
    assert!(!row(&s, A_ID).unread);
    // Mark unread: the marker moves to the start of line 6, the last assistant message.
    s.set_unread(A_ID, true).unwrap();
    let line6 = A.split(|&b| b == b'\n').nth(5).unwrap().len() as u64;
    let v = side(&d, A_ID);
    assert_eq!(v["read_bytes"].as_u64(), Some(1243 - line6 - 1));
    assert_eq!(v["read_messages"].as_u64(), Some(3));
    assert!(row(&s, A_ID).unread);
    // C has no trailing newline: the marker stops after the last `\n`.
    s.set_unread(C_ID, false).unwrap();
    let last = C.rsplit(|&b| b == b'\n').next().unwrap().len() as u64;
    let v = side(&d, C_ID);
    assert_eq!(v["read_bytes"].as_u64(), Some(C.len() as u64 - last));
    assert_eq!(v["read_messages"].as_u64(), Some(3));
    assert_eq!(
        (log_of(&d, A_ID), log_of(&d, C_ID)),
        (A.to_vec(), C.to_vec())
    );
    no_temps(&d);
}

#[test]
fn mark_read_keeps_unknown_keys_and_replaces_a_stale_marker() {
    let (d, s) = a_home();
    put_sidecar(
        &d,
        A_ID,
        br#"{"version":1,"read_bytes":99999,"future":[1]}"#,
    );
    s.set_unread(A_ID, false).unwrap();
    let v = side(&d, A_ID);
    assert_eq!(v["read_bytes"].as_u64(), Some(1967));
    assert_eq!(v["future"], serde_json::json!([1]));
}

#[test]
fn mark_unread_needs_a_reply() {
    let (d, s) = home(&[("20260314-091502.jsonl", super::tests_read::META.as_bytes())]);
    assert!(matches!(s.set_unread(A_ID, true), Err(Error::Refused(_))));
    assert!(
        !sessions(&d)
            .join(".spool")
            .join(format!("{A_ID}.json"))
            .exists()
    );
}

#[test]
fn archive_and_rename_never_move_the_log() {
    let (d, s) = a_home();
    s.set_archived(A_ID, true).unwrap();
    s.rename(A_ID, "Router fix").unwrap();
    let r = row(&s, A_ID);
    assert!(r.archived);
    assert_eq!(r.title(), "Router fix");
    assert_eq!(log_of(&d, A_ID), A);
    s.set_archived(A_ID, false).unwrap();
    s.rename(A_ID, "  ").unwrap();
    let v = side(&d, A_ID);
    assert_eq!(
        (v["archived_at"].clone(), v["title"].clone()),
        (Value::Null, Value::Null)
    );
    assert_eq!(row(&s, A_ID).title(), "why does router_test.go fail?");
}

#[test]
fn invalid_sidecar_is_never_overwritten() {
    let (d, s) = a_home();
    put_sidecar(&d, A_ID, b"{oops");
    assert!(s.set_pinned(A_ID, true).is_err());
    assert!(s.set_unread(A_ID, false).is_err());
    let p = sessions(&d).join(".spool").join(format!("{A_ID}.json"));
    assert_eq!(std::fs::read(p).unwrap(), b"{oops");
}

#[test]
fn injected_faults_keep_the_sidecar_intact() {
    for step in [Step::Create, Step::Write, Step::Fsync, Step::Rename] {
        let (d, s) = a_home();
        put_sidecar(&d, A_ID, A_SIDECAR);
        atomic::inject_fault(step);
        assert!(s.set_archived(A_ID, true).is_err(), "{step:?}");
        let p = sessions(&d).join(".spool").join(format!("{A_ID}.json"));
        assert_eq!(std::fs::read(p).unwrap(), A_SIDECAR, "{step:?}");
        assert_eq!(log_of(&d, A_ID), A);
        no_temps(&d);
    }
}

#[test]
fn writers_refuse_non_standard_ids() {
    let (d, s) = home(&[("notes.jsonl", A)]);
    assert!(matches!(
        s.set_pinned("notes", true),
        Err(Error::Refused(_))
    ));
    assert!(matches!(s.rename("notes", "x"), Err(Error::Refused(_))));
    assert!(matches!(s.fork("notes", None), Err(Error::Refused(_))));
    assert!(matches!(s.delete("notes"), Err(Error::Refused(_))));
    assert!(matches!(
        s.set_pinned("20990101-000000", true),
        Err(Error::NotFound(_))
    ));
    assert!(!sessions(&d).join(".spool").exists());
    assert_eq!(logs(&d), ["notes.jsonl"]);
}

/// Lines with every `"time":"..."` value blanked.
fn timeless(bytes: &[u8]) -> Vec<String> {
    let text = String::from_utf8(bytes.to_vec()).unwrap();
    text.lines()
        .map(|l| {
            let i = l.find("\"time\":\"").unwrap() + 8;
            let j = i + l[i..].find('"').unwrap();
            format!("{}{}", &l[..i], &l[j..])
        })
        .collect()
}

#[test]
fn fork_of_a_reproduces_example_b() {
    let (d, s) = a_home();
    let new = s.fork(A_ID, None).unwrap();
    assert!(is_standard_id(&new), "{new}");
    let path = sessions(&d).join(format!("{new}.jsonl"));
    assert_eq!(mode(&path), 0o600);
    let bytes = std::fs::read(&path).unwrap();
    assert_eq!(timeless(&bytes), timeless(B));
    assert!(bytes.ends_with(b"\n"));
    // Record times are local RFC 3339 with whole seconds.
    let first = String::from_utf8_lossy(&bytes[..60]).into_owned();
    assert!(
        first.starts_with("{\"kind\":\"meta\",\"time\":\"20"),
        "{first}"
    );
    assert_eq!(log_of(&d, A_ID), A);
    // The fork replays to the source window plus its own notice.
    let src = s.window(A_ID).unwrap();
    let w = s.window(&new).unwrap();
    assert_eq!(w.messages.len(), src.messages.len() + 1);
    for (a, b) in src.messages.iter().zip(&w.messages) {
        assert_eq!((&a.role, &a.text), (&b.role, &b.text));
        assert_eq!(a.tool_calls.len(), b.tool_calls.len());
    }
    assert_eq!(w.messages.last().unwrap().text, reopened_notice(&new));
    let r = row(&s, &new);
    assert_eq!(r.forked_from(), Some("loom:20260314-091502"));
    assert_eq!(
        (r.messages, r.title()),
        (7, "why does router_test.go fail?")
    );
    no_temps(&d);
}

#[test]
fn fork_ids_never_collide() {
    let (d, s) = a_home();
    let now = chrono::Local::now();
    for secs in 0..3 {
        let base = (now + chrono::Duration::seconds(secs))
            .format("%Y%m%d-%H%M%S")
            .to_string();
        for n in ["".to_string(), "-1".to_string()] {
            std::fs::write(sessions(&d).join(format!("{base}{n}.jsonl")), b"x").unwrap();
        }
    }
    let a = s.fork(A_ID, None).unwrap();
    let b = s.fork(A_ID, None).unwrap();
    assert_ne!(a, b);
    assert!(a.ends_with("-2"), "{a}");
    assert!(is_standard_id(&b));
}

#[test]
fn fork_at_a_message_cuts_before_it() {
    let (d, s) = a_home();
    // Before the tool result: the tail assistant's call is orphaned and dropped.
    let new = s.fork(A_ID, Some(2)).unwrap();
    let w = s.window(&new).unwrap();
    let texts: Vec<&str> = w.messages.iter().map(|m| m.text.as_str()).collect();
    assert_eq!(texts.len(), 4);
    assert_eq!(texts[1], "why does router_test.go fail?");
    assert!(texts[2].starts_with("[Session 20260314-091502 reopened."));
    // Before "ok, fix it": compaction applied, 6 messages plus the notice in the file.
    let new = s.fork(A_ID, Some(4)).unwrap();
    assert_eq!(row(&s, &new).messages, 6);
    assert!(matches!(s.fork(A_ID, Some(6)), Err(Error::Refused(_))));
    assert_eq!(
        s.fork(A_ID, Some(5))
            .map(|id| row(&s, &id).messages)
            .unwrap(),
        7
    );
    // C: the orphaned call is dropped, [SYS, u] plus the notice.
    let new = s.fork(C_ID, None).unwrap();
    assert_eq!(row(&s, &new).messages, 2);
    assert_eq!(log_of(&d, C_ID), C);
}

#[test]
fn fork_faults_leave_no_partial_file() {
    for step in [
        Step::Create,
        Step::Write,
        Step::Fsync,
        Step::Rename,
        Step::DirFsync,
    ] {
        let (d, s) = a_home();
        let before = logs(&d);
        atomic::inject_fault(step);
        let r = s.fork(A_ID, None);
        // A failed directory fsync after the link leaves a complete fork, never a partial one.
        if step != Step::DirFsync {
            assert!(r.is_err(), "{step:?}");
            assert_eq!(logs(&d), before, "{step:?}");
        }
        assert_eq!(log_of(&d, A_ID), A);
        let debris: Vec<_> = std::fs::read_dir(sessions(&d))
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with(".fork-"))
            .collect();
        assert!(debris.is_empty(), "{step:?}: temp left");
    }
}

#[test]
fn a_fork_is_never_visible_under_its_name_before_it_is_whole() {
    // The kill this stands for: the Rename step is the link, so a fault there is the last
    // moment before publishing. Nothing named `*.jsonl` may exist yet, and an injected write
    // fault must leave no `*.jsonl` behind even without cleanup.
    let (d, s) = a_home();
    let before = logs(&d);
    atomic::inject_fault(Step::Rename);
    assert!(s.fork(A_ID, None).is_err());
    assert_eq!(logs(&d), before);
}

#[test]
fn delete_moves_to_trash_and_undo_restores() {
    let (d, s) = a_home();
    s.set_pinned(A_ID, true).unwrap();
    assert!(!s.in_use(A_ID));
    s.delete(A_ID).unwrap();
    assert!(!s.discover().iter().any(|c| c.id == A_ID));
    let spool = sessions(&d).join(".spool");
    assert!(
        !spool.join(format!("{A_ID}.json")).exists(),
        "sidecar removed"
    );
    let trash = spool.join("trash");
    assert_eq!(mode(&trash), 0o700);
    let mut entries: Vec<String> = std::fs::read_dir(&trash)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    entries.sort();
    // The log and, beside it, its sidecar (same seconds stamp).
    assert_eq!(entries.len(), 2, "{entries:?}");
    assert!(entries[0].starts_with("20260314-091502.") && entries[0].ends_with(".jsonl"));
    let stamp = entries[0].trim_end_matches(".jsonl");
    assert_eq!(entries[1], format!("{stamp}.spool.json"));
    s.undo_delete(A_ID).unwrap();
    assert_eq!(log_of(&d, A_ID), A);
    // Undo brings the spool state back with the log: still pinned.
    let c = s.discover().into_iter().find(|c| c.id == A_ID).unwrap();
    assert!(s.summarize(&c).unwrap().pinned());
    assert!(matches!(s.undo_delete(A_ID), Err(Error::Refused(_))));
    // Delete again (same second) and undo refuses while the name is taken.
    s.delete(A_ID).unwrap();
    std::fs::write(sessions(&d).join(format!("{A_ID}.jsonl")), b"new").unwrap();
    assert!(matches!(s.undo_delete(A_ID), Err(Error::Refused(_))));
    assert_eq!(log_of(&d, A_ID), b"new");
}

#[test]
fn delete_refuses_an_open_log() {
    let (d, s) = a_home();
    let held = std::fs::File::open(sessions(&d).join(format!("{A_ID}.jsonl"))).unwrap();
    assert!(s.in_use(A_ID));
    assert!(matches!(s.delete(A_ID), Err(Error::InUse(_))));
    assert_eq!(log_of(&d, A_ID), A);
    drop(held);
    assert!(!s.in_use(A_ID));
    s.delete(A_ID).unwrap();
}

/// One trash entry past the 10-minute undo window and one inside it.
fn old_and_fresh_trash(d: &tempfile::TempDir) -> (PathBuf, PathBuf) {
    let trash = sessions(d).join(".spool").join("trash");
    std::fs::create_dir_all(&trash).unwrap();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let old = trash.join(format!("20260101-000000.{}.jsonl", now - 601));
    let fresh = trash.join(format!("20260101-000001.{}.jsonl", now - 60));
    std::fs::write(&old, b"x").unwrap();
    std::fs::write(&fresh, b"x").unwrap();
    (old, fresh)
}

#[test]
fn delete_purges_expired_trash() {
    let (d, s) = a_home();
    let (old, fresh) = old_and_fresh_trash(&d);
    s.delete(C_ID).unwrap();
    assert!(!old.exists() && fresh.exists());
}

#[test]
fn tidy_at_exit_purges_expired_trash_only() {
    let (d, s) = a_home();
    let (old, fresh) = old_and_fresh_trash(&d);
    s.tidy();
    assert!(!old.exists() && fresh.exists());
}

#[test]
fn go_escaping_of_html_and_line_separators() {
    let v = serde_json::json!({"c": "a<b>&\u{2028}\u{2029}é\n"});
    assert_eq!(
        super::fork::go_escape(&v.to_string()),
        r#"{"c":"a\u003cb\u003e\u0026\u2028\u2029é\n"}"#
    );
}

/// Files outside the store that a planted symlink would expose to spool's writes and purge.
fn outside_with_old_names() -> tempfile::TempDir {
    let out = tempfile::tempdir().unwrap();
    for n in [
        "report.100.jsonl",
        "notes.5.spool.json",
        "20260101-000000.5.jsonl",
    ] {
        std::fs::write(out.path().join(n), b"keep").unwrap();
    }
    out
}

#[test]
fn a_symlinked_trash_is_refused_and_never_purged() {
    let (d, s) = a_home();
    let out = outside_with_old_names();
    std::fs::create_dir_all(sessions(&d).join(".spool")).unwrap();
    let trash = sessions(&d).join(".spool/trash");
    std::os::unix::fs::symlink(out.path(), &trash).unwrap();
    s.tidy();
    let e = s.delete(C_ID).unwrap_err().to_string();
    assert!(e.contains(".spool/trash") && e.contains("symlink"), "{e}");
    assert!(sessions(&d).join(format!("{C_ID}.jsonl")).exists());
    assert_eq!(
        std::fs::read_dir(out.path()).unwrap().count(),
        3,
        "nothing unlinked"
    );
}

#[test]
fn a_symlinked_spool_dir_takes_no_write_elsewhere() {
    let (d, s) = a_home();
    let out = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(out.path(), sessions(&d).join(".spool")).unwrap();
    let e = s.set_pinned(A_ID, true).unwrap_err().to_string();
    assert!(e.contains(".spool") && e.contains("symlink"), "{e}");
    assert!(s.delete(C_ID).is_err());
    assert_eq!(
        std::fs::read_dir(out.path()).unwrap().count(),
        0,
        "no lock or sidecar"
    );
}

#[test]
fn a_dangling_spool_lock_link_creates_nothing_outside() {
    let (d, s) = a_home();
    let out = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(sessions(&d).join(".spool")).unwrap();
    std::os::unix::fs::symlink(out.path().join("lock"), sessions(&d).join(".spool/.lock")).unwrap();
    let e = s.set_pinned(A_ID, true).unwrap_err().to_string();
    assert!(e.contains(".lock") && e.contains("symlink"), "{e}");
    assert_eq!(std::fs::read_dir(out.path()).unwrap().count(), 0);
}

#[test]
fn tidy_removes_only_spools_own_stale_fork_temps() {
    let (d, s) = a_home();
    let dir = sessions(&d);
    let old = std::time::SystemTime::now() - fork::STALE_FORK_TEMP * 2;
    let put = |name: &str, stale: bool| {
        let p = dir.join(name);
        let f = std::fs::File::create(&p).unwrap();
        if stale {
            f.set_modified(old).unwrap();
        }
    };
    put(".fork-0123456789abcdef.jsonl.tmp", true); // a killed fork's: goes
    put(".fork-fedcba9876543210.jsonl.tmp", false); // a fork under way: stays
    put(".fork-notours.jsonl.tmp", true); // not spool's name: stays
    put("notes.jsonl.tmp", true);
    // A stale-looking link to a file elsewhere is never followed nor removed.
    let outside = d.path().join("outside.txt");
    std::fs::write(&outside, "keep").unwrap();
    std::os::unix::fs::symlink(&outside, dir.join(".fork-aaaaaaaaaaaaaaaa.jsonl.tmp")).unwrap();
    s.tidy();
    let mut left = atomic::temp_files_in(&dir);
    left.sort();
    assert_eq!(
        left,
        [
            ".fork-aaaaaaaaaaaaaaaa.jsonl.tmp",
            ".fork-fedcba9876543210.jsonl.tmp",
            ".fork-notours.jsonl.tmp",
            "notes.jsonl.tmp"
        ]
    );
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "keep");
    assert!(s.list().iter().any(|r| r.id == A_ID.into()));
}
