//! The browser's memory, process-wide: the allocator (jemalloc on Linux, its freed pages
//! handed back to the kernel at once), and the order of the warm start's bursts of
//! temporary work, so that their peaks do not stack (`Peaks`).

/// The process's allocator on Linux: jemalloc, its freed pages given back at once. Each
/// binary takes it with `spool::allocator!()` (the library cannot: the memory tests count
/// allocations with an allocator of their own).
///
/// Issue 10: a warm start at 100k sessions runs a store's walk on two threads beside the
/// catalog's decode, each making and freeing a few small blocks a session. Under glibc's
/// malloc, held to one arena in the browser (a warm start at 10k had peaked at 138 MB with
/// an arena per thread, 84 with one), those threads slept thousands of times in half a
/// second on its lock (perf's `sched_switch`: most of them in `malloc` and `free` inside the
/// walk and the decode), and the list was searchable 10–35% later than under jemalloc.
///
/// `dirty_decay_ms:0` and `muzzy_decay_ms:0`: a page left empty is handed back as it is
/// freed. With glibc, resident memory had stayed 35–45 MB above the heap after a warm
/// start's temporary work (its sliding mmap threshold kept big blocks in the arenas, and
/// free pages inside an arena were only returned by `malloc_trim`, which spool called after
/// each burst). jemalloc's default decay (10 s) held that much and more: the warm 100k peak
/// was 120 MB. At 0 the peak is within 1–3 MB of glibc's with those calls
/// (`tests/heap_rss.rs` holds the allocator to it).
#[macro_export]
macro_rules! allocator {
    () => {
        #[cfg(target_os = "linux")]
        #[global_allocator]
        static ALLOCATOR: $crate::heap::Jemalloc = $crate::heap::Jemalloc;

        /// jemalloc's options, read when it starts (its `malloc_conf` under the crate's
        /// symbol prefix).
        #[cfg(target_os = "linux")]
        #[unsafe(export_name = "_rjem_malloc_conf")]
        static MALLOC_CONF: &u8 = $crate::heap::MALLOC_CONF;
    };
}

#[cfg(target_os = "linux")]
pub use tikv_jemallocator::Jemalloc;

/// `allocator!`'s options for jemalloc: a NUL-ended C string.
pub const MALLOC_CONF: &u8 = &b"dirty_decay_ms:0,muzzy_decay_ms:0\0"[0];

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
