//! loom messages to format-neutral messages: roles, synthetic call ids (loom has none) and
//! pairing tool results to calls by position (section 4).

use chrono::{DateTime, Utc};
use serde_json::{Map, Value};

use super::scan::LMsg;
use crate::model::{Message, Role, ToolCall, parse_time};

/// Convert one loom message. `index` is its stored position among message records (`None`
/// for messages replay inserts); `time` is the record's write time.
pub fn to_message(m: &LMsg, index: Option<usize>, time: &str, is_virtual: bool) -> Message {
    let role = match m.role.as_str() {
        // Only loom's four roles; anything else (even "toolResult") stays unknown (6.2).
        "system" => Role::System,
        "user" => Role::User,
        "assistant" => Role::Assistant,
        "tool" => Role::Tool,
        other => Role::Other(other.to_string()),
    };
    let mut out = Message::new(role, m.content.clone());
    out.index = index;
    out.timestamp = timestamp(time);
    out.is_virtual = is_virtual;
    if !m.thinking.is_empty() {
        out.thinking.push(m.thinking.clone());
    }
    if !m.tool_name.is_empty() {
        out.tool_name = Some(m.tool_name.clone());
    }
    if matches!(out.role, Role::Other(_)) {
        out.note = Some("unknown role".to_string());
    }
    let owner = index.map_or_else(|| "v".to_string(), |i| i.to_string());
    out.tool_calls = m
        .tool_calls
        .iter()
        .enumerate()
        .map(|(n, c)| ToolCall {
            id: format!("call_{owner}_{n}"),
            name: c.name.clone(),
            // A call without arguments is shown as `{}` (6.2).
            arguments: match &c.arguments {
                Value::Null => Value::Object(Map::new()),
                a => a.clone(),
            },
        })
        .collect();
    out
}

/// A record time, when it parses.
pub fn timestamp(time: &str) -> Option<DateTime<Utc>> {
    parse_time(time)
}

/// Pairs tool results with calls by position, a message at a time: the run of `tool`
/// messages right after an assistant answers its calls in order. Extra or stray results
/// stay unpaired. The transcript and the window (both streamed) pair through this.
#[derive(Default)]
pub struct Pairing {
    /// The call ids of the last assistant, and which one the next tool result answers.
    pending: Vec<String>,
    next: usize,
}

impl Pairing {
    pub fn pair(&mut self, m: &mut Message) {
        if m.role == Role::Tool {
            m.tool_call_id = self.pending.get(self.next).cloned();
            self.next += 1;
            return;
        }
        self.pending = if m.role == Role::Assistant {
            m.tool_calls.iter().map(|c| c.id.to_string()).collect()
        } else {
            Vec::new()
        };
        self.next = 0;
    }
}
