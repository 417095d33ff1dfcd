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
    assert_eq!(a.focus, Focus::Pane);
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
    // The window pages from its end too (issue 11).
    assert_eq!((*view, *rounds), (View::Window, Some(20)));
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
    let fx = (0..200)
        .map(|_| a.update(Action::PageUp))
        .find(|fx| !fx.is_empty())
        .unwrap_or_default();
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
            assert_eq!(summary.id, "20260314-091502".into());
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

/// The newest load request in `fx`: the id it asks for.
fn loads_of(fx: &[Effect]) -> Vec<String> {
    fx.iter()
        .filter_map(|f| match f {
            Effect::Load { summary, .. } => Some(summary.id.to_string()),
            _ => None,
        })
        .collect()
}

#[test]
fn the_pane_loads_what_the_matcher_selects_and_enter_opens_it() {
    let mut a = loaded_app();
    a.update(Action::FocusSearch);
    let mut fx = Vec::new();
    for c in "memory".chars() {
        fx.extend(a.update(Action::SearchInput(c)));
    }
    // The selection moves when the matcher catches up (a tick), not on the key press: the
    // load for the new selection is that tick's effect.
    for _ in 0..500 {
        fx.extend(a.update(Action::Tick));
        if selected_id(&a) == "20260301-101010" {
            break;
        }
    }
    assert_eq!(selected_id(&a), "20260301-101010");
    assert_eq!(
        loads_of(&fx).last().map(String::as_str),
        Some("20260301-101010")
    );
    answer(&mut a, &fx);
    assert!(!a.pane.loading);
    // Enter in the search box opens what it found, already loaded.
    assert!(a.update(Action::SearchAccept).is_empty());
    assert_eq!(a.focus, Focus::Pane);
    assert!(screen(&mut a, 120, 32).contains("Why does the parser test fail on CI?"));
}

#[test]
fn enter_from_the_search_box_loads_a_selection_made_between_updates() {
    let mut a = loaded_app();
    // `search` lets the matcher settle outside `update`: the selection changed with no
    // request made. Enter must still load and open it.
    search(&mut a, "memory");
    let fx = a.update(Action::SearchAccept);
    assert_eq!(loads_of(&fx), ["20260301-101010"]);
    assert_eq!(a.focus, Focus::Pane);
    answer(&mut a, &fx);
    let s = screen(&mut a, 120, 32);
    assert!(!s.contains("loading…"), "{s}");
    assert!(s.contains("Why does the parser test fail on CI?"), "{s}");
    // Nothing matched: Enter keeps the query and goes to the (empty) list.
    a.update(Action::Back);
    a.update(Action::Back);
    search(&mut a, "zzqqxxj");
    assert!(a.list.is_empty());
    assert!(a.update(Action::SearchAccept).is_empty());
    assert_eq!(a.focus, Focus::List);
}

#[test]
fn the_pane_loads_the_neighbour_when_the_shown_session_is_deleted() {
    let mut a = loaded_app();
    a.update(Action::Down);
    let k = a.selected().cloned().unwrap();
    let fx = a.update(Action::Removed(vec![k]));
    assert_eq!(loads_of(&fx), ["Qm3xT8vLk2pR9aZc"]);
}

#[test]
fn g_in_the_pane_reads_the_whole_history_and_lands_on_the_first_message() {
    let mut a = loaded_app();
    a.update(Action::Open);
    // The last two of three rounds, opened at the bottom.
    let s = a.list.selected_summary().unwrap().clone();
    let token = a.pane.token;
    a.update(Action::Loaded {
        token,
        content: spool::app::Loaded::Transcript(std::sync::Arc::new(transcript(&s))),
    });
    assert!(a.pane.has_more_above());
    let fx = a.update(Action::Top);
    // One request for everything (not 20 more rounds), answered with the whole history.
    let (token, summary) = match &fx[..] {
        [
            Effect::Load {
                token,
                summary,
                rounds: None,
                view: View::Transcript,
            },
        ] => (*token, summary.clone()),
        other => panic!("expected one load of the whole history, got {other:?}"),
    };
    let mut whole = transcript(&summary);
    whole.first_round = 0;
    let mut first = spool::model::Message::new(spool::model::Role::User, "The very first question");
    first.index = Some(0);
    whole
        .entries
        .insert(0, spool::model::Entry::Message(Box::new(first)));
    a.update(Action::Loaded {
        token,
        content: spool::app::Loaded::Transcript(std::sync::Arc::new(whole)),
    });
    assert_eq!(a.pane.scroll, 0);
    assert!(!a.pane.has_more_above());
    let s = screen(&mut a, 120, 32);
    assert!(s.contains("The very first question"), "{s}");
    // G lands on the last message.
    a.update(Action::Bottom);
    assert!(a.pane.follow);
    let s = screen(&mut a, 120, 32);
    assert!(s.contains("wall-clock"), "{s}");
}

/// The window and raw views open on their last page (issue 11: the first screen of a huge
/// session holds a page); `g` reads the whole view.
#[test]
fn the_window_and_raw_views_page_from_their_end() {
    let mut a = loaded_app();
    a.update(Action::Open);
    let s = a.list.selected_summary().unwrap().clone();
    let fx = a.update(Action::CycleView);
    let token = match &fx[..] {
        [
            Effect::Load {
                token,
                rounds: Some(20),
                view: View::Window,
                ..
            },
        ] => *token,
        other => panic!("expected a page of the window, got {other:?}"),
    };
    let mut w = window(&s);
    w.omitted = 30;
    w.omitted_tokens = 1000;
    a.update(Action::Loaded {
        token,
        content: spool::app::Loaded::Window(std::sync::Arc::new(w)),
    });
    assert!(a.pane.has_more_above());
    // The status line counts the whole window, not the page.
    let shown = screen(&mut a, 120, 32);
    assert!(shown.contains("34 messages"), "{shown}");
    let fx = a.update(Action::Top);
    assert!(
        matches!(
            &fx[..],
            [Effect::Load {
                rounds: None,
                view: View::Window,
                ..
            }]
        ),
        "{fx:?}"
    );
    let fx = a.update(Action::CycleView);
    let token = match &fx[..] {
        [
            Effect::Load {
                token,
                rounds: Some(20),
                view: View::Raw,
                ..
            },
        ] => *token,
        other => panic!("expected a page of the raw view, got {other:?}"),
    };
    a.update(Action::Loaded {
        token,
        content: spool::app::Loaded::Raw(std::sync::Arc::new("{}".into()), true),
    });
    assert!(a.pane.has_more_above());
}
