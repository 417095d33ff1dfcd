//! Reader tests: the contract's examples A, B and C (section 9) with every derived value it
//! states, discovery rules, and each malformed case of section 6.

use std::path::{Path, PathBuf};

use serde_json::json;

use super::*;
use crate::model::{Entry, Message, Role, parse_time, rfc3339};

pub const A: &str = "Qm3xT8vLk2pR9aZc";
pub const B: &str = "h2Jd9sWq0TzN4bXe";
pub const C: &str = "r7-PqLs_04VmYe2K";

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dst = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &dst);
        } else {
            std::fs::copy(e.path(), &dst).unwrap();
        }
    }
}

/// A private copy of tests/fixtures/harness as a memory dir.
pub fn setup() -> (tempfile::TempDir, HarnessStore) {
    let d = tempfile::tempdir().unwrap();
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/harness/sessions");
    copy_dir(&fixtures, &d.path().join("memory/sessions"));
    let store = HarnessStore::new(&d.path().join("memory"));
    (d, store)
}

/// An empty memory dir with `sessions/` and one record file per (stem, bytes).
pub fn with_files(files: &[(&str, &[u8])]) -> (tempfile::TempDir, HarnessStore) {
    let d = tempfile::tempdir().unwrap();
    let s = d.path().join("sessions");
    std::fs::create_dir_all(&s).unwrap();
    for (name, bytes) in files {
        std::fs::write(s.join(name), bytes).unwrap();
    }
    let store = HarnessStore::new(d.path());
    (d, store)
}

pub fn path(store: &HarnessStore, name: &str) -> PathBuf {
    store.sessions_dir().join(name)
}

pub fn row(store: &HarnessStore, id: &str) -> SessionSummary {
    let c = Candidate {
        id: id.into(),
        path: path(store, &format!("{id}.json")),
        mtime: None,
        stat: None,
    };
    store.summarize(&c).unwrap()
}

fn msgs(t: &Transcript) -> Vec<&Message> {
    t.messages().collect()
}

fn t(s: &str) -> Option<chrono::DateTime<chrono::Utc>> {
    parse_time(s)
}

#[test]
fn example_a_listing_fields() {
    let (_d, store) = setup();
    let s = row(&store, A);
    assert_eq!(s.id, A.into());
    assert_eq!(
        s.title(),
        "Why is test_upload flaky? Don't change anything yet."
    );
    assert_eq!(
        s.summary(),
        "Investigated flaky test_upload. Cause: tests share /tmp/uploads. No files changed. \
         Next: use the tmp_path fixture."
    );
    assert_eq!(
        s.first_prompt(),
        "Why is test_upload flaky? Don't change anything yet."
    );
    assert_eq!(s.messages, 4);
    assert_eq!(s.cwd.as_deref(), Some("/home/user/projects/uploader"));
    assert_eq!(
        s.created_at.map(rfc3339).as_deref(),
        Some("2026-03-11T14:02:09Z")
    );
    assert_eq!(
        s.updated_at.map(rfc3339).as_deref(),
        Some("2026-03-11T14:09:47Z")
    );
    assert!(!s.archived && !s.unread && !s.pinned() && !s.read_only);
    assert!(s.has_user_message);
    assert_eq!(s.forked_from(), None);
    assert_eq!(s.error(), None);
    assert_eq!(s.model, None);
    assert!(s.badges().next().is_none(), "{:?}", s.badges());
    assert_eq!(s.to_json()["ref"], "harness:Qm3xT8vLk2pR9aZc");
}

#[test]
fn example_a_transcript_pairs_and_unwraps() {
    let (_d, store) = setup();
    let tr = store.transcript(A, Span::All).unwrap();
    assert_eq!(tr.entries.len(), 5);
    assert_eq!((tr.total_rounds, tr.first_round), (1, 0));
    assert!(tr.warnings.is_empty());
    let m = msgs(&tr);
    assert_eq!(m[0].role, Role::System);
    assert_eq!(m[1].role, Role::User);
    assert_eq!(
        m[1].text,
        "Why is test_upload flaky? Don't change anything yet."
    );
    assert_eq!(m[2].text, "", "no [tool call] placeholder above the call");
    assert_eq!(m[2].tool_calls.len(), 1);
    let call = &m[2].tool_calls[0];
    assert_eq!(
        (call.id.as_str(), call.name.as_str()),
        ("call_k3v9q2", "grep")
    );
    assert_eq!(
        call.arguments,
        json!({"pattern": "uploads", "path": "tests"})
    );
    assert_eq!(m[3].role, Role::Tool);
    assert_eq!(
        m[3].text,
        "tests/test_upload.py:12: TMP = Path(\"/tmp/uploads\")"
    );
    assert_eq!(m[3].tool_name.as_deref(), Some("grep"));
    assert_eq!(m[3].tool_call_id.as_deref(), Some("call_k3v9q2"));
    assert_eq!(m[3].note, None);
    assert!(
        m[4].text
            .starts_with("test_upload writes into a fixed /tmp/uploads")
    );
    let idx: Vec<Option<usize>> = m.iter().map(|m| m.index).collect();
    assert_eq!(idx, [Some(0), Some(1), Some(2), Some(3), Some(4)]);
}

#[test]
fn example_a_window_is_messages_without_notices_and_raw_is_the_file() {
    let (_d, store) = setup();
    let w = store.window(A).unwrap();
    assert_eq!(w.messages.len(), 5);
    assert!(w.messages.iter().all(|m| !m.is_virtual));
    assert!(w.warnings.is_empty());
    assert_eq!(
        w.system_note.as_deref(),
        Some(
            "On resume the harness restores state: 0 todos (0 open), scratchpad (0 chars), 1 \
             tool calls, usage 4210 tokens in / 188 out, cost $0.0, 2 LLM calls. It does not \
             restore containers, credentials, approvals or rollback snapshots."
        )
    );
    let file = std::fs::read_to_string(path(&store, &format!("{A}.json"))).unwrap();
    assert_eq!(store.raw(A).unwrap(), file);
}

#[test]
fn example_b_defaults_and_nothing_written() {
    let (_d, store) = setup();
    let before = std::fs::read(path(&store, &format!("{B}.json"))).unwrap();
    let s = row(&store, B);
    assert_eq!(s.title(), "List the TODO comments in src/");
    assert_eq!(s.summary(), "");
    assert_eq!(s.messages, 2);
    assert_eq!(s.cwd, None);
    assert!(!s.archived && !s.unread && s.has_user_message);
    assert!(
        s.badges().next().is_none(),
        "status defaults to saved: {:?}",
        s.badges()
    );
    let tr = store.transcript(B, Span::All).unwrap();
    assert_eq!(tr.entries.len(), 3, "transcript = a copy of messages");
    assert_eq!(
        msgs(&tr)[2].text,
        "There are three: src/api.py:40, src/db.py:7 and src/db.py:88."
    );
    let w = store.window(B).unwrap();
    assert_eq!(w.messages.len(), 3);
    assert!(w.system_note.unwrap().contains("0 todos"));
    assert!(!store.in_use(B));
    assert_eq!(
        std::fs::read(path(&store, &format!("{B}.json"))).unwrap(),
        before
    );
    assert!(
        !path(&store, &format!("{B}.lock")).exists(),
        "reading never creates a lock"
    );
    assert!(!path(&store, &format!(".spool/{B}.json")).exists());
}

#[test]
fn example_c_listing_fields_and_sidecar_unread() {
    let (_d, store) = setup();
    let s = row(&store, C);
    assert_eq!(s.title(), "pydantic-settings migration");
    assert!(
        s.summary()
            .starts_with("user: Summary of the earlier conversation:\nGoal:")
    );
    assert_eq!(s.messages, 5);
    assert!(s.archived);
    assert!(
        s.unread,
        "transcript[3:] holds an assistant and a tool entry"
    );
    assert!(!s.pinned());
    assert_eq!(s.badges().collect::<Vec<_>>(), ["aborted"]);
    assert_eq!(
        s.first_prompt(),
        "Migrate settings.py to pydantic-settings."
    );
    assert_eq!(s.cwd.as_deref(), Some("/home/user/projects/settings-demo"));
    assert_eq!(s.updated_at, t("2026-03-12T09:58:31+00:00"));
}

#[test]
fn example_c_window_adds_one_virtual_notice() {
    let (_d, store) = setup();
    let w = store.window(C).unwrap();
    assert_eq!(w.messages.len(), 6, "5 entries in context + 1 notice");
    assert_eq!(w.messages[4].tool_call_id.as_deref(), Some("call_w81"));
    let n = &w.messages[5];
    assert!(n.is_virtual);
    assert_eq!(n.index, None);
    assert_eq!(n.role, Role::Tool);
    assert_eq!(n.tool_call_id.as_deref(), Some("call_w82"));
    assert_eq!(
        n.text,
        "Execution interrupted; outcome unknown. Inspect state before retrying."
    );
    assert_eq!(n.text, NOTICE);
    assert!(
        w.warnings
            .iter()
            .any(|w| w.contains("archived: the harness refuses to resume"))
    );
    assert_eq!(
        w.system_note.as_deref(),
        Some(
            "On resume the harness restores state: 2 todos (1 open), scratchpad (50 chars), 9 \
             tool calls, usage 61230 tokens in / 3904 out, cost $0.0, 11 LLM calls. It does \
             not restore containers, credentials, approvals or rollback snapshots."
        )
    );
}

#[test]
fn example_c_transcript_marker_after_three_entries() {
    let (_d, store) = setup();
    let tr = store.transcript(C, Span::All).unwrap();
    assert_eq!(tr.entries.len(), 7);
    match &tr.entries[3] {
        Entry::Compaction { summary, timestamp } => {
            assert!(summary.starts_with("Goal: migrate settings.py"));
            assert_eq!(*timestamp, t("2026-03-12T09:41:05+00:00"));
        }
        other => panic!("expected the marker, got {other:?}"),
    }
    assert!(matches!(&tr.entries[2], Entry::Message(m) if m.index == Some(2)));
    assert!(matches!(&tr.entries[4], Entry::Message(m) if m.index == Some(3)));
    assert_eq!(tr.total_rounds, 2);
    let last = store.transcript(C, Span::LastRounds(1)).unwrap();
    assert_eq!((last.first_round, last.total_rounds), (1, 2));
    let idx: Vec<Option<usize>> = last.messages().map(|m| m.index).collect();
    assert_eq!(idx, [Some(3), Some(4), Some(5)]);
    let m = msgs(&last);
    assert_eq!(
        m[0].text,
        "Now update cli.py to use the new Settings class."
    );
    assert_eq!(
        m[1].tool_calls[1].arguments,
        json!({"command": "pytest -q"})
    );
    assert_eq!(m[2].text, "Wrote 2214 bytes to cli.py");
    let none = store.transcript(C, Span::LastRounds(0)).unwrap();
    assert_eq!((none.first_round, none.entries.len()), (2, 0));
    let more = store.transcript(C, Span::LastRounds(5)).unwrap();
    assert_eq!((more.first_round, more.entries.len()), (0, 7));
}

#[test]
fn discovery_skips_debris_and_orders_by_mtime() {
    let (_d, store) = setup();
    let s = store.sessions_dir().to_path_buf();
    std::fs::write(s.join(".hidden.json"), "{}").unwrap();
    std::fs::write(s.join("tmpab_cd12.tmp"), "{}").unwrap();
    std::fs::write(s.join("bad id.json"), "{}").unwrap();
    std::fs::write(s.join("notes.txt"), "x").unwrap();
    std::fs::write(s.join("gone.lock"), "").unwrap();
    // A name that is not UTF-8 (no id is: ids are ASCII).
    use std::os::unix::ffi::OsStrExt;
    std::fs::write(s.join(std::ffi::OsStr::from_bytes(b"\xffab.json")), "{}").unwrap();
    std::fs::create_dir(s.join("dir.json")).unwrap();
    std::os::unix::fs::symlink(s.join(format!("{A}.json")), s.join("Link.json")).unwrap();
    let base = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_700_000_000);
    for (id, secs) in [(A, 30), (B, 10), (C, 20)] {
        let f = std::fs::File::options()
            .write(true)
            .open(s.join(format!("{id}.json")))
            .unwrap();
        f.set_modified(base + std::time::Duration::from_secs(secs))
            .unwrap();
    }
    let before: Vec<_> = walk(&s);
    let ids: Vec<String> = store.discover().into_iter().map(|c| c.id).collect();
    assert_eq!(ids, [A, C, B]);
    // The stat pass's survey finds the same candidates, in any order, and leaves their
    // `lstat` to the pass (which keys them as one `lstat` per input would).
    let mut found = store.discover_unordered();
    found.sort_by_key(|c| ids.iter().position(|i| *i == c.id));
    let named = |v: &[crate::store::Candidate]| -> Vec<(String, std::path::PathBuf)> {
        v.iter().map(|c| (c.id.clone(), c.path.clone())).collect()
    };
    assert_eq!(named(&found), named(&store.discover()));
    assert!(found.iter().all(|c| c.stat.is_none() && c.mtime.is_none()));
    let keys = crate::catalog::survey::keys(&store, &found);
    for (c, k) in found.iter().zip(keys) {
        assert_eq!(
            k,
            crate::catalog::stamp::key(&store.summary_inputs(c)),
            "{}",
            c.id
        );
    }
    let list = store.list();
    assert_eq!(list.len(), 3);
    assert!(list.iter().all(|r| r.error().is_none()));
    assert_eq!(walk(&s), before, "listing creates nothing");
}

fn walk(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .flat_map(|e| {
            let p = e.path();
            if e.file_type().unwrap().is_dir() {
                walk(&p)
            } else {
                vec![p.to_string_lossy().into_owned()]
            }
        })
        .collect();
    v.sort();
    v
}

#[test]
fn missing_sessions_dir_is_empty_and_not_created() {
    let d = tempfile::tempdir().unwrap();
    let store = HarnessStore::new(&d.path().join("memory"));
    assert!(store.list().is_empty());
    assert!(!d.path().join("memory").exists());
    assert!(matches!(
        store.transcript("abc", Span::All),
        Err(Error::NotFound(_))
    ));
    assert!(matches!(store.raw("../x"), Err(Error::NotFound(_))));
    // A `sessions` that exists but cannot be listed is one stand-in row, in either pass.
    std::fs::create_dir_all(d.path().join("memory")).unwrap();
    std::fs::write(d.path().join("memory/sessions"), "").unwrap();
    for found in [store.discover(), store.discover_unordered()] {
        let paths: Vec<_> = found.iter().map(|c| c.path.clone()).collect();
        assert_eq!(paths, [d.path().join("memory/sessions")]);
    }
}

/// The stat passes keep every candidate for their whole run: discovery's vector, collected
/// from a listing of unknown length, must not keep its doubling's spare room (issue 10).
#[test]
fn exact_discovery_keeps_no_spare_room() {
    let (_d, store) = setup();
    let found = crate::store::discover_exact(&store);
    assert_eq!(found.len(), 3);
    assert_eq!(found.capacity(), found.len());
    assert_eq!(found, store.discover());
}
