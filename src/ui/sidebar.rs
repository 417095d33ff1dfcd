//! The sidebar: the search box and the session list. A row is two lines: the title line
//! (selection bar, unread or error mark, pin mark, highlighted title, age) and the detail
//! line (the summary or first prompt, dimmed, with the query's hits, or for a fork `↳` and
//! its parent's title; then badges, project and store on the right).

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use unicode_width::UnicodeWidthStr;

use super::dialog::field;
use super::{Theme, highlighted};
use crate::app::Slot;
use crate::app::{App, Focus, ROW_H, age};
use crate::model::{Ended, SessionSummary};
use crate::search::line_matches;
use crate::text::{fit, one_line};

/// Columns before the title: selection bar, mark, pin, space.
const GUTTER: usize = 4;

pub fn draw_search(frame: &mut Frame, app: &App, theme: &Theme, area: Rect) {
    if area.width == 0 || area.height == 0 {
        return;
    }
    let w = area.width as usize;
    let focused = app.focus == Focus::Search;
    if !focused && app.query.is_empty() {
        let line = Line::from(Span::styled(fit("/ search   ? help", w), theme.dim));
        frame.render_widget(Paragraph::new(line), area);
        return;
    }
    let count = format!(" {}", app.list.len());
    let prompt_style = if focused {
        theme.focus_title
    } else {
        theme.matched
    };
    let field_w = w.saturating_sub(2 + count.width());
    let line = Line::from(vec![
        Span::styled("/ ", prompt_style),
        Span::raw(" ".repeat(field_w)),
        Span::styled(count, theme.dim),
    ]);
    frame.render_widget(Paragraph::new(line), area);
    let field_area = Rect::new(area.x + 2, area.y, field_w as u16, 1);
    if focused {
        field(frame, theme.base, field_area, &app.query);
    } else {
        let q = fit(&one_line(&app.query.text()), field_w);
        frame.render_widget(Paragraph::new(Span::styled(q, theme.base)), field_area);
    }
}

/// The inbox's headings with their counts, above the list while the inbox is shown.
pub fn draw_inbox_head(frame: &mut Frame, app: &App, theme: &Theme, area: Rect) {
    if area.width == 0 || area.height == 0 {
        return;
    }
    let rows = app.list.all_rows().filter(|s| app.list.filter.accepts(s));
    let mut spans = vec![Span::styled("inbox", theme.focus_title)];
    for (e, n) in crate::inbox::counts(rows) {
        spans.push(Span::raw("  "));
        spans.push(Span::styled(
            format!("{}{n} {}", e.glyph(), e.as_str()),
            ended_style(theme, e),
        ));
    }
    let used: usize = spans.iter().map(|s| s.width()).sum();
    if used > area.width as usize {
        let text: String = spans.iter().map(|s| s.content.as_ref()).collect();
        spans = vec![Span::styled(fit(&text, area.width as usize), theme.dim)];
    }
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}

pub fn draw_list(frame: &mut Frame, app: &mut App, theme: &Theme, area: Rect) {
    if area.width == 0 || area.height == 0 {
        return;
    }
    let rows = (area.height / ROW_H) as usize;
    if app.list.is_empty() {
        let lines = empty_message(app, theme, area.width as usize);
        frame.render_widget(Paragraph::new(lines), area);
        return;
    }
    let slots = app.list.slots(app.list.offset, rows);
    let w = area.width as usize;
    for (i, slot) in slots.into_iter().enumerate() {
        let (row, key) = match slot {
            Slot::Row(row, key) => (row, key),
            Slot::Heading(e, n) => {
                draw_heading(frame, theme, area, i, e, n);
                continue;
            }
        };
        let Some(s) = app.list.get(&key).cloned() else {
            continue;
        };
        let selected = row == app.list.cursor;
        let (row_area, bg, bar) = row_marks(app, theme, area, i, selected);
        let l1 = title_line(app, theme, &s, bar.clone(), w);
        let mut l2 = vec![bar, Span::raw("   ")];
        if let (true, Some(err)) = (selected, &s.error()) {
            l2.push(Span::styled(
                fit(&one_line(err), w.saturating_sub(GUTTER)),
                theme.error,
            ));
        } else {
            l2.extend(detail_line(app, theme, &s, w.saturating_sub(GUTTER)));
        }
        let para = Paragraph::new(vec![Line::from(l1), Line::from(l2)]).style(bg);
        frame.render_widget(para, row_area);
    }
}

/// An inbox group's heading in a row's place: the ending with its glyph and count, over a
/// rule that separates it from the rows under it.
fn draw_heading(frame: &mut Frame, theme: &Theme, area: Rect, slot: usize, e: Ended, n: usize) {
    let row_area = slot_area(area, slot);
    let w = area.width as usize;
    let head = fit(&format!(" {} {} · {n}", e.glyph(), e.as_str()), w);
    let rule = "─".repeat(w.saturating_sub(2));
    let lines = vec![
        Line::from(Span::styled(
            head,
            ended_style(theme, e).add_modifier(Modifier::BOLD),
        )),
        Line::from(Span::styled(format!(" {rule}"), theme.dim)),
    ];
    frame.render_widget(Paragraph::new(lines), row_area);
}

fn title_line<'a>(
    app: &mut App,
    theme: &Theme,
    s: &SessionSummary,
    bar: Span<'a>,
    w: usize,
) -> Vec<Span<'a>> {
    let title = one_line(&s.display_title());
    let age = age(app.now, s.last_activity());
    let mark = if s.error().is_some() {
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
    let shown = fit(&title, w.saturating_sub(GUTTER + age.width() + 1));
    let cut = shown.chars().count();
    let hl: Vec<usize> = app
        .list
        .highlight(&title)
        .into_iter()
        .filter(|&c| c < cut)
        .collect();
    let title_style = if s.error().is_some() {
        theme.error
    } else {
        theme.title
    };
    let mut l1 = vec![bar, mark, pin, Span::raw(" ")];
    l1.extend(highlighted(&shown, &hl, title_style, theme.matched));
    let pad = w.saturating_sub(GUTTER + shown.width() + age.width());
    l1.push(Span::raw(" ".repeat(pad)));
    l1.push(Span::styled(age, theme.dim));
    l1
}

/// The detail line after the gutter, `w` columns: what the session is about on the left
/// (cut first), badges, project and store on the right (kept).
fn detail_line(app: &App, theme: &Theme, s: &SessionSummary, w: usize) -> Vec<Span<'static>> {
    let store = format!("[{}]", s.store);
    // The ending comes first on the left, where the summary would start.
    let mark = s
        .ended
        .map(|e| (e, one_line(&format!("{} {}", e.glyph(), e.as_str()))));
    let mark_w = mark.as_ref().map_or(0, |(_, m)| m.width() + 1);
    let mut extra: Vec<String> = Vec::new();
    if s.error().is_some() {
        extra.push("error".into());
    }
    if s.archived {
        extra.push("archived".into());
    }
    extra.extend(s.badges().map(one_line));
    // What stays when the row is narrow, most telling first: the store, the ending, the
    // badges (a subagent count, unreadable lines), then the project, then the summary
    // (ten columns of it, or two beside an ending, which already says how it stands). The
    // project yields to the badges, not the reverse: it is in the pane's header anyway,
    // and the ending's word would otherwise squeeze a badge out of the row entirely.
    let summary_min = if mark.is_some() { 2 } else { 10 };
    let fixed = store.width() + 1 + mark_w + summary_min;
    let extra = if extra.is_empty() {
        String::new()
    } else {
        fit(&extra.join(", "), w.saturating_sub(fixed))
    };
    let extra_w = if extra.is_empty() {
        0
    } else {
        extra.width() + 1
    };
    let project_room = w.saturating_sub(fixed + extra_w + 1);
    let project = if project_room < 4 {
        String::new()
    } else {
        fit(&one_line(s.project()), (w / 3).max(8).min(project_room))
    };
    let right_w = store.width()
        + extra_w
        + if project.is_empty() {
            0
        } else {
            project.width() + 1
        };
    let mut left_w = w.saturating_sub(right_w + 1);
    let mut spans = Vec::new();
    if let Some((e, m)) = mark.filter(|_| left_w > mark_w) {
        left_w -= mark_w;
        spans.push(Span::styled(m, ended_style(theme, e)));
        spans.push(Span::raw(" "));
    }
    spans.extend(about(app, theme, s, left_w));
    let used: usize = spans.iter().map(|sp| sp.width()).sum();
    spans.push(Span::raw(" ".repeat(w.saturating_sub(used + right_w))));
    if !extra.is_empty() {
        let st = if s.error().is_some() {
            theme.error
        } else {
            theme.warn
        };
        spans.push(Span::styled(extra, st));
        spans.push(Span::raw(" "));
    }
    if !project.is_empty() {
        spans.push(Span::styled(project, theme.dim));
        spans.push(Span::raw(" "));
    }
    spans.push(Span::styled(store, theme.store(s.store)));
    spans
}

/// How the detail line shows an ending: what needs the user stands out, the rest is dim.
pub(super) fn ended_style(theme: &Theme, e: crate::model::Ended) -> Style {
    use crate::model::Ended;
    match e {
        Ended::Waiting => theme.unread,
        Ended::Errored => theme.error,
        Ended::Interrupted => theme.warn,
        Ended::Running => theme.matched,
        Ended::Done => theme.dim,
    }
}

/// What the session is about, at most `w` columns: for a fork `↳` and the parent's title;
/// else the summary, else the first prompt, with the query's hits highlighted (the text is
/// shifted to show the first hit when it would be cut off).
fn about(app: &App, theme: &Theme, s: &SessionSummary, w: usize) -> Vec<Span<'static>> {
    if w < 4 {
        return Vec::new();
    }
    if let Some(parent) = &s.forked_from() {
        let name = s
            .parent_key()
            .and_then(|k| app.list.get(&k))
            .map(|p| p.display_title())
            .unwrap_or_else(|| format!("fork of {parent}"));
        return vec![
            Span::styled("↳ ", theme.pointer),
            Span::styled(fit(&one_line(&name), w - 2), theme.dim),
        ];
    }
    // The summary, else the first prompt; but the prompt when only it has the query's hits,
    // so a row matched through its prompt shows why.
    let summary = one_line(s.summary());
    let prompt = one_line(s.first_prompt());
    let q = app.list.query();
    let (mut text, mut hl) = match line_matches(q, &summary) {
        hl if !hl.is_empty() || summary.is_empty() && prompt.is_empty() => (summary, hl),
        _ => {
            let phl = line_matches(q, &prompt);
            if summary.is_empty() || !phl.is_empty() {
                (prompt, phl)
            } else {
                (summary, Vec::new())
            }
        }
    };
    if text.is_empty() {
        return Vec::new();
    }
    if let Some(&first) = hl.first() {
        let head: String = text.chars().take(first + 1).collect();
        if head.width() + 2 > w {
            // Start a little before the hit so it is seen with some context.
            let skip = first.saturating_sub((w / 4).min(6));
            text = format!("…{}", text.chars().skip(skip).collect::<String>());
            hl = hl
                .into_iter()
                .filter(|&i| i >= skip)
                .map(|i| i - skip + 1)
                .collect();
        }
    }
    let shown = fit(&text, w);
    let cut = shown.chars().count();
    hl.retain(|&i| i < cut);
    highlighted(&shown, &hl, theme.dim, theme.matched)
}

/// What an empty list says: still reading, no matches (and how to clear), nothing in this
/// view (and which filters hide rows), or no sessions at all (where spool looked, and the
/// demo).
fn empty_message(app: &App, theme: &Theme, w: usize) -> Vec<Line<'static>> {
    let line = |s: String, st: Style| Line::styled(fit(&s, w), st);
    // Only while the stores are listed: the index's progress is no reason to doubt an empty
    // match, and saying so until the build ended changed the screen long after the key
    // (issue 8: keys typed during the build settled up to 300 ms late).
    if app.reading_stores() {
        return vec![line(" reading sessions…".into(), theme.dim)];
    }
    if !app.list.query().is_empty() {
        return vec![
            line(" no matches".into(), theme.dim),
            line(" esc clears the search".into(), theme.dim),
        ];
    }
    if app.list.inbox {
        return vec![
            line(
                " nothing is waiting, errored or interrupted".into(),
                theme.dim,
            ),
            line(" i shows every session".into(), theme.dim),
        ];
    }
    if app.list.total_rows() > 0 {
        return vec![
            line(" no sessions in this view".into(), theme.dim),
            line(
                " E empty · . archived · c project · F store".into(),
                theme.dim,
            ),
        ];
    }
    let mut v = vec![line(" no sessions found in:".into(), theme.base)];
    for d in &app.searched {
        v.push(line(format!("   {}", one_line(d)), theme.dim));
    }
    v.push(Line::default());
    v.push(line(
        " try `spool --demo` for a sample store".into(),
        theme.base,
    ));
    v
}

/// Where the `slot`th visible two-line row goes, its background and its gutter bar: the
/// session list and the text-search results mark the selection the same way.
pub(super) fn row_marks(
    app: &App,
    theme: &Theme,
    area: Rect,
    slot: usize,
    selected: bool,
) -> (Rect, Style, Span<'static>) {
    let row_area = slot_area(area, slot);
    let bg = match (selected, app.focus) {
        (false, _) => Style::new(),
        (true, Focus::Pane) => theme.selected_idle,
        (true, _) => theme.selected,
    };
    let bar = if selected {
        Span::styled("▌", theme.pointer)
    } else {
        Span::raw(" ")
    };
    (row_area, bg, bar)
}

/// The area of slot `slot` (a row or a heading) in the list `area`.
fn slot_area(area: Rect, slot: usize) -> Rect {
    let y = area.y + (slot as u16) * ROW_H;
    Rect::new(area.x, y, area.width, ROW_H.min(area.y + area.height - y))
}
