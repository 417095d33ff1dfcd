//! A long batch of rows (the catalog's, decoded after a warm start's first frame) made ready
//! off the UI thread: the rows' set, their order and the start of their matcher items are
//! built on the thread that decoded them, and the list takes them by swapping pointers.
//! Inserting 100k rows and re-sorting them on the UI thread held it for 76–300 ms (issue
//! 10, `SPOOL_KEYTRACE`'s `cached:` figures), and a key typed then waited that long.
//!
//! The matcher items' build is started by the UI thread when it takes the batch, with a copy
//! of the order made here: the preparing thread runs at a lower priority (`priority`), which
//! the build would inherit, and under load it then came seconds later.
//!
//! The batch is prepared against a snapshot of the list (`Seed`): its rows, filter and view.
//! Any change to the list in between (a removal, a filter, other rows) makes the preparation
//! stale, and the list then takes the batch the ordinary way (`upsert_shared`), so the result
//! is always what that would give.

use std::sync::{Arc, Mutex};

use super::rows::Rows;
use super::{List, background};
use crate::model::{Ended, SessionSummary};
use crate::search::Key;
use crate::store::registry::{Filter, list_order};

/// What a preparation needs of the list, taken on the UI thread (a few hundred rows: the
/// head's) and sent to the thread that prepares.
pub struct Seed {
    changes: u64,
    rows: Vec<Arc<SessionSummary>>,
    filter: Filter,
    inbox: bool,
}

/// A batch made ready for `List::install`.
pub struct Prepared {
    /// The list's `changes` when the seed was taken: installed only if still the same.
    changes: u64,
    rows: Rows,
    sorted: Vec<Arc<SessionSummary>>,
    groups: Groups,
    /// A copy of `sorted` for the matcher items' build, when it is long enough to build on
    /// a thread (100k reference counts touched here, not on the UI thread).
    items: Option<Vec<Arc<SessionSummary>>>,
    /// Keys of the batch's rows that replaced one of the seed's.
    updated: Vec<Key>,
    /// The batch as it came (the fallback, and what the indexer is told about).
    batch: Vec<Arc<SessionSummary>>,
}

/// A prepared batch on its way to the UI thread inside an `Action` (which is `Clone`): the
/// first to take it has it.
#[derive(Clone, Debug)]
pub struct Handoff(Arc<Mutex<Option<Prepared>>>);

impl Handoff {
    pub fn new(p: Prepared) -> Handoff {
        Handoff(Arc::new(Mutex::new(Some(p))))
    }

    pub fn take(&self) -> Option<Prepared> {
        self.0.lock().ok()?.take()
    }

    /// Show `f` the batch's rows, while it is not taken yet.
    pub fn batch(&self, f: impl FnOnce(&[Arc<SessionSummary>])) {
        if let Ok(p) = self.0.lock()
            && let Some(p) = p.as_ref()
        {
            f(&p.batch)
        }
    }
}

impl std::fmt::Debug for Prepared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Prepared({} rows)", self.batch.len())
    }
}

/// The inbox's groups in view order: (first row, ending, rows in the group).
pub(super) type Groups = Vec<(usize, Ended, usize)>;

/// Rows that pass `filter` (and the inbox's rule when `inbox`), in view order, with the
/// inbox's groups: the same order `List::resort` gives.
pub(super) fn order<'a>(
    rows: impl Iterator<Item = &'a Arc<SessionSummary>>,
    filter: &Filter,
    inbox: bool,
) -> (Vec<Arc<SessionSummary>>, Groups) {
    let passes = |s: &SessionSummary| filter.accepts(s) && (!inbox || crate::inbox::accepts(s));
    let mut v: Vec<Arc<SessionSummary>> = rows.filter(|s| passes(s)).cloned().collect();
    let mut groups: Groups = Vec::new();
    if inbox {
        v = crate::inbox::rows(v);
        for (i, s) in v.iter().enumerate() {
            match (groups.last_mut(), s.ended) {
                (Some(g), Some(e)) if g.1 == e => g.2 += 1,
                (_, Some(e)) => groups.push((i, e, 1)),
                _ => {}
            }
        }
    } else {
        // Compared row by row, not on `sort_listed`'s compact keys: a re-sort holds two
        // orders of pointers at most (`tests/list_memory.rs`), and a prepared batch comes
        // in sorted runs, which the stable sort merges in few comparisons.
        v.sort_by(|a, b| list_order(a, b));
    }
    (v, groups)
}

impl Seed {
    /// Build the list `batch` would make of the seed's: run on any thread.
    pub fn prepare(self, batch: Vec<Arc<SessionSummary>>) -> Prepared {
        let mut rows = Rows::default();
        rows.reserve(self.rows.len() + batch.len());
        let seed_rows = self.rows;
        for r in &seed_rows {
            rows.insert(r.clone());
        }
        let mut updated = Vec::new();
        for s in &batch {
            if rows.insert(s.clone()).is_some() {
                updated.push((s.store, s.id.to_string()));
            }
        }
        // The rows in the batch's order (the catalog keeps each store's in list order, so
        // the sort merges a few runs), then the seed's: the set's own order is random, and
        // sorting 100k rows from it took a third of this thread's time (issue 10). Every
        // row held is the batch's or the seed's, so as many rows as the set holds are its
        // rows, each once; else (an `Arc` given twice) the set's order does.
        let held: Vec<_> = (batch.iter().chain(&seed_rows))
            .filter(|s| rows.holds(s))
            .collect();
        let (sorted, groups) = match held.len() == rows.len() {
            true => order(held.into_iter(), &self.filter, self.inbox),
            false => order(rows.values(), &self.filter, self.inbox),
        };
        // Short lists build their items on the UI thread (`refresh_items`), as before.
        let items = (sorted.len() >= background::ON_A_THREAD_FROM).then(|| sorted.clone());
        Prepared {
            changes: self.changes,
            rows,
            sorted,
            groups,
            items,
            updated,
            batch,
        }
    }
}

impl List {
    /// What a batch is prepared against (`Seed::prepare`, on another thread).
    pub fn seed(&self) -> Seed {
        Seed {
            changes: self.changes,
            rows: self.rows.values().cloned().collect(),
            filter: self.filter.clone(),
            inbox: self.inbox,
        }
    }

    /// Take a prepared batch: its rows, order and item build replace the list's when nothing
    /// changed since its seed (pointer swaps; the old ones were the seed's few rows), else the
    /// batch goes through `upsert_shared`. Returns the keys already present, as that does.
    pub fn install(&mut self, p: Prepared) -> Vec<Key> {
        // A build under way would need the whole batch as patches: the ordinary way does that.
        if p.changes != self.changes || self.building.is_some() {
            return self.upsert_shared(p.batch);
        }
        self.changes += 1;
        self.expected = None;
        self.rows = p.rows;
        self.sorted = p.sorted;
        self.groups = p.groups;
        self.patches.clear();
        // No build is under way (checked above): this one's rows are the view's.
        self.building = (p.items).and_then(|rows| {
            background::Pending::start(self.generation, rows, self.notify.clone())
        });
        self.search_dirty = true;
        self.repin();
        p.updated
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::StoreKind;

    /// The head's rows and a long batch as a warm start has them: mixed recency, a pin, an
    /// archived row (out of the default view), and one batch row that re-reads a head row.
    fn start() -> (Vec<SessionSummary>, Vec<Arc<SessionSummary>>) {
        let row = |id: String, i: usize| {
            let mut s = SessionSummary::new(StoreKind::Loom, id, "/a");
            s.set_title(if i % 97 == 5 {
                format!("okapi {i}")
            } else {
                format!("title {i}")
            });
            s.has_user_message = true;
            s.updated_at = chrono::DateTime::from_timestamp(1_000 + (i as i64 * 7919) % 5_000, 0);
            s.pinned_flag = i % 501 == 3;
            s.archived = i % 333 == 7;
            s.ended = [None, Some(Ended::Done), Some(Ended::Waiting)][i % 3];
            s
        };
        let head = (0..40).map(|i| row(format!("h{i}"), i)).collect();
        let mut batch: Vec<_> = (0..background::ON_A_THREAD_FROM + 300)
            .map(|i| Arc::new(row(format!("b{i}"), i + 40)))
            .collect();
        let mut again = row("h4".into(), 4);
        again.set_title("okapi re-read");
        batch.push(Arc::new(again));
        (head, batch)
    }

    fn shown(head: &[SessionSummary], inbox: bool, query: &str) -> List {
        let mut l = List::new(Filter::default(), Arc::new(|| {}));
        l.upsert(head.to_vec());
        l.shown();
        l.tick(0);
        if inbox {
            l.set_inbox(true);
        }
        l.set_query(query);
        l.tick(0);
        l
    }

    /// Everything a frame shows of the list, once its items are all in.
    fn view(l: &mut List) -> (Vec<Key>, Option<Key>, usize, Groups, usize) {
        l.finish();
        (
            l.keys(0, l.len()),
            l.selected.clone(),
            l.cursor,
            l.groups.clone(),
            l.count(),
        )
    }

    /// A batch prepared on another thread and installed gives the list (rows, order, inbox
    /// groups, selection, the query's matches, the keys it replaced) that inserting the
    /// batch on the UI thread gives, with and without a query typed before it came.
    #[test]
    fn a_prepared_batch_lists_what_an_upsert_lists() {
        let (head, batch) = start();
        for (inbox, query) in [(false, ""), (false, "okapi"), (true, ""), (false, "titl")] {
            let mut plain = shown(&head, inbox, query);
            let mut fast = shown(&head, inbox, query);
            let updated = plain.upsert_shared(batch.clone());
            let p = fast.seed().prepare(batch.clone());
            assert_eq!(fast.install(p), updated, "inbox {inbox}, query {query:?}");
            assert_eq!(updated, vec![(StoreKind::Loom, "h4".to_string())]);
            assert_eq!(view(&mut fast), view(&mut plain), "{inbox} {query:?}");
            fast.set_query("okapi re");
            plain.set_query("okapi re");
            assert_eq!(view(&mut fast), view(&mut plain), "{inbox} {query:?}");
        }
    }

    /// The prepared order is taken from the batch and the seed (not the row set's random
    /// order): a row given twice is still listed once, a head row the batch re-read is
    /// listed as re-read, and every other head row is kept.
    #[test]
    fn a_row_given_twice_is_listed_once() {
        let (head, mut batch) = start();
        batch.push(batch[3].clone());
        let mut plain = shown(&head, false, "");
        let mut fast = shown(&head, false, "");
        plain.upsert_shared(batch.clone());
        fast.install(fast.seed().prepare(batch));
        let v = view(&mut fast);
        assert_eq!(v, view(&mut plain));
        let mut keys = v.0.clone();
        keys.sort();
        keys.dedup();
        assert_eq!(keys.len(), v.0.len(), "a row listed twice");
        assert!(
            v.0.contains(&(StoreKind::Loom, "h8".to_string())),
            "a head row lost"
        );
    }

    /// The list starts the items' build with the preparation's copy of the order at once
    /// (not a copy of its own at the next tick), and the matches it gives are every row's.
    #[test]
    fn the_items_build_starts_with_the_prepared_order() {
        let (head, batch) = start();
        let mut l = shown(&head, false, "");
        let p = l.seed().prepare(batch.clone());
        assert!(p.items.is_some(), "a long batch's items are made ready");
        l.install(p);
        assert!(l.building.is_some());
        l.set_query("okapi");
        l.finish();
        let n = l.len();
        assert!(n > 20, "{n} okapis");
        assert!(
            (l.keys(0, n))
                .iter()
                .all(|k| l.get(k).unwrap().title().contains("okapi"))
        );
    }

    /// A list changed after its seed was taken (a row removed, a filter set) takes the
    /// batch the ordinary way: the removed row does not come back from the seed, and the
    /// filter holds.
    #[test]
    fn a_stale_preparation_is_not_installed() {
        let (head, batch) = start();
        let gone = (StoreKind::Loom, "h9".to_string());
        let mut plain = shown(&head, false, "");
        let mut fast = shown(&head, false, "");
        let p = fast.seed().prepare(batch.clone());
        fast.remove(std::slice::from_ref(&gone));
        plain.remove(std::slice::from_ref(&gone));
        fast.install(p);
        plain.upsert_shared(batch.clone());
        assert!(fast.get(&gone).is_none(), "a removed row stays removed");
        assert_eq!(view(&mut fast), view(&mut plain));

        let only_b = Filter {
            archived: true,
            ..Filter::default()
        };
        let p = fast.seed().prepare(batch.clone());
        fast.set_filter(only_b.clone());
        plain.set_filter(only_b);
        fast.install(p);
        plain.upsert_shared(batch);
        assert_eq!(view(&mut fast), view(&mut plain));
    }
}
