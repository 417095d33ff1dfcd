//! The gate a store's news waits at until the catalog's rows are on the channel: a warm
//! start hands each store its cached metas as soon as they are decoded, so its check runs
//! while the rows are still being put in order, and only its sending waits (issue 10).

use std::sync::{Condvar, Mutex};

/// Closed until `open`; opening is for good.
#[derive(Default)]
pub(super) struct Gate {
    open: Mutex<bool>,
    cv: Condvar,
}

impl Gate {
    /// Let every waiter through, now and later.
    pub(super) fn open(&self) {
        // A poisoned lock still holds the flag: a panic elsewhere must not keep it shut.
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        *open = true;
        self.cv.notify_all();
    }

    /// Wait until the gate is open.
    pub(super) fn wait(&self) {
        let open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        let _open = self
            .cv
            .wait_while(open, |open| !*open)
            .unwrap_or_else(|e| e.into_inner());
    }
}

/// Opens its gate when dropped, however the thread holding it ends: a decode that panics
/// must not leave the stores waiting for ever.
pub(super) struct Opens(pub(super) std::sync::Arc<Gate>);

impl Drop for Opens {
    fn drop(&mut self) {
        self.0.open();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::thread;
    use std::time::Duration;

    #[test]
    fn a_waiter_passes_only_once_the_gate_opens() {
        let gate = Arc::new(Gate::default());
        let passed = Arc::new(AtomicBool::new(false));
        let t = {
            let (gate, passed) = (gate.clone(), passed.clone());
            thread::spawn(move || {
                gate.wait();
                passed.store(true, Ordering::SeqCst);
            })
        };
        thread::sleep(Duration::from_millis(50));
        assert!(!passed.load(Ordering::SeqCst), "through a closed gate");
        drop(Opens(gate.clone()));
        t.join().unwrap();
        assert!(passed.load(Ordering::SeqCst));
        gate.wait();
    }

    #[test]
    fn a_thread_that_panics_holding_the_gate_opens_it() {
        let gate = Arc::new(Gate::default());
        let held = Opens(gate.clone());
        let _ = thread::spawn(move || {
            let _held = held;
            panic!("the decode failed");
        })
        .join();
        gate.wait();
    }
}
