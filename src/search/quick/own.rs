//! A field of a quick-search item's text as searched, which is either its copy lower-cased
//! in the item or the row's own bytes, lower-cased as they are read: most summaries, prompts
//! and projects are plain ASCII on one line, under the cap, and searched as they stand but
//! for case, so the item keeps no copy of them (issue 10: the copies were 12 MB of the
//! 28 MB the items held at 100k sessions).

use std::borrow::Cow;

/// A field of the text as searched: its bytes, and whether they are the row's own, to be
/// lower-cased as they are read.
#[derive(Clone, Copy)]
pub(super) struct Field<'a> {
    pub(super) bytes: &'a [u8],
    pub(super) own: bool,
}

impl<'a> Field<'a> {
    /// The field as searched, lower-cased: borrowed when the item holds it so.
    pub(super) fn lower(self) -> Cow<'a, [u8]> {
        match self.own {
            true => Cow::Owned(self.bytes.to_ascii_lowercase()),
            false => Cow::Borrowed(self.bytes),
        }
    }

    /// The field from byte `skip` on.
    pub(super) fn from(self, skip: usize) -> Field<'a> {
        Field {
            bytes: &self.bytes[skip..],
            own: self.own,
        }
    }

    /// Where `finder`'s needle (lower-cased, as the text is) is first said in the field
    /// lower-cased.
    pub(super) fn find(self, finder: &memchr::memmem::Finder<'_>) -> Option<usize> {
        match self.own {
            false => finder.find(self.bytes),
            true => find_lowered(self.bytes, finder.needle()),
        }
    }

    /// Whether the field lower-cased says `needle` at byte `at`. Compared in line: slice
    /// equality called memcmp for these few bytes, a sixth of a narrowing key's time.
    pub(super) fn says_at(self, needle: &[u8], at: usize) -> bool {
        let Some(t) = self.bytes.get(at..at + needle.len()) else {
            return false;
        };
        match self.own {
            false => t.iter().zip(needle).all(|(a, b)| a == b),
            true => (t.iter().zip(needle)).all(|(a, b)| a.to_ascii_lowercase() == *b),
        }
    }
}

/// Where `needle` is first said in ASCII `hay` lower-cased, without copying it: the places
/// where its rarest byte may stand (either case of a letter) are found with memchr, and the
/// needle is compared there, lower-cased byte by byte. Looking for its first byte instead
/// (the `f` of `fix`, in most texts) took twice the CPU of memmem over a lower-cased copy.
pub(super) fn find_lowered(hay: &[u8], needle: &[u8]) -> Option<usize> {
    let Some(k) = (0..needle.len()).min_by_key(|&i| commonness(needle[i])) else {
        return Some(0);
    };
    let last = hay.len().checked_sub(needle.len())?;
    // Where byte `k` of a match at 0..=last may stand.
    let places = &hay[k..=last + k];
    let says = |q: &usize| {
        let t = &hay[*q..*q + needle.len()];
        t.iter()
            .zip(needle)
            .all(|(a, b)| a.to_ascii_lowercase() == *b)
    };
    let b = needle[k];
    match b {
        b'a'..=b'z' => memchr::memchr2_iter(b, b.to_ascii_uppercase(), places).find(says),
        // A capital is never said by a lower-cased text.
        b'A'..=b'Z' => None,
        _ => memchr::memchr_iter(b, places).find(says),
    }
}

/// How often byte `b` stands in a text, roughly (letters by their frequency in English, the
/// space first): the needle's least common byte gives the fewest places to compare.
fn commonness(b: u8) -> usize {
    const LETTERS: &[u8; 26] = b"zqjxkvbpygfwmucldrhsnioate";
    match b {
        b' ' => 27,
        b'a'..=b'z' => 1 + LETTERS.iter().position(|&l| l == b).unwrap_or(0),
        _ => 0,
    }
}

#[cfg(test)]
#[path = "own_tests.rs"]
mod tests;
