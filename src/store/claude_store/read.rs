//! Reading a transcript safely and tolerantly (claude-code.md 6.1): regular files only, opened
//! `O_NONBLOCK|O_NOFOLLOW`; lines split on `\n` with a 64 MiB cap; bad lines skipped and
//! counted; a torn last line pending while the file grows, "truncated" once it has not
//! changed for 10 s; invalid UTF-8 decoded lossily. Listing reads of large files parse the
//! head and the tail and skip the bulky middle lines (base64 images, huge tool output).

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;
use std::time::SystemTime;

use serde_json::Value;

use crate::store::lines::{self, RawLine};
use crate::store::regular::{self, Links};

/// Line cap (DECIDED 9): a longer line is an "oversized line" placeholder.
pub const MAX_LINE: usize = 64 * 1024 * 1024;
/// Side files (settings, index, persisted tool output) are read up to this size.
pub const MAX_SMALL: u64 = 16 * 1024 * 1024;
/// Files above this size are listed from their head and tail (plus the middle's short lines).
pub const LIST_FULL_SCAN: u64 = 8 * 1024 * 1024;
const HEAD: u64 = 1024 * 1024;
const TAIL: u64 = 256 * 1024;
/// Middle lines of a large file longer than this are not parsed while listing.
const SKIM_LINE: usize = 64 * 1024;

/// Open a regular file for reading without following a symlink or blocking on a FIFO.
pub fn open(path: &Path) -> io::Result<File> {
    regular::open(path, Links::Refuse)
}

/// A small side file, whole, within `MAX_SMALL`.
pub fn read_small(path: &Path) -> io::Result<Vec<u8>> {
    regular::read(path, MAX_SMALL, Links::Refuse)
}

/// One parsed line (a JSON object).
#[derive(Clone, Debug)]
pub struct Rec {
    pub v: Value,
}

/// Also a line that was not parsed while listing a large file, classified from its bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Skimmed {
    /// Looks like a user prompt (a user record without a tool result).
    Prompt,
    Other,
}

/// What a read produced.
#[derive(Debug, Default)]
pub struct Parsed {
    pub recs: Vec<Rec>,
    pub bad: u64,
    pub oversized: Vec<u64>,
    pub lossy: u64,
    /// The last line was torn and the file has settled: the writer died mid-line.
    pub truncated: bool,
    /// The last line was torn and the file is still changing: re-read later.
    pub pending: bool,
    pub skimmed: Vec<Skimmed>,
    pub size: u64,
    pub mtime: Option<SystemTime>,
    /// The read started at this byte offset (0 unless read from the end).
    pub from: u64,
}

/// Which lines to parse.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Every line (transcript, window, raw).
    Full,
    /// Listing: small files whole; large files' head and tail whole, middle lines only when
    /// short.
    List,
}

/// Read a transcript.
pub fn read(path: &Path, mode: Mode) -> io::Result<Parsed> {
    let f = open(path)?;
    read_from(f, 0, mode)
}

/// Read from byte `from` on (a tail read starts after the first `\n` at or after `from`).
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
    let large = mode == Mode::List && p.size > LIST_FULL_SCAN;
    let size = p.size;
    lines::for_each_line(
        f.take(size.saturating_sub(start)),
        MAX_LINE,
        |line| match line {
            RawLine::TooLong { len, .. } => p.oversized.push(len),
            RawLine::Line {
                start: off,
                bytes,
                terminated,
            } => {
                let off = off + start;
                if bytes.iter().all(u8::is_ascii_whitespace) {
                    return;
                }
                let end = off + bytes.len() as u64;
                if large && off >= HEAD && end + TAIL < size && bytes.len() > SKIM_LINE {
                    p.skimmed.push(skim(bytes));
                    return;
                }
                match crate::store::entries::decode(bytes) {
                    Some((v, lossy)) => {
                        p.lossy += u64::from(lossy);
                        p.recs.push(Rec { v });
                    }
                    None if !terminated && !settled => p.pending = true,
                    None if !terminated => {
                        p.bad += 1;
                        p.truncated = true;
                    }
                    None => p.bad += 1,
                }
            }
        },
    )?;
    Ok(p)
}

/// Classify a bulky middle line without parsing it: a user record without a tool result is
/// a prompt (a pasted screenshot); anything else (tool output, progress snapshots) is not
/// counted.
fn skim(bytes: &[u8]) -> Skimmed {
    let has = |needle: &[u8]| bytes.windows(needle.len()).any(|w| w == needle);
    if has(b"\"type\":\"user\"") && !has(b"\"tool_result\"") && !has(b"\"isMeta\":true") {
        Skimmed::Prompt
    } else {
        Skimmed::Other
    }
}

/// Read the end of a transcript: the last `bytes` bytes (whole lines only), or the whole file
/// when that reaches its start.
pub fn read_tail(path: &Path, bytes: u64) -> io::Result<Parsed> {
    let f = open(path)?;
    let size = f.metadata()?.len();
    read_from(f, size.saturating_sub(bytes), Mode::Full)
}
