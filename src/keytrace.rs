//! Where a keystroke's time goes inside spool, for the benchmarks of issues 8 and 10: with
//! `SPOOL_KEYTRACE=FILE` set, each frame drawn after input appends one line to FILE with the
//! time from the key being read to the frame written, and the UI thread's own work in it
//! (updates, tick, draw, and each event drained with it: its kind and the time applying it
//! took); any other frame after events gives a `frame` line. Comparing these with the
//! harness's key-to-settled figure tells spool's share of a slow key from the terminal's
//! and the scheduler's; each line ends with the UI thread's CPU time over the turn (`cpu`),
//! which a loaded machine does not inflate. Off (one load per loop turn) unless the
//! variable is set.

use std::io::Write;
use std::sync::Mutex;
use std::sync::OnceLock;
use std::time::Instant;

struct Trace {
    file: std::fs::File,
    /// When the oldest key not yet on screen was read by the input thread.
    pending: Option<Instant>,
}

fn trace() -> Option<&'static Mutex<Trace>> {
    static TRACE: OnceLock<Option<Mutex<Trace>>> = OnceLock::new();
    TRACE
        .get_or_init(|| {
            let path = std::env::var_os("SPOOL_KEYTRACE")?;
            let file = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .ok()?;
            Some(Mutex::new(Trace {
                file,
                pending: None,
            }))
        })
        .as_ref()
}

/// When the browser started, for phases logged by background threads.
static LAUNCHED: OnceLock<Instant> = OnceLock::new();

/// Note when the browser started (the first call wins).
pub fn launched(at: Instant) {
    let _ = LAUNCHED.set(at);
}

/// A background step done, logged as "phase NAME MS" since the browser started (nothing
/// before `launched`): each store's warm check, so the benchmark can tell when everything
/// is loaded and checked, which the screen alone does not show once the head is on it.
pub fn phase_since_launch(name: &str) {
    if let Some(&at) = LAUNCHED.get() {
        phase(name, at);
    }
}

/// A store's step done, logged as "phase PREFIX_STORE_at MS" since the browser started: the
/// name is built only when tracing is on (a list runs this once per store per start).
pub fn store_phase_since_launch(prefix: &str, store: &str) {
    if trace().is_some() {
        phase_since_launch(&format!("{prefix}_{store}_at"));
    }
}

/// A step of the start-up done: a key typed in its window waits for it (the run loop
/// reads no event before its first frame). Logged as "phase NAME MS" since `since`.
pub fn phase(name: &str, since: Instant) {
    if let Some(t) = trace()
        && let Ok(mut t) = t.lock()
    {
        let ms = since.elapsed().as_secs_f64() * 1e3;
        let _ = t
            .file
            .write_all(format!("phase {name} {ms:.2}\n").as_bytes());
    }
}

/// A count a background step ended with, logged as "count NAME N" (the directories a
/// store's watcher registered, which the benchmark reports beside its times).
pub fn count(name: &str, n: usize) {
    if let Some(t) = trace()
        && let Ok(mut t) = t.lock()
    {
        let _ = t.file.write_all(format!("count {name} {n}\n").as_bytes());
    }
}

/// The input thread read a key (or other input).
pub fn input_read() {
    if let Some(t) = trace()
        && let Ok(mut t) = t.lock()
    {
        t.pending.get_or_insert_with(Instant::now);
    }
}

/// Whether tracing is on: the run loop times each event it applies only then.
pub fn on() -> bool {
    trace().is_some()
}

/// What one loop turn did before its frame, for the trace: when the wait returned
/// (`woke`), when the frame budget's sleep ended and the queue was drained (`drained`),
/// when the events were applied (`updated`) and the tick after them done (`ticked`), and
/// each event applied with the milliseconds it took, in the order drained.
pub struct Turn {
    pub woke: Instant,
    /// The UI thread's CPU time (ms) when the wait returned: the turn's own CPU, told apart
    /// from the time it was preempted (on a loaded machine the wall figures are mostly that).
    pub cpu: f64,
    pub drained: Instant,
    pub updated: Instant,
    pub ticked: Instant,
    pub applied: Vec<(&'static str, f64)>,
}

impl Turn {
    pub fn new(at: Instant) -> Turn {
        Turn {
            woke: at,
            cpu: thread_cpu_ms(),
            drained: at,
            updated: at,
            ticked: at,
            applied: Vec::new(),
        }
    }
}

/// A frame was written after `turn`. A frame that shows a key gives a `key_to_drawn` line;
/// any other frame after events a `frame` line, so a second frame after a key (a
/// background result landing on screen later) shows in the trace as well.
pub fn drawn(turn: &Turn) {
    // The run loop's first frame follows no wait: a key read during start-up is applied
    // after it, and timed to the frame that shows it.
    let Some(t) = trace().filter(|_| !turn.applied.is_empty()) else {
        return;
    };
    let Ok(mut t) = t.lock() else {
        return;
    };
    let now = Instant::now();
    let cpu = thread_cpu_ms() - turn.cpu;
    let line = match t.pending.take() {
        Some(key) => line(key, turn, now),
        None => format!("frame {}", parts(turn, now)),
    };
    let line = format!("{} cpu {cpu:.2}\n", line.trim_end());
    let _ = t.file.write_all(line.as_bytes());
}

/// This thread's CPU time in ms (0 where the clock cannot be read).
pub fn thread_cpu_ms() -> f64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime only writes the timespec it is given.
    if unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) } != 0 {
        return 0.0;
    }
    t.tv_sec as f64 * 1e3 + t.tv_nsec as f64 / 1e6
}

fn ms(a: Instant, b: Instant) -> f64 {
    b.saturating_duration_since(a).as_secs_f64() * 1e3
}

/// One trace line; `scripts/bench_tui.py --keytrace` reads its first figure.
fn line(key: Instant, turn: &Turn, now: Instant) -> String {
    format!(
        "key_to_drawn {:.2} to_wake {:.2} {}",
        ms(key, now),
        ms(key, turn.woke),
        parts(turn, now)
    )
}

/// The loop turn's phases, then `before_key` (the time spent applying the events drained
/// ahead of the first key: work a key waited behind) and each event applied as `kind:ms`.
fn parts(turn: &Turn, now: Instant) -> String {
    // Folded from +0.0: an empty float `sum` is -0.0, which prints as `-0.00`.
    let before_key = (turn.applied.iter())
        .position(|(k, _)| *k == "key")
        .map_or(0.0, |i| {
            turn.applied[..i].iter().fold(0.0, |a, (_, ms)| a + ms)
        });
    let applied: Vec<String> = (turn.applied.iter())
        .map(|(k, ms)| format!("{k}:{ms:.2}"))
        .collect();
    format!(
        "budget_sleep {:.2} update {:.2} tick {:.2} draw {:.2} events {} before_key {:.2} \
         applied {}\n",
        ms(turn.woke, turn.drained),
        ms(turn.drained, turn.updated),
        ms(turn.updated, turn.ticked),
        ms(turn.ticked, now),
        turn.applied.len(),
        before_key,
        applied.join(","),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_line_says_key_to_drawn_first_and_each_part() {
        let key = Instant::now();
        let at = |ms| key + Duration::from_millis(ms);
        let turn = Turn {
            woke: at(2),
            cpu: 0.0,
            drained: at(10),
            updated: at(13),
            ticked: at(15),
            applied: vec![("cached", 2.5), ("key", 0.25), ("progress", 0.25)],
        };
        assert_eq!(
            line(key, &turn, at(20)),
            "key_to_drawn 20.00 to_wake 2.00 budget_sleep 8.00 update 3.00 tick 2.00 \
             draw 5.00 events 3 before_key 2.50 applied cached:2.50,key:0.25,progress:0.25\n"
        );
    }

    #[test]
    fn a_key_drained_first_waited_behind_nothing() {
        let at = Instant::now();
        let turn = Turn {
            applied: vec![("key", 0.5), ("cached", 3.0)],
            ..Turn::new(at)
        };
        let p = parts(&turn, at);
        assert!(
            p.contains(" before_key 0.00 applied key:0.50,cached:3.00"),
            "{p}"
        );
    }

    #[test]
    fn a_frame_without_a_key_has_nothing_before_a_key() {
        let at = Instant::now();
        let turn = Turn {
            applied: vec![("reread", 4.0)],
            ..Turn::new(at)
        };
        let p = parts(&turn, at);
        assert!(
            p.contains("events 1 before_key 0.00 applied reread:4.00\n"),
            "{p}"
        );
    }
}
