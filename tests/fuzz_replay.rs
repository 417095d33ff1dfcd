//! Replays every fuzz input kept in the repository through the fuzz targets' own entry
//! points, on stable: the seed corpora (`fuzz/corpus/<target>/`) and every input a fuzzer
//! ever found a crash, timeout or out-of-memory with (`fuzz/artifacts/<target>/`), so each
//! fixed finding stays fixed in `cargo test`.

use std::path::{Path, PathBuf};

use spool::fuzz::{Target, run};

fn inputs(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|d| {
            d.flatten()
                .map(|e| e.path())
                .filter(|p| p.is_file())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

#[test]
fn every_corpus_and_artifact_input_replays_without_a_panic() {
    let fuzz = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz");
    for t in Target::ALL {
        let seeds = inputs(&fuzz.join("corpus").join(t.name()));
        assert!(!seeds.is_empty(), "no seed corpus for {}", t.name());
        let found = inputs(&fuzz.join("artifacts").join(t.name()));
        for input in seeds.iter().chain(&found) {
            let data = std::fs::read(input).unwrap();
            let r = std::panic::catch_unwind(|| run(t, &data));
            assert!(r.is_ok(), "{} panicked on {}", t.name(), input.display());
        }
    }
}

#[test]
fn the_sanitiser_target_rejects_what_it_should() {
    // The target's property holds on hostile text (and is checked, not vacuous: a control
    // character in the output would panic it).
    run(
        Target::Sanitize,
        b"\x1b]52;c;aGk=\x07\x1b[2J\x9b1m\xe2\x80\xae\x00",
    );
    let out = spool::text::sanitize("\x1b]52;c;aGk=\x07x\x00");
    assert_eq!(out, "x^@");
}
