//! Per-key quick-search compute at N sessions: `set_query` + `tick` + the first screen of keys,
//! typing a query a letter at a time (wall and process CPU time, median of rounds). Usage:
//! `quick_keys [CORPUS_DIR] [QUERY] [ROUNDS]` (issue 8 item 1, issue 10).
use spool::search::Search;
use spool::store::{Roots, Stores};
use std::sync::Arc;
use std::time::Instant;

#[path = "common/clock.rs"]
mod clock;

// As the `spool` binary: its allocator is part of what is measured.
spool::allocator!();

fn cpu_ms() -> f64 {
    clock::cpu_ms(libc::CLOCK_PROCESS_CPUTIME_ID)
}

fn main() {
    let dir = std::env::args()
        .nth(1)
        .unwrap_or("/tmp/spool-bench/corpus-100000".into());
    let q = std::env::args().nth(2).unwrap_or("fixlogin".into());
    let rounds: usize = std::env::args().nth(3).map_or(7, |s| s.parse().unwrap());
    let stores = Stores::open(&Roots::all_in(std::path::Path::new(&dir)));
    let rows = stores.list_all();
    let n = rows.len();
    let mut s = Search::new(Arc::new(|| {}));
    let t = Instant::now();
    for r in rows {
        s.push(Arc::new(r));
    }
    eprintln!("{n} rows, items built in {:?}", t.elapsed());
    let chars: Vec<char> = q.chars().collect();
    let mut times = vec![Vec::new(); chars.len()];
    let mut cpu = vec![Vec::new(); chars.len()];
    let mut counts = vec![0; chars.len()];
    for _ in 0..rounds {
        let mut typed = String::new();
        for (i, c) in chars.iter().enumerate() {
            typed.push(*c);
            let t = Instant::now();
            let c0 = cpu_ms();
            s.set_query(&typed);
            s.tick(0);
            let keys = s.matched_keys(0..40);
            times[i].push(t.elapsed().as_secs_f64() * 1e3);
            cpu[i].push(cpu_ms() - c0);
            std::hint::black_box(keys);
            counts[i] = s.matched_count();
        }
        s.set_query("");
        s.tick(0);
    }
    let mut all = Vec::new();
    for (i, t) in times.iter_mut().enumerate() {
        all.extend(t.iter().copied());
        t.sort_by(|a, b| a.partial_cmp(b).unwrap());
        let c = &mut cpu[i];
        c.sort_by(|a, b| a.partial_cmp(b).unwrap());
        let typed: String = chars[..=i].iter().collect();
        println!(
            "{typed:>10} {:>7} matches  wall median {:7.2} ms  min {:7.2} max {:7.2}  cpu median {:7.2} ms min {:7.2}",
            counts[i],
            t[t.len() / 2],
            t[0],
            t[t.len() - 1],
            c[c.len() / 2],
            c[0]
        );
    }
    all.sort_by(|a, b| a.partial_cmp(b).unwrap());
    println!(
        "all keys: median {:.2} ms, max {:.2} ms",
        all[all.len() / 2],
        all[all.len() - 1]
    );
}
