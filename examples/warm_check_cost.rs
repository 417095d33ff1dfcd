//! The browser's warm check taken apart, step by step on one thread at a time, in process CPU
//! time (every thread a step starts counts) and wall time, median of rounds: the catalog's
//! decode, then per store its survey (discovery and the stat pass) and its check against the
//! decoded metas (issue 10's warm "loaded and checked"). CPU time does not depend on the
//! machine's load the way a wall clock does.
//! Usage: `warm_check_cost CORPUS_DIR CACHE_DIR [ROUNDS] [claude=DIR codex=DIR pi=DIR]`
//! (an agent store's root given as `--claude-dir` etc. would give it); the state directory
//! is `$XDG_DATA_HOME/spool/state`, as the browser's, so the keys are the catalog's.
use spool::catalog::{live::Cat, survey, warm};
use spool::store::{Roots, Stores};
use std::path::Path;
use std::time::Instant;

#[path = "common/clock.rs"]
mod clock;

// As the `spool` binary: its allocator is part of what is measured.
spool::allocator!();

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// `f`'s process CPU and wall time in ms, and what it returned.
fn timed<T>(f: impl FnOnce() -> T) -> (f64, f64, T) {
    let (c, t) = (
        clock::cpu_ms(libc::CLOCK_PROCESS_CPUTIME_ID),
        Instant::now(),
    );
    let out = f();
    let cpu = clock::cpu_ms(libc::CLOCK_PROCESS_CPUTIME_ID) - c;
    (cpu, t.elapsed().as_secs_f64() * 1e3, out)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let corpus = args.next().expect("CORPUS_DIR");
    let cache = args.next().expect("CACHE_DIR");
    let rounds: usize = args.next().map_or(5, |s| s.parse().unwrap());
    let mut roots = Roots::all_in(Path::new(&corpus));
    roots.state_dir = spool::store::state::default_root(Path::new("/nonexistent"));
    for a in args {
        let (k, v) = a.split_once('=').expect("STORE=DIR");
        let v = Path::new(v).to_path_buf();
        match k {
            "claude" => roots.claude_dir = v,
            "codex" => roots.codex_dir = v,
            "pi" => roots.pi_dir = v,
            _ => panic!("unknown store {k}"),
        }
    }
    let stores = Stores::open(&roots);
    let mut figures: Vec<(String, Vec<f64>, Vec<f64>)> = Vec::new();
    let mut note =
        |name: String, cpu: f64, wall: f64| match figures.iter_mut().find(|f| f.0 == name) {
            Some(f) => {
                f.1.push(cpu);
                f.2.push(wall);
            }
            None => figures.push((name, vec![cpu], vec![wall])),
        };
    for _ in 0..rounds {
        let (cpu, wall, (rows, w)) = timed(|| warm::open(Path::new(&cache), &stores));
        note(format!("decode ({} rows)", rows.len()), cpu, wall);
        for (s, known) in stores.stores.iter().zip(w.known) {
            let Some(metas) = known else { continue };
            let kind = s.kind().as_str();
            // Discovery alone (the survey's first step), then the survey as the browser
            // takes it (discovery again, packed, keyed).
            let (cpu, wall, found) = timed(|| s.discover_unordered());
            note(format!("{kind} discovery ({})", found.len()), cpu, wall);
            drop(found);
            let (cpu, wall, packed) = timed(|| survey::packed(s.as_ref()));
            note(format!("{kind} survey"), cpu, wall);
            let (cpu, wall, checked) = timed(|| {
                spool::catalog::pass::check_packed(s.as_ref(), Cat::by_id(metas), &packed)
            });
            note(
                format!("{kind} check (re-read {})", checked.fresh.len()),
                cpu,
                wall,
            );
        }
        drop(rows);
    }
    for (name, mut cpu, mut wall) in figures {
        println!(
            "{name:32} {:7.1} ms CPU {:7.1} ms wall",
            median(&mut cpu),
            median(&mut wall)
        );
    }
}
