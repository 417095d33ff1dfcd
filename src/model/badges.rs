//! A row's badges: the short facts and warnings shown beside it ("branch main", "cwd
//! missing", "9240 tokens"), most telling first.
//!
//! Most badges say the same few words on many rows and are interned (`Shared`: 8 bytes a
//! row each). A count differs on nearly every row (Codex's token count): interned, each
//! was a table entry and two allocations, about 100 bytes a row (issue 10: ~10 MB of a
//! warm start's peak at 100k Codex sessions). The trailing badges that start with a digit
//! are therefore held in the row's own text buffer (`row_text`, NUL-ended), the rest
//! interned; `badges()` reads them back in order, the interned ones first.

use super::{SessionSummary, Shared};

/// Own badges longer than this in all are interned instead (the buffer's length field is
/// 16 bits; a real row's counts are a few dozen bytes).
const OWN_CAP: usize = 1024;

/// A row's badges in order (`SessionSummary::badges`).
#[derive(Clone)]
pub struct Badges<'a> {
    shared: std::slice::Iter<'a, Shared>,
    own: &'a [u8],
}

impl<'a> Iterator for Badges<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        if let Some(s) = self.shared.next() {
            return Some(s.as_str());
        }
        let end = self.own.iter().position(|&b| b == 0)?;
        let (b, rest) = self.own.split_at(end);
        self.own = &rest[1..];
        // SAFETY: own badges are copies of `&str`s ended by a NUL (`own_bytes`), and a NUL is
        // never inside one of them, so each piece is a whole `&str`'s bytes.
        Some(unsafe { std::str::from_utf8_unchecked(b) })
    }

    /// Exact (the catalog's encoder writes a sequence's length first).
    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.shared.len() + self.own.iter().filter(|&&b| b == 0).count();
        (n, Some(n))
    }
}

impl ExactSizeIterator for Badges<'_> {}

impl std::fmt::Debug for Badges<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.clone()).finish()
    }
}

/// Where `bs` splits into the interned head and the row's own tail: the trailing badges
/// that start with a digit and hold no NUL, up to `OWN_CAP` bytes in all.
fn own_from<T: AsRef<str>>(bs: &[T]) -> usize {
    let mut at = bs.len();
    let mut len = 0;
    while let Some(b) = at.checked_sub(1).map(|i| bs[i].as_ref()) {
        len += b.len() + 1;
        if !b.starts_with(|c: char| c.is_ascii_digit()) || b.contains('\0') || len > OWN_CAP {
            break;
        }
        at -= 1;
    }
    at
}

/// The own badges' bytes: each followed by a NUL.
fn own_bytes<T: AsRef<str>>(bs: &[T]) -> Vec<u8> {
    let mut out = Vec::new();
    for b in bs {
        out.extend_from_slice(b.as_ref().as_bytes());
        out.push(0);
    }
    out
}

/// `bs` as a row holds them: the interned head, and the own tail's bytes.
pub(super) fn split<T: AsRef<str>>(bs: &[T]) -> (Box<[Shared]>, Vec<u8>) {
    let at = own_from(bs);
    let shared = bs[..at].iter().map(|b| Shared::new(b.as_ref())).collect();
    (shared, own_bytes(&bs[at..]))
}

impl SessionSummary {
    /// The badges, in order.
    pub fn badges(&self) -> Badges<'_> {
        Badges {
            shared: self.badges.iter(),
            own: self.text.own(),
        }
    }

    pub fn has_badges(&self) -> bool {
        !self.badges.is_empty() || !self.text.own().is_empty()
    }

    /// Add a badge after the others.
    pub fn add_badge(&mut self, b: &str) {
        let after = self.badges().len();
        self.insert_badge(after, b);
    }

    /// Put a badge at `i` (0: before the others).
    pub fn insert_badge(&mut self, i: usize, b: &str) {
        let mut v: Vec<String> = self.badges().map(str::to_owned).collect();
        v.insert(i, b.to_owned());
        self.set_badges(v);
    }

    /// The badges as one line, `, ` between them.
    pub fn badge_text(&self) -> String {
        self.badges().collect::<Vec<_>>().join(", ")
    }

    /// Replace the badges.
    pub fn set_badges<T: AsRef<str>>(&mut self, bs: impl IntoIterator<Item = T>) {
        let bs: Vec<T> = bs.into_iter().collect();
        let (shared, own) = split(&bs);
        self.badges = shared;
        if own != self.text.own() {
            let id = &self.id;
            self.text = self.text.rebuilt([None; 3], Some(&own), None, (id, id));
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::model::{SessionSummary, StoreKind};

    fn badges(s: &SessionSummary) -> Vec<&str> {
        s.badges().collect()
    }

    /// Counts at the end are the row's own, the rest interned, and all read back in order,
    /// through additions, insertions and the catalog's serde form.
    #[test]
    fn trailing_counts_are_the_rows_own_and_read_back_in_order() {
        let mut s = SessionSummary::new(StoreKind::Codex, "c", "/p/c.jsonl");
        assert!(!s.has_badges());
        s.set_badges(["1 subagent", "branch main", "9240 tokens", "3 copied"]);
        assert_eq!(s.badges.len(), 2, "the head is interned");
        assert_eq!(s.text.own(), b"9240 tokens\x003 copied\0");
        assert_eq!(
            badges(&s),
            ["1 subagent", "branch main", "9240 tokens", "3 copied"]
        );
        s.insert_badge(0, "archived in Codex");
        s.add_badge("live");
        assert_eq!(s.text.own(), b"", "a word after the counts: all interned");
        assert_eq!(
            badges(&s),
            [
                "archived in Codex",
                "1 subagent",
                "branch main",
                "9240 tokens",
                "3 copied",
                "live"
            ]
        );
        assert_eq!(
            s.badge_text(),
            "archived in Codex, 1 subagent, branch main, 9240 tokens, 3 copied, live"
        );
        s.set_badges(["2 tokens"]);
        let back: SessionSummary =
            postcard::from_bytes(&postcard::to_allocvec(&s).unwrap()).unwrap();
        assert_eq!((badges(&back), back.path()), (vec!["2 tokens"], s.path()));
        assert_eq!(back, s);
        s.set_badges(Vec::<String>::new());
        assert!(!s.has_badges() && s.text.own().is_empty());
    }

    /// A count with a NUL inside, or counts longer than the cap, are interned: the row's
    /// own text never splits a badge wrongly nor overflows its length.
    #[test]
    fn odd_counts_are_interned() {
        let mut s = SessionSummary::new(StoreKind::Codex, "c", "/p/c.jsonl");
        let long = format!("1{}", "x".repeat(2000));
        s.set_badges(["2 a\0b", "3 c"]);
        assert_eq!(badges(&s), ["2 a\0b", "3 c"]);
        assert_eq!(s.badges.len(), 1);
        s.set_badges([long.as_str(), "4 d"]);
        assert_eq!(badges(&s), [long.as_str(), "4 d"]);
        assert_eq!(s.text.own(), b"4 d\0");
    }
}
