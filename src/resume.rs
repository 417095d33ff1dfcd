//! Resuming a session in its agent: the per-store command template (placeholders `{id}`
//! `{path}` `{cwd}` `{store}`, split into argv and run without a shell), the pre-flight checks
//! (not in use, not archived; directory and program usable before running), and the
//! shell-quoted `--print` form.

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
    pub claude_cmd: Option<String>,
    /// `[resume] claude_fork`: the fork command (default `CLAUDE_FORK_DEFAULT`).
    pub claude_fork: Option<String>,
    pub codex_cmd: Option<String>,
    /// `[resume] codex_fork`: the fork command (default `CODEX_FORK_DEFAULT`).
    pub codex_fork: Option<String>,
    pub pi_cmd: Option<String>,
    /// `[resume] pi_fork`: the fork command (default `PI_FORK_DEFAULT`).
    pub pi_fork: Option<String>,
}

/// agent-harness's own resume invocation (its CLI takes the memory dir explicitly).
pub const HARNESS_DEFAULT: &str = "uv run agent.py --resume {id} --memory-dir {store}";
/// Claude Code finds a session only from the directory it was started in, so this runs in
/// the session's launch dir (claude-code.md section 8).
pub const CLAUDE_DEFAULT: &str = "claude --resume {id}";
pub const CLAUDE_FORK_DEFAULT: &str = "claude --resume {id} --fork-session";
/// Codex resolves names too, but a name can pick a thread of another project
/// (openai/codex#30995): spool always passes the UUID (codex.md section 8).
pub const CODEX_DEFAULT: &str = "codex resume {id}";
pub const CODEX_FORK_DEFAULT: &str = "codex fork {id}";
/// pi opens a session by its file path (older builds take only a path), in the header cwd
/// so its tools and project config resolve as they did (pi.md section 8).
pub const PI_DEFAULT: &str = "pi --session {path}";
pub const PI_FORK_DEFAULT: &str = "pi --fork {path}";

impl Default for ResumeCommands {
    fn default() -> Self {
        ResumeCommands {
            loop_cmd: None,
            loom_cmd: None,
            harness_cmd: Some(HARNESS_DEFAULT.to_string()),
            claude_cmd: Some(CLAUDE_DEFAULT.to_string()),
            claude_fork: None,
            codex_cmd: Some(CODEX_DEFAULT.to_string()),
            codex_fork: None,
            pi_cmd: Some(PI_DEFAULT.to_string()),
            pi_fork: None,
        }
    }
}

impl ResumeCommands {
    pub fn for_kind(&self, kind: StoreKind) -> Option<&str> {
        match kind {
            StoreKind::Loop => self.loop_cmd.as_deref(),
            StoreKind::Loom => self.loom_cmd.as_deref(),
            StoreKind::Harness => self.harness_cmd.as_deref(),
            StoreKind::Claude => self.claude_cmd.as_deref(),
            StoreKind::Codex => self.codex_cmd.as_deref(),
            StoreKind::Pi => self.pi_cmd.as_deref(),
        }
        .filter(|s| !s.trim().is_empty())
    }
}

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

/// The agent's own fork command for a store spool only reads (claude-code.md section 8:
/// `claude --resume <id> --fork-session`, in the launch dir), `[resume] claude_fork` to
/// override. Same checks as resume.
pub fn fork_plan(
    s: &SessionSummary,
    store: &dyn Store,
    cmds: &ResumeCommands,
    unarchive_ok: bool,
) -> Result<ResumePlan> {
    let template = match s.store {
        StoreKind::Claude => cmds.claude_fork.as_deref().unwrap_or(CLAUDE_FORK_DEFAULT),
        StoreKind::Codex => cmds.codex_fork.as_deref().unwrap_or(CODEX_FORK_DEFAULT),
        StoreKind::Pi => cmds.pi_fork.as_deref().unwrap_or(PI_FORK_DEFAULT),
        other => {
            return Err(Error::Refused(format!(
                "{other} sessions are forked by spool itself"
            )));
        }
    };
    let with = ResumeCommands {
        claude_cmd: Some(template.to_string()),
        codex_cmd: Some(template.to_string()),
        pi_cmd: Some(template.to_string()),
        ..cmds.clone()
    };
    plan_confirmed(s, store, &with, unarchive_ok)
}

/// The badge of a thread Codex itself archived (`archived_sessions/`): resume and fork need
/// `codex unarchive` first, which the browser offers with a confirmation.
pub const CODEX_ARCHIVED: &str = "archived in Codex";

/// Whether resuming `s` first needs the agent to unarchive it (asked before, never silently).
pub fn needs_unarchive(s: &SessionSummary) -> bool {
    s.store == StoreKind::Codex && s.badges.iter().any(|b| b == CODEX_ARCHIVED)
}

/// Check that `s` can be resumed and build the command. Every refusal is one sentence that
/// says what to do instead.
pub fn plan(s: &SessionSummary, store: &dyn Store, cmds: &ResumeCommands) -> Result<ResumePlan> {
    plan_confirmed(s, store, cmds, false)
}

/// `plan`, where `unarchive_ok` says the user confirmed that the agent may unarchive the
/// session first (Codex's archived threads; `resume --yes`, the browser's dialog).
pub fn plan_confirmed(
    s: &SessionSummary,
    store: &dyn Store,
    cmds: &ResumeCommands,
    unarchive_ok: bool,
) -> Result<ResumePlan> {
    if let Some(e) = &s.error {
        return Err(Error::Refused(format!(
            "{} cannot be resumed: {e}",
            s.reference()
        )));
    }
    let launch = store.launch(s)?;
    if launch.unarchive_first && !unarchive_ok {
        return Err(Error::Refused(format!(
            "{} is archived in Codex, which resumes it only after `codex unarchive {}`: run \
             that, or pass --yes to have spool run it first",
            s.reference(),
            launch.id
        )));
    }
    if s.archived && !launch.unarchive_first {
        return Err(Error::Refused(format!(
            "{} is archived; unarchive it before resuming",
            s.reference()
        )));
    }
    let cwd = match (&launch.cwd, s.store) {
        (Some(cwd), _) => cwd.clone(),
        // harness.md: a record without `project_root` resumes from any directory, so it
        // runs in the current one.
        (None, StoreKind::Harness) => std::env::current_dir()
            .map_err(|e| Error::io("reading the current directory", ".", e))?
            .to_string_lossy()
            .into_owned(),
        (None, _) => {
            return Err(Error::Refused(format!(
                "{} has no recorded working directory",
                s.reference()
            )));
        }
    };
    // A missing directory is not refused here: `--print` still prints (with a warning) and
    // `run` refuses with the cause (`ResumePlan::problem`).
    if !contract_id(s.store, &launch.id) {
        return Err(Error::Refused(format!(
            "{} does not have a valid {} session id; spool does not pass it to the agent",
            crate::text::one_line(&s.reference()),
            s.store
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
    let fill = |w: &str| {
        w.replace("{id}", &launch.id)
            .replace("{path}", &s.path.to_string_lossy())
            .replace("{cwd}", &cwd)
            .replace("{store}", &root.to_string_lossy())
    };
    let argv = substitute(&split_words(template)?, fill)
        .map_err(|word| Error::Refused(option_like(s, &word)))?;
    if argv.is_empty() {
        return Err(Error::Usage(format!(
            "the resume command for {} is empty",
            s.store
        )));
    }
    // The agent's own unarchive, with the program the template runs (a custom path too).
    let before = if launch.unarchive_first {
        vec![vec![argv[0].clone(), "unarchive".into(), launch.id.clone()]]
    } else {
        Vec::new()
    };
    Ok(ResumePlan {
        argv,
        cwd: PathBuf::from(cwd),
        before,
    })
}

/// The id rule of the session's contract: Loop `[a-f0-9-]{36}`, loom `YYYYMMDD-hhmmss[-N]`,
/// harness `[A-Za-z0-9_-]+`, Claude Code `[A-Za-z0-9][A-Za-z0-9._-]*`. Anything else is refused before it
/// reaches an argv.
fn contract_id(kind: StoreKind, id: &str) -> bool {
    match kind {
        StoreKind::Loop => crate::store::loop_store::valid_id(id),
        StoreKind::Loom => crate::store::loom_store::is_standard_id(id),
        StoreKind::Harness => crate::store::harness_store::valid_id(id),
        StoreKind::Claude => crate::store::claude_store::valid_id(id),
        StoreKind::Codex => crate::store::codex_store::is_uuid(id),
        StoreKind::Pi => crate::store::pi_store::valid_id(id),
    }
}

/// Fill the template's words. A word that starts with a placeholder and comes out starting
/// with `-` (a harness id may: `-rf`) would be read by the agent as an option, so it is passed
/// after a `--` the template has, or joined to the long option before it (`--resume=-rf`);
/// otherwise it is refused (`Err` with the word).
fn substitute(
    words: &[String],
    fill: impl Fn(&str) -> String,
) -> std::result::Result<Vec<String>, String> {
    let mut argv: Vec<String> = Vec::with_capacity(words.len());
    let mut after_separator = false;
    for w in words {
        let value = fill(w);
        let option_like = w.starts_with('{') && value.starts_with('-');
        if !option_like || after_separator {
            after_separator |= w == "--";
            argv.push(value);
            continue;
        }
        match argv.last_mut() {
            Some(prev) if prev.starts_with("--") && prev.len() > 2 && !prev.contains('=') => {
                prev.push('=');
                prev.push_str(&value);
            }
            _ => return Err(value),
        }
    }
    Ok(argv)
}

fn option_like(s: &SessionSummary, word: &str) -> String {
    format!(
        "{} would pass `{}` to the agent as an option; put `--` before it in [resume] {}",
        crate::text::one_line(&s.reference()),
        crate::text::one_line(word),
        s.store
    )
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
        StoreKind::Claude => format!(
            "no resume command is set for Claude Code; set [resume] claude in the config \
             file (default: {CLAUDE_DEFAULT})"
        ),
        StoreKind::Codex => format!(
            "no resume command is set for Codex; set [resume] codex in the config file \
             (default: {CODEX_DEFAULT})"
        ),
        StoreKind::Pi => format!(
            "no resume command is set for pi; set [resume] pi in the config file (default: \
             {PI_DEFAULT})"
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
    } else if s.chars().any(crate::text::terminal_unsafe) {
        ansi_c_quote(s)
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// bash's `$'…'` form: controls, bidi overrides and zero-width characters become `\xHH` per
/// UTF-8 byte, so the line is inert on a terminal and still names exactly the same path.
fn ansi_c_quote(s: &str) -> String {
    let mut out = String::from("$'");
    for c in s.chars() {
        match c {
            '\'' => out.push_str("\\'"),
            '\\' => out.push_str("\\\\"),
            c if crate::text::terminal_unsafe(c) => {
                let mut buf = [0u8; 4];
                for b in c.encode_utf8(&mut buf).bytes() {
                    out.push_str(&format!("\\x{b:02x}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push('\'');
    out
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
            before: Vec::new(),
        };
        assert_eq!(p.shell_line(), r#"cd '/tmp/a b' && uv 'it'\''s'"#);
    }

    #[test]
    fn option_like_ids_never_reach_an_argv_as_options() {
        let words = |t: &str| split_words(t).unwrap();
        let id = |w: &str| w.replace("{id}", "-rf");
        assert_eq!(
            substitute(&words("agent --resume {id} --memory-dir /m"), id).unwrap(),
            ["agent", "--resume=-rf", "--memory-dir", "/m"]
        );
        assert_eq!(
            substitute(&words("agent resume -- {id}"), id).unwrap(),
            ["agent", "resume", "--", "-rf"]
        );
        assert_eq!(substitute(&words("loom -r {id}"), id).unwrap_err(), "-rf");
        assert_eq!(substitute(&words("agent {id}"), id).unwrap_err(), "-rf");
        // Ids per contract: a loom log named `-rf.jsonl` is not a loom id.
        assert!(!contract_id(StoreKind::Loom, "-rf"));
        assert!(!contract_id(StoreKind::Loop, "-rf"));
        assert!(contract_id(StoreKind::Harness, "-rf"));
        assert!(contract_id(StoreKind::Loom, "20260314-091502"));
    }

    #[test]
    fn hostile_paths_are_quoted_inert_and_exact() {
        let cwd = "/tmp/a\u{1b}]52;c;aGk=\u{7}\u{1b}[2J b\u{202e}c'd\\e\n\u{9b}f";
        let p = ResumePlan {
            argv: vec!["loom".into(), "--resume".into()],
            cwd: cwd.into(),
            before: Vec::new(),
        };
        let line = p.shell_line();
        assert!(!line.chars().any(crate::text::terminal_unsafe), "{line:?}");
        // bash reads the quoted word back to exactly the same bytes.
        let word = line
            .strip_prefix("cd ")
            .unwrap()
            .split(" && ")
            .next()
            .unwrap();
        let out = std::process::Command::new("bash")
            .args(["-c", &format!("printf %s {word}")])
            .output()
            .unwrap();
        assert_eq!(String::from_utf8(out.stdout).unwrap(), cwd);
    }

    fn plan_in(cwd: &Path, program: &str) -> ResumePlan {
        ResumePlan {
            argv: vec![program.into(), "--resume".into()],
            cwd: cwd.to_path_buf(),
            before: Vec::new(),
        }
    }

    fn refusal(p: &ResumePlan) -> String {
        p.run().unwrap_err().to_string()
    }

    #[test]
    fn a_failed_start_says_what_failed_first() {
        let d = tempfile::tempdir().unwrap();
        // A program missing from PATH is not reported as a missing directory.
        let e = refusal(&plan_in(d.path(), "spool-no-such-agent"));
        assert!(
            e.starts_with("spool-no-such-agent: command not found on PATH"),
            "{e}"
        );
        // A missing directory, a file where the directory should be, a program that is
        // not executable: each says so.
        let gone = d.path().join("gone");
        let e = refusal(&plan_in(&gone, "sh"));
        assert!(
            e.starts_with("the session's directory no longer exists"),
            "{e}"
        );
        let file = d.path().join("file");
        std::fs::write(&file, "").unwrap();
        let e = refusal(&plan_in(&file, "sh"));
        assert!(
            e.starts_with("the session's directory is not a directory"),
            "{e}"
        );
        let e = refusal(&plan_in(d.path(), "./file"));
        assert!(e.starts_with("./file: permission denied"), "{e}");
        // What works still runs.
        assert_eq!(plan_in(d.path(), "true").run().unwrap(), 0);
    }

    #[test]
    fn a_harness_record_without_project_root_resumes_here() {
        let d = tempfile::tempdir().unwrap();
        let store = crate::store::harness_store::HarnessStore::new(d.path());
        let mut s = SessionSummary::new(StoreKind::Harness, "abc", d.path().join("abc.json"));
        s.has_user_message = true;
        let p = plan(&s, &store, &ResumeCommands::default()).unwrap();
        assert_eq!(p.cwd, std::env::current_dir().unwrap());
        // Other stores still need a recorded directory.
        s.store = StoreKind::Loom;
        assert!(plan(&s, &store, &ResumeCommands::default()).is_err());
    }
}
