//! The overlays over the browser: help (every key, per context, the mouse, and a legend of
//! the row marks and transcript labels) and the message log. Both are laid out here as
//! display lines sized to their content and the screen; the app keeps their scroll
//! position so j/k and PgUp/PgDn move them, and the widget only paints the visible slice.

use ratatui::layout::Rect;
use unicode_width::UnicodeWidthStr;

use super::App;
use super::doc::{DocLine, Tone, wrap};
use super::keymap::{Ctx, Keymap};
use crate::text::{one_line, pad};

/// Which overlay is open.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Overlay {
    Help,
    Messages,
}

/// How many status messages the log keeps.
pub const LOG_LEN: usize = 50;

/// One entry of the help text before layout.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HelpRow {
    Heading(&'static str),
    /// Keys (already joined) and what they do.
    Item(String, String),
}

/// Help entries for `keymap`: the browse keys, then the other contexts, the mouse and the
/// legend. Keys come from the keymap, so remapped keys show as remapped.
pub fn help_rows(keymap: &Keymap) -> Vec<HelpRow> {
    let mut v = vec![HelpRow::Heading("browse")];
    // The text search's and the find's keys go with the search box's (the browse column is
    // one screen tall at 140x40, and a taller one would not stay in columns).
    let text_keys = ["text-search", "find-next", "find-prev"];
    let (text, browse): (Vec<_>, Vec<_>) = keymap
        .help_rows()
        .into_iter()
        .partition(|(name, ..)| text_keys.contains(name));
    for (_, keys, desc) in browse {
        v.push(HelpRow::Item(keys, desc.to_string()));
    }
    // The search box and the prompts share their editing keys: listed once.
    let is_edit = |name: &str| name.starts_with("edit-");
    for (ctx, heading, implicit) in [
        (
            Ctx::Search,
            "search (/ s, / in the pane)",
            &[
                ("type", "filter as you type"),
                ("enter", "open what was found"),
            ][..],
        ),
        (Ctx::Confirm, "delete confirmation", &[][..]),
        (
            Ctx::Prompt,
            "rename and export prompts",
            &[("type", "edit the text")][..],
        ),
    ] {
        v.push(HelpRow::Heading(heading));
        for (k, d) in implicit {
            v.push(HelpRow::Item(k.to_string(), d.to_string()));
        }
        for (name, keys, desc) in keymap.context_rows(ctx) {
            if !is_edit(name) {
                v.push(HelpRow::Item(keys, desc.to_string()));
            }
        }
        if ctx == Ctx::Search {
            for (_, keys, desc) in &text {
                v.push(HelpRow::Item(keys.clone(), desc.to_string()));
            }
        }
    }
    v.push(HelpRow::Heading("editing text (search box and prompts)"));
    for (name, keys, desc) in keymap.context_rows(Ctx::Prompt) {
        if is_edit(name) {
            v.push(HelpRow::Item(keys, desc.to_string()));
        }
    }
    v.push(HelpRow::Heading("help and message log"));
    for (k, d) in [
        ("esc q", "close"),
        ("j k pgup pgdn g G", "scroll"),
        ("? m", "help / message log"),
    ] {
        v.push(HelpRow::Item(k.into(), d.into()));
    }
    v.push(HelpRow::Heading("mouse"));
    for (k, d) in [
        ("wheel", "scroll the list or pane under the pointer"),
        ("click", "select a row, focus the pane or search box"),
    ] {
        v.push(HelpRow::Item(k.into(), d.into()));
    }
    v.push(HelpRow::Heading("row marks"));
    for (k, d) in [
        ("▌", "the selected row"),
        ("●", "unread"),
        ("◆", "pinned"),
        ("✗", "cannot be read: id and reason"),
        ("↳", "a fork; its parent's title follows"),
        ("[loop]", "the store it lives in"),
        ("(empty)", "a session without a prompt (E shows them)"),
    ] {
        v.push(HelpRow::Item(k.into(), d.into()));
    }
    v.push(HelpRow::Heading("labels"));
    for (k, d) in [
        ("interrupted", "agent-harness: the run stopped mid-way"),
        ("running", "agent-harness: a run holds the session"),
        ("note: aborted", "the reply was cut off by the user"),
        ("✗ error", "a failed tool call or reply"),
        ("◇ virtual", "inserted by replay (window view)"),
        ("error", "the session cannot be read"),
    ] {
        v.push(HelpRow::Item(k.into(), d.into()));
    }
    v
}

/// An overlay laid out for the screen: its box, its lines, and how many fit.
#[derive(Clone, Debug, PartialEq)]
pub struct Layout {
    pub title: String,
    pub area: Rect,
    pub lines: Vec<DocLine>,
    /// Lines shown at once (the box's inner height).
    pub visible: usize,
}

impl Layout {
    /// The largest useful scroll position.
    pub fn max_scroll(&self) -> usize {
        self.lines.len().saturating_sub(self.visible)
    }
}

/// Lay out `overlay` for a screen of `size`.
pub fn layout(app: &App, overlay: Overlay) -> Layout {
    let (w, h) = app.size;
    // A border and one column of margin on each side.
    let avail_w = (w as usize).saturating_sub(4).max(1);
    let avail_h = (h as usize).saturating_sub(2).max(1);
    let (title, lines) = match overlay {
        Overlay::Help => (
            " keys · esc closes ".to_string(),
            help_lines(&help_rows(&app.keymap), avail_w, avail_h),
        ),
        Overlay::Messages => (
            format!(" last {LOG_LEN} messages · esc closes "),
            log_lines(app, avail_w),
        ),
    };
    let content_w = lines
        .iter()
        .map(|l| l.iter().map(|(_, s)| s.width()).sum::<usize>())
        .max()
        .unwrap_or(0)
        .max(title.width());
    let bw = (content_w + 4).min(w as usize) as u16;
    let bh = (lines.len() + 2).min(h as usize) as u16;
    Layout {
        title,
        area: Rect::new((w - bw) / 2, (h - bh) / 2, bw, bh),
        visible: (bh as usize).saturating_sub(2).max(1),
        lines,
    }
}

/// Help rows as lines at most `avail_w` wide: two columns when that makes everything fit,
/// else one; descriptions wrap under themselves (or under their keys on very narrow
/// screens) rather than being cut.
fn help_lines(rows: &[HelpRow], avail_w: usize, avail_h: usize) -> Vec<DocLine> {
    let key_w = rows
        .iter()
        .filter_map(|r| match r {
            HelpRow::Item(k, _) => Some(k.width()),
            _ => None,
        })
        .max()
        .unwrap_or(0)
        .min(20);
    let desc_w = rows
        .iter()
        .filter_map(|r| match r {
            HelpRow::Item(_, d) => Some(d.width()),
            HelpRow::Heading(_) => None,
        })
        .max()
        .unwrap_or(0);
    // Side by side, the key column is narrower (longer keys get a line of their own).
    let column = |col_w: usize, key_cap: usize| {
        let key_w = key_w.min(col_w / 3).min(key_cap);
        let desc_w = desc_w.min(col_w.saturating_sub(key_w + 2));
        let mut out: Vec<DocLine> = Vec::new();
        for r in rows {
            match r {
                HelpRow::Heading(t) => {
                    if !out.is_empty() {
                        out.push(Vec::new());
                    }
                    out.push(vec![(Tone::Heading, t.to_string())]);
                }
                HelpRow::Item(k, d) => item(&mut out, k, d, key_w, desc_w),
            }
        }
        out
    };
    let one = column(avail_w, 20);
    if one.len() <= avail_h {
        return one;
    }
    // Side by side when the columns then fit (a scrolled multi-column text would be hard
    // to follow), splitting at the section headings that balance them best.
    for n in 2..=3 {
        let col_w = avail_w.saturating_sub(3 * (n - 1)) / n;
        if col_w < 36 {
            break;
        }
        let col = column(col_w, 12);
        let heads: Vec<usize> = (1..col.len())
            .filter(|&i| col[i].first().is_some_and(|(t, _)| *t == Tone::Heading))
            .collect();
        if let Some(cols) = split_columns(&col, &heads, n, avail_h) {
            return side_by_side(&cols);
        }
    }
    one
}

/// Cut `col` at headings into `n` columns of at most `h` lines (greedy: each column takes
/// as many whole sections as fit), or `None` when they do not fit.
fn split_columns(
    col: &[DocLine],
    heads: &[usize],
    n: usize,
    h: usize,
) -> Option<Vec<Vec<DocLine>>> {
    let mut cols = Vec::new();
    let mut start = 0;
    while start < col.len() {
        if cols.len() == n {
            return None;
        }
        // The blank line before a heading ends the previous column; a column never starts
        // with one.
        let end = heads
            .iter()
            .copied()
            .filter(|&i| i > start && i - start <= h + 1)
            .chain((col.len() - start <= h).then_some(col.len()))
            .max()?;
        let mut c: Vec<DocLine> = col[start..end].to_vec();
        while c.last().is_some_and(|l| l.is_empty()) {
            c.pop();
        }
        if c.len() > h || c.is_empty() {
            return None;
        }
        cols.push(c);
        start = end;
    }
    Some(cols)
}

/// Columns joined line by line, three spaces apart.
fn side_by_side(cols: &[Vec<DocLine>]) -> Vec<DocLine> {
    let widths: Vec<usize> = cols
        .iter()
        .map(|c| c.iter().map(width).max().unwrap_or(0))
        .collect();
    let rows = cols.iter().map(Vec::len).max().unwrap_or(0);
    (0..rows)
        .map(|i| {
            let mut l: DocLine = Vec::new();
            for (c, col) in cols.iter().enumerate() {
                let Some(part) = col.get(i) else { continue };
                if c > 0 {
                    let before: usize = widths[..c].iter().sum::<usize>() + 3 * c;
                    l.push((Tone::Plain, " ".repeat(before - width(&l))));
                }
                l.extend(part.iter().cloned());
            }
            l
        })
        .collect()
}

fn width(l: &DocLine) -> usize {
    l.iter().map(|(_, s)| s.width()).sum()
}

/// One help item: keys padded to `key_w`, the description wrapped to `desc_w` beside them;
/// when the keys are longer or that leaves too little room, the description goes under
/// the keys.
fn item(out: &mut Vec<DocLine>, keys: &str, desc: &str, key_w: usize, desc_w: usize) {
    if keys.width() > key_w && desc_w >= 12 {
        out.push(vec![(Tone::Warn, one_line(keys))]);
        item(out, "", desc, key_w, desc_w);
        return;
    }
    if desc_w < 12 {
        out.push(vec![(Tone::Warn, one_line(keys))]);
        for l in wrap(
            &[vec![(Tone::Plain, format!("  {desc}"))]],
            key_w + 2 + desc_w,
        ) {
            out.push(l);
        }
        return;
    }
    let rows = wrap(&[vec![(Tone::Plain, desc.to_string())]], desc_w);
    for (i, r) in rows.into_iter().enumerate() {
        let lead = if i == 0 {
            // Keys can come from the config file: sanitised like any other text.
            (Tone::Warn, pad(&one_line(keys), key_w + 2))
        } else {
            (Tone::Plain, " ".repeat(key_w + 2))
        };
        let mut l = vec![lead];
        l.extend(r);
        out.push(l);
    }
}

/// The message log, newest first, each message in full (wrapped under its bullet).
fn log_lines(app: &App, avail_w: usize) -> Vec<DocLine> {
    if app.log.is_empty() {
        return vec![vec![(Tone::Dim, "no messages yet".into())]];
    }
    let width = avail_w.saturating_sub(2).clamp(1, 100);
    let mut out = Vec::new();
    for m in app.log.iter().rev() {
        let rows = wrap(&[vec![(Tone::Plain, one_line(m))]], width);
        for (i, r) in rows.into_iter().enumerate() {
            let mut l = vec![(Tone::Dim, if i == 0 { "· " } else { "  " }.to_string())];
            l.extend(r);
            out.push(l);
        }
    }
    out
}
