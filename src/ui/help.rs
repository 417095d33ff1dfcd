//! The help overlay: every binding of the keymap, in as many columns as the screen needs.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};

use super::{Theme, fit};
use crate::app::App;

pub fn draw(frame: &mut Frame, app: &App, theme: &Theme, screen: Rect) {
    let rows = app.keymap.help_rows();
    let inner_h = screen.height.saturating_sub(4).max(1) as usize;
    let cols = rows.len().div_ceil(inner_h).max(1);
    let per_col = rows.len().div_ceil(cols);
    let col_w = 40usize.min((screen.width as usize).saturating_sub(4) / cols);
    let key_w = 13usize.min(col_w / 3);
    let w = (col_w * cols + 2).min(screen.width as usize) as u16;
    let h = (per_col + 2).min(screen.height as usize) as u16;
    let area = Rect::new(
        screen.x + (screen.width - w) / 2,
        screen.y + (screen.height - h) / 2,
        w,
        h,
    );
    let mut lines: Vec<Line> = Vec::new();
    for r in 0..per_col {
        let mut spans = Vec::new();
        for c in 0..cols {
            if let Some((keys, desc)) = rows.get(c * per_col + r) {
                let k = fit(keys, key_w);
                spans.push(Span::styled(format!("{k:<key_w$} "), theme.matched));
                // One column of space after each description keeps the columns apart.
                let dw = col_w.saturating_sub(key_w + 2);
                let d = fit(desc, dw);
                spans.push(Span::styled(format!("{d:<dw$} "), theme.base));
            }
        }
        lines.push(Line::from(spans));
    }
    frame.render_widget(Clear, area);
    let block = Block::new()
        .borders(Borders::ALL)
        .border_style(theme.border)
        .title(" keys (esc closes) ");
    frame.render_widget(Paragraph::new(lines).block(block).style(theme.base), area);
}
