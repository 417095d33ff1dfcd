//! The command line of `../shared/cli.md`: global store options and one subcommand per
//! browser action, all over the same library calls the browser uses. Printing lives in the
//! submodules; every string from a store goes through `text` before a terminal sees it.

use std::io::Write;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

mod search;
pub use search::SearchArgs;

use crate::error::{Error, Result};
use crate::export::Format;
use crate::model::StoreKind;
use crate::resume::{self, ResumeCommands};
use crate::store::registry::Filter;
use crate::store::{Store, Stores};
use crate::text;

mod actions;
mod jsonl;
mod stream;
mod table;

use actions::{delete, export_cmd, show};
pub use table::json_line;
use table::list;

/// spool: browse, search, resume, fork, archive and export AI coding agents' sessions.
#[derive(Debug, Parser)]
#[command(name = "spool", version, about, long_about = None)]
pub struct Cli {
    #[command(flatten)]
    pub stores: StoreArgs,
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// Where the stores are (all commands).
#[derive(Debug, Args, Clone, Default)]
pub struct StoreArgs {
    /// Loop agent directory (sessions under DIR/sessions/) [default: $LOOP_DATA_DIR or ~/.loop]
    #[arg(long, global = true, value_name = "DIR")]
    pub loop_dir: Option<PathBuf>,
    /// loom home (sessions under DIR/sessions/) [default: ~/.loom]
    #[arg(long, global = true, value_name = "DIR")]
    pub loom_dir: Option<PathBuf>,
    /// agent-harness memory directory (sessions under DIR/sessions/) [default: ~/.agent-harness/memory]
    #[arg(long, global = true, value_name = "DIR")]
    pub harness_dir: Option<PathBuf>,
    /// Claude Code config root, read-only (transcripts under DIR/projects/) [default: $CLAUDE_CONFIG_DIR or ~/.claude]
    #[arg(long, global = true, value_name = "DIR")]
    pub claude_dir: Option<PathBuf>,
    /// Codex CLI home, read-only (DIR/sessions/, DIR/archived_sessions/) [default: $CODEX_HOME or ~/.codex]
    #[arg(long, global = true, value_name = "DIR")]
    pub codex_dir: Option<PathBuf>,
    /// pi session root, read-only [default: $PI_CODING_AGENT_SESSION_DIR, else settings sessionDir, else <agent dir>/sessions; agent dir: $PI_CODING_AGENT_DIR or ~/.pi/agent]
    #[arg(long, global = true, value_name = "DIR")]
    pub pi_dir: Option<PathBuf>,
    /// Settings file [default: <config dir>/spool/config.toml]
    #[arg(long, global = true, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Use a private temporary copy of the bundled demo store instead of your stores
    #[arg(long, global = true)]
    pub demo: bool,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Print sessions: pinned first, then by last activity
    List(ListArgs),
    /// Print a session's transcript, context window or stored records
    Show(ShowArgs),
    /// Export a session as Markdown, HTML or JSON
    Export(ExportArgs),
    /// Pin a session to the top of the list
    Pin(RefArg),
    /// Unpin a session
    Unpin(RefArg),
    /// Mark a session read
    Read(RefArg),
    /// Mark a session unread
    Unread(RefArg),
    /// Archive a session (hidden from the list until asked)
    Archive(RefArg),
    /// Restore an archived session
    Unarchive(RefArg),
    /// Set a session's title
    Rename(RenameArgs),
    /// Fork a session into a new one in the same store
    Fork(ForkArgs),
    /// Delete a session
    Delete(DeleteArgs),
    /// Restore a recently deleted session (loom keeps deletes in a trash for 10 minutes)
    Undelete(RefArg),
    /// Resume a session in its agent, in the session's directory
    Resume(ResumeArgs),
    /// Search every message of every session (full text)
    ///
    /// The index is brought up to date first. Every session created, deleted, renamed,
    /// archived, pinned or retitled since the last search, and every session among each
    /// store's 64 most recently written, is found as it is now; so is any session written to
    /// when the last full check is more than 5 minutes old. A session shown in the results
    /// is always checked in full and re-indexed first if its files changed, so no result is
    /// stale. (An idle session written to again by an agent that was already running may be
    /// missing from the results until the next full check.)
    Search(SearchArgs),
    /// The browser's index writer, run as a child process (`index_child`).
    #[command(name = "__index", hide = true)]
    Index(crate::index_child::IndexArgs),
}

#[derive(Debug, Args)]
pub struct ListArgs {
    /// JSON Lines, one object per session
    #[arg(long)]
    pub json: bool,
    /// Show everything, archived and empty sessions included
    #[arg(long)]
    pub all: bool,
    /// Show only archived sessions
    #[arg(long)]
    pub archived: bool,
    /// Include empty sessions (no user message)
    #[arg(long)]
    pub empty: bool,
    /// Only this store: loop, loom, harness, claude, codex or pi
    #[arg(long, value_name = "F", value_parser = parse_kind)]
    pub format: Option<StoreKind>,
    /// Only sessions whose working directory is DIR
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,
    /// Quick-search filter (as `/` in the browser): title fuzzily, summary, first prompt and
    /// project as substrings; terms ANDed, fzf syntax
    #[arg(long, value_name = "Q")]
    pub query: Option<String>,
    /// At most N sessions
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
    /// Only sessions that ended so: comma-separated waiting, errored, interrupted, running,
    /// done
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = parse_ended)]
    pub ended: Vec<crate::model::Ended>,
    /// The inbox: unarchived sessions that are waiting, errored or interrupted, grouped in
    /// that order, newest first
    #[arg(long)]
    pub inbox: bool,
}

#[derive(Debug, Args)]
pub struct ShowArgs {
    /// Session: FORMAT:ID, ID, or a unique prefix
    pub reference: String,
    /// The replayed context window the agent would resume with
    #[arg(long, conflicts_with = "raw")]
    pub window: bool,
    /// The stored records
    #[arg(long)]
    pub raw: bool,
    /// JSON output
    #[arg(long, conflicts_with = "raw")]
    pub json: bool,
    /// Only the last N rounds (a user message and everything up to the next one)
    #[arg(long, value_name = "N", conflicts_with_all = ["window", "raw"],
          value_parser = parse_rounds)]
    pub last: Option<u64>,
}

#[derive(Debug, Args)]
pub struct ExportArgs {
    pub reference: String,
    /// Format: markdown (or md), html or json
    #[arg(long, value_enum, default_value = "markdown")]
    pub to: Format,
    /// Write to PATH (never overwrites) instead of stdout
    #[arg(short = 'o', long = "output", value_name = "PATH")]
    pub output: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct RefArg {
    /// Session: FORMAT:ID, ID, or a unique prefix
    pub reference: String,
}

#[derive(Debug, Args)]
pub struct RenameArgs {
    pub reference: String,
    /// The new title
    pub title: String,
}

#[derive(Debug, Args)]
pub struct ForkArgs {
    pub reference: String,
    /// Copy only the messages before stored message N (a round boundary where the format
    /// requires one)
    #[arg(long, value_name = "N")]
    pub at: Option<usize>,
    /// Stores spool only reads (claude, codex): print the agent's fork command instead of running it
    #[arg(long)]
    pub print: bool,
    /// A thread archived in Codex: let `codex unarchive` run first without asking
    #[arg(long)]
    pub yes: bool,
}

#[derive(Debug, Args)]
pub struct DeleteArgs {
    pub reference: String,
    /// Do not ask for confirmation
    #[arg(long)]
    pub yes: bool,
}

#[derive(Debug, Args)]
pub struct ResumeArgs {
    pub reference: String,
    /// Print the command (shell-quoted, with its cd) instead of running it
    #[arg(long)]
    pub print: bool,
    /// Resume without asking when the ground moved (other branch, new commits, dirty tree),
    /// and let `codex unarchive` run first for a thread archived in Codex
    #[arg(long)]
    pub yes: bool,
}

/// `--last N`: clap's own range message ("0 is not in 1..18446744073709551615") says
/// nothing a person can use.
fn parse_rounds(s: &str) -> std::result::Result<u64, String> {
    match s.trim().parse::<u64>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err("--last wants a number of rounds, 1 or more (for example --last 2)".into()),
    }
}

fn parse_ended(s: &str) -> std::result::Result<crate::model::Ended, String> {
    crate::model::ended::parse_list(s)?
        .pop()
        .ok_or_else(|| "an ending is empty".to_string())
}

fn parse_kind(s: &str) -> std::result::Result<StoreKind, String> {
    StoreKind::parse(s).ok_or_else(|| {
        format!("unknown format '{s}' (use loop, loom, harness, claude, codex or pi)")
    })
}

/// Run one subcommand; returns the process exit code.
/// `index_dir` overrides where the search index lives (the demo keeps its own, temporary).
pub fn run(
    command: Command,
    stores: &Stores,
    resume_cmds: &ResumeCommands,
    index_dir: Option<&std::path::Path>,
) -> Result<i32> {
    let mut out = std::io::stdout().lock();
    match command {
        Command::Search(a) => return search::run(&mut out, stores, &a, index_dir),
        Command::Index(a) => return Ok(crate::index_child::run(&a)),
        Command::List(a) => list(&mut out, stores, &a)?,
        Command::Show(a) => show(&mut out, stores, &a)?,
        Command::Export(a) => export_cmd(&mut out, stores, &a)?,
        Command::Pin(r) => act(stores, &r.reference, "pinned", |s, id| {
            s.set_pinned(id, true)
        })?,
        Command::Unpin(r) => act(stores, &r.reference, "unpinned", |s, id| {
            s.set_pinned(id, false)
        })?,
        Command::Read(r) => act(stores, &r.reference, "marked read", |s, id| {
            s.set_unread(id, false)
        })?,
        Command::Unread(r) => act(stores, &r.reference, "marked unread", |s, id| {
            s.set_unread(id, true)
        })?,
        Command::Archive(r) => act(stores, &r.reference, "archived", |s, id| {
            s.set_archived(id, true)
        })?,
        Command::Unarchive(r) => act(stores, &r.reference, "unarchived", |s, id| {
            s.set_archived(id, false)
        })?,
        Command::Rename(a) => act(stores, &a.reference, "renamed", |s, id| {
            s.rename(id, &a.title)
        })?,
        Command::Undelete(r) => {
            let (kind, id) = crate::store::registry::split_ref(&r.reference);
            let store = stores
                .stores
                .iter()
                .find(|s| kind.is_none_or(|k| s.kind() == k) && s.undo_delete(id).is_ok());
            match store {
                Some(s) => note(&format!("restored {}:{id}", s.kind())),
                None => {
                    return Err(Error::NotFound(format!(
                        "{} (nothing recently deleted by that name)",
                        r.reference
                    )));
                }
            }
        }
        Command::Fork(a) => {
            let s = stores.resolve(&a.reference)?;
            if s.store.read_only() {
                // spool never writes into these stores: the agent forks its own session.
                if a.at.is_some() {
                    return Err(Error::Usage(format!(
                        "{} forks whole sessions (the agent's own fork has no cut); drop --at",
                        s.store
                    )));
                }
                let plan =
                    resume::fork_plan(&s, stores.store_for(&s), resume_cmds, a.yes || a.print)?;
                return run_plan(out, &plan, a.print);
            }
            if a.print {
                return Err(Error::Usage(format!(
                    "fork --print is for stores spool only reads; {} forks are written by spool",
                    s.store
                )));
            }
            let new_id = stores.store_for(&s).fork(&s.id, a.at)?;
            writeln!(out, "{}:{new_id}", s.store).map_err(stdout_err)?;
        }
        Command::Delete(a) => delete(stores, &a)?,
        Command::Resume(a) => {
            let s = stores.resolve(&a.reference)?;
            let plan =
                resume::plan_confirmed(&s, stores.store_for(&s), resume_cmds, a.yes || a.print)?;
            if !a.print {
                actions::preflight(&s, &plan, a.yes)?;
            }
            return run_plan(out, &plan, a.print);
        }
    }
    out.flush().map_err(stdout_err)?;
    Ok(0)
}

/// Print (`--print`) or run a resume or fork command.
fn run_plan(
    mut out: std::io::StdoutLock<'_>,
    plan: &resume::ResumePlan,
    print: bool,
) -> Result<i32> {
    if !print {
        drop(out);
        return plan.run();
    }
    // The command is printed even when it cannot run here (the directory is gone, the
    // program is missing): the user may fix that, or run it elsewhere.
    if let Some(p) = plan.problem() {
        note(&format!("spool: warning: {p}"));
    }
    // Exact and inert at once: shell_quote writes controls and bidi characters as
    // `$'\xHH'`, so the same line is safe on a terminal and runs in a pipe.
    let line = plan.shell_line();
    writeln!(out, "{line}").map_err(stdout_err)?;
    out.flush().map_err(stdout_err)?;
    Ok(0)
}

/// The `list` filters (shared by `search`), with `--cwd` made absolute.
fn filter(
    all: bool,
    archived: bool,
    empty: bool,
    format: Option<StoreKind>,
    cwd: Option<&PathBuf>,
) -> Filter {
    Filter {
        all,
        archived,
        empty,
        format,
        cwd: cwd.map(|p| {
            std::path::absolute(p)
                .unwrap_or_else(|_| p.clone())
                .to_string_lossy()
                .into_owned()
        }),
    }
}

fn stdout_err(e: std::io::Error) -> Error {
    Error::io("writing", "stdout", e)
}

/// One line for people on stderr. A closed stderr is not worth a panic (`eprintln!` panics),
/// so write errors are ignored.
pub fn note(line: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{}", text::one_line(line));
}

fn act(
    stores: &Stores,
    reference: &str,
    done: &str,
    f: impl FnOnce(&dyn Store, &str) -> Result<()>,
) -> Result<()> {
    let s = stores.resolve(reference)?;
    f(stores.store_for(&s), &s.id)?;
    note(&format!("{done} {}", s.reference()));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cli_parses_contract_forms() {
        use clap::Parser;
        let c = Cli::try_parse_from([
            "spool", "list", "--json", "--format", "loom", "--limit", "3",
        ])
        .unwrap();
        assert!(matches!(
            c.command,
            Some(Command::List(ListArgs {
                json: true,
                limit: Some(3),
                ..
            }))
        ));
        let c = Cli::try_parse_from(["spool", "--demo", "show", "abc", "--last", "2"]).unwrap();
        assert!(c.stores.demo);
        assert!(Cli::try_parse_from(["spool", "list", "--format", "nope"]).is_err());
        assert!(Cli::try_parse_from(["spool", "show", "x", "--raw", "--json"]).is_err());
    }
}
