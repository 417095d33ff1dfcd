//! Where a keystroke's time goes inside spool, for the benchmarks of issues 8 and 10: with
//! `SPOOL_KEYTRACE=FILE` set, each frame drawn after input appends one line to FILE with the
//! time from the key being read to the frame written, and the UI thread's own work in it
//! (updates, draw). Comparing these with the harness's key-to-settled figure tells spool's
//! share of a slow key from the terminal's and the scheduler's. Off (one relaxed load per
//! event) unless the variable is set.

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

/// The input thread read a key (or other input).
pub fn input_read() {
    if let Some(t) = trace()
        && let Ok(mut t) = t.lock()
    {
        t.pending.get_or_insert_with(Instant::now);
    }
}

/// A frame was written; `woke` is when the run loop's wait returned, `drained` when the
/// frame budget's sleep ended and the queue was drained, `updated` when the events were
/// applied, `events` how many there were.
pub fn drawn(woke: Instant, drained: Instant, updated: Instant, events: usize) {
    // The run loop's first frame follows no wait: a key read during start-up is applied
    // after it, and timed to the frame that shows it.
    let Some(t) = trace().filter(|_| events > 0) else {
        return;
    };
    let Ok(mut t) = t.lock() else {
        return;
    };
    let Some(key) = t.pending.take() else {
        return;
    };
    let line = line(key, woke, drained, updated, Instant::now(), events);
    let _ = t.file.write_all(line.as_bytes());
}

/// One trace line; `scripts/bench_tui.py --keytrace` reads its first figure.
fn line(
    key: Instant,
    woke: Instant,
    drained: Instant,
    updated: Instant,
    now: Instant,
    events: usize,
) -> String {
    let ms = |a: Instant, b: Instant| b.saturating_duration_since(a).as_secs_f64() * 1e3;
    format!(
        "key_to_drawn {:.2} to_wake {:.2} budget_sleep {:.2} update {:.2} tick_and_draw {:.2} \
         events {events}\n",
        ms(key, now),
        ms(key, woke),
        ms(woke, drained),
        ms(drained, updated),
        ms(updated, now),
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
        let l = line(key, at(2), at(10), at(13), at(20), 1);
        assert_eq!(
            l,
            "key_to_drawn 20.00 to_wake 2.00 budget_sleep 8.00 update 3.00 tick_and_draw 7.00 \
             events 1\n"
        );
    }
}
