//! SIGKILL at random points during repeated pin, rename, archive, fork and delete: every
//! session file stays wholly old or wholly new, and every session stays readable. The
//! large run checks every session after each of its 1,002 kills, in process.

mod common;

use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::Duration;

use common::{Home, json_lines};
use spool::store::Span;

/// A loop of spool writes in a shell, killed with SIGKILL (whole process group) after a
/// pseudo-random delay, `rounds` times.
fn kill_loop(h: &Home, script: impl Fn(u32) -> String, rounds: u32, seed: u64) {
    kill_and_check(h, script, rounds, seed, (2_000, 25_000), |_| {});
}

/// `kill_loop` with the delay drawn from `[min, min + spread)` µs and `after(round)` run
/// after each kill.
fn kill_and_check(
    h: &Home,
    script: impl Fn(u32) -> String,
    rounds: u32,
    seed: u64,
    (min, spread): (u64, u64),
    mut after: impl FnMut(u32),
) {
    let mut x = seed | 1;
    for round in 0..rounds {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let delay = Duration::from_micros(min + x % spread);
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
        after(round);
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

/// The fixtures less those broken on purpose (error rows), so "readable" is checkable, with
/// the Loop sessions' cwd pointed at a real directory (Loop refuses to fork a session whose
/// cwd is gone; the header is metadata, the committed message bytes are untouched).
fn healthy_home() -> Home {
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
    for meta in common::files_under(&h.loop_dir())
        .into_iter()
        .filter(|p| p.file_name().is_some_and(|n| n == "meta.json"))
    {
        let mut v: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&meta).unwrap()).unwrap();
        v["header"]["cwd"] = h.path().to_string_lossy().into_owned().into();
        std::fs::write(&meta, serde_json::to_string_pretty(&v).unwrap() + "\n").unwrap();
    }
    h
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

/// A session under the kill loop: what it must still be after any kill.
struct Whole {
    reference: String,
    messages: u64,
    title: String,
    /// Messages of a whole fork of it.
    fork_messages: u64,
}

/// Every session of the stores, read in process: no error row, no unreadable spool state,
/// every transcript readable; each target whole (its messages, its title the original or
/// one the script set), each fork of a target whole.
fn check_whole(h: &Home, targets: &[Whole], kill: u32) {
    let stores = h.stores();
    for row in stores.list_all() {
        let r = row.reference();
        assert!(row.error().is_none(), "kill {kill}: {r}: {:?}", row.error());
        assert!(
            !row.badges().any(|b| b.contains("spool state")),
            "kill {kill}: {r}: {:?}",
            row.badges()
        );
        let t = stores.store_for(&row).transcript(&row.id, Span::All);
        assert!(t.is_ok(), "kill {kill}: {r}: {:?}", t.err());
        for w in targets {
            if r == w.reference {
                assert_eq!(row.messages, w.messages, "kill {kill}: {r} lost messages");
                let set_by_script = row
                    .title()
                    .strip_prefix('t')
                    .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
                assert!(
                    *row.title() == *w.title || set_by_script,
                    "kill {kill}: {r} has a torn title {:?}",
                    row.title()
                );
            }
            if row.forked_from() == Some(w.reference.as_str()) {
                assert_eq!(
                    row.messages, w.fork_messages,
                    "kill {kill}: {r} is a partial fork"
                );
            }
        }
    }
}

#[test]
fn a_thousand_kills_across_every_write_leave_every_session_wholly_old_or_new() {
    let h = healthy_home();
    let rows = json_lines(&h.ok(&["list", "--json", "--all"]));
    let targets: Vec<Whole> = targets(&h)
        .into_iter()
        .map(|r| {
            let row = rows.iter().find(|row| row["ref"] == r.as_str()).unwrap();
            let fork = h.ok(&["fork", &r]).trim().to_string();
            let fork_messages = json_lines(&h.ok(&["list", "--json", "--all"]))
                .into_iter()
                .find(|row| row["ref"] == fork.as_str())
                .and_then(|row| row["messages"].as_u64())
                .unwrap();
            Whole {
                messages: row["messages"].as_u64().unwrap(),
                title: row["title"].as_str().unwrap().to_string(),
                fork_messages,
                reference: r,
            }
        })
        .collect();
    assert_eq!(targets.len(), 3, "a session in each writable store");
    check_whole(&h, &targets, 0);
    let mut kills = 0;
    for (i, w) in targets.iter().enumerate() {
        let r = &w.reference;
        let cmds = [
            format!("\"$SPOOL\" pin {r}"),
            format!("n=$((n+1)); \"$SPOOL\" rename {r} \"t$n\""),
            format!("\"$SPOOL\" archive {r}"),
            format!("f=$(\"$SPOOL\" fork {r}) && \"$SPOOL\" delete --yes \"$f\""),
            format!("\"$SPOOL\" unpin {r}"),
            format!("\"$SPOOL\" fork {r}"),
            format!("\"$SPOOL\" unarchive {r}"),
        ];
        // Each round starts the cycle at a different command, so every write is the one
        // running when the kill lands in some rounds.
        let script = |round: u32| {
            let cycle: Vec<&str> = (0..cmds.len())
                .map(|k| cmds[(k + round as usize) % cmds.len()].as_str())
                .collect();
            format!("n={round}000; while :; do {}; done", cycle.join("; "))
        };
        let seed = 0x51_7cc1_b727_220a ^ i as u64;
        kill_and_check(&h, script, 334, seed, (1_000, 30_000), |round| {
            kills += 1;
            check_whole(&h, &targets, round);
        });
    }
    assert!(kills >= 1_000, "{kills} kills");
    // Not vacuous: writes did land between kills (a fork beyond the one made first, or a
    // title the script set).
    let rows = h.stores().list_all();
    let landed = rows.iter().filter(|r| r.forked_from().is_some()).count() > targets.len()
        || rows
            .iter()
            .any(|r| r.title().starts_with('t') && r.title()[1..].parse::<u64>().is_ok());
    assert!(landed, "no write completed between kills");
}
