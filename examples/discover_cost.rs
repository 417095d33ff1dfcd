//! Each store's discovery (and the summaries of its first screenful) at N sessions, in CPU
//! time (every thread of the process: discovery lists on two) and wall time, median of
//! rounds: the cold first paint's critical path (issue 10). A store with a cheaper guess at
//! its first screen (`Store::first_screen`) gets a second line for that path.
//! Usage: `discover_cost [CORPUS_DIR] [ROUNDS]`.
use spool::store::{Candidate, Roots, Store, Stores};
use std::time::Instant;

#[path = "common/clock.rs"]
mod clock;

// As the `spool` binary: its allocator is part of what is measured.
spool::allocator!();

/// The cold start's first batch (`loader::FIRST_BATCH`).
const FIRST: usize = 32;

fn process_cpu_ms() -> f64 {
    clock::cpu_ms(libc::CLOCK_PROCESS_CPUTIME_ID)
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Medians of (CPU, wall) of `find`, then the CPU of reading the first screenful it gives,
/// and how many candidates it found.
fn cost(s: &dyn Store, rounds: usize, find: impl Fn() -> Vec<Candidate>) -> [f64; 4] {
    let (mut cpu, mut wall, mut read) = (Vec::new(), Vec::new(), Vec::new());
    let mut n = 0;
    for _ in 0..rounds {
        let (c0, t0) = (process_cpu_ms(), Instant::now());
        let found = find();
        cpu.push(process_cpu_ms() - c0);
        wall.push(t0.elapsed().as_secs_f64() * 1e3);
        n = found.len();
        let c1 = process_cpu_ms();
        let rows = found
            .iter()
            .take(FIRST)
            .filter_map(|c| s.summarize(c))
            .count();
        read.push(process_cpu_ms() - c1);
        assert!(rows <= FIRST);
    }
    [
        median(&mut cpu),
        median(&mut wall),
        median(&mut read),
        n as f64,
    ]
}

fn main() {
    let dir = std::env::args()
        .nth(1)
        .unwrap_or("/tmp/spool-bench/corpus-100000".into());
    let rounds: usize = std::env::args().nth(2).map_or(5, |s| s.parse().unwrap());
    let stores = Stores::open(&Roots::all_in(std::path::Path::new(&dir)));
    for s in &stores.stores {
        let s = s.as_ref();
        let [cpu, wall, read, n] = cost(s, rounds, || s.discover());
        if n == 0.0 {
            continue;
        }
        let kind = s.kind().as_str();
        println!(
            "{kind:8} {n:6} found: discover {cpu:.1} ms CPU ({wall:.1} wall), first {FIRST} \
             summaries {read:.1} ms CPU"
        );
        let [cpu, wall, read, n] = cost(s, rounds, || s.first_screen(FIRST));
        if n > 0.0 {
            println!(
                "{kind:8} {n:6} first screen: {cpu:.1} ms CPU ({wall:.1} wall), its \
                 summaries {read:.1} ms CPU"
            );
        }
    }
}
