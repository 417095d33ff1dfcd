//! SIGKILL at random points during repeated pin, archive and fork: every session file stays
//! wholly old or wholly new, and every session stays readable.

mod common;

use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::Duration;

use common::{Home, json_lines};

/// A loop of spool writes in a shell, killed with SIGKILL (whole process group) after a
/// pseudo-random delay, `rounds` times.
fn kill_loop(h: &Home, script: impl Fn(u32) -> String, rounds: u32, seed: u64) {
    let mut x = seed | 1;
    for round in 0..rounds {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let delay = Duration::from_micros(2_000 + x % 25_000);
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(script(round))
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
    // Loop refuses to fork a session whose cwd is gone; point the Loop fixtures at a real
    // directory (the header is metadata: the committed message bytes are untouched).
    for meta in common::files_under(&h.loop_dir())
        .into_iter()
        .filter(|p| p.file_name().is_some_and(|n| n == "meta.json"))
    {
        let mut v: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&meta).unwrap()).unwrap();
        v["header"]["cwd"] = h.path().to_string_lossy().into_owned().into();
        std::fs::write(&meta, serde_json::to_string_pretty(&v).unwrap() + "\n").unwrap();
    }
    assert_all_readable(&h, "before");
    let targets = targets(&h);
    assert!(!targets.is_empty());
    let per_store = 240 / targets.len() as u32;
    for (i, r) in targets.iter().enumerate() {
        // Each round starts the cycle at a different command, so every write is the one
        // running when the kill lands in some rounds.
        let cmds = ["pin", "archive", "unpin", "unarchive", "fork"];
        let script = |round: u32| {
            let cycle: Vec<String> = (0..cmds.len())
                .map(|k| format!("\"$SPOOL\" {} {r}", cmds[(k + round as usize) % cmds.len()]))
                .collect();
            format!("while :; do {}; done", cycle.join("; "))
        };
        kill_loop(&h, script, per_store, 0x9e37_79b9_7f4a_7c15 ^ i as u64);
        assert_all_readable(&h, r);
        let format = r.split(':').next().unwrap();
        let forks = json_lines(&h.ok(&["list", "--json", "--all", "--format", format]))
            .into_iter()
            .filter(|row| row["forked_from"] == r.as_str())
            .count();
        assert!(forks > 0, "no fork of {r} completed between kills");
    }
}

#[test]
fn two_processes_writing_at_once_never_corrupt() {
    let h = Home::with_fixtures();
    let rows = json_lines(&h.ok(&["list", "--json", "--all"]));
    let refs: Vec<String> = rows
        .iter()
        .filter(|r| r["error"].is_null() && r["messages"].as_u64() > Some(0))
        .map(|r| r["ref"].as_str().unwrap().to_string())
        .collect();
    // Two writers at once over the same sessions, each toggling every piece of metadata.
    let script = |cmds: [&str; 4]| {
        let body: Vec<String> = refs
            .iter()
            .flat_map(|r| cmds.iter().map(move |c| format!("\"$SPOOL\" {c} {r}")))
            .collect();
        format!("for i in 1 2 3; do {}; done", body.join("; "))
    };
    let spawn = |s: String| {
        Command::new("sh")
            .arg("-c")
            .arg(s)
            .env("HOME", h.path())
            .env_remove("LOOP_DATA_DIR")
            .env("SPOOL", env!("CARGO_BIN_EXE_spool"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn sh")
    };
    let mut a = spawn(script(["pin", "archive", "unread", "unpin"]));
    let mut b = spawn(script(["unpin", "unarchive", "read", "pin"]));
    a.wait().unwrap();
    b.wait().unwrap();
    assert_all_readable(&h, "after two concurrent writers");
    // Whatever interleaving happened, each flag is a clean true or false and the sidecars
    // parse.
    for r in json_lines(&h.ok(&["list", "--json", "--all"])) {
        for k in ["pinned", "archived", "unread"] {
            assert!(r[k].is_boolean(), "{}: {k} = {}", r["ref"], r[k]);
        }
    }
    for dir in [h.loom_dir(), h.harness_dir()] {
        for e in std::fs::read_dir(dir.join("sessions/.spool"))
            .unwrap()
            .flatten()
        {
            let name = e.file_name().to_string_lossy().into_owned();
            if name.ends_with(".json") && !name.starts_with('.') {
                let v: serde_json::Value =
                    serde_json::from_slice(&std::fs::read(e.path()).unwrap()).unwrap();
                assert_eq!(v["version"], 1, "{name}");
            }
        }
    }
}

#[test]
fn a_loom_fork_killed_mid_write_never_lists_as_a_short_fork() {
    let h = Home::with_fixtures();
    let rows = json_lines(&h.ok(&["list", "--json", "--all", "--format", "loom"]));
    let src = rows
        .iter()
        .filter(|r| r["error"].is_null())
        .max_by_key(|r| r["messages"].as_u64())
        .unwrap()["ref"]
        .as_str()
        .unwrap()
        .to_string();
    let whole = h.ok(&["fork", &src]).trim().to_string();
    let count = |r: &str| {
        json_lines(&h.ok(&["list", "--json", "--all", "--format", "loom"]))
            .into_iter()
            .find(|row| row["ref"] == r)
            .map(|row| row["messages"].clone())
    };
    let expected = count(&whole).unwrap();
    kill_loop(
        &h,
        |_| format!("while :; do \"$SPOOL\" fork {src}; done"),
        120,
        0x2545_f491_4f6c_dd1d,
    );
    let forks: Vec<_> = json_lines(&h.ok(&["list", "--json", "--all", "--format", "loom"]))
        .into_iter()
        .filter(|row| row["forked_from"] == src.as_str())
        .collect();
    assert!(forks.len() > 1, "no fork completed between kills");
    for f in &forks {
        assert!(
            f["error"].is_null() && f["messages"] == expected,
            "{} is a partial fork: {} messages, {} expected ({})",
            f["ref"],
            f["messages"],
            expected,
            f["error"]
        );
    }
}
