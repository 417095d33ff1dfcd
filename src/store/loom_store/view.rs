//! The read views of one session: the transcript (section 4), the window's notes (its
//! replay is `window`) and the raw records.

use std::cell::Cell;
use std::io::Read;
use std::path::Path;

use serde_json::Value;

use super::convert::{Pairing, timestamp, to_message};
use super::log::{EventKind, Log};
use super::scan::{self, RawLine};
use crate::error::{Error, Result};
use crate::model::{Entry, SessionSummary, Transcript};
use crate::store::Span;
use crate::store::sink::EntrySink;

const LONG_LINE_NOTICE: &str =
    "a line longer than 16 MiB was skipped; loom cannot resume this session";

fn unreadable(n: u64) -> String {
    if n == 1 {
        "1 unreadable line skipped".to_string()
    } else {
        format!("{n} unreadable lines skipped")
    }
}

/// Warnings shared by the transcript and the window.
pub fn warnings(log: &Log) -> Vec<String> {
    let f = &log.facts;
    let mut w = Vec::new();
    if f.bad_lines > 0 {
        w.push(unreadable(f.bad_lines));
    }
    if f.long_lines > 0 {
        w.push(LONG_LINE_NOTICE.to_string());
    }
    if f.lossy_lines > 0 {
        w.push(format!(
            "{} line(s) held invalid UTF-8, shown with replacement characters",
            f.lossy_lines
        ));
    }
    if f.meta_records > 1 {
        w.push(format!(
            "{} meta records; the first one is used",
            f.meta_records
        ));
    }
    w
}

/// Every parseable record in file order, tool results paired by position.
pub fn transcript(log: &Log, summary: SessionSummary, span: Span) -> Transcript {
    let entries = entries(log, 0);
    // The whole file was parsed: keep its last rounds.
    let (entries, total_rounds, first_round) = crate::store::last_rounds(entries, span);
    Transcript {
        summary,
        entries,
        total_rounds,
        first_round,
        warnings: warnings(log),
        todos: None,
    }
}

/// The last rounds of a log read from the user message that starts round `first_round`
/// (whose stored index is `first_index`) on; `whole` is the pass over the whole file that
/// found it, for the warnings.
pub fn tail_transcript(
    tail: &Log,
    whole: &Log,
    summary: SessionSummary,
    first_index: usize,
    (first_round, total_rounds): (usize, usize),
) -> Transcript {
    Transcript {
        summary,
        entries: entries(tail, first_index),
        total_rounds,
        first_round,
        warnings: warnings(whole),
        todos: None,
    }
}

/// The entries of `log`'s events, messages numbered from `first_index`. Tool results pair
/// by position within a round, so a log read from a round's start pairs as the whole does.
fn entries(log: &Log, first_index: usize) -> Vec<Entry> {
    let mut entries = Vec::new();
    let mut conv = ToEntries::new(first_index);
    for e in &log.events {
        conv.push(&e.kind, &mut |x| entries.push(x));
    }
    conv.finish(&mut |x| entries.push(x));
    entries
}

/// Events turned into entries one at a time (`show` streams a log through this): runs of
/// unreadable lines become one notice, messages are numbered, and tool results are paired
/// with the calls before them by position (as `Pairing`).
pub struct ToEntries {
    bad_run: u64,
    index: usize,
    pairing: Pairing,
}

impl ToEntries {
    pub fn new(first_index: usize) -> ToEntries {
        ToEntries {
            bad_run: 0,
            index: first_index,
            pairing: Pairing::default(),
        }
    }

    pub fn push(&mut self, kind: &EventKind, out: &mut impl FnMut(Entry)) {
        if !matches!(kind, EventKind::Bad) && self.bad_run > 0 {
            out(Entry::Notice(unreadable(self.bad_run)));
            self.bad_run = 0;
        }
        let r = match kind {
            EventKind::Bad => {
                self.bad_run += 1;
                return;
            }
            EventKind::TooLong => return out(Entry::Notice(LONG_LINE_NOTICE.to_string())),
            EventKind::Record(r) => r,
        };
        match r.kind.as_str() {
            "system" => out(Entry::SystemPrompt {
                text: r
                    .message
                    .as_ref()
                    .map(|m| m.content.clone())
                    .unwrap_or_default(),
                timestamp: timestamp(&r.time),
            }),
            "compact" => out(Entry::Compaction {
                summary: r.summary.clone(),
                timestamp: timestamp(&r.time),
            }),
            "message" => {
                if let Some(m) = &r.message {
                    let mut msg = to_message(m, Some(self.index), &r.time, false);
                    self.index += 1;
                    self.pairing.pair(&mut msg);
                    out(Entry::Message(Box::new(msg)));
                }
            }
            // meta is the header (the summary); unknown kinds are ignored.
            _ => {}
        }
    }

    /// The notice of a run of unreadable lines at the end.
    pub fn finish(&mut self, out: &mut impl FnMut(Entry)) {
        if self.bad_run > 0 {
            out(Entry::Notice(unreadable(self.bad_run)));
            self.bad_run = 0;
        }
    }
}

pub const SYSTEM_LOGGED: &str = "last logged system prompt (loom regenerates this on resume)";
pub const SYSTEM_NOT_LOGGED: &str = "(system prompt not logged)";
pub const ORPHAN_NOTE: &str = "unanswered tool calls (kept by loom replay)";

/// Every line pretty-printed when it is JSON, as-is otherwise (the UI sanitises it).
pub fn raw(r: impl Read) -> std::io::Result<String> {
    let mut out = Vec::new();
    raw_each(r, |t| out.push(t))?;
    Ok(out.join("\n"))
}

/// `raw`'s records one at a time, each pretty-printed (joined by newlines they are `raw`).
pub fn raw_each(r: impl Read, mut f: impl FnMut(String)) -> std::io::Result<()> {
    scan::for_each_line(r, |line| match line {
        RawLine::TooLong { len, .. } => f(format!(
            "[line of {len} bytes, longer than 16 MiB, not shown]"
        )),
        RawLine::Line { bytes, .. } => {
            let text = String::from_utf8_lossy(bytes);
            if text.trim().is_empty() {
                return;
            }
            match serde_json::from_str::<Value>(&text) {
                Ok(v) => f(serde_json::to_string_pretty(&v).unwrap_or(text.into_owned())),
                Err(_) => f(text.into_owned()),
            }
        }
    })
}

/// Send the entries of the log lines `r` to `sink` as they are read, messages numbered from
/// `first_index`: `show` of a log holds one line at a time (issue 11).
pub fn send_entries(
    r: impl Read,
    first_index: usize,
    sink: &mut dyn EntrySink,
    path: &Path,
) -> Result<()> {
    let stop = Cell::new(false);
    let reader = Stoppable { r, stop: &stop };
    let mut conv = ToEntries::new(first_index);
    let mut failed: Option<std::io::Error> = None;
    let mut send = |e: Entry, failed: &mut Option<std::io::Error>| {
        if failed.is_none()
            && let Err(x) = sink.entry(e)
        {
            *failed = Some(x);
            // The writer is gone: read no further.
            stop.set(true);
        }
    };
    let read = scan::for_each_line(reader, |line| {
        if let (Some(kind), _) = super::log::event_of(line) {
            conv.push(&kind, &mut |e| send(e, &mut failed));
        }
    });
    conv.finish(&mut |e| send(e, &mut failed));
    if let Some(e) = failed {
        return Err(crate::store::sink_error(e));
    }
    read.map_err(|e| Error::io("reading", path, e))
}

/// A reader that ends early once `stop` is set.
struct Stoppable<'a, R> {
    r: R,
    stop: &'a Cell<bool>,
}

impl<R: Read> Read for Stoppable<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.stop.get() {
            return Ok(0);
        }
        self.r.read(buf)
    }
}
