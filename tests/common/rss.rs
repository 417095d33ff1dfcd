//! Peak memory of the built binary, for the memory tests: read from the kernel for one child
//! (`wait4`'s rusage, as `/usr/bin/time -v` reads it) or from a running process's `VmHWM`.

use std::io::Write;
use std::process::Stdio;

use super::Home;

pub const MIB: u64 = 1024 * 1024;

/// Run spool with `args` (output discarded); its exit status and peak RSS in bytes.
// The child is reaped by wait4 itself (std's wait would not give its rusage).
#[allow(clippy::zombie_processes)]
pub fn peak_rss(h: &Home, args: &[&str]) -> (bool, u64) {
    let child = h
        .command(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut status = 0;
    // SAFETY: an all-zero rusage is a valid value to be overwritten.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: wait4 on our own child with valid pointers; `child` is never waited by std.
    let pid = unsafe { libc::wait4(child.id() as i32, &mut status, 0, &mut usage) };
    assert_eq!(pid, child.id() as i32);
    let ok = libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0;
    // ru_maxrss is in KiB on Linux.
    (ok, usage.ru_maxrss as u64 * 1024)
}

/// Run `spool ARGS` and require it to succeed with a peak RSS under `bound` (`size` is the
/// session file's, for the message).
pub fn assert_peak_under(h: &Home, args: &[&str], bound: u64, size: u64) {
    let (ok, rss) = peak_rss(h, args);
    assert!(ok, "{args:?} failed");
    // The figures, for BENCHMARKS.md and SECURITY.md (`-- --nocapture`).
    eprintln!(
        "{args:?}: peak {} MiB of a {} MiB session",
        rss / MIB,
        size / MIB
    );
    assert!(
        rss < bound,
        "{args:?} of a {} MiB session peaked at {} MiB (bound {} MiB)",
        size / MIB,
        rss / MIB,
        bound / MIB
    );
}

/// The peak resident set of a running process (`VmHWM`), in bytes.
pub fn high_water(pid: i32) -> u64 {
    status_bytes(&format!("/proc/{pid}/status"), "VmHWM:")
}

/// A memory line (`field`, such as `RssAnon:`) of a `/proc/.../status` file, in bytes.
pub fn status_bytes(status: &str, field: &str) -> u64 {
    let status = std::fs::read_to_string(status).unwrap();
    let kb = status
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .unwrap();
    kb * 1024
}

/// Age a generated file (mtime 2026-03-16): one that changed in the last 10 s may still be
/// growing, and its torn tail would be pending.
pub fn settle(path: &std::path::Path) {
    let when = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_773_619_200);
    std::fs::File::options()
        .write(true)
        .open(path)
        .unwrap()
        .set_modified(when)
        .unwrap();
}

/// Write `lines` (drained) to `f`, each with a `\n`, and return the bytes written. An empty
/// line stands for the bulky one, `head + bulk + tail`, written in pieces: a 1 MB string
/// built per line would leave the test process (whose peak a spawned child inherits) large.
pub fn write_lines(f: &mut impl Write, lines: &mut Vec<String>, bulky: (&str, &str, &str)) -> u64 {
    let mut size = 0;
    for line in lines.drain(..) {
        let pieces = if line.is_empty() {
            [bulky.0, bulky.1, bulky.2, "\n"]
        } else {
            [line.as_str(), "", "", "\n"]
        };
        for p in pieces {
            f.write_all(p.as_bytes()).unwrap();
            size += p.len() as u64;
        }
    }
    size
}
