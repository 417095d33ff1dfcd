//! Snapshots of the screens issue 7 changed: rows with summaries, forks and one kind of
//! name for unreadable and empty sessions; wide titles in the pane header; the selection
//! and focus in the dark, light and NO_COLOR themes; help and the message log at 140x40,
//! 80x24 and 40x12; the footer with a long message; the empty states; the search cursor.

mod tui_common;

use insta::assert_snapshot;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::style::{Color, Modifier};
use spool::app::{Action, App, Focus, Options, Outcome};
use spool::model::{SessionSummary, StoreKind};
use spool::ui::Theme;
use tui_common::*;

/// The sample plus a summary, a fork, an unreadable Loop session and an empty session in
/// each store (as each store titles it).
fn rich() -> Vec<SessionSummary> {
    let mut v = sample();
    v[2].set_summary("Drafted the notes for 0.4; the migration section still needs numbers.");
    v[4].set_first_prompt("The loader grows by 40 MB an hour when the watcher is on");
    let mut fork = row(StoreKind::Loop, "3f6b9999", "Fix the flaky parser test", 1);
    fork.set_forked_from(Some("loop:3f6b2c1e".into()));
    v.push(fork);
    let mut corrupt = SessionSummary::error_row(
        StoreKind::Loop,
        "c0ffee00",
        "/data/loop/sessions/c0ffee00",
        "messages.jsonl is shorter than meta.json says",
    );
    corrupt.set_title("New session");
    v.push(corrupt);
    for (kind, id, title) in [
        (StoreKind::Loop, "e0e0e0e0", "New session"),
        (StoreKind::Loom, "20260310-080000", "(empty session)"),
        (StoreKind::Harness, "EmptyHarness0001", "EmptyHarness0001"),
    ] {
        let mut s = row(kind, id, title, 6);
        s.has_user_message = false;
        s.set_first_prompt(Box::default());
        v.push(s);
    }
    v
}

fn rich_app() -> App {
    let mut a = app();
    a.update(Action::Rows(rich()));
    a.settle();
    a
}

/// The screen with `^` under the highlighted cells (mono: bold + underline).
fn with_marks(t: &Terminal<TestBackend>) -> String {
    let buf = t.backend().buffer().clone();
    let mut marks = String::new();
    for y in 0..buf.area.height {
        let mut row = String::new();
        for x in 0..buf.area.width {
            let hl = buf[(x, y)]
                .modifier
                .contains(Modifier::UNDERLINED | Modifier::BOLD);
            row.push(if hl { '^' } else { ' ' });
        }
        let row = row.trim_end().to_string();
        if !row.is_empty() {
            marks.push_str(&format!("{y:>2} {row}\n"));
        }
    }
    format!("{}\n{marks}", t.backend())
}

#[test]
fn rows_show_summaries_forks_and_one_kind_of_name_140x40() {
    let mut a = rich_app();
    a.update(Action::ToggleEmpty);
    let s = screen(&mut a, 140, 40);
    assert!(s.contains("    Drafted "), "{s}");
    assert!(s.contains("↳ Fix the flaky parser"), "{s}");
    assert!(s.contains("c0ffee00 — messages.jsonl"), "{s}");
    assert!(
        !s.contains("New session") && !s.contains("(empty session)"),
        "{s}"
    );
    assert_snapshot!(s);
}

#[test]
fn rows_at_80x24_keep_project_store_and_age() {
    let mut a = rich_app();
    let s = screen(&mut a, 80, 24);
    assert!(s.contains("Drafted the notes for 0.4"), "{s}");
    assert_snapshot!(s);
}

#[test]
fn a_summary_hit_is_highlighted_in_the_summary() {
    let mut a = rich_app();
    search(&mut a, "numbers");
    let t = render(&mut a, 140, 8, &Theme::mono());
    let s = with_marks(&t);
    assert!(s.contains("numbers"), "{s}");
    assert_snapshot!(s);
}

#[test]
fn a_prompt_hit_shows_the_prompt_even_when_there_is_a_summary() {
    let mut a = rich_app();
    let mut s = a
        .list
        .get(&(StoreKind::Harness, "Qm3xT8vLk2pR9aZc".into()))
        .cloned()
        .unwrap();
    s.set_first_prompt("Collect the changelog entries since v0.3");
    a.update(Action::Rows(vec![s]));
    search(&mut a, "changelog");
    let t = render(&mut a, 80, 6, &Theme::mono());
    let out = with_marks(&t);
    assert!(out.contains("Collect the changelog"), "{out}");
    assert!(!out.contains("Drafted"), "{out}");
}

#[test]
fn a_wide_title_keeps_the_view_tabs_whole() {
    let mut a = rich_app();
    while !a
        .list
        .selected_summary()
        .unwrap()
        .title()
        .starts_with("日本語")
    {
        a.update(Action::Down);
    }
    let fx = a.update(Action::Open);
    answer(&mut a, &fx);
    assert!(a.pane_summary().unwrap().title().starts_with("日本語"));
    for (w, h) in [(140, 40), (110, 12)] {
        let s = screen(&mut a, w, h);
        assert!(s.contains("transcript window raw"), "{w}x{h}\n{s}");
    }
    assert_snapshot!(screen(&mut a, 110, 12));
}

fn styles(theme: &Theme) -> String {
    let mut a = rich_app();
    a.update(Action::Down);
    let t = render(&mut a, 100, 10, theme);
    format!("{:?}", t.backend().buffer())
}

#[test]
fn theme_dark_selection_and_focus() {
    assert_snapshot!(styles(&Theme::dark()));
}

#[test]
fn theme_light_selection_and_focus() {
    assert_snapshot!(styles(&Theme::light()));
}

#[test]
fn theme_no_color_selection_and_focus() {
    assert_snapshot!(styles(&Theme::mono()));
}

#[test]
fn secondary_text_is_readable_and_the_selection_unmistakable() {
    for (name, theme, bg) in [
        ("dark", Theme::dark(), (40u8, 44u8, 52u8)),
        ("light", Theme::light(), (255, 255, 255)),
    ] {
        let Some(Color::Rgb(r, g, b)) = theme.dim.fg else {
            panic!(
                "{name}: secondary text has no exact colour: {:?}",
                theme.dim
            )
        };
        let lum = |r: u8, g: u8, b: u8| 0.3 * r as f32 + 0.59 * g as f32 + 0.11 * b as f32;
        let contrast = (lum(r, g, b) - lum(bg.0, bg.1, bg.2)).abs();
        assert!(contrast > 90.0, "{name}: dim text contrast {contrast}");
        assert_ne!(
            theme.selected.bg,
            Some(Color::Rgb(40, 44, 52)),
            "{name}: selection must differ from One Dark's background"
        );
    }
    // The gutter bar marks the selected row on both of its lines, colour or not, and moves
    // with focus between a strong and a quiet background.
    let mut a = rich_app();
    a.update(Action::Down);
    let t = render(&mut a, 120, 12, &Theme::mono());
    let buf = t.backend().buffer();
    let sel_y = 1 + 2; // the search line, then the first row
    assert_eq!(buf[(0, sel_y)].symbol(), "▌");
    assert_eq!(buf[(0, sel_y + 1)].symbol(), "▌");
    assert_eq!(buf[(0, 1)].symbol(), " ");
    assert!(buf[(10, sel_y)].modifier.contains(Modifier::REVERSED));
    a.update(Action::Open);
    let t = render(&mut a, 120, 12, &Theme::mono());
    let buf = t.backend().buffer();
    assert_eq!(a.focus, Focus::Pane);
    assert!(!buf[(10, sel_y)].modifier.contains(Modifier::REVERSED));
    // The focused pane's rule is heavy and its title stands out.
    let rule_y = 4;
    let x = a.areas().header.x + 2;
    assert_eq!(buf[(x, rule_y)].symbol(), "━");
    a.update(Action::ToggleFocus);
    let t = render(&mut a, 120, 12, &Theme::mono());
    assert_eq!(t.backend().buffer()[(x, rule_y)].symbol(), "─");
}

#[test]
fn help_140x40_fits_in_columns() {
    let mut a = loaded_app();
    a.update(Action::ToggleHelp);
    let s = screen(&mut a, 140, 40);
    for want in [
        "open the session in the pane",
        "ctrl-w",
        "wheel",
        "unread",
        "interrupted",
    ] {
        assert!(s.contains(want), "{want}\n{s}");
    }
    assert_snapshot!(s);
}

#[test]
fn help_80x24_scrolls() {
    let mut a = loaded_app();
    a.update(Action::ToggleHelp);
    assert_snapshot!(screen(&mut a, 80, 24));
}

#[test]
fn help_40x12_is_readable_and_scrolls_to_its_end() {
    let mut a = loaded_app();
    a.update(Action::Resize(40, 12));
    a.update(Action::ToggleHelp);
    let top = screen(&mut a, 40, 12);
    assert!(top.contains("↓ more"), "{top}");
    a.update(Action::Bottom);
    let end = screen(&mut a, 40, 12);
    assert!(end.contains("end"), "{end}");
    assert_snapshot!(format!("{top}\n{end}"));
}

fn long_message() -> String {
    "could not start 'uv' in /tmp/spool-demo-1234/projects/acme-api: No such file or \
     directory (os error 2); check [resume] harness in the config"
        .into()
}

#[test]
fn a_long_message_says_where_to_read_it_whole_and_the_log_shows_it() {
    let mut a = loaded_app();
    a.update(Action::OpDone(Box::new(Outcome::message(
        "pinned loom:20260314-091502",
    ))));
    a.update(Action::OpDone(Box::new(Outcome::message(long_message()))));
    let footer = screen(&mut a, 80, 24);
    assert!(footer.contains("m shows all"), "{footer}");
    a.update(Action::ToggleMessages);
    let log = screen(&mut a, 80, 24);
    assert!(
        log.contains("check [resume] harness in the config"),
        "{log}"
    );
    assert_snapshot!(format!("{footer}\n{log}"));
}

#[test]
fn no_sessions_anywhere_says_where_spool_looked() {
    let mut o = Options::new(now());
    o.searched = vec![
        "loop    /home/u/.loop/sessions".into(),
        "loom    /home/u/.loom/sessions".into(),
        "harness /home/u/.agent-harness/memory/sessions".into(),
    ];
    let mut a = App::new(o);
    let s = screen(&mut a, 80, 24);
    assert!(
        s.contains("spool --demo") && s.contains(".loom/sessions"),
        "{s}"
    );
    assert_snapshot!(s);
}

#[test]
fn no_matches_leaves_the_pane_empty() {
    let mut a = loaded_app();
    search(&mut a, "zqxjzqxj");
    a.update(Action::Tick);
    let s = screen(&mut a, 120, 10);
    assert!(s.contains("no session selected"), "{s}");
    assert!(!s.contains("Refactor"), "{s}");
    assert_snapshot!(s);
}

#[test]
fn the_search_box_shows_its_cursor() {
    let mut a = loaded_app();
    search(&mut a, "parser");
    a.update(Action::Edit(spool::app::Edit::Left));
    a.update(Action::Edit(spool::app::Edit::Left));
    let mut t = render(&mut a, 100, 6, &Theme::mono());
    let cursor = t.get_cursor_position().unwrap();
    assert_eq!((cursor.x, cursor.y), (2 + 4, 0));
    assert_snapshot!(format!("{}\ncursor {cursor:?}", t.backend()));
}
