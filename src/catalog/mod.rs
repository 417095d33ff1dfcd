//! spool's own catalog: every session's listing row, cached in `<cache dir>/spool/catalog.bin`
//! (never inside a store), so a start paints the final list at once and `spool list` costs a
//! stat pass instead of a read of every session.
//!
//! Each row is keyed by its path and a digest of (dev, inode, size, mtime, ctime, mode) of
//! every file it was derived from (`Store::summary_inputs`: a Loop session's `meta.json` and
//! `messages.jsonl`, its collection's `archive.json`, spool's own state file, ...). A row
//! whose key, cwd or expiry no longer holds is re-read from the store; the store always wins.
//!
//! Format: `SPOOLCAT`, a version, a schema fingerprint (the field names of `SessionSummary`,
//! so a new field rebuilds old catalogs without a catalog change), the body's length and the
//! checksum of its table, then the body: each section in postcard (compact serde, no field
//! names, reads in a few ms; an entry's meta repeats none of its row's fields, see `wire`),
//! then a table of the sections' lengths and checksums, so that each decodes, and is checked,
//! on a thread of its own (`stream`).
//! Anything that does not match is ignored and rebuilt, never a crash. Writes go through
//! `store::atomic` (temp file, rename): two writers never corrupt the file, a loser's write
//! is simply lost and redone by the next pass.

pub(crate) mod at;
pub mod checkpoint;
pub mod fold;
pub mod head;
mod head_patch;
#[cfg(test)]
mod head_tests;
pub mod known;
pub mod lean;
pub mod list_warm;
pub mod live;
pub mod log;
pub mod packed;
pub mod pass;
pub mod slim;
pub mod stamp;
mod stream;
pub mod survey;
#[cfg(test)]
mod tests;
pub mod view;
pub mod warm;
mod wire;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::model::{SessionSummary, StoreKind};
use crate::store::atomic;

pub use fold::Change;
pub use pass::{ById, Checked, Known, check, list};

/// Bumped by hand when the layout changes in a way the fingerprint cannot see.
/// 3: the body ends in a table of its sections' lengths (`stream`), so they decode apart.
/// 4: the table holds each section's checksum too, and the header's checksum is the table's:
/// each section is checked by the thread that decodes it (`stream`).
pub const VERSION: u32 = 4;
const MAGIC: &[u8; 8] = b"SPOOLCAT";
const HEADER: usize = 8 + 4 + 8 + 8 + 8;
/// Refuse a catalog larger than this (a million rows fit).
const CAP: u64 = 2 << 30;
/// The file name inside the cache directory.
pub const FILE: &str = "catalog.bin";

/// What a cached row's validity rests on (small: the loader keeps these for every session).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Meta {
    pub id: String,
    #[serde(with = "crate::model::wire::path_bytes")]
    pub path: PathBuf,
    /// `stamp::key` of the store's `summary_inputs` taken just before the row was read.
    pub key: u64,
    /// The row's cwd and whether it was a directory then (rows badge a missing cwd).
    /// Shared with the row (and between the sessions of one project directory).
    pub cwd: Option<crate::model::Shared>,
    pub cwd_dir: bool,
    /// Unix seconds after which the row must be read again (`Store::summary_expires`).
    pub expires: Option<i64>,
}

/// One cached session: `row` is `None` for a candidate the store skips (not a session).
/// Its file form is in `wire` (the meta's copies of the row's fields are left out).
///
/// The row is decoded straight into the `Arc` the browser's list keeps, so a warm start
/// neither holds a vector of inline 344-byte rows beside the list's copies nor moves each
/// row again (issue 10: at 100k sessions the entries were 46 MB and the rows handed to the
/// list another 46 MB, all alive at once). The file form is unchanged.
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    pub meta: Meta,
    pub row: Option<Arc<SessionSummary>>,
}

/// The rows of one store (by kind and `sessions/` directory), as whole entries or in
/// another `Gather` form (the warm start's, `lean`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(bound(deserialize = "L: wire::Gather"))]
pub struct Section<L = Vec<Entry>> {
    pub kind: StoreKind,
    #[serde(with = "crate::model::wire::path_bytes")]
    pub dir: PathBuf,
    #[serde(deserialize_with = "wire::entries")]
    pub entries: L,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(bound(deserialize = "L: wire::Gather"))]
pub struct Catalog<L = Vec<Entry>> {
    pub sections: Vec<Section<L>>,
}

impl<L> Catalog<L> {
    /// Remove and return the section of the store `kind` reading `dir`.
    pub fn take(&mut self, kind: StoreKind, dir: &Path) -> Option<Section<L>> {
        let i = self
            .sections
            .iter()
            .position(|s| s.kind == kind && s.dir == dir)?;
        Some(self.sections.swap_remove(i))
    }

    /// Put `s` in, replacing that store's section.
    pub fn put(&mut self, s: Section<L>) {
        self.take(s.kind, &s.dir);
        self.sections.push(s);
    }
}

/// `<cache>/catalog.bin`.
pub fn file(cache: &Path) -> PathBuf {
    cache.join(FILE)
}

/// The fingerprint of the row layout: the version, the field names of a summary and of a
/// catalog entry, and the store kinds in order.
pub fn schema() -> u64 {
    let mut h = Sha256::new();
    h.update(VERSION.to_le_bytes());
    let probe = Entry {
        meta: Meta {
            id: String::new(),
            path: PathBuf::new(),
            key: 0,
            cwd: None,
            cwd_dir: false,
            expires: None,
        },
        row: Some(Arc::new(SessionSummary::new(StoreKind::Loop, "", ""))),
    };
    if let Ok(serde_json::Value::Object(m)) = serde_json::to_value(&probe) {
        for (k, v) in m {
            h.update(k.as_bytes());
            if let serde_json::Value::Object(inner) = v {
                for k in inner.keys() {
                    h.update(b"/");
                    h.update(k.as_bytes());
                }
            }
        }
    }
    for k in StoreKind::ALL {
        h.update(k.as_str().as_bytes());
    }
    let d = h.finalize();
    u64::from_le_bytes(d[..8].try_into().unwrap_or_default())
}

/// A checksum of the body that costs far less than reading it (word-wise mixing): a flipped
/// byte is caught before decoding can trust it.
fn checksum(body: &[u8]) -> u64 {
    let mut s = Sum::new(body.len() as u64);
    s.add(body);
    s.finish()
}

/// `checksum` taken piece by piece (`stream`: the file is never held whole). Every piece but
/// the last must be a multiple of 8 bytes long, as the sum mixes whole words.
struct Sum {
    h: u64,
    /// The last piece's bytes after its last whole word.
    tail: Vec<u8>,
}

impl Sum {
    fn new(len: u64) -> Sum {
        Sum {
            h: len,
            tail: Vec::new(),
        }
    }

    fn add(&mut self, piece: &[u8]) {
        debug_assert!(self.tail.is_empty(), "only the last piece may end mid-word");
        let mut chunks = piece.chunks_exact(8);
        for c in &mut chunks {
            let w = u64::from_le_bytes(c.try_into().unwrap_or_default());
            self.h = (self.h ^ w).wrapping_mul(0x100_0000_01b3).rotate_left(29);
        }
        self.tail.extend_from_slice(chunks.remainder());
    }

    fn finish(self) -> u64 {
        let mut h = self.h;
        for &b in &self.tail {
            h = (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
        }
        h
    }
}

/// A section's checksum, taken as its bytes pass in pieces of any length (a writer's
/// `write` calls, a reader's `read` calls): `Sum` over the bytes from a zero seed, with their
/// count mixed in last, as a writer knows it only at the end.
struct Running {
    sum: Sum,
    /// The bytes of a word not yet whole.
    word: [u8; 8],
    have: usize,
    len: u64,
}

impl Running {
    fn new() -> Running {
        Running {
            sum: Sum::new(0),
            word: [0; 8],
            have: 0,
            len: 0,
        }
    }

    fn add(&mut self, mut piece: &[u8]) {
        self.len += piece.len() as u64;
        if self.have > 0 {
            let k = (8 - self.have).min(piece.len());
            self.word[self.have..self.have + k].copy_from_slice(&piece[..k]);
            self.have += k;
            piece = &piece[k..];
            if self.have < 8 {
                return;
            }
            self.sum.add(&self.word);
            self.have = 0;
        }
        let whole = piece.len() / 8 * 8;
        self.sum.add(&piece[..whole]);
        let rest = &piece[whole..];
        self.word[..rest.len()].copy_from_slice(rest);
        self.have = rest.len();
    }

    fn finish(mut self) -> u64 {
        self.sum.add(&self.word[..self.have]);
        let h = self.sum.finish();
        (h ^ self.len).wrapping_mul(0x100_0000_01b3).rotate_left(29)
    }
}

/// The file's bytes for `cat` (tests, and `cat`-sized callers): the same writer as `save`.
pub fn encode(cat: &Catalog) -> Option<Vec<u8>> {
    let mut out = std::io::Cursor::new(Vec::with_capacity(HEADER + 4096));
    stream::write_to(&mut out, cat).ok()?;
    Some(out.into_inner())
}

/// Decode a catalog file; `None` for anything but an intact one of this version and schema.
pub fn decode(bytes: &[u8]) -> Option<Catalog> {
    let (cat, _) = stream::read_from(bytes, bytes.len() as u64)?;
    Some(cat)
}

/// Read the catalog in `cache` (`None`: missing, unreadable, corrupt or foreign), with the
/// patches of its log applied.
pub fn load(cache: &Path) -> Option<Catalog> {
    load_as(cache)
}

/// `load` into the entries' form `L` (the warm start's `lean::Lean`).
pub fn load_as<L: wire::Gather + Send>(cache: &Path) -> Option<Catalog<L>> {
    let (mut cat, base) = stream::read::<L>(&file(cache))?;
    log::replay(cache, base, &mut cat);
    Some(cat)
}

/// Write `cat` to `cache` atomically (the directory is created 0700). Best effort: a catalog
/// that cannot be written only makes the next start slower.
pub fn save(cache: &Path, cat: &Catalog) -> crate::error::Result<()> {
    crate::demo::create_cache_dir(cache)
        .map_err(|e| crate::error::Error::io("creating directory", cache, e))?;
    // Streamed into the temp file: the file is never held in memory (issue 10).
    let mut header = [0u8; HEADER];
    atomic::replace_with(&file(cache), atomic::Replace::default(), &mut |f| {
        header = stream::write_to(f, cat)?;
        Ok(())
    })?;
    // After the catalog: a head naming it can only appear once it is in place.
    head::save(cache, cat, &header);
    // The log's patches are in the new base (its header names the old one, so a reader in
    // between ignores it anyway).
    let _ = std::fs::remove_file(log::file(cache));
    Ok(())
}

/// Put each section's entries in list order (entries without a row last), before a save: a
/// reader concatenating the sections then sorts a few sorted runs, which the standard sort
/// merges in about one pass (issue 10: sorting 100k rows from arbitrary order was a tenth of
/// a warm `spool list --json --all`). Stable, and cheap on entries already in order.
pub fn in_list_order(cat: &mut Catalog) {
    for s in &mut cat.sections {
        s.entries.sort_by(entry_order);
    }
}

/// The order of a section's entries in the file: their rows' list order, entries without
/// a row last.
pub(crate) fn entry_order(a: &Entry, b: &Entry) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    match (&a.row, &b.row) {
        (Some(a), Some(b)) => crate::store::registry::list_order(a, b),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => Ordering::Equal,
    }
}

/// The loader's threads (one per store) patch the same files: one at a time in this process.
static PATCHING: Mutex<()> = Mutex::new(());

/// Fold `change` to the section of store `kind` at `dir` (created empty if missing), and
/// the patch log, into a new catalog file (a cold pass, which replaces a section or adds
/// to it at a checkpoint; the changes of a running browser go to the patch log,
/// `log::append`). Streamed (`fold`): the catalog is never decoded whole.
pub fn patch(cache: &Path, kind: StoreKind, dir: &Path, change: Change<'_>) {
    let _one = PATCHING.lock().unwrap_or_else(|e| e.into_inner());
    if fold::fold(cache, Some((kind, dir, change))).is_err() {
        rewrite(cache, Some((kind, dir, change)));
    }
}

/// What `fold` does, the plain way: decode the catalog whole, change it, save it. For what
/// a fold cannot be sure of (a damaged base, a section out of list order).
fn rewrite(cache: &Path, edit: Option<(StoreKind, &Path, Change<'_>)>) {
    let mut cat = load(cache).unwrap_or_default();
    if let Some((kind, dir, change)) = edit {
        let mut s = cat.take(kind, dir).unwrap_or_else(|| Section {
            kind,
            dir: dir.to_path_buf(),
            entries: Vec::new(),
        });
        match change {
            Change::Apply { fresh, gone } => apply(&mut s, fresh, gone),
            Change::Replace(entries) => s.entries = entries.to_vec(),
        }
        cat.put(s);
    }
    // Stores that are gone (a removed root, a test's temporary store) leave with their rows.
    cat.sections.retain(|s| s.dir.is_dir());
    in_list_order(&mut cat);
    let _ = save(cache, &cat);
}

/// Apply one pass's news to a section: re-read entries replace theirs, gone ids leave.
pub fn apply<L: wire::Gather>(s: &mut Section<L>, fresh: &[Entry], gone: &[String]) {
    let drop: std::collections::HashSet<&str> = gone
        .iter()
        .map(String::as_str)
        .chain(fresh.iter().map(|e| e.meta.id.as_str()))
        .collect();
    s.entries.drop_ids(&drop);
    s.entries.add(fresh);
}
