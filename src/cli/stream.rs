//! Writing `show` as it is produced: sanitised Markdown piece by piece, and the pretty JSON
//! document serialised message by message through a writer that escapes what a terminal
//! could act on. Neither holds the whole output (issue 11, bounded memory).

use std::borrow::Borrow;
use std::cell::RefCell;
use std::io::{self, Write};

use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};
use serde_json::Value;

use super::table::escape_json_text;
use crate::model::{Message, SessionSummary};
use crate::text;

/// Text for a terminal, sanitised a piece at a time; remembers whether the last byte written
/// was a newline (so `show` ends its output with exactly one).
pub struct Sanitized<W: Write> {
    out: W,
    pub ends_with_newline: bool,
}

impl<W: Write> Sanitized<W> {
    pub fn new(out: W) -> Self {
        Sanitized {
            out,
            ends_with_newline: true,
        }
    }

    pub fn put(&mut self, piece: &str) -> io::Result<()> {
        if piece.is_empty() {
            return Ok(());
        }
        let clean = text::sanitize(piece);
        self.ends_with_newline = clean.ends_with('\n');
        self.out.write_all(clean.as_bytes())
    }

    /// A long text (a raw view) line by line, never copied whole.
    pub fn put_lines(&mut self, s: &str) -> io::Result<()> {
        s.split_inclusive('\n').try_for_each(|l| self.put(l))
    }

    /// The writer underneath, for output that is escaped its own way (JSON).
    pub fn inner(&mut self) -> &mut W {
        &mut self.out
    }
}

/// Passes JSON text through `escape_json_text`, whole characters at a time (a character
/// split across two writes waits for its other bytes).
struct Escaping<W: Write> {
    out: W,
    pending: Vec<u8>,
}

impl<W: Write> Write for Escaping<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.pending.extend_from_slice(buf);
        let valid = match std::str::from_utf8(&self.pending) {
            Ok(s) => s.len(),
            // An incomplete character at the end waits; invalid bytes (serde_json writes
            // none) go out as they are.
            Err(e) if e.error_len().is_none() => e.valid_up_to(),
            Err(_) => self.pending.len(),
        };
        let head: Vec<u8> = self.pending.drain(..valid).collect();
        match std::str::from_utf8(&head) {
            Ok(s) => self.out.write_all(escape_json_text(s).as_bytes())?,
            Err(_) => self.out.write_all(&head)?,
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        let rest = std::mem::take(&mut self.pending);
        self.out.write_all(&rest)?;
        self.out.flush()
    }
}

/// The messages of a `show --json` document, serialised one at a time.
struct Messages<I>(RefCell<Option<I>>);

impl<M: Borrow<Message>, I: Iterator<Item = M>> Serialize for Messages<I> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let it = self.0.borrow_mut().take();
        s.collect_seq(it.into_iter().flatten().map(|m| m.borrow().to_json()))
    }
}

/// Write `{"session": …, "messages": [...], "estimated_tokens": …}` (the last key only for a
/// window), pretty and escaped, exactly as the whole `Value` would print, then a newline.
/// `left_off` is asked for after the messages went out (it may be folded from them).
pub fn json<M: Borrow<Message>>(
    out: impl Write,
    summary: &SessionSummary,
    messages: impl Iterator<Item = M>,
    estimated_tokens: Option<u64>,
    left_off: impl FnOnce() -> Option<Value>,
) -> io::Result<()> {
    let mut w = Escaping {
        out,
        pending: Vec::new(),
    };
    let mut ser = serde_json::Serializer::pretty(&mut w);
    let err = io::Error::other;
    let mut map = (&mut ser).serialize_map(None).map_err(err)?;
    let session: Value = summary.to_json();
    map.serialize_entry("session", &session).map_err(err)?;
    let messages = Messages(RefCell::new(Some(messages)));
    map.serialize_entry("messages", &messages).map_err(err)?;
    if let Some(t) = estimated_tokens {
        map.serialize_entry("estimated_tokens", &t).map_err(err)?;
    }
    if let Some(lo) = &left_off() {
        map.serialize_entry("left_off", lo).map_err(err)?;
    }
    map.end().map_err(err)?;
    w.write_all(b"\n")?;
    w.flush()
}
