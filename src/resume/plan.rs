//! From a session to a `ResumePlan`: the refusals (error row, archived, in use, no directory,
//! id outside its contract), the store's template filled without a shell, and the option-like
//! id guard.

use std::path::PathBuf;

use super::commands::*;
use super::run::ResumePlan;
use super::words::split_words;
use crate::error::{Error, Result};
use crate::model::{SessionSummary, StoreKind};
use crate::store::Store;

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
    s.store == StoreKind::Codex && s.badges().any(|b| b == CODEX_ARCHIVED)
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
    if let Some(e) = &s.error() {
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
            .replace("{path}", &s.path().to_string_lossy())
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
pub(super) fn contract_id(kind: StoreKind, id: &str) -> bool {
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
pub(super) fn substitute(
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
            crate::text::one_line(s.title())
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
