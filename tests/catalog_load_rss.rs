//! The warm start's catalog read, measured by the kernel (resident pages, not allocations):
//! the file is checked and decoded as it streams in, never held whole beside its rows
//! (issue 10: at 100k sessions the file is ~74 MB, and holding it while the rows were decoded
//! was the start's peak, 294 MB VmHWM against 225 MB without it).

use std::path::PathBuf;
use std::sync::Arc;

use spool::catalog::{self, Catalog, Entry, Meta, Section};
use spool::model::{SessionSummary, StoreKind};

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

fn entry(i: usize) -> Entry {
    let id = format!("20260101-{i:06}");
    let path = PathBuf::from(format!("/s/{id}.jsonl"));
    let mut s = SessionSummary::new(StoreKind::Loom, id.clone(), path.clone());
    s.title = format!("Fix the parser in module {i} before the release");
    s.summary = format!("* Goal: make test {i} pass\n* Cause: a trailing slash. ").repeat(6);
    s.first_prompt = format!("why does test {i} fail after the router change? ").repeat(4);
    s.cwd = Some("/home/u/projects/acme-api".into());
    Entry {
        meta: Meta {
            id,
            path,
            key: i as u64,
            cwd: s.cwd.clone(),
            cwd_dir: true,
            expires: None,
        },
        row: Some(Arc::new(s)),
    }
}

/// One test: the figures are the whole process's.
#[test]
fn loading_the_catalog_does_not_hold_its_file() {
    let d = tempfile::tempdir().unwrap();
    let cache = d.path().join("cache");
    let cat = Catalog {
        sections: vec![Section {
            kind: StoreKind::Loom,
            dir: d.path().to_path_buf(),
            entries: (0..N).map(entry).collect(),
        }],
    };
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
    assert_eq!(loaded.sections[0].entries[7], entry(7));
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
