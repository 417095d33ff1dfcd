//! The list's rows by identity: a set of shared rows, each found by its own (store, id), so
//! the table holds a pointer a slot and no copy of any id (issue 10: a map keyed by a cloned
//! `(store, id)` was 40 bytes a slot and a second copy of every id, ~7 MB at 100k rows).

use std::borrow::Borrow;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use crate::model::{SessionSummary, StoreKind};
use crate::search::Key;

/// What a row and a `Key` are looked up by, hashed and compared alike.
trait AsKey {
    fn parts(&self) -> (StoreKind, &str);
}

impl AsKey for Key {
    fn parts(&self) -> (StoreKind, &str) {
        (self.0, &self.1)
    }
}

impl Hash for dyn AsKey + '_ {
    fn hash<H: Hasher>(&self, h: &mut H) {
        self.parts().hash(h)
    }
}

impl PartialEq for dyn AsKey + '_ {
    fn eq(&self, o: &Self) -> bool {
        self.parts() == o.parts()
    }
}

impl Eq for dyn AsKey + '_ {}

/// A shared row in the set, equal to another by (store, id) alone.
struct Row(Arc<SessionSummary>);

/// A row's store and id, borrowed: looked up without making a `Key` (a copy of the id).
struct Parts<'a>(StoreKind, &'a str);

impl AsKey for Parts<'_> {
    fn parts(&self) -> (StoreKind, &str) {
        (self.0, self.1)
    }
}

impl AsKey for Row {
    fn parts(&self) -> (StoreKind, &str) {
        (self.0.store, &self.0.id)
    }
}

impl Hash for Row {
    fn hash<H: Hasher>(&self, h: &mut H) {
        (self as &dyn AsKey).hash(h)
    }
}

impl PartialEq for Row {
    fn eq(&self, o: &Self) -> bool {
        self.parts() == o.parts()
    }
}

impl Eq for Row {}

impl<'a> Borrow<dyn AsKey + 'a> for Row {
    fn borrow(&self) -> &(dyn AsKey + 'a) {
        self
    }
}

/// FxHash: a warm start at 100k sessions inserts every row once (`Seed::prepare`) and SipHash
/// was a tenth of that thread's time; ids come from the stores' own file names.
#[derive(Default)]
pub struct Rows(rustc_hash::FxHashSet<Row>);

impl Rows {
    pub fn get(&self, key: &Key) -> Option<&Arc<SessionSummary>> {
        self.0.get(key as &dyn AsKey).map(|r| &r.0)
    }

    /// Put `s` in; the row it replaces (same store and id), if any.
    pub fn insert(&mut self, s: Arc<SessionSummary>) -> Option<Arc<SessionSummary>> {
        self.0.replace(Row(s)).map(|r| r.0)
    }

    /// Whether `s` itself (this `Arc`, not only its store and id) is the row held.
    pub fn holds(&self, s: &Arc<SessionSummary>) -> bool {
        let key: &dyn AsKey = &Parts(s.store, &s.id);
        self.0.get(key).is_some_and(|r| Arc::ptr_eq(&r.0, s))
    }

    pub fn remove(&mut self, key: &Key) {
        self.0.remove(key as &dyn AsKey);
    }

    pub fn reserve(&mut self, n: usize) {
        self.0.reserve(n);
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn values(&self) -> impl Iterator<Item = &Arc<SessionSummary>> {
        self.0.iter().map(|r| &r.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_found_replaced_and_removed_by_store_and_id() {
        let mut rows = Rows::default();
        let a = Arc::new(SessionSummary::new(StoreKind::Loom, "a", "/a"));
        let b = Arc::new(SessionSummary::new(StoreKind::Loop, "a", "/b"));
        assert!(rows.insert(a.clone()).is_none());
        assert!(rows.insert(b.clone()).is_none());
        assert_eq!(rows.len(), 2);
        let mut a2 = SessionSummary::new(StoreKind::Loom, "a", "/a");
        a2.set_title("new");
        let old = rows.insert(Arc::new(a2)).expect("the same session");
        assert!(Arc::ptr_eq(&old, &a));
        assert_eq!(rows.len(), 2);
        let k = (StoreKind::Loom, "a".to_string());
        assert_eq!(rows.get(&k).map(|r| r.title()), Some("new"));
        assert!(Arc::ptr_eq(
            rows.get(&(StoreKind::Loop, "a".into())).unwrap(),
            &b
        ));
        rows.remove(&k);
        assert!(rows.get(&k).is_none());
        assert_eq!(rows.len(), 1);
        // `holds`: this very row, not another with its store and id.
        assert!(rows.holds(&b));
        assert!(!rows.holds(&Arc::new(SessionSummary::new(StoreKind::Loop, "a", "/b"))));
        assert!(!rows.holds(&a));
    }
}
