//! The session list: rows by identity, filters, list order, fuzzy search, and a selection
//! that stays on the same session (store, id) while rows stream in or re-sort.

use std::sync::Arc;

use crate::model::{Ended, SessionSummary, StoreKind};
use crate::search::{Key, Search};
use crate::store::registry::{Filter, list_order};

mod background;
mod items;
mod prepared;
mod rows;

pub use prepared::{Handoff, Prepared, Seed};

/// Batches at least this long are worth preparing off the UI thread (`Seed::prepare`): the
/// length from which their matcher items are built on a thread as well.
pub const PREPARE_FROM: usize = background::ON_A_THREAD_FROM;

/// Rows, their filtered order, the search and the selection.
pub struct List {
    /// Behind an `Arc`: a slot is a pointer, not a 400-byte summary (nor a copy of its id),
    /// and the view order, the matcher and the index's first pass share each summary
    /// instead of copying it (issue 10: at 100k rows a copy of the listing for the index
    /// was ~70 MB, the view's keys ~6 MB).
    rows: rows::Rows,
    /// Rows that pass the filter, in list order (the list when there is no query).
    sorted: Vec<Arc<SessionSummary>>,
    pub filter: Filter,
    search: Search,
    /// Re-inject every filtered row into the matcher at the next tick (a row changed or the
    /// filter changed: nucleo items are immutable, so a rebuild is the honest update).
    search_dirty: bool,
    /// The selected session, by identity.
    pub selected: Option<Key>,
    /// Its row number in the current view.
    pub cursor: usize,
    /// First row drawn.
    pub offset: usize,
    /// The top row is selected until the user moves (at start, while rows stream in, and
    /// after a query change).
    follow_top: bool,
    /// Select this session as soon as it is listed (a fork, an undone delete).
    want: Option<Key>,
    /// Show the inbox (`i`): only what `inbox::accepts`, in inbox order.
    pub inbox: bool,
    /// Rows have been on screen: from then on the selection holds still (`shown`).
    shown: bool,
    /// The inbox's groups in view order: (first row, ending, rows in the group).
    groups: prepared::Groups,
    /// The row count the catalog's head announced while only its first rows are listed (the
    /// status bar's figure in the warm start's first frame); any change of rows ends it.
    expected: Option<usize>,
    /// Counts removals and changes of filter or view, after which a background build of
    /// matcher items for the rows before is stale (thrown away and started again). A
    /// re-sort is not counted: the rows it orders are the build's plus `patches`, and a cold
    /// load re-sorts at every batch (restarting the build each time cost a cold 10k load
    /// about a second).
    generation: u64,
    /// Matcher items being built on a thread for a long list (`background`).
    building: Option<background::Pending>,
    /// Rows re-read or added while the items are built, (old row, new row): applied to the
    /// items once installed, so a session an agent keeps writing to does not make every
    /// build stale.
    patches: Vec<(Option<Arc<SessionSummary>>, Arc<SessionSummary>)>,
    /// The generation the matcher's items were built for. While it is current the items
    /// hold only rows of the view (some may be missing or a re-read behind), so a query
    /// matches them at once while the rest are built, instead of waiting for the build.
    items_generation: u64,
    /// Wakes the run loop when a build is done (a query shows its full matches then).
    notify: Arc<dyn Fn() + Sync + Send>,
    /// Counts every change of rows, filter or view: a batch prepared on another thread
    /// against an older count is stale (`prepared`).
    changes: u64,
}

/// One line pair of the sidebar: a session row, or in the inbox the heading of a group.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Slot {
    Heading(Ended, usize),
    Row(usize, Key),
}

impl List {
    pub fn new(filter: Filter, notify: Arc<dyn Fn() + Sync + Send>) -> List {
        List {
            rows: rows::Rows::default(),
            sorted: Vec::new(),
            filter,
            search: Search::new(notify.clone()),
            search_dirty: false,
            selected: None,
            cursor: 0,
            offset: 0,
            follow_top: true,
            want: None,
            inbox: false,
            shown: false,
            groups: Vec::new(),
            expected: None,
            generation: 0,
            building: None,
            patches: Vec::new(),
            items_generation: 0,
            notify,
            changes: 0,
        }
    }

    /// Only the first rows of `n` are listed yet (the catalog's head): the status bar says `n`.
    pub fn expect(&mut self, n: usize) {
        self.expected = Some(n);
    }

    /// The count the status bar shows: the rows in view, or the head's announced count.
    pub fn count(&self) -> usize {
        match self.expected {
            Some(n) if !self.searching() => n,
            _ => self.len(),
        }
    }

    /// A frame showed the list. The first time it held rows, the start's "follow the top
    /// row" ends: rows streaming in later are inserted around the selected session, which
    /// keeps its place on screen, instead of changing what is selected under the user.
    pub fn shown(&mut self) {
        if !self.shown && !self.is_empty() && !self.searching() {
            self.shown = true;
            self.follow_top = false;
        }
    }

    pub fn get(&self, key: &Key) -> Option<&SessionSummary> {
        self.rows.get(key).map(|b| &**b)
    }

    /// Every session listed, shared rather than copied (the index's first pass).
    pub fn shared_rows(&self) -> Vec<Arc<SessionSummary>> {
        self.rows.values().cloned().collect()
    }

    pub fn selected_summary(&self) -> Option<&SessionSummary> {
        self.selected.as_ref().and_then(|k| self.get(k))
    }

    /// Whether any row (whatever the filter) belongs to store `k`: `F` skips empty stores.
    pub fn has_store(&self, k: StoreKind) -> bool {
        self.rows.values().any(|s| s.store == k)
    }

    /// Every session listed, whatever the filter and query.
    pub fn all_rows(&self) -> impl Iterator<Item = &SessionSummary> {
        self.rows.values().map(|b| &**b)
    }

    pub fn total_rows(&self) -> usize {
        self.rows.len()
    }

    pub fn query(&self) -> &str {
        self.search.query()
    }

    fn searching(&self) -> bool {
        !self.search.query().trim().is_empty()
    }

    /// Rows in the current view (filtered, and matched when a query is set).
    pub fn len(&self) -> usize {
        if self.searching() {
            self.search.matched_count()
        } else {
            self.sorted.len()
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Keys of view rows `start..start+n` (only the visible range is read from the matcher).
    pub fn keys(&self, start: usize, n: usize) -> Vec<Key> {
        if self.searching() {
            self.search.matched_keys(start..start + n)
        } else {
            let end = (start + n).min(self.sorted.len());
            self.sorted[start.min(end)..end]
                .iter()
                .map(|s| (s.store, s.id.to_string()))
                .collect()
        }
    }

    fn position(&self, key: &Key) -> Option<usize> {
        if self.searching() {
            self.search.position(key)
        } else {
            self.sorted
                .iter()
                .position(|s| s.store == key.0 && *s.id == *key.1)
        }
    }

    /// Char indices of `title` to highlight for the current query.
    pub fn highlight(&mut self, title: &str) -> Vec<usize> {
        self.search.highlight(title)
    }

    /// Insert or replace summaries. Returns the keys that were already present (re-summarized).
    /// Whether `s` is in the current view (before the query).
    fn passes(&self, s: &SessionSummary) -> bool {
        self.filter.accepts(s) && (!self.inbox || crate::inbox::accepts(s))
    }

    /// Switch between "all, by time" and the inbox.
    pub fn set_inbox(&mut self, on: bool) {
        self.inbox = on;
        self.changes += 1;
        self.generation += 1;
        self.search_dirty = true;
        self.follow_top = true;
        self.offset = 0;
        self.resort();
    }

    pub fn upsert(&mut self, batch: Vec<SessionSummary>) -> Vec<Key> {
        self.upsert_shared(batch.into_iter().map(Arc::new).collect())
    }

    /// `upsert` of rows already shared (the catalog's, decoded into their `Arc`s): kept as
    /// they are, never copied.
    pub fn upsert_shared(&mut self, batch: Vec<Arc<SessionSummary>>) -> Vec<Key> {
        let mut updated = Vec::new();
        self.changes += 1;
        self.expected = None;
        // One allocation for the catalog's 10k+ rows at start, not a doubling table that
        // rehashes every row a dozen times before the first frame.
        self.rows.reserve(batch.len());
        // Before the first frame with an empty query the matcher is not read: its items
        // are built by the first `tick` after the frame (`defer_search`).
        if self.defer_search() {
            self.search_dirty = true;
        }
        // A long batch (the catalog's rows, decoded after a warm start's first frame) gets
        // its items from a build on a thread at the next tick, not here one by one: at 100k
        // rows that held the UI thread, and a key typed meanwhile, for over a second.
        if batch.len() >= background::ON_A_THREAD_FROM {
            self.search_dirty = true;
        }
        // A few rows into a long list (what the watcher re-reads) are placed by binary
        // search, and a changed row's matcher item is replaced in place: re-sorting every
        // row and rebuilding every item held a key typed meanwhile at 100k rows (issue 10).
        let mut place = !self.inbox && batch.len() * 64 <= self.sorted.len();
        // A batch under the thread's threshold but too long to place, pushed into live items
        // one by one, grew every vector of the matcher by doubling, to up to twice its rows
        // (issue 10: 44 MB where 20 fit, when the catalog's 100k rows still came this way).
        if !place && !self.search_dirty {
            self.search.reserve(batch.len());
        }
        // Re-read rows whose items are replaced after the loop, all in one walk.
        let mut swaps = Vec::new();
        for s in batch {
            let passes = self.passes(&s);
            match self.rows.insert(s.clone()) {
                Some(old) => {
                    updated.push((s.store, s.id.to_string()));
                    let was = self.passes(&old);
                    if place {
                        place = !was || self.unplace(&old);
                        if place && passes {
                            self.place(&s);
                        }
                    }
                    if self.building.is_some() {
                        self.patches.push((Some(old.clone()), s.clone()));
                    }
                    match (was, passes) {
                        // In the view neither before nor after: no item either way (a
                        // rebuild of every item, for a hidden row re-read, held the old
                        // items beside the new: +18 MB at 100k, issue 10).
                        (false, false) => {}
                        (true, true) if !self.search_dirty => swaps.push((old, s)),
                        _ => self.search_dirty = true,
                    }
                }
                None => {
                    if place && passes {
                        self.place(&s);
                    }
                    if self.building.is_some() {
                        self.patches.push((None, s.clone()));
                    }
                    if passes && !self.search_dirty {
                        self.search.push(s);
                    }
                }
            }
        }
        if !self.search_dirty && !self.search.replace_all(&swaps) {
            self.search_dirty = true;
        }
        if place {
            self.repin();
        } else {
            self.resort();
        }
        updated
    }

    /// Insert `s` at its place in the view order (it passes the filter; no inbox).
    fn place(&mut self, s: &Arc<SessionSummary>) {
        let at = (self.sorted).partition_point(|x| list_order(x, s) == std::cmp::Ordering::Less);
        self.sorted.insert(at, s.clone());
    }

    /// Take `old` out of the view order; false when it is not where the order says (the
    /// caller then re-sorts everything).
    fn unplace(&mut self, old: &SessionSummary) -> bool {
        match self.sorted.binary_search_by(|x| list_order(x, old)) {
            Ok(at) => {
                self.sorted.remove(at);
                true
            }
            Err(_) => false,
        }
    }

    pub fn remove(&mut self, keys: &[Key]) {
        for k in keys {
            self.rows.remove(k);
        }
        self.changes += 1;
        self.generation += 1;
        self.search_dirty = true;
        self.resort();
    }

    /// Re-apply filter and order, then put the cursor back on the selected session.
    pub fn resort(&mut self) {
        self.expected = None;
        (self.sorted, self.groups) = prepared::order(self.rows.values(), &self.filter, self.inbox);
        self.repin();
    }

    pub fn set_filter(&mut self, f: Filter) {
        self.filter = f;
        self.changes += 1;
        self.generation += 1;
        self.search_dirty = true;
        self.resort();
    }

    pub fn set_query(&mut self, q: &str) {
        self.search.set_query(q);
        self.follow_top = true;
        self.cursor = 0;
        self.offset = 0;
        self.repin();
    }

    /// Keep the selection on its session; fall back to the same row number when it left the
    /// view.
    pub fn repin(&mut self) {
        let n = self.len();
        if n == 0 {
            self.cursor = 0;
            if !self.searching() {
                self.selected = None;
            }
            return;
        }
        if self.want.is_some() {
            self.take_wanted();
        }
        if self.follow_top {
            self.cursor = 0;
            self.selected = self.keys(0, 1).pop();
            return;
        }
        match self.selected.as_ref().and_then(|k| self.position(k)) {
            // Rows inserted above (or re-sorted past) the selection scroll the list by as
            // much, so the selected row stays where it is on screen.
            Some(p) => {
                self.offset = (self.offset + p).saturating_sub(self.cursor);
                self.cursor = p;
            }
            None => {
                self.cursor = self.cursor.min(n - 1);
                self.selected = self.keys(self.cursor, 1).pop();
            }
        }
    }

    /// The user acted on the selection: stop following the top row.
    pub fn keep_selection(&mut self) {
        self.follow_top = false;
    }

    /// Select `key` now if it is in view, else as soon as it arrives (until the user moves).
    pub fn select_when_listed(&mut self, key: Key) {
        self.follow_top = false;
        self.want = Some(key);
        self.take_wanted();
    }

    fn take_wanted(&mut self) {
        if let Some(k) = &self.want
            && let Some(p) = self.position(k)
        {
            self.selected = self.want.take();
            self.cursor = p;
        }
    }

    /// Move the cursor by `delta` rows (clamped) and select that row.
    pub fn move_by(&mut self, delta: isize) {
        let n = self.len();
        if n == 0 {
            return;
        }
        self.follow_top = false;
        let c = (self.cursor as isize + delta).clamp(0, n as isize - 1) as usize;
        self.select_row(c);
    }

    pub fn select_row(&mut self, row: usize) {
        let n = self.len();
        if n == 0 {
            return;
        }
        self.follow_top = false;
        self.want = None;
        self.cursor = row.min(n - 1);
        self.selected = self.keys(self.cursor, 1).pop();
    }

    /// Whether rows are drawn under group headings (the inbox, with no query: a query
    /// orders by score, which groups would scatter).
    fn headed(&self) -> bool {
        self.inbox && !self.searching()
    }

    /// Where row `row` is drawn, counting heading slots above it.
    fn slot_of(&self, row: usize) -> usize {
        if !self.headed() {
            return row;
        }
        row + self.groups.iter().filter(|g| g.0 <= row).count()
    }

    /// Rows plus headings.
    fn slot_count(&self) -> usize {
        self.len() + if self.headed() { self.groups.len() } else { 0 }
    }

    /// What slots `start..start+n` show.
    pub fn slots(&self, start: usize, n: usize) -> Vec<Slot> {
        if !self.headed() {
            return (start..)
                .zip(self.keys(start, n))
                .map(|(i, k)| Slot::Row(i, k))
                .collect();
        }
        let mut out = Vec::with_capacity(n);
        let (mut slot, mut row) = (0usize, 0usize);
        for &(first, ended, count) in &self.groups {
            if slot >= start + n {
                break;
            }
            if slot >= start {
                out.push(Slot::Heading(ended, count));
            }
            slot += 1;
            // The group's rows that fall inside the window.
            let from = start.saturating_sub(slot).min(count);
            let to = (start + n).saturating_sub(slot).min(count);
            if from < to {
                let keys = self.keys(first + from, to - from);
                out.extend((first + from..).zip(keys).map(|(i, k)| Slot::Row(i, k)));
            }
            slot += count;
            row = first + count;
        }
        debug_assert!(row <= self.len());
        out
    }

    /// The row drawn in slot `slot`, if it is a row (not a heading).
    pub fn row_at_slot(&self, slot: usize) -> Option<usize> {
        match self.slots(slot, 1).pop() {
            Some(Slot::Row(i, _)) => Some(i),
            _ => None,
        }
    }

    /// Scroll so the cursor is inside a window of `height` rows.
    pub fn scroll_into_view(&mut self, height: usize) {
        if self.headed() {
            let h = height.max(1);
            let c = self.slot_of(self.cursor);
            // The first row of a group brings its heading into view with it.
            let top = if self.groups.iter().any(|g| g.0 == self.cursor) {
                c.saturating_sub(1)
            } else {
                c
            };
            if top < self.offset {
                self.offset = top;
            } else if c >= self.offset + h {
                self.offset = c + 1 - h;
            }
            self.offset = self.offset.min(self.slot_count().saturating_sub(h));
            return;
        }
        let h = height.max(1);
        if self.cursor < self.offset {
            self.offset = self.cursor;
        } else if self.cursor >= self.offset + h {
            self.offset = self.cursor + 1 - h;
        }
        self.offset = self.offset.min(self.len().saturating_sub(h));
    }

    /// Cycle the store filter: all → each store in `StoreKind::ALL` order → all, skipping
    /// the stores `has` says have no sessions.
    pub fn next_store(f: Option<StoreKind>, has: impl Fn(StoreKind) -> bool) -> Option<StoreKind> {
        let after = match f {
            None => 0,
            Some(k) => StoreKind::ALL
                .iter()
                .position(|x| *x == k)
                .map_or(0, |i| i + 1),
        };
        StoreKind::ALL[after.min(StoreKind::ALL.len())..]
            .iter()
            .copied()
            .find(|k| has(*k))
    }
}

#[cfg(test)]
mod tests;
