//! The sidebar: the search bar and the session list (two lines a row: title line with unread
//! dot, pin mark, highlighted title and age; detail line with project, store and badges).

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use unicode_width::UnicodeWidthStr;

use super::{Theme, fit, highlighted};
use crate::app::{App, Focus, ROW_H, age};
use crate::text::one_line;

pub fn draw_search(frame: &mut Frame, app: &App, theme: &Theme, area: Rect) {
    if area.width == 0 || area.height == 0 {
        return;
    }
    let q = one_line(app.list.query());
    let w = area.width as usize;
    let line = if app.focus == Focus::Search || !q.is_empty() {
        let count = format!(" {}", app.list.len());
        let text = fit(&q, w.saturating_sub(3 + count.width()));
        let cursor_x = area.x + 2 + text.width() as u16;
        if app.focus == Focus::Search && cursor_x < area.x + area.width {
            frame.set_cursor_position((cursor_x, area.y));
        }
        let pad = w.saturating_sub(2 + text.width() + count.width());
        Line::from(vec![
            Span::styled("/ ", theme.matched),
            Span::styled(text, theme.base),
            Span::raw(" ".repeat(pad)),
            Span::styled(count, theme.dim),
        ])
    } else {
        Line::from(Span::styled(fit("/ search   ? help", w), theme.dim))
    };
    frame.render_widget(Paragraph::new(line), area);
}

pub fn draw_list(frame: &mut Frame, app: &mut App, theme: &Theme, area: Rect) {
    if area.width == 0 || area.height == 0 {
        return;
    }
    let rows = (area.height / ROW_H) as usize;
    if app.list.is_empty() {
        let msg = if app.loading_text().is_some() {
            "reading sessions…"
        } else if !app.list.query().is_empty() {
            "no matches"
        } else {
            "no sessions"
        };
        frame.render_widget(
            Paragraph::new(Line::styled(format!(" {msg}"), theme.dim)),
            Rect::new(area.x, area.y, area.width, 1),
        );
        return;
    }
    let keys = app.list.keys(app.list.offset, rows);
    let w = area.width as usize;
    for (i, key) in keys.iter().enumerate() {
        let Some(s) = app.list.get(key).cloned() else {
            continue;
        };
        let selected = app.list.offset + i == app.list.cursor;
        let y = area.y + (i as u16) * ROW_H;
        let row_area = Rect::new(area.x, y, area.width, ROW_H.min(area.y + area.height - y));
        let bg = if selected {
            theme.selected
        } else {
            Style::new()
        };

        let title = one_line(&s.title);
        let age = age(app.now, s.last_activity());
        let mark = if s.error.is_some() {
            Span::styled("✗", theme.error)
        } else if s.unread {
            Span::styled("●", theme.unread)
        } else {
            Span::raw(" ")
        };
        let pin = if s.pinned() {
            Span::styled("◆", theme.pin)
        } else {
            Span::raw(" ")
        };
        let title_w = w.saturating_sub(3 + age.width() + 1);
        let shown = fit(&title, title_w);
        let hl = app.list.highlight(&title);
        let cut = shown.chars().count();
        let hl: Vec<usize> = hl.into_iter().filter(|&c| c < cut).collect();
        let title_style = if s.error.is_some() {
            theme.error
        } else {
            theme.title
        };
        let mut l1 = vec![mark, pin, Span::raw(" ")];
        l1.extend(highlighted(&shown, &hl, title_style, theme.matched));
        let pad = w.saturating_sub(3 + shown.width() + age.width());
        l1.push(Span::raw(" ".repeat(pad)));
        l1.push(Span::styled(age, theme.dim));

        let mut l2 = vec![Span::raw("   ")];
        if let (true, Some(err)) = (selected, &s.error) {
            l2.push(Span::styled(
                fit(&one_line(err), w.saturating_sub(3)),
                theme.error,
            ));
        } else {
            let badge = format!("[{}]", s.store);
            let project = fit(
                &one_line(s.project()),
                w.saturating_sub(4 + badge.len()) / 2 + 4,
            );
            let mut used = 3;
            if !project.is_empty() {
                used += project.width() + 1;
                l2.push(Span::styled(project, theme.dim));
                l2.push(Span::raw(" "));
            }
            used += badge.len();
            l2.push(Span::styled(badge, theme.store(s.store)));
            let mut extra: Vec<String> = Vec::new();
            if s.error.is_some() {
                extra.push("error".into());
            }
            if s.archived {
                extra.push("archived".into());
            }
            extra.extend(s.badges.iter().map(|b| one_line(b)));
            if !extra.is_empty() {
                let t = fit(&format!(" {}", extra.join(", ")), w.saturating_sub(used));
                let st = if s.error.is_some() {
                    theme.error
                } else {
                    theme.warn
                };
                l2.push(Span::styled(t, st));
            }
        }
        let para = Paragraph::new(vec![Line::from(l1), Line::from(l2)]).style(bg);
        frame.render_widget(para, row_area);
    }
}
