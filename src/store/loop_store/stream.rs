//! A v3 history read one line at a time (issue 11): a first pass checks the committed bytes
//! (hash, line count, JSON, tool-call answers) and keeps one flag per message; a second pass
//! hands each parsed message on and drops it. Neither holds the file's text or its parsed
//! form, so `show` of a million messages costs the row and a line.

use std::fs::File;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};

use serde_json::Value;
use sha2::{Digest, Sha256};

use super::envelope::{Head, read_head};
use super::history::{Marks, corrupt, open_messages, pretty};
use super::listing::summary_from_head;
use super::validate::{self, Checker, role};
use super::{Layout, Loc};
use crate::error::{Error, Result};
use crate::model::Transcript;
use crate::store::sink::{EntrySink, send_whole};
use crate::store::{Span, regular, sink_error};

/// A history whose committed bytes were checked, known by its messages' roles.
pub(super) struct Checked {
    pub head: Head,
    /// Whether each stored message is a user message.
    pub is_user: Vec<bool>,
    /// The history's own warnings (header, messages, prompt timings), as `read_full` gives.
    pub warnings: Vec<String>,
}

/// The committed range as buffered lines from its start (`None`: no messages file).
fn committed(loc: &Loc, head: &Head) -> Result<Option<BufReader<std::io::Take<File>>>> {
    let r = &head.range;
    let Some(mut f) = open_messages(loc, r)? else {
        return Ok(None);
    };
    f.seek(SeekFrom::Start(r.start))
        .map_err(|e| Error::io("reading", loc.messages_path(), e))?;
    Ok(Some(BufReader::with_capacity(1 << 16, f.take(r.bytes))))
}

/// Each committed line (with its `\n`), in order.
fn each_line(loc: &Loc, mut r: impl BufRead, mut f: impl FnMut(&[u8]) -> Result<()>) -> Result<()> {
    let mut line = Vec::new();
    loop {
        line.clear();
        let n = r
            .read_until(b'\n', &mut line)
            .map_err(|e| Error::io("reading", loc.messages_path(), e))?;
        if n == 0 {
            return Ok(());
        }
        f(&line)?;
    }
}

/// Pass one: `read_full`'s checks, in its order, holding one line at a time.
pub(super) fn check(loc: &Loc) -> Result<Option<Checked>> {
    let head = read_head(loc).map_err(|e| e.into_error())?;
    let Some(reader) = committed(loc, &head)? else {
        return Ok(None);
    };
    let r = head.range.clone();
    let (mut hash, mut read, mut lines) = (Sha256::new(), 0u64, 0u64);
    let mut ends_with_newline = true;
    let mut bad_json: Option<usize> = None;
    let mut is_user = Vec::new();
    let mut checker = Checker::default();
    each_line(loc, reader, |line| {
        hash.update(line);
        read += line.len() as u64;
        ends_with_newline = line.ends_with(b"\n");
        lines += u64::from(ends_with_newline);
        let i = is_user.len();
        match serde_json::from_slice::<Value>(line) {
            Ok(m) => {
                is_user.push(role(&m) == "user");
                checker.push(i, &m);
            }
            Err(_) => {
                bad_json.get_or_insert(i + 1);
                is_user.push(false);
            }
        }
        Ok(())
    })?;
    if read < r.bytes {
        return Err(corrupt(loc, "committed bytes missing"));
    }
    let digest = crate::hex::encode(&hash.finalize());
    if digest != r.generation {
        return Err(corrupt(
            loc,
            "the committed bytes do not match the generation hash",
        ));
    }
    if !ends_with_newline {
        return Err(corrupt(
            loc,
            "the committed range does not end with a newline",
        ));
    }
    if lines != r.count {
        return Err(corrupt(
            loc,
            format!("{lines} committed lines but messageCount is {}", r.count),
        ));
    }
    if let Some(n) = bad_json {
        return Err(corrupt(loc, format!("line {n} is not valid JSON")));
    }
    let mut warnings = Vec::new();
    if !head.check.fatal.is_empty() {
        warnings.push(format!("invalid header: {}", head.check.fatal.join(", ")));
    }
    warnings.extend(checker.finish());
    let n = is_user.len() as u64;
    let user_at = |i: usize| is_user.get(i).copied().unwrap_or(false);
    warnings.extend(validate::prompt_timings_checked(&head.header, n, user_at));
    Ok(Some(Checked {
        head,
        is_user,
        warnings,
    }))
}

/// Pass two: each stored message with its index, parsed and dropped in turn.
pub(super) fn each_message(
    loc: &Loc,
    c: &Checked,
    mut f: impl FnMut(usize, Value) -> Result<()>,
) -> Result<()> {
    let Some(reader) = committed(loc, &c.head)? else {
        return Err(corrupt(loc, "committed bytes missing"));
    };
    let mut i = 0;
    each_line(loc, reader, |line| {
        // The first pass parsed every line: a failure now means the file changed under us.
        let m = serde_json::from_slice::<Value>(line)
            .map_err(|_| corrupt(loc, format!("line {} is not valid JSON", i + 1)))?;
        i += 1;
        f(i - 1, m)
    })
}

/// `show` of a whole v3 history, entry by entry. Other spans and layouts are already
/// bounded (a page reads only its rounds; a legacy file is capped) and are sent whole.
pub(crate) fn transcript_to(loc: &Loc, span: Span, sink: &mut dyn EntrySink) -> Result<()> {
    if span != Span::All || loc.layout != Layout::V3 {
        let t = super::history::transcript(loc, span)?;
        return send_whole(t, sink).map_err(sink_error);
    }
    let Some(c) = check(loc)? else {
        let t = super::history::transcript(loc, span)?;
        return send_whole(t, sink).map_err(sink_error);
    };
    let mut warnings = c.warnings.clone();
    let is_user = |i: usize| c.is_user.get(i).copied();
    let marks = Marks::new(&c.head, 0, is_user, &mut warnings);
    let users = c.is_user.iter().filter(|&&u| u).count();
    let total_rounds = users.max(usize::from(!c.is_user.is_empty() && users == 0));
    sink.head(Transcript {
        summary: summary_from_head(loc, &c.head),
        entries: Vec::new(),
        total_rounds,
        first_round: 0,
        warnings,
        todos: None,
    })
    .map_err(sink_error)?;
    if let Some(e) = marks.system.clone() {
        sink.entry(e).map_err(sink_error)?;
    }
    each_message(loc, &c, |gi, m| {
        let mut sent = Ok(());
        marks.message(gi, &m, &mut |e| {
            if sent.is_ok() {
                sent = sink.entry(e);
            }
        });
        sent.map_err(sink_error)
    })
}

/// `history::raw` a record at a time: `meta.json`, then each committed line pretty-printed
/// as it is read. A legacy file (capped in size) is printed whole.
pub(crate) fn raw_to(loc: &Loc, out: &mut dyn FnMut(&str) -> std::io::Result<()>) -> Result<()> {
    if loc.layout != Layout::V3 {
        let text = super::history::raw(loc)?;
        return out(&text).map_err(sink_error);
    }
    let meta_path = loc.meta_path();
    let meta = regular::read(&meta_path, regular::META_CAP, regular::Links::Refuse)
        .map_err(|e| Error::io("reading", &meta_path, e))?;
    let text = format!("// meta.json\n{}\n", pretty(&meta));
    out(&text).map_err(sink_error)?;
    let Ok(head) = read_head(loc) else {
        return Ok(());
    };
    let Some(reader) = committed(loc, &head)? else {
        return Ok(());
    };
    let r = &head.range;
    let text = format!(
        "// messages.jsonl, committed bytes [{}, {})\n",
        r.start,
        r.start + r.bytes
    );
    out(&text).map_err(sink_error)?;
    let mut read = 0u64;
    each_line(loc, reader, |line| {
        read += line.len() as u64;
        let l = line.strip_suffix(b"\n").unwrap_or(line);
        if l.is_empty() {
            return Ok(());
        }
        let mut text = pretty(l);
        text.push('\n');
        out(&text).map_err(sink_error)
    })?;
    if read < r.bytes {
        return Err(corrupt(loc, "committed bytes missing"));
    }
    Ok(())
}

/// The raw view's last `bytes` or so of committed lines, pretty-printed, and whether
/// earlier records were left out (the browser pages raw from its end). A range that fits,
/// or a legacy file (capped in size), is the whole raw view.
pub(crate) fn raw_page(loc: &Loc, bytes: u64) -> Result<(String, bool)> {
    let whole = || super::history::raw(loc).map(|t| (t, false));
    if loc.layout != Layout::V3 {
        return whole();
    }
    let Ok(head) = read_head(loc) else {
        return whole();
    };
    let r = &head.range;
    if bytes >= r.bytes {
        return whole();
    }
    let Some(mut f) = open_messages(loc, r)? else {
        return whole();
    };
    let io = |e: std::io::Error| Error::io("reading", loc.messages_path(), e);
    let end = r.start + r.bytes;
    // The line the page's first byte falls in starts it (a record longer than the page is
    // shown whole rather than not at all).
    let mut from = crate::store::lines::seek_line_start(&mut f, end - bytes).map_err(io)?;
    if from >= end {
        from = last_line_start(&mut f, r.start, end).map_err(io)?;
        f.seek(SeekFrom::Start(from)).map_err(io)?;
    }
    let mut text = format!(
        "// messages.jsonl, committed bytes [{from}, {end}) of [{}, {end}): earlier records above\n",
        r.start
    );
    let reader = BufReader::with_capacity(1 << 16, f.take(end.saturating_sub(from)));
    each_line(loc, reader, |line| {
        let l = line.strip_suffix(b"\n").unwrap_or(line);
        if !l.is_empty() {
            text.push_str(&pretty(l));
            text.push('\n');
        }
        Ok(())
    })?;
    Ok((text, from > r.start))
}

/// Where the last line of `[start, end)` begins (its final byte is a `\n`): read backwards
/// in blocks until the `\n` before it.
fn last_line_start(f: &mut File, start: u64, end: u64) -> std::io::Result<u64> {
    let mut at = end.saturating_sub(1);
    let mut block = vec![0u8; 1 << 16];
    while at > start {
        let from = at.saturating_sub(block.len() as u64).max(start);
        let n = (at - from) as usize;
        f.seek(SeekFrom::Start(from))?;
        f.read_exact(&mut block[..n])?;
        if let Some(i) = block[..n].iter().rposition(|&b| b == b'\n') {
            return Ok(from + i as u64 + 1);
        }
        at = from;
    }
    Ok(start)
}
