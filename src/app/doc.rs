//! The pane's document: a transcript, window or raw dump turned into tagged display lines
//! (sanitised, one logical line each), and wrapping those to a width with `unicode-width`.
//!
//! Lines carry a semantic `Tone`, not colours, so the theme decides how they look and the app
//! stays free of terminal types.

use std::collections::{HashMap, HashSet};

use unicode_width::UnicodeWidthChar;

mod nested;

use super::timefmt::TimeFmt;
use super::tool_args;
use crate::model::{Entry, Message, Role, Transcript, Window};
use crate::text::{one_line, sanitize};

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
    /// A line an edit adds (`+`).
    Added,
    /// A line an edit removes (`-`).
    Removed,
    /// Text a find matched (`/` in the pane, a text search's words).
    Hit,
    /// The match `n` / `N` stands on.
    HitNow,
}

/// One display line: tagged runs of sanitised text without newlines.
pub type DocLine = Vec<(Tone, String)>;

/// Lines of a tool result (or an unpaired tool / system message) shown while collapsed.
const RESULT_PREVIEW: usize = 3;
/// Characters of one line a collapsed preview shows: a result of one huge line (a 1 MB
/// minified file) is cut, not copied and laid out whole (issue 11: a first screen holds a
/// page).
const PREVIEW_CHARS: usize = 2000;
/// Lines of a tool call's arguments shown while collapsed.
const ARGS_PREVIEW: usize = 8;

/// `1 line`, `2 lines` (for the regular nouns of this document).
fn count(n: usize, one: &str) -> String {
    crate::text::plural(n as u64, one, &format!("{one}s"))
}

/// Which foldable blocks are open: all of them (`O`) or none, with exceptions the user
/// toggled one at a time (`o`). Blocks are named by `Fold::key`, which survives reloads.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Expansion {
    pub all: bool,
    flipped: HashSet<String>,
}

impl Expansion {
    pub fn is_open(&self, key: &str) -> bool {
        self.all != self.flipped.contains(key)
    }

    /// Open or close one block.
    pub fn toggle(&mut self, key: &str) {
        if !self.flipped.remove(key) {
            self.flipped.insert(key.to_string());
        }
    }

    /// Open every block, or close every block.
    pub fn toggle_all(&mut self) {
        self.all = !self.all;
        self.flipped.clear();
    }
}

/// A block `o` opens and closes (thinking, a tool call with its result, a system prompt, a
/// long tool or system message) and the document lines it covers, `start..end`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fold {
    pub key: String,
    pub start: usize,
    pub end: usize,
}

/// Where a round starts in the document: (line, stored index of its user message).
pub type RoundStart = (usize, usize);

/// A document with its round starts (for "fork from here") and its foldable blocks.
#[derive(Clone, Debug, Default)]
pub struct Doc {
    pub lines: Vec<DocLine>,
    pub rounds: Vec<RoundStart>,
    pub folds: Vec<Fold>,
    /// Where each stored message's heading is: (line, stored index), so a text search
    /// lands on the message its hit is in.
    pub messages: Vec<(usize, usize)>,
}

fn line(tone: Tone, s: impl Into<String>) -> DocLine {
    vec![(tone, s.into())]
}

/// Builds a `Doc`: which folds are open, and the zone times are shown in.
struct Builder<'a> {
    doc: Doc,
    open: &'a Expansion,
    time: TimeFmt,
}

impl Builder<'_> {
    fn push(&mut self, l: DocLine) {
        self.doc.lines.push(l);
    }

    /// Push the (sanitised) lines of `text`, prefixed, at most `max` of them (with a line
    /// saying how many more).
    fn text(&mut self, text: &str, tone: Tone, indent: &str, max: Option<usize>) {
        let clean = sanitize(text);
        let lines: Vec<&str> = clean.lines().collect();
        let shown = max.unwrap_or(usize::MAX).min(lines.len());
        for l in &lines[..shown] {
            let cut = max.and_then(|_| l.char_indices().nth(PREVIEW_CHARS));
            self.push(line(
                tone,
                match cut {
                    Some((at, _)) => format!(
                        "{indent}{}… {} (o expands)",
                        &l[..at],
                        count(l[at..].chars().count(), "more character")
                    ),
                    None => format!("{indent}{l}"),
                },
            ));
        }
        if shown < lines.len() {
            let more = count(lines.len() - shown, "more line");
            self.push(line(Tone::Dim, format!("{indent}… {more} (o expands)")));
        }
    }

    /// Run `body` with whether block `key` is open; when `foldable` (closing it hides
    /// something) its lines become a `Fold`.
    fn fold(&mut self, key: String, foldable: bool, body: impl FnOnce(&mut Self, bool)) {
        let start = self.doc.lines.len();
        let open = self.open.is_open(&key);
        body(self, open);
        let end = self.doc.lines.len();
        if foldable && end > start {
            self.doc.folds.push(Fold { key, start, end });
        }
    }

    fn role_heading(&mut self, m: &Message) {
        let (mark, tone, label) = match &m.role {
            Role::User => ("▌ ", Tone::User, "you".to_string()),
            Role::Assistant => ("● ", Tone::Assistant, "assistant".to_string()),
            Role::Tool => ("↳ ", Tone::Tool, "tool".to_string()),
            Role::System => ("▸ ", Tone::Dim, "system".to_string()),
            Role::Other(r) => ("? ", Tone::Warn, one_line(r)),
        };
        let tone = if m.is_virtual { Tone::Virtual } else { tone };
        let mut l = vec![(tone, format!("{mark}{label}"))];
        // The stored message number: what `spool fork --at N` and "fork from here" count.
        if let Some(i) = m.index {
            l.push((Tone::Dim, format!(" #{i}")));
            self.doc.messages.push((self.doc.lines.len(), i));
        }
        if let Some(model) = &m.model {
            l.push((Tone::Dim, format!(" · {}", one_line(model))));
        }
        if let Some(t) = m.timestamp {
            l.push((Tone::Dim, format!(" · {}", self.time.format(t))));
        }
        if m.is_virtual {
            l.push((Tone::Virtual, " ◇ virtual".into()));
        }
        if m.is_error {
            l.push((Tone::Error, " ✗ error".into()));
        }
        self.push(l);
    }

    /// A system prompt, in every store the same: one line, its text behind `o`.
    fn system_prompt(&mut self, key: String, label: &str, text: &str) {
        let n = text.lines().count();
        self.fold(key, n > 0, |b, open| {
            let mark = if open { "▾" } else { "▸" };
            b.push(line(
                Tone::Dim,
                format!("{mark} {label} ({})", count(n, "line")),
            ));
            if open {
                b.text(text, Tone::Dim, "  ", None);
            }
        });
    }

    /// One message. `anchor` names it in fold keys (its stored index, else its position
    /// from the end, which older rounds loading above do not change). Tool results that
    /// answer one of its calls are drawn under the call (taken from `results`).
    fn message(&mut self, m: &Message, anchor: &str, results: &HashMap<String, &Message>) {
        self.push(Vec::new());
        if m.role == Role::System && m.tool_calls.is_empty() {
            let label = match m.index {
                Some(i) => {
                    self.doc.messages.push((self.doc.lines.len(), i));
                    format!("system prompt #{i}")
                }
                None => "system prompt".to_string(),
            };
            self.system_prompt(format!("s:{anchor}"), &label, &m.text);
            return;
        }
        self.role_heading(m);
        if let Some(n) = &m.note {
            self.push(line(Tone::Warn, format!("  note: {}", one_line(n))));
        }
        for (i, t) in m.thinking.iter().enumerate() {
            let n = t.lines().count();
            self.fold(format!("t:{anchor}:{i}"), n > 0, |b, open| {
                if open {
                    b.push(line(
                        Tone::Dim,
                        format!("  ▾ thinking ({})", count(n, "line")),
                    ));
                    b.text(t, Tone::Dim, "    ", None);
                } else {
                    b.push(line(
                        Tone::Dim,
                        format!("  ▸ thinking ({})", count(n, "line")),
                    ));
                }
            });
        }
        let tone = match m.role {
            _ if m.is_error => Tone::Error,
            Role::Tool => Tone::Dim,
            _ => Tone::Plain,
        };
        if m.role == Role::Tool {
            let long = folds(&m.text);
            self.fold(format!("b:{anchor}"), long, |b, open| {
                let max = (!open).then_some(RESULT_PREVIEW);
                b.text(&m.text, tone, "  ", max);
            });
        } else {
            self.text(&m.text, tone, "  ", None);
        }
        for img in &m.images {
            self.push(line(
                Tone::Dim,
                format!(
                    "  [image {} {} KB]",
                    one_line(&img.mime_type),
                    img.bytes.div_ceil(1024)
                ),
            ));
        }
        for call in &m.tool_calls {
            let args = tool_args::lines(&call.arguments, "      ");
            let result = results.get(&call.id);
            let long_result = result.is_some_and(|r| folds(&r.text));
            let foldable = args.len() > ARGS_PREVIEW || long_result;
            self.fold(format!("r:{}", call.id), foldable, |b, open| {
                b.push(line(Tone::Tool, format!("  ⚙ {}", one_line(&call.name))));
                let shown = if open { args.len() } else { ARGS_PREVIEW };
                let hidden = args.len().saturating_sub(shown);
                b.doc.lines.extend(args.into_iter().take(shown));
                if hidden > 0 {
                    let more = count(hidden, "more line");
                    b.push(line(Tone::Dim, format!("      … {more} (o expands)")));
                }
                match result {
                    Some(r) => {
                        let n = r.text.lines().count();
                        let (tone, mark) = if r.is_error {
                            (Tone::Error, "✗ error")
                        } else {
                            (Tone::Dim, "result")
                        };
                        b.push(line(tone, format!("    ↳ {mark} · {}", count(n, "line"))));
                        let max = (!open).then_some(RESULT_PREVIEW);
                        let body = if r.is_error { Tone::Error } else { Tone::Dim };
                        b.text(&r.text, body, "      ", max);
                    }
                    None => b.push(line(Tone::Warn, "    ↳ no result")),
                }
            });
        }
    }
}

/// Whether a result's collapsed preview hides something: lines past the first few, or the
/// end of a line too long to show whole.
fn folds(text: &str) -> bool {
    let mut lines = text.lines();
    lines
        .by_ref()
        .take(RESULT_PREVIEW)
        .any(|l| l.len() > PREVIEW_CHARS && l.chars().nth(PREVIEW_CHARS).is_some())
        || lines.next().is_some()
}

/// Tool results that pair with a call somewhere in `msgs` (they are drawn under the call).
fn paired<'a>(msgs: &[&'a Message]) -> HashMap<String, &'a Message> {
    let calls: HashSet<&str> = msgs
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

/// A message's name in fold keys: its stored index, else its position from the end.
fn anchor(m: &Message, from_end: usize) -> String {
    match m.index {
        Some(i) => format!("i{i}"),
        None => format!("e{from_end}"),
    }
}

/// The stored history as display lines, with the first line of every round (the blank line
/// above the user message), so "fork from here" can find the round in view.
pub fn transcript(t: &Transcript, open: &Expansion, time: TimeFmt) -> Doc {
    let mut b = Builder {
        doc: Doc::default(),
        open,
        time,
    };
    if t.first_round > 0 {
        let n = count(t.first_round, "earlier round");
        b.push(line(Tone::Dim, format!("↑ {n} (scroll up or g to load)")));
    }
    for w in &t.warnings {
        b.push(line(Tone::Warn, format!("⚠ {}", one_line(w))));
    }
    let msgs: Vec<&Message> = t.messages().collect();
    let results = paired(&msgs);
    let total = t.entries.len();
    for (i, e) in t.entries.iter().enumerate() {
        let from_end = total - i;
        match e {
            Entry::Message(m) if is_paired(m, &results) => {}
            Entry::Message(m) => {
                // A round starts at a stored user message (replay-inserted ones have no index).
                if let (Role::User, Some(i), false) = (&m.role, m.index, m.is_virtual) {
                    b.doc.rounds.push((b.doc.lines.len(), i));
                }
                b.message(m, &anchor(m, from_end), &results)
            }
            Entry::Compaction { summary, timestamp } => {
                b.push(Vec::new());
                let when = timestamp.map(|t| b.time.format(t)).unwrap_or_default();
                b.push(line(
                    Tone::Virtual,
                    format!("── context compacted {when} ──"),
                ));
                b.text(summary, Tone::Dim, "  ", None);
            }
            Entry::SystemPrompt { text, timestamp } => {
                b.push(Vec::new());
                let label = match timestamp {
                    Some(t) => format!("system prompt · {}", b.time.format(*t)),
                    None => "system prompt".to_string(),
                };
                b.system_prompt(format!("s:e{from_end}"), &label, text);
            }
            Entry::Notice(n) => b.push(line(Tone::Warn, format!("⚠ {}", one_line(n)))),
            Entry::Nested(c) => b.nested(c),
        }
    }
    b.doc
}

/// The replayed context window as display lines (its token estimate is in the header).
pub fn window(w: &Window, open: &Expansion, time: TimeFmt) -> Doc {
    let mut b = Builder {
        doc: Doc::default(),
        open,
        time,
    };
    // The size line lives in the pane header, which stays in view while scrolling.
    if let Some(n) = &w.system_note {
        b.push(line(Tone::Dim, one_line(n)));
    }
    for warn in &w.warnings {
        b.push(line(Tone::Warn, format!("⚠ {}", one_line(warn))));
    }
    let msgs: Vec<&Message> = w.messages.iter().collect();
    let results = paired(&msgs);
    let total = w.messages.len();
    for (i, m) in w.messages.iter().enumerate() {
        if !is_paired(m, &results) {
            b.message(m, &anchor(m, total - i), &results);
        }
    }
    b.doc
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

    /// A result of one 1 MB line shows its first characters collapsed (the rest folds), and
    /// whole once opened.
    #[test]
    fn a_huge_line_of_a_collapsed_result_is_cut_and_folds() {
        let m = Message::new(Role::Tool, "y".repeat(1_000_000));
        let shown = |open: &Expansion| {
            let mut b = Builder {
                doc: Doc::default(),
                open,
                time: TimeFmt::default(),
            };
            b.message(&m, "x", &HashMap::new());
            b.doc
        };
        let closed = shown(&Expansion::default());
        let longest = closed.lines.iter().map(|l| text(l).len()).max().unwrap();
        assert!(longest < PREVIEW_CHARS + 100, "{longest}");
        assert!(
            closed
                .lines
                .iter()
                .any(|l| text(l).ends_with("… 998000 more characters (o expands)"))
        );
        assert_eq!(closed.folds.len(), 1);
        let all = Expansion {
            all: true,
            ..Expansion::default()
        };
        let open = shown(&all);
        assert!(open.lines.iter().any(|l| text(l).len() > 1_000_000));
    }
}
