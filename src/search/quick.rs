//! The quick search over the list (`/`): precise, so a query finds the sessions that say it.
//!
//! The query is parsed with nucleo's fzf syntax (`'exact`, `^prefix`, `suffix$`, `!not`);
//! its terms are ANDed, in any order. A term matches the title fuzzily but tightly (its
//! letters contiguous, or, for terms of five letters or more, with one letter left out inside
//! one word), and the summary and first prompt only as a substring (smart case), never as
//! letters scattered over a long text: that is what made almost every session match before.
//! Sessions whose title holds more terms rank first; ties go to the more recent session.
//!
//! Matching runs synchronously in `tick` over compact items (the title as nucleo's UTF-32
//! string, the other fields lower-cased once), refining the previous matches when the query
//! only grew; at 100k sessions that is a few milliseconds, see `benches/browser.rs`.

use std::ops::Range;
use std::sync::Arc;

use memchr::memmem;
use nucleo::pattern::{Atom, AtomKind, CaseMatching, Normalization, Pattern};
use nucleo::{Config, Matcher, Utf32Str, Utf32String};

use crate::model::{SessionSummary, StoreKind};
use crate::text::{one_line, truncate_chars};

/// Identity of a session across reloads: its store and id (never its row number).
pub type Key = (StoreKind, String);

/// How much of a first prompt / summary is searched (long pastes would only slow matching
/// down without helping anyone find a session).
const FIELD_CAP: usize = 400;

/// Fuzzy title terms this long or longer may leave out one letter inside a word; shorter ones
/// must appear as written (three letters with a gap match nearly any title).
const FUZZY_MIN_LEN: usize = 5;

/// The text a session is matched on: title, project, first prompt and summary, one line each.
pub fn haystack(s: &SessionSummary) -> String {
    format!(
        "{} {} {} {}",
        one_line(&s.title),
        s.project(),
        truncate_chars(&one_line(&s.first_prompt), FIELD_CAP),
        truncate_chars(&one_line(&s.summary), FIELD_CAP)
    )
}

/// One session as the matcher sees it: only what it matches (its identity is the shared
/// row beside it in `Search::rows`, not a copy of the id).
struct Item {
    title: Utf32String,
    /// Summary, first prompt and project (cwd basename), one line each, capped, `\n` apart;
    /// `None` when it is already all lower case (then `lower` is the text: one copy, not two).
    text: Option<Box<str>>,
    /// The text lower-cased, for terms without capitals.
    lower: Box<str>,
    /// Seconds of last activity (ties go to the more recent session).
    recency: i64,
}

impl Item {
    fn new(s: &SessionSummary) -> Item {
        let text = format!(
            "{}\n{}\n{}",
            truncate_chars(&one_line(&s.summary), FIELD_CAP),
            truncate_chars(&one_line(&s.first_prompt), FIELD_CAP),
            one_line(s.project())
        );
        let lower = text.to_lowercase();
        Item {
            title: Utf32String::from(one_line(&s.title).as_str()),
            text: (lower != text).then(|| text.into()),
            lower: lower.into(),
            recency: s.last_activity().map_or(i64::MIN, |t| t.timestamp()),
        }
    }

    /// Summary and prompt, each in the case the term asks for.
    fn fields(&self, case_sensitive: bool) -> (&str, [&str; 2]) {
        let t: &str = match &self.text {
            Some(text) if case_sensitive => text,
            _ => &self.lower,
        };
        let (a, b) = t.split_once('\n').unwrap_or((t, ""));
        (t, [a, b])
    }
}

/// Matcher items for a run of rows, built off the UI thread (lower-casing 100k rows' text
/// held the browser's first key for over a second, issue 10) and handed to `Search::install`.
pub struct Built {
    items: Vec<Item>,
    rows: Vec<Arc<SessionSummary>>,
}

impl Built {
    pub fn of(rows: Vec<Arc<SessionSummary>>) -> Built {
        Built {
            items: rows.iter().map(|s| Item::new(s)).collect(),
            rows,
        }
    }
}

/// One parsed term of the query.
struct Term {
    atom: Atom,
    /// The needle as text (lower-cased unless it has capitals: smart case).
    needle: String,
    case_sensitive: bool,
    finder: memmem::Finder<'static>,
}

/// How well a session matched: more terms in the title first, then terms written as they
/// stand in the title, then terms that start a word of the title (`port` finds "Port the
/// suite" before "export"), then recency.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Rank {
    title_terms: u16,
    title_exact: u16,
    title_word_start: u16,
    recency: i64,
}

/// How one term matched a title.
#[derive(Clone, Copy)]
struct TitleHit {
    /// Contiguous, as written.
    exact: bool,
    /// The match begins a word.
    word_start: bool,
}

/// Whether char `i` of `hay` begins a word.
fn starts_word(hay: Utf32Str<'_>, i: u32) -> bool {
    i == 0 || !hay.get(i - 1).is_alphanumeric()
}

/// A parsed query: the terms plus a scratch matcher.
struct Query {
    terms: Vec<Term>,
    matcher: Matcher,
    indices: Vec<u32>,
}

impl Query {
    fn parse(q: &str) -> Query {
        let pattern = Pattern::parse(q, CaseMatching::Smart, Normalization::Smart);
        let terms = pattern
            .atoms
            .into_iter()
            .filter(|a| !a.needle_text().is_empty())
            .map(|atom| {
                let needle: String = atom.needle_text().chars().collect();
                let case_sensitive = needle.chars().any(char::is_uppercase);
                let finder = memmem::Finder::new(needle.as_bytes()).into_owned();
                Term {
                    atom,
                    needle,
                    case_sensitive,
                    finder,
                }
            })
            .collect();
        Query {
            terms,
            matcher: Matcher::new(Config::DEFAULT),
            indices: Vec::new(),
        }
    }

    fn is_empty(&self) -> bool {
        self.terms.is_empty()
    }

    /// Whether the query can only narrow `prev`'s matches (so only those need re-checking).
    fn refines(q: &str, prev: &str) -> bool {
        !prev.trim().is_empty() && q.starts_with(prev) && !q.contains(['!', '$', '\\'])
    }

    /// How `item` matches, or `None`.
    fn rank(&mut self, item: &Item) -> Option<Rank> {
        let mut r = Rank {
            title_terms: 0,
            title_exact: 0,
            title_word_start: 0,
            recency: item.recency,
        };
        for i in 0..self.terms.len() {
            let in_title = self.title_match(i, &item.title, None);
            let term = &self.terms[i];
            if term.atom.negative {
                // `!x` excludes a session that says x anywhere it is searched.
                if in_title.is_none() || text_match(term, item) {
                    return None;
                }
                continue;
            }
            match in_title {
                Some(hit) => {
                    r.title_terms += 1;
                    r.title_exact += u16::from(hit.exact);
                    r.title_word_start += u16::from(hit.word_start);
                }
                None if text_match(term, item) => {}
                None => return None,
            }
        }
        Some(r)
    }

    /// Whether term `i` matches `title` (for a negative term: `Some` when the title does
    /// *not* say it, as nucleo's score does). When `out` is given, the matched char
    /// indices are appended to it.
    fn title_match(
        &mut self,
        i: usize,
        title: &Utf32String,
        out: Option<&mut Vec<u32>>,
    ) -> Option<TitleHit> {
        let term = &self.terms[i];
        let hay = title.slice(..);
        if term.atom.negative {
            let s = match out {
                Some(out) => term.atom.indices(hay, &mut self.matcher, out),
                None => term.atom.score(hay, &mut self.matcher),
            };
            return s.map(|_| TitleHit {
                exact: true,
                word_start: false,
            });
        }
        if term.atom.kind != AtomKind::Fuzzy {
            self.indices.clear();
            term.atom
                .indices(hay, &mut self.matcher, &mut self.indices)?;
            let word_start = self.indices.first().is_some_and(|&f| starts_word(hay, f));
            if let Some(out) = out {
                out.extend_from_slice(&self.indices);
            }
            return Some(TitleHit {
                exact: true,
                word_start,
            });
        }
        // Cheap rejection first (most titles); indices only for the few candidates.
        term.atom.score(hay, &mut self.matcher)?;
        self.indices.clear();
        term.atom
            .indices(hay, &mut self.matcher, &mut self.indices)?;
        let (first, last) = (*self.indices.first()?, *self.indices.last()?);
        let n = self.indices.len();
        let gap = (last - first + 1) as usize - n;
        let ok = gap == 0
            || (gap == 1
                && n >= FUZZY_MIN_LEN
                && (first..=last).all(|c| hay.get(c).is_alphanumeric()));
        if !ok {
            return None;
        }
        if let Some(out) = out {
            out.extend_from_slice(&self.indices);
        }
        Some(TitleHit {
            exact: gap == 0,
            word_start: starts_word(hay, first),
        })
    }
}

/// Whether `term` occurs in the item's summary, first prompt or project, as its kind says.
fn text_match(term: &Term, item: &Item) -> bool {
    let (all, fields) = item.fields(term.case_sensitive);
    let n = term.needle.as_str();
    match term.atom.kind {
        AtomKind::Prefix => fields.iter().any(|f| f.starts_with(n)),
        AtomKind::Postfix => fields.iter().any(|f| f.ends_with(n)),
        AtomKind::Exact => fields.contains(&n),
        _ => term.finder.find(all.as_bytes()).is_some(),
    }
}

/// Char positions in `line` of every substring match of the query's terms (smart case), for
/// highlighting a summary or prompt line; sorted and unique.
pub fn line_matches(query: &str, line: &str) -> Vec<usize> {
    let chars: Vec<char> = line.chars().collect();
    let fold = |c: char| c.to_lowercase().next().unwrap_or(c);
    let mut out = Vec::new();
    for term in Query::parse(query)
        .terms
        .iter()
        .filter(|t| !t.atom.negative)
    {
        let needle: Vec<char> = term.needle.chars().collect();
        if needle.is_empty() || needle.len() > chars.len() {
            continue;
        }
        for start in 0..=chars.len() - needle.len() {
            let hit = needle.iter().zip(&chars[start..]).all(|(&n, &c)| {
                if term.case_sensitive {
                    c == n
                } else {
                    fold(c) == n
                }
            });
            if hit {
                out.extend(start..start + needle.len());
            }
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// Keep the rows that match `q` under the quick-search rules, best first (`list --query`).
pub fn rank_rows(rows: Vec<SessionSummary>, q: &str) -> Vec<SessionSummary> {
    let mut query = Query::parse(q);
    if query.is_empty() {
        return rows;
    }
    let mut ranked: Vec<(Rank, usize, SessionSummary)> = rows
        .into_iter()
        .enumerate()
        .filter_map(|(i, s)| Some((query.rank(&Item::new(&s))?, i, s)))
        .collect();
    ranked.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    ranked.into_iter().map(|(_, _, s)| s).collect()
}

/// Runs at least this long are ranked on two threads.
const SPLIT_FROM: usize = 16_384;

/// The items `ids` that match `query` (parsed from `text`), with their rank, in `ids`' order.
/// A long run is split in two halves ranked at once, the second on a scoped thread with its
/// own scratch matcher: at 100k sessions a query's first letter matches most of them, and
/// ranking them on the UI thread alone held that key 60–130 ms (issue 10).
fn rank_ids(query: &mut Query, text: &str, items: &[Item], ids: &[u32]) -> Vec<(Rank, u32)> {
    let one = |q: &mut Query, ids: &[u32]| -> Vec<(Rank, u32)> {
        ids.iter()
            .filter_map(|&i| Some((q.rank(&items[i as usize])?, i)))
            .collect()
    };
    if ids.len() < SPLIT_FROM {
        return one(query, ids);
    }
    let (a, b) = ids.split_at(ids.len() / 2);
    std::thread::scope(|s| {
        let other = std::thread::Builder::new()
            .name("spool-quick-rank".into())
            .spawn_scoped(s, || one(&mut Query::parse(text), b));
        let mut ranked = one(query, a);
        // No thread (or a failed one): the second half here, as for a short run.
        match other.ok().and_then(|h| h.join().ok()) {
            Some(rest) => ranked.extend(rest),
            None => ranked.extend(one(query, b)),
        }
        ranked
    })
}

/// The quick search: items in, ranked matches and highlight indices out.
pub struct Search {
    items: Vec<Item>,
    /// The row of each item (same index), shared with the list.
    rows: Vec<Arc<SessionSummary>>,
    query: Query,
    text: String,
    /// Matching items (index into `items`) with their rank, best first.
    matches: Vec<(Rank, u32)>,
    /// Items `..scanned` have been matched against the current query.
    scanned: usize,
    /// The matches must be re-ranked from scratch at the next tick.
    dirty: bool,
}

impl Search {
    /// Matching is synchronous in `tick` (milliseconds even at 100k sessions), so nothing
    /// needs waking: `_notify` is kept so the callers stay the same should it move to a
    /// worker again.
    pub fn new(_notify: Arc<dyn Fn() + Sync + Send>) -> Search {
        Search {
            items: Vec::new(),
            rows: Vec::new(),
            query: Query::parse(""),
            text: String::new(),
            matches: Vec::new(),
            scanned: 0,
            dirty: false,
        }
    }

    /// Take items built elsewhere (`Built::of`, on another thread) in place of the current
    /// ones; matched from scratch at the next tick, the old matches visible until then.
    pub fn install(&mut self, built: Built) {
        self.items = built.items;
        self.rows = built.rows;
        self.scanned = 0;
        self.dirty = true;
    }

    /// Add one session to the matcher.
    pub fn push(&mut self, s: Arc<SessionSummary>) {
        self.items.push(Item::new(&s));
        self.rows.push(s);
    }

    /// Room for `n` more sessions: a rebuild of 100k items grew the vector by doubling,
    /// holding old and new buffers at once (2.4 MB of the 10k heap peak, issue 10).
    pub fn reserve(&mut self, n: usize) {
        self.items.reserve_exact(n);
        self.rows.reserve_exact(n);
    }

    /// Replace `old`'s item with `new`'s (the same session re-read), to be matched again at
    /// the next tick; false when `old` is not an item (the caller rebuilds them all).
    pub fn replace(&mut self, old: &Arc<SessionSummary>, new: Arc<SessionSummary>) -> bool {
        let Some(i) = self.rows.iter().position(|r| Arc::ptr_eq(r, old)) else {
            return false;
        };
        self.items[i] = Item::new(&new);
        self.rows[i] = new;
        // Its rank may have changed either way: the matches are taken again (milliseconds,
        // the items themselves are kept).
        self.dirty = true;
        self.scanned = 0;
        true
    }

    /// Drop every item (re-filled by the caller right after); the old matches stay visible
    /// until the next tick, so the list does not blink.
    pub fn clear(&mut self) {
        self.items.clear();
        self.rows.clear();
        self.scanned = 0;
        self.dirty = true;
    }

    pub fn query(&self) -> &str {
        &self.text
    }

    pub fn set_query(&mut self, q: &str) {
        let refine = Query::refines(q, &self.text) && !self.dirty;
        self.query = Query::parse(q);
        self.text = q.to_string();
        if refine {
            // Only the previous matches can still match; the rest waits for `scanned`.
            let ids: Vec<u32> = self.matches.iter().map(|m| m.1).collect();
            self.matches = rank_ids(&mut self.query, &self.text, &self.items, &ids);
            self.matches.sort_unstable_by(|a, b| b.cmp(a));
        } else {
            self.dirty = true;
            self.scanned = 0;
        }
    }

    /// Match what is new (items pushed, query changed); returns whether the matches changed
    /// and whether matching is still running (never: it finishes here).
    pub fn tick(&mut self, _timeout_ms: u64) -> (bool, bool) {
        let changed = self.dirty || self.scanned < self.items.len();
        if self.dirty {
            self.matches.clear();
            self.dirty = false;
        }
        if self.query.is_empty() {
            self.scanned = self.items.len();
            return (changed, false);
        }
        if self.scanned < self.items.len() {
            let ids: Vec<u32> = (self.scanned as u32..self.items.len() as u32).collect();
            let new = rank_ids(&mut self.query, &self.text, &self.items, &ids);
            self.matches.extend(new);
            self.matches.sort_unstable_by(|a, b| b.cmp(a));
            self.scanned = self.items.len();
        }
        (changed, false)
    }

    pub fn matched_count(&self) -> usize {
        self.matches.len()
    }

    pub fn item_count(&self) -> usize {
        self.items.len()
    }

    /// Keys of the matches in `range` (clamped), best first.
    pub fn matched_keys(&self, range: Range<usize>) -> Vec<Key> {
        let end = range.end.min(self.matches.len());
        let start = range.start.min(end);
        self.matches[start..end]
            .iter()
            .map(|m| {
                let s = &self.rows[m.1 as usize];
                (s.store, s.id.clone())
            })
            .collect()
    }

    /// Position of `key` among the matches (a scan; called only when the matches changed).
    pub fn position(&self, key: &Key) -> Option<usize> {
        self.matches.iter().position(|m| {
            let s = &self.rows[m.1 as usize];
            s.store == key.0 && s.id == key.1
        })
    }

    /// Char indices of `title` that match the query, sorted and unique (for highlighting the
    /// visible rows only).
    pub fn highlight(&mut self, title: &str) -> Vec<usize> {
        let title = Utf32String::from(title);
        let mut out = Vec::new();
        for i in 0..self.query.terms.len() {
            if !self.query.terms[i].atom.negative {
                self.query.title_match(i, &title, Some(&mut out));
            }
        }
        let mut v: Vec<usize> = out.into_iter().map(|i| i as usize).collect();
        v.sort_unstable();
        v.dedup();
        v
    }
}

#[cfg(test)]
mod tests;
