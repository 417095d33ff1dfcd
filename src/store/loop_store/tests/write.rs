//! Writers (section 9): exact file effects, the optimistic check, injected faults.

use std::fs;
use std::os::unix::fs::PermissionsExt;

use serde_json::{Value, json};

use super::*;
use crate::error::Error;
use crate::store::atomic::{self, Step};
use crate::store::loop_store::header::canonical_time;
use crate::store::loop_store::write::{mark_read, update_header};

fn mode(p: &Path) -> u32 {
    fs::metadata(p).unwrap().permissions().mode() & 0o777
}

fn no_debris(c: &Path) {
    for e in fs::read_dir(c).unwrap() {
        let n = e.unwrap().file_name().to_string_lossy().into_owned();
        assert!(
            !n.ends_with(".tmp") && !n.starts_with('.'),
            "left behind: {n}"
        );
    }
}

#[test]
fn pin_then_unpin_round_trips_meta_bytes_and_keeps_messages() {
    let (d, store) = fixture();
    let dir = col(&d).join(E2);
    let meta0 = fs::read(dir.join("meta.json")).unwrap();
    store.set_pinned(E2, true).unwrap();
    let meta = read_json(&dir.join("meta.json"));
    let pinned = meta["header"]["pinnedAt"].as_str().unwrap();
    assert!(canonical_time(pinned).is_some());
    assert_eq!(meta["header"]["updatedAt"], "2026-03-14T12:07:21.337Z");
    assert_eq!(
        (meta["start"].clone(), meta["bytes"].clone()),
        (json!(444), json!(875))
    );
    assert_eq!(
        fs::read(dir.join("messages.jsonl")).unwrap(),
        fixture_file(&format!("{E2}/messages.jsonl"))
    );
    assert_eq!(
        fs::read(dir.join("messages.jsonl")).unwrap().len(),
        1363,
        "the tail stays"
    );
    assert_eq!(mode(&dir.join("meta.json")), 0o600);
    no_debris(&dir);
    store.set_pinned(E2, true).unwrap();
    assert_eq!(
        read_json(&dir.join("meta.json"))["header"]["pinnedAt"],
        pinned,
        "existing pin kept"
    );
    store.set_pinned(E2, false).unwrap();
    assert_eq!(
        fs::read(dir.join("meta.json")).unwrap(),
        meta0,
        "2-space JSON, key order kept"
    );
}

#[test]
fn mark_read_follows_the_receipt_rule() {
    let (d, store) = fixture();
    let dir = col(&d).join(E1);
    let loc = store.locate(E1).unwrap();
    let meta0 = fs::read(dir.join("meta.json")).unwrap();
    assert!(!mark_read(&loc, 4).unwrap());
    assert!(!mark_read(&loc, 0).unwrap());
    assert_eq!(
        fs::read(dir.join("meta.json")).unwrap(),
        meta0,
        "stale receipt writes nothing"
    );
    assert!(mark_read(&loc, 6).unwrap());
    let meta = read_json(&dir.join("meta.json"));
    assert_eq!(meta["header"]["unread"], false);
    assert_eq!(meta["header"]["updatedAt"], "2026-03-14T09:36:54.102Z");
    let after = fs::read(dir.join("meta.json")).unwrap();
    assert!(mark_read(&loc, 6).unwrap(), "already read: true, no write");
    assert_eq!(fs::read(dir.join("meta.json")).unwrap(), after);
    store.set_unread(E1, true).unwrap();
    assert_eq!(read_json(&dir.join("meta.json"))["header"]["unread"], true);
    store.set_unread(E1, false).unwrap();
    assert_eq!(fs::read(dir.join("meta.json")).unwrap(), after);
    assert_eq!(
        fs::read(dir.join("messages.jsonl")).unwrap(),
        fixture_file(&format!("{E1}/messages.jsonl"))
    );
    assert_eq!(
        fs::read(dir.join("index.json")).unwrap(),
        fixture_file(&format!("{E1}/index.json"))
    );
}

#[test]
fn rename_writes_a_user_title() {
    let (d, store) = fixture();
    let dir = col(&d).join(E1);
    store
        .rename(E1, "  Timezone \u{1b}[31mfix\n  for CI ")
        .unwrap();
    let h = &read_json(&dir.join("meta.json"))["header"];
    assert_eq!(
        h["title"],
        json!({"text": "Timezone fix for CI", "source": "user", "messageIndices": []})
    );
    assert_eq!(h["updatedAt"], "2026-03-14T09:36:54.102Z");
    assert_eq!(row(&store, E1).title(), "Timezone fix for CI");
    assert!(matches!(
        store.rename(E1, " \u{200B} "),
        Err(Error::Refused(_))
    ));
    no_debris(&dir);
}

#[test]
fn legacy_writes_rewrite_the_header_line_only() {
    let (d, store) = fixture();
    let p = col(&d).join(format!("{E3}.jsonl"));
    let orig = fs::read(&p).unwrap();
    let nl = orig.iter().position(|&b| b == b'\n').unwrap();
    store.set_pinned(E3, true).unwrap();
    let new = fs::read(&p).unwrap();
    let nl2 = new.iter().position(|&b| b == b'\n').unwrap();
    assert_eq!(&new[nl2..], &orig[nl..], "message bytes verbatim");
    let h: Value = serde_json::from_slice(&new[..nl2]).unwrap();
    assert!(h["pinnedAt"].is_string());
    assert_eq!(h["runTimings"][0]["finishedAt"], 1772209300870u64);
    assert_eq!(mode(&p), 0o600);
    store.set_pinned(E3, false).unwrap();
    assert_eq!(fs::read(&p).unwrap(), orig);
    // A file without a final newline gets exactly one.
    fs::write(&p, &orig[..orig.len() - 1]).unwrap();
    store.rename(E3, "Build error").unwrap();
    let new = fs::read(&p).unwrap();
    assert!(new.ends_with(b"\"timestamp\":1772209300870}\n"));
    no_debris(&col(&d));
}

#[test]
fn archive_and_unarchive_edit_only_archive_json() {
    let (d, store) = fixture();
    let a = col(&d).join("archive.json");
    store.set_archived(E1, true).unwrap();
    assert_eq!(
        fs::read_to_string(&a).unwrap(),
        format!("[\"{E3}\",\"{E1}\"]\n")
    );
    assert!(row(&store, E1).archived);
    assert_eq!(mode(&a), 0o600);
    store.set_archived(E1, false).unwrap();
    assert_eq!(fs::read(&a).unwrap(), fixture_file("archive.json"));
    assert_eq!(
        fs::read(col(&d).join(E1).join("meta.json")).unwrap(),
        fixture_file(&format!("{E1}/meta.json"))
    );
    // Missing file: created on first archive.
    fs::remove_file(&a).unwrap();
    store.set_archived(E2, true).unwrap();
    assert_eq!(fs::read_to_string(&a).unwrap(), format!("[\"{E2}\"]\n"));
    // Invalid file: refused and never overwritten; delete refused too.
    fs::write(&a, "{\"x\":1}").unwrap();
    assert!(matches!(
        store.set_archived(E1, true),
        Err(Error::Refused(_))
    ));
    assert!(matches!(store.delete(E2), Err(Error::Refused(_))));
    assert_eq!(fs::read(&a).unwrap(), b"{\"x\":1}");
    no_debris(&col(&d));
}

#[test]
fn delete_requires_archive_and_moves_backup_too() {
    let (d, store) = fixture();
    let c = col(&d);
    assert!(matches!(store.delete(E1), Err(Error::Refused(_))));
    assert!(c.join(E1).is_dir());
    fs::write(c.join(format!("{E1}.jsonl")), "backup\n").unwrap();
    store.set_archived(E1, true).unwrap();
    store.delete(E1).unwrap();
    assert!(!c.join(E1).exists() && !c.join(format!("{E1}.jsonl")).exists());
    assert_eq!(
        fs::read_to_string(c.join("archive.json")).unwrap(),
        format!("[\"{E3}\"]\n")
    );
    store.delete(E3).unwrap();
    assert_eq!(fs::read_to_string(c.join("archive.json")).unwrap(), "[]\n");
    assert_eq!(store.list().len(), 1);
    no_debris(&c);
}

#[test]
fn failed_delete_puts_everything_back() {
    let (d, store) = fixture();
    let c = col(&d);
    atomic::inject_fault(Step::Rename);
    assert!(store.delete(E3).is_err());
    assert_eq!(
        fs::read(c.join(format!("{E3}.jsonl"))).unwrap(),
        fixture_file(&format!("{E3}.jsonl"))
    );
    assert_eq!(
        fs::read(c.join("archive.json")).unwrap(),
        fixture_file("archive.json")
    );
    no_debris(&c);
}

#[test]
fn injected_faults_leave_meta_intact() {
    for step in [Step::Create, Step::Write, Step::Fsync, Step::Rename] {
        let (d, store) = fixture();
        let dir = col(&d).join(E2);
        atomic::inject_fault(step);
        assert!(store.set_pinned(E2, true).is_err(), "{step:?}");
        assert_eq!(
            fs::read(dir.join("meta.json")).unwrap(),
            fixture_file(&format!("{E2}/meta.json"))
        );
        no_debris(&dir);
        let p = col(&d).join(format!("{E3}.jsonl"));
        atomic::inject_fault(step);
        assert!(store.rename(E3, "x").is_err(), "{step:?}");
        assert_eq!(fs::read(&p).unwrap(), fixture_file(&format!("{E3}.jsonl")));
        no_debris(&col(&d));
    }
}

#[test]
fn concurrent_change_restarts_then_reports_changed() {
    let (d, store) = fixture();
    let meta = col(&d).join(E2).join("meta.json");
    let loc = store.locate(E2).unwrap();
    let tries = std::cell::Cell::new(0);
    // Another writer touches meta.json between our read and our rename, every time.
    let r = update_header(&loc, |_, h| {
        tries.set(tries.get() + 1);
        let mut other = fs::read(&meta).unwrap();
        other.push(b' ');
        fs::write(&meta, other).unwrap();
        h.insert("unread".into(), Value::Bool(true));
        Ok(true)
    });
    assert!(matches!(r, Err(Error::Changed(_))));
    assert_eq!(tries.get(), 3);
    let now = read_json(&meta);
    assert_eq!(now["header"]["unread"], false, "our change never landed");
    no_debris(&col(&d).join(E2));
}

fn set_cwd(d: &TempDir, id_dir: &Path) {
    let cwd = d.path().to_string_lossy().into_owned();
    edit_header(id_dir, |h| {
        h["cwd"] = json!(cwd);
    });
}

#[test]
fn fork_v3_whole_and_at_a_round() {
    let (d, store) = fixture();
    let c = col(&d);
    assert!(
        matches!(store.fork(E1, None), Err(Error::Refused(_))),
        "cwd missing"
    );
    set_cwd(&d, &c.join(E1));
    let whole = store.fork(E1, None).unwrap();
    assert!(super::super::valid_id(&whole) && whole != E1);
    let nd = c.join(&whole);
    assert_eq!(
        fs::read(nd.join("messages.jsonl")).unwrap(),
        fixture_file(&format!("{E1}/messages.jsonl"))
    );
    let m = read_json(&nd.join("meta.json"));
    assert_eq!(
        m["generation"],
        "a4a874afe01fb8367f33350fb89b0f9f47a6208e9bc69107159bf67216c7138f"
    );
    assert_eq!(
        (
            m["start"].clone(),
            m["bytes"].clone(),
            m["messageCount"].clone()
        ),
        (json!(0), json!(1595), json!(6))
    );
    assert_eq!(
        m["header"]["forkedFrom"],
        json!({"id": E1, "messageCount": 6})
    );
    assert_eq!(m["header"]["unread"], false);
    assert!(m["header"].get("pinnedAt").is_none());
    assert_eq!(
        read_json(&nd.join("index.json")),
        read_json(&c.join(E1).join("index.json"))
    );
    for f in ["meta.json", "messages.jsonl", "index.json"] {
        assert_eq!(mode(&nd.join(f)), 0o600);
    }
    assert_eq!(mode(&nd), 0o700);
    let r = row(&store, &whole);
    assert_eq!(
        (r.forked_from().map(String::from), r.archived, r.pinned()),
        (Some(format!("loop:{E1}")), false, false)
    );

    assert!(
        matches!(store.fork(E1, Some(2)), Err(Error::Refused(_))),
        "not a round boundary"
    );
    let cut = store.fork(E1, Some(4)).unwrap();
    let nd = c.join(&cut);
    let bytes = fs::read(nd.join("messages.jsonl")).unwrap();
    assert_eq!(bytes, fixture_file(&format!("{E1}/messages.jsonl"))[..1112]);
    let m = read_json(&nd.join("meta.json"));
    assert_eq!(
        (m["bytes"].clone(), m["messageCount"].clone()),
        (json!(1112), json!(4))
    );
    assert_eq!(m["generation"], super::super::history::sha256_hex(&bytes));
    assert_eq!(m["header"]["promptTimings"].as_array().unwrap().len(), 1);
    assert_eq!(
        m["header"]["title"]["text"],
        "CI-only test failures from timezone"
    );
    assert_eq!(
        store
            .transcript(&cut, crate::store::Span::All)
            .unwrap()
            .messages()
            .count(),
        4
    );
    no_debris(&c);
}

#[test]
fn fork_legacy_makes_a_legacy_file() {
    let (d, store) = fixture();
    let c = col(&d);
    let p = c.join(format!("{E3}.jsonl"));
    let text = fs::read_to_string(&p).unwrap();
    let cwd = d.path().to_string_lossy().into_owned();
    fs::write(&p, text.replacen("/home/user/projects/acme-api", &cwd, 1)).unwrap();
    let id = store.fork(E3, None).unwrap();
    let new = fs::read(c.join(format!("{id}.jsonl"))).unwrap();
    let orig = fs::read(&p).unwrap();
    let (a, b) = (
        orig.iter().position(|&x| x == b'\n').unwrap(),
        new.iter().position(|&x| x == b'\n').unwrap(),
    );
    assert_eq!(&new[b..], &orig[a..]);
    let h: Value = serde_json::from_slice(&new[..b]).unwrap();
    assert_eq!(h["forkedFrom"], json!({"id": E3, "messageCount": 4}));
    assert!(!c.join(&id).exists());
    let r = row(&store, &id);
    assert!(!r.archived && r.error().is_none());
    no_debris(&c);
}

#[test]
fn fork_refuses_unpaired_sessions() {
    let (d, store) = fixture();
    let cwd = d.path().to_string_lossy().into_owned();
    make_v3(
        &col(&d),
        N1,
        header(N1, &cwd),
        &[user("a"), assistant("", &[("c1", "x")], "toolUse")],
    );
    assert!(matches!(store.fork(N1, None), Err(Error::Refused(_))));
    no_debris(&col(&d));
}
