//! The browser list's heap, counted by a counting allocator (bytes, not time): each session's
//! summary is held once and shared by the view order, the matcher and the index's first pass
//! (issue 10: at 100k sessions the copies were ~80 MB of a 470 MB peak).

mod common;

use std::sync::Arc;

use chrono::{TimeZone, Utc};
use common::counting::{Counting, live, peak_during};
use spool::app::list::List;
use spool::model::{SessionSummary, StoreKind};
use spool::store::registry::Filter;

#[global_allocator]
static A: Counting = Counting;

const N: usize = 4000;

fn rows() -> Vec<SessionSummary> {
    (0..N)
        .map(|i| {
            let id = format!("20260314-{i:06}");
            let path = format!("/home/u/.loom/sessions/{id}.jsonl");
            let mut s = SessionSummary::new(StoreKind::Loom, id, path);
            s.set_title(format!("Fix the parser in module {i}"));
            s.set_summary(format!(
                "* Goal: make test {i} pass\n* Cause: a trailing slash"
            ));
            s.set_first_prompt(format!("why does test {i} fail after the router change?"));
            s.cwd = Some("/home/u/projects/acme-api".into());
            s.has_user_message = true;
            s.updated_at = Utc.timestamp_opt(1_770_000_000 + i as i64, 0).single();
            s
        })
        .collect()
}

/// The matcher's items, per row: what it matches (the lower-cased text, the lower-cased title
/// packed with the others, and the text's letter pairs, 88 bytes) and a pointer to the
/// shared row, never a copy of the id. Measured: 347 bytes a row
/// with these short rows (321 when the title was a UTF-32 string and the text was held both
/// as written and lower-cased: the second copy costs more than the pairs on longer text); a
/// copied key (as before) added 47. 371 since each title's hashed letter pairs (16 bytes,
/// `tight::Letters`) rule out titles without reading them, a third of a narrowing key's time
/// at 100k sessions; the recency moved beside the titles costs nothing more. 308 since an
/// item keeps no text as written (a pointer to its row instead: no capital bits, no slot
/// for a second copy) and not its title (`Titles` packs it already): 300 measured, with
/// each item's capitals as bits in the room its narrowed field ends left. 244 since a text's
/// letter pairs are 32 bytes, not 88 (a bit each for the common pairs, shared by the rest):
/// the old code measures 300 and fails this bound.
const ITEM_BYTES: usize = 248;

/// One test: the counts are process-wide, so nothing else may allocate meanwhile.
#[test]
fn rows_are_held_once_and_shared() {
    let mut l = List::new(Filter::default(), Arc::new(|| {}));
    l.upsert(rows());
    // The first tick after the first frame builds the matcher's items (on a thread for a
    // list this long); a query waits for them, and one that matches nothing adds no match.
    let before = live();
    l.shown();
    l.tick(0);
    l.set_query("zzqqxxjj");
    // A query no longer waits for a build: finish it, so that no thread of the list's is
    // still allocating while the counts below are taken.
    l.finish();
    assert_eq!(l.len(), 0);
    let items = live() - before;
    l.set_query("");
    l.tick(0);
    assert_eq!(l.len(), N);
    assert!(
        items <= N * ITEM_BYTES,
        "matcher items: {} bytes a row (bound {ITEM_BYTES})",
        items / N
    );

    // The index's first pass gets the list's rows, not a copy: a pointer each.
    let (shared, bytes) = peak_during(|| l.shared_rows());
    assert_eq!(shared.len(), N);
    assert!(
        bytes <= N * 8 + 1024,
        "handing the listing to the index copied rows: {bytes} bytes for {N} rows"
    );
    drop(shared);

    // Re-sorting the view (a filter change, a batch of rows) holds pointers, not copies of
    // every id: at most two orders of pointers at once.
    let (_, bytes) = peak_during(|| l.resort());
    assert!(
        bytes <= 2 * N * 8 + 1024,
        "a re-sort copied keys: {bytes} bytes for {N} rows"
    );
    eprintln!(
        "items {} B/row, shared {}, resort {bytes}",
        items / N,
        N * 8
    );
    drop(l);

    // The catalog's rows arrive in one long batch after the head's first frame, into a list
    // whose matcher items are live: they take their room at once. Pushed one by one, every
    // matcher vector grew by doubling, to up to twice the rows (issue 10): here 2,610 rows
    // in slots for 5,120, about 150 bytes a row more. A batch this long has its items built
    // on a thread, so the count is taken once that build is in (before it, no item is).
    let mut all: Vec<Arc<SessionSummary>> = rows().into_iter().map(Arc::new).collect();
    all.truncate(2610);
    let batch = all.split_off(10);
    let mut l = List::new(Filter::default(), Arc::new(|| {}));
    l.upsert_shared(all);
    l.shown();
    l.tick(0);
    let m = batch.len();
    let before = live();
    l.upsert_shared(batch);
    l.finish();
    let added = live() - before;
    assert_eq!(l.len(), m + 10);
    assert!(
        added <= m * (ITEM_BYTES + LIST_BYTES),
        "a long batch into live items: {} bytes a row (bound {})",
        added / m,
        ITEM_BYTES + LIST_BYTES
    );
    eprintln!("long batch {} B/row", added / m);
}

/// The list's own bytes a row: its table and its view order (pointers and hashes).
const LIST_BYTES: usize = 40;
