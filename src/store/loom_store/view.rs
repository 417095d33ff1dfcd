//! The read views of one session: the transcript (section 4), the replayed window
//! (section 5) and the raw records.

use std::io::Read;

use serde_json::Value;

use super::convert::{pair_by_position, timestamp, to_message};
use super::log::{EventKind, Log};
use super::replay::{self, Slot};
use super::scan::{self, RawLine};
use crate::model::{Entry, Message, Role, SessionSummary, Transcript, Window};
use crate::store::Span;

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
    let mut bad_run = 0u64;
    let mut index = first_index;
    for e in &log.events {
        if !matches!(e.kind, EventKind::Bad) && bad_run > 0 {
            entries.push(Entry::Notice(unreadable(bad_run)));
            bad_run = 0;
        }
        let r = match &e.kind {
            EventKind::Bad => {
                bad_run += 1;
                continue;
            }
            EventKind::TooLong => {
                entries.push(Entry::Notice(LONG_LINE_NOTICE.to_string()));
                continue;
            }
            EventKind::Record(r) => r,
        };
        match r.kind.as_str() {
            "system" => entries.push(Entry::SystemPrompt {
                text: r
                    .message
                    .as_ref()
                    .map(|m| m.content.clone())
                    .unwrap_or_default(),
                timestamp: timestamp(&r.time),
            }),
            "compact" => entries.push(Entry::Compaction {
                summary: r.summary.clone(),
                timestamp: timestamp(&r.time),
            }),
            "message" => {
                if let Some(m) = &r.message {
                    let msg = to_message(m, Some(index), &r.time, false);
                    entries.push(Entry::Message(Box::new(msg)));
                    index += 1;
                }
            }
            // meta is the header (the summary); unknown kinds are ignored.
            _ => {}
        }
    }
    if bad_run > 0 {
        entries.push(Entry::Notice(unreadable(bad_run)));
    }
    pair_by_position(entries.iter_mut().filter_map(|e| match e {
        Entry::Message(m) => Some(m.as_mut()),
        _ => None,
    }));
    entries
}

pub const SYSTEM_LOGGED: &str = "last logged system prompt (loom regenerates this on resume)";
pub const SYSTEM_NOT_LOGGED: &str = "(system prompt not logged)";
pub const ORPHAN_NOTE: &str = "unanswered tool calls (kept by loom replay)";

/// The window `/resume <id>` rebuilds, with the reopened notice appended.
pub fn window(log: &Log, id: &str, summary: SessionSummary) -> Window {
    let (slots, system) = replay::replay(&log.events);
    let mut messages: Vec<Message> = slots.iter().map(slot_message).collect();
    messages.push(Message::inserted(Role::User, replay::reopened_notice(id)));
    pair_by_position(messages.iter_mut());
    mark_orphans(&mut messages);
    let mut warnings = warnings(log);
    if log.facts.long_lines > 0 {
        warnings.push("loom refuses to resume or fork this session".to_string());
    }
    Window {
        summary,
        messages,
        system_note: Some(
            if system.is_some() {
                SYSTEM_LOGGED
            } else {
                SYSTEM_NOT_LOGGED
            }
            .to_string(),
        ),
        warnings,
    }
}

fn slot_message(s: &Slot) -> Message {
    to_message(&s.msg, s.index, &s.time, s.inserted)
}

/// Flag assistants whose calls are not all answered by the tool messages right after them
/// (mid-log orphans: loom's replay only trims the tail, so these stay in the window).
fn mark_orphans(msgs: &mut [Message]) {
    for i in 0..msgs.len() {
        if msgs[i].role != Role::Assistant || msgs[i].tool_calls.is_empty() {
            continue;
        }
        let answered = msgs[i + 1..]
            .iter()
            .take_while(|m| m.role == Role::Tool)
            .count();
        if answered < msgs[i].tool_calls.len() {
            msgs[i].note = Some(ORPHAN_NOTE.to_string());
        }
    }
}

/// Every line pretty-printed when it is JSON, as-is otherwise (the UI sanitises it).
pub fn raw(r: impl Read) -> std::io::Result<String> {
    let mut out = Vec::new();
    scan::for_each_line(r, |line| match line {
        RawLine::TooLong { len, .. } => out.push(format!(
            "[line of {len} bytes, longer than 16 MiB, not shown]"
        )),
        RawLine::Line { bytes, .. } => {
            let text = String::from_utf8_lossy(bytes);
            if text.trim().is_empty() {
                return;
            }
            match serde_json::from_str::<Value>(&text) {
                Ok(v) => out.push(serde_json::to_string_pretty(&v).unwrap_or(text.into_owned())),
                Err(_) => out.push(text.into_owned()),
            }
        }
    })?;
    Ok(out.join("\n"))
}
