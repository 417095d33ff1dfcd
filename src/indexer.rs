//! The browser's full-text index, off the UI thread: one thread keeps the index up to date
//! (the whole listing once it has streamed in, then each session the watcher re-reads),
//! reporting `Action::IndexProgress`; another answers text searches, only the newest one
//! waiting (older queries typed in the meantime are skipped), tagged with its token.
//! When another process holds the writer, searches see what that process has committed.
//! A pass commits in batches and the searcher reloads after each, so a first build gives
//! results as it goes; deleted sessions are dropped at the next commit, even mid-pass.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::app::Action;
use crate::app::text_search::TEXT_LIMIT;
use crate::loader::Event;
use crate::model::SessionSummary;
use crate::search::Key;
use crate::search::index::{self, Freshness, Hooks, TextIndex, session_number};
use crate::search::query::TextQuery;
use crate::store::Stores;
use crate::store::registry::Filter;

/// Keystrokes typed within this wait are answered by one search, of the newest query.
const DEBOUNCE: Duration = Duration::from_millis(25);
/// Progress is reported at most this often (the end by the last commit). Each report
/// redraws the status bar, and a key that comes within a frame of a redraw waits for the
/// next frame: at every 50 sessions a first build at 10k redrew about 60 times a second,
/// so nearly every key typed during it waited, and the terminal was kept busy too.
const PROGRESS_EVERY: Duration = Duration::from_millis(250);

enum Job {
    /// The whole listing: index what changed, drop what is gone. The list's own rows,
    /// shared: a copy of the listing was the largest item of the heap's peak (issue 10).
    All(Vec<Arc<SessionSummary>>),
    /// Sessions re-read while the browser runs: only these, shared with the list.
    Some(Vec<Arc<SessionSummary>>),
    /// Sessions went (their numbers are in `Indexer::gone`): drop them.
    Gone,
}

type Query = (u64, TextQuery, Filter);

/// Handles to the two threads.
pub struct Indexer {
    jobs: Sender<Job>,
    queries: Sender<Query>,
    /// The whole listing has been handed over (set once, from the run loop).
    started: std::cell::Cell<bool>,
    /// Sessions deleted or vanished, not yet dropped from the index: a running pass drops
    /// them at its next commit.
    gone: Arc<Mutex<Vec<u64>>>,
}

impl Indexer {
    /// Start the threads; with no cache directory, searches answer nothing.
    pub fn start(stores: Arc<Stores>, events: Sender<Event>) -> Indexer {
        let dir = index::default_dir(&stores);
        Self::start_in(dir, stores, events)
    }

    /// The same over the index in `dir` (tests give their own).
    pub fn start_in(dir: Option<PathBuf>, stores: Arc<Stores>, events: Sender<Event>) -> Indexer {
        let (jobs, job_rx) = mpsc::channel();
        let (queries, query_rx) = mpsc::channel();
        let gone = Arc::new(Mutex::new(Vec::new()));
        let g = gone.clone();
        let _ = std::thread::Builder::new()
            .name("spool-index".into())
            .spawn(move || index_thread(dir, stores, events, job_rx, query_rx, g));
        Indexer {
            jobs,
            queries,
            started: std::cell::Cell::new(false),
            gone,
        }
    }

    /// Drop these sessions from the index now (deleted by the browser, or vanished).
    pub fn remove(&self, keys: &[Key]) {
        if keys.is_empty() {
            return;
        }
        if let Ok(mut g) = self.gone.lock() {
            g.extend(keys.iter().map(|(store, id)| session_number(*store, id)));
        }
        let _ = self.jobs.send(Job::Gone);
    }

    /// Whether the whole listing has been handed over.
    pub fn started(&self) -> bool {
        self.started.get()
    }

    /// Index the whole listing (once it has streamed in).
    pub fn index_all(&self, rows: Vec<Arc<SessionSummary>>) {
        self.started.set(true);
        let _ = self.jobs.send(Job::All(rows));
    }

    /// Re-index these sessions (re-read by the watcher); before the first full pass they
    /// are part of it anyway.
    pub fn reindex(&self, rows: &[Arc<SessionSummary>]) {
        if self.started.get() && !rows.is_empty() {
            let _ = self.jobs.send(Job::Some(rows.to_vec()));
        }
    }

    pub fn search(&self, token: u64, query: TextQuery, filter: Filter) {
        let _ = self.queries.send((token, query, filter));
    }
}

fn open(dir: &Path) -> Option<TextIndex> {
    TextIndex::open(dir).ok().or_else(|| {
        // The index is a cache: whatever broke it, start again.
        index::wipe(dir);
        TextIndex::open(dir).ok()
    })
}

/// The index, opened by whichever thread needs it first: the writer when a pass has
/// something to write, the searcher at the first text search. A warm start whose index is
/// current opens it never (issue 10: its mapped files and session table were most of the
/// gap to the 30 MB target at 10k sessions).
#[derive(Clone)]
struct Lazy {
    dir: Option<PathBuf>,
    /// `None` until opened; then the handle the other thread is to take (`None` once taken,
    /// or when the index could not be opened).
    slot: Arc<Mutex<Option<Option<TextIndex>>>>,
}

impl Lazy {
    fn new(dir: Option<PathBuf>) -> Lazy {
        Lazy {
            dir,
            slot: Arc::default(),
        }
    }

    /// This thread's handle (each thread asks once). The first opens the index and leaves
    /// the other a handle sharing its session table and mapped files (one copy, not two).
    fn open(&self) -> Option<TextIndex> {
        let mut slot = self.slot.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(spare) = slot.as_mut() {
            return spare.take();
        }
        let ix = self.dir.as_deref().and_then(open);
        *slot = Some(ix.as_ref().and_then(TextIndex::open_sharing));
        ix
    }

    /// Whether the index already holds exactly `rows` (read without opening it).
    fn is_current(&self, rows: &[Arc<SessionSummary>], stores: &Stores) -> bool {
        let opened = self.slot.lock().is_ok_and(|s| s.is_some());
        !opened
            && self
                .dir
                .as_deref()
                .is_some_and(|d| index::is_current(d, rows, stores))
    }
}

fn index_thread(
    dir: Option<PathBuf>,
    stores: Arc<Stores>,
    events: Sender<Event>,
    jobs: Receiver<Job>,
    queries: Receiver<Query>,
    gone: Arc<Mutex<Vec<u64>>>,
) {
    let lazy = Lazy::new(dir);
    let generation = Arc::new(AtomicU64::new(0));
    {
        let (events, generation) = (events.clone(), generation.clone());
        let (stores, lazy) = (stores.clone(), lazy.clone());
        let _ = std::thread::Builder::new()
            .name("spool-search".into())
            .spawn(move || search_thread(lazy, stores, events, generation, queries));
    }
    // After the searcher started: answers to keystrokes keep the normal priority.
    lower_priority();
    let mut jobs = jobs.into_iter();
    // Until a job has something to write, the index stays closed.
    let (mut ix, first) = loop {
        let Some(job) = jobs.next() else { return };
        let pending = gone.lock().is_ok_and(|g| !g.is_empty());
        if let Job::All(rows) = &job
            && !pending
            && lazy.is_current(rows, &stores)
        {
            let done = Action::IndexProgress { done: 0, total: 0 };
            let _ = events.send(Event::Action(done));
            continue;
        }
        let Some(ix) = lazy.open() else { return };
        break (ix, job);
    };
    let (g, tx) = (generation.clone(), events.clone());
    ix.set_hooks(Hooks {
        // Each batch committed: the searcher reloads before its next answer, and an open
        // search asks again (its answer may have come from before this batch, or from
        // before the first pass began: the list settles long before a niced pass commits).
        // The last one ends the pass for the browser (merges may still run).
        committed: Some(Box::new(move |done, total| {
            g.fetch_add(1, Ordering::SeqCst);
            let _ = tx.send(Event::Action(Action::IndexCommitted { done, total }));
        })),
        gone: Some(Box::new(move || {
            gone.lock()
                .map(|mut g| std::mem::take(&mut *g))
                .unwrap_or_default()
        })),
    });
    for job in std::iter::once(first).chain(jobs) {
        let tx = events.clone();
        let every = Every::new(PROGRESS_EVERY);
        // The end is reported by the last commit, once it is searchable.
        let progress = move |done: usize, total: usize| {
            if done < total && every.due() {
                let _ = tx.send(Event::Action(Action::IndexProgress { done, total }));
            }
        };
        let r = match &job {
            Job::All(rows) => ix.update(rows, &stores, &progress),
            Job::Some(rows) => ix.update_some(rows, &stores, &progress),
            Job::Gone => ix.remove(&[], &stores),
        };
        // Before the message below: a search it prompts reloads what this job committed.
        generation.fetch_add(1, Ordering::SeqCst);
        // Clear the progress line even when a pass ended early or failed part-way (its
        // committed batches are searchable).
        let indexed = match r {
            Ok(Freshness::Updated { indexed, .. }) => indexed,
            _ => 0,
        };
        let done = Action::IndexProgress {
            done: indexed,
            total: indexed,
        };
        let _ = events.send(Event::Action(done));
    }
}

/// True at most once per period, from any thread (the indexing threads report progress).
struct Every {
    start: Instant,
    period_ms: u64,
    /// Milliseconds after `start` of the last time it was due.
    last: AtomicU64,
}

impl Every {
    fn new(period: Duration) -> Every {
        Every {
            start: Instant::now(),
            period_ms: period.as_millis() as u64,
            last: AtomicU64::new(0),
        }
    }

    fn due(&self) -> bool {
        let now = self.start.elapsed().as_millis() as u64;
        let last = self.last.load(Ordering::Relaxed);
        now >= last + self.period_ms
            && self
                .last
                .compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
    }
}

/// Index only on CPU time nothing else of spool wants (the machines are often two cores
/// shared with builds): threads this one starts later, ours and tantivy's, inherit it.
/// Nice 10 was not enough: three indexing threads at nice 10 on two cores still took the
/// CPU from the UI thread often enough that keys typed during a first build settled in
/// 28 ms (8 ms after it). SCHED_IDLE threads give way to a waking UI thread at once; the
/// nice value stays for systems that refuse the policy.
fn lower_priority() {
    // On Linux the nice value and the policy are per thread, and `0` is the calling
    // thread; elsewhere it would be the whole process, so it is left alone.
    #[cfg(target_os = "linux")]
    // SAFETY: setpriority reads its integer arguments; sched_setscheduler reads the
    // param, which lives across the call.
    unsafe {
        libc::setpriority(libc::PRIO_PROCESS, 0, 10);
        let param = libc::sched_param { sched_priority: 0 };
        libc::sched_setscheduler(0, libc::SCHED_IDLE, &param);
    }
}

fn search_thread(
    lazy: Lazy,
    stores: Arc<Stores>,
    events: Sender<Event>,
    generation: Arc<AtomicU64>,
    queries: Receiver<Query>,
) {
    let mut seen = generation.load(Ordering::SeqCst);
    // Opened at the first search (a session table and mapped files held from then on).
    let mut ix: Option<Option<TextIndex>> = None;
    while let Ok(mut q) = queries.recv() {
        // A handle the writer left may predate its commits: `seen` (from before) makes
        // the first answer reload.
        let ix = ix.get_or_insert_with(|| lazy.open());
        std::thread::sleep(DEBOUNCE);
        while let Ok(newer) = queries.try_recv() {
            q = newer;
        }
        let (token, query, filter) = q;
        let now = generation.load(Ordering::SeqCst);
        if let Some(ix) = ix.as_mut().filter(|_| now != seen) {
            // A reload that failed (a merge removed a segment under it) is tried again at
            // the next query rather than leaving the searcher on an old view.
            if ix.refresh() {
                seen = now;
            }
        } else {
            seen = now;
        }
        let hits = ix
            .as_ref()
            .and_then(|ix| {
                let accept = |r: &SessionSummary| filter.accepts(r);
                let hits = ix
                    .search_rows(&query, &accept, TEXT_LIMIT, Some(&stores))
                    .ok()?;
                Some(hits.into_iter().map(|(h, _)| h).collect())
            })
            .unwrap_or_default();
        if events
            .send(Event::Action(Action::TextResults { token, hits }))
            .is_err()
        {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_is_due_once_per_period() {
        let every = Every::new(Duration::from_secs(3600));
        // Not at the start (the first figures come a period in), nor twice in one period.
        assert!(!every.due());
        let every = Every::new(Duration::ZERO);
        assert!(every.due());
        let hour = Every::new(Duration::from_secs(3600));
        hour.last.store(0, Ordering::Relaxed);
        assert!(!hour.due() && !hour.due());
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn index_threads_and_theirs_run_idle_the_ui_does_not() {
        let (ui, index, child) = std::thread::spawn(|| {
            // SAFETY: sched_getscheduler reads its argument only.
            let policy = || unsafe { libc::sched_getscheduler(0) };
            let ui = policy();
            lower_priority();
            let index = policy();
            let child = std::thread::spawn(policy).join().unwrap();
            (ui, index, child)
        })
        .join()
        .unwrap();
        assert_ne!(ui, libc::SCHED_IDLE);
        assert_eq!(index, libc::SCHED_IDLE);
        assert_eq!(child, libc::SCHED_IDLE, "tantivy's threads inherit it");
        // SAFETY: as above.
        assert_ne!(unsafe { libc::sched_getscheduler(0) }, libc::SCHED_IDLE);
    }
}
