//! Collection-level state: `archive.json` (section 2.5), archive/unarchive (9.5) and the
//! staged delete (9.7). An invalid `archive.json` is never overwritten.

use std::fs;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::Loc;
use super::guard::{locked, read_optional, replace_checked, with_retries};
use super::header::valid_id;
use crate::error::{Error, Result};
use crate::store::atomic;

/// What `archive.json` says. A missing file is a valid empty archive.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum ArchiveState {
    Valid(Vec<String>),
    Invalid,
}

/// Parse archive bytes (`None` = missing file).
pub(crate) fn parse_archive(bytes: Option<&[u8]>) -> ArchiveState {
    let Some(bytes) = bytes else {
        return ArchiveState::Valid(Vec::new());
    };
    let Ok(Value::Array(items)) = serde_json::from_slice::<Value>(bytes) else {
        return ArchiveState::Invalid;
    };
    let mut ids = Vec::with_capacity(items.len());
    for i in items {
        match i.as_str() {
            Some(s) if valid_id(s) => ids.push(s.to_string()),
            _ => return ArchiveState::Invalid,
        }
    }
    ArchiveState::Valid(ids)
}

/// Read a collection's archive; an unreadable file counts as invalid.
pub(crate) fn read_archive(path: &Path) -> ArchiveState {
    match read_optional(path) {
        Ok(b) => parse_archive(b.as_deref()),
        Err(_) => ArchiveState::Invalid,
    }
}

/// Whether `id` is archived per the collection's `archive.json` (`None`: the file is
/// invalid). Listing asks this once per session, so the parsed file is kept per path and
/// re-read only when its inode, size or mtime changes (writers replace it by rename).
pub(crate) fn is_archived(path: &Path, id: &str) -> Option<bool> {
    use std::collections::{HashMap, HashSet};
    use std::os::unix::fs::MetadataExt;
    use std::sync::{Arc, Mutex, OnceLock};
    type Stamp = (u64, u64, i64, i64);
    type Parsed = Option<Arc<HashSet<String>>>;
    static CACHE: OnceLock<Mutex<HashMap<PathBuf, (Stamp, Parsed)>>> = OnceLock::new();
    let stamp = match fs::metadata(path) {
        Ok(m) => (m.ino(), m.len(), m.mtime(), m.mtime_nsec()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Some(false),
        Err(_) => return None,
    };
    let cache = CACHE.get_or_init(Default::default);
    if let Some((st, parsed)) = cache.lock().ok()?.get(path)
        && *st == stamp
    {
        return parsed.as_ref().map(|ids| ids.contains(id));
    }
    let parsed: Parsed = match read_archive(path) {
        ArchiveState::Valid(ids) => Some(Arc::new(ids.into_iter().collect())),
        ArchiveState::Invalid => None,
    };
    let answer = parsed.as_ref().map(|ids| ids.contains(id));
    if let Ok(mut c) = cache.lock() {
        c.insert(path.to_path_buf(), (stamp, parsed));
    }
    answer
}

fn unreadable() -> Error {
    Error::Refused(
        "the archive state of this collection is unreadable (invalid archive.json); \
         archive and delete are refused there"
            .into(),
    )
}

fn render(ids: &[String]) -> Vec<u8> {
    let mut s = serde_json::to_string(ids).unwrap_or_else(|_| "[]".into());
    s.push('\n');
    s.into_bytes()
}

/// Add or remove `loc.id` in `archive.json`, keeping order; no change means no write.
/// Session files are never touched. The id exists: `loc` was located in this collection.
pub(crate) fn set_archived(loc: &Loc, archived: bool) -> Result<()> {
    let path = loc.archive_path();
    locked(&loc.collection, || {
        with_retries(&loc.id, || {
            let b0 = read_optional(&path)?;
            let ArchiveState::Valid(mut ids) = parse_archive(b0.as_deref()) else {
                return Err(unreadable());
            };
            let present = ids.contains(&loc.id);
            match (archived, present) {
                (true, true) | (false, false) => return Ok(()),
                (true, false) => ids.push(loc.id.clone()),
                (false, true) => ids.retain(|i| *i != loc.id),
            }
            replace_checked(&path, b0.as_deref(), &render(&ids), &loc.id)
        })
    })
}

/// Remove `id` from `archive.json` (written even if it was not a member, as Loop does).
/// The caller holds the collection lock.
fn drop_from_archive(loc: &Loc) -> Result<()> {
    let path = loc.archive_path();
    with_retries(&loc.id, || {
        let b0 = read_optional(&path)?;
        let ArchiveState::Valid(mut ids) = parse_archive(b0.as_deref()) else {
            return Err(unreadable());
        };
        ids.retain(|i| *i != loc.id);
        replace_checked(&path, b0.as_deref(), &render(&ids), &loc.id)
    })
}

/// Staged delete (9.7): only archived sessions; `<id>/` and `<id>.jsonl` both move into
/// `.delete-<uuid>/`, the id leaves `archive.json`, then the staging directory is removed.
/// On failure everything moved is put back. Under the collection lock, so no other spool
/// rewrites `archive.json` or a legacy file in between.
pub(crate) fn delete(loc: &Loc) -> Result<()> {
    locked(&loc.collection, || delete_locked(loc))
}

fn delete_locked(loc: &Loc) -> Result<()> {
    match read_archive(&loc.archive_path()) {
        ArchiveState::Invalid => return Err(unreadable()),
        ArchiveState::Valid(ids) if !ids.contains(&loc.id) => {
            return Err(Error::Refused(format!(
                "session {} is not archived; archive it before deleting",
                loc.id
            )));
        }
        ArchiveState::Valid(_) => {}
    }
    let stage = loc
        .collection
        .join(format!(".delete-{}", super::header::new_uuid()));
    fs::DirBuilder::new()
        .mode(0o700)
        .create(&stage)
        .map_err(|e| Error::io("creating", &stage, e))?;
    let mut moved: Vec<(PathBuf, PathBuf)> = Vec::new();
    let result = (|| {
        for name in [loc.id.clone(), format!("{}.jsonl", loc.id)] {
            let from = loc.collection.join(&name);
            let is_entry = fs::symlink_metadata(&from).is_ok_and(|m| m.is_dir() || m.is_file());
            if !is_entry {
                continue;
            }
            let to = stage.join(&name);
            fs::rename(&from, &to).map_err(|e| Error::io("moving", &from, e))?;
            moved.push((from, to));
        }
        drop_from_archive(loc)
    })();
    if let Err(e) = result {
        for (from, to) in moved.iter().rev() {
            let _ = fs::rename(to, from);
        }
        let _ = fs::remove_dir(&stage);
        let _ = atomic::fsync_dir(&loc.collection);
        return Err(e);
    }
    let _ = atomic::fsync_dir(&loc.collection);
    fs::remove_dir_all(&stage).map_err(|e| Error::io("removing deletion staging", &stage, e))
}
