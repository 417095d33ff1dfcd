//! Context-window replay, exactly as loom's `/resume` rebuilds it (section 5): messages are
//! appended, `compact` records re-run `compact()` with keep = 6, and `dropOrphanedCalls`
//! trims a crash-cut tail turn. System records are ignored (loom regenerates the prompt).

use super::log::{Event, EventKind};
use super::scan::LMsg;

/// The text compaction puts before the summary (one line in loom's source).
pub const SUMMARY_PREFIX: &str = "[Context summary - earlier messages were compacted to save space. File contents mentioned below may be stale, re-read files before editing.]\n\n";

/// How many messages `compact()` keeps.
pub const KEEP: usize = 6;

/// The user message `/resume` and `/fork` append.
pub fn reopened_notice(id: &str) -> String {
    format!(
        "[Session {id} reopened. Time has passed since the messages above and file contents may have changed; re-read any file before editing it.]"
    )
}

/// One message of the replayed window, with where it came from.
#[derive(Clone, Debug, PartialEq)]
pub struct Slot {
    pub msg: LMsg,
    /// Stored message index; `None` when replay inserted it.
    pub index: Option<usize>,
    /// Write time of the record it came from (or of the compact record).
    pub time: String,
    pub inserted: bool,
}

impl Slot {
    fn inserted(msg: LMsg, time: &str) -> Slot {
        Slot {
            msg,
            index: None,
            time: time.to_string(),
            inserted: true,
        }
    }
}

/// The replayed window of `events`, after `dropOrphanedCalls`, without the reopened notice.
/// `window[0]` is the last logged system prompt (`None` when no system record exists); loom
/// itself would put a freshly generated prompt there.
pub fn replay(events: &[Event]) -> (Vec<Slot>, Option<Slot>) {
    let mut window = vec![Slot::inserted(LMsg::new("system", ""), "")];
    let mut system: Option<Slot> = None;
    let mut index = 0;
    for e in events {
        let EventKind::Record(r) = &e.kind else {
            continue;
        };
        match r.kind.as_str() {
            "message" => {
                if let Some(m) = &r.message {
                    window.push(Slot {
                        msg: m.clone(),
                        index: Some(index),
                        time: r.time.clone(),
                        inserted: false,
                    });
                    index += 1;
                }
            }
            "compact" => window = compact(window, &r.summary, &r.time),
            "system" => {
                let msg = r.message.clone().unwrap_or_else(|| LMsg::new("system", ""));
                system = Some(Slot::inserted(msg, &r.time));
            }
            _ => {}
        }
    }
    let mut window = drop_orphaned_calls(window);
    if let Some(sys) = &system {
        window[0] = sys.clone();
    }
    (window, system)
}

/// What replay needs to know of a window message: its role and how many calls it makes.
/// Both the window of messages and the streamed window's plan of record offsets replay
/// through the same two functions.
pub trait Turn {
    fn is_tool(&self) -> bool;
    fn is_assistant(&self) -> bool;
    fn calls(&self) -> usize;
}

impl Turn for Slot {
    fn is_tool(&self) -> bool {
        self.msg.role == "tool"
    }
    fn is_assistant(&self) -> bool {
        self.msg.role == "assistant"
    }
    fn calls(&self) -> usize {
        self.msg.tool_calls.len()
    }
}

/// loom's pure `compact(window, summary)`: a fresh system prompt, the summary as a user
/// message, and the last `KEEP` messages, widened so tool results keep their call.
pub fn compact(window: Vec<Slot>, summary: &str, time: &str) -> Vec<Slot> {
    let summary = Slot::inserted(
        LMsg::new("user", format!("{SUMMARY_PREFIX}{summary}")),
        time,
    );
    compact_with(window, summary)
}

/// `compact` with the summary message already made.
pub fn compact_with<T: Turn>(window: Vec<T>, summary: T) -> Vec<T> {
    let len = window.len();
    let mut start = if len > KEEP { (len - KEEP).max(1) } else { 1 };
    while start > 1 && window[start].is_tool() {
        start -= 1;
    }
    let mut out = Vec::with_capacity(2 + len.saturating_sub(start));
    let mut it = window.into_iter();
    out.extend(it.next());
    out.push(summary);
    out.extend(it.skip(start - 1));
    out
}

/// loom's `dropOrphanedCalls`: only the tail is checked. If the last non-tool message is an
/// assistant with more calls than messages after it, it and its partial results go.
pub fn drop_orphaned_calls<T: Turn>(mut msgs: Vec<T>) -> Vec<T> {
    let mut i = msgs.len();
    while i > 0 {
        i -= 1;
        let m = &msgs[i];
        if m.is_tool() {
            continue;
        }
        if m.is_assistant() && m.calls() > msgs.len() - i - 1 {
            msgs.truncate(i);
        }
        break;
    }
    msgs
}

/// The events before stored message `at` (a fork "at a point"); `None` when `at` is past
/// the last message.
pub fn cut_before(events: &[Event], at: usize) -> Option<&[Event]> {
    let mut seen = 0;
    for (pos, e) in events.iter().enumerate() {
        if let EventKind::Record(r) = &e.kind
            && r.chat_message().is_some()
        {
            if seen == at {
                return Some(&events[..pos]);
            }
            seen += 1;
        }
    }
    (at == seen).then_some(events)
}
