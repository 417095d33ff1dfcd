use spool::store::{Roots, Span, Stores};
use std::time::Instant;
fn main() {
    let dir = std::env::args().nth(1).unwrap();
    let big = std::env::args().nth(2);
    let stores = Stores::open(&Roots::all_in(std::path::Path::new(&dir)));
    for s in &stores.stores {
        let t = Instant::now();
        let c = s.discover();
        let d = t.elapsed();
        let t = Instant::now();
        let n = c.iter().take(256).filter_map(|c| s.summarize(c)).count();
        println!(
            "{}: discover {} in {:?}; first {} summaries in {:?}",
            s.kind(),
            c.len(),
            d,
            n,
            t.elapsed()
        );
    }
    if let Some(b) = big {
        let t = Instant::now();
        let tr = stores.stores[0]
            .transcript(&b, Span::LastRounds(3))
            .unwrap();
        println!(
            "last page: {} entries in {:?}",
            tr.entries.len(),
            t.elapsed()
        );
    }
}
