//! The replayed window read in two passes (issue 11): the first replays record *offsets*,
//! a plan of a few words per message (compactions drop what they drop from it, as from the
//! window itself); the second reads each planned record again and hands it on. `show
//! --window` of a huge log holds the plan and one line, and the browser's page only the
//! messages it shows.

use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use super::convert::{Pairing, to_message};
use super::log::{self, EventKind, Log};
use super::replay::{self, SUMMARY_PREFIX, Turn};
use super::scan::{self, LMsg, Parsed};
use super::view::{self, ORPHAN_NOTE, SYSTEM_LOGGED, SYSTEM_NOT_LOGGED};
use crate::error::{Error, Result};
use crate::model::{Message, Role, SessionSummary, Window};
use crate::store::sink::WindowHead;

const TOOL: u8 = 1;
const ASSISTANT: u8 = 2;
/// An assistant whose calls the tool messages after it do not all answer.
const ORPHAN: u8 = 4;
/// A message replay made (the compaction summary, the logged system prompt), kept in
/// `Plan::made`; otherwise a log record, read again when it is sent.
const MADE: u8 = 8;

/// One message of the planned window, in 24 bytes: a million of them take 24 MB, and the
/// browser's first screen of a log of a million messages stays under 64 MB.
struct Planned {
    /// Where its record starts, or its place in `made`.
    at: u64,
    /// Its stored message index (a log record).
    index: u32,
    calls: u32,
    tokens: u32,
    flags: u8,
}

impl Planned {
    fn of(at: u64, index: usize, m: &LMsg, made: bool) -> Planned {
        let role = |r: &str, f: u8| if m.role == r { f } else { 0 };
        Planned {
            at,
            index: u32::try_from(index).unwrap_or(u32::MAX),
            calls: u32::try_from(m.tool_calls.len()).unwrap_or(u32::MAX),
            // The estimate counts what the converted message shows (calls as JSON).
            tokens: u32::try_from(to_message(m, None, "", false).estimated_tokens())
                .unwrap_or(u32::MAX),
            flags: role("tool", TOOL) | role("assistant", ASSISTANT) | if made { MADE } else { 0 },
        }
    }

    /// A message replay made, kept in `made`.
    fn made(m: LMsg, time: &str, made: &mut Vec<(LMsg, String)>) -> Planned {
        let p = Planned::of(made.len() as u64, 0, &m, true);
        made.push((m, time.to_string()));
        p
    }
}

impl Turn for Planned {
    fn is_tool(&self) -> bool {
        self.flags & TOOL != 0
    }
    fn is_assistant(&self) -> bool {
        self.flags & ASSISTANT != 0
    }
    fn calls(&self) -> usize {
        self.calls as usize
    }
}

/// A log's window as offsets, with the facts of the same pass.
pub struct Plan {
    slots: Vec<Planned>,
    /// The messages replay made (compaction summaries, the system prompt); a few.
    made: Vec<(LMsg, String)>,
    logged_system: bool,
    /// The pass's facts (no events).
    pub log: Log,
}

/// Pass one: replay (section 5) over where each message record starts.
pub fn plan(r: impl std::io::Read, read_marker: Option<u64>) -> std::io::Result<Plan> {
    let mut made = Vec::new();
    let mut window = vec![Planned::made(LMsg::new("system", ""), "", &mut made)];
    let mut system: Option<(LMsg, String)> = None;
    let mut index = 0;
    let facts = log::read_each(r, read_marker, |start, _, kind| {
        let EventKind::Record(r) = kind else { return };
        match r.kind.as_str() {
            "message" => {
                if let Some(m) = &r.message {
                    window.push(Planned::of(start, index, m, false));
                    index += 1;
                }
            }
            "compact" => {
                let text = format!("{SUMMARY_PREFIX}{}", r.summary);
                let summary = Planned::made(LMsg::new("user", text), &r.time, &mut made);
                window = replay::compact_with(std::mem::take(&mut window), summary);
            }
            "system" => {
                let m = r.message.clone();
                let m = m.unwrap_or_else(|| LMsg::new("system", ""));
                system = Some((m, r.time.clone()));
            }
            _ => {}
        }
    })?;
    let mut slots = replay::drop_orphaned_calls(window);
    let logged_system = system.is_some();
    if let Some((m, time)) = system {
        slots[0] = Planned::made(m, &time, &mut made);
    }
    mark_orphans(&mut slots);
    Ok(Plan {
        slots,
        made,
        logged_system,
        log: Log {
            events: Vec::new(),
            facts,
        },
    })
}

/// Flag assistants whose calls are not all answered by the tool messages right after them
/// (mid-log orphans: loom's replay only trims the tail, so these stay in the window).
fn mark_orphans(slots: &mut [Planned]) {
    for i in 0..slots.len() {
        if !slots[i].is_assistant() || slots[i].calls == 0 {
            continue;
        }
        let answered = slots[i + 1..].iter().take_while(|s| s.is_tool()).count();
        if answered < slots[i].calls() {
            slots[i].flags |= ORPHAN;
        }
    }
}

impl Plan {
    /// Messages in the window, the reopened notice included.
    pub fn count(&self) -> usize {
        self.slots.len() + 1
    }

    /// Everything but the messages, with their count and token estimate.
    pub fn head(&self, summary: SessionSummary, notice: &Message) -> WindowHead {
        let mut warnings = view::warnings(&self.log);
        if self.log.facts.long_lines > 0 {
            warnings.push("loom refuses to resume or fork this session".to_string());
        }
        let note = if self.logged_system {
            SYSTEM_LOGGED
        } else {
            SYSTEM_NOT_LOGGED
        };
        let tokens =
            self.slots.iter().map(|s| u64::from(s.tokens)).sum::<u64>() + notice.estimated_tokens();
        WindowHead {
            window: Window {
                summary,
                messages: Vec::new(),
                system_note: Some(note.to_string()),
                warnings,
                omitted: 0,
                omitted_tokens: 0,
            },
            count: self.count(),
            tokens,
        }
    }

    /// Pass two: the messages from window position `from` on (the notice last), each read
    /// from `path` when it is sent. Tool results pair with the calls before them by
    /// position, so reading starts at the message that opens `from`'s run of results.
    pub fn send(
        &self,
        path: &Path,
        from: usize,
        notice: Message,
        out: &mut dyn FnMut(Message) -> std::io::Result<()>,
    ) -> Result<()> {
        let io = |e: std::io::Error| Error::io("reading", path, e);
        let mut start = from.min(self.slots.len());
        while start > 0 && self.slots.get(start).is_some_and(|s| s.is_tool()) {
            start -= 1;
        }
        let mut reader = BufReader::with_capacity(1 << 16, log::open(path).map_err(io)?);
        let (mut pos, mut line) = (0u64, Vec::new());
        let mut pairing = Pairing::default();
        for (i, slot) in self.slots.iter().enumerate().skip(start) {
            let mut m = if slot.flags & MADE != 0 {
                let (made, time) = &self.made[slot.at as usize];
                to_message(made, None, time, true)
            } else {
                let (start, index) = (slot.at, slot.index as usize);
                if start != pos {
                    reader
                        .seek_relative(start as i64 - pos as i64)
                        .map_err(io)?;
                }
                line.clear();
                let n = reader
                    .by_ref()
                    .take(scan::MAX_LINE as u64 + 1)
                    .read_until(b'\n', &mut line)
                    .map_err(io)?;
                pos = start + n as u64;
                let bytes = line.strip_suffix(b"\n").unwrap_or(&line);
                let Parsed::Record(r) = scan::parse_line(bytes).0 else {
                    return Err(changed(path));
                };
                let Some(lm) = r.chat_message() else {
                    return Err(changed(path));
                };
                to_message(lm, Some(index), &r.time, false)
            };
            pairing.pair(&mut m);
            if slot.flags & ORPHAN != 0 {
                m.note = Some(ORPHAN_NOTE.to_string());
            }
            if i >= from {
                out(m).map_err(crate::store::sink_error)?;
            }
        }
        if from > self.slots.len() {
            // A page of no messages.
            return Ok(());
        }
        let mut notice = notice;
        pairing.pair(&mut notice);
        out(notice).map_err(crate::store::sink_error)
    }
}

/// A planned record is no longer where the first pass found it.
fn changed(path: &Path) -> Error {
    Error::Refused(format!(
        "{} changed while it was read; open it again",
        path.display()
    ))
}

/// The user message `/resume` appends.
pub fn notice(id: &str) -> Message {
    Message::inserted(Role::User, replay::reopened_notice(id))
}
