//! Reading a rollout safely and tolerantly (codex.md 6.1): regular files only, never through
//! a symlink; `.jsonl.zst` decompressed as a stream (the `zstd` crate) and capped; lines split
//! on `\n` with a 64 MiB cap; a bad line skipped and counted, with the salvage of a record
//! written over a torn one; a torn last line pending while the file grows, "truncated" once it
//! has settled; legacy un-enveloped rollouts (2.7) rewritten into the enveloped shape so the
//! rest of the store reads one format.

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;
use std::time::SystemTime;

use serde_json::{Value, json};

use super::skim;
use crate::store::entries;
use crate::store::lines::{self, RawLine};
use crate::store::regular::{self, Links};

/// Line cap (DECIDED 12): a longer line is an "oversized record" placeholder.
pub const MAX_LINE: usize = 64 * 1024 * 1024;
/// Files above this size are listed from their head and tail (middle lines skimmed).
pub const LIST_FULL_SCAN: u64 = 8 * 1024 * 1024;
/// What a compressed rollout may inflate to before the rest is refused (a zstd bomb).
pub const MAX_INFLATED: u64 = 4 * 1024 * 1024 * 1024;
const HEAD: u64 = 1024 * 1024;
const TAIL: u64 = 256 * 1024;
/// Middle lines of a large file longer than this are classified from their first bytes.
const SKIM_LINE: usize = 64 * 1024;

/// One parsed record.
#[derive(Clone, Debug)]
pub struct Rec {
    pub v: Value,
}

/// A bulky middle line of a large file, classified from its first bytes only.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Skimmed {
    UserMessage,
    Assistant,
    Other,
}

/// What a read produced.
#[derive(Debug, Default)]
pub struct Parsed {
    pub recs: Vec<Rec>,
    pub bad: u64,
    /// Bad lines whose trailing record was salvaged (still counted in `bad`).
    pub salvaged: u64,
    pub oversized: u64,
    pub lossy: u64,
    pub truncated: bool,
    pub pending: bool,
    pub skimmed: Vec<Skimmed>,
    /// Line 1 had no `type`: a legacy rollout, read in legacy mode.
    pub legacy: bool,
    pub compressed: bool,
    /// The compressed stream broke off (or hit `MAX_INFLATED`) here.
    pub damaged: Option<String>,
    pub size: u64,
    pub mtime: Option<SystemTime>,
    /// The read started at this byte offset (0 unless read from the end).
    pub from: u64,
}

/// Which lines to parse.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Full,
    /// Listing: large plain files have their bulky middle lines skimmed, not parsed.
    List,
}

pub fn is_zst(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "zst")
}

/// Open a rollout (a regular file, no symlink, no blocking on a FIFO).
pub fn open(path: &Path) -> io::Result<File> {
    regular::open(path, Links::Refuse)
}

/// Read a whole rollout, plain or compressed.
pub fn read(path: &Path, mode: Mode) -> io::Result<Parsed> {
    let f = open(path)?;
    if is_zst(path) {
        let meta = f.metadata()?;
        let mut p = Parsed {
            size: meta.len(),
            mtime: meta.modified().ok(),
            compressed: true,
            ..Parsed::default()
        };
        let dec = zstd::stream::read::Decoder::new(f)?.take(MAX_INFLATED);
        // A compressed rollout is complete when written: a torn last line is truncation.
        if let Err(e) = split(dec, 0, &mut p, true, None, mode == Mode::List, None) {
            p.damaged = Some(e.to_string());
        }
        return Ok(p);
    }
    read_from(f, 0, mode)
}

/// `read(path, Mode::Full)` a record at a time: `on` gets each record as it is parsed and
/// nothing is kept, so a pass over a huge rollout holds one line (issues 9 and 11). A plain
/// file is read up to `upto` bytes: later passes stop where the first one did while Codex
/// appends.
pub fn stream(path: &Path, upto: u64, on: &mut dyn FnMut(Value)) -> io::Result<Parsed> {
    let f = open(path)?;
    let meta = f.metadata()?;
    let mut p = Parsed {
        size: meta.len(),
        mtime: meta.modified().ok(),
        compressed: is_zst(path),
        ..Parsed::default()
    };
    if p.compressed {
        let dec = zstd::stream::read::Decoder::new(f)?.take(MAX_INFLATED);
        if let Err(e) = split(dec, 0, &mut p, true, None, false, Some(on)) {
            p.damaged = Some(e.to_string());
        }
        return Ok(p);
    }
    let settled = lines::settled(p.mtime);
    p.size = p.size.min(upto);
    split(f.take(p.size), 0, &mut p, settled, None, false, Some(on))?;
    Ok(p)
}

/// Read a plain rollout from byte `from` on (starting after the first `\n` at or after it).
pub fn read_from(mut f: File, from: u64, mode: Mode) -> io::Result<Parsed> {
    let meta = f.metadata()?;
    let mut p = Parsed {
        size: meta.len(),
        mtime: meta.modified().ok(),
        ..Parsed::default()
    };
    let start = lines::seek_line_start(&mut f, from)?;
    p.from = start;
    let settled = lines::settled(p.mtime);
    let skim = (mode == Mode::List && p.size > LIST_FULL_SCAN).then_some(p.size);
    let take = p.size.saturating_sub(start);
    split(
        f.take(take),
        start,
        &mut p,
        settled,
        skim,
        mode == Mode::List,
        None,
    )?;
    Ok(p)
}

/// The end of a plain rollout: the last `bytes` bytes (whole lines), or all of it.
pub fn read_tail(path: &Path, bytes: u64) -> io::Result<Parsed> {
    let f = open(path)?;
    let size = f.metadata()?.len();
    read_from(f, size.saturating_sub(bytes), Mode::Full)
}

/// Split and parse. `skim = Some(size)` skims long middle lines of a file of that size;
/// `list` stubs the records a listing does not need (`skim.rs`); `on`, if given, gets each
/// whole record instead of `p.recs`.
fn split(
    r: impl Read,
    start: u64,
    p: &mut Parsed,
    settled: bool,
    skim: Option<u64>,
    list: bool,
    mut on: Option<&mut dyn FnMut(Value)>,
) -> io::Result<()> {
    let mut put = move |p: &mut Parsed, v: Value| match on.as_mut() {
        Some(f) => f(v),
        None => p.recs.push(Rec { v }),
    };
    let mut first = start == 0;
    let mut need = skim::Need::default();
    let read = lines::for_each_line(r, MAX_LINE, |line| match line {
        RawLine::TooLong { .. } => p.oversized += 1,
        RawLine::Line {
            start: off,
            bytes,
            terminated,
        } => {
            if bytes.iter().all(u8::is_ascii_whitespace) {
                return;
            }
            let off = off + start;
            if let Some(size) = skim
                && off >= HEAD
                && off + bytes.len() as u64 + TAIL < size
                && bytes.len() > SKIM_LINE
            {
                p.skimmed.push(classify(bytes));
                return;
            }
            // Line 1 is always parsed: it decides legacy mode, which has no such heads.
            if list
                && !first
                && !p.legacy
                && terminated
                && let Some(h) = skim::head(bytes)
                && !need.whole(&h, bytes)
                && skim::plausible(bytes)
            {
                if h.ptype == "token_count" {
                    need.last_tokens = Some((p.recs.len(), bytes.to_vec()));
                }
                p.recs.push(Rec { v: skim::stub(&h) });
                return;
            }
            match entries::decode(bytes) {
                Some((v, lossy)) => {
                    p.lossy += u64::from(lossy);
                    if list {
                        need.saw(&v);
                    }
                    if first && v.get("type").is_none() && v.get("id").is_some() {
                        p.legacy = true;
                    }
                    first = false;
                    if let Some(v) = if p.legacy { legacy(v) } else { Some(v) } {
                        put(p, v);
                    }
                }
                None if !terminated && !settled => p.pending = true,
                None => {
                    p.bad += 1;
                    p.truncated |= !terminated;
                    if terminated && let Some(v) = salvage(bytes) {
                        p.salvaged += 1;
                        first = false;
                        put(p, v);
                    }
                }
            }
        }
    });
    if let Some((i, bytes)) = need.last_tokens
        && let Some((v, _)) = entries::decode(&bytes)
    {
        p.recs[i] = Rec { v };
    }
    read
}

const RECORD_START: &[u8] = b"{\"timestamp\":\"";

/// Two writes interleaved on one line (openai/codex#24425): the last record start after
/// offset 0, parsed on its own.
fn salvage(bytes: &[u8]) -> Option<Value> {
    let at = memchr::memmem::rfind(bytes, RECORD_START).filter(|&i| i > 0)?;
    entries::decode(&bytes[at..]).map(|(v, _)| v)
}

/// Classify a line from its first bytes: Codex writes `timestamp`, `type` and the payload's
/// `type` (and a message's `role`) first.
fn classify(bytes: &[u8]) -> Skimmed {
    let head = &bytes[..bytes.len().min(256)];
    let has = |needle: &[u8]| memchr::memmem::find(head, needle).is_some();
    if has(b"\"type\":\"event_msg\"") && has(b"\"type\":\"user_message\"") {
        Skimmed::UserMessage
    } else if has(b"\"type\":\"response_item\"") && has(b"\"role\":\"assistant\"") {
        Skimmed::Assistant
    } else {
        Skimmed::Other
    }
}

/// A legacy line in the enveloped shape: the bare meta becomes `session_meta`, `record_type`
/// markers are dropped, anything else is a response item.
fn legacy(v: Value) -> Option<Value> {
    if v.get("record_type").is_some() {
        return None;
    }
    let ts = v.get("timestamp").cloned().unwrap_or(Value::Null);
    if v.get("type").is_none() && v.get("id").is_some() {
        return Some(json!({"timestamp": ts, "type": "session_meta", "payload": v}));
    }
    Some(json!({"timestamp": ts, "type": "response_item", "payload": v}))
}
