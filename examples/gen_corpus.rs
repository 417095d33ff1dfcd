//! Write a synthetic Loop/loom/harness corpus for benchmarks: `cargo run --release --example
//! gen_corpus -- DIR SESSIONS [SEED]`. Point spool at it with `spool --demo`-free roots:
//! `LOOP_DATA_DIR=DIR/loop HOME=...` (see scripts/bench_tui.py, which does this).

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(dir), Some(n)) = (args.first(), args.get(1).and_then(|n| n.parse().ok())) else {
        eprintln!("usage: gen_corpus DIR SESSIONS [SEED]");
        std::process::exit(2);
    };
    let seed = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(7);
    let spec = spool::corpus::CorpusSpec {
        sessions: n,
        rounds_per_session: 4,
        seed,
        big_transcript_mb: None,
    };
    match spool::corpus::generate(std::path::Path::new(dir), &spec) {
        Ok(s) => println!(
            "{} loop, {} loom, {} harness sessions, {} files, {} bytes",
            s.loop_sessions, s.loom_sessions, s.harness_sessions, s.files, s.bytes
        ),
        Err(e) => {
            eprintln!("gen_corpus: {e}");
            std::process::exit(1);
        }
    }
}
