//! The catalog's patch log, counted by a counting allocator (bytes, not time): a warm check
//! that re-read every session folds its patch into a new base without a copy of the patch
//! (issue 10: the record cloned every re-read entry and was serialized whole, as large as
//! the catalog, and both were held while the catalog was decoded again for the fold).

mod common;

use common::counting::{Counting, live, peak_during};
use spool::catalog::{self, Catalog, Entry, Section};
use spool::model::StoreKind;

#[global_allocator]
static A: Counting = Counting;

const N: usize = 4_000;

fn entry(i: usize, key: u64) -> Entry {
    common::catalog_rows::entry(
        i,
        key,
        &common::catalog_rows::Texts {
            sessions_dir: "/home/u/.loom/sessions",
            summary_repeat: 2,
            first_prompt_repeat: 0,
            cwds: 7,
        },
    )
}

/// One test: the counts are process-wide, so nothing else may allocate meanwhile.
#[test]
fn a_patch_of_every_session_is_folded_in_without_a_copy_of_it() {
    let d = tempfile::tempdir().unwrap();
    let cache = d.path().join("cache");
    let dir = d.path().to_path_buf();
    let section = |key| Section {
        kind: StoreKind::Loom,
        dir: dir.clone(),
        entries: (0..N).map(|i| entry(i, key)).collect(),
    };
    catalog::save(
        &cache,
        &Catalog {
            sections: vec![section(1)],
        },
    )
    .unwrap();
    // What the fold must hold at least: the catalog decoded again.
    let before = live();
    let decoded = catalog::load(&cache).unwrap();
    let catalog_bytes = live() - before;
    drop(decoded);

    // Every session re-read (as after a change to every file): the patch is the whole
    // section, far past the log's size, so it is folded into a new base.
    let fresh = section(2).entries;
    let (_, peak) = peak_during(|| {
        catalog::log::append(&cache, StoreKind::Loom, &dir, &fresh, &[]);
    });
    eprintln!(
        "catalog decoded {} KiB; the patch's fold peaked {} KiB",
        catalog_bytes >> 10,
        peak >> 10
    );
    let back = catalog::load(&cache).unwrap();
    assert_eq!(back.sections[0].entries.len(), N);
    assert!(back.sections[0].entries.iter().all(|e| e.meta.key == 2));
    // The fold decodes the catalog again and puts the patch's entries in (their rows
    // shared): measured 1.04 catalogs. A clone of the patch and its serialized body on top
    // of that made it 1.98.
    assert!(
        peak < catalog_bytes * 3 / 2,
        "folding a patch of every session peaked at {} KiB, a decoded catalog is {} KiB",
        peak >> 10,
        catalog_bytes >> 10
    );
}
