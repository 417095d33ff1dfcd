//! The first screen from the newest day directories: the same rollouts, rows and order as
//! a full discovery gives first, with only the days it needs walked.

use std::path::Path;
use std::time::{Duration, SystemTime};

use super::super::CodexStore;
use crate::store::{Candidate, Store};

/// 2026-03-01 00:00 UTC: rollouts' mtimes are counted from here, an hour a rollout.
const T0: u64 = 1_772_323_200;

fn id(n: u64) -> String {
    format!("019d{n:04x}-0000-7000-8000-{n:012x}")
}

/// A rollout's path under the Codex home for rollout `n` created on March `day` at `hour`.
fn rel(day: u32, hour: u64, n: u64) -> String {
    let id = id(n);
    format!("sessions/2026/03/{day:02}/rollout-2026-03-{day:02}T{hour:02}-00-00-{id}.jsonl")
}

/// A small rollout of `id` (its meta, a prompt, an answer), last written at `secs` past T0.
fn put(root: &Path, rel: &str, id: &str, secs: u64) {
    put_text(root, rel, &rollout(id), secs);
}

fn rollout(id: &str) -> String {
    let at = "2026-03-15T08:00:00Z";
    [
        format!(
            r#"{{"timestamp":"{at}","type":"session_meta","payload":{{"id":"{id}","timestamp":"{at}","cwd":"/w","source":"cli"}}}}"#
        ),
        format!(
            r#"{{"timestamp":"{at}","type":"event_msg","payload":{{"type":"user_message","message":"task {id}"}}}}"#
        ),
        format!(
            r#"{{"timestamp":"{at}","type":"response_item","payload":{{"type":"message","role":"assistant","content":[{{"type":"output_text","text":"done"}}]}}}}"#
        ),
    ]
    .join("\n")
        + "\n"
}

fn put_text(root: &Path, rel: &str, text: &str, secs: u64) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, text).unwrap();
    let f = std::fs::File::options().write(true).open(&path).unwrap();
    f.set_modified(SystemTime::UNIX_EPOCH + Duration::from_secs(T0 + secs))
        .unwrap();
}

/// `n` rollouts on March `day`, numbered from `first`, written in the order of their names.
fn day_of(root: &Path, day: u32, first: u64, n: u64) {
    for k in 0..n {
        let secs = u64::from(day) * 86_400 + k * 3_600;
        put(root, &rel(day, k, first + k), &id(first + k), secs);
    }
}

/// The first `n` rollouts a full discovery gives (a fresh store's), as candidates.
fn discovered_first(root: &Path, state: &Path, n: usize) -> Vec<Candidate> {
    let full = CodexStore::new(root, state);
    let all = full.discover_entries();
    (all.into_iter())
        .filter(|e| e.found == super::super::discover::Found::Rollout)
        .take(n)
        .map(Candidate::from)
        .collect()
}

/// The rows of `cands` as a store that made a full discovery reads them.
fn rows_after_discovery(root: &Path, state: &Path, cands: &[Candidate]) -> Vec<String> {
    let full = CodexStore::new(root, state);
    full.discover();
    (cands.iter())
        .map(|c| format!("{:?}", full.summarize(c)))
        .collect()
}

/// The newest day holds fewer rollouts than a screenful: the walk goes on to the next
/// days, newest first, and stops once it has named twice the screen; older days are not
/// walked. The first screen is the full discovery's first rows.
#[test]
fn a_newest_day_short_of_a_screenful_walks_on_to_the_next() {
    let d = tempfile::tempdir().unwrap();
    let (root, state) = (d.path().join("codex"), d.path().join("state"));
    day_of(&root, 28, 0, 3);
    day_of(&root, 27, 10, 3);
    day_of(&root, 20, 20, 10);
    for day in 1..=10 {
        day_of(&root, day, 100 + u64::from(day) * 10, 10);
    }
    let s = CodexStore::new(&root, &state);
    let got = s.first_screen(8);
    assert_eq!(got, discovered_first(&root, &state, 8));
    // 3 + 3 + 10 names are twice the screen: March 1-10 were not walked.
    let named = super::newest_named(&root, 16);
    assert_eq!(named.len(), 16);
    assert!(named.iter().all(|e| e.id < id(100)), "{named:?}");
    // A screen the three newest days cannot fill walks the older days too.
    assert_eq!(s.first_screen(20), discovered_first(&root, &state, 20));
}

/// Odd names beside the day directories: a file where a day is expected, an unpadded and
/// a non-numeric day name (walked first, harmlessly), a hidden directory, a rollout above
/// the days, a directory named like a rollout. The first screen is discovery's.
#[test]
fn odd_names_and_a_file_where_a_day_is_expected() {
    let d = tempfile::tempdir().unwrap();
    let (root, state) = (d.path().join("codex"), d.path().join("state"));
    for day in 10..=20 {
        day_of(&root, day, u64::from(day) * 10, 4);
    }
    std::fs::write(root.join("sessions/2026/03/31"), "not a day").unwrap();
    // Named for March 27 in a directory named "7": discovery goes by the name, not the day.
    put(
        &root,
        &rel(27, 1, 900).replace("/27/", "/7/"),
        &id(900),
        40 * 86_400,
    );
    put(
        &root,
        &rel(8, 1, 901).replace("/08/", "/notes/"),
        &id(901),
        2 * 86_400,
    );
    put(
        &root,
        &rel(9, 1, 902).replace("/09/", "/.tmp/"),
        &id(902),
        50 * 86_400,
    );
    let above = rel(30, 1, 903).replace("03/30/", "");
    put(&root, &above, &id(903), 45 * 86_400);
    std::fs::create_dir_all(root.join(rel(30, 2, 904).trim_end_matches(".jsonl"))).unwrap();
    put(
        &root,
        "sessions/2026/03/19/rollout-bad-name.jsonl",
        &id(905),
        60 * 86_400,
    );
    let s = CodexStore::new(&root, &state);
    for n in [1, 3, 6, 12] {
        assert_eq!(s.first_screen(n), discovered_first(&root, &state, n), "{n}");
    }
    let firsts: Vec<String> = s.first_screen(3).into_iter().map(|c| c.id).collect();
    assert_eq!(firsts, [id(903), id(900), id(203)]);
}

const A: &str = "019ceba0-ae55-7d10-9f2a-4b8e6c1d2a30";
const B: &str = "019ceca8-05e8-7a3d-8e4f-5a6b7c8d9e01";

/// The contract's fixtures (A on 2026-03-14, and B, a fork of A, archived) with B moved to
/// the newest day, March 25, and four rollouts on each of March 21-24.
fn fork_home(d: &Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let (root, state) = (d.join("codex"), d.join("state"));
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/codex");
    crate::store::test_fixtures::copy_settled(&fixtures, &root);
    let archived = root.join(format!(
        "archived_sessions/rollout-2026-03-14T15-02-40-{B}.jsonl"
    ));
    let fork = std::fs::read_to_string(&archived).unwrap();
    std::fs::remove_file(&archived).unwrap();
    let fork_rel = format!("sessions/2026/03/25/rollout-2026-03-25T10-00-00-{B}.jsonl");
    put_text(&root, &fork_rel, &fork, 40 * 86_400);
    for day in 21..=24 {
        day_of(&root, day, u64::from(day) * 10, 4);
    }
    (root, state)
}

/// The first screen of 8 (checked to be discovery's first 8, the fork B first) and the
/// rows `s` reads for it.
fn first_rows(s: &CodexStore, root: &Path, state: &Path) -> (Vec<Candidate>, Vec<String>) {
    let got = s.first_screen(8);
    assert_eq!(got, discovered_first(root, state, 8));
    assert_eq!(got[0].id, B);
    let rows = (got.iter())
        .map(|c| format!("{:?}", s.summarize(c)))
        .collect();
    (got, rows)
}

/// A fork in the newest day whose parent lies in an older day, not walked: the parent is
/// found from the time in its UUIDv7 id, without a full discovery, and the fork's row is
/// the one a full discovery reads (its copied prefix counted against the parent).
#[test]
fn a_forks_parent_in_an_older_day_is_placed_from_its_id() {
    let d = tempfile::tempdir().unwrap();
    let (root, state) = fork_home(d.path());
    let s = CodexStore::new(&root, &state);
    let (got, rows) = first_rows(&s, &root, &state);
    // Placed, not discovered: March 14 was not walked and no full discovery was made.
    assert!(s.partial.load(std::sync::atomic::Ordering::SeqCst));
    assert!(s.found.lock().unwrap().get(A).is_none());
    assert!(rows[0].contains("2 copied"), "{}", rows[0]);
    assert_eq!(rows, rows_after_discovery(&root, &state, &got));
}

/// A day directory that is a symlink is not walked, for the first screen nor to place a
/// fork's parent: discovery does not follow it, so the rows are discovery's (the parent
/// behind the link is missing).
#[test]
fn a_symlinked_day_directory_is_not_followed() {
    let d = tempfile::tempdir().unwrap();
    let (root, state) = fork_home(d.path());
    // The parent's day (and, newest of all, March 30) live outside, linked in.
    let outside = d.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    let days = root.join("sessions/2026/03");
    std::fs::rename(days.join("14"), outside.join("14")).unwrap();
    std::os::unix::fs::symlink(outside.join("14"), days.join("14")).unwrap();
    day_of(&outside, 30, 300, 4);
    std::os::unix::fs::symlink(outside.join("sessions/2026/03/30"), days.join("30")).unwrap();
    let s = CodexStore::new(&root, &state);
    let (got, rows) = first_rows(&s, &root, &state);
    assert!(rows[0].contains("parent missing"), "{}", rows[0]);
    assert_eq!(rows, rows_after_discovery(&root, &state, &got));
    assert!(super::placed(&root, A).is_none());
}

/// Rollout `n`'s path in the archive, created on March `day` at `hour`.
fn archived(day: u32, hour: u64, n: u64) -> String {
    let name = rel(day, hour, n);
    let name = name.rsplit('/').next().unwrap();
    format!("archived_sessions/{name}")
}

/// An archive of older rollouts beside the newest days: the first screen names only the
/// archived rollouts as new as the days walked (one archived last, the newest name of all)
/// and the archived copy of a rollout in those days (its duplicate flag); the rows are
/// discovery's.
#[test]
fn only_the_archives_newest_and_the_walked_ids_are_named() {
    let d = tempfile::tempdir().unwrap();
    let (root, state) = (d.path().join("codex"), d.path().join("state"));
    day_of(&root, 28, 0, 10);
    for day in 1..=10 {
        day_of(&root, day, 100 + u64::from(day) * 10, 2);
    }
    for k in 0..20 {
        put(&root, &archived(3, k % 24, 500 + k), &id(500 + k), k);
    }
    put(&root, &archived(28, 9, 9), &id(9), 28 * 86_400);
    put(&root, &archived(29, 0, 600), &id(600), 40 * 86_400);
    let s = CodexStore::new(&root, &state);
    for n in [1, 4] {
        let got = s.first_screen(n);
        assert_eq!(got, discovered_first(&root, &state, n), "{n}");
        let rows: Vec<String> = (got.iter())
            .map(|c| format!("{:?}", s.summarize(c)))
            .collect();
        assert_eq!(rows, rows_after_discovery(&root, &state, &got));
    }
    assert_eq!(s.first_screen(1)[0].id, id(600));
    let named = super::newest_named(&root, 8);
    assert!(named.iter().all(|e| !(id(500)..id(520)).contains(&e.id)));
    let nine = named.iter().find(|e| e.id == id(9)).unwrap();
    assert!(!nine.archived && nine.duplicate_in_archive, "{nine:?}");
    // A screen the newest day cannot fill walks every day, and the whole archive.
    let all = super::newest_named(&root, usize::MAX);
    assert_eq!(all.iter().filter(|e| e.archived).count(), 21);
}

/// A fork in the newest day whose parent was archived: the archive's walk for the first
/// screen names only its newest, and the parent is found there by its id without a full
/// discovery; the fork's row is the one a full discovery reads.
#[test]
fn a_forks_archived_parent_is_found_in_the_archive() {
    let d = tempfile::tempdir().unwrap();
    let (root, state) = fork_home(d.path());
    let name = format!("rollout-2026-03-14T10-15-02-{A}.jsonl");
    std::fs::create_dir_all(root.join("archived_sessions")).unwrap();
    std::fs::rename(
        root.join("sessions/2026/03/14").join(&name),
        root.join("archived_sessions").join(&name),
    )
    .unwrap();
    let s = CodexStore::new(&root, &state);
    let (got, rows) = first_rows(&s, &root, &state);
    assert!(s.partial.load(std::sync::atomic::Ordering::SeqCst));
    assert!(rows[0].contains("2 copied"), "{}", rows[0]);
    assert_eq!(rows, rows_after_discovery(&root, &state, &got));
}

/// What an entry says of its rollout (its times aside: a walk that stats nothing has none,
/// and they only order a discovery).
fn place(e: &super::Entry) -> (String, std::path::PathBuf, bool, bool, bool) {
    let rollout = e.found == super::super::discover::Found::Rollout;
    (
        e.id.clone(),
        e.path.clone(),
        e.archived,
        e.duplicate_in_archive,
        rollout,
    )
}

/// A warm start's pane asks for a row before any discovery is kept: the entry comes from
/// the days its id names and the archive, equal to the one a full discovery keeps (its
/// archived copy setting the duplicate flag), and the store is not walked whole (nothing
/// is kept, so the survey's walk is the only one). Issue 10: the pane's whole walk beside
/// the survey's cost 45 MB of a 100k store's start.
#[test]
fn a_row_asked_for_before_any_walk_is_placed_as_discovery_keeps_it() {
    let d = tempfile::tempdir().unwrap();
    let (root, state) = fork_home(d.path());
    let name = format!("rollout-2026-03-14T10-15-02-{A}.jsonl");
    let copy = root.join("archived_sessions").join(&name);
    std::fs::create_dir_all(copy.parent().unwrap()).unwrap();
    std::fs::copy(root.join("sessions/2026/03/14").join(&name), &copy).unwrap();
    let full = CodexStore::new(&root, &state).discover_entries();
    let whole = full.iter().find(|e| e.id == A).unwrap();
    assert!(whole.duplicate_in_archive && !whole.archived, "{whole:?}");
    let s = CodexStore::new(&root, &state);
    assert_eq!(place(&s.entry(A).unwrap()), place(whole));
    assert!(
        s.found.lock().unwrap().get(B).is_none(),
        "a whole walk was kept"
    );
    // Only in the archive: the archived copy, as discovery keeps it.
    std::fs::remove_file(root.join("sessions/2026/03/14").join(&name)).unwrap();
    let full = CodexStore::new(&root, &state).discover_entries();
    let whole = full.iter().find(|e| e.id == A).unwrap();
    let s = CodexStore::new(&root, &state);
    assert_eq!(place(&s.entry(A).unwrap()), place(whole));
    assert!(
        s.found.lock().unwrap().get(B).is_none(),
        "a whole walk was kept"
    );
}

/// A row that neither its days nor the archive hold (a rollout of the legacy flat layout),
/// asked for while a walk is in flight, waits for that walk and takes what it kept: no
/// second walk beside it (at 100k rollouts a second walk was ~45 MB of a start's peak).
#[test]
fn a_miss_during_a_walk_waits_for_the_walk_and_walks_no_second_time() {
    let d = tempfile::tempdir().unwrap();
    let (root, state) = fork_home(d.path());
    let n = id(99);
    let flat = format!("sessions/rollout-2026-03-20T10-00-00-{n}.jsonl");
    put(&root, &flat, &n, 20 * 86_400);
    assert!(
        super::placed(&root, &n).is_none(),
        "its days and the archive do not hold it"
    );
    let s = std::sync::Arc::new(CodexStore::new(&root, &state));
    // The walk in flight holds the lock, then keeps what it found. What it keeps for the id
    // is a copy elsewhere, which no walk of the store would name.
    let walk = s.walk_lock();
    let asker = {
        let (s, n) = (s.clone(), n.clone());
        std::thread::spawn(move || s.entry(&n).map(|e| e.path))
    };
    std::thread::sleep(Duration::from_millis(200));
    assert!(
        !asker.is_finished(),
        "the miss waits for the walk in flight"
    );
    let elsewhere = d.path().join("kept.jsonl");
    std::fs::copy(root.join(&flat), &elsewhere).unwrap();
    let whole = CodexStore::new(&root, &state).discover_entries();
    let mut e = whole.into_iter().find(|e| e.id == n).unwrap();
    e.path = elsewhere.clone();
    s.keep_table(super::super::found::ById::new(&[e]), false);
    drop(walk);
    assert_eq!(asker.join().unwrap().unwrap(), elsewhere);
}
