//! One session as the quick search holds it: summary, first prompt and project lower-cased
//! once into one byte string, beside a pointer to the session's row. A field the search
//! would hold as the row's own bytes lower-cased (plain ASCII, one line, under the cap) is
//! not copied: it is read from the row and lower-cased as it is compared (issue 10: those
//! copies were 12 MB of the 28 MB the items held at 100k sessions).
//!
//! Terms without capitals (nearly every query) are matched on those bytes with memchr and
//! memmem, never through a UTF-32 copy; the title is matched on `Titles`' packed copy. The
//! text as written is not kept at all: the rare term with capitals rebuilds it from the row,
//! which the list holds anyway (issue 10: the title lower-cased a second time, a bit a byte
//! for the capitals and a slot for a second copy were ~90 of a row's ~450 bytes of matcher
//! items at 100k sessions, for a path few queries take).

use std::borrow::Cow;
use std::sync::Arc;

use crate::model::SessionSummary;
use crate::text::{is_one_line, one_line, terminal_unsafe, truncate_chars};

use super::FIELD_CAP;
use super::own::Field;
pub(super) use super::pairs::Pairs;
use super::plain::push_plain;
use super::tight::Letters;

pub(super) struct Item {
    /// The session, for its text as written (terms with capitals) and its title.
    row: Arc<SessionSummary>,
    /// Summary, first prompt and project (cwd basename) as searched (one line each, capped,
    /// lower-cased), one after the other, but for those that are the row's own (`OWN`).
    bytes: Box<[u8]>,
    /// Where summary and first prompt end in the text as searched, the three fields `\n`
    /// apart (each is capped at `FIELD_CAP` chars, a few thousand bytes at most): offsets
    /// into it are what a match remembers (`Seen`), whichever fields are copied.
    ends: [u16; 2],
    /// `caps_of` the title and text as searched, `TITLE_NOT_ASCII` and `OWN`: in the room
    /// the narrower `ends` left, so no byte more a row.
    caps: u32,
}

/// In `Item::caps`, one for each of summary, first prompt and project: the field as searched
/// is the row's own bytes lower-cased (ASCII), so `bytes` does not hold it. Not capitals
/// (`caps_of` has 26 bits), so no hint of what a term needs.
const OWN: [u32; 3] = [1 << 26, 1 << 27, 1 << 28];

/// In `Item::caps`: the title as searched is not ASCII, so its lower-cased letters and
/// pairs (`Titles`) are no sure sign of what it says as written (`İ` lower-cases to two
/// chars, `ſ` folds to `s`).
const TITLE_NOT_ASCII: u32 = 1 << 31;

/// The ASCII capitals of `bytes`, one bit each (`A` is bit 0). With `fold`, also the chars
/// that a title match folds to an ASCII capital (`Ŕ` says `R` to nucleo's normalization).
/// A term with capitals matches a row only where it is written with them, so a row without
/// every capital of the term is not read: a key with a capital read every row's title and
/// text as written, 50-100 ms at 100k sessions, where lower-case keys take a few.
pub(super) fn caps_of(text: &str, fold: bool) -> u32 {
    let bit = |c: char| c.is_ascii_uppercase().then(|| 1u32 << (c as u8 - b'A'));
    if !fold || text.is_ascii() {
        return (text.bytes()).fold(0, |m, b| m | bit(b as char).unwrap_or(0));
    }
    text.chars().fold(0, |m, c| {
        let n = nucleo::chars::normalize(c);
        m | bit(c).unwrap_or(0) | bit(n).unwrap_or(0)
    })
}

/// Seconds of last activity of `s`, what ranks equal matches (the more recent first). Kept
/// beside the titles (`Titles`), not in the item: ranking a title match then never reads
/// its item, whose recency was a cache miss a row and half of `rank`'s time at 100k
/// sessions (`perf annotate`: `router`'s keys re-rank 29k title matches each).
pub(super) fn recency_of(s: &SessionSummary) -> i64 {
    s.last_activity().map_or(i64::MIN, |t| t.timestamp())
}

/// Summary, first prompt and project of `s` as they are searched: one line each, capped.
fn text_fields(s: &SessionSummary) -> [String; 3] {
    [
        searched(s.summary(), Some(FIELD_CAP)),
        searched(s.first_prompt(), Some(FIELD_CAP)),
        searched(s.project(), None),
    ]
}

/// A field as it is searched: one line, cut to `cap` chars when given.
fn searched(f: &str, cap: Option<usize>) -> String {
    match cap {
        Some(cap) => truncate_chars(&one_line(f), cap),
        None => one_line(f),
    }
}

/// Whether field `f` of a row (capped at `FIELD_CAP` chars when `capped`), made one line as
/// the item searches it, says `wfinder`'s needle. A field `one_line` keeps, short enough to
/// be whole, is read where it is: a term with capitals reads the written text of every row
/// that says it lower-cased (all of them, for one letter), and making each one line cost
/// allocations a row.
pub(super) fn says_written(f: &str, capped: bool, wfinder: &memchr::memmem::Finder<'_>) -> bool {
    if is_one_line(f) && (!capped || f.len() <= FIELD_CAP) {
        return wfinder.find(f.as_bytes()).is_some();
    }
    if let Some(said) = said_in_runs(f, capped, wfinder) {
        return said;
    }
    let line = one_line(f);
    let line = if capped {
        truncate_chars(&line, FIELD_CAP)
    } else {
        line
    };
    wfinder.find(line.as_bytes()).is_some()
}

/// `says_written` without making `f` one line, when that is sure: a needle without
/// whitespace is said in a run of other chars, and `one_line` keeps every such run of a
/// field that has nothing to sanitize (it only joins them with single spaces); capped, the
/// first place the field says it must end inside the cap. `None` when unsure. Summaries
/// and prompts are seldom one line already, and made one line (a few allocations, the
/// whole prompt copied) they cost microseconds a row to a key with capitals.
pub(super) fn said_in_runs(
    f: &str,
    capped: bool,
    wfinder: &memchr::memmem::Finder<'_>,
) -> Option<bool> {
    let needle = std::str::from_utf8(wfinder.needle()).ok()?;
    if needle.is_empty() || needle.chars().any(char::is_whitespace) {
        return None;
    }
    let plain = |t: &str| (t.chars()).all(|c| c == '\n' || c == '\t' || !terminal_unsafe(c));
    if !plain(f) {
        return None;
    }
    let Some(p) = wfinder.find(f.as_bytes()) else {
        return Some(false);
    };
    if !capped {
        return Some(true);
    }
    // Chars of the one-line field up to the match's end: the runs' chars and one space
    // between each two. Truncated, a field keeps `FIELD_CAP - 1` chars and an ellipsis.
    let mut chars = 0;
    let mut gap = false;
    for c in f[..p + needle.len()].chars() {
        if c.is_whitespace() {
            gap = chars > 0;
        } else {
            chars += 1 + usize::from(gap);
            gap = false;
        }
    }
    (chars < FIELD_CAP).then_some(true)
}

impl Item {
    pub(super) fn new(s: &Arc<SessionSummary>) -> Item {
        Item::new_in(s, &mut Vec::new())
    }

    /// `new`, with `scratch` to write the text in before it is boxed at its length (one
    /// allocation a row; a build reuses it from row to row).
    pub(super) fn new_in(s: &Arc<SessionSummary>, scratch: &mut Vec<u8>) -> Item {
        Item::build(s, scratch, true)
    }

    /// The item as it was built before fields were read from the row: every field's
    /// lower-cased copy kept (what the new items are held to).
    #[cfg(test)]
    pub(super) fn copied(s: &Arc<SessionSummary>) -> Item {
        Item::build(s, &mut Vec::new(), false)
    }

    /// Whether a field of the text is read from the row.
    #[cfg(test)]
    pub(super) fn reads_the_row(&self) -> bool {
        self.caps & (OWN[0] | OWN[1] | OWN[2]) != 0
    }

    /// `new_in`; with `read_own`, a field the search holds as the row's own bytes
    /// lower-cased is not copied.
    fn build(s: &Arc<SessionSummary>, scratch: &mut Vec<u8>, read_own: bool) -> Item {
        let lower = scratch;
        lower.clear();
        let mut ends = [0u16; 2];
        let mut caps = 0;
        // The length of the text as searched so far, fields `\n` apart.
        let mut searched_len = 0;
        let fields = [
            (s.summary(), Some(FIELD_CAP)),
            (s.first_prompt(), Some(FIELD_CAP)),
            (s.project(), None),
        ];
        for (i, (f, cap)) in fields.into_iter().enumerate() {
            if i > 0 {
                searched_len += 1;
            }
            let start = lower.len();
            caps |= match push_plain(lower, f, cap) {
                Some(c) => {
                    // As long as the field and equal to it but for case: it is the row's
                    // own bytes lower-cased, read from the row rather than kept twice.
                    if read_own && lower[start..].eq_ignore_ascii_case(f.as_bytes()) {
                        lower.truncate(start);
                        searched_len += f.len();
                        caps |= OWN[i];
                    }
                    c
                }
                None => {
                    let f = searched(f, cap);
                    lower.extend_from_slice(f.to_lowercase().as_bytes());
                    caps_of(&f, false)
                }
            };
            searched_len += lower.len() - start;
            if i < 2 {
                ends[i] = u16::try_from(searched_len).unwrap_or(u16::MAX);
            }
        }
        let title = match is_one_line(s.title()) {
            true => Cow::Borrowed(s.title()),
            false => Cow::Owned(one_line(s.title())),
        };
        caps |= caps_of(&title, true);
        if !title.is_ascii() {
            caps |= TITLE_NOT_ASCII;
        }
        Item {
            row: s.clone(),
            bytes: Box::from(&lower[..]),
            ends,
            caps,
        }
    }

    /// Whether the title or text as searched may say a term whose ASCII capitals are `need`
    /// (`caps_of` the term): false when one of them is written nowhere in the row.
    pub(super) fn may_have_caps(&self, need: u32) -> bool {
        self.caps & need == need
    }

    /// The item with no sign of what it holds, as if every row had every capital and a title
    /// that is not ASCII: matched so, it takes the path that reads the row for everything.
    #[cfg(test)]
    pub(super) fn without_hints(mut self) -> Item {
        self.caps |= !(OWN[0] | OWN[1] | OWN[2]);
        self
    }

    /// Whether the title as searched is ASCII: then it is its lower-cased copy in `Titles`
    /// but for the capitals, and a title that does not say a term lower-cased does not say
    /// it as written.
    pub(super) fn title_is_ascii(&self) -> bool {
        self.caps & TITLE_NOT_ASCII == 0
    }

    /// The session this item matches.
    pub(super) fn row(&self) -> &Arc<SessionSummary> {
        &self.row
    }

    /// The title, one line, lower-cased (made on the spot: `Titles` keeps it packed).
    pub(super) fn title_lower(&self) -> String {
        one_line(self.row.title()).to_lowercase()
    }

    /// Summary, first prompt and project, lower-cased, `\n` apart (made on the spot: the
    /// fields that are the row's own are not kept lower-cased).
    pub(super) fn text_lower(&self) -> Vec<u8> {
        let mut out = Vec::new();
        for (i, f) in self.field_bytes().into_iter().enumerate() {
            if i > 0 {
                out.push(b'\n');
            }
            out.extend_from_slice(&f.lower());
        }
        out
    }

    /// The letter pairs of `text_lower`, read without making it.
    pub(super) fn pairs(&self) -> Pairs {
        let mut p = Pairs::default();
        let mut prev = None;
        for (i, f) in self.field_bytes().into_iter().enumerate() {
            if i > 0 {
                p.feed(&mut prev, b'\n');
            }
            p.feed_all(&mut prev, f.bytes, f.own);
        }
        p
    }

    /// Summary, first prompt and project as searched: each the row's own bytes (`OWN`) or
    /// its lower-cased copy in `bytes`.
    fn field_bytes(&self) -> [Field<'_>; 3] {
        let e = self.ends.map(|e| e as usize);
        let lens = [e[0], e[1].saturating_sub(e[0] + 1)];
        let s = &self.row;
        let written = [s.summary(), s.first_prompt(), s.project()];
        // Where the next copied field starts in `bytes`.
        let mut at = 0;
        let mut field = |i: usize| {
            let own = self.caps & OWN[i] != 0;
            let bytes = match (own, lens.get(i)) {
                (true, _) => written[i].as_bytes(),
                (false, Some(&n)) => &self.bytes[at..at + n],
                // The project, last: the rest.
                (false, None) => &self.bytes[at..],
            };
            at += if own { 0 } else { bytes.len() };
            Field { bytes, own }
        };
        [field(0), field(1), field(2)]
    }

    /// The title as written, one line: the row's own when `one_line` keeps it, else made
    /// into `buf`.
    pub(super) fn title_written<'a>(&'a self, buf: &'a mut Vec<u8>) -> &'a [u8] {
        let t = &self.row.title();
        if is_one_line(t) {
            return t.as_bytes();
        }
        buf.clear();
        buf.extend_from_slice(one_line(t).as_bytes());
        buf
    }

    /// Where `finder`'s needle is first said in summary, prompt or project (lower-cased),
    /// from byte `from` of them on.
    pub(super) fn text_find(
        &self,
        finder: &memchr::memmem::Finder<'_>,
        from: usize,
    ) -> Option<usize> {
        let needle = finder.needle();
        if needle.is_empty() || needle.contains(&b'\n') {
            // Said across two fields, or at `from` itself: the text as a whole is needed.
            let text = self.text_lower();
            return Some(finder.find(text.get(from..)?)? + from);
        }
        // A needle without `\n` is said within one field.
        let mut start = 0;
        for f in self.field_bytes() {
            let end = start + f.bytes.len();
            if from <= end {
                let skip = from.saturating_sub(start);
                if let Some(p) = f.from(skip).find(finder) {
                    return Some(start + skip + p);
                }
            }
            start = end + 1;
        }
        None
    }

    /// Whether the text as searched, lower-cased, says `needle` at byte `at`.
    pub(super) fn says_at(&self, needle: &[u8], at: usize) -> bool {
        if needle.contains(&b'\n') {
            return (self.text_lower().get(at..)).is_some_and(|t| t.starts_with(needle));
        }
        let mut start = 0;
        for f in self.field_bytes() {
            let end = start + f.bytes.len();
            if at <= end {
                return at + needle.len() <= end && f.says_at(needle, at - start);
            }
            start = end + 1;
        }
        false
    }

    /// Whether summary, prompt or project say `needle` (`finder`: over the needle
    /// lower-cased); `written`: a finder over the needle as written when it has capitals.
    pub(super) fn text_has(
        &self,
        finder: &memchr::memmem::Finder<'_>,
        written: Option<(&memchr::memmem::Finder<'_>, &[u8])>,
    ) -> bool {
        let Some((wfinder, needle)) = written else {
            return self.text_find(finder, 0).is_some();
        };
        // The needle has no `\n`, so it is said in one field or not at all. An ASCII needle
        // said as written is said lower-cased at the same place (ASCII lower-cases char by
        // char), so only fields that say it lower-cased are read as written.
        let lower = self.field_bytes();
        let s = &self.row;
        let written = [
            (s.summary(), true),
            (s.first_prompt(), true),
            (s.project(), false),
        ];
        (lower.iter().zip(written)).any(|(l, (w, capped))| {
            (!needle.is_ascii() || l.find(finder).is_some()) && says_written(w, capped, wfinder)
        })
    }

    /// Summary, first prompt and project, lower-cased or as written.
    pub(super) fn fields(&self, case_sensitive: bool) -> Vec<Cow<'_, [u8]>> {
        if !case_sensitive {
            return (self.field_bytes().into_iter())
                .map(|f| match f.own {
                    true => f.lower(),
                    false => Cow::Borrowed(f.bytes),
                })
                .collect();
        }
        (text_fields(&self.row).into_iter())
            .map(|f| Cow::Owned(f.into_bytes()))
            .collect()
    }
}

/// A lower-cased title folded as nucleo folds it for an ASCII term (the quick search's usual
/// one): accents off (`é` is `e`), then lower case. The same chars one for one, so an ASCII
/// title is itself, and a title with accents often becomes ASCII and is matched on bytes.
pub(super) fn folded(title: &[u8]) -> Cow<'_, [u8]> {
    if title.is_ascii() {
        return Cow::Borrowed(title);
    }
    let fold = |c: char| nucleo::chars::to_lower_case(nucleo::chars::normalize(c));
    let t: String = String::from_utf8_lossy(title).chars().map(fold).collect();
    Cow::Owned(t.into_bytes())
}

/// What matching one item reads besides the item: its title lower-cased and `folded`, the
/// title's letters and the text's letter pairs.
#[derive(Clone, Copy)]
pub(super) struct Row<'a> {
    pub(super) title: &'a [u8],
    pub(super) letters: Letters,
    pub(super) pairs: &'a Pairs,
    /// `recency_of` the item's session.
    pub(super) recency: i64,
}

impl<'a> Row<'a> {
    /// A row worked out on the spot (`list --query`, one pass): `title` is `folded`.
    pub(super) fn of(title: &'a [u8], pairs: &'a Pairs, recency: i64) -> Row<'a> {
        Row {
            title,
            letters: Letters::of(title),
            pairs,
            recency,
        }
    }
}

/// Every item's lower-cased title again (`folded`), end to end, its letters, the letter
/// pairs of its text and its session's recency: a first letter checks every title, and read from each item's own
/// allocation that was a cache miss a row (three quarters of a key's time at 100k sessions,
/// `perf annotate`); packed together they stream in.
#[derive(Default)]
pub(super) struct Titles {
    bytes: Vec<u8>,
    /// Start and length of item i's title in `bytes`.
    at: Vec<(u32, u32)>,
    letters: Vec<Letters>,
    pairs: Vec<Pairs>,
    recency: Vec<i64>,
}

impl Titles {
    /// The titles of `items`, whose sessions' `recency_of` is `recency` (same order).
    pub(super) fn of(items: &[Item], recency: Vec<i64>) -> Titles {
        let mut t = Titles::default();
        t.bytes
            .reserve(items.iter().map(|i| i.row.title().len()).sum());
        t.reserve(items.len());
        for i in items {
            let (at, letters) = t.add(i);
            t.at.push(at);
            t.letters.push(letters);
            t.pairs.push(i.pairs());
        }
        t.recency = recency;
        t
    }

    pub(super) fn push(&mut self, item: &Item, recency: i64) {
        let (at, letters) = self.add(item);
        self.at.push(at);
        self.letters.push(letters);
        self.pairs.push(item.pairs());
        self.recency.push(recency);
    }

    fn add(&mut self, item: &Item) -> ((u32, u32), Letters) {
        let start = self.bytes.len();
        // A plain ASCII title is its own fold: written lower-cased where it is kept.
        if push_plain(&mut self.bytes, item.row.title(), None).is_none() {
            let lower = item.title_lower();
            self.bytes.extend_from_slice(&folded(lower.as_bytes()));
        }
        let t = &self.bytes[start..];
        ((start as u32, t.len() as u32), Letters::of(t))
    }

    /// Put `other`'s titles after these: items built in parts, on threads, joined in order.
    pub(super) fn append(&mut self, other: Titles) {
        let base = self.bytes.len() as u32;
        self.bytes.extend_from_slice(&other.bytes);
        (self.at).extend(other.at.iter().map(|&(s, n)| (s + base, n)));
        self.letters.extend(other.letters);
        self.pairs.extend(other.pairs);
        self.recency.extend(other.recency);
    }

    /// Item `i` is now `item`; its old title's bytes stay until `pack_if_sparse`.
    pub(super) fn set(&mut self, i: usize, item: &Item, recency: i64) {
        (self.at[i], self.letters[i]) = self.add(item);
        self.pairs[i] = item.pairs();
        self.recency[i] = recency;
    }

    /// Pack the titles of `items` (these titles' items) again when old titles left by `set`
    /// are over half the bytes. Once per batch of `set`s: the live bytes are a walk over
    /// every title.
    pub(super) fn pack_if_sparse(&mut self, items: &[Item]) {
        let live: usize = self.at.iter().map(|a| a.1 as usize).sum();
        if self.bytes.len() > 2 * live + 4096 {
            *self = Titles::of(items, std::mem::take(&mut self.recency));
        }
    }

    /// Item `i`'s title, lower-cased and `folded`, its letters, and its text's letter pairs.
    pub(super) fn get(&self, i: usize) -> Row<'_> {
        let (s, n) = self.at[i];
        Row {
            title: &self.bytes[s as usize..(s + n) as usize],
            letters: self.letters[i],
            pairs: &self.pairs[i],
            recency: self.recency[i],
        }
    }

    pub(super) fn clear(&mut self) {
        self.bytes.clear();
        self.at.clear();
        self.letters.clear();
        self.pairs.clear();
        self.recency.clear();
    }

    pub(super) fn reserve(&mut self, n: usize) {
        self.at.reserve_exact(n);
        self.letters.reserve_exact(n);
        self.pairs.reserve_exact(n);
        self.recency.reserve_exact(n);
    }
}

#[cfg(test)]
#[path = "item_tests.rs"]
mod tests;
