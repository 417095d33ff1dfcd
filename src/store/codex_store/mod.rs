//! The Codex CLI store, read-only (contract: shared/formats/codex.md). Rollouts are
//! `<root>/sessions/YYYY/MM/DD/rollout-<time>-<uuid>.jsonl[.zst]` and
//! `<root>/archived_sessions/…`; spool never creates, edits, moves or removes anything under
//! the root. Its pin, read, archive and title state lives in spool's own state directory
//! (`store::state`), and resume, fork and unarchive go through `codex` itself.
//!
//! Layout: `discover` finds rollouts, `read` splits and decodes lines (zstd too), `record`
//! reads fields, `listing` derives the facts, `row` the list row, `transcript` the messages,
//! `index` reads `session_index.jsonl`, `view` the window and `--last`, `skim` decides which
//! records a listing parses, `stream` and `send` read the views in passes of one record.

mod days;
mod discover;
mod found;
mod index;
mod listing;
mod newest;
mod packed_walk;
mod read;
mod record;
mod row;
mod send;
mod skim;
mod stream;
mod transcript;
mod view;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_stream;

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use super::state::{self, StateDir};
use super::{Candidate, Launch, Span, Store};
use crate::error::{Error, Result};
use crate::model::{SessionSummary, StoreKind, Transcript, Window};

pub use discover::default_root;
pub use record::is_uuid;

/// The state directory's name for this store (formats README).
pub const STATE_NAME: &str = "codex";

/// Turn ids of a parent rollout, cached by its path, size and mtime.
type TurnCache = HashMap<PathBuf, (u64, Option<SystemTime>, Arc<HashSet<String>>)>;

/// Codex's rollouts under `<root>/sessions/` and `<root>/archived_sessions/`.
pub struct CodexStore {
    root: PathBuf,
    sessions: PathBuf,
    state: StateDir,
    /// The last discovery, by id (archived and duplicate flags, fast `locate`).
    found: Mutex<found::ById>,
    /// `found` holds a first screen's walk of the newest days only (see `days`), not a
    /// whole discovery: an id missing from it may still be on disk.
    partial: AtomicBool,
    /// Held through every whole discovery and the `keep` that ends it. Issue 10: at a warm
    /// start the pane asked for the selected row's entry while the survey's discovery was
    /// still walking, missed (nothing kept yet) and walked the whole store a second time
    /// beside it: at 100k rollouts about 45 MB of a start's peak, and a core's worth of
    /// the survey's time. A miss now waits for the walk in flight and looks again.
    walking: Mutex<()>,
    index: index::Cache,
    turns: Mutex<TurnCache>,
    /// `<root>/session_index.jsonl`, an input of every row: joined once, not per session.
    index_path: PathBuf,
}

/// One rollout read for listing.
struct Loaded {
    path: PathBuf,
    parsed: read::Parsed,
    facts: listing::Facts,
    summary: SessionSummary,
}

impl CodexStore {
    /// `root` is `$CODEX_HOME` or `~/.codex` (or `--codex-dir`); `state_root` is spool's
    /// `<data dir>/spool/state`. Nothing is created.
    pub fn new(root: &Path, state_root: &Path) -> Self {
        CodexStore {
            root: root.to_path_buf(),
            sessions: root.join("sessions"),
            state: StateDir::new(state_root, STATE_NAME),
            found: Mutex::default(),
            partial: AtomicBool::new(false),
            walking: Mutex::default(),
            index: index::Cache::default(),
            turns: Mutex::new(HashMap::new()),
            index_path: root.join("session_index.jsonl"),
        }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// A whole discovery in no order, kept (a stat pass's: `spool list`'s survey).
    fn discovered(&self) -> Vec<discover::Entry> {
        let _walk = self.walk_lock();
        self.keep(discover::discover_unordered(&self.root))
    }

    fn discover_entries(&self) -> Vec<discover::Entry> {
        let _walk = self.walk_lock();
        self.keep(discover::discover(&self.root))
    }

    /// The right to walk the whole store (see `walking`).
    fn walk_lock(&self) -> std::sync::MutexGuard<'_, ()> {
        self.walking.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The kept entry of `id`, if its rollout is still there.
    fn kept(&self, id: &str) -> Option<discover::Entry> {
        let cached = self.found.lock().unwrap_or_else(|e| e.into_inner()).get(id);
        cached.filter(|e| e.path.exists())
    }

    /// Keep `all`, the whole of a discovery, by id (see `found`), and hand it back.
    fn keep(&self, all: Vec<discover::Entry>) -> Vec<discover::Entry> {
        self.keep_some(all, false)
    }

    /// Keep `all` by id, and whether it is only `partial` (a first screen's walk).
    fn keep_some(&self, all: Vec<discover::Entry>, partial: bool) -> Vec<discover::Entry> {
        self.keep_table(found::ById::new(&all), partial);
        all
    }

    /// Keep `table` as the last discovery, and whether it is only `partial`.
    fn keep_table(&self, table: found::ById, partial: bool) {
        let mut map = self.found.lock().unwrap_or_else(|e| e.into_inner());
        *map = table;
        self.partial.store(partial, Ordering::SeqCst);
    }

    /// The discovered entry of `id` (looked up again when it moved or is not known yet).
    fn entry(&self, id: &str) -> Result<discover::Entry> {
        let id = id.to_ascii_lowercase();
        if !is_uuid(&id) {
            return Err(Error::NotFound(format!("codex:{id}")));
        }
        match self.kept(&id) {
            Some(e) => Ok(e),
            None => self.located(&id),
        }
    }

    /// The entry of `id` (lowercase, a UUID) not found among the kept ones: a warm start's
    /// pane asks before the survey's walk ends, or the rollout is newer than the last walk.
    /// The days its UUIDv7 id names and the archive (a few directories) are looked in
    /// before the whole store is walked.
    fn located(&self, id: &str) -> Result<discover::Entry> {
        if let Some(e) = days::placed(&self.root, id) {
            return Ok(e);
        }
        // A discovery in flight (the survey's) keeps what it found when it ends: wait for
        // it and look again before walking the store a second time.
        let _walk = self.walk_lock();
        if let Some(e) = self.kept(id) {
            return Ok(e);
        }
        self.keep(discover::discover(&self.root))
            .into_iter()
            .find(|e| e.id == id)
            .ok_or_else(|| Error::NotFound(format!("codex:{id}")))
    }

    /// The entry of a fork's or subagent's parent. While `found` holds only a first
    /// screen's newest days, a parent not among them (or only its archived copy, whose
    /// active one discovery would keep) is looked for in the days its UUIDv7 id names
    /// before a whole discovery (about 30 ms of CPU at 10k rollouts) is made to find it.
    fn parent_entry(&self, id: &str) -> Result<discover::Entry> {
        let id = id.to_ascii_lowercase();
        if self.partial.load(Ordering::SeqCst) {
            let known = (self.found.lock().unwrap_or_else(|e| e.into_inner())).get(&id);
            return match known.filter(|e| !e.archived && e.path.exists()) {
                Some(e) => Ok(e),
                None if is_uuid(&id) => self.located(&id),
                None => Err(Error::NotFound(format!("codex:{id}"))),
            };
        }
        self.entry(&id)
    }

    /// The turn ids recorded in the parent rollout of a fork or subagent.
    fn parent_turns(&self, parent: &str) -> Option<Arc<HashSet<String>>> {
        let e = self.parent_entry(parent).ok()?;
        let meta = std::fs::metadata(&e.path).ok()?;
        let key = (meta.len(), meta.modified().ok());
        let mut cache = self.turns.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((len, mtime, t)) = cache.get(&e.path)
            && (*len, *mtime) == key
        {
            return Some(t.clone());
        }
        let p = read::read(&e.path, read::Mode::List).ok()?;
        let turns: HashSet<String> = p
            .recs
            .iter()
            .filter(|r| record::kind(&r.v) == "turn_context")
            .filter_map(|r| record::s(record::payload(&r.v), "turn_id").map(str::to_string))
            .collect();
        let turns = Arc::new(turns);
        cache.insert(e.path.clone(), (key.0, key.1, turns.clone()));
        Some(turns)
    }

    fn load(&self, e: &discover::Entry, mode: read::Mode) -> std::io::Result<Loaded> {
        let parsed = read::read(&e.path, mode)?;
        let facts = listing::facts(&e.id, &parsed);
        let parent = facts.forked_from.clone().or(facts.parent_thread.clone());
        let turns = parent.as_deref().and_then(|p| self.parent_turns(p));
        let copied = listing::copied_range(&parsed.recs, &facts, turns.as_deref());
        let names = self.index.names(&self.root);
        let cx = row::RowContext {
            archived: e.archived,
            duplicate_in_archive: e.duplicate_in_archive,
            index_name: names.get(&e.id).map(String::as_str),
            copied: copied.map(|r| listing::counted_in(&parsed.recs, r)),
            parent_missing: facts.copy_start.is_some() && turns.is_none(),
            now: SystemTime::now(),
        };
        let mut summary = row::summary(&e.id, &e.path, &parsed, &facts, &cx);
        state::apply(
            &mut summary,
            &self.state.read(&e.id),
            facts.newest_assistant,
        );
        // spool's archive and Codex's are separate: either one hides the row.
        summary.archived |= e.archived;
        Ok(Loaded {
            path: e.path.clone(),
            parsed,
            facts,
            summary,
        })
    }

    fn load_id(&self, id: &str, mode: read::Mode) -> Result<Loaded> {
        let e = self.entry(id)?;
        if e.found != discover::Found::Rollout {
            return Err(Error::Refused(format!(
                "codex:{} is not a rollout spool can read ({})",
                e.id,
                e.path.display()
            )));
        }
        self.load(&e, mode)
            .map_err(|err| Error::io("reading", &e.path, err))
    }

    fn warnings(p: &read::Parsed, f: &listing::Facts) -> Vec<String> {
        let mut w = crate::store::entries::read_warnings(p.bad, p.truncated, p.pending, p.lossy);
        if p.salvaged > 0 {
            w.push(format!(
                "{} record(s) salvaged from lines where two writes overlapped",
                p.salvaged
            ));
        }
        if p.oversized > 0 {
            w.push(format!(
                "{} oversized record(s) over 64 MiB skipped",
                p.oversized
            ));
        }
        if let Some(d) = &p.damaged {
            w.push(format!("the compressed rollout is damaged: {d}"));
        }
        if let Some(m) = &f.meta_mismatch {
            w.push(format!("session_meta carries another id ({m})"));
        }
        w
    }

    fn parent_ref(f: &listing::Facts) -> Option<String> {
        f.forked_from
            .as_ref()
            .or(f.parent_thread.as_ref())
            .map(|p| format!("codex:{p}"))
    }

    /// The refusal for anything that would write into Codex's directory.
    fn read_only(&self, what: &str, id: &str) -> Error {
        Error::Refused(format!(
            "spool does not {what} Codex sessions: it never writes inside {} (Codex owns \
             those files); archive codex:{id} to hide it in spool instead",
            self.root.display()
        ))
    }
}

impl Store for CodexStore {
    fn root_dir(&self) -> Option<&Path> {
        Some(&self.root)
    }

    fn kind(&self) -> StoreKind {
        StoreKind::Codex
    }

    fn sessions_dir(&self) -> &Path {
        &self.sessions
    }

    fn state_file(&self, id: &str) -> PathBuf {
        self.state.file(id)
    }

    /// The rollout and spool's state file, and `session_index.jsonl`: a thread renamed in
    /// Codex changes only that file, and the catalog must see the new title.
    fn summary_inputs(&self, c: &Candidate) -> Vec<PathBuf> {
        vec![
            c.path.clone(),
            self.state_file(&c.id),
            self.index_path.clone(),
        ]
    }

    fn discover(&self) -> Vec<Candidate> {
        self.discover_entries()
            .into_iter()
            .map(Candidate::from)
            .collect()
    }

    /// The rollouts whose names are newest, from a walk of the newest day directories
    /// that takes no `lstat` but of those (see `days`, `newest`). The walk's entries are
    /// kept as a discovery's would be, so the rows read next find their entry (and a fork
    /// its parent, or its day) without a full discovery.
    fn first_screen(&self, n: usize) -> Vec<Candidate> {
        let some = self.keep_some(days::newest_named(&self.root, 2 * n), true);
        (newest::newest(&some, n).into_iter())
            .map(Candidate::from)
            .collect()
    }

    fn discover_unordered(&self) -> Vec<Candidate> {
        self.discovered().into_iter().map(Candidate::from).collect()
    }

    /// Packed from the walk on (`packed_walk`), and kept by id as a discovery is. Issue 10:
    /// at 100k rollouts the entries of a whole discovery (their ids, paths and stats, then
    /// a candidate of each, then the survey's room beside them) were a warm start's peak.
    fn discover_packed(
        &self,
        keyer: &crate::catalog::survey::Keyer<'_>,
    ) -> crate::catalog::packed::Packed {
        let _walk = self.walk_lock();
        let (survey, by_id) = packed_walk::walk(&self.root, keyer);
        self.keep_table(by_id, false);
        survey
    }

    fn summarize(&self, c: &Candidate) -> Option<SessionSummary> {
        let known = self
            .found
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&c.id)
            .filter(|e| e.path == c.path);
        let e = match known {
            Some(e) => e,
            None => self.entry(&c.id).ok()?,
        };
        let error = |why: String| {
            Some(SessionSummary::error_row(
                StoreKind::Codex,
                &e.id,
                &e.path,
                why,
            ))
        };
        match e.found {
            discover::Found::LegacyJson => {
                return error("unsupported legacy file (a pre-JSONL rollout)".into());
            }
            discover::Found::Segmented => return error("unsupported rollout layout".into()),
            discover::Found::Rollout => {}
        }
        match self.load(&e, read::Mode::List) {
            Ok(l) => Some(l.summary),
            // Moved while listed (archived, compressed): look the id up again (section 9).
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
                match self.discover_entries().into_iter().find(|n| n.id == e.id) {
                    Some(n) if n.path != e.path => {
                        self.load(&n, read::Mode::List).ok().map(|l| l.summary)
                    }
                    _ => error("the rollout disappeared while being listed".into()),
                }
            }
            Err(err) => error(format!("cannot read {}: {err}", e.path.display())),
        }
    }

    /// Rollouts are read whole for their counts, so the listing pass spreads files over the
    /// machine's cores.
    fn list(&self) -> Vec<SessionSummary> {
        super::list_parallel(self)
    }

    fn transcript(&self, id: &str, span: Span) -> Result<Transcript> {
        crate::store::sink::gathered(|all| self.transcript_to(id, span, all))?
            .ok_or_else(|| Error::NotFound(format!("codex:{id}")))
    }

    /// A plain rollout's last rounds are read from the end of the file; anything else in
    /// passes of one record at a time (a compressed rollout cannot be read from its end).
    fn transcript_to(
        &self,
        id: &str,
        span: Span,
        sink: &mut dyn crate::store::sink::EntrySink,
    ) -> Result<()> {
        let Span::LastRounds(n) = span else {
            return self.send_all(id, span, sink);
        };
        let l = self.load_id(id, read::Mode::List)?;
        if l.parsed.compressed {
            return self.send_all(id, span, sink);
        }
        let parent = Self::parent_ref(&l.facts);
        let (entries, total_rounds, first_round, whole) =
            view::last_rounds(&l.path, n, parent).map_err(|e| Error::io("reading", &l.path, e))?;
        // The listing's pass read every line: its warnings are the file's.
        let mut warnings = Self::warnings(&l.parsed, &l.facts);
        if !whole {
            warnings.push(
                "read from the end of the file: rounds and message positions count from the \
                 first record read"
                    .into(),
            );
        }
        let t = Transcript {
            summary: l.summary,
            entries,
            total_rounds,
            first_round,
            warnings,
            todos: None,
        };
        crate::store::sink::send_whole(t, sink).map_err(crate::store::sink_error)
    }

    fn window(&self, id: &str) -> Result<Window> {
        self.window_page(id, usize::MAX)
    }

    /// Replayed in passes of one record at a time.
    fn window_to(&self, id: &str, sink: &mut dyn crate::store::sink::WindowSink) -> Result<()> {
        self.send_window(id, sink)
    }

    fn raw(&self, id: &str) -> Result<String> {
        crate::store::sink::raw_gathered(|out| self.raw_to(id, out))
    }

    fn raw_to(&self, id: &str, out: &mut dyn FnMut(&str) -> std::io::Result<()>) -> Result<()> {
        let e = self.entry(id)?;
        view::raw_to(&e.path, out)
    }

    fn raw_page(&self, id: &str, bytes: u64) -> Result<(String, bool)> {
        let e = self.entry(id)?;
        view::raw_page(&e.path, bytes).map_err(|err| Error::io("reading", &e.path, err))
    }

    fn set_pinned(&self, id: &str, pinned: bool) -> Result<()> {
        let e = self.entry(id)?;
        self.state.set_time_key(&e.id, "pinned_at", pinned)
    }

    fn set_unread(&self, id: &str, unread: bool) -> Result<()> {
        let l = self.load_id(id, read::Mode::List)?;
        self.state
            .set_read(&l.summary.id, l.facts.newest_assistant, unread)
    }

    fn set_archived(&self, id: &str, archived: bool) -> Result<()> {
        let e = self.entry(id)?;
        self.state.set_time_key(&e.id, "archived_at", archived)?;
        if !archived && e.archived {
            return Err(Error::Refused(format!(
                "codex:{} is archived by Codex itself: run `codex unarchive {}` (spool never \
                 moves files inside {})",
                e.id,
                e.id,
                self.root.display()
            )));
        }
        Ok(())
    }

    fn rename(&self, id: &str, title: &str) -> Result<()> {
        let e = self.entry(id)?;
        self.state.set_title(&e.id, title)
    }

    fn fork(&self, id: &str, _at: Option<usize>) -> Result<String> {
        let e = self.entry(id)?;
        Err(Error::Refused(format!(
            "Codex forks threads itself: run `codex fork {}` (spool never writes inside {})",
            e.id,
            self.root.display()
        )))
    }

    fn delete(&self, id: &str) -> Result<()> {
        let e = self.entry(id)?;
        Err(self.read_only("delete", &e.id))
    }

    /// codex.md section 8: the UUID (a subagent resumes its parent), in the last turn's cwd
    /// (else the session's), and `codex unarchive` first for an archived thread.
    fn launch(&self, s: &SessionSummary) -> Result<Launch> {
        let l = self.load_id(&s.id, read::Mode::List)?;
        if l.facts.meta.is_none() || l.facts.no_meta_first {
            return Err(Error::Refused(format!(
                "codex:{} does not start with session metadata, so Codex cannot resume it",
                s.id
            )));
        }
        let target = match (&l.summary.child_of(), &l.facts.parent_thread) {
            (Some(_), Some(parent)) => self.load_id(parent, read::Mode::List)?,
            _ => l,
        };
        let e = self.entry(&target.summary.id)?;
        Ok(Launch {
            id: target.summary.id.to_string(),
            cwd: launch_dir(&target.facts),
            unarchive_first: e.archived,
        })
    }
}

/// The last turn's cwd, else the session's; the first that exists, else the first recorded
/// (the resume check then names the missing directory).
fn launch_dir(f: &listing::Facts) -> Option<String> {
    let dirs: Vec<String> = f.current_cwd.iter().cloned().chain(f.cwd()).collect();
    dirs.iter()
        .find(|d| Path::new(d).is_dir())
        .or(dirs.first())
        .cloned()
}
