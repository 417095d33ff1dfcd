//! Heap held by the quick search's items at N sessions, and the peak while they are built
//! (`Built::of`, two halves on two threads from 4,096 rows): bytes, not time, so a loaded
//! machine does not change them. Usage: `quick_memory [CORPUS_DIR]` (issue 10).
use spool::search::Search;
use spool::search::quick::Built;
use spool::store::{Roots, Stores};
use std::sync::Arc;

#[path = "../tests/common/counting.rs"]
mod counting;

#[global_allocator]
static A: counting::Counting = counting::Counting;

fn main() {
    let dir = std::env::args()
        .nth(1)
        .unwrap_or("/tmp/spool-bench/corpus-100000".into());
    let stores = Stores::open(&Roots::all_in(std::path::Path::new(&dir)));
    let rows: Vec<Arc<_>> = stores.list_all().into_iter().map(Arc::new).collect();
    let n = rows.len();
    let before = counting::live();
    let mut search = Search::new(Arc::new(|| {}));
    let ((), peak) = counting::peak_during(|| search.install(Built::of(rows.clone())));
    let held = counting::live() - before;
    println!(
        "{n} rows: items hold {held} B ({:.1} a row, {:.2} MB); peak while built {peak} B ({:.2} MB)",
        held as f64 / n as f64,
        held as f64 / 1e6,
        peak as f64 / 1e6
    );
}
