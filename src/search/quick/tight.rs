//! The title rule of the quick search, written out: a term matches a title when its letters
//! stand there contiguous, or, for a term of `FUZZY_MIN_LEN` letters or more, with one letter
//! left out inside one word. It runs on the title's bytes when title and term are ASCII (a
//! memchr for the first letter, then a compare), on chars otherwise.
//!
//! nucleo's fuzzy scorer used to find the alignment and this rule then judged it: about a
//! microsecond a row, most of a first letter's 30–65 ms at 100k sessions (issue 10). Here
//! every occurrence is considered, so a title that says the term is never missed because the
//! scorer preferred letters scattered over word starts.

use super::FUZZY_MIN_LEN;

/// A unit of a title: a byte of an ASCII one, or a char.
pub(super) trait Unit: Copy + Eq {
    fn alnum(self) -> bool;
    /// The first `x` in `hay` from `from` on.
    fn find(hay: &[Self], x: Self, from: usize) -> Option<usize>;
}

impl Unit for u8 {
    fn alnum(self) -> bool {
        self.is_ascii_alphanumeric()
    }
    fn find(hay: &[u8], x: u8, from: usize) -> Option<usize> {
        memchr::memchr(x, hay.get(from..)?).map(|i| i + from)
    }
}

impl Unit for char {
    fn alnum(self) -> bool {
        self.is_alphanumeric()
    }
    fn find(hay: &[char], x: char, from: usize) -> Option<usize> {
        (hay.get(from..)?.iter().position(|&c| c == x)).map(|i| i + from)
    }
}

/// Which ASCII letters a folded title has, and which of them begin a word there (after
/// nothing, or after a char that is not alphanumeric, as `tight` judges a word start): two
/// words a row, 0.8 MB at 100k sessions. A title without every letter of a term cannot
/// match it, not even with one letter left out (the window still holds all the term's), so
/// its title is not read; and for a term of one letter the bits are the whole answer. The
/// first key of a query used to run `tight` over each of 100k titles (half its time).
///
/// Beside them, the title's pairs of side-by-side letters and digits, hashed into 128 bits
/// (two words more a row, 1.6 MB at 100k): a title that says a term holds all its pairs, or,
/// with one letter left out, all but one. A narrowing key over ~29k matches (`rou`, `time`)
/// ran `tight` on every title that had the letters; the pairs rule most of them out unread.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Letters {
    has: u32,
    starts: u32,
    pairs: [u64; 2],
}

/// The bit of the pair `a b` in `Letters::pairs`, when both are ASCII letters or digits (the
/// pairs a term's needle is checked against are taken the same way, so none is missed).
fn pair_bit(a: u8, b: u8) -> Option<u32> {
    let alnum = |c: u8| c.is_ascii_lowercase() || c.is_ascii_digit();
    (alnum(a) && alnum(b))
        .then(|| (u32::from(a) << 8 | u32::from(b)).wrapping_mul(0x9e37_79b1) >> 25)
}

/// The hashed pairs of `bytes`, as `Letters::pairs` holds them.
fn pairs_of(bytes: &[u8]) -> [u64; 2] {
    let mut p = [0u64; 2];
    for w in bytes.windows(2) {
        if let Some(bit) = pair_bit(w[0], w[1]) {
            p[bit as usize / 64] |= 1 << (bit % 64);
        }
    }
    p
}

impl Letters {
    /// The letters of a title folded as `title_of` takes it (UTF-8 bytes).
    pub(super) fn of(title: &[u8]) -> Letters {
        let mut l = Letters::default();
        let mut mark = |c: char, prev_alnum: bool| {
            if c.is_ascii_lowercase() {
                let bit = 1 << (c as u8 - b'a');
                l.has |= bit;
                if !prev_alnum {
                    l.starts |= bit;
                }
            }
        };
        let mut prev = false;
        if title.is_ascii() {
            for &b in title {
                mark(b as char, prev);
                prev = b.is_ascii_alphanumeric();
            }
        } else {
            for c in String::from_utf8_lossy(title).chars() {
                mark(c, prev);
                prev = c.is_alphanumeric();
            }
        }
        // Bytes side by side, also in a title that is not ASCII: two ASCII chars next to
        // each other are two bytes next to each other in UTF-8.
        l.pairs = pairs_of(title);
        l
    }

    /// The hashed letter pairs of a needle (lower-case ASCII), for `may_say`.
    pub(super) fn needs_pairs(needle: &[u8]) -> [u64; 2] {
        pairs_of(needle)
    }

    /// Whether the title may say a needle with the pairs `need` under the title rule: all
    /// of them there, or all but one when a letter may be left out (`fuzzy`: the window is
    /// the needle with one letter added inside, which parts only the pair around it).
    /// False only when `tight` cannot match.
    pub(super) fn may_say(self, need: [u64; 2], fuzzy: bool) -> bool {
        let missing =
            (need[0] & !self.pairs[0]).count_ones() + (need[1] & !self.pairs[1]).count_ones();
        missing == 0 || (fuzzy && missing == 1)
    }

    /// The lower-case ASCII letters of `needle`, one bit each.
    pub(super) fn needs(needle: &[u8]) -> u32 {
        (needle.iter().filter(|b| b.is_ascii_lowercase())).fold(0, |m, b| m | 1 << (b - b'a'))
    }

    /// Whether the title has every letter of the mask `need`.
    pub(super) fn has_all(self, need: u32) -> bool {
        self.has & need == need
    }

    /// How a one-letter term `c` (a lower-case ASCII letter) matches the title: exactly what
    /// `tight` finds, without reading it.
    pub(super) fn one(self, c: u8) -> Option<TitleHit> {
        let bit = 1 << (c - b'a');
        (self.has & bit != 0).then_some(TitleHit {
            exact: true,
            word_start: self.starts & bit != 0,
        })
    }
}

/// How one term matched a title.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct TitleHit {
    /// Contiguous, as written.
    pub exact: bool,
    /// The match begins a word.
    pub word_start: bool,
}

/// Whether `needle` matches `hay` (both folded as the term asks) under the title rule: a
/// contiguous occurrence first, one that starts a word before one inside a word. With `out`,
/// the matched positions are appended to it.
pub(super) fn tight<T: Unit>(
    hay: &[T],
    needle: &[T],
    out: Option<&mut Vec<u32>>,
) -> Option<TitleHit> {
    let n = needle.len();
    if n == 0 || n > hay.len() {
        return None;
    }
    let starts = |i: usize| i == 0 || !hay[i - 1].alnum();
    let mut best = None;
    let mut from = 0;
    while let Some(p) = T::find(hay, needle[0], from) {
        if p + n > hay.len() {
            break;
        }
        // Compared in line: a call to memcmp for each candidate of a term a few bytes long
        // cost more than the compare (`perf`: a tenth of a narrowing key).
        if hay[p..p + n].iter().zip(needle).all(|(a, b)| a == b) {
            best = best.or(Some(p));
            if starts(p) {
                best = Some(p);
                break;
            }
        }
        from = p + 1;
    }
    if let Some(p) = best {
        if let Some(out) = out {
            out.extend((p..p + n).map(|i| i as u32));
        }
        return Some(TitleHit {
            exact: true,
            word_start: starts(p),
        });
    }
    if n < FUZZY_MIN_LEN {
        return None;
    }
    // A window of n + 1 letters and digits that is the term with one letter added inside:
    // its first k units are the term's, and the rest after the added one.
    let mut best = None;
    let mut from = 0;
    while let Some(p) = T::find(hay, needle[0], from) {
        if p + n >= hay.len() {
            break;
        }
        let w = &hay[p..=p + n];
        if w[n] == needle[n - 1] && w.iter().all(|c| c.alnum()) {
            let head = w.iter().zip(needle).take_while(|(a, b)| a == b).count();
            let tail = (w.iter().rev().zip(needle.iter().rev()))
                .take_while(|(a, b)| a == b)
                .count();
            let k = head.min(n - 1);
            if k >= 1 && n - k <= tail {
                best = best.or(Some((p, k)));
                if starts(p) {
                    best = Some((p, k));
                    break;
                }
            }
        }
        from = p + 1;
    }
    let (p, k) = best?;
    if let Some(out) = out {
        out.extend((p..p + k).chain(p + k + 1..=p + n).map(|i| i as u32));
    }
    Some(TitleHit {
        exact: false,
        word_start: starts(p),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(hay: &str, needle: &str) -> Option<(bool, bool, Vec<u32>)> {
        let mut out = Vec::new();
        let h = tight(hay.as_bytes(), needle.as_bytes(), Some(&mut out))?;
        let chars: Vec<char> = hay.chars().collect();
        let n: Vec<char> = needle.chars().collect();
        let mut out2 = Vec::new();
        assert_eq!(
            tight(&chars, &n, Some(&mut out2)),
            Some(h),
            "bytes and chars agree"
        );
        assert_eq!(out, out2);
        Some((h.exact, h.word_start, out))
    }

    #[test]
    fn contiguous_prefers_a_word_start() {
        assert_eq!(
            hit("export port", "port"),
            Some((true, true, vec![7, 8, 9, 10]))
        );
        assert_eq!(hit("export", "port"), Some((true, false, vec![2, 3, 4, 5])));
        // Said as written, though letters over word starts would score higher in nucleo.
        assert_eq!(hit("a_b xab", "ab"), Some((true, false, vec![5, 6])));
        assert_eq!(hit("tidy imports", "tim"), None);
    }

    #[test]
    fn one_letter_left_out_inside_a_word_for_long_terms_only() {
        assert_eq!(
            hit("timezone bug", "timzone"),
            Some((false, true, vec![0, 1, 2, 4, 5, 6, 7]))
        );
        assert_eq!(hit("timezone", "tmzne"), None, "two letters left out");
        assert_eq!(hit("fix the", "fxthe"), None, "across words");
        assert_eq!(hit("fix thee", "fxth"), None, "short terms");
        assert_eq!(hit("xtimezone", "timzone").map(|h| h.1), Some(false));
        // The left-out letter is inside: the term's ends are the window's.
        assert_eq!(
            hit("timezonex", "imezonex"),
            Some((true, false, (1..9).collect()))
        );
        assert_eq!(
            hit("aimezone", "imezone"),
            Some((true, false, (1..8).collect()))
        );
        assert_eq!(hit("ximezonex", "imzonex").map(|h| h.0), Some(false));
    }

    /// The letter bits stand in for `tight`: for one letter they give what it finds, and a
    /// title they rule out for a longer term is one it does not match. Random titles over a
    /// small alphabet (letters, a digit, a space, a dash, an accent, a CJK char) against
    /// every needle of one letter and many of two to six.
    #[test]
    fn title_letters_agree_with_the_title_rule() {
        let alphabet = ['a', 'b', 'e', 'f', 'i', 'x', '1', ' ', '-', 'é', '日'];
        let mut next = crate::search::quick::tests::xorshift(0x51_7cc1_b727_220a);
        let letters = b"abefix1";
        for _ in 0..3000 {
            let title: String = (0..next(14))
                .map(|_| alphabet[next(alphabet.len())])
                .collect();
            let l = Letters::of(title.as_bytes());
            let chars: Vec<char> = title.chars().collect();
            for &c in b"abefixz" {
                let want = match title.is_ascii() {
                    true => tight(title.as_bytes(), &[c], None),
                    false => tight(&chars, &[c as char], None),
                };
                assert_eq!(l.one(c), want, "{title:?} {}", c as char);
            }
            let needle: Vec<u8> = (0..1 + next(6))
                .map(|_| letters[next(letters.len())])
                .collect();
            let n: Vec<char> = needle.iter().map(|&b| b as char).collect();
            if tight(&chars, &n, None).is_some() {
                assert!(l.has_all(Letters::needs(&needle)), "{title:?} {n:?}");
                let fuzzy = needle.len() >= FUZZY_MIN_LEN;
                assert!(
                    l.may_say(Letters::needs_pairs(&needle), fuzzy),
                    "{title:?} {n:?}"
                );
            }
        }
        assert_eq!(Letters::needs(b"fix1"), 1 << 5 | 1 << 8 | 1 << 23);
    }

    /// The pairs rule a title out only when `tight` cannot match it: one pair may be missing
    /// where a long term leaves a letter out ("timzone" in "timezone" lacks `mz`), none for a
    /// short term or a contiguous match; titles with the letters but not the pairs are out.
    #[test]
    fn title_pairs_allow_one_left_out_letter_and_no_more() {
        let l = |t: &str| Letters::of(t.as_bytes());
        let p = Letters::needs_pairs;
        assert!(l("timezone bug").may_say(p(b"timzone"), true));
        assert!(!l("timezone bug").may_say(p(b"timzone"), false));
        assert!(l("日本 timezone").may_say(p(b"timezone"), false));
        assert!(l("fix login").may_say(p(b"login"), true));
        assert!(!l("fix the parser").may_say(p(b"tim"), false));
        assert!(
            !l("out ti me").may_say(p(b"timeout"), true),
            "two pairs missing"
        );
        assert!(l("a1b").may_say(p(b"a1b"), false), "digits pair too");
    }
}
