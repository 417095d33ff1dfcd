//! Start-up hints: the paths of each store's top sessions (in list order) from the last time
//! spool listed it, kept in spool's cache directory. The loader summarizes these first, so the
//! first screen is painted after reading a screenful of sessions, not after discovering the
//! whole store (which costs a `stat` per session at 100k sessions).
//!
//! Hints only change the order of reading: a stale hint (deleted or moved session) is
//! skipped, and every session is still read by the full pass. Nothing is written into any
//! agent's store.

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use sha2::{Digest, Sha256};

use crate::model::SessionSummary;
use crate::store::registry::list_order;
use crate::store::{Candidate, atomic};

/// How many sessions per store are remembered: a tall screen shows about 25 (two lines
/// a row), and the top of the list may all come from one store.
pub const KEEP: usize = 32;

/// A cache directory that replaces the user's for this process (`--demo`).
static CACHE_OVERRIDE: OnceLock<PathBuf> = OnceLock::new();

/// Keep this process's hints in `dir` instead of the user's cache. The first call wins.
pub fn use_cache_dir(dir: PathBuf) {
    let _ = CACHE_OVERRIDE.set(dir);
}

/// `<cache dir>/spool` (when the platform has one), or the directory `use_cache_dir` set.
pub fn cache_dir() -> Option<PathBuf> {
    if let Some(d) = CACHE_OVERRIDE.get() {
        return Some(d.clone());
    }
    directories::ProjectDirs::from("", "", "spool").map(|d| d.cache_dir().to_path_buf())
}

/// The hints file of the store reading `sessions_dir`.
pub fn file_for(cache: &Path, sessions_dir: &Path) -> PathBuf {
    let digest = Sha256::digest(sessions_dir.as_os_str().as_encoded_bytes());
    let name = crate::hex::encode(&digest[..8]);
    cache.join(format!("recent-{name}.txt"))
}

/// Read the hinted candidates that still exist (inside `sessions_dir`), in their saved order.
pub fn read(cache: &Path, sessions_dir: &Path) -> Vec<Candidate> {
    let Ok(text) = std::fs::read_to_string(file_for(cache, sessions_dir)) else {
        return Vec::new();
    };
    text.lines()
        .filter_map(|l| l.split_once('\t'))
        .map(|(id, path)| Candidate {
            id: id.to_string(),
            path: PathBuf::from(path),
            mtime: None,
            stat: None,
        })
        .filter(|c| c.path.starts_with(sessions_dir) && std::fs::symlink_metadata(&c.path).is_ok())
        .take(KEEP)
        .collect()
}

/// Remember the top `KEEP` of `rows` (list order) for the next start. Best effort: a cache
/// that cannot be written only makes the next start slower.
pub fn write<R: std::borrow::Borrow<SessionSummary>>(
    cache: &Path,
    sessions_dir: &Path,
    rows: &[R],
) {
    let mut top: Vec<&SessionSummary> = (rows.iter().map(R::borrow))
        .filter(|r| r.error().is_none())
        .collect();
    top.sort_by(|a, b| list_order(a, b));
    let mut text = String::new();
    for r in top.into_iter().take(KEEP) {
        let path = r.path();
        let path = path.to_string_lossy();
        if r.id.contains(['\t', '\n']) || path.contains(['\t', '\n']) {
            continue;
        }
        text.push_str(&format!("{}\t{path}\n", r.id));
    }
    if crate::demo::create_cache_dir(cache).is_ok() {
        let _ = atomic::replace(
            &file_for(cache, sessions_dir),
            text.as_bytes(),
            atomic::Replace::default(),
        );
    }
}

/// Keep the best `KEEP` rows (list order) seen so far, for the next start's hints.
pub fn remember(top: &mut Vec<Arc<SessionSummary>>, s: &Arc<SessionSummary>) {
    // A moved session's newer row replaces the hinted one.
    top.retain(|r| r.id != s.id);
    // The list's own row, shared: a copy of every row was made here.
    top.push(s.clone());
    if top.len() >= 4 * KEEP {
        top.sort_by(|a, b| list_order(a, b));
        top.truncate(KEEP);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::StoreKind;

    #[test]
    fn hints_round_trip_newest_first_and_skip_vanished_sessions() {
        let d = tempfile::tempdir().unwrap();
        let sessions = d.path().join("sessions");
        std::fs::create_dir(&sessions).unwrap();
        // The cache directory and its parents are created on first write.
        let cache = d.path().join("home/.cache/spool");
        let mut rows = Vec::new();
        for (id, hour) in [("old", 1), ("new", 9), ("gone", 5)] {
            let p = sessions.join(format!("{id}.jsonl"));
            std::fs::write(&p, "").unwrap();
            let mut s = SessionSummary::new(StoreKind::Loom, id, &p);
            s.updated_at = chrono::DateTime::from_timestamp(hour * 3600, 0);
            rows.push(s);
        }
        write(&cache, &sessions, &rows);
        std::fs::remove_file(sessions.join("gone.jsonl")).unwrap();
        let ids: Vec<String> = read(&cache, &sessions).into_iter().map(|c| c.id).collect();
        assert_eq!(ids, ["new", "old"]);
        // Another store's hints are separate.
        assert!(read(&cache, &d.path().join("other")).is_empty());
    }
}
