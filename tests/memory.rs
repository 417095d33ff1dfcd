//! Memory follows what is shown: the built binary's peak resident set, read from the kernel
//! for that one child (`wait4`'s rusage, as `/usr/bin/time -v` reads it), on a generated
//! session big enough that holding it whole would show. Not timed: a bound on bytes.

mod common;

use std::io::Write;
use std::process::Stdio;

use common::Home;

const MIB: u64 = 1024 * 1024;

/// A loom log of about `mib` MiB: rounds of a user message, a tool call, its result and a
/// reply.
fn loom_log(h: &Home, id: &str, mib: u64) -> u64 {
    let dir = h.loom_dir().join("sessions");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{id}.jsonl"));
    let mut f = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    let t = r#""time":"2026-03-14T09:16:00+01:00""#;
    writeln!(f, r#"{{"kind":"meta",{t},"model":"m","cwd":"/p"}}"#).unwrap();
    let filler = "lorem ipsum dolor sit amet ".repeat(8);
    let mut round = 0u64;
    while f.get_ref().metadata().unwrap().len() < mib * MIB {
        for _ in 0..256 {
            round += 1;
            let m = |role: &str, c: &str| {
                format!(r#"{{"kind":"message",{t},"message":{{"role":"{role}","content":"{c}"}}}}"#)
            };
            writeln!(f, "{}", m("user", &format!("question {round} {filler}"))).unwrap();
            writeln!(
                f,
                r#"{{"kind":"message",{t},"message":{{"role":"assistant","content":"","tool_calls":[{{"function":{{"name":"bash","arguments":{{"command":"ls"}}}}}}]}}}}"#
            )
            .unwrap();
            writeln!(f, "{}", m("tool", &filler)).unwrap();
            writeln!(f, "{}", m("assistant", &format!("answer {round} {filler}"))).unwrap();
        }
        f.flush().unwrap();
    }
    f.flush().unwrap();
    std::fs::metadata(&path).unwrap().len()
}

/// Run spool with `args` (output discarded); its exit status and peak RSS in bytes.
// The child is reaped by wait4 itself (std's wait would not give its rusage).
#[allow(clippy::zombie_processes)]
fn peak_rss(h: &Home, args: &[&str]) -> (bool, u64) {
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

#[test]
fn loom_last_round_reads_only_the_last_round() {
    let h = Home::empty();
    let size = loom_log(&h, "20260314-091502", 48);
    let (ok, rss) = peak_rss(&h, &["show", "loom:20260314-091502", "--last", "1"]);
    assert!(ok);
    // Parsing the whole log held all of it (about 3x its size); the last round is tiny.
    assert!(
        rss < 40 * MIB,
        "show --last 1 of a {} MiB log peaked at {} MiB",
        size / MIB,
        rss / MIB
    );
}
