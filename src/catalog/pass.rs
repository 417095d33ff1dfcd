//! The stat pass: compare a store's sessions with the catalog's keys and re-read only the
//! sessions whose key, path, cwd or expiry no longer holds. Append-only logs are re-read
//! whole (one session's summary), not from the last offset: the `Store` trait summarizes a
//! session in one call, and a row read from an offset would need every store's partial state.

use std::collections::HashMap;
use std::path::Path;
use std::time::SystemTime;

use super::{Catalog, Entry, Meta, Section, stamp};
use crate::model::{SessionSummary, StoreKind};
use crate::store::{Candidate, Store, Stores, registry::list_order};

/// What one pass found.
#[derive(Debug, Default)]
pub struct Checked {
    /// Every current session's meta, by id (re-read or still valid).
    pub metas: HashMap<String, Meta>,
    /// Sessions read again: new, changed, or their cached row expired.
    pub fresh: Vec<Entry>,
    /// Ids the catalog held that discovery no longer finds.
    pub gone: Vec<String>,
}

/// Whether `cwd` is a directory, asked once per distinct cwd in a pass.
#[derive(Default)]
struct CwdMemo(HashMap<String, bool>);

impl CwdMemo {
    fn is_dir(&mut self, cwd: &str) -> bool {
        if let Some(v) = self.0.get(cwd) {
            return *v;
        }
        let v = Path::new(cwd).is_dir();
        self.0.insert(cwd.to_string(), v);
        v
    }
}

/// Read one session and the meta its row is valid for. The key is taken before the read, so
/// a write racing the read leaves a key that no longer matches: the next pass reads again.
pub fn read(store: &dyn Store, c: &Candidate) -> Entry {
    let key = stamp::key(&store.summary_inputs(c));
    let row = store.summarize(c);
    let cwd = row.as_ref().and_then(|r| r.cwd.clone());
    let cwd_dir = cwd.as_deref().is_some_and(|d| Path::new(d).is_dir());
    let expires = row
        .as_ref()
        .and_then(|r| earliest(store.summary_expires(r), ending_expires(r)))
        .map(stamp::unix_secs);
    Entry {
        meta: Meta {
            id: c.id.clone(),
            path: c.path.clone(),
            key,
            cwd,
            cwd_dir,
            expires,
        },
        row,
    }
}

/// When a row's `ended` may change with the clock alone: a `running` row (a lease or an open
/// handle can end without any file changing) is read again at the next pass, and a row
/// written within `LIVE_WINDOW` (running or live by recency) once that window has passed.
fn ending_expires(r: &crate::model::SessionSummary) -> Option<std::time::SystemTime> {
    use crate::model::ended::{Ended, LIVE_WINDOW};
    let now = std::time::SystemTime::now();
    if r.ended == Some(Ended::Running) {
        return Some(now);
    }
    let at: std::time::SystemTime = r.updated_at?.into();
    (at + LIVE_WINDOW > now).then_some(at + LIVE_WINDOW)
}

fn earliest(
    a: Option<std::time::SystemTime>,
    b: Option<std::time::SystemTime>,
) -> Option<std::time::SystemTime> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

fn still_valid(store: &dyn Store, c: &Candidate, m: &Meta, memo: &mut CwdMemo, now: i64) -> bool {
    m.path == c.path
        && m.expires.is_none_or(|t| now < t)
        && m.cwd.as_deref().is_none_or(|d| memo.is_dir(d) == m.cwd_dir)
        && stamp::key(&store.summary_inputs(c)) == m.key
}

/// The pass over `candidates` against `old`, split over the machine's cores.
pub fn check(store: &dyn Store, old: &HashMap<String, Meta>, candidates: &[Candidate]) -> Checked {
    let now = stamp::unix_secs(SystemTime::now());
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get().min(8));
    let chunk = candidates.len().div_ceil(threads).max(256);
    let results: Vec<Result<Meta, Box<Entry>>> =
        crate::store::gather_parallel(candidates.chunks(chunk), |part| {
            let mut memo = CwdMemo::default();
            part.iter()
                .map(|c| match old.get(&c.id) {
                    Some(m) if still_valid(store, c, m, &mut memo, now) => Ok(m.clone()),
                    _ => Err(Box::new(read(store, c))),
                })
                .collect()
        });
    let mut out = Checked::default();
    for r in results {
        match r {
            Ok(m) => {
                out.metas.insert(m.id.clone(), m);
            }
            Err(e) => {
                out.metas.insert(e.meta.id.clone(), e.meta.clone());
                out.fresh.push(*e);
            }
        }
    }
    out.gone = old
        .keys()
        .filter(|id| !out.metas.contains_key(*id))
        .cloned()
        .collect();
    out
}

/// Bring one store's section up to date: the section that results and whether it changed.
pub fn refresh(store: &dyn Store, old: Option<Section>) -> (Section, bool) {
    let old = old.unwrap_or_else(|| Section {
        kind: store.kind(),
        dir: store.sessions_dir().to_path_buf(),
        entries: Vec::new(),
    });
    let metas: HashMap<String, Meta> = old
        .entries
        .iter()
        .map(|e| (e.meta.id.clone(), e.meta.clone()))
        .collect();
    let checked = check(store, &metas, &store.discover());
    let changed = !checked.fresh.is_empty() || !checked.gone.is_empty();
    let mut s = old;
    if changed {
        super::apply(&mut s, &checked.fresh, &checked.gone);
    }
    (s, changed)
}

/// Every session of the stores of `kind` (all for `None`), in list order, through the
/// catalog in `cache`: what `Stores::list_of` returns, for the cost of a stat pass when the
/// catalog is current. Without a cache directory it is `Stores::list_of`.
pub fn list(stores: &Stores, kind: Option<StoreKind>, cache: Option<&Path>) -> Vec<SessionSummary> {
    let Some(cache) = cache else {
        return stores.list_of(kind);
    };
    let mut cat: Catalog = super::load(cache).unwrap_or_default();
    let parts: Vec<(&dyn Store, Option<Section>)> = stores
        .stores
        .iter()
        .filter(|s| kind.is_none_or(|k| s.kind() == k))
        .map(|s| (s.as_ref(), cat.take(s.kind(), s.sessions_dir())))
        .collect();
    let done = crate::store::gather_parallel(parts, |(store, old)| vec![refresh(store, old)]);
    let changed = done.iter().any(|(_, c)| *c);
    let mut rows = Vec::new();
    for (s, _) in &done {
        rows.extend(s.entries.iter().filter_map(|e| e.row.clone()));
    }
    if changed {
        for (s, _) in done {
            cat.put(s);
        }
        // As in `patch`: stores that are gone leave with their rows.
        cat.sections.retain(|s| s.dir.is_dir());
        let _one = super::PATCHING.lock().unwrap_or_else(|e| e.into_inner());
        let _ = super::save(cache, &cat);
    }
    rows.sort_by(list_order);
    rows
}
