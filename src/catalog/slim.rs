//! What the warm start keeps of each cached meta until its stat pass: the id (which the
//! pass moves into the watcher's `Known`), the path's hash (a pass only compares paths),
//! the key, the expiry, and the cwd shared between the sessions that have it (a store's
//! sessions run in a few project directories). Issue 10: the metas were full copies of each
//! row's id, path and cwd, about 30 MB at 100k sessions, alive through the pass, which is
//! where a warm start's memory peaked; these are about a third of that.

use super::Meta;
use super::known::path_hash;
use crate::model::Shared;
use std::path::Path;

/// One cached session's meta, slimmed for the stat pass (`pass::check`).
#[derive(Debug)]
pub struct Slim {
    /// The row's own id where the entry has a row (shared, not copied: the pass moves it
    /// into the watcher's `Known`, which holds it as long as spool runs).
    pub id: std::sync::Arc<str>,
    /// `known::path_hash` of the session's path.
    pub path: u64,
    pub key: u64,
    pub cwd: Option<Shared>,
    pub cwd_dir: bool,
    pub expires: Option<i64>,
}

/// What a stat pass asks of a cached meta: a full `Meta` (the CLI's listing) or a `Slim`.
pub trait Held {
    fn id(&self) -> &str;
    /// Whether the session was cached at `path`.
    fn at(&self, path: &Path) -> bool;
    fn key(&self) -> u64;
    fn cwd(&self) -> Option<&str>;
    fn cwd_dir(&self) -> bool;
    fn expires(&self) -> Option<i64>;
}

impl Held for Meta {
    fn id(&self) -> &str {
        &self.id
    }
    fn at(&self, path: &Path) -> bool {
        self.path == path
    }
    fn key(&self) -> u64 {
        self.key
    }
    fn cwd(&self) -> Option<&str> {
        self.cwd.as_deref()
    }
    fn cwd_dir(&self) -> bool {
        self.cwd_dir
    }
    fn expires(&self) -> Option<i64> {
        self.expires
    }
}

impl Held for Slim {
    fn id(&self) -> &str {
        &self.id
    }
    fn at(&self, path: &Path) -> bool {
        self.path == path_hash(path)
    }
    fn key(&self) -> u64 {
        self.key
    }
    fn cwd(&self) -> Option<&str> {
        self.cwd.as_deref()
    }
    fn cwd_dir(&self) -> bool {
        self.cwd_dir
    }
    fn expires(&self) -> Option<i64> {
        self.expires
    }
}

impl Slim {
    /// `m` slimmed: its path string is freed (its cwd is already `Shared` with the row).
    pub fn of(m: Meta) -> Slim {
        let cwd = m.cwd;
        Slim {
            id: m.id.into(),
            path: path_hash(&m.path),
            key: m.key,
            cwd,
            cwd_dir: m.cwd_dir,
            expires: m.expires,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn meta(id: &str, cwd: Option<&str>) -> Meta {
        Meta {
            id: id.into(),
            path: PathBuf::from(format!("/s/{id}.jsonl")),
            key: 9,
            cwd: cwd.map(Into::into),
            cwd_dir: true,
            expires: Some(5),
        }
    }

    #[test]
    fn a_slim_meta_answers_as_its_meta_and_shares_its_cwd() {
        let (a, b) = (meta("a", Some("/p")), meta("b", Some("/p")));
        let (sa, sb) = (Slim::of(a.clone()), Slim::of(b));
        assert_eq!(Held::id(&sa), a.id());
        assert!(sa.at(&a.path) && a.at(&a.path));
        assert!(!sa.at(Path::new("/s/b.jsonl")) && !a.at(Path::new("/s/b.jsonl")));
        assert_eq!(
            (sa.key(), sa.cwd(), sa.cwd_dir(), sa.expires()),
            (9, Some("/p"), true, Some(5))
        );
        let (ca, cb) = (sa.cwd.as_ref().unwrap(), sb.cwd.as_ref().unwrap());
        assert!(std::ptr::eq(ca.as_str(), cb.as_str()), "one cwd, held once");
        let none = Slim::of(meta("c", None));
        assert_eq!(none.cwd(), None);
    }

    /// The id's box, the path's hash, the key, the shared cwd, the expiry: 72 bytes, where a
    /// `Meta` is 104 plus its three strings.
    #[test]
    fn a_slim_meta_is_small() {
        assert!(
            std::mem::size_of::<Slim>() <= 72,
            "{}",
            std::mem::size_of::<Slim>()
        );
    }
}
