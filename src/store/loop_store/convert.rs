//! pi-ai messages (section 3) to the format-neutral `Message`: text, thinking, images as
//! placeholders, tool calls with ids, tool results with their call id, error notes.

use serde_json::Value;

use crate::model::{ImageRef, Message, Role, ToolCall, from_millis};

/// Decoded size of base64 data: three bytes per four characters, minus padding.
fn base64_len(data: &str) -> usize {
    let pad = data.bytes().rev().take_while(|&b| b == b'=').count().min(2);
    (data.len() / 4 * 3 + [0, 0, 1, 2][data.len() % 4]).saturating_sub(pad)
}

fn str_of<'a>(v: &'a Value, k: &str) -> Option<&'a str> {
    v.get(k).and_then(Value::as_str)
}

/// MCP display name (DECIDED): a string, or an object with string `server` and `tool`.
fn loop_display_name(m: &Value) -> Option<String> {
    let d = m.get("details")?.get("loopDisplayName")?;
    if let Some(s) = d.as_str() {
        return Some(s.to_string());
    }
    Some(format!("{}/{}", str_of(d, "server")?, str_of(d, "tool")?))
}

/// Convert one stored message (`index` = stored position, `None` for replay inserts).
pub(crate) fn to_message(index: Option<usize>, m: &Value) -> Message {
    let role_str = str_of(m, "role").unwrap_or("");
    let mut msg = Message::new(Role::parse(role_str), "");
    msg.index = index;
    msg.is_virtual = index.is_none();
    msg.timestamp = m
        .get("timestamp")
        .and_then(Value::as_i64)
        .and_then(from_millis);
    let mut texts: Vec<String> = Vec::new();
    match m.get("content") {
        Some(Value::String(s)) => texts.push(s.clone()),
        Some(Value::Array(blocks)) => {
            for b in blocks {
                match str_of(b, "type") {
                    Some("text") => texts.extend(str_of(b, "text").map(String::from)),
                    Some("thinking") => {
                        let redacted = b.get("redacted") == Some(&Value::Bool(true));
                        let t = str_of(b, "thinking").unwrap_or("");
                        msg.thinking.push(if redacted && t.is_empty() {
                            "[redacted thinking]".into()
                        } else {
                            t.to_string()
                        });
                    }
                    Some("image") => msg.images.push(ImageRef {
                        mime_type: str_of(b, "mimeType").unwrap_or("").to_string(),
                        bytes: base64_len(str_of(b, "data").unwrap_or("")),
                    }),
                    Some("toolCall") => msg.tool_calls.push(ToolCall {
                        id: str_of(b, "id").unwrap_or("").to_string(),
                        name: str_of(b, "name").unwrap_or("").to_string(),
                        arguments: b.get("arguments").cloned().unwrap_or(Value::Null),
                    }),
                    _ => {}
                }
            }
        }
        _ => {}
    }
    msg.text = texts.join("\n");
    match role_str {
        "assistant" => {
            if let (Some(p), Some(id)) = (str_of(m, "provider"), str_of(m, "model")) {
                msg.model = Some(format!("{p}/{id}"));
            }
            msg.usage_tokens = m
                .get("usage")
                .and_then(|u| u.get("totalTokens"))
                .and_then(Value::as_u64);
            match str_of(m, "stopReason") {
                Some("error") => {
                    msg.is_error = true;
                    msg.note = Some(match str_of(m, "errorMessage") {
                        Some(e) => format!("error: {e}"),
                        None => "error".into(),
                    });
                }
                Some("aborted") => msg.note = Some("aborted".into()),
                _ => {}
            }
        }
        "toolResult" => {
            msg.tool_call_id = str_of(m, "toolCallId").map(String::from);
            msg.tool_name = str_of(m, "toolName").map(String::from);
            msg.is_error = m.get("isError") == Some(&Value::Bool(true));
            msg.note = loop_display_name(m).map(|n| format!("MCP tool {n}"));
        }
        "user" => {}
        _ => msg.note = Some("unknown role".into()),
    }
    msg
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_sizes() {
        assert_eq!(base64_len("iVBORw0KGgo="), 8);
        assert_eq!(base64_len("QQ=="), 1);
        assert_eq!(base64_len(""), 0);
    }

    #[test]
    fn display_name_rule() {
        let s = serde_json::json!({"details": {"loopDisplayName": "gh: search"}});
        assert_eq!(loop_display_name(&s).as_deref(), Some("gh: search"));
        let o = serde_json::json!({"details": {"loopDisplayName": {"server": "gh", "tool": "q"}}});
        assert_eq!(loop_display_name(&o).as_deref(), Some("gh/q"));
        let bad = serde_json::json!({"details": {"loopDisplayName": {"server": 1}}});
        assert_eq!(loop_display_name(&bad), None);
    }
}
