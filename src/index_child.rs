//! The index's writer, in a process of its own (`spool __index`, hidden): the browser never
//! holds tantivy's `IndexWriter` (issue 10: with the index stale, the writer's arenas, its
//! merges and the segments they map were 20–100 MB of the browser's peak RSS). The browser
//! starts this child with its stores' directories and the index's, writes the job on its
//! stdin, and reads its news on its stdout; the child indexes, commits in batches and exits.
//!
//! Protocol, one line each way at a time. To the child: `r <row>` a session to (re)index if
//! its files changed (the browser's listing row, postcard in hex: the child indexes the rows
//! the browser holds, as the browser did, and never reads a session twice to summarize it),
//! `g <number>` a session gone (hex), `go` the end of the job; after `go` only more
//! `g` lines (deletes while the pass runs, dropped at its next commit), and end of file when
//! the browser is gone. From the child: `p <done> <total>` progress, `c <done> <total>` a
//! batch committed, then one of `d <indexed>` done, `r` another process holds the writer,
//! `e <sentence>` failed; last, `m <kB>` its own peak RSS (see `own_peak_kb`).

use std::ffi::OsString;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use clap::Args;

use crate::model::{SessionSummary, StoreKind};
use crate::search::index::{Batches, Freshness, Hooks, TextIndex};
use crate::store::Stores;

/// The hidden subcommand's arguments: the stores as the browser opened them, in its order.
#[derive(Debug, Args)]
pub struct IndexArgs {
    /// The index's directory.
    #[arg(long)]
    pub dir: PathBuf,
    /// Where the read-only stores' state lives.
    #[arg(long)]
    pub state_dir: PathBuf,
    /// Each store's kind, in order (paired with `--root`).
    #[arg(long)]
    pub kind: Vec<String>,
    /// Each store's directory, in order.
    #[arg(long)]
    pub root: Vec<PathBuf>,
    /// The browser's process id: the child exits when it is not its parent.
    #[arg(long)]
    pub parent: u32,
    /// Commit after every N sessions (tests; else about every second).
    #[arg(long)]
    pub batch: Option<usize>,
}

/// How the browser starts a child: the executable and its arguments.
#[derive(Clone, Debug)]
pub struct Spec {
    pub exe: PathBuf,
    pub args: Vec<OsString>,
    /// The index's directory: the browser makes it before it starts a child, which may
    /// only make its last component again (`demo::create_only_last_components`).
    pub dir: PathBuf,
}

impl Spec {
    /// The child for `stores` and the index in `dir`, run from `exe` (the current
    /// executable; tests pass the built binary). `None` when a store cannot be named by a
    /// path (tests' fakes).
    pub fn new(exe: PathBuf, dir: &Path, stores: &Stores) -> Option<Spec> {
        let mut args: Vec<OsString> = vec!["__index".into(), "--dir".into(), dir.into()];
        args.extend(["--state-dir".into(), stores.state_dir.clone().into()]);
        for s in &stores.stores {
            args.extend(["--kind".into(), s.kind().as_str().into()]);
            args.extend(["--root".into(), s.root_dir()?.into()]);
        }
        args.extend(["--parent".into(), std::process::id().to_string().into()]);
        Some(Spec {
            exe,
            args,
            dir: dir.to_path_buf(),
        })
    }
}

/// The line asking the child to index a session (`None` if the row cannot be encoded).
pub fn row_line(row: &SessionSummary) -> Option<String> {
    let bytes = postcard::to_allocvec(row).ok()?;
    Some(format!("r {}\n", crate::hex::encode(&bytes)))
}

/// The line telling the child a session is gone.
pub fn gone_line(sid: u64) -> String {
    format!("g {sid:x}\n")
}

/// A job as the child reads it.
#[derive(Debug, Default, PartialEq)]
struct Job {
    rows: Vec<SessionSummary>,
    gone: Vec<u64>,
}

fn parse_gone(line: &str) -> Option<u64> {
    u64::from_str_radix(line.strip_prefix("g ")?, 16).ok()
}

/// Read lines up to `go`; `None` when the input ends first (the browser went away).
fn read_job(input: &mut impl BufRead) -> Option<Job> {
    let mut job = Job::default();
    let mut line = String::new();
    loop {
        line.clear();
        if input.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let l = line.trim_end_matches('\n');
        if l == "go" {
            return Some(job);
        }
        if let Some(sid) = parse_gone(l) {
            job.gone.push(sid);
            continue;
        }
        if let Some(bytes) = l.strip_prefix("r ").and_then(crate::hex::decode)
            && let Ok(row) = postcard::from_bytes::<SessionSummary>(&bytes)
        {
            job.rows.push(row);
        }
    }
}

/// Exit when the browser does: the kernel's parent-death signal, and a look at the parent
/// now in case it died before the signal was asked for.
fn die_with_parent(parent: u32) {
    #[cfg(target_os = "linux")]
    // SAFETY: prctl and getppid read their integer arguments only.
    unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
        if libc::getppid() as u32 != parent {
            std::process::exit(3);
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = parent;
}

/// This process's own peak RSS in kB (`VmHWM`), for the browser's key trace. Not the
/// kernel's `ru_maxrss`: a child started by `posix_spawn` or `fork` (Rust's `Command`) and
/// then exec'd has the address space it left at exec (its parent's, shared or copied)
/// folded into its `ru_maxrss`, so the browser's `wait4` read the browser's own peak (a
/// `/bin/true` spawned from a process of 300 MB reports 300 MB). VmHWM is the peak of the
/// address space the exec made, this process's alone.
pub fn own_peak_kb() -> Option<usize> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// The line giving the child's own peak RSS, if it can be read.
fn peak_line() -> Option<String> {
    Some(format!("m {}\n", own_peak_kb()?))
}

/// The child's whole life; returns its exit code.
pub fn run(a: &IndexArgs) -> i32 {
    let code = work(a);
    if let Some(line) = peak_line() {
        say(line);
    }
    code
}

/// Write `line` to the browser now.
fn say(line: String) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(line.as_bytes());
    let _ = out.flush();
}

/// The job: read it, index it, say how it ended; the exit code.
fn work(a: &IndexArgs) -> i32 {
    die_with_parent(a.parent);
    // The browser made the index's directory; never make its parents again (see there).
    crate::demo::create_only_last_components();
    crate::indexer::lower_priority();
    let mut stores = Stores {
        stores: Vec::new(),
        state_dir: a.state_dir.clone(),
    };
    for (k, r) in a.kind.iter().zip(&a.root) {
        let Some(kind) = StoreKind::parse(k) else {
            return 2;
        };
        stores.add(kind, r);
    }
    let mut input = std::io::stdin().lock();
    let Some(job) = read_job(&mut input) else {
        return 3;
    };
    drop(input);
    // Deletes that arrive while the pass runs; the end of input is the browser's end.
    let gone = Arc::new(Mutex::new(Vec::new()));
    let g = gone.clone();
    let _ = std::thread::Builder::new()
        .name("spool-index-input".into())
        .spawn(move || {
            for line in std::io::stdin().lock().lines() {
                let Ok(line) = line else { break };
                if let (Some(sid), Ok(mut g)) = (parse_gone(&line), g.lock()) {
                    g.push(sid);
                }
            }
            std::process::exit(3);
        });
    let mut ix = match TextIndex::open(&a.dir) {
        Ok(ix) => ix,
        Err(e) => {
            say(format!("e {}\n", one_line(&e.to_string())));
            return 1;
        }
    };
    if let Some(n) = a.batch {
        ix.set_batches(Batches {
            sessions: n.max(1),
            every: std::time::Duration::from_secs(3600),
        });
    }
    ix.set_hooks(Hooks {
        committed: Some(Box::new(move |done, total| {
            say(format!("c {done} {total}\n"));
        })),
        gone: Some(Box::new(move || {
            gone.lock()
                .map(|mut g| std::mem::take(&mut *g))
                .unwrap_or_default()
        })),
    });
    let every = crate::indexer::Every::new(crate::indexer::PROGRESS_EVERY);
    let progress = |done: usize, total: usize| {
        if done < total && every.due() {
            say(format!("p {done} {total}\n"));
        }
    };
    let r = ix.update_rows(&job.rows, &job.gone, &stores, &progress);
    let (line, code) = match r {
        Ok(Freshness::Updated { indexed, .. }) => (format!("d {indexed}\n"), 0),
        Ok(Freshness::ReadOnly) => ("r\n".to_string(), 0),
        Err(e) => (format!("e {}\n", one_line(&e.to_string())), 1),
    };
    say(line);
    code
}

fn one_line(s: &str) -> String {
    s.replace(['\n', '\r'], " ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_job_reads_back_as_written() {
        let demo = crate::demo::DemoStore::create().unwrap();
        let stores = Stores::open(&crate::store::Roots::all_in(demo.path()));
        let rows = stores.list_all();
        assert!(rows.len() > 3);
        let mut text: String = rows.iter().filter_map(row_line).collect();
        text.push_str(&gone_line(0xabc));
        text.push_str("junk\ngo\ng 5\n");
        let job = read_job(&mut text.as_bytes()).unwrap();
        assert_eq!(job.rows, rows);
        assert_eq!(job.gone, vec![0xabc]);
        // Input that ends before `go`: the browser went away.
        assert_eq!(read_job(&mut "g 1\n".as_bytes()), None);
    }
}
