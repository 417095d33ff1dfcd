//! Real-terminal tests of the one-key actions: the `spool` binary under tmux. Pin shows its
//! mark at once, fork selects the new session, and resume hands every keystroke to a fake
//! agent and brings the browser back exactly as it was. Skipped (with a note) without tmux.

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

    /// A temporary directory with an empty `home/`, before anything runs.
    fn new(name: &str) -> Option<Tmux> {
        if Command::new("tmux").arg("-V").output().is_err() {
            eprintln!("note: tmux not found; skipping real-terminal test {name}");
            return None;
        }
        let dir = tempfile::tempdir().ok()?;
        std::fs::create_dir_all(dir.path().join("home")).ok()?;
        Some(Tmux {
            socket: format!("spool-act-{}-{name}", std::process::id()),
            dir,
        })
    }

    fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }

    /// Run `spool ARGS` in a 120x30 pane; afterwards the pane shows the exit code and
    /// `stty -a`, so terminal restoration can be checked.
    fn run(&self, args: &str) {
        let script = format!(
            "env HOME={home} TERM=xterm-256color {BIN} {args}; \
             echo EXIT=$?; stty -a; echo STTY-DONE; sleep 60",
            home = self.home().display(),
        );
        self.tmux(&[
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
    }

    fn screen(&self) -> String {
        self.tmux(&["capture-pane", "-p", "-t", "t"])
    }

    fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "t"];
        args.extend_from_slice(keys);
        self.tmux(&args);
    }

    /// Typed literally (no key-name lookup).
    fn type_text(&self, s: &str) {
        self.tmux(&["send-keys", "-t", "t", "-l", s]);
    }

    /// Poll the screen until `ok` holds (10 s at most).
    fn wait_until(&self, what: &str, mut ok: impl FnMut(&str) -> bool) -> String {
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
    fn wait_stable(&self, what: &str, ok: impl Fn(&str) -> bool) -> String {
        let mut last = String::new();
        self.wait_until(what, |s| {
            let same = s == last;
            last = s.to_string();
            same && ok(s)
        })
    }

    /// The browser is up and every store is listed.
    fn wait_listed(&self) -> String {
        self.wait_stable("the listing", |s| {
            s.contains("/ search") && !s.contains("loading")
        })
    }

    fn wait_for(&self, what: &str) -> String {
        self.wait_until(what, |s| s.contains(what))
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

/// The screen without its status bar (the last non-empty line).
fn above_status(screen: &str) -> String {
    let lines: Vec<&str> = screen.lines().collect();
    let last = lines
        .iter()
        .rposition(|l| !l.trim().is_empty())
        .unwrap_or(0);
    lines[..last].join("\n")
}

/// The id shown in the pane header (`<store> <id>` on its second line), e.g. `loom 2026…`.
fn header_id(screen: &str, store: &str) -> Option<String> {
    let prefix = format!("│{store} ");
    screen.lines().find_map(|l| {
        let at = l.find(&prefix)?;
        l[at + prefix.len()..]
            .split_whitespace()
            .next()
            .map(str::to_string)
    })
}

fn the_line<'a>(screen: &'a str, needle: &str) -> &'a str {
    screen
        .lines()
        .find(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("no line with {needle:?}:\n{screen}"))
}

#[test]
fn pin_shows_the_mark_at_once() {
    let Some(t) = Tmux::new("pin") else { return };
    t.run("--demo");
    t.wait_listed();
    t.keys(&["/"]);
    t.type_text("DST duplicate");
    t.keys(&["Enter"]);
    // The row's first line starts with its marks: `◆` when pinned.
    let pinned = |s: &str| s.lines().any(|l| l.starts_with(" ◆ DST duplicate rows"));
    let listed = |s: &str| s.lines().any(|l| l.contains("  DST duplicate rows"));
    let before = t.wait_for("loom 20261026-085415");
    assert!(listed(&before) && !pinned(&before), "{before}");
    t.keys(&["p"]);
    // At once: the same frame that reports the write shows the mark.
    let s = t.wait_for("pinned loom:20261026-085415");
    assert!(pinned(&s), "no pin mark:\n{s}");
    t.keys(&["p"]);
    let s = t.wait_for("unpinned loom:20261026-085415");
    assert!(!pinned(&s) && listed(&s), "{s}");
    t.keys(&["q"]);
    let end = t.wait_for("STTY-DONE");
    assert!(end.contains("EXIT=0"), "{end}");
}

#[test]
fn fork_selects_the_new_session_with_its_parent() {
    let Some(t) = Tmux::new("fork") else { return };
    t.run("--demo");
    t.wait_listed();
    // Loom only; move down and back so the selection is the user's.
    t.keys(&["F", "F", "j", "k"]);
    let s = t.wait_stable("a loom session in the pane", |s| {
        header_id(s, "loom").is_some()
    });
    let parent = header_id(&s, "loom").unwrap();
    t.keys(&["f"]);
    let s = t.wait_for(&format!("forked loom:{parent} into loom:"));
    let status = the_line(&s, "into loom:");
    let child = status
        .split("into loom:")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .unwrap()
        .to_string();
    assert_ne!(child, parent);
    let s = t.wait_until("the fork selected", |s| {
        header_id(s, "loom").as_deref() == Some(child.as_str())
    });
    assert!(
        s.contains(&format!("forked from loom:{parent}")),
        "parent not shown:\n{s}"
    );
    t.keys(&["q"]);
    let end = t.wait_for("STTY-DONE");
    assert!(end.contains("EXIT=0"), "{end}");
}

/// A harness session whose project directory exists, and a config whose harness resume
/// command is a script that reads one line and writes it to a file.
fn resume_fixture(t: &Tmux) -> (PathBuf, PathBuf) {
    let proj = t.dir.path().join("proj");
    std::fs::create_dir_all(&proj).unwrap();
    let sessions = t.home().join(".agent-harness/memory/sessions");
    std::fs::create_dir_all(&sessions).unwrap();
    let record = serde_json::json!({
        "id": "ResumeTestSess01",
        "created_at": "2026-03-01T10:00:00+00:00",
        "updated_at": "2026-03-01T10:05:00+00:00",
        "summary": "",
        "title": "Resume me please",
        "project_root": proj.to_string_lossy(),
        "archived": false,
        "messages": [
            {"role": "user", "content": "hello"},
            {"role": "assistant", "content": "hi there"}
        ]
    });
    std::fs::write(
        sessions.join("ResumeTestSess01.json"),
        serde_json::to_vec_pretty(&record).unwrap(),
    )
    .unwrap();
    let got = t.dir.path().join("got.txt");
    let agent = t.dir.path().join("fake-agent.sh");
    std::fs::write(
        &agent,
        format!(
            "#!/bin/sh\necho \"FAKE AGENT $1 in $(pwd)\"\nIFS= read -r line\n\
             printf '%s|%s' \"$1\" \"$line\" > {got}\n",
            got = got.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&agent, std::fs::Permissions::from_mode(0o755)).unwrap();
    let config = t.dir.path().join("config.toml");
    std::fs::write(
        &config,
        format!("[resume]\nharness = \"{} {{id}}\"\n", agent.display()),
    )
    .unwrap();
    (config, got)
}

#[test]
fn resume_hands_every_key_to_the_agent_and_comes_back_intact() {
    let Some(t) = Tmux::new("resume") else { return };
    let (config, got) = resume_fixture(&t);
    t.run(&format!("--config {}", config.display()));
    t.wait_listed();
    // Some state to keep: a search query, the pane focused and scrolled, raw view.
    t.keys(&["/"]);
    t.type_text("resume");
    t.keys(&["Enter", "Enter", "v", "v"]);
    let before = t.wait_stable("the raw view", |s| s.contains("\"hi there\""));
    t.keys(&["r"]);
    let proj = t.dir.path().join("proj");
    let canon = proj.canonicalize().unwrap_or(proj);
    t.wait_until("the fake agent", |s| {
        s.contains("FAKE AGENT ResumeTestSess01 in") && s.contains(&*canon.to_string_lossy())
    });
    // Keys spool binds (q quits, j moves, / searches) must all reach the agent.
    t.type_text("q/jk typed while the agent runs");
    t.keys(&["Enter"]);
    let after = t.wait_for("back from harness:ResumeTestSess01");
    assert_eq!(
        std::fs::read_to_string(&got).unwrap(),
        "ResumeTestSess01|q/jk typed while the agent runs"
    );
    // Fully redrawn and exactly as before: query, focus, view, selection.
    assert_eq!(above_status(&after), above_status(&before));
    assert!(after.contains("resume"), "{after}");
    t.keys(&["q"]);
    let end = t.wait_for("STTY-DONE");
    assert!(end.contains("EXIT=0"), "{end}");
    restored(&end);
}

#[test]
fn resume_refusal_is_one_line_and_the_browser_goes_on() {
    let Some(t) = Tmux::new("refuse") else { return };
    t.run("--demo");
    t.wait_listed();
    t.keys(&["/"]);
    t.type_text("DST duplicate");
    t.keys(&["Enter"]);
    t.wait_for("loom 20261026-085415");
    t.keys(&["r"]);
    // The demo's project directories do not exist.
    t.wait_for("no longer exists");
    t.keys(&["d"]);
    t.wait_for("delete session");
    t.keys(&["Escape"]);
    t.wait_for("cancelled");
    t.keys(&["q"]);
    let end = t.wait_for("STTY-DONE");
    assert!(end.contains("EXIT=0"), "{end}");
    let _ = Path::new(BIN);
}
