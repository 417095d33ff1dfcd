//! Validation on open that needs the messages (sections 3 and 4): message shapes, the strict
//! tool-pairing rule, and header sub-objects checked against the history. Problems become
//! warnings; bad sub-objects are dropped for display instead of failing the open.

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::header::safe_uint;

fn is_str(v: Option<&Value>) -> bool {
    matches!(v, Some(Value::String(_)))
}

fn block_ok(b: &Value, allowed: &[&str]) -> bool {
    let t = b.get("type").and_then(Value::as_str).unwrap_or("");
    allowed.contains(&t)
        && match t {
            "text" => is_str(b.get("text")),
            "image" => is_str(b.get("data")) && is_str(b.get("mimeType")),
            "thinking" => is_str(b.get("thinking")),
            "toolCall" => {
                is_str(b.get("id"))
                    && is_str(b.get("name"))
                    && b.get("arguments").is_some_and(Value::is_object)
            }
            _ => false,
        }
}

fn blocks_ok(c: Option<&Value>, allowed: &[&str]) -> bool {
    c.and_then(Value::as_array)
        .is_some_and(|a| a.iter().all(|b| block_ok(b, allowed)))
}

/// Whether one message has a supported pi-ai shape (section 3).
pub(crate) fn message_ok(m: &Value) -> bool {
    let ts = m.get("timestamp").is_some_and(Value::is_number);
    match m.get("role").and_then(Value::as_str) {
        Some("user") => {
            ts && (is_str(m.get("content")) || blocks_ok(m.get("content"), &["text", "image"]))
        }
        Some("assistant") => {
            let stop = m.get("stopReason").and_then(Value::as_str);
            ts && blocks_ok(m.get("content"), &["text", "thinking", "toolCall"])
                && stop
                    .is_some_and(|s| ["stop", "length", "toolUse", "error", "aborted"].contains(&s))
                && is_str(m.get("api"))
                && is_str(m.get("provider"))
                && is_str(m.get("model"))
        }
        Some("toolResult") => {
            ts && is_str(m.get("toolCallId"))
                && is_str(m.get("toolName"))
                && blocks_ok(m.get("content"), &["text", "image"])
                && m.get("isError").is_some_and(Value::is_boolean)
        }
        _ => false,
    }
}

pub(crate) fn role(m: &Value) -> &str {
    m.get("role").and_then(Value::as_str).unwrap_or("")
}

/// Error and aborted assistants are excluded from pairing and dropped by replay.
pub(crate) fn is_failed_assistant(m: &Value) -> bool {
    role(m) == "assistant"
        && matches!(
            m.get("stopReason").and_then(Value::as_str),
            Some("error" | "aborted")
        )
}

/// Tool call ids and names of an assistant message, in order.
pub(crate) fn tool_calls(m: &Value) -> Vec<(String, String)> {
    m.get("content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|b| b.get("type").and_then(Value::as_str) == Some("toolCall"))
        .map(|b| {
            let s = |k: &str| b.get(k).and_then(Value::as_str).unwrap_or("").to_string();
            (s("id"), s("name"))
        })
        .collect()
}

/// Shape and strict pairing warnings for messages whose global indices start at `first`.
pub(crate) fn check_messages(first: usize, msgs: &[Value]) -> Vec<String> {
    let mut c = Checker::default();
    for (i, m) in msgs.iter().enumerate() {
        c.push(first + i, m);
    }
    c.finish()
}

/// An assistant's index, its `(id, name)` calls, and how often each id was answered.
type Open = (usize, Vec<(String, String)>, HashMap<String, usize>);

/// `check_messages` one message at a time (a history streamed past, issue 11): an
/// assistant's calls are judged when the run of tool results after it ends.
#[derive(Default)]
pub(crate) struct Checker {
    /// The assistant whose results are being counted: its index, calls, and ids seen.
    open: Option<Open>,
    warnings: Vec<(usize, String)>,
}

impl Checker {
    pub fn push(&mut self, i: usize, m: &Value) {
        if role(m) == "toolResult" {
            if let Some((_, _, seen)) = &mut self.open {
                let id = m.get("toolCallId").and_then(Value::as_str).unwrap_or("");
                *seen.entry(id.to_string()).or_default() += 1;
            }
        } else {
            self.close();
        }
        if !message_ok(m) {
            let w = format!("message {i}: unsupported message shape");
            self.warnings.push((i, w));
        }
        if role(m) == "assistant" && !is_failed_assistant(m) {
            let calls = tool_calls(m);
            if !calls.is_empty() {
                self.open = Some((i, calls, HashMap::new()));
            }
        }
    }

    /// The run of tool results after the open assistant ended: it must answer each call
    /// exactly once, nothing else.
    fn close(&mut self) {
        let Some((i, calls, seen)) = self.open.take() else {
            return;
        };
        let exact =
            calls.len() == seen.len() && calls.iter().all(|(id, _)| seen.get(id) == Some(&1));
        if !exact {
            let w = format!("message {i}: tool calls are not answered exactly once");
            self.warnings.push((i, w));
        }
    }

    /// The warnings in message order (as the whole-history check gives them).
    pub fn finish(mut self) -> Vec<String> {
        self.close();
        // Stable: a message's shape warning stays before its calls' warning.
        self.warnings.sort_by_key(|w| w.0);
        self.warnings.into_iter().map(|w| w.1).collect()
    }
}

fn entries<'a>(h: &'a Map<String, Value>, key: &str, ok: bool) -> &'a [Value] {
    if !ok {
        return &[];
    }
    h.get(key)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
}

/// Compactions valid against the history (`n` messages; `is_user(i)` is `None` when message
/// `i` was not read). Invalid → none kept, with a warning.
pub(crate) fn compactions<'a>(
    h: &'a Map<String, Value>,
    shape_ok: bool,
    n: u64,
    is_user: impl Fn(usize) -> Option<bool>,
    warnings: &mut Vec<String>,
) -> Vec<&'a Value> {
    let all = entries(h, "compactions", shape_ok);
    let bad = all.iter().any(|c| {
        let first = safe_uint(c.get("firstKeptMessageIndex")).unwrap_or(0);
        safe_uint(c.get("historyMessageCount")).unwrap_or(u64::MAX) > n
            || is_user(first as usize) == Some(false)
    });
    if bad {
        warnings.push("compactions do not match the history; ignored".into());
        return Vec::new();
    }
    all.iter().collect()
}

/// Runtime contexts valid against the number of user messages.
pub(crate) fn runtime_contexts<'a>(
    h: &'a Map<String, Value>,
    shape_ok: bool,
    users: u64,
    warnings: &mut Vec<String>,
) -> Vec<&'a Value> {
    let all = entries(h, "runtimeContexts", shape_ok);
    if all
        .iter()
        .any(|r| safe_uint(r.get("userTurn")).unwrap_or(u64::MAX) >= users)
    {
        warnings.push("runtime contexts do not match the history; ignored".into());
        return Vec::new();
    }
    all.iter().collect()
}

/// System prompt checkpoints valid against the history length.
pub(crate) fn checkpoints<'a>(
    h: &'a Map<String, Value>,
    shape_ok: bool,
    n: u64,
    warnings: &mut Vec<String>,
) -> Vec<&'a Value> {
    let all = entries(h, "systemPromptCheckpoints", shape_ok);
    if all
        .iter()
        .any(|c| safe_uint(c.get("messageCount")).unwrap_or(u64::MAX) > n)
    {
        warnings.push("system prompt checkpoints do not match the history; ignored".into());
        return Vec::new();
    }
    all.iter().collect()
}

/// Prompt timings (4.4, DECIDED rule): count the entries that would be ignored.
pub(crate) fn prompt_timing_warnings(h: &Map<String, Value>, msgs: &[Value]) -> Vec<String> {
    let is_user = |i: usize| msgs.get(i).is_some_and(|m| role(m) == "user");
    prompt_timings_checked(h, msgs.len() as u64, is_user)
}

/// `prompt_timing_warnings` for a history of `n` messages known only by their roles.
pub(crate) fn prompt_timings_checked(
    h: &Map<String, Value>,
    n: u64,
    is_user: impl Fn(usize) -> bool,
) -> Vec<String> {
    let Some(v) = h.get("promptTimings") else {
        return Vec::new();
    };
    let Some(all) = v.as_array() else {
        return vec!["promptTimings is not an array; ignored".into()];
    };
    let mut bad = 0;
    let (mut prev_user, mut prev_end): (Option<u64>, u64) = (None, 0);
    let mut ids = std::collections::HashSet::new();
    for t in all {
        let user = safe_uint(t.get("userMessageIndex"));
        let (s, f) = (
            safe_uint(t.get("startedAt")),
            safe_uint(t.get("finishedAt")),
        );
        let range = (
            t.get("id").and_then(Value::as_str),
            safe_uint(t.get("messageStartIndex")),
            safe_uint(t.get("messageEndIndex")),
        );
        let ok = match (user, s, f) {
            (Some(u), Some(s), Some(f)) if s <= f && prev_user.is_none_or(|p| u >= p) => {
                let points_at_user = is_user(u as usize);
                match range {
                    (None, None, None) => points_at_user && prev_user.is_none_or(|p| u > p),
                    (Some(id), Some(a), Some(b)) => {
                        points_at_user
                            && u <= a
                            && a <= b
                            && b <= n
                            && a >= prev_end
                            && ids.insert(id.to_string())
                            && {
                                prev_end = b;
                                true
                            }
                    }
                    _ => false,
                }
            }
            _ => false,
        };
        if ok {
            prev_user = user;
        } else {
            bad += 1;
        }
    }
    if bad == 0 {
        Vec::new()
    } else {
        vec![format!("{bad} invalid prompt timings ignored")]
    }
}
