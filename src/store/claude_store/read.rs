//! Reading a transcript safely and tolerantly (claude-code.md 6.1): regular files only, opened
//! `O_NONBLOCK|O_NOFOLLOW`; lines split on `\n` with a 64 MiB cap; bad lines skipped and
//! counted; a torn last line pending while the file grows, "truncated" once it has not
//! changed for 10 s; invalid UTF-8 decoded lossily. Listing reads decode each line into only
//! the keys the row needs (`lite`), so bulky values (base64 images, huge tool output) are
//! scanned but never built into a tree.

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

/// Open a regular file for reading without following a symlink or blocking on a FIFO.
pub fn open(path: &Path) -> io::Result<File> {
    regular::open(path, Links::Refuse)
}

/// A small side file, whole, within `MAX_SMALL`.
pub fn read_small(path: &Path) -> io::Result<Vec<u8>> {
    regular::read(path, MAX_SMALL, Links::Refuse)
}

/// One parsed line (a JSON object) and where it sits in the file, so a view can read it
/// again, whole, when its turn comes (`stream`).
#[derive(Clone, Debug)]
pub struct Rec {
    pub v: Value,
    /// Byte offset of the line's first byte.
    pub start: u64,
    /// Length of the line, without its `\n`.
    pub len: u64,
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
    pub size: u64,
    pub mtime: Option<SystemTime>,
    /// The read started at this byte offset (0 unless read from the end).
    pub from: u64,
}

/// Which lines to parse.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Every line decoded whole (the tests' reference for the streamed views).
    #[cfg(test)]
    Full,
    /// Listing: every line, pruned to the keys the row reads (`lite`).
    List,
    /// A view: every key the transcript reads, image payloads and `toolUseResult` pruned
    /// (`slim`).
    View,
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
    let base = start;
    let size = p.size;
    let decode = match mode {
        #[cfg(test)]
        Mode::Full => crate::store::entries::decode,
        Mode::List => super::lite::decode,
        Mode::View => super::slim::decode,
    };
    lines::for_each_line(
        f.take(size.saturating_sub(start)),
        MAX_LINE,
        |line| match line {
            RawLine::TooLong { len, .. } => p.oversized.push(len),
            RawLine::Line {
                bytes,
                terminated,
                start,
            } => {
                if bytes.iter().all(u8::is_ascii_whitespace) {
                    return;
                }
                match decode(bytes) {
                    Some((v, lossy)) => {
                        p.lossy += u64::from(lossy);
                        p.recs.push(Rec {
                            v,
                            start: base + start,
                            len: bytes.len() as u64,
                        });
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

/// Read the end of a transcript: the last `bytes` bytes (whole lines only), or the whole file
/// when that reaches its start.
pub fn read_tail(path: &Path, bytes: u64) -> io::Result<Parsed> {
    let f = open(path)?;
    let size = f.metadata()?.len();
    read_from(f, size.saturating_sub(bytes), Mode::View)
}
