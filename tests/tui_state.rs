//! State tests: the browser driven with actions only, no terminal.

mod tui_common;

use spool::app::{Action, Effect, Focus, Outcome, SessionOp, View};
use spool::model::StoreKind;
use tui_common::*;

#[test]
fn list_order_pinned_first_hides_archived_and_empty() {
    let a = loaded_app();
    assert_eq!(
        titles(&a),
        [
            "Refactor session loader", // pinned
            "Fix the flaky parser test",
            "Write the release notes",
            "日本語のタイトル 🎉 wide chars",
            "Investigate memory leak",
            "Plan the database migration",
            "20260302-000000", // error row: always shown, no activity time
        ]
    );
}

#[test]
fn filters_toggle_archived_empty_store_and_cwd() {
    let mut a = loaded_app();
    a.update(Action::ToggleArchived);
    assert_eq!(titles(&a), ["Old archived work", "20260302-000000"]);
    a.update(Action::ToggleArchived);
    a.update(Action::ToggleEmpty);
    assert!(titles(&a).contains(&"(empty)".to_string()));
    a.update(Action::ToggleEmpty);
    a.update(Action::CycleStore); // loop
    assert_eq!(
        titles(&a),
        [
            "Fix the flaky parser test",
            "日本語のタイトル 🎉 wide chars"
        ]
    );
    a.update(Action::CycleStore); // loom
    a.update(Action::CycleStore); // harness
    assert_eq!(a.list.filter.format, Some(StoreKind::Harness));
    a.update(Action::CycleStore); // all
    assert_eq!(a.list.filter.format, None);
    a.cwd = Some("/home/u/src/proj-loom".into());
    a.update(Action::ToggleCwd);
    assert_eq!(
        titles(&a),
        ["Refactor session loader", "Investigate memory leak"]
    );
    a.update(Action::ToggleCwd);
    assert_eq!(titles(&a).len(), 7);
}

#[test]
fn selection_stays_on_the_session_while_rows_stream_in() {
    let mut a = app();
    let v = sample();
    a.update(Action::Rows(v[2..5].to_vec()));
    a.update(Action::Down);
    let picked = selected_id(&a);
    assert_eq!(picked, "7a1d0e44");
    // Newer rows arrive above it and the list re-sorts: still the same session.
    a.update(Action::Rows(v[0..2].to_vec()));
    a.update(Action::Rows(v[5..].to_vec()));
    a.settle();
    assert_eq!(selected_id(&a), picked);
    assert_eq!(a.list.cursor, 3);
    // A re-summarized row (new activity) moves to the top; the selection follows it.
    let mut bumped = v[3].clone();
    bumped.updated_at = hours_ago(0);
    a.update(Action::Rows(vec![bumped]));
    assert_eq!(selected_id(&a), picked);
    assert_eq!(a.list.cursor, 1);
}

#[test]
fn search_filters_live_and_esc_clears() {
    let mut a = loaded_app();
    search(&mut a, "flaky");
    assert_eq!(a.focus, Focus::Search);
    assert_eq!(titles(&a), ["Fix the flaky parser test"]);
    assert_eq!(selected_id(&a), "3f6b2c1e");
    // Matches the project (cwd basename) too.
    a.update(Action::Back);
    search(&mut a, "proj-harness");
    assert_eq!(
        titles(&a),
        ["Write the release notes", "Plan the database migration"]
    );
    a.update(Action::SearchBackspace);
    a.settle();
    a.update(Action::Back);
    assert_eq!(a.focus, Focus::List);
    assert_eq!(a.list.query(), "");
    assert_eq!(titles(&a).len(), 7);
}

#[test]
fn search_matches_first_prompt_and_highlights_title_chars() {
    let mut a = loaded_app();
    search(&mut a, "memory");
    assert_eq!(titles(&a), ["Investigate memory leak"]);
    assert_eq!(
        a.list.highlight("Investigate memory leak"),
        vec![12, 13, 14, 15, 16, 17]
    );
    a.update(Action::SearchAccept);
    assert_eq!(a.focus, Focus::List);
    assert_eq!(a.list.query(), "memory");
}

#[test]
fn search_keeps_up_with_rows_arriving_later() {
    let mut a = app();
    search(&mut a, "migration");
    assert_eq!(a.list.len(), 0);
    a.update(Action::Rows(sample()));
    a.settle();
    assert_eq!(titles(&a), ["Plan the database migration"]);
}

#[test]
fn enter_opens_pane_and_view_cycles_with_new_tokens() {
    let mut a = loaded_app();
    let fx = a.update(Action::Down);
    // Wide layout: moving previews the session.
    let first = match &fx[..] {
        [
            Effect::Load {
                token,
                view,
                rounds,
                ..
            },
        ] => {
            assert_eq!(*view, View::Transcript);
            assert_eq!(*rounds, Some(20));
            *token
        }
        other => panic!("expected one load, got {other:?}"),
    };
    a.update(Action::Open);
    assert_eq!(a.focus, Focus::Pane);
    let fx = a.update(Action::CycleView);
    assert_eq!(a.pane.view, View::Window);
    let Effect::Load {
        token,
        view,
        rounds,
        ..
    } = &fx[0]
    else {
        panic!()
    };
    assert!(*token > first);
    assert_eq!((*view, *rounds), (View::Window, None));
    // A stale transcript answer is dropped.
    a.update(Action::Loaded {
        token: first,
        content: spool::app::Loaded::Failed("stale".into()),
    });
    assert!(a.pane.loading);
    answer(&mut a, &fx);
    assert!(!a.pane.loading);
    assert!(matches!(
        a.pane.content,
        spool::app::pane::Content::Window(_)
    ));
    a.update(Action::CycleView);
    assert_eq!(a.pane.view, View::Raw);
    a.update(Action::CycleView);
    assert_eq!(a.pane.view, View::Transcript);
    a.update(Action::Back);
    assert_eq!(a.focus, Focus::List);
}

#[test]
fn paging_in_the_list_and_in_the_pane() {
    let mut a = loaded_app();
    a.update(Action::Resize(120, 9)); // 8 list rows on screen minus search = 3 rows of 2
    a.update(Action::PageDown);
    assert_eq!(a.list.cursor, 3);
    a.update(Action::Bottom);
    assert_eq!(a.list.cursor, 6);
    a.update(Action::HalfPageUp);
    assert_eq!(a.list.cursor, 5);
    // Moving previews the selected session in the pane (wide layout).
    let fx = a.update(Action::Top);
    assert_eq!(a.list.cursor, 0);
    answer(&mut a, &fx);

    // The pane opens at the bottom of the loaded rounds; scrolling to the top asks for more.
    assert!(
        a.update(Action::Open).is_empty(),
        "already loaded by the preview"
    );
    assert!(a.pane.follow);
    let total = a.pane.total_lines();
    assert!(total > 4, "{total}");
    a.update(Action::PageUp);
    assert!(!a.pane.follow);
    let fx = a.update(Action::Top);
    match &fx[..] {
        [Effect::Load { rounds, .. }] => assert_eq!(*rounds, Some(40)),
        other => panic!("expected a request for more rounds, got {other:?}"),
    }
    // While that request is outstanding, no second one.
    assert!(a.update(Action::Up).is_empty());
    a.update(Action::Bottom);
    assert!(a.pane.follow);
}

#[test]
fn session_keys_become_effects_for_the_handler() {
    let mut a = loaded_app();
    let fx = a.update(Action::Session(SessionOp::TogglePin));
    match &fx[..] {
        [Effect::Session { op, summary, .. }] => {
            assert_eq!(*op, SessionOp::TogglePin);
            assert_eq!(summary.id, "20260314-091502");
        }
        other => panic!("{other:?}"),
    }
    a.update(Action::OpDone(Box::new(Outcome::message("pinned"))));
    assert_eq!(a.status.as_deref(), Some("pinned"));
}

#[test]
fn keys_map_through_the_table() {
    use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
    let a = loaded_app();
    let k = |c| KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE);
    let ctx = a.ctx();
    for (c, want) in [
        ('p', "pin"),
        ('R', "rename"),
        ('U', "undo-delete"),
        ('d', "delete"),
    ] {
        match a.keymap.lookup(ctx, &k(c)) {
            Some(Action::Session(op)) => assert_eq!(op.name(), want),
            other => panic!("{c}: {other:?}"),
        }
    }
    let ctrl_d = KeyEvent::new(KeyCode::Char('d'), KeyModifiers::CONTROL);
    assert!(matches!(
        a.keymap.lookup(ctx, &ctrl_d),
        Some(Action::HalfPageDown)
    ));
    // In the search bar, letters type.
    assert!(matches!(
        a.keymap.lookup(spool::app::Ctx::Search, &k('q')),
        Some(Action::SearchInput('q'))
    ));
}

#[test]
fn sidebar_width_and_narrow_layout() {
    let mut a = loaded_app();
    let w0 = a.sidebar_width;
    a.update(Action::GrowSidebar);
    assert_eq!(a.sidebar_width, w0 + 4);
    a.update(Action::ShrinkSidebar);
    a.update(Action::ShrinkSidebar);
    assert_eq!(a.sidebar_width, w0 - 4);
    a.update(Action::Resize(80, 24));
    assert!(a.narrow());
    assert_eq!(a.areas().body.width, 0);
    a.update(Action::Open);
    assert_eq!(a.areas().list.width, 0);
    assert_eq!(a.areas().body.width, 80);
}

#[test]
fn removed_rows_leave_and_the_selection_moves_on() {
    let mut a = loaded_app();
    a.update(Action::Down);
    let k = a.selected().cloned().unwrap();
    a.update(Action::Removed(vec![k]));
    assert_eq!(selected_id(&a), "Qm3xT8vLk2pR9aZc");
    assert_eq!(a.list.cursor, 1);
}
