//! A warm start's heap, counted by a counting allocator (bytes, not time): the catalog's rows
//! are decoded straight into the `Arc`s the list keeps, so neither a vector of inline rows
//! nor a second copy of each row is made on the way to the list (issue 10: at 100k sessions
//! the entries with inline rows were 46 MB and the rows moved into the list another 46 MB,
//! alive at once).

mod common;

use std::sync::Arc;

use chrono::{TimeZone, Utc};
use common::Home;
use common::counting::{Counting, live, peak_during};
use spool::app::list::List;
use spool::catalog::{self, Catalog, Entry, Meta, Section};
use spool::model::{SessionSummary, StoreKind};
use spool::store::registry::Filter;

#[global_allocator]
static A: Counting = Counting;

const N: usize = 3000;

fn row(dir: &std::path::Path, i: usize) -> SessionSummary {
    let id = format!("20260314-{i:06}");
    let mut s = SessionSummary::new(StoreKind::Loom, id.clone(), dir.join(format!("{id}.jsonl")));
    s.set_title(format!("Fix the parser in module {i}"));
    s.set_summary(format!("* Goal: make test {i} pass"));
    s.set_first_prompt(format!("why does test {i} fail after the router change?"));
    s.cwd = Some("/home/u/projects/acme-api".into());
    s.has_user_message = true;
    s.updated_at = Utc.timestamp_opt(1_770_000_000 + i as i64, 0).single();
    s
}

/// One test: the counts are process-wide, so nothing else may allocate meanwhile.
#[test]
fn a_warm_start_hands_the_catalogs_rows_to_the_list_without_copies() {
    let h = Home::empty();
    let stores = h.stores();
    let dir = common::store_of(&stores, StoreKind::Loom)
        .sessions_dir()
        .to_path_buf();
    std::fs::create_dir_all(&dir).unwrap();
    let entries = (0..N)
        .map(|i| {
            let r = row(&dir, i);
            let meta = Meta {
                id: r.id.to_string(),
                path: r.path(),
                key: i as u64,
                cwd: r.cwd.clone(),
                cwd_dir: true,
                expires: None,
            };
            Entry {
                meta,
                row: Some(Arc::new(r)),
            }
        })
        .collect();
    let cache = h.path().join(".cache/spool");
    let cat = Catalog {
        sections: vec![Section {
            kind: StoreKind::Loom,
            dir: dir.clone(),
            entries,
        }],
    };
    catalog::save(&cache, &cat).unwrap();
    drop(cat);
    let file = std::fs::metadata(cache.join(catalog::FILE)).unwrap().len() as usize;

    // Decoding: the file's bytes, each row once (in its `Arc`), the metas, and a pointer a
    // row; not a vector of entries holding 344-byte rows inline, then a second vector of
    // the rows moved out of them.
    let before = live();
    let ((rows, warm), peak) = peak_during(|| catalog::warm::open(&cache, &stores));
    let kept = live() - before;
    assert_eq!(rows.len(), N);
    assert!(
        kept <= N * KEPT_BYTES,
        "a warm start keeps {} bytes a row (bound {KEPT_BYTES})",
        kept / N
    );
    let transient = peak - kept;
    assert!(
        transient <= file + N * ENTRY_BYTES,
        "decoding held {} bytes a row beside the file and what it keeps (bound {ENTRY_BYTES})",
        (transient - file.min(transient)) / N
    );

    // The list keeps those very rows: a map slot, a key and a pointer or two a row, never a
    // new copy of the row.
    let mut l = List::new(Filter::default(), Arc::new(|| {}));
    let first = Arc::as_ptr(&rows[0]);
    let (_, bytes) = peak_during(|| l.upsert_shared(rows));
    assert!(
        bytes <= N * LIST_BYTES,
        "the list copied rows: {} bytes a row (bound {LIST_BYTES})",
        bytes / N
    );
    let key = (StoreKind::Loom, "20260314-000000".to_string());
    assert!(std::ptr::eq(l.get(&key).unwrap(), first));
    assert_eq!(l.len(), N);
    drop(warm);
    eprintln!(
        "file {file} B, kept {} B/row, transient beside the file {} B/row, list {} B/row",
        kept / N,
        (transient - file.min(transient)) / N,
        bytes / N
    );
}

/// Per row, what a warm start keeps for these rows: the row in its `Arc` with its strings,
/// the meta, a pointer. 758 bytes while every row held its own cwd (25 bytes here) in a
/// 24-byte `String`, and its model likewise; 717 with both `Shared` (one copy for all rows);
/// 608 measured at 89bee10 (the figures above were taken before later cuts); 512 with the
/// rare fields boxed and the badges a slice of `Shared` (the row 328 -> 232); 472 with id,
/// title, summary, first_prompt and path boxed (232 -> 192); 422 at 0613e14, and 382 with
/// the path held as its directory's number and its name without the id (`row_text`). The
/// old code fails this bound.
const KEPT_BYTES: usize = 400;

/// Per row, what decoding may hold beside the file's bytes and what it keeps: the entry
/// (a meta and a pointer to the row, about 112 bytes) while its section is split.
/// An entry with the row inline was about 450 bytes, and the rows moved out of the entries
/// another 344 (more with the vector's slack).
const ENTRY_BYTES: usize = 160;

/// Per row, what the list adds for rows already shared: its map (a slot of key and pointer,
/// the key's copy of the id), the view order's pointer and the re-sort's. A row copied into
/// a new `Arc` (as a plain `upsert` must) is 360 bytes more.
const LIST_BYTES: usize = 200;
