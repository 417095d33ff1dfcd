//! Driving the built `spool` binary in a real terminal: tmux on a private socket, keys in,
//! screen captures out. Tests skip (with a note) where tmux is missing.

#![allow(dead_code)]

use std::path::PathBuf;
use std::process::Command;
use std::thread::sleep;
use std::time::{Duration, Instant};

pub const BIN: &str = env!("CARGO_BIN_EXE_spool");

pub struct Tmux {
    socket: String,
    pub dir: tempfile::TempDir,
}

impl Tmux {
    pub fn tmux(&self, args: &[&str]) -> String {
        let out = Command::new("tmux")
            .arg("-L")
            .arg(&self.socket)
            .args(args)
            .output()
            .expect("tmux runs");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// A temporary directory with an empty `home/`, before anything runs.
    pub fn new(name: &str) -> Option<Tmux> {
        if Command::new("tmux").arg("-V").output().is_err() {
            eprintln!("note: tmux not found; skipping real-terminal test {name}");
            return None;
        }
        let dir = tempfile::tempdir().ok()?;
        std::fs::create_dir_all(dir.path().join("home")).ok()?;
        Some(Tmux {
            socket: format!("spool-{}-{name}", std::process::id()),
            dir,
        })
    }

    pub fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }

    /// The environment that keeps spool's cache and state in this terminal's home, for runs
    /// (`run_env`, in this terminal or another) that share one catalog and one state.
    pub fn cache_env(&self) -> String {
        format!(
            "XDG_CACHE_HOME={h}/.cache XDG_DATA_HOME={h}/.local/share",
            h = self.home().display()
        )
    }

    /// Run `spool ARGS` in a 120x30 pane; afterwards the pane shows the exit code and
    /// `stty -a`, so terminal restoration can be checked. spool runs in the test's temporary
    /// directory (exports default to the current directory).
    pub fn run(&self, args: &str) {
        self.run_env("", args);
    }

    /// `run` with extra `env` arguments first (`-u NAME`, `NAME=value`).
    pub fn run_env(&self, env: &str, args: &str) {
        self.run_with("", env, args);
    }

    /// `run_env` after shell commands `pre` (for example a `trap`, so the pane's shell
    /// outlives a Ctrl-C meant for spool's child).
    pub fn run_with(&self, pre: &str, env: &str, args: &str) {
        self.launch(pre, env, args, 120, 30);
    }

    /// `run` in a pane of `w` x `h` cells.
    pub fn run_sized(&self, args: &str, w: u16, h: u16) {
        self.launch("", "", args, w, h);
    }

    fn launch(&self, pre: &str, env: &str, args: &str, w: u16, h: u16) {
        let script = format!(
            "{pre} cd {dir} && env {env} HOME={home} TERM=xterm-256color {BIN} {args}; \
             echo EXIT=$?; stty -a; echo STTY-DONE; sleep 60",
            dir = self.dir.path().display(),
            home = self.home().display(),
        );
        let (w, h) = (w.to_string(), h.to_string());
        self.tmux(&[
            "new-session",
            "-d",
            "-x",
            &w,
            "-y",
            &h,
            "-s",
            "t",
            "sh",
            "-c",
            &script,
        ]);
    }

    pub fn screen(&self) -> String {
        self.tmux(&["capture-pane", "-p", "-t", "t"])
    }

    pub fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "t"];
        args.extend_from_slice(keys);
        self.tmux(&args);
    }

    /// Typed literally (no key-name lookup).
    pub fn type_text(&self, s: &str) {
        self.tmux(&["send-keys", "-t", "t", "-l", s]);
    }

    /// Poll the screen until `ok` holds (10 s at most).
    pub fn wait_until(&self, what: &str, mut ok: impl FnMut(&str) -> bool) -> String {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let s = self.screen();
            if ok(&s) {
                return s;
            }
            assert!(Instant::now() < deadline, "waited for {what}; screen:\n{s}");
            sleep(Duration::from_millis(50));
        }
    }

    /// Poll until `ok` holds on two captures in a row that are the same (drawing settled).
    pub fn wait_stable(&self, what: &str, ok: impl Fn(&str) -> bool) -> String {
        let mut last = String::new();
        self.wait_until(what, |s| {
            let same = s == last;
            last = s.to_string();
            same && ok(s)
        })
    }

    /// The browser is up and every store is listed.
    /// Capture until the load is over (no "loading", the search bar back), asserting at
    /// every capture that the selected row is still `picked`; then the settled screen, with
    /// the same row selected.
    pub fn hold_selection(&self, picked: &str, mut last: String) -> String {
        while last.contains("loading") || !last.contains("/ search") {
            let s = self.screen();
            if let Some(now) = selected_row(&s) {
                assert_eq!(
                    now, picked,
                    "the selection moved during the cold load:\n{s}"
                );
            }
            last = s;
        }
        let settled = self.wait_listed();
        assert_eq!(selected_row(&settled).as_deref(), Some(picked));
        settled
    }

    /// A cold start's contract (issue 10), run on the store the test set up under HOME:
    /// the first frame with rows selects the session titled `newest`, the selection holds
    /// while the rest arrive until the footer counts `total`, `then` moves the selection if
    /// the test means to (keys on the settled list), and Enter opens the selected session in
    /// the pane, whose header names `header` (the store and the session's id).
    pub fn cold_start_selects(
        &self,
        newest: &str,
        total: &str,
        then: impl FnOnce(&Tmux),
        header: &str,
    ) {
        self.run("");
        let first = self.wait_until("a first frame with rows", |s| selected_row(s).is_some());
        let picked = selected_row(&first).unwrap();
        assert!(picked.starts_with(&format!("{newest} ")), "{first}");
        let settled = self.hold_selection(&picked, first);
        assert!(settled.contains(total), "{settled}");
        then(self);
        // What the user came for: the session opens, and the pane shows its transcript (its
        // own id, and its prompt as the first turn).
        self.keys(&["Enter"]);
        let pane = self.wait_until("the selected session read in the pane", |s| {
            s.contains("esc back") && s.contains("▌ you #0")
        });
        assert!(pane.contains(header), "{pane}");
        self.keys(&["q"]);
        self.wait_for("EXIT=0");
    }

    pub fn wait_listed(&self) -> String {
        self.wait_stable("the listing", |s| {
            s.contains("/ search") && !s.contains("loading")
        })
    }

    pub fn wait_for(&self, what: &str) -> String {
        self.wait_until(what, |s| s.contains(what))
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        self.tmux(&["kill-server"]);
    }
}

/// The sidebar text of the selected row (the line with the selection bar), if any.
pub fn selected_row(screen: &str) -> Option<String> {
    let line = screen.lines().find(|l| l.contains('▌'))?;
    let cut = line.split('│').next().unwrap_or(line);
    // Past the bar and the unread/pin marks (opening a session marks it read).
    Some(cut.chars().skip(3).collect::<String>().trim().to_string())
}

/// The sidebar's text of a screen: each line left of the pane's divider.
pub fn sidebar(screen: &str) -> String {
    (screen.lines())
        .map(|l| l.split('│').next().unwrap_or_default())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The pane's text of a screen: each line right of the divider, trimmed.
pub fn pane(screen: &str) -> String {
    (screen.lines())
        .filter_map(|l| l.split_once('│').map(|(_, p)| p.trim()))
        .collect::<Vec<_>>()
        .join("\n")
}

pub fn restored(screen: &str) {
    let words: Vec<&str> = screen.split_whitespace().collect();
    assert!(words.contains(&"icanon"), "icanon not restored:\n{screen}");
    assert!(words.contains(&"echo"), "echo not restored:\n{screen}");
}

impl Tmux {
    /// The pid of the `spool` the pane's shell runs (other tests run spool at the same
    /// time: signal this one only).
    pub fn spool_pid(&self) -> i32 {
        let shell = self.tmux(&["display-message", "-p", "-t", "t", "#{pane_pid}"]);
        let kids = Command::new("pgrep")
            .args(["-P", shell.trim()])
            .output()
            .unwrap();
        String::from_utf8_lossy(&kids.stdout)
            .split_whitespace()
            .find(|pid| {
                std::fs::read_to_string(format!("/proc/{pid}/comm"))
                    .is_ok_and(|c| c.trim() == "spool")
            })
            .and_then(|pid| pid.parse().ok())
            .expect("spool runs in the pane")
    }

    /// The pane's terminal modes as tmux tracks them: alternate screen, cursor shown, mouse
    /// reporting (any kind) and bracketed paste, as `name=value` words.
    pub fn modes(&self) -> String {
        self.tmux(&[
            "display-message",
            "-p",
            "-t",
            "t",
            "alternate_on=#{alternate_on} cursor_flag=#{cursor_flag} \
             mouse_any_flag=#{mouse_any_flag} mouse_button_flag=#{mouse_button_flag} \
             mouse_standard_flag=#{mouse_standard_flag} mouse_sgr_flag=#{mouse_sgr_flag}",
        ])
    }

    /// Every mode spool turns on is off again: the main screen, the cursor shown, no mouse
    /// reporting.
    pub fn modes_restored(&self) {
        let m = self.modes();
        for want in [
            "alternate_on=0",
            "cursor_flag=1",
            "mouse_any_flag=0",
            "mouse_button_flag=0",
            "mouse_standard_flag=0",
            "mouse_sgr_flag=0",
        ] {
            assert!(m.split_whitespace().any(|w| w == want), "{want}: {m}");
        }
    }
}

/// The `--demo` copies under `tmp` (the run's TMPDIR).
pub fn demo_copies(tmp: &std::path::Path) -> Vec<String> {
    std::fs::read_dir(tmp)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("spool-demo-"))
        .collect()
}

/// Run `--demo` with a private TMPDIR and the cache at its default place under HOME.
pub fn run_demo(t: &Tmux) -> std::path::PathBuf {
    let tmp = t.dir.path().join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    t.run_env(
        &format!("-u XDG_CACHE_HOME TMPDIR={}", tmp.display()),
        "--demo",
    );
    tmp
}
