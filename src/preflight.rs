//! Checks before resume: what will certainly fail (refused with the reason) and what moved
//! under the session since its last activity (asked about): the git branch now against the
//! recorded one, commits since, uncommitted changes. git runs as a child with a timeout,
//! no optional locks and no pager, so a slow or missing git only makes a check "unknown".

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use chrono::{DateTime, Utc};

use crate::model::SessionSummary;
use crate::model::rfc3339;

/// How long one git command may take before its check is given up.
pub const GIT_TIMEOUT: Duration = Duration::from_secs(3);

/// What the checks found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Report {
    /// Certain failures: resume is refused with these.
    pub refusals: Vec<String>,
    /// Changes since the session: resume asks before it goes on.
    pub surprises: Vec<String>,
    /// Everything else worth a line (current branch, "not a git repository").
    pub notes: Vec<String>,
}

impl Report {
    /// All lines, refusals first, for stderr or a dialog.
    pub fn lines(&self) -> Vec<String> {
        let tag = |p: &str, v: &[String]| v.iter().map(|l| format!("{p}{l}")).collect::<Vec<_>>();
        let mut out = tag("refused: ", &self.refusals);
        out.extend(tag("changed: ", &self.surprises));
        out.extend(tag("", &self.notes));
        out
    }
}

/// Run `git -C dir args…` with a timeout; its trimmed stdout when it exits 0.
pub fn git(dir: &Path, args: &[&str], timeout: Duration) -> Option<String> {
    let mut child = Command::new("git")
        .arg("--no-pager")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_OPTIONAL_LOCKS", "0")
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("LC_ALL", "C")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let mut out = child.stdout.take()?;
    let (tx, rx) = mpsc::channel();
    // The reader drains the pipe so a large answer never blocks git on a full pipe.
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = out.read_to_end(&mut buf);
        let _ = tx.send(buf);
    });
    match rx.recv_timeout(timeout) {
        Ok(buf) => {
            let ok = child.wait().ok()?.success();
            ok.then(|| String::from_utf8_lossy(&buf).trim().to_string())
        }
        Err(_) => {
            let _ = child.kill();
            let _ = child.wait();
            None
        }
    }
}

/// The git facts of `dir` against the session's recorded branch and last activity.
fn git_checks(dir: &Path, recorded: Option<&str>, since: Option<DateTime<Utc>>, r: &mut Report) {
    let one_line = crate::text::one_line;
    let Some(top) = git(dir, &["rev-parse", "--show-toplevel"], GIT_TIMEOUT) else {
        r.notes
            .push("not a git repository (or git is missing or slow)".into());
        return;
    };
    let branch = git(dir, &["rev-parse", "--abbrev-ref", "HEAD"], GIT_TIMEOUT);
    match (branch.as_deref(), recorded) {
        (Some(now), Some(then)) if now != then => r.surprises.push(format!(
            "on branch {} now; the session was on {}",
            one_line(now),
            one_line(then)
        )),
        (Some(now), _) => r.notes.push(format!("branch {}", one_line(now))),
        (None, _) => r.notes.push("branch unknown".into()),
    }
    if let Some(t) = since {
        let arg = format!("--since={}", rfc3339(t));
        match git(dir, &["rev-list", "--count", &arg, "HEAD"], GIT_TIMEOUT)
            .and_then(|n| n.parse::<u64>().ok())
        {
            Some(0) => {}
            Some(n) => r.surprises.push(format!(
                "{} since the session's last activity",
                crate::text::plural(n, "new commit", "new commits")
            )),
            None => r.notes.push("commits since unknown".into()),
        }
    }
    match git(
        dir,
        &["status", "--porcelain", "--untracked-files=no"],
        GIT_TIMEOUT,
    ) {
        Some(s) if !s.is_empty() => r.surprises.push(format!(
            "uncommitted changes in {} ({})",
            crate::text::plural(s.lines().count() as u64, "file", "files"),
            one_line(&top)
        )),
        Some(_) => {}
        None => r.notes.push("working tree state unknown".into()),
    }
}

/// Check `s` before resuming it in `dir` with `problem` (the plan's directory and PATH
/// check) and `in_use` (`Store::in_use`). Runs git: call it off the UI thread.
pub fn check(s: &SessionSummary, dir: &Path, problem: Option<String>, in_use: bool) -> Report {
    let mut r = Report::default();
    if in_use {
        r.refusals
            .push(format!("{} is in use by another process", s.reference()));
    }
    if let Some(p) = problem {
        r.refusals.push(p);
    }
    // claude-code.md 8, codex.md 8, pi.md 8: a session written in the last two minutes
    // without an end of turn may still have its agent running on it; two agents appending
    // to one transcript interleave it, so resume asks first.
    if s.ended == Some(crate::model::Ended::Running) {
        r.surprises.push(format!(
            "{} looks live: written in the last 2 minutes and its turn has not ended (the \
             agent may still be running)",
            s.reference()
        ));
    }
    if dir.is_dir() {
        git_checks(dir, s.git_branch(), s.last_activity(), &mut r);
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Ended, StoreKind};

    #[test]
    fn a_live_session_asks_before_resume_and_a_finished_one_does_not() {
        let d = tempfile::tempdir().unwrap();
        let mut s = SessionSummary::new(StoreKind::Claude, "a1", d.path().join("a1.jsonl"));
        s.ended = Some(Ended::Running);
        let gone = d.path().join("gone");
        let r = check(&s, &gone, None, false);
        assert!(r.refusals.is_empty());
        assert_eq!(r.surprises.len(), 1);
        assert!(r.surprises[0].contains("looks live"), "{:?}", r.surprises);
        s.ended = Some(Ended::Interrupted);
        assert!(check(&s, &gone, None, false).surprises.is_empty());
    }
}
