//! The list's unit tests: rows by identity, deferred matcher items, placed rows.

use super::*;

/// A row's map entry stays a key and a pointer: an inline summary (hundreds of bytes)
/// made the table's empty slots and its doubling cost megabytes at 10k rows (issue 10).
#[test]
fn a_map_entry_is_small() {
    assert!(std::mem::size_of::<(Key, Arc<SessionSummary>)>() <= 48);
    let mut l = List::new(Filter::default(), Arc::new(|| {}));
    let s = SessionSummary::new(StoreKind::Loom, "a", "/a");
    l.upsert(vec![s.clone()]);
    assert_eq!(l.get(&(StoreKind::Loom, "a".into())), Some(&s));
    assert_eq!(l.all_rows().count(), 1);
}

fn rows(n: usize) -> Vec<SessionSummary> {
    (0..n)
        .map(|i| {
            let mut s = SessionSummary::new(StoreKind::Loom, format!("s{i}"), "/a");
            s.title = format!("title {i}");
            s.has_user_message = true;
            s
        })
        .collect()
}

/// The start's rows reach the first frame without the matcher's items (a third of the
/// warm start's work, issue 10); the first tick after the frame builds every one.
#[test]
fn matcher_items_wait_for_the_first_frame() {
    let mut l = List::new(Filter::default(), Arc::new(|| {}));
    l.upsert(rows(50));
    l.tick(0);
    assert_eq!(l.len(), 50, "the list itself is complete before the frame");
    assert_eq!(l.search.item_count(), 0, "no matcher item before the frame");
    l.shown();
    l.tick(0);
    assert_eq!(l.search.item_count(), 50);
    // Rows arriving later are matched as before.
    l.upsert(rows(60));
    l.tick(0);
    assert_eq!(l.search.item_count(), 60);
}

/// Rows re-read into a long list are placed by binary search and their matcher items
/// replaced in place: the view and the matches are what a list built from scratch with
/// the same rows shows, for a run of pseudo-random updates, new rows and pins.
#[test]
fn placed_rows_give_the_list_a_fresh_one_gives() {
    let mut all = rows(300);
    for (i, s) in all.iter_mut().enumerate() {
        s.updated_at = chrono::DateTime::from_timestamp(1_000 + (i as i64 * 7) % 50, 0);
    }
    let mut l = List::new(Filter::default(), Arc::new(|| {}));
    l.upsert(all.clone());
    l.shown();
    l.tick(0);
    let mut seed = 7u64;
    for step in 0..40 {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let i = (seed >> 33) as usize % (all.len() + 3);
        let s = if i < all.len() {
            let s = &mut all[i];
            s.updated_at = chrono::DateTime::from_timestamp(2_000 + step, 0);
            s.archived = step % 11 == 0;
            s.pinned_flag = step % 13 == 0;
            s.title = format!("title {i} step {step}");
            s.clone()
        } else {
            let mut s = rows(1).pop().unwrap();
            s.id = format!("new{step}");
            all.push(s.clone());
            s
        };
        if step == 20 {
            l.set_query("step");
        }
        l.upsert(vec![s]);
        l.tick(0);
        let mut fresh = List::new(Filter::default(), Arc::new(|| {}));
        fresh.upsert(all.clone());
        fresh.set_query(l.query());
        fresh.shown();
        fresh.tick(0);
        assert_eq!(l.len(), fresh.len(), "step {step}");
        let mut got = l.keys(0, l.len());
        let mut want = fresh.keys(0, fresh.len());
        if !l.searching() {
            assert_eq!(got, want, "step {step}: the view order");
        }
        got.sort();
        want.sort();
        assert_eq!(got, want, "step {step}: the same rows");
    }
}

/// A query before the first frame (nothing deferred then) still searches every row.
#[test]
fn a_query_before_the_first_frame_searches_every_row() {
    let mut l = List::new(Filter::default(), Arc::new(|| {}));
    l.upsert(rows(30));
    l.set_query("title 2");
    l.tick(0);
    assert_eq!(l.search.item_count(), 30);
    let n = l.len();
    assert!(
        (1..30).contains(&n),
        "title 2 matches some rows, not all: {n}"
    );
    assert!(l.keys(0, n).iter().all(|k| k.1.contains('2')));
}
