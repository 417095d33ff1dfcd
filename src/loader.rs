//! Background threads; nothing here runs on the UI thread.
//!
//! * One listing thread per store: cheap discovery first, then summaries in batches (sent as
//!   `Action::Cached` with `Action::Progress`), so the first screen paints before the store is
//!   read. The same thread then watches the store (inotify on Linux, elsewhere `notify`;
//!   with a one-second poll as fallback) and re-summarizes what changed.
//! * One pane worker: requests land in a one-slot mailbox, so only the newest runs; answers
//!   carry the request token and the app drops stale ones.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Condvar, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use crate::app::{Action, View};
use crate::catalog::Entry;
use crate::catalog::checkpoint::Checkpoint;
use crate::catalog::live::{Cat, Early, check_cached};
use crate::catalog::warm::Warm;
use crate::model::SessionSummary;
use crate::store::{Candidate, Store, Stores};

mod ahead;
mod first;
mod gate;
mod pane;
mod watch;
use ahead::{ReadAhead, Staged, read_one};
pub use first::set_screenful;
use first::{FIRST_ROWS_WAIT, FirstRows, Runner, first_batch};
use gate::{Gate, Opener};
pub use pane::load;
use pane::pane_worker;
#[cfg(test)]
use watch::rescan;
use watch::{Watch, WatchSetup, watch_loop};

/// Everything the run loop waits for.
#[derive(Debug)]
pub enum Event {
    /// Raw terminal input (keys are filtered to presses by the run loop).
    Input(crossterm::event::Event),
    /// A state change from a background thread.
    Action(Action),
    /// The matcher has news: tick and redraw.
    Wake,
    /// A session operation finished (in the ops worker, or resume on the main thread).
    OpFinished(Box<crate::app::Outcome>),
}

impl Event {
    /// The event's name in the trace (`SPOOL_KEYTRACE`).
    pub fn kind(&self) -> &'static str {
        use crossterm::event::Event as Term;
        match self {
            Event::Input(Term::Key(_)) => "key",
            Event::Input(Term::Paste(_)) => "paste",
            Event::Input(Term::Resize(..)) => "resize",
            Event::Input(_) => "input",
            Event::Action(a) => a.kind(),
            Event::Wake => "wake",
            Event::OpFinished(_) => "op_finished",
        }
    }
}

impl From<crossterm::event::Event> for Event {
    fn from(e: crossterm::event::Event) -> Event {
        Event::Input(e)
    }
}

/// Summaries per batch, and the longest a batch waits before it is sent. The first batch of
/// each store is small so the first screen fills as soon as a screenful is read: a
/// screenful and a few more when the browser has told the list's height, else 32.
const FIRST_BATCH: usize = 32;
const BATCH: usize = 256;
const BATCH_WAIT: Duration = Duration::from_millis(50);
const MAX_BATCH_WAIT: Duration = Duration::from_millis(500);
/// Progress ("loading 1,234 / 10,000") is reported this often, batch or not.
const PROGRESS_EVERY: Duration = Duration::from_millis(100);
/// Poll interval when no watcher could be set up (the shortest; it grows with the store).
const POLL: Duration = Duration::from_secs(1);
/// With a watcher, a full discovery pass this often catches anything events missed.
const SAFETY_PASS: Duration = Duration::from_secs(60);

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
    /// Set on drop: every background thread returns at its next check.
    stop: Arc<AtomicBool>,
}

impl Drop for Loader {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        self.poke();
        self.mailbox.1.notify_all();
    }
}

impl Loader {
    /// Start listing and watching every store, and the pane worker (no catalog).
    pub fn start(stores: Arc<Stores>, tx: Sender<Event>) -> Loader {
        Loader::start_with(stores, tx, None)
    }

    /// Start with spool's catalog: a store with cached rows (already shown) gets a stat
    /// pass that sends only what changed; one without is listed cold. Either way the
    /// catalog is kept current, then and while spool runs.
    pub fn start_with(stores: Arc<Stores>, tx: Sender<Event>, warm: Option<Warm>) -> Loader {
        Loader::start_after(stores, tx, move |give| give(warm), false)
    }

    /// As `start_with`, with the catalog read by `open` on a thread of its own (it sends the
    /// cached rows itself): the UI answers keys while a large catalog decodes (issue 10:
    /// about 360 ms at 100k sessions). The stores' checks start once it returns, so their
    /// news always follows the cached rows on the channel.
    pub fn start_deferred(
        stores: Arc<Stores>,
        tx: Sender<Event>,
        open: impl FnOnce() -> Option<Warm> + Send + 'static,
    ) -> Loader {
        Loader::start_after(stores, tx, move |give| give(open()), true)
    }

    /// As `start_deferred`, with `open` handing the metas over (`give`) as soon as they are
    /// decoded: the stores check while it still sends the rows, and their news waits until
    /// `open` returns (`gate`). At 100k sessions the rows are put in order after the decode
    /// (~100 ms of CPU), and the checks began only after that (issue 10).
    pub fn start_checking_early(
        stores: Arc<Stores>,
        tx: Sender<Event>,
        open: impl FnOnce(&mut dyn FnMut(Option<Warm>)) + Send + 'static,
    ) -> Loader {
        Loader::start_after(stores, tx, open, true)
    }

    fn start_after(
        stores: Arc<Stores>,
        tx: Sender<Event>,
        open: impl FnOnce(&mut dyn FnMut(Option<Warm>)) + Send + 'static,
        deferred: bool,
    ) -> Loader {
        let stop = Arc::new(AtomicBool::new(false));
        let channels: Vec<_> = (0..stores.stores.len()).map(|_| mpsc::channel()).collect();
        let pokes = channels.iter().map(|(p, _)| p.clone()).collect();
        // Each store's thread starts now and waits for its part of the catalog: with the
        // head on screen it surveys its store meanwhile (issue 10: at 100k the decode is one
        // thread's ~150 ms of CPU, and the surveys began only after it, leaving a core idle).
        // The part arrives after the cached rows are sent, so a store's news still follows
        // them on the channel.
        let mut parts = Vec::with_capacity(channels.len());
        for (i, (ptx, prx)) in channels.into_iter().enumerate() {
            let (part, slot) = mpsc::sync_channel::<(Cat, Arc<FirstRows>, Arc<Gate>)>(1);
            parts.push(part);
            let (stores, tx, stop) = (stores.clone(), tx.clone(), stop.clone());
            // Begun here, so that no item build can start before the pass has.
            let peak = deferred.then(|| crate::heap::PEAKS.begin());
            let _ = thread::Builder::new()
                .name(format!("spool-list-{i}"))
                .spawn(move || {
                    let early = deferred.then(|| {
                        // As the decode: the rows on screen are the head's, keys come first.
                        crate::priority::background();
                        Early::take(stores.stores[i].as_ref(), peak)
                    });
                    let Ok((cat, first, gate)) = slot.recv() else {
                        return;
                    };
                    let first = (&*first, &*gate);
                    list_and_watch(&stores, i, &tx, ptx, prx, &stop, cat, first, early)
                });
        }
        let lists = {
            let stores = stores.clone();
            move || {
                let gate = Arc::new(Gate::default());
                let _open_when_done = Opener(gate.clone());
                let mut parts = Some(parts);
                // Called once (by `open`, else after it with `None`: every store cold).
                let mut give = |warm: Option<Warm>| {
                    let Some(parts) = parts.take() else { return };
                    let (cache, mut known) = match warm {
                        Some(w) => (Some(w.cache), w.known),
                        None => (None, Vec::new()),
                    };
                    // Only stores listed cold take part: a store with cached rows sends no
                    // first rows.
                    let name_ordered = (0..stores.stores.len())
                        .filter(|&i| stores.stores[i].orders_by_name())
                        .filter(|&i| known.get(i).is_none_or(Option::is_none))
                        .count();
                    let first = Arc::new(FirstRows::new(name_ordered));
                    for (i, part) in parts.into_iter().enumerate() {
                        let cat = Cat {
                            cache: cache.clone(),
                            known: known.get_mut(i).and_then(Option::take),
                        };
                        let _ = part.send((cat, first.clone(), gate.clone()));
                    }
                };
                open(&mut give);
                give(None);
            }
        };
        if deferred {
            // The head is on screen: the decode yields to keys.
            let _ = thread::Builder::new()
                .name("spool-catalog".into())
                .spawn(move || {
                    crate::priority::background();
                    lists()
                });
        } else {
            lists();
        }
        let mailbox: Mailbox = Arc::new((Mutex::new(None), Condvar::new()));
        let (mb, stop2) = (mailbox.clone(), stop.clone());
        let _ = thread::Builder::new()
            .name("spool-pane".into())
            .spawn(move || pane_worker(&stores, &mb, &tx, &stop2));
        Loader {
            mailbox,
            pokes,
            stop,
        }
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
                let since = Instant::now();
                let c = Candidate {
                    id: s.id.to_string(),
                    path: s.path(),
                    mtime: None,
                    stat: None,
                };
                let store = stores.store_for(&s);
                let row = store.summarize(&c);
                let key = (s.store, s.id.to_string());
                let msg = match row {
                    Some(r) => Action::Reread {
                        rows: vec![Arc::new(r)],
                        since,
                    },
                    None => Action::Removed(vec![key.clone()]),
                };
                let _ = tx.send(Event::Action(msg));
                let _ = tx.send(Event::Action(Action::SessionChanged(key)));
            });
    }
}

/// The change detector of polling: the catalog's key of the files a row is derived from
/// (appends to `messages.jsonl` do not touch a directory's mtime; a pin changes a state file).
fn fingerprint(store: &dyn Store, c: &Candidate) -> u64 {
    crate::catalog::stamp::key(&store.summary_inputs(c))
}

/// The longest a warm start's watcher waits for the quick search's items to be built.
const WATCH_WAITS_AT_MOST: std::time::Duration = std::time::Duration::from_millis(500);

#[allow(clippy::too_many_arguments)]
fn list_and_watch(
    stores: &Arc<Stores>,
    i: usize,
    tx: &Sender<Event>,
    poke_tx: Sender<()>,
    pokes: Receiver<()>,
    stop: &AtomicBool,
    mut cat: Cat,
    (first, gate): (&FirstRows, &Gate),
    mut early: Option<Early>,
) {
    let store = stores.stores[i].as_ref();
    let kind = store.kind();
    // Ends once the pass's memory is freed (or the pass is not taken).
    let peak = early.as_mut().and_then(|e| e.peak.take());
    if let Some(metas) = cat.known.take() {
        // Its rows are on screen already: the stat pass and the watcher's walk yield to keys.
        crate::priority::background();
        let old = Cat::by_id(metas);
        let Some(mut known) = check_cached(store, i, tx, &cat, old, early, || gate.wait()) else {
            return;
        };
        // The survey's candidates and the pass's metas are freed (jemalloc hands their pages
        // back at once, `heap`): the pass's peak is over.
        drop(peak);
        // The watcher's walk waits for the quick search's items (`heap::ITEMS`): they are
        // what the list is searchable by, and the walk took one of their two cores.
        crate::heap::ITEMS.after(WATCH_WAITS_AT_MOST);
        let mut watch = Watch::start(store, poke_tx);
        watch_loop(store, tx, &mut known, &mut watch, &pokes, stop, &cat);
        return;
    }
    // Not in the catalog after all (it changed since the head was cut): listed cold, after
    // the catalog's rows.
    drop((early, peak));
    gate.wait();
    // A name-ordered store is in the race for the first screen until its first rows are out.
    // `then`, not `then_some`: a Runner made for another store and dropped would count as a
    // name-ordered store finished.
    let mut runner = store.orders_by_name().then(|| Runner(first));
    // The watcher is set up beside the first pass (a recursive watch of a big store takes a
    // while), started once the first rows are out so the first screen never competes with it.
    let mut setup = WatchSetup::Pending(stores.clone(), i, poke_tx);
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
    let mut hinted: Vec<Candidate> = cache
        .as_deref()
        .map(|c| crate::hints::read(c, store.sessions_dir()))
        .unwrap_or_default();
    if hinted.is_empty() {
        // No last run to go by: the store's own guess at its newest screenful, when it has
        // one cheaper than a full discovery (Codex: by the time in the rollouts' names).
        hinted = store.first_screen(first_batch());
        crate::keytrace::store_phase_since_launch("guessed", kind.as_str());
    }
    let mut early: HashMap<String, PathBuf> = HashMap::new();
    let mut top: Vec<Arc<SessionSummary>> = Vec::new();
    // With a catalog to fill, every read also keeps its meta (a cold start writes it once).
    let keep = cat.cache.is_some();
    let mut entries: HashMap<String, Entry> = HashMap::new();
    // A quit before the end keeps what was read (a 100k Claude Code store reads for minutes).
    let mut checkpoint = Checkpoint::new(cat.cache.as_deref(), kind, store.sessions_dir());
    // Rows go to the list as the `Arc`s the catalog's entries hold: the cold pass copied
    // every row, one copy for the list and one for the catalog (issue 10).
    // A session read here, or already by `read_ahead`.
    let mut summarize = |c: &Candidate, ahead: Option<ReadAhead>| -> Option<Arc<SessionSummary>> {
        let (entry, row) = ahead.unwrap_or_else(|| read_one(store, c, keep));
        if let Some(e) = entry {
            entries.insert(c.id.clone(), e);
            checkpoint.read(entries.values());
        }
        row
    };
    if !hinted.is_empty() {
        // Read as the first batch without hints: on two threads, the top rows first.
        let sent = ahead::in_two_steps(store, &hinted, keep, |step, reads| {
            let rows: Vec<Arc<SessionSummary>> = (reads.into_iter())
                .filter_map(|(c, read)| summarize(c, Some(read)))
                .collect();
            for r in &rows {
                early.insert(r.id.to_string(), r.path());
                crate::hints::remember(&mut top, r);
            }
            if step == 0 {
                crate::keytrace::store_phase_since_launch("first_rows", kind.as_str());
            }
            let sent = tx.send(Event::Action(Action::Cached(rows))).is_ok();
            first.shown();
            sent
        });
        if !sent {
            return;
        }
        crate::priority::background();
        setup.start();
        // The full discovery (both cores at 10k Codex rollouts) waits until the terminal
        // has read these rows' frame: it ran while they were drawn and read (issue 10).
        crate::tui::ack::after_frame();
    }

    // Whether this store's first rows are the first screen's, read at the UI's priority.
    let mut foreground = false;
    if runner.is_none() {
        first.wait(FIRST_ROWS_WAIT);
        if first.rows_shown() {
            // Out of the race for the first screen: the rest of the listing yields to keys.
            crate::priority::background();
        } else {
            // No rows on screen (the name-ordered stores are empty or slow): this store's
            // first batch is the first screen, and at nice 10 on a busy machine it waited
            // for a core behind everything else (issue 10's cold first paint).
            foreground = true;
        }
    }
    let candidates = store.discover();
    crate::keytrace::store_phase_since_launch("discovered", kind.as_str());
    let total = candidates.len();
    if !progress(0, total, false) {
        return;
    }
    // Fingerprints cost a stat (and a directory read per Loop session); only polling needs
    // them (a working watcher names what changed), so they are taken after the pass if at all.
    // Every candidate, sorted into the watcher's table once the pass is through.
    let mut listed = Vec::with_capacity(candidates.len());
    let mut batch = Vec::new();
    let mut sent = Instant::now();
    // For the trace: when this start's first rows went out (the cold first paint's path).
    let mut sent_any = !hinted.is_empty();
    let mut sent_progress = Instant::now();
    // Without hints the first batch is the first screen: read it on two threads, its top
    // rows first (see `ahead::FIRST_READ`).
    let first_screen = &candidates[..candidates.len().min(first_batch())];
    let mut ahead = early
        .is_empty()
        .then(|| Staged::new(store, first_screen, keep));
    for (n, c) in candidates.iter().enumerate() {
        if stop.load(Ordering::SeqCst) {
            return;
        }
        // Paused while the terminal reads the first rows' frame (at most a few ms).
        crate::tui::ack::hold();
        // A hinted session already sent is only read again if it moved.
        let already = early.remove(&c.id).is_some_and(|p| p == c.path);
        // Read ahead only without hints, so never `already`.
        let row = match ahead.as_mut().and_then(Iterator::next) {
            None if already => None,
            read => summarize(c, read),
        };
        let id = crate::catalog::known::row_id_or(row.as_deref(), &c.id);
        listed.push(crate::catalog::known::entry(id, &c.path, 0));
        if let Some(s) = row {
            crate::hints::remember(&mut top, &s);
            batch.push(s);
        }
        // Every batch re-sorts the list on the UI thread, so batches grow with the rows
        // already sent: a 100k store arrives in tens of batches, not thousands.
        let (want, wait) = batch_limits(n);
        let step = ahead.as_ref().is_some_and(|a| a.first_step_ends(n)) && !batch.is_empty();
        let read = ahead.as_ref().is_some_and(|a| a.ends(n));
        if step || read || batch.len() >= want || sent.elapsed() >= wait {
            let rows = std::mem::take(&mut batch);
            if tx.send(Event::Action(Action::Cached(rows))).is_err() {
                return;
            }
            if !std::mem::replace(&mut sent_any, true) {
                crate::keytrace::store_phase_since_launch("first_rows", kind.as_str());
            }
            // Rows are out: release the stores still waiting (cheap, and idempotent).
            first.shown();
            if step {
                // The rest of the screen is read once the terminal has read these rows'
                // frame, still at the first screen's priority, and the watcher's setup waits
                // for it (below, at the screen's end).
                crate::tui::ack::after_frame();
                sent = Instant::now();
                continue;
            }
            // This store's first rows are out: the rest yields to keys (and the watcher's
            // setup, started next, inherits it).
            let raced = runner.take().is_some();
            if raced || std::mem::take(&mut foreground) {
                crate::priority::background();
            }
            setup.start();
            sent = Instant::now();
        }
        if n % 512 == 0 && sent_progress.elapsed() >= PROGRESS_EVERY {
            if !progress(n + 1, total, false) {
                return;
            }
            sent_progress = Instant::now();
        }
    }
    if !batch.is_empty() {
        if tx.send(Event::Action(Action::Cached(batch))).is_err() {
            return;
        }
        first.shown();
    }
    let mut known = crate::catalog::Known::from_unsorted(listed);
    // Out of the race: sent (above) or nothing to send. The catalog's write and the
    // watcher's setup yield to keys.
    drop(runner);
    crate::priority::background();
    // Hinted sessions that discovery no longer finds are gone.
    if !early.is_empty() {
        top.retain(|r| !early.contains_key(&*r.id));
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
    if keep {
        // A cold pass read everything: the store's section is replaced whole.
        entries.retain(|id, _| known.contains_key(id));
        let fresh: Vec<Entry> = entries.into_values().collect();
        // A store whose directory does not exist (a default location) has nothing to
        // record, and its section would be dropped again with its missing directory: writing
        // it re-encoded the whole catalog at every warm start. One that exists is recorded
        // even when empty, as `spool list` records it: the head's first frame is only used
        // when its stores are this run's, and without the empty section a user with an
        // empty store directory (an agent installed, never run) never got it.
        let record = !fresh.is_empty() || store.sessions_dir().is_dir();
        if let Some(c) = cat.cache.as_ref().filter(|_| record) {
            let change = crate::catalog::Change::Replace(&fresh);
            crate::catalog::patch(c, kind, store.sessions_dir(), change);
        }
    }
    setup.start();
    let Some(mut watch) = setup.finish() else {
        return;
    };
    if !watch.active {
        for c in &candidates {
            if let Some(slot) = known.get_mut(&c.id) {
                slot.key = fingerprint(store, c);
            }
        }
    }
    // The discovery's candidates (ids and paths of every session, 5-11 MB a store at 100k)
    // were held for the watcher's whole life after a cold pass.
    drop(candidates);
    watch_loop(store, tx, &mut known, &mut watch, &pokes, stop, &cat);
}

/// Size and age at which a batch is sent, after `sent` rows: one screenful first, then
/// batches that grow with the list (each batch costs the UI a re-sort of the whole list).
fn batch_limits(sent: usize) -> (usize, Duration) {
    let first = first_batch();
    if sent < first {
        return (first, BATCH_WAIT);
    }
    let size = BATCH.max(sent / 4);
    let wait = (BATCH_WAIT * (1 + (sent / 4096) as u32)).min(MAX_BATCH_WAIT);
    (size, wait)
}

#[cfg(test)]
#[path = "loader_tests.rs"]
mod tests;
