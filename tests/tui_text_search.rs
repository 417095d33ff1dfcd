//! The text search (`s`) and the find in the pane (`/` with the pane focused), driven with
//! actions only: queries become effects with fresh tokens, stale answers are dropped, Enter
//! opens the whole history at the hit's message, `n` / `N` step and wrap; the pane previews
//! the result under the cursor and is emptied when nothing matches; plus snapshots of the
//! result rows and of the pane with its hit highlighted.

mod tui_common;

use insta::assert_snapshot;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::style::Modifier;
use spool::app::{Action, Ctx, Effect, Focus};
use spool::model::StoreKind;
use spool::search::index::Hit;
use spool::ui::Theme;
use tui_common::*;

fn hit(kind: StoreKind, id: &str, message: usize, snippet: &str, word: &str) -> Hit {
    let at = snippet.find(word).unwrap();
    Hit {
        key: (kind, id.into()),
        score: 1.0,
        hits: 2,
        message: Some(message),
        round: Some(2),
        role: Some("assistant".into()),
        snippet: snippet.into(),
        // One highlighted range: the word.
        highlights: std::iter::once(at..at + word.len()).collect(),
    }
}

/// The tokens of the text queries among `fx`.
fn query_tokens(fx: &[Effect]) -> Vec<u64> {
    fx.iter()
        .filter_map(|f| match f {
            Effect::TextQuery { token, .. } => Some(*token),
            _ => None,
        })
        .collect()
}

/// Open a text search and type `q`; the token of each keystroke's query.
fn text_search(a: &mut spool::app::App, q: &str) -> Vec<u64> {
    a.update(Action::TextSearch);
    q.chars()
        .flat_map(|c| query_tokens(&a.update(Action::SearchInput(c))))
        .collect()
}

fn results() -> Vec<Hit> {
    vec![
        hit(
            StoreKind::Loop,
            "3f6b2c1e",
            4,
            "The test depends on wall-clock time.",
            "wall",
        ),
        hit(
            StoreKind::Loom,
            "20260314-091502",
            7,
            "a long run of words before the one that matched: wall\nand after it",
            "wall",
        ),
    ]
}

#[test]
fn text_search_asks_per_keystroke_and_drops_stale_answers() {
    let mut a = loaded_app();
    let tokens = text_search(&mut a, "wall");
    assert_eq!(a.focus, Focus::Text);
    assert_eq!(a.ctx(), Ctx::Search);
    assert_eq!(tokens.len(), 4, "one query per keystroke");
    assert!(tokens.windows(2).all(|w| w[0] < w[1]));
    // An answer to an older keystroke is dropped; the newest one is shown.
    a.update(Action::TextResults {
        token: tokens[1],
        hits: results(),
    });
    assert!(a.text.as_ref().unwrap().hits.is_empty());
    a.update(Action::TextResults {
        token: tokens[3],
        hits: results(),
    });
    assert_eq!(a.text.as_ref().unwrap().hits.len(), 2);
    a.update(Action::Down);
    assert_eq!(a.text.as_ref().unwrap().cursor, 1);
    a.update(Action::Up);
    assert_eq!(a.text.as_ref().unwrap().cursor, 0);
    // The list's filters apply: a filter change asks again under the new filter.
    let fx = a.update(Action::ToggleArchived);
    assert!(
        matches!(&fx[..], [Effect::TextQuery { filter, .. }] if filter.archived),
        "{fx:?}"
    );
    // Esc leaves the text search for the list.
    a.update(Action::Back);
    assert!(a.text.is_none());
    assert_eq!(a.focus, Focus::List);
}

/// Enter on the first result: the whole history is loaded and the pane lands on the hit.
fn opened_at_hit(w: u16, h: u16) -> spool::app::App {
    let mut a = loaded_app();
    a.update(Action::Resize(w, h));
    let tokens = text_search(&mut a, "wall");
    // The answer previews the first result: its whole history, at the hit.
    let fx = a.update(Action::TextResults {
        token: *tokens.last().unwrap(),
        hits: results(),
    });
    assert!(
        matches!(&fx[..], [Effect::Load { rounds: None, summary, .. }] if summary.id == "3f6b2c1e".into()),
        "{fx:?}"
    );
    answer(&mut a, &fx);
    assert_eq!(a.focus, Focus::Text);
    // Enter focuses what is shown already, without loading it again.
    let fx = a.update(Action::SearchAccept);
    assert_eq!(a.focus, Focus::Pane);
    assert!(
        !fx.iter().any(|f| matches!(f, Effect::Load { .. })),
        "{fx:?}"
    );
    a
}

#[test]
fn enter_opens_the_session_at_the_hit_and_n_steps_through_its_hits() {
    let mut a = opened_at_hit(120, 32);
    let f = &a.pane.find;
    assert_eq!(f.terms, ["wall"]);
    assert_eq!(f.matches.len(), 1);
    assert_eq!(f.current, Some(0));
    let s = screen(&mut a, 120, 32);
    assert!(s.contains("wall-clock"), "{s}");
    // One hit: n wraps onto it and says so.
    a.update(Action::FindNext);
    assert_eq!(a.status.as_deref(), Some("search wrapped · match 1 of 1"));
    // Esc clears the highlight, then goes back to the results, then to the list.
    a.update(Action::Back);
    assert!(!a.pane.find.is_active());
    a.update(Action::Back);
    assert_eq!(a.focus, Focus::Text);
    a.update(Action::Back);
    assert_eq!(a.focus, Focus::List);
}

#[test]
fn find_in_the_pane_reads_the_whole_history_and_wraps() {
    let mut a = loaded_app();
    a.update(Action::Open);
    let s = a.list.selected_summary().unwrap().clone();
    a.update(Action::Loaded {
        token: a.pane.token,
        content: spool::app::Loaded::Transcript(std::sync::Arc::new(transcript(&s))),
    });
    assert!(a.pane.has_more_above());
    a.update(Action::FocusSearch);
    assert_eq!(a.focus, Focus::Find);
    for c in "LINE".chars() {
        a.update(Action::SearchInput(c));
    }
    let fx = a.update(Action::SearchAccept);
    assert_eq!(a.focus, Focus::Pane);
    assert!(
        matches!(&fx[..], [Effect::Load { rounds: None, .. }]),
        "the find reads every round first: {fx:?}"
    );
    answer(&mut a, &fx);
    // `line 1` .. `line 5` of the tool result (opened for the find), case-insensitive.
    let n = a.pane.find.matches.len();
    assert_eq!(n, 7, "with `5 lines` and `2 lines` in the block headings");
    let first = a.pane.find.current.unwrap();
    a.update(Action::FindPrev);
    a.update(Action::FindNext);
    assert_eq!(a.pane.find.current, Some(first));
    for _ in first + 1..n {
        a.update(Action::FindNext);
    }
    assert_eq!(a.pane.find.current, Some(n - 1));
    a.update(Action::FindNext);
    assert_eq!(a.pane.find.current, Some(0));
    assert_eq!(a.status.as_deref(), Some("search wrapped · match 1 of 7"));
    // Not found says so.
    a.update(Action::Back);
    a.update(Action::FocusSearch);
    for c in "zqxj".chars() {
        a.update(Action::SearchInput(c));
    }
    a.update(Action::SearchAccept);
    assert_eq!(a.status.as_deref(), Some("pattern not found"));
}

/// The screen, then a row of `^` under every cell with `m` set.
fn marked(t: &Terminal<TestBackend>, m: Modifier) -> String {
    let buf = t.backend().buffer().clone();
    let mut marks = String::new();
    for y in 0..buf.area.height {
        let row: String = (0..buf.area.width)
            .map(|x| {
                if buf[(x, y)].modifier.contains(m) {
                    '^'
                } else {
                    ' '
                }
            })
            .collect();
        let row = row.trim_end();
        if !row.is_empty() {
            marks.push_str(&format!("{y:>2} {row}\n"));
        }
    }
    format!("{}\n{marks}", t.backend())
}

#[test]
fn result_rows_show_title_hits_place_and_highlighted_snippet() {
    let mut a = loaded_app();
    let tokens = text_search(&mut a, "wall");
    a.update(Action::TextResults {
        token: *tokens.last().unwrap(),
        hits: results(),
    });
    let t = render(&mut a, 100, 8, &Theme::mono());
    assert_snapshot!(marked(&t, Modifier::UNDERLINED | Modifier::BOLD));
}

#[test]
fn the_pane_shows_the_hit_highlighted() {
    let mut a = opened_at_hit(110, 24);
    let t = render(&mut a, 110, 24, &Theme::mono());
    assert_snapshot!(marked(&t, Modifier::REVERSED));
}

#[test]
fn indexing_progress_shows_in_the_status_bar_until_done() {
    let mut a = loaded_app();
    a.update(Action::IndexProgress {
        done: 3100,
        total: 10000,
    });
    assert_eq!(a.loading_text().as_deref(), Some("indexing 3,100 / 10,000"));
    let s = screen(&mut a, 120, 12);
    assert!(s.contains("indexing 3,100 / 10,000"), "{s}");
    a.update(Action::IndexProgress {
        done: 10000,
        total: 10000,
    });
    assert_eq!(a.loading_text(), None);
}

#[test]
fn a_click_in_the_sidebar_picks_a_result() {
    let mut a = loaded_app();
    let tokens = text_search(&mut a, "wall");
    a.update(Action::TextResults {
        token: *tokens.last().unwrap(),
        hits: results(),
    });
    let list = a.areas().list;
    a.update(Action::Click {
        col: list.x + 2,
        row: list.y + 2,
    });
    assert_eq!(a.text.as_ref().unwrap().cursor, 1);
    assert_eq!(a.focus, Focus::Text);
}

/// The pane follows the cursor over the results, as it follows the list's selection: each
/// result's session at its hit, highlighted; Esc gives the pane back to the list.
#[test]
fn the_result_under_the_cursor_is_previewed_at_its_hit() {
    let mut a = loaded_app();
    a.update(Action::Resize(110, 24));
    let listed = a.pane.key.clone();
    let tokens = text_search(&mut a, "wall");
    let fx = a.update(Action::TextResults {
        token: *tokens.last().unwrap(),
        hits: results(),
    });
    answer(&mut a, &fx);
    let fx = a.update(Action::Down);
    assert!(
        matches!(&fx[..], [Effect::Load { rounds: None, summary, .. }] if summary.id == "20260314-091502".into()),
        "{fx:?}"
    );
    answer(&mut a, &fx);
    assert_eq!(a.focus, Focus::Text);
    assert_eq!(a.pane.find.terms, ["wall"]);
    // Back on the first result: shown again at its hit.
    let fx = a.update(Action::Up);
    answer(&mut a, &fx);
    assert_eq!(a.pane.key.as_ref().map(|k| k.1.as_str()), Some("3f6b2c1e"));
    let t = render(&mut a, 110, 24, &Theme::mono());
    assert_snapshot!(marked(&t, Modifier::REVERSED));
    a.update(Action::Back);
    assert_eq!(a.focus, Focus::List);
    assert_eq!(a.pane.key, listed, "the list's selection again");
    assert!(!a.pane.find.is_active());
}

/// A query nothing matches empties the pane, with a short line saying why; the session
/// previewed before is not left there.
#[test]
fn no_result_empties_the_pane_with_a_message() {
    let mut a = loaded_app();
    a.update(Action::Resize(100, 12));
    let tokens = text_search(&mut a, "wall");
    let fx = a.update(Action::TextResults {
        token: *tokens.last().unwrap(),
        hits: results(),
    });
    answer(&mut a, &fx);
    assert!(a.pane.key.is_some());
    let token = query_tokens(&a.update(Action::SearchInput('x')))[0];
    a.update(Action::TextResults {
        token,
        hits: Vec::new(),
    });
    assert_eq!(a.pane.key, None);
    let t = render(&mut a, 100, 12, &Theme::mono());
    let s = t.backend().to_string();
    assert!(s.contains("no result to show"), "{s}");
    assert_snapshot!(s);
}

/// While the session is read in the pane, the search asked again (the index caught up) with
/// its best message elsewhere does not reload or move the pane.
#[test]
fn a_refreshed_answer_leaves_the_pane_being_read_alone() {
    let mut a = opened_at_hit(110, 24);
    let token = query_tokens(&a.update(Action::IndexProgress { done: 1, total: 1 }))[0];
    let mut hits = results();
    hits[0].message = Some(2);
    let fx = a.update(Action::TextResults { token, hits });
    assert!(
        !fx.iter().any(|f| matches!(f, Effect::Load { .. })),
        "{fx:?}"
    );
    assert_eq!(a.focus, Focus::Pane);
    assert_eq!(a.pane.find.terms, ["wall"]);
}

/// A search answered before the index held anything ("no session says that") is asked again
/// as soon as a batch of the first pass is committed, not only when the pass ends.
#[test]
fn a_search_answered_by_an_unbuilt_index_is_asked_again_at_each_commit() {
    let mut a = loaded_app();
    let tokens = text_search(&mut a, "wall");
    a.update(Action::TextResults {
        token: *tokens.last().unwrap(),
        hits: Vec::new(),
    });
    let fx = a.update(Action::IndexCommitted {
        done: 40,
        total: 100,
    });
    let token = query_tokens(&fx)[0];
    assert!(token > *tokens.last().unwrap());
    a.update(Action::TextResults {
        token,
        hits: results(),
    });
    assert_eq!(a.text.as_ref().unwrap().hits.len(), 2);
    // With the search closed, a commit asks nothing.
    a.update(Action::Back);
    a.update(Action::Back);
    assert!(a.text.is_none());
    let fx = a.update(Action::IndexCommitted {
        done: 100,
        total: 100,
    });
    assert!(query_tokens(&fx).is_empty());
}
