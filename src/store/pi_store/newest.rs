//! A cold start's first screen of pi sessions without an `lstat` of each of them (issue 10).
//! Discovery orders every session by mtime, so the first rows of a 100k store waited for
//! 100k `statx` calls (a cold first paint of 384 ms). pi names a session file after the
//! moment the session started (`2026-03-14T09-15-02-101Z_<id>.jsonl`, UTC, fixed width),
//! so the newest names are found from directory listings alone, and only they are stat'ed
//! and ordered by mtime. A session started earlier and written since (a resumed one) is not
//! among them: the full discovery that follows finds it and the list inserts it above, the
//! selection held on its row, as for any row that arrives late.
//!
//! A directory's mtime is at least the start time named by every file created in it (pi
//! names a file before creating it), so the per-cwd directories are listed newest first and
//! the listing stops at the first one older than the newest names found so far.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;

use crate::store::Candidate;
use crate::store::dirents::{self, Kind};

/// Up to `n` candidates, in discovery's order and each as discovery gives it: the `n`
/// newest by mtime among the `2n` newest by the time in their names. Files whose names carry
/// no time (named by other tools) come with the full discovery.
pub fn first_screen(root: &Path, n: usize) -> Vec<Candidate> {
    let want = 2 * n;
    if n == 0 || !root.is_dir() {
        return Vec::new();
    }
    let (mut named, dirs) = list(root, want, true);
    let first_bound = bound(&mut named, want);
    let mut dirs: Vec<(PathBuf, Option<SystemTime>)> = (dirs.into_iter())
        .map(|d| {
            let m = std::fs::symlink_metadata(&d)
                .ok()
                .and_then(|m| m.modified().ok());
            (d, m)
        })
        .collect();
    // Newest first (an undated one last, and listed: it cannot be ruled out); by path among
    // equals, so what is listed does not depend on the readdir's order.
    dirs.sort_unstable_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    // Listed on two threads, newest first: a directory is skipped once the names listed so
    // far rule it out. The bound only rises, and rules out only what could not be among the
    // `want` newest names, so what is found does not depend on the threads' timing.
    let found = Mutex::new((named, first_bound));
    crate::store::fanout::in_order(&dirs, |(d, mtime)| {
        let lock = || found.lock().unwrap_or_else(|e| e.into_inner());
        let ruled_out = |b: &Option<SystemTime>| b.is_some_and(|b| mtime.is_some_and(|m| m < b));
        if ruled_out(&lock().1) {
            return;
        }
        let (names, _) = list(d, want, false);
        let mut f = lock();
        f.0.extend(names);
        f.1 = bound(&mut f.0, want);
    });
    let (mut named, _) = found.into_inner().unwrap_or_else(|e| e.into_inner());
    keep_newest(&mut named, want);
    let mut out: Vec<Candidate> = (named.into_iter())
        .filter_map(|(dir, name)| {
            // As discovery's `DirEntry::metadata`: not followed; a file gone since the
            // listing is left to the full discovery.
            let os = <std::ffi::OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(&name);
            let path = crate::store::fanout::path_of(&dir, os);
            let meta = std::fs::symlink_metadata(&path).ok()?;
            Some(Candidate {
                id: super::listing::stem_id(Path::new(os)),
                mtime: meta.modified().ok(),
                stat: Some(crate::catalog::stamp::Stat::of(&meta)),
                path,
            })
        })
        .collect();
    out.sort_unstable_by(|a, b| b.mtime.cmp(&a.mtime).then_with(|| b.path.cmp(&a.path)));
    out.truncate(n);
    out
}

/// The `want` newest time-named session files of `dir` (regular, as discovery takes them),
/// each with `dir`, and with `subdirs` the directories in it (non-dot, not symlinks). The
/// names go through one buffer: a name allocated per entry was 8k allocations a directory.
fn list(dir: &Path, want: usize, subdirs: bool) -> (Vec<(PathBuf, Vec<u8>)>, Vec<PathBuf>) {
    let (mut bytes, mut at, mut dirs) = (Vec::new(), Vec::new(), Vec::new());
    let _ = dirents::each(dir, |name, kind| match kind {
        Kind::File if time_named(name) => {
            at.push((bytes.len(), name.len()));
            bytes.extend_from_slice(name);
        }
        Kind::Dir if subdirs && !name.starts_with(b".") => {
            let os = <std::ffi::OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(name);
            dirs.push(crate::store::fanout::path_of(dir, os));
        }
        _ => {}
    });
    let name = |&(s, l): &(usize, usize)| &bytes[s..s + l];
    if at.len() > want {
        at.select_nth_unstable_by(want, |a, b| name(b).cmp(name(a)));
        at.truncate(want);
    }
    let named = (at.iter())
        .map(|r| (dir.to_path_buf(), name(r).to_vec()))
        .collect();
    (named, dirs)
}

/// pi's own name: `YYYY-MM-DDThh-mm-ss-mmmZ_<id>.jsonl`, whose byte order is its time's.
fn time_named(name: &[u8]) -> bool {
    const SHAPE: &[u8; 25] = b"0000-00-00T00-00-00-000Z_";
    name.len() > SHAPE.len() + ".jsonl".len()
        && name.ends_with(b".jsonl")
        && (name.iter().zip(SHAPE)).all(|(&c, &s)| match s {
            b'0' => c.is_ascii_digit(),
            _ => c == s,
        })
}

/// The start time named by the `want`-th newest of `named` (keeping only the `want`
/// newest), once there are that many: a directory older than it holds no newer name.
fn bound(named: &mut Vec<(PathBuf, Vec<u8>)>, want: usize) -> Option<SystemTime> {
    if named.len() < want {
        return None;
    }
    keep_newest(named, want);
    let oldest = named.iter().map(|(_, n)| n).min()?;
    let t = std::str::from_utf8(&oldest[..23]).ok()?;
    let t = chrono::NaiveDateTime::parse_from_str(t, "%Y-%m-%dT%H-%M-%S-%3f").ok()?;
    Some(t.and_utc().into())
}

fn keep_newest(named: &mut Vec<(PathBuf, Vec<u8>)>, want: usize) {
    if named.len() > want {
        named.select_nth_unstable_by(want, |a, b| b.1.cmp(&a.1));
        named.truncate(want);
    }
}

#[cfg(test)]
#[path = "newest_tests.rs"]
mod tests;
