//! The gate's behaviour with a socket standing in for the terminal: what the "terminal"
//! sends is written to one end, the gate watches the other.

use super::*;
use std::sync::Arc;
use std::sync::mpsc;
use std::thread;

/// A fake terminal: `input` is what spool reads, `typed` is where the test types.
fn terminal() -> (UnixStream, UnixStream) {
    let (input, typed) = UnixStream::pair().unwrap();
    input.set_nonblocking(true).unwrap();
    (input, typed)
}

/// Everything waiting on `s` (non-blocking).
fn drain(mut s: &UnixStream) -> Vec<u8> {
    let mut out = Vec::new();
    let mut buf = [0u8; 64];
    while let Ok(n) = s.read(&mut buf) {
        if n == 0 {
            break;
        }
        out.extend_from_slice(&buf[..n]);
    }
    out
}

/// Run `watch` on a thread, reading delivered input into the returned channel (as the
/// input thread hands it to crossterm).
fn watcher(
    ack: &Arc<Ack>,
    input: UnixStream,
) -> (thread::JoinHandle<UnixStream>, mpsc::Receiver<Vec<u8>>) {
    let (tx, rx) = mpsc::channel();
    let ack = ack.clone();
    let h = thread::spawn(move || {
        let fd = input.as_raw_fd();
        ack.watch(fd, || tx.send(drain(&input)).is_ok(), || false);
        input
    });
    (h, rx)
}

#[test]
fn the_gate_holds_until_the_terminal_answers() {
    let ack = Arc::new(Ack::new(Duration::from_secs(30)).unwrap());
    let (input, mut typed) = terminal();
    let (h, _delivered) = watcher(&ack, input);
    ack.arm();
    let (done_tx, done) = mpsc::channel();
    let waiter = {
        let ack = ack.clone();
        thread::spawn(move || done_tx.send(ack.wait()).unwrap())
    };
    assert!(
        done.recv_timeout(Duration::from_millis(150)).is_err(),
        "released with no answer, long before the cap"
    );
    typed.write_all(b"\x1b[24;1R").unwrap();
    let how = done
        .recv_timeout(Duration::from_secs(10))
        .expect("released");
    assert_eq!(how, Outcome::Answered);
    waiter.join().unwrap();
    // The answer is left for crossterm to read (it keeps it to itself).
    let input = h.join().unwrap();
    assert_eq!(drain(&input), b"\x1b[24;1R");
}

#[test]
fn the_gate_releases_at_the_cap_when_the_terminal_never_answers() {
    let cap = Duration::from_millis(60);
    let ack = Arc::new(Ack::new(cap).unwrap());
    let (input, _typed) = terminal();
    let (h, _delivered) = watcher(&ack, input);
    let t0 = Instant::now();
    ack.arm();
    let (done_tx, done) = mpsc::channel();
    let waiter = {
        let ack = ack.clone();
        thread::spawn(move || done_tx.send(ack.wait()).unwrap())
    };
    let how = done
        .recv_timeout(Duration::from_secs(10))
        .expect("released");
    let waited = t0.elapsed();
    waiter.join().unwrap();
    assert_eq!(how, Outcome::Capped);
    assert!(waited >= cap, "released after {waited:?}, before the cap");
    // The input thread goes on to its ordinary reading.
    h.join().unwrap();
}

#[test]
fn keys_before_and_during_the_wait_reach_the_app_in_order() {
    let ack = Arc::new(Ack::new(Duration::from_secs(30)).unwrap());
    let (input, mut typed) = terminal();
    let (h, delivered) = watcher(&ack, input);
    // Before the request: read at once, as always.
    typed.write_all(b"j").unwrap();
    let first = delivered
        .recv_timeout(Duration::from_secs(10))
        .expect("delivered");
    assert_eq!(first, b"j");
    // During the wait: a key releases the gate (the user is here) and is left, in order
    // behind anything else typed, for the ordinary reading.
    ack.arm();
    typed.write_all(b"k").unwrap();
    assert_eq!(ack.wait(), Outcome::Answered);
    typed.write_all(b"/x").unwrap();
    let input = h.join().unwrap();
    assert!(delivered.try_recv().is_err(), "a key was read by the gate");
    assert_eq!(drain(&input), b"k/x");
}

#[test]
fn a_gate_never_asked_does_not_hold_and_release_ends_the_watch() {
    let ack = Arc::new(Ack::new(Duration::from_secs(30)).unwrap());
    assert_eq!(ack.wait(), Outcome::Skipped);
    let (input, _typed) = terminal();
    let (h, _delivered) = watcher(&ack, input);
    ack.release(Outcome::Skipped);
    h.join().unwrap();
    // Asked after a release: still released.
    ack.arm();
    assert_eq!(ack.wait(), Outcome::Skipped);
}

#[test]
fn hold_waits_only_while_the_request_is_unanswered() {
    let ack = Arc::new(Ack::new(Duration::from_secs(30)).unwrap());
    // Not asked: free.
    ack.hold();
    ack.arm();
    let (done_tx, done) = mpsc::channel();
    let worker = {
        let ack = ack.clone();
        thread::spawn(move || {
            ack.hold();
            done_tx.send(()).unwrap();
        })
    };
    assert!(
        done.recv_timeout(Duration::from_millis(150)).is_err(),
        "background work went on before the terminal answered"
    );
    ack.release(Outcome::Answered);
    done.recv_timeout(Duration::from_secs(10))
        .expect("held after the answer");
    worker.join().unwrap();
    // Answered: free again.
    ack.hold();
}

#[test]
fn hold_ends_at_the_cap() {
    let ack = Arc::new(Ack::new(Duration::from_millis(40)).unwrap());
    ack.arm();
    let (done_tx, done) = mpsc::channel();
    let ack2 = ack.clone();
    thread::spawn(move || {
        ack2.hold();
        done_tx.send(()).unwrap();
    });
    done.recv_timeout(Duration::from_secs(10))
        .expect("held past the cap");
    // Capped: later holds do not wait.
    ack.hold();
}

/// Work started before the request is written waits for it and then for the answer: it
/// does not run through while the frame is still being drawn, as `wait` and `hold` do.
#[test]
fn wait_asked_waits_for_the_request_and_then_the_answer() {
    let ack = Arc::new(Ack::new(Duration::from_secs(30)).unwrap());
    assert_eq!(
        ack.wait(),
        Outcome::Skipped,
        "wait does not wait for the request"
    );
    let (done_tx, done) = mpsc::channel();
    let waiter = {
        let ack = ack.clone();
        thread::spawn(move || {
            done_tx
                .send(ack.wait_asked(Duration::from_secs(30)))
                .unwrap()
        })
    };
    assert!(
        done.recv_timeout(Duration::from_millis(150)).is_err(),
        "returned before the request was written"
    );
    ack.arm();
    assert!(
        done.recv_timeout(Duration::from_millis(150)).is_err(),
        "returned before the answer"
    );
    ack.release(Outcome::Answered);
    assert_eq!(done.recv().unwrap(), Outcome::Answered);
    waiter.join().unwrap();
    // Never asked: it gives up after its limit.
    let idle = Ack::new(Duration::from_secs(30)).unwrap();
    assert_eq!(idle.wait_asked(Duration::from_millis(1)), Outcome::Skipped);
}
