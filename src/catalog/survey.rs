//! A store's sessions as they stand, taken without the catalog: discovery's candidates and
//! each one's key (the stat pass), before the comparison with the cached metas. `spool list`
//! surveys while its main thread decodes the catalog, and so does the browser (its store
//! threads at nice 10, `live::Early`, the survey kept packed until the check).

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use super::packed::{Listed, Packed};
use super::stamp::{self, Stat};
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
    let (candidates, keys) = store.discover_keyed(&Keyer::new(store));
    Survey { candidates, keys }
}

/// Discover `store` packed and keyed: the browser's survey (`live::Early`). Issue 10:
/// keyed first, discovery's candidates (about 300 bytes each with their id and path) waited
/// whole through the stat pass, three stores' at once beside the decoding catalog, where a
/// warm start's memory peaked; packed first, only their bytes and the stats discovery took
/// waited; keyed where each directory is packed (`Store::discover_packed`), not even those.
pub fn packed(store: &dyn Store) -> Packed {
    store.discover_packed(&Keyer::new(store))
}

/// Keys a store's candidates for a survey on whichever thread makes them: each call
/// borrows a memo (`stamp::Memo`) from a small pool, so a thread keying directory after
/// directory reuses what its memo learnt (the state directory's names, shared inputs).
pub struct Keyer<'a> {
    store: &'a dyn Store,
    state: Option<PathBuf>,
    memos: Mutex<Vec<stamp::Memo>>,
}

impl<'a> Keyer<'a> {
    pub fn new(store: &'a dyn Store) -> Keyer<'a> {
        Keyer {
            store,
            state: state_dir(store),
            memos: Mutex::default(),
        }
    }

    /// `f` with a memo of the pool's (or a new one), given back after.
    fn with_memo<R>(&self, f: impl FnOnce(&mut stamp::Memo) -> R) -> R {
        let pool = || self.memos.lock().unwrap_or_else(|e| e.into_inner());
        let mut memo = (pool().pop()).unwrap_or_else(|| stamp::Memo::new(self.state.clone()));
        let out = f(&mut memo);
        pool().push(memo);
        out
    }

    /// What `c`'s key is taken of (`Store::summary_inputs_stated`).
    pub fn inputs(&self, c: &Candidate) -> (Vec<PathBuf>, Option<Stat>) {
        self.store.summary_inputs_stated(c)
    }

    /// The key of `c` with `inputs` (and the stat of the first), discovery's `lstat` of its
    /// path being `seen`.
    fn key(
        memo: &mut stamp::Memo,
        c: &Candidate,
        (inputs, first): (Vec<PathBuf>, Option<Stat>),
        seen: Option<&Stat>,
    ) -> u64 {
        memo.key_with(&inputs, &c.path, seen, first.as_ref())
    }

    /// The key of each of `candidates`, in order, on this thread.
    pub fn keys(&self, candidates: &[Candidate]) -> Vec<u64> {
        self.keys_by(candidates, |c| self.inputs(c))
    }

    /// `keys`, each candidate's inputs being what `inputs` says of it (a store that knows
    /// more while it lists than once it has listed: Claude Code's project listing).
    pub fn keys_by(
        &self,
        candidates: &[Candidate],
        inputs: impl Fn(&Candidate) -> (Vec<PathBuf>, Option<Stat>),
    ) -> Vec<u64> {
        self.with_memo(|memo| {
            (candidates.iter())
                .map(|c| Keyer::key(memo, c, inputs(c), c.stat.as_ref()))
                .collect()
        })
    }

    /// `keys` of `candidates` split over the machine's cores (`chunk_len`).
    pub fn keys_parallel(&self, candidates: &[Candidate]) -> Vec<u64> {
        crate::store::gather_parallel(candidates.chunks(chunk_len(candidates.len())), |part| {
            self.keys(part)
        })
    }

    /// `keys` of a packed survey, `stats` being discovery's (at the same index, or empty),
    /// over the machine's cores. Each thread writes each candidate into one reused
    /// `Candidate`.
    pub fn keys_packed(&self, p: &Packed, stats: &[Option<Stat>]) -> Vec<u64> {
        let n = p.count();
        let chunk = chunk_len(n);
        let parts = (0..n)
            .step_by(chunk)
            .map(|from| from..(from + chunk).min(n));
        crate::store::gather_parallel(parts, |part| {
            let mut c = Candidate {
                id: String::new(),
                path: PathBuf::new(),
                mtime: None,
                stat: None,
            };
            self.with_memo(|memo| {
                part.map(|i| {
                    p.fill(i, &mut c);
                    let seen = stats.get(i).and_then(Option::as_ref);
                    Keyer::key(memo, &c, self.inputs(&c), seen)
                })
                .collect()
            })
        })
    }
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
    Keyer::new(store).keys_parallel(candidates)
}

/// The directory `store` keeps its state files in (every id's file lives there).
fn state_dir(store: &dyn Store) -> Option<PathBuf> {
    store.state_file("-").parent().map(Path::to_path_buf)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::claude_store::ClaudeStore;
    use crate::store::codex_store::CodexStore;
    use crate::store::harness_store::HarnessStore;
    use crate::store::loom_store::LoomStore;
    use crate::store::loop_store::LoopStore;
    use crate::store::pi_store::PiStore;

    /// Each candidate's (id, path, key) of a survey.
    fn seen(p: &Packed) -> Vec<(String, PathBuf, u64)> {
        let mut buf = PathBuf::new();
        let mut v: Vec<_> = (0..p.count())
            .map(|i| {
                (
                    p.id(i).to_string(),
                    p.path(i, &mut buf).to_path_buf(),
                    p.keys[i],
                )
            })
            .collect();
        v.sort();
        v
    }

    /// Keyed from its packed form, or each directory where it is listed (`spool list`'s
    /// survey), a store's survey has the keys of a whole discovery keyed after it, on every
    /// fixture store (Loop's sessions in collections, by name; agent-harness's with the
    /// stats discovery took; loom's files; and, each directory packed and keyed where it is
    /// listed, Codex's rollouts, Claude Code's projects, pi's).
    #[test]
    fn a_survey_keyed_packed_equals_one_keyed_whole() {
        let fx = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
        let d = tempfile::tempdir().unwrap();
        let state = d.path().join("state");
        let stores: Vec<Box<dyn Store>> = vec![
            Box::new(LoopStore::new(&fx.join("loop"))),
            Box::new(HarnessStore::new(&fx.join("harness"))),
            Box::new(LoomStore::new(&fx.join("loom"))),
            Box::new(CodexStore::new(&fx.join("codex"), &state)),
            Box::new(ClaudeStore::new(&fx.join("claude"), &state)),
            Box::new(PiStore::new(&fx.join("pi/sessions"), &state)),
        ];
        for s in &stores {
            let whole = seen(&Packed::of(survey(s.as_ref())));
            assert!(whole.len() >= 2, "{:?}: {whole:?}", s.kind());
            let candidates = s.discover();
            let keys = keys(s.as_ref(), &candidates);
            let after = seen(&Packed::of(Survey { candidates, keys }));
            assert_eq!(whole, after, "{:?}", s.kind());
            assert_eq!(seen(&packed(s.as_ref())), whole, "{:?}", s.kind());
        }
    }
}
