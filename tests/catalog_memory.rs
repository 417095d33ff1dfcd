//! The warm check's heap, counted by a counting allocator (bytes, not time): the catalog's
//! metas are looked up by position, never through a map keyed by a copy of every id, and
//! the watcher's map of known sessions takes the metas' ids and paths instead of copies
//! (issue 10: at 100k sessions the map by id was 25 MB and the copies 11 MB).

mod common;

use std::path::PathBuf;

use common::Home;
use common::counting::{Counting, live, peak_during};
use spool::catalog::slim::Slim;
use spool::catalog::{self, ById, Meta};
use spool::model::StoreKind;

#[global_allocator]
static A: Counting = Counting;

const N: usize = 3000;

fn meta(id: &str, key: u64) -> Meta {
    Meta {
        id: id.into(),
        path: PathBuf::from(format!("/s/{id}.jsonl")),
        key,
        cwd: None,
        cwd_dir: false,
        expires: None,
    }
}

/// One test: the counts are process-wide, so nothing else may allocate meanwhile.
#[test]
fn the_warm_check_copies_no_id_or_path() {
    // The lookup behaves as the map it replaces: every id found, the last of a repeat wins.
    let by = ById::new(vec![meta("b", 1), meta("a", 2), meta("b", 3)]);
    assert_eq!(by.len(), 2);
    assert_eq!(by.get("b").map(|m| m.key), Some(3));
    assert_eq!(by.get("a").map(|m| m.key), Some(2));
    assert!(by.get("c").is_none());

    // A loom store of N sessions (one fixture under N names), listed once to write the
    // catalog, as a cold start does.
    let h = Home::empty();
    let dir = h.loom_dir().join("sessions");
    std::fs::create_dir_all(&dir).unwrap();
    let src = std::fs::read(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/loom/sessions/20260314-141500.jsonl"),
    )
    .unwrap();
    for i in 0..N {
        std::fs::write(dir.join(format!("20260101-{i:06}.jsonl")), &src).unwrap();
    }
    let stores = h.stores();
    let cache = h.path().join(".cache/spool");
    let listed = catalog::list(&stores, Some(StoreKind::Loom), Some(&cache));
    assert_eq!(listed.len(), N);
    let store = common::store_of(&stores, StoreKind::Loom);
    let before_metas = live();
    let mut metas: Vec<Meta> = catalog::load(&cache)
        .unwrap()
        .take(StoreKind::Loom, store.sessions_dir())
        .unwrap()
        .entries
        .into_iter()
        .map(|e| e.meta)
        .collect();
    // Its own buffer of exactly N metas (a collect in place would keep the entries' larger
    // one), so what the check frees is known below.
    metas.shrink_to_fit();
    let full = live() - before_metas;
    // The warm start slims them as the catalog hands them over (`catalog::warm::open`): the
    // id kept, the path's hash instead of the path, the cwd shared. A `Meta` copied the row's
    // id, path and cwd (issue 10: 30 MB at 100k sessions, alive through the check, where the
    // warm start peaked).
    let before_slim = live();
    let mut slim = Vec::with_capacity(metas.len());
    slim.extend(metas.into_iter().map(Slim::of));
    let slimmed = live() + full - before_slim;
    eprintln!(
        "metas {} B/session, slimmed {} B/session",
        full / N,
        slimmed / N
    );
    assert!(
        slimmed <= N * 100,
        "the warm start's metas hold {} bytes a session (bound 100; full metas: {})",
        slimmed / N,
        full / N
    );
    assert!(
        full > N * 100,
        "the full metas measured as the bound's other side"
    );
    let metas_bytes = slim.capacity() * std::mem::size_of::<Slim>();
    let candidates = store.discover();
    drop(listed);

    // Indexing the metas costs a position and a 32-bit hash of the id each (so a lookup
    // probes one array instead of an id on the heap per probe), not a copy of every id.
    let base = live();
    let (old, bytes) = peak_during(|| ById::of(slim));
    assert_eq!(old.len(), N);
    assert!(
        bytes <= N * 8 + 1024,
        "indexing the metas by id: {bytes} bytes for {N} sessions"
    );

    // The check consumes them: besides the metas' buffer, which it frees, it keeps only the
    // watcher's table of moved ids and path hashes (4,096 buckets of 33 bytes for 3,000
    // sessions: 45 bytes a session), and frees the paths. Keeping the paths (as until issue
    // 10's cut) kept 78 bytes a session; a copy of each id and path would add about 65.
    let (checked, peak) = peak_during(|| catalog::check(store, old, &candidates));
    let after = live();
    // Meanwhile it holds no second copy of them either (moved, not cloned and then freed):
    // the table, a pointer and two flags a session, and the threads' memos.
    assert!(
        peak <= N * 128,
        "the warm check peaked at {} bytes a session (bound 128)",
        peak / N
    );
    assert_eq!(checked.known.len(), N);
    assert!(checked.fresh.is_empty() && checked.gone.is_empty());
    let table = checked.known.table_bytes();
    assert!(
        table <= N * 48,
        "the watcher's table is {} bytes a session (bound 48)",
        table / N
    );
    let kept = (after + metas_bytes).saturating_sub(base);
    assert!(
        kept <= N * 48,
        "the warm check kept {} bytes a session besides the metas' buffer (bound 48)",
        kept / N
    );
    eprintln!(
        "by id {} B/session, check kept {} B/session, table {} B/session, peaked at {}",
        bytes / N,
        kept / N,
        table / N,
        peak / N
    );
    drop(checked);

    // What the pass reports is what the map by id reported: an append is re-read and
    // changed, a new file only re-read, a deleted one gone, the rest kept.
    let appended = dir.join("20260101-000000.jsonl");
    let text = std::fs::read_to_string(&appended).unwrap();
    let last = text.lines().last().unwrap().to_string();
    std::fs::write(&appended, format!("{text}{last}\n")).unwrap();
    std::fs::remove_file(dir.join("20260101-000001.jsonl")).unwrap();
    std::fs::write(dir.join("20260102-000000.jsonl"), &src).unwrap();
    let metas: Vec<Meta> = catalog::load(&cache)
        .unwrap()
        .take(StoreKind::Loom, store.sessions_dir())
        .unwrap()
        .entries
        .into_iter()
        .map(|e| e.meta)
        .collect();
    let checked = catalog::check(store, ById::new(metas), &store.discover());
    let mut fresh: Vec<&str> = checked.fresh.iter().map(|e| e.meta.id.as_str()).collect();
    fresh.sort_unstable();
    assert_eq!(fresh, ["20260101-000000", "20260102-000000"]);
    assert_eq!(checked.changed, ["20260101-000000"]);
    assert_eq!(checked.gone, ["20260101-000001"]);
    assert_eq!(checked.known.len(), N);
    assert!(checked.known.contains_key("20260102-000000"));
    assert!(!checked.known.contains_key("20260101-000001"));
}
