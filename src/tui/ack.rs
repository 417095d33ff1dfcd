//! The terminal's acknowledgement of the first frame that shows rows: the background work
//! (the catalog's decode, the stat passes, the watchers, the indexer) waits until the
//! terminal has read that frame, at most `CAP`. On a warm start nothing has started yet
//! (the UI thread waits before starting it); on a cold start the listing is already running
//! and pauses at `hold`. On two cores that work otherwise takes both
//! while the terminal (tmux) still parses the frame, and the first paint reached the screen
//! 20–40 ms after spool wrote it (issue 10).
//!
//! The request is a cursor position report (`ESC[6n`, VT100): written right after the
//! frame, under the same output lock, so its bytes never land inside a frame's. A terminal
//! reads its input in order, so its answer means the frame before it was read.
//!
//! Why not `crossterm::cursor::position()`: it writes the request itself and then holds
//! crossterm's reader lock until the answer comes or 2 s pass (`cursor/sys/unix.rs`
//! `read_position_raw`, `poll_internal` with a 2000 ms timeout), so on a terminal that never
//! answers every key waits 2 s behind it; and crossterm parses the answer into an internal
//! event (`InternalEvent::CursorPosition`) that the public `poll`/`read` never return, so
//! no public call can see that it came. Hence the input thread waits on the terminal's file
//! descriptor itself (`poll(2)`, reading nothing) until the gate is released: any byte that
//! arrives after the request (the answer, or a key typed meanwhile) releases it, and
//! crossterm then reads everything in order, the answer included, which it keeps to itself
//! (it never reaches the app as a key, nor the screen: raw mode does not echo). Before the
//! request, keys are read as always, through crossterm.

use std::io::{self, Read, Write};
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// The longest the background work waits for the terminal: a terminal that never answers
/// delays it by this much and no more. tmux answers in 0.3–2 ms.
pub const CAP: Duration = Duration::from_millis(25);

/// The request written after the frame: "report the cursor position".
pub const REQUEST: &[u8] = b"\x1b[6n";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// No request written yet: the input thread reads keys as always.
    Idle,
    /// Written; released at the first byte from the terminal or at the deadline.
    Asked(Instant),
    /// Done (answered, capped, or never needed).
    Released(Outcome),
}

/// How the wait ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The terminal sent something after the request (its answer, or a key).
    Answered,
    /// Nothing came within the cap.
    Capped,
    /// No request was made (a start whose first rows come later, or no gate wanted).
    Skipped,
}

/// Shared between the UI thread (which asks and waits) and the input thread (which
/// watches the terminal and releases).
pub struct Ack {
    state: Mutex<State>,
    cv: Condvar,
    cap: Duration,
    /// Asked and not yet released: what `hold` looks at, without the lock, on every row a
    /// cold listing reads.
    pending: AtomicBool,
    /// Wakes the input thread out of its `poll` when the request is written.
    wake_tx: UnixStream,
    wake_rx: UnixStream,
}

impl Ack {
    pub fn new(cap: Duration) -> io::Result<Ack> {
        let (wake_rx, wake_tx) = UnixStream::pair()?;
        wake_rx.set_nonblocking(true)?;
        wake_tx.set_nonblocking(true)?;
        Ok(Ack {
            state: Mutex::new(State::Idle),
            cv: Condvar::new(),
            cap,
            pending: AtomicBool::new(false),
            wake_tx,
            wake_rx,
        })
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Mark the request as written (call it just before writing it, so an answer that
    /// comes at once is never read as an ordinary key first) and wake the input thread.
    pub fn arm(&self) {
        let mut s = self.state();
        if *s == State::Idle {
            *s = State::Asked(Instant::now() + self.cap);
            self.pending.store(true, Ordering::SeqCst);
            // A full socket means a wake is already pending.
            let _ = (&self.wake_tx).write(&[1]);
            // Wakes `wait_asked`, so it waits for the answer with the cap from here.
            self.cv.notify_all();
        }
    }

    /// End the wait (or make it unneeded), waking every waiter. The first outcome stays.
    pub fn release(&self, how: Outcome) {
        let mut s = self.state();
        if !matches!(*s, State::Released(_)) {
            *s = State::Released(how);
            self.pending.store(false, Ordering::SeqCst);
            let _ = (&self.wake_tx).write(&[1]);
            self.cv.notify_all();
        }
    }

    /// Block until released, or until the cap after `arm` (kept here too, so no waiter
    /// depends on the input thread to end its wait). Returns at once if never armed.
    pub fn wait(&self) -> Outcome {
        let mut s = self.state();
        loop {
            match *s {
                State::Idle => return Outcome::Skipped,
                State::Released(how) => return how,
                State::Asked(deadline) => {
                    let now = Instant::now();
                    if now >= deadline {
                        self.pending.store(false, Ordering::SeqCst);
                        return Outcome::Capped;
                    }
                    s = (self.cv.wait_timeout(s, deadline - now))
                        .unwrap_or_else(|e| e.into_inner())
                        .0;
                }
            }
        }
    }

    /// Wait until the request is written (at most `limit`), and then as `wait`. For work
    /// that starts as the first rows are sent, before their frame is drawn and asked about.
    pub fn wait_asked(&self, limit: Duration) -> Outcome {
        let until = Instant::now() + limit;
        let mut s = self.state();
        while *s == State::Idle {
            let now = Instant::now();
            if now >= until {
                return Outcome::Skipped;
            }
            s = (self.cv.wait_timeout(s, until - now))
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        drop(s);
        self.wait()
    }

    /// Wait as `wait` if the request is out and unanswered; else return at once.
    pub fn hold(&self) {
        if self.pending.load(Ordering::Relaxed) {
            self.wait();
        }
    }

    /// Make this the process's gate for `hold` (the first one made stays).
    pub fn install(self: &Arc<Ack>) {
        let _ = FIRST.set(self.clone());
    }

    /// The input thread's side, before its ordinary reading: wait on the terminal `tty`
    /// (reading nothing itself). Until the request is written, input that arrives is handed
    /// to `deliver` (which reads it, through crossterm); once it is written, the first
    /// input after it, or the cap, releases the gate. Returns when released, or when
    /// `deliver` or `stop` says to end (false).
    pub fn watch(
        &self,
        tty: RawFd,
        mut deliver: impl FnMut() -> bool,
        stop: impl Fn() -> bool,
    ) -> bool {
        loop {
            if stop() {
                self.release(Outcome::Skipped);
                return false;
            }
            let asked = match *self.state() {
                State::Released(_) => return true,
                State::Idle => None,
                State::Asked(deadline) => Some(deadline),
            };
            // Short polls while idle, so `stop` (and a pause) is seen as quickly as the
            // ordinary input loop sees it.
            let timeout = match asked {
                None => Duration::from_millis(30),
                Some(d) => d.saturating_duration_since(Instant::now()),
            };
            if asked.is_some() && timeout.is_zero() {
                self.release(Outcome::Capped);
                return true;
            }
            let (tty_ready, woken) = poll2(tty, self.wake_rx.as_raw_fd(), timeout);
            if woken {
                let mut buf = [0u8; 16];
                while matches!((&self.wake_rx).read(&mut buf), Ok(n) if n > 0) {}
                // The state changed: look again before touching the terminal, so the first
                // byte after the request is counted as its answer.
                if asked.is_none() {
                    continue;
                }
            }
            if tty_ready {
                if asked.is_some() {
                    self.release(Outcome::Answered);
                    return true;
                }
                if !deliver() {
                    self.release(Outcome::Skipped);
                    return false;
                }
            }
        }
    }
}

/// The gate of the browser's terminal, for `hold`.
static FIRST: OnceLock<Arc<Ack>> = OnceLock::new();

/// For background work that is already running when the first rows' frame is drawn (a cold
/// start's listing, the watchers' setup): wait here while the terminal has not read that
/// frame, at most `CAP`. Free (one atomic load) at any other time.
pub fn hold() {
    if let Some(a) = FIRST.get() {
        a.hold();
    }
}

/// For work that starts as a cold start's first rows are sent (the rest of a store's
/// listing, a watcher's setup): wait until the frame that shows them is drawn, asked about
/// and read by the terminal. `hold` returns at once until the request is written, so such
/// work took both cores while the UI thread drew the frame and tmux read it (issue 10: a
/// Codex cold first paint 36.5 ms on spool's clock, 55 in the harness). At most `CAP` for
/// the request (a first batch whose rows are all hidden asks nothing) and `CAP` for the
/// answer. Free once the gate is released, and where there is no gate (no terminal).
pub fn after_frame() {
    if let Some(a) = FIRST.get() {
        a.wait_asked(CAP);
    }
}

/// `poll(2)` on two descriptors for reading: (first ready, second ready). An interrupted
/// or failed poll reports nothing ready (the caller's loop polls again).
fn poll2(a: RawFd, b: RawFd, timeout: Duration) -> (bool, bool) {
    let mut fds = [
        libc::pollfd {
            fd: a,
            events: libc::POLLIN,
            revents: 0,
        },
        libc::pollfd {
            fd: b,
            events: libc::POLLIN,
            revents: 0,
        },
    ];
    // Rounded up: a 0.4 ms remainder must not become a busy loop of zero-timeout polls.
    let ms = timeout.as_micros().div_ceil(1000).min(i32::MAX as u128) as i32;
    // SAFETY: `fds` is a valid array of two `pollfd`s for the duration of the call.
    let n = unsafe { libc::poll(fds.as_mut_ptr(), 2, ms) };
    if n <= 0 {
        return (false, false);
    }
    let ready = |p: &libc::pollfd| p.revents & (libc::POLLIN | libc::POLLHUP | libc::POLLERR) != 0;
    (ready(&fds[0]), ready(&fds[1]))
}

#[cfg(test)]
#[path = "ack_tests.rs"]
mod tests;

/// A test's gate: installed as the process's (`install`), its request out and unanswered
/// (`arm`), so work that waits for the first rows' frame waits. Dropping the handle answers
/// it, so nothing else in the test process waits for the cap, whatever the test does.
#[doc(hidden)]
pub fn asked_for_tests(cap: Duration) -> AnsweredOnDrop {
    let ack = Arc::new(Ack::new(cap).expect("a socket pair"));
    ack.install();
    ack.arm();
    AnsweredOnDrop(ack)
}

/// See `asked_for_tests`.
#[doc(hidden)]
pub struct AnsweredOnDrop(Arc<Ack>);

impl Drop for AnsweredOnDrop {
    fn drop(&mut self) {
        self.0.release(Outcome::Answered);
    }
}
