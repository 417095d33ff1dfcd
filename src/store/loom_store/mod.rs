//! The loom store: one append-only JSONL event log per session in `<loom home>/sessions/`
//! (contract: shared/formats/loom.md). loom has no pin/read/archive/title state, so spool
//! keeps it in a sidecar; the only writes to logs are new files (fork) and moves to trash.
//!
//! Layout: `scan` splits and decodes lines, `log` folds one pass into events and listing
//! facts, `listing` builds rows, `replay` mirrors loom's `/resume`, `view` renders, and
//! `write`/`fork`/`trash` are the safe writers of section 8.

mod convert;
mod ended;
mod fork;
mod listing;
mod log;
mod replay;
mod scan;
mod trash;
mod view;
mod window;
mod write;

#[cfg(test)]
mod tests_cases;
#[cfg(test)]
mod tests_page;
#[cfg(test)]
mod tests_read;
#[cfg(test)]
mod tests_write;

use std::path::{Path, PathBuf};

use super::sink::{EntrySink, WindowSink, send_whole};
use super::{Candidate, Span, Store, sink_error};
use crate::error::{Error, Result};
use crate::model::{SessionSummary, StoreKind, Transcript, Window};

pub use listing::{is_standard_id, sort_key};
pub use replay::{SUMMARY_PREFIX, reopened_notice};

/// loom's sessions under `<loom home>/sessions/`.
pub struct LoomStore {
    root: PathBuf,
    sessions: PathBuf,
}

impl LoomStore {
    /// `loom_home` is `~/.loom` (or `--loom-dir`); nothing is created.
    pub fn new(loom_home: &Path) -> Self {
        LoomStore {
            root: loom_home.to_path_buf(),
            sessions: loom_home.join("sessions"),
        }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `sessions/<id>.jsonl` when it is a regular file directly in `sessions/`.
    fn log_path(&self, id: &str) -> Result<PathBuf> {
        if id.is_empty() || id.starts_with('.') || id.contains(['/', '\0']) {
            return Err(Error::NotFound(format!("loom:{id}")));
        }
        let path = self.sessions.join(format!("{id}.jsonl"));
        match std::fs::symlink_metadata(&path) {
            Ok(m) if m.file_type().is_file() => Ok(path),
            _ => Err(Error::NotFound(format!("loom:{id}"))),
        }
    }

    /// The log of a session writers may act on: a loom-created id (section 8.1).
    fn writable_path(&self, id: &str) -> Result<PathBuf> {
        if !is_standard_id(id) {
            return Err(Error::Refused(format!(
                "loom session '{id}' does not have a loom-created id; spool only reads it"
            )));
        }
        self.log_path(id)
    }

    /// Read a session once: its events (when `keep`) and its row.
    fn load(
        &self,
        id: &str,
        path: &Path,
        keep: bool,
    ) -> std::io::Result<(log::Log, SessionSummary)> {
        let side = listing::sidecar_of(&self.sessions, id);
        let file = log::open(path)?;
        let mtime = file.metadata().ok().and_then(|m| m.modified().ok());
        let log = log::read_from(file, side.u64("read_bytes"), keep)?;
        let summary = listing::summary(id, path, mtime, &log, &side);
        Ok((log, summary))
    }

    /// The last `n` rounds holding only them (`None`: they are the whole session, read it
    /// whole): a pass that keeps only the row's facts and where each round starts, then the
    /// records from the first kept round's user message on.
    fn last_rounds(&self, id: &str, n: usize) -> Result<Option<Transcript>> {
        use std::io::{Seek, SeekFrom};
        let path = self.log_path(id)?;
        let io = |e: std::io::Error| Error::io("reading", &path, e);
        let (whole, summary) = self.load(id, &path, false).map_err(io)?;
        let total = whole.facts.user_starts.len();
        if n == 0 || n >= total {
            return Ok(None);
        }
        let first = total - n;
        let (offset, index) = whole.facts.user_starts[first];
        let mut file = log::open(&path).map_err(io)?;
        file.seek(SeekFrom::Start(offset)).map_err(io)?;
        let tail = log::read_from(file, None, true).map_err(io)?;
        Ok(Some(view::tail_transcript(
            &tail,
            &whole,
            summary,
            index as usize,
            (first, total),
        )))
    }

    /// The window's plan of `id`, its path and its row, from one pass.
    fn plan(&self, id: &str) -> Result<(window::Plan, PathBuf, SessionSummary)> {
        let path = self.log_path(id)?;
        let io = |e: std::io::Error| Error::io("reading", &path, e);
        let side = listing::sidecar_of(&self.sessions, id);
        let file = log::open(&path).map_err(io)?;
        let mtime = file.metadata().ok().and_then(|m| m.modified().ok());
        let plan = window::plan(file, side.u64("read_bytes")).map_err(io)?;
        let summary = listing::summary(id, &path, mtime, &plan.log, &side);
        Ok((plan, path, summary))
    }

    fn load_id(&self, id: &str) -> Result<(log::Log, SessionSummary)> {
        let path = self.log_path(id)?;
        self.load(id, &path, true)
            .map_err(|e| Error::io("reading", &path, e))
    }
}

impl Store for LoomStore {
    fn root_dir(&self) -> Option<&Path> {
        Some(&self.root)
    }

    fn kind(&self) -> StoreKind {
        StoreKind::Loom
    }

    fn sessions_dir(&self) -> &Path {
        &self.sessions
    }

    /// Logs sit in `sessions/` itself (a non-recursive glob, loom.md section 1): no
    /// subdirectory holds a row's input but the sidecar directory, registered on its own.
    fn watch_depth(&self) -> u32 {
        0
    }

    fn discover(&self) -> Vec<Candidate> {
        listing::discover(&self.sessions)
    }

    fn discover_unordered(&self) -> Vec<Candidate> {
        listing::discover_unordered(&self.sessions)
    }

    /// loom's ids are their start times: no log is `stat`ed to order them.
    fn orders_by_name(&self) -> bool {
        true
    }

    fn summarize(&self, c: &Candidate) -> Option<SessionSummary> {
        if c.path == self.sessions {
            return crate::store::unreadable_dir_row(StoreKind::Loom, c);
        }
        Some(match self.load(&c.id, &c.path, false) {
            Ok((_, s)) => s,
            Err(e) => {
                let mut s = SessionSummary::error_row(
                    StoreKind::Loom,
                    &c.id,
                    &c.path,
                    format!("cannot read {}: {e}", c.path.display()),
                );
                if !is_standard_id(&c.id) {
                    s.add_badge("non-standard id");
                }
                s
            }
        })
    }

    fn transcript(&self, id: &str, span: Span) -> Result<Transcript> {
        if let Span::LastRounds(n) = span
            && let Some(t) = self.last_rounds(id, n)?
        {
            return Ok(t);
        }
        let (log, summary) = self.load_id(id)?;
        Ok(view::transcript(&log, summary, span))
    }

    /// One pass for the row, the warnings and where the rounds start, then the records from
    /// the first shown round on, one line at a time: nothing but the row is held.
    fn transcript_to(&self, id: &str, span: Span, sink: &mut dyn EntrySink) -> Result<()> {
        use std::io::{Read, Seek, SeekFrom};
        if span == Span::LastRounds(0) {
            let t = self.transcript(id, span)?;
            return send_whole(t, sink).map_err(sink_error);
        }
        let path = self.log_path(id)?;
        let io = |e: std::io::Error| Error::io("reading", &path, e);
        let (whole, summary) = self.load(id, &path, false).map_err(io)?;
        let starts = &whole.facts.user_starts;
        let total = starts.len();
        let (first, (offset, index)) = match span {
            Span::LastRounds(n) if n < total => (total - n, starts[total - n]),
            _ => (0, (0, 0)),
        };
        sink.head(Transcript {
            summary,
            entries: Vec::new(),
            total_rounds: total,
            first_round: first,
            warnings: view::warnings(&whole),
            todos: None,
        })
        .map_err(sink_error)?;
        let mut file = log::open(&path).map_err(io)?;
        file.seek(SeekFrom::Start(offset)).map_err(io)?;
        // What the first pass read, not what loom appended since.
        let rest = file.take(whole.facts.size.saturating_sub(offset));
        view::send_entries(rest, index as usize, sink, &path)
    }

    fn window(&self, id: &str) -> Result<Window> {
        self.window_page(id, usize::MAX)
    }

    /// Replayed over record offsets, then each message read as it is sent: the plan and a
    /// line are held, never the log (issue 11).
    fn window_to(&self, id: &str, sink: &mut dyn WindowSink) -> Result<()> {
        let (plan, path, summary) = self.plan(id)?;
        let notice = window::notice(id);
        sink.head(plan.head(summary, &notice)).map_err(sink_error)?;
        plan.send(&path, 0, notice, &mut |m| sink.message(m))
    }

    /// Only the page's records are read again.
    fn window_page(&self, id: &str, keep: usize) -> Result<Window> {
        let (plan, path, summary) = self.plan(id)?;
        let notice = window::notice(id);
        let head = plan.head(summary, &notice);
        let mut w = head.window;
        w.omitted = plan.count().saturating_sub(keep);
        plan.send(&path, w.omitted, notice, &mut |m| {
            w.messages.push(m);
            Ok(())
        })?;
        let shown: u64 = w.messages.iter().map(|m| m.estimated_tokens()).sum();
        w.omitted_tokens = head.tokens.saturating_sub(shown);
        Ok(w)
    }

    /// The records that start in the last `bytes` (at least the last one), each
    /// pretty-printed.
    fn raw_page(&self, id: &str, bytes: u64) -> Result<(String, bool)> {
        let path = self.log_path(id)?;
        log::open(&path)
            .and_then(|mut f| super::lines::raw_page(&mut f, bytes, |r| view::raw(r)))
            .map_err(|e| Error::io("reading", &path, e))
    }

    fn raw(&self, id: &str) -> Result<String> {
        let path = self.log_path(id)?;
        log::open(&path)
            .and_then(view::raw)
            .map_err(|e| Error::io("reading", &path, e))
    }

    /// A record at a time: the log is never held whole, nor its pretty form.
    fn raw_to(&self, id: &str, out: &mut dyn FnMut(&str) -> std::io::Result<()>) -> Result<()> {
        let path = self.log_path(id)?;
        let file = log::open(&path).map_err(|e| Error::io("reading", &path, e))?;
        super::lines::raw_records(out, |each| view::raw_each(file, each)).map_err(|e| match e {
            Ok(e) => sink_error(e),
            Err(e) => Error::io("reading", &path, e),
        })
    }

    fn set_pinned(&self, id: &str, pinned: bool) -> Result<()> {
        self.writable_path(id)?;
        write::set_time_key(&self.sessions, id, "pinned_at", pinned)
    }

    fn set_unread(&self, id: &str, unread: bool) -> Result<()> {
        let path = self.writable_path(id)?;
        let log = log::read(&path, None, false).map_err(|e| Error::io("reading", &path, e))?;
        if unread {
            write::mark_unread(&self.sessions, id, &log.facts)
        } else {
            write::mark_read(&self.sessions, id, &log.facts)
        }
    }

    fn set_archived(&self, id: &str, archived: bool) -> Result<()> {
        self.writable_path(id)?;
        write::set_time_key(&self.sessions, id, "archived_at", archived)
    }

    fn rename(&self, id: &str, title: &str) -> Result<()> {
        self.writable_path(id)?;
        write::set_title(&self.sessions, id, title)
    }

    fn fork(&self, id: &str, at: Option<usize>) -> Result<String> {
        let path = self.writable_path(id)?;
        fork::fork(&self.sessions, id, &path, at)
    }

    fn delete(&self, id: &str) -> Result<()> {
        let path = self.writable_path(id)?;
        trash::delete(&self.sessions, id, &path)
    }

    fn tidy(&self) {
        trash::purge_expired(&self.sessions);
        fork::remove_stale_temps(&self.sessions);
    }

    fn undo_delete(&self, id: &str) -> Result<()> {
        if !is_standard_id(id) {
            return Err(Error::Refused(format!(
                "loom session '{id}' does not have a loom-created id; spool only reads it"
            )));
        }
        trash::undo_delete(&self.sessions, id)
    }

    fn in_use(&self, id: &str) -> bool {
        match self.log_path(id) {
            Ok(p) => trash::open_elsewhere(&p) == Some(true),
            Err(_) => false,
        }
    }
}
