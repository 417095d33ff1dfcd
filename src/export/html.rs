//! The standalone HTML export: one file with its own styles, every string escaped.

use std::fmt::Write as _;

use super::{SHARE_WARNING, role_label};
use crate::model::{Entry, Message, Role, Transcript, rfc3339};

/// Escape text for HTML element content and attribute values.
pub fn escape_html(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

const CSS: &str = "body{font:15px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;\
padding:0 1rem;color:#1d1f21;background:#fdfdfd}@media(prefers-color-scheme:dark){body{color:#ddd;\
background:#16181c}.msg{border-color:#333}pre{background:#22252b}}table{border-collapse:collapse}\
td{padding:.1rem .8rem .1rem 0;vertical-align:top}.msg{border-left:4px solid #ccc;margin:1rem 0;\
padding:.3rem 1rem}.user{border-color:#3b82f6}.assistant{border-color:#10b981}.tool{border-color:\
#a855f7}.system{border-color:#888}.error{border-color:#ef4444}.virtual{border-style:dashed}\
.role{font-weight:600}.meta{color:#888;font-size:.85em}pre{background:#f3f3f3;padding:.6rem;\
overflow-x:auto;white-space:pre-wrap;word-break:break-word}.compact{text-align:center;color:#888;\
border-top:1px dashed #888;margin:1.5rem 0;padding-top:.5rem}.warn{color:#b45309}";

/// A standalone HTML page: inline CSS, no scripts, no external resources, every piece of
/// session text escaped.
pub fn html(t: &Transcript) -> String {
    let s = &t.summary;
    let mut out = format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{}</title>\n<style>{CSS}</style>\n</head>\n<body>\n<h1>{}</h1>\n<table>\n",
        escape_html(s.title()),
        escape_html(s.title())
    );
    let rows = [
        ("session", s.reference()),
        ("cwd", s.cwd.clone().map(String::from).unwrap_or_default()),
        (
            "model",
            s.model.clone().map(String::from).unwrap_or_default(),
        ),
        ("created", s.created_at.map(rfc3339).unwrap_or_default()),
        ("updated", s.updated_at.map(rfc3339).unwrap_or_default()),
        ("messages", s.messages.to_string()),
        (
            "forked from",
            s.forked_from().map(String::from).unwrap_or_default(),
        ),
        ("summary", s.summary().to_string()),
    ];
    for (k, v) in rows.iter().filter(|(_, v)| !v.is_empty()) {
        let _ = writeln!(
            out,
            "<tr><td class=\"meta\">{k}</td><td>{}</td></tr>",
            escape_html(v)
        );
    }
    let _ = writeln!(
        out,
        "</table>\n<p class=\"warn\">{}</p>",
        escape_html(SHARE_WARNING)
    );
    for e in &t.entries {
        match e {
            Entry::Message(m) => message_html(&mut out, m),
            Entry::Compaction { summary, .. } => {
                let _ = writeln!(
                    out,
                    "<div class=\"compact\">context compacted here<pre>{}</pre></div>",
                    escape_html(summary)
                );
            }
            Entry::SystemPrompt { text, .. } => {
                let _ = writeln!(
                    out,
                    "<details class=\"msg system\"><summary>System prompt</summary><pre>{}</pre></details>",
                    escape_html(text)
                );
            }
            Entry::Notice(n) => {
                let _ = writeln!(out, "<p class=\"warn\">{}</p>", escape_html(n));
            }
            Entry::Nested(c) => {
                let _ = writeln!(out, "<p class=\"warn\">{}</p>", escape_html(&c.note));
            }
        }
    }
    out.push_str("</body>\n</html>\n");
    out
}

fn message_html(out: &mut String, m: &Message) {
    let mut classes = vec!["msg", role_class(&m.role)];
    if m.is_error {
        classes.push("error");
    }
    if m.is_virtual {
        classes.push("virtual");
    }
    let mut meta = Vec::new();
    if let Some(model) = &m.model {
        meta.push(model.clone());
    }
    if let Some(t) = m.timestamp {
        meta.push(rfc3339(t));
    }
    if m.is_virtual {
        meta.push("inserted by replay".into());
    }
    let _ = writeln!(
        out,
        "<div class=\"{}\"><div><span class=\"role\">{}</span> <span class=\"meta\">{}</span></div>",
        classes.join(" "),
        escape_html(&role_label(&m.role)),
        escape_html(&meta.join(" · "))
    );
    if let Some(n) = &m.note {
        let _ = writeln!(out, "<p class=\"warn\">{}</p>", escape_html(n));
    }
    for th in &m.thinking {
        let _ = writeln!(
            out,
            "<details><summary>Thinking</summary><pre>{}</pre></details>",
            escape_html(th)
        );
    }
    if !m.text.is_empty() {
        let _ = writeln!(out, "<pre>{}</pre>", escape_html(&m.text));
    }
    for img in &m.images {
        let _ = writeln!(
            out,
            "<p class=\"meta\">[image {}, {} bytes]</p>",
            escape_html(&img.mime_type),
            img.bytes
        );
    }
    for c in &m.tool_calls {
        let args = serde_json::to_string_pretty(&c.arguments).unwrap_or_default();
        let _ = writeln!(
            out,
            "<p class=\"meta\">tool call <code>{}</code> ({})</p><pre>{}</pre>",
            escape_html(&c.name),
            escape_html(&c.id),
            escape_html(&args)
        );
    }
    out.push_str("</div>\n");
}

fn role_class(r: &Role) -> &'static str {
    match r {
        Role::System => "system",
        Role::User => "user",
        Role::Assistant => "assistant",
        Role::Tool => "tool",
        Role::Other(_) => "other",
    }
}
