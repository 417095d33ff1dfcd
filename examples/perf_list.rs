use spool::store::{Roots, Stores};
fn main() {
    let dir = std::env::args().nth(1).unwrap();
    let stores = Stores::open(&Roots::all_in(std::path::Path::new(&dir)));
    for s in &stores.stores {
        let t = std::time::Instant::now();
        let n = s.list().len();
        println!("{}: {} in {:?}", s.kind(), n, t.elapsed());
    }
}
