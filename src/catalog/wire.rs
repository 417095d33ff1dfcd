//! An entry's form in the catalog file: the meta's id, path and cwd are written only where
//! they differ from the row's (almost never), so each is stored once, not twice. That makes
//! the file about a third smaller, and decoding (the warm start's first paint, `spool list`)
//! faster by as much.

use serde::de::{SeqAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::{Entry, Meta};
use crate::model::SessionSummary;

/// What is written (borrowed from the entry: encoding copies nothing).
#[derive(Serialize)]
struct Out<'a> {
    key: u64,
    cwd_dir: bool,
    expires: Option<i64>,
    row: Option<&'a SessionSummary>,
    id: Option<&'a str>,
    path: Option<&'a [u8]>,
    cwd: Option<Option<&'a str>>,
}

/// What is read: the same fields, owned.
#[derive(Deserialize)]
struct In {
    key: u64,
    cwd_dir: bool,
    expires: Option<i64>,
    row: Option<SessionSummary>,
    id: Option<String>,
    path: Option<Vec<u8>>,
    cwd: Option<Option<crate::model::Shared>>,
}

impl Serialize for Entry {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use std::os::unix::ffi::OsStrExt;
        let m = &self.meta;
        let r = self.row.as_deref();
        let path = m.path.as_os_str().as_bytes();
        Out {
            key: m.key,
            cwd_dir: m.cwd_dir,
            expires: m.expires,
            row: r,
            id: (r.map(|r| r.id.as_ref()) != Some(m.id.as_ref())).then_some(m.id.as_ref()),
            path: (r.map(|r| r.path.as_os_str().as_bytes()) != Some(path)).then_some(path),
            cwd: (r.is_none_or(|r| r.cwd.as_deref() != m.cwd.as_deref()))
                .then_some(m.cwd.as_deref()),
        }
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for Entry {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Entry, D::Error> {
        use std::os::unix::ffi::OsStringExt;
        let w = In::deserialize(d)?;
        let r = w.row.as_ref();
        let missing = || serde::de::Error::custom("an entry without a row names no session");
        let id = match w.id {
            Some(id) => id,
            None => r.ok_or_else(missing)?.id.to_string(),
        };
        let path = match w.path {
            Some(p) => std::ffi::OsString::from_vec(p).into(),
            None => r.ok_or_else(missing)?.path.to_path_buf(),
        };
        let cwd = match w.cwd {
            Some(c) => c,
            None => r.ok_or_else(missing)?.cwd.clone(),
        };
        Ok(Entry {
            meta: Meta {
                id,
                path,
                key: w.key,
                cwd,
                cwd_dir: w.cwd_dir,
                expires: w.expires,
            },
            row: w.row.map(std::sync::Arc::new),
        })
    }
}

/// At most this many entries are allocated ahead of reading them (a damaged count costs a
/// bounded allocation, then fails as the bytes run out).
const AHEAD: usize = 1 << 17;

/// A section's entries, in a vector of their exact count. serde's own `Vec` allocates at
/// most 1 MB ahead and then doubles: at 10k entries that copied 7 MB and left 8 MB
/// allocated for 4.5 MB of entries, all before the warm start's first frame (issue 10).
pub fn entries<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Entry>, D::Error> {
    struct Entries;
    impl<'de> Visitor<'de> for Entries {
        type Value = Vec<Entry>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a list of catalog entries")
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<Entry>, A::Error> {
            let mut v = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(AHEAD));
            while let Some(e) = seq.next_element()? {
                v.push(e);
            }
            Ok(v)
        }
    }
    d.deserialize_seq(Entries)
}
