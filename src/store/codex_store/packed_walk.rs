//! A whole discovery of Codex's rollouts held packed from the walk on, for the browser's
//! survey. Issue 10: held as entries, each rollout's id, whole path and `lstat` (about 340
//! bytes with the walk's lists and the vector they were gathered into) were the largest part
//! of a warm start's peak at 100k rollouts, on top of the decoded rows. Here each
//! directory's walk is packed on the thread that walked it, what discovery keeps is chosen
//! over the packed ids (`discover::choose`, the same rules), and the kept-by-id table and
//! the survey are made from the pieces, an entry at a time.

use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use super::discover::{self, Found, Step};
use super::found::{ById, Filling, Lent};
use crate::catalog::packed::{Listed, Packed};
use crate::catalog::survey::Keyer;
use crate::store::Candidate;

/// One directory's rollouts (or a run of the plan's own), packed and keyed, with what
/// discovery keeps them by.
struct Piece {
    packed: Packed,
    /// Per rollout: found as, archived, a `.zst`.
    what: Vec<(Found, bool, bool)>,
}

impl Piece {
    fn of(steps: Vec<Step>, keyer: &Keyer<'_>) -> Piece {
        let mut what = Vec::new();
        let found: Vec<Candidate> = (steps.into_iter())
            .filter_map(|s| match s {
                Step::Found(e, zst) => {
                    what.push((e.found, e.archived, zst));
                    Some(Candidate::from(e))
                }
                // A walk with nothing left for later names no directory.
                Step::Later(..) => None,
            })
            .collect();
        Piece {
            packed: Packed::keyed(found, keyer),
            what,
        }
    }

    /// The piece's survey with only the rollouts `kept` says are kept (most pieces keep all).
    fn survey(self, kept: &[Option<bool>]) -> Packed {
        if kept.iter().all(Option::is_some) {
            return self.packed;
        }
        let keep: Vec<usize> = (0..kept.len()).filter(|&i| kept[i].is_some()).collect();
        let found = keep.iter().map(|&i| self.packed.with(i, Candidate::clone));
        let (mut p, _) = Packed::pack(found.collect());
        p.keys = keep.iter().map(|&i| self.packed.keys[i]).collect();
        p
    }
}

/// Every rollout under `root` as discovery keeps them (`discover::discover_unordered`, in
/// walk order), packed and keyed by `keyer` from the stats the walk took, and the
/// kept-by-id table of the same entries (`keep`).
pub(super) fn walk(root: &Path, keyer: &Keyer<'_>) -> (Packed, ById) {
    let plan = discover::plan(root, true);
    let later: Vec<(PathBuf, usize, bool)> = (plan.iter())
        .filter_map(|s| match s {
            Step::Later(dir, depth, archived) => Some((dir.clone(), *depth, *archived)),
            Step::Found(..) => None,
        })
        .collect();
    let walked = crate::store::fanout::in_order(&later, |(dir, depth, archived)| {
        Piece::of(discover::walk_later(dir, *depth, *archived, true), keyer)
    });
    // In the plan's order: each run of its own rollouts a piece, each directory left for
    // later replaced by its walk's.
    let mut walked = walked.into_iter();
    let mut pieces = Vec::new();
    let mut run = Vec::new();
    for step in plan {
        match step {
            Step::Found(..) => run.push(step),
            Step::Later(..) => {
                if !run.is_empty() {
                    pieces.push(Piece::of(std::mem::take(&mut run), keyer));
                }
                pieces.extend(walked.next());
            }
        }
    }
    if !run.is_empty() {
        pieces.push(Piece::of(run, keyer));
    }
    // Each rollout's place in walk order: its piece and its index there.
    let at: Vec<(u32, u32)> = (pieces.iter().enumerate())
        .flat_map(|(p, piece)| (0..piece.what.len()).map(move |i| (p as u32, i as u32)))
        .collect();
    let place = |g: usize| (at[g].0 as usize, at[g].1 as usize);
    let kept = discover::choose(
        at.len(),
        |g| {
            let (p, i) = place(g);
            pieces[p].packed.id(i)
        },
        |g| {
            let (p, i) = place(g);
            pieces[p].what[i]
        },
    );
    let mut buf = PathBuf::new();
    // The kept ones' places first, so the table knows their number (no spare room).
    let keep: Vec<u32> = (0..at.len() as u32)
        .filter(|&g| kept[g as usize].is_some())
        .collect();
    let mut by_id = Filling::with_capacity(keep.len());
    for &g in &keep {
        let g = g as usize;
        let (p, i) = place(g);
        let (piece, (found, archived, _)) = (&pieces[p], pieces[p].what[i]);
        by_id.push(Lent {
            id: piece.packed.id(i),
            path: piece.packed.path(i, &mut buf).as_os_str().as_bytes(),
            found,
            archived,
            duplicate_in_archive: kept[g].unwrap_or_default(),
        });
    }
    let by_id = by_id.done();
    drop(keep);
    let mut from = 0;
    let pieces = (pieces.into_iter())
        .map(|piece| {
            let n = piece.what.len();
            from += n;
            piece.survey(&kept[from - n..from])
        })
        .collect();
    (Packed::join(pieces), by_id)
}

#[cfg(test)]
#[path = "packed_walk_tests.rs"]
mod tests;
