//! How each session ended, per store: the fixtures of every ending in
//! tests/fixtures/<store>/ended/ (made by tests/fixtures/make_ended.py) list with the value
//! their expected.json names; running is proven with a live holder; `list --ended` and
//! `list --inbox` filter by it.

mod common;

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, SystemTime};

use common::{Home, copy_tree, files_under, json_lines};
use spool::model::{Ended, SessionSummary};
use spool::store::Store;
use spool::store::claude_store::ClaudeStore;
use spool::store::codex_store::CodexStore;
use spool::store::harness_store::HarnessStore;
use spool::store::loom_store::LoomStore;
use spool::store::loop_store::LoopStore;
use spool::store::pi_store::PiStore;

fn fixture(store: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(store)
        .join("ended")
}

/// A copy of `<store>/ended/` whose files were last written an hour ago (settled, not live).
fn settled_copy(store: &str) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    copy_tree(&fixture(store), d.path());
    let hour_ago = SystemTime::now() - Duration::from_secs(3600);
    for f in files_under(d.path()) {
        let file = std::fs::File::options().write(true).open(&f).unwrap();
        file.set_modified(hour_ago).unwrap();
    }
    d
}

fn expected(store: &str) -> BTreeMap<String, String> {
    let bytes = std::fs::read(fixture(store).join("expected.json")).unwrap();
    serde_json::from_slice(&bytes).unwrap()
}

fn endings(rows: Vec<SessionSummary>) -> BTreeMap<String, String> {
    rows.into_iter()
        .map(|s| {
            assert!(s.error().is_none(), "{}: {:?}", s.id, s.error());
            (
                s.id.to_string(),
                s.ended.map_or("none".into(), |e| e.to_string()),
            )
        })
        .collect()
}

#[test]
fn loop_fixtures_end_as_expected() {
    let d = settled_copy("loop");
    assert_eq!(endings(LoopStore::new(d.path()).list()), expected("loop"));
}

#[test]
fn loom_fixtures_end_as_expected() {
    let d = settled_copy("loom");
    assert_eq!(endings(LoomStore::new(d.path()).list()), expected("loom"));
}

#[test]
fn harness_fixtures_end_as_expected() {
    let d = settled_copy("harness");
    assert_eq!(
        endings(HarnessStore::new(d.path()).list()),
        expected("harness")
    );
}

#[test]
fn claude_fixtures_end_as_expected() {
    let d = settled_copy("claude");
    let state = tempfile::tempdir().unwrap();
    let rows = ClaudeStore::new(d.path(), state.path()).list();
    assert_eq!(endings(rows), expected("claude"));
}

#[test]
fn codex_fixtures_end_as_expected() {
    let d = settled_copy("codex");
    let state = tempfile::tempdir().unwrap();
    let rows = CodexStore::new(d.path(), state.path()).list();
    assert_eq!(endings(rows), expected("codex"));
}

#[test]
fn pi_fixtures_end_as_expected() {
    let d = settled_copy("pi");
    let state = tempfile::tempdir().unwrap();
    let rows = PiStore::new(&d.path().join("sessions"), state.path()).list();
    assert_eq!(endings(rows), expected("pi"));
}

#[test]
fn a_held_harness_lease_is_running() {
    let d = settled_copy("harness");
    let store = HarnessStore::new(d.path());
    let lock = d.path().join("sessions/ended-stale-active.lock");
    let held = spool::store::lease::take_lease(&lock, "ended-stale-active").unwrap();
    let row = |store: &HarnessStore| {
        let c = store
            .discover()
            .into_iter()
            .find(|c| c.id == "ended-stale-active")
            .unwrap();
        store.summarize(&c).unwrap()
    };
    assert_eq!(row(&store).ended, Some(Ended::Running));
    drop(held);
    assert_eq!(row(&store).ended, Some(Ended::Interrupted));
}

#[test]
fn a_loom_log_written_now_and_held_open_is_running() {
    let d = tempfile::tempdir().unwrap();
    let sessions = d.path().join("sessions");
    std::fs::create_dir_all(&sessions).unwrap();
    let now = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let log = sessions.join("20260314-100000.jsonl");
    std::fs::write(
        &log,
        format!(
            "{{\"kind\":\"meta\",\"time\":\"{now}\",\"cwd\":\"/tmp\"}}\n\
             {{\"kind\":\"message\",\"time\":\"{now}\",\"message\":{{\"role\":\"user\",\"content\":\"hi\"}}}}\n"
        ),
    )
    .unwrap();
    let store = LoomStore::new(d.path());
    let open = std::fs::File::open(&log).unwrap();
    assert_eq!(store.list()[0].ended, Some(Ended::Running));
    drop(open);
    assert_eq!(store.list()[0].ended, Some(Ended::Interrupted));
}

#[test]
fn a_claude_log_written_just_now_without_an_end_of_turn_is_running() {
    let d = settled_copy("claude");
    let state = tempfile::tempdir().unwrap();
    let id = "0e000000-0000-4000-8000-000000000005";
    let f = d
        .path()
        .join(format!("projects/-home-user-projects-tinyhttp/{id}.jsonl"));
    let file = std::fs::File::options().write(true).open(&f).unwrap();
    file.set_modified(SystemTime::now()).unwrap();
    let rows = ClaudeStore::new(d.path(), state.path()).list();
    let row = rows.iter().find(|s| s.id == id.into()).unwrap();
    assert_eq!(row.ended, Some(Ended::Running));
    // A finished turn written just now is not running.
    let done = rows
        .iter()
        .find(|s| s.id == "0e000000-0000-4000-8000-000000000002".into())
        .unwrap();
    assert_eq!(done.ended, Some(Ended::Done));
}

/// A HOME holding the ended fixtures of loom and harness at their default roots.
fn home() -> Home {
    let h = Home::empty();
    for (store, root) in [("loom", h.loom_dir()), ("harness", h.harness_dir())] {
        copy_tree(
            &settled_copy(store).path().join("sessions"),
            &root.join("sessions"),
        );
    }
    h
}

fn refs_and_endings(out: &str) -> Vec<(String, String)> {
    json_lines(out)
        .into_iter()
        .map(|v| {
            (
                v["id"].as_str().unwrap().to_string(),
                v["ended"].as_str().unwrap_or("null").to_string(),
            )
        })
        .collect()
}

#[test]
fn list_filters_by_ending_and_shows_the_inbox_grouped() {
    let h = home();
    let out = h.ok(&["list", "--json", "--ended", "waiting,errored"]);
    let got = refs_and_endings(&out);
    assert_eq!(got.len(), 4, "{got:?}");
    assert!(got.iter().all(|(_, e)| e == "waiting" || e == "errored"));
    h.ok(&["archive", "harness:ended-aborted"]);
    let inbox = refs_and_endings(&h.ok(&["list", "--json", "--inbox"]));
    let order: Vec<&str> = inbox.iter().map(|(_, e)| e.as_str()).collect();
    assert_eq!(
        order,
        [
            "waiting",
            "waiting",
            "errored",
            "errored",
            "interrupted",
            "interrupted",
            "interrupted",
            "interrupted",
            "interrupted",
        ]
    );
    assert!(!inbox.iter().any(|(id, _)| id == "ended-aborted"));
    let bad = h.run(&["list", "--ended", "sleeping"]);
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("sleeping"));
}
