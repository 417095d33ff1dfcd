//! The key a cached row is valid for: one 64-bit digest of (dev, inode, size, mtime, ctime,
//! mode) of every file the row was derived from (`Store::summary_inputs`), a missing file
//! counted as missing. Any change to any input (an append, a rewrite, a rename over it, an
//! mtime set backwards, a chmod) changes the digest; equality, never ordering, is compared.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// Mixes one word into the digest (splitmix64's finaliser: every input bit moves every
/// output bit, and the digest does not depend on the Rust version, unlike `DefaultHasher`).
fn mix(h: u64, v: u64) -> u64 {
    let mut z = (h ^ v).wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The digest of one file's metadata (`lstat`: a symlink is keyed as itself, never followed).
fn stamp(h: u64, p: &Path) -> u64 {
    match std::fs::symlink_metadata(p) {
        Ok(m) => [
            m.dev(),
            m.ino(),
            m.size(),
            m.mtime() as u64,
            m.mtime_nsec() as u64,
            m.ctime() as u64,
            m.ctime_nsec() as u64,
            u64::from(m.mode()),
        ]
        .into_iter()
        .fold(mix(h, 1), mix),
        Err(_) => mix(h, 0),
    }
}

/// The key of a row derived from `inputs` (in the order the store names them).
pub fn key(inputs: &[PathBuf]) -> u64 {
    inputs
        .iter()
        .fold(mix(0, inputs.len() as u64), |h, p| stamp(h, p))
}

/// Seconds since the epoch (what `Meta::expires` holds).
pub fn unix_secs(t: std::time::SystemTime) -> i64 {
    match t.duration_since(std::time::UNIX_EPOCH) {
        Ok(d) => d.as_secs() as i64,
        Err(e) => -(e.duration().as_secs() as i64),
    }
}
