//! The overlays (help and the message log): a box sized to its content, the visible slice of
//! its lines, and a scroll indicator on the bottom border when it does not fit. The layout
//! itself comes from `app::overlay`, so scrolling and drawing agree.

use ratatui::Frame;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Padding, Paragraph};

use super::{Theme, clear};
use crate::app::App;
use crate::app::overlay::{self, Overlay};

pub fn draw(frame: &mut Frame, app: &App, theme: &Theme, o: Overlay) {
    let l = overlay::layout(app, o);
    let scroll = app.overlay_scroll.min(l.max_scroll());
    let lines: Vec<Line> = l.lines[scroll..(scroll + l.visible).min(l.lines.len())]
        .iter()
        .map(|dl| {
            Line::from(
                dl.iter()
                    .map(|(t, s)| Span::styled(s.clone(), theme.tone(*t)))
                    .collect::<Vec<_>>(),
            )
        })
        .collect();
    let mut block = Block::new()
        .borders(Borders::ALL)
        .border_style(theme.border_focus)
        .title(Span::styled(l.title.clone(), theme.focus_title))
        .padding(Padding::horizontal(1));
    if l.max_scroll() > 0 {
        let more = if scroll < l.max_scroll() {
            "↓ more"
        } else {
            "end"
        };
        let info = format!(
            " {}–{} of {} · {more} · j/k ",
            scroll + 1,
            scroll + lines.len(),
            l.lines.len()
        );
        block =
            block.title_bottom(Line::from(Span::styled(info, theme.focus_title)).right_aligned());
    }
    clear(frame, l.area);
    frame.render_widget(Paragraph::new(lines).block(block).style(theme.base), l.area);
}
