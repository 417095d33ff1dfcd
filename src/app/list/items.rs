//! The matcher's items for the list's rows: when they are rebuilt, on which thread, and
//! what a query typed meanwhile matches (the items there are, never a wait for a build).

use super::{List, background};

impl List {
    /// Feed pending changes to the matcher and take its newest results. Returns whether
    /// the matcher is still running (its items are being built under a query).
    pub fn tick(&mut self, timeout_ms: u64) -> bool {
        if self.search_dirty && !self.defer_search() {
            self.refresh_items(false);
        }
        let (changed, running) = self.search.tick(timeout_ms);
        if changed {
            self.repin();
        }
        running || (self.building.is_some() && self.searching())
    }

    /// Wait for the items being built and match them (Enter in the search box opens the
    /// best match of every row, not of the rows whose items were there first).
    pub fn finish(&mut self) {
        if self.search_dirty && !self.defer_search() {
            self.refresh_items(true);
        }
        self.tick(0);
    }

    /// Give the matcher items for the current rows: a long list's are built on a thread
    /// (taken when done; a query meanwhile matches the items there are, and the run loop is
    /// woken when the rest come), a short list's right here. With `wait`, or when the items
    /// there are hold rows that left the view (a filter or a removal since), a query waits.
    fn refresh_items(&mut self, wait: bool) {
        use background::{ON_A_THREAD_FROM, Pending, Poll};
        let wait = wait || (self.searching() && self.items_generation != self.generation);
        if let Some(p) = self.building.as_ref().filter(|_| self.searching()) {
            // A query is typed: the build waits for no stat pass (`heap::Peaks`).
            p.hurry();
        }
        if let Some(p) = self.building.take() {
            match p.poll(self.generation, wait) {
                Poll::Done(built) => {
                    self.search.install(built);
                    self.items_generation = self.generation;
                    self.search_dirty = !self.apply_patches();
                    if self.search_dirty {
                        // A patch the items cannot take (a row that left the view), or
                        // too many to take here: build again.
                        self.refresh_items(wait);
                    }
                    return;
                }
                Poll::Running(p) => {
                    self.building = Some(p);
                    return;
                }
                Poll::Gone => {}
            }
        }
        self.patches.clear();
        if !wait && self.sorted.len() >= ON_A_THREAD_FROM {
            let notify = self.notify.clone();
            self.building = Pending::start(self.generation, self.sorted.clone(), notify);
            if self.building.is_some() {
                return;
            }
        }
        self.search.clear();
        self.search.reserve(self.sorted.len());
        for s in &self.sorted {
            self.search.push(s.clone());
        }
        self.items_generation = self.generation;
        self.search_dirty = false;
    }

    /// Apply the rows re-read while the installed items were built; false when one cannot
    /// be applied in place, or when there are as many as a build on a thread is for (a long
    /// batch listed meanwhile): every item must then be built again.
    fn apply_patches(&mut self) -> bool {
        if self.patches.len() >= background::ON_A_THREAD_FROM {
            self.patches.clear();
            return false;
        }
        for (old, new) in std::mem::take(&mut self.patches) {
            let (was, now) = (
                old.as_ref().is_some_and(|o| self.passes(o)),
                self.passes(&new),
            );
            let applied = match old {
                Some(o) if was => now && self.search.replace(&o, new),
                _ => {
                    if now {
                        self.search.push(new);
                    }
                    true
                }
            };
            if !applied {
                return false;
            }
        }
        true
    }

    /// Whether the matcher's items can wait: nothing has been shown yet and no query needs
    /// them. Building them (lower-cased, one-line text per row) was a third of the warm
    /// start's work before its first frame (issue 10); the first tick after it does it.
    pub(super) fn defer_search(&self) -> bool {
        !self.shown && !self.searching()
    }
}
