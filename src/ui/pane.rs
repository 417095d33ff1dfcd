//! The pane: a header about the session and the visible slice of its transcript, window or
//! raw records (wrapped lines come from the app's cache; only the visible slice is drawn).

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Paragraph};
use unicode_width::UnicodeWidthStr;

use super::Theme;
use crate::app::pane::Content;
use crate::app::{App, Focus, View};
use crate::text::{fit, one_line, plural};

pub fn draw(frame: &mut Frame, app: &App, theme: &Theme, a: &crate::app::Areas) {
    let (header, body) = (a.header, a.body);
    if header.width == 0 {
        return;
    }
    draw_header(frame, app, theme, header);
    draw_card(frame, app, theme, a.card);
    if body.height == 0 {
        return;
    }
    let p = &app.pane;
    if p.key.is_none() {
        return;
    }
    if matches!(p.content, Content::Empty) {
        let msg = if p.loading { " loading…" } else { "" };
        frame.render_widget(Paragraph::new(Line::styled(msg, theme.dim)), body);
        return;
    }
    let lines: Vec<Line> = p
        .visible(body.height as usize)
        .iter()
        .map(|l| {
            Line::from(
                l.iter()
                    .map(|(t, s)| Span::styled(s.clone(), theme.tone(*t)))
                    .collect::<Vec<_>>(),
            )
        })
        .collect();
    frame.render_widget(Paragraph::new(lines), body);
}

/// The "left off" card, each line cut to the width; a card taller than its area ends in a
/// line that says how to fold it.
fn draw_card(frame: &mut Frame, app: &App, theme: &Theme, area: Rect) {
    if area.height == 0 || area.width == 0 {
        return;
    }
    let w = area.width as usize;
    let card = &app.pane.card;
    let h = area.height as usize;
    let cut = card.len() > h;
    let shown = if cut { h - 1 } else { h };
    let mut lines: Vec<Line> = card
        .iter()
        .take(shown)
        .map(|l| {
            let mut left = w;
            let spans: Vec<Span> = l
                .iter()
                .map(|(t, s)| {
                    let piece = fit(s, left);
                    left = left.saturating_sub(piece.width());
                    Span::styled(piece, theme.tone(*t))
                })
                .collect();
            Line::from(spans)
        })
        .collect();
    if cut {
        let more = card.len() - shown;
        lines.push(Line::styled(
            fit(&format!("  … {more} more lines (l folds the card)"), w),
            theme.dim,
        ));
    }
    frame.render_widget(Paragraph::new(lines), area);
}

fn draw_header(frame: &mut Frame, app: &App, theme: &Theme, area: Rect) {
    let w = area.width as usize;
    // Focus shows as an accented, heavier rule and an accented title, not weight alone.
    let focused = matches!(app.focus, Focus::Pane | Focus::Find);
    let block = if focused {
        Block::new()
            .borders(Borders::BOTTOM)
            .border_type(BorderType::Thick)
            .border_style(theme.border_focus)
    } else {
        Block::new()
            .borders(Borders::BOTTOM)
            .border_style(theme.border)
    };
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let Some(s) = app.pane_summary() else {
        // A text search with no result empties the pane: say why it is empty.
        let msg = match &app.text {
            Some(t) if !t.searching && t.hits.is_empty() => "no result to show",
            _ => "no session selected",
        };
        frame.render_widget(Paragraph::new(Line::styled(fit(msg, w), theme.dim)), inner);
        return;
    };
    let views = [View::Transcript, View::Window, View::Raw]
        .iter()
        .flat_map(|v| {
            let st = if *v == app.pane.view {
                theme.matched
            } else {
                theme.dim
            };
            [Span::styled(v.label(), st), Span::raw(" ")]
        })
        .collect::<Vec<_>>();
    let views_w: usize = views.iter().map(|s| s.width()).sum();
    let title = fit(&one_line(&s.display_title()), w.saturating_sub(views_w + 1));
    // Pad by terminal columns: a CJK or emoji title is wider than its char count.
    let pad = w.saturating_sub(title.width() + views_w);
    let title_style = if focused {
        theme.focus_title
    } else {
        theme.title
    };
    let mut l0 = vec![Span::styled(title, title_style), Span::raw(" ".repeat(pad))];
    l0.extend(views);

    let mut l1 = vec![
        Span::styled(format!("{} ", s.store), theme.store(s.store)),
        Span::styled(one_line(&s.id), theme.base),
    ];
    if let Some(m) = &s.model {
        l1.push(Span::styled(format!(" · {}", one_line(m)), theme.dim));
    }
    if let Some(f) = &s.forked_from() {
        l1.push(Span::styled(
            format!(" · forked from {}", one_line(f)),
            theme.dim,
        ));
    }
    let cwd = s.cwd.as_deref().map(one_line).unwrap_or_else(|| "-".into());
    let l2 = Line::styled(fit(&format!("cwd {cwd}"), w), theme.dim);
    // The same precision and zone as the message headings below.
    let t = |x| app.pane.time.or_dash(x);
    let mut l3 = format!(
        "created {} · updated {} · {}",
        t(s.created_at),
        t(s.updated_at),
        plural(s.messages, "message", "messages")
    );
    if let Content::Transcript(tr) = &app.pane.content
        && tr.first_round > 0
    {
        l3.push_str(&format!(
            " · rounds {}–{}",
            tr.first_round + 1,
            tr.total_rounds
        ));
    }
    // The window's size stays in view wherever the pane is scrolled.
    if let Content::Window(win) = &app.pane.content {
        let virt = win.messages.iter().filter(|m| m.is_virtual).count();
        l3 = format!(
            "context window · ~{} tokens · {} ({virt} inserted by replay)",
            win.estimated_tokens(),
            plural(win.len() as u64, "message", "messages")
        );
    }
    let l3 = match &s.error() {
        Some(e) => Line::styled(fit(&format!("error: {}", one_line(e)), w), theme.error),
        None => Line::styled(fit(&l3, w), theme.dim),
    };
    frame.render_widget(
        Paragraph::new(vec![Line::from(l0), Line::from(l1), l2, l3]),
        inner,
    );
}
