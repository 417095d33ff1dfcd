//! The candidates of a query holding a phrase, without reading the positions of every match.
//!
//! tantivy's phrase scorer reads and intersects the positions of its words in every document
//! that holds them all, before a score threshold can skip anything: at 100k sessions
//! `"router test"` pays that for tens of thousands of messages. A phrase's BM25 grows with
//! how often it occurs, which is at most the rarest of its words' counts in the document, so
//! that count gives a score no lower than the true one, from the postings' frequencies alone.
//! Documents are walked on those bounds, and positions are read only for the few whose bound
//! beats the threshold (`top::candidates` raises it as sessions fill the top): the rest cannot
//! place whatever their positions say. The bound is tightened word by word, rarest first, so
//! most documents are dropped on the rarest word's count before the others are sought. A document whose positions hold no phrase is skipped,
//! so no non-match becomes a candidate; the second pass (`top::only`) scores the candidates
//! with tantivy's own query, so the ranking shown is tantivy's exactly.

use tantivy::fieldnorm::FieldNormReader;
use tantivy::postings::{Postings, SegmentPostings};
use tantivy::query::{Bm25Weight, EnableScoring, Query, Scorer};
use tantivy::schema::{Field, IndexRecordOption};
use tantivy::{DocId, DocSet, Score, Searcher, TERMINATED, Term};

use super::columns::ColumnCache;
use super::top::Best;

/// A required clause: one word, or a phrase of several (in order, adjacent).
pub(super) type Clause = Vec<Term>;

/// Our sums may round differently from tantivy's (it adds its clauses in its own order):
/// a document within this fraction of the threshold is kept, so none that can tie is lost.
const MARGIN: Score = 1e-4;

/// Postings of a clause's words in one segment.
struct Open {
    words: Vec<SegmentPostings>,
    bm25: Bm25Weight,
}

/// Like `top::candidates`, for `required` clauses (at least one a phrase) all in one message
/// and none of `excluded`: the numbers of every session whose best message scores at least
/// the `limit`-th best accepted session's (and possibly a few more, never fewer).
pub(super) fn candidates(
    searcher: &Searcher,
    field: Field,
    required: &[Clause],
    excluded: &[Box<dyn Query>],
    columns: &ColumnCache,
    limit: usize,
    accept: &mut dyn FnMut(u64) -> bool,
) -> tantivy::Result<Vec<u64>> {
    if limit == 0 || required.is_empty() {
        return Ok(Vec::new());
    }
    let weights: Vec<Bm25Weight> = required
        .iter()
        .map(|c| Bm25Weight::for_terms(searcher, c))
        .collect::<tantivy::Result<_>>()?;
    let no_scores = EnableScoring::disabled_from_searcher(searcher);
    let excluded: Vec<_> = excluded
        .iter()
        .map(|q| q.weight(no_scores))
        .collect::<tantivy::Result<_>>()?;
    let mut best = Best::new(limit);
    let mut positions = (Vec::new(), Vec::new());
    for seg in searcher.segment_readers() {
        let inv = seg.inverted_index(field)?;
        let mut open = Vec::with_capacity(required.len());
        for (clause, bm25) in required.iter().zip(&weights) {
            let option = if clause.len() > 1 {
                IndexRecordOption::WithFreqsAndPositions
            } else {
                IndexRecordOption::WithFreqs
            };
            let mut words = Vec::with_capacity(clause.len());
            for t in clause {
                match inv.read_postings(t, option)? {
                    Some(p) => words.push(p),
                    None => break,
                }
            }
            if words.len() < clause.len() {
                break;
            }
            open.push(Open {
                words,
                bm25: bm25.clone(),
            });
        }
        if open.len() < required.len() {
            continue; // a word this segment lacks: nothing here matches
        }
        let mut out: Vec<Box<dyn Scorer>> = excluded
            .iter()
            .map(|w| w.scorer(seg, 1.0))
            .collect::<tantivy::Result<_>>()?;
        let norms = seg
            .fieldnorms_readers()
            .get_field(field)?
            .unwrap_or_else(|| FieldNormReader::constant(seg.max_doc(), 1));
        let cols = columns.get(seg)?;
        let sids = &cols.sid;
        let alive = seg.alive_bitset();
        // The rarest word leads the intersection, and each word's frequency tightens the
        // bound as it is read: most documents holding the rarest word are dropped on its
        // count alone, before the other words' postings are sought at all.
        let mut order: Vec<(usize, usize)> = open
            .iter()
            .enumerate()
            .flat_map(|(c, o)| (0..o.words.len()).map(move |w| (c, w)))
            .collect();
        order.sort_by_key(|&(c, w)| open[c].words[w].doc_freq());
        let mut walk = Walk {
            order,
            most: open.iter().map(|o| o.bm25.max_score()).collect(),
            fewest: vec![u32::MAX; open.len()],
        };
        let mut target: DocId = 0;
        while let Some(doc) = walk.next(&mut open, &norms, &best, target) {
            target = doc + 1;
            if alive.is_some_and(|a| a.is_deleted(doc)) {
                continue;
            }
            // Positions first: the filter's verdict (a table row parsed per session) and
            // the exclusions are asked only of documents that hold the phrase and place.
            let norm = norms.fieldnorm_id(doc);
            let mut score = 0.0;
            for o in &mut open {
                let freq = if o.words.len() > 1 {
                    phrase_count(&mut o.words, &mut positions)
                } else {
                    o.words[0].term_freq()
                };
                if freq == 0 {
                    score = Score::NAN;
                    break;
                }
                score += o.bm25.score(norm, freq);
            }
            if score.is_nan() || !best.may_place(score * (1.0 + MARGIN)) {
                continue;
            }
            if out.iter_mut().any(|s| seek(s.as_mut(), doc) == doc) {
                continue;
            }
            let Some(sid) = sids.first(doc) else {
                continue;
            };
            if best.accepted(sid, accept) {
                best.add(sid, score);
            }
        }
    }
    Ok(best.into_sids())
}

/// The intersection walk: the words in the order they are read (rarest first), and per
/// clause the highest score it can have and the lowest count of its words read so far in
/// the current document.
struct Walk {
    order: Vec<(usize, usize)>,
    most: Vec<Score>,
    fewest: Vec<u32>,
}

impl Walk {
    /// The first document at or after `target` that holds every word and whose bound can
    /// place, every postings list left on it; `None` at the end. A phrase occurs at most as
    /// often as its rarest word, so a clause scores at most its BM25 at the lowest count
    /// read so far (a clause not read yet: its highest score); the bound only falls as
    /// words are read, so the document is dropped as soon as it cannot place.
    fn next(
        &mut self,
        open: &mut [Open],
        norms: &FieldNormReader,
        best: &Best,
        mut target: DocId,
    ) -> Option<DocId> {
        'again: loop {
            let (c, w) = self.order[0];
            let doc = seek_postings(&mut open[c].words[w], target);
            if doc == TERMINATED {
                return None;
            }
            target = doc + 1;
            let norm = norms.fieldnorm_id(doc);
            self.fewest.fill(u32::MAX);
            for (i, &(c, w)) in self.order.iter().enumerate() {
                let p = &mut open[c].words[w];
                if i > 0 {
                    let d = seek_postings(p, doc);
                    if d == TERMINATED {
                        return None;
                    }
                    if d > doc {
                        target = d;
                        continue 'again;
                    }
                }
                self.fewest[c] = self.fewest[c].min(p.term_freq());
                let bound: Score = open
                    .iter()
                    .zip(&self.fewest)
                    .zip(&self.most)
                    .map(|((o, &n), &most)| {
                        if n == u32::MAX {
                            most
                        } else {
                            o.bm25.score(norm, n)
                        }
                    })
                    .sum();
                if !best.may_place(bound * (1.0 + MARGIN)) {
                    continue 'again;
                }
            }
            return Some(doc);
        }
    }
}

fn seek(d: &mut dyn Scorer, target: DocId) -> DocId {
    if d.doc() < target {
        d.seek(target)
    } else {
        d.doc()
    }
}

/// The postings on their first document at or after `target`; the next one is a step, not
/// a search (the walk mostly steps the rarest word one document on).
fn seek_postings(p: &mut SegmentPostings, target: DocId) -> DocId {
    let at = p.doc();
    if at >= target {
        at
    } else if at + 1 == target {
        p.advance()
    } else {
        p.seek(target)
    }
}

/// How often the words occur in a row in the current document (tantivy's phrase count with
/// no slop): each word's positions shifted so that a phrase's words all land on one number.
fn phrase_count(words: &mut [SegmentPostings], buf: &mut (Vec<u32>, Vec<u32>)) -> u32 {
    let n = words.len() as u32;
    let (acc, next) = buf;
    words[0].positions_with_offset(n - 1, acc);
    for (i, p) in words.iter_mut().enumerate().skip(1) {
        p.positions_with_offset(n - 1 - i as u32, next);
        let mut j = 0;
        acc.retain(|x| {
            while j < next.len() && next[j] < *x {
                j += 1;
            }
            j < next.len() && next[j] == *x
        });
        if acc.is_empty() {
            return 0;
        }
    }
    acc.len() as u32
}
