//! The watcher's table of every current session of a store: per id, a hash of its path and
//! its catalog key. The path is only ever compared (has the session moved?), so its hash
//! stands in for it; the id is kept (as a boxed string, no spare capacity) because a session
//! that disappears is reported by its id. Issue 10: the table held a copy of every id and
//! path (`String`, `PathBuf`): about 19 MB at 100k sessions.

use std::hash::{Hash, Hasher};
use std::path::Path;
use std::sync::Arc;

use rustc_hash::FxHashMap;

use crate::model::SessionSummary;

/// What the watcher compares of one session.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Slot {
    /// `path_hash` of the session's path.
    pub path: u64,
    /// The catalog's `stamp::key` of its inputs (0 when not taken).
    pub key: u64,
}

/// The path's hash: FxHash of its components (`Path`'s own `Hash`, so paths that compare
/// equal hash equal). Only compared within one process, never kept; a path is never looked
/// up by it, so a collision (crafted or not) could only hide one move until the next pass.
/// SipHash was a tenth of the warm start's decode thread at 100k sessions (issue 10: every
/// cached meta is hashed when slimmed, and every candidate again when checked).
pub fn path_hash(p: &Path) -> u64 {
    use std::os::unix::ffi::OsStrExt;
    let mut h = rustc_hash::FxHasher::default();
    let b = p.as_os_str().as_bytes();
    if is_plain(b) {
        b.hash(&mut h);
    } else {
        plain_form(p).hash(&mut h);
    }
    h.finish()
}

/// Whether `b` is the path `plain_form` writes for it: absolute, with no empty or `.`
/// component and no trailing separator. Paths from a store's own listing are; their bytes
/// are hashed as they are (`Path`'s own `Hash` walked the components, a tenth of a warm
/// start's decode thread at 100k sessions).
fn is_plain(b: &[u8]) -> bool {
    match b {
        [b'/'] => true,
        [b'/', rest @ ..] => (rest.split(|&c| c == b'/')).all(|c| !c.is_empty() && c != b"."),
        _ => false,
    }
}

/// `p`'s components joined by single separators: the same bytes for every path equal to `p`
/// (`Path`'s equality compares components), and `p`'s own bytes when it `is_plain`.
fn plain_form(p: &Path) -> Vec<u8> {
    use std::os::unix::ffi::OsStrExt;
    use std::path::Component;
    let mut out = Vec::with_capacity(p.as_os_str().len());
    for c in p.components() {
        if !out.is_empty() && out != b"/" {
            out.push(b'/');
        }
        match c {
            Component::RootDir => out.push(b'/'),
            c => out.extend_from_slice(c.as_os_str().as_bytes()),
        }
    }
    out
}

/// An entry of `Known::from_unsorted`: `id` at `path` with `key`.
pub fn entry(id: impl Into<Arc<str>>, path: &Path, key: u64) -> (Arc<str>, Slot) {
    let path = path_hash(path);
    (id.into(), Slot { path, key })
}

/// The id for the watcher's table of a candidate listed as `id`: its row's own id (the same
/// allocation, not a copy: 100k ids at 100k sessions) when it has a row of that id, else a
/// new one.
pub fn row_id_or(row: Option<&SessionSummary>, id: &str) -> Arc<str> {
    match row {
        Some(s) if *s.id == *id => s.id.clone(),
        _ => id.into(),
    }
}

/// The 32 bits of an id's FxHash that `Known` and the pass's `ById` order ids by (a
/// collision costs one more id read).
pub(super) fn id_hash(id: &str) -> u32 {
    use std::hash::BuildHasher;
    (rustc_hash::FxBuildHasher.hash_one(id) >> 32) as u32
}

/// Every current session's path hash and key, by id: entries sorted by `id_hash`, with the
/// hashes in a vector of their own that a lookup bisects (contiguous, no id read but the
/// match's), and a small map of the ids inserted since, merged in when it grows.
///
/// Issue 10: a hash table (`FxHashMap<Box<str>, Slot>`) held 65,536 buckets of 33 bytes for
/// the ~33k sessions of each store at 100k, 6.5 MB for three stores; sorted, an entry is its
/// 32 bytes and a 4-byte hash (3.6 MB). Tables are built whole (`from_unsorted`), and after
/// that the watcher inserts a few sessions a pass.
#[derive(Debug, Default)]
pub struct Known {
    /// `id_hash` of each entry of `sorted`, in order.
    hashes: Vec<u32>,
    /// (id, slot), in `id_hash` order; ids of equal hash in no particular order.
    sorted: Vec<(Arc<str>, Slot)>,
    /// Ids inserted since `sorted` was last built, none of them in it.
    added: FxHashMap<Arc<str>, Slot>,
}

/// `added` is merged into the sorted entries when it holds more than this or an eighth of
/// them: a rebuild sorts them all, so it is rare enough to cost little a session.
const MERGE_FROM: usize = 256;

impl Known {
    /// The table of `entries` (the last of an id given twice wins, as in a map).
    pub fn from_unsorted(mut entries: Vec<(Arc<str>, Slot)>) -> Known {
        // Stable: an id given twice keeps its order, so the last one is known below.
        entries.sort_by_cached_key(|e| id_hash(&e.0));
        let mut hashes: Vec<u32> = Vec::with_capacity(entries.len());
        hashes.extend(entries.iter().map(|e| id_hash(&e.0)));
        // A run of equal hashes is nearly always one id: only a longer run is searched for
        // an id given twice, whose earlier entries are dropped.
        let mut dropped = vec![false; 0];
        let mut start = 0;
        while start < hashes.len() {
            let end = start + hashes[start..].partition_point(|&h| h == hashes[start]);
            for i in start..end {
                if entries[i + 1..end].iter().any(|e| e.0 == entries[i].0) {
                    dropped.resize(entries.len(), false);
                    dropped[i] = true;
                }
            }
            start = end;
        }
        if !dropped.is_empty() {
            let mut at = (0..entries.len()).map(|i| !dropped[i]);
            entries.retain(|_| at.next().unwrap_or(true));
            let mut at = (0..hashes.len()).map(|i| !dropped[i]);
            hashes.retain(|_| at.next().unwrap_or(true));
        }
        entries.shrink_to_fit();
        hashes.shrink_to_fit();
        Known {
            hashes,
            sorted: entries,
            added: FxHashMap::default(),
        }
    }

    /// Where `id` is in `sorted`.
    fn position(&self, id: &str) -> Option<usize> {
        let h = id_hash(id);
        let from = self.hashes.partition_point(|&x| x < h);
        let same = self.hashes[from..].iter().take_while(|&&x| x == h).count();
        (from..from + same).find(|&i| &*self.sorted[i].0 == id)
    }

    /// Record `id` at `path` with `key`; an id already there is updated in place.
    pub fn insert(&mut self, id: impl Into<Arc<str>>, path: &Path, key: u64) {
        self.insert_hashed(id, path_hash(path), key);
    }

    /// `insert` with the path's `path_hash` already taken (a slimmed meta holds only that).
    pub fn insert_hashed(&mut self, id: impl Into<Arc<str>>, path: u64, key: u64) {
        let id = id.into();
        let slot = Slot { path, key };
        match self.position(&id) {
            Some(i) => self.sorted[i].1 = slot,
            None => {
                self.added.insert(id, slot);
                if self.added.len() > MERGE_FROM.max(self.sorted.len() / 8) {
                    self.merge();
                }
            }
        }
    }

    /// Sort the ids inserted since into the rest.
    fn merge(&mut self) {
        let mut all = std::mem::take(&mut self.sorted);
        all.reserve_exact(self.added.len());
        all.extend(std::mem::take(&mut self.added));
        *self = Known::from_unsorted(all);
    }

    pub fn get(&self, id: &str) -> Option<&Slot> {
        match self.position(id) {
            Some(i) => Some(&self.sorted[i].1),
            None => self.added.get(id),
        }
    }

    pub fn get_mut(&mut self, id: &str) -> Option<&mut Slot> {
        match self.position(id) {
            Some(i) => Some(&mut self.sorted[i].1),
            None => self.added.get_mut(id),
        }
    }

    pub fn contains_key(&self, id: &str) -> bool {
        self.get(id).is_some()
    }

    /// Whether `id` is known at another path than `path`.
    pub fn moved(&self, id: &str, path: &Path) -> bool {
        self.get(id).is_some_and(|s| s.path != path_hash(path))
    }

    pub fn remove(&mut self, id: &str) {
        if self.added.remove(id).is_none()
            && let Some(i) = self.position(id)
        {
            self.sorted.remove(i);
            self.hashes.remove(i);
        }
    }

    /// Remove every id `gone` says is gone, and return them: one pass over the table,
    /// where removing them one by one moved the rest of it for each.
    pub fn remove_if(&mut self, mut gone: impl FnMut(&str) -> bool) -> Vec<Arc<str>> {
        let mut out: Vec<Arc<str>> = (self.added.extract_if(|id, _| gone(id)))
            .map(|(id, _)| id)
            .collect();
        let at: Vec<bool> = self.sorted.iter().map(|e| gone(&e.0)).collect();
        if at.contains(&true) {
            let mut i = at.iter();
            self.hashes.retain(|_| !i.next().copied().unwrap_or(false));
            let mut i = at.iter();
            out.extend(
                (self
                    .sorted
                    .extract_if(.., |_| i.next().copied().unwrap_or(false)))
                .map(|(id, _)| id),
            );
        }
        out
    }

    pub fn keys(&self) -> impl Iterator<Item = &str> {
        (self.sorted.iter().map(|e| &*e.0)).chain(self.added.keys().map(|k| &**k))
    }

    pub fn len(&self) -> usize {
        self.sorted.len() + self.added.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The table's own bytes besides the ids' text (tests bound it).
    pub fn table_bytes(&self) -> usize {
        let entry = std::mem::size_of::<(Arc<str>, Slot)>();
        self.sorted.capacity() * entry
            + self.hashes.capacity() * 4
            + self.added.capacity() * (entry + 1)
    }
}

#[cfg(test)]
#[path = "known_tests.rs"]
mod tests;
