//! The last discovery by id, kept for the life of the store (fast `locate`, the archived and
//! duplicate flags of a row). A sorted list keyed by the id's 128 bits rather than a hash map
//! of whole entries by their text: that held each id twice (key and entry) beside the path,
//! in a table a third empty, about 3.4 MB at 10k rollouts for the whole run. The paths sit
//! end to end in one buffer: a boxed copy of each was a `malloc` per rollout on every
//! discovery (a warm `spool list` of 10k rollouts spent 3% of its CPU here).

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::time::SystemTime;

use super::discover::{Entry, Found};

/// What an `Entry` holds besides its id.
struct Slot {
    /// Where the path lies in `ById`'s buffer.
    path: (u32, u32),
    mtime: Option<SystemTime>,
    found: Found,
    archived: bool,
    duplicate_in_archive: bool,
}

/// Discovered entries, sorted by key, and their paths' bytes.
#[derive(Default)]
pub struct ById(Vec<(Key, Slot)>, Vec<u8>);

/// An id's 128 bits as two words: a `u128` is 16-aligned, and padded each slot to 64 bytes.
type Key = [u64; 2];

/// The id's hex digits as a number. Discovery lowercases ids and only takes uuids, so two
/// ids with one key are the same text.
pub(super) fn key(id: &str) -> Option<Key> {
    if !super::is_uuid(id) {
        return None;
    }
    let mut k = 0u128;
    for c in id.bytes().filter(|c| *c != b'-') {
        k = (k << 4) | u128::from((c as char).to_digit(16)?);
    }
    Some([(k >> 64) as u64, k as u64])
}

fn bytes(e: &Entry) -> &[u8] {
    e.path.as_os_str().as_bytes()
}

impl ById {
    pub fn new(all: &[Entry]) -> ById {
        let mut list = Vec::with_capacity(all.len());
        let mut paths = Vec::with_capacity(all.iter().map(|e| bytes(e).len()).sum());
        for e in all {
            let Some(k) = key(&e.id) else { continue };
            let (at, len) = (paths.len(), bytes(e).len());
            // Past 4 GiB of paths (never in practice) an entry is left out: `get` then
            // misses it, and the caller discovers again, as for an id not known yet.
            let (Ok(at), Ok(len)) = (u32::try_from(at), u32::try_from(len)) else {
                continue;
            };
            paths.extend_from_slice(bytes(e));
            list.push((
                k,
                Slot {
                    path: (at, len),
                    mtime: e.mtime,
                    found: e.found,
                    archived: e.archived,
                    duplicate_in_archive: e.duplicate_in_archive,
                },
            ));
        }
        // Discovery gives one entry per id; should two keys meet, the first (newest) stays.
        // The path's place in the buffer grows with the entry's, so it makes an unstable
        // sort keep their order (a stable sort took a scratch buffer of half the list).
        list.sort_unstable_by_key(|(k, s)| (*k, s.path.0));
        list.dedup_by_key(|(k, _)| *k);
        ById(list, paths)
    }

    /// The entry of `id` (lowercase, as discovery makes it).
    pub fn get(&self, id: &str) -> Option<Entry> {
        let k = key(id)?;
        let s = &self.0[self.0.binary_search_by_key(&k, |(k, _)| *k).ok()?].1;
        let (at, len) = (s.path.0 as usize, s.path.1 as usize);
        let path = Path::new(OsStr::from_bytes(self.1.get(at..at + len)?));
        Some(Entry {
            id: id.to_string(),
            path: path.to_path_buf(),
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

    /// Of entries with one id, the first given is the one kept, wherever the others fall
    /// among many other ids.
    #[test]
    fn of_repeated_ids_the_first_stays() {
        let id = |n: usize| format!("019ceba0-ae55-7d10-9f2a-{:012x}", n * 7919 % 1000);
        let mut all = Vec::new();
        for n in 0..3000 {
            let mut e = entry(&id(n), n % 2 == 0);
            e.path = PathBuf::from(format!("/c/{n}.jsonl"));
            all.push(e);
        }
        let m = ById::new(&all);
        for n in 0..1000 {
            let first = all.iter().find(|e| e.id == id(n)).unwrap();
            assert_eq!(m.get(&id(n)).unwrap().path, first.path, "{}", id(n));
        }
    }
}
