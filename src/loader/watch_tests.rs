//! The watcher's own registration: which directories each store's watch takes (and how many
//! it reads to find them), a directory made after the start watched before the rescan,
//! symlinks never followed, polling when a registration hits the kernel's limit, and a full
//! pass after events were lost.

use super::*;
use crate::store::claude_store::ClaudeStore;
use crate::store::codex_store::CodexStore;
use crate::store::harness_store::HarnessStore;
use crate::store::loom_store::LoomStore;
use crate::store::loop_store::LoopStore;
use std::fs;
use std::io::Write;
use std::path::Path;
use std::sync::mpsc;

fn write(p: &Path, text: &str) {
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    let mut f = fs::File::options()
        .create(true)
        .append(true)
        .open(p)
        .unwrap();
    f.write_all(text.as_bytes()).unwrap();
}

/// A v3 Loop session directory with its three files.
fn loop_session(dir: &Path) {
    for f in ["meta.json", "messages.jsonl", "index.json"] {
        write(&dir.join(f), "{}\n");
    }
}

/// What `watch_loop` does with events, until one names `want` (or 5 s pass): take the named
/// paths and extend the watch with them, as it does before each rescan.
fn until_named(w: &mut Watch, store: &dyn Store, pokes: &Receiver<()>, want: &Path) -> bool {
    let end = Instant::now() + Duration::from_secs(5);
    while Instant::now() < end {
        let _ = pokes.recv_timeout(Duration::from_millis(100));
        let hits = w.take().paths;
        w.extend(store, &hits);
        if hits.iter().any(|p| p == want) {
            return true;
        }
    }
    false
}

/// Nothing names `path` within a second.
fn never_named(w: &mut Watch, store: &dyn Store, pokes: &Receiver<()>, path: &Path) -> bool {
    let end = Instant::now() + Duration::from_secs(1);
    while Instant::now() < end {
        let _ = pokes.recv_timeout(Duration::from_millis(100));
        let hits = w.take().paths;
        w.extend(store, &hits);
        if hits.iter().any(|p| p.starts_with(path)) {
            return false;
        }
    }
    true
}

fn started(store: &dyn Store, limit: usize) -> (Watch, Receiver<()>) {
    let (tx, rx) = mpsc::channel();
    let w = Watch::start_limited(store, tx, limit);
    (w, rx)
}

/// Two collections with three v3 sessions, a legacy file, staging directories, a directory
/// inside a session that no row reads, and 40 more files: none of them is stat'ed.
fn loop_fixture() -> (tempfile::TempDir, LoopStore) {
    let d = tempfile::tempdir().unwrap();
    let s = d.path().join("sessions");
    let (c1, c2) = (s.join("767af75ec9c3c6ac7b4a00e5"), s.join("global"));
    for dir in [c1.join("aa01"), c1.join("aa02"), c2.join("aa03")] {
        loop_session(&dir);
    }
    write(&c1.join("aa04.jsonl"), "{}\n");
    write(&c1.join("archive.json"), "[]");
    loop_session(&c1.join(".stage-1/aa05"));
    loop_session(&c1.join(".delete-2/aa06"));
    write(&c1.join("aa01/tool-output/deeper/x.txt"), "x");
    for i in 0..40 {
        write(&c2.join(format!("note-{i}.jsonl.1.tmp")), "x");
    }
    let store = LoopStore::new(d.path());
    (d, store)
}

/// Loop: `sessions/`, its collections and their session directories, each on its own, found
/// by reading `sessions/` and the two collections only. The old recursive watch took the
/// staging directories and the session's inner tree too (9), and stat'ed every file.
#[test]
fn loop_registers_collections_and_session_directories_only() {
    let (_d, store) = loop_fixture();
    let (w, _rx) = started(&store, usize::MAX);
    assert!(w.active);
    assert_eq!((w.registered, w.read), (6, 3));
}

/// A session made in a collection that did not exist at the start is watched live: the
/// collection's creation registers it (and the session directories already in it), and a
/// session directory made in it is registered on its own event, before any file is written.
#[test]
fn loop_a_session_in_a_new_collection_is_seen_live() {
    let (_d, store) = loop_fixture();
    let (mut w, rx) = started(&store, usize::MAX);
    assert!(w.active);
    let col = store.sessions_dir().join("0123456789abcdef01234567");
    fs::create_dir(&col).unwrap();
    assert!(until_named(&mut w, &store, &rx, &col));
    let session = col.join("bb01");
    fs::create_dir(&session).unwrap();
    assert!(until_named(&mut w, &store, &rx, &session));
    loop_session(&session);
    assert!(until_named(&mut w, &store, &rx, &session.join("meta.json")));
    write(&session.join("messages.jsonl"), "{}\n");
    assert!(until_named(
        &mut w,
        &store,
        &rx,
        &session.join("messages.jsonl")
    ));

    // Made at once (`mkdir -p`, a staged session renamed in): the collection's event reads
    // it, and its session directory already there is registered with it.
    let col2 = store.sessions_dir().join("fedcba9876543210fedcba98");
    loop_session(&col2.join("bb02"));
    assert!(until_named(&mut w, &store, &rx, &col2));
    write(&col2.join("bb02/messages.jsonl"), "{}\n");
    assert!(until_named(
        &mut w,
        &store,
        &rx,
        &col2.join("bb02/messages.jsonl")
    ));
    assert!(w.active);
}

/// loom and agent-harness: `sessions/` alone (no read of it: it holds every log), and the
/// sidecar directory once it exists. A subdirectory nothing is read from is never taken.
#[test]
fn flat_stores_register_the_sessions_directory_and_their_sidecars() {
    let d = tempfile::tempdir().unwrap();
    let loom = LoomStore::new(&d.path().join("loom"));
    let harness = HarnessStore::new(&d.path().join("harness"));
    for (store, file) in [
        (&loom as &dyn Store, "20260314-091502.jsonl"),
        (&harness, "Qm3xT8vLk2pR9aZc.json"),
    ] {
        let s = store.sessions_dir().to_path_buf();
        write(&s.join(file), "{}\n");
        write(&s.join("sub/inner/x.json"), "{}");
        let (mut w, rx) = started(store, usize::MAX);
        assert!(w.active);
        assert_eq!((w.registered, w.read), (1, 0), "{:?}", store.kind());
        // The first pin makes the sidecar directory: it is registered on its event.
        let side = crate::store::sidecar::dir(&s);
        fs::create_dir(&side).unwrap();
        assert!(until_named(&mut w, store, &rx, &side));
        write(&side.join("x.json"), "{}");
        assert!(until_named(&mut w, store, &rx, &side.join("x.json")));
        // A new session in `sessions/` itself.
        let new = s.join(file.replace("1", "2"));
        write(&new, "{}\n");
        assert!(until_named(&mut w, store, &rx, &new));
        // `sub/` holds nothing a row is read from.
        write(&s.join("sub/inner/y.json"), "{}");
        assert!(never_named(&mut w, store, &rx, &s.join("sub")));
        assert_eq!(w.registered, 2);
    }
}

/// Claude Code: a project directory made after the start is registered on its event (its
/// `watch_more`), and a session written in it is seen.
#[test]
fn claude_a_session_in_a_new_project_is_seen_live() {
    let d = tempfile::tempdir().unwrap();
    let store = ClaudeStore::new(&d.path().join("claude"), &d.path().join("state"));
    let projects = store.sessions_dir().to_path_buf();
    write(&projects.join("-home-a/s1.jsonl"), "{}\n");
    let (mut w, rx) = started(&store, usize::MAX);
    assert!(w.active);
    assert_eq!(w.registered, 2);
    let project = projects.join("-home-b");
    fs::create_dir(&project).unwrap();
    assert!(until_named(&mut w, &store, &rx, &project));
    write(&project.join("s2.jsonl"), "{}\n");
    assert!(until_named(&mut w, &store, &rx, &project.join("s2.jsonl")));
}

/// Whether `dir`'s filesystem counts subdirectories in a directory's link count (the rule a
/// Claude store uses to register a `subagents/` without reading it).
fn counts_subdirectories(dir: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(dir.as_os_str().as_bytes()).unwrap();
    let mut fs = std::mem::MaybeUninit::<libc::statfs>::zeroed();
    // SAFETY: `c` is NUL-terminated and `fs` is a buffer of the size the call writes.
    assert_eq!(unsafe { libc::statfs(c.as_ptr(), fs.as_mut_ptr()) }, 0);
    // SAFETY: the call succeeded, so it filled the buffer.
    #[allow(clippy::unnecessary_cast)]
    let kind = unsafe { fs.assume_init() }.f_type as i64;
    [0xEF53, 0x5846_5342, 0x0102_1994].contains(&kind)
}

/// Claude: a `subagents/` holding no directory is registered without being read, one holding
/// a workflow is walked, and a workflow directory made later in the first is still watched.
#[test]
fn claude_registers_a_leaf_subagents_directory_without_reading_it() {
    let d = tempfile::tempdir().unwrap();
    let store = ClaudeStore::new(&d.path().join("claude"), &d.path().join("state"));
    let project = store.sessions_dir().join("-home-a");
    write(&project.join("s1.jsonl"), "{}\n");
    write(&project.join("s1/subagents/agent-a1.jsonl"), "{}\n");
    write(&project.join("s2.jsonl"), "{}\n");
    write(
        &project.join("s2/subagents/workflows/w1/agent-a2.jsonl"),
        "{}\n",
    );
    write(&project.join("s3/tool-results/t.txt"), "x");
    let (mut w, rx) = started(&store, usize::MAX);
    assert!(w.active);
    // projects/, the project, s1's and s2's subagents/, s2's workflows/ and w1/.
    assert_eq!(w.registered, 6);
    // s2's three directories are read; s1's `subagents/` too where the link count is not
    // to be trusted.
    let read = if counts_subdirectories(d.path()) {
        3
    } else {
        4
    };
    assert_eq!(w.read, read);
    let late = project.join("s1/subagents/workflows");
    fs::create_dir(&late).unwrap();
    assert!(until_named(&mut w, &store, &rx, &late));
    write(&late.join("agent-a3.jsonl"), "{}\n");
    assert!(until_named(
        &mut w,
        &store,
        &rx,
        &late.join("agent-a3.jsonl")
    ));
}

/// A store watched to every depth (Codex's dated tree): a new day's directory made after
/// the start is registered (notify's recursive mode did this on its own), and a symlinked
/// directory is neither walked nor registered, so what is written behind it is not seen.
#[test]
fn a_tree_store_takes_new_directories_and_never_follows_a_symlink() {
    let d = tempfile::tempdir().unwrap();
    let store = CodexStore::new(&d.path().join("codex"), &d.path().join("state"));
    let s = store.sessions_dir().to_path_buf();
    write(&s.join("2026/03/14/rollout-a.jsonl"), "{}\n");
    let outside = d.path().join("outside");
    write(&outside.join("deep/rollout-b.jsonl"), "{}\n");
    std::os::unix::fs::symlink(&outside, s.join("2026/linked")).unwrap();
    let (mut w, rx) = started(&store, usize::MAX);
    assert!(w.active);
    // sessions, 2026, 03, 14; not `linked` nor what is behind it.
    assert_eq!((w.registered, w.read), (4, 4));
    write(&outside.join("deep/rollout-b.jsonl"), "{}\n");
    assert!(never_named(&mut w, &store, &rx, &s.join("2026/linked")));

    let day = s.join("2026/03/15");
    fs::create_dir(&day).unwrap();
    assert!(until_named(&mut w, &store, &rx, &day));
    write(&day.join("rollout-c.jsonl"), "{}\n");
    assert!(until_named(
        &mut w,
        &store,
        &rx,
        &day.join("rollout-c.jsonl")
    ));
}

/// A registration refused (the inotify limit, injected) leaves the store polled: at the
/// start, and when a new directory is one too many.
#[test]
fn a_refused_registration_falls_back_to_polling() {
    let (_d, store) = loop_fixture();
    let (w, _rx) = started(&store, 5);
    assert!(!w.active, "6 directories, 5 allowed: polled");

    let (mut w, rx) = started(&store, 6);
    assert!(w.active);
    let col = store.sessions_dir().join("0123456789abcdef01234567");
    fs::create_dir(&col).unwrap();
    let end = Instant::now() + Duration::from_secs(5);
    while w.active && Instant::now() < end {
        let _ = rx.recv_timeout(Duration::from_millis(100));
        let hits = w.take().paths;
        w.extend(&store, &hits);
    }
    assert!(!w.active, "the new collection could not be watched: polled");
}

/// Events lost (the kernel's queue overflowed, injected): the next pass compares every
/// session's keys, and the roots are walked again first, so a collection made while events
/// were dropped is watched with its session directory.
#[test]
fn lost_events_walk_the_roots_again_and_compare_every_session() {
    let (_d, store) = loop_fixture();
    let (mut w, rx) = started(&store, usize::MAX);
    assert_eq!(w.registered, 6);
    let (touched, fingerprints) = w.next_pass(&store);
    assert!(touched.is_empty() && !fingerprints, "nothing happened yet");

    let col = store.sessions_dir().join("0123456789abcdef01234567");
    loop_session(&col.join("bb01"));
    // Its events are the ones dropped.
    while rx.recv_timeout(Duration::from_millis(300)).is_ok() {}
    w.take();
    w.hits.lock().unwrap().lost = true;
    let (_, fingerprints) = w.next_pass(&store);
    assert!(
        fingerprints,
        "a pass after lost events compares every session"
    );
    assert_eq!(
        w.registered, 8,
        "the new collection and its session are watched"
    );
    assert!(w.active);
    write(&col.join("bb01/messages.jsonl"), "{}\n");
    assert!(until_named(
        &mut w,
        &store,
        &rx,
        &col.join("bb01/messages.jsonl")
    ));
    let (_, fingerprints) = w.next_pass(&store);
    assert!(!fingerprints, "lost once, compared once");
}

/// The first walk's table of names is held at its size, not at the room it grew to
/// (issue 10: at 32k Loop sessions that room was up to 1 MB more than the names).
#[cfg(target_os = "linux")]
#[test]
fn the_first_walks_names_are_held_at_their_size() {
    let d = tempfile::tempdir().unwrap();
    let c = d.path().join("sessions").join("767af75ec9c3c6ac7b4a00e5");
    for i in 0..300 {
        loop_session(&c.join(format!("aa{i:03}")));
    }
    let store = LoopStore::new(d.path());
    let (w, _rx) = started(&store, usize::MAX);
    assert!(w.active);
    let b = w.backend.as_ref().unwrap();
    let t = b.table().lock().unwrap();
    assert_eq!(t.len(), 302, "sessions/, the collection and 300 sessions");
    let (len, room) = t.names_room();
    assert_eq!(room, len);
}

/// A cold start's watcher setup (notify's walk of every directory) starts as the first rows
/// go out; it waits until the terminal has read the frame that shows them, so it does not
/// take a core while that frame is drawn and read (issue 10). Here the frame's request is
/// out and unanswered: the setup must not finish until the gate opens.
#[test]
fn a_watchers_setup_waits_for_the_first_rows_frame_to_be_read() {
    let tmp = tempfile::tempdir().unwrap();
    loop_session(&tmp.path().join("loop/sessions/global/aa01"));
    let stores = Arc::new(Stores::open(&crate::store::registry::Roots::all_in(
        tmp.path(),
    )));
    // The process's one gate, asked and unanswered: other tests' loaders wait on it only
    // until `open` drops (whatever happens here).
    let open = crate::tui::ack::asked_for_tests(Duration::from_secs(60));
    let (poke_tx, _pokes) = mpsc::channel();
    let mut setup = WatchSetup::Pending(stores, 0, poke_tx);
    setup.start();
    let WatchSetup::Running(h) = &setup else {
        panic!("the setup thread did not start")
    };
    // A watch of one session takes a few milliseconds; held, it has not ended after 300.
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        !h.is_finished(),
        "the watch was set up before the frame was read"
    );
    drop(open);
    let watch = setup.finish().expect("the watch, once the gate opens");
    assert!(watch.registered > 0, "the store's directories are watched");
}
