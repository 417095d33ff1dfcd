//! The order of a warm start's news: each store checks its sessions as soon as it has the
//! catalog's metas, while the catalog's thread is still putting the cached rows in order,
//! and sends what its check found only once those rows are on the channel (news of a row
//! the list does not hold yet would be lost or doubled).

use std::sync::{Arc, Condvar, Mutex};

/// Opened once the catalog's rows are sent (or will never be); the stores' threads wait at
/// it before their first news.
#[derive(Default)]
pub(super) struct Gate {
    open: Mutex<bool>,
    cv: Condvar,
}

impl Gate {
    /// Wait until the gate is open.
    pub(super) fn wait(&self) {
        let Ok(open) = self.open.lock() else { return };
        drop(self.cv.wait_while(open, |open| !*open));
    }

    fn open(&self) {
        if let Ok(mut open) = self.open.lock() {
            *open = true;
            self.cv.notify_all();
        }
    }
}

/// Opens its gate when dropped: when the rows are sent, and also when the thread sending
/// them ends early or panics, so that no store's thread waits for ever.
pub(super) struct Opener(pub(super) Arc<Gate>);

impl Drop for Opener {
    fn drop(&mut self) {
        self.0.open();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_waiter_waits_until_the_opener_is_dropped_even_by_a_panic() {
        let gate = Arc::new(Gate::default());
        let (tx, rx) = std::sync::mpsc::channel();
        let waiter = {
            let gate = gate.clone();
            std::thread::spawn(move || {
                gate.wait();
                tx.send(()).unwrap();
            })
        };
        let opener = Opener(gate.clone());
        assert!(
            rx.recv_timeout(Duration::from_millis(100)).is_err(),
            "open too soon"
        );
        let _ = std::thread::spawn(move || {
            let _held = opener;
            panic!("the catalog's thread failed");
        })
        .join();
        rx.recv_timeout(Duration::from_secs(10)).expect("released");
        waiter.join().unwrap();
        gate.wait();
    }
}
