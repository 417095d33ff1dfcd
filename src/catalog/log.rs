//! The catalog's patch log, `catalog.log` beside `catalog.bin`: what the browser re-reads
//! while it runs (a session marked read, an append, a new or deleted session) is added here
//! instead of decoding and re-encoding the whole catalog (at 100k sessions, tens of MB of
//! work and memory for one changed row). A patch costs its own size plus the log so far,
//! which compaction keeps under `COMPACT_AT`.
//!
//! Format: `SPOOLLOG`, the catalog version and schema (as in `catalog.bin`), and the
//! checksum of the base file's body it applies to; then records, each its length, its
//! checksum and a postcard `Record`. `load` replays the records in order on the base whose
//! checksum the log names; a log for another base (rewritten by `save` since) or of another
//! version is ignored, and so is everything from the first damaged record on. Ignoring a
//! patch is always safe: the rows it carried are checked against their stores' keys at the
//! next stat pass like any other cached row, and read again.
//!
//! Writes: the whole log through `store::atomic` (temp file, rename), under the patch lock.
//! Two processes patching at once may lose one's record, never corrupt the file.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::wire::Gather;
use super::{Catalog, Entry, HEADER, MAGIC, Section, VERSION, checksum, schema};
use crate::model::StoreKind;
use crate::store::{atomic, regular};

/// The log's file name inside the cache directory.
pub const FILE: &str = "catalog.log";
const LOG_MAGIC: &[u8; 8] = b"SPOOLLOG";
/// Magic, version, schema, base checksum.
const LOG_HEADER: usize = 8 + 4 + 8 + 8;
/// A log grown past this is folded into the base file by the next patch.
pub const COMPACT_AT: usize = 256 << 10;

/// One patch: the re-read entries and the ids gone from one store's section.
#[derive(Debug, Deserialize)]
pub(super) struct Record {
    pub kind: StoreKind,
    #[serde(with = "crate::model::wire::path_bytes")]
    pub dir: PathBuf,
    pub fresh: Vec<Entry>,
    pub gone: Vec<String>,
}

pub fn file(cache: &Path) -> PathBuf {
    cache.join(FILE)
}

/// The base file's body checksum, from its header alone (`None`: no base of this version).
fn base_sum(cache: &Path) -> Option<u64> {
    use std::io::Read;
    let mut f = regular::open(&super::file(cache), regular::Links::Refuse).ok()?;
    let mut h = [0u8; HEADER];
    f.read_exact(&mut h).ok()?;
    let word = |at: usize| u64::from_le_bytes(h[at..at + 8].try_into().unwrap_or_default());
    let ok = &h[..8] == MAGIC && h[8..12] == VERSION.to_le_bytes() && word(12) == schema();
    ok.then(|| word(28))
}

fn header(base: u64) -> Vec<u8> {
    let mut out = Vec::with_capacity(LOG_HEADER + 4096);
    out.extend_from_slice(LOG_MAGIC);
    out.extend_from_slice(&VERSION.to_le_bytes());
    out.extend_from_slice(&schema().to_le_bytes());
    out.extend_from_slice(&base.to_le_bytes());
    out
}

/// The log's bytes up to its last intact record, if it applies to the base `base`.
fn intact(bytes: &[u8], base: u64) -> Option<&[u8]> {
    if bytes.get(..LOG_HEADER)? != header(base).as_slice() {
        return None;
    }
    let mut at = LOG_HEADER;
    while let Some((_, next)) = record_at(bytes, at) {
        at = next;
    }
    Some(&bytes[..at])
}

/// The record starting at `at` and where the next one starts.
fn record_at(bytes: &[u8], at: usize) -> Option<(Record, usize)> {
    let word = |i: usize| -> Option<u64> {
        Some(u64::from_le_bytes(bytes.get(i..i + 8)?.try_into().ok()?))
    };
    let len = usize::try_from(word(at)?).ok()?;
    let body = bytes.get(at + 16..(at + 16).checked_add(len)?)?;
    if checksum(body) != word(at + 8)? {
        return None;
    }
    Some((postcard::from_bytes(body).ok()?, at + 16 + len))
}

/// Apply the log in `cache` (if it names the base `cat` was decoded from) to `cat`.
pub fn replay<L: Gather>(cache: &Path, base: u64, cat: &mut Catalog<L>) {
    each(cache, base, |r| apply_record(cat, r));
}

/// Hand `f` each intact record, in order, of the log in `cache` if it names the base whose
/// body checksum is `base` (none for a missing, foreign or stale log).
pub(super) fn each(cache: &Path, base: u64, mut f: impl FnMut(Record)) {
    let Ok(bytes) = regular::read(&file(cache), super::CAP, regular::Links::Refuse) else {
        return;
    };
    let Some(good) = intact(&bytes, base) else {
        return;
    };
    let mut at = LOG_HEADER;
    while let Some((r, next)) = record_at(good, at) {
        f(r);
        at = next;
    }
}

fn apply_record<L: Gather>(cat: &mut Catalog<L>, r: Record) {
    let out = Out {
        kind: r.kind,
        dir: &r.dir,
        fresh: &r.fresh,
        gone: &r.gone,
    };
    apply_out(cat, &out);
}

fn apply_out<L: Gather>(cat: &mut Catalog<L>, r: &Out<'_>) {
    let mut s = cat.take(r.kind, r.dir).unwrap_or_else(|| Section {
        kind: r.kind,
        dir: r.dir.to_path_buf(),
        entries: L::default(),
    });
    super::apply(&mut s, r.fresh, r.gone);
    cat.put(s);
}

/// A `Record` as written: borrowed from the pass that re-read it (the same fields in the
/// same order, so the same bytes). Issue 10: the record was a clone of every re-read entry,
/// and at 100k sessions a warm check that re-read everything cloned 100k metas for it.
#[derive(Serialize)]
struct Out<'a> {
    kind: StoreKind,
    #[serde(with = "crate::model::wire::path_bytes")]
    dir: &'a Path,
    fresh: &'a [Entry],
    gone: &'a [String],
}

/// Appends to the log's bytes up to `COMPACT_AT` and refuses the write that would pass it
/// (`over`): a record too large for the log is given up part-way, not built whole.
struct Capped<'a> {
    out: &'a mut Vec<u8>,
    over: bool,
}

impl std::io::Write for Capped<'_> {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        if self.out.len() + b.len() > COMPACT_AT {
            self.over = true;
            return Err(std::io::ErrorKind::FileTooLarge.into());
        }
        self.out.extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Add one patch (`fresh` re-read, `gone` removed, in the store `kind` at `dir`): appended
/// to the log, or, with no base file or a log past `COMPACT_AT`, folded into a new base.
/// Best effort, like every catalog write: a lost patch only costs a re-read.
pub fn append(cache: &Path, kind: StoreKind, dir: &Path, fresh: &[Entry], gone: &[String]) {
    let _one = super::PATCHING.lock().unwrap_or_else(|e| e.into_inner());
    let rec = Out {
        kind,
        dir,
        fresh,
        gone,
    };
    let Some(base) = base_sum(cache) else {
        return compact(cache, Some(&rec));
    };
    let old = regular::read(&file(cache), super::CAP, regular::Links::Refuse).unwrap_or_default();
    let mut out = match intact(&old, base) {
        Some(good) => good.to_vec(),
        None => header(base),
    };
    // The record is serialized once, straight behind its length and checksum (filled in
    // after), and one too large for the log is never built whole: at 100k re-read sessions
    // it was as large as the catalog, held while the catalog was decoded again for the
    // compaction.
    let at = out.len();
    out.extend_from_slice(&[0; 16]);
    let mut to = Capped {
        out: &mut out,
        over: false,
    };
    if postcard::to_io(&rec, &mut to).is_err() {
        if to.over {
            drop(out);
            return compact(cache, Some(&rec));
        }
        return;
    }
    let body = at + 16;
    let (len, sum) = ((out.len() - body) as u64, checksum(&out[body..]));
    out[at..at + 8].copy_from_slice(&len.to_le_bytes());
    out[at + 8..body].copy_from_slice(&sum.to_le_bytes());
    let _ = atomic::replace(&file(cache), &out, atomic::Replace::default());
}

/// Fold the log (and `rec`) into a new base file, streamed (`fold`); the lock is held by
/// the caller.
fn compact(cache: &Path, rec: Option<&Out<'_>>) {
    let edit = rec.map(|r| {
        let change = super::Change::Apply {
            fresh: r.fresh,
            gone: r.gone,
        };
        (r.kind, r.dir, change)
    });
    if super::fold::fold(cache, edit).is_err() {
        super::rewrite(cache, edit);
    }
}
