//! The watcher side of a store's listing thread: file events (or a poll) name what changed,
//! and only that is re-read and sent to the app and the catalog.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

#[cfg(target_os = "linux")]
#[path = "inotify.rs"]
mod backend;
#[cfg(not(target_os = "linux"))]
#[path = "notify_watch.rs"]
mod backend;
/// Linux's tests build and run the other systems' backend as well, so it cannot rot unseen
/// where only Linux is built.
#[cfg(all(test, target_os = "linux"))]
#[path = "notify_watch.rs"]
mod notify_backend;
use backend::{Backend, Handle};

use super::{Event, POLL, SAFETY_PASS, fingerprint};
use crate::app::Action;
use crate::catalog::live::Cat;
use crate::store::{Candidate, Store, Stores, WatchDir};

/// The watcher of one store while it is being set up in its own thread.
pub(super) enum WatchSetup {
    Pending(Arc<Stores>, usize, Sender<()>),
    Running(thread::JoinHandle<Watch>),
    Failed,
}

impl WatchSetup {
    /// Start setting up (once).
    pub(super) fn start(&mut self) {
        if let WatchSetup::Pending(..) = self
            && let WatchSetup::Pending(stores, i, poke_tx) =
                std::mem::replace(self, WatchSetup::Failed)
        {
            let spawned = thread::Builder::new()
                .name("spool-watch-setup".into())
                .spawn(move || {
                    // Started as the first rows go out: their frame is drawn and read first.
                    crate::tui::ack::after_frame();
                    Watch::start(stores.stores[i].as_ref(), poke_tx)
                });
            if let Ok(h) = spawned {
                *self = WatchSetup::Running(h);
            }
        }
    }

    /// Wait for the setup to end.
    pub(super) fn finish(self) -> Option<Watch> {
        match self {
            WatchSetup::Running(h) => h.join().ok(),
            _ => None,
        }
    }
}

/// What the watch's events named since the last look.
#[derive(Default)]
pub(super) struct Hits {
    pub(super) paths: Vec<PathBuf>,
    /// Events were dropped (the kernel's queue overflowed): anything may have changed.
    pub(super) lost: bool,
}

/// The file watcher of one store and the paths its events named since the last look.
pub(super) struct Watch {
    pub(super) active: bool,
    hits: Arc<Mutex<Hits>>,
    backend: Option<Backend>,
    /// Held so a store whose watcher could not be made (inotify's per-user limit of
    /// descriptors) is still polled: with the backend's sender gone too, the loader's
    /// channel of pokes would disconnect and end its loop.
    _poke: Sender<()>,
    /// What `start` registered: a new directory an event names within their depths is
    /// registered too (notify's recursive mode did that on its own).
    roots: Vec<WatchDir>,
    /// Registrations allowed before one fails as at the kernel's limit (tests inject it).
    limit: usize,
    /// Directories registered, and directories read to find them.
    pub(super) registered: usize,
    pub(super) read: usize,
}

/// How one registration went.
/// (Generic over the handle so that tests on Linux build the other systems' backend too.)
pub(super) enum Reg<H = Handle> {
    /// Watched, by `handle`; `new` unless it was watched already (registered again).
    Done {
        handle: H,
        new: bool,
    },
    /// The directory is gone (removed between its parent's read and here): its removal is an
    /// event in the watched parent, and there is nothing in it to watch.
    Gone,
    Failed,
}

impl Watch {
    /// Register the store's `watch_dirs`. The watch is active only when every one of them
    /// is registered: a store partly watched would miss changes, so it is polled instead.
    pub(super) fn start(store: &dyn Store, poke_tx: Sender<()>) -> Watch {
        Watch::start_limited(store, poke_tx, usize::MAX)
    }

    /// `start`, with at most `limit` registrations (the kernel's watch limit, made small).
    pub(super) fn start_limited(store: &dyn Store, poke_tx: Sender<()>, limit: usize) -> Watch {
        let hits: Arc<Mutex<Hits>> = Arc::default();
        let mut watch = Watch {
            active: false,
            backend: Backend::new(hits.clone(), poke_tx.clone()),
            _poke: poke_tx,
            hits,
            roots: Vec::new(),
            limit,
            registered: 0,
            read: 0,
        };
        if store.sessions_dir().is_dir() {
            let dirs = store.watch_dirs();
            watch.active = watch.backend.is_some() && watch.add(&dirs);
            watch.roots = dirs;
            if let Some(b) = &watch.backend {
                b.settle();
            }
        }
        let kind = store.kind().as_str();
        crate::keytrace::phase_since_launch(&format!("watched_{kind}_at"));
        crate::keytrace::count(&format!("watches_{kind}"), watch.registered);
        crate::keytrace::count(&format!("watch_dirs_read_{kind}"), watch.read);
        watch
    }

    /// Register `dirs`; false when one could not be.
    fn add(&mut self, dirs: &[WatchDir]) -> bool {
        dirs.iter().all(|d| self.add_tree(d))
    }

    /// Register `d.path` and its subdirectories down to `d.depth` levels, each on its own.
    /// notify's recursive mode walked the whole tree following links and stat'ed every file
    /// to find the directories: about 0.6 s of CPU at 100k sessions, beside the stores' own
    /// checks (issue 10). Here entry types come from the directory read (no stat of an
    /// entry), a symlink is never followed, and a dot-named subdirectory is skipped (see
    /// `WatchDir`). A directory is registered before it is read, so a subdirectory made
    /// meanwhile is either read here or raises an event. Each subdirectory is registered
    /// under its parent's handle: the watch keeps its name, not its path.
    fn add_tree(&mut self, d: &WatchDir) -> bool {
        // A root its store saw to hold no subdirectory is not read (1,458 `subagents/`
        // listings at 10k Claude sessions, none holding a directory).
        let depth = if d.leaf { 0 } else { d.depth };
        let mut todo: Vec<(PathBuf, u32, Option<Handle>)> = vec![(d.path.clone(), depth, None)];
        while let Some((dir, depth, parent)) = todo.pop() {
            let handle = match self.register(&dir, parent) {
                Reg::Done { handle, .. } => handle,
                Reg::Gone => continue,
                Reg::Failed => return false,
            };
            if depth == 0 {
                continue;
            }
            self.read += 1;
            // Unreadable: nothing in it is listed either (the rescan gives its error row).
            let Ok(rd) = std::fs::read_dir(&dir) else {
                continue;
            };
            for e in rd.flatten() {
                if e.file_name().as_encoded_bytes().starts_with(b".") {
                    continue;
                }
                if e.file_type().is_ok_and(|t| t.is_dir()) {
                    todo.push((e.path(), depth - 1, Some(handle)));
                }
            }
        }
        true
    }

    /// One directory, without its subdirectories.
    fn register(&mut self, dir: &std::path::Path, parent: Option<Handle>) -> Reg {
        let Some(b) = self.backend.as_mut() else {
            return Reg::Failed;
        };
        if self.registered >= self.limit {
            // As the kernel would: a missing directory is missing, not one too many.
            return if dir.is_dir() { Reg::Failed } else { Reg::Gone };
        }
        let r = b.register(dir, parent);
        if let Reg::Done { new: true, .. } = r {
            self.registered += 1;
        }
        r
    }

    /// A new directory that `path` names within a root's depth, with the levels left below
    /// it, or a flat root made after the start (the sidecar directory, made at the first
    /// pin). Names only: the caller checks that it is a directory.
    fn within_roots(&self, path: &std::path::Path) -> Option<WatchDir> {
        self.roots.iter().find_map(|r| {
            if r.depth == 0 && r.path == path {
                return Some(r.clone());
            }
            let rel = path.strip_prefix(&r.path).ok()?;
            let mut levels = 0u32;
            for c in rel.components() {
                let std::path::Component::Normal(name) = c else {
                    return None;
                };
                if name.as_encoded_bytes().starts_with(b".") {
                    return None;
                }
                levels += 1;
            }
            (levels >= 1 && levels <= r.depth).then(|| WatchDir {
                path: path.to_path_buf(),
                depth: r.depth - levels,
                leaf: false,
            })
        })
    }

    /// Register what events named in `touched`: a new directory within the roots' depths
    /// (made or renamed into place), and what the store asks for (a new project directory,
    /// say). Done before the rescan that follows: anything made after this is evented,
    /// anything made before is found by the rescan's discovery.
    pub(super) fn extend(&mut self, store: &dyn Store, touched: &[PathBuf]) {
        if !self.active {
            return;
        }
        let mut named: Vec<&PathBuf> = touched.iter().collect();
        named.sort();
        named.dedup();
        let mut dirs: Vec<WatchDir> = named.iter().flat_map(|p| store.watch_more(p)).collect();
        // A file's event (most of them) costs no stat here when its depth is beyond every
        // root's: a Loop session's own files, say.
        dirs.extend(named.iter().filter_map(|p| {
            let d = self.within_roots(p)?;
            std::fs::symlink_metadata(p)
                .is_ok_and(|m| m.is_dir())
                .then_some(d)
        }));
        dirs.sort();
        dirs.dedup();
        if !self.add(&dirs) {
            // Some directory could not be watched (the inotify limit): poll from now on.
            self.active = false;
        }
    }

    /// What events named since the last look, and whether any were lost (and forget both,
    /// under one lock: an overflow flagged meanwhile is read with the paths named before it).
    pub(super) fn take(&self) -> Hits {
        self.hits
            .lock()
            .map(|mut h| std::mem::take(&mut *h))
            .unwrap_or_default()
    }

    /// What the next rescan takes: the paths events named, and whether it compares every
    /// session's keys. That is when polled, and when the kernel dropped events: then
    /// anything may have changed, in directories made meanwhile and never registered too,
    /// so the roots are walked again first (what is watched already keeps its watch).
    fn next_pass(&mut self, store: &dyn Store) -> (Vec<PathBuf>, bool) {
        let Hits {
            paths: touched,
            lost,
        } = self.take();
        if lost && self.active {
            let roots = std::mem::take(&mut self.roots);
            self.active = self.add(&roots);
            self.roots = roots;
        }
        self.extend(store, &touched);
        (touched, lost || !self.active)
    }
}

/// Wait for changes and send re-summarized rows. With a watcher, only what its events name
/// is re-read (plus discovery for new and removed sessions), and a slow safety pass runs
/// every minute; without one, every session's fingerprint is compared at an interval that
/// grows with the cost of a pass, so a huge store is not re-scanned flat out.
pub(super) fn watch_loop(
    store: &dyn Store,
    tx: &Sender<Event>,
    known: &mut crate::catalog::Known,
    watch: &mut Watch,
    pokes: &Receiver<()>,
    stop: &AtomicBool,
    cat: &Cat,
) {
    let mut wait = if watch.active { SAFETY_PASS } else { POLL };
    loop {
        match pokes.recv_timeout(wait) {
            Ok(()) => {
                // Let a burst of writes settle, then take them in one pass.
                thread::sleep(Duration::from_millis(60));
                while pokes.try_recv().is_ok() {}
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => return,
        }
        if stop.load(Ordering::SeqCst) {
            return;
        }
        let started = Instant::now();
        // A store that can no longer be fully watched is polled from here on; its keys were
        // 0 while watched, so its first polling pass re-reads every session once (as does a
        // pass after events were lost).
        let (touched, fingerprints) = watch.next_pass(store);
        if !rescan(store, tx, known, &touched, fingerprints, cat) {
            return;
        }
        crate::keytrace::phase_since_launch(&format!("rescanned_{}_at", store.kind().as_str()));
        if !watch.active {
            wait = POLL.max(started.elapsed() * 20);
        }
    }
}

/// Compare with the last pass: new sessions, removed sessions, sessions named by `touched`
/// paths, and (when `fingerprints`) sessions whose size or mtime changed.
pub(super) fn rescan(
    store: &dyn Store,
    tx: &Sender<Event>,
    known: &mut crate::catalog::Known,
    touched: &[PathBuf],
    fingerprints: bool,
    cat: &Cat,
) -> bool {
    let since = Instant::now();
    let candidates: Vec<Candidate> = crate::store::discover_exact(store);
    let mut rows = Vec::new();
    let mut fresh = Vec::new();
    let mut changed = Vec::new();
    // Borrowed from the candidates: a pass copied every id into this set (issue 10).
    let mut seen: std::collections::HashSet<&str> =
        std::collections::HashSet::with_capacity(candidates.len());
    // Sidecar state (pins, read marks) lives beside the session: a changed path that contains
    // the id names the session too.
    let named = |c: &Candidate| {
        touched
            .iter()
            .any(|p| p.starts_with(&c.path) || p.to_string_lossy().contains(c.id.as_str()))
    };
    for c in &candidates {
        seen.insert(c.id.as_str());
        let fp = if fingerprints {
            fingerprint(store, c)
        } else {
            0
        };
        // One lookup a candidate.
        let slot = known.get(&c.id).copied();
        let is_new = slot.is_none();
        let moved = slot.is_some_and(|s| s.path != crate::catalog::known::path_hash(&c.path));
        // Keys are compared only when this pass took them: with a watcher `fp` is 0, and a
        // warm start's known keys (the catalog's) differed from it for every session, so the
        // first event re-read the whole store (66k sessions at 100k: seconds of work and a
        // Reread of every row, issue 10).
        let rekeyed = fingerprints && slot.is_some_and(|s| s.key != fp);
        let differs = !is_new && (moved || rekeyed || named(c));
        if is_new || differs {
            known.insert(&*c.id, &c.path, fp);
            let e = crate::catalog::pass::read(store, c);
            // Shared with the list, not copied (issue 10).
            let row = e.row.clone();
            fresh.push(e);
            if let Some(s) = row {
                if differs {
                    changed.push((s.store, s.id.to_string()));
                }
                rows.push(s);
            }
        }
    }
    let gone: Vec<String> = (known.remove_if(|id| !seen.contains(id)).into_iter())
        .map(|id| id.to_string())
        .collect();
    let kind = store.kind();
    cat.record(store, &fresh, &gone);
    if !gone.is_empty() {
        let keys = gone.into_iter().map(|id| (kind, id)).collect();
        if tx.send(Event::Action(Action::Removed(keys))).is_err() {
            return false;
        }
    }
    if !rows.is_empty()
        && tx
            .send(Event::Action(Action::Reread { rows, since }))
            .is_err()
    {
        return false;
    }
    for k in changed {
        if tx.send(Event::Action(Action::SessionChanged(k))).is_err() {
            return false;
        }
    }
    true
}

#[cfg(test)]
#[path = "watch_tests.rs"]
mod tests;
