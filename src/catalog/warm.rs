//! A start from the catalog: the cached rows of every configured store, handed to the
//! browser before its first frame, and what the loader needs to check them in the
//! background (each store's metas, indexed by id on the loader's thread, after the frame).

use std::collections::HashMap;

use rustc_hash::FxHashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::lean::Lean;
use super::slim::Slim;
use crate::model::{SessionSummary, StoreKind};
use crate::store::Stores;

/// What the loader checks against: per store (in `Stores` order), the cached metas (slimmed:
/// the rows hold the strings they copied), or `None` where the catalog had no section (that
/// store loads cold). A list, not a map by
/// id: hashing 10k ids (and cloning each) cost the first frame several ms, and only the
/// loader's thread needs the map (`live::Cat::by_id`).
pub struct Warm {
    pub cache: PathBuf,
    pub known: Vec<Option<Vec<Slim>>>,
}

/// Read the catalog in `cache` for `stores`: the cached rows (in no particular order, each
/// already in the `Arc` the list keeps) and the metas to check them against.
pub fn open(cache: &Path, stores: &Stores) -> (Vec<Arc<SessionSummary>>, Warm) {
    // Decoded lean: the metas come slimmed, and no meta copies its row's path.
    let mut cat = super::load_as::<Lean>(cache).unwrap_or_default();
    // One exact allocation: reserving per section let the vector double past the total.
    let mut rows = Vec::with_capacity(cat.sections.iter().map(|s| s.entries.rows.len()).sum());
    let known = stores
        .stores
        .iter()
        .map(|s| {
            let Lean { rows: r, metas } = cat.take(s.kind(), s.sessions_dir())?.entries;
            rows.extend(r.into_iter().flatten());
            Some(metas)
        })
        .collect();
    let warm = Warm {
        cache: cache.to_path_buf(),
        known,
    };
    (rows, warm)
}

/// The catalog's rows for a browser whose first frame showed `head_keys` (the head's rows),
/// as the actions that insert them, and what the loader checks them against. The head's
/// rows are the catalog's own (same stamp, same log): only the rest is inserted, so the rows
/// on screen stay as they are and the preview is not requested twice. One the catalog no
/// longer holds (it changed in between) leaves.
pub fn cached(
    cache: &Path,
    stores: &Stores,
    head_keys: std::collections::HashSet<(crate::model::StoreKind, String)>,
) -> (Vec<crate::app::Action>, Warm) {
    let (mut rows, warm) = open(cache, stores);
    // By store, so a row's id is looked up as it is: a key made for each of 100k rows (a
    // copy of its id) was about a quarter of this step's CPU (issue 10). FxHash: SipHash of
    // every row's id was most of what was left (ids are the stores' own file names).
    let mut head: HashMap<StoreKind, FxHashSet<String>> = HashMap::new();
    for (store, id) in head_keys {
        head.entry(store).or_default().insert(id);
    }
    if !head.is_empty() {
        rows.retain(|r| !head.get_mut(&r.store).is_some_and(|ids| ids.remove(&*r.id)));
    }
    let mut actions = Vec::new();
    let left: Vec<_> = (head.into_iter())
        .flat_map(|(store, ids)| ids.into_iter().map(move |id| (store, id)))
        .collect();
    if !left.is_empty() {
        actions.push(crate::app::Action::Removed(left));
    }
    actions.push(crate::app::Action::Cached(rows));
    (actions, warm)
}

/// The catalog's head for a browser over `stores` starting with `filter` (`head::read`): the
/// first frame's rows and count, before the whole catalog is decoded.
pub fn head(
    cache: &Path,
    stores: &Stores,
    filter: &crate::store::registry::Filter,
) -> Option<super::head::Head> {
    // A store whose directory does not exist has no rows and no catalog section (the
    // catalog drops those): the default Codex and pi stores on a machine without them.
    let dirs: Vec<_> = (stores.stores.iter())
        .filter(|s| s.sessions_dir().is_dir())
        .map(|s| (s.kind(), s.sessions_dir()))
        .collect();
    super::head::read(cache, &dirs, filter)
}
