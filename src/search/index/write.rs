//! Writing the index: the changed sessions are read by our threads and added in batches,
//! each committed (and the session table written) as soon as it is done, so a search while
//! a first build runs finds what is indexed so far; sessions dropped while a pass runs (the
//! browser deleted them) leave at the next batch's commit, not at the next pass.

use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use tantivy::{IndexWriter, TantivyError, Term};

use super::fresh::Print;
use super::{Freshness, SESSIONS_FILE, THREADS, TextIndex, WRITER_BUDGET, WRITER_THREADS};
use super::{each_session_doc, to_doc};
use super::{index_err, table};
use crate::error::Result;
use crate::model::SessionSummary;
use crate::store::Stores;

/// When a batch is committed: after this many sessions or this long, whichever comes first.
#[derive(Clone, Copy, Debug)]
pub struct Batches {
    pub sessions: usize,
    pub every: Duration,
}

impl Default for Batches {
    /// About a second of reading: a first build at 10k commits three or four times, few
    /// enough that the extra segments cost little, often enough that search finds results.
    fn default() -> Batches {
        Batches {
            sessions: usize::MAX,
            every: Duration::from_secs(1),
        }
    }
}

/// What the browser hooks into a pass.
#[derive(Default)]
pub struct Hooks {
    /// After each batch's commit, with the sessions of the pass done so far and in all (the
    /// searcher reloads; at the end the browser asks its open search again, before merges).
    pub committed: Option<Box<dyn Fn(usize, usize) + Send>>,
    /// Sessions to drop now, asked before each commit.
    pub gone: Option<Box<dyn Fn() -> Vec<u64> + Send>>,
}

/// A changed session: its number, new prints and listing row, borrowed from the listing
/// when the caller has one (a copy of every row would double a first build's rows: at 100k
/// sessions that is tens of megabytes, issue 10).
pub type Changed<'a> = (u64, Print, Row<'a>);

/// A changed session's row, borrowed or boxed. Not a `Cow`: its owned case holds the summary
/// inline, so every element of a first build's list was a whole summary wide even when
/// borrowed (at 100k sessions that list grew to 60 MB, issue 10); this is two words.
pub enum Row<'a> {
    Borrowed(&'a SessionSummary),
    Owned(Box<SessionSummary>),
}

impl std::ops::Deref for Row<'_> {
    type Target = SessionSummary;
    fn deref(&self) -> &SessionSummary {
        match self {
            Row::Borrowed(r) => r,
            Row::Owned(r) => r,
        }
    }
}

/// Writers this process asked for: the browser must never (its child writes; a writer's
/// arenas and merges were most of its peak with a stale index, issue 10).
static WRITERS: AtomicUsize = AtomicUsize::new(0);

/// How many times this process has asked for the index's writer.
pub fn writers_opened() -> usize {
    WRITERS.load(Ordering::Relaxed)
}

/// How often, and how long apart, a busy writer lock is tried again (`TextIndex::writer`).
const LOCK_TRIES: u32 = 10;
const LOCK_WAIT: std::time::Duration = std::time::Duration::from_millis(50);

impl TextIndex {
    /// The index's one writer. A lock that is busy for a moment is waited for, briefly:
    /// another spool process finishing its commit, or a child process that this one
    /// started (in another thread) and that has not reached `exec` yet, which holds an
    /// inherited copy of the lock file's descriptor, and with it the lock, until then.
    /// Only a lock still held after that makes this process a reader.
    pub(super) fn writer(&self) -> tantivy::Result<IndexWriter> {
        WRITERS.fetch_add(1, Ordering::Relaxed);
        let mut tries = 0;
        loop {
            match self
                .index
                .writer_with_num_threads(WRITER_THREADS, WRITER_BUDGET)
            {
                Err(TantivyError::LockFailure(..)) if tries < LOCK_TRIES => {
                    tries += 1;
                    std::thread::sleep(LOCK_WAIT);
                }
                r => return r,
            }
        }
    }

    /// Index `changed`, drop every indexed session not in `seen`, committing in batches.
    pub(super) fn apply(
        &mut self,
        changed: Vec<Changed<'_>>,
        seen: HashSet<u64>,
        stores: &Stores,
        progress: &(dyn Fn(usize, usize) + Sync),
    ) -> Result<Freshness> {
        let mut removed: HashSet<u64> = self
            .sessions
            .get()
            .map
            .keys()
            .filter(|s| !seen.contains(s))
            .copied()
            .collect();
        // Gone before this pass began: those it knows of or was about to index.
        let gone_now = self.hooks.gone.as_ref().map(|g| g()).unwrap_or_default();
        {
            let known = &self.sessions.get().map;
            removed.extend(
                gone_now
                    .into_iter()
                    .filter(|sid| known.contains_key(sid) || changed.iter().any(|c| c.0 == *sid)),
            );
        }
        if changed.is_empty() && removed.is_empty() && self.requick.is_empty() {
            return Ok(Freshness::Updated {
                indexed: 0,
                removed: 0,
            });
        }
        let mut writer: IndexWriter = match self.writer() {
            Ok(w) => w,
            Err(TantivyError::LockFailure(..)) => return Ok(Freshness::ReadOnly),
            Err(e) => return Err(index_err(&self.dir, e)),
        };
        let total = changed.len();
        let next = AtomicUsize::new(0);
        let done = AtomicUsize::new(0);
        let mut dropped = removed.clone();
        let mut pending: Vec<u64> = removed.iter().copied().collect();
        loop {
            let start = next.load(Ordering::SeqCst);
            let end = start.saturating_add(self.batches.sessions).min(total);
            let deadline = Instant::now() + self.batches.every;
            self.read_batch(
                &writer, &changed, &next, end, deadline, &dropped, stores, &done, progress,
            )?;
            let stop = next.load(Ordering::SeqCst).min(total);
            // Deletes that arrived while this batch was read go in its commit.
            if let Some(g) = &self.hooks.gone {
                for sid in g() {
                    if dropped.insert(sid) {
                        pending.push(sid);
                    }
                }
            }
            for sid in &pending {
                writer.delete_term(Term::from_field_u64(self.f.sid, *sid));
            }
            writer.commit().map_err(|e| index_err(&self.dir, e))?;
            {
                let known = &mut self.sessions.get_mut().map;
                for sid in pending.drain(..) {
                    known.remove(&sid);
                }
                for (sid, fp, r) in &changed[start..stop] {
                    if !dropped.contains(sid)
                        && let Some(k) = table::Known::new(*fp, r)
                    {
                        known.insert(*sid, k);
                    }
                }
                for (sid, quick) in self.requick.drain(..) {
                    if let Some(k) = known.get_mut(&sid) {
                        k.fp.quick = quick;
                    }
                }
            }
            self.sessions.save(&self.dir, SESSIONS_FILE)?;
            self.reader.reload().map_err(|e| index_err(&self.dir, e))?;
            if let Some(c) = &self.hooks.committed {
                c(stop, total);
            }
            if stop >= total {
                break;
            }
        }
        // Merges started by the commits finish here, so the next process opens few segments.
        writer
            .wait_merging_threads()
            .map_err(|e| index_err(&self.dir, e))?;
        Ok(Freshness::Updated {
            indexed: total,
            removed: dropped.len(),
        })
    }

    /// Read and add the sessions of one batch on `THREADS` threads: each takes the next
    /// session until the batch's end or its deadline (at least one session per batch).
    #[allow(clippy::too_many_arguments)]
    fn read_batch(
        &self,
        writer: &IndexWriter,
        changed: &[Changed<'_>],
        next: &AtomicUsize,
        end: usize,
        deadline: Instant,
        dropped: &HashSet<u64>,
        stores: &Stores,
        done: &AtomicUsize,
        progress: &(dyn Fn(usize, usize) + Sync),
    ) -> Result<()> {
        let start = next.load(Ordering::SeqCst);
        let total = changed.len();
        let f = self.f;
        let take = || {
            next.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |i| {
                (i < end && (i == start || Instant::now() < deadline)).then_some(i + 1)
            })
            .ok()
        };
        let failed: Option<TantivyError> = std::thread::scope(|scope| {
            let workers: Vec<_> = (0..THREADS)
                .map(|_| {
                    scope.spawn(|| -> tantivy::Result<()> {
                        while let Some(i) = take() {
                            let (sid, _, row) = &changed[i];
                            if !dropped.contains(sid) {
                                writer.delete_term(Term::from_field_u64(f.sid, *sid));
                                let mut failed = None;
                                each_session_doc(stores, row, &mut |ord, d| {
                                    let added = writer.add_document(to_doc(f, *sid, row, ord, d));
                                    failed = added.err();
                                    failed.is_none()
                                });
                                if let Some(e) = failed {
                                    return Err(e);
                                }
                            }
                            progress(done.fetch_add(1, Ordering::Relaxed) + 1, total);
                        }
                        Ok(())
                    })
                })
                .collect();
            workers
                .into_iter()
                .filter_map(|w| w.join().ok().and_then(|r| r.err()))
                .next()
        });
        match failed {
            Some(e) => Err(index_err(&self.dir, e)),
            None => Ok(()),
        }
    }

    /// Drop these sessions now (the browser deleted them, the watcher saw them vanish).
    pub fn remove(&mut self, sids: &[u64], stores: &Stores) -> Result<Freshness> {
        let gone: HashSet<u64> = sids.iter().copied().collect();
        let seen = self
            .sessions
            .get()
            .map
            .keys()
            .filter(|s| !gone.contains(s))
            .copied()
            .collect();
        self.apply(Vec::new(), seen, stores, &|_, _| {})
    }

    /// Commit in batches of this shape (tests use small ones).
    pub fn set_batches(&mut self, b: Batches) {
        self.batches = b;
    }

    /// Hooks for the browser's indexing thread.
    pub fn set_hooks(&mut self, h: Hooks) {
        self.hooks = h;
    }
}
