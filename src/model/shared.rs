//! Interned text for row fields that many sessions repeat (cwd, model): one allocation per
//! distinct value, shared by every row that says it.
//!
//! Why: a list row is held for every session as long as spool runs. At 100k sessions the
//! benchmark corpus has 8 distinct cwds and 2 models, yet each row held its own copies
//! (~40 and ~16 heap bytes a row, plus a 24-byte `String` each). Its text is held once,
//! behind a thin pointer (`Arc<Box<str>>`, 8 bytes, and `Option<Shared>` too): an `Arc<str>`
//! was 16, and at 8 bytes less for each of a row's cwd and model the row's `Arc` fell into
//! glibc's next smaller size class (208 bytes, not 224: 1.6 MB at 100k rows; the row has
//! shrunk since, see `session.rs`'s size test for jemalloc's classes); the slimmed
//! metas' cwds are 0.8 MB less too. The second indirection is paid on a few distinct texts
//! only. The serde form is a plain string, so the catalog's bytes and `list --json` are
//! unchanged.

use std::borrow::Borrow;
use std::collections::HashSet;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::ops::Deref;
use std::sync::{Arc, Mutex};

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};

/// A string shared by every holder of the same text (see the module's doc).
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Shared(Arc<Box<str>>);

/// The table's key: a `Shared`'s allocation, looked up by its text.
struct Key(Arc<Box<str>>);

impl Borrow<str> for Key {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl PartialEq for Key {
    fn eq(&self, o: &Key) -> bool {
        self.0 == o.0
    }
}

impl Eq for Key {}

// As `str` hashes, so a `&str` finds its key (`Borrow`'s contract).
impl Hash for Key {
    fn hash<H: Hasher>(&self, h: &mut H) {
        let s: &str = &self.0;
        s.hash(h);
    }
}

/// Every distinct text interned so far. Values no row holds any more are dropped when the
/// table has doubled since it was last swept, so it stays bounded by the live values.
struct Table {
    set: HashSet<Key>,
    swept: usize,
}

static TABLE: Mutex<Option<Table>> = Mutex::new(None);

impl Shared {
    /// The shared copy of `s` (interned on first sight).
    pub fn new(s: &str) -> Shared {
        let mut guard = TABLE.lock().unwrap_or_else(|e| e.into_inner());
        let t = guard.get_or_insert_with(|| Table {
            set: HashSet::new(),
            swept: 0,
        });
        if let Some(a) = t.set.get(s) {
            return Shared(a.0.clone());
        }
        if t.set.len() >= 2 * t.swept + 64 {
            // Only the table holds these: no row says them any more.
            t.set.retain(|a| Arc::strong_count(&a.0) > 1);
            t.swept = t.set.len();
        }
        let a = Arc::new(Box::<str>::from(s));
        t.set.insert(Key(a.clone()));
        Shared(a)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl Deref for Shared {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for Shared {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl AsRef<std::path::Path> for Shared {
    fn as_ref(&self) -> &std::path::Path {
        std::path::Path::new(self.as_str())
    }
}

impl AsRef<std::ffi::OsStr> for Shared {
    fn as_ref(&self) -> &std::ffi::OsStr {
        std::ffi::OsStr::new(self.as_str())
    }
}

impl From<&str> for Shared {
    fn from(s: &str) -> Shared {
        Shared::new(s)
    }
}

impl From<String> for Shared {
    fn from(s: String) -> Shared {
        Shared::new(&s)
    }
}

impl From<&String> for Shared {
    fn from(s: &String) -> Shared {
        Shared::new(s)
    }
}

impl From<Shared> for String {
    fn from(s: Shared) -> String {
        s.0.to_string()
    }
}

impl PartialEq<str> for Shared {
    fn eq(&self, o: &str) -> bool {
        self.as_str() == o
    }
}

impl PartialEq<&str> for Shared {
    fn eq(&self, o: &&str) -> bool {
        self.as_str() == *o
    }
}

impl PartialEq<String> for Shared {
    fn eq(&self, o: &String) -> bool {
        self.as_str() == o.as_str()
    }
}

impl fmt::Debug for Shared {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for Shared {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for Shared {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Shared {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Shared, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Shared;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string")
            }
            // A text already interned costs no allocation: the decoder's scratch is looked up.
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Shared, E> {
                Ok(Shared::new(v))
            }
        }
        // `string`, not `str`: see `super::wire::arc_str`.
        d.deserialize_string(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_texts_share_one_allocation() {
        let a = Shared::new("/home/u/projects/shared-test-a");
        let b: Shared = String::from("/home/u/projects/shared-test-a").into();
        assert!(Arc::ptr_eq(&a.0, &b.0));
        assert_eq!(a, "/home/u/projects/shared-test-a");
        let c = Shared::new("/home/u/projects/shared-test-c");
        assert!(!Arc::ptr_eq(&a.0, &c.0));
    }

    /// A thin pointer: a row holds two (cwd, model), a slimmed meta one (see the module's doc).
    #[test]
    fn a_shared_text_is_one_word_even_when_optional() {
        assert_eq!(std::mem::size_of::<Option<Shared>>(), 8);
    }

    #[test]
    fn the_serde_form_is_a_plain_string() {
        let a = Shared::new("pi/model-x");
        let bytes = postcard::to_allocvec(&a).unwrap();
        assert_eq!(bytes, postcard::to_allocvec("pi/model-x").unwrap());
        let back: Shared = postcard::from_bytes(&bytes).unwrap();
        assert!(Arc::ptr_eq(&a.0, &back.0));
        assert_eq!(serde_json::to_string(&a).unwrap(), "\"pi/model-x\"");
        let j: Shared = serde_json::from_str("\"pi/model-x\"").unwrap();
        assert_eq!(j, a);
    }

    #[test]
    fn values_no_row_holds_are_swept() {
        for i in 0..300 {
            drop(Shared::new(&format!("sweep-test-{i}")));
        }
        let kept = Shared::new("sweep-test-kept");
        for i in 300..600 {
            drop(Shared::new(&format!("sweep-test-{i}")));
        }
        let n = TABLE.lock().unwrap().as_ref().unwrap().set.len();
        assert!(n < 400, "the table kept {n} dead values");
        assert!(Arc::ptr_eq(&kept.0, &Shared::new("sweep-test-kept").0));
    }
}
