//! The Claude Code store, read-only (contract: shared/formats/claude-code.md). Transcripts
//! are `<root>/projects/<project-dir>/<id>.jsonl`; spool never creates, edits or removes
//! anything under the root. Its pin, read, archive and title state lives in spool's own
//! state directory (`store::state`), and fork and resume go through `claude` itself.
//!
//! Layout: `discover` finds files, `read` splits and decodes lines, `record` classifies
//! records, `listing` derives the row, `chain` follows the active leaf, `transcript` turns
//! records into messages, `window` replays the context window and reads `--last` from the end.

mod chain;
mod discover;
mod ended;
mod listing;
mod lite;
mod newest;
mod read;
mod record;
mod seen;
mod slim;
mod stream;
mod transcript;
mod view;
mod watched;
mod window;

#[cfg(test)]
mod tests_inputs;
#[cfg(test)]
mod tests_malformed;
#[cfg(test)]
mod tests_read;
#[cfg(test)]
mod tests_stream;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::SystemTime;

use super::sink::{EntrySink, WindowSink};
use super::state::{self, StateDir};
use super::{Candidate, Span, Store, WatchDir};
use crate::catalog::stamp::Stat;
use crate::error::{Error, Result};
use crate::model::{Entry, SessionSummary, StoreKind, Transcript, Window};

pub use discover::{default_root, project_name, valid_id};
pub(crate) use listing::clean_title;
use transcript::{Ctx, Subagent};

/// Legacy subagent files of one project directory: `(parent session id, path)`.
type LegacyAgents = Vec<(String, PathBuf)>;

/// A subagent's records are all sidechain: read them as its own main line.
fn as_main_line(recs: &mut [read::Rec]) {
    for rec in recs {
        if let Some(o) = rec.v.as_object_mut() {
            o.insert("isSidechain".into(), false.into());
        }
    }
}

/// The state directory's name for this store (formats README).
pub const STATE_NAME: &str = "claude-code";

/// Claude Code's transcripts under `<root>/projects/`.
pub struct ClaudeStore {
    root: PathBuf,
    projects: PathBuf,
    state: StateDir,
    /// Legacy subagent files per project directory (listed once, not once per session).
    legacy: Mutex<HashMap<PathBuf, Arc<LegacyAgents>>>,
    /// `cleanupPeriodDays`, read once.
    cleanup: OnceLock<Option<f64>>,
    /// What the last discovery saw in each project directory, for the keys that follow it.
    seen: seen::Seen,
}

/// One session read for listing.
struct Loaded {
    parsed: read::Parsed,
    facts: listing::Facts,
    summary: SessionSummary,
    subagents: Vec<Subagent>,
}

impl ClaudeStore {
    /// `root` is `$CLAUDE_CONFIG_DIR` or `~/.claude` (or `--claude-dir`); `state_root` is
    /// spool's `<data dir>/spool/state`. Nothing is created.
    pub fn new(root: &Path, state_root: &Path) -> Self {
        ClaudeStore {
            root: root.to_path_buf(),
            projects: root.join("projects"),
            state: StateDir::new(state_root, STATE_NAME),
            legacy: Mutex::new(HashMap::new()),
            cleanup: OnceLock::new(),
            seen: seen::Seen::default(),
        }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The transcript of `id`: a valid id, a regular file in some project directory.
    fn locate(&self, id: &str) -> Result<PathBuf> {
        if !valid_id(id) {
            return Err(Error::NotFound(format!("claude:{id}")));
        }
        discover::find(&self.projects, id).ok_or_else(|| Error::NotFound(format!("claude:{id}")))
    }

    /// The legacy subagent files of `project`, listed once per project directory.
    fn legacy_in(&self, project: &Path) -> Arc<LegacyAgents> {
        let mut cache = self.legacy.lock().unwrap_or_else(|e| e.into_inner());
        cache
            .entry(project.to_path_buf())
            .or_insert_with(|| Arc::new(discover::legacy_agents(project)))
            .clone()
    }

    /// The legacy subagent files of session `id` in `project`.
    fn legacy_of(&self, project: &Path, id: &str) -> Vec<PathBuf> {
        (self.legacy_in(project).iter())
            .filter(|(parent, _)| parent == id)
            .map(|(_, p)| p.clone())
            .collect()
    }

    /// The subagent transcripts of session `id` at `path` (legacy ones listed once per
    /// project directory).
    fn subagent_paths(&self, path: &Path, id: &str) -> Vec<PathBuf> {
        let Some(project) = path.parent() else {
            return Vec::new();
        };
        discover::subagents(project, id, &self.legacy_maybe(project))
    }

    /// `legacy_in(project)`, or none without listing it when the last discovery's listing of
    /// `project` held no `agent-*.jsonl` (as `summary_inputs` skips them, so a row and its
    /// key agree; a legacy file made since is seen by the next discovery, whose key differs).
    /// The cold start's first screen listed every project directory of its rows a second
    /// time here, behind one lock: 11 listings of about 1,400 entries for 18 rows at 10k
    /// sessions (issue 10). Old Claude builds wrote legacy subagents; current ones do not.
    fn legacy_maybe(&self, project: &Path) -> Arc<LegacyAgents> {
        if self.seen.get(project).is_some_and(|p| !p.legacy) {
            return Arc::default();
        }
        self.legacy_in(project)
    }

    fn subagents(&self, path: &Path, id: &str) -> Vec<Subagent> {
        self.subagent_paths(path, id)
            .into_iter()
            .map(|p| {
                let agent_id = p
                    .file_stem()
                    .map(|s| s.to_string_lossy().trim_start_matches("agent-").to_string())
                    .unwrap_or_default();
                let mut sub = Subagent {
                    agent_id,
                    path: p.clone(),
                    first_prompt: String::new(),
                    messages: 0,
                    entries: Vec::new(),
                };
                if let Ok(mut parsed) = read::read(&p, read::Mode::List) {
                    as_main_line(&mut parsed.recs);
                    let f = listing::facts(id, &parsed);
                    sub.first_prompt = f.first_prompt.clone().unwrap_or_default();
                    sub.messages = f.user_turns + f.assistant_ids.len() as u64;
                }
                sub
            })
            .collect()
    }

    /// Read each subagent's own transcript, to be read inside the parent's under the call
    /// that spawned it (claude-code.md 5). Persisted output resolves in the parent's session
    /// directory; message positions stay the parent's.
    fn read_subagents(session_dir: &Path, subs: &mut [Subagent]) {
        for sub in subs {
            let Ok(mut p) = read::read(&sub.path, read::Mode::View) else {
                continue;
            };
            as_main_line(&mut p.recs);
            let c = chain::build(&p.recs);
            let cx = Ctx {
                session_dir,
                subagents: &[],
            };
            sub.entries = transcript::entries(&p.recs, &c, &cx, 0);
            for e in &mut sub.entries {
                if let Entry::Message(m) = e {
                    m.index = None;
                }
            }
        }
    }

    /// The session read for its row, with its subagents' own facts for the views (their
    /// first prompt and message count, which take a read of each subagent file).
    fn load(&self, id: &str, path: &Path) -> std::io::Result<Loaded> {
        let subagents = self.subagents(path, id);
        let (parsed, facts, summary) = self.row(id, path, subagents.len())?;
        Ok(Loaded {
            parsed,
            facts,
            summary,
            subagents,
        })
    }

    /// The row of the session at `path` with `subagents` subagent files: the row shows only
    /// their count, so listing never reads them.
    fn row(
        &self,
        id: &str,
        path: &Path,
        subagents: usize,
    ) -> std::io::Result<(read::Parsed, listing::Facts, SessionSummary)> {
        let parsed = read::read(path, read::Mode::List)?;
        let facts = listing::facts(id, &parsed);
        let cx = listing::RowContext {
            project_dir: path.parent().unwrap_or(Path::new("/")),
            subagents,
            cleanup_days: *self
                .cleanup
                .get_or_init(|| discover::cleanup_days(&self.root)),
            now: SystemTime::now(),
        };
        let mut summary = listing::summary(id, path, &parsed, &facts, &cx);
        state::apply(&mut summary, &self.state.read(id), facts.newest_assistant);
        Ok((parsed, facts, summary))
    }

    fn load_id(&self, id: &str) -> Result<(PathBuf, Loaded)> {
        let path = self.locate(id)?;
        let l = self
            .load(id, &path)
            .map_err(|e| Error::io("reading", &path, e))?;
        Ok((path, l))
    }

    fn session_dir(path: &Path, id: &str) -> PathBuf {
        path.with_file_name(id)
    }

    fn warnings(p: &read::Parsed, f: &listing::Facts) -> Vec<String> {
        let mut w = crate::store::entries::read_warnings(p.bad, p.truncated, p.pending, p.lossy);
        for len in &p.oversized {
            w.push(format!("oversized line ({} MB) skipped", len / 1_000_000));
        }
        if let Some(i) = &f.internal_id {
            w.push(format!(
                "records carry another session id (internal id {i})"
            ));
        }
        w
    }

    /// The session an old build's continuation of this one opens from: its first summaries
    /// name records in another file.
    fn continued(path: &Path, facts: &listing::Facts, id: &str) -> Option<String> {
        facts
            .leading_leaves
            .iter()
            .find(|leaf| !facts.uuids.contains(*leaf))
            .and_then(|leaf| discover::holder_of(path.parent()?, leaf, id))
    }

    /// The refusal for anything that would write into Claude's directory.
    fn read_only(&self, what: &str, id: &str) -> Error {
        Error::Refused(format!(
            "spool does not {what} Claude Code sessions: it never writes inside {} (Claude \
             Code owns those files); archive claude:{id} to hide it in spool instead",
            self.root.display()
        ))
    }
}

impl ClaudeStore {
    /// `each` of every project's candidates and their keys (taken with what the project's
    /// listing saw, `inputs_seen`), on the thread that listed it; what each listing saw is
    /// kept in `seen` for the stat passes that follow.
    fn keyed_by_project<R: Send>(
        &self,
        keyer: &crate::catalog::survey::Keyer<'_>,
        each: impl Fn(Vec<Candidate>, Vec<u64>) -> R + Sync,
    ) -> Vec<R> {
        let mut seen = seen::Projects::default();
        let pieces = discover::by_project(&self.projects, &mut seen, |found, project| {
            let project = project.map(|(_, p)| &**p);
            let keys = keyer.keys_by(&found, |c| self.inputs_seen(c, project));
            each(found, keys)
        });
        self.seen.replace(seen);
        pieces
    }

    /// `summary_inputs_stated` of `c` with `seen` what its project directory held when it
    /// was listed: the stored listing's (`seen`), or, for a survey keyed where each project
    /// is listed (`discover_packed`), that project's own before the listing is stored (else
    /// every session's subagents would be probed by a walk).
    fn inputs_seen(
        &self,
        c: &Candidate,
        seen: Option<&seen::Project>,
    ) -> (Vec<PathBuf>, Option<Stat>) {
        let project = c.path.parent().unwrap_or(Path::new("/"));
        let (probe, stat) = match seen {
            None => (seen::Probe::Walk, None),
            Some(p) if !p.may_hold(&c.id) => (seen::Probe::Absent, None),
            Some(p) => p.subagents(&c.id),
        };
        let mut v = match probe {
            seen::Probe::Absent => Vec::new(),
            // What the walk would name, without listing it (1,458 listings of a warm check
            // at 10k Claude sessions, four syscalls and a walk from `/` each).
            seen::Probe::Leaf => vec![project.join(&c.id).join("subagents")],
            seen::Probe::Walk => discover::subagent_dirs(project, &c.id),
        };
        // Either names `<id>/subagents` first, or nothing (a walk that found it gone): the
        // stat is of the first input or of none.
        let first = stat.filter(|_| !v.is_empty());
        v.push(c.path.clone());
        if seen.is_none_or(|p| p.legacy) {
            v.extend(self.legacy_of(project, &c.id));
        }
        v.push(self.root.join("settings.json"));
        v.push(self.state_file(&c.id));
        (v, first)
    }
}

impl Store for ClaudeStore {
    fn root_dir(&self) -> Option<&Path> {
        Some(&self.root)
    }

    fn kind(&self) -> StoreKind {
        StoreKind::Claude
    }

    fn sessions_dir(&self) -> &Path {
        &self.projects
    }

    fn watch_dirs(&self) -> Vec<WatchDir> {
        watched::watch_dirs(&self.projects)
    }

    fn watch_more(&self, path: &Path) -> Vec<WatchDir> {
        watched::watch_more(&self.projects, path)
    }

    fn state_file(&self, id: &str) -> PathBuf {
        self.state.file(id)
    }

    fn discover(&self) -> Vec<Candidate> {
        let mut seen = seen::Projects::default();
        let found = discover::discover(&self.projects, &mut seen);
        self.seen.replace(seen);
        found
    }

    /// Each project's candidates keyed on the thread that listed them (with what the
    /// listing saw, as `discover_packed`), in no order. Issue 10: a warm `spool list` at
    /// 100k sessions sorted them by mtime after the listing, then keyed them in a pass of
    /// its own, one core idle at the end of each.
    fn discover_keyed(
        &self,
        keyer: &crate::catalog::survey::Keyer<'_>,
    ) -> (Vec<Candidate>, Vec<u64>) {
        super::concat_keyed(self.keyed_by_project(keyer, |found, keys| (found, keys)))
    }

    /// Each project's candidates packed and keyed on the thread that listed them, and the
    /// pieces joined: never all held as candidates at once. Issue 10: at 100k sessions the
    /// candidates of every project, then merged beside them (27 MB), were a warm start's
    /// peak.
    fn discover_packed(
        &self,
        keyer: &crate::catalog::survey::Keyer<'_>,
    ) -> crate::catalog::packed::Packed {
        use crate::catalog::packed::Packed;
        Packed::join(self.keyed_by_project(keyer, Packed::with_keys))
    }

    /// The newest transcripts of the newest project directories (see `newest`); what those
    /// held goes to `seen` until the full discovery replaces it, so their rows are read as
    /// discovery's would be.
    fn first_screen(&self, n: usize) -> Vec<Candidate> {
        let mut seen = seen::Projects::default();
        let found = newest::first_screen(&self.projects, n, &mut seen);
        self.seen.replace(seen);
        found
    }

    /// What the row rests on: the directories its subagent count is listed from, the
    /// transcript, its legacy subagents, the settings that set the cleanup period, and
    /// spool's state file. The subagent directories come first because the catalog's stat
    /// pass stamps inputs below the first one by their own `lstat`, and keeps every other
    /// input in a table for the pass (for shared files like `settings.json`): with the
    /// subagent directory second, that table held an entry per session (4.1 MB of a warm
    /// `spool list` at 10k sessions, and an `lstat` each of a directory that is absent for
    /// most sessions). What the last discovery saw of the project spares the lookups of an
    /// `<id>/subagents` or a legacy subagent where there can be none (see `seen`).
    fn summary_inputs(&self, c: &Candidate) -> Vec<PathBuf> {
        self.summary_inputs_stated(c).0
    }

    /// The probe of `<id>/subagents` took its `lstat`: handed over where it is the first
    /// input, so the stat pass does not take it again.
    fn summary_inputs_stated(&self, c: &Candidate) -> (Vec<PathBuf>, Option<Stat>) {
        let project = c.path.parent().unwrap_or(Path::new("/"));
        self.inputs_seen(c, self.seen.get(project).as_deref())
    }

    /// "live" and the cleanup countdown change with the clock alone.
    fn summary_expires(&self, s: &SessionSummary) -> Option<SystemTime> {
        let mtime = std::fs::metadata(s.path()).ok()?.modified().ok()?;
        let days = *self
            .cleanup
            .get_or_init(|| discover::cleanup_days(&self.root));
        listing::badges_change_at(mtime, days, SystemTime::now())
    }

    fn summarize(&self, c: &Candidate) -> Option<SessionSummary> {
        if !valid_id(&c.id) {
            return Some(SessionSummary::error_row(
                StoreKind::Claude,
                &c.id,
                &c.path,
                "file name is not a session id spool can use",
            ));
        }
        let subagents = self.subagent_paths(&c.path, &c.id).len();
        Some(match self.row(&c.id, &c.path, subagents) {
            Ok((_, _, summary)) => summary,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => SessionSummary::error_row(
                StoreKind::Claude,
                &c.id,
                &c.path,
                "deleted (Claude cleanup?)",
            ),
            Err(e) => SessionSummary::error_row(
                StoreKind::Claude,
                &c.id,
                &c.path,
                format!("cannot read {}: {e}", c.path.display()),
            ),
        })
    }

    /// Claude transcripts are parsed whole for their counts (only bulky middle lines of big
    /// files are skipped), so the listing pass spreads files over the machine's cores.
    fn list(&self) -> Vec<SessionSummary> {
        super::list_parallel(self)
    }

    fn transcript(&self, id: &str, span: Span) -> Result<Transcript> {
        let n = match span {
            Span::LastRounds(n) => n,
            // The whole view is read as `show` streams it, and collected.
            Span::All => {
                let mut all = crate::store::sink::Gather::default();
                self.send_all(id, &mut all)?;
                return all
                    .finish()
                    .ok_or_else(|| Error::NotFound(format!("claude:{id}")));
            }
        };
        let (path, mut l) = self.load_id(id)?;
        let sdir = Self::session_dir(&path, id);
        Self::read_subagents(&sdir, &mut l.subagents);
        let cx = Ctx {
            session_dir: &sdir,
            subagents: &l.subagents,
        };
        let mut warnings = Self::warnings(&l.parsed, &l.facts);
        let continued = Self::continued(&path, &l.facts, id);
        let (mut entries, total_rounds, first_round, whole) =
            window::last_rounds(&path, n, &cx).map_err(|e| Error::io("reading", &path, e))?;
        if !whole {
            warnings.push(
                "read from the end of the file: rounds and message positions count from the \
                 first record read"
                    .into(),
            );
        }
        if let Some(parent) = continued
            && first_round == 0
        {
            entries.insert(0, Entry::Notice(format!("continued from claude:{parent}")));
        }
        Ok(Transcript {
            summary: l.summary,
            entries,
            total_rounds,
            first_round,
            warnings,
            todos: None,
        })
    }

    /// `Span::All` a record at a time; the last rounds are read from the end of the file.
    fn transcript_to(&self, id: &str, span: Span, sink: &mut dyn EntrySink) -> Result<()> {
        match span {
            Span::All => self.send_all(id, sink),
            Span::LastRounds(_) => {
                let t = self.transcript(id, span)?;
                super::sink::send_whole(t, sink).map_err(super::sink_error)
            }
        }
    }

    fn window(&self, id: &str) -> Result<Window> {
        self.window_page(id, usize::MAX)
    }

    /// Replayed from the records' offsets, each message read as it is sent.
    fn window_to(&self, id: &str, sink: &mut dyn WindowSink) -> Result<()> {
        self.send_window(id, sink)
    }

    fn raw(&self, id: &str) -> Result<String> {
        let path = self.locate(id)?;
        let f = read::open(&path).map_err(|e| Error::io("reading", &path, e))?;
        crate::store::lines::pretty_jsonl(f, read::MAX_LINE)
            .map_err(|e| Error::io("reading", &path, e))
    }

    fn raw_page(&self, id: &str, bytes: u64) -> Result<(String, bool)> {
        view::raw_page(&self.locate(id)?, bytes)
    }

    fn raw_to(&self, id: &str, out: &mut dyn FnMut(&str) -> std::io::Result<()>) -> Result<()> {
        view::raw_to(&self.locate(id)?, out)
    }

    fn set_pinned(&self, id: &str, pinned: bool) -> Result<()> {
        self.locate(id)?;
        self.state.set_time_key(id, "pinned_at", pinned)
    }

    fn set_unread(&self, id: &str, unread: bool) -> Result<()> {
        let (_, l) = self.load_id(id)?;
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
        let (_, l) = self.load_id(id)?;
        let dir = l.summary.cwd.unwrap_or_else(|| ".".into());
        Err(Error::Refused(format!(
            "Claude Code forks sessions itself: run `claude --resume {id} --fork-session` in \
             {dir} (spool never writes inside {})",
            self.root.display()
        )))
    }

    fn delete(&self, id: &str) -> Result<()> {
        self.locate(id)?;
        Err(self.read_only("delete", id))
    }
}
