//! The catalog's head: its rows are the final list's first rows, and a stale, damaged or
//! mismatched head is never used.

use std::path::Path;
use std::sync::Arc;

use super::head::{self, ROWS};
use super::*;
use crate::app::list::List;
use crate::store::registry::Filter;

/// `n` rows per store of two stores, with pins, archived, empty and child rows, and many
/// ties in time (the order's id and store tie-breaks decide those).
fn catalog(dirs: &[(StoreKind, &Path)], n: usize) -> Catalog {
    let sections = dirs
        .iter()
        .map(|&(kind, dir)| {
            let entries = (0..n)
                .map(|i| {
                    let id = format!("s{:05}", (i * 7919) % n);
                    let path = dir.join(format!("{id}.jsonl"));
                    let mut r = SessionSummary::new(kind, &id, path.to_str().unwrap());
                    r.has_user_message = i % 11 != 0;
                    r.archived = i % 13 == 0;
                    r.updated_at =
                        chrono::DateTime::from_timestamp(1_700_000_000 + (i / 3) as i64, 0);
                    if i % 97 == 0 {
                        r.pinned_at = r.updated_at;
                    }
                    r.pinned_flag = i % 101 == 5;
                    if i % 17 == 0 {
                        r.set_child_of(Some("loom:parent".into()));
                    }
                    let meta = Meta {
                        id: r.id.to_string(),
                        path: r.path(),
                        key: i as u64,
                        cwd: None,
                        cwd_dir: false,
                        expires: None,
                    };
                    Entry {
                        meta,
                        row: Some(std::sync::Arc::new(r)),
                    }
                })
                .collect();
            Section {
                kind,
                dir: dir.to_path_buf(),
                entries,
            }
        })
        .collect();
    Catalog { sections }
}

struct Fixture {
    _tmp: tempfile::TempDir,
    cache: std::path::PathBuf,
    a: std::path::PathBuf,
    b: std::path::PathBuf,
}

fn fixture() -> Fixture {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    std::fs::create_dir_all(&a).unwrap();
    std::fs::create_dir_all(&b).unwrap();
    let cache = tmp.path().join("cache/spool");
    Fixture {
        _tmp: tmp,
        cache,
        a,
        b,
    }
}

fn list() -> List {
    List::new(Filter::default(), Arc::new(|| {}))
}

#[test]
fn the_heads_rows_are_the_final_lists_first_rows_and_hold_still_when_the_rest_arrives() {
    let f = fixture();
    let stores = [
        (StoreKind::Loom, f.a.as_path()),
        (StoreKind::Loop, f.b.as_path()),
    ];
    let cat = catalog(&stores, 700);
    save(&f.cache, &cat).unwrap();
    let h = head::read(&f.cache, &stores, &Filter::default()).expect("a head for this catalog");
    assert_eq!(h.rows.len(), ROWS);

    // The final list, from every row of the catalog.
    let all: Vec<SessionSummary> = (cat.sections.iter())
        .flat_map(|s| s.entries.iter().filter_map(|e| e.row.as_deref().cloned()))
        .collect();
    let mut whole = list();
    whole.upsert(all.clone());
    let head_keys: Vec<_> = h.rows.iter().map(|r| (r.store, r.id.to_string())).collect();
    assert_eq!(whole.keys(0, ROWS), head_keys);
    assert_eq!(h.total as usize, whole.len());
    assert!(
        whole
            .keys(0, 3)
            .iter()
            .all(|k| whole.get(k).unwrap().pinned())
    );

    // The start: the head is shown, then the rest is inserted; nothing shown moves.
    let mut start = list();
    start.upsert(h.rows.clone());
    start.expect(h.total as usize);
    assert_eq!(start.count(), whole.len());
    start.shown();
    let selected = start.selected.clone();
    let rest: Vec<_> = (all.into_iter())
        .filter(|r| !head_keys.contains(&(r.store, r.id.to_string())))
        .collect();
    start.upsert(rest);
    assert_eq!(start.keys(0, ROWS), head_keys);
    assert_eq!(start.keys(0, usize::MAX / 2), whole.keys(0, usize::MAX / 2));
    assert_eq!((start.selected.clone(), start.cursor), (selected, 0));
    assert_eq!(start.count(), whole.len());
}

#[test]
fn a_stale_damaged_or_mismatched_head_is_ignored() {
    let f = fixture();
    let stores = [
        (StoreKind::Loom, f.a.as_path()),
        (StoreKind::Loop, f.b.as_path()),
    ];
    let read = || head::read(&f.cache, &stores, &Filter::default());
    save(&f.cache, &catalog(&stores, 300)).unwrap();
    assert!(read().is_some());
    let cat_bytes = std::fs::read(file(&f.cache)).unwrap();
    let bytes = std::fs::read(head::file(&f.cache)).unwrap();
    let cat_header = &cat_bytes[..HEADER];
    assert!(head::decode(&bytes, cat_header).is_some());
    for i in 0..bytes.len() {
        let mut b = bytes.clone();
        b[i] ^= 0x5a;
        assert_eq!(head::decode(&b, cat_header), None, "flipped byte {i}");
    }
    assert_eq!(head::decode(&bytes[..bytes.len() - 1], cat_header), None);

    // Another filter, or other stores, than the head was cut for.
    let archived = Filter {
        archived: true,
        ..Filter::default()
    };
    assert!(head::read(&f.cache, &stores, &archived).is_none());
    assert!(head::read(&f.cache, &stores[..1], &Filter::default()).is_none());
    let other = [stores[0], (StoreKind::Harness, f.b.as_path())];
    assert!(head::read(&f.cache, &other, &Filter::default()).is_none());

    // A damaged patch log is ignored by the catalog's load, and so by the head.
    let before = read();
    std::fs::write(log::file(&f.cache), b"x").unwrap();
    assert_eq!(read(), before);
    std::fs::remove_file(log::file(&f.cache)).unwrap();

    // A newer catalog with the old head (a writer stopped between the two files).
    save(&f.cache, &catalog(&stores, 250)).unwrap();
    std::fs::write(head::file(&f.cache), &bytes).unwrap();
    assert!(read().is_none());

    // A corrupt catalog header.
    save(&f.cache, &catalog(&stores, 250)).unwrap();
    let mut c = std::fs::read(file(&f.cache)).unwrap();
    c[30] ^= 1;
    std::fs::write(file(&f.cache), &c).unwrap();
    assert!(read().is_none());

    // Two stores listing the same session: no head is written at all.
    let same = [
        (StoreKind::Loom, f.a.as_path()),
        (StoreKind::Loom, f.b.as_path()),
    ];
    save(&f.cache, &catalog(&same, 50)).unwrap();
    assert!(!head::file(&f.cache).exists());
}

#[test]
fn a_browser_whose_other_stores_do_not_exist_still_starts_from_the_head() {
    // The usual machine: the default Codex, pi, ... stores are configured, their
    // directories absent, so the catalog holds no section for them.
    let tmp = tempfile::tempdir().unwrap();
    let stores = crate::store::Stores::open(&crate::store::registry::Roots::all_in(tmp.path()));
    let loom = stores.stores[1].sessions_dir().to_path_buf();
    std::fs::create_dir_all(&loom).unwrap();
    let cache = tmp.path().join("cache/spool");
    save(&cache, &catalog(&[(StoreKind::Loom, loom.as_path())], 30)).unwrap();
    let h = warm::head(&cache, &stores, &Filter::default()).expect("the head is used");
    assert_eq!(h.rows.len(), h.total as usize);
    // A store that exists but has no section yet (never listed) loads cold.
    std::fs::create_dir_all(stores.stores[0].sessions_dir()).unwrap();
    assert!(warm::head(&cache, &stores, &Filter::default()).is_none());
}

/// A tiny deterministic generator (xorshift): the same changes at every run.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

/// A copy of `e`'s row changed the way a running browser changes rows (pinned, unpinned,
/// archived, touched, emptied), with its meta's key bumped as a re-read would.
fn changed(e: &Entry, how: usize, at: i64) -> Entry {
    let mut r = e.row.as_deref().cloned().unwrap();
    match how {
        0 => r.pinned_flag = !r.pinned_flag,
        1 => r.archived = !r.archived,
        2 => r.has_user_message = !r.has_user_message,
        _ => r.updated_at = chrono::DateTime::from_timestamp(at, 0),
    }
    let mut meta = e.meta.clone();
    meta.key += 1_000_000;
    Entry {
        meta,
        row: Some(Arc::new(r)),
    }
}

#[test]
fn a_head_beside_a_patch_log_shows_the_patched_lists_first_rows_and_count() {
    let f = fixture();
    let stores = [
        (StoreKind::Loom, f.a.as_path()),
        (StoreKind::Loop, f.b.as_path()),
    ];
    save(&f.cache, &catalog(&stores, 700)).unwrap();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for round in 0..60 {
        // Each round: one record of a few re-read, new and gone sessions in one store, the
        // rows picked from the head (what a browser touches most) or anywhere.
        let cat = load(&f.cache).unwrap();
        let (kind, dir) = stores[rng.below(2)];
        let s = cat.sections.iter().find(|s| s.dir == dir).unwrap();
        let head_ids: Vec<String> = head::cut(&cat)
            .unwrap()
            .0
            .rows
            .iter()
            .filter(|r| r.store == kind)
            .map(|r| r.id.to_string())
            .collect();
        let mut fresh = Vec::new();
        let mut gone = Vec::new();
        for _ in 0..1 + rng.below(4) {
            let e = match rng.below(2) {
                0 if !head_ids.is_empty() => {
                    let id = &head_ids[rng.below(head_ids.len())];
                    s.entries.iter().find(|e| &e.meta.id == id).unwrap()
                }
                _ => &s.entries[rng.below(s.entries.len())],
            };
            if fresh.iter().any(|x: &Entry| x.meta.id == e.meta.id) || gone.contains(&e.meta.id) {
                continue;
            }
            match rng.below(6) {
                0 => gone.push(e.meta.id.clone()),
                1 => {
                    // A new session, newest of all.
                    let mut n = changed(e, 3, 1_800_000_000 + round);
                    let id = format!("new{round}-{}", fresh.len());
                    let row = Arc::make_mut(n.row.as_mut().unwrap());
                    row.set_id(id.clone());
                    n.meta.id = id;
                    fresh.push(n);
                }
                how => fresh.push(changed(e, how - 2, 1_750_000_000 + round)),
            }
        }
        log::append(&f.cache, kind, dir, &fresh, &gone);
        assert!(log::file(&f.cache).exists() || round > 0);

        let want = head::cut(&load(&f.cache).unwrap()).unwrap().0;
        let got = head::read(&f.cache, &stores, &Filter::default())
            .unwrap_or_else(|| panic!("round {round}: the head was not used beside the log"));
        assert_eq!(got.total, want.total, "round {round}: the count");
        assert!(
            got.rows.len() >= ROWS / 2,
            "round {round}: {} rows",
            got.rows.len()
        );
        let keys = |rows: &[SessionSummary]| -> Vec<(StoreKind, String)> {
            rows.iter().map(|r| (r.store, r.id.to_string())).collect()
        };
        assert_eq!(
            keys(&got.rows),
            keys(&want.rows[..got.rows.len()]),
            "round {round}"
        );
        assert_eq!(
            got.rows,
            want.rows[..got.rows.len()],
            "round {round}: the rows' fields"
        );
    }
    // The rounds went through the log, not only through catalogs rewritten whole.
    assert!(log::file(&f.cache).exists());
}

#[test]
fn a_log_beside_the_head_of_two_stores_of_one_kind_leaves_no_head() {
    let f = fixture();
    let stores = [
        (StoreKind::Loom, f.a.as_path()),
        (StoreKind::Loom, f.b.as_path()),
    ];
    // Two stores of one kind with distinct ids.
    let mut cat = catalog(&stores[..1], 300);
    let mut other = catalog(&[stores[1]], 300).sections.remove(0);
    for e in &mut other.entries {
        let id = format!("b{}", e.meta.id);
        Arc::make_mut(e.row.as_mut().unwrap()).set_id(id.clone());
        e.meta.id = id;
    }
    cat.sections.push(other);
    save(&f.cache, &cat).unwrap();
    assert!(head::read(&f.cache, &stores, &Filter::default()).is_some());
    // Store b now also lists a session store a holds: the digests (kind and id) cannot tell
    // whether store b counted it, so no head is trusted beside any log.
    let e = cat.sections[0]
        .entries
        .iter()
        .find(|e| Filter::default().accepts(e.row.as_deref().unwrap()))
        .unwrap();
    log::append(
        &f.cache,
        StoreKind::Loom,
        stores[1].1,
        std::slice::from_ref(e),
        &[],
    );
    assert!(head::read(&f.cache, &stores, &Filter::default()).is_none());
}

#[test]
fn the_cached_actions_insert_all_but_the_heads_rows_and_remove_what_the_catalog_lost() {
    use crate::app::Action;
    let tmp = tempfile::tempdir().unwrap();
    let stores = crate::store::Stores::open(&crate::store::registry::Roots::all_in(tmp.path()));
    let loom = stores.stores[1].sessions_dir().to_path_buf();
    std::fs::create_dir_all(&loom).unwrap();
    let cache = tmp.path().join("cache/spool");
    save(&cache, &catalog(&[(StoreKind::Loom, loom.as_path())], 500)).unwrap();
    let h = warm::head(&cache, &stores, &Filter::default()).expect("the head is used");
    let mut keys: std::collections::HashSet<_> =
        h.rows.iter().map(|r| (r.store, r.id.to_string())).collect();
    let lost = (StoreKind::Loom, "not-in-the-catalog".to_string());
    keys.insert(lost.clone());
    let (actions, warm) = warm::cached(&cache, &stores, keys);
    assert!(warm.known[1].as_ref().is_some_and(|m| m.len() == 500));
    match &actions[..] {
        [Action::Removed(gone), Action::Cached(rows)] => {
            assert_eq!(gone, &vec![lost]);
            assert_eq!(rows.len(), 500 - h.rows.len());
            assert!(rows.iter().all(|r| !h.rows.iter().any(|x| x.id == r.id)));
        }
        other => panic!("unexpected actions: {}", other.len()),
    }
}
