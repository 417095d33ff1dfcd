//! Format-neutral messages, the stored transcript and the replayed context window.

use chrono::{DateTime, Utc};
use serde_json::{Value, json};

use super::session::{SessionSummary, rfc3339};

/// Who said it. Unknown roles are kept verbatim (loom keeps them in its replay).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Role {
    System,
    User,
    Assistant,
    Tool,
    Other(String),
}

impl Role {
    /// Map a stored role string; Loop's `toolResult` is a tool message.
    pub fn parse(s: &str) -> Role {
        match s {
            "system" => Role::System,
            "user" => Role::User,
            "assistant" => Role::Assistant,
            "tool" | "toolResult" => Role::Tool,
            other => Role::Other(other.to_string()),
        }
    }

    pub fn as_str(&self) -> &str {
        match self {
            Role::System => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
            Role::Other(s) => s,
        }
    }
}

/// One tool call made by an assistant message.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolCall {
    /// The call id; loom has none, so its readers synthesise `call_<msg>_<n>` for pairing.
    pub id: String,
    pub name: String,
    /// Arguments as stored: an object, or a string when the store keeps unparsable JSON text.
    pub arguments: Value,
}

/// An inline image, shown as a placeholder.
#[derive(Clone, Debug, PartialEq)]
pub struct ImageRef {
    pub mime_type: String,
    /// Decoded size in bytes (estimated from the base64 length).
    pub bytes: usize,
}

/// One message of a session, whatever the store.
#[derive(Clone, Debug, PartialEq)]
pub struct Message {
    /// Position in the stored history; `None` for messages that replay inserts.
    pub index: Option<usize>,
    pub role: Role,
    /// Display text with the store's wrappers stripped (`<user_input>`, `<tool_result>`).
    pub text: String,
    /// Thinking / reasoning blocks, shown collapsed.
    pub thinking: Vec<String>,
    pub images: Vec<ImageRef>,
    pub tool_calls: Vec<ToolCall>,
    /// For tool results: the call this answers.
    pub tool_call_id: Option<String>,
    /// For tool results: the tool's name when stored.
    pub tool_name: Option<String>,
    pub is_error: bool,
    pub timestamp: Option<DateTime<Utc>>,
    /// Inserted by replay (compaction summary, repair result, reopen notice).
    pub is_virtual: bool,
    /// Model that produced an assistant message, when stored.
    pub model: Option<String>,
    /// A reader's remark shown with the message ("unknown role", "unanswered tool calls").
    pub note: Option<String>,
    /// The context size the store recorded for this assistant reply (prompt, cache and
    /// output tokens), where the format records usage (Loop, Claude Code).
    pub usage_tokens: Option<u64>,
}

impl Message {
    pub fn new(role: Role, text: impl Into<String>) -> Self {
        Message {
            index: None,
            role,
            text: text.into(),
            thinking: Vec::new(),
            images: Vec::new(),
            tool_calls: Vec::new(),
            tool_call_id: None,
            tool_name: None,
            is_error: false,
            timestamp: None,
            is_virtual: false,
            model: None,
            note: None,
            usage_tokens: None,
        }
    }

    /// A message that replay inserts (never stored).
    pub fn inserted(role: Role, text: impl Into<String>) -> Self {
        let mut m = Message::new(role, text);
        m.is_virtual = true;
        m
    }

    /// The `show --json` object of the CLI contract.
    pub fn to_json(&self) -> Value {
        let calls: Vec<Value> = self
            .tool_calls
            .iter()
            .map(|c| json!({"id": c.id, "name": c.name, "arguments": c.arguments}))
            .collect();
        let mut v = json!({
            "index": self.index,
            "role": self.role.as_str(),
            "text": self.text,
            "tool_calls": calls,
            "tool_call_id": self.tool_call_id,
            "is_error": self.is_error,
            "timestamp": self.timestamp.map(rfc3339),
            "virtual": self.is_virtual,
        });
        let obj = v.as_object_mut().expect("object literal");
        if !self.thinking.is_empty() {
            obj.insert("thinking".into(), json!(self.thinking));
        }
        if !self.images.is_empty() {
            let imgs: Vec<Value> = self
                .images
                .iter()
                .map(|i| json!({"mime_type": i.mime_type, "bytes": i.bytes}))
                .collect();
            obj.insert("images".into(), Value::Array(imgs));
        }
        if let Some(n) = &self.tool_name {
            obj.insert("tool_name".into(), json!(n));
        }
        if let Some(m) = &self.model {
            obj.insert("model".into(), json!(m));
        }
        if let Some(n) = &self.note {
            obj.insert("note".into(), json!(n));
        }
        v
    }

    /// loom's token estimate: bytes of content, thinking and JSON tool calls, over four.
    pub fn estimated_tokens(&self) -> u64 {
        let mut bytes = self.text.len() + self.thinking.iter().map(String::len).sum::<usize>();
        for c in &self.tool_calls {
            bytes += c.name.len() + c.arguments.to_string().len();
        }
        (bytes / 4) as u64
    }
}

/// One entry of the stored history in display order.
#[derive(Clone, Debug, PartialEq)]
pub enum Entry {
    Message(Box<Message>),
    /// "Context compacted here", with the summary the agent wrote.
    Compaction {
        summary: String,
        timestamp: Option<DateTime<Utc>>,
    },
    /// A logged system prompt (loom) shown collapsed.
    SystemPrompt {
        text: String,
        timestamp: Option<DateTime<Utc>>,
    },
    /// Something the reader wants the user to know at this point ("3 unreadable lines skipped").
    Notice(String),
    /// A child session that ran inside this one (a Claude Code subagent, under the tool call
    /// that spawned it), with its own transcript to read in place.
    Nested(Box<Nested>),
}

/// A child session shown inside its parent's transcript.
#[derive(Clone, Debug, PartialEq)]
pub struct Nested {
    /// Names the child among its siblings (a subagent's agent id); the pane's fold key.
    pub key: String,
    /// One line for the parent's transcript: what it was asked and how long it ran.
    pub note: String,
    /// The child's own transcript. Its messages carry no stored index: positions, rounds
    /// and "fork from here" count the parent's messages only.
    pub entries: Vec<Entry>,
}

/// The full stored history of a session (or its last rounds when paged).
#[derive(Clone, Debug)]
pub struct Transcript {
    pub summary: SessionSummary,
    pub entries: Vec<Entry>,
    /// Rounds (user message + everything up to the next) in the whole session.
    pub total_rounds: usize,
    /// Index of the first round held in `entries` (0 when the whole history is loaded).
    pub first_round: usize,
    /// Problems found while reading that do not stop display.
    pub warnings: Vec<String>,
    /// The open todos a store records beside the messages (agent-harness `state.todos`),
    /// for the "left off" card; `None` where the store keeps none.
    pub todos: Option<Vec<super::left_off::Todo>>,
}

impl Transcript {
    pub fn messages(&self) -> impl Iterator<Item = &Message> {
        self.entries.iter().filter_map(|e| match e {
            Entry::Message(m) => Some(m.as_ref()),
            _ => None,
        })
    }

    /// The `show --json` object.
    pub fn to_json(&self) -> Value {
        json!({
            "session": self.summary.to_json(),
            "messages": self.messages().map(Message::to_json).collect::<Vec<_>>(),
        })
    }
}

/// The replayed context window: what the agent would send to the model on resume.
#[derive(Clone, Debug)]
pub struct Window {
    pub summary: SessionSummary,
    pub messages: Vec<Message>,
    /// A note on how the window was obtained (how its system prompt was found, what resume
    /// restores besides the messages).
    pub system_note: Option<String>,
    pub warnings: Vec<String>,
    /// Messages before `messages` that were not read: the browser pages a long window from
    /// its end (issue 11); 0 for a whole window.
    pub omitted: usize,
    /// The token estimate of the omitted messages (the window's estimate counts them).
    pub omitted_tokens: u64,
}

impl Window {
    pub fn estimated_tokens(&self) -> u64 {
        self.omitted_tokens
            + self
                .messages
                .iter()
                .map(Message::estimated_tokens)
                .sum::<u64>()
    }

    /// Messages in the whole window, read or not.
    pub fn len(&self) -> usize {
        self.omitted + self.messages.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn to_json(&self) -> Value {
        json!({
            "session": self.summary.to_json(),
            "messages": self.messages.iter().map(Message::to_json).collect::<Vec<_>>(),
            "estimated_tokens": self.estimated_tokens(),
        })
    }
}

/// Split messages into rounds: each round starts at a user message. Messages before the first
/// user message belong to round 0 together with it. Returns the start position of every round.
pub fn round_starts(messages: &[&Message]) -> Vec<usize> {
    let mut starts: Vec<usize> = messages
        .iter()
        .enumerate()
        .filter(|(_, m)| m.role == Role::User)
        .map(|(i, _)| i)
        .collect();
    if let Some(first) = starts.first_mut() {
        *first = 0;
    }
    starts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_message_has_contract_keys() {
        let mut m = Message::new(Role::Tool, "done");
        m.index = Some(3);
        m.tool_call_id = Some("c1".into());
        let v = m.to_json();
        for k in [
            "index",
            "role",
            "text",
            "tool_calls",
            "tool_call_id",
            "is_error",
            "timestamp",
            "virtual",
        ] {
            assert!(v.get(k).is_some(), "missing {k}");
        }
        assert_eq!(v["role"], "tool");
        assert_eq!(v["virtual"], false);
    }

    #[test]
    fn rounds_start_at_user_messages() {
        let sys = Message::new(Role::System, "s");
        let u = Message::new(Role::User, "u");
        let a = Message::new(Role::Assistant, "a");
        let msgs = vec![&sys, &u, &a, &u, &a];
        assert_eq!(round_starts(&msgs), vec![0, 3]);
    }

    #[test]
    fn token_estimate_is_bytes_over_four() {
        let m = Message::new(Role::User, "12345678");
        assert_eq!(m.estimated_tokens(), 2);
    }
}
