//! A warm `spool list --json`: when the stat pass finds the catalog current, its rows are
//! printed from the file's own bytes (`view`), never decoded into `SessionSummary`s. Issue 10:
//! at 100k sessions that decode was a quarter of the command's CPU, a third of it page
//! faults for the rows' ~600k strings, and its rows were only read to be printed.
//!
//! Anything else (a session new, changed, gone or expired, a patch log, a catalog that does
//! not read as views) hands the surveys it took to the usual path (`pass::list_surveyed`),
//! which decodes, refreshes and saves as before: the stores are never surveyed twice.

use std::path::Path;

use rustc_hash::FxHashMap;

use super::log;
use super::pass::reread;
use super::slim::Held;
use super::stream::{self, Placed};
use super::survey::{self, Survey};
use super::view::{self, RowHead, SectionView};
use crate::model::StoreKind;
use crate::store::{Store, Stores};

/// A section at least this long is read on a thread of its own (as `stream` decodes).
const OWN_THREAD: usize = 256 << 10;

/// When every chosen store's section is current: `print` of its rows in list order, and
/// `Ok` of what `print` returned. Otherwise `Err` of the surveys taken, in the stores' order.
pub fn json<R>(
    stores: &Stores,
    kind: Option<StoreKind>,
    cache: &Path,
    print: impl FnOnce(&[&RowHead]) -> R,
) -> Result<R, Vec<Survey>> {
    // The log's patches apply on top of the file, and only the full decode replays them.
    if log::file(cache).exists() {
        return Err(Vec::new());
    }
    let chosen: Vec<&dyn Store> = (stores.stores.iter())
        .filter(|s| kind.is_none_or(|k| s.kind() == k))
        .map(|s| s.as_ref())
        .collect();
    // Filled inside the scope below, after the surveys started (the sections borrow it).
    let whole = std::cell::OnceCell::new();
    // As `pass::list_surveyed`: each store surveys on its own thread while this one reads
    // the sections, then checks its survey against its section as soon as it has it.
    let done: Vec<(Survey, Option<SectionView>, bool)> = std::thread::scope(|scope| {
        let mut give = Vec::with_capacity(chosen.len());
        let working: Vec<_> = (chosen.iter())
            .map(|&s| {
                let (tx, rx) = std::sync::mpsc::sync_channel::<Option<SectionView>>(1);
                give.push(tx);
                scope.spawn(move || {
                    let v = survey::survey(s);
                    let section = rx.recv().ok().flatten();
                    let same = current(s, section.as_ref(), &v);
                    (v, section, same)
                })
            })
            .collect();
        // The file is opened only now: the surveys waited for its read before (at 100k
        // sessions, ~15 ms with one core busy before any `statx` began).
        let (bytes, spans) = match whole.get_or_init(|| stream::whole(&super::file(cache))) {
            Some((b, s)) => (&b[..], &s[..]),
            None => (&[][..], &[][..]),
        };
        let mut sections = views(bytes, spans);
        for (s, tx) in chosen.iter().zip(give) {
            let at = (sections.iter())
                .position(|v| v.kind == s.kind() && view::is_dir_of(v, s.sessions_dir()));
            let _ = tx.send(at.map(|i| sections.swap_remove(i)));
        }
        (working.into_iter())
            .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect()
    });
    if !done.iter().all(|d| d.2) {
        return Err(done.into_iter().map(|d| d.0).collect());
    }
    // As `pass::Leftover`: the process exits right after printing, and freeing each
    // candidate's strings one by one would only delay that exit. (Freed and given back
    // to the kernel before printing, they cost ~15 ms of CPU at 100k sessions and saved
    // at most 1 MB of the peak.)
    let sections: Vec<SectionView> = (done.into_iter())
        .filter_map(|(survey, section, _)| {
            std::mem::forget(survey);
            section
        })
        .collect();
    let mut rows: Vec<&RowHead> = (sections.iter())
        .flat_map(|s| &s.entries)
        .filter_map(|e| e.row.as_ref())
        .collect();
    sort(&mut rows);
    let r = print(&rows);
    std::mem::forget(sections);
    Ok(r)
}

/// Every section read in place, each checked against its table checksum; none at all if
/// any fails (the full decode then refuses the file as a whole, as it always has).
fn views<'b>(bytes: &'b [u8], spans: &[Placed]) -> Vec<SectionView<'b>> {
    let one = |(r, sum): &Placed| {
        let b = bytes.get(r.clone())?;
        stream::holds(b, *sum).then(|| view::section(b)).flatten()
    };
    let all: Option<Vec<SectionView>> = std::thread::scope(|scope| {
        let parts: Vec<_> = (spans.iter())
            .map(|sp| match sp.0.len() >= OWN_THREAD {
                true => Err(scope.spawn(move || one(sp))),
                false => Ok(one(sp)),
            })
            .collect();
        (parts.into_iter())
            .map(|p| p.unwrap_or_else(|h| h.join().ok().flatten()))
            .collect()
    });
    all.unwrap_or_default()
}

/// Whether `section` holds exactly the store's sessions as surveyed, every one still
/// valid (nothing to re-read, nothing gone): what `pass::refresh` would leave unchanged.
fn current(store: &dyn Store, section: Option<&SectionView>, v: &Survey) -> bool {
    let Some(s) = section else {
        return v.candidates.is_empty();
    };
    // Sized at once: growing it rehashed every id several times over (at 100k sessions).
    let mut index: FxHashMap<&str, usize> =
        FxHashMap::with_capacity_and_hasher(s.entries.len(), Default::default());
    index.extend(s.entries.iter().enumerate().map(|(i, e)| (e.id(), i)));
    // A repeated id: which entry wins is the full decode's to say.
    if index.len() != s.entries.len() {
        return false;
    }
    let lookup = |id: &str| index.get(id).map(|&i| (i, &s.entries[i]));
    let mut found = vec![false; s.entries.len()];
    for n in reread(store, &lookup, &v.candidates[..], &v.keys) {
        match n {
            (Some(i), None) => found[i] = true,
            _ => return false,
        }
    }
    found.into_iter().all(|f| f)
}

/// `registry::sort_listed` over heads: the same stable order, by the same keys. Sorted in
/// place, not through a vector of keys beside the rows (at 100k rows that vector and the
/// sort's scratch for it were 13 MB at the warm listing's peak); the sections' rows come in
/// list order already, so the sort merges a few runs.
fn sort(rows: &mut [&RowHead]) {
    let key = |r: &RowHead| (r.pinned(), r.pinned_at, r.last_activity());
    rows.sort_by(|a, b| {
        (key(b).cmp(&key(a)))
            .then_with(|| b.id.cmp(a.id))
            .then_with(|| a.store.cmp(&b.store))
    });
}
