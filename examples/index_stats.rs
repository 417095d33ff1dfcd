//! Measure the full-text index on a corpus (see `gen_corpus`), for `scripts/bench_search.py`:
//! `index_stats DIR [--build] [--queries N] [--query Q] [--index DIR]`.
//!
//! - `--build`: build the index from nothing and print the seconds it took, the bytes of text
//!   it indexed (documents as capped), the index's bytes on disk and their ratio. Run it under
//!   `/usr/bin/time -v` for the peak RSS.
//! - `--queries N`: on the built index, run each of a few queries (`--query Q`: that one)
//!   N times and print the
//!   median and p99 in ms of query to results (the top 20 sessions, their hits counted, snippets cut from their files).
//! - `--append N`: N times, append a message with a new word to a loom session and time its
//!   re-indexing (`update_some`, as the browser's watcher asks) until a search finds the word;
//!   the file is cut back to its size afterwards.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use spool::search::index::{self, TextIndex};
use spool::search::query::TextQuery;
use spool::store::{Roots, Span, Stores};

const USAGE: &str =
    "usage: index_stats DIR [--build] [--queries N] [--query Q] [--append N] [--index DIR]";
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
    for s in stores.list_all().iter().filter(|s| s.error().is_none()) {
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
    let (mut corpus, mut build, mut queries, mut appends, mut at) =
        (None, false, 0usize, 0usize, None);
    // `--query Q`: only this query (a profile of one), instead of the fixed set.
    let mut only: Option<String> = None;
    while let Some(a) = args.next() {
        match a.as_str() {
            "--build" => build = true,
            "--queries" => {
                let v = args.next().ok_or(USAGE)?;
                queries = v.parse().map_err(|_| format!("not a number: {v}"))?;
            }
            "--append" => {
                let v = args.next().ok_or(USAGE)?;
                appends = v.parse().map_err(|_| format!("not a number: {v}"))?;
            }
            "--index" => at = Some(PathBuf::from(args.next().ok_or(USAGE)?)),
            "--query" => only = Some(args.next().ok_or(USAGE)?),
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
        let qs: Vec<&str> = match &only {
            Some(q) => vec![q.as_str()],
            None => QUERIES.to_vec(),
        };
        for q in qs {
            let parsed = TextQuery::parse(q).map_err(|e| e.to_string())?;
            let mut ms: Vec<f64> = (0..queries)
                .map(|_| {
                    let t0 = Instant::now();
                    let hits = ix
                        .search_rows(&parsed, &|_| true, 20, Some(&stores))
                        .unwrap_or_default();
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
    if appends > 0 {
        append(&stores, &dir, appends)?;
    }
    Ok(())
}

/// Time from a loom session's append to its new word being found, through `update_some`.
fn append(stores: &Stores, dir: &Path, n: usize) -> Result<(), String> {
    let mut ix = TextIndex::open(dir).map_err(|e| e.to_string())?;
    // When the commit lands (and the browser's search would ask again), before merges end.
    let at = std::sync::Arc::new(std::sync::Mutex::new(None));
    let a = at.clone();
    ix.set_hooks(index::Hooks {
        committed: Some(Box::new(move |_, _| {
            *a.lock().unwrap() = Some(Instant::now());
        })),
        gone: None,
    });
    let rows = stores.list_all();
    let row = rows
        .iter()
        .find(|r| r.store == spool::model::StoreKind::Loom && r.error().is_none())
        .ok_or("no loom session")?;
    let size = std::fs::metadata(row.path())
        .map_err(|e| e.to_string())?
        .len();
    let mut ms = Vec::new();
    for i in 0..n {
        let word = format!("zqappended{}x{i}", std::process::id());
        let line = format!(
            "{{\"kind\":\"message\",\"time\":\"2026-05-01T10:00:00Z\",\"message\":{{\"role\":\"assistant\",\"content\":\"{word}\"}}}}\n"
        );
        let t0 = Instant::now();
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(row.path())
            .map_err(|e| e.to_string())?;
        std::io::Write::write_all(&mut f, line.as_bytes()).map_err(|e| e.to_string())?;
        drop(f);
        ix.update_some(std::slice::from_ref(row), stores, &|_, _| {})
            .map_err(|e| e.to_string())?;
        let q = TextQuery::parse(&word).map_err(|e| e.to_string())?;
        let found = ix.search(&q, &|_| true, 1).unwrap_or_default().len();
        let all = t0.elapsed().as_secs_f64() * 1e3;
        let committed = at
            .lock()
            .unwrap()
            .take()
            .map_or(all, |c| (c - t0).as_secs_f64() * 1e3);
        ms.push(committed);
        println!(
            "append {i}: found {found}; committed after {committed:.1} ms, merges done after {all:.1} ms"
        );
    }
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(row.path())
        .map_err(|e| e.to_string())?;
    f.set_len(size).map_err(|e| e.to_string())?;
    ms.sort_by(f64::total_cmp);
    println!(
        "append to committed (index side): median_ms {:.1} max_ms {:.1}",
        ms_at(&ms, 0.5),
        ms[ms.len() - 1]
    );
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
