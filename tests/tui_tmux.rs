//! Real-terminal tests: the `spool` binary under tmux with `--demo`. Skipped (with a note)
//! when tmux is missing or the binary does not open the browser yet (CLI not wired).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::thread::sleep;
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_spool");

struct Tmux {
    socket: String,
    dir: tempfile::TempDir,
}

impl Tmux {
    fn tmux(&self, args: &[&str]) -> String {
        let out = Command::new("tmux")
            .arg("-L")
            .arg(&self.socket)
            .args(args)
            .output()
            .expect("tmux runs");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Start spool in a 120x30 pane; after it exits the pane shows its exit code and
    /// `stty -a`, so terminal restoration can be checked.
    fn start(name: &str) -> Option<Tmux> {
        if Command::new("tmux").arg("-V").output().is_err() {
            eprintln!("note: tmux not found; skipping real-terminal test {name}");
            return None;
        }
        let dir = tempfile::tempdir().ok()?;
        let t = Tmux {
            socket: format!("spool-test-{}-{name}", std::process::id()),
            dir,
        };
        let home = t.dir.path().join("home");
        std::fs::create_dir_all(&home).ok()?;
        let pidfile = t.pidfile();
        let script = format!(
            "echo $$ > {pid}; env HOME={home} TERM=xterm-256color {bin} --demo; \
             echo EXIT=$?; stty -a; echo STTY-DONE; sleep 60",
            pid = pidfile.display(),
            home = home.display(),
            bin = BIN
        );
        t.tmux(&[
            "new-session",
            "-d",
            "-x",
            "120",
            "-y",
            "30",
            "-s",
            "t",
            "sh",
            "-c",
            &script,
        ]);
        // Until main.rs hands `spool` (no subcommand) to the browser, it says so and exits.
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            let s = t.screen();
            if s.contains("/ search") {
                return Some(t);
            }
            if s.contains("EXIT=") && s.contains("not built yet") {
                eprintln!("note: the binary does not open the browser yet; skipping {name}");
                return None;
            }
            sleep(Duration::from_millis(100));
        }
        Some(t)
    }

    fn pidfile(&self) -> PathBuf {
        self.dir.path().join("pid")
    }

    fn screen(&self) -> String {
        self.tmux(&["capture-pane", "-p", "-t", "t"])
    }

    fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "t"];
        args.extend_from_slice(keys);
        self.tmux(&args);
    }

    fn wait_for(&self, what: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let s = self.screen();
            if s.contains(what) || Instant::now() > deadline {
                assert!(s.contains(what), "waited for {what:?}; screen:\n{s}");
                return s;
            }
            sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        self.tmux(&["kill-server"]);
    }
}

fn restored(screen: &str) {
    let words: Vec<&str> = screen.split_whitespace().collect();
    assert!(words.contains(&"icanon"), "icanon not restored:\n{screen}");
    assert!(words.contains(&"echo"), "echo not restored:\n{screen}");
}

#[test]
fn browse_search_open_view_quit() {
    let Some(t) = Tmux::start("browse") else {
        return;
    };
    let first = t.wait_for("/ search");
    assert!(first.contains("sessions"), "{first}");
    sleep(Duration::from_millis(500));
    if t.screen().contains(" 0 sessions") {
        eprintln!("note: the demo store lists no sessions yet (readers not merged); skipping");
        return;
    }
    // Typing filters live: nothing matches this.
    t.keys(&["/", "zqxjzqxj"]);
    t.wait_for("no matches");
    t.keys(&["Escape"]);
    t.wait_for("/ search");
    t.keys(&["Enter"]);
    t.wait_for("esc back");
    t.keys(&["v"]);
    t.wait_for("context window");
    t.keys(&["q"]);
    let end = t.wait_for("STTY-DONE");
    assert!(end.contains("EXIT=0"), "{end}");
    restored(&end);
}

#[test]
fn sigterm_restores_the_terminal() {
    let Some(t) = Tmux::start("sigterm") else {
        return;
    };
    t.wait_for("/ search");
    let pid = std::fs::read_to_string(t.pidfile()).unwrap();
    // The shell execs nothing: spool is its child. Signal the child.
    let child = Command::new("pgrep")
        .args(["-P", pid.trim()])
        .output()
        .unwrap();
    let child = String::from_utf8_lossy(&child.stdout);
    let child = child
        .lines()
        .next()
        .expect("spool is running")
        .trim()
        .to_string();
    Command::new("kill")
        .args(["-TERM", &child])
        .status()
        .unwrap();
    let end = t.wait_for("STTY-DONE");
    assert!(end.contains("EXIT=143"), "{end}");
    restored(&end);
    let _ = Path::new(BIN);
}
