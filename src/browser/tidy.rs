//! Each store's tidying (loom's expired trash and the temps of killed forks), once a session:
//! on a background thread a while after the listing is in, or at the quit if it has not run
//! by then. At the quit it read loom's whole `sessions/` (33k entries at 100k sessions)
//! while the shell's prompt waited for spool to exit (issue 10).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::Duration;

use crate::store::Stores;

/// How long after the listing is in the background tidying waits: run at once, it read the
/// 33k-entry directory while the quick search's items were still being built, and a warm
/// start at 100k sessions was searchable 60–70 ms later (528 vs 458 and 506 vs 443 ms,
/// medians of 5 and 6 alternated starts).
pub const TIDY_AFTER: Duration = Duration::from_secs(3);

/// Whether this session's tidying has been started, and whether it is done.
#[derive(Default)]
pub(super) struct Tidy {
    started: bool,
    done: Arc<AtomicBool>,
}

impl Tidy {
    pub(super) fn started(&self) -> bool {
        self.started
    }

    /// Start it on a thread of its own at background priority, `after` from now (the first
    /// call only).
    pub(super) fn in_background(&mut self, stores: &Arc<Stores>, after: Duration) {
        if self.started {
            return;
        }
        let (stores, done) = (stores.clone(), self.done.clone());
        self.started = thread::Builder::new()
            .name("spool-tidy".into())
            .spawn(move || {
                crate::priority::background();
                thread::sleep(after);
                tidy(&stores);
                done.store(true, Ordering::SeqCst);
            })
            .is_ok();
    }

    /// At the quit: tidy now unless the background has done it. A background tidying still
    /// under way does the same removals (a second `unlink` of a file fails and is ignored)
    /// and ends with the process; each removal is whole or not at all.
    pub(super) fn at_quit(&self, stores: &Stores) {
        if !self.done.load(Ordering::SeqCst) {
            tidy(stores);
        }
    }
}

fn tidy(stores: &Stores) {
    for s in &stores.stores {
        s.tidy();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Roots;
    use std::path::Path;
    use std::time::{Duration, Instant, SystemTime};

    /// A loom store whose `sessions/` holds a killed fork's temp (an hour old and more).
    fn loom_with_a_stale_temp(dir: &Path) -> (Arc<Stores>, std::path::PathBuf) {
        let sessions = dir.join("loom/sessions");
        std::fs::create_dir_all(&sessions).unwrap();
        let temp = sessions.join(".fork-0123456789abcdef.jsonl.tmp");
        let f = std::fs::File::create(&temp).unwrap();
        f.set_modified(SystemTime::now() - Duration::from_secs(3 * 3600))
            .unwrap();
        (Arc::new(Stores::open(&Roots::all_in(dir))), temp)
    }

    #[test]
    fn the_background_tidies_once_and_the_quit_then_leaves_it() {
        let d = tempfile::tempdir().unwrap();
        let (stores, temp) = loom_with_a_stale_temp(d.path());
        let mut tidy = Tidy::default();
        tidy.in_background(&stores, Duration::ZERO);
        let t0 = Instant::now();
        while temp.exists() && t0.elapsed() < Duration::from_secs(10) {
            thread::sleep(Duration::from_millis(5));
        }
        assert!(
            !temp.exists(),
            "the background thread removed the stale temp"
        );
        // Another stale temp now: neither a second start nor the quit tidies again.
        let f = std::fs::File::create(&temp).unwrap();
        f.set_modified(SystemTime::now() - Duration::from_secs(3 * 3600))
            .unwrap();
        tidy.in_background(&stores, Duration::ZERO);
        tidy.at_quit(&stores);
        thread::sleep(Duration::from_millis(50));
        assert!(temp.exists(), "tidied once a session");
    }

    #[test]
    fn a_quit_before_the_listing_is_in_tidies_at_once() {
        let d = tempfile::tempdir().unwrap();
        let (stores, temp) = loom_with_a_stale_temp(d.path());
        Tidy::default().at_quit(&stores);
        assert!(!temp.exists());
    }

    #[test]
    fn a_quit_while_the_background_waits_tidies_at_once() {
        let d = tempfile::tempdir().unwrap();
        let (stores, temp) = loom_with_a_stale_temp(d.path());
        let mut tidy = Tidy::default();
        tidy.in_background(&stores, Duration::from_secs(3600));
        tidy.at_quit(&stores);
        assert!(!temp.exists());
    }
}
