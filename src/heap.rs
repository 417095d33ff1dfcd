//! The browser's dealings with the C allocator (glibc's malloc, which Rust's `System`
//! allocator calls): big blocks mapped on their own, and freed memory handed back to the
//! kernel once a burst of temporary work is over.
//!
//! Issue 10: at 100k sessions a warm start keeps about 100 MB of heap, and its resident
//! memory stayed 35–45 MB above that. Two causes, measured on the bench's warm 100k start:
//! - glibc raises its mmap threshold each time a mapped block is freed (up to 32 MB), so
//!   after the first big temporary vector (a survey's candidates, a pass's results) the
//!   next ones came from the heap arenas, where freeing them left pages resident. A fixed
//!   threshold keeps every block of 128 KiB or more in its own mapping, returned on free.
//! - the many small blocks a stat pass or a catalog decode frees (candidate ids and paths,
//!   slimmed metas) leave whole free pages inside the arenas that glibc only gives back at
//!   an arena's top. `malloc_trim(0)` gives back every free page (about 15 MB after a warm
//!   start's checks), so the next burst (the watcher, the first keys) starts lower.
//!
//! Both are hints: a failure changes nothing, and elsewhere than glibc they do nothing.

/// Blocks from this size on are mapped on their own (glibc's default starting threshold,
/// held fixed).
const MMAP_FROM: i32 = 128 * 1024;

/// Hold glibc's mmap threshold at `MMAP_FROM` (setting it turns the sliding threshold off).
/// Called once, by the browser before its threads start: the CLI's short runs gain nothing
/// from mappings returned early and would pay their page faults.
pub fn map_big_blocks() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only reads its two integer arguments.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_FROM);
    }
}

/// The sessions a store's rescan must have listed for `give_back` after it to be worth its
/// walk over every arena (its discovery freed about 3 MB at 10k sessions).
pub const GIVE_BACK_FROM: usize = 10_000;

/// Give the free pages of every arena back to the kernel (after a burst of temporary work
/// on a background thread; it takes each arena's lock in turn, for a few ms at 100k).
pub fn give_back() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim takes a size and touches only the allocator's own state.
    unsafe {
        libc::malloc_trim(0);
    }
}
