//! The text search in the sidebar: its query box, and one two-line row per matching session
//! (title with its hit count and where the best hit is; a snippet around the hit with the
//! matched words highlighted).

use std::ops::Range;

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use unicode_width::UnicodeWidthStr;

use super::Theme;
use super::dialog::field;
use crate::app::{App, Focus, ROW_H, thousands};
use crate::search::index::Hit;
use crate::text::{fit, one_line, plural};

/// Characters of snippet kept before the first highlighted word.
const LEAD: usize = 12;

/// The query box, in the search bar's row.
pub fn draw_query(frame: &mut Frame, app: &App, theme: &Theme, area: Rect) {
    let Some(t) = &app.text else { return };
    if area.width == 0 || area.height == 0 {
        return;
    }
    let w = area.width as usize;
    let focused = app.focus == Focus::Text;
    let count = if t.searching {
        " …".to_string()
    } else {
        format!(" {}", thousands(t.hits.len()))
    };
    let prompt = "text ";
    let field_w = w.saturating_sub(prompt.width() + count.width());
    let style = if focused {
        theme.focus_title
    } else {
        theme.matched
    };
    let line = Line::from(vec![
        Span::styled(prompt, style),
        Span::raw(" ".repeat(field_w)),
        Span::styled(count, theme.dim),
    ]);
    frame.render_widget(Paragraph::new(line), area);
    let field_area = Rect::new(area.x + prompt.width() as u16, area.y, field_w as u16, 1);
    if focused {
        field(frame, theme.base, field_area, &t.input);
    } else {
        let q = fit(&one_line(&t.input.text()), field_w);
        frame.render_widget(Paragraph::new(Span::styled(q, theme.base)), field_area);
    }
}

/// The result rows, in the list's place.
pub fn draw_rows(frame: &mut Frame, app: &App, theme: &Theme, area: Rect) {
    let Some(t) = &app.text else { return };
    if area.width == 0 || area.height == 0 {
        return;
    }
    let w = area.width as usize;
    if t.hits.is_empty() {
        let msg = if t.input.text().trim().is_empty() {
            " words, \"a phrase\", -word to leave out"
        } else if t.searching {
            " searching…"
        } else {
            " no session says that"
        };
        frame.render_widget(Paragraph::new(Line::styled(fit(msg, w), theme.dim)), area);
        return;
    }
    let rows = (area.height / ROW_H) as usize;
    for (i, h) in t.hits.iter().enumerate().skip(t.offset).take(rows) {
        let selected = i == t.cursor;
        let (row_area, bg, bar) =
            super::sidebar::row_marks(app, theme, area, i - t.offset, selected);
        let title = app
            .list
            .get(&h.key)
            .map_or_else(|| h.key.1.clone(), |s| s.display_title());
        let place = format!(" {} · {}", plural(h.hits as u64, "hit", "hits"), where_(h));
        let room = w.saturating_sub(1 + place.width());
        let title = fit(&one_line(&title), room);
        let pad = room.saturating_sub(title.width());
        let l1 = vec![
            bar.clone(),
            Span::styled(title, theme.title),
            Span::raw(" ".repeat(pad)),
            Span::styled(place, theme.dim),
        ];
        let mut l2 = vec![bar, Span::raw(" ")];
        l2.extend(snippet(h, theme, w.saturating_sub(2)));
        let para = Paragraph::new(vec![Line::from(l1), Line::from(l2)]).style(bg);
        frame.render_widget(para, row_area);
    }
}

/// Where the best hit is, numbered as `spool search` does: `#12 round 3`, or `title` when only the
/// title or summary matched.
fn where_(h: &Hit) -> String {
    match (h.message, h.round) {
        (Some(m), Some(r)) => format!("#{m} round {r}"),
        (Some(m), None) => format!("#{m}"),
        _ => "title".into(),
    }
}

/// The snippet from a little before its first highlight, each piece through the sanitiser,
/// the highlights in the match style, cut to `width` columns.
fn snippet(h: &Hit, theme: &Theme, width: usize) -> Vec<Span<'static>> {
    let s = &h.snippet;
    let mut pieces: Vec<(Range<usize>, bool)> = Vec::new();
    let mut at = 0;
    for r in &h.highlights {
        if r.start < at || r.end > s.len() || !s.is_char_boundary(r.start) {
            continue;
        }
        if !s.is_char_boundary(r.end) {
            continue;
        }
        pieces.push((at..r.start, false));
        pieces.push((r.clone(), true));
        at = r.end;
    }
    pieces.push((at..s.len(), false));
    let mut spans = Vec::new();
    let mut left = width;
    for (i, (r, hit)) in pieces.into_iter().enumerate() {
        let raw = &s[r];
        let mut text = one_line(raw);
        // `one_line` trims; the spaces between a piece and a highlight are part of the text.
        if i > 0 && raw.starts_with(char::is_whitespace) {
            text.insert(0, ' ');
        }
        if raw.ends_with(char::is_whitespace) && !text.is_empty() {
            text.push(' ');
        }
        if i == 0 && text.chars().count() > LEAD {
            // Start near the hit, so it is on screen in a narrow sidebar.
            let skip = text.chars().count() - LEAD;
            text = format!("…{}", text.chars().skip(skip).collect::<String>());
        }
        if left == 0 || text.is_empty() {
            continue;
        }
        let piece = fit(&text, left);
        // A cut piece ends in `…`: nothing may follow it.
        left = if piece == text {
            left.saturating_sub(piece.width())
        } else {
            0
        };
        let style = if hit { theme.matched } else { theme.dim };
        spans.push(Span::styled(piece, style));
    }
    spans
}
