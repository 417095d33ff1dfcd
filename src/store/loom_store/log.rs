//! One sequential pass over a loom log: every line becomes an event (record, bad line, or
//! over-long line) and the listing facts of section 3 are folded in as the pass goes, so the
//! list, the transcript and the writers all read a file exactly once.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use chrono::{DateTime, Utc};

use super::scan::{self, Parsed, RawLine, Record};
use crate::model::parse_time;

/// One line of the log that was not blank.
#[derive(Clone, Debug)]
pub struct Event {
    pub kind: EventKind,
}

#[derive(Clone, Debug)]
pub enum EventKind {
    Record(Box<Record>),
    /// A line that failed to decode (counted as "unreadable").
    Bad,
    /// A line longer than 16 MiB: skipped, the session is not resumable.
    TooLong,
}

/// The environment facts of the first `meta` record.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Meta {
    pub time: String,
    pub model: String,
    pub cwd: String,
    pub forked_from: String,
}

/// What the listing needs, folded from the events in file order.
#[derive(Clone, Debug, Default)]
pub struct Facts {
    /// Bytes read.
    pub size: u64,
    /// Length up to and including the last `\n` (a record boundary; mark-read stores it).
    pub complete_len: u64,
    /// Message count within `complete_len`.
    pub complete_messages: u64,
    /// Start of the last `assistant`/`tool` message record (mark-unread moves the marker here).
    pub last_reply_start: Option<u64>,
    /// Message count before `last_reply_start`.
    pub messages_before_last_reply: u64,
    /// loom's message count: `message` records with a non-null message.
    pub messages: u64,
    pub meta: Option<Meta>,
    pub meta_records: u64,
    /// The first user message, and the first one that is not a summary/reopen/skill message.
    pub first_user: Option<String>,
    pub first_real_user: Option<String>,
    /// Summary of the last `compact` record.
    pub last_summary: Option<String>,
    /// `time` of the last parseable record whose time parses.
    pub last_time: Option<DateTime<Utc>>,
    pub bad_lines: u64,
    pub long_lines: u64,
    pub lossy_lines: u64,
    /// An assistant/tool message starts at or after the sidecar's `read_bytes`.
    pub reply_after_marker: bool,
    /// The end of the log so far, for `ended`.
    pub tail: super::ended::Tail,
    /// Where each user message's record starts, with the count of messages before it: the
    /// rounds, so the last ones can be read from there without keeping the rest.
    pub user_starts: Vec<(u64, u64)>,
}

/// A whole log: its events (when kept) and its facts.
#[derive(Clone, Debug, Default)]
pub struct Log {
    pub events: Vec<Event>,
    pub facts: Facts,
}

/// Open a log for reading without following a symlink at its last component.
pub fn open(path: &Path) -> io::Result<File> {
    OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
}

/// Read `path` once. `read_marker` is the sidecar's `read_bytes` (for unread); `keep` keeps
/// the events (the listing pass only needs the facts).
pub fn read(path: &Path, read_marker: Option<u64>, keep: bool) -> io::Result<Log> {
    let file = open(path)?;
    read_from(file, read_marker, keep)
}

/// `read` over any byte source (tests feed slices).
pub fn read_from(r: impl io::Read, read_marker: Option<u64>, keep: bool) -> io::Result<Log> {
    let mut events = Vec::new();
    let facts = read_each(r, read_marker, |_, _, kind| {
        if keep {
            events.push(Event { kind });
        }
    })?;
    Ok(Log { events, facts })
}

/// The facts of one pass, each event handed to `each` with the line's byte range instead of
/// kept: the window replay plans from where records start and drops them (issue 11).
pub fn read_each(
    r: impl io::Read,
    read_marker: Option<u64>,
    mut each: impl FnMut(u64, u64, EventKind),
) -> io::Result<Facts> {
    let mut f = Facts::default();
    scan::for_each_line(r, |line| {
        let start = line.start();
        let end = line.end();
        let terminated = line.terminated();
        let (kind, lossy) = event_of(line);
        if lossy {
            f.lossy_lines += 1;
        }
        f.size = end;
        if let Some(kind) = kind {
            f.fold(start, &kind, read_marker);
            each(start, end, kind);
        }
        if terminated {
            f.complete_len = end;
            f.complete_messages = f.messages;
        }
    })?;
    Ok(f)
}

/// What one line is: an event (`None` for a blank line), and whether it held invalid UTF-8.
pub fn event_of(line: RawLine<'_>) -> (Option<EventKind>, bool) {
    match line {
        RawLine::TooLong { .. } => (Some(EventKind::TooLong), false),
        RawLine::Line { bytes, .. } => {
            let (parsed, lossy) = scan::parse_line(bytes);
            let kind = match parsed {
                Parsed::Blank => None,
                Parsed::Bad => Some(EventKind::Bad),
                Parsed::Record(r) => Some(EventKind::Record(r)),
            };
            (kind, lossy)
        }
    }
}

impl Facts {
    fn fold(&mut self, start: u64, kind: &EventKind, read_marker: Option<u64>) {
        let r = match kind {
            EventKind::Bad => {
                self.bad_lines += 1;
                self.tail.bad_line();
                return;
            }
            EventKind::TooLong => {
                self.long_lines += 1;
                self.tail.bad_line();
                return;
            }
            EventKind::Record(r) => r,
        };
        if let Some(t) = parse_time(&r.time) {
            self.last_time = Some(t);
        }
        match r.kind.as_str() {
            "meta" => {
                self.meta_records += 1;
                if self.meta.is_none() {
                    self.meta = Some(Meta {
                        time: r.time.clone(),
                        model: r.model.clone(),
                        cwd: r.cwd.clone(),
                        forked_from: r.forked_from.clone(),
                    });
                }
            }
            "compact" => self.last_summary = Some(r.summary.clone()),
            _ => {}
        }
        let Some(m) = r.chat_message() else {
            self.tail.other_record();
            return;
        };
        self.tail.message(m);
        match m.role.as_str() {
            "user" => {
                self.user_starts.push((start, self.messages));
                if self.first_user.is_none() {
                    self.first_user = Some(m.content.clone());
                }
                if self.first_real_user.is_none() && !is_inserted_user_text(&m.content) {
                    self.first_real_user = Some(m.content.clone());
                }
            }
            "assistant" | "tool" => {
                self.last_reply_start = Some(start);
                self.messages_before_last_reply = self.messages;
                if read_marker.is_some_and(|b| start >= b) {
                    self.reply_after_marker = true;
                }
            }
            _ => {}
        }
        self.messages += 1;
    }
}

/// User messages loom (or its skills) inserts, skipped for the title (section 3, DECIDED):
/// the compaction summary, the reopened notice, and skill bodies.
pub fn is_inserted_user_text(s: &str) -> bool {
    s.starts_with("[Context summary - ")
        || (s.starts_with("[Session ") && s.ends_with("]") && s.contains(" reopened. "))
        || s.starts_with("[Skill loaded: ")
}
