//! How often a spool metadata write republishes a Loop `meta.json` older than the one on disk,
//! against a simulated Loop process that commits messages as fast as it can.
//!
//! Loop does not take spool's lock: it appends to `messages.jsonl` and atomically replaces
//! `meta.json` with the new range (`generation`, `bytes`, `messageCount`). spool reads the
//! meta, re-reads it right before its rename and retries when it changed (`loop.md` 9.1).
//! What is left is the window between that last read and the rename: a commit landing inside
//! it is overwritten by spool's older range. This program measures it: the committer checks,
//! before each commit, that the meta on disk still carries the range it wrote last; a
//! mismatch is one lost commit. The window is then the loss rate times the commit period.
//!
//!     cargo run --release --example stale_meta_window -- [SPOOL_WRITES] [COMMIT_PAUSE_US]

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use spool::store::Store;
use spool::store::loop_store::LoopStore;

const SESSION: &str = "b41e07d2-5c9a-4f13-a8e6-0f2d7c3b9e54";
const COLLECTION: &str = "767af75ec9c3c6ac7b4a00e5";

fn hex(b: &[u8]) -> String {
    Sha256::digest(b)
        .iter()
        .map(|x| format!("{x:02x}"))
        .collect()
}

/// Loop's `atomicWrite`: a temp beside the file, then a rename.
fn loop_write(path: &Path, bytes: &[u8], n: u64) {
    let tmp = path.with_extension(format!("{n}.tmp"));
    let mut f = fs::File::create(&tmp).unwrap();
    f.write_all(bytes).unwrap();
    drop(f);
    fs::rename(&tmp, path).unwrap();
}

/// One Loop commit: append a message, publish the new range. Returns the new generation.
fn commit(dir: &Path, n: u64) -> String {
    let msgs = dir.join("messages.jsonl");
    let meta_path = dir.join("meta.json");
    let mut meta: Value = serde_json::from_slice(&fs::read(&meta_path).unwrap()).unwrap();
    let line = format!(
        "{}\n",
        json!({"role": "user", "content": format!("commit {n}"), "timestamp": 1_773_000_000_000u64 + n})
    );
    fs::OpenOptions::new()
        .append(true)
        .open(&msgs)
        .unwrap()
        .write_all(line.as_bytes())
        .unwrap();
    let all = fs::read(&msgs).unwrap();
    let start = meta["start"].as_u64().unwrap() as usize;
    let range = &all[start..];
    let generation = hex(range);
    meta["generation"] = generation.clone().into();
    meta["bytes"] = (range.len() as u64).into();
    meta["messageCount"] = (meta["messageCount"].as_u64().unwrap() + 1).into();
    let mut out = serde_json::to_vec_pretty(&meta).unwrap();
    out.push(b'\n');
    loop_write(&meta_path, &out, n);
    generation
}

fn on_disk_generation(dir: &Path) -> String {
    let meta: Value = serde_json::from_slice(&fs::read(dir.join("meta.json")).unwrap()).unwrap();
    meta["generation"].as_str().unwrap_or("").to_string()
}

fn copy_tree(src: &Path, dst: &Path) {
    fs::create_dir_all(dst).unwrap();
    for e in fs::read_dir(src).unwrap().flatten() {
        let to = dst.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_tree(&e.path(), &to);
        } else {
            fs::copy(e.path(), &to).unwrap();
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let writes: u64 = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(5_000);
    let pause_us: u64 = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(0);
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("loop");
    let fx = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/loop/sessions");
    copy_tree(&fx, &root.join("sessions"));
    let dir = root.join("sessions").join(COLLECTION).join(SESSION);

    let stop = Arc::new(AtomicBool::new(false));
    let lost = Arc::new(AtomicU64::new(0));
    let commits = Arc::new(AtomicU64::new(0));
    let committer = {
        let (stop, lost, commits, dir) = (stop.clone(), lost.clone(), commits.clone(), dir.clone());
        std::thread::spawn(move || {
            let mut last: Option<String> = None;
            let mut n = 0;
            while !stop.load(Ordering::SeqCst) {
                if let Some(g) = &last
                    && on_disk_generation(&dir) != *g
                {
                    // spool published a range older than this commit.
                    lost.fetch_add(1, Ordering::SeqCst);
                }
                n += 1;
                last = Some(commit(&dir, n));
                commits.fetch_add(1, Ordering::SeqCst);
                if pause_us > 0 {
                    std::thread::sleep(Duration::from_micros(pause_us));
                }
            }
        })
    };

    let store = LoopStore::new(&root);
    let t0 = Instant::now();
    let (mut ok, mut failed) = (0u64, 0u64);
    let mut op_time = Duration::ZERO;
    for i in 0..writes {
        let t = Instant::now();
        match store.set_pinned(SESSION, i % 2 == 0) {
            Ok(()) => ok += 1,
            Err(_) => failed += 1,
        }
        op_time += t.elapsed();
    }
    let elapsed = t0.elapsed();
    stop.store(true, Ordering::SeqCst);
    committer.join().unwrap();

    let commits = commits.load(Ordering::SeqCst);
    let lost = lost.load(Ordering::SeqCst);
    let period = elapsed.as_secs_f64() / commits.max(1) as f64;
    // Each spool write exposes one window; a commit lands in it with probability
    // window / period, so window ≈ (lost / writes) × period.
    let window = lost as f64 / ok.max(1) as f64 * period;
    println!("spool writes: {ok} done, {failed} gave up (busy or changed on every try)");
    println!(
        "mean spool write: {:.1} µs",
        op_time.as_secs_f64() * 1e6 / writes as f64
    );
    println!(
        "Loop commits: {commits} in {:.2} s (one every {:.1} µs)",
        elapsed.as_secs_f64(),
        period * 1e6
    );
    println!(
        "lost commits (an older meta.json republished): {lost} ({:.4}% of spool writes)",
        100.0 * lost as f64 / ok.max(1) as f64
    );
    println!("stale window ≈ {:.2} µs per spool write", window * 1e6);
}
