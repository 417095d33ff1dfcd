//! The last discovery by id, kept for the life of the store (fast `locate`, the archived and
//! duplicate flags of a row). A sorted list keyed by the id's 128 bits rather than a hash map
//! of whole entries by their text: that held each id twice (key and entry) beside the path,
//! in a table a third empty, about 3.4 MB at 10k rollouts for the whole run. The paths sit
//! end to end in one buffer: a boxed copy of each was a `malloc` per rollout on every
//! discovery (a warm `spool list` of 10k rollouts spent 3% of its CPU here).
//!
//! Each path is held as its directory, once per directory (a day's rollouts share one), and
//! its file name without the id the key already holds. Issue 10: at 100k rollouts the whole
//! paths were 12.7 MB (127 bytes each), alive as long as spool runs and at a warm start's
//! peak; a name cut so is ~34 bytes. No mtime is kept (only the sort of a whole discovery
//! reads one): 16 bytes a slot, 1.6 MB at 100k rollouts for the whole run.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

use rustc_hash::FxHashMap;

use super::discover::{Entry, Found};

/// What an `Entry` holds besides its id.
struct Slot {
    /// The path's directory (with its last `/`): an index into `ById::dirs`.
    dir: u32,
    /// Where the file name's bytes (without the id, see `cut`) lie in the buffer.
    name: u32,
    name_len: u16,
    /// Where in the name the id was cut out (`NO_CUT`: the name is whole).
    cut: u16,
    found: Found,
    archived: bool,
    duplicate_in_archive: bool,
}

/// `Slot::cut` of a name held whole (its id is not in it as discovery spells it).
const NO_CUT: u16 = u16::MAX;

/// Discovered entries, sorted by key, their directories' spans (each once) and the bytes of
/// both directories and names.
#[derive(Default)]
pub struct ById {
    list: Vec<(Key, Slot)>,
    dirs: Vec<(u32, u32)>,
    bytes: Vec<u8>,
}

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

/// The id of a key, as discovery spells it (lowercase, dashed).
fn id_of(k: Key) -> [u8; 36] {
    let v = (u128::from(k[0]) << 64) | u128::from(k[1]);
    let mut out = [b'-'; 36];
    let mut digit = 32;
    for i in (0..36).rev() {
        if matches!(i, 8 | 13 | 18 | 23) {
            continue;
        }
        digit -= 1;
        out[i] = b"0123456789abcdef"[((v >> (4 * (31 - digit))) & 0xf) as usize];
    }
    out
}

/// A path's directory (up to and with its last `/`) and its name.
fn split(path: &[u8]) -> (&[u8], &[u8]) {
    let at = path.iter().rposition(|&b| b == b'/').map_or(0, |i| i + 1);
    path.split_at(at)
}

/// One discovered entry as `ById` takes it: borrowed, so a packed walk lends its own bytes
/// (a `String` and a `PathBuf` made per rollout only to be copied here were ~200k allocator
/// calls a warm start at 100k rollouts).
pub struct Lent<'a> {
    pub id: &'a str,
    pub path: &'a [u8],
    pub found: Found,
    pub archived: bool,
    pub duplicate_in_archive: bool,
}

impl<'a> From<&'a Entry> for Lent<'a> {
    fn from(e: &'a Entry) -> Lent<'a> {
        Lent {
            id: &e.id,
            path: e.path.as_os_str().as_bytes(),
            found: e.found,
            archived: e.archived,
            duplicate_in_archive: e.duplicate_in_archive,
        }
    }
}

/// A `ById` being filled, entry by entry (`ById::new` or a packed walk's `push`es).
pub struct Filling {
    m: ById,
    /// The directories met so far; discovery lists a directory's rollouts together, so the
    /// last one is tried first.
    dirs: FxHashMap<Vec<u8>, u32>,
    last: Option<u32>,
}

impl Filling {
    pub fn with_capacity(n: usize) -> Filling {
        Filling {
            m: ById {
                list: Vec::with_capacity(n),
                ..ById::default()
            },
            dirs: FxHashMap::default(),
            last: None,
        }
    }

    pub fn push(&mut self, e: Lent<'_>) {
        let m = &mut self.m;
        let Some(k) = key(e.id) else { return };
        let (dir, name) = split(e.path);
        // Cut only where the name spells the id as the key gives it back (a rollout's name
        // holds it 28 bytes in, after `rollout-` and the time: looked at there first).
        let spelled = id_of(k);
        let cut = (name.get(28..64).filter(|w| *w == spelled).map(|_| 28))
            .or_else(|| memchr::memmem::find(name, &spelled))
            .and_then(|i| u16::try_from(i).ok())
            .filter(|&i| i != NO_CUT);
        let kept = name.len() - if cut.is_some() { 36 } else { 0 };
        // Past 4 GiB of bytes or a 64 KiB name (never in practice) an entry is left out:
        // `get` then misses it, and the caller discovers again, as for an id not known yet.
        let (Ok(name_len), Ok(_)) = (
            u16::try_from(kept),
            u32::try_from(m.bytes.len() + dir.len() + kept),
        ) else {
            return;
        };
        let d = match self.last.filter(|&d| m.span(d) == dir) {
            Some(d) => d,
            None => match self.dirs.get(dir) {
                Some(&d) => d,
                None => {
                    m.dirs.push((m.bytes.len() as u32, dir.len() as u32));
                    m.bytes.extend_from_slice(dir);
                    let d = (m.dirs.len() - 1) as u32;
                    self.dirs.insert(dir.to_vec(), d);
                    d
                }
            },
        };
        self.last = Some(d);
        let at = m.bytes.len() as u32;
        match cut {
            Some(c) => {
                let c = usize::from(c);
                m.bytes.extend_from_slice(&name[..c]);
                m.bytes.extend_from_slice(&name[c + 36..]);
            }
            None => m.bytes.extend_from_slice(name),
        }
        m.list.push((
            k,
            Slot {
                dir: d,
                name: at,
                name_len,
                cut: cut.unwrap_or(NO_CUT),
                found: e.found,
                archived: e.archived,
                duplicate_in_archive: e.duplicate_in_archive,
            },
        ));
    }

    pub fn done(self) -> ById {
        let mut m = self.m;
        // Discovery gives one entry per id; should two keys meet, the first (newest) stays.
        // A name's place in the buffer grows with the entry's, so it makes an unstable sort
        // keep their order (a stable sort took a scratch buffer of half the list).
        m.list.sort_unstable_by_key(|(k, s)| (*k, s.name));
        m.list.dedup_by_key(|(k, _)| *k);
        m.list.shrink_to_fit();
        m.bytes.shrink_to_fit();
        m
    }
}

impl ById {
    /// The entries of one discovery.
    pub fn new(all: &[Entry]) -> ById {
        let mut f = Filling::with_capacity(all.len());
        for e in all {
            f.push(Lent::from(e));
        }
        f.done()
    }

    /// The bytes of directory `d`.
    fn span(&self, d: u32) -> &[u8] {
        let (at, len) = self.dirs[d as usize];
        &self.bytes[at as usize..(at + len) as usize]
    }

    /// The entry of `id` (lowercase, as discovery makes it).
    pub fn get(&self, id: &str) -> Option<Entry> {
        let k = key(id)?;
        let (k, s) = &self.list[self.list.binary_search_by_key(&k, |(k, _)| *k).ok()?];
        let at = s.name as usize;
        let name = self.bytes.get(at..at + usize::from(s.name_len))?;
        let mut path = self.span(s.dir).to_vec();
        match s.cut {
            NO_CUT => path.extend_from_slice(name),
            c => {
                let c = usize::from(c);
                path.extend_from_slice(&name[..c]);
                path.extend_from_slice(&id_of(*k));
                path.extend_from_slice(&name[c..]);
            }
        }
        Some(Entry {
            id: id.to_string(),
            path: PathBuf::from(OsStr::from_bytes(&path)),
            // Not kept: only the sort of a whole discovery reads an entry's mtime.
            mtime: None,
            stat: None,
            archived: s.archived,
            found: s.found,
            duplicate_in_archive: s.duplicate_in_archive,
        })
    }

    /// The bytes held for paths (tests: names are held without their ids).
    #[cfg(test)]
    fn held(&self) -> usize {
        self.bytes.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;
    use std::time::SystemTime;

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

    /// A kept entry is its key and a 16-byte slot (an mtime made it 48 bytes: 1.6 MB more
    /// at 100k rollouts for the whole run).
    #[test]
    fn a_kept_entry_is_32_bytes() {
        assert_eq!(std::mem::size_of::<(Key, Slot)>(), 32);
    }

    /// What goes in comes out: every field but the mtime (not kept), found by the id's
    /// text; other ids are not found.
    #[test]
    fn entries_come_back_whole_by_id() {
        let a = entry("019ceba0-ae55-7d10-9f2a-4b8e6c1d2a30", false);
        let b = entry("019ceba0-ae55-7d10-9f2a-4b8e6c1d2a31", true);
        let m = ById::new(&[a.clone(), b.clone()]);
        for e in [&a, &b] {
            let got = m.get(&e.id).unwrap();
            assert_eq!(
                (&got.id, &got.path, got.archived, got.found),
                (&e.id, &e.path, e.archived, e.found)
            );
            assert_eq!(got.duplicate_in_archive, e.duplicate_in_archive);
        }
        assert!(m.get("019ceba0-ae55-7d10-9f2a-4b8e6c1d2a32").is_none());
        assert!(m.get("not-a-uuid").is_none());
    }

    /// Every path comes back byte for byte, however it spells its id: in the name as
    /// discovery does (cut out), in capitals (held whole), not at all, twice, in a directory
    /// of its own, without a directory; and a day's names hold neither the id nor the day.
    #[test]
    fn paths_come_back_exact_and_are_held_short() {
        let ids: Vec<String> = (0..40)
            .map(|i| format!("019ceba0-ae55-7d10-9f2a-4b8e6c1d{i:04x}"))
            .collect();
        let day = "/home/u/.codex/sessions/2026/03/14/";
        let mut all: Vec<Entry> = (ids.iter())
            .map(|id| {
                let mut e = entry(id, false);
                e.path = format!("{day}rollout-2026-03-14T10-15-02-{id}.jsonl").into();
                e
            })
            .collect();
        let odd = [
            format!("/a/rollout-X-{}.jsonl.zst", ids[0].to_uppercase()),
            "/a/b/not-named-by-its-id.jsonl".to_string(),
            format!("{}-{}", ids[2], ids[2]),
            format!("/{}/{}.jsonl", ids[3], ids[3]),
            format!("/tmp/c/{}", ids[4]),
        ];
        for (i, p) in odd.iter().enumerate() {
            all[i].path = PathBuf::from(p);
        }
        let m = ById::new(&all);
        for e in &all {
            assert_eq!(m.get(&e.id).unwrap().path, e.path, "{}", e.path.display());
        }
        let whole: usize = all.iter().map(|e| e.path.as_os_str().len()).sum();
        let names = 35 * "rollout-2026-03-14T10-15-02-.jsonl".len();
        let rest: usize = odd.iter().map(String::len).sum();
        assert!(
            m.held() <= names + rest + 2 * day.len(),
            "{} bytes held of {whole}",
            m.held()
        );
    }

    #[test]
    fn an_id_is_spelled_back_from_its_key() {
        let id = "019ceba0-ae55-7d10-9f2a-4b8e6c1d2a3f";
        assert_eq!(&id_of(key(id).unwrap()), id.as_bytes());
        let upper = id.to_uppercase();
        assert_eq!(&id_of(key(&upper).unwrap()), id.as_bytes());
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
