//! The browser's full-text index, off the UI thread: one thread keeps the index up to date
//! (the whole listing once it has streamed in, then each session the watcher re-reads),
//! reporting `Action::IndexProgress`; another answers text searches, only the newest one
//! waiting (older queries typed in the meantime are skipped), tagged with its token.
//! The writing itself is done by a child process (`index_child`), one per job: the browser
//! never holds tantivy's writer, whose arenas, merges and mapped segments were most of its
//! peak RSS whenever the index was stale (issue 10). The child commits in batches and says
//! so on its stdout; the searcher reloads after each, so a first build gives results as it
//! goes; deleted sessions are written to the running child and dropped at its next commit.
//! When another process holds the writer, the child says so and searches see what that
//! process has committed.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::app::Action;
use crate::app::action::Outcome;
use crate::app::text_search::TEXT_LIMIT;
use crate::index_child::{Spec, gone_line, row_line};
use crate::loader::Event;
use crate::model::SessionSummary;
use crate::search::Key;
use crate::search::index::{self, TextIndex, session_number};
use crate::search::query::TextQuery;
use crate::store::Stores;
use crate::store::registry::Filter;

/// Keystrokes typed within this wait are answered by one search, of the newest query.
const DEBOUNCE: Duration = Duration::from_millis(25);
/// Progress is reported at most this often (the end by the last commit). Each report
/// redraws the status bar, and a key that comes within a frame of a redraw waits for the
/// next frame: at every 50 sessions a first build at 10k redrew about 60 times a second,
/// so nearly every key typed during it waited, and the terminal was kept busy too.
pub(crate) const PROGRESS_EVERY: Duration = Duration::from_millis(250);

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
    /// The running child's input (`Children`).
    input: Arc<Mutex<Option<ChildStdin>>>,
}

impl Indexer {
    /// Start the threads; with no cache directory, searches answer nothing.
    pub fn start(stores: Arc<Stores>, events: Sender<Event>) -> Indexer {
        let dir = index::default_dir(&stores);
        Self::start_in(dir, stores, events)
    }

    /// The same over the index in `dir` (tests give their own).
    pub fn start_in(dir: Option<PathBuf>, stores: Arc<Stores>, events: Sender<Event>) -> Indexer {
        Self::start_with(dir, stores, events, std::env::current_exe().ok())
    }

    /// The same with the index's children run from `exe` (tests, whose own executable is
    /// not spool, give the built binary); `None`: no child can start.
    pub fn start_with(
        dir: Option<PathBuf>,
        stores: Arc<Stores>,
        events: Sender<Event>,
        exe: Option<PathBuf>,
    ) -> Indexer {
        let (jobs, job_rx) = mpsc::channel();
        let (queries, query_rx) = mpsc::channel();
        let gone = Arc::new(Mutex::new(Vec::new()));
        let input = Arc::new(Mutex::new(None));
        let (g, i) = (gone.clone(), input.clone());
        let _ = std::thread::Builder::new()
            .name("spool-index".into())
            .spawn(move || index_thread(dir, exe, stores, events, job_rx, query_rx, g, i));
        Indexer {
            jobs,
            queries,
            started: std::cell::Cell::new(false),
            gone,
            input,
        }
    }

    /// Drop these sessions from the index now (deleted by the browser, or vanished).
    pub fn remove(&self, keys: &[Key]) {
        if keys.is_empty() {
            return;
        }
        let sids: Vec<u64> = keys.iter().map(|(s, id)| session_number(*s, id)).collect();
        // A running child drops them at its next commit; they are kept for the next child
        // too, as this one may have made its last commit already.
        if let Ok(mut input) = self.input.lock()
            && let Some(w) = input.as_mut()
        {
            let lines: String = sids.iter().map(|&s| gone_line(s)).collect();
            let _ = w.write_all(lines.as_bytes());
        }
        if let Ok(mut g) = self.gone.lock() {
            g.extend(sids);
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

/// Runs the index's child processes (`index_child`): one per job, each started when the
/// job comes and gone when it is done, so nothing of the writer stays in the browser.
struct Children {
    /// Why no child can be made for these stores, if none can (the status bar says it).
    spec: Result<Spec, &'static str>,
    events: Sender<Event>,
    generation: Arc<AtomicU64>,
    /// The running child's input, where `Indexer::remove` writes deletes for its next commit.
    input: Arc<Mutex<Option<ChildStdin>>>,
}

impl Children {
    /// Run a child over `lines` (the job); the sessions it indexed, or why it failed.
    fn run(&self, lines: impl Iterator<Item = String>) -> Result<usize, String> {
        let spec = self.spec.as_ref().map_err(|why| why.to_string())?;
        // Here, through the demo's gate: the child makes no parent directory (see there).
        crate::demo::create_cache_dir(&spec.dir)
            .map_err(|e| format!("could not create {}: {e}", spec.dir.display()))?;
        let mut child = Command::new(&spec.exe)
            .args(&spec.args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("could not start the indexer: {e}"))?;
        let (Some(mut input), Some(output)) = (child.stdin.take(), child.stdout.take()) else {
            let _ = child.kill();
            let _ = child.wait();
            return Err("could not start the indexer".into());
        };
        // Buffered: a first build's job is a line per session.
        let mut w = std::io::BufWriter::new(&mut input);
        let wrote = lines
            .chain(std::iter::once("go\n".to_string()))
            .try_for_each(|l| w.write_all(l.as_bytes()))
            .and_then(|_| w.flush());
        drop(w);
        if wrote.is_ok() {
            *self.input.lock().unwrap_or_else(|e| e.into_inner()) = Some(input);
        }
        let mut end = Err("the indexer stopped before it finished".to_string());
        let mut peak_kb = None;
        for line in BufReader::new(output).lines() {
            let Ok(line) = line else { break };
            let mut f = line.splitn(3, ' ');
            let (tag, a, b) = (f.next(), f.next(), f.next());
            let num = |s: Option<&str>| s.and_then(|s| s.parse::<usize>().ok()).unwrap_or(0);
            let action = match tag {
                Some("p") => Action::IndexProgress {
                    done: num(a),
                    total: num(b),
                },
                Some("c") => {
                    // Before the message: a search it prompts reloads what was committed.
                    self.generation.fetch_add(1, Ordering::SeqCst);
                    Action::IndexCommitted {
                        done: num(a),
                        total: num(b),
                    }
                }
                Some("d") => {
                    end = Ok(num(a));
                    continue;
                }
                // Another process holds the writer: searches see what it commits.
                Some("r") => {
                    end = Ok(0);
                    continue;
                }
                Some("e") => {
                    end = Err(line[2..].to_string());
                    continue;
                }
                Some("m") => {
                    peak_kb = a.and_then(|s| s.parse::<usize>().ok());
                    continue;
                }
                _ => continue,
            };
            let _ = self.events.send(Event::Action(action));
        }
        // Closing its input after it ended (its end of input means the browser is gone).
        self.input.lock().unwrap_or_else(|e| e.into_inner()).take();
        reap(child);
        if let Some(kb) = peak_kb {
            CHILD_PEAK_KB.store(kb, Ordering::Relaxed);
            crate::keytrace::count("index_child_peak_kb", kb);
        }
        end
    }
}

/// The last index child's own peak RSS in kB, as it reported it (`index_child::own_peak_kb`),
/// 0 before any: the child's memory is spool's too, and a benchmark must not miss it.
static CHILD_PEAK_KB: AtomicUsize = AtomicUsize::new(0);

/// The last index child's own peak RSS in kB (0 before any child reported one).
pub fn child_peak_kb() -> usize {
    CHILD_PEAK_KB.load(Ordering::Relaxed)
}

/// Wait for a child to exit, and put its CPU time in the key trace. Not its `ru_maxrss`:
/// that counts the browser's own peak too (see `index_child::own_peak_kb`), so the peak
/// comes from the child's own report.
fn reap(mut child: std::process::Child) {
    #[cfg(target_os = "linux")]
    {
        let mut status = 0;
        // SAFETY: rusage is plain data, zeroed, and wait4 only writes into it and `status`.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: the pid is our child's, not yet waited for (`Child` is consumed here).
        let r = unsafe { libc::wait4(child.id() as i32, &mut status, 0, &mut ru) };
        if r > 0 {
            let ms = |t: libc::timeval| t.tv_sec as usize * 1000 + t.tv_usec as usize / 1000;
            crate::keytrace::count("index_child_cpu_ms", ms(ru.ru_utime) + ms(ru.ru_stime));
            crate::keytrace::phase_since_launch("index_child_done_at");
            return;
        }
    }
    let _ = child.wait();
}

/// The child for these stores, or why there can be none (each cause named: the status bar
/// shows it, and "no cache directory" said nothing when the cause was a store's).
fn spec_for(
    dir: Option<&Path>,
    exe: Option<PathBuf>,
    stores: &Stores,
) -> Result<Spec, &'static str> {
    let dir = dir.ok_or("no cache directory to index in")?;
    let exe = exe.ok_or("spool's own executable could not be found")?;
    Spec::new(exe, dir, stores).ok_or("a store has no directory the indexer can open")
}

#[allow(clippy::too_many_arguments)]
fn index_thread(
    dir: Option<PathBuf>,
    exe: Option<PathBuf>,
    stores: Arc<Stores>,
    events: Sender<Event>,
    jobs: Receiver<Job>,
    queries: Receiver<Query>,
    gone: Arc<Mutex<Vec<u64>>>,
    input: Arc<Mutex<Option<ChildStdin>>>,
) {
    let generation = Arc::new(AtomicU64::new(0));
    {
        let (events, generation, dir) = (events.clone(), generation.clone(), dir.clone());
        let stores = stores.clone();
        let _ = std::thread::Builder::new()
            .name("spool-search".into())
            .spawn(move || search_thread(dir, stores, events, generation, queries));
    }
    // After the searcher started: answers to keystrokes keep the normal priority. The
    // children inherit it.
    lower_priority();
    let spec = spec_for(dir.as_deref(), exe, &stores);
    let children = Children {
        spec,
        events: events.clone(),
        generation: generation.clone(),
        input,
    };
    for job in jobs {
        let mut pending = gone
            .lock()
            .map(|mut g| std::mem::take(&mut *g))
            .unwrap_or_default();
        let r = match &job {
            Job::All(rows) => {
                // What changed, found without opening the index (a current one is never
                // opened, and no child starts).
                let changes = dir
                    .as_deref()
                    .and_then(|d| index::changes(d, rows, &stores));
                let (changed, mut lines): (Vec<usize>, Vec<String>) = match changes {
                    Some(c) => (c.changed, c.gone.into_iter().map(gone_line).collect()),
                    None => (
                        (0..rows.len())
                            .filter(|&i| rows[i].error().is_none())
                            .collect(),
                        Vec::new(),
                    ),
                };
                lines.extend(pending.drain(..).map(gone_line));
                if changed.is_empty() && lines.is_empty() {
                    let done = Action::IndexProgress { done: 0, total: 0 };
                    let _ = events.send(Event::Action(done));
                    continue;
                }
                let listed = changed.into_iter().filter_map(|i| row_line(&rows[i]));
                children.run(lines.into_iter().chain(listed))
            }
            Job::Some(rows) => {
                let gone = pending.drain(..).map(gone_line);
                let listed = rows.iter().filter(|r| r.error().is_none());
                children.run(gone.chain(listed.filter_map(|r| row_line(r))))
            }
            Job::Gone if pending.is_empty() => continue,
            Job::Gone => children.run(pending.drain(..).map(gone_line)),
        };
        // Before the message below: a search it prompts reloads what this job committed.
        generation.fetch_add(1, Ordering::SeqCst);
        // Clear the progress line even when a pass ended early or failed part-way (its
        // committed batches are searchable).
        let indexed = *r.as_ref().unwrap_or(&0);
        let done = Action::IndexProgress {
            done: indexed,
            total: indexed,
        };
        let _ = events.send(Event::Action(done));
        if let Err(why) = r {
            let _ = events.send(Event::Action(failed(&why)));
        }
    }
}

/// The status line for a child that failed: searches still answer from what it committed.
fn failed(why: &str) -> Action {
    Action::OpDone(Box::new(Outcome {
        message: format!("Full-text index not updated: {why}"),
        rows: Vec::new(),
        removed: Vec::new(),
        select: None,
        undoable: None,
        automatic: true,
        finished: None,
    }))
}

/// True at most once per period, from any thread (the indexing threads report progress).
pub(crate) struct Every {
    start: Instant,
    period_ms: u64,
    /// Milliseconds after `start` of the last time it was due.
    last: AtomicU64,
}

impl Every {
    pub(crate) fn new(period: Duration) -> Every {
        Every {
            start: Instant::now(),
            period_ms: period.as_millis() as u64,
            last: AtomicU64::new(0),
        }
    }

    pub(crate) fn due(&self) -> bool {
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
pub(crate) fn lower_priority() {
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
    dir: Option<PathBuf>,
    stores: Arc<Stores>,
    events: Sender<Event>,
    generation: Arc<AtomicU64>,
    queries: Receiver<Query>,
) {
    let mut seen = generation.load(Ordering::SeqCst);
    // Opened at the first search that finds an index (a session table and mapped files
    // held from then on). Never created nor wiped here: the child owns the index's files.
    let mut ix: Option<TextIndex> = None;
    while let Ok(mut q) = queries.recv() {
        std::thread::sleep(DEBOUNCE);
        while let Ok(newer) = queries.try_recv() {
            q = newer;
        }
        let (token, query, filter) = q;
        let now = generation.load(Ordering::SeqCst);
        match ix.as_mut() {
            // A reload that failed (a merge removed a segment under it) is tried again at
            // the next query rather than leaving the searcher on an old view.
            Some(ix) if now != seen => {
                if ix.refresh() {
                    seen = now;
                }
            }
            Some(_) => {}
            None => {
                ix = dir.as_deref().and_then(TextIndex::open_existing);
                seen = now;
            }
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

    #[test]
    fn a_child_that_cannot_be_made_names_its_cause() {
        let stores = Stores {
            stores: vec![],
            state_dir: PathBuf::from("/state"),
        };
        let (dir, exe) = (Path::new("/cache/index"), PathBuf::from("/bin/spool"));
        let why = |d, e| spec_for(d, e, &stores).err();
        assert_eq!(
            why(None, Some(exe.clone())),
            Some("no cache directory to index in")
        );
        assert_eq!(
            why(Some(dir), None),
            Some("spool's own executable could not be found")
        );
        let spec = spec_for(Some(dir), Some(exe.clone()), &stores).unwrap();
        assert_eq!(spec.exe, exe);
        assert!(spec.args.iter().any(|a| a == dir.as_os_str()));
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
