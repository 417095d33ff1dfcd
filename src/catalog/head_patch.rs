//! The catalog's patch log replayed on its head, so a start after a busy session (a session
//! marked read, a watcher's re-read, a pin: each a log record) still draws its first frame
//! from `head.bin` instead of decoding the whole catalog first (issue 10: 37 ms at 10k
//! Claude sessions, about 360 ms at 100k).
//!
//! A record drops the rows it names (re-read or gone) and adds the re-read rows the default
//! filter shows. The head's digests of every counted row say whether a dropped session that
//! is not among the head's rows was counted, so the count stays exact. Every session the log
//! did not touch and the head does not hold sorts after the head's last row (the order is
//! total), so the patched rows up to that row are exactly the list's first rows.

use std::cmp::Ordering;
use std::collections::HashSet;

use rustc_hash::FxHashMap;

use super::head::{Head, ROWS, digest, dir_bytes};
use super::log::Record;
use crate::model::{SessionSummary, StoreKind};
use crate::store::registry::{Filter, list_order};

/// Fewer rows than this left after a replay (the log moved many of the head's rows out of
/// it): no head, as its first frame might not fill a tall terminal.
const FEWEST: usize = ROWS / 2;

type Key = (StoreKind, String);

/// Whether the sorted little-endian words `shown` hold `d`.
fn holds(shown: &[u8], d: u64) -> bool {
    let word = |i: usize| {
        let b = shown.get(i * 8..i * 8 + 8).unwrap_or_default();
        u64::from_le_bytes(b.try_into().unwrap_or_default())
    };
    let (mut lo, mut hi) = (0, shown.len() / 8);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        match word(mid).cmp(&d) {
            Ordering::Less => lo = mid + 1,
            Ordering::Equal => return true,
            Ordering::Greater => hi = mid,
        }
    }
    false
}

/// Apply `records` (in log order) to `head`, whose counted rows' digests are `shown`.
/// `None` when the result cannot be trusted as the first frame (two stores of one kind,
/// whose ids the digests do not tell apart; a session listed twice; a count that does not
/// add up; too few rows left): the caller then has no head.
pub(super) fn replay(head: &mut Head, shown: &[u8], records: Vec<Record>) -> Option<()> {
    let kinds: HashSet<StoreKind> = head.stores.iter().map(|(k, _)| *k).collect();
    if kinds.len() != head.stores.len() {
        return None;
    }
    // The head's last row bounds what it can vouch for, unless it holds every counted row.
    let bound = (head.total as usize > head.rows.len())
        .then(|| head.rows.last().cloned())
        .flatten();
    let stores: HashSet<(StoreKind, Vec<u8>)> = head.stores.iter().cloned().collect();
    let mut rows: FxHashMap<Key, SessionSummary> = (head.rows.drain(..))
        .map(|r| ((r.store, r.id.to_string()), r))
        .collect();
    // Whether each session the log touched is counted now (the digests answer the rest).
    let mut counted: FxHashMap<Key, bool> = FxHashMap::default();
    let mut total = head.total;
    let filter = Filter::default();
    for r in records {
        // A store the browser does not list: none of its rows are shown.
        if !stores.contains(&(r.kind, dir_bytes(&r.dir))) {
            continue;
        }
        for id in r.gone.iter().chain(r.fresh.iter().map(|e| &e.meta.id)) {
            let k = (r.kind, id.clone());
            let was =
                (counted.get(&k).copied()).unwrap_or_else(|| holds(shown, digest(r.kind, id)));
            if was {
                total = total.checked_sub(1)?;
            }
            rows.remove(&k);
            counted.insert(k, false);
        }
        for row in r.fresh.iter().filter_map(|e| e.row.as_deref()) {
            if !filter.accepts(row) {
                continue;
            }
            let k = (row.store, row.id.to_string());
            match counted.get(&k) {
                Some(true) => {}
                Some(false) => total += 1,
                // Counted before and not dropped above: another store lists it too.
                None if holds(shown, digest(row.store, &row.id)) => return None,
                None => total += 1,
            }
            counted.insert(k.clone(), true);
            rows.insert(k, row.clone());
        }
    }
    let mut rows: Vec<SessionSummary> = rows.into_values().collect();
    rows.sort_by(list_order);
    match &bound {
        Some(last) => {
            rows.retain(|r| list_order(r, last) != Ordering::Greater);
            rows.truncate(ROWS);
            if rows.len() < FEWEST.min(total as usize) || rows.len() as u64 > total {
                return None;
            }
        }
        None if rows.len() as u64 != total => return None,
        None => {}
    }
    head.rows = rows;
    head.total = total;
    Some(())
}
