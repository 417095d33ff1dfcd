//! The status bar: key hints or the last message on the left, loading progress, and the
//! active filters with the row count on the right.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use unicode_width::UnicodeWidthStr;

use super::Theme;
use crate::app::{App, Focus, thousands};
use crate::text::fit;
use crate::text::one_line;

pub fn draw(frame: &mut Frame, app: &App, theme: &Theme, area: Rect) {
    if area.height == 0 {
        return;
    }
    let w = area.width as usize;
    let f = &app.list.filter;
    let n = app.list.count();
    let noun = if n == 1 { "session" } else { "sessions" };
    let mut right = vec![format!("{} {noun}", thousands(n))];
    // The index's progress sits beside the count, not in place of the key hints: there it
    // came and went with no key pressed (the build starting, ending, or a status message
    // expiring), and the hints it replaced are what a user typing during a build reads.
    if !app.reading_stores()
        && let Some(i) = app.indexing_text()
    {
        right.insert(0, i);
    }
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
    let room = w.saturating_sub(right.width());
    // The result of the last action wins over loading progress: it answers a key press.
    // One cut off says where to read it whole.
    // The find box sits where `less` has it: the bottom line.
    let left = if app.focus == Focus::Find {
        let q = one_line(&app.find_input.text());
        fit(&format!(" /{q}▏"), room)
    } else if let Some(m) = &app.status {
        let m = format!(" {}", one_line(m));
        match app.keymap.key_for("messages") {
            Some(k) if m.width() > room => {
                let more = format!(" · {k} shows all");
                format!("{}{more}", fit(&m, room.saturating_sub(more.width())))
            }
            _ => fit(&m, room),
        }
    } else if app.reading_stores()
        && let Some(l) = app.loading_text()
    {
        fit(&format!(" {l}"), room)
    } else {
        let hints = match app.focus {
            Focus::Search => "type to filter · enter open · esc clear",
            Focus::Text => "type words or \"a phrase\" · enter open at the hit · esc back",
            Focus::Find => "",
            Focus::Pane if app.pane.find.is_active() => {
                "n/N next/previous match · / find · esc clear the highlight · ? help"
            }
            Focus::Pane => "v view · o/O expand one/all · f fork through here · esc back · ? help",
            Focus::List => "enter open · / search · ? help · q quit",
        };
        fit(&format!(" {hints}"), room)
    };
    let pad = w.saturating_sub(left.width() + right.width());
    let line = Line::from(vec![
        Span::raw(left),
        Span::raw(" ".repeat(pad)),
        Span::raw(right),
    ]);
    frame.render_widget(Paragraph::new(line).style(theme.status), area);
}
