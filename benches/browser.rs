//! Performance targets as benchmarks (never as timed tests). Run with `cargo bench`; corpora
//! are generated once per size under Cargo's bench temp directory and reused.
//!
//! - `first_screen/N`: stores opened, loader started, first batch of rows in, first frame
//!   drawn (what a user waits for before seeing the list), on a warm start (the hints of a
//!   previous run in the cache, as on every start but the very first).
//! - `first_screen_cold/N`: the same on the very first start (no hints: discovery first).
//! - `keystroke/N`: one more character typed into the search box with every session loaded,
//!   until the matcher has settled and the frame is drawn.
//! - `keystroke/router emp/N`: the same with the two-term query (precise rules).
//! - `keystroke/fixlogin/N`: `fixlogin` typed from an empty box, as `scripts/bench_tui.py`
//!   types it: its first letters match most sessions (the costly keys at 100k, issue 10).
//! - `list_all/N`: the CLI's full listing pass over every store.
//! - `index_build/N`: the full-text index built from nothing over every session (2 threads,
//!   50 MB writer budget), as the first `spool search` does.
//! - `text_query/N`: one full-text query on a built index, folded into sessions, with the
//!   snippets of the first 20 (what `spool search --limit 20` and the browser show).
//! - `open_last_page/100MB`: the last three rounds of a 100 MiB Loop transcript, read through
//!   the round index.

use std::path::{Path, PathBuf};
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

use chrono::TimeZone;
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

use spool::app::{Action, App, Options};
use spool::corpus::{CorpusSpec, generate};
use spool::loader::{Event, Loader};
use spool::search::index::{self, TextIndex};
use spool::search::query::TextQuery;
use spool::store::{Roots, Span, Stores};
use spool::ui::{self, Theme};

// As the `spool` binary: its allocator is part of what is measured.
spool::allocator!();

/// A corpus of `n` sessions (plus one `big_mb` MiB Loop session), generated once.
fn corpus(n: usize, big_mb: Option<usize>) -> (PathBuf, Option<String>) {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "corpus-{n}-{}",
        big_mb.map_or("0".into(), |m| m.to_string())
    ));
    let done = dir.join(".complete");
    if let Ok(id) = std::fs::read_to_string(&done) {
        return (dir, (!id.is_empty()).then_some(id));
    }
    let _ = std::fs::remove_dir_all(&dir);
    let spec = CorpusSpec {
        sessions: n,
        rounds_per_session: 4,
        seed: 7,
        big_transcript_mb: big_mb,
    };
    let stats = generate(&dir, &spec).expect("corpus generates");
    let big = stats.big_session.unwrap_or_default();
    std::fs::write(&done, &big).expect("marker");
    (dir, (!big.is_empty()).then_some(big))
}

fn now() -> chrono::DateTime<chrono::Utc> {
    chrono::Utc
        .with_ymd_and_hms(2026, 11, 30, 12, 0, 0)
        .unwrap()
}

fn draw(app: &mut App, term: &mut Terminal<TestBackend>, theme: &Theme) {
    term.draw(|f| ui::draw(f, app, theme)).expect("draw");
}

/// One complete listing pass through the loader, as a previous run of spool would have done:
/// it leaves the start-up hints (`spool::hints`) in the cache directory.
fn warm_hints(dir: &Path) {
    let stores = Arc::new(Stores::open(&Roots::all_in(dir)));
    let n = stores.stores.len();
    let (tx, rx) = mpsc::channel();
    let _loader = Loader::start(stores, tx);
    let mut finished = 0;
    while finished < n {
        match rx.recv() {
            Ok(Event::Action(Action::Progress { finished: true, .. })) => finished += 1,
            Ok(_) => {}
            Err(_) => break,
        }
    }
}

/// Open the stores, start the loader, take its first batch of rows and draw the first frame.
fn first_frame(dir: &Path, theme: &Theme) -> Loader {
    let stores = Arc::new(Stores::open(&Roots::all_in(dir)));
    let (tx, rx) = mpsc::channel();
    let loader = Loader::start(stores, tx);
    let mut app = App::new(Options::new(now()));
    app.update(Action::Resize(120, 40));
    let mut term = Terminal::new(TestBackend::new(120, 40)).unwrap();
    while let Ok(e) = rx.recv() {
        if let Event::Action(a) = e {
            let rows = matches!(a, Action::Rows(_));
            app.update(a);
            if rows {
                break;
            }
        }
    }
    app.settle();
    draw(&mut app, &mut term, theme);
    loader
}

/// Wait until no `spool-*` thread of this process is left.
fn wait_for_quiet() {
    let busy = || {
        std::fs::read_dir("/proc/self/task").is_ok_and(|d| {
            d.flatten().any(|t| {
                std::fs::read_to_string(t.path().join("comm"))
                    .is_ok_and(|n| n.starts_with("spool-"))
            })
        })
    };
    while busy() {
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Time `iters` starts up to the first frame. `before` runs untimed ahead of each start; after
/// it, the start's loader (still discovering, setting up its watcher) is stopped and waited
/// for, untimed, so each run begins on a quiet machine as a real start does.
fn time_starts(iters: u64, dir: &Path, before: impl Fn()) -> Duration {
    let theme = Theme::named("dark", false);
    let mut total = Duration::ZERO;
    for _ in 0..iters {
        before();
        let t = Instant::now();
        let loader = first_frame(dir, &theme);
        total += t.elapsed();
        drop(loader);
        wait_for_quiet();
    }
    total
}

fn first_screen(c: &mut Criterion) {
    let mut g = c.benchmark_group("first_screen");
    g.sample_size(20);
    for n in [10_000, 100_000] {
        let (dir, _) = corpus(n, None);
        warm_hints(&dir);
        g.bench_with_input(BenchmarkId::from_parameter(n), &dir, |b, dir| {
            b.iter_custom(|iters| time_starts(iters, dir, || {}));
        });
    }
    g.finish();
}

/// The very first start on a machine: no hints yet, so each store is discovered before its
/// first rows are read.
fn first_screen_cold(c: &mut Criterion) {
    let mut g = c.benchmark_group("first_screen_cold");
    g.sample_size(10);
    let cache = spool::hints::cache_dir().expect("a cache directory");
    for n in [10_000, 100_000] {
        let (dir, _) = corpus(n, None);
        let roots = Roots::all_in(&dir);
        let forget_hints = || {
            for root in [&roots.loop_dir, &roots.loom_dir, &roots.harness_dir] {
                let _ =
                    std::fs::remove_file(spool::hints::file_for(&cache, &root.join("sessions")));
            }
        };
        g.bench_with_input(BenchmarkId::from_parameter(n), &dir, |b, dir| {
            b.iter_custom(|iters| time_starts(iters, dir, forget_hints));
        });
        // Leave warm hints behind for the other benchmarks.
        warm_hints(&dir);
    }
    g.finish();
}

fn keystroke(c: &mut Criterion) {
    let mut g = c.benchmark_group("keystroke");
    g.sample_size(20);
    for n in [10_000, 100_000] {
        let (dir, _) = corpus(n, None);
        let stores = Stores::open(&Roots::all_in(&dir));
        let rows = stores.list_all();
        let theme = Theme::named("dark", false);
        let mut app = App::new(Options::new(now()));
        app.update(Action::Resize(120, 40));
        app.update(Action::Rows(rows));
        app.settle();
        let mut term = Terminal::new(TestBackend::new(120, 40)).unwrap();
        app.update(Action::FocusSearch);
        // Realistic queries typed one key at a time from an empty box: the first letters
        // match most sessions, each later key refines the last.
        for (name, q) in [
            ("", "routeparm"),
            ("router emp/", "router emp"),
            ("fixlogin/", "fixlogin"),
        ] {
            let query: Vec<char> = q.chars().collect();
            g.bench_function(BenchmarkId::from_parameter(format!("{name}{n}")), |b| {
                b.iter_custom(|iters| {
                    let mut total = Duration::ZERO;
                    let mut typed = 0usize;
                    for _ in 0..iters {
                        if typed == query.len() {
                            for _ in 0..typed {
                                app.update(Action::SearchBackspace);
                            }
                            app.settle();
                            typed = 0;
                        }
                        let t = Instant::now();
                        app.update(Action::SearchInput(query[typed]));
                        app.settle();
                        draw(&mut app, &mut term, &theme);
                        total += t.elapsed();
                        typed += 1;
                    }
                    total
                });
            });
            for _ in 0..query.len() {
                app.update(Action::SearchBackspace);
            }
            app.settle();
        }
    }
    g.finish();
}

fn list_all(c: &mut Criterion) {
    let mut g = c.benchmark_group("list_all");
    g.sample_size(10);
    for n in [10_000, 100_000] {
        let (dir, _) = corpus(n, None);
        let stores = Stores::open(&Roots::all_in(&dir));
        g.bench_function(BenchmarkId::from_parameter(n), |b| {
            b.iter(|| stores.list_all().len())
        });
    }
    g.finish();
}

fn open_last_page(c: &mut Criterion) {
    let (dir, big) = corpus(30, Some(100));
    let big = big.expect("big session");
    let stores = Stores::open(&Roots::all_in(&dir));
    let store = &stores.stores[0];
    c.bench_function("open_last_page/100MB", |b| {
        b.iter(|| {
            store
                .transcript(&big, Span::LastRounds(3))
                .expect("page reads")
                .entries
                .len()
        })
    });
}

/// Build the full-text index of every session of `dir` into `index_dir` (from nothing when
/// `wipe`, else only what changed since the last run).
fn build_index(dir: &Path, index_dir: &Path, wipe: bool) -> TextIndex {
    if wipe {
        index::wipe(index_dir);
    }
    let stores = Stores::open(&Roots::all_in(dir));
    let rows = stores.list_all();
    let mut ix = TextIndex::open(index_dir).expect("index opens");
    ix.update(&rows, &stores, &|_, _| {}).expect("index builds");
    ix
}

fn index_build(c: &mut Criterion) {
    let mut g = c.benchmark_group("index_build");
    g.sample_size(10);
    let (dir, _) = corpus(10_000, None);
    let index_dir = dir.with_extension("index-build");
    g.bench_function(BenchmarkId::from_parameter(10_000), |b| {
        b.iter(|| build_index(&dir, &index_dir, true).session_count())
    });
    g.finish();
}

fn text_query(c: &mut Criterion) {
    let mut g = c.benchmark_group("text_query");
    g.sample_size(50);
    for n in [10_000, 100_000] {
        let (dir, _) = corpus(n, None);
        let ix = build_index(&dir, &dir.with_extension("index-query"), false);
        let stores = Stores::open(&Roots::all_in(&dir));
        let queries: Vec<TextQuery> = [
            "timeout",
            "\"router test\"",
            "invoice -cache",
            "sensor backoff",
        ]
        .iter()
        .map(|q| TextQuery::parse(q).unwrap())
        .collect();
        let mut i = 0;
        g.bench_function(BenchmarkId::from_parameter(n), |b| {
            b.iter(|| {
                i += 1;
                ix.search_rows(&queries[i % queries.len()], &|_| true, 20, Some(&stores))
                    .unwrap()
                    .len()
            })
        });
    }
    g.finish();
}

criterion_group!(
    benches,
    first_screen,
    first_screen_cold,
    keystroke,
    list_all,
    open_last_page,
    index_build,
    text_query
);
criterion_main!(benches);
