//! The warm start's form of a catalog section: each entry's row (shared with the list) and
//! its meta already slimmed, decoded straight from the file. Issue 10: decoded as whole
//! entries first, every meta held a copy of its row's path and the section a vector of
//! 100-byte entries, all alive beside the stores' surveys until the metas were slimmed:
//! about 18 MB at 100k sessions, at the warm start's peak.

use std::collections::HashSet;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::Arc;

use super::known::path_hash;
use super::slim::Slim;
use super::wire::{Gather, In, MISSING};
use super::{Entry, Meta};
use crate::model::SessionSummary;

/// A section's entries as rows and slim metas, at the same index (a meta whose candidate
/// the store skips has no row).
#[derive(Debug, Default)]
pub struct Lean {
    pub rows: Vec<Option<Arc<SessionSummary>>>,
    pub metas: Vec<Slim>,
}

impl Gather for Lean {
    fn reserve(&mut self, n: usize) {
        self.rows.reserve_exact(n);
        self.metas.reserve_exact(n);
    }

    fn push(&mut self, e: In) -> Result<(), &'static str> {
        let r = e.row.as_ref();
        let id: Arc<str> = match e.id {
            Some(id) => id.into(),
            None => r.ok_or(MISSING)?.id.clone(),
        };
        // Hashed where it lies: the row's path, or the bytes the file gave for the meta's.
        let path = match &e.path {
            Some(p) => path_hash(Path::new(OsStr::from_bytes(p))),
            None => r.ok_or(MISSING)?.with_path(path_hash),
        };
        let cwd = match e.cwd {
            Some(c) => c,
            None => r.ok_or(MISSING)?.cwd.clone(),
        };
        self.metas.push(Slim {
            id,
            path,
            key: e.key,
            cwd,
            cwd_dir: e.cwd_dir,
            expires: e.expires,
        });
        self.rows.push(e.row.map(Arc::new));
        Ok(())
    }

    fn drop_ids(&mut self, ids: &HashSet<&str>) {
        let keep: Vec<bool> = (self.metas.iter()).map(|m| !ids.contains(&*m.id)).collect();
        let mut k = keep.iter();
        self.metas.retain(|_| *k.next().unwrap_or(&true));
        let mut k = keep.iter();
        self.rows.retain(|_| *k.next().unwrap_or(&true));
    }

    fn add(&mut self, fresh: &[Entry]) {
        for e in fresh {
            let mut m = Slim::of(Meta::clone(&e.meta));
            // Shared with the row, as `push` does.
            if let Some(r) = e.row.as_ref().filter(|r| r.id == m.id) {
                m.id = r.id.clone();
            }
            self.metas.push(m);
            self.rows.push(e.row.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::{Catalog, Section, load, load_as, log, save};
    use crate::model::StoreKind;

    fn entry(id: &str, key: u64) -> Entry {
        let mut row = SessionSummary::new(StoreKind::Loom, id, format!("/s/{id}.jsonl"));
        row.set_title(format!("title of {id}"));
        row.cwd = Some("/home/u/acme".into());
        Entry {
            meta: Meta {
                id: row.id.to_string(),
                path: row.path(),
                key,
                cwd: row.cwd.clone(),
                cwd_dir: true,
                expires: Some(7),
            },
            row: Some(Arc::new(row)),
        }
    }

    /// What a whole entry's meta and a lean one have to agree on.
    type Seen = (String, u64, u64, Option<String>, bool, Option<i64>);

    fn of_meta(m: &Meta) -> Seen {
        let cwd = m.cwd.as_deref().map(str::to_string);
        (
            m.id.clone(),
            path_hash(&m.path),
            m.key,
            cwd,
            m.cwd_dir,
            m.expires,
        )
    }

    fn of_slim(m: &Slim) -> Seen {
        let cwd = m.cwd.as_deref().map(str::to_string);
        (m.id.to_string(), m.path, m.key, cwd, m.cwd_dir, m.expires)
    }

    /// Decoded lean, a catalog (and its patch log) gives the rows and metas that decoding it
    /// whole and slimming gives: a common entry, one whose meta differs from its row, one
    /// without a row, and a log that re-reads one and removes another.
    #[test]
    fn a_lean_catalog_holds_what_a_whole_one_slimmed_holds() {
        let d = tempfile::tempdir().unwrap();
        let cache = d.path().join("spool");
        let mut odd = entry("b", 2);
        odd.meta.id = "other".into();
        odd.meta.path = "/s/other.jsonl".into();
        odd.meta.cwd = None;
        let mut skipped = entry("c", 3);
        skipped.meta.path = "/s/c.txt".into();
        skipped.row = None;
        let entries = vec![entry("a", 1), odd, skipped, entry("d", 4), entry("e", 5)];
        let cat = Catalog {
            sections: vec![Section {
                kind: StoreKind::Loom,
                dir: "/s".into(),
                entries,
            }],
        };
        save(&cache, &cat).unwrap();
        let fresh = [entry("a", 10)];
        log::append(
            &cache,
            StoreKind::Loom,
            "/s".as_ref(),
            &fresh,
            &["d".into()],
        );
        let whole = load(&cache).unwrap();
        let lean = load_as::<Lean>(&cache).unwrap();
        let (w, l) = (&whole.sections[0], &lean.sections[0]);
        let ids: Vec<_> = w.entries.iter().map(|e| e.meta.id.as_str()).collect();
        assert_eq!(ids, ["other", "c", "e", "a"], "the log was replayed");
        let metas: Vec<_> = w.entries.iter().map(|e| of_meta(&e.meta)).collect();
        assert_eq!(
            l.entries.metas.iter().map(of_slim).collect::<Vec<_>>(),
            metas
        );
        let rows: Vec<_> = w.entries.iter().map(|e| e.row.as_deref()).collect();
        let lean_rows: Vec<_> = l.entries.rows.iter().map(Option::as_deref).collect();
        assert_eq!(lean_rows, rows);
        assert_eq!((w.kind, &w.dir), (l.kind, &l.dir));
        // A meta whose id is its row's holds the row's allocation, not a copy (the watcher's
        // table keeps it as long as spool runs); one that differs has its own.
        let (m, r) = (&l.entries.metas, &l.entries.rows);
        let shared = |i: usize| Arc::ptr_eq(&m[i].id, &r[i].as_ref().unwrap().id);
        assert!(shared(2), "decoded from the file");
        assert!(shared(3), "replayed from the log");
        assert!(!shared(0), "its own id");
    }
}
