//! Record accessors for Codex rollouts (codex.md section 2): the envelope
//! `{timestamp, type, payload}`, the legacy bare lines (2.7), injected context (2.6) and the
//! prompt text Codex's own picker previews (section 3). Wrong types never fail: a field of
//! the wrong type reads as absent.

use serde_json::Value;

pub fn s<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key)?.as_str()
}

pub fn timestamp(v: &Value) -> Option<chrono::DateTime<chrono::Utc>> {
    s(v, "timestamp").and_then(crate::model::parse_time)
}

/// The record kind (`session_meta`, `response_item`, …); empty when absent.
pub fn kind(v: &Value) -> &str {
    s(v, "type").unwrap_or("")
}

/// `payload`, or `Null` when it is missing or not an object (kept as "other").
pub fn payload(v: &Value) -> &Value {
    static NULL: Value = Value::Null;
    v.get("payload").filter(|p| p.is_object()).unwrap_or(&NULL)
}

/// `payload.type` (the response item or event tag).
pub fn ptype(v: &Value) -> &str {
    s(payload(v), "type").unwrap_or("")
}

/// The text blocks of a `message` item (`input_text` / `output_text` / `text`).
pub fn texts(item: &Value) -> Vec<&str> {
    item.get("content")
        .and_then(Value::as_array)
        .map(|bs| {
            bs.iter()
                .filter(|b| {
                    matches!(
                        s(b, "type"),
                        Some("input_text" | "output_text" | "text" | "reasoning_text")
                    )
                })
                .filter_map(|b| s(b, "text"))
                .collect()
        })
        .unwrap_or_default()
}

/// `input_image` blocks of a message: `(mime type, decoded bytes)` estimated from the data URL.
pub fn images(item: &Value) -> Vec<crate::model::ImageRef> {
    item.get("content")
        .and_then(Value::as_array)
        .map(|bs| {
            bs.iter()
                .filter(|b| s(b, "type") == Some("input_image"))
                .map(|b| image_ref(s(b, "image_url").unwrap_or("")))
                .collect()
        })
        .unwrap_or_default()
}

/// A placeholder for an image URL: never decoded, only measured.
pub fn image_ref(url: &str) -> crate::model::ImageRef {
    let (mime, data) = match url.strip_prefix("data:").and_then(|r| r.split_once(',')) {
        Some((head, data)) => (head.split(';').next().unwrap_or("image"), data),
        None => ("image", ""),
    };
    crate::model::ImageRef {
        mime_type: if mime.is_empty() { "image" } else { mime }.to_string(),
        bytes: data.len() / 4 * 3,
    }
}

/// Opening markers of the context Codex injects as `user` messages (2.6).
const INJECTED: [&str; 11] = [
    "<environment_context>",
    "# AGENTS.md instructions for",
    "<INSTRUCTIONS>",
    "<user_instructions>",
    "<turn_aborted>",
    "<skill>",
    "<subagent_notification>",
    "<goal_context>",
    "<codex_internal_context source=\"goal\"",
    "<recommended_plugins>",
    "<permissions instructions>",
];

/// The closing tag of the envelope `t` starts with, if it is one of the injected kinds.
fn envelope_close(t: &str) -> Option<String> {
    if t.starts_with("# AGENTS.md instructions for") {
        // Codex wraps the file in <INSTRUCTIONS>…</INSTRUCTIONS> after the heading.
        return Some("</INSTRUCTIONS>".into());
    }
    let tag = t.strip_prefix('<')?;
    let end = tag.find(['>', ' '])?;
    Some(format!("</{}>", &tag[..end]))
}

/// Strip complete leading injected envelopes (up to their close tag); what remains is what
/// the user typed, if anything.
pub fn strip_injected(mut t: &str) -> &str {
    loop {
        t = t.trim_start();
        let Some(open) = INJECTED.iter().find(|m| t.starts_with(**m)) else {
            return t.trim_end();
        };
        let Some(close) = envelope_close(open).or_else(|| envelope_close(t)) else {
            return "";
        };
        match t.find(&close) {
            Some(end) => t = &t[end + close.len()..],
            // An unclosed envelope is all context.
            None => return "",
        }
    }
}

/// Whether a `message` response item is injected context: `developer`/`system` role, or a
/// `user` message whose every text block is context only.
pub fn is_injected(item: &Value) -> bool {
    match s(item, "role") {
        Some("developer" | "system") => true,
        Some("user") => {
            let ts = texts(item);
            !ts.is_empty() && ts.iter().all(|t| strip_injected(t).is_empty())
        }
        _ => false,
    }
}

/// The visible text of a user message item: its blocks with injected envelopes removed.
pub fn user_item_text(item: &Value) -> String {
    texts(item)
        .iter()
        .map(|t| strip_injected(t))
        .filter(|t| !t.is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The assistant text of a `message` item (non-empty `output_text` blocks).
pub fn assistant_text(item: &Value) -> Option<String> {
    let t: Vec<&str> = texts(item)
        .into_iter()
        .filter(|t| !t.trim().is_empty())
        .collect();
    (!t.is_empty()).then(|| t.join("\n"))
}

/// Whether `item` is an assistant `message` with text (counted, section 3).
pub fn is_assistant_message(item: &Value) -> bool {
    s(item, "type") == Some("message")
        && s(item, "role") == Some("assistant")
        && assistant_text(item).is_some()
}

const REQUEST_MARK: &str = "## My request for Codex:";

/// The preview of a `user_message` event (section 3 step 4): the text after the request
/// marker when present, trimmed; `[Image]` when empty but images exist.
pub fn user_message_preview(p: &Value) -> Option<String> {
    let msg = s(p, "message").unwrap_or("");
    let msg = match msg.find(REQUEST_MARK) {
        Some(i) => &msg[i + REQUEST_MARK.len()..],
        None => msg,
    };
    let t = msg.trim();
    if !t.is_empty() {
        return Some(t.to_string());
    }
    let has_images = ["images", "local_images"].iter().any(|k| {
        p.get(*k)
            .and_then(Value::as_array)
            .is_some_and(|a| !a.is_empty())
    });
    has_images.then(|| "[Image]".to_string())
}

/// `thread_goal_updated`'s objective (the other preview-bearing event).
pub fn goal_preview(p: &Value) -> Option<String> {
    p.get("goal")
        .and_then(|g| s(g, "objective"))
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(str::to_string)
}

/// A canonical UUID (8-4-4-4-12 hex), compared case-insensitively.
pub fn is_uuid(t: &str) -> bool {
    let b = t.as_bytes();
    b.len() == 36
        && b.iter().enumerate().all(|(i, c)| match i {
            8 | 13 | 18 | 23 => *c == b'-',
            _ => c.is_ascii_hexdigit(),
        })
}

/// Every UUID inside `text` (child thread ids in a `spawn_agent` output).
pub fn uuids_in(text: &str) -> Vec<String> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i + 36 <= b.len() {
        if text.is_char_boundary(i) && text.is_char_boundary(i + 36) && is_uuid(&text[i..i + 36]) {
            out.push(text[i..i + 36].to_ascii_lowercase());
            i += 36;
        } else {
            i += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn user(texts: &[&str]) -> Value {
        let content: Vec<Value> = texts
            .iter()
            .map(|t| json!({"type":"input_text","text":t}))
            .collect();
        json!({"type":"message","role":"user","content":content})
    }

    #[test]
    fn injected_context_is_recognised_and_stripped() {
        assert!(is_injected(&user(&[
            "# AGENTS.md instructions for /p\n\n<INSTRUCTIONS>\nx\n</INSTRUCTIONS>",
            "<environment_context>\n  <cwd>/p</cwd>\n</environment_context>"
        ])));
        assert!(is_injected(
            &json!({"type":"message","role":"developer","content":[]})
        ));
        let mixed = user(&["<environment_context>x</environment_context>\nfix the bug"]);
        assert!(!is_injected(&mixed));
        assert_eq!(user_item_text(&mixed), "fix the bug");
        assert!(!is_injected(&user(&["why does it fail?"])));
    }

    #[test]
    fn previews_follow_codex() {
        let p = json!({"message":"ctx\n## My request for Codex:\n  do it \n","images":[]});
        assert_eq!(user_message_preview(&p).unwrap(), "do it");
        let img = json!({"message":"  ","images":["data:image/png;base64,AAAA"]});
        assert_eq!(user_message_preview(&img).unwrap(), "[Image]");
        assert_eq!(user_message_preview(&json!({"message":""})), None);
        assert_eq!(
            uuids_in("agent 019CEBA0-AE55-7D10-9F2A-4B8E6C1D2A30 spawned"),
            ["019ceba0-ae55-7d10-9f2a-4b8e6c1d2a30"]
        );
        assert_eq!(image_ref("data:image/png;base64,AAAAAAAA").bytes, 6);
    }
}
