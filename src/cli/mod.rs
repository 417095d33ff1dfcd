//! The command line of `../shared/cli.md`: global store options and one subcommand per
//! browser action, all over the same library calls the browser uses.

use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

mod search;
pub use search::SearchArgs;

use crate::error::{Error, Result};
use crate::export::{self, Format};
use crate::model::{SessionSummary, StoreKind};
use crate::resume::{self, ResumeCommands};
use crate::store::registry::Filter;
use crate::store::{Span, Store, Stores};
use crate::text;

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
    Search(SearchArgs),
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
    /// Only this store: loop, loom or harness
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
    /// Stores spool only reads (claude): print the agent's fork command instead of running it
    #[arg(long)]
    pub print: bool,
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
}

/// `--last N`: clap's own range message ("0 is not in 1..18446744073709551615") says
/// nothing a person can use.
fn parse_rounds(s: &str) -> std::result::Result<u64, String> {
    match s.trim().parse::<u64>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err("--last wants a number of rounds, 1 or more (for example --last 2)".into()),
    }
}

fn parse_kind(s: &str) -> std::result::Result<StoreKind, String> {
    StoreKind::parse(s)
        .ok_or_else(|| format!("unknown format '{s}' (use loop, loom, harness or claude)"))
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
                let plan = resume::fork_plan(&s, stores.store_for(&s), resume_cmds)?;
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
            let plan = resume::plan(&s, stores.store_for(&s), resume_cmds)?;
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
    // Exact for a pipe (it is meant to be run); sanitised for a terminal.
    let line = plan.shell_line();
    let line = if std::io::stdout().is_terminal() {
        text::sanitize(&line)
    } else {
        line
    };
    writeln!(out, "{line}").map_err(stdout_err)?;
    out.flush().map_err(stdout_err)?;
    Ok(0)
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

fn list(out: &mut impl Write, stores: &Stores, a: &ListArgs) -> Result<()> {
    let filter = filter(a.all, a.archived, a.empty, a.format, a.cwd.as_ref());
    let mut rows: Vec<SessionSummary> = stores
        .list_of(a.format)
        .into_iter()
        .filter(|s| filter.accepts(s))
        .collect();
    if let Some(q) = a.query.as_deref().filter(|q| !q.trim().is_empty()) {
        rows = crate::search::rank_rows(rows, q);
    }
    if let Some(n) = a.limit {
        rows.truncate(n);
    }
    if a.json {
        for r in &rows {
            writeln!(out, "{}", json_line(&r.to_json())).map_err(stdout_err)?;
        }
    } else {
        write_table(out, &rows).map_err(stdout_err)?;
    }
    Ok(())
}

/// Compact JSON with every character a terminal could act on escaped (serde_json leaves
/// DEL, C1 controls and bidi overrides raw).
pub fn json_line(v: &serde_json::Value) -> String {
    escape_json_text(&v.to_string())
}

fn escape_json_text(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        let risky = ('\u{7f}'..='\u{9f}').contains(&c)
            || matches!(c, '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2028}'
                | '\u{2029}' | '\u{2060}'..='\u{206F}' | '\u{FEFF}');
        if risky {
            out.push_str(&format!("\\u{:04x}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

fn write_table(out: &mut impl Write, rows: &[SessionSummary]) -> std::io::Result<()> {
    let ref_w = rows
        .iter()
        .map(|r| r.reference().chars().count())
        .max()
        .unwrap_or(3)
        .max(3);
    // Terminal columns, not chars: a CJK project name is twice as wide as it is long.
    let proj = |r: &SessionSummary| text::fit(&text::one_line(r.project()), 20);
    let proj_w = rows
        .iter()
        .map(|r| unicode_width::UnicodeWidthStr::width(proj(r).as_str()))
        .max()
        .unwrap_or(7)
        .max(7);
    writeln!(
        out,
        "{:3} {:ref_w$}  {:16}  {:>5}  {:proj_w$}  TITLE",
        "", "REF", "UPDATED", "MSGS", "PROJECT"
    )?;
    for r in rows {
        let flags = format!(
            "{}{}{}",
            if r.error.is_some() {
                '!'
            } else if r.pinned() {
                'P'
            } else {
                ' '
            },
            if r.unread { 'U' } else { ' ' },
            if r.archived { 'A' } else { ' ' }
        );
        let updated = r
            .last_activity()
            .map(|t| t.format("%Y-%m-%d %H:%M").to_string())
            .unwrap_or_else(|| "-".into());
        let mut title = text::one_line(&r.title);
        if let Some(e) = &r.error {
            title = format!("{title}  [error: {}]", text::one_line(e));
        }
        writeln!(
            out,
            "{flags} {:ref_w$}  {updated:16}  {:>5}  {}  {title}",
            r.reference(),
            r.messages,
            text::pad(&proj(r), proj_w),
        )?;
    }
    Ok(())
}

fn show(out: &mut impl Write, stores: &Stores, a: &ShowArgs) -> Result<()> {
    let s = stores.resolve(&a.reference)?;
    let store = stores.store_for(&s);
    let body = if a.raw {
        text::sanitize(&store.raw(&s.id)?)
    } else if a.window {
        let w = store.window(&s.id)?;
        if a.json {
            pretty_json(&w.to_json())
        } else {
            text::sanitize(&export::window_markdown(&w))
        }
    } else {
        let span = a.last.map_or(Span::All, |n| Span::LastRounds(n as usize));
        let t = store.transcript(&s.id, span)?;
        if a.json {
            pretty_json(&t.to_json())
        } else {
            // The export banner warns about sharing a file; `show` writes none.
            text::sanitize(&export::transcript_markdown(&t))
        }
    };
    out.write_all(body.as_bytes()).map_err(stdout_err)?;
    if !body.ends_with('\n') {
        writeln!(out).map_err(stdout_err)?;
    }
    Ok(())
}

fn pretty_json(v: &serde_json::Value) -> String {
    escape_json_text(&serde_json::to_string_pretty(v).expect("JSON value"))
}

fn export_cmd(out: &mut impl Write, stores: &Stores, a: &ExportArgs) -> Result<()> {
    let s = stores.resolve(&a.reference)?;
    let t = stores.store_for(&s).transcript(&s.id, Span::All)?;
    let body = export::render(&t, a.to);
    match &a.output {
        Some(path) => {
            export::write_new(path, &body)?;
            note(&format!("exported {} to {}", s.reference(), path.display()));
        }
        None => {
            // To a terminal, session text is sanitised; to a pipe or file, exact.
            let body = if std::io::stdout().is_terminal() {
                text::sanitize(&body)
            } else {
                body
            };
            out.write_all(body.as_bytes()).map_err(stdout_err)?;
        }
    }
    Ok(())
}

fn delete(stores: &Stores, a: &DeleteArgs) -> Result<()> {
    let s = stores.resolve(&a.reference)?;
    if s.store.read_only() {
        // Refused before asking: there is nothing to confirm.
        return stores.store_for(&s).delete(&s.id);
    }
    if !a.yes {
        if !std::io::stdin().is_terminal() {
            return Err(Error::Refused(format!(
                "not deleting {} without confirmation; pass --yes",
                s.reference()
            )));
        }
        let first = if crate::store::delete_archives_first(&s) {
            " (Loop deletes only archived sessions: it is archived first)"
        } else {
            ""
        };
        let _ = write!(
            std::io::stderr().lock(),
            "Delete {} \"{}\"{first}? [y/N] ",
            s.reference(),
            text::one_line(&s.title)
        );
        let mut answer = String::new();
        std::io::stdin()
            .lock()
            .read_line(&mut answer)
            .map_err(|e| Error::io("reading", "stdin", e))?;
        if !matches!(answer.trim(), "y" | "Y" | "yes") {
            return Err(Error::Refused("delete cancelled".into()));
        }
    }
    crate::store::delete_confirmed(stores.store_for(&s), &s)?;
    note(&format!("deleted {}", s.reference()));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_lines_escape_terminal_controls() {
        let v = serde_json::json!({"t": "a\u{1b}[2Jb\u{9b}c\u{202e}d"});
        let s = json_line(&v);
        assert!(!s.contains('\u{1b}') && !s.contains('\u{9b}') && !s.contains('\u{202e}'));
        let back: serde_json::Value = serde_json::from_str(&s).unwrap();
        assert_eq!(back, v, "escaping keeps the JSON value");
    }

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

    #[test]
    fn the_table_aligns_wide_project_names_by_columns() {
        use crate::model::StoreKind;
        let mut a = SessionSummary::new(StoreKind::Loop, "aaaa0001", "/p");
        a.cwd = Some("/src/日本語".into());
        let mut b = SessionSummary::new(StoreKind::Loop, "bbbb0002", "/p");
        b.cwd = Some("/src/abc".into());
        let mut out = Vec::new();
        write_table(&mut out, &[a, b]).unwrap();
        let out = String::from_utf8(out).unwrap();
        // The title starts after the last two-space gap; it must sit in the same column.
        let title_col: Vec<usize> = out
            .lines()
            .map(|l| unicode_width::UnicodeWidthStr::width(&l[..l.rfind("  ").unwrap() + 2]))
            .collect();
        assert!(title_col.windows(2).all(|w| w[0] == w[1]), "{out}");
    }
}
