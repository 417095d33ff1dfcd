//! The quick search over the list (`/`): precise, so a query finds the sessions that say it.
//!
//! The query is parsed with nucleo's fzf syntax (`'exact`, `^prefix`, `suffix$`, `!not`);
//! its terms are ANDed, in any order. A term matches the title fuzzily but tightly (its
//! letters contiguous, or, for terms of five letters or more, with one letter left out inside
//! one word), and the summary and first prompt only as a substring (smart case), never as
//! letters scattered over a long text: that is what made almost every session match before.
//! Sessions whose title holds more terms rank first; ties go to the more recent session.
//!
//! Matching runs synchronously in `tick` over compact items (`item`: the text lower-cased
//! once into bytes, which capitals the row has as bits), with memchr/memmem and the title rule written out
//! (`tight`) instead of nucleo's scorer, refining the previous matches when the query only
//! grew. Only the top rows are put in order at once; the rest when a row below them or a
//! position is asked for. See `benches/browser.rs` and `examples/quick_keys.rs`.

use std::cell::{Cell, RefCell};
use std::ops::Range;
use std::sync::Arc;

use nucleo::Utf32String;

use crate::model::{SessionSummary, StoreKind};
use crate::text::{one_line, truncate_chars};

mod item;
mod matching;
mod own;
mod pairs;
mod plain;
mod swap;
mod tight;

use item::{Item, Row, Titles};
use matching::{Query, Rank, Refine, Seen};

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
        one_line(s.title()),
        s.project(),
        truncate_chars(&one_line(s.first_prompt()), FIELD_CAP),
        truncate_chars(&one_line(s.summary()), FIELD_CAP)
    )
}

/// Matcher items for a run of rows, built off the UI thread (lower-casing 100k rows' text
/// held the browser's first key for over a second, issue 10) and handed to `Search::install`.
pub struct Built {
    items: Vec<Item>,
    titles: Titles,
}

impl Built {
    /// Items for `rows`, in their order: a long list's in two halves on two threads, as the
    /// build is the last of a warm start's work and the other core is then idle (issue 10).
    pub fn of(rows: Vec<Arc<SessionSummary>>) -> Built {
        if rows.len() < HALVES_FROM {
            return Built::part(&rows);
        }
        let (a, b) = rows.split_at(rows.len() / 2);
        std::thread::scope(|scope| {
            let second = std::thread::Builder::new()
                .name("spool-quick-half".into())
                .spawn_scoped(scope, || Built::part(b));
            let mut built = Built::part(a);
            let rest = match second {
                Ok(h) => h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)),
                // No thread to be had: this one builds the second half too.
                Err(_) => Built::part(b),
            };
            built.items.extend(rest.items);
            built.titles.append(rest.titles);
            built
        })
    }

    fn part(rows: &[Arc<SessionSummary>]) -> Built {
        let mut scratch = Vec::new();
        let items: Vec<Item> = (rows.iter())
            .map(|s| Item::new_in(s, &mut scratch))
            .collect();
        let recency = rows.iter().map(|s| item::recency_of(s)).collect();
        Built {
            titles: Titles::of(&items, recency),
            items,
        }
    }
}

/// Lists at least this long have their items built in two halves on two threads; below it a
/// second thread costs more than it saves.
const HALVES_FROM: usize = 4_096;

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
        .filter_map(|(i, s)| {
            let s = Arc::new(s);
            let rank = {
                let item = Item::new(&s);
                let pairs = item.pairs();
                let lower = item.title_lower();
                let title = item::folded(lower.as_bytes());
                let row = Row::of(&title, &pairs, item::recency_of(&s));
                query.rank(&item, row, None)?.0
            };
            // The item is gone: the row is this `Arc`'s alone again.
            let s = Arc::try_unwrap(s).unwrap_or_else(|s| (*s).clone());
            Some((rank, i, s))
        })
        .collect();
    ranked.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    ranked.into_iter().map(|(_, _, s)| s).collect()
}

/// Runs at least this long are ranked on two threads. A row the letter bits do not settle
/// costs a few cache misses (its title, pairs and text live apart), about 240 ns: the third
/// key of a query at 100k re-checks some 30k rows, 7 ms on one core; a thread costs ~50 µs.
const SPLIT_FROM: usize = 16_384;

/// A match: its rank, its item, and where its text said the last term.
type Match = (Rank, u32, Seen);

/// What the last query's matches tell this one about its term `term` (`Query::rank`):
/// whether it grew to `FUZZY_MIN_LEN` (`widened`), and whether every other term is as it was
/// (`same_rank`: the last term grew, narrowing). Then a match whose text said the shorter term
/// keeps its rank, since the grown term is not in its title either and the rest is unchanged;
/// only its text is read again (`Query::said_from`). Ranking such a row in full read its
/// item, letter pairs and title too: ~7 ms of CPU for `rout` at 100k sessions.
#[derive(Clone, Copy)]
struct Carry {
    term: usize,
    widened: bool,
    same_rank: bool,
}

/// The items `ids` that match `query` (parsed from `text`), with their rank, in `ids`' order;
/// each id comes with its last rank and what the last query saw of its term `hint`.
/// A long run is split in two halves ranked at once, the second on a scoped thread with its
/// own scratch matcher: at 100k sessions a query's first letter matches most of them, and
/// ranking them on the UI thread alone held that key 60–130 ms (issue 10).
///
/// Ranked in place: each half moves its matches to its front, and the second half's are
/// moved down after the first's. Each half collected into a vector of its own, grown by
/// doubling, and then into a third: with the ids, up to four times the matches' 1.6 MB at
/// 100k sessions at once, on every key (issue 10: the keys' transient is in the peak RSS).
fn rank_ids(
    (query, text, hint): (&mut Query, &str, Option<Carry>),
    (items, titles): (&[Item], &Titles),
    mut ids: Vec<Match>,
) -> Vec<Match> {
    let keep = hint.filter(|c| c.same_rank && query.carries(c.term));
    // The matches of `ids`, moved to its front; returns how many.
    let one = |q: &mut Query, ids: &mut [Match]| -> usize {
        let mut n = 0;
        for k in 0..ids.len() {
            let (old, i, h) = ids[k];
            let ranked = match keep.filter(|_| h > 0) {
                Some(c) => (q.said_from(c.term, &items[i as usize], h)).map(|seen| (old, i, seen)),
                None => {
                    let hint = hint.map(|c| (c.term, h, c.widened));
                    (q.rank(&items[i as usize], titles.get(i as usize), hint))
                        .map(|(rank, seen)| (rank, i, seen))
                }
            };
            if let Some(m) = ranked {
                ids[n] = m;
                n += 1;
            }
        }
        n
    };
    let (kept, moved) = if ids.len() < SPLIT_FROM {
        (one(query, &mut ids), None)
    } else {
        let half = ids.len() / 2;
        let (a, b) = ids.split_at_mut(half);
        let (na, nb) = std::thread::scope(|s| {
            let other = std::thread::Builder::new()
                .name("spool-quick-rank".into())
                .spawn_scoped(s, || one(&mut Query::parse(text), b));
            let na = one(query, a);
            // A panic there is one here, as it would have been on this thread alone; a
            // half it never started is ranked below.
            let nb =
                (other.ok()).map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)));
            (na, nb)
        });
        let nb = nb.unwrap_or_else(|| one(query, &mut ids[half..]));
        (na, Some((half, nb)))
    };
    let mut n = kept;
    if let Some((half, nb)) = moved {
        ids.copy_within(half..half + nb, n);
        n += nb;
    }
    ids.truncate(n);
    // Few matches of many ids: the rest of the room is given back (a mapped block shrinks
    // where it lies).
    if n < ids.capacity() / 2 {
        ids.shrink_to_fit();
    }
    ids
}

/// Not among the last matches (in `set_query`'s map of each item to its place in them).
const NOT: u32 = u32::MAX;

/// Not among the last matches, but its title now matches (`widen`).
const NEW: u32 = u32::MAX - 1;

/// Mark in `was` (`NEW`) the items whose title term `t` of the query now matches,
/// besides those marked already. A long run is split across two threads as in `rank_ids`: the fifth letter
/// of a term checks nearly every title again (`route`, `timeo`: 10 ms and more on one core
/// at 100k sessions).
fn widen(
    (query, text, t): (&mut Query, &str, usize),
    (items, titles): (&[Item], &Titles),
    was: &mut [u32],
) {
    let one = |q: &mut Query, from: usize, was: &mut [u32]| {
        for (j, w) in was.iter_mut().enumerate() {
            if *w == NOT && q.in_title(t, &items[from + j], titles.get(from + j)) {
                *w = NEW;
            }
        }
    };
    if was.len() < SPLIT_FROM {
        return one(query, 0, was);
    }
    let mid = was.len() / 2;
    let done = std::thread::scope(|s| {
        let (a, b) = was.split_at_mut(mid);
        let other = std::thread::Builder::new()
            .name("spool-quick-widen".into())
            .spawn_scoped(s, || one(&mut Query::parse(text), mid, b));
        one(query, 0, a);
        other.ok().is_some_and(|h| h.join().is_ok())
    });
    // No thread (or a failed one): the second half here; what it marked stays marked.
    if !done {
        one(query, mid, &mut was[mid..]);
    }
}

/// Matches put in order at once; the rest when a row below them is read or a position
/// asked for. A first letter matches 90k of 100k sessions, and a full sort of them cost a
/// millisecond or more of a key that must answer in a few.
const TOP: usize = 256;

/// The quick search: items in, ranked matches and highlight indices out.
pub struct Search {
    /// Each item holds its row (`Item::row`), shared with the list.
    items: Vec<Item>,
    titles: Titles,
    query: Query,
    text: String,
    /// Matching items (index into `items`) with their rank: `..ordered` best first, the
    /// rest after them in no order until needed (`order`).
    matches: RefCell<Vec<Match>>,
    ordered: Cell<usize>,
    /// Items `..scanned` have been matched against the current query.
    scanned: usize,
    /// The matches must be re-ranked from scratch at the next tick.
    dirty: bool,
}

/// Best first; equal ranks (no recency) by the later item.
fn best_first(a: &Match, b: &Match) -> std::cmp::Ordering {
    (b.0, b.1).cmp(&(a.0, a.1))
}

impl Search {
    /// Matching is synchronous in `tick` (milliseconds even at 100k sessions), so nothing
    /// needs waking: `_notify` is kept so the callers stay the same should it move to a
    /// worker again.
    pub fn new(_notify: Arc<dyn Fn() + Sync + Send>) -> Search {
        Search {
            items: Vec::new(),
            titles: Titles::default(),
            query: Query::parse(""),
            text: String::new(),
            matches: RefCell::new(Vec::new()),
            ordered: Cell::new(0),
            scanned: 0,
            dirty: false,
        }
    }

    /// Take items built elsewhere (`Built::of`, on another thread) in place of the current
    /// ones; matched from scratch at the next tick, the old matches visible until then.
    pub fn install(&mut self, built: Built) {
        self.items = built.items;
        self.titles = built.titles;
        self.scanned = 0;
        self.dirty = true;
    }

    /// Add one session to the matcher.
    pub fn push(&mut self, s: Arc<SessionSummary>) {
        let item = Item::new(&s);
        self.titles.push(&item, item::recency_of(&s));
        self.items.push(item);
    }

    /// Room for `n` more sessions: a rebuild of 100k items grew the vector by doubling,
    /// holding old and new buffers at once (2.4 MB of the 10k heap peak, issue 10).
    pub fn reserve(&mut self, n: usize) {
        self.items.reserve_exact(n);
        self.titles.reserve(n);
    }

    /// Drop every item (re-filled by the caller right after); the old matches stay visible
    /// until the next tick, so the list does not blink.
    pub fn clear(&mut self) {
        self.items.clear();
        self.titles.clear();
        self.scanned = 0;
        self.dirty = true;
    }

    pub fn query(&self) -> &str {
        &self.text
    }

    pub fn set_query(&mut self, q: &str) {
        let query = Query::parse(q);
        let refine = match self.dirty {
            true => Refine::No,
            false => query.refines(q, &self.query, &self.text),
        };
        let prev_last = self.query.terms.len().saturating_sub(1);
        self.query = query;
        self.text = q.to_string();
        if refine == Refine::No {
            self.dirty = true;
            self.scanned = 0;
            return;
        }
        // Only the previous matches can still match (and, widening, the titles the grown
        // term now matches); the rest waits for `scanned`. They are re-checked in item
        // order, which walks the items' memory forwards, each with where its text said the
        // last query's last term (widening, its title is checked again: the grown term may
        // now match it; the text was rescanned whole, 5 ms of `route` at 100k).
        let hint = Some(Carry {
            term: prev_last,
            widened: matches!(refine, Refine::Widen(_)),
            same_rank: refine == Refine::Narrow && self.query.terms.len() == prev_last + 1,
        });
        let m = self.matches.get_mut();
        // Each item's place in the last matches, to walk them in item order.
        let mut was = vec![NOT; self.items.len()];
        for (k, &(_, i, _)) in m.iter().enumerate() {
            was[i as usize] = k as u32;
        }
        if let Refine::Widen(t) = refine {
            // Titles only, packed: a scan of every row's text cost 10 ms at 100k (`fixlo`).
            let scanned = self.scanned.min(was.len());
            widen(
                (&mut self.query, &self.text, t),
                (&self.items, &self.titles),
                &mut was[..scanned],
            );
        }
        // Sized first: collected, the ids grew by doubling.
        let mut ids = Vec::with_capacity(was.iter().filter(|&&w| w != NOT).count());
        ids.extend(
            (was.iter().enumerate())
                .filter(|(_, w)| **w != NOT)
                .map(|(i, &w)| match m.get(w as usize) {
                    Some(&old) => old,
                    // `NEW`, marked by `widen`: not among the last matches.
                    None => (Rank::NONE, i as u32, 0),
                }),
        );
        // The last matches are in `ids` now: they and the map are freed before ranking, so
        // a key holds one vector of matches at a time (issue 10).
        drop(was);
        *m = Vec::new();
        *m = rank_ids(
            (&mut self.query, &self.text, hint),
            (&self.items, &self.titles),
            ids,
        );
        self.put_top_in_order();
    }

    /// Order the best `TOP` matches; the rest waits for `order`.
    fn put_top_in_order(&mut self) {
        let m = self.matches.get_mut();
        if m.len() > TOP {
            m.select_nth_unstable_by(TOP - 1, best_first);
            m[..TOP].sort_unstable_by(best_first);
            self.ordered.set(TOP);
        } else {
            m.sort_unstable_by(best_first);
            self.ordered.set(m.len());
        }
    }

    /// Put the matches in order up to `end` at least.
    fn order(&self, end: usize) {
        let from = self.ordered.get();
        if end > from {
            let mut m = self.matches.borrow_mut();
            m[from..].sort_unstable_by(best_first);
            self.ordered.set(m.len());
        }
    }

    /// Match what is new (items pushed, query changed); returns whether the matches changed
    /// and whether matching is still running (never: it finishes here).
    pub fn tick(&mut self, _timeout_ms: u64) -> (bool, bool) {
        let changed = self.dirty || self.scanned < self.items.len();
        if self.dirty {
            // Freed, not cleared: the room of the last matches is not held beside the next.
            *self.matches.get_mut() = Vec::new();
            self.ordered.set(0);
            self.dirty = false;
        }
        if self.query.is_empty() {
            self.scanned = self.items.len();
            return (changed, false);
        }
        if self.scanned < self.items.len() {
            let ids: Vec<Match> = (self.scanned as u32..self.items.len() as u32)
                .map(|i| (Rank::NONE, i, 0))
                .collect();
            let new = rank_ids(
                (&mut self.query, &self.text, None),
                (&self.items, &self.titles),
                ids,
            );
            let m = self.matches.get_mut();
            match m.is_empty() {
                true => *m = new,
                false => m.extend(new),
            }
            self.put_top_in_order();
            self.scanned = self.items.len();
        }
        (changed, false)
    }

    pub fn matched_count(&self) -> usize {
        self.matches.borrow().len()
    }

    pub fn item_count(&self) -> usize {
        self.items.len()
    }

    /// Keys of the matches in `range` (clamped), best first.
    pub fn matched_keys(&self, range: Range<usize>) -> Vec<Key> {
        self.order(range.end);
        let m = self.matches.borrow();
        let end = range.end.min(m.len());
        let start = range.start.min(end);
        m[start..end]
            .iter()
            .map(|m| {
                let s = self.items[m.1 as usize].row();
                (s.store, s.id.to_string())
            })
            .collect()
    }

    /// Position of `key` among the matches (a scan; called only when the matches changed).
    pub fn position(&self, key: &Key) -> Option<usize> {
        self.order(usize::MAX);
        self.matches.borrow().iter().position(|m| {
            let s = self.items[m.1 as usize].row();
            s.store == key.0 && *s.id == *key.1
        })
    }

    /// Char indices of `title` that match the query, sorted and unique (for highlighting the
    /// visible rows only).
    pub fn highlight(&mut self, title: &str) -> Vec<usize> {
        let title = Utf32String::from(title);
        let mut out = Vec::new();
        for i in 0..self.query.terms.len() {
            if !self.query.terms[i].atom.negative {
                self.query.title_match(i, title.slice(..), Some(&mut out));
            }
        }
        let mut v: Vec<usize> = out.into_iter().map(|i| i as usize).collect();
        v.sort_unstable();
        v.dedup();
        v
    }
}

#[cfg(test)]
mod caps_tests;
#[cfg(test)]
mod tests;
