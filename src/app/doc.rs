//! The pane's document: a transcript, window or raw dump turned into tagged display lines
//! (sanitised, one logical line each), and wrapping those to a width with `unicode-width`.
//!
//! Lines carry a semantic `Tone`, not colours, so the theme decides how they look and the app
//! stays free of terminal types.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use unicode_width::UnicodeWidthChar;

use crate::model::{Entry, Message, Role, Transcript, Window};
use crate::text::{one_line, sanitize, truncate_chars};

/// How a piece of text should look; the theme maps tones to styles.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Tone {
    Plain,
    Dim,
    User,
    Assistant,
    Tool,
    Error,
    Virtual,
    Warn,
    Heading,
}

/// One display line: tagged runs of sanitised text without newlines.
pub type DocLine = Vec<(Tone, String)>;

/// Lines of a tool result shown while collapsed.
const RESULT_PREVIEW: usize = 3;
/// Lines of a system prompt / system message shown while collapsed.
const SYSTEM_PREVIEW: usize = 2;

fn line(tone: Tone, s: impl Into<String>) -> DocLine {
    vec![(tone, s.into())]
}

fn time(t: Option<DateTime<Utc>>) -> String {
    t.map(|t| t.format("%Y-%m-%d %H:%M").to_string())
        .unwrap_or_default()
}

/// Push the (sanitised) lines of `text`, prefixed, at most `max` of them (with a "more" line).
fn text_block(out: &mut Vec<DocLine>, text: &str, tone: Tone, indent: &str, max: Option<usize>) {
    let clean = sanitize(text);
    let lines: Vec<&str> = clean.lines().collect();
    let shown = max.unwrap_or(usize::MAX).min(lines.len());
    for l in &lines[..shown] {
        out.push(line(tone, format!("{indent}{l}")));
    }
    if shown < lines.len() {
        out.push(line(
            Tone::Dim,
            format!("{indent}… {} more lines (o expands)", lines.len() - shown),
        ));
    }
}

fn role_heading(m: &Message) -> DocLine {
    let (mark, tone, label) = match &m.role {
        Role::User => ("▌ ", Tone::User, "you".to_string()),
        Role::Assistant => ("● ", Tone::Assistant, "assistant".to_string()),
        Role::Tool => ("↳ ", Tone::Tool, "tool".to_string()),
        Role::System => ("▸ ", Tone::Dim, "system".to_string()),
        Role::Other(r) => ("? ", Tone::Warn, one_line(r)),
    };
    let tone = if m.is_virtual { Tone::Virtual } else { tone };
    let mut l = vec![(tone, format!("{mark}{label}"))];
    if let Some(model) = &m.model {
        l.push((Tone::Dim, format!(" · {}", one_line(model))));
    }
    if m.timestamp.is_some() {
        l.push((Tone::Dim, format!(" · {}", time(m.timestamp))));
    }
    if m.is_virtual {
        l.push((Tone::Virtual, " ◇ virtual".into()));
    }
    if m.is_error {
        l.push((Tone::Error, " ✗ error".into()));
    }
    l
}

/// Render one message. Tool results answering one of its calls are rendered under the call
/// (taken from `results`), the rest stand alone.
fn message(
    out: &mut Vec<DocLine>,
    m: &Message,
    results: &HashMap<String, &Message>,
    expanded: bool,
) {
    out.push(Vec::new());
    out.push(role_heading(m));
    if let Some(n) = &m.note {
        out.push(line(Tone::Warn, format!("  note: {}", one_line(n))));
    }
    for t in &m.thinking {
        let n = t.lines().count();
        if expanded {
            out.push(line(Tone::Dim, "  ▾ thinking"));
            text_block(out, t, Tone::Dim, "    ", None);
        } else {
            out.push(line(Tone::Dim, format!("  ▸ thinking ({n} lines)")));
        }
    }
    let body_max = match m.role {
        Role::System if !expanded => Some(SYSTEM_PREVIEW),
        Role::Tool if !expanded => Some(RESULT_PREVIEW),
        _ => None,
    };
    let tone = match m.role {
        _ if m.is_error => Tone::Error,
        Role::Tool | Role::System => Tone::Dim,
        _ => Tone::Plain,
    };
    text_block(out, &m.text, tone, "  ", body_max);
    for img in &m.images {
        out.push(line(
            Tone::Dim,
            format!(
                "  [image {} {} KB]",
                one_line(&img.mime_type),
                img.bytes.div_ceil(1024)
            ),
        ));
    }
    for call in &m.tool_calls {
        let args = match &call.arguments {
            serde_json::Value::String(s) => s.clone(),
            v => v.to_string(),
        };
        out.push(vec![
            (Tone::Tool, format!("  ⚙ {}", one_line(&call.name))),
            (
                Tone::Dim,
                format!(" {}", truncate_chars(&one_line(&args), 200)),
            ),
        ]);
        match results.get(&call.id) {
            Some(r) => {
                let n = r.text.lines().count();
                let (tone, mark) = if r.is_error {
                    (Tone::Error, "✗ error")
                } else {
                    (Tone::Dim, "result")
                };
                out.push(line(tone, format!("    ↳ {mark} · {n} lines")));
                let max = (!expanded).then_some(RESULT_PREVIEW);
                let body = if r.is_error { Tone::Error } else { Tone::Dim };
                text_block(out, &r.text, body, "      ", max);
            }
            None => out.push(line(Tone::Warn, "    ↳ no result")),
        }
    }
}

/// Tool results that pair with a call somewhere in `msgs` (they are drawn under the call).
fn paired<'a>(msgs: &[&'a Message]) -> HashMap<String, &'a Message> {
    let calls: std::collections::HashSet<&str> = msgs
        .iter()
        .flat_map(|m| m.tool_calls.iter().map(|c| c.id.as_str()))
        .collect();
    msgs.iter()
        .filter(|m| m.role == Role::Tool)
        .filter_map(|m| {
            let id = m.tool_call_id.as_deref()?;
            calls.contains(id).then(|| (id.to_string(), *m))
        })
        .collect()
}

fn is_paired(m: &Message, results: &HashMap<String, &Message>) -> bool {
    m.role == Role::Tool
        && m.tool_call_id
            .as_deref()
            .is_some_and(|id| results.get(id).is_some_and(|r| std::ptr::eq(*r, m)))
}

/// The stored history as display lines.
pub fn transcript(t: &Transcript, expanded: bool) -> Vec<DocLine> {
    transcript_with_rounds(t, expanded).0
}

/// Where a round starts in the document: (line, stored index of its user message).
pub type RoundStart = (usize, usize);

/// The stored history as display lines, with the first line of every round (the blank line
/// above the user message), so "fork from here" can find the round in view.
pub fn transcript_with_rounds(t: &Transcript, expanded: bool) -> (Vec<DocLine>, Vec<RoundStart>) {
    let mut rounds = Vec::new();
    let mut out = Vec::new();
    if t.first_round > 0 {
        out.push(line(
            Tone::Dim,
            format!("↑ {} earlier rounds (scroll up to load)", t.first_round),
        ));
    }
    for w in &t.warnings {
        out.push(line(Tone::Warn, format!("⚠ {}", one_line(w))));
    }
    let msgs: Vec<&Message> = t.messages().collect();
    let results = paired(&msgs);
    for e in &t.entries {
        match e {
            Entry::Message(m) if is_paired(m, &results) => {}
            Entry::Message(m) => {
                // A round starts at a stored user message (replay-inserted ones have no index).
                if let (Role::User, Some(i), false) = (&m.role, m.index, m.is_virtual) {
                    rounds.push((out.len(), i));
                }
                message(&mut out, m, &results, expanded)
            }
            Entry::Compaction { summary, timestamp } => {
                out.push(Vec::new());
                out.push(line(
                    Tone::Virtual,
                    format!("── context compacted {} ──", time(*timestamp)),
                ));
                text_block(&mut out, summary, Tone::Dim, "  ", None);
            }
            Entry::SystemPrompt { text, timestamp } => {
                out.push(Vec::new());
                out.push(line(
                    Tone::Dim,
                    format!(
                        "▸ system prompt {} ({} lines)",
                        time(*timestamp),
                        text.lines().count()
                    ),
                ));
                let max = (!expanded).then_some(SYSTEM_PREVIEW);
                text_block(&mut out, text, Tone::Dim, "  ", max);
            }
            Entry::Notice(n) => out.push(line(Tone::Warn, format!("⚠ {}", one_line(n)))),
        }
    }
    (out, rounds)
}

/// The replayed context window as display lines (its token estimate is in the header).
pub fn window(w: &Window, expanded: bool) -> Vec<DocLine> {
    // The size line lives in the pane header, which stays in view while scrolling.
    let mut out = Vec::new();
    if let Some(n) = &w.system_note {
        out.push(line(Tone::Dim, one_line(n)));
    }
    for warn in &w.warnings {
        out.push(line(Tone::Warn, format!("⚠ {}", one_line(warn))));
    }
    let msgs: Vec<&Message> = w.messages.iter().collect();
    let results = paired(&msgs);
    for m in &w.messages {
        if !is_paired(m, &results) {
            message(&mut out, m, &results, expanded);
        }
    }
    out
}

/// The stored records as display lines.
pub fn raw(text: &str) -> Vec<DocLine> {
    sanitize(text)
        .lines()
        .map(|l| line(Tone::Plain, l))
        .collect()
}

/// Wrap lines to `width` columns, measuring with `unicode-width` (CJK and emoji take two),
/// preferring to break after a space.
pub fn wrap(lines: &[DocLine], width: usize) -> Vec<DocLine> {
    let mut out = Vec::with_capacity(lines.len());
    for l in lines {
        wrap_one(l, width.max(1), &mut out);
    }
    out
}

/// How many rows `l` takes at `width` (what `wrap` would produce, without building rows).
pub fn wrapped_height(l: &DocLine, width: usize) -> usize {
    let cells = cells_of(l);
    if cells.is_empty() {
        return 1;
    }
    breaks(&cells, width.max(1)).len()
}

type Cell = (Tone, char, usize);

fn cells_of(l: &DocLine) -> Vec<Cell> {
    l.iter()
        .flat_map(|(t, s)| s.chars().map(move |c| (*t, c, c.width().unwrap_or(0))))
        .collect()
}

/// The line's indent kept on continuation rows (message bodies, tool output), as long as
/// that leaves room for text.
fn indent_of(cells: &[Cell], width: usize) -> usize {
    let indent = cells.iter().take_while(|c| c.1 == ' ').count();
    if indent * 2 < width { indent } else { 0 }
}

/// Cell ranges of each wrapped row: cut at the last space that fits, else mid-word.
fn breaks(cells: &[Cell], width: usize) -> Vec<(usize, usize)> {
    let indent = indent_of(cells, width);
    let mut rows = Vec::new();
    let mut start = 0;
    while start < cells.len() {
        let room = if start == 0 { width } else { width - indent };
        let mut w = 0;
        let mut end = start;
        let mut last_space = None;
        while end < cells.len() && w + cells[end].2 <= room {
            w += cells[end].2;
            if cells[end].1 == ' ' {
                last_space = Some(end);
            }
            end += 1;
        }
        if end == start {
            end = start + 1; // a wide char on a 1-column pane: show it anyway
        } else if end < cells.len()
            && let Some(sp) = last_space
            && sp > start.max(indent)
        {
            end = sp + 1;
        }
        rows.push((start, end));
        start = end;
    }
    rows
}

/// Wrap one line into `out`.
pub fn wrap_one(l: &DocLine, width: usize, out: &mut Vec<DocLine>) {
    let cells = cells_of(l);
    if cells.is_empty() {
        out.push(Vec::new());
        return;
    }
    let width = width.max(1);
    let indent = indent_of(&cells, width);
    for (start, end) in breaks(&cells, width) {
        if start == 0 {
            out.push(join(&cells[start..end]));
        } else {
            let mut row = cells[..indent].to_vec();
            row.extend_from_slice(&cells[start..end]);
            out.push(join(&row));
        }
    }
}

fn join(cells: &[Cell]) -> DocLine {
    let mut l: DocLine = Vec::new();
    for &(t, c, _) in cells {
        match l.last_mut() {
            Some((lt, s)) if *lt == t => s.push(c),
            _ => l.push((t, c.to_string())),
        }
    }
    l
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(l: &DocLine) -> String {
        l.iter().map(|(_, s)| s.as_str()).collect()
    }

    #[test]
    fn wraps_by_display_width_at_spaces() {
        let l = vec![(Tone::Plain, "hello world 世界世界".to_string())];
        let w: Vec<String> = wrap(&[l], 8).iter().map(text).collect();
        assert_eq!(w, ["hello ", "world ", "世界世界"]);
    }

    #[test]
    fn continuation_lines_keep_the_indent() {
        let l = vec![(Tone::Plain, "  one two three four".to_string())];
        let w: Vec<String> = wrap(&[l], 10).iter().map(text).collect();
        assert_eq!(w, ["  one two ", "  three ", "  four"]);
        // An indent that would leave no room for text is not repeated.
        let deep = vec![(Tone::Plain, "      abcdefgh".to_string())];
        let w: Vec<String> = wrap(&[deep], 8).iter().map(text).collect();
        assert_eq!(w, ["      ", "abcdefgh"]);
    }

    #[test]
    fn escape_sequences_never_reach_lines() {
        let l = raw("a\u{1b}[2Jb\nc");
        assert_eq!(l.iter().map(text).collect::<Vec<_>>(), ["ab", "c"]);
    }
}
