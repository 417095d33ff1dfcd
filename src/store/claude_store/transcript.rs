//! The transcript of the main view (claude-code.md section 4): records on the active chain
//! turned into messages, assistant chunks with one `message.id` merged, tool calls paired
//! with their results, persisted large outputs read from the session's own `tool-results/`,
//! subagents noted under the call that spawned them, noise hidden.

use std::collections::HashMap;
use std::path::Path;

use serde_json::Value;

use super::chain::Chain;
use super::read::{self, Rec};
use super::record::{self as r, UserKind};
use crate::model::{Entry, ImageRef, Message, Nested, Role, ToolCall};
use crate::store::entries::cut;

/// How much of one tool output is shown inline (claude-code.md 6.2: "first 64 KiB").
pub const SHOW_BYTES: usize = 64 * 1024;

/// A subagent transcript of the session, as the parent's transcript mentions it.
#[derive(Clone, Debug)]
pub struct Subagent {
    pub agent_id: String,
    pub path: std::path::PathBuf,
    pub first_prompt: String,
    pub messages: u64,
    /// Its own transcript, read only when the parent's is shown (never for the listing).
    pub entries: Vec<Entry>,
}

/// What converting needs besides the records.
pub struct Ctx<'a> {
    /// `<project-dir>/<session-id>/`: the only place persisted output is read from.
    pub session_dir: &'a Path,
    pub subagents: &'a [Subagent],
}

/// The entries of the main view, in order, from records already read. Message `index` counts
/// from `first_index`.
pub fn entries(recs: &[Rec], chain: &Chain, cx: &Ctx<'_>, first_index: usize) -> Vec<Entry> {
    let mut out = Vec::new();
    let spawned = progress_links(recs);
    let src = super::stream::InMemory(recs);
    // Records in memory cannot fail to read.
    let _ = super::stream::emit(&src, chain, cx, first_index, &spawned, &mut |e| {
        out.push(e);
        Ok(())
    });
    out
}

/// One assistant message from its chunks (cumulative snapshots keep the longer block).
pub(super) fn assistant(chunks: &[&Value]) -> Message {
    let mut blocks: Vec<Value> = Vec::new();
    for c in chunks {
        let new = r::blocks(c);
        let cumulative = !blocks.is_empty() && new.first().is_some_and(|b| extends(&blocks[0], b));
        if cumulative {
            for (j, b) in new.iter().enumerate() {
                if j < blocks.len() {
                    if extends(&blocks[j], b) {
                        blocks[j] = b.clone();
                    }
                } else {
                    blocks.push(b.clone());
                }
            }
        } else {
            blocks.extend(new.iter().cloned());
        }
    }
    let last = chunks.last().expect("at least one chunk");
    let mut m = Message::new(Role::Assistant, "");
    let mut texts = Vec::new();
    for b in &blocks {
        match r::s(b, "type") {
            Some("text") => texts.push(r::s(b, "text").unwrap_or("").to_string()),
            Some("thinking") => {
                let t = r::s(b, "thinking").unwrap_or("");
                m.thinking.push(if t.is_empty() {
                    "(reasoning, signature only)".into()
                } else {
                    t.to_string()
                });
            }
            Some("redacted_thinking") => m.thinking.push("(redacted reasoning)".into()),
            Some("tool_use" | "server_tool_use") => m.tool_calls.push(ToolCall {
                id: r::s(b, "id").unwrap_or("").to_string(),
                name: r::s(b, "name").unwrap_or("").to_string(),
                arguments: b.get("input").cloned().unwrap_or(Value::Null),
            }),
            Some("image") => m.images.push(image(b)),
            _ => {}
        }
    }
    m.text = texts.join("\n");
    m.timestamp = r::timestamp(chunks[0]);
    m.model = r::model(last)
        .filter(|m| *m != "<synthetic>")
        .map(str::to_string);
    m.usage_tokens = last.get("message").and_then(|x| x.get("usage")).map(|u| {
        [
            "input_tokens",
            "cache_creation_input_tokens",
            "cache_read_input_tokens",
            "output_tokens",
        ]
        .iter()
        .filter_map(|k| u.get(*k).and_then(Value::as_u64))
        .sum()
    });
    if chunks.iter().any(|c| r::is_api_error(c)) {
        m.is_error = true;
        m.note = Some("API error".into());
    }
    m
}

/// `b` repeats `a` and may extend it (same type, its text starts with `a`'s).
fn extends(a: &Value, b: &Value) -> bool {
    let ty = r::s(a, "type");
    if ty != r::s(b, "type") {
        return false;
    }
    let key = match ty {
        Some("text") => "text",
        Some("thinking") => "thinking",
        _ => return a == b,
    };
    let (x, y) = (r::s(a, key).unwrap_or(""), r::s(b, key).unwrap_or(""));
    y.starts_with(x)
}

fn image(b: &Value) -> ImageRef {
    let src = b.get("source");
    let data_len = src.and_then(super::slim::data_len).unwrap_or(0);
    ImageRef {
        mime_type: src
            .and_then(|s| r::s(s, "media_type"))
            .unwrap_or("image")
            .to_string(),
        bytes: data_len / 4 * 3,
    }
}

pub(super) fn user(
    v: &Value,
    cx: &Ctx<'_>,
    spawned: &HashMap<String, String>,
    out: &mut Vec<Entry>,
) {
    let ts = r::timestamp(v);
    let push = |out: &mut Vec<Entry>, role: Role, text: String| {
        let mut m = Message::new(role, text);
        m.timestamp = ts;
        out.push(Entry::Message(Box::new(m)));
    };
    match r::classify_user(v) {
        UserKind::CompactSummary => out.push(Entry::Compaction {
            summary: r::user_text(v),
            timestamp: ts,
        }),
        UserKind::Meta | UserKind::Noise => {}
        UserKind::Slash(c) => push(out, Role::User, c),
        UserKind::Prompt(t) => {
            push(out, Role::User, t);
            if let Some(Entry::Message(m)) = out.last_mut() {
                m.images = r::blocks(v)
                    .iter()
                    .filter(|b| r::s(b, "type") == Some("image"))
                    .map(image)
                    .collect();
            }
        }
        UserKind::Shell => push(out, Role::User, r::shell_text(&r::user_text(v))),
        UserKind::CommandOutput => {
            let t = r::user_text(v);
            if !t.contains("<local-command-caveat>") {
                out.push(Entry::Notice(format!("command output: {}", strip_tags(&t))));
            }
        }
        UserKind::Interrupted => out.push(Entry::Notice("interrupted by the user".into())),
        UserKind::ToolResult => {
            for b in r::blocks(v)
                .iter()
                .filter(|b| r::s(b, "type") == Some("tool_result"))
            {
                let call = r::s(b, "tool_use_id").unwrap_or("").to_string();
                // A single tool output can be millions of characters (claude-code#24118):
                // the first 64 KiB is shown, the rest counted.
                let full = tool_text(b);
                let mut m = Message::new(Role::Tool, cut(&full, SHOW_BYTES));
                m.timestamp = ts;
                m.tool_call_id = Some(call.clone());
                m.is_error = b.get("is_error").and_then(Value::as_bool) == Some(true);
                if let Some(Value::Array(cs)) = b.get("content") {
                    m.images = cs
                        .iter()
                        .filter(|c| r::s(c, "type") == Some("image"))
                        .map(image)
                        .collect();
                }
                persisted(&mut m, v, &call, cx.session_dir);
                out.push(Entry::Message(Box::new(m)));
                let agent = v
                    .get("toolUseResult")
                    .and_then(|t| r::s(t, "agentId"))
                    .map(str::to_string)
                    .or_else(|| spawned.get(&call).cloned());
                if let Some(a) = agent.and_then(|a| cx.subagents.iter().find(|s| s.agent_id == a)) {
                    let note = format!(
                        "subagent {}: {} message{}, asked \"{}\"",
                        a.agent_id,
                        a.messages,
                        if a.messages == 1 { "" } else { "s" },
                        crate::text::truncate_chars(
                            &crate::text::collapse_whitespace(&a.first_prompt),
                            80
                        )
                    );
                    out.push(if a.entries.is_empty() {
                        Entry::Notice(note)
                    } else {
                        Entry::Nested(Box::new(Nested {
                            key: a.agent_id.clone(),
                            note,
                            entries: a.entries.clone(),
                        }))
                    });
                }
            }
        }
    }
}

fn strip_tags(t: &str) -> String {
    let mut out = String::new();
    let mut in_tag = false;
    for c in t.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => in_tag = false,
            c if !in_tag => out.push(c),
            _ => {}
        }
    }
    out.trim().to_string()
}

/// A tool_result's text: a string content, or its text blocks joined.
fn tool_text(b: &Value) -> String {
    match b.get("content") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(cs)) => cs
            .iter()
            .filter_map(|c| r::s(c, "text"))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// Replace a `<persisted-output>` preview with the full output from
/// `<session_dir>/tool-results/<tool_use_id>.txt`, when that file is a regular file inside
/// that directory (the recorded path is never followed elsewhere), at most 16 MiB read and
/// `SHOW_BYTES` shown.
fn persisted(m: &mut Message, v: &Value, call: &str, session_dir: &Path) {
    let recorded = v
        .get("toolUseResult")
        .and_then(|t| r::s(t, "persistedOutputPath"));
    if !m.text.trim_start().starts_with("<persisted-output>") && recorded.is_none() {
        return;
    }
    if !super::discover::valid_id(call) {
        return;
    }
    let file = session_dir.join("tool-results").join(format!("{call}.txt"));
    match read::read_small(&file) {
        Ok(bytes) => {
            let full = String::from_utf8_lossy(&bytes);
            m.text = cut(&full, SHOW_BYTES);
            m.note = Some(format!(
                "full output from tool-results/{call}.txt ({} bytes)",
                bytes.len()
            ));
        }
        Err(_) => m.note = Some("full output file is missing; showing Claude's preview".into()),
    }
}

/// `parentToolUseID` -> `data.agentId` from `progress` records (the second way a subagent is
/// linked to its call).
pub(super) fn progress_links(recs: &[Rec]) -> HashMap<String, String> {
    let mut m = HashMap::new();
    for rec in recs {
        let v = &rec.v;
        if r::kind(v) == "progress"
            && let Some(a) = v.get("data").and_then(|d| r::s(d, "agentId"))
            && let Some(t) = r::s(v, "parentToolUseID")
        {
            m.entry(t.to_string()).or_insert_with(|| a.to_string());
        }
    }
    m
}

pub(super) fn system(v: &Value, out: &mut Vec<Entry>) {
    match r::s(v, "subtype") {
        Some("compact_boundary") => {
            let meta = v.get("compactMetadata");
            let trigger = meta.and_then(|m| r::s(m, "trigger")).unwrap_or("auto");
            let pre = meta
                .and_then(|m| m.get("preTokens"))
                .and_then(Value::as_u64);
            out.push(Entry::Notice(match pre {
                Some(n) => format!("context compacted ({trigger}, {n} tokens before)"),
                None => format!("context compacted ({trigger})"),
            }));
        }
        Some("api_error") => out.push(Entry::Notice(format!(
            "API error: {}",
            r::s(v, "content").unwrap_or("")
        ))),
        Some("local_command") => out.push(Entry::Notice(format!(
            "command output: {}",
            strip_tags(r::s(v, "content").unwrap_or(""))
        ))),
        _ => {}
    }
}
