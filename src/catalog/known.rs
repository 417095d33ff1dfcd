//! The watcher's table of every current session of a store: per id, a hash of its path and
//! its catalog key. The path is only ever compared (has the session moved?), so its hash
//! stands in for it; the id is kept (as a boxed string, no spare capacity) because a session
//! that disappears is reported by its id. Issue 10: the table held a copy of every id and
//! path (`String`, `PathBuf`): about 19 MB at 100k sessions.

use std::hash::{Hash, Hasher};
use std::path::Path;

use rustc_hash::FxHashMap;

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

/// Every current session's path hash and key, by id (FxHash: one insert per session per
/// pass, where SipHash showed in the profile; ids come from the store's own file names).
#[derive(Debug, Default)]
pub struct Known(FxHashMap<Box<str>, Slot>);

impl Known {
    pub fn with_capacity(n: usize) -> Known {
        Known(FxHashMap::with_capacity_and_hasher(n, Default::default()))
    }

    /// Record `id` at `path` with `key`; an id already there is updated in place.
    pub fn insert(&mut self, id: impl Into<Box<str>>, path: &Path, key: u64) {
        let slot = Slot {
            path: path_hash(path),
            key,
        };
        self.0.insert(id.into(), slot);
    }

    /// `insert` with the path's `path_hash` already taken (a slimmed meta holds only that).
    pub fn insert_hashed(&mut self, id: impl Into<Box<str>>, path: u64, key: u64) {
        self.0.insert(id.into(), Slot { path, key });
    }

    pub fn get(&self, id: &str) -> Option<&Slot> {
        self.0.get(id)
    }

    pub fn get_mut(&mut self, id: &str) -> Option<&mut Slot> {
        self.0.get_mut(id)
    }

    pub fn contains_key(&self, id: &str) -> bool {
        self.0.contains_key(id)
    }

    /// Whether `id` is known at another path than `path`.
    pub fn moved(&self, id: &str, path: &Path) -> bool {
        self.0.get(id).is_some_and(|s| s.path != path_hash(path))
    }

    pub fn remove(&mut self, id: &str) {
        self.0.remove(id);
    }

    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.0.keys().map(|k| &**k)
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The table's own bytes besides the ids' text (tests bound it).
    pub fn table_bytes(&self) -> usize {
        self.0.capacity() * (std::mem::size_of::<(Box<str>, Slot)>() + 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_is_found_by_id_and_a_move_is_seen() {
        let mut k = Known::with_capacity(2);
        k.insert("a", Path::new("/s/a.jsonl"), 7);
        assert!(k.contains_key("a") && !k.contains_key("b"));
        assert_eq!(k.get("a").map(|s| s.key), Some(7));
        assert!(!k.moved("a", Path::new("/s/a.jsonl")));
        assert!(k.moved("a", Path::new("/t/a.jsonl")));
        assert!(
            !k.moved("b", Path::new("/s/a.jsonl")),
            "unknown is new, not moved"
        );
        k.insert(String::from("a"), Path::new("/t/a.jsonl"), 8);
        assert_eq!(k.len(), 1);
        assert!(!k.moved("a", Path::new("/t/a.jsonl")));
        k.remove("a");
        assert!(k.is_empty());
    }

    /// Paths that compare equal hash equal, whether written plainly or not, and the plain
    /// form is hashed as it is written.
    #[test]
    fn equal_paths_hash_equal() {
        let groups: [&[&str]; 6] = [
            &["/s/a.jsonl", "/s//a.jsonl", "/s/./a.jsonl", "//s/a.jsonl"],
            &["/s/col/id", "/s/col/id/", "/s/col/id/.", "/s/col//id//"],
            &["/", "//", "/."],
            &["rel/x", "rel//x", "rel/./x", "rel/x/"],
            &["/s/a.json", "/s/a.json/"],
            &["/s/a..json", "/s/a..json/"],
        ];
        let hashes: Vec<Vec<u64>> = (groups.iter())
            .map(|g| g.iter().map(|p| path_hash(Path::new(p))).collect())
            .collect();
        for (g, h) in groups.iter().zip(&hashes) {
            for (p, x) in g.iter().zip(h) {
                assert_eq!(*x, h[0], "{p} and {}", g[0]);
                assert_eq!(Path::new(p), Path::new(g[0]));
            }
        }
        let firsts: std::collections::HashSet<u64> = hashes.iter().map(|h| h[0]).collect();
        assert_eq!(
            firsts.len(),
            groups.len(),
            "different paths, different hashes"
        );
        assert!(is_plain(b"/s/col/id") && !is_plain(b"/s/col/id/") && !is_plain(b"rel"));
        assert_eq!(plain_form(Path::new("/s//col/./id/")), b"/s/col/id");
    }

    /// Two words of slot and one of key pointer beside each id: the path is not kept.
    #[test]
    fn an_entry_is_a_boxed_id_and_two_hashes() {
        assert_eq!(std::mem::size_of::<(Box<str>, Slot)>(), 32);
    }
}
