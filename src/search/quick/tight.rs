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
        if hay[p..p + n] == *needle {
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
}
