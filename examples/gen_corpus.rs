//! Write a synthetic benchmark corpus for spool:
//! `cargo run --release --example gen_corpus -- DIR SESSIONS [--big-mb N] [--rounds R] [--seed S]`
//! then point spool at it with `--loop-dir DIR/loop --loom-dir DIR/loom --harness-dir DIR/harness`.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use spool::corpus::{CorpusSpec, generate};

const USAGE: &str = "usage: gen_corpus DIR SESSIONS [--big-mb N] [--rounds R] [--seed S]";

fn parse() -> Result<(PathBuf, CorpusSpec), String> {
    let mut args = std::env::args().skip(1);
    let mut positional = Vec::new();
    let mut spec = CorpusSpec {
        sessions: 0,
        rounds_per_session: 4,
        seed: 1,
        big_transcript_mb: None,
    };
    while let Some(a) = args.next() {
        let mut value = |name: &str| -> Result<usize, String> {
            let v = args.next().ok_or(format!("{name} needs a value"))?;
            v.parse().map_err(|_| format!("{name}: not a number: {v}"))
        };
        match a.as_str() {
            "--big-mb" => spec.big_transcript_mb = Some(value("--big-mb")?),
            "--rounds" => spec.rounds_per_session = value("--rounds")?,
            "--seed" => spec.seed = value("--seed")? as u64,
            "-h" | "--help" => return Err(USAGE.into()),
            _ if a.starts_with("--") => return Err(format!("unknown option {a}\n{USAGE}")),
            _ => positional.push(a),
        }
    }
    let [dir, sessions] = positional.as_slice() else {
        return Err(USAGE.into());
    };
    spec.sessions = sessions
        .parse()
        .map_err(|_| format!("SESSIONS: not a number: {sessions}"))?;
    Ok((PathBuf::from(dir), spec))
}

fn main() -> ExitCode {
    let (dir, spec) = match parse() {
        Ok(x) => x,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    let t0 = Instant::now();
    match generate(&dir, &spec) {
        Ok(s) => {
            println!(
                "{} loop, {} loom, {} harness sessions; {} files, {:.1} MiB in {:.2?}",
                s.loop_sessions,
                s.loom_sessions,
                s.harness_sessions,
                s.files,
                s.bytes as f64 / 1048576.0,
                t0.elapsed()
            );
            if let Some(id) = s.big_session {
                println!("big Loop session: loop:{id}");
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("cannot write the corpus in {}: {e}", dir.display());
            ExitCode::FAILURE
        }
    }
}
