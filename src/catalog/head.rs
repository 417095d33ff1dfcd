//! The catalog's head: `head.bin` beside `catalog.bin`, the first screenful of the default
//! list (archived and empty hidden, pinned first, then recency) and its row count, so a warm
//! start draws its first frame from a few dozen KB instead of decoding every row (issue 10).
//!
//! It is only a hint for that frame: the whole catalog is decoded right after it (and is
//! itself checked against the stores by the loader). It names the catalog it was cut from
//! (the body's length and checksum in `catalog.bin`'s header) and the stores it covers; a
//! head that does not match them exactly is ignored. Written atomically after the catalog
//! (a reader in between sees a stamp mismatch).
//!
//! A running browser's changes go to the patch log, not to the catalog, so the head also
//! keeps a digest of every row it counted (`shown`): a start replays the log on the head
//! (`head_patch`) and still draws its first frame from it, exact in rows and count.
//!
//! File: magic, version, schema, the catalog's stamp, a checksum of the rest; then the
//! postcard head's length, the head, and the sorted digests as raw little-endian words
//! (read only when a log is replayed: 8 bytes a row, no decoding).

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{Catalog, HEADER, MAGIC, VERSION, checksum, schema};
use crate::model::{SessionSummary, StoreKind};
use crate::store::registry::{Filter, list_order};
use crate::store::{atomic, regular};

/// The file name inside the cache directory.
pub const FILE: &str = "head.bin";
/// Rows kept: more than any terminal shows, few enough to decode in well under a ms.
pub const ROWS: usize = 200;
/// The second layout (the digests of the counted rows added): a first-layout head is foreign.
const HEAD_MAGIC: &[u8; 8] = b"SPOOLHD2";
/// magic, version, schema, the catalog's body length and checksum, this body's checksum.
const PREFIX: usize = 8 + 4 + 8 + 8 + 8 + 8;
/// A head is small; anything larger is not one.
const CAP: u64 = 64 << 20;

/// What the first frame shows.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Head {
    /// The stores the rows come from, (kind, `sessions/` directory), in catalog order.
    pub stores: Vec<(StoreKind, Vec<u8>)>,
    /// Rows the default filter shows, over all those stores.
    pub total: u64,
    /// The first `ROWS` of them, in list order.
    pub rows: Vec<SessionSummary>,
}

pub fn file(cache: &Path) -> PathBuf {
    cache.join(FILE)
}

pub(super) fn dir_bytes(p: &Path) -> Vec<u8> {
    use std::os::unix::ffi::OsStrExt;
    p.as_os_str().as_bytes().to_vec()
}

/// The digest of a session's key in the list, (store, id): what `shown` holds.
pub fn digest(kind: StoreKind, id: &str) -> u64 {
    let mut b = Vec::with_capacity(id.len() + 8);
    b.extend_from_slice(kind.as_str().as_bytes());
    b.push(0);
    b.extend_from_slice(id.as_bytes());
    checksum(&b)
}

/// The head of `cat` and the sorted digests of every row it counts, or `None` when two
/// stores list the same session (the list keeps one, so a count and order cut here could
/// disagree with it).
pub fn cut(cat: &Catalog) -> Option<(Head, Vec<u64>)> {
    let mut c = Cut::default();
    for s in &cat.sections {
        c.store(s.kind, &s.dir);
        for r in s.entries.iter().filter_map(|e| e.row.as_deref()) {
            c.row(r);
        }
    }
    c.finish()
}

/// `cut` taken as the rows pass (a fold's, which never holds the catalog): it keeps the
/// digests of the rows and the first rows so far, never the rows themselves.
#[derive(Default)]
pub struct Cut {
    stores: Vec<(StoreKind, Vec<u8>)>,
    /// Every row's digest (two alike: the same session twice).
    seen: Vec<u64>,
    /// The digests of the rows the default filter shows.
    shown: Vec<u64>,
    /// The first rows so far: at most `2 * ROWS`, cut back to `ROWS` when full.
    rows: Vec<SessionSummary>,
    filter: Filter,
}

impl Cut {
    /// The next section's store, in catalog order.
    pub fn store(&mut self, kind: StoreKind, dir: &Path) {
        self.stores.push((kind, dir_bytes(dir)));
    }

    /// The next row of the current section.
    pub fn row(&mut self, r: &SessionSummary) {
        let d = digest(r.store, &r.id);
        self.seen.push(d);
        if !self.filter.accepts(r) {
            return;
        }
        self.shown.push(d);
        self.rows.push(r.clone());
        if self.rows.len() >= 2 * ROWS {
            first(&mut self.rows);
        }
    }

    /// The head and the sorted digests of the rows it counts, or `None` for a session seen
    /// twice. (Two sessions whose digests collide, about one catalog in 10^10 at 100k
    /// rows, also give `None`: the next start then draws its first frame from the catalog.)
    pub fn finish(mut self) -> Option<(Head, Vec<u64>)> {
        self.seen.sort_unstable();
        if self.seen.windows(2).any(|w| w[0] == w[1]) {
            return None;
        }
        let total = self.shown.len() as u64;
        self.shown.sort_unstable();
        first(&mut self.rows);
        self.rows.sort_by(list_order);
        let head = Head {
            stores: self.stores,
            total,
            rows: self.rows,
        };
        Some((head, self.shown))
    }
}

/// Keep the first `ROWS` of `rows` in list order (in no order).
fn first(rows: &mut Vec<SessionSummary>) {
    if rows.len() > ROWS {
        rows.select_nth_unstable_by(ROWS, list_order);
        rows.truncate(ROWS);
    }
}

/// The head file's bytes for a catalog whose header is `cat_header` (its first `HEADER`
/// bytes: the stamp is the body length and checksum there).
pub fn encode(head: &Head, shown: &[u64], cat_header: &[u8]) -> Option<Vec<u8>> {
    let stamp = cat_header.get(20..HEADER)?;
    let postcard = postcard::to_stdvec(head).ok()?;
    let mut body = Vec::with_capacity(8 + postcard.len() + 8 * shown.len());
    body.extend_from_slice(&(postcard.len() as u64).to_le_bytes());
    body.extend_from_slice(&postcard);
    for d in shown {
        body.extend_from_slice(&d.to_le_bytes());
    }
    let mut out = Vec::with_capacity(PREFIX + body.len());
    out.extend_from_slice(HEAD_MAGIC);
    out.extend_from_slice(&VERSION.to_le_bytes());
    out.extend_from_slice(&schema().to_le_bytes());
    out.extend_from_slice(stamp);
    out.extend_from_slice(&checksum(&body).to_le_bytes());
    out.extend_from_slice(&body);
    Some(out)
}

/// Decode a head file written for the catalog whose header is `cat_header`; `None` for
/// anything else (another catalog, version or schema, a flipped byte).
pub fn decode(bytes: &[u8], cat_header: &[u8]) -> Option<Head> {
    parts(bytes, cat_header).map(|(h, _)| h)
}

/// The head and its sorted digests (raw words, a multiple of 8 bytes).
fn parts<'a>(bytes: &'a [u8], cat_header: &[u8]) -> Option<(Head, &'a [u8])> {
    if cat_header.len() < HEADER
        || cat_header.get(..8)? != MAGIC
        || bytes.get(..8)? != HEAD_MAGIC
        || bytes.get(8..12)? != VERSION.to_le_bytes()
        || cat_header.get(8..12)? != VERSION.to_le_bytes()
        || bytes.get(12..20)? != schema().to_le_bytes()
        || cat_header.get(12..20)? != schema().to_le_bytes()
        || bytes.get(20..36)? != cat_header.get(20..HEADER)?
    {
        return None;
    }
    let sum = u64::from_le_bytes(bytes.get(36..PREFIX)?.try_into().ok()?);
    let body = bytes.get(PREFIX..)?;
    if checksum(body) != sum {
        return None;
    }
    let len = usize::try_from(u64::from_le_bytes(body.get(..8)?.try_into().ok()?)).ok()?;
    let shown = body.get(8usize.checked_add(len)?..)?;
    if shown.len() % 8 != 0 {
        return None;
    }
    Some((postcard::from_bytes(body.get(8..8 + len)?).ok()?, shown))
}

/// Write the head of `cat` (whose file starts with `cat_header`) beside it. Best effort: a
/// missing head only costs the next start its fast first frame. A catalog without a head
/// (duplicate sessions) removes the old one, which names another catalog anyway.
pub fn save(cache: &Path, cat: &Catalog, cat_header: &[u8]) {
    write(cache, cut(cat), cat_header);
}

/// Write the head `cut` (`None`: remove the old one) for the catalog that starts with
/// `cat_header`.
pub fn write(cache: &Path, cut: Option<(Head, Vec<u64>)>, cat_header: &[u8]) {
    match cut.and_then(|(h, shown)| encode(&h, &shown, cat_header)) {
        Some(bytes) => {
            let _ = atomic::replace(&file(cache), &bytes, atomic::Replace::default());
        }
        None => {
            let _ = std::fs::remove_file(file(cache));
        }
    }
}

/// The first frame's rows and count for a browser over `stores` starting with `filter`, with
/// the catalog's patch log replayed on them: `None` unless the head matches the catalog on
/// disk, the filter is the default one and the stores are exactly the head's. A patch
/// appended after the log is read can make the first frame one patch old; the full catalog,
/// decoded right after it, then wins.
pub fn read(cache: &Path, stores: &[(StoreKind, &Path)], filter: &Filter) -> Option<Head> {
    if *filter != Filter::default() {
        return None;
    }
    let mut cat_header = [0u8; HEADER];
    {
        use std::io::Read;
        let mut f = regular::open(&super::file(cache), regular::Links::Refuse).ok()?;
        f.read_exact(&mut cat_header).ok()?;
    }
    let bytes = regular::read(&file(cache), CAP, regular::Links::Refuse).ok()?;
    let (mut head, shown) = parts(&bytes, &cat_header)?;
    let want: HashSet<(StoreKind, Vec<u8>)> =
        stores.iter().map(|(k, d)| (*k, dir_bytes(d))).collect();
    let have: HashSet<(StoreKind, Vec<u8>)> = head.stores.iter().cloned().collect();
    if want != have || want.len() != head.stores.len() {
        return None;
    }
    let base = u64::from_le_bytes(cat_header[28..36].try_into().ok()?);
    let mut records = Vec::new();
    super::log::each(cache, base, |r| records.push(r));
    if !records.is_empty() {
        super::head_patch::replay(&mut head, shown, records)?;
    }
    Some(head)
}
