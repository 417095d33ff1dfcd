//! SIGKILL at random points during repeated pin, archive and fork: every session file stays
//! wholly old or wholly new, and every session stays readable.

mod common;

use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::Duration;

use common::{Home, json_lines};

/// A loop of spool writes in a shell, killed with SIGKILL (whole process group) after a
/// pseudo-random delay, `rounds` times.
fn kill_loop(h: &Home, script: &str, rounds: u32, seed: u64) {
    let mut x = seed | 1;
    for _ in 0..rounds {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let delay = Duration::from_micros(2_000 + x % 25_000);
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(script)
            .env("HOME", h.path())
            .env_remove("LOOP_DATA_DIR")
            .env("SPOOL", env!("CARGO_BIN_EXE_spool"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .expect("spawn sh");
        std::thread::sleep(delay);
        // SAFETY: plain kill(2) on the child's process group.
        unsafe {
            libc::kill(-(child.id() as i32), libc::SIGKILL);
        }
        let _ = child.wait();
    }
}

/// Every session lists without an error row and every one can be shown.
fn assert_all_readable(h: &Home, what: &str) {
    let rows = json_lines(&h.ok(&["list", "--json", "--all"]));
    for r in &rows {
        assert!(
            r["error"].is_null(),
            "{what}: {} became unreadable: {}",
            r["ref"],
            r["error"]
        );
        let out = h.run(&["show", r["ref"].as_str().unwrap(), "--json"]);
        assert!(
            out.status.success(),
            "{what}: show {} failed: {}",
            r["ref"],
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// One readable, healthy fixture session per store that has fixtures.
fn targets(h: &Home) -> Vec<String> {
    let rows = json_lines(&h.ok(&["list", "--json", "--all"]));
    let mut out = Vec::new();
    for f in ["loop", "loom", "harness"] {
        if let Some(r) = rows
            .iter()
            .find(|r| r["format"] == f && r["error"].is_null() && r["messages"].as_u64() > Some(0))
        {
            out.push(r["ref"].as_str().unwrap().to_string());
        }
    }
    out
}

#[test]
fn sigkill_during_repeated_writes_never_corrupts() {
    let h = Home::with_fixtures();
    // Drop fixtures that are broken on purpose (error rows) so "readable" is checkable.
    for r in json_lines(&h.ok(&["list", "--json", "--all"])) {
        if !r["error"].is_null() {
            let p = std::path::PathBuf::from(r["path"].as_str().unwrap());
            if p.is_dir() {
                std::fs::remove_dir_all(&p).unwrap();
            } else {
                std::fs::remove_file(&p).unwrap();
            }
        }
    }
    assert_all_readable(&h, "before");
    let targets = targets(&h);
    assert!(!targets.is_empty());
    let per_store = 240 / targets.len() as u32;
    for (i, r) in targets.iter().enumerate() {
        let script = format!(
            "while :; do \"$SPOOL\" pin {r}; \"$SPOOL\" archive {r}; \"$SPOOL\" unpin {r}; \
             \"$SPOOL\" unarchive {r}; \"$SPOOL\" fork {r}; done"
        );
        kill_loop(&h, &script, per_store, 0x9e37_79b9_7f4a_7c15 ^ i as u64);
        assert_all_readable(&h, r);
    }
}
