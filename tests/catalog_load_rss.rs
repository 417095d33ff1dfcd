//! The warm start's catalog read, measured by the kernel (resident pages, not allocations):
//! the file is checked and decoded as it streams in, never held whole beside its rows
//! (issue 10: at 100k sessions the file is ~74 MB, and holding it while the rows were decoded
//! was the start's peak, 294 MB VmHWM against 225 MB without it).

mod common;

use spool::catalog;

const N: usize = 30_000;

/// `VmRSS` or `VmHWM` of this process, in bytes.
fn status(field: &str) -> u64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap();
    let kb = s
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .unwrap();
    kb * 1024
}

const TEXTS: common::catalog_rows::Texts = common::catalog_rows::Texts {
    sessions_dir: "/s",
    summary_repeat: 6,
    first_prompt_repeat: 4,
    cwds: 1,
};

/// One test: the figures are the whole process's.
#[test]
fn loading_the_catalog_does_not_hold_its_file() {
    let d = tempfile::tempdir().unwrap();
    let cache = d.path().join("cache");
    let cat = common::catalog_rows::catalog(d.path(), N, &TEXTS);
    catalog::save(&cache, &cat).unwrap();
    drop(cat);
    let file = std::fs::metadata(catalog::file(&cache)).unwrap().len();

    // Freed memory goes back to the kernel before and after, so that the figures are what
    // the load made resident, and reset the high-water mark (Linux's clear_refs "5").
    // SAFETY: malloc_trim only returns free memory of glibc's heap.
    unsafe { libc::malloc_trim(0) };
    std::fs::write("/proc/self/clear_refs", "5").unwrap();
    let loaded = catalog::load(&cache).expect("the catalog just saved");
    // SAFETY: as above.
    unsafe { libc::malloc_trim(0) };
    let (peak, after) = (status("VmHWM:"), status("VmRSS:"));
    assert_eq!(loaded.sections[0].entries.len(), N);
    assert_eq!(
        loaded.sections[0].entries[7],
        common::catalog_rows::entry(7, 7, &TEXTS)
    );
    // What was resident at the peak and is not now: the read's transient memory. Holding
    // the file made it the file's size; streamed, it is the reader's buffers.
    let transient = peak.saturating_sub(after);
    eprintln!(
        "catalog {} KiB: load peaked {} KiB above what it kept",
        file >> 10,
        transient >> 10
    );
    assert!(
        transient < file / 3,
        "loading a {} KiB catalog peaked {} KiB above what it kept (bound a third of it)",
        file >> 10,
        transient >> 10
    );
    drop(loaded);
}
