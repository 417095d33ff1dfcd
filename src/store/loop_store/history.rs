//! Reading messages (sections 2.3, 2.4, 7 and 8): the full validated open, the round index
//! (loaded, checked, rebuilt in memory when stale, never written), paged reads of the last
//! rounds that read only their byte range, and the raw view.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::os::unix::fs::FileExt;

use serde_json::Value;
use sha2::{Digest, Sha256};

use super::convert::to_message;
use super::envelope::{Head, Range, read_head};
use super::header::safe_uint;
use super::listing::summary_from_head;
use super::validate::{self, check_messages, role};
use super::{Layout, Loc};
use crate::error::{Error, Result};
use crate::model::{Entry, Transcript, from_millis};
use crate::store::{Span, regular};

/// A fully read and validated history.
pub(crate) struct History {
    pub head: Head,
    pub messages: Vec<Value>,
    /// Byte offset of each message line, relative to the committed start.
    pub offsets: Vec<u64>,
    /// The committed bytes (v3) or the legacy message bytes.
    pub bytes: Vec<u8>,
    pub warnings: Vec<String>,
}

/// SHA-256 as lowercase hex.
pub(crate) fn sha256_hex(b: &[u8]) -> String {
    crate::hex::encode(&Sha256::digest(b))
}

pub(super) fn corrupt(loc: &Loc, why: impl std::fmt::Display) -> Error {
    Error::Corrupt(format!("Loop session {} is corrupt: {why}", loc.id))
}

/// Open `messages.jsonl` after checking it holds the committed range (`None`: missing and
/// empty, which is allowed).
pub(super) fn open_messages(loc: &Loc, r: &Range) -> Result<Option<File>> {
    let path = loc.messages_path();
    let f = match regular::open(&path, regular::Links::Refuse) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && r.bytes == 0 => return Ok(None),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(corrupt(
                loc,
                "committed bytes missing (messages.jsonl not found)",
            ));
        }
        Err(e) => return Err(Error::io("reading", path, e)),
    };
    let size = f
        .metadata()
        .map_err(|e| Error::io("reading", &path, e))?
        .len();
    if size < r.start.saturating_add(r.bytes) {
        return Err(corrupt(loc, "committed bytes missing"));
    }
    Ok(Some(f))
}

/// Read `len` bytes at `at` of `messages.jsonl`.
fn read_at(loc: &Loc, f: &mut File, at: u64, len: u64) -> Result<Vec<u8>> {
    let mut buf = Vec::new();
    f.seek(SeekFrom::Start(at))
        .and_then(|_| f.take(len).read_to_end(&mut buf))
        .map_err(|e| Error::io("reading", loc.messages_path(), e))?;
    if (buf.len() as u64) < len {
        return Err(corrupt(loc, "committed bytes missing"));
    }
    Ok(buf)
}

/// Split newline-terminated lines and parse each (line numbers are 1-based in errors).
fn parse_lines(loc: &Loc, bytes: &[u8]) -> Result<(Vec<Value>, Vec<u64>)> {
    let (mut msgs, mut offs) = (Vec::new(), Vec::new());
    let mut pos = 0usize;
    for line in bytes.split_inclusive(|&b| b == b'\n') {
        let v: Value = serde_json::from_slice(line)
            .map_err(|_| corrupt(loc, format!("line {} is not valid JSON", msgs.len() + 1)))?;
        offs.push(pos as u64);
        msgs.push(v);
        pos += line.len();
    }
    Ok((msgs, offs))
}

/// The whole history, validated per section 8.
pub(crate) fn read_full(loc: &Loc) -> Result<History> {
    let head = read_head(loc).map_err(|e| e.into_error())?;
    let r = head.range.clone();
    let bytes = match loc.layout {
        Layout::V3 => {
            let bytes = match open_messages(loc, &r)? {
                Some(mut f) => read_at(loc, &mut f, r.start, r.bytes)?,
                None => Vec::new(),
            };
            if sha256_hex(&bytes) != r.generation {
                return Err(corrupt(
                    loc,
                    "the committed bytes do not match the generation hash",
                ));
            }
            if !bytes.is_empty() && !bytes.ends_with(b"\n") {
                return Err(corrupt(
                    loc,
                    "the committed range does not end with a newline",
                ));
            }
            let lines = bytes.iter().filter(|&&b| b == b'\n').count() as u64;
            if lines != r.count {
                return Err(corrupt(
                    loc,
                    format!("{lines} committed lines but messageCount is {}", r.count),
                ));
            }
            bytes
        }
        Layout::Legacy => {
            let rest = head.raw.get(r.start as usize..).unwrap_or_default();
            // Loop reads `text.trim().split("\n")`: a blank line inside is an error.
            let body = rest.strip_suffix(b"\n").unwrap_or(rest);
            if !body.is_empty() && body.split(|&b| b == b'\n').any(|l| l.is_empty()) {
                return Err(corrupt(loc, "blank line in the legacy session file"));
            }
            rest.to_vec()
        }
    };
    let (messages, offsets) = parse_lines(loc, &bytes)?;
    let mut warnings = Vec::new();
    if !head.check.fatal.is_empty() {
        warnings.push(format!("invalid header: {}", head.check.fatal.join(", ")));
    }
    warnings.extend(check_messages(0, &messages));
    warnings.extend(validate::prompt_timing_warnings(&head.header, &messages));
    Ok(History {
        head,
        messages,
        offsets,
        bytes,
        warnings,
    })
}

/// `(messageIndex, byteOffset)` of every user message.
pub(crate) fn rounds_of(msgs: &[Value], offsets: &[u64]) -> Vec<(usize, u64)> {
    msgs.iter()
        .zip(offsets)
        .enumerate()
        .filter(|(_, (m, _))| role(m) == "user")
        .map(|(i, (_, o))| (i, *o))
        .collect()
}

/// `index.json` if valid per section 2.4, else `None` (stale or malformed). Parsed into
/// typed entries (a 100 MiB session has an index of megabytes); the rule that offsets point
/// at line starts is checked by `read_page` at the offset it seeks to, which, with its line
/// count check, proves the page it reads; an offset elsewhere cannot change that page.
fn load_index(loc: &Loc, r: &Range) -> Option<Vec<(usize, u64)>> {
    #[derive(serde::Deserialize)]
    struct Round {
        #[serde(rename = "messageIndex")]
        message_index: u64,
        #[serde(rename = "byteOffset")]
        byte_offset: u64,
    }
    #[derive(serde::Deserialize)]
    struct Index {
        generation: String,
        rounds: Vec<Round>,
    }
    const MAX_SAFE: u64 = (1 << 53) - 1;
    let bytes = regular::read(&loc.index_path(), regular::META_CAP, regular::Links::Refuse).ok()?;
    let index: Index = serde_json::from_slice(&bytes).ok()?;
    if index.generation != r.generation {
        return None;
    }
    let mut out: Vec<(usize, u64)> = Vec::with_capacity(index.rounds.len());
    for e in index.rounds {
        let (mi, off) = (e.message_index, e.byte_offset);
        if mi > MAX_SAFE
            || out
                .last()
                .is_some_and(|&(pm, po)| mi as usize <= pm || off <= po)
            || off >= r.bytes
            || mi >= r.count
        {
            return None;
        }
        out.push((mi as usize, off));
    }
    Some(out)
}

/// Whether `off` (relative to the committed start) begins a line.
fn line_start(f: &File, r: &Range, off: u64) -> bool {
    let mut b = [0u8; 1];
    off == 0 || (f.read_exact_at(&mut b, r.start + off - 1).is_ok() && b[0] == b'\n')
}

/// Rebuild the round index in memory by scanning the committed range a line at a time
/// (`show --last 1` of a huge session without `index.json` holds one line, issue 11).
fn rebuild_index(loc: &Loc, r: &Range, f: &mut File) -> Result<Vec<(usize, u64)>> {
    use std::io::BufRead;
    let io = |e| Error::io("reading", loc.messages_path(), e);
    f.seek(SeekFrom::Start(r.start)).map_err(io)?;
    let mut lines = std::io::BufReader::with_capacity(1 << 16, (&*f).take(r.bytes));
    let (mut out, mut line, mut pos, mut i) = (Vec::new(), Vec::new(), 0u64, 0usize);
    loop {
        line.clear();
        let n = lines.read_until(b'\n', &mut line).map_err(io)?;
        if n == 0 {
            break;
        }
        let maybe_user = line.windows(6).any(|w| w == b"\"user\"");
        if maybe_user && serde_json::from_slice::<Value>(&line).is_ok_and(|v| role(&v) == "user") {
            out.push((i, pos));
        }
        pos += n as u64;
        i += 1;
    }
    if pos < r.bytes {
        return Err(corrupt(loc, "committed bytes missing"));
    }
    Ok(out)
}

/// The last `n` rounds of a v3 session, reading only their byte range (section 7).
fn read_page(loc: &Loc, n: usize) -> Result<Transcript> {
    let head = read_head(loc).map_err(|e| e.into_error())?;
    let r = head.range.clone();
    let Some(mut f) = open_messages(loc, &r)? else {
        return Ok(build(loc, &head, &[], 0, 0, 0, Vec::new()));
    };
    let page_start = |rounds: &[(usize, u64)]| {
        rounds
            .len()
            .checked_sub(n)
            .and_then(|j| rounds.get(j))
            .map_or(0, |&(_, off)| off)
    };
    let rounds = match load_index(loc, &r) {
        Some(x) if line_start(&f, &r, page_start(&x)) => x,
        _ => rebuild_index(loc, &r, &mut f)?,
    };
    let total_rounds = rounds.len();
    let (first_round, start_msg, off) = if n >= total_rounds {
        (0, 0, 0)
    } else {
        let j = total_rounds - n;
        (j, rounds[j].0, rounds[j].1)
    };
    let bytes = read_at(loc, &mut f, r.start + off, r.bytes - off)?;
    if !bytes.is_empty() && !bytes.ends_with(b"\n") {
        return Err(corrupt(
            loc,
            "the committed range does not end with a newline",
        ));
    }
    let (msgs, _) = parse_lines(loc, &bytes)?;
    if r.count.checked_sub(start_msg as u64) != Some(msgs.len() as u64) {
        return Err(corrupt(
            loc,
            "the round index does not match the committed lines",
        ));
    }
    let mut warnings = check_messages(start_msg, &msgs);
    if !head.check.fatal.is_empty() {
        warnings.insert(
            0,
            format!("invalid header: {}", head.check.fatal.join(", ")),
        );
    }
    let mut t = build(
        loc,
        &head,
        &msgs,
        start_msg,
        total_rounds,
        first_round,
        warnings,
    );
    t.first_round = first_round;
    Ok(t)
}

/// Assemble a transcript: messages with global indices and compaction markers before each
/// checkpoint's first kept message.
fn build(
    loc: &Loc,
    head: &Head,
    msgs: &[Value],
    first: usize,
    total_rounds: usize,
    first_round: usize,
    mut warnings: Vec<String>,
) -> Transcript {
    let is_user = |i: usize| {
        i.checked_sub(first)
            .and_then(|k| msgs.get(k))
            .map(|m| role(m) == "user")
    };
    let marks = Marks::new(head, first, is_user, &mut warnings);
    let mut entries = Vec::with_capacity(msgs.len() + marks.comps.len() + 1);
    entries.extend(marks.system.clone());
    for (k, m) in msgs.iter().enumerate() {
        marks.message(first + k, m, &mut |e| entries.push(e));
    }
    Transcript {
        summary: summary_from_head(loc, head),
        entries,
        total_rounds,
        first_round,
        warnings,
        todos: None,
    }
}

/// What a transcript shows besides its messages: the system prompt at the top (a page from
/// the beginning) and a marker before each compaction's first kept message.
pub(super) struct Marks {
    pub system: Option<Entry>,
    /// `(firstKeptMessageIndex, summary, timestamp)` of each valid compaction.
    comps: Vec<(Option<u64>, String, Option<chrono::DateTime<chrono::Utc>>)>,
}

impl Marks {
    /// `is_user(i)`: whether stored message `i` is a user message (`None`: not known).
    pub fn new(
        head: &Head,
        first: usize,
        is_user: impl Fn(usize) -> Option<bool>,
        warnings: &mut Vec<String>,
    ) -> Marks {
        let comps = validate::compactions(
            &head.header,
            head.check.compactions_ok,
            head.range.count,
            is_user,
            warnings,
        );
        let comps = comps
            .iter()
            .map(|c| {
                (
                    safe_uint(c.get("firstKeptMessageIndex")),
                    c.get("summary")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string(),
                    c.get("timestamp")
                        .and_then(Value::as_i64)
                        .and_then(from_millis),
                )
            })
            .collect();
        // Loop renders its system prompt live and keeps only checkpoints of it; the other
        // stores show theirs at the top of the history, so Loop's (reconstructed as the
        // context window does) goes there too when the page starts at the beginning.
        let mut system = None;
        if first == 0 {
            let cps = validate::checkpoints(
                &head.header,
                head.check.checkpoints_ok,
                head.range.count,
                warnings,
            );
            if let Some(text) = super::checkpoints::system_prompt(&cps) {
                let timestamp = cps
                    .first()
                    .and_then(|c| c.get("timestamp"))
                    .and_then(Value::as_i64)
                    .and_then(from_millis);
                system = Some(Entry::SystemPrompt { text, timestamp });
            }
        }
        Marks { system, comps }
    }

    /// The entries of stored message `gi`: its compaction markers, then itself.
    pub fn message(&self, gi: usize, m: &Value, out: &mut impl FnMut(Entry)) {
        for (kept, summary, timestamp) in &self.comps {
            if *kept == Some(gi as u64) {
                out(Entry::Compaction {
                    summary: summary.clone(),
                    timestamp: *timestamp,
                });
            }
        }
        out(Entry::Message(Box::new(to_message(Some(gi), m))));
    }
}

/// The transcript for `Span::All` (fully validated) or `Span::LastRounds(n)`.
pub(crate) fn transcript(loc: &Loc, span: Span) -> Result<Transcript> {
    // A page of zero rounds is still a page: the last round.
    let span = match span {
        Span::LastRounds(0) => Span::LastRounds(1),
        s => s,
    };
    if let (Span::LastRounds(n), Layout::V3) = (span, loc.layout) {
        return read_page(loc, n);
    }
    let h = read_full(loc)?;
    let rounds = rounds_of(&h.messages, &h.offsets);
    let total = rounds
        .len()
        .max(usize::from(!h.messages.is_empty() && rounds.is_empty()));
    let (first_round, start) = match span {
        Span::LastRounds(n) if n < rounds.len() => (rounds.len() - n, rounds[rounds.len() - n].0),
        _ => (0, 0),
    };
    Ok(build(
        loc,
        &h.head,
        &h.messages[start..],
        start,
        total,
        first_round,
        h.warnings.clone(),
    ))
}

pub(super) fn pretty(line: &[u8]) -> String {
    match serde_json::from_slice::<Value>(line) {
        Ok(v) => serde_json::to_string_pretty(&v).unwrap_or_default(),
        Err(_) => String::from_utf8_lossy(line).trim_end().to_string(),
    }
}

/// The stored records: `meta.json` and the committed lines (or the legacy file), pretty.
pub(crate) fn raw(loc: &Loc) -> Result<String> {
    let mut out = String::new();
    match loc.layout {
        Layout::Legacy => {
            let bytes = regular::read(
                &loc.path,
                super::envelope::LEGACY_CAP,
                regular::Links::Refuse,
            )
            .map_err(|e| Error::io("reading", &loc.path, e))?;
            out.push_str(&format!("// {} (legacy v2)\n", loc.path.display()));
            for line in bytes.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
                out.push_str(&pretty(line));
                out.push('\n');
            }
        }
        Layout::V3 => {
            let meta_path = loc.meta_path();
            let meta = regular::read(&meta_path, regular::META_CAP, regular::Links::Refuse)
                .map_err(|e| Error::io("reading", &meta_path, e))?;
            out.push_str("// meta.json\n");
            out.push_str(&pretty(&meta));
            out.push('\n');
            if let Ok(head) = read_head(loc)
                && let Some(mut f) = open_messages(loc, &head.range)?
            {
                let r = &head.range;
                let bytes = read_at(loc, &mut f, r.start, r.bytes)?;
                out.push_str(&format!(
                    "// messages.jsonl, committed bytes [{}, {})\n",
                    r.start,
                    r.start + r.bytes
                ));
                for line in bytes.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
                    out.push_str(&pretty(line));
                    out.push('\n');
                }
            }
        }
    }
    Ok(out)
}
