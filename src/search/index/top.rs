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

/// Candidates kept before the threshold is raised again, beyond twice the limit.
const SLACK: usize = 16;

/// The numbers of the sessions that can be among the best `limit` that `accept` lets
/// through: every session whose best document scores at least the `limit`-th best one's
/// (ties kept; recency breaks them later).
pub(super) fn candidates(
    searcher: &Searcher,
    query: &dyn Query,
    limit: usize,
    accept: &mut dyn FnMut(u64) -> bool,
) -> tantivy::Result<Vec<u64>> {
    if limit == 0 {
        return Ok(Vec::new());
    }
    let weight = query.weight(EnableScoring::enabled_from_searcher(searcher))?;
    let mut best: HashMap<u64, Score> = HashMap::new();
    let mut verdict: HashMap<u64, bool> = HashMap::new();
    let mut threshold = Score::MIN;
    for seg in searcher.segment_readers() {
        let sids = seg.fast_fields().u64("sid")?;
        let alive = seg.alive_bitset();
        weight.for_each_pruning(threshold, seg, &mut |doc, score| {
            if alive.is_some_and(|a| a.is_deleted(doc)) {
                return threshold;
            }
            let Some(sid) = sids.first(doc) else {
                return threshold;
            };
            if !*verdict.entry(sid).or_insert_with(|| accept(sid)) {
                return threshold;
            }
            let b = best.entry(sid).or_insert(score);
            *b = b.max(score);
            if best.len() > limit * 2 + SLACK {
                let mut scores: Vec<Score> = best.values().copied().collect();
                let (_, kth, _) = scores.select_nth_unstable_by(limit - 1, |a, b| b.total_cmp(a));
                let kth = *kth;
                best.retain(|_, s| *s >= kth);
                // Just below: a document scoring as the limit-th still ties, and the more
                // recent session wins a tie.
                threshold = below(kth);
            }
            threshold
        })?;
    }
    Ok(best.into_keys().collect())
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
