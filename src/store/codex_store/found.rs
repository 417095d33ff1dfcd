//! The last discovery by id, kept for the life of the store (fast `locate`, the archived and
//! duplicate flags of a row). A sorted list keyed by the id's 128 bits rather than a hash map
//! of whole entries by their text: that held each id twice (key and entry) beside the path,
//! in a table a third empty, about 3.4 MB at 10k rollouts for the whole run.

use std::path::Path;
use std::time::SystemTime;

use super::discover::{Entry, Found};

/// What an `Entry` holds besides its id.
struct Slot {
    path: Box<Path>,
    mtime: Option<SystemTime>,
    found: Found,
    archived: bool,
    duplicate_in_archive: bool,
}

/// Discovered entries, sorted by key.
#[derive(Default)]
pub struct ById(Vec<(Key, Slot)>);

/// An id's 128 bits as two words: a `u128` is 16-aligned, and padded each slot to 64 bytes.
type Key = [u64; 2];

/// The id's hex digits as a number. Discovery lowercases ids and only takes uuids, so two
/// ids with one key are the same text.
fn key(id: &str) -> Option<Key> {
    if !super::is_uuid(id) {
        return None;
    }
    let mut k = 0u128;
    for c in id.bytes().filter(|c| *c != b'-') {
        k = (k << 4) | u128::from((c as char).to_digit(16)?);
    }
    Some([(k >> 64) as u64, k as u64])
}

impl ById {
    pub fn new(all: &[Entry]) -> ById {
        let mut list = Vec::with_capacity(all.len());
        for e in all {
            let Some(k) = key(&e.id) else { continue };
            list.push((
                k,
                Slot {
                    path: e.path.clone().into_boxed_path(),
                    mtime: e.mtime,
                    found: e.found,
                    archived: e.archived,
                    duplicate_in_archive: e.duplicate_in_archive,
                },
            ));
        }
        // Discovery gives one entry per id; should two keys meet, the first (newest) stays.
        list.sort_by_key(|(k, _)| *k);
        list.dedup_by_key(|(k, _)| *k);
        ById(list)
    }

    /// The entry of `id` (lowercase, as discovery makes it).
    pub fn get(&self, id: &str) -> Option<Entry> {
        let k = key(id)?;
        let s = &self.0[self.0.binary_search_by_key(&k, |(k, _)| *k).ok()?].1;
        Some(Entry {
            id: id.to_string(),
            path: s.path.to_path_buf(),
            mtime: s.mtime,
            stat: None,
            archived: s.archived,
            found: s.found,
            duplicate_in_archive: s.duplicate_in_archive,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn entry(id: &str, archived: bool) -> Entry {
        Entry {
            id: id.into(),
            path: PathBuf::from(format!(
                "/c/sessions/rollout-2026-03-14T10-15-02-{id}.jsonl"
            )),
            mtime: Some(SystemTime::UNIX_EPOCH),
            stat: None,
            archived,
            found: Found::Rollout,
            duplicate_in_archive: archived,
        }
    }

    /// What goes in comes out: every field, found by the id's text; other ids are not found.
    #[test]
    fn entries_come_back_whole_by_id() {
        let a = entry("019ceba0-ae55-7d10-9f2a-4b8e6c1d2a30", false);
        let b = entry("019ceba0-ae55-7d10-9f2a-4b8e6c1d2a31", true);
        let m = ById::new(&[a.clone(), b.clone()]);
        for e in [&a, &b] {
            let got = m.get(&e.id).unwrap();
            assert_eq!(
                (&got.id, &got.path, got.mtime, got.archived, got.found),
                (&e.id, &e.path, e.mtime, e.archived, e.found)
            );
            assert_eq!(got.duplicate_in_archive, e.duplicate_in_archive);
        }
        assert!(m.get("019ceba0-ae55-7d10-9f2a-4b8e6c1d2a32").is_none());
        assert!(m.get("not-a-uuid").is_none());
    }
}
