//! Delete and undo (section 8.6): a log that no process holds open is moved into
//! `sessions/.spool/trash/<id>.<unix-seconds>.jsonl`, restored from there on undo, and purged
//! after the 10-minute undo window. Also the open-handle probe behind `in_use`.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::error::{Error, Result};
use crate::store::{atomic, lease, sidecar};

/// How long a deleted log stays restorable.
pub const UNDO_WINDOW_SECS: u64 = 10 * 60;

/// Whether any process has `log` open, from `/proc/*/fd/*`. `None` when the scan is not
/// possible here (no `/proc`), so callers must not assume the log is free.
pub fn open_elsewhere(log: &Path) -> Option<bool> {
    let target = std::fs::canonicalize(log).ok()?;
    // Without our own fd table the scan would see nothing and prove nothing.
    std::fs::read_dir("/proc/self/fd").ok()?;
    let procs = std::fs::read_dir("/proc").ok()?;
    for p in procs.flatten() {
        let name = p.file_name();
        if !name.to_string_lossy().bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        // Other users' processes are unreadable (EACCES); loom runs as us, so that is fine.
        let Ok(fds) = std::fs::read_dir(p.path().join("fd")) else {
            continue;
        };
        for fd in fds.flatten() {
            if std::fs::read_link(fd.path()).is_ok_and(|l| l == target) {
                return Some(true);
            }
        }
    }
    Some(false)
}

fn trash_dir(sessions: &Path) -> PathBuf {
    sidecar::dir(sessions).join("trash")
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

fn sync(dir: &Path) -> Result<()> {
    atomic::fsync_dir(dir).map_err(|e| Error::io("syncing directory", dir, e))
}

/// Move the log of `id` to the trash, remove its sidecar and purge expired trash.
pub fn delete(sessions: &Path, id: &str, log: &Path) -> Result<()> {
    match open_elsewhere(log) {
        Some(false) => {}
        Some(true) => return Err(Error::InUse(format!("loom:{id}"))),
        None => {
            return Err(Error::Refused(format!(
                "cannot check whether loom session {id} is open here; the log may be in use"
            )));
        }
    }
    let spool = sidecar::dir(sessions);
    let _lock = lease::instance_lock(&spool, Duration::from_secs(2))?;
    let trash = trash_dir(sessions);
    // Refuses a symlinked `.spool/trash`: the log would move, and the purge unlink, elsewhere.
    lease::create_private_dir(&trash)?;
    let now = unix_now();
    let mut moved = None;
    // A delete, undo and delete within one second would reuse a name: take the next second.
    for secs in now..now + 10 {
        let dest = trash.join(format!("{id}.{secs}.jsonl"));
        match atomic::rename_no_replace(log, &dest) {
            Ok(()) => {
                moved = Some(secs);
                break;
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(Error::io("moving to trash", log, e)),
        }
    }
    let Some(secs) = moved else {
        return Err(Error::Refused(format!(
            "the trash already holds copies of loom session {id}; try again later"
        )));
    };
    sync(sessions)?;
    // The sidecar leaves with the log, into the trash beside it, so an undo brings back the
    // title, pin and read state too. (The instance lock is held: no sidecar::remove here.)
    let side = sidecar::path(sessions, id);
    match atomic::rename_no_replace(&side, &trash.join(sidecar_entry(id, secs))) {
        Ok(()) => sync(&spool)?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(Error::io("moving to trash", &side, e)),
    }
    sync(&trash)?;
    purge(sessions, now);
    Ok(())
}

/// The trash name of a deleted session's sidecar, paired with its log by `secs`.
fn sidecar_entry(id: &str, secs: u64) -> String {
    format!("{id}.{secs}.spool.json")
}

/// `(id, unix seconds)` of a trash entry name: a log `<id>.<secs>.jsonl` or its sidecar
/// `<id>.<secs>.spool.json`. Only names spool writes: the id is a standard loom id (writers
/// refuse any other) and the seconds are digits.
fn parse_entry(name: &str) -> Option<(&str, u64)> {
    let stem = name
        .strip_suffix(".jsonl")
        .or_else(|| name.strip_suffix(".spool.json"))?;
    let (id, secs) = stem.rsplit_once('.')?;
    if !super::is_standard_id(id) || !secs.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((id, secs.parse().ok()?))
}

/// `.spool/` and `.spool/trash/` both real directories (a symlink at either is refused).
fn real_trash(sessions: &Path) -> Result<bool> {
    Ok(lease::real_dir(&sidecar::dir(sessions))? && lease::real_dir(&trash_dir(sessions))?)
}

/// Unlink trash entries older than the undo window (best effort: a failure only delays it).
/// Only regular files with names spool writes, in a trash that is not a symlink.
fn purge(sessions: &Path, now: u64) {
    if !real_trash(sessions).unwrap_or(false) {
        return;
    }
    let trash = trash_dir(sessions);
    let Ok(rd) = std::fs::read_dir(&trash) else {
        return;
    };
    for e in rd.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if let Some((_, secs)) = parse_entry(&name)
            && now.saturating_sub(secs) > UNDO_WINDOW_SECS
            && e.file_type().is_ok_and(|t| t.is_file())
        {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

/// Purge the expired entries of this store's trash (at browser exit, so the trash does not
/// wait for the next delete to be emptied).
pub fn purge_expired(sessions: &Path) {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    purge(sessions, now);
}

/// Restore the newest trash entry of `id` if `sessions/<id>.jsonl` is free.
pub fn undo_delete(sessions: &Path, id: &str) -> Result<()> {
    let spool = sidecar::dir(sessions);
    let trash = trash_dir(sessions);
    if !real_trash(sessions)? {
        return Err(nothing(id));
    }
    let _lock = lease::instance_lock(&spool, Duration::from_secs(2))?;
    let newest = std::fs::read_dir(&trash)
        .map_err(|e| Error::io("reading", &trash, e))?
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let (eid, secs) = parse_entry(&name)?;
            (eid == id && name.ends_with(".jsonl")).then_some((secs, e.path()))
        })
        .max_by_key(|(secs, _)| *secs);
    let Some((secs, from)) = newest else {
        return Err(nothing(id));
    };
    let dest = sessions.join(format!("{id}.jsonl"));
    match atomic::rename_no_replace(&from, &dest) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            return Err(Error::Refused(format!(
                "a loom session named {id} exists again; not overwriting it"
            )));
        }
        Err(e) => return Err(Error::io("restoring", &from, e)),
    }
    sync(sessions)?;
    // Its sidecar comes back too, unless spool state was written for the name meanwhile.
    let side_from = trash.join(sidecar_entry(id, secs));
    if side_from.exists()
        && atomic::rename_no_replace(&side_from, &sidecar::path(sessions, id)).is_ok()
    {
        sync(&spool)?;
    }
    sync(&trash)
}

fn nothing(id: &str) -> Error {
    Error::Refused(format!(
        "there is no deleted copy of loom session {id} to restore"
    ))
}
