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
            s.set_title(format!("title {i}"));
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
            s.set_title(format!("title {i} step {step}"));
            s.clone()
        } else {
            let mut s = rows(1).pop().unwrap();
            s.set_id(format!("new{step}"));
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

/// The matches of `queries` in `l`, as keys in view order.
fn matches_of(l: &mut List, queries: &[&str]) -> Vec<Vec<Key>> {
    queries
        .iter()
        .map(|q| {
            l.set_query(q);
            l.finish();
            l.keys(0, l.len())
        })
        .collect()
}

/// A long list's matcher items are built on a thread after the first frame (they held the
/// first key for 1.3 s at 100k rows, issue 10). Rows re-read and added meanwhile are patched
/// in once the build is installed, a removal makes the build stale, and once the items are
/// in every query matches what a list built on the UI thread matches.
#[test]
fn a_long_lists_items_are_built_on_a_thread_and_patched() {
    let n = background::ON_A_THREAD_FROM + 100;
    let mut l = List::new(Filter::default(), Arc::new(|| {}));
    l.upsert(rows(n));
    l.shown();
    l.tick(0);
    assert!(l.building.is_some(), "the build runs on a thread");
    assert_eq!(
        l.search.item_count(),
        0,
        "no item is built on the UI thread"
    );
    // Re-read while building: a retitled row and a new one.
    let mut retitled = rows(6).pop().unwrap();
    retitled.set_title("zebra crossing");
    let mut added = SessionSummary::new(StoreKind::Loom, "new", "/a");
    added.set_title("walrus tusk");
    added.has_user_message = true;
    l.upsert(vec![retitled.clone(), added.clone()]);
    assert!(
        l.building.is_some(),
        "a re-read row does not make the build stale"
    );
    // A batch big enough to re-sort the whole list (as a cold load sends) does not either.
    let bulk: Vec<SessionSummary> = (0..40)
        .map(|i| {
            let mut s = SessionSummary::new(StoreKind::Loom, format!("bulk{i}"), "/a");
            s.set_title(format!("bison {i}"));
            s.has_user_message = true;
            // Distinct recency: equal ranks are ordered by when an item came, which differs
            // between a patched list and a fresh one.
            s.updated_at = chrono::DateTime::from_timestamp(2_000_000_000 + i, 0);
            s
        })
        .collect();
    let generation = l.generation;
    l.upsert(bulk.clone());
    assert!(
        l.sorted.len() < bulk.len() * 64,
        "the batch re-sorts the list"
    );
    assert_eq!(
        l.generation, generation,
        "a re-sort does not make the build stale"
    );

    let queries = ["zebra", "walrus", "title 5", "title 5 !zebra", "bison"];
    let got = matches_of(&mut l, &queries);
    assert!(l.building.is_none() && l.search.item_count() == n + 41);
    let mut fresh = List::new(Filter::default(), Arc::new(|| {}));
    let mut all = rows(n);
    all[5] = retitled;
    all.push(added);
    all.extend(bulk);
    fresh.upsert(all);
    fresh.shown();
    // A query set first does not wait for the build either: it is still running.
    fresh.set_query("zebra");
    assert!(fresh.tick(0) || fresh.building.is_none());
    let want = matches_of(&mut fresh, &queries);
    assert_eq!(got, want);
    assert_eq!(got[0], vec![(StoreKind::Loom, "s5".to_string())]);
    assert_eq!(got[1], vec![(StoreKind::Loom, "new".to_string())]);
    assert_eq!(got[4].len(), 40);

    // A removal while building: the build is stale, and the removed row is not matched.
    l.set_query("");
    l.remove(&[(StoreKind::Loom, "s7".into())]);
    l.tick(0);
    assert!(l.building.is_some());
    l.upsert(vec![{
        let mut s = rows(9).pop().unwrap();
        s.set_title("late okapi");
        s
    }]);
    let got = matches_of(&mut l, &["title 7", "okapi"]);
    assert!(!got[0].contains(&(StoreKind::Loom, "s7".to_string())));
    assert!(got[0].contains(&(StoreKind::Loom, "s71".to_string())));
    assert_eq!(got[1], vec![(StoreKind::Loom, "s8".to_string())]);
}

/// The head's rows on screen with their items, then the catalog's long batch: as a warm
/// start at 100k sessions does.
/// The keys `l` shows, sorted (an "okapi" query's matches).
fn okapis(l: &List) -> Vec<(StoreKind, String)> {
    let mut got = l.keys(0, l.len());
    got.sort();
    got
}

/// What "okapi" matches in `head_then_long_batch`: one row of the head, one of the batch.
fn both_okapis() -> Vec<(StoreKind, String)> {
    vec![
        (StoreKind::Loom, "b7".to_string()),
        (StoreKind::Loom, "s3".to_string()),
    ]
}

fn head_then_long_batch(notify: Arc<dyn Fn() + Sync + Send>) -> List {
    let mut l = List::new(Filter::default(), notify);
    let mut head = rows(30);
    head[3].set_title("okapi in the head");
    l.upsert(head);
    l.shown();
    l.tick(0);
    assert_eq!(
        l.search.item_count(),
        30,
        "a short list's items are built at once"
    );
    let long: Vec<SessionSummary> = (0..background::ON_A_THREAD_FROM + 100)
        .map(|i| {
            let mut s = SessionSummary::new(StoreKind::Loom, format!("b{i}"), "/b");
            s.set_title(if i == 7 {
                "okapi later".to_string()
            } else {
                format!("bulk {i}")
            });
            s.has_user_message = true;
            s.cwd = Some("/b".into());
            s
        })
        .collect();
    l.upsert(long);
    l
}

/// The catalog's long batch is listed without building its items in the upsert (at 100k
/// rows that held the UI thread, and a `/` typed meanwhile, for over a second: issue 10);
/// the next tick hands them to a build on a thread.
#[test]
fn a_long_batch_leaves_its_items_to_a_thread() {
    let mut l = head_then_long_batch(Arc::new(|| {}));
    assert_eq!(l.len(), 30 + background::ON_A_THREAD_FROM + 100);
    assert_eq!(
        l.search.item_count(),
        30,
        "no item built for the batch in the upsert"
    );
    l.tick(0);
    assert!(
        l.building.is_some(),
        "the next tick builds them on a thread"
    );
    assert_eq!(l.search.item_count(), 30);
    l.set_query("okapi");
    l.finish();
    assert_eq!(
        l.keys(0, l.len()).len(),
        2,
        "once built, every row is matched"
    );
}

/// A query typed while the items are built matches the items there are at once (the key
/// gets its frame), and the full matches come when the build is in; the build wakes the
/// run loop for that frame.
#[test]
fn a_query_during_a_build_does_not_wait_for_it() {
    let mut l = head_then_long_batch(Arc::new(|| {}));
    l.tick(0);
    assert!(l.building.is_some());
    // The thread's build is replaced by one this test finishes when it wants.
    let (held, done) = background::Pending::held(l.generation);
    l.building = Some(held);
    l.set_query("okapi");
    assert!(l.tick(0), "still building");
    let head_only = vec![(StoreKind::Loom, "s3".to_string())];
    assert_eq!(
        l.keys(0, l.len()),
        head_only,
        "the head's match, without waiting"
    );
    assert_eq!(l.selected, Some(head_only[0].clone()));
    done.send(crate::search::quick::Built::of(l.sorted.clone()))
        .unwrap();
    assert!(!l.tick(0), "the build is in");
    assert_eq!(okapis(&l), both_okapis());
    // A real build calls `notify` when done (the run loop's wake).
    let (woke_tx, woke) = std::sync::mpsc::channel();
    let woke_tx = std::sync::Mutex::new(woke_tx);
    let notify = Arc::new(move || {
        let _ = woke_tx.lock().unwrap().send(());
    });
    let three = rows(3).into_iter().map(Arc::new).collect();
    let p = background::Pending::start(0, three, notify);
    assert!(p.is_some());
    let wait = std::time::Duration::from_secs(20);
    assert!(
        woke.recv_timeout(wait).is_ok(),
        "a finished build wakes the loop"
    );
}

/// A query while the items there are hold rows that left the view (a filter changed since)
/// waits for the build: it never shows a row the view does not hold.
#[test]
fn a_query_after_a_filter_change_waits_for_its_items() {
    let mut l = head_then_long_batch(Arc::new(|| {}));
    l.tick(0);
    // Only the long batch's directory: the head's okapi leaves the view.
    let f = Filter {
        cwd: Some("/b".into()),
        ..Filter::default()
    };
    l.set_filter(f);
    l.set_query("okapi");
    assert!(!l.tick(0), "the items are built at once for the query");
    let b7 = (StoreKind::Loom, "b7".to_string());
    assert_eq!(
        l.keys(0, l.len()),
        vec![b7],
        "never the head's okapi, out of view"
    );
}

/// Re-read rows get their matcher items replaced in place, a whole batch at once, hidden
/// ones (in the view neither before nor after) included: not a rebuild of every item, which
/// held the old items beside the new (issue 10: +18 MB at 100k when 1,000 sessions were
/// re-read). The matches are those of a list built from scratch.
#[test]
fn a_batch_of_rereads_with_hidden_rows_keeps_the_items() {
    let mut all = rows(400);
    for (i, s) in all.iter_mut().enumerate() {
        s.archived = i % 10 == 0;
    }
    let mut l = List::new(Filter::default(), Arc::new(|| {}));
    l.upsert(all.clone());
    l.shown();
    l.tick(0);
    assert_eq!(l.search.item_count(), 360);
    let mut batch = Vec::new();
    for i in (0..400).step_by(5) {
        all[i].set_title(format!("renamed {i}"));
        batch.push(all[i].clone());
    }
    // The same session twice in one batch: the second replaces the first's new item.
    all[5].set_title("renamed twice");
    batch.push(all[5].clone());
    l.upsert(batch);
    assert!(
        !l.search_dirty && l.building.is_none(),
        "every item rebuilt"
    );
    assert_eq!(l.search.item_count(), 360);
    let mut fresh = List::new(Filter::default(), Arc::new(|| {}));
    fresh.upsert(all.clone());
    fresh.shown();
    fresh.tick(0);
    let queries = [
        "renamed",
        "renamed twice",
        "title 3",
        "renamed 15",
        "renamed 5",
    ];
    let sorted = |mut m: Vec<Vec<Key>>| {
        m.iter_mut().for_each(|k| k.sort());
        m
    };
    let got = sorted(matches_of(&mut l, &queries));
    assert_eq!(got, sorted(matches_of(&mut fresh, &queries)));
    assert!(got[1].len() == 1 && got[1][0].1 == "s5", "{:?}", got[1]);
    assert!(
        got[4].iter().all(|k| k.1 != "s5" && k.1 != "s10"),
        "{:?}",
        got[4]
    );
}

/// A build started while a stat pass is under way waits for it to end (their memory peaks
/// must not stack, `heap::Peaks`), and a query's wait for the items hurries it.
#[test]
fn a_build_waits_for_the_passes_unless_a_query_needs_it() {
    let build = |peaks| {
        let (woke_tx, woke) = std::sync::mpsc::channel();
        let woke_tx = std::sync::Mutex::new(woke_tx);
        let notify = Arc::new(move || {
            let _ = woke_tx.lock().unwrap().send(());
        });
        let rows = rows(3).into_iter().map(Arc::new).collect();
        (
            background::Pending::start_after(peaks, 0, rows, notify).unwrap(),
            woke,
        )
    };
    let short = std::time::Duration::from_millis(300);
    let long = std::time::Duration::from_secs(20);
    let peaks: &'static crate::heap::Peaks = Box::leak(Box::default());
    let pass = peaks.begin();
    let (_p, woke) = build(peaks);
    assert!(woke.recv_timeout(short).is_err(), "it waits for the pass");
    drop(pass);
    assert!(woke.recv_timeout(long).is_ok(), "and builds once it ended");
    // Under a pass again: a query that waits for the items gets them.
    let _pass = peaks.begin();
    let (p, _) = build(peaks);
    let t = std::time::Instant::now();
    assert!(matches!(p.poll(0, true), background::Poll::Done(_)));
    assert!(t.elapsed() < long);
}

/// A query typed while the items wait for a stat pass (`heap::Peaks`) hurries their build:
/// the list matches every row without the pass having ended.
#[test]
fn a_query_hurries_items_that_wait_for_a_pass() {
    let mut l = head_then_long_batch(Arc::new(|| {}));
    l.tick(0);
    let peaks: &'static crate::heap::Peaks = Box::leak(Box::default());
    let _pass = peaks.begin();
    // The build as a warm start makes it, waiting for the pass that never ends here.
    l.building =
        background::Pending::start_after(peaks, l.generation, l.sorted.clone(), Arc::new(|| {}));
    l.set_query("okapi");
    // Well before the build would stop waiting by itself (`WAIT_AT_MOST`, 2 s).
    let until = std::time::Instant::now() + std::time::Duration::from_millis(1500);
    let mut building = true;
    while building && std::time::Instant::now() < until {
        std::thread::sleep(std::time::Duration::from_millis(5));
        building = l.tick(0);
    }
    assert!(!building, "the query hurried the build");
    assert_eq!(
        okapis(&l),
        both_okapis(),
        "every row matched, the pass still under way"
    );
}
