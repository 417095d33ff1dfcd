//! Resuming a session in its agent: the per-store command template (placeholders `{id}`
//! `{path}` `{cwd}` `{store}`, split into argv and run without a shell), the pre-flight checks
//! (cwd exists, not in use, not archived), and the shell-quoted `--print` form.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::model::{SessionSummary, StoreKind};
use crate::store::Store;

/// Resume command templates per store, from the config file's `[resume]` table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResumeCommands {
    pub loop_cmd: Option<String>,
    pub loom_cmd: Option<String>,
    pub harness_cmd: Option<String>,
}

/// agent-harness's own resume invocation (its CLI takes the memory dir explicitly).
pub const HARNESS_DEFAULT: &str = "uv run agent.py --resume {id} --memory-dir {store}";

impl Default for ResumeCommands {
    fn default() -> Self {
        ResumeCommands {
            loop_cmd: None,
            loom_cmd: None,
            harness_cmd: Some(HARNESS_DEFAULT.to_string()),
        }
    }
}

impl ResumeCommands {
    pub fn for_kind(&self, kind: StoreKind) -> Option<&str> {
        match kind {
            StoreKind::Loop => self.loop_cmd.as_deref(),
            StoreKind::Loom => self.loom_cmd.as_deref(),
            StoreKind::Harness => self.harness_cmd.as_deref(),
        }
        .filter(|s| !s.trim().is_empty())
    }
}

/// A ready-to-run resume: program, arguments and working directory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResumePlan {
    pub argv: Vec<String>,
    pub cwd: PathBuf,
}

impl ResumePlan {
    /// `cd <cwd> && <argv...>`, each word shell-quoted, for `spool resume --print`.
    pub fn shell_line(&self) -> String {
        let cmd: Vec<String> = self.argv.iter().map(|a| shell_quote(a)).collect();
        format!(
            "cd {} && {}",
            shell_quote(&self.cwd.to_string_lossy()),
            cmd.join(" ")
        )
    }

    /// Run it in the foreground and wait; returns the exit code (`-1` when killed).
    pub fn run(&self) -> Result<i32> {
        let status = std::process::Command::new(&self.argv[0])
            .args(&self.argv[1..])
            .current_dir(&self.cwd)
            .status()
            .map_err(|e| {
                Error::Refused(format!(
                    "could not start '{}' in {}: {e}",
                    self.argv[0],
                    self.cwd.display()
                ))
            })?;
        Ok(status.code().unwrap_or(-1))
    }
}

/// Check that `s` can be resumed and build the command. Every refusal is one sentence that
/// says what to do instead.
pub fn plan(s: &SessionSummary, store: &dyn Store, cmds: &ResumeCommands) -> Result<ResumePlan> {
    if let Some(e) = &s.error {
        return Err(Error::Refused(format!(
            "{} cannot be resumed: {e}",
            s.reference()
        )));
    }
    if s.archived {
        return Err(Error::Refused(format!(
            "{} is archived; unarchive it before resuming",
            s.reference()
        )));
    }
    let cwd = s.cwd.clone().ok_or_else(|| {
        Error::Refused(format!(
            "{} has no recorded working directory",
            s.reference()
        ))
    })?;
    if !Path::new(&cwd).is_dir() {
        return Err(Error::Refused(format!(
            "the session's directory {cwd} no longer exists"
        )));
    }
    if store.in_use(&s.id) {
        return Err(Error::InUse(s.reference()));
    }
    let Some(template) = cmds.for_kind(s.store) else {
        return Err(Error::Refused(no_command_hint(s, &cwd)));
    };
    let root = store
        .sessions_dir()
        .parent()
        .unwrap_or(store.sessions_dir());
    let argv: Vec<String> = split_words(template)?
        .into_iter()
        .map(|w| {
            w.replace("{id}", &s.id)
                .replace("{path}", &s.path.to_string_lossy())
                .replace("{cwd}", &cwd)
                .replace("{store}", &root.to_string_lossy())
        })
        .collect();
    if argv.is_empty() {
        return Err(Error::Usage(format!(
            "the resume command for {} is empty",
            s.store
        )));
    }
    Ok(ResumePlan {
        argv,
        cwd: PathBuf::from(cwd),
    })
}

fn no_command_hint(s: &SessionSummary, cwd: &str) -> String {
    match s.store {
        // What to type comes first: a status bar may cut the end of the sentence.
        StoreKind::Loom => format!(
            "type `/resume {}` in loom's prompt (loom resumes inside itself; start `loom` in \
             {cwd}, or set [resume] loom in the config file)",
            s.id
        ),
        StoreKind::Loop => format!(
            "no resume command is set for Loop: open Loop in {cwd} and pick \"{}\" from its \
             sessions, or set [resume] loop in the config file",
            crate::text::one_line(&s.title)
        ),
        StoreKind::Harness => format!(
            "no resume command is set for agent-harness; set [resume] harness in the config \
             file (default: {HARNESS_DEFAULT})"
        ),
    }
}

/// Split a command template into words: whitespace separates, single quotes are literal,
/// double quotes allow `\"` and `\\`, a backslash outside quotes escapes the next character.
pub fn split_words(s: &str) -> Result<Vec<String>> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => cur.push(c),
                        None => return Err(unclosed(s)),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(c @ ('"' | '\\')) => cur.push(c),
                            Some(c) => {
                                cur.push('\\');
                                cur.push(c);
                            }
                            None => return Err(unclosed(s)),
                        },
                        Some(c) => cur.push(c),
                        None => return Err(unclosed(s)),
                    }
                }
            }
            '\\' => {
                in_word = true;
                if let Some(c) = chars.next() {
                    cur.push(c);
                }
            }
            c => {
                in_word = true;
                cur.push(c);
            }
        }
    }
    if in_word {
        words.push(cur);
    }
    Ok(words)
}

fn unclosed(s: &str) -> Error {
    Error::Usage(format!("unclosed quote in resume command: {s}"))
}

/// Quote a word for a POSIX shell (single quotes unless it is plainly safe).
pub fn shell_quote(s: &str) -> String {
    let safe = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:=@%+,".contains(c));
    if safe {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_split_like_a_shell_without_running_one() {
        assert_eq!(
            split_words(r#"uv run 'agent x.py' --name "a \"b\"" c\ d $(rm)"#).unwrap(),
            [
                "uv",
                "run",
                "agent x.py",
                "--name",
                "a \"b\"",
                "c d",
                "$(rm)"
            ]
        );
        assert!(split_words("a 'b").is_err());
    }

    #[test]
    fn shell_line_quotes_everything_unsafe() {
        let p = ResumePlan {
            argv: vec!["uv".into(), "it's".into()],
            cwd: "/tmp/a b".into(),
        };
        assert_eq!(p.shell_line(), r#"cd '/tmp/a b' && uv 'it'\''s'"#);
    }
}
