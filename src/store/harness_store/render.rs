//! The transcript view (section 4) and the replayed context window with the harness's
//! recovery notices (section 5), built from a parsed record.

use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value};

use super::record::{content_text, role, str_field, unwrap_tool, unwrap_user};
use crate::model::{Entry, Message, Role, ToolCall, parse_time};

/// The notice `recover()` records for every call without a result.
pub const NOTICE: &str = "Execution interrupted; outcome unknown. Inspect state before retrying.";

/// The tool calls of an assistant entry, with arguments parsed when they are valid JSON.
fn tool_calls(entry: &Value) -> Vec<ToolCall> {
    entry
        .get("tool_calls")
        .map(tool_calls_of)
        .unwrap_or_default()
}

/// `tool_calls` of an entry's `tool_calls` value (a pass that reads only that field).
pub fn tool_calls_of(calls: &Value) -> Vec<ToolCall> {
    let Some(calls) = calls.as_array() else {
        return Vec::new();
    };
    calls
        .iter()
        .map(|c| {
            let f = c.get("function");
            let arguments = match f.and_then(|f| f.get("arguments")) {
                Some(Value::String(s)) => {
                    serde_json::from_str(s).unwrap_or_else(|_| Value::String(s.clone()))
                }
                Some(other) => other.clone(),
                None => Value::Null,
            };
            ToolCall {
                id: c
                    .get("id")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string(),
                name: f
                    .and_then(|f| f.get("name"))
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string(),
                arguments,
            }
        })
        .collect()
}

/// One stored entry as a display message. `calls` maps call ids to tool names for pairing.
pub fn message(index: usize, entry: &Value, calls: &HashMap<String, String>) -> Message {
    let Some(r) = role(entry) else {
        // Not an object or no role: keep its position, show it raw.
        let mut m = Message::new(Role::Other("unknown".into()), entry.to_string());
        m.index = Some(index);
        m.note = Some("unknown entry".into());
        return m;
    };
    let role = Role::parse(r);
    let raw = content_text(entry.get("content"));
    let mut m = Message::new(role.clone(), raw.clone());
    m.index = Some(index);
    match role {
        Role::User => m.text = unwrap_user(&raw).to_string(),
        Role::Assistant => {
            m.tool_calls = tool_calls(entry);
            for key in ["reasoning", "reasoning_content"] {
                if let Some(t) = str_field_v(entry, key).filter(|t| !t.is_empty()) {
                    m.thinking.push(t.to_string());
                }
            }
            // A call without content has no text: the harness's own `read_session` prints
            // "[tool call]" above every call, which only repeats the call drawn below it.
        }
        Role::Tool => {
            if let Some((name, body)) = unwrap_tool(&raw) {
                m.tool_name = Some(name.to_string());
                m.text = body.to_string();
            }
            let id = str_field_v(entry, "tool_call_id").map(str::to_string);
            match id.as_ref().and_then(|i| calls.get(i)) {
                Some(name) => {
                    if m.tool_name.is_none() && !name.is_empty() {
                        m.tool_name = Some(name.clone());
                    }
                }
                None => m.note = Some("no matching tool call".into()),
            }
            if m.tool_name.is_none() {
                m.tool_name = str_field_v(entry, "name").map(str::to_string);
            }
            m.tool_call_id = id;
        }
        _ => {}
    }
    m
}

fn str_field_v<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

/// Call id → tool name over a list of stored entries.
fn call_names(entries: &[Value]) -> HashMap<String, String> {
    entries
        .iter()
        .filter(|e| role(e) == Some("assistant"))
        .flat_map(tool_calls)
        .map(|c| (c.id, c.name))
        .collect()
}

/// A compaction entry as a marker: its summary when a string, else the raw JSON.
fn compaction(entry: &Value) -> Entry {
    let summary = match entry.get("summary") {
        Some(Value::String(s)) => s.clone(),
        _ => entry.to_string(),
    };
    let timestamp = entry
        .get("created_at")
        .and_then(Value::as_str)
        .and_then(parse_time);
    Entry::Compaction { summary, timestamp }
}

/// The compaction markers of a history of `len` entries, each with the entry it goes before
/// (`len`: after the last), in display order: where `transcript_length` says (the history's
/// length when it ran), or at the end when that is missing or beyond the history.
pub fn markers(map: &Map<String, Value>, len: usize) -> Vec<(usize, Entry)> {
    let mut markers: Vec<(usize, Entry)> = map
        .get("compactions")
        .and_then(Value::as_array)
        .map(|cs| {
            cs.iter()
                .map(|c| {
                    let at = c
                        .get("transcript_length")
                        .and_then(Value::as_u64)
                        .and_then(|n| usize::try_from(n).ok())
                        .map_or(len, |n| n.min(len));
                    (at, compaction(c))
                })
                .collect()
        })
        .unwrap_or_default();
    markers.sort_by_key(|(at, _)| *at); // stable: same position keeps stored order
    markers
}

/// The transcript (fallback messages) in display order, with a compaction marker placed once
/// `transcript_length` entries have been shown (the history length when it ran), or at the
/// end when that position is missing or beyond the history.
/// The record is consumed: each stored entry is dropped once converted, so the history is
/// never held twice (issue 11).
pub fn entries(mut map: Map<String, Value>) -> Vec<Entry> {
    let key = if map.contains_key("transcript") {
        "transcript"
    } else {
        "messages"
    };
    let hist = match map.remove(key) {
        Some(Value::Array(a)) => a,
        _ => Vec::new(),
    };
    let calls = call_names(&hist);
    let mut markers = markers(&map, hist.len()).into_iter().peekable();
    let mut out = Vec::with_capacity(hist.len());
    for (i, e) in hist.into_iter().enumerate() {
        while let Some((_, m)) = markers.next_if(|(at, _)| *at <= i) {
            out.push(m);
        }
        out.push(Entry::Message(Box::new(message(i, &e, &calls))));
    }
    out.extend(markers.map(|(_, m)| m));
    out
}

/// Keep the last `n` rounds of `entries`. Returns (kept, first_round, total_rounds).
pub fn last_rounds(entries: Vec<Entry>, n: usize) -> (Vec<Entry>, usize, usize) {
    let mut starts: Vec<usize> = entries
        .iter()
        .enumerate()
        .filter(|(_, e)| matches!(e, Entry::Message(m) if m.role == Role::User))
        .map(|(i, _)| i)
        .collect();
    if let Some(first) = starts.first_mut() {
        *first = 0; // anything before the first user message belongs to round 0
    }
    let total = starts.len();
    let first = total.saturating_sub(n);
    if first == 0 {
        return (entries, 0, total);
    }
    // `n == 0` asks for no rounds: nothing is kept.
    let cut = starts.get(first).copied().unwrap_or(entries.len());
    (entries.into_iter().skip(cut).collect(), first, total)
}

/// The working context `messages` plus the virtual recovery notices `recover()` would add:
/// after each assistant's run of tool results, one notice per unanswered call, in call order.
pub fn window_messages(messages: &[Value]) -> Vec<Message> {
    let calls = call_names(messages);
    let mut out = Vec::with_capacity(messages.len());
    let mut walk = WindowWalk::default();
    let mut keep = |m| {
        out.push(m);
        Ok::<(), std::convert::Infallible>(())
    };
    for (i, entry) in messages.iter().enumerate() {
        let _ = walk.push(i, entry, &calls, &mut keep);
    }
    let _ = walk.finish(&mut keep);
    out
}

/// `window_messages` an entry at a time, for a window read as a stream (`passes`): what it
/// holds between entries is the calls of the last assistant entry and which were answered.
#[derive(Default)]
pub struct WindowWalk {
    /// The calls of the assistant entry whose run of tool results is being read, and the
    /// call ids those results answered.
    open: Option<(Vec<ToolCall>, HashSet<String>)>,
}

impl WindowWalk {
    /// Entry `i` of `messages`: its messages (and the notices of the run it ends) to `out`.
    pub fn push<E>(
        &mut self,
        i: usize,
        entry: &Value,
        calls: &HashMap<String, String>,
        out: &mut dyn FnMut(Message) -> Result<(), E>,
    ) -> Result<(), E> {
        if let Some((_, answered)) = self.open.as_mut()
            && role(entry) == Some("tool")
        {
            if let Some(id) = str_field_v(entry, "tool_call_id") {
                answered.insert(id.to_string());
            }
            return out(message(i, entry, calls));
        }
        self.finish(out)?;
        out(message(i, entry, calls))?;
        if role(entry) == Some("assistant") {
            let own = tool_calls(entry);
            if !own.is_empty() {
                self.open = Some((own, HashSet::new()));
            }
        }
        Ok(())
    }

    /// The end of a run of tool results (or of the window): a notice for each unanswered
    /// call. Like recover(): `answered` holds only the stored results, so duplicates repeat.
    pub fn finish<E>(&mut self, out: &mut dyn FnMut(Message) -> Result<(), E>) -> Result<(), E> {
        let Some((own, answered)) = self.open.take() else {
            return Ok(());
        };
        for c in own {
            if c.id.is_empty() || answered.contains(&c.id) {
                continue;
            }
            let mut m = Message::inserted(Role::Tool, NOTICE);
            m.tool_call_id = Some(c.id.clone());
            m.tool_name = Some(c.name.clone()).filter(|n| !n.is_empty());
            m.note = Some("recovery notice the harness adds on resume".into());
            out(m)?;
        }
        Ok(())
    }
}

/// What `--resume` restores besides the messages (section 5), as one note.
pub fn resume_note(map: &Map<String, Value>) -> String {
    let empty = Map::new();
    let state = map
        .get("state")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let num = |k: &str| {
        state
            .get(k)
            .filter(|v| v.is_number())
            .map_or_else(|| "0".to_string(), Value::to_string)
    };
    let todos = state.get("todos").and_then(Value::as_array);
    let open = todos.map_or(0, |t| {
        t.iter()
            .filter(|x| {
                matches!(
                    x.get("status").and_then(Value::as_str),
                    Some("pending") | Some("in_progress")
                )
            })
            .count()
    });
    let pad = str_field(state, "scratchpad").unwrap_or("").chars().count();
    format!(
        "On resume the harness restores state: {} todos ({open} open), scratchpad ({pad} chars), \
         {} tool calls, usage {} tokens in / {} out, cost ${}, {} LLM calls. It does not \
         restore containers, credentials, approvals or rollback snapshots.",
        todos.map_or(0, Vec::len),
        num("tool_calls"),
        num("total_tokens_in"),
        num("total_tokens_out"),
        num("total_cost_usd"),
        num("calls"),
    )
}
