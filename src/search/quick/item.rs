//! One session as the quick search holds it: summary, first prompt and project lower-cased
//! once into one byte string, beside a pointer to the session's row.
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
use super::plain::push_plain;
use super::tight::Letters;

pub(super) struct Item {
    /// The session, for its text as written (terms with capitals) and its title.
    row: Arc<SessionSummary>,
    /// Summary, first prompt and project (cwd basename), one line each, capped,
    /// lower-cased, `\n` apart.
    bytes: Box<[u8]>,
    /// Where summary and first prompt end in `bytes` (each is capped at `FIELD_CAP` chars,
    /// a few thousand bytes at most).
    ends: [u16; 2],
    /// `caps_of` the title and text as searched, and `TITLE_NOT_ASCII`: in the room the
    /// narrower `ends` left, so no byte more a row.
    caps: u32,
}

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
        searched(&s.summary, Some(FIELD_CAP)),
        searched(&s.first_prompt, Some(FIELD_CAP)),
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
        let lower = scratch;
        lower.clear();
        let mut ends = [0u16; 2];
        let mut caps = 0;
        let fields = [
            (&s.summary[..], Some(FIELD_CAP)),
            (&s.first_prompt[..], Some(FIELD_CAP)),
            (s.project(), None),
        ];
        for (i, (f, cap)) in fields.into_iter().enumerate() {
            if i > 0 {
                lower.push(b'\n');
            }
            caps |= match push_plain(lower, f, cap) {
                Some(c) => c,
                None => {
                    let f = searched(f, cap);
                    lower.extend_from_slice(f.to_lowercase().as_bytes());
                    caps_of(&f, false)
                }
            };
            if i < 2 {
                ends[i] = u16::try_from(lower.len()).unwrap_or(u16::MAX);
            }
        }
        let title = match is_one_line(&s.title) {
            true => Cow::Borrowed(&s.title[..]),
            false => Cow::Owned(one_line(&s.title)),
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
        self.caps = u32::MAX;
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
        one_line(&self.row.title).to_lowercase()
    }

    /// Summary, first prompt and project, lower-cased, `\n` apart.
    pub(super) fn text_lower(&self) -> &[u8] {
        &self.bytes
    }

    /// Summary, first prompt and project, lower-cased.
    fn lower_fields(&self) -> [&[u8]; 3] {
        let l = self.text_lower();
        let e = self.ends.map(|e| e as usize);
        [
            &l[..e[0]],
            &l[(e[0] + 1).min(e[1])..e[1]],
            &l[(e[1] + 1).min(l.len())..],
        ]
    }

    /// The title as written, one line: the row's own when `one_line` keeps it, else made
    /// into `buf`.
    pub(super) fn title_written<'a>(&'a self, buf: &'a mut Vec<u8>) -> &'a [u8] {
        let t = &self.row.title;
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
        let text = self.text_lower();
        Some(finder.find(text.get(from..)?)? + from)
    }

    /// Whether summary, prompt or project say `needle` (`finder`: over the needle
    /// lower-cased); `written`: a finder over the needle as written when it has capitals.
    pub(super) fn text_has(
        &self,
        finder: &memchr::memmem::Finder<'_>,
        written: Option<(&memchr::memmem::Finder<'_>, &[u8])>,
    ) -> bool {
        let text = self.text_lower();
        let Some((wfinder, needle)) = written else {
            return finder.find(text).is_some();
        };
        // The needle has no `\n`, so it is said in one field or not at all. An ASCII needle
        // said as written is said lower-cased at the same place (ASCII lower-cases char by
        // char), so only fields that say it lower-cased are read as written.
        let lower = self.lower_fields();
        let s = &self.row;
        let written = [
            (&s.summary[..], true),
            (&s.first_prompt, true),
            (s.project(), false),
        ];
        (lower.iter().zip(written)).any(|(l, (w, capped))| {
            (!needle.is_ascii() || finder.find(l).is_some()) && says_written(w, capped, wfinder)
        })
    }

    /// Summary, first prompt and project, lower-cased or as written.
    pub(super) fn fields(&self, case_sensitive: bool) -> Vec<Cow<'_, [u8]>> {
        if !case_sensitive {
            return self.lower_fields().map(Cow::Borrowed).to_vec();
        }
        (text_fields(&self.row).into_iter())
            .map(|f| Cow::Owned(f.into_bytes()))
            .collect()
    }
}

/// Which letters a lower-cased text has (26 bits) and which pairs of letters side by side
/// (230: one each for the common pairs, shared by the rest). A text without all of a term's
/// is not read: after a first letter, `fi` and `fix` re-checked 30-90k texts that did not
/// say them. For one letter or a common pair the bits are the answer (`exact`). 32 bytes a
/// row: a bit for every pair took 88 (8.8 MB kept at 100k sessions, issue 10); a rare pair
/// (`xq`) typed alone now reads the texts that have its shared bit.
#[derive(Clone, Copy, Default)]
pub(super) struct Pairs([u64; 4]);

/// Where the pairs' bits begin, after the single letters'.
const LETTERS: usize = 26;
/// How many bits the pairs have: one each for the `COMMON` pairs, the rest shared.
const PAIR_BITS: usize = 256 - LETTERS;

/// The pairs of letters most frequent in English, each with a bit of its own: `ti` and `fi`
/// match most rows at 100k sessions, and reading each text to confirm them cost 40% more
/// CPU a key. The other 476 pairs share the remaining bits.
const COMMON: &[u8; 400] = b"\
    thheineranreonatenndtiesorteofedisitalarsttontngsehaasouiolevecomedehiriroicneea\
    racelichllbemasiomurcaeltalansdifohopeecprnoctusacotiltrlyncetutsssorsunlowageie\
    wheewiemadolrtpowenaulnitsmoowpaimmiaishirsuidosiviaamficivipligtuevldrympfeblab\
    ghtyopwosaayexkefrooavagifapgrodbosprddoucbueiovbyrmepttocfaefcurnscgidayocrcldu\
    gaquueffbaeylsvaumppuauplugohtruugdsltpircrregauckewmubrbiptakpuuirgibtlnykirkys";

/// Each pair's bit among `PAIR_BITS` (`a * 26 + b`): its own for a `COMMON` pair, else one
/// of the shared ones, hashed.
const SLOT: [u8; 676] = slots();

const fn slots() -> [u8; 676] {
    let mut t = [u8::MAX; 676];
    let mut i = 0;
    while i < COMMON.len() / 2 {
        let pair = (COMMON[2 * i] - b'a') as usize * 26 + (COMMON[2 * i + 1] - b'a') as usize;
        assert!(t[pair] == u8::MAX, "a pair listed twice");
        t[pair] = i as u8;
        i += 1;
    }
    let own = COMMON.len() / 2;
    let mut p = 0;
    while p < 676 {
        if t[p] == u8::MAX {
            let h = (p as u32).wrapping_mul(0x9e37_79b1) as u64;
            t[p] = (own as u64 + ((h * (PAIR_BITS - own) as u64) >> 32)) as u8;
        }
        p += 1;
    }
    t
}

impl Pairs {
    pub(super) fn of(text: &[u8]) -> Pairs {
        let mut p = Pairs::default();
        let mut prev = None;
        for &b in text {
            let cur = letter(b);
            if let Some(c) = cur {
                p.set(c);
                if let Some(a) = prev {
                    p.set(LETTERS + SLOT[a * 26 + c] as usize);
                }
            }
            prev = cur;
        }
        p
    }

    fn set(&mut self, i: usize) {
        self.0[i / 64] |= 1 << (i % 64);
    }

    /// Whether every pair and letter `need` has is here.
    pub(super) fn has_all(&self, need: &Pairs) -> bool {
        self.0.iter().zip(&need.0).all(|(a, b)| a & b == *b)
    }

    /// Whether `has_all` says exactly whether a lower-cased text contains `needle`: true for
    /// one lower-case ASCII letter, and for two that are a `COMMON` pair (a bit is set only
    /// by those bytes side by side); not for longer needles (`fix` is not in "fi ix"), the
    /// other pairs (they share bits) or other bytes.
    pub(super) fn exact(needle: &[u8]) -> bool {
        match needle {
            [a] => a.is_ascii_lowercase(),
            [a, b] => {
                let (Some(a), Some(b)) = (letter(*a), letter(*b)) else {
                    return false;
                };
                (SLOT[a * 26 + b] as usize) < COMMON.len() / 2
            }
            _ => false,
        }
    }
}

fn letter(b: u8) -> Option<usize> {
    b.is_ascii_lowercase().then(|| (b - b'a') as usize)
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
            .reserve(items.iter().map(|i| i.row.title.len()).sum());
        t.reserve(items.len());
        for i in items {
            let (at, letters) = t.add(i);
            t.at.push(at);
            t.letters.push(letters);
            t.pairs.push(Pairs::of(i.text_lower()));
        }
        t.recency = recency;
        t
    }

    pub(super) fn push(&mut self, item: &Item, recency: i64) {
        let (at, letters) = self.add(item);
        self.at.push(at);
        self.letters.push(letters);
        self.pairs.push(Pairs::of(item.text_lower()));
        self.recency.push(recency);
    }

    fn add(&mut self, item: &Item) -> ((u32, u32), Letters) {
        let start = self.bytes.len();
        // A plain ASCII title is its own fold: written lower-cased where it is kept.
        if push_plain(&mut self.bytes, &item.row.title, None).is_none() {
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

    /// Item `i` is now `item`; its old title's bytes stay until the titles are packed again
    /// (when they are over half the bytes).
    pub(super) fn set(&mut self, i: usize, item: &Item, recency: i64, items: &[Item]) {
        (self.at[i], self.letters[i]) = self.add(item);
        self.pairs[i] = Pairs::of(item.text_lower());
        self.recency[i] = recency;
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
