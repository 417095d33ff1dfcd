//! The index's child process (`spool __index`): the browser's indexer never opens a writer
//! in its own process, yet its searches find what the child indexed; a child killed in the
//! middle of a pass leaves an index that opens, and the next pass finishes the job; a child
//! whose parent dies exits; a child that cannot start leaves a status line, no crash; the
//! child's peak RSS the browser records is the child's own; a child whose cache was removed
//! makes nothing again.
//! No test here opens a writer in this process (the count of writers is the process's).

mod common;

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

use spool::app::Action;
use spool::index_child::{Spec, row_line};
use spool::loader::Event;
use spool::model::SessionSummary;
use spool::search::index::{TextIndex, writers_opened};
use spool::search::query::TextQuery;
use spool::store::registry::Filter;
use spool::store::{Roots, Stores};

const BIN: &str = env!("CARGO_BIN_EXE_spool");

fn demo() -> (spool::demo::DemoStore, Arc<Stores>, Vec<SessionSummary>) {
    let demo = spool::demo::DemoStore::create().unwrap();
    let stores = Arc::new(Stores::open(&Roots::all_in(demo.path())));
    let rows = stores
        .list_all()
        .into_iter()
        .filter(|r| r.error().is_none())
        .collect();
    (demo, stores, rows)
}

fn wait(rx: &Receiver<Event>, want: &dyn Fn(&Action) -> bool) -> Action {
    loop {
        match rx.recv_timeout(Duration::from_secs(60)).expect("an answer") {
            Event::Action(a) if want(&a) => return a,
            _ => {}
        }
    }
}

fn all() -> Filter {
    Filter {
        all: true,
        ..Filter::default()
    }
}

#[test]
fn the_browsers_indexer_never_opens_a_writer_and_finds_what_its_child_wrote() {
    let (_demo, stores, rows) = demo();
    let dir = tempfile::tempdir().unwrap();
    let (ix, rx) = common::search::indexing(dir.path(), &stores, &rows, BIN);
    let done = wait(
        &rx,
        &|a| matches!(a, Action::IndexProgress { done, total } if done == total),
    );
    assert!(
        matches!(done, Action::IndexProgress { done, .. } if done == rows.len()),
        "{done:?}"
    );
    ix.search(1, TextQuery::parse("the").unwrap(), all());
    let Action::TextResults { hits, .. } =
        wait(&rx, &|a| matches!(a, Action::TextResults { token: 1, .. }))
    else {
        unreachable!()
    };
    assert!(hits.len() > 5, "found {}", hits.len());
    assert_eq!(writers_opened(), 0, "the browser's process opened a writer");
}

/// Start `spool __index` over `stores` and the index in `dir`, committing every `batch`
/// sessions, with `lines` as its job.
fn child(dir: &Path, stores: &Stores, lines: &[String], batch: usize) -> Child {
    let spec = Spec::new(BIN.into(), dir, stores).unwrap();
    let mut c = Command::new(&spec.exe)
        .args(&spec.args)
        .args(["--batch", &batch.to_string()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = c.stdin.take().unwrap();
    for l in lines {
        input.write_all(l.as_bytes()).unwrap();
    }
    input.write_all(b"go\n").unwrap();
    // Kept open: its end is the parent's end.
    std::mem::forget(input);
    c
}

fn job(rows: &[SessionSummary]) -> Vec<String> {
    rows.iter().filter_map(row_line).collect()
}

#[test]
fn a_child_killed_mid_pass_leaves_a_usable_index_and_the_next_pass_finishes() {
    let (_demo, stores, rows) = demo();
    let dir = tempfile::tempdir().unwrap();
    let lines = job(&rows);
    let mut c = child(dir.path(), &stores, &lines, 1);
    // Killed as soon as its second batch is committed.
    let mut out = BufReader::new(c.stdout.take().unwrap()).lines();
    let mut commits = 0;
    while commits < 2 {
        let l = out.next().expect("a line").unwrap();
        commits += usize::from(l.starts_with("c "));
    }
    c.kill().unwrap();
    c.wait().unwrap();
    let ix = TextIndex::open_existing(dir.path()).expect("the index opens");
    let partial = ix.session_count();
    assert!(
        partial >= 2 && partial < rows.len(),
        "{partial} of {}",
        rows.len()
    );
    drop(ix);
    // The next pass indexes only the rest.
    let mut c = child(dir.path(), &stores, &lines, 1000);
    let out: Vec<String> = BufReader::new(c.stdout.take().unwrap())
        .lines()
        .map(|l| l.unwrap())
        .take_while(|l| !l.starts_with('d'))
        .chain(std::iter::once(String::new()))
        .collect();
    let _ = c.kill();
    c.wait().unwrap();
    assert!(!out.iter().any(|l| l.starts_with("e ")), "{out:?}");
    let ix = TextIndex::open_existing(dir.path()).expect("the index opens");
    assert_eq!(ix.session_count(), rows.len());
    let hits = ix
        .search(&TextQuery::parse("the").unwrap(), &|_| true, usize::MAX)
        .unwrap();
    assert!(hits.len() > 5);
}

#[cfg(target_os = "linux")]
#[test]
fn the_child_exits_when_its_parent_dies() {
    let (_demo, stores, _) = demo();
    let dir = tempfile::tempdir().unwrap();
    let spec = Spec::new(BIN.into(), dir.path(), &stores).unwrap();
    // A shell starts the child with an input that stays open (a `sleep` holds it), so
    // only the parent's death can end it, and prints both pids; then the shell is killed.
    let args: Vec<String> = spec
        .args
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let script = r#"exec 3< <(sleep 60); echo $!; "$0" "$@" --parent $$ <&3 & echo $!; wait"#;
    let n = args.iter().position(|a| a == "--parent").unwrap();
    let mut sh = Command::new("bash")
        .arg("-c")
        .arg(script)
        .arg(BIN)
        .args(&args[..n])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(sh.stdout.take().unwrap()).lines();
    let sleeper: i32 = out.next().unwrap().unwrap().trim().parse().unwrap();
    let pid: i32 = out.next().unwrap().unwrap().trim().parse().unwrap();
    let alive = |pid: i32| {
        std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
            !s.rsplit(')')
                .next()
                .unwrap_or("")
                .trim_start()
                .starts_with('Z')
        })
    };
    std::thread::sleep(Duration::from_millis(300));
    assert!(alive(pid), "the child waits for its job");
    sh.kill().unwrap();
    sh.wait().unwrap();
    let t = Instant::now();
    while alive(pid) && t.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(50));
    }
    let orphan = alive(pid);
    // SAFETY: kill reads its integer arguments; the pids are this test's processes.
    unsafe {
        libc::kill(sleeper, libc::SIGKILL);
        libc::kill(pid, libc::SIGKILL);
    }
    assert!(!orphan, "the child outlived its parent");
}

#[test]
fn a_child_that_cannot_start_leaves_a_status_line() {
    let (_demo, stores, rows) = demo();
    let dir = tempfile::tempdir().unwrap();
    let (ix, rx) = common::search::indexing(dir.path(), &stores, &rows, "/nonexistent/spool");
    let Action::OpDone(o) = wait(&rx, &|a| matches!(a, Action::OpDone(_))) else {
        unreachable!()
    };
    assert!(
        o.automatic && o.message.starts_with("Full-text index not updated"),
        "{:?}",
        o.message
    );
    // Searches still answer (nothing is committed: no hits, and no crash).
    ix.search(1, TextQuery::parse("the").unwrap(), all());
    wait(&rx, &|a| matches!(a, Action::TextResults { token: 1, .. }));
}

/// The peak the browser records for its child (`index_child_peak_kb`) is the child's own:
/// `wait4`'s `ru_maxrss` read back the browser's peak, as an exec'd child's counts the
/// address space the exec replaced (here this test process, made big on purpose).
#[cfg(target_os = "linux")]
#[test]
fn the_childs_recorded_peak_is_its_own_not_the_browsers() {
    let (_demo, stores, rows) = demo();
    // Every page written: this process's peak is 256 MB more than any demo child's.
    let big = std::hint::black_box(vec![1u8; 256 << 20]);
    let dir = tempfile::tempdir().unwrap();
    let (_ix, rx) = common::search::indexing(dir.path(), &stores, &rows, BIN);
    wait(
        &rx,
        &|a| matches!(a, Action::IndexProgress { done, total } if done == total),
    );
    let kb = spool::indexer::child_peak_kb();
    assert!(kb > 1024 && kb < 128 << 10, "the child's peak read {kb} kB");
    drop(big);
}

/// The browser removes its `--demo` copy on a signal while its child may still be opening
/// the index in it: the child must fail, not make the copy again with its parents (the
/// `tui_signals_tmux` flake). The browser makes the index's directory before it starts one.
#[test]
fn a_child_whose_cache_is_gone_makes_nothing_and_says_so() {
    let (_demo, stores, rows) = demo();
    let root = tempfile::tempdir().unwrap();
    let gone = root.path().join("spool-demo-x");
    let mut c = child(&gone.join("cache/spool/index"), &stores, &job(&rows), 1000);
    let out: Vec<String> = BufReader::new(c.stdout.take().unwrap())
        .lines()
        .map(|l| l.unwrap())
        .take_while(|l| !l.starts_with("m "))
        .collect();
    c.kill().ok();
    c.wait().unwrap();
    assert!(out.iter().any(|l| l.starts_with("e ")), "{out:?}");
    assert!(!gone.exists(), "the child made its cache's parents again");
}
