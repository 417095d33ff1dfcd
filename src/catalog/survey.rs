//! A store's sessions as they stand, taken without the catalog: discovery's candidates and
//! each one's key (the stat pass), before the comparison with the cached metas. `spool list`
//! surveys while its main thread decodes the catalog, and so does the browser (its store
//! threads at nice 10, `live::Early`, the survey kept packed until the check).

use std::path::{Path, PathBuf};

use super::stamp;
use crate::store::{Candidate, Store};

/// Discovery's candidates and, at the same index, the key of each one's `summary_inputs` as
/// the pass found them.
#[derive(Debug, Default)]
pub struct Survey {
    pub candidates: Vec<Candidate>,
    pub keys: Vec<u64>,
}

/// Discover `store` and key every candidate.
pub fn survey(store: &dyn Store) -> Survey {
    let mut candidates = store.discover_unordered();
    candidates.shrink_to_fit();
    let keys = keys(store, &candidates);
    Survey { candidates, keys }
}

/// The candidates per thread of a pass over `n` (the machine's cores, at most 8; a small
/// store is not worth a thread per core).
pub fn chunk_len(n: usize) -> usize {
    let threads = crate::store::cores().map_or(2, |n| n.get().min(8));
    n.div_ceil(threads).max(256)
}

/// The key of each candidate (in order), split over the machine's cores. A key is what
/// `stamp::key` of the inputs says, with one memo per thread saving repeated lookups.
pub fn keys(store: &dyn Store, candidates: &[Candidate]) -> Vec<u64> {
    let state = state_dir(store);
    crate::store::gather_parallel(candidates.chunks(chunk_len(candidates.len())), |part| {
        let mut memo = stamp::Memo::new(state.clone());
        part.iter()
            .map(|c| memo.key(&store.summary_inputs(c), &c.path, c.stat.as_ref()))
            .collect()
    })
}

/// The directory `store` keeps its state files in (every id's file lives there).
fn state_dir(store: &dyn Store) -> Option<PathBuf> {
    store.state_file("-").parent().map(Path::to_path_buf)
}
