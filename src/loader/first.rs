//! The first screen of a start with no catalog. A readdir of 33k loom logs costs ~30 ms of CPU
//! and gives loom's newest screenful at once, while Loop and agent-harness `stat` every session
//! to order theirs (~110 ms of CPU at 33k). On two cores all of them ran side by side, so the
//! first rows came at 130–160 ms at 100k sessions. Now the stores that order by name list first,
//! and the others wait until one of those has sent rows (or has none, or a moment has passed),
//! then insert theirs around the rows already on screen. And a first batch is a screenful.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::Duration;

/// Rows read beyond a screenful in the first batch: they are read in mtime order and then
/// shown in order of activity, and an archived one is hidden.
const FIRST_SPARE: usize = 4;

/// The list rows one screen shows, set by the browser before the loader starts (0: unknown).
static SCREENFUL: AtomicUsize = AtomicUsize::new(0);

/// The list shows `rows` rows on its first screen: a cold start reads that many (and
/// `FIRST_SPARE`) first. Issue 10: each Claude Code row read is a whole transcript (7.5 MB
/// for 32 rows at 10k sessions), and a 30-line terminal shows 14 rows.
pub fn set_screenful(rows: usize) {
    SCREENFUL.store(rows, Ordering::Relaxed);
}

/// Size of a store's first batch (see `set_screenful`).
pub(super) fn first_batch() -> usize {
    match SCREENFUL.load(Ordering::Relaxed) {
        0 => super::FIRST_BATCH,
        rows => rows + FIRST_SPARE,
    }
}

/// The longest a store waits for another's first rows: a huge name-ordered store must not
/// hold back the rest for long.
pub(super) const FIRST_ROWS_WAIT: Duration = Duration::from_millis(120);

/// Shared by a start's listing threads.
#[derive(Default)]
pub(super) struct FirstRows {
    state: Mutex<State>,
    cv: Condvar,
}

#[derive(Default)]
struct State {
    /// Name-ordered stores that have neither sent rows nor finished.
    pending: usize,
    /// Some store's rows are out.
    shown: bool,
}

impl FirstRows {
    /// A start with `name_ordered` stores that list first.
    pub(super) fn new(name_ordered: usize) -> FirstRows {
        FirstRows {
            state: Mutex::new(State {
                pending: name_ordered,
                shown: false,
            }),
            cv: Condvar::new(),
        }
    }

    /// Rows are on their way to the screen: nobody waits any longer.
    pub(super) fn shown(&self) {
        if let Ok(mut s) = self.state.lock() {
            s.shown = true;
            self.cv.notify_all();
        }
    }

    /// One name-ordered store is out of the race (it sent rows, found none, or stopped).
    pub(super) fn finished(&self) {
        if let Ok(mut s) = self.state.lock() {
            s.pending = s.pending.saturating_sub(1);
            self.cv.notify_all();
        }
    }

    /// Whether some store's rows are out (rather than every name-ordered store ended empty).
    pub(super) fn rows_shown(&self) -> bool {
        self.state.lock().is_ok_and(|s| s.shown)
    }

    /// Wait (at most `limit`) until rows are out or no name-ordered store is still listing.
    /// Returns whether the wait ended for that reason rather than the limit.
    pub(super) fn wait(&self, limit: Duration) -> bool {
        let Ok(s) = self.state.lock() else {
            return false;
        };
        self.cv
            .wait_timeout_while(s, limit, |s| !s.shown && s.pending > 0)
            .is_ok_and(|(_, t)| !t.timed_out())
    }
}

/// A name-ordered store's part in the race; dropping it (however the thread ends) counts as
/// finished, so a store that fails or stops early never holds the others back.
pub(super) struct Runner<'a>(pub(super) &'a FirstRows);

impl Drop for Runner<'_> {
    fn drop(&mut self) {
        self.0.finished();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::thread;
    use std::time::Instant;

    /// A known screen sizes the first batch (a screenful and the spare); an unknown one
    /// leaves it at 32. (Other tests may list meanwhile: only their batching changes.)
    #[test]
    fn the_first_batch_is_a_screenful() {
        set_screenful(14);
        assert_eq!(first_batch(), 14 + FIRST_SPARE);
        set_screenful(0);
        assert_eq!(first_batch(), super::super::FIRST_BATCH);
    }

    #[test]
    fn with_no_name_ordered_store_nobody_waits() {
        assert!(FirstRows::new(0).wait(Duration::from_secs(5)));
    }

    #[test]
    fn a_waiter_is_released_by_the_first_rows() {
        let f = Arc::new(FirstRows::new(2));
        let f2 = f.clone();
        let t = thread::spawn(move || f2.wait(Duration::from_secs(30)));
        f.shown();
        assert!(t.join().unwrap(), "released by the rows, not the limit");
    }

    #[test]
    fn a_waiter_is_released_when_every_name_ordered_store_ends_without_rows() {
        let f = Arc::new(FirstRows::new(2));
        let f2 = f.clone();
        let t = thread::spawn(move || f2.wait(Duration::from_secs(30)));
        drop(Runner(&f));
        drop(Runner(&f));
        assert!(t.join().unwrap());
    }

    #[test]
    fn the_wait_has_a_limit() {
        let f = FirstRows::new(1);
        let t = Instant::now();
        assert!(!f.wait(Duration::from_millis(20)));
        assert!(t.elapsed() >= Duration::from_millis(20));
    }
}
