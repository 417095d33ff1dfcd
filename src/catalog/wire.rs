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
pub struct In {
    pub key: u64,
    pub cwd_dir: bool,
    pub expires: Option<i64>,
    pub row: Option<SessionSummary>,
    pub id: Option<String>,
    pub path: Option<Vec<u8>>,
    pub cwd: Option<Option<crate::model::Shared>>,
}

/// Why an entry cannot be read: its meta names no session of its own and it has no row.
pub const MISSING: &str = "an entry without a row names no session";

impl In {
    /// The entry it encodes: the meta's fields the file left out are its row's.
    pub fn entry(self) -> Result<Entry, &'static str> {
        use std::os::unix::ffi::OsStringExt;
        let r = self.row.as_ref();
        let id = match self.id {
            Some(id) => id,
            None => r.ok_or(MISSING)?.id.to_string(),
        };
        let path = match self.path {
            Some(p) => std::ffi::OsString::from_vec(p).into(),
            None => r.ok_or(MISSING)?.path(),
        };
        let cwd = match self.cwd {
            Some(c) => c,
            None => r.ok_or(MISSING)?.cwd.clone(),
        };
        Ok(Entry {
            meta: Meta {
                id,
                path,
                key: self.key,
                cwd,
                cwd_dir: self.cwd_dir,
                expires: self.expires,
            },
            row: self.row.map(std::sync::Arc::new),
        })
    }
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
            path: (r.is_none_or(|r| r.with_path(|p| p.as_os_str().as_bytes() != path)))
                .then_some(path),
            cwd: (r.is_none_or(|r| r.cwd.as_deref() != m.cwd.as_deref()))
                .then_some(m.cwd.as_deref()),
        }
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for Entry {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Entry, D::Error> {
        In::deserialize(d)?
            .entry()
            .map_err(serde::de::Error::custom)
    }
}

/// What a section's entries are decoded into: whole entries (`Vec<Entry>`: the passes, the
/// CLI, the saves), or the warm start's rows and slim metas (`lean::Lean`), which never
/// hold a meta's path or a vector of whole entries (issue 10). The catalog's patch log is
/// replayed on either form.
pub trait Gather: Default {
    /// Room for `n` entries.
    fn reserve(&mut self, n: usize);
    /// Add one entry as the file holds it.
    fn push(&mut self, e: In) -> Result<(), &'static str>;
    /// Drop the entries whose meta's id is in `ids`.
    fn drop_ids(&mut self, ids: &std::collections::HashSet<&str>);
    /// Add entries re-read since (a patch's), after the others.
    fn add(&mut self, fresh: &[Entry]);
}

impl Gather for Vec<Entry> {
    fn reserve(&mut self, n: usize) {
        self.reserve_exact(n);
    }
    fn push(&mut self, e: In) -> Result<(), &'static str> {
        Vec::push(self, e.entry()?);
        Ok(())
    }
    fn drop_ids(&mut self, ids: &std::collections::HashSet<&str>) {
        self.retain(|e| !ids.contains(e.meta.id.as_str()));
    }
    fn add(&mut self, fresh: &[Entry]) {
        self.extend(fresh.iter().cloned());
    }
}

/// At most this many entries are allocated ahead of reading them (a damaged count costs a
/// bounded allocation, then fails as the bytes run out).
const AHEAD: usize = 1 << 17;

/// A section's entries, in a vector of their exact count. serde's own `Vec` allocates at
/// most 1 MB ahead and then doubles: at 10k entries that copied 7 MB and left 8 MB
/// allocated for 4.5 MB of entries, all before the warm start's first frame (issue 10).
pub fn entries<'de, D: Deserializer<'de>, G: Gather>(d: D) -> Result<G, D::Error> {
    struct Entries<G>(std::marker::PhantomData<G>);
    impl<'de, G: Gather> Visitor<'de> for Entries<G> {
        type Value = G;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a list of catalog entries")
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<G, A::Error> {
            let mut v = G::default();
            v.reserve(seq.size_hint().unwrap_or(0).min(AHEAD));
            let mut each = || -> Result<(), A::Error> {
                while let Some(e) = seq.next_element::<In>()? {
                    v.push(e).map_err(serde::de::Error::custom)?;
                }
                Ok(())
            };
            let done = each();
            // A row that failed half way left its texts in the scratch (`wire_scratch`).
            crate::model::wire_scratch::clear();
            done.map(|()| v)
        }
    }
    d.deserialize_seq(Entries(std::marker::PhantomData))
}
