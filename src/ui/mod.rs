//! Drawing: `draw(frame, app, theme)` paints the sidebar, pane, status bar and help from the
//! app state. Widgets only read state (the matcher is borrowed mutably for highlights).

pub mod dialog;
pub mod help;
pub mod pane;
pub mod results;
pub mod sidebar;
pub mod status;
pub mod theme;

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::Span;
use ratatui::widgets::{Block, Borders, Clear};
use unicode_width::UnicodeWidthStr;

use crate::app::App;
pub use theme::Theme;

/// Paint one frame.
pub fn draw(frame: &mut Frame, app: &mut App, theme: &Theme) {
    let size = frame.area();
    if app.size != (size.width, size.height) {
        app.size = (size.width, size.height);
        app.layout();
    }
    let a = app.areas();
    frame.render_widget(Block::new().style(theme.base), size);
    if app.text.is_some() {
        results::draw_query(frame, app, theme, a.search);
        results::draw_rows(frame, app, theme, a.list);
    } else {
        sidebar::draw_search(frame, app, theme, a.search);
        sidebar::draw_inbox_head(frame, app, theme, a.inbox);
        sidebar::draw_list(frame, app, theme, a.list);
    }
    if a.divider.width > 0 {
        frame.render_widget(
            Block::new()
                .borders(Borders::LEFT)
                .border_style(theme.border),
            a.divider,
        );
    }
    pane::draw(frame, app, theme, &a);
    status::draw(frame, app, theme, a.status);
    dialog::draw(frame, app, theme, size, &a);
    if let Some(o) = app.overlay {
        help::draw(frame, app, theme, o);
    }
}

/// Spans for `text` with the chars at `hl` (char indices, sorted) in `hit` style.
pub fn highlighted(text: &str, hl: &[usize], base: Style, hit: Style) -> Vec<Span<'static>> {
    let mut spans: Vec<Span<'static>> = Vec::new();
    let mut cur = String::new();
    let mut cur_hit = false;
    let mut it = hl.iter().peekable();
    for (i, c) in text.chars().enumerate() {
        let h = if it.peek() == Some(&&i) {
            it.next();
            true
        } else {
            false
        };
        if h != cur_hit && !cur.is_empty() {
            let st = if cur_hit { hit } else { base };
            spans.push(Span::styled(std::mem::take(&mut cur), st));
        }
        cur_hit = h;
        cur.push(c);
    }
    if !cur.is_empty() {
        spans.push(Span::styled(cur, if cur_hit { hit } else { base }));
    }
    spans
}

/// Clear `area`, and blank a wide character that straddles its left edge (its second half
/// is under the box; left alone, the terminal would draw it over the border).
pub(crate) fn clear(frame: &mut Frame, area: Rect) {
    frame.render_widget(Clear, area);
    if area.x == 0 {
        return;
    }
    let buf = frame.buffer_mut();
    for y in area.y..area.y + area.height {
        let cell = &mut buf[(area.x - 1, y)];
        if cell.symbol().width() > 1 {
            cell.set_symbol(" ");
        }
    }
}
