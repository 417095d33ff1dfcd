//! The `spool` binary allocates through jemalloc with the options `spool::heap` gives it
//! (its `main` takes `spool::allocator!()`): without them a warm start at 100k sessions was
//! searchable 60–220 ms later (glibc) or peaked at 120 MB (jemalloc's default decay).
#![cfg(target_os = "linux")]

use std::process::Command;

/// jemalloc prints its options at exit when `_RJEM_MALLOC_CONF` asks it to.
#[test]
fn the_binary_allocates_through_jemalloc_with_its_pages_handed_back_at_once() {
    let out = Command::new(env!("CARGO_BIN_EXE_spool"))
        .arg("--version")
        .env("_RJEM_MALLOC_CONF", "stats_print:true")
        .output()
        .unwrap();
    assert!(out.status.success());
    let stats = String::from_utf8_lossy(&out.stderr);
    for opt in ["opt.dirty_decay_ms: 0 ", "opt.muzzy_decay_ms: 0 "] {
        assert!(
            stats.contains(opt),
            "no `{opt}` in jemalloc's stats:\n{stats}"
        );
    }
}
