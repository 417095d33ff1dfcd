//! The browser's dealings with the C allocator (glibc's malloc, which Rust's `System`
//! allocator calls): big blocks mapped on their own, and freed memory handed back to the
//! kernel once a burst of temporary work is over; and the order of the warm start's bursts,
//! so that their peaks do not stack (`Peaks`).
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

/// Work whose memory peaks must not stack: a warm start's stat passes (each holds its
/// store's survey and the catalog's metas until it ends: ~20 MB at 100k Codex rollouts)
/// and the quick search's items (~15 MB kept at 100k sessions, built in two halves joined
/// after). Issue 10: once the catalog decoded faster, the items were built while the Codex
/// check ran in nearly every warm start, and the two together were the start's peak (96–98
/// MB, where either alone came to ~87). The items now wait for the passes, unless a query
/// needs them (`hurry`).
mod peaks {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::{Condvar, Mutex};
    use std::time::{Duration, Instant};

    /// How many pieces of work of one kind are under way (each a `Peak` until dropped),
    /// for whatever waits for them to end (`after`), and whether a query hurries the waits.
    #[derive(Debug)]
    pub struct Peaks {
        running: Mutex<usize>,
        ended: Condvar,
        /// A query needs the items: nothing waits any more.
        hurry: AtomicBool,
    }

    /// The process's warm-start stat passes (`loader`), which the items wait for.
    pub static PEAKS: Peaks = Peaks::new();
    /// The process's quick-search item builds under way (`app::list::background`), which
    /// a warm start's watchers wait for: a watcher's walk (about 65 ms of a core at 100k
    /// Codex rollouts, right after the check) took a core from the items' two threads, and
    /// the list was searchable that much later.
    pub static ITEMS: Peaks = Peaks::new();

    /// A piece of work under way, until dropped.
    #[derive(Debug)]
    pub struct Peak(&'static Peaks);

    impl Peaks {
        pub const fn new() -> Peaks {
            Peaks {
                running: Mutex::new(0),
                ended: Condvar::new(),
                hurry: AtomicBool::new(false),
            }
        }

        fn running(&self) -> std::sync::MutexGuard<'_, usize> {
            self.running.lock().unwrap_or_else(|e| e.into_inner())
        }

        pub fn begin(&'static self) -> Peak {
            *self.running() += 1;
            Peak(self)
        }

        /// Wait until no pass is under way, a query hurries, or `limit` has passed (a pass
        /// that hangs on a slow disk holds nothing up for long). Returns whether it waited.
        pub fn after(&self, limit: Duration) -> bool {
            let until = Instant::now() + limit;
            let mut n = self.running();
            let mut waited = false;
            while *n > 0 && !self.hurry.load(Ordering::Acquire) {
                let Some(left) = until.checked_duration_since(Instant::now()) else {
                    break;
                };
                waited = true;
                n = (self.ended.wait_timeout(n, left))
                    .unwrap_or_else(|e| e.into_inner())
                    .0;
            }
            waited
        }

        /// A query needs the items now: whatever waits in `after` goes on, and nothing
        /// waits from now on.
        pub fn hurry(&self) {
            self.hurry.store(true, Ordering::Release);
            // Under the lock, so a waiter between its check and its wait is not missed.
            let _n = self.running();
            self.ended.notify_all();
        }
    }

    impl Default for Peaks {
        fn default() -> Peaks {
            Peaks::new()
        }
    }

    impl Drop for Peak {
        fn drop(&mut self) {
            let mut n = self.0.running();
            *n = n.saturating_sub(1);
            if *n == 0 {
                self.0.ended.notify_all();
            }
        }
    }
}

pub use peaks::{ITEMS, PEAKS, Peak, Peaks};

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    fn peaks() -> &'static Peaks {
        Box::leak(Box::new(Peaks::new()))
    }

    #[test]
    fn nothing_under_way_waits_for_nothing() {
        assert!(!peaks().after(Duration::from_secs(60)));
    }

    #[test]
    fn a_wait_ends_when_the_last_pass_does() {
        let p = peaks();
        let (a, b) = (p.begin(), p.begin());
        let waiter = std::thread::spawn(move || (p.after(Duration::from_secs(60)), Instant::now()));
        std::thread::sleep(Duration::from_millis(50));
        drop(a);
        std::thread::sleep(Duration::from_millis(50));
        assert!(!waiter.is_finished(), "one pass is still under way");
        let ended = Instant::now();
        drop(b);
        let (waited, at) = waiter.join().unwrap();
        assert!(waited && at >= ended);
    }

    #[test]
    fn a_query_hurries_the_wait_and_every_later_one() {
        let p = peaks();
        let _pass = p.begin();
        let waiter = std::thread::spawn(move || p.after(Duration::from_secs(60)));
        std::thread::sleep(Duration::from_millis(50));
        p.hurry();
        assert!(waiter.join().unwrap(), "it waited until hurried");
        assert!(
            !p.after(Duration::from_secs(60)),
            "after a hurry nothing waits"
        );
    }

    #[test]
    fn a_pass_that_never_ends_holds_a_wait_up_to_its_limit() {
        let p = peaks();
        let _pass = p.begin();
        let t = Instant::now();
        assert!(p.after(Duration::from_millis(100)));
        assert!(t.elapsed() >= Duration::from_millis(100));
    }
}
