//! The dialogs: the delete confirmation and the export dialog as centred boxes, the rename
//! prompt inline in the status bar. Text fields scroll sideways to keep the cursor in view,
//! and the terminal cursor is put where typing goes.

use ratatui::Frame;
use ratatui::layout::{Position, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph};
use unicode_width::UnicodeWidthStr;

use super::{Theme, clear};
use crate::app::dialog::{Dialog, LineInput, delete_action, delete_note};
use crate::app::{App, Areas};
use crate::export::Format;
use crate::text::fit;
use crate::text::{one_line, sanitize};

pub fn draw(frame: &mut Frame, app: &App, theme: &Theme, screen: Rect, areas: &Areas) {
    let Some(d) = &app.dialog else { return };
    match d {
        Dialog::ConfirmDelete { summary } => {
            let title = one_line(&summary.display_title());
            let body = vec![
                Line::from(vec![
                    Span::styled("Delete ", theme.title),
                    Span::styled(summary.reference(), theme.warn),
                    Span::styled("?", theme.title),
                ]),
                Line::from(Span::styled(format!("“{title}”"), theme.base)),
                Line::default(),
                Line::from(Span::styled(delete_note(summary), theme.dim)),
                Line::default(),
                key_hints(
                    theme,
                    &[("y/enter", delete_action(summary)), ("n/esc", "cancel")],
                ),
            ];
            boxed(frame, theme, screen, " delete session ", body, None);
        }
        Dialog::ConfirmResume { summary, lines } => {
            let mut body = vec![
                Line::from(vec![
                    Span::styled("Resume ", theme.title),
                    Span::styled(one_line(&summary.reference()), theme.warn),
                    Span::styled("? Since the session:", theme.title),
                ]),
                Line::default(),
            ];
            for l in lines {
                body.push(Line::from(Span::styled(one_line(l), theme.base)));
            }
            body.push(Line::default());
            body.push(key_hints(
                theme,
                &[("y/enter", "resume anyway"), ("n/esc", "cancel")],
            ));
            boxed(frame, theme, screen, " before resume ", body, None);
        }
        Dialog::ConfirmUnarchive { summary, op } => {
            let what = if *op == crate::app::SessionOp::Fork {
                "fork"
            } else {
                "resume"
            };
            let body = vec![
                Line::from(vec![
                    Span::styled(summary.reference(), theme.warn),
                    Span::styled(" is archived in Codex.", theme.title),
                ]),
                Line::from(Span::styled(
                    format!("“{}”", one_line(&summary.display_title())),
                    theme.base,
                )),
                Line::default(),
                Line::from(Span::styled(
                    format!("Codex must run `codex unarchive` before it can {what} it."),
                    theme.dim,
                )),
                Line::from(Span::styled(
                    "That write is made by Codex, not by spool.",
                    theme.dim,
                )),
                Line::default(),
                key_hints(
                    theme,
                    &[("y/enter", "unarchive, then continue"), ("n/esc", "cancel")],
                ),
            ];
            boxed(frame, theme, screen, " archived in Codex ", body, None);
        }
        Dialog::Export {
            summary,
            format,
            path,
        } => {
            let mut fmt = vec![Span::styled("format  ", theme.dim)];
            for (f, label) in [
                (Format::Markdown, "Markdown"),
                (Format::Html, "HTML"),
                (Format::Json, "JSON"),
            ] {
                if f == *format {
                    fmt.push(Span::styled(format!("[{label}]"), theme.matched));
                } else {
                    fmt.push(Span::styled(format!(" {label} "), theme.base));
                }
                fmt.push(Span::raw(" "));
            }
            fmt.push(Span::styled("(tab)", theme.dim));
            let body = vec![
                Line::from(vec![
                    Span::styled("Export ", theme.title),
                    Span::styled(summary.reference(), theme.warn),
                ]),
                Line::default(),
                Line::from(fmt),
                Line::from(Span::styled("file", theme.dim)),
                // The field row (index 4) is drawn over by `field`.
                Line::default(),
                Line::default(),
                Line::from(Span::styled(
                    "never overwrites an existing file; written with mode 0600",
                    theme.dim,
                )),
                key_hints(
                    theme,
                    &[("enter", "write"), ("tab", "format"), ("esc", "cancel")],
                ),
            ];
            boxed(frame, theme, screen, " export ", body, Some((4, path)));
        }
        Dialog::Rename { summary, input } => {
            let area = areas.status;
            if area.height == 0 {
                return;
            }
            let label = format!(" rename {}: ", summary.reference());
            let label = fit(&label, (area.width as usize) / 2);
            let lw = label.width() as u16;
            clear(frame, area);
            frame.render_widget(
                Paragraph::new(Line::from(Span::styled(label, theme.title))).style(theme.status),
                area,
            );
            let hint = "  enter save · esc cancel ";
            let hw = if area.width as usize > lw as usize + hint.width() + 10 {
                hint.width() as u16
            } else {
                0
            };
            let field_area = Rect::new(area.x + lw, area.y, area.width.saturating_sub(lw + hw), 1);
            field(frame, theme.title.patch(theme.selected), field_area, input);
            if hw > 0 {
                frame.render_widget(
                    Paragraph::new(Span::styled(hint, theme.dim)).style(theme.status),
                    Rect::new(area.x + area.width - hw, area.y, hw, 1),
                );
            }
        }
    }
}

/// `key what · key what`: keys highlighted (alternatives joined by a dim `/`).
fn key_hints<'a>(theme: &Theme, hints: &[(&'a str, &'a str)]) -> Line<'a> {
    let mut spans = Vec::new();
    for (i, (keys, what)) in hints.iter().enumerate() {
        if i > 0 {
            spans.push(Span::styled(" · ", theme.base));
        }
        for (j, k) in keys.split('/').enumerate() {
            if j > 0 {
                spans.push(Span::styled("/", theme.dim));
            }
            spans.push(Span::styled(k, theme.matched));
        }
        spans.push(Span::styled(format!(" {what}"), theme.base));
    }
    Line::from(spans)
}

/// A centred box with `body`; `input` = (body row, field) draws a text field on that row.
fn boxed(
    frame: &mut Frame,
    theme: &Theme,
    screen: Rect,
    title: &str,
    body: Vec<Line<'_>>,
    input: Option<(u16, &LineInput)>,
) {
    let want = body.iter().map(Line::width).max().unwrap_or(0) as u16 + 4;
    let w = want.clamp(40.min(screen.width), 72.min(screen.width));
    let h = (body.len() as u16 + 2).min(screen.height);
    let area = Rect::new(
        screen.x + (screen.width - w) / 2,
        screen.y + (screen.height - h) / 2,
        w,
        h,
    );
    clear(frame, area);
    let block = Block::new()
        .borders(Borders::ALL)
        .border_style(theme.border)
        .title(title.to_string());
    let inner = block.inner(area);
    let inner_w = inner.width.saturating_sub(2) as usize;
    let body: Vec<Line> = body
        .into_iter()
        .map(|l| {
            // Cut long lines (titles, paths) to the box.
            if l.width() > inner_w {
                let text: String = l.spans.iter().map(|s| s.content.as_ref()).collect();
                Line::from(Span::styled(fit(&text, inner_w), theme.base))
            } else {
                l
            }
        })
        .collect();
    frame.render_widget(
        Paragraph::new(body)
            .block(block.padding(ratatui::widgets::Padding::horizontal(1)))
            .style(theme.base),
        area,
    );
    if let Some((row, i)) = input
        && row < inner.height
    {
        let r = Rect::new(inner.x + 1, inner.y + row, inner.width.saturating_sub(2), 1);
        field(frame, theme.title.patch(theme.selected), r, i);
    }
}

/// One text field (the dialogs' and the search box): sanitised per character, scrolled so
/// the cursor stays visible, drawn in `style`; puts the terminal cursor there.
pub(crate) fn field(frame: &mut Frame, style: Style, area: Rect, input: &LineInput) {
    if area.width == 0 {
        return;
    }
    let text = input.text();
    let cells: Vec<String> = text.chars().map(|c| sanitize(&c.to_string())).collect();
    let widths: Vec<usize> = cells.iter().map(|c| c.width()).collect();
    let avail = area.width as usize - 1; // room for the cursor after the last char
    let cur = input.cursor().min(cells.len());
    // First char shown: as far left as possible while the cursor fits.
    let mut start = 0;
    while widths[start..cur].iter().sum::<usize>() > avail {
        start += 1;
    }
    let mut shown = String::new();
    let mut used = 0;
    for (c, w) in cells[start..].iter().zip(&widths[start..]) {
        if used + w > avail + 1 {
            break;
        }
        shown.push_str(c);
        used += w;
    }
    let col: usize = widths[start..cur].iter().sum();
    frame.render_widget(
        Paragraph::new(Span::styled(shown, style)).style(style),
        area,
    );
    frame.set_cursor_position(Position::new(area.x + col as u16, area.y));
}
