//! The watcher: its rescan after a warm start, and the directories it registers; the first
//! screen's reads.

use super::*;
use crate::store::loom_store::LoomStore;
use std::path::Path;

fn fixture() -> LoomStore {
    LoomStore::new(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/loom"))
}

/// With a watcher, rescans take no keys (`fp` 0). The known sessions of a warm start carry
/// the catalog's real keys, and comparing the two re-read the whole store at the first event
/// (every Loop session at 100k, issue 10). Now nothing is re-read but what an event names.
#[test]
fn a_warm_rescan_with_a_watcher_rereads_only_what_an_event_names() {
    let store = fixture();
    let candidates = store.discover();
    assert!(candidates.len() >= 3);
    // What `check_cached` leaves: every session with its path and its real key.
    let mut known = crate::catalog::Known::default();
    for c in &candidates {
        known.insert(&*c.id, &c.path, fingerprint(&store, c));
    }
    let cat = Cat {
        cache: None,
        known: None,
    };
    let (tx, rx) = mpsc::channel();
    let elsewhere = [PathBuf::from("/nowhere/else")];
    assert!(rescan(&store, &tx, &mut known, &elsewhere, false, &cat));
    let sent: Vec<Event> = rx.try_iter().collect();
    assert!(sent.is_empty(), "nothing changed, nothing sent: {sent:?}");

    let touched = [candidates[0].path.clone()];
    assert!(rescan(&store, &tx, &mut known, &touched, false, &cat));
    let reread: Vec<String> = rx
        .try_iter()
        .filter_map(|e| match e {
            Event::Action(Action::Reread { rows, .. }) => Some(rows),
            _ => None,
        })
        .flatten()
        .map(|r| r.id.to_string())
        .collect();
    assert_eq!(reread, vec![candidates[0].id.to_string()]);
}

/// Without a watcher the keys are compared, and a session whose files did not change is
/// not re-read either.
#[test]
fn a_polling_rescan_rereads_nothing_unchanged() {
    let store = fixture();
    let mut known = crate::catalog::Known::default();
    for c in &store.discover() {
        known.insert(&*c.id, &c.path, fingerprint(&store, c));
    }
    let cat = Cat {
        cache: None,
        known: None,
    };
    let (tx, rx) = mpsc::channel();
    assert!(rescan(&store, &tx, &mut known, &[], true, &cat));
    assert_eq!(rx.try_iter().count(), 0);
}

/// Waits (bounded, not timed) until an event names `path`.
fn named_by_an_event(watch: &Watch, pokes: &Receiver<()>, path: &Path) -> Vec<PathBuf> {
    let mut seen = Vec::new();
    for _ in 0..100 {
        if pokes.recv_timeout(Duration::from_millis(100)).is_ok() {
            seen.extend(watch.take().paths);
            if seen.iter().any(|p| p == path) {
                break;
            }
        }
    }
    seen
}

/// Claude's watcher registers project directories without their subdirectories: a session
/// in a project directory made after the start is still seen, because the event naming the
/// new directory registers it before the rescan.
#[test]
fn a_session_in_a_new_claude_project_directory_raises_an_event() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path().join("claude");
    std::fs::create_dir_all(root.join("projects/-home-a")).unwrap();
    std::fs::write(root.join("projects/-home-a/s1.jsonl"), "{}\n").unwrap();
    let store = crate::store::claude_store::ClaudeStore::new(&root, &d.path().join("state"));
    let (poke_tx, pokes) = mpsc::channel();
    let mut watch = Watch::start(&store, poke_tx);
    assert!(watch.active);
    let fresh = root.join("projects/-home-b");
    std::fs::create_dir(&fresh).unwrap();
    let touched = named_by_an_event(&watch, &pokes, &fresh);
    assert!(touched.contains(&fresh), "{touched:?}");
    watch.extend(&store, &touched);
    let session = fresh.join("b2a3c4d5-0000-4000-8000-000000000001.jsonl");
    std::fs::write(&session, "{}\n").unwrap();
    let touched = named_by_an_event(&watch, &pokes, &session);
    assert!(touched.contains(&session), "{touched:?}");
}

/// The first screen read on two threads, at once or in two steps, gives the rows and
/// entries of a read in order, one by one, with and without the catalog's entries.
#[test]
fn reading_ahead_on_two_threads_gives_the_rows_in_order() {
    let store = fixture();
    // The fixture's sessions over again, past the first step's reads.
    let found = store.discover();
    assert!(found.len() >= 3);
    let candidates: Vec<Candidate> = found
        .iter()
        .cycle()
        .take(ahead::FIRST_READ + 3)
        .cloned()
        .collect();
    for keep in [false, true] {
        for n in 0..=candidates.len() {
            let one: Vec<ReadAhead> = candidates[..n]
                .iter()
                .map(|c| read_one(&store, c, keep))
                .collect();
            // At once, and in two steps (the top `FIRST_READ`, then the rest).
            let staged: Vec<ReadAhead> = Staged::new(&store, &candidates[..n], keep).collect();
            // A guess at the first screen: the same two steps, each handed over in order.
            let mut stepped = Vec::new();
            let sent = ahead::in_two_steps(&store, &candidates[..n], keep, |step, reads| {
                let want = if step == 0 {
                    0..n.min(ahead::FIRST_READ)
                } else {
                    ahead::FIRST_READ..n
                };
                let got: Vec<_> = reads.iter().map(|(c, _)| *c as *const Candidate).collect();
                let want: Vec<_> = candidates[want].iter().map(|c| c as *const _).collect();
                assert_eq!(got, want, "step {step}");
                stepped.extend(reads.into_iter().map(|(_, r)| r));
                true
            });
            assert!(sent);
            let at_once = ahead::read_ahead(&store, &candidates[..n], keep);
            for ahead in [at_once, staged, stepped] {
                assert_eq!(ahead.len(), n);
                for ((e1, r1), (e2, r2)) in ahead.iter().zip(&one) {
                    assert_eq!(r1.as_deref(), r2.as_deref());
                    assert_eq!(e1.as_ref().map(|e| &e.meta), e2.as_ref().map(|e| &e.meta));
                    assert_eq!(e1.is_some(), keep);
                }
            }
        }
    }
}
