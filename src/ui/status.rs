//! The status bar: key hints or the last message on the left, loading progress, and the
//! active filters with the row count on the right.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use unicode_width::UnicodeWidthStr;

use super::{Theme, fit};
use crate::app::{App, Focus, thousands};
use crate::text::one_line;

pub fn draw(frame: &mut Frame, app: &App, theme: &Theme, area: Rect) {
    if area.height == 0 {
        return;
    }
    let w = area.width as usize;
    let f = &app.list.filter;
    let n = app.list.len();
    let noun = if n == 1 { "session" } else { "sessions" };
    let mut right = vec![format!("{} {noun}", thousands(n))];
    if let Some(k) = f.format {
        right.push(k.to_string());
    }
    if f.archived {
        right.push("archived".into());
    }
    if f.empty {
        right.push("+empty".into());
    }
    if f.cwd.is_some() {
        right.push("this project".into());
    }
    let right = format!(" {} ", right.join(" · "));
    // The result of the last action wins over loading progress: it answers a key press.
    let left = if let Some(m) = &app.status {
        one_line(m)
    } else if let Some(l) = app.loading_text() {
        l
    } else {
        match app.focus {
            Focus::Search => "type to filter · enter keep · esc clear".into(),
            Focus::Pane => {
                "v view · o/O expand one/all · f fork through here · esc back · ? help".into()
            }
            Focus::List => "enter open · / search · ? help · q quit".into(),
        }
    };
    let left = fit(&format!(" {left}"), w.saturating_sub(right.width()));
    let pad = w.saturating_sub(left.width() + right.width());
    let line = Line::from(vec![
        Span::raw(left),
        Span::raw(" ".repeat(pad)),
        Span::raw(right),
    ]);
    frame.render_widget(Paragraph::new(line).style(theme.status), area);
}
