//! What a warm `spool search` checks instead of every session (`stamps.tsv`): per store, the
//! directories whose entries are its sessions and the places spool keeps its state, whose
//! mtimes form the store's stamp, and its most recently written ("hot") sessions. Creating,
//! deleting or renaming a session, and every write spool makes (sidecars, Loop's
//! `archive.json`), move a directory's mtime; an append to a log moves only the log's, which
//! is why the hot sessions (the ones agents are writing to) are checked one by one.

use std::collections::BTreeSet;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use crate::store::{Candidate, Store};

/// The file, in the index's directory.
pub const FILE: &str = "stamps.tsv";
const HEADER: &str = "spool-stamps 2";
/// Hot sessions per store: the ones written last at the last full check.
pub const HOT: usize = 64;
/// A directory modified this close before a full check began may have changed while it ran:
/// its store is not trusted next time.
const SETTLE: Duration = Duration::from_secs(2);

/// One store's stamp.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StoreStamp {
    /// The store's sessions directory, as `Store::sessions_dir`.
    pub name: String,
    /// The stamp of `paths`; 0 when the store is not to be trusted.
    pub stamp: u64,
    /// The side stamp (`fresh::side_stamp`): whether quick prints can be trusted.
    pub side: u64,
    /// Directories and state files whose (size, mtime) make the stamp.
    pub paths: Vec<PathBuf>,
    /// `(session number, id, path)` of the hot sessions.
    pub hot: Vec<(u64, String, PathBuf)>,
}

/// What the last full check recorded.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Stamps {
    /// When it began (seconds since the epoch).
    pub full_at: u64,
    pub stores: Vec<StoreStamp>,
}

pub fn name(store: &dyn Store) -> String {
    store.sessions_dir().to_string_lossy().into_owned()
}

/// The stamp of `paths`: `None` when one changed since `settled` (or cannot be written in a
/// line of the file), so the store is checked fully next time.
pub fn stamp(paths: &[PathBuf], settled: Option<SystemTime>) -> Option<u64> {
    let mut h = DefaultHasher::new();
    for p in paths {
        if p.to_str().is_none_or(|s| s.contains(['\t', '\n', '\r'])) {
            return None;
        }
        let m = std::fs::symlink_metadata(p).ok();
        let mtime = m.as_ref().and_then(|m| m.modified().ok());
        if let (Some(t), Some(s)) = (mtime, settled)
            && t + SETTLE >= s
        {
            return None;
        }
        p.hash(&mut h);
        m.map(|m| m.len()).hash(&mut h);
        mtime.hash(&mut h);
    }
    Some(h.finish())
}

/// The paths a store's stamp covers, from what its discovery found: its sessions directory
/// and every directory between it and a session, the directory of spool's state files, and
/// each collection's `archive.json` that exists.
pub fn paths(store: &dyn Store, found: &[Candidate]) -> Vec<PathBuf> {
    let top = store.sessions_dir();
    let mut dirs: BTreeSet<PathBuf> = BTreeSet::new();
    dirs.insert(top.to_path_buf());
    for c in found {
        let mut d = c.path.parent();
        while let Some(p) = d {
            if !p.starts_with(top) || !dirs.insert(p.to_path_buf()) {
                break;
            }
            d = p.parent();
        }
    }
    let mut out: Vec<PathBuf> = Vec::with_capacity(dirs.len() * 2 + 1);
    for d in &dirs {
        let archive = d.join("archive.json");
        if archive.exists() {
            out.push(archive);
        }
    }
    if let Some(state) = store.state_file("x").parent() {
        out.push(state.to_path_buf());
    }
    out.extend(dirs);
    out
}

pub fn read(dir: &Path) -> Option<Stamps> {
    let text = std::fs::read_to_string(dir.join(FILE)).ok()?;
    let mut lines = text.lines();
    if lines.next()? != HEADER {
        return None;
    }
    let mut s = Stamps::default();
    let hex = |v: &str| u64::from_str_radix(v, 16).ok();
    for l in lines {
        let mut f = l.splitn(5, '\t');
        match (f.next()?, f.next()?) {
            ("full", at) => s.full_at = at.parse().ok()?,
            ("store", stamp) => s.stores.push(StoreStamp {
                stamp: hex(stamp)?,
                side: hex(f.next()?)?,
                name: f.next()?.to_string(),
                ..StoreStamp::default()
            }),
            ("path", p) => s.stores.last_mut()?.paths.push(PathBuf::from(p)),
            ("hot", sid) => {
                let (id, p) = (f.next()?, f.next()?);
                if f.next().is_some() {
                    return None;
                }
                let hot = (hex(sid)?, id.to_string(), PathBuf::from(p));
                s.stores.last_mut()?.hot.push(hot);
            }
            _ => return None,
        }
    }
    Some(s)
}

pub fn write(dir: &Path, s: &Stamps) {
    use std::fmt::Write as _;
    let mut text = format!("{HEADER}\nfull\t{}\n", s.full_at);
    for st in &s.stores {
        let _ = writeln!(
            text,
            "store\t{:016x}\t{:016x}\t{}",
            st.stamp, st.side, st.name
        );
        for p in &st.paths {
            let _ = writeln!(text, "path\t{}", p.display());
        }
        for (sid, id, p) in &st.hot {
            let _ = writeln!(text, "hot\t{sid:016x}\t{id}\t{}", p.display());
        }
    }
    // Only a hint: a missing or broken file makes the next check a full one.
    let _ = crate::store::atomic::replace(&dir.join(FILE), text.as_bytes(), Default::default());
}

/// Seconds since the epoch.
pub fn secs(t: SystemTime) -> u64 {
    t.duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}
