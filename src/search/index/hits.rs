//! Querying the index: a `TextQuery` becomes one tantivy query over the message documents,
//! the sessions that can place are found first (`top`), their matches folded (hit count,
//! best message), and only the sessions shown are read again from their files for a snippet.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::ops::Range;
use std::sync::Arc;

use tantivy::collector::{Collector, SegmentCollector};
use tantivy::query::{BooleanQuery, Occur, PhraseQuery, Query, TermQuery};
use tantivy::schema::IndexRecordOption;
use tantivy::snippet::SnippetGenerator;
use tantivy::{DocAddress, DocId, Score, SegmentOrdinal, SegmentReader, Term};

use super::columns::{ColumnCache, Columns};
use super::{Doc, THREADS, TextIndex, each_session_doc, index_err, phrase, top};
use crate::error::Result;
use crate::model::SessionSummary;
use crate::search::Key;
use crate::search::query::TextQuery;
use crate::store::Stores;

/// Up to this many sessions a query finds the candidates first (`top`); above it (the
/// CLI without `--limit`) it folds every match.
const PRUNED_UP_TO: usize = 1000;

/// Characters of text around the best hit shown as its snippet.
const SNIPPET_CHARS: usize = 200;

/// One matching session.
#[derive(Clone, Debug, PartialEq)]
pub struct Hit {
    pub key: Key,
    /// Relevance (BM25 of the best message); higher is better.
    pub score: f32,
    /// Matching messages in the session (the title/summary document counts as one).
    pub hits: usize,
    /// `index` of the best message; `None` when only the title or summary matched.
    pub message: Option<usize>,
    /// 0-based round of that message.
    pub round: Option<usize>,
    pub role: Option<String>,
    /// Display text around the hit (raw: sanitise before printing).
    pub snippet: String,
    /// Byte ranges of `snippet` that matched.
    pub highlights: Vec<Range<usize>>,
}

/// A query as tantivy runs it, and its clauses apart (words per required clause; the
/// excluded clauses' queries) for the phrase walk (`phrase`).
struct Built {
    query: BooleanQuery,
    required: Vec<phrase::Clause>,
    excluded: Vec<Box<dyn Query>>,
}

impl Default for Built {
    fn default() -> Built {
        Built {
            query: BooleanQuery::new(Vec::new()),
            required: Vec::new(),
            excluded: Vec::new(),
        }
    }
}

/// Per-session fold of the matches.
#[derive(Clone, Copy)]
struct Agg {
    /// The session's relevance: its best document's.
    score: Score,
    /// The document shown: the best message, else the title/summary document (a title is
    /// often the first prompt: the message is where the user wants to land).
    best: DocAddress,
    best_score: Score,
    best_is_message: bool,
    hits: usize,
    updated: i64,
}

/// Matches folded per session: `(session number, fold)`.
type Fold = Vec<(u64, Agg)>;

/// Merge `a` into `b` (the same session).
fn merge(b: &mut Agg, a: Agg) {
    b.hits += a.hits;
    b.score = b.score.max(a.score);
    let (ka, kb) = (
        (a.best_is_message, a.best_score),
        (b.best_is_message, b.best_score),
    );
    if ka > kb || (ka == kb && a.best < b.best) {
        b.best = a.best;
        b.best_score = a.best_score;
        b.best_is_message = a.best_is_message;
    }
}

/// Session numbers are hashes already (`session_number`): a map keyed by them needs no
/// hashing again (at 100k a common word folds a hundred thousand sessions per query).
#[derive(Default)]
struct SidHasher(u64);

impl Hasher for SidHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(*b);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

/// Folds every matching document into its session, reading the session number and recency
/// from fast fields (no stored document is touched). A session's documents are added in
/// one run, so within a segment they come in a row: folding into the last entry avoids a
/// hash lookup per document (at 100k sessions a word can match a million messages).
struct SessionCollector<'a>(&'a ColumnCache);

struct SegmentFold {
    ord: SegmentOrdinal,
    cols: Arc<Columns>,
    fold: Fold,
}

impl Collector for SessionCollector<'_> {
    type Fruit = Fold;
    type Child = SegmentFold;

    fn for_segment(
        &self,
        ord: SegmentOrdinal,
        seg: &SegmentReader,
    ) -> tantivy::Result<SegmentFold> {
        Ok(SegmentFold {
            ord,
            cols: self.0.get(seg)?,
            fold: Vec::new(),
        })
    }

    fn requires_scoring(&self) -> bool {
        true
    }

    fn merge_fruits(&self, fruits: Vec<Fold>) -> tantivy::Result<Fold> {
        // Runs of one session can still be split: tantivy's indexing threads interleave the
        // batches of our reading threads, and a re-indexed session lands in a new segment.
        let n = fruits.iter().map(Vec::len).sum();
        let mut all: HashMap<u64, Agg, BuildHasherDefault<SidHasher>> =
            HashMap::with_capacity_and_hasher(n, Default::default());
        for (sid, a) in fruits.into_iter().flatten() {
            all.entry(sid).and_modify(|b| merge(b, a)).or_insert(a);
        }
        Ok(all.into_iter().collect())
    }
}

impl SegmentCollector for SegmentFold {
    type Fruit = Fold;

    fn collect(&mut self, doc: DocId, score: Score) {
        let c = &*self.cols;
        let Some(sid) = c.sid.first(doc) else {
            return;
        };
        let a = Agg {
            score,
            best: DocAddress::new(self.ord, doc),
            best_score: score,
            best_is_message: c.message.first(doc).is_some_and(|m| m != u64::MAX),
            hits: 1,
            updated: c.updated.first(doc).unwrap_or(i64::MIN),
        };
        match self.fold.last_mut() {
            Some((last, b)) if *last == sid => merge(b, a),
            _ => self.fold.push((sid, a)),
        }
    }

    fn harvest(self) -> Fold {
        self.fold
    }
}

/// Listing rows read from the session table during one query, `None` for a session the
/// filter turned down (or the table lacks): each parsed once.
type Rows = HashMap<u64, Option<SessionSummary>, BuildHasherDefault<SidHasher>>;

impl TextIndex {
    /// The row of session `sid` if `accept` lets it through, from `rows` or the table.
    fn row<'a>(
        &self,
        rows: &'a mut Rows,
        accept: &dyn Fn(&SessionSummary) -> bool,
        sid: u64,
    ) -> &'a Option<SessionSummary> {
        rows.entry(sid).or_insert_with(|| {
            let r = self.sessions.get().row(sid)?;
            accept(&r).then_some(r)
        })
    }

    /// The best `limit` sessions of `fold` that `row` accepts (giving their listing row),
    /// best first. Only the top few are sorted (a common word matches nearly every session
    /// at 100k); the whole fold only when filters left too few of them.
    fn best(
        &self,
        mut fold: Fold,
        row: &mut dyn FnMut(u64) -> Option<SessionSummary>,
        limit: usize,
    ) -> Vec<(SessionSummary, Agg)> {
        let order = |(sa, a): &(u64, Agg), (sb, b): &(u64, Agg)| {
            b.score
                .total_cmp(&a.score)
                .then(b.updated.cmp(&a.updated))
                .then(sa.cmp(sb))
        };
        let mut pick = |fold: &[(u64, Agg)]| -> Vec<(SessionSummary, Agg)> {
            fold.iter()
                .filter_map(|(sid, a)| Some((row(*sid)?, *a)))
                .take(limit)
                .collect()
        };
        let top = limit.saturating_mul(4).saturating_add(64);
        if top < fold.len() {
            fold.select_nth_unstable_by(top, order);
            fold[..top].sort_unstable_by(order);
            let got = pick(&fold[..top]);
            if got.len() >= limit {
                return got;
            }
        }
        fold.sort_unstable_by(order);
        pick(&fold)
    }

    /// The tantivy query for `q`: every required word or phrase in one message, none of the
    /// excluded. `None` when a required term has nothing the tokenizer keeps (`"!!!"`).
    fn build_query(&self, q: &TextQuery) -> Result<Option<Built>> {
        let mut analyzer = self
            .index
            .tokenizer_for_field(self.f.text)
            .map_err(|e| index_err(&self.dir, e))?;
        let mut terms_of = |text: &str| -> Vec<Term> {
            let mut terms = Vec::new();
            let mut stream = analyzer.token_stream(text);
            while stream.advance() {
                terms.push(Term::from_field_text(self.f.text, &stream.token().text));
            }
            terms
        };
        let clause = |mut terms: Vec<Term>| -> Option<Box<dyn Query>> {
            match terms.len() {
                0 => None,
                1 => Some(Box::new(TermQuery::new(
                    terms.remove(0),
                    IndexRecordOption::WithFreqs,
                ))),
                _ => Some(Box::new(PhraseQuery::new(terms))),
            }
        };
        let mut built = Built::default();
        let mut clauses = Vec::new();
        for t in &q.required {
            let terms = terms_of(t);
            built.required.push(terms.clone());
            match clause(terms) {
                Some(c) => clauses.push((Occur::Must, c)),
                None => return Ok(None),
            }
        }
        for t in &q.excluded {
            if let Some(c) = clause(terms_of(t)) {
                built.excluded.push(c.box_clone());
                clauses.push((Occur::MustNot, c));
            }
        }
        built.query = BooleanQuery::new(clauses);
        Ok(Some(built))
    }

    /// Sessions matching `q` that `accept` lets through, best first (relevance, then the
    /// more recent session), at most `limit`; without snippets or roles, which come from
    /// the sessions' files (`search_rows`).
    pub fn search(
        &self,
        q: &TextQuery,
        accept: &dyn Fn(&Key) -> bool,
        limit: usize,
    ) -> Result<Vec<Hit>> {
        let hits = self.search_rows(q, &|r| accept(&(r.store, r.id.to_string())), limit, None)?;
        Ok(hits.into_iter().map(|(h, _)| h).collect())
    }

    /// The same, filtering on the sessions' listing rows (as the index's table holds them:
    /// title, last activity, archived, empty, cwd), returned with each hit. Only the rows of
    /// the sessions that can place are read from the table. With `stores`, each hit's
    /// snippet and role are cut from its session's files.
    pub fn search_rows(
        &self,
        q: &TextQuery,
        accept: &dyn Fn(&SessionSummary) -> bool,
        limit: usize,
        stores: Option<&Stores>,
    ) -> Result<Vec<(Hit, SessionSummary)>> {
        let Some(built) = self.build_query(q)? else {
            return Ok(Vec::new());
        };
        let query = &built.query;
        let searcher = self.reader.searcher();
        self.columns.keep_only(&searcher);
        let mut rows = Rows::default();
        let err = |e| index_err(&self.dir, e);
        let fold = if limit <= PRUNED_UP_TO {
            // The few sessions that can place, then their matches folded exactly. The
            // verdict alone is asked here: no row is copied for a session that cannot place.
            let mut accept = |sid| self.row(&mut rows, accept, sid).is_some();
            // A phrase reads positions only where a document can place (`phrase`).
            let mut sids = if built.required.iter().any(|c| c.len() > 1) {
                phrase::candidates(
                    &searcher,
                    self.f.text,
                    &built.required,
                    &built.excluded,
                    &self.columns,
                    limit,
                    &mut accept,
                )
            } else {
                top::candidates(&searcher, query, &self.columns, limit, &mut accept)
            }
            .map_err(err)?;
            sids.sort_unstable();
            if sids.is_empty() {
                Vec::new()
            } else {
                let only = top::only(query, self.f, &sids);
                let collector = SessionCollector(&self.columns);
                searcher.search(&only, &collector).map_err(err)?
            }
        } else {
            searcher
                .search(query, &SessionCollector(&self.columns))
                .map_err(err)?
        };
        let mut row = |sid: u64| self.row(&mut rows, accept, sid).clone();
        let ranked = self.best(fold, &mut row, limit);
        let mut snippets = SnippetGenerator::create(&searcher, query, self.f.text)
            .map_err(|e| index_err(&self.dir, e))?;
        snippets.set_max_num_chars(SNIPPET_CHARS);
        // Where each best document is (fast fields), then its text again, from the
        // sessions' files (nothing is stored), the sessions spread over `THREADS`.
        let places: Vec<[Option<usize>; 3]> = ranked
            .iter()
            .map(|(_, a)| {
                let seg = searcher.segment_reader(a.best.segment_ord);
                let Ok(c) = self.columns.get(seg) else {
                    return [None; 3];
                };
                [&c.message, &c.round, &c.ord].map(|col| {
                    col.first(a.best.doc_id)
                        .filter(|&n| n != u64::MAX)
                        .map(|n| n as usize)
                })
            })
            .collect();
        let mut texts: Vec<Option<Doc>> = vec![None; ranked.len()];
        if let Some(stores) = stores {
            let jobs: Vec<(usize, &SessionSummary, usize)> = ranked
                .iter()
                .zip(&places)
                .enumerate()
                .filter_map(|(i, ((r, _), p))| Some((i, r, p[2]?)))
                .collect();
            let chunk = jobs.len().div_ceil(THREADS).max(1);
            let got = crate::store::gather_parallel(jobs.chunks(chunk), |part| {
                part.iter()
                    .map(|&(i, r, ord)| {
                        let mut found = None;
                        each_session_doc(stores, r, &mut |at, d| {
                            if at == ord {
                                found = Some(d);
                            }
                            at < ord
                        });
                        (i, found)
                    })
                    .collect()
            });
            for (i, d) in got {
                texts[i] = d;
            }
        }
        let mut out = Vec::with_capacity(ranked.len());
        for (((r, a), [message, round, _]), doc) in ranked.into_iter().zip(places).zip(texts) {
            let (text, role) = doc.map_or((String::new(), None), |d| (d.text, d.role));
            let snip = snippets.snippet(&text);
            let (snippet, highlights) = if snip.is_empty() {
                (
                    crate::text::truncate_chars(&text, SNIPPET_CHARS),
                    Vec::new(),
                )
            } else {
                (snip.fragment().to_string(), snip.highlighted().to_vec())
            };
            let hit = Hit {
                key: (r.store, r.id.to_string()),
                score: a.score,
                hits: a.hits,
                message,
                round,
                role,
                snippet,
                highlights,
            };
            out.push((hit, r));
        }
        Ok(out)
    }
}
