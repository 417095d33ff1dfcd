//! The catalog's save, counted by a counting allocator (bytes, not time): the file streams
//! into its temp file a chunk at a time, never built whole in memory first (issue 10: at
//! 100k sessions the file is tens of MB, and a warm start whose check found many changes
//! folded the patch log into a new base holding that buffer beside the decoded catalog).

mod common;

use common::counting::{Counting, peak_during};
use spool::catalog;

#[global_allocator]
static A: Counting = Counting;

const N: usize = 5_000;

const TEXTS: common::catalog_rows::Texts = common::catalog_rows::Texts {
    sessions_dir: "/s",
    summary_repeat: 6,
    first_prompt_repeat: 0,
    cwds: 1,
};

/// One test: the counts are process-wide, so nothing else may allocate meanwhile.
#[test]
fn saving_the_catalog_does_not_hold_its_file() {
    let d = tempfile::tempdir().unwrap();
    let cache = d.path().join("cache");
    let cat = common::catalog_rows::catalog(d.path(), N, &TEXTS);
    let (saved, peak) = peak_during(|| catalog::save(&cache, &cat));
    saved.unwrap();
    let file = std::fs::metadata(catalog::file(&cache)).unwrap().len() as usize;
    eprintln!(
        "catalog {} KiB: the save peaked {} KiB",
        file >> 10,
        peak >> 10
    );
    // What the save may hold: its write buffer, the read-back buffer and the head (the first
    // screen's rows), not the file.
    assert!(
        peak < file / 4,
        "saving a {} KiB catalog held {} KiB at its peak (bound a quarter of the file)",
        file >> 10,
        peak >> 10
    );
    // And what it wrote is the catalog, intact.
    let back = catalog::load(&cache).expect("the catalog just saved");
    assert_eq!(back.sections[0].entries.len(), N);
    assert_eq!(
        back.sections[0].entries[N - 1],
        cat.sections[0].entries[N - 1]
    );
}
