//! The first frame's acknowledgement in real terminals (`src/tui/ack.rs`): after a warm
//! start's first frame spool asks the terminal for the cursor position and holds its
//! background work until something comes back. Keys typed at once after launch are handled
//! (tmux, which answers), a key typed during the wait on a terminal that never answers is
//! handled too (a bare pty), and the answer never shows as typed text.

mod common;

use std::io::{Read, Write};
use std::os::fd::{FromRawFd, OwnedFd};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::tmux::{BIN, Tmux};
use spool::corpus::{CorpusSpec, generate};

/// A small corpus under `dir`, and its store flags.
fn corpus(dir: &std::path::Path) -> String {
    let c = dir.join("corpus");
    let spec = CorpusSpec {
        sessions: 300,
        rounds_per_session: 2,
        seed: 5,
        big_transcript_mb: None,
    };
    generate(&c, &spec).unwrap();
    format!(
        "--loop-dir {c}/loop --loom-dir {c}/loom --harness-dir {c}/harness --claude-dir \
         {c}/claude",
        c = c.display()
    )
}

/// A corpus in `t`'s directory, started cold once in `t` so the next starts are warm
/// (drawn from the catalog's head; waits for the head to be written). Returns the store
/// flags and the environment (cache and state in `t`'s home) for those starts.
fn make_warm(t: &Tmux) -> (String, String) {
    let args = corpus(t.dir.path());
    let env = t.cache_env();
    t.run_env(&env, &args);
    t.wait_listed();
    let cache = t.home().join(".cache/spool/head.bin");
    let deadline = Instant::now() + Duration::from_secs(20);
    while !cache.is_file() {
        assert!(Instant::now() < deadline, "no head was written");
        std::thread::sleep(Duration::from_millis(50));
    }
    // Let the index build finish and the catalog settle, then quit.
    t.wait_listed();
    t.keys(&["q"]);
    t.wait_for("EXIT=0");
    (args, env)
}

#[test]
fn keys_typed_at_once_after_a_warm_launch_are_handled_and_the_answer_never_shows_as_keys() {
    let Some(t) = Tmux::new("ack-keys") else {
        return;
    };
    let (args, env) = make_warm(&t);

    // The warm start, in a terminal of its own (a new tmux server) with the same cache.
    let Some(t) = Tmux::new("ack-keys-warm") else {
        return;
    };
    // Typed at once after the launch, while the shell still starts spool: the keys wait
    // in the terminal until spool reads them, before or with its first frame.
    t.run_with("sleep 0.3;", &env, &args);
    t.type_text("/zqx");
    // (Typed before spool's raw mode, the shell's terminal echoes it on the main screen:
    // only the browser's screen, with its sidebar, counts.)
    let s = t.wait_until("the typed query", |s| s.contains("zqx") && s.contains('│'));
    // The cursor report (`ESC[row;colR`) is crossterm's, never the app's: no "R" typed in.
    let line = s.lines().find(|l| l.contains("zqx")).unwrap();
    assert!(
        !line.contains("zqxR") && !line.contains(";1R") && !line.contains("[6n"),
        "the terminal's answer reached the query:\n{s}"
    );
    // The Escape's effect is awaited before `q`: sent close together they can be read as
    // Alt-q, which quits nothing.
    t.keys(&["Escape"]);
    t.wait_until("the search closed", |s| !s.contains("zqx"));
    t.wait_listed();
    t.keys(&["q"]);
    t.wait_for("EXIT=0");
}

/// A pty whose "terminal" (this test) never answers the cursor position request.
struct Pty {
    master: std::fs::File,
    out: Arc<Mutex<Vec<u8>>>,
}

impl Pty {
    fn spawn(home: &std::path::Path, args: &str) -> (Pty, std::process::Child) {
        let (mut m, mut s) = (0, 0);
        let ws = libc::winsize {
            ws_row: 30,
            ws_col: 120,
            ws_xpixel: 0,
            ws_ypixel: 0,
        };
        // SAFETY: openpty writes two descriptors; the name and termios pointers are null.
        let r =
            unsafe { libc::openpty(&mut m, &mut s, std::ptr::null_mut(), std::ptr::null(), &ws) };
        assert_eq!(r, 0, "openpty");
        // SAFETY: both descriptors were just opened and are owned here.
        let (master, slave) = unsafe { (OwnedFd::from_raw_fd(m), OwnedFd::from_raw_fd(s)) };
        let mut cmd = Command::new(BIN);
        cmd.args(args.split_whitespace())
            .env("HOME", home)
            .env("XDG_CACHE_HOME", home.join(".cache"))
            .env("XDG_DATA_HOME", home.join(".local/share"))
            .env("TERM", "xterm-256color")
            .stdin(Stdio::from(slave.try_clone().unwrap()))
            .stdout(Stdio::from(slave.try_clone().unwrap()))
            .stderr(Stdio::from(slave));
        // SAFETY: setsid and ioctl are async-signal-safe; the child gets the pty as its
        // controlling terminal, as a shell in a terminal would.
        unsafe {
            std::os::unix::process::CommandExt::pre_exec(&mut cmd, || {
                libc::setsid();
                libc::ioctl(0, libc::TIOCSCTTY, 0);
                Ok(())
            });
        }
        let child = cmd.spawn().unwrap();
        let master = std::fs::File::from(master);
        let out = Arc::new(Mutex::new(Vec::new()));
        let (mut r, o) = (master.try_clone().unwrap(), out.clone());
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = r.read(&mut buf) {
                if n == 0 {
                    break;
                }
                o.lock().unwrap().extend_from_slice(&buf[..n]);
            }
        });
        (Pty { master, out }, child)
    }

    /// Wait until the output from `from` on holds `what`; returns where it ends.
    fn wait_for(&self, what: &[u8], from: usize) -> usize {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            {
                let out = self.out.lock().unwrap();
                let tail = &out[from.min(out.len())..];
                if let Some(i) = tail.windows(what.len()).position(|w| w == what) {
                    return from + i + what.len();
                }
                assert!(
                    Instant::now() < deadline,
                    "waited for {:?}; output so far:\n{}",
                    String::from_utf8_lossy(what),
                    String::from_utf8_lossy(&out)
                );
            }
            std::thread::sleep(Duration::from_millis(2));
        }
    }
}

#[test]
fn a_key_typed_while_spool_waits_for_a_terminal_that_never_answers_is_handled() {
    let Some(t) = Tmux::new("ack-pty") else {
        return;
    };
    // The pty sets the same cache and state directories itself.
    let (args, _) = make_warm(&t);

    let (mut pty, mut child) = Pty::spawn(&t.home(), &args);
    // The request comes right behind the first frame's end (a synchronized update), never
    // inside a frame.
    let asked = pty.wait_for(b"\x1b[?2026l\x1b[6n", 0);
    {
        let out = pty.out.lock().unwrap();
        let first = out.windows(4).position(|w| w == b"\x1b[6n").unwrap();
        assert_eq!(first + 4, asked, "a request before the first frame's end");
    }
    // Typed during the wait (at most 25 ms): `?` opens the help (its title says "esc closes").
    pty.master.write_all(b"?").unwrap();
    pty.wait_for(b"esc closes", asked);
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let _ = child.wait();
}
