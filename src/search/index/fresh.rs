//! How the index knows what changed, cheaply. Each session has two prints: the full
//! fingerprint (`docs::fingerprint`: its files, its state file, the collection's archive
//! file; several `stat`s) and a quick one (the path and mtime of its directory entry, which
//! discovery reads anyway). Every store writes a session by replacing or appending to that
//! entry (Loop publishes `meta.json` into the session's directory at each commit), and spool's
//! own state (sidecars, Loop's `archive.json`) by replacing files in a few directories.
//!
//! `spool search` checks in one of two ways. A full check discovers every store and compares
//! quick prints (full fingerprints for a store whose state directories moved), and records
//! each store's stamp (`stamps`). A warm check, while every stamp is as recorded and the last
//! full check is less than `FULL_EVERY` old, stats only those directories and each store's
//! hot sessions. The sessions a search returns are checked in full before they are shown
//! (`stale`), so a result is never older than its files.
use std::borrow::Borrow;
use std::collections::HashSet;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use super::stamps::{self, Stamps, StoreStamp};
use super::write::{Changed, Row};
use super::{Freshness, Prints, THREADS, TextIndex, session_number};
use crate::error::Result;
use crate::model::SessionSummary;
use crate::store::{Candidate, Store, Stores, gather_parallel};

/// A warm check is trusted this long after a full one: an idle session written to again by
/// an agent that was already running (loom's `/resume`) moves no directory, and is found by
/// the next full check at the latest (or at once if a search returns it).
const FULL_EVERY: Duration = Duration::from_secs(300);

/// A session's two prints.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Print {
    pub full: u64,
    pub quick: u64,
}

/// The quick print: the session's path and its entry's mtime (`lstat`, as discovery reads it).
pub fn quick(path: &Path, mtime: Option<SystemTime>) -> u64 {
    quick_at(path, mtime).0
}

/// The quick print and the mtime it was taken from.
fn quick_at(path: &Path, mtime: Option<SystemTime>) -> (u64, Option<SystemTime>) {
    let mtime = mtime.or_else(|| {
        std::fs::symlink_metadata(path)
            .ok()
            .and_then(|m| m.modified().ok())
    });
    let mut h = DefaultHasher::new();
    path.hash(&mut h);
    mtime.hash(&mut h);
    (h.finish(), mtime)
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

impl TextIndex {
    /// The rows whose fingerprint differs from the indexed one; every row's number goes
    /// into `seen`.
    pub(super) fn changed<'a, R: Borrow<SessionSummary>>(
        &self,
        rows: &'a [R],
        stores: &Stores,
        seen: &mut HashSet<u64>,
    ) -> Vec<Changed<'a>> {
        let mut changed = Vec::new();
        let mut print = Prints::default();
        let known = &self.sessions.get().map;
        for r in
            (rows.iter().map(<R as Borrow<SessionSummary>>::borrow)).filter(|r| r.error().is_none())
        {
            let sid = session_number(r.store, &r.id);
            seen.insert(sid);
            // Quick before full, so a write in between changes at least the quick print.
            // The path once: a row rebuilds it when asked (`SessionSummary::path`).
            let path = r.path();
            let quick = quick(&path, None);
            let full = print.of(&path, &stores.store_for(r).state_file(&r.id));
            if known.get(&sid).is_none_or(|k| k.fp.full != full) {
                changed.push((sid, Print { full, quick }, Row::Borrowed(r)));
            }
        }
        changed
    }

    /// The same from the disk (`spool search`): a warm check when the stamps allow it,
    /// else a full one (see the module's doc).
    pub fn update_from_disk(
        &mut self,
        stores: &Stores,
        progress: &(dyn Fn(usize, usize) + Sync),
    ) -> Result<Freshness> {
        let then = stamps::read(&self.dir).unwrap_or_default();
        let now = SystemTime::now();
        let recent = stamps::secs(now).saturating_sub(then.full_at) < FULL_EVERY.as_secs();
        let names: Vec<String> = stores
            .stores
            .iter()
            .map(|s| stamps::name(s.as_ref()))
            .collect();
        let same_stores = then.stores.iter().map(|s| &s.name).eq(names.iter());
        if recent
            && same_stores
            && then
                .stores
                .iter()
                .all(|s| s.stamp != 0 && stamps::stamp(&s.paths, None) == Some(s.stamp))
        {
            return self.update_hot(stores, &then, progress);
        }
        self.update_full(stores, &then, now, progress)
    }

    /// Every store's stamp is as recorded: only the hot sessions can have changed.
    fn update_hot(
        &mut self,
        stores: &Stores,
        then: &Stamps,
        progress: &(dyn Fn(usize, usize) + Sync),
    ) -> Result<Freshness> {
        let mut todo = Vec::new();
        let mut print = Prints::default();
        for (store, st) in stores.stores.iter().zip(&then.stores) {
            for (sid, id, path) in &st.hot {
                let (quick, mtime) = quick_at(path, None);
                let known = self.sessions.get().map.get(sid).map(|k| k.fp);
                if known.is_some_and(|k| k.quick == quick) {
                    continue;
                }
                let full = print.of(path, &store.state_file(id));
                match known {
                    Some(k) if k.full == full => self.requick.push((*sid, quick)),
                    _ => {
                        let c = Candidate {
                            id: id.clone(),
                            path: path.clone(),
                            mtime,
                            stat: None,
                        };
                        todo.push((*sid, Print { full, quick }, store.as_ref(), c));
                    }
                }
            }
        }
        let seen: HashSet<u64> = self.sessions.get().map.keys().copied().collect();
        self.summarize_and_apply(todo, seen, stores, progress)
    }

    /// Discover every store's sessions and summarize only those that changed. A store whose
    /// side stamp is as recorded costs its discovery (a directory read and one `lstat` per
    /// session); otherwise each session's full fingerprint is taken, as in the browser.
    fn update_full(
        &mut self,
        stores: &Stores,
        then: &Stamps,
        began: SystemTime,
        progress: &(dyn Fn(usize, usize) + Sync),
    ) -> Result<Freshness> {
        let mut next = Stamps {
            full_at: stamps::secs(began),
            stores: Vec::new(),
        };
        let mut seen = HashSet::new();
        let mut todo = Vec::new();
        let mut print = Prints::default();
        for store in &stores.stores {
            let found = store.discover();
            let name = stamps::name(store.as_ref());
            let side = side_stamp(store.as_ref(), &found);
            let trusted = then.stores.iter().any(|s| s.name == name && s.side == side);
            let paths = stamps::paths(store.as_ref(), &found);
            let mut hot: Vec<(Option<SystemTime>, u64, &Candidate)> = Vec::new();
            for c in &found {
                let sid = session_number(store.kind(), &c.id);
                let known = self.sessions.get().map.get(&sid).map(|k| k.fp);
                let (quick, mtime) = quick_at(&c.path, c.mtime);
                hot.push((mtime, sid, c));
                if trusted && known.is_some_and(|k| k.quick == quick) {
                    seen.insert(sid);
                    continue;
                }
                let full = print.of(&c.path, &store.state_file(&c.id));
                match known {
                    Some(k) if k.full == full => {
                        seen.insert(sid);
                        if k.quick != quick {
                            // Indexed by the browser, or touched without a change: record
                            // the quick print so the next check is quick.
                            self.requick.push((sid, quick));
                        }
                    }
                    _ => todo.push((sid, Print { full, quick }, store.as_ref(), c.clone())),
                }
            }
            hot.sort_by_key(|h| std::cmp::Reverse(h.0));
            hot.truncate(stamps::HOT);
            let hot: Vec<(u64, String, PathBuf)> = hot
                .into_iter()
                .map(|(_, sid, c)| (sid, c.id.clone(), c.path.clone()))
                .collect();
            // A hot session a line cannot hold, or a directory that moved while this check
            // ran: the next check of this store is a full one.
            let lines_hold = hot.iter().all(|(_, id, p)| {
                !id.contains(['\t', '\n', '\r'])
                    && p.to_str().is_some_and(|p| !p.contains(['\t', '\n', '\r']))
            });
            let stamp = stamps::stamp(&paths, Some(began))
                .filter(|_| lines_hold)
                .unwrap_or(0);
            next.stores.push(StoreStamp {
                name,
                stamp,
                side,
                paths,
                hot,
            });
        }
        let r = self.summarize_and_apply(todo, seen, stores, progress)?;
        if r != Freshness::ReadOnly && next != *then {
            stamps::write(&self.dir, &next);
        }
        Ok(r)
    }

    /// The listing pass of what changed, on every thread (a first build reads them all),
    /// then the index brought up to date.
    fn summarize_and_apply(
        &mut self,
        todo: Vec<(u64, Print, &dyn Store, Candidate)>,
        mut seen: HashSet<u64>,
        stores: &Stores,
        progress: &(dyn Fn(usize, usize) + Sync),
    ) -> Result<Freshness> {
        let chunk = todo.len().div_ceil(THREADS).max(1);
        let changed: Vec<Changed<'_>> = gather_parallel(todo.chunks(chunk), |part| {
            part.iter()
                .filter_map(|(sid, fp, store, c)| {
                    let s = store.summarize(c).filter(|s| s.error().is_none())?;
                    Some((*sid, *fp, Row::Owned(Box::new(s))))
                })
                .collect()
        });
        seen.extend(changed.iter().map(|c| c.0));
        self.apply(changed, seen, stores, progress)
    }

    /// Of `rows` (sessions a search returned, as the table holds them), those whose files
    /// changed since they were indexed, re-indexed now; true when there were any (the
    /// search is asked again).
    pub fn restale(&mut self, rows: &[SessionSummary], stores: &Stores) -> Result<bool> {
        let mut todo = Vec::new();
        let mut print = Prints::default();
        for r in rows {
            let sid = session_number(r.store, &r.id);
            let Some(k) = self.sessions.get().map.get(&sid).map(|k| k.fp) else {
                continue;
            };
            let store = stores.store_for(r);
            let path = r.path();
            let (quick, mtime) = quick_at(&path, None);
            let full = print.of(&path, &store.state_file(&r.id));
            if full != k.full {
                let c = Candidate {
                    id: r.id.to_string(),
                    path,
                    mtime,
                    stat: None,
                };
                todo.push((sid, Print { full, quick }, store, c));
            }
        }
        if todo.is_empty() {
            return Ok(false);
        }
        let seen: HashSet<u64> = self.sessions.get().map.keys().copied().collect();
        self.summarize_and_apply(todo, seen, stores, &|_, _| {})?;
        Ok(true)
    }
}
