//! A cold pass's reads of the first screenful ahead of the listing loop (or of a store's
//! guess at it, `Store::first_screen`), on two threads and in two steps, so the first rows go
//! out after a few reads rather than a screenful's.

use std::sync::Arc;

use crate::catalog::Entry;
use crate::model::SessionSummary;
use crate::store::{Candidate, Store};

/// Rows read before a cold pass with no hints sends its first batch: the top of the screen,
/// two reads a thread. Issue 10: each Claude Code row is a whole transcript parsed (0.4 ms of
/// CPU each at 10k sessions), and the first paint waited for a screenful of them (18 on a
/// 30-line terminal) after a discovery that had already taken both cores for 20 ms. The rest
/// of the screenful is read as soon as the terminal has read that frame, and goes in below
/// (the rows are in mtime order; one whose activity is newer goes in above, the selection
/// held on its row).
pub(super) const FIRST_READ: usize = 4;

/// One session read by `read_ahead`: the catalog's entry when the pass keeps them, and the row.
pub(super) type ReadAhead = (Option<Entry>, Option<Arc<SessionSummary>>);

/// One session read; with `keep`, also the catalog's entry, which shares the row.
pub(super) fn read_one(store: &dyn Store, c: &Candidate, keep: bool) -> ReadAhead {
    if !keep {
        return (None, store.summarize(c).map(Arc::new));
    }
    let e = crate::catalog::pass::read(store, c);
    let row = e.row.clone();
    (Some(e), row)
}

/// `candidates` read in order, half of them on a second thread: a cold start's first screen
/// of Claude Code or Codex rows parses megabytes of JSON, and one store's listing thread left
/// the other core idle meanwhile (issue 10). A second thread that fails leaves its half to
/// this one, so no row is lost.
pub(super) fn read_ahead(
    store: &dyn Store,
    candidates: &[Candidate],
    keep: bool,
) -> Vec<ReadAhead> {
    let one = |c: &Candidate| read_one(store, c, keep);
    if candidates.len() < 2 {
        return candidates.iter().map(one).collect();
    }
    let (mine, theirs) = candidates.split_at(candidates.len() / 2);
    std::thread::scope(|scope| {
        let other = std::thread::Builder::new()
            .name("spool-read-ahead".into())
            .spawn_scoped(scope, || theirs.iter().map(one).collect::<Vec<_>>());
        let mut out: Vec<ReadAhead> = mine.iter().map(one).collect();
        match other.map(|h| h.join()) {
            Ok(Ok(rest)) => out.extend(rest),
            _ => out.extend(theirs.iter().map(one)),
        }
        out
    })
}

/// `candidates` (a store's guess at its first screen) read by `read_ahead` in two steps, as
/// `Staged` reads a pass's first screenful: the top `FIRST_READ`, handed to `send` (step 0),
/// and the rest once the terminal has read the frame that shows those (step 1). Issue 10:
/// the first rows waited for a screenful of whole transcripts parsed. False when `send`
/// says the browser is gone (the rest is not read).
pub(super) fn in_two_steps<'c>(
    store: &dyn Store,
    candidates: &'c [Candidate],
    keep: bool,
    mut send: impl FnMut(usize, Vec<(&'c Candidate, ReadAhead)>) -> bool,
) -> bool {
    let (top, rest) = candidates.split_at(FIRST_READ.min(candidates.len()));
    for (step, part) in [top, rest].into_iter().enumerate() {
        if part.is_empty() {
            continue;
        }
        if step == 1 {
            crate::tui::ack::after_frame();
        }
        let reads = read_ahead(store, part, keep);
        if !send(step, part.iter().zip(reads).collect()) {
            return false;
        }
    }
    true
}

/// The reads of `first` (a pass's first candidates, in order), `FIRST_READ` of them at once
/// and the rest when the pass asks past them, each step by `read_ahead`.
pub(super) struct Staged<'a> {
    store: &'a dyn Store,
    first: &'a [Candidate],
    keep: bool,
    /// Candidates of `first` handed out or read into `reads`.
    read: usize,
    reads: std::vec::IntoIter<ReadAhead>,
}

impl<'a> Staged<'a> {
    /// Reads the top `FIRST_READ` of `first` now.
    pub(super) fn new(store: &'a dyn Store, first: &'a [Candidate], keep: bool) -> Self {
        let mut s = Staged {
            store,
            first,
            keep,
            read: 0,
            reads: Vec::new().into_iter(),
        };
        s.step(FIRST_READ);
        s
    }

    /// Whether the read of candidate `n` (the pass's `n`th) ends the first step with more of
    /// `first` still to read: its rows go out before the rest is read.
    pub(super) fn first_step_ends(&self, n: usize) -> bool {
        n + 1 == FIRST_READ && self.first.len() > FIRST_READ
    }

    /// Whether candidate `n` is the last of `first`: the screenful is read.
    pub(super) fn ends(&self, n: usize) -> bool {
        n + 1 == self.first.len()
    }

    fn step(&mut self, n: usize) {
        let upto = self.first.len().min(self.read + n);
        let part = &self.first[self.read..upto];
        self.reads = read_ahead(self.store, part, self.keep).into_iter();
        self.read = upto;
    }
}

impl Iterator for Staged<'_> {
    type Item = ReadAhead;

    /// The read of the pass's next candidate, `None` past `first`.
    fn next(&mut self) -> Option<ReadAhead> {
        if self.reads.len() == 0 && self.read < self.first.len() {
            self.step(self.first.len());
        }
        self.reads.next()
    }
}
