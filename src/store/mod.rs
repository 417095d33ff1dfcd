//! Session stores: one module per agent format behind the `Store` trait, plus the shared
//! write primitives (atomic replace, sidecars, leases) every writer uses.

pub mod atomic;
pub mod claude_store;
pub mod codex_store;
pub mod dirents;
pub mod entries;
pub mod fanout;
pub mod harness_store;
pub mod json_first;
pub mod lease;
pub mod lines;
pub mod loom_store;
pub mod loop_store;
pub mod pi_store;
pub(crate) mod positional;
pub mod registry;
pub mod regular;
pub mod sidecar;
pub mod sink;
pub mod state;
#[cfg(test)]
pub mod test_fixtures;

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::error::Result;
use crate::model::{SessionSummary, StoreKind, Transcript, Window};

pub use registry::{Roots, Stores};

/// An agent's root from its environment variable when set and non-empty (a leading `~/`
/// expanded, a relative path made absolute), else `home/<fallback>`.
pub fn root_from_env(var: &str, home: &Path, fallback: &str) -> PathBuf {
    match std::env::var(var) {
        Ok(v) if !v.is_empty() => match v.strip_prefix("~/") {
            Some(rest) => home.join(rest),
            None => std::path::absolute(&v).unwrap_or_else(|_| PathBuf::from(v)),
        },
        _ => home.join(fallback),
    }
}

/// The last `n` rounds read from the end in growing steps: `read(bytes)` gives the entries
/// of the last `bytes` bytes (whole lines) and whether that reached the start of the file.
/// Returns `(entries, rounds in what was read, first kept round, whole file read)`.
pub fn rounds_from_end(
    n: usize,
    mut read: impl FnMut(u64) -> std::io::Result<(Vec<crate::model::Entry>, bool)>,
) -> std::io::Result<(Vec<crate::model::Entry>, usize, usize, bool)> {
    let mut bytes: u64 = 256 * 1024;
    loop {
        let (entries, whole) = read(bytes)?;
        let (kept, total, first) = last_rounds(entries, Span::LastRounds(n));
        // One round more than asked: the first round of a tail read may have started before
        // the cut.
        if whole || total > n {
            return Ok((kept, total, first, whole));
        }
        bytes = bytes.saturating_mul(2);
    }
}

/// A sink's failure (its writer stopped) as a store error.
pub fn sink_error(e: std::io::Error) -> crate::error::Error {
    crate::error::Error::io("writing", "stdout", e)
}

/// A session found by discovery, before anything inside it was read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Candidate {
    pub id: String,
    /// The session's file or directory.
    pub path: PathBuf,
    /// Modification time, used to read likely-recent sessions first.
    pub mtime: Option<SystemTime>,
    /// The `lstat` of `path` discovery took anyway (for `mtime`), kept so the catalog's stat
    /// pass does not take it again; `None` where discovery took none.
    pub stat: Option<crate::catalog::stamp::Stat>,
}

impl Candidate {
    /// The stand-in for a directory discovery could not list (a chmod-000 `sessions/` or
    /// collection): summarised by `unreadable_dir_row`, so its sessions do not vanish silently.
    pub fn unreadable_dir(dir: &Path) -> Candidate {
        Candidate {
            id: dir
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
            path: dir.to_path_buf(),
            mtime: None,
            stat: None,
        }
    }
}

/// `store.discover()` without spare room: the stores collect from a directory listing of
/// unknown length, so the vector ends up to twice the size of its candidates (136 bytes
/// each). At 100k sessions the warm start's three stat passes held about 9 MB of that at
/// once, at the browser's peak (issue 10); the passes and the watcher use this.
pub fn discover_exact(store: &dyn Store) -> Vec<Candidate> {
    let mut found = store.discover();
    found.shrink_to_fit();
    found
}

/// The error row of a directory that cannot be listed (`None` if it now can).
pub fn unreadable_dir_row(kind: StoreKind, c: &Candidate) -> Option<SessionSummary> {
    let why = std::fs::read_dir(&c.path).err()?;
    Some(SessionSummary::error_row(
        kind,
        &c.id,
        &c.path,
        format!("cannot read directory {}: {why}", c.path.display()),
    ))
}

/// How much of the history to read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Span {
    /// The whole stored history.
    All,
    /// Only the last N rounds (a round = a user message and everything up to the next one),
    /// read without parsing the rest where the format allows.
    LastRounds(usize),
}

/// How the agent's own command resumes a session: which id, in which directory, and whether
/// the agent must unarchive it first (Codex refuses to resume an archived thread).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Launch {
    pub id: String,
    pub cwd: Option<String>,
    pub unarchive_first: bool,
}

/// A directory the file watcher registers, and how many levels of its subdirectories too.
/// The watcher finds them itself (`loader::watch`): by the directory read's entry types,
/// never through a symlink, and never into a subdirectory whose name starts with `.`
/// (staging and trash, and spool's sidecar directory, which a store names on its own).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct WatchDir {
    pub path: PathBuf,
    /// Levels of subdirectories registered below `path`: 0 for `path` alone.
    pub depth: u32,
    /// The store saw `path` hold no subdirectory (a link count of 2), so the watcher
    /// registers it without reading it; one made later raises an event and is registered
    /// within `depth` as usual.
    pub leaf: bool,
}

impl WatchDir {
    /// Every level below.
    pub const TREE: u32 = u32::MAX;

    /// `path` alone.
    pub fn flat(path: &Path) -> WatchDir {
        WatchDir {
            path: path.to_path_buf(),
            depth: 0,
            leaf: false,
        }
    }

    /// `path` and every subdirectory below it.
    pub fn tree(path: &Path) -> WatchDir {
        WatchDir {
            path: path.to_path_buf(),
            depth: WatchDir::TREE,
            leaf: false,
        }
    }

    /// `tree`, for a directory seen to hold no subdirectory: registered without a read.
    pub fn leaf_tree(path: &Path) -> WatchDir {
        WatchDir {
            leaf: true,
            ..WatchDir::tree(path)
        }
    }
}

/// One agent's session store. Readers never write; writers follow the format contract.
pub trait Store: Send + Sync {
    fn kind(&self) -> StoreKind;

    /// The `sessions/` directory this store reads.
    fn sessions_dir(&self) -> &Path;

    /// The directory this store was opened on (what `Stores::add` takes), so another
    /// process can open the same stores (the index's child, `index_child`); `None` for a
    /// store that cannot be opened from a path.
    fn root_dir(&self) -> Option<&Path> {
        None
    }

    /// How many levels of directories below the sessions directory hold what rows are read
    /// from (files, or sessions that are directories): the watcher registers them all.
    fn watch_depth(&self) -> u32 {
        WatchDir::TREE
    }

    /// What the watcher registers at start: the sessions directory to `watch_depth`, and
    /// spool's sidecar directory in it (pins and read marks; absent for a store that keeps
    /// its state elsewhere, and then skipped). A new directory that an event names within
    /// these depths is registered by the watcher itself.
    fn watch_dirs(&self) -> Vec<WatchDir> {
        let sessions = self.sessions_dir();
        vec![
            WatchDir {
                path: sessions.to_path_buf(),
                depth: self.watch_depth(),
                leaf: false,
            },
            WatchDir::flat(&sidecar::dir(sessions)),
        ]
    }

    /// Directories to register once an event names `path`, beyond a new directory within
    /// the depths of `watch_dirs` (which the watcher registers on its own): one a store
    /// reads outside them. Called before the rescan, so a file made after it raises an event
    /// and one made before is discovered.
    fn watch_more(&self, _path: &Path) -> Vec<WatchDir> {
        Vec::new()
    }

    /// The file spool keeps its own state for `id` in (pin, read, title): the sidecar in
    /// `sessions/.spool/`, or the state directory for a store spool only reads. The search
    /// index stats it, so a rename there re-indexes the session's title.
    fn state_file(&self, id: &str) -> PathBuf {
        sidecar::path(self.sessions_dir(), id)
    }

    /// Cheap discovery: directory entries only, newest-looking first. Debris is skipped.
    fn discover(&self) -> Vec<Candidate>;

    /// A cold start's first screenful, found more cheaply than by `discover` (which takes
    /// an `lstat` of every session to order them): up to `n` candidates that look newest,
    /// in `discover`'s order, each as `discover` would give it. The loader shows their rows
    /// first and then lists the store as usual; a newer session found then is inserted
    /// above them. Empty (the default): the store has no cheaper way.
    fn first_screen(&self, _n: usize) -> Vec<Candidate> {
        Vec::new()
    }

    /// The candidates of `discover`, in any order: what a stat pass (`catalog::survey`)
    /// keys. A store may leave out the `lstat`s that only `discover`'s order needs.
    fn discover_unordered(&self) -> Vec<Candidate> {
        self.discover()
    }

    /// `discover_unordered` and, at the same index, each candidate's key by `keyer`: `spool
    /// list`'s survey. A store that lists directory by directory keys each directory's
    /// candidates on the thread that listed it, rather than in a pass of its own after the
    /// whole listing (and its order, which a survey does not need).
    fn discover_keyed(
        &self,
        keyer: &crate::catalog::survey::Keyer<'_>,
    ) -> (Vec<Candidate>, Vec<u64>) {
        let mut candidates = self.discover_unordered();
        candidates.shrink_to_fit();
        let keys = keyer.keys_parallel(&candidates);
        (candidates, keys)
    }

    /// `discover_unordered` packed (`catalog::packed`) and keyed by `keyer`: the browser's
    /// survey. A store that lists directory by directory packs and keys each directory's
    /// candidates where it listed them (`Packed::keyed`, `Packed::join`), never holding them
    /// all as candidates, nor their stats.
    fn discover_packed(
        &self,
        keyer: &crate::catalog::survey::Keyer<'_>,
    ) -> crate::catalog::packed::Packed {
        let (mut p, stats) = crate::catalog::packed::Packed::pack(self.discover_unordered());
        p.keys = keyer.keys_packed(&p, &stats);
        p
    }

    /// Whether `discover` orders sessions by their names alone, with no `stat` of each. On a
    /// start with no catalog such a store lists first (its newest screenful is known after
    /// one directory read), and the stores that stat every session wait for its first rows
    /// (see `loader::first`).
    fn orders_by_name(&self) -> bool {
        false
    }

    /// The files a summary of `c` is derived from. spool's catalog keys the cached row on
    /// their (dev, inode, size, mtime, ctime), so a change to any of them re-reads the session.
    /// The default, for a store with one file per session (loom, agent-harness, pi): the
    /// session's file and the state file. The file's own stamp holds its type, so a file
    /// replaced by a directory re-reads the row (an error row) without listing anything; a
    /// store whose rows also read files elsewhere names them too.
    fn summary_inputs(&self, c: &Candidate) -> Vec<PathBuf> {
        vec![c.path.clone(), self.state_file(&c.id)]
    }

    /// `summary_inputs`, and the `lstat` of the first input where the store took one as it
    /// named the inputs (Claude's `<id>/subagents`, looked up to know whether it exists): the
    /// stat pass keys with it instead of taking it again. The key is the same either way.
    fn summary_inputs_stated(
        &self,
        c: &Candidate,
    ) -> (Vec<PathBuf>, Option<crate::catalog::stamp::Stat>) {
        (self.summary_inputs(c), None)
    }

    /// When a row summarized now would read differently with none of its files changed (a
    /// badge counting days); the catalog re-reads the session then. `None`: never.
    fn summary_expires(&self, _s: &SessionSummary) -> Option<SystemTime> {
        None
    }

    /// The listing pass for one candidate. Never fails: problems become an error row.
    /// `None` means "not a session after all" (unsupported format/version: skipped silently).
    fn summarize(&self, candidate: &Candidate) -> Option<SessionSummary>;

    /// Discover and summarize everything (the CLI's `list`).
    fn list(&self) -> Vec<SessionSummary> {
        self.discover()
            .iter()
            .filter_map(|c| self.summarize(c))
            .collect()
    }

    /// Read the stored history (validated per contract).
    fn transcript(&self, id: &str, span: Span) -> Result<Transcript>;

    /// `transcript(id, span)` sent to `sink` piece by piece (`show`). By default it is read
    /// whole first; the writable stores, whose sessions can be huge, read one record at a
    /// time and hold only the row (issue 11).
    fn transcript_to(&self, id: &str, span: Span, sink: &mut dyn sink::EntrySink) -> Result<()> {
        let t = self.transcript(id, span)?;
        sink::send_whole(t, sink).map_err(sink_error)
    }

    /// What the full-text index reads of a listed session: `transcript_to(row.id, All)`, or
    /// less where a store can: its messages and compaction summaries in the transcript's order
    /// and numbering, notices optional, read from the file the row names. (pi found each of
    /// 10k sessions by listing its whole root: most of a first build's time went there.)
    fn index_entries_to(&self, row: &SessionSummary, sink: &mut dyn sink::EntrySink) -> Result<()> {
        self.transcript_to(&row.id, Span::All, sink)
    }

    /// Replay the context window the agent would resume with.
    fn window(&self, id: &str) -> Result<Window>;

    /// `window(id)` sent to `sink` piece by piece (`show --window`). By default it is built
    /// whole first; a store whose windows can be huge replays from record offsets and reads
    /// each message as it is sent (issue 11).
    fn window_to(&self, id: &str, sink: &mut dyn sink::WindowSink) -> Result<()> {
        let w = self.window(id)?;
        sink::send_window(w, sink).map_err(sink_error)
    }

    /// The last `keep` messages of the window (the browser's page; `omitted` counts the
    /// rest), through `window_to`: a store that streams its window holds only the page.
    fn window_page(&self, id: &str, keep: usize) -> Result<Window> {
        let mut last = sink::LastMessages::new(keep);
        self.window_to(id, &mut last)?;
        last.finish()
            .ok_or_else(|| crate::error::Error::Refused(format!("no window for {id}")))
    }

    /// The raw view's last `bytes` bytes or so, in whole records, and whether records before
    /// them were left out (the browser pages raw from its end). By default all of `raw`.
    fn raw_page(&self, id: &str, _bytes: u64) -> Result<(String, bool)> {
        Ok((self.raw(id)?, false))
    }

    /// The stored records, pretty-printed where they are JSON.
    fn raw(&self, id: &str) -> Result<String>;

    /// `raw(id)` handed to `out` a piece at a time (`show --raw`). By default it is built
    /// whole first; the stores of huge logs pretty-print one record at a time (issue 11).
    fn raw_to(&self, id: &str, out: &mut dyn FnMut(&str) -> std::io::Result<()>) -> Result<()> {
        let text = self.raw(id)?;
        out(&text).map_err(sink_error)
    }

    fn set_pinned(&self, id: &str, pinned: bool) -> Result<()>;
    /// Mark read (`false`) or unread (`true`).
    fn set_unread(&self, id: &str, unread: bool) -> Result<()>;
    fn set_archived(&self, id: &str, archived: bool) -> Result<()>;
    fn rename(&self, id: &str, title: &str) -> Result<()>;
    /// Fork into a new session of this store; `at` cuts before stored message `at` where the
    /// format allows. Returns the new id.
    fn fork(&self, id: &str, at: Option<usize>) -> Result<String>;
    fn delete(&self, id: &str) -> Result<()>;

    /// Undo a recent delete where the store keeps a trash (loom). Others refuse.
    fn undo_delete(&self, id: &str) -> Result<()> {
        Err(crate::error::Error::Refused(format!(
            "{} sessions cannot be restored after delete ({id})",
            self.kind()
        )))
    }

    /// Housekeeping when the browser exits (loom empties expired trash). Never touches a
    /// session.
    fn tidy(&self) {}

    /// What resuming `s` runs: by default its own id in its recorded cwd. A store whose
    /// agent resumes elsewhere (Codex: the last turn's directory, a subagent's parent)
    /// says so here.
    fn launch(&self, s: &SessionSummary) -> Result<Launch> {
        Ok(Launch {
            id: s.id.to_string(),
            cwd: s.cwd.clone().map(String::from),
            unarchive_first: false,
        })
    }

    /// Whether another process holds the session right now (harness lease probe, loom open
    /// handle). Read-only; used before resume and shown on demand.
    fn in_use(&self, _id: &str) -> bool {
        false
    }
}

/// `std::thread::available_parallelism`, asked once per process: each call opens and reads
/// the cgroup's CPU quota files and asks `sched_getaffinity`, and a warm `spool list` asked
/// eleven times, from the threads it starts (issue 10).
pub fn cores() -> Option<std::num::NonZeroUsize> {
    static CORES: std::sync::OnceLock<Option<std::num::NonZeroUsize>> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().ok())
}

/// Directories' candidates and their keys (`Store::discover_keyed`'s pieces), end to end.
pub(crate) fn concat_keyed(pieces: Vec<(Vec<Candidate>, Vec<u64>)>) -> (Vec<Candidate>, Vec<u64>) {
    let n = pieces.iter().map(|p| p.0.len()).sum();
    let (mut candidates, mut keys) = (Vec::with_capacity(n), Vec::with_capacity(n));
    for (c, k) in pieces {
        debug_assert_eq!(c.len(), k.len(), "a piece is keyed");
        candidates.extend(c);
        keys.extend(k);
    }
    (candidates, keys)
}

/// Run `work` on each part on a scoped thread of its own and gather what they return, in
/// the parts' order; a part whose thread panicked gives nothing (one bad session is never a
/// failed listing). Listing the stores side by side, listing a large store, and REF
/// resolution use it.
pub fn gather_parallel<P: Send, R: Send>(
    parts: impl IntoIterator<Item = P>,
    work: impl Fn(P) -> Vec<R> + Sync,
) -> Vec<R> {
    let work = &work;
    std::thread::scope(|scope| {
        let handles: Vec<_> = parts
            .into_iter()
            .map(|p| scope.spawn(move || work(p)))
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_default())
            .collect()
    })
}

/// The listing pass of a store that reads whole files for its counts: candidates spread over
/// the machine's cores (at most 8 threads).
pub fn list_parallel(store: &dyn Store) -> Vec<SessionSummary> {
    let candidates = store.discover();
    let threads = cores().map_or(1, |n| n.get()).clamp(1, 8);
    let chunk = candidates.len().div_ceil(threads).max(1);
    gather_parallel(candidates.chunks(chunk), |part| {
        part.iter().filter_map(|c| store.summarize(c)).collect()
    })
}

/// Whether deleting `s` takes an archive first: Loop deletes only archived sessions
/// (loop.md 9.7), so the browser's one confirmation and `delete --yes` archive, then delete.
pub fn delete_archives_first(s: &SessionSummary) -> bool {
    s.store == StoreKind::Loop && !s.archived
}

/// Delete `s` as the user confirmed it: archived first where the store requires that. When
/// the delete then fails the session stays archived, and the sentence says so.
pub fn delete_confirmed(store: &dyn Store, s: &SessionSummary) -> Result<()> {
    if !delete_archives_first(s) {
        return store.delete(&s.id);
    }
    store.set_archived(&s.id, true)?;
    store.delete(&s.id).map_err(|e| {
        crate::error::Error::Refused(format!(
            "{} was archived but not deleted: {e}",
            s.reference()
        ))
    })
}

/// The refusal for a fork whose cut keeps no user message: the new session would be empty,
/// and the default list hides empty sessions, so it would seem to vanish.
pub fn empty_fork(kind: StoreKind, id: &str, at: usize) -> crate::error::Error {
    crate::error::Error::Refused(format!(
        "forking {kind}:{id} before message {at} would copy no user message and make an \
         empty session; fork at a later message, or whole"
    ))
}

/// Keep only the last N rounds of `entries`: `(kept, total rounds, first kept round)`.
/// Shared by the readers that parse the whole history (or a tail of it) first.
pub fn last_rounds(
    entries: Vec<crate::model::Entry>,
    span: Span,
) -> (Vec<crate::model::Entry>, usize, usize) {
    let msg_pos: Vec<usize> = entries
        .iter()
        .enumerate()
        .filter_map(|(i, e)| matches!(e, crate::model::Entry::Message(_)).then_some(i))
        .collect();
    let msgs: Vec<&crate::model::Message> = entries
        .iter()
        .filter_map(|e| match e {
            crate::model::Entry::Message(m) => Some(m.as_ref()),
            _ => None,
        })
        .collect();
    let starts = crate::model::round_starts(&msgs);
    let total = starts.len();
    let n = match span {
        Span::All => return (entries, total, 0),
        Span::LastRounds(n) => n,
    };
    if n >= total {
        return (entries, total, 0);
    }
    let first = total - n;
    let cut = starts
        .get(first)
        .and_then(|&s| msg_pos.get(s))
        .copied()
        .unwrap_or(entries.len());
    (entries.into_iter().skip(cut).collect(), total, first)
}

#[cfg(test)]
mod cores_tests {
    /// The cached count is the one std gives, on every call and from any thread.
    #[test]
    fn cores_is_what_std_says_from_any_thread() {
        let want = std::thread::available_parallelism().ok();
        assert!(want.is_some());
        assert_eq!(super::cores(), want);
        let other = std::thread::spawn(super::cores).join().unwrap();
        assert_eq!(other, want);
        assert_eq!(super::cores(), want);
    }
}
