//! A row's badges ("archived in Codex", "branch main", "48954 tokens", ...) in one buffer,
//! each followed by a 0xFF byte (which UTF-8 never holds), read back as `&str`s.
//!
//! Why (issue 10): a Codex row carries three or four badges, one of them its own (the token
//! count). Interned one by one (`Shared`) behind a boxed slice, a row's badges cost the
//! slice (48 bytes), and its own badge a shared allocation, its text and a slot in the
//! intern table (~90 bytes), plus a lock and a hash lookup per badge as the catalog is
//! decoded: about 13 MB and 330k lookups at 100k Codex rows. End to end they are one
//! allocation of about 50 bytes, none for a row without badges. The serde form is still a
//! list of strings, so the catalog's bytes do not change.

use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, SeqAccess, Visitor};
use serde::{Deserialize, Serialize, Serializer};

/// Ends each badge in the buffer.
const END: u8 = 0xFF;

/// A row's badges, owned (see the module's doc).
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Badges(Box<[u8]>);

impl Badges {
    pub fn of<T: AsRef<str>>(bs: impl IntoIterator<Item = T>) -> Badges {
        let mut buf = Vec::new();
        for b in bs {
            push(&mut buf, b.as_ref());
        }
        Badges(buf.into_boxed_slice())
    }

    pub fn list(&self) -> BadgeList<'_> {
        BadgeList(&self.0)
    }

    /// The same badges with `b` put at `i` (at most their count).
    pub fn inserted(&self, i: usize, b: &str) -> Badges {
        let list = self.list();
        let (before, after) = (list.iter().take(i), list.iter().skip(i));
        Badges::of(before.chain([b]).chain(after))
    }
}

fn push(buf: &mut Vec<u8>, b: &str) {
    buf.extend_from_slice(b.as_bytes());
    buf.push(END);
}

/// A row's badges, borrowed: what `SessionSummary::badges` returns.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct BadgeList<'a>(&'a [u8]);

impl<'a> BadgeList<'a> {
    pub fn iter(self) -> impl DoubleEndedIterator<Item = &'a str> + Clone + 'a {
        let inner = self.0.split_last().map_or(&[][..], |(_, b)| b);
        let parts = (!self.0.is_empty()).then(|| inner.split(|&c| c == END));
        // SAFETY: each part is the bytes of a `&str` (`push`), and 0xFF occurs in no UTF-8
        // text, so splitting at it cuts no character.
        (parts.into_iter().flatten()).map(|b| unsafe { std::str::from_utf8_unchecked(b) })
    }

    pub fn len(self) -> usize {
        self.0.iter().filter(|&&c| c == END).count()
    }

    pub fn is_empty(self) -> bool {
        self.0.is_empty()
    }

    pub fn to_vec(self) -> Vec<&'a str> {
        self.iter().collect()
    }
}

impl<'a> IntoIterator for BadgeList<'a> {
    type Item = &'a str;
    type IntoIter = Box<dyn Iterator<Item = &'a str> + 'a>;
    fn into_iter(self) -> Self::IntoIter {
        Box::new(self.iter())
    }
}

impl std::ops::Index<usize> for BadgeList<'_> {
    type Output = str;
    fn index(&self, i: usize) -> &str {
        let n = self.len();
        self.iter()
            .nth(i)
            .unwrap_or_else(|| panic!("badge {i} of {n}"))
    }
}

impl<const N: usize> PartialEq<[&str; N]> for BadgeList<'_> {
    fn eq(&self, o: &[&str; N]) -> bool {
        self.iter().eq(o.iter().copied())
    }
}

impl PartialEq<Vec<&str>> for BadgeList<'_> {
    fn eq(&self, o: &Vec<&str>) -> bool {
        self.iter().eq(o.iter().copied())
    }
}

impl fmt::Debug for BadgeList<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl fmt::Debug for Badges {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.list().fmt(f)
    }
}

impl Serialize for BadgeList<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        // postcard writes the count first: it must be given.
        let mut seq = s.serialize_seq(Some(self.len()))?;
        for b in self.iter() {
            seq.serialize_element(b)?;
        }
        seq.end()
    }
}

impl<'de> Deserialize<'de> for Badges {
    /// A list of strings, each appended to one buffer as it is read (no string of its own).
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Badges, D::Error> {
        struct Append<'v>(&'v mut Vec<u8>);
        impl<'de> DeserializeSeed<'de> for Append<'_> {
            type Value = ();
            fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
                d.deserialize_str(self)
            }
        }
        impl Visitor<'_> for Append<'_> {
            type Value = ();
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a badge")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<(), E> {
                push(self.0, v);
                Ok(())
            }
        }
        struct List;
        impl<'de> Visitor<'de> for List {
            type Value = Badges;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a list of badges")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Badges, A::Error> {
                let mut buf = Vec::new();
                while seq.next_element_seed(Append(&mut buf))?.is_some() {}
                Ok(Badges(buf.into_boxed_slice()))
            }
        }
        d.deserialize_seq(List)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Badges read back as given, in order: none, an empty one, several with non-ASCII text
    /// and separators of other lists (", ", newlines); inserted anywhere; and through serde
    /// as the list of strings the catalog always held.
    #[test]
    fn badges_read_back_as_given() {
        let cases: [&[&str]; 5] = [
            &[],
            &[""],
            &["", ""],
            &["archived in Codex", "branch feat/é日本", "48954 tokens"],
            &["a, b", "two\nlines", "", "z"],
        ];
        for want in cases {
            let b = Badges::of(want);
            let l = b.list();
            assert_eq!(l.to_vec(), want);
            assert_eq!((l.len(), l.is_empty()), (want.len(), want.is_empty()));
            for (i, w) in want.iter().enumerate() {
                assert_eq!(&l[i], *w);
            }
            assert_eq!(format!("{l:?}"), format!("{want:?}"));
            // The catalog's form: a list of strings, as a `Vec<String>` writes it.
            let as_list = postcard::to_allocvec(&want).unwrap();
            assert_eq!(postcard::to_allocvec(&l).unwrap(), as_list);
            let back: Badges = postcard::from_bytes(&as_list).unwrap();
            assert_eq!(back, b);
            for i in 0..=want.len() {
                let mut v = want.to_vec();
                v.insert(i, "new");
                assert_eq!(b.inserted(i, "new").list().to_vec(), v);
            }
        }
        assert_eq!(Badges::of(["x", "y"]).list(), ["x", "y"]);
        assert_ne!(Badges::of(["x", "y"]).list(), ["xy"]);
        assert_ne!(Badges::of(["x"]), Badges::of(["x", ""]));
    }
}
