//! Resuming a session in its agent: the per-store command template (placeholders `{id}`
//! `{path}` `{cwd}` `{store}`, split into argv and run without a shell), the pre-flight checks
//! (not in use, not archived; directory and program usable before running), and the
//! shell-quoted `--print` form.
//!
//! Layout: `commands` holds the templates from `[resume]`, `plan` checks a session and fills
//! its template, `run` checks the directory and program and runs the plan, `words` splits
//! templates and quotes words for a shell.

mod commands;
mod plan;
mod run;
mod words;

#[cfg(test)]
mod tests;

pub use commands::*;
pub use plan::{CODEX_ARCHIVED, fork_plan, needs_unarchive, plan, plan_confirmed};
pub use run::ResumePlan;
pub use words::{shell_quote, split_words};
