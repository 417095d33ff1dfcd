//! Measure the full-text index on a corpus (see `gen_corpus`), for `scripts/bench_search.py`:
//! `index_stats DIR [--build] [--queries N] [--index DIR]`.
//!
//! - `--build`: build the index from nothing and print the seconds it took, the bytes of text
//!   it indexed (documents as capped), the index's bytes on disk and their ratio. Run it under
//!   `/usr/bin/time -v` for the peak RSS.
//! - `--queries N`: on the built index, run each of a few queries N times and print the
//!   median and p99 in ms of query to results (fold into sessions, snippets of the top 20).

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use spool::search::index::{self, TextIndex};
use spool::search::query::TextQuery;
use spool::store::{Roots, Span, Stores};

const USAGE: &str = "usage: index_stats DIR [--build] [--queries N] [--index DIR]";
const QUERIES: [&str; 4] = [
    "timeout",
    "\"router test\"",
    "invoice -cache",
    "sensor backoff",
];

fn dir_bytes(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| match e.metadata() {
            Ok(m) if m.is_dir() => dir_bytes(&e.path()),
            Ok(m) => m.len(),
            Err(_) => 0,
        })
        .sum()
}

/// The bytes of text the index holds: every document as `index::docs` caps it.
fn text_bytes(stores: &Stores) -> u64 {
    let mut n = 0;
    for s in stores.list_all().iter().filter(|s| s.error.is_none()) {
        if let Ok(t) = stores.store_for(s).transcript(&s.id, Span::All) {
            n += index::docs(s, &t)
                .iter()
                .map(|d| d.text.len() as u64)
                .sum::<u64>();
        }
    }
    n
}

fn ms_at(sorted: &[f64], q: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * q).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn run() -> Result<(), String> {
    let mut args = std::env::args().skip(1);
    let (mut corpus, mut build, mut queries, mut at) = (None, false, 0usize, None);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--build" => build = true,
            "--queries" => {
                let v = args.next().ok_or(USAGE)?;
                queries = v.parse().map_err(|_| format!("not a number: {v}"))?;
            }
            "--index" => at = Some(PathBuf::from(args.next().ok_or(USAGE)?)),
            _ if a.starts_with('-') => return Err(USAGE.into()),
            _ => corpus = Some(PathBuf::from(a)),
        }
    }
    let corpus = corpus.ok_or(USAGE)?;
    let dir = at.unwrap_or_else(|| corpus.with_extension("index-stats"));
    let stores = Stores::open(&Roots::all_in(&corpus));
    if build {
        index::wipe(&dir);
        let t0 = Instant::now();
        let rows = stores.list_all();
        let mut ix = TextIndex::open(&dir).map_err(|e| e.to_string())?;
        ix.update(&rows, &stores, &|_, _| {})
            .map_err(|e| e.to_string())?;
        let secs = t0.elapsed().as_secs_f64();
        let (text, size) = (text_bytes(&stores), dir_bytes(&dir));
        println!(
            "build_s {secs:.3} sessions {} text_bytes {text} index_bytes {size} ratio {:.3}",
            ix.session_count(),
            size as f64 / text.max(1) as f64
        );
    }
    if queries > 0 {
        let ix = TextIndex::open(&dir).map_err(|e| e.to_string())?;
        for q in QUERIES {
            let parsed = TextQuery::parse(q).map_err(|e| e.to_string())?;
            let mut ms: Vec<f64> = (0..queries)
                .map(|_| {
                    let t0 = Instant::now();
                    let hits = ix.search(&parsed, &|_| true, 20).unwrap_or_default();
                    std::hint::black_box(hits);
                    t0.elapsed().as_secs_f64() * 1e3
                })
                .collect();
            ms.sort_by(f64::total_cmp);
            println!(
                "query {q:?} median_ms {:.2} p99_ms {:.2}",
                ms_at(&ms, 0.5),
                ms_at(&ms, 0.99)
            );
        }
    }
    Ok(())
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{e}");
            ExitCode::from(2)
        }
    }
}
