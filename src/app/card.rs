//! The "left off" card drawn at the top of the transcript: `LeftOff` as sanitised display
//! lines, full or collapsed to one line (`l`).

use super::doc::{DocLine, Tone};
use crate::model::left_off::LeftOff;
use crate::text::{one_line, sanitize};

fn tokens(n: u64) -> String {
    if n >= 10_000 {
        format!("{}k", n / 1000)
    } else {
        n.to_string()
    }
}

/// The card's lines, a blank line after them.
pub fn lines(lo: &LeftOff, collapsed: bool) -> Vec<DocLine> {
    let ctx = format!(
        "≈{} tokens ({})",
        tokens(lo.context_tokens),
        lo.context_method
    );
    if collapsed {
        let mut parts = vec![
            lo.last_request
                .as_deref()
                .map(one_line)
                .unwrap_or_else(|| "no request".into()),
        ];
        if !lo.todos.is_empty() {
            parts.push(format!("{} open todos", lo.todos.len()));
        }
        if !lo.files.is_empty() {
            parts.push(format!("{} files", lo.files.len()));
        }
        parts.push(format!("≈{} tokens", tokens(lo.context_tokens)));
        return vec![
            vec![
                (Tone::Heading, "▸ left off ".into()),
                (Tone::Dim, format!("{} (l opens)", parts.join(" · "))),
            ],
            Vec::new(),
        ];
    }
    let mut out: Vec<DocLine> = vec![vec![
        (Tone::Heading, "▾ left off ".into()),
        (Tone::Dim, "(l folds)".into()),
    ]];
    let mut block = |label: &str, text: &str, tone: Tone| {
        for (i, l) in sanitize(text).lines().enumerate() {
            let head = if i == 0 { label } else { "" };
            out.push(vec![
                (Tone::Dim, format!("  {head:<12}")),
                (tone, l.to_string()),
            ]);
        }
    };
    if let Some(r) = &lo.last_request {
        block("request", r, Tone::User);
    }
    if let Some(r) = &lo.last_reply {
        block("reply", r, Tone::Assistant);
    }
    for t in &lo.todos {
        block(
            "todo",
            &format!("[{}] {}", t.status, one_line(&t.text)),
            Tone::Plain,
        );
    }
    if !lo.files.is_empty() {
        block("files", &lo.files.join(", "), Tone::Plain);
    }
    for c in &lo.commands {
        let how = match (c.exit, c.failed) {
            (Some(e), _) => format!("  → exit {e}"),
            (None, Some(true)) => "  → failed".into(),
            (None, Some(false)) => "  → ok".into(),
            (None, None) => "  → no result".into(),
        };
        let tone = if c.failed == Some(true) {
            Tone::Error
        } else {
            Tone::Plain
        };
        block("ran", &format!("{}{how}", one_line(&c.command)), tone);
    }
    if let Some(e) = &lo.last_error {
        block("last error", e, Tone::Error);
    }
    block("context", &ctx, Tone::Dim);
    out.push(Vec::new());
    out
}
