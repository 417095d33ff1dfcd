//! Snapshots of whole screens on `TestBackend` at fixed sizes and a fixed "now".

mod tui_common;

use insta::assert_snapshot;
use ratatui::style::Modifier;
use spool::app::{Action, Focus};
use spool::model::StoreKind;
use spool::ui::Theme;
use tui_common::*;

#[test]
fn list() {
    let mut a = loaded_app();
    assert_snapshot!(screen(&mut a, 120, 20));
}

#[test]
fn search_with_highlights() {
    let mut a = loaded_app();
    search(&mut a, "leak");
    let t = render(&mut a, 100, 8, &Theme::mono());
    // Mark the highlighted cells (mono theme: bold + underline) under the screen text.
    let buf = t.backend().buffer().clone();
    let mut marks = String::new();
    for y in 0..buf.area.height {
        let mut row = String::new();
        for x in 0..buf.area.width {
            let c = &buf[(x, y)];
            let hl = c.modifier.contains(Modifier::UNDERLINED | Modifier::BOLD);
            row.push(if hl { '^' } else { ' ' });
        }
        let row = row.trim_end().to_string();
        if !row.is_empty() {
            marks.push_str(&format!("{y:>2} {row}\n"));
        }
    }
    assert_snapshot!(format!("{}\n{marks}", t.backend()));
}

#[test]
fn transcript_pane() {
    let mut a = loaded_app();
    let fx = a.update(Action::Down);
    answer(&mut a, &fx);
    a.update(Action::Open);
    assert_eq!(a.focus, Focus::Pane);
    assert_snapshot!(screen(&mut a, 120, 40));
}

#[test]
fn transcript_pane_expanded() {
    let mut a = loaded_app();
    let fx = a.update(Action::Down);
    answer(&mut a, &fx);
    a.update(Action::Open);
    a.update(Action::ToggleExpandAll);
    assert_snapshot!(screen(&mut a, 120, 44));
}

#[test]
fn window_pane() {
    let mut a = loaded_app();
    a.update(Action::Open);
    let fx = a.update(Action::CycleView);
    answer(&mut a, &fx);
    assert_snapshot!(screen(&mut a, 120, 24));
}

#[test]
fn raw_pane() {
    let mut a = loaded_app();
    a.update(Action::Open);
    a.update(Action::CycleView);
    let fx = a.update(Action::CycleView);
    answer(&mut a, &fx);
    assert_snapshot!(screen(&mut a, 120, 14));
}

#[test]
fn help_overlay() {
    let mut a = loaded_app();
    a.update(Action::ToggleHelp);
    assert_snapshot!(screen(&mut a, 120, 40));
}

#[test]
fn help_overlay_small_terminal() {
    let mut a = loaded_app();
    a.update(Action::ToggleHelp);
    assert_snapshot!(screen(&mut a, 80, 24));
}

#[test]
fn error_row_selected_shows_reason() {
    let mut a = loaded_app();
    a.update(Action::Bottom);
    assert_eq!(selected_id(&a), "20260302-000000");
    assert_snapshot!(screen(&mut a, 120, 18));
}

#[test]
fn narrow_layout_list_then_pane() {
    let mut a = app();
    a.update(Action::Resize(80, 24));
    a.update(Action::Rows(sample()));
    a.settle();
    let list = screen(&mut a, 80, 24);
    let fx = a.update(Action::Open);
    answer(&mut a, &fx);
    let pane = screen(&mut a, 80, 24);
    assert_snapshot!(format!("{list}\n{pane}"));
}

#[test]
fn loading_state() {
    let mut a = app();
    a.update(Action::Progress {
        store: 0,
        kind: StoreKind::Loop,
        done: 0,
        total: 10_000,
        finished: false,
    });
    let empty = screen(&mut a, 100, 8);
    a.update(Action::Rows(sample()[..2].to_vec()));
    a.update(Action::Progress {
        store: 0,
        kind: StoreKind::Loop,
        done: 1_234,
        total: 10_000,
        finished: false,
    });
    a.settle();
    let partial = screen(&mut a, 100, 8);
    assert_snapshot!(format!("{empty}\n{partial}"));
}

#[test]
fn hostile_title_is_sanitised() {
    let mut a = app();
    let mut s = row(
        StoreKind::Loop,
        "e5c4pe",
        "evil\u{1b}]0;pwned\u{7} title\u{202e}rtl",
        1,
    );
    s.cwd = Some("/tmp/\u{1b}[2Jx".into());
    a.update(Action::Rows(vec![s]));
    a.settle();
    let out = screen(&mut a, 100, 6);
    assert!(!out.contains('\u{1b}'));
    assert!(out.contains("evil title<U+202E>rtl"), "{out}");
}

#[test]
fn delete_confirmation() {
    let mut a = loaded_app();
    a.update(Action::Session(spool::app::SessionOp::Delete));
    assert_snapshot!(screen(&mut a, 100, 20));
}

#[test]
fn delete_confirmation_loop_offers_archive_and_delete() {
    let mut a = loaded_app();
    a.update(Action::Down);
    a.update(Action::Session(spool::app::SessionOp::Delete));
    let s = screen(&mut a, 100, 20);
    // Loop deletes only archived sessions: the one choice offered is one that works.
    assert!(s.contains("y/enter archive and delete"), "{s}");
    assert!(!s.contains("archive it first"), "{s}");
    assert_snapshot!(s);
}

#[test]
fn rename_prompt() {
    let mut a = loaded_app();
    a.update(Action::Session(spool::app::SessionOp::Rename));
    a.update(Action::Edit(spool::app::Edit::Left));
    a.update(Action::Edit(spool::app::Edit::Insert('é')));
    let t = render(&mut a, 100, 12, &Theme::mono());
    let mut t = t;
    let cursor = t.get_cursor_position().unwrap();
    assert_snapshot!(format!("{}\ncursor {cursor:?}", t.backend()));
}

#[test]
fn export_dialog() {
    let mut a = loaded_app();
    a.update(Action::Session(spool::app::SessionOp::Export));
    a.update(Action::DialogCycle(true));
    assert_snapshot!(screen(&mut a, 100, 20));
}

/// While the full-text index builds, a query that matches nothing says so ("reading
/// sessions…" is for the stores' listing only: it stayed up until the build ended), and
/// the progress sits beside the row count with the key hints left in place (in their
/// place it came and went with no key pressed). Both changed the screen long after a key
/// (issue 8).
#[test]
fn while_indexing_no_matches_and_the_hints_stay() {
    let mut a = loaded_app();
    a.update(Action::IndexProgress {
        done: 3_100,
        total: 10_000,
    });
    search(&mut a, "zzqqxxnothing");
    let s = screen(&mut a, 120, 8);
    assert!(s.contains("no matches"), "{s}");
    assert!(!s.contains("reading sessions"), "{s}");
    let status = s
        .lines()
        .find(|l| l.contains("indexing"))
        .unwrap_or_default();
    assert!(status.contains("type to filter"), "{status}");
    assert!(
        status.contains("indexing 3,100 / 10,000 · 0 sessions"),
        "{status}"
    );
}
