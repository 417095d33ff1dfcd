//! Sessions re-read while the browser runs get their matcher items replaced in place, one
//! or a whole batch at once: a warm check that re-read 1,000 sessions at 100k otherwise
//! walked every item once per session, or had every item built again, the old ones held
//! beside the new until the build was in (issue 10: the browser's peak, +18 MB).

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use super::Search;
use super::item::{self, Item};
use crate::model::SessionSummary;

/// A row's identity: its allocation (the items hold the list's own `Arc`s).
fn ptr(r: &Arc<SessionSummary>) -> usize {
    Arc::as_ptr(r) as usize
}

impl Search {
    /// Replace `old`'s item with `new`'s (the same session re-read), to be matched again at
    /// the next tick; false when `old` is not an item (the caller rebuilds them all).
    pub fn replace(&mut self, old: &Arc<SessionSummary>, new: Arc<SessionSummary>) -> bool {
        self.replace_all(&[(old.clone(), new)])
    }

    /// `replace` for each pair in turn (a later pair's old row may be an earlier one's new),
    /// with one walk over the items for the whole batch; false when an old row is not an
    /// item (the caller rebuilds them all, so those replaced before it do not matter).
    pub fn replace_all(&mut self, pairs: &[(Arc<SessionSummary>, Arc<SessionSummary>)]) -> bool {
        if pairs.is_empty() {
            return true;
        }
        let wanted: HashSet<usize> = pairs.iter().map(|(old, _)| ptr(old)).collect();
        // Every old row and every new one is alive in `pairs`: no two share an address.
        let mut at: HashMap<usize, usize> = (self.items.iter().enumerate())
            .filter(|(_, it)| wanted.contains(&ptr(it.row())))
            .map(|(i, it)| (ptr(it.row()), i))
            .collect();
        for (old, new) in pairs {
            let Some(i) = at.remove(&ptr(old)) else {
                return false;
            };
            self.items[i] = Item::new(new);
            self.titles.set(i, &self.items[i], item::recency_of(new));
            at.insert(ptr(new), i);
        }
        self.titles.pack_if_sparse(&self.items);
        // Their ranks may have changed either way: the matches are taken again
        // (milliseconds, the items themselves are kept).
        self.dirty = true;
        self.scanned = 0;
        true
    }
}
