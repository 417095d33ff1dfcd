//! The matcher's items for a long list, built on a thread once the list is on screen, so
//! the browser answers keys while 100k rows' text is lower-cased (at 100k sessions that took
//! the UI thread 1.3 s before its first loop turn, issue 10). A build is for one generation
//! of the rows: a removal or a change of view meanwhile makes it stale, and it is thrown
//! away. The run loop is woken when it is done, as a query typed meanwhile matched only the
//! items there were.

use std::sync::Arc;
use std::sync::mpsc::{self, Receiver, TryRecvError};

use crate::model::SessionSummary;
use crate::search::quick::Built;

/// Lists at least this long build their items on a thread; shorter ones build in about 20 ms
/// on the UI thread, where a query sees them at once (10k rows took 85–165 ms there).
pub const ON_A_THREAD_FROM: usize = 2_000;

/// A build under way.
pub struct Pending {
    /// The rows' generation it was started for.
    generation: u64,
    rx: Receiver<Built>,
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
        let (tx, rx) = mpsc::channel();
        std::thread::Builder::new()
            .name("spool-quick-items".into())
            .spawn(move || {
                let built = Built::of(rows);
                // When a query can match every row (issue 10's "loaded and searchable").
                crate::keytrace::phase_since_launch("items_built_at");
                if tx.send(built).is_ok() {
                    notify();
                }
            })
            .ok()?;
        Some(Pending { generation, rx })
    }

    /// A build that never started: the test sends its items when it wants.
    #[cfg(test)]
    pub fn held(generation: u64) -> (Pending, mpsc::Sender<Built>) {
        let (tx, rx) = mpsc::channel();
        (Pending { generation, rx }, tx)
    }

    /// The build, if it is for `generation` and done; with `wait`, waits for it (a query
    /// needs every item now).
    pub fn poll(self, generation: u64, wait: bool) -> Poll {
        if self.generation != generation {
            return Poll::Gone;
        }
        let got = if wait {
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
