//! Background threads; nothing here runs on the UI thread.
//!
//! * One listing thread per store: cheap discovery first, then summaries in batches (sent as
//!   `Action::Rows` with `Action::Progress`), so the first screen paints before the store is
//!   read. The same thread then watches the store (`notify`, with a one-second poll as
//!   fallback) and re-summarizes what changed.
//! * One pane worker: requests land in a one-slot mailbox, so only the newest runs; answers
//!   carry the request token and the app drops stale ones.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Condvar, Mutex};
use std::thread;
use std::time::{Duration, Instant, SystemTime};

use notify::{RecursiveMode, Watcher};

use crate::app::{Action, Loaded, View};
use crate::model::SessionSummary;
use crate::store::{Candidate, Span, Store, Stores};

/// Everything the run loop waits for.
#[derive(Debug)]
pub enum Event {
    /// Raw terminal input (keys are filtered to presses by the run loop).
    Input(crossterm::event::Event),
    /// A state change from a background thread.
    Action(Action),
    /// The matcher has news: tick and redraw.
    Wake,
}

impl From<crossterm::event::Event> for Event {
    fn from(e: crossterm::event::Event) -> Event {
        Event::Input(e)
    }
}

/// Summaries per batch, and the longest a batch waits before it is sent. The first batch of
/// each store is small so the first screen fills as soon as a screenful is read.
const FIRST_BATCH: usize = 48;
const BATCH: usize = 256;
const BATCH_WAIT: Duration = Duration::from_millis(50);
/// Poll interval when no watcher could be set up (and the longest a change waits).
const POLL: Duration = Duration::from_secs(1);

/// One pane request.
#[derive(Clone, Debug)]
pub struct Request {
    pub token: u64,
    pub summary: SessionSummary,
    pub view: View,
    pub rounds: Option<usize>,
}

type Mailbox = Arc<(Mutex<Option<Request>>, Condvar)>;

/// Handle to the background threads.
pub struct Loader {
    mailbox: Mailbox,
    pokes: Vec<Sender<()>>,
}

impl Loader {
    /// Start listing and watching every store, and the pane worker.
    pub fn start(stores: Arc<Stores>, tx: Sender<Event>) -> Loader {
        let mut pokes = Vec::new();
        for i in 0..stores.stores.len() {
            let (ptx, prx) = mpsc::channel();
            pokes.push(ptx.clone());
            let (stores, tx) = (stores.clone(), tx.clone());
            let _ = thread::Builder::new()
                .name(format!("spool-list-{i}"))
                .spawn(move || list_and_watch(&stores, i, &tx, ptx, prx));
        }
        let mailbox: Mailbox = Arc::new((Mutex::new(None), Condvar::new()));
        let mb = mailbox.clone();
        let _ = thread::Builder::new()
            .name("spool-pane".into())
            .spawn(move || pane_worker(&stores, &mb, &tx));
        Loader { mailbox, pokes }
    }

    /// Ask for pane content; replaces any request not started yet.
    pub fn request(&self, r: Request) {
        let (lock, cv) = &*self.mailbox;
        if let Ok(mut slot) = lock.lock() {
            *slot = Some(r);
            cv.notify_one();
        }
    }

    /// Re-scan every store now.
    pub fn poke(&self) {
        for p in &self.pokes {
            let _ = p.send(());
        }
    }

    /// Re-read one session's summary now (after the browser wrote to it).
    pub fn refresh(&self, stores: &Arc<Stores>, s: &SessionSummary, tx: &Sender<Event>) {
        let (stores, s, tx) = (stores.clone(), s.clone(), tx.clone());
        let _ = thread::Builder::new()
            .name("spool-refresh".into())
            .spawn(move || {
                let c = Candidate {
                    id: s.id.clone(),
                    path: s.path.clone(),
                    mtime: None,
                };
                let store = stores.store_for(&s);
                let row = store.summarize(&c);
                let key = (s.store, s.id.clone());
                let msg = match row {
                    Some(r) => Action::Rows(vec![r]),
                    None => Action::Removed(vec![key.clone()]),
                };
                let _ = tx.send(Event::Action(msg));
                let _ = tx.send(Event::Action(Action::SessionChanged(key)));
            });
    }
}

fn pane_worker(stores: &Stores, mailbox: &Mailbox, tx: &Sender<Event>) {
    let (lock, cv) = &**mailbox;
    loop {
        let req = {
            let Ok(mut slot) = lock.lock() else { return };
            while slot.is_none() {
                slot = match cv.wait(slot) {
                    Ok(s) => s,
                    Err(_) => return,
                };
            }
            slot.take()
        };
        let Some(req) = req else { continue };
        let content = load(stores, &req);
        let msg = Event::Action(Action::Loaded {
            token: req.token,
            content,
        });
        if tx.send(msg).is_err() {
            return;
        }
    }
}

/// Read one pane request from its store.
pub fn load(stores: &Stores, req: &Request) -> Loaded {
    let store = stores.store_for(&req.summary);
    let id = &req.summary.id;
    let r = match req.view {
        View::Transcript => {
            let span = req.rounds.map(Span::LastRounds).unwrap_or(Span::All);
            store
                .transcript(id, span)
                .map(|t| Loaded::Transcript(Arc::new(t)))
        }
        View::Window => store.window(id).map(|w| Loaded::Window(Arc::new(w))),
        View::Raw => store.raw(id).map(|r| Loaded::Raw(Arc::new(r))),
    };
    r.unwrap_or_else(|e| Loaded::Failed(e.to_string()))
}

/// A cheap change detector: size and mtime of the path and, for a directory session, of its
/// direct entries (appends to `messages.jsonl` do not touch the directory's mtime).
fn fingerprint(p: &Path) -> u64 {
    fn of(m: &std::fs::Metadata) -> u64 {
        let t = m
            .modified()
            .ok()
            .and_then(|t| t.duration_since(SystemTime::UNIX_EPOCH).ok())
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0);
        t ^ m.len().rotate_left(17)
    }
    let Ok(m) = std::fs::symlink_metadata(p) else {
        return 0;
    };
    let mut h = of(&m);
    if m.is_dir()
        && let Ok(rd) = std::fs::read_dir(p)
    {
        for e in rd.flatten().take(64) {
            if let Ok(m) = e.metadata() {
                h = h.rotate_left(5) ^ of(&m);
            }
        }
    }
    h
}

fn list_and_watch(
    stores: &Stores,
    i: usize,
    tx: &Sender<Event>,
    poke_tx: Sender<()>,
    pokes: Receiver<()>,
) {
    let store = stores.stores[i].as_ref();
    let kind = store.kind();
    let progress = |done, total, finished| {
        tx.send(Event::Action(Action::Progress {
            store: i,
            kind,
            done,
            total,
            finished,
        }))
        .is_ok()
    };
    // Last run's top sessions first: the first screen needs a screenful, not the whole store.
    let cache = crate::hints::cache_dir();
    let hinted: Vec<Candidate> = cache
        .as_deref()
        .map(|c| crate::hints::read(c, store.sessions_dir()))
        .unwrap_or_default();
    let mut early: HashMap<String, PathBuf> = HashMap::new();
    let mut top: Vec<SessionSummary> = Vec::new();
    if !hinted.is_empty() {
        let rows: Vec<SessionSummary> = hinted.iter().filter_map(|c| store.summarize(c)).collect();
        for r in &rows {
            early.insert(r.id.clone(), r.path.clone());
            remember_top(&mut top, r);
        }
        if tx.send(Event::Action(Action::Rows(rows))).is_err() {
            return;
        }
    }

    let candidates = store.discover();
    let total = candidates.len();
    if !progress(0, total, false) {
        return;
    }
    let mut known: HashMap<String, (PathBuf, u64)> = HashMap::new();
    let mut batch = Vec::new();
    let mut sent = Instant::now();
    for (n, c) in candidates.iter().enumerate() {
        known.insert(c.id.clone(), (c.path.clone(), fingerprint(&c.path)));
        // A hinted session already sent is only read again if it moved.
        let already = early.remove(&c.id).is_some_and(|p| p == c.path);
        if !already && let Some(s) = store.summarize(c) {
            remember_top(&mut top, &s);
            batch.push(s);
        }
        let want = if n < FIRST_BATCH { FIRST_BATCH } else { BATCH };
        if batch.len() >= want || sent.elapsed() >= BATCH_WAIT {
            let rows = std::mem::take(&mut batch);
            if tx.send(Event::Action(Action::Rows(rows))).is_err() || !progress(n + 1, total, false)
            {
                return;
            }
            sent = Instant::now();
        }
    }
    if !batch.is_empty() && tx.send(Event::Action(Action::Rows(batch))).is_err() {
        return;
    }
    // Hinted sessions that discovery no longer finds are gone.
    if !early.is_empty() {
        top.retain(|r| !early.contains_key(&r.id));
        let gone = early.into_keys().map(|id| (kind, id)).collect();
        if tx.send(Event::Action(Action::Removed(gone))).is_err() {
            return;
        }
    }
    if let Some(c) = &cache {
        crate::hints::write(c, store.sessions_dir(), &top);
    }
    if !progress(total, total, true) {
        return;
    }
    watch(store, tx, &mut known, poke_tx, &pokes);
}

/// Keep the best `hints::KEEP` rows (list order) seen so far, for the next start's hints.
fn remember_top(top: &mut Vec<SessionSummary>, s: &SessionSummary) {
    // A moved session's newer row replaces the hinted one.
    top.retain(|r| r.id != s.id);
    top.push(s.clone());
    if top.len() >= 4 * crate::hints::KEEP {
        top.sort_by(crate::store::registry::list_order);
        top.truncate(crate::hints::KEEP);
    }
}

/// Wait for changes (file events or the poll interval) and send re-summarized rows.
fn watch(
    store: &dyn Store,
    tx: &Sender<Event>,
    known: &mut HashMap<String, (PathBuf, u64)>,
    poke_tx: Sender<()>,
    pokes: &Receiver<()>,
) {
    let dir = store.sessions_dir().to_path_buf();
    // Paths named by file events: sidecar metadata (pins, read marks) lives beside the
    // session, so a session whose id appears in a changed path is re-read too.
    let hits: Arc<Mutex<Vec<PathBuf>>> = Arc::default();
    let h2 = hits.clone();
    let watcher = notify::recommended_watcher(move |r: notify::Result<notify::Event>| {
        if let Ok(ev) = r {
            // Reads (ours included) raise access events; reacting to them would re-read in a
            // loop. Only creation, change and removal matter.
            if matches!(ev.kind, notify::EventKind::Access(_)) {
                return;
            }
            if let Ok(mut h) = h2.lock() {
                h.extend(ev.paths);
            }
            let _ = poke_tx.send(());
        }
    });
    // Keep the watcher alive for the life of this thread; fall back to polling without it.
    let mut watcher = watcher.ok();
    let watching = match watcher.as_mut() {
        Some(w) if dir.is_dir() => w.watch(&dir, RecursiveMode::Recursive).is_ok(),
        _ => false,
    };
    let wait = if watching { POLL * 5 } else { POLL };
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
        let touched = hits
            .lock()
            .map(|mut h| std::mem::take(&mut *h))
            .unwrap_or_default();
        if !rescan(store, tx, known, &touched) {
            return;
        }
    }
}

/// Compare fingerprints with the last pass; send changed and new rows, and removals.
fn rescan(
    store: &dyn Store,
    tx: &Sender<Event>,
    known: &mut HashMap<String, (PathBuf, u64)>,
    touched: &[PathBuf],
) -> bool {
    let candidates: Vec<Candidate> = store.discover();
    let mut rows = Vec::new();
    let mut changed = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for c in &candidates {
        seen.insert(c.id.clone());
        let fp = fingerprint(&c.path);
        let is_new = !known.contains_key(&c.id);
        let named = touched
            .iter()
            .any(|p| p.starts_with(&c.path) || p.to_string_lossy().contains(c.id.as_str()));
        let differs = known.get(&c.id).is_some_and(|(_, old)| *old != fp) || (named && !is_new);
        if is_new || differs {
            known.insert(c.id.clone(), (c.path.clone(), fp));
            if let Some(s) = store.summarize(c) {
                if differs {
                    changed.push((s.store, s.id.clone()));
                }
                rows.push(s);
            }
        }
    }
    let gone: Vec<String> = known
        .keys()
        .filter(|id| !seen.contains(*id))
        .cloned()
        .collect();
    let kind = store.kind();
    for id in &gone {
        known.remove(id);
    }
    if !gone.is_empty() {
        let keys = gone.into_iter().map(|id| (kind, id)).collect();
        if tx.send(Event::Action(Action::Removed(keys))).is_err() {
            return false;
        }
    }
    if !rows.is_empty() && tx.send(Event::Action(Action::Rows(rows))).is_err() {
        return false;
    }
    for k in changed {
        if tx.send(Event::Action(Action::SessionChanged(k))).is_err() {
            return false;
        }
    }
    true
}
