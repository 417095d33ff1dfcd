//! The pi coding agent store, read-only (contract: shared/formats/pi.md). Sessions are JSONL
//! entry trees under the session root (`--<encoded cwd>--/<time>_<id>.jsonl`); spool never
//! creates, edits or removes anything there. Its pin, read, archive and title state lives in
//! spool's state directory (`store::state`), and fork and resume go through `pi` itself.
//!
//! Layout: `discover` finds the root and the files, `read` splits and decodes lines, `tree`
//! finds the active leaf, path and branches, `listing` derives the row, `transcript` turns
//! the path into messages, `window` replays the context window, `stream` sends both an
//! entry at a time from a slim first pass and the path's lines read again by offset;
//! `newest` finds a cold start's first screen from the names alone.

mod discover;
mod listing;
mod newest;
mod read;
mod stream;
mod transcript;
mod tree;
mod window;

#[cfg(test)]
mod tests_malformed;
#[cfg(test)]
mod tests_read;
#[cfg(test)]
mod tests_stream;

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use super::state::{self, StateDir};
use super::{Candidate, Span, Store};
use crate::error::{Error, Result};
use crate::model::{SessionSummary, StoreKind, Transcript, Window};

pub use discover::{agent_dir, default_root, valid_id};
use read::Header;

/// The state directory's name for this store (formats README).
pub const STATE_NAME: &str = "pi";

/// pi's sessions under one session root.
pub struct PiStore {
    root: PathBuf,
    state: StateDir,
}

/// One session read for listing.
struct Loaded {
    parsed: read::Parsed,
    facts: listing::Facts,
    summary: SessionSummary,
}

/// Why a row cannot be resumed: pi would truncate the file to a fresh header (6.1).
const INVALID_HEADER: &str = "invalid header (pi would reset this file)";

impl PiStore {
    /// `root` is the session root (`--pi-dir`, or pi's own rule: `discover::default_root`);
    /// `state_root` is spool's `<data dir>/spool/state`. Nothing is created.
    pub fn new(root: &Path, state_root: &Path) -> Self {
        PiStore {
            root: root.to_path_buf(),
            state: StateDir::new(state_root, STATE_NAME),
        }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The file of session `id`: the newest file whose stem names it, else (files named by
    /// other tools) the newest whose header does.
    fn locate(&self, id: &str) -> Result<PathBuf> {
        let not_found = || Error::NotFound(format!("pi:{id}"));
        if !valid_id(id) {
            return Err(not_found());
        }
        if let Some(c) = discover::named(&self.root, id).into_iter().next() {
            return Ok(c.path);
        }
        discover::discover(&self.root)
            .into_iter()
            .filter(|c| c.path.is_file())
            .find(|c| header_id(&c.path).as_deref() == Some(id))
            .map(|c| c.path)
            .ok_or_else(not_found)
    }

    /// The file a listed row names, while it still names that session (by its stem, or by
    /// its header for a file another tool named); else the session's file found by id.
    fn listed_file(&self, row: &SessionSummary) -> Result<PathBuf> {
        let p = row.path();
        let named = valid_id(&row.id)
            && p.starts_with(&self.root)
            && (*listing::stem_id(&p) == *row.id || header_id(&p).as_deref() == Some(&*row.id));
        if named { Ok(p) } else { self.locate(&row.id) }
    }

    /// The row of the file at `path`, from a read in `mode` (`Scan` for the streamed views).
    fn load(&self, path: &Path, mode: read::Mode) -> std::io::Result<Loaded> {
        let mut parsed = read::read(path, mode)?;
        // pi rewrites files in place (not atomically): a file caught empty mid-rewrite is
        // read once more (DECIDED 14).
        let fresh = parsed
            .mtime
            .and_then(|m| SystemTime::now().duration_since(m).ok())
            .is_some_and(|a| a < Duration::from_secs(2));
        if parsed.size == 0 && fresh {
            std::thread::sleep(Duration::from_millis(200));
            parsed = read::read(path, mode)?;
        }
        let t = tree::build(&parsed.ents);
        let facts = listing::facts(&parsed, &t);
        let parent = match &parsed.header {
            Header::Valid {
                parent: Some(pp), ..
            } => parent_row(Path::new(pp)),
            _ => None,
        };
        let mut summary = listing::summary(path, &parsed, &facts, parent, SystemTime::now());
        match &parsed.header {
            Header::Valid { .. } => {}
            Header::Invalid if !parsed.ents.is_empty() => {
                summary.set_error(Some(INVALID_HEADER.into()));
            }
            // Not pi's: shown only with the empty sessions, never resumed (no cwd).
            _ => {
                summary.cwd = None;
                summary.has_user_message = false;
                summary.insert_badge(0, "not a pi session");
            }
        }
        if valid_id(&summary.id) {
            let st = self.state.read(&summary.id);
            state::apply(&mut summary, &st, facts.newest_assistant);
        } else {
            summary.add_badge("id spool cannot keep state for");
        }
        Ok(Loaded {
            parsed,
            facts,
            summary,
        })
    }

    fn load_id(&self, id: &str, mode: read::Mode) -> Result<(PathBuf, Loaded)> {
        let path = self.locate(id)?;
        let l = self
            .load(&path, mode)
            .map_err(|e| Error::io("reading", &path, e))?;
        Ok((path, l))
    }

    fn warnings(p: &read::Parsed, t: &tree::Tree) -> Vec<String> {
        let mut w = Vec::new();
        if matches!(p.header, Header::Invalid) {
            w.push(format!("{INVALID_HEADER}: shown for reading only"));
        }
        if p.bad > 0 {
            w.push(format!("{} unreadable line(s) skipped", p.bad));
        }
        if p.truncated {
            w.push("the last line is cut off (the writer stopped mid-line)".into());
        }
        if p.pending {
            w.push("the last line is still being written".into());
        }
        for len in &p.oversized {
            w.push(format!("oversized line ({} MB) skipped", len / 1_000_000));
        }
        if p.lossy > 0 {
            w.push(format!("{} line(s) held invalid UTF-8", p.lossy));
        }
        if p.v1 > 0 {
            w.push(format!(
                "{} entries without ids (version 1) linked in file order",
                p.v1
            ));
        }
        if t.duplicates > 0 {
            w.push(format!(
                "{} duplicate entry id(s): the later entry wins",
                t.duplicates
            ));
        }
        w
    }

    /// The fork's parent: `(pi:<id> "title", ids and types of its entries)`, or a notice
    /// when its file is gone.
    fn parent_of(p: &read::Parsed) -> (Option<String>, HashMap<String, String>, Option<String>) {
        let Header::Valid {
            parent: Some(pp), ..
        } = &p.header
        else {
            return (None, HashMap::new(), None);
        };
        match read::read(Path::new(pp), read::Mode::List) {
            Ok(pp_parsed) => {
                let t = tree::build(&pp_parsed.ents);
                let f = listing::facts(&pp_parsed, &t);
                let id = match &pp_parsed.header {
                    Header::Valid { id, .. } => id.clone(),
                    _ => listing::stem_id(Path::new(pp)),
                };
                let ids = pp_parsed.ents.into_iter().map(|e| (e.id, e.kind)).collect();
                (
                    Some(format!("pi:{id} \"{}\"", listing::title(&f))),
                    ids,
                    None,
                )
            }
            Err(_) => (None, HashMap::new(), Some(format!("parent missing: {pp}"))),
        }
    }

    /// The refusal for anything that would write into pi's directory.
    fn read_only(&self, what: &str, id: &str) -> Error {
        Error::Refused(format!(
            "spool does not {what} pi sessions: it never writes inside {} (pi owns those \
             files); archive pi:{id} to hide it in spool instead",
            self.root.display()
        ))
    }
}

/// The header id of a file (its first line only).
fn header_id(path: &Path) -> Option<String> {
    let f = read::open(path).ok()?;
    let mut first = None;
    crate::store::lines::for_each_line(std::io::Read::take(f, 1 << 20), 1 << 20, |l| {
        if let crate::store::lines::RawLine::Line { bytes, .. } = l
            && first.is_none()
            && !bytes.iter().all(u8::is_ascii_whitespace)
        {
            first = Some(crate::store::json_first::parse(bytes));
        }
    })
    .ok()?;
    let v = first??;
    (v.get("type")?.as_str()? == "session").then(|| v.get("id")?.as_str().map(str::to_string))?
}

/// The parent of a fork, as `(id, title)` (its derived title, for the ` (fork)` rule).
fn parent_row(pp: &Path) -> Option<(String, String)> {
    let p = read::read(pp, read::Mode::List).ok()?;
    let id = match &p.header {
        Header::Valid { id, .. } => id.clone(),
        _ => return None,
    };
    let t = tree::build(&p.ents);
    Some((id, listing::title(&listing::facts(&p, &t))))
}

impl Store for PiStore {
    fn root_dir(&self) -> Option<&Path> {
        Some(&self.root)
    }

    fn kind(&self) -> StoreKind {
        StoreKind::Pi
    }

    fn sessions_dir(&self) -> &Path {
        &self.root
    }

    fn state_file(&self, id: &str) -> PathBuf {
        self.state.file(id)
    }

    fn discover(&self) -> Vec<Candidate> {
        discover::discover(&self.root)
    }

    /// Each directory's candidates packed and keyed on the thread that listed them, and
    /// the pieces joined: never all held as candidates at once (issue 10: the candidates of
    /// every directory, then merged beside them, were a warm start's peak at 100k
    /// sessions).
    fn discover_packed(
        &self,
        keyer: &crate::catalog::survey::Keyer<'_>,
    ) -> crate::catalog::packed::Packed {
        use crate::catalog::packed::Packed;
        Packed::join(discover::by_dir(&self.root, None, |found| {
            Packed::keyed(found, keyer)
        }))
    }

    /// Each directory's candidates keyed on the thread that listed them, in no order (as
    /// Claude Code's `discover_keyed`).
    fn discover_keyed(
        &self,
        keyer: &crate::catalog::survey::Keyer<'_>,
    ) -> (Vec<Candidate>, Vec<u64>) {
        super::concat_keyed(discover::by_dir(&self.root, None, |found| {
            let keys = keyer.keys(&found);
            (found, keys)
        }))
    }

    /// The newest sessions by the start time in their names, stat'ed alone (see `newest`).
    fn first_screen(&self, n: usize) -> Vec<Candidate> {
        newest::first_screen(&self.root, n)
    }

    fn summarize(&self, c: &Candidate) -> Option<SessionSummary> {
        if c.path.is_dir() {
            return super::unreadable_dir_row(StoreKind::Pi, c);
        }
        Some(match self.load(&c.path, read::Mode::List) {
            Ok(l) => l.summary,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                SessionSummary::error_row(StoreKind::Pi, &c.id, &c.path, "deleted (by pi?)")
            }
            Err(e) => SessionSummary::error_row(
                StoreKind::Pi,
                &c.id,
                &c.path,
                format!("cannot read {}: {e}", c.path.display()),
            ),
        })
    }

    /// Files are spread over the cores; two files with one header id (a copied file) keep
    /// the newest as the session and mark the others (DECIDED, section 1).
    fn list(&self) -> Vec<SessionSummary> {
        let candidates = self.discover();
        let threads = crate::store::cores().map_or(1, |n| n.get()).clamp(1, 8);
        let chunk = candidates.len().div_ceil(threads).max(1);
        let mut rows = super::gather_parallel(candidates.chunks(chunk), |part| {
            part.iter().filter_map(|c| self.summarize(c)).collect()
        });
        // Candidates come newest first, so the first row of an id is the one that wins.
        let mut seen = HashSet::new();
        for r in &mut rows {
            if !seen.insert(r.id.clone()) {
                r.insert_badge(0, "duplicate id");
                if r.error().is_none() {
                    let why = format!("duplicate id: a newer file holds pi:{}", r.id);
                    r.set_error(Some(why));
                }
                r.read_only = true;
            }
        }
        rows
    }

    fn transcript(&self, id: &str, span: Span) -> Result<Transcript> {
        crate::store::sink::gathered(|all| self.send_all(id, span, all))?
            .ok_or_else(|| Error::NotFound(format!("pi:{id}")))
    }

    /// Read in passes: the entries' lines one at a time (`stream`).
    fn transcript_to(
        &self,
        id: &str,
        span: Span,
        sink: &mut dyn crate::store::sink::EntrySink,
    ) -> Result<()> {
        self.send_all(id, span, sink)
    }

    /// The listed file alone, read as the transcript reads it (`stream::send_indexed`).
    fn index_entries_to(
        &self,
        row: &SessionSummary,
        sink: &mut dyn crate::store::sink::EntrySink,
    ) -> Result<()> {
        self.send_indexed(row, sink)
    }

    fn window(&self, id: &str) -> Result<Window> {
        self.window_page(id, usize::MAX)
    }

    /// Replayed in passes: the replayed entries' lines one at a time (`stream`).
    fn window_to(&self, id: &str, sink: &mut dyn crate::store::sink::WindowSink) -> Result<()> {
        self.send_window(id, sink)
    }

    fn raw(&self, id: &str) -> Result<String> {
        crate::store::sink::raw_gathered(|out| self.raw_to(id, out))
    }

    /// A record at a time, never the file or its pretty form whole.
    fn raw_to(&self, id: &str, out: &mut dyn FnMut(&str) -> std::io::Result<()>) -> Result<()> {
        let path = self.locate(id)?;
        let io = |e| Error::io("reading", &path, e);
        let f = read::open(&path).map_err(io)?;
        crate::store::lines::raw_records(out, |each| {
            crate::store::lines::pretty_each(f, read::MAX_LINE, each)
        })
        .map_err(|e| match e {
            Ok(e) => crate::store::sink_error(e),
            Err(e) => io(e),
        })
    }

    /// The browser's raw page: the records that start in the file's last `bytes`.
    fn raw_page(&self, id: &str, bytes: u64) -> Result<(String, bool)> {
        let path = self.locate(id)?;
        let io = |e| Error::io("reading", &path, e);
        let f = read::open(&path).map_err(io)?;
        crate::store::lines::page_from_end(f, bytes.max(1), read::MAX_LINE).map_err(io)
    }

    fn set_pinned(&self, id: &str, pinned: bool) -> Result<()> {
        self.locate(id)?;
        self.state.set_time_key(id, "pinned_at", pinned)
    }

    fn set_unread(&self, id: &str, unread: bool) -> Result<()> {
        let (_, l) = self.load_id(id, read::Mode::List)?;
        self.state.set_read(id, l.facts.newest_assistant, unread)
    }

    fn set_archived(&self, id: &str, archived: bool) -> Result<()> {
        self.locate(id)?;
        self.state.set_time_key(id, "archived_at", archived)
    }

    fn rename(&self, id: &str, title: &str) -> Result<()> {
        self.locate(id)?;
        self.state.set_title(id, title)
    }

    fn fork(&self, id: &str, _at: Option<usize>) -> Result<String> {
        let path = self.locate(id)?;
        Err(Error::Refused(format!(
            "pi forks sessions itself: run `pi --fork {}` (spool never writes inside {})",
            path.display(),
            self.root.display()
        )))
    }

    fn delete(&self, id: &str) -> Result<()> {
        self.locate(id)?;
        Err(self.read_only("delete", id))
    }
}
