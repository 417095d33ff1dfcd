//! The inbox (`i`) and the "left off" card (`l`) on `TestBackend`: what the inbox lists and
//! in which order, that archiving a session takes it out, and snapshots of both.

mod tui_common;

use insta::assert_snapshot;
use spool::app::Action;
use spool::model::Ended;
use tui_common::*;

fn inbox_app() -> spool::app::App {
    let mut a = app();
    let mut rows = sample();
    rows[0].ended = Some(Ended::Waiting);
    rows[1].ended = Some(Ended::Errored);
    rows[2].ended = Some(Ended::Interrupted);
    rows[3].ended = Some(Ended::Done);
    rows[4].ended = Some(Ended::Waiting);
    rows[5].ended = Some(Ended::Running);
    // Archived: handled, never in the inbox.
    rows[7].ended = Some(Ended::Errored);
    a.update(Action::Rows(rows));
    a.settle();
    a
}

#[test]
fn the_inbox_lists_waiting_errored_interrupted_grouped_and_newest_first() {
    let mut a = inbox_app();
    a.update(Action::ToggleInbox);
    a.settle();
    assert_eq!(
        titles(&a),
        [
            "Fix the flaky parser test",
            "Investigate memory leak",
            "Refactor session loader",
            "Write the release notes",
        ]
    );
    // Each group under its heading, with its count.
    assert_snapshot!(screen(&mut a, 100, 18));
    use spool::app::Slot;
    let slots = a.list.slots(0, 10);
    let heads: Vec<_> = slots
        .iter()
        .filter_map(|s| match s {
            Slot::Heading(e, n) => Some((*e, *n)),
            Slot::Row(..) => None,
        })
        .collect();
    assert_eq!(
        heads,
        [
            (Ended::Waiting, 2),
            (Ended::Errored, 1),
            (Ended::Interrupted, 1)
        ]
    );
    assert_eq!(slots.len(), 7, "three headings and four rows");
    a.update(Action::ToggleInbox);
    a.settle();
    assert!(!a.list.inbox, "back to every session");
    assert!(titles(&a).contains(&"Plan the database migration".to_string()));
}

#[test]
fn archiving_takes_a_session_out_of_the_inbox() {
    let mut a = inbox_app();
    a.update(Action::ToggleInbox);
    a.settle();
    let mut handled = sample().remove(0);
    handled.ended = Some(Ended::Waiting);
    handled.archived = true;
    a.update(Action::Rows(vec![handled]));
    a.settle();
    assert!(!titles(&a).contains(&"Fix the flaky parser test".to_string()));
    assert_eq!(titles(&a).len(), 3);
}

#[test]
fn the_left_off_card_opens_the_pane_and_folds_to_one_line() {
    let mut a = loaded_app();
    let fx = a.update(Action::Down);
    answer(&mut a, &fx);
    a.update(Action::Open);
    assert_snapshot!("card_open", screen(&mut a, 120, 24));
    a.update(Action::ToggleCard);
    assert_snapshot!("card_folded", screen(&mut a, 120, 12));
}

#[test]
fn headings_scroll_with_the_rows_and_a_click_on_one_selects_nothing() {
    let mut a = inbox_app();
    a.update(Action::ToggleInbox);
    a.settle();
    // 100x9: the list has room for three slots of two lines.
    screen(&mut a, 100, 9);
    a.update(Action::Bottom);
    a.settle();
    let s = screen(&mut a, 100, 9);
    // The last row is the interrupted group's first: its heading comes into view with it.
    assert!(s.contains("~ interrupted · 1"), "{s}");
    assert!(s.contains("Write the release notes"), "{s}");
    a.update(Action::Top);
    a.settle();
    let s = screen(&mut a, 100, 9);
    assert!(s.contains("? waiting · 2"), "{s}");
    assert_eq!(a.list.cursor, 0);
    // The heading's line pair is the list's first slot (rows 2 and 3: under the search box
    // and the inbox line): a click there keeps the selection.
    let before = a.selected().cloned();
    a.update(Action::Down);
    a.update(Action::Click { col: 5, row: 2 });
    assert_eq!(a.list.cursor, 1, "a click on a heading selected a row");
    a.update(Action::Click { col: 5, row: 4 });
    assert_eq!(a.list.cursor, 0);
    assert_eq!(a.selected().cloned(), before);
}
