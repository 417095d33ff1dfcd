//! A parsed quick-search query and how it matches one item: nucleo parses the fzf syntax,
//! the title rule (`tight`) and the text's substrings decide, and `Rank` orders the matches.

use memchr::memmem;
use nucleo::pattern::{Atom, AtomKind, CaseMatching, Normalization, Pattern};
use nucleo::{Config, Matcher, Utf32Str, Utf32String, chars};

use super::FUZZY_MIN_LEN;
use super::item::{Item, Pairs, Row, caps_of};
use super::tight::{Letters, TitleHit, tight};

/// One parsed term of the query.
pub(super) struct Term {
    pub(super) atom: Atom,
    /// The needle as text (lower-cased unless it has capitals: smart case).
    pub(super) needle: String,
    /// The needle as chars (titles that are not ASCII).
    chars: Vec<char>,
    pub(super) case_sensitive: bool,
    /// Whether nucleo would fold the title's accents for this term (`é` found by `e`).
    normalize: bool,
    /// A positive fuzzy ASCII term: matched on an ASCII title's bytes directly.
    fast: bool,
    /// The needle's lower-case ASCII letters (`Letters::needs`): a title without them all
    /// does not match a `fast` term, which is not case-sensitive.
    letters: u32,
    /// The needle's hashed letter pairs (`Letters::may_say`), and whether a title may leave
    /// one of its letters out (`FUZZY_MIN_LEN`).
    title_pairs: [u64; 2],
    fuzzy: bool,
    /// Over the needle lower-cased (the text's bytes are).
    finder: memmem::Finder<'static>,
    /// Over the needle as written, and the needle, when it has capitals.
    written: Option<(memmem::Finder<'static>, Vec<u8>)>,
    /// The needle's letter pairs: a text without them all cannot say it.
    pairs: Pairs,
    /// The pairs alone say whether the text has the term (one or two letters, substring,
    /// no capitals): the text is not read.
    by_pairs: bool,
    /// The needle's ASCII capitals (`item::caps_of`): a row without them all written
    /// somewhere does not say the term, and its title and text are not read.
    caps: u32,
}

impl Term {
    /// Whether a row's text is searched for this term with `finder` alone (a substring,
    /// neither capitals nor only letter pairs), so where it was first said can be kept.
    fn by_finder(&self) -> bool {
        !self.atom.negative
            && !self.case_sensitive
            && !self.by_pairs
            && matches!(self.atom.kind, AtomKind::Fuzzy | AtomKind::Substring)
    }

    fn new(atom: Atom) -> Term {
        let needle: String = atom.needle_text().chars().collect();
        let case_sensitive = needle.chars().any(char::is_uppercase);
        let lower = needle.to_lowercase();
        let finder = memmem::Finder::new(lower.as_bytes()).into_owned();
        let written = case_sensitive.then(|| {
            let f = memmem::Finder::new(needle.as_bytes()).into_owned();
            (f, needle.as_bytes().to_vec())
        });
        // As nucleo decides (`Normalization::Smart`): an ASCII term always, another only
        // when none of its chars has an accent of its own.
        let normalize = needle.is_ascii() || needle.chars().all(|c| chars::normalize(c) == c);
        let substring = !matches!(
            atom.kind,
            AtomKind::Prefix | AtomKind::Postfix | AtomKind::Exact
        );
        Term {
            by_pairs: substring && !case_sensitive && Pairs::exact(lower.as_bytes()),
            pairs: Pairs::of(lower.as_bytes()),
            fast: !atom.negative && atom.kind == AtomKind::Fuzzy && needle.is_ascii(),
            letters: Letters::needs(lower.as_bytes()),
            title_pairs: Letters::needs_pairs(lower.as_bytes()),
            fuzzy: needle.chars().count() >= FUZZY_MIN_LEN,
            caps: caps_of(&needle, false),
            atom,
            chars: needle.chars().collect(),
            needle,
            case_sensitive,
            normalize,
            finder,
            written,
        }
    }
}

/// Where a row's text said the query's last term, for the next key: 1 + the byte offset of
/// its first occurrence in the text (`Item::text_lower`), or 0 when it was said in the title
/// or not looked for with the term's finder. Kept in the spare bytes of a match.
pub(super) type Seen = u32;

/// How well a session matched, packed for a cheap sort: more terms in the title first, then
/// terms written as they stand in the title, then terms that start a word of the title
/// (`port` finds "Port the suite" before "export"), then recency (seconds, 40 bits).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct Rank(u64);

impl Rank {
    /// A placeholder for ids that have no rank yet (`rank_ids` ranks them).
    pub(super) const NONE: Rank = Rank(0);

    fn new(title_terms: u64, title_exact: u64, title_word_start: u64, recency: i64) -> Rank {
        let r = recency.clamp(0, (1 << 40) - 1) as u64;
        Rank(
            title_terms.min(255) << 56
                | title_exact.min(255) << 48
                | title_word_start.min(255) << 40
                | r,
        )
    }
}

/// Whether char `i` of `hay` begins a word.
fn starts_word(hay: Utf32Str<'_>, i: u32) -> bool {
    i == 0 || !hay.get(i - 1).is_alphanumeric()
}

/// What a new query's matches can be drawn from, given the last query's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Refine {
    /// Every item again.
    No,
    /// The last matches only.
    Narrow,
    /// The last matches and the items whose title term `i` matches.
    Widen(usize),
}

/// A parsed query: the terms plus a scratch matcher.
pub(super) struct Query {
    pub(super) terms: Vec<Term>,
    matcher: Matcher,
    indices: Vec<u32>,
    /// A title as written (the rare terms with capitals).
    buf: Vec<u8>,
    /// A title folded into chars (titles that are not ASCII).
    chars: Vec<char>,
}

impl Query {
    pub(super) fn parse(q: &str) -> Query {
        let pattern = Pattern::parse(q, CaseMatching::Smart, Normalization::Smart);
        let terms = (pattern.atoms.into_iter())
            .filter(|a| !a.needle_text().is_empty())
            .map(Term::new)
            .collect();
        Query {
            terms,
            matcher: Matcher::new(Config::DEFAULT),
            indices: Vec::new(),
            buf: Vec::new(),
            chars: Vec::new(),
        }
    }

    pub(super) fn is_empty(&self) -> bool {
        self.terms.is_empty()
    }

    /// How the matches of `prev` (`prev_text` parsed) bound those of this query, `q`. Not
    /// at all when `q` does not extend `prev_text` or `prev` had no term (`^` or `'` alone
    /// match nothing, yet `^f` does). A fuzzy term growing to `FUZZY_MIN_LEN` letters may
    /// match more titles (from there a letter may be left out: "timezone" matches `timzo`
    /// but not `timz`), never more texts, so the rows its title rule finds join the rest.
    pub(super) fn refines(&self, q: &str, prev: &Query, prev_text: &str) -> Refine {
        if prev.is_empty()
            || !q.starts_with(prev_text)
            || q.contains(['!', '$', '\\'])
            || self.terms.len() < prev.terms.len()
        {
            return Refine::No;
        }
        let grows_fuzzy = |(_, (old, new)): &(usize, (&Term, &Term))| {
            old.atom.kind == AtomKind::Fuzzy
                && old.needle.chars().count() < FUZZY_MIN_LEN
                && new.needle.chars().count() >= FUZZY_MIN_LEN
        };
        let mut grown = prev.terms.iter().zip(&self.terms).enumerate();
        match grown.find(grows_fuzzy) {
            None => Refine::Narrow,
            Some((i, _)) if grown.find(grows_fuzzy).is_none() => Refine::Widen(i),
            Some(_) => Refine::No,
        }
    }

    /// Whether term `t` is looked for in texts by its finder alone, so that where a text
    /// said it carries over to the next key (`said_from`).
    pub(super) fn carries(&self, t: usize) -> bool {
        self.terms.get(t).is_some_and(Term::by_finder)
    }

    /// Where `item`'s text first says term `t` (one that `carries`), the grown form of a
    /// term the last query saw there as `h` (> 0): no earlier than that, and most often
    /// right there, which a compare of a few bytes settles without a search.
    pub(super) fn said_from(&self, t: usize, item: &Item, h: Seen) -> Option<Seen> {
        let finder = &self.terms[t].finder;
        let from = h as usize - 1;
        // Compared in line: slice equality called memcmp for these few bytes, a sixth of a
        // narrowing key's time (`perf`).
        if item.says_at(finder.needle(), from) {
            return Some(h);
        }
        Some(item.text_find(finder, from)? as Seen + 1)
    }

    /// Whether term `i` matches `item`'s title (`row` as `rank` takes it).
    pub(super) fn in_title(&mut self, i: usize, item: &Item, row: Row<'_>) -> bool {
        self.title_of(i, item, row).is_some()
    }

    /// How `item` (its folded title, letters and text pairs in `row`) matches, or `None`,
    /// and where its text said the last term (`Seen`). `hint`: term `t` of this query was
    /// seen as `Seen` by the last query, which this one refines; with `widened`, the term
    /// grew to `FUZZY_MIN_LEN` (`Refine::Widen`) and its title is checked again, since it may
    /// now match a title the shorter term did not.
    pub(super) fn rank(
        &mut self,
        item: &Item,
        row: Row<'_>,
        hint: Option<(usize, Seen, bool)>,
    ) -> Option<(Rank, Seen)> {
        let pairs = row.pairs;
        let last = self.terms.len().wrapping_sub(1);
        let (mut terms, mut exact, mut word_start, mut seen) = (0, 0, 0, 0);
        for i in 0..self.terms.len() {
            // Said only in the text before: a title that did not match the shorter term does
            // not match it grown (narrowing never crosses `FUZZY_MIN_LEN`), and the grown term
            // is first said no earlier in the text than the shorter one was.
            // Widened, the text is still looked for from there on: the grown term is said
            // in the text no earlier than the shorter one, whatever the title says.
            let (from, widened) = match hint {
                Some((t, h, w)) if t == i && h > 0 && self.terms[i].by_finder() => (Some(h - 1), w),
                _ => (None, false),
            };
            let in_title = match from {
                Some(_) if !widened => None,
                _ => self.title_of(i, item, row),
            };
            let term = &self.terms[i];
            if term.atom.negative {
                // `!x` excludes a session that says x anywhere it is searched.
                if in_title.is_none() || text_match(term, item, pairs) {
                    return None;
                }
                continue;
            }
            let said = match in_title {
                Some(hit) => {
                    terms += 1;
                    exact += u64::from(hit.exact);
                    word_start += u64::from(hit.word_start);
                    0
                }
                None => text_seen(term, item, pairs, from)?,
            };
            if i == last {
                seen = said;
            }
        }
        Some((Rank::new(terms, exact, word_start, row.recency), seen))
    }

    /// Term `i` against `item`'s title: the plain cases on the folded title's letters, bytes
    /// or chars (`row`, see `item::folded`), the rest through nucleo on the title as written.
    fn title_of(&mut self, i: usize, item: &Item, row: Row<'_>) -> Option<TitleHit> {
        let term = &self.terms[i];
        if term.fast && !term.case_sensitive {
            if !row.letters.has_all(term.letters) {
                return None;
            }
            if let [c @ b'a'..=b'z'] = *term.needle.as_bytes() {
                return row.letters.one(c);
            }
            if !row.letters.may_say(term.title_pairs, term.fuzzy) {
                return None;
            }
            let title = row.title;
            if title.is_ascii() {
                return tight(title, term.needle.as_bytes(), None);
            }
            // Already folded as nucleo folds for an ASCII term, so only decoded here: folding
            // (and a needle allocated) a row cost a few ms a key when a tenth of titles had
            // an accent.
            let title = std::str::from_utf8(title).unwrap_or_default();
            self.chars.clear();
            self.chars.extend(title.chars());
            return tight(&self.chars, &term.chars, None);
        }
        // A term with capitals: the row must have them (the title as searched or the text),
        // and an ASCII title must say the term lower-cased, which its packed letters and pairs
        // tell without reading it; only then is the title as written read from the row.
        if !term.atom.negative && !item.may_have_caps(term.caps) {
            return None;
        }
        if term.fast
            && item.title_is_ascii()
            && !(row.letters.has_all(term.letters)
                && row.letters.may_say(term.title_pairs, term.fuzzy))
        {
            return None;
        }
        let mut buf = std::mem::take(&mut self.buf);
        let title = item.title_written(&mut buf);
        let hit = if title.is_ascii() {
            self.title_match(i, Utf32Str::Ascii(title), None)
        } else {
            let u = Utf32String::from(String::from_utf8_lossy(title).as_ref());
            self.title_match(i, u.slice(..), None)
        };
        self.buf = buf;
        hit
    }

    /// Whether term `i` matches `title` (for a negative term: `Some` when the title does
    /// *not* say it, as nucleo's score does). When `out` is given, the matched char
    /// indices are appended to it.
    pub(super) fn title_match(
        &mut self,
        i: usize,
        hay: Utf32Str<'_>,
        out: Option<&mut Vec<u32>>,
    ) -> Option<TitleHit> {
        let term = &self.terms[i];
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
        match hay {
            Utf32Str::Ascii(b) if term.fast => {
                let needle = term.needle.as_bytes();
                if term.case_sensitive {
                    tight(b, needle, out)
                } else {
                    tight(&b.to_ascii_lowercase(), needle, out)
                }
            }
            _ => {
                // nucleo's folding: accents first (when the term has none), then case.
                let fold = |c: char| {
                    let c = if term.normalize {
                        chars::normalize(c)
                    } else {
                        c
                    };
                    if term.case_sensitive {
                        c
                    } else {
                        chars::to_lower_case(c)
                    }
                };
                let hay: Vec<char> = (0..hay.len() as u32).map(|i| fold(hay.get(i))).collect();
                let needle: Vec<char> = term.needle.chars().collect();
                tight(&hay, &needle, out)
            }
        }
    }
}

/// Whether `term` occurs in the item's summary, first prompt or project, and where (`Seen`):
/// looked for from byte `from` of the text on when given.
fn text_seen(term: &Term, item: &Item, pairs: &Pairs, from: Option<u32>) -> Option<Seen> {
    if !term.by_finder() || !pairs.has_all(&term.pairs) {
        return text_match(term, item, pairs).then_some(0);
    }
    let at = item.text_find(&term.finder, from.unwrap_or(0) as usize)?;
    Some(at as Seen + 1)
}

/// Whether `term` occurs in the item's summary, first prompt or project, as its kind says.
fn text_match(term: &Term, item: &Item, pairs: &Pairs) -> bool {
    if !pairs.has_all(&term.pairs) || !item.may_have_caps(term.caps) {
        return false;
    }
    if term.by_pairs {
        return true;
    }
    let n = term.needle.as_bytes();
    match term.atom.kind {
        AtomKind::Prefix | AtomKind::Postfix | AtomKind::Exact => {
            (item.fields(term.case_sensitive).iter()).any(|f| match term.atom.kind {
                AtomKind::Prefix => f.starts_with(n),
                AtomKind::Postfix => f.ends_with(n),
                _ => **f == *n,
            })
        }
        _ => item.text_has(
            &term.finder,
            (term.written.as_ref()).map(|(f, w)| (f, w.as_slice())),
        ),
    }
}
