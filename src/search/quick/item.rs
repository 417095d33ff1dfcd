//! One session as the quick search holds it: title, summary, first prompt and project
//! lower-cased once into one byte string, with the capitals kept as one bit a byte.
//!
//! Terms without capitals (nearly every query) are matched on those bytes with memchr and
//! memmem, never through a UTF-32 copy. A term with capitals is looked for in the lower-cased
//! bytes too, and each hit checked against the text as written, rebuilt from the bits: one
//! copy of the text plus an eighth, where keeping the text as written beside its lower-cased
//! copy held two (issue 10: the browser's 245 MB at 100k sessions against a 100 MB target).
//! Only a row whose lower-casing changes more than ASCII letters (`É`, `Σ`) keeps its text as
//! written beside, as before.

use std::borrow::Cow;

use crate::model::SessionSummary;
use crate::text::{one_line, truncate_chars};

use super::FIELD_CAP;
use super::tight::Letters;

/// The fields of an item, in the order they are held.
pub(super) const TITLE: usize = 0;

pub(super) struct Item {
    /// Title, summary, first prompt and project (cwd basename), one line each, capped,
    /// lower-cased, `\n` apart; then, when the text has ASCII capitals (and nothing else
    /// changed case), one bit a byte of the text marking them.
    bytes: Box<[u8]>,
    /// Where each field ends in `bytes` (the last is the text's length).
    ends: [u32; 4],
    /// The text as written, `\n` apart, when lower-casing it changed more than ASCII letters.
    written: Option<Box<str>>,
}

/// Seconds of last activity of `s`, what ranks equal matches (the more recent first). Kept
/// beside the titles (`Titles`), not in the item: ranking a title match then never reads
/// its item, whose recency was a cache miss a row and half of `rank`'s time at 100k
/// sessions (`perf annotate`: `router`'s keys re-rank 29k title matches each).
pub(super) fn recency_of(s: &SessionSummary) -> i64 {
    s.last_activity().map_or(i64::MIN, |t| t.timestamp())
}

impl Item {
    pub(super) fn new(s: &SessionSummary) -> Item {
        let fields = [
            one_line(&s.title),
            truncate_chars(&one_line(&s.summary), FIELD_CAP),
            truncate_chars(&one_line(&s.first_prompt), FIELD_CAP),
            one_line(s.project()),
        ];
        let text = fields.join("\n");
        let mut lower = Vec::with_capacity(text.len() + text.len().div_ceil(8));
        let mut ends = [0u32; 4];
        for (i, f) in fields.iter().enumerate() {
            if i > 0 {
                lower.push(b'\n');
            }
            lower.extend_from_slice(f.to_lowercase().as_bytes());
            ends[i] = lower.len() as u32;
        }
        let mut written = None;
        if lower != text.as_bytes() {
            let ascii_only = lower.len() == text.len()
                && (text.bytes().zip(&lower)).all(|(a, &b)| a == b || a.is_ascii_uppercase());
            if ascii_only {
                let mut bits = vec![0u8; text.len().div_ceil(8)];
                for (i, b) in text.bytes().enumerate() {
                    if b.is_ascii_uppercase() {
                        bits[i / 8] |= 1 << (i % 8);
                    }
                }
                lower.extend_from_slice(&bits);
            } else {
                written = Some(text.into_boxed_str());
            }
        }
        Item {
            bytes: lower.into_boxed_slice(),
            ends,
            written,
        }
    }

    fn len(&self) -> usize {
        self.ends[3] as usize
    }

    /// The whole text, lower-cased.
    fn lower(&self) -> &[u8] {
        &self.bytes[..self.len()]
    }

    /// The title, lower-cased.
    pub(super) fn title_lower(&self) -> &[u8] {
        &self.bytes[..self.ends[TITLE] as usize]
    }

    /// Summary, first prompt and project, lower-cased, `\n` apart.
    pub(super) fn text_lower(&self) -> &[u8] {
        self.lower()
            .get(self.ends[TITLE] as usize + 1..)
            .unwrap_or(&[])
    }

    /// Whether the text as written has a capital at byte `i` (rows with bits only).
    fn cap(&self, i: usize) -> bool {
        let bits = &self.bytes[self.len()..];
        bits.get(i / 8).is_some_and(|b| b & (1 << (i % 8)) != 0)
    }

    /// Whether the text as written says `needle` at byte `at` of the lower-cased text
    /// (rows without `written`, where both have the same bytes but for ASCII capitals).
    fn written_at(&self, at: usize, needle: &[u8]) -> bool {
        let lower = self.lower();
        if at + needle.len() > lower.len() {
            return false;
        }
        let caps = self.bytes.len() > self.len();
        needle.iter().enumerate().all(|(j, &n)| {
            let b = lower[at + j];
            n == if caps && self.cap(at + j) {
                b.to_ascii_uppercase()
            } else {
                b
            }
        })
    }

    /// The text as written, `\n` apart (rebuilt from the bits; for the rare paths only).
    pub(super) fn written(&self) -> Cow<'_, str> {
        if let Some(w) = &self.written {
            return Cow::Borrowed(w);
        }
        let lower = self.lower();
        if self.bytes.len() == lower.len() {
            return String::from_utf8_lossy(lower);
        }
        let bytes: Vec<u8> = (lower.iter().enumerate())
            .map(|(i, &b)| {
                if self.cap(i) {
                    b.to_ascii_uppercase()
                } else {
                    b
                }
            })
            .collect();
        Cow::Owned(String::from_utf8_lossy(&bytes).into_owned())
    }

    /// The title as written into `buf` when it has capitals (ASCII titles only), else the
    /// lower-cased title, which is then the same.
    pub(super) fn title_written<'a>(&'a self, buf: &'a mut Vec<u8>) -> &'a [u8] {
        let t = self.title_lower();
        if self.written.is_none() && self.bytes.len() == self.len() {
            return t;
        }
        if let Some(w) = &self.written {
            return w.split('\n').next().unwrap_or("").as_bytes();
        }
        buf.clear();
        buf.extend(t.iter().enumerate().map(|(i, &b)| {
            if self.cap(i) {
                b.to_ascii_uppercase()
            } else {
                b
            }
        }));
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

    /// Whether summary, prompt or project say `needle` (`lower`: the needle lower-cased,
    /// `finder` over it); `written_finder` over the needle as written when it has capitals.
    pub(super) fn text_has(
        &self,
        finder: &memchr::memmem::Finder<'_>,
        written: Option<(&memchr::memmem::Finder<'_>, &[u8])>,
    ) -> bool {
        let text = self.text_lower();
        let Some((wfinder, needle)) = written else {
            return finder.find(text).is_some();
        };
        if let Some(w) = &self.written {
            let rest = w.split_once('\n').map_or("", |(_, r)| r);
            return wfinder.find(rest.as_bytes()).is_some();
        }
        let from = self.len() - text.len();
        finder
            .find_iter(text)
            .any(|p| self.written_at(from + p, needle))
    }

    /// Summary, first prompt and project, lower-cased or as written.
    pub(super) fn fields(&self, case_sensitive: bool) -> Vec<Cow<'_, [u8]>> {
        if !case_sensitive {
            let l = self.lower();
            let e = self.ends.map(|e| e as usize);
            return vec![
                Cow::Borrowed(&l[(e[0] + 1).min(e[1])..e[1]]),
                Cow::Borrowed(&l[(e[1] + 1).min(e[2])..e[2]]),
                Cow::Borrowed(&l[(e[2] + 1).min(e[3])..e[3]]),
            ];
        }
        let w = self.written();
        (w.split('\n').skip(1))
            .map(|f| Cow::Owned(f.as_bytes().to_vec()))
            .collect()
    }
}

/// Which pairs of letters a lower-cased text has side by side, one bit each (26 x 26), and
/// which letters it has at all (26 bits more, in the words' spare bits: no byte more a row).
/// A term whose pairs and letters are not all there is not in the text, and the text is not
/// read: after a first letter, `fi` and `fix` re-checked 30-90k texts of up to 800 bytes that
/// did not say them. For a term of one or two letters the bits are the answer (`exact`):
/// `f` and `fi` then read no row's text at all.
#[derive(Clone, Copy, Default)]
pub(super) struct Pairs([u64; 11]);

/// Where the single letters' bits begin, after the pairs'.
const LETTERS: usize = 26 * 26;

impl Pairs {
    pub(super) fn of(text: &[u8]) -> Pairs {
        let mut p = Pairs::default();
        let mut prev = None;
        for &b in text {
            let cur = letter(b);
            if let Some(c) = cur {
                p.set(LETTERS + c);
                if let Some(a) = prev {
                    p.set(a * 26 + c);
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
    /// one or two lower-case ASCII letters (a pair's bit is set only by those two bytes side
    /// by side), not for longer needles (`fix` is not in "fi ix") or other bytes.
    pub(super) fn exact(needle: &[u8]) -> bool {
        matches!(needle.len(), 1 | 2) && needle.iter().all(u8::is_ascii_lowercase)
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
            .reserve(items.iter().map(|i| i.title_lower().len()).sum());
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
        let t = folded(item.title_lower());
        let at = (self.bytes.len() as u32, t.len() as u32);
        self.bytes.extend_from_slice(&t);
        (at, Letters::of(&t))
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
mod tests {
    use super::*;
    use crate::model::StoreKind;

    #[test]
    fn letter_pairs_rule_out_only_what_the_text_cannot_say() {
        let p = Pairs::of(b"fix the login\nretry");
        for said in ["fix", "login", "x", "retry", "n\nr", "the l"] {
            assert!(p.has_all(&Pairs::of(said.as_bytes())), "{said}");
        }
        for not in ["xf", "lg", "tryr", "z", "q"] {
            assert!(!p.has_all(&Pairs::of(not.as_bytes())), "{not}");
        }
    }

    /// For one or two letters the bits answer alone, so they must agree with a substring
    /// search on every text: random texts over a small alphabet (letters, a digit, a space,
    /// a newline, a capital), every needle of one and two letters.
    #[test]
    fn letter_bits_decide_one_and_two_letter_needles_exactly() {
        let alphabet = b"abcfix1 \nZ";
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let needles: Vec<Vec<u8>> = (b'a'..=b'z')
            .map(|a| vec![a])
            .chain((b'a'..=b'j').flat_map(|a| (b'a'..=b'z').map(move |b| vec![a, b])))
            .collect();
        for _ in 0..400 {
            let len = (next() % 12) as usize;
            let text: Vec<u8> = (0..len)
                .map(|_| alphabet[(next() % alphabet.len() as u64) as usize])
                .collect();
            let p = Pairs::of(&text);
            for n in &needles {
                assert!(Pairs::exact(n));
                let said = memchr::memmem::find(&text, n).is_some();
                assert_eq!(p.has_all(&Pairs::of(n)), said, "{text:?} {n:?}");
            }
        }
        assert!(!Pairs::exact(b"fix") && !Pairs::exact(b"f1") && !Pairs::exact(b"F"));
    }

    #[test]
    fn the_text_as_written_comes_back_from_its_bits() {
        let mut s = SessionSummary::new(StoreKind::Loop, "a", "/x");
        s.title = "Fix the PORT".into();
        s.summary = "Retry in CI".into();
        let i = Item::new(&s);
        assert!(
            i.written.is_none(),
            "ASCII capitals are bits, not a second copy"
        );
        assert_eq!(i.written().split('\n').next(), Some("Fix the PORT"));
        assert_eq!(i.title_lower(), b"fix the port");
        let f = memchr::memmem::Finder::new(b"ci");
        let w = memchr::memmem::Finder::new(b"CI");
        assert!(i.text_has(&f, Some((&w, b"CI"))));
        let w = memchr::memmem::Finder::new(b"Ci");
        assert!(!i.text_has(&f, Some((&w, b"Ci"))));
        s.title = "Été".into();
        let i = Item::new(&s);
        assert_eq!(i.written().split('\n').next(), Some("Été"));
    }
}
