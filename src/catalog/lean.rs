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
        let id = match e.id {
            Some(id) => id,
            None => r.ok_or(MISSING)?.id.to_string(),
        };
        // Hashed where it lies: the row's path, or the bytes the file gave for the meta's.
        let path = match &e.path {
            Some(p) => path_hash(Path::new(OsStr::from_bytes(p))),
            None => path_hash(&r.ok_or(MISSING)?.path),
        };
        let cwd = match e.cwd {
            Some(c) => c,
            None => r.ok_or(MISSING)?.cwd.clone(),
        };
        self.metas.push(Slim {
            id: id.into_boxed_str(),
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
            self.metas.push(Slim::of(Meta::clone(&e.meta)));
            self.rows.push(e.row.clone());
        }
    }
}
