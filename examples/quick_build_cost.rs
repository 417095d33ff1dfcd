//! The quick search's items for N sessions built as the browser builds them (`Built::of`,
//! two halves on two threads from 4,096 rows): process CPU and wall time, median of rounds
//! (issue 10: a warm start is searchable once they are built, after the stores' checks).
//! Usage: `quick_build_cost [CORPUS_DIR] [ROUNDS]`.
use spool::search::quick::Built;
use spool::store::{Roots, Stores};
use std::sync::Arc;
use std::time::Instant;

#[path = "common/clock.rs"]
mod clock;

// As the `spool` binary: its allocator is part of what is measured.
spool::allocator!();

fn main() {
    let mut args = std::env::args().skip(1);
    let dir = args
        .next()
        .unwrap_or("/tmp/spool-bench/corpus-100000".into());
    let rounds: usize = args.next().map_or(9, |s| s.parse().unwrap());
    let stores = Stores::open(&Roots::all_in(std::path::Path::new(&dir)));
    let rows: Vec<Arc<_>> = stores.list_all().into_iter().map(Arc::new).collect();
    let (mut cpu, mut wall) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        let (c, t) = (
            clock::cpu_ms(libc::CLOCK_PROCESS_CPUTIME_ID),
            Instant::now(),
        );
        let built = Built::of(rows.clone());
        wall.push(t.elapsed().as_secs_f64() * 1e3);
        cpu.push(clock::cpu_ms(libc::CLOCK_PROCESS_CPUTIME_ID) - c);
        drop(built);
    }
    cpu.sort_by(f64::total_cmp);
    wall.sort_by(f64::total_cmp);
    println!(
        "{} rows: items built in {:.1} ms of CPU, {:.1} ms wall (medians of {rounds})",
        rows.len(),
        cpu[rounds / 2],
        wall[rounds / 2]
    );
}
