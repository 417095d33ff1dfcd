//! A filled-in resume (argv and directory): its `--print` line, the checks that the directory
//! and program are usable (so a failure names its cause), and running it in the foreground.

use std::path::{Path, PathBuf};

use super::words::shell_quote;
use crate::error::{Error, Result};

/// A ready-to-run resume: program, arguments and working directory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResumePlan {
    pub argv: Vec<String>,
    pub cwd: PathBuf,
    /// Commands the agent runs first, in the same directory (`codex unarchive <uuid>`); the
    /// resume runs only when each exits 0.
    pub before: Vec<Vec<String>>,
}

impl ResumePlan {
    /// `cd <cwd> && <argv...>`, each word shell-quoted, for `spool resume --print`.
    pub fn shell_line(&self) -> String {
        let quoted = |argv: &[String]| {
            argv.iter()
                .map(|a| shell_quote(a))
                .collect::<Vec<_>>()
                .join(" ")
        };
        let mut parts = vec![format!("cd {}", shell_quote(&self.cwd.to_string_lossy()))];
        parts.extend(self.before.iter().map(|b| quoted(b)));
        parts.push(quoted(&self.argv));
        parts.join(" && ")
    }

    /// Why the command cannot start here, if it cannot: the session's directory (gone, not a
    /// directory, not enterable) or the program (not on PATH, not executable). One sentence
    /// that names what failed first, then where, so a status bar cut at 80 columns still
    /// shows the cause.
    pub fn problem(&self) -> Option<String> {
        dir_problem(&self.cwd).or_else(|| program_problem(&self.argv[0], &self.cwd))
    }

    /// Run it in the foreground and wait; returns the exit code (`-1` when killed).
    pub fn run(&self) -> Result<i32> {
        if let Some(p) = self.problem() {
            return Err(Error::Refused(p));
        }
        for before in &self.before {
            let status = std::process::Command::new(&before[0])
                .args(&before[1..])
                .current_dir(&self.cwd)
                .status()
                .map_err(|e| Error::Refused(spawn_failure(&before[0], &self.cwd, &e)))?;
            if !status.success() {
                return Err(Error::Refused(format!(
                    "`{}` failed ({status}); not resuming",
                    before.join(" ")
                )));
            }
        }
        let mut cmd = std::process::Command::new(&self.argv[0]);
        cmd.args(&self.argv[1..]).current_dir(&self.cwd);
        let status = crate::tui::with_child_in_foreground(|| cmd.status())
            .map_err(|e| Error::Refused(spawn_failure(&self.argv[0], &self.cwd, &e)))?;
        Ok(status.code().unwrap_or(-1))
    }
}

/// What is wrong with the directory a resume runs in, if anything.
fn dir_problem(dir: &Path) -> Option<String> {
    let shown = dir.display();
    match std::fs::metadata(dir) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            Some(format!("the session's directory no longer exists: {shown}"))
        }
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => Some(format!(
            "permission denied: cannot reach the session's directory {shown}"
        )),
        Err(e) => Some(format!("cannot use the session's directory {shown}: {e}")),
        Ok(m) if !m.is_dir() => Some(format!(
            "the session's directory is not a directory: {shown}"
        )),
        Ok(_) if !accessible(dir, libc::X_OK) => Some(format!(
            "permission denied: cannot enter the session's directory {shown}"
        )),
        Ok(_) => None,
    }
}

/// What is wrong with the program, if anything: looked up on PATH as `execvp` would (or,
/// with a `/`, relative to the directory it runs in).
fn program_problem(program: &str, cwd: &Path) -> Option<String> {
    let executable = |p: &Path| p.is_file() && accessible(p, libc::X_OK);
    let where_ = format!("(resuming in {})", cwd.display());
    if program.contains('/') {
        let p = cwd.join(program);
        return if executable(&p) {
            None
        } else if p.exists() {
            Some(format!(
                "{program}: permission denied (not an executable file) {where_}"
            ))
        } else {
            Some(format!("{program}: no such program {where_}"))
        };
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut found_unusable = false;
    for dir in std::env::split_paths(&path) {
        let p = dir.join(program);
        if executable(&p) {
            return None;
        }
        found_unusable |= p.exists();
    }
    Some(if found_unusable {
        format!("{program}: permission denied (found on PATH but not executable) {where_}")
    } else {
        format!("{program}: command not found on PATH {where_}")
    })
}

/// `access(2)` for the real user.
fn accessible(p: &Path, mode: libc::c_int) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let Ok(c) = std::ffi::CString::new(p.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: `c` is a valid NUL-terminated path that outlives the call.
    unsafe { libc::access(c.as_ptr(), mode) == 0 }
}

/// The sentence for a spawn that failed after the checks passed (a race, or an exotic error).
fn spawn_failure(program: &str, cwd: &Path, e: &std::io::Error) -> String {
    let where_ = format!("(resuming in {})", cwd.display());
    match e.kind() {
        std::io::ErrorKind::NotFound => format!("{program}: command not found {where_}"),
        std::io::ErrorKind::PermissionDenied => format!("{program}: permission denied {where_}"),
        _ => format!("{program}: could not start: {e} {where_}"),
    }
}
