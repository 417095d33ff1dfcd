//! The sessions a query shows, found without folding every match into its session: one
//! pass keeps only the best-scoring sessions the filter accepts, raising a score threshold
//! as it goes, so tantivy skips the documents (and blocks of them, for one word) that cannot
//! place; a second pass folds exactly the matches of those few sessions (hit counts, best
//! message). At 100k sessions a common word matches a million messages: the first pass reads
//! the session number of those above the threshold only, the second a few thousand.

use std::collections::HashMap;

use tantivy::query::{BooleanQuery, ConstScoreQuery, EnableScoring, Occur, Query, TermQuery};
use tantivy::schema::IndexRecordOption;
use tantivy::{Score, Searcher, Term};

use super::Fields;
use super::columns::ColumnCache;

/// Candidates kept before the threshold is raised again, beyond twice the limit.
const SLACK: usize = 16;

/// The numbers of the sessions that can be among the best `limit` that `accept` lets
/// through: every session whose best document scores at least the `limit`-th best one's
/// (ties kept; recency breaks them later).
pub(super) fn candidates(
    searcher: &Searcher,
    query: &dyn Query,
    columns: &ColumnCache,
    limit: usize,
    accept: &mut dyn FnMut(u64) -> bool,
) -> tantivy::Result<Vec<u64>> {
    if limit == 0 {
        return Ok(Vec::new());
    }
    let weight = query.weight(EnableScoring::enabled_from_searcher(searcher))?;
    let mut best = Best::new(limit);
    for seg in searcher.segment_readers() {
        let cols = columns.get(seg)?;
        let sids = &cols.sid;
        let alive = seg.alive_bitset();
        weight.for_each_pruning(best.threshold, seg, &mut |doc, score| {
            if alive.is_some_and(|a| a.is_deleted(doc)) {
                return best.threshold;
            }
            let Some(sid) = sids.first(doc) else {
                return best.threshold;
            };
            if best.accepted(sid, accept) {
                best.add(sid, score);
            }
            best.threshold
        })?;
    }
    Ok(best.into_sids())
}

/// The best-scoring sessions so far, each by its best document, and the threshold a
/// document must beat to place: one at the `limit`-th best score still ties (the more
/// recent session wins a tie), so it sits just below that.
pub(super) struct Best {
    limit: usize,
    best: HashMap<u64, Score>,
    verdict: HashMap<u64, bool>,
    pub threshold: Score,
}

impl Best {
    pub fn new(limit: usize) -> Best {
        Best {
            limit: limit.max(1),
            best: HashMap::new(),
            verdict: HashMap::new(),
            threshold: Score::MIN,
        }
    }

    /// Whether a document scoring `score` can still place.
    pub fn may_place(&self, score: Score) -> bool {
        score > self.threshold
    }

    /// Whether the filter lets this session through (asked once per session).
    pub fn accepted(&mut self, sid: u64, accept: &mut dyn FnMut(u64) -> bool) -> bool {
        *self.verdict.entry(sid).or_insert_with(|| accept(sid))
    }

    pub fn add(&mut self, sid: u64, score: Score) {
        let b = self.best.entry(sid).or_insert(score);
        *b = b.max(score);
        if self.best.len() > self.limit * 2 + SLACK {
            let mut scores: Vec<Score> = self.best.values().copied().collect();
            let (_, kth, _) = scores.select_nth_unstable_by(self.limit - 1, |a, b| b.total_cmp(a));
            let kth = *kth;
            self.best.retain(|_, s| *s >= kth);
            self.threshold = below(kth);
        }
    }

    pub fn into_sids(self) -> Vec<u64> {
        self.best.into_keys().collect()
    }
}

/// The largest score below `s`.
fn below(s: Score) -> Score {
    if s > 0.0 {
        f32::from_bits(s.to_bits() - 1)
    } else {
        s - f32::EPSILON
    }
}

/// `query` restricted to these sessions, scoring as `query` alone. One term lookup per
/// session (a `TermSetQuery` would stream every session number of every segment).
pub(super) fn only(query: &dyn Query, f: Fields, sids: &[u64]) -> BooleanQuery {
    let any: Vec<(Occur, Box<dyn Query>)> = sids
        .iter()
        .map(|s| {
            let term = Term::from_field_u64(f.sid, *s);
            let q: Box<dyn Query> = Box::new(TermQuery::new(term, IndexRecordOption::Basic));
            (Occur::Should, q)
        })
        .collect();
    let set = BooleanQuery::new(any);
    BooleanQuery::new(vec![
        (Occur::Must, query.box_clone()),
        (
            Occur::Must,
            Box::new(ConstScoreQuery::new(Box::new(set), 0.0)),
        ),
    ])
}
