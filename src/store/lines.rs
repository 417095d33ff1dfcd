//! The streaming line splitter every JSONL reader shares: split on byte `\n` only, never
//! buffer more than the caller's line cap of one line (loom: 16 MiB, Claude Code: 64 MiB),
//! resynchronise at the next `\n` after an over-long line.

use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom};
use std::time::{Duration, SystemTime};

/// One physical line of the log, as the splitter hands it out.
pub enum RawLine<'a> {
    /// A line of at most `max_line` bytes (without its `\n`).
    Line {
        start: u64,
        bytes: &'a [u8],
        /// False for a final line that has no `\n` (still a line, section 6.1).
        terminated: bool,
    },
    /// A line longer than `max_line`; its bytes were skipped up to the next `\n`.
    TooLong {
        start: u64,
        len: u64,
        terminated: bool,
    },
}

impl RawLine<'_> {
    pub fn start(&self) -> u64 {
        match self {
            RawLine::Line { start, .. } | RawLine::TooLong { start, .. } => *start,
        }
    }

    /// Offset just past this line (after its `\n` when it has one).
    pub fn end(&self) -> u64 {
        match self {
            RawLine::Line {
                start,
                bytes,
                terminated,
            } => start + bytes.len() as u64 + u64::from(*terminated),
            RawLine::TooLong {
                start,
                len,
                terminated,
            } => start + len + u64::from(*terminated),
        }
    }

    pub fn terminated(&self) -> bool {
        match self {
            RawLine::Line { terminated, .. } | RawLine::TooLong { terminated, .. } => *terminated,
        }
    }
}

/// Split `r` on `\n` and hand every line to `f`, streaming: a line over `max_line` is never
/// buffered beyond the limit, the splitter resynchronises at the next `\n` instead.
pub fn for_each_line<R: Read>(
    r: R,
    max_line: usize,
    mut f: impl FnMut(RawLine<'_>),
) -> io::Result<()> {
    let mut reader = BufReader::with_capacity(64 * 1024, r);
    let mut line: Vec<u8> = Vec::new();
    let mut start: u64 = 0;
    // Some(len) while skipping the rest of an over-long line.
    let mut skipping: Option<u64> = None;
    loop {
        let buf = match reader.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if buf.is_empty() {
            break;
        }
        let (chunk, found) = match memchr::memchr(b'\n', buf) {
            Some(i) => (&buf[..i], true),
            None => (buf, false),
        };
        let used = chunk.len() + usize::from(found);
        // A line wholly inside the buffer is handed out from it: most lines are, and copying
        // every byte read into `line` first was a large part of a listing pass.
        if found && line.is_empty() && skipping.is_none() && chunk.len() <= max_line {
            let item = emit(start, chunk, None, true);
            start = item.end();
            f(item);
            reader.consume(used);
            continue;
        }
        match skipping.as_mut() {
            Some(len) => *len += chunk.len() as u64,
            None if line.len() + chunk.len() > max_line => {
                skipping = Some((line.len() + chunk.len()) as u64);
                line = Vec::new();
            }
            None => line.extend_from_slice(chunk),
        }
        reader.consume(used);
        if found {
            let item = emit(start, &line, skipping, true);
            start = item.end();
            f(item);
            line.clear();
            skipping = None;
        }
    }
    if !line.is_empty() || skipping.is_some() {
        f(emit(start, &line, skipping, false));
    }
    Ok(())
}

/// A torn last line is pending (being written), not bad, while its file changed this
/// recently: the Claude Code, Codex and pi contracts' settle time.
const SETTLE: Duration = Duration::from_secs(10);

/// Whether a file last modified at `mtime` has settled, so a torn last line is truncation.
pub fn settled(mtime: Option<SystemTime>) -> bool {
    mtime
        .and_then(|m| SystemTime::now().duration_since(m).ok())
        .is_some_and(|age| age >= SETTLE)
}

/// Position `f` at the first line that starts at or after byte `from` (a tail read skips
/// the partial line it lands in; the byte before `from` tells whether `from` starts a line).
/// Returns that offset.
pub fn seek_line_start(f: &mut std::fs::File, from: u64) -> io::Result<u64> {
    if from == 0 {
        f.seek(SeekFrom::Start(0))?;
        return Ok(0);
    }
    f.seek(SeekFrom::Start(from - 1))?;
    let mut r = BufReader::new(&mut *f);
    let mut skipped = Vec::new();
    r.read_until(b'\n', &mut skipped)?;
    let start = from - 1 + skipped.len() as u64;
    drop(r);
    f.seek(SeekFrom::Start(start))?;
    Ok(start)
}

/// Read the last rounds of a session from the end of its file: `attempt(bytes)` reads the
/// last `bytes` bytes and returns `Some` once enough rounds are in view (or the whole file
/// was read); the window starts at 256 KiB and doubles.
pub fn from_the_end<T>(mut attempt: impl FnMut(u64) -> io::Result<Option<T>>) -> io::Result<T> {
    let mut bytes: u64 = 256 * 1024;
    loop {
        if let Some(done) = attempt(bytes)? {
            return Ok(done);
        }
        bytes = bytes.saturating_mul(2);
    }
}

/// The raw page of a JSONL file: the records that start in its last `bytes` (at least the
/// last one, however long), as `raw` renders a reader of them, and whether records before
/// them were left out (the browser pages raw views from their end).
pub fn raw_page(
    f: &mut std::fs::File,
    bytes: u64,
    raw: impl Fn(io::Take<&mut std::fs::File>) -> io::Result<String>,
) -> io::Result<(String, bool)> {
    let size = f.metadata()?.len();
    let mut bytes = bytes.max(1);
    loop {
        let start = seek_line_start(f, size.saturating_sub(bytes))?;
        let text = raw(f.take(size - start))?;
        // A record longer than the page: the page grows until it holds one.
        if !text.is_empty() || start == 0 {
            return Ok((text, start > 0));
        }
        bytes = bytes.saturating_mul(2);
    }
}

/// Hand the records `each` produces to `out`, a line apart (`show --raw` a record at a
/// time). The reader's own error is returned as is; `out`'s failure (its reader went away)
/// stops the records and is returned as `Err(Ok(e))`.
pub fn raw_records(
    out: &mut dyn FnMut(&str) -> io::Result<()>,
    each: impl FnOnce(&mut dyn FnMut(String)) -> io::Result<()>,
) -> Result<(), Result<io::Error, io::Error>> {
    let mut failed = None;
    let mut first = true;
    let read = each(&mut |t| {
        if failed.is_some() {
            return;
        }
        let sep = if std::mem::take(&mut first) { "" } else { "\n" };
        if let Err(e) = out(sep).and_then(|()| out(&t)) {
            failed = Some(e);
        }
    });
    match failed {
        Some(e) => Err(Ok(e)),
        None => read.map_err(Err),
    }
}

/// The raw view of a JSONL file: every non-blank line pretty-printed where it is JSON
/// (first-wins duplicate keys), as stored otherwise; an over-long line is a placeholder.
pub fn pretty_jsonl<R: Read>(r: R, max_line: usize) -> io::Result<String> {
    let mut out = Vec::new();
    pretty_each(r, max_line, |t| out.push(t))?;
    Ok(out.join("\n"))
}

/// `pretty_jsonl` a record at a time: `f` gets each record's text as it is read, so a raw
/// view is never held whole, nor its pretty form (issue 11).
pub fn pretty_each<R: Read>(r: R, max_line: usize, mut f: impl FnMut(String)) -> io::Result<()> {
    for_each_line(r, max_line, |line| pretty_line(line, max_line, &mut f))
}

/// One line of `pretty_jsonl` to `f` (nothing for a blank line).
pub fn pretty_line(line: RawLine<'_>, max_line: usize, mut f: impl FnMut(String)) {
    match line {
        RawLine::TooLong { len, .. } => f(format!(
            "[line of {len} bytes, longer than {} MiB, not shown]",
            max_line >> 20
        )),
        RawLine::Line { bytes, .. } => {
            let text = String::from_utf8_lossy(bytes);
            if text.trim().is_empty() {
                return;
            }
            match super::json_first::parse(text.as_bytes()) {
                Some(v) => f(serde_json::to_string_pretty(&v).unwrap_or(text.into_owned())),
                None => f(text.into_owned()),
            }
        }
    }
}

/// The records of a JSONL file that start in its last `bytes` (at least the last one),
/// pretty-printed, and whether records before them were left out: a raw view's last page.
pub fn page_from_end(
    mut file: std::fs::File,
    bytes: u64,
    max_line: usize,
) -> io::Result<(String, bool)> {
    raw_page(&mut file, bytes, |r| pretty_jsonl(r, max_line))
}

/// A streamed raw view's pages against `raw`, the whole view (`page(bytes)` is a store's
/// `raw_page`): the last page holds the last records, whole; a page the file's size, all.
#[cfg(test)]
pub fn assert_raw_pages(what: &str, raw: &str, page: impl Fn(u64) -> (String, bool)) {
    let (last, more) = page(1);
    assert!(raw.ends_with(&last), "raw page of {what}");
    assert_eq!(more, last.len() < raw.len(), "raw page of {what}");
    let (all, more) = page(u64::MAX / 4);
    assert_eq!(
        (all.as_str(), more),
        (raw, false),
        "whole raw page of {what}"
    );
}

fn emit(start: u64, line: &[u8], skipping: Option<u64>, terminated: bool) -> RawLine<'_> {
    match skipping {
        Some(len) => RawLine::TooLong {
            start,
            len,
            terminated,
        },
        None => RawLine::Line {
            start,
            bytes: line,
            terminated,
        },
    }
}
