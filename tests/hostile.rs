//! Hostile input, mechanically: every fixture file of every store is damaged in many ways
//! (cut at many points, bytes flipped, invalid UTF-8 and escape sequences spliced in, numbers
//! blown up) and every reader must answer each case without panicking: listing gives rows
//! (possibly error rows), and transcript, window and raw give content or an error.

mod common;

use common::Home;

/// Damaged variants of `bytes`, deterministic.
fn mutations(bytes: &[u8]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let n = bytes.len();
    for cut in [
        0,
        1,
        n / 7,
        n / 3,
        n / 2,
        n.saturating_sub(2),
        n.saturating_sub(1),
    ] {
        out.push(bytes[..cut.min(n)].to_vec());
    }
    let mut x: u64 = 0x2545_f491_4f6c_dd1d ^ n as u64;
    for _ in 0..6 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        if n > 0 {
            let mut v = bytes.to_vec();
            let i = (x as usize) % n;
            v[i] = v[i].wrapping_add(1 + (x >> 32) as u8 % 200);
            out.push(v);
        }
    }
    for splice in [
        &b"\xff\xfe\xc3("[..],
        b"\x1b]0;pwned\x07\x1b[2J",
        b"\n{\"role\":5}\n",
        b"99999999999999999999999999",
        b"NaN",
    ] {
        let mut v = bytes.to_vec();
        let at = n / 2;
        v.splice(at..at, splice.iter().copied());
        out.push(v);
    }
    let text = String::from_utf8_lossy(bytes);
    out.push(
        text.replace(':', ": -1e309, \"x\":")
            .replace("\"user\"", "\"us\\ud800er\"")
            .into_bytes(),
    );
    out
}

fn exercise(h: &Home) {
    spool::fuzz::read_everything(&h.stores());
}

#[test]
fn damaged_files_never_panic_a_reader() {
    let pristine = Home::with_fixtures();
    let files = common::files_under(pristine.path());
    assert!(files.len() >= 10, "fixtures present");
    let mut cases = 0;
    for f in &files {
        let rel = f.strip_prefix(pristine.path()).unwrap();
        let bytes = std::fs::read(f).unwrap();
        for m in mutations(&bytes) {
            let h = Home::with_fixtures();
            std::fs::write(h.path().join(rel), &m).unwrap();
            let run = std::panic::catch_unwind(|| exercise(&h));
            assert!(
                run.is_ok(),
                "a reader panicked on {} damaged to {:?}",
                rel.display(),
                String::from_utf8_lossy(&m[..m.len().min(200)])
            );
            cases += 1;
        }
    }
    assert!(cases > 200);
}
