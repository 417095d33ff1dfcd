//! Record accessors and the classification of `user` records (claude-code.md 2.2-2.4).
//! Wrong types never fail: a field of the wrong type reads as absent.

use serde_json::Value;

pub fn s<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key)?.as_str()
}

pub fn kind(v: &Value) -> &str {
    s(v, "type").unwrap_or("")
}

pub fn is_true(v: &Value, key: &str) -> bool {
    v.get(key).and_then(Value::as_bool) == Some(true)
}

/// Main records are those with `isSidechain != true`.
pub fn is_main(v: &Value) -> bool {
    !is_true(v, "isSidechain")
}

pub fn uuid(v: &Value) -> Option<&str> {
    s(v, "uuid").filter(|u| !u.is_empty())
}

pub fn parent(v: &Value) -> Option<&str> {
    s(v, "parentUuid").filter(|u| !u.is_empty())
}

pub fn timestamp(v: &Value) -> Option<chrono::DateTime<chrono::Utc>> {
    s(v, "timestamp").and_then(crate::model::parse_time)
}

/// `message.content` as a block array (a string content is not blocks).
pub fn blocks(v: &Value) -> &[Value] {
    v.get("message")
        .and_then(|m| m.get("content"))
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// The record's text: a string `content`, or its `text` blocks joined with `\n`.
pub fn user_text(v: &Value) -> String {
    let Some(c) = v.get("message").and_then(|m| m.get("content")) else {
        return String::new();
    };
    match c {
        Value::String(t) => t.clone(),
        Value::Array(bs) => bs
            .iter()
            .filter(|b| s(b, "type") == Some("text"))
            .filter_map(|b| s(b, "text"))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// What a `user` record is (section 2.4, first matching rule).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum UserKind {
    CompactSummary,
    Meta,
    ToolResult,
    /// `/name args`.
    Slash(String),
    CommandOutput,
    Shell,
    Interrupted,
    Noise,
    /// The displayed prompt text (envelopes stripped).
    Prompt(String),
}

const CONTINUED: &str = "This session is being continued from a previous conversation";

pub fn classify_user(v: &Value) -> UserKind {
    let text = user_text(v);
    let t = text.trim();
    if is_true(v, "isCompactSummary") || t.starts_with(CONTINUED) {
        return UserKind::CompactSummary;
    }
    if is_true(v, "isMeta") {
        return UserKind::Meta;
    }
    if blocks(v)
        .iter()
        .any(|b| s(b, "type") == Some("tool_result"))
    {
        return UserKind::ToolResult;
    }
    if (t.starts_with("<command-name>") || t.starts_with("<command-message>"))
        && let Some(cmd) = slash_command(t)
    {
        return UserKind::Slash(cmd);
    }
    if [
        "<local-command-stdout>",
        "<local-command-stderr>",
        "<local-command-caveat>",
    ]
    .iter()
    .any(|p| t.starts_with(p))
    {
        return UserKind::CommandOutput;
    }
    if ["<bash-input>", "<bash-stdout>", "<bash-stderr>"]
        .iter()
        .any(|p| t.starts_with(p))
    {
        return UserKind::Shell;
    }
    if t.starts_with("[Request interrupted by user") {
        return UserKind::Interrupted;
    }
    if t.starts_with("<task-notification>") || t.starts_with("Stop hook feedback:") {
        return UserKind::Noise;
    }
    let stripped = strip_envelopes(t);
    if stripped.is_empty() {
        // Only reminders / IDE envelopes (or nothing at all).
        return UserKind::Noise;
    }
    UserKind::Prompt(stripped.to_string())
}

const ENVELOPES: [&str; 3] = ["system-reminder", "ide_opened_file", "ide_selection"];

/// Strip leading `<system-reminder>…</system-reminder>` and IDE envelope elements.
pub fn strip_envelopes(mut t: &str) -> &str {
    'outer: loop {
        t = t.trim_start();
        for tag in ENVELOPES {
            let open = format!("<{tag}>");
            let close = format!("</{tag}>");
            if t.starts_with(&open)
                && let Some(end) = t.find(&close)
            {
                t = &t[end + close.len()..];
                continue 'outer;
            }
        }
        return t.trim_end();
    }
}

/// The elements of a slash-command record, when it holds only `<command-name>`,
/// `<command-message>` and `<command-args>`: `/name args`.
fn slash_command(t: &str) -> Option<String> {
    let mut rest = t;
    let (mut name, mut message, mut args) = (None, None, None);
    while !rest.trim().is_empty() {
        rest = rest.trim_start();
        let tag_end = rest.find('>')?;
        let tag = rest.strip_prefix('<')?.get(..tag_end - 1)?;
        let close = format!("</{tag}>");
        let body_end = rest.find(&close)?;
        let body = rest[tag_end + 1..body_end].trim().to_string();
        match tag {
            "command-name" => name = Some(body),
            "command-message" => message = Some(body),
            "command-args" => args = Some(body),
            _ => return None,
        }
        rest = &rest[body_end + close.len()..];
    }
    let name = name.or(message)?;
    let name = if name.starts_with('/') {
        name
    } else {
        format!("/{name}")
    };
    Some(match args.filter(|a| !a.is_empty()) {
        Some(a) => format!("{name} {a}"),
        None => name,
    })
}

/// The displayed text of a user-shell (`!` mode) record: `$ cmd` then its output.
pub fn shell_text(t: &str) -> String {
    let mut out = Vec::new();
    for (tag, prefix) in [
        ("bash-input", "$ "),
        ("bash-stdout", ""),
        ("bash-stderr", ""),
    ] {
        let (open, close) = (format!("<{tag}>"), format!("</{tag}>"));
        if let Some(a) = t.find(&open)
            && let Some(b) = t[a..].find(&close)
        {
            let body = t[a + open.len()..a + b].trim_end();
            if !body.is_empty() {
                out.push(format!("{prefix}{body}"));
            }
        }
    }
    out.join("\n")
}

/// A `queued_command` attachment's prompt (the one attachment that is a user message).
pub fn queued_prompt(v: &Value) -> Option<&str> {
    let a = v.get("attachment")?;
    (s(a, "type") == Some("queued_command"))
        .then(|| s(a, "prompt"))
        .flatten()
        .filter(|p| !p.trim().is_empty())
}

/// An assistant record counts when it is not an API error and has a `text`, `thinking` or
/// `tool_use` block.
pub fn assistant_counts(v: &Value) -> bool {
    !is_true(v, "isApiErrorMessage")
        && blocks(v)
            .iter()
            .any(|b| matches!(s(b, "type"), Some("text" | "thinking" | "tool_use")))
}

/// `message.id`, else the record `uuid` (distinct assistant messages).
pub fn message_id(v: &Value) -> Option<&str> {
    v.get("message")
        .and_then(|m| s(m, "id"))
        .or_else(|| uuid(v))
}

pub fn model(v: &Value) -> Option<&str> {
    v.get("message").and_then(|m| s(m, "model"))
}

pub fn stop_reason(v: &Value) -> Option<&str> {
    v.get("message").and_then(|m| s(m, "stop_reason"))
}

/// API errors and locally generated messages.
pub fn is_api_error(v: &Value) -> bool {
    is_true(v, "isApiErrorMessage") || model(v) == Some("<synthetic>")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn user(content: Value) -> Value {
        json!({"type":"user","message":{"role":"user","content":content}})
    }

    #[test]
    fn user_records_classify_by_the_first_matching_rule() {
        let slash = user(json!(
            "<command-name>/model</command-name>\n  <command-message>model</command-message>\n  <command-args>opus</command-args>"
        ));
        assert_eq!(classify_user(&slash), UserKind::Slash("/model opus".into()));
        assert_eq!(
            classify_user(&user(json!(
                "<local-command-stdout>x</local-command-stdout>"
            ))),
            UserKind::CommandOutput
        );
        assert_eq!(
            classify_user(&user(
                json!([{"type":"text","text":"[Request interrupted by user]"}])
            )),
            UserKind::Interrupted
        );
        assert_eq!(
            classify_user(&user(json!(
                "<system-reminder>be nice</system-reminder>\nfix it"
            ))),
            UserKind::Prompt("fix it".into())
        );
        assert_eq!(
            classify_user(&user(json!("<system-reminder>only</system-reminder>"))),
            UserKind::Noise
        );
        let mut meta = user(json!("hello"));
        meta["isMeta"] = json!(true);
        assert_eq!(classify_user(&meta), UserKind::Meta);
        assert_eq!(
            classify_user(&user(json!("<bash-input>ls</bash-input>"))),
            UserKind::Shell
        );
        assert_eq!(
            shell_text(
                "<bash-input>ls</bash-input><bash-stdout>a\nb</bash-stdout><bash-stderr></bash-stderr>"
            ),
            "$ ls\na\nb"
        );
        // Wrong types are not an error: content a number is just no text.
        assert_eq!(classify_user(&user(json!(42))), UserKind::Noise);
    }
}
