//! How a Loop session ended (docs/stores.md): read from the last committed pi-ai message,
//! found in a bounded tail of the committed range, never by a second full read.

use std::io::{Read, Seek, SeekFrom};

use serde_json::Value;

use super::header::content_text;
use crate::model::Ended;

/// How much of the committed range's end is read first to find the last message (most last
/// lines are short: listing 100k sessions must not read much more than before). A longer
/// last line is read up to `TAIL_MAX`; beyond that the ending stays unknown.
const TAIL: u64 = 4 << 10;
const TAIL_MAX: u64 = 4 << 20;

/// The last line of `bytes` (without its newline), when a whole one is there: `bytes` must
/// start at a line start or contain a newline before the last line.
fn last_line(bytes: &[u8], at_line_start: bool) -> Option<&[u8]> {
    let body = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    match body.iter().rposition(|&b| b == b'\n') {
        Some(i) => Some(&body[i + 1..]),
        None if at_line_start => Some(body),
        None => None,
    }
    .filter(|l| !l.is_empty())
}

/// The ending from the committed bytes already in memory (legacy files).
pub(crate) fn from_bytes(committed: &[u8]) -> Option<Ended> {
    last_line(committed, true).map(from_line)
}

/// The ending from the committed range `[start, start + bytes)` of an open `messages.jsonl`.
pub(crate) fn from_file(f: &mut (impl Read + Seek), start: u64, bytes: u64) -> Option<Ended> {
    if bytes == 0 {
        return None;
    }
    let end = start + bytes;
    let mut want = TAIL;
    loop {
        let from = end.saturating_sub(want).max(start);
        f.seek(SeekFrom::Start(from)).ok()?;
        let mut buf = Vec::with_capacity((end - from) as usize);
        f.by_ref().take(end - from).read_to_end(&mut buf).ok()?;
        if let Some(line) = last_line(&buf, from == start) {
            return Some(from_line(line));
        }
        if from == start || want >= TAIL_MAX {
            return None;
        }
        want *= 16;
    }
}

/// The rule over one pi-ai message line.
fn from_line(line: &[u8]) -> Ended {
    let Ok(v) = serde_json::from_slice::<Value>(line) else {
        return Ended::Interrupted;
    };
    let s = |k: &str| v.get(k).and_then(Value::as_str);
    match s("role") {
        Some("assistant") => match s("stopReason") {
            Some("error") => Ended::Errored,
            // Cut by the user, by the token limit, or a tool call never answered.
            Some("aborted") | Some("length") | Some("toolUse") => Ended::Interrupted,
            _ => Ended::after_reply(&content_text(v.get("content"))),
        },
        Some("toolResult") if v.get("isError") == Some(&Value::Bool(true)) => Ended::Errored,
        // A result or a user message with no assistant reply after it.
        _ => Ended::Interrupted,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tail_is_found_even_when_the_last_line_is_long() {
        let long = format!(
            "{{\"role\":\"assistant\",\"content\":[{{\"type\":\"text\",\"text\":\"{}ok?\"}}],\"stopReason\":\"stop\"}}\n",
            "x".repeat(200_000)
        );
        let bytes = format!("{{\"role\":\"user\",\"content\":\"hi\"}}\n{long}");
        let mut c = std::io::Cursor::new(bytes.as_bytes().to_vec());
        assert_eq!(
            from_file(&mut c, 0, bytes.len() as u64),
            Some(Ended::Waiting)
        );
        assert_eq!(from_bytes(b""), None);
    }
}
