//! Context-window replay (section 6): normalisation with tool repair, runtime context
//! placement, the last compaction checkpoint, and the system prompt reconstructed from its
//! checkpoints. Stored messages are never changed; everything here is in memory.

use std::collections::HashSet;

use serde_json::{Value, json};

use super::Loc;
use super::convert::to_message;
use super::header::safe_uint;
use super::history::read_full;
use super::listing::summary_from_head;
use super::validate::{self, is_failed_assistant, role, tool_calls};
use crate::error::Result;
use crate::model::{Message, Role, Window};

/// One projected message: its value, the stored message it comes from, and whether it is
/// that stored message itself (or an insert attributed to it).
struct Projected {
    value: Value,
    source: usize,
    stored: bool,
    note: Option<&'static str>,
}

/// The virtual tool result pi-ai inserts for an unanswered call.
fn repair(id: &str, name: &str, source: usize) -> Projected {
    Projected {
        value: json!({"role": "toolResult", "toolCallId": id, "toolName": name,
            "content": [{"type": "text", "text": "No result provided"}], "isError": true}),
        source,
        stored: false,
        note: Some("tool-repair"),
    }
}

/// Step 2: drop failed assistants, insert repairs for calls left unanswered when a user
/// message or a new assistant message arrives (pi-ai `transformMessages`).
fn normalize(msgs: &[Value], warnings: &mut Vec<String>) -> Vec<Projected> {
    let mut out = Vec::with_capacity(msgs.len());
    let mut pending: Vec<(String, String, usize)> = Vec::new();
    let mut answered: HashSet<String> = HashSet::new();
    let flush = |out: &mut Vec<Projected>,
                 pending: &mut Vec<(String, String, usize)>,
                 answered: &mut HashSet<String>| {
        for (id, name, src) in pending.drain(..) {
            if !answered.contains(&id) {
                out.push(repair(&id, &name, src));
            }
        }
        answered.clear();
    };
    for (i, m) in msgs.iter().enumerate() {
        match role(m) {
            "assistant" => {
                flush(&mut out, &mut pending, &mut answered);
                if is_failed_assistant(m) {
                    continue;
                }
                pending = tool_calls(m)
                    .into_iter()
                    .map(|(id, name)| (id, name, i))
                    .collect();
            }
            "toolResult" => {
                let id = m.get("toolCallId").and_then(Value::as_str).unwrap_or("");
                answered.insert(id.to_string());
            }
            "user" => flush(&mut out, &mut pending, &mut answered),
            _ => {
                warnings.push(format!("message {i}: unknown role left out of the window"));
                continue;
            }
        }
        out.push(Projected {
            value: m.clone(),
            source: i,
            stored: true,
            note: None,
        });
    }
    out
}

/// Step 3: runtime context snapshots, keyed by user ordinal.
fn place_runtime_contexts(out: Vec<Projected>, rcs: &[&Value]) -> Vec<Projected> {
    let mut result = Vec::with_capacity(out.len() + rcs.len());
    let mut ordinal = 0u64;
    for mut p in out {
        let is_user = p.stored && role(&p.value) == "user";
        let rc = if is_user {
            rcs.iter()
                .find(|r| safe_uint(r.get("userTurn")) == Some(ordinal))
        } else {
            None
        };
        if is_user {
            ordinal += 1;
        }
        let Some(rc) = rc else {
            result.push(p);
            continue;
        };
        let content = rc.get("content").and_then(Value::as_str).unwrap_or("");
        if rc.get("placement").and_then(Value::as_str) == Some("user") {
            match p.value.get_mut("content") {
                Some(Value::String(s)) => *s = format!("{content}\n\n{s}"),
                Some(Value::Array(a)) => a.insert(0, json!({"type": "text", "text": content})),
                _ => {}
            }
            p.note = Some("runtime context prepended");
            result.push(p);
        } else {
            let source = p.source;
            result.push(p);
            result.push(Projected {
                value: json!({"role": "user", "content": content,
                    "timestamp": rc.get("timestamp").cloned().unwrap_or(Value::Null)}),
                source,
                stored: false,
                note: Some("runtime context"),
            });
        }
    }
    result
}

/// Step 5: fold checkpoints; `preamble` first, then names in order of first appearance.
pub(crate) fn system_prompt(checkpoints: &[&Value]) -> Option<String> {
    let mut order: Vec<String> = Vec::new();
    let mut values: std::collections::HashMap<String, String> = Default::default();
    for c in checkpoints {
        let Some(sections) = c.get("sections").and_then(Value::as_object) else {
            continue;
        };
        for (name, v) in sections {
            if !order.contains(name) {
                order.push(name.clone());
            }
            match v.as_str() {
                Some(s) => values.insert(name.clone(), s.to_string()),
                None => values.remove(name),
            };
        }
    }
    if let Some(i) = order.iter().position(|n| n == "preamble") {
        let p = order.remove(i);
        order.insert(0, p);
    }
    let parts: Vec<&str> = order
        .iter()
        .filter_map(|n| values.get(n).map(String::as_str))
        .collect();
    (!parts.is_empty()).then(|| parts.join("\n\n"))
}

/// The context window the next model request would carry.
pub(crate) fn window(loc: &Loc) -> Result<Window> {
    let h = read_full(loc)?;
    let mut warnings = h.warnings.clone();
    let (hd, check, msgs) = (&h.head.header, &h.head.check, &h.messages);
    let n = msgs.len() as u64;
    let users = msgs.iter().filter(|m| role(m) == "user").count() as u64;

    let projected = normalize(msgs, &mut warnings);
    let rcs = validate::runtime_contexts(hd, check.runtime_ok, users, &mut warnings);
    let mut projected = place_runtime_contexts(projected, &rcs);

    let is_user = |i: usize| msgs.get(i).map(|m| role(m) == "user");
    let comps = validate::compactions(hd, check.compactions_ok, n, is_user, &mut warnings);
    let mut messages = Vec::new();
    if let Some(c) = comps.last() {
        let first = safe_uint(c.get("firstKeptMessageIndex")).unwrap_or(0) as usize;
        projected.retain(|p| p.source >= first);
        let summary = c.get("summary").and_then(Value::as_str).unwrap_or("");
        let value = json!({"role": "user", "content": format!(
            "The conversation history before this point was compacted into the following summary:\n\n<summary>\n{summary}\n</summary>"),
            "timestamp": c.get("timestamp").cloned().unwrap_or(Value::Null)});
        let mut m = to_message(None, &value);
        m.note = Some("compaction summary".into());
        messages.push(m);
    }
    messages.extend(projected.into_iter().map(|p| {
        let mut m = to_message(p.stored.then_some(p.source), &p.value);
        if let Some(note) = p.note {
            m.note = Some(note.into());
        }
        m
    }));

    let cps = validate::checkpoints(hd, check.checkpoints_ok, n, &mut warnings);
    let mut system_note = None;
    if let Some(text) = system_prompt(&cps) {
        messages.insert(0, Message::inserted(Role::System, text));
        system_note = Some(
            "system prompt reconstructed from the session's checkpoints (Loop renders it live)"
                .to_string(),
        );
    }
    Ok(Window {
        summary: summary_from_head(loc, &h.head),
        messages,
        system_note,
        warnings,
    })
}
