//! The watcher's rescan after a warm start: only what changed is re-read.

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
        .map(|r| r.id.clone())
        .collect();
    assert_eq!(reread, vec![candidates[0].id.clone()]);
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
