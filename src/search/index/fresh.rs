//! How the index knows what changed, cheaply. Each session has two prints: the full
//! fingerprint (`docs::fingerprint`: its files, its state file, the collection's archive
//! file; several `stat`s) and a quick one (the path and mtime of its directory entry, which
//! discovery reads anyway). Every store writes a session by replacing or appending to that
//! entry (Loop publishes `meta.json` into the session's directory at each commit), and spool's
//! own state (sidecars, Loop's `archive.json`) by replacing files in a few directories whose
//! mtimes form the store's side stamp. So `spool search` compares quick prints only, and
//! falls back to full fingerprints for a store whose side stamp moved since the last check.

use std::collections::{HashMap, HashSet};
use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::Path;
use std::time::SystemTime;

use super::write::Changed;
use super::{Freshness, THREADS, TextIndex, fingerprint, session_number};
use crate::error::Result;
use crate::model::SessionSummary;
use crate::store::{Candidate, Store, Stores, gather_parallel};

/// Each store's side stamp at the last check, one `stamp\tsessions dir` per line.
const STAMPS_FILE: &str = "stamps.tsv";

/// A session's two prints.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Print {
    pub full: u64,
    pub quick: u64,
}

/// The quick print: the session's path and its entry's mtime (`lstat`, as discovery reads it).
pub fn quick(path: &Path, mtime: Option<SystemTime>) -> u64 {
    let mtime = mtime.or_else(|| {
        std::fs::symlink_metadata(path)
            .ok()
            .and_then(|m| m.modified().ok())
    });
    let mut h = DefaultHasher::new();
    path.hash(&mut h);
    mtime.hash(&mut h);
    h.finish()
}

/// The mtimes of the directories a store keeps spool's state in (where `state_file` lives)
/// and of every collection's `archive.json`: any write there moves it.
fn side_stamp(store: &dyn Store, found: &[Candidate]) -> u64 {
    let mut h = DefaultHasher::new();
    let mtime = |p: &Path| {
        std::fs::metadata(p)
            .ok()
            .map(|m| (m.len(), m.modified().ok()))
    };
    let state = store.state_file("x");
    if let Some(state_dir) = state.parent() {
        mtime(state_dir).hash(&mut h);
    }
    let mut parents: Vec<&Path> = found.iter().filter_map(|c| c.path.parent()).collect();
    parents.sort();
    parents.dedup();
    for p in parents {
        mtime(&p.join("archive.json")).hash(&mut h);
    }
    h.finish()
}

fn read_stamps(dir: &Path) -> HashMap<String, u64> {
    let text = std::fs::read_to_string(dir.join(STAMPS_FILE)).unwrap_or_default();
    text.lines()
        .filter_map(|l| {
            let (stamp, store) = l.split_once('\t')?;
            Some((store.to_string(), u64::from_str_radix(stamp, 16).ok()?))
        })
        .collect()
}

impl TextIndex {
    /// The rows whose fingerprint differs from the indexed one; every row's number goes
    /// into `seen`.
    pub(super) fn changed(
        &self,
        rows: &[SessionSummary],
        stores: &Stores,
        seen: &mut HashSet<u64>,
    ) -> Vec<Changed> {
        let mut changed = Vec::new();
        for r in rows.iter().filter(|r| r.error.is_none()) {
            let sid = session_number(r.store, &r.id);
            seen.insert(sid);
            // Quick before full, so a write in between changes at least the quick print.
            let quick = quick(&r.path, None);
            let full = fingerprint(&r.path, &stores.store_for(r).state_file(&r.id));
            if self.sessions.get(&sid).is_none_or(|k| k.fp.full != full) {
                changed.push((sid, Print { full, quick }, r.clone()));
            }
        }
        changed
    }

    /// The same from the disk (`spool search`): discover every store's sessions and
    /// summarize only those that changed. A store whose side stamp is as recorded costs its
    /// discovery (a directory read and one `lstat` per session); otherwise each session's
    /// full fingerprint is taken, as in the browser.
    pub fn update_from_disk(
        &mut self,
        stores: &Stores,
        progress: &(dyn Fn(usize, usize) + Sync),
    ) -> Result<Freshness> {
        let then = read_stamps(&self.dir);
        let mut now = HashMap::new();
        let mut seen = HashSet::new();
        let mut todo = Vec::new();
        for store in &stores.stores {
            let found = store.discover();
            let name = store
                .sessions_dir()
                .to_string_lossy()
                .replace(['\t', '\n'], " ");
            let stamp = side_stamp(store.as_ref(), &found);
            let trusted = then.get(&name) == Some(&stamp);
            now.insert(name, stamp);
            for c in found {
                let sid = session_number(store.kind(), &c.id);
                let known = self.sessions.get(&sid).map(|k| k.fp);
                let quick = quick(&c.path, c.mtime);
                if trusted && known.is_some_and(|k| k.quick == quick) {
                    seen.insert(sid);
                    continue;
                }
                let full = fingerprint(&c.path, &store.state_file(&c.id));
                match known {
                    Some(k) if k.full == full => {
                        seen.insert(sid);
                        if k.quick != quick {
                            // Indexed by the browser, or touched without a change: record
                            // the quick print so the next check is quick.
                            self.requick.push((sid, quick));
                        }
                    }
                    _ => todo.push((sid, Print { full, quick }, store.as_ref(), c)),
                }
            }
        }
        // The listing pass of what changed, on every thread (a first build reads them all).
        let chunk = todo.len().div_ceil(THREADS).max(1);
        let changed: Vec<Changed> = gather_parallel(todo.chunks(chunk), |part| {
            part.iter()
                .filter_map(|(sid, fp, store, c)| {
                    let s = store.summarize(c).filter(|s| s.error.is_none())?;
                    Some((*sid, *fp, s))
                })
                .collect()
        });
        seen.extend(changed.iter().map(|c| c.0));
        let r = self.apply(changed, seen, stores, progress)?;
        if r != Freshness::ReadOnly && now != then {
            // Only a hint: a stamp taken before the scan began can only make the next check
            // fuller, never miss a change.
            let text: String = now
                .iter()
                .map(|(name, stamp)| format!("{stamp:016x}\t{name}\n"))
                .collect();
            let path = self.dir.join(STAMPS_FILE);
            let _ = crate::store::atomic::replace(&path, text.as_bytes(), Default::default());
        }
        Ok(r)
    }
}
