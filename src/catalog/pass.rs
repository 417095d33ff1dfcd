//! The stat pass: compare a store's sessions with the catalog's keys and re-read only the
//! sessions whose key, path, cwd or expiry no longer holds. Append-only logs are re-read
//! whole (one session's summary), not from the last offset: the `Store` trait summarizes a
//! session in one call, and a row read from an offset would need every store's partial state.

use std::collections::HashSet;

use rustc_hash::{FxHashMap, FxHashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

use super::packed::{Listed, Packed};
use super::slim::{Held, Slim};
use super::survey::{self, Survey};
use super::{Entry, Meta, Section, stamp};
use crate::model::{SessionSummary, StoreKind};
use crate::store::{Candidate, Store, Stores};

pub use super::known::Known;
use super::known::{Slot, id_hash, path_hash};

/// What one pass found.
#[derive(Debug, Default)]
pub struct Checked {
    /// Every current session's path and key, by id (re-read or still valid): what the
    /// watcher compares against. The ids of still-valid sessions are moved out of the
    /// catalog's metas, never copied, and their paths are kept as hashes (issue 10).
    pub known: Known,
    /// Sessions read again: new, changed, or their cached row expired.
    pub fresh: Vec<Entry>,
    /// Ids of the re-read sessions with a row that the catalog already held (in `fresh`
    /// order): the browser's open views of these are stale.
    pub changed: Vec<String>,
    /// Ids the catalog held that discovery no longer finds.
    pub gone: Vec<String>,
}

/// The catalog's metas of one store (slimmed), looked up by id through positions sorted by
/// a hash of the id: no second copy of every id and no hash table beside the metas (issue
/// 10: a map keyed by a cloned id was 25 MB at 100k sessions). Where an id repeats, the last
/// meta wins, as it would in a map.
///
/// Sorted by the id itself, each lookup's ~17 probes each followed a pointer to an id on the
/// heap: at 100k sessions those cache misses were a tenth of a warm start's CPU (`memcmp`
/// under `position`, perf). The hash sits beside the position, so a lookup probes one
/// contiguous array and reads a single id, the match.
#[derive(Debug, Default)]
pub struct ById {
    metas: Vec<Slim>,
    /// (the id's `id_hash`, the meta's position), in hash order; ids of equal hash are in
    /// id order.
    order: Vec<(u32, u32)>,
}

impl ById {
    pub fn new(metas: Vec<Meta>) -> ById {
        ById::of(metas.into_iter().map(Slim::of).collect())
    }

    /// Metas slimmed already (the warm start slims them as the catalog hands them over).
    pub fn of(metas: Vec<Slim>) -> ById {
        let mut order: Vec<(u32, u32)> = (metas.iter().enumerate())
            .map(|(i, m)| (id_hash(&m.id), i as u32))
            .collect();
        let id = |e: &(u32, u32)| &*metas[e.1 as usize].id;
        // Equal ids: the later position first, so `dedup` keeps the last one.
        order.sort_unstable_by(|a, b| {
            (a.0.cmp(&b.0))
                .then_with(|| id(a).cmp(id(b)))
                .then(b.1.cmp(&a.1))
        });
        order.dedup_by(|a, b| a.0 == b.0 && id(a) == id(b));
        ById { metas, order }
    }

    /// The position in `metas` of `id`'s meta.
    fn position(&self, id: &str) -> Option<usize> {
        let h = id_hash(id);
        let from = self.first_at_least(h);
        let same = self.order[from..].iter().take_while(|e| e.0 == h);
        let found = same
            .into_iter()
            .find(|e| &*self.metas[e.1 as usize].id == id)?;
        Some(found.1 as usize)
    }

    /// Where the first entry of hash `h` or above is in `order`. The hashes are spread evenly
    /// over 32 bits, so it is near `h / 2^32` of the way in: the search gallops from there to
    /// a short range and bisects that, a few probes in a few cache lines. Bisecting the whole
    /// order took ~17 probes spread over it, a cache miss each at 100k sessions (perf: the
    /// lookup was 8% of the Loop thread's warm check).
    fn first_at_least(&self, h: u32) -> usize {
        let o = &self.order;
        let n = o.len();
        let guess = ((u64::from(h) * n as u64) >> 32) as usize;
        let (mut lo, mut hi) = (0, n);
        let mut step = 1;
        if guess < n && o[guess].0 < h {
            // Everything up to the guess is below `h`.
            lo = guess + 1;
            while guess + step < n {
                let j = guess + step;
                if o[j].0 >= h {
                    hi = j;
                    break;
                }
                lo = j + 1;
                step *= 2;
            }
        } else {
            // The guess is at or past the first entry of `h` or above.
            hi = guess;
            while step <= guess {
                let j = guess - step;
                if o[j].0 < h {
                    lo = j + 1;
                    break;
                }
                hi = j;
                step *= 2;
            }
        }
        lo + o[lo..hi].partition_point(|e| e.0 < h)
    }

    pub fn get(&self, id: &str) -> Option<&Slim> {
        self.position(id).map(|i| &self.metas[i])
    }

    pub fn len(&self) -> usize {
        self.order.len()
    }

    pub fn is_empty(&self) -> bool {
        self.order.is_empty()
    }
}

/// Whether `cwd` is a directory, asked once per distinct cwd in a pass (looked up once per
/// session: FxHash, as SipHash was 5% of a warm `spool list`; the keys are the catalog's own
/// cwds, and a crafted collision only slows a pass).
#[derive(Default)]
struct CwdMemo(FxHashMap<String, bool>);

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
        row: row.map(Arc::new),
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

fn still_valid(path: &Path, key: u64, m: &impl Held, cwds: &mut CwdMemo, now: i64) -> bool {
    m.at(path)
        && m.expires().is_none_or(|t| now < t)
        && m.cwd().is_none_or(|d| cwds.is_dir(d) == m.cwd_dir())
        && key == m.key()
}

/// The core of a pass, split over the machine's cores: for each surveyed candidate (in
/// order), where `old` found its meta (the position it gave) and `None` when that meta still
/// holds, else its entry read again. `old` is a lookup rather than a map of owned metas, so a pass over the catalog's
/// own entries copies nothing (at 100k sessions, a copy of every meta is tens of MB). The
/// candidates are read by position (`Listed`): as discovery gave them, or packed.
pub(super) fn reread<'a, M: Held + 'a, L: Listed + ?Sized>(
    store: &dyn Store,
    old: &(dyn Fn(&str) -> Option<(usize, &'a M)> + Sync),
    candidates: &L,
    keys: &[u64],
) -> Vec<(Option<usize>, Option<Box<Entry>>)> {
    let now = stamp::unix_secs(SystemTime::now());
    let n = candidates.count().min(keys.len());
    let chunk = survey::chunk_len(n);
    let parts = (0..n)
        .step_by(chunk.max(1))
        .map(|from| from..(from + chunk).min(n));
    crate::store::gather_parallel(parts, |part| {
        let mut cwds = CwdMemo::default();
        let mut buf = PathBuf::new();
        part.map(|i| {
            let found = old(candidates.id(i));
            let at = found.map(|(i, _)| i);
            match found {
                Some((_, m))
                    if still_valid(candidates.path(i, &mut buf), keys[i], m, &mut cwds, now) =>
                {
                    (at, None)
                }
                _ => (at, Some(Box::new(candidates.with(i, |c| read(store, c))))),
            }
        })
        .collect()
    })
}

/// The pass over `candidates` against `old`, which it consumes: the metas that still hold
/// give their ids and paths to `known` rather than copies of them.
pub fn check(store: &dyn Store, old: ById, candidates: &[Candidate]) -> Checked {
    let keys = survey::keys(store, candidates);
    check_keyed(store, old, candidates, &keys)
}

/// `check` of a survey taken (and packed) already: the browser's warm check, which times
/// the two apart.
pub fn check_packed(store: &dyn Store, old: ById, s: &Packed) -> Checked {
    check_keyed(store, old, s, &s.keys)
}

fn check_keyed<L: Listed + ?Sized>(
    store: &dyn Store,
    old: ById,
    candidates: &L,
    keys: &[u64],
) -> Checked {
    // The position found is handed back, so each candidate's id is looked up once.
    let lookup = |id: &str| old.position(id).map(|i| (i, &old.metas[i]));
    let news = reread(store, &lookup, candidates, keys);
    let mut out = Checked::default();
    // Every current session, sorted into the watcher's table once they are all in.
    let mut known: Vec<(std::sync::Arc<str>, Slot)> = Vec::with_capacity(candidates.count());
    // Per meta of `old`: whether discovery still finds it, and whether it still holds.
    let mut found = vec![false; old.metas.len()];
    let mut valid = vec![false; old.metas.len()];
    for (at, n) in news {
        if let Some(i) = at {
            found[i] = true;
        }
        match n {
            None => {
                if let Some(i) = at {
                    valid[i] = true;
                }
            }
            Some(e) => {
                if at.is_some() && e.row.is_some() {
                    out.changed.push(e.meta.id.clone());
                }
                let path = path_hash(&e.meta.path);
                known.push((
                    e.meta.id.as_str().into(),
                    Slot {
                        path,
                        key: e.meta.key,
                    },
                ));
                out.fresh.push(*e);
            }
        }
    }
    let ById { mut metas, order } = old;
    for (_, i) in order {
        let i = i as usize;
        let m = &mut metas[i];
        if valid[i] {
            let slot = Slot {
                path: m.path,
                key: m.key,
            };
            known.push((std::mem::take(&mut m.id), slot));
        } else if !found[i] {
            out.gone.push(m.id.to_string());
        }
    }
    out.known = Known::from_unsorted(known);
    out
}

/// Bring one store's section up to date: the section that results, whether it changed, and
/// the candidates it was checked against (handed back so that `list_keeping`'s caller
/// decides when they are freed).
pub fn refresh(
    store: &dyn Store,
    old: Option<Section>,
    survey: Survey,
) -> (Section, bool, Vec<Candidate>) {
    let mut s = old.unwrap_or_else(|| Section {
        kind: store.kind(),
        dir: store.sessions_dir().to_path_buf(),
        entries: Vec::new(),
    });
    let Survey { candidates, keys } = survey;
    let (fresh, gone, differs) = {
        let index: FxHashMap<&str, &Entry> =
            s.entries.iter().map(|e| (e.meta.id.as_str(), e)).collect();
        let found = |id: &str| index.get(id).map(|e| (0, &e.meta));
        let fresh: Vec<Entry> = reread(store, &found, &candidates[..], &keys)
            .into_iter()
            .filter_map(|(_, e)| e.map(|e| *e))
            .collect();
        // After the reads: a row that expires as it is read expires by this time.
        let now = stamp::unix_secs(SystemTime::now());
        let differs = fresh.iter().any(|e| {
            index
                .get(e.meta.id.as_str())
                .is_none_or(|o| !same_again(o, e, now))
        });
        let found: FxHashSet<&str> = candidates.iter().map(|c| c.id.as_str()).collect();
        let gone: HashSet<String> = s
            .entries
            .iter()
            .filter(|e| !found.contains(e.meta.id.as_str()))
            .map(|e| e.meta.id.clone())
            .collect();
        (fresh, gone, differs)
    };
    let changed = differs || !gone.is_empty();
    if !fresh.is_empty() || !gone.is_empty() {
        let drop: HashSet<&str> = fresh.iter().map(|e| e.meta.id.as_str()).collect();
        s.entries
            .retain(|e| !gone.contains(&e.meta.id) && !drop.contains(e.meta.id.as_str()));
        s.entries.extend(fresh);
    }
    (s, changed, candidates)
}

/// Whether `new`, read again because `old` expired, leaves the catalog's file as good as it
/// was: the same row and meta, and both expiry times already past, so any later pass reads
/// it again either way. A running session's row expires at the pass that reads it, so
/// without this every `spool list` while an agent runs rewrote the whole catalog (37 MB at
/// 100k sessions) to store a new expiry time that changes nothing.
fn same_again(old: &Entry, new: &Entry, now: i64) -> bool {
    let (a, b) = (&old.meta, &new.meta);
    let past = |t: Option<i64>| t.is_some_and(|t| t <= now);
    a.id == b.id
        && a.path == b.path
        && a.key == b.key
        && a.cwd == b.cwd
        && a.cwd_dir == b.cwd_dir
        && past(a.expires)
        && past(b.expires)
        && old.row == new.row
}

/// What a listing through the catalog held besides its rows: the catalog's metas and
/// discovery's candidates, about five small allocations per session. `list` frees them; a
/// process that exits right after printing (the CLI) can leave them to the exit instead, as
/// it does its rows (issue 10: at 100k sessions, their frees and the allocator's
/// consolidation behind them were a tenth of a warm `spool list`'s CPU, on the thread that
/// prints).
/// The sections are kept whole (their rows taken), so keeping them costs no new memory.
#[derive(Default)]
pub struct Leftover {
    sections: Vec<Section>,
    candidates: Vec<Vec<Candidate>>,
}

impl Leftover {
    /// How many sessions' metas it holds.
    pub fn metas(&self) -> usize {
        self.sections.iter().map(|s| s.entries.len()).sum()
    }

    /// How many candidates it holds.
    pub fn candidates(&self) -> usize {
        self.candidates.iter().map(Vec::len).sum()
    }
}

/// Every session of the stores of `kind` (all for `None`), in list order, through the
/// catalog in `cache`: what `Stores::list_of` returns, for the cost of a stat pass when the
/// catalog is current. Without a cache directory it is `Stores::list_of`.
pub fn list(stores: &Stores, kind: Option<StoreKind>, cache: Option<&Path>) -> Vec<SessionSummary> {
    list_keeping(stores, kind, cache).0
}

/// `list`, with what else it read handed back rather than freed.
pub fn list_keeping(
    stores: &Stores,
    kind: Option<StoreKind>,
    cache: Option<&Path>,
) -> (Vec<SessionSummary>, Leftover) {
    let (rows, left) = list_shared(stores, kind, cache);
    (rows.into_iter().map(Arc::unwrap_or_clone).collect(), left)
}

/// `list_keeping` with each row in the `Arc` the catalog decoded it into: `spool list`
/// prints them from there (at 100k rows, moving each out into a new vector was ~20 ms of
/// copying and fresh pages at the list's single-threaded end, issue 10).
pub fn list_shared(
    stores: &Stores,
    kind: Option<StoreKind>,
    cache: Option<&Path>,
) -> (Vec<Arc<SessionSummary>>, Leftover) {
    list_surveyed(stores, kind, cache, Vec::new())
}

/// `list_shared` with the surveys of the first stores chosen taken already (in the order
/// of `stores`, as `list_warm` took them before it found the catalog out of date).
pub fn list_surveyed(
    stores: &Stores,
    kind: Option<StoreKind>,
    cache: Option<&Path>,
    taken: Vec<Survey>,
) -> (Vec<Arc<SessionSummary>>, Leftover) {
    let Some(cache) = cache else {
        let rows = stores.list_of(kind).into_iter().map(Arc::new).collect();
        return (rows, Leftover::default());
    };
    let chosen: Vec<&dyn Store> = (stores.stores.iter())
        .filter(|s| kind.is_none_or(|k| s.kind() == k))
        .map(|s| s.as_ref())
        .collect();
    // One thread per store: its survey while this thread decodes the catalog, then its
    // refresh, as soon as it has its section. A survey needs nothing from the catalog (its
    // keys are compared only after both are done), and the decode is one thread's work, so
    // on its own it left the other cores idle (issue 10: at 100k, ~150 ms of CPU before any
    // survey started). A store's refresh starts when its own survey ends, not after the
    // last one's: the stores' refreshes were ~100 ms at 100k that waited for the slowest
    // survey and then overlapped nothing. A store thread that panics takes the command with
    // it, never leaving a store paired with another store's section.
    let (mut cat, done) = std::thread::scope(|scope| {
        let mut give = Vec::with_capacity(chosen.len());
        let mut taken = taken.into_iter();
        let working: Vec<_> = (chosen.iter())
            .map(|&s| {
                let (tx, rx) = std::sync::mpsc::sync_channel::<Option<Section>>(1);
                give.push(tx);
                let pre = taken.next();
                scope.spawn(move || {
                    let v = pre.unwrap_or_else(|| survey::survey(s));
                    // No section comes only when this thread's sender was dropped by a panic.
                    let old = rx.recv().ok()?;
                    Some(refresh(s, old, v))
                })
            })
            .collect();
        let mut cat = super::load(cache).unwrap_or_default();
        for (s, tx) in chosen.iter().zip(give) {
            let _ = tx.send(cat.take(s.kind(), s.sessions_dir()));
        }
        let done: Vec<(Section, bool, Vec<Candidate>)> = (working.into_iter())
            .filter_map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect();
        (cat, done)
    });
    let changed = done.iter().any(|(_, c, _)| *c);
    let total = done.iter().map(|(s, _, _)| s.entries.len()).sum();
    // Sorted as the `Arc`s the catalog decoded them into (8 bytes a move), and only then
    // moved out in order: a stable sort of the rows themselves moved ~344 bytes per element
    // per merge step and took a scratch buffer of half the rows (issue 10: at 100k, 17 MB).
    let mut shared: Vec<Arc<SessionSummary>> = Vec::with_capacity(total);
    let mut left = Leftover {
        sections: Vec::new(),
        candidates: Vec::with_capacity(done.len()),
    };
    let mut sections = Vec::with_capacity(done.len());
    for (s, _, c) in done {
        left.candidates.push(c);
        sections.push(s);
    }
    // The rows are moved out of the sections, never copied (after the save, if any).
    if changed {
        let keys: Vec<(StoreKind, PathBuf)> =
            sections.iter().map(|s| (s.kind, s.dir.clone())).collect();
        for s in sections {
            cat.put(s);
        }
        // As in `patch`: stores that are gone leave with their rows.
        cat.sections.retain(|s| s.dir.is_dir());
        super::in_list_order(&mut cat);
        {
            let _one = super::PATCHING.lock().unwrap_or_else(|e| e.into_inner());
            let _ = super::save(cache, &cat);
        }
        sections = (keys.iter()).filter_map(|(k, d)| cat.take(*k, d)).collect();
    }
    for s in &mut sections {
        shared.extend(s.entries.iter_mut().filter_map(|e| e.row.take()));
    }
    left.sections = sections;
    drop(cat);
    crate::store::registry::sort_listed(&mut shared);
    (shared, left)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slim(id: &str, key: u64) -> Slim {
        Slim::of(Meta {
            id: id.into(),
            path: PathBuf::from(format!("/s/{id}")),
            key,
            cwd: None,
            cwd_dir: false,
            expires: None,
        })
    }

    /// The lookup by hash answers as a map by id would: every id found, the last of a
    /// repeat wins, an absent id (and a prefix of a present one) is not found. Ids whose
    /// 32-bit hashes collide are all told apart: 200k ids give several such pairs.
    /// The galloping search finds what bisecting the whole order finds, for orders of
    /// every small size and for hashes at both ends, inside runs and between them.
    #[test]
    fn the_galloping_search_finds_where_a_bisection_does() {
        for n in [0usize, 1, 2, 3, 7, 100, 5_000] {
            let metas: Vec<Slim> = (0..n).map(|i| slim(&format!("id{i}"), i as u64)).collect();
            let by = ById::of(metas);
            let mut probes = vec![0, 1, u32::MAX, u32::MAX - 1, 1 << 31];
            probes.extend(
                by.order
                    .iter()
                    .flat_map(|e| [e.0, e.0.wrapping_add(1), e.0 - 1.min(e.0)]),
            );
            for h in probes {
                let want = by.order.partition_point(|e| e.0 < h);
                assert_eq!(by.first_at_least(h), want, "n {n}, hash {h}");
            }
        }
    }

    #[test]
    fn the_lookup_by_hash_answers_as_a_map_by_id() {
        let ids: Vec<String> = (0..200_000u64)
            .map(|i| format!("{:x}", i.wrapping_mul(0x9e37_79b9_7f4a_7c15)))
            .collect();
        let mut metas: Vec<Slim> = (ids.iter().enumerate())
            .map(|(i, id)| slim(id, i as u64))
            .collect();
        // Every seventh id again, later: its later meta wins.
        metas.extend((ids.iter().step_by(7)).map(|id| slim(id, u64::MAX)));
        let mut map = std::collections::HashMap::new();
        for m in &metas {
            map.insert(m.id.to_string(), m.key);
        }
        let by = ById::of(metas);
        assert_eq!(by.len(), ids.len());
        for id in &ids {
            assert_eq!(by.get(id).map(|m| m.key), map.get(id).copied(), "{id}");
        }
        assert!(by.get("absent").is_none() && by.get("").is_none());
        assert!(by.get(&ids[1][..ids[1].len() - 1]).is_none());
        let mut hashes: Vec<u32> = ids.iter().map(|id| id_hash(id)).collect();
        hashes.sort_unstable();
        let collisions = hashes.windows(2).filter(|w| w[0] == w[1]).count();
        assert!(collisions > 0, "the test covers colliding hashes");
    }
}
