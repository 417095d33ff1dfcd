//! Each store's discovery (and the summaries of its first screenful) at N sessions, in thread
//! CPU time and wall time, median of rounds: the cold first paint's critical path (issue 10).
//! Usage: `discover_cost [CORPUS_DIR] [ROUNDS]`.
use spool::store::{Roots, Stores};
use std::time::Instant;

#[path = "common/clock.rs"]
mod clock;

fn thread_cpu_ms() -> f64 {
    clock::cpu_ms(libc::CLOCK_THREAD_CPUTIME_ID)
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let dir = std::env::args()
        .nth(1)
        .unwrap_or("/tmp/spool-bench/corpus-100000".into());
    let rounds: usize = std::env::args().nth(2).map_or(5, |s| s.parse().unwrap());
    let stores = Stores::open(&Roots::all_in(std::path::Path::new(&dir)));
    for s in &stores.stores {
        let (mut cpu, mut wall, mut first) = (Vec::new(), Vec::new(), Vec::new());
        let mut n = 0;
        for _ in 0..rounds {
            let (c0, t0) = (thread_cpu_ms(), Instant::now());
            let found = s.discover();
            cpu.push(thread_cpu_ms() - c0);
            wall.push(t0.elapsed().as_secs_f64() * 1e3);
            n = found.len();
            let c1 = thread_cpu_ms();
            let rows = found.iter().take(40).filter_map(|c| s.summarize(c)).count();
            first.push(thread_cpu_ms() - c1);
            assert!(rows <= 40);
        }
        if n > 0 {
            println!(
                "{:8} {n:6} found: discover {:.1} ms CPU ({:.1} wall), first 40 summaries {:.1} ms CPU",
                s.kind().as_str(),
                median(&mut cpu),
                median(&mut wall),
                median(&mut first)
            );
        }
    }
}
