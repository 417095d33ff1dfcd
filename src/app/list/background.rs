//! The matcher's items for a long list, built on a thread once the list is on screen, so
//! the browser answers keys while 100k rows' text is lower-cased (at 100k sessions that took
//! the UI thread 1.3 s before its first loop turn, issue 10). A build is for one generation
//! of the rows: a removal or a change of view meanwhile makes it stale, and it is thrown
//! away. The run loop is woken when it is done, as a query typed meanwhile matched only the
//! items there were.

use std::sync::Arc;
use std::sync::mpsc::{self, Receiver, TryRecvError};

use crate::heap::{PEAKS, Peaks};
use crate::model::SessionSummary;
use crate::search::quick::Built;

/// Lists at least this long build their items on a thread; shorter ones build in about 20 ms
/// on the UI thread, where a query sees them at once (10k rows took 85–165 ms there).
pub const ON_A_THREAD_FROM: usize = 2_000;

/// The longest a build waits for the stat passes to end (`heap::Peaks`).
const WAIT_AT_MOST: std::time::Duration = std::time::Duration::from_secs(2);

/// A build under way.
pub struct Pending {
    /// The rows' generation it was started for.
    generation: u64,
    rx: Receiver<Built>,
    /// The passes it waits for before it builds (`heap::Peaks`).
    peaks: &'static Peaks,
}

/// What a pending build has to show for itself.
pub enum Poll {
    Done(Built),
    Running(Pending),
    /// Stale (the rows changed since) or lost (the thread could not finish).
    Gone,
}

impl Pending {
    /// Start building items for `rows` (generation `generation`), calling `notify` once
    /// they are ready; `None` when no thread could be started (the caller builds them).
    pub fn start(
        generation: u64,
        rows: Vec<Arc<SessionSummary>>,
        notify: Arc<dyn Fn() + Sync + Send>,
    ) -> Option<Pending> {
        Pending::start_after(&PEAKS, generation, rows, notify)
    }

    /// `start`, the build waiting first for the passes of `peaks` to end, unless a query
    /// needs the items (`hurry`): so the two memory peaks do not stack (`heap::Peaks`).
    pub(super) fn start_after(
        peaks: &'static Peaks,
        generation: u64,
        rows: Vec<Arc<SessionSummary>>,
        notify: Arc<dyn Fn() + Sync + Send>,
    ) -> Option<Pending> {
        let (tx, rx) = mpsc::channel();
        // Begun here, so that a watcher that looks after the build started waits for it.
        let building = crate::heap::ITEMS.begin();
        std::thread::Builder::new()
            .name("spool-quick-items".into())
            .spawn(move || {
                let _building = building;
                let since = std::time::Instant::now();
                if peaks.after(WAIT_AT_MOST) {
                    crate::keytrace::phase("items_waited", since);
                }
                let built = Built::of(rows);
                // When a query can match every row (issue 10's "loaded and searchable").
                crate::keytrace::phase_since_launch("items_built_at");
                if tx.send(built).is_ok() {
                    notify();
                }
            })
            .ok()?;
        Some(Pending {
            generation,
            rx,
            peaks,
        })
    }

    /// A query needs the items: the build waits for no pass.
    pub fn hurry(&self) {
        self.peaks.hurry();
    }

    /// A build that never started: the test sends its items when it wants.
    #[cfg(test)]
    pub fn held(generation: u64) -> (Pending, mpsc::Sender<Built>) {
        let (tx, rx) = mpsc::channel();
        let peaks = &PEAKS;
        (
            Pending {
                generation,
                rx,
                peaks,
            },
            tx,
        )
    }

    /// The build, if it is for `generation` and done; with `wait`, waits for it (a query
    /// needs every item now).
    pub fn poll(self, generation: u64, wait: bool) -> Poll {
        if self.generation != generation {
            return Poll::Gone;
        }
        let got = if wait {
            self.hurry();
            self.rx.recv().map_err(|_| TryRecvError::Disconnected)
        } else {
            self.rx.try_recv()
        };
        match got {
            Ok(b) => Poll::Done(b),
            Err(TryRecvError::Empty) => Poll::Running(self),
            Err(TryRecvError::Disconnected) => Poll::Gone,
        }
    }
}
