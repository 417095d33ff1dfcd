//! What the read-only stores' transcript builders share: decoding one JSONL record
//! tolerantly, numbering stored messages, pairing tool outputs with their calls, and cutting a
//! huge tool output to what is shown.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use crate::model::Entry;

/// Parse one line into an object (first-wins duplicate keys); `(value, was_lossy)`. Invalid
/// UTF-8 is decoded with U+FFFD.
pub fn decode(bytes: &[u8]) -> Option<(Value, bool)> {
    if let Some(v) = super::json_first::parse(bytes) {
        return v.is_object().then_some((v, false));
    }
    if std::str::from_utf8(bytes).is_err() {
        let text = String::from_utf8_lossy(bytes);
        let v = super::json_first::parse(text.as_bytes())?;
        return v.is_object().then_some((v, true));
    }
    None
}

/// The messages of a context window: entries' messages, with a compaction's summary as the
/// user message replay inserts.
pub fn window_messages(entries: Vec<Entry>) -> Vec<crate::model::Message> {
    entries.into_iter().filter_map(window_message).collect()
}

/// One entry of a window as the message replay sends (`None`: not sent).
pub fn window_message(e: Entry) -> Option<crate::model::Message> {
    match e {
        Entry::Message(m) => Some(*m),
        Entry::Compaction { summary, timestamp } => {
            let mut m = crate::model::Message::inserted(crate::model::Role::User, summary);
            m.timestamp = timestamp;
            Some(m)
        }
        _ => None,
    }
}

/// The warnings of a tolerant line reader, one sentence each.
pub fn read_warnings(bad: u64, truncated: bool, pending: bool, lossy: u64) -> Vec<String> {
    let mut w = Vec::new();
    if bad > 0 {
        w.push(format!("{bad} unreadable line(s) skipped"));
    }
    if truncated {
        w.push("the last line is cut off (the writer stopped mid-line)".into());
    }
    if pending {
        w.push("the last line is still being written".into());
    }
    if lossy > 0 {
        w.push(format!(
            "{lossy} line(s) held invalid UTF-8, shown with replacement characters"
        ));
    }
    w
}

/// Give stored messages their positions, from `first` on.
pub fn number(out: &mut [Entry], first: usize) {
    let mut n = first;
    for e in out {
        if let Entry::Message(m) = e
            && !m.is_virtual
        {
            m.index = Some(n);
            n += 1;
        }
    }
}

/// Tool names onto results; a message with calls that `expects_result` and no result gets
/// the note "no result (interrupted or still running)".
pub fn pair(out: &mut [Entry], expects_result: impl Fn(&str) -> bool) {
    let mut names: HashMap<String, String> = HashMap::new();
    let mut answered: HashSet<String> = HashSet::new();
    for e in out.iter() {
        if let Entry::Message(m) = e {
            for c in &m.tool_calls {
                names.insert(c.id.clone(), c.name.clone());
            }
            if let Some(id) = &m.tool_call_id {
                answered.insert(id.clone());
            }
        }
    }
    for e in out.iter_mut() {
        if let Entry::Message(m) = e {
            if let Some(id) = &m.tool_call_id {
                m.tool_name = names.get(id).cloned();
            }
            let open = m
                .tool_calls
                .iter()
                .filter(|c| expects_result(&c.name) && !answered.contains(&c.id))
                .count();
            if open > 0 && m.note.is_none() {
                m.note = Some("no result (interrupted or still running)".into());
            }
        }
    }
}

/// At most `max` bytes of `s` on a char boundary, with a note of what was left out.
pub fn cut(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}\n… ({} more bytes)", &s[..end], s.len() - end)
}
