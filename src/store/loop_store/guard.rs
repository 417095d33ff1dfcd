//! The write discipline every Loop writer shares (section 9): the directory lock, the
//! optimistic check's read and conditional replace, and the bounded retries. Kept apart from
//! the writers so that listing (which reads `archive.json`) never depends on them.

use std::path::Path;
use std::time::Duration;

use crate::error::{Error, Result};
use crate::store::atomic::{self, Replace};
use crate::store::{lease, regular};

/// How many times a write restarts when the file changed under it.
const TRIES: usize = 3;

/// How long a write waits for another spool process's directory lock (loop.md 9.1).
const LOCK_WAIT: Duration = Duration::from_secs(2);

/// Hold the directory lock of loop.md 9.1 across `f`: the session directory for `meta.json`,
/// the collection for a legacy file and for `archive.json` (a legacy session has no directory
/// of its own). Loop itself does not lock, so the optimistic check stays, right before the
/// rename: a `meta.json` Loop replaced meanwhile is never overwritten with older state.
pub(crate) fn locked<T>(dir: &Path, f: impl FnOnce() -> Result<T>) -> Result<T> {
    let _held = lease::dir_lock(dir, LOCK_WAIT)?;
    f()
}

/// Current bytes of `path`, `None` when it does not exist. Through the one regular-file
/// reader: `meta.json` and `archive.json` at the metadata cap, a legacy `<id>.jsonl` (which
/// holds its messages too) at the legacy cap.
pub(crate) fn read_optional(path: &Path) -> Result<Option<Vec<u8>>> {
    let cap = if path.extension().is_some_and(|e| e == "jsonl") {
        super::envelope::LEGACY_CAP
    } else {
        regular::META_CAP
    };
    match regular::read(path, cap, regular::Links::Refuse) {
        Ok(b) => Ok(Some(b)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::io("reading", path, e)),
    }
}

/// Atomically replace `path` with `new`, but only if it still holds `b0` right before the
/// rename (the optimistic check of section 9).
pub(crate) fn replace_checked(path: &Path, b0: Option<&[u8]>, new: &[u8], id: &str) -> Result<()> {
    let check = || {
        if read_optional(path)?.as_deref() == b0 {
            Ok(())
        } else {
            Err(Error::Changed(id.to_string()))
        }
    };
    atomic::replace(
        path,
        new,
        Replace {
            temp_name: None,
            precheck: Some(&check),
        },
    )
}

/// Run `attempt` until it does not report `Changed`, at most `TRIES` times.
pub(crate) fn with_retries<T>(id: &str, mut attempt: impl FnMut() -> Result<T>) -> Result<T> {
    for _ in 0..TRIES {
        match attempt() {
            Err(Error::Changed(_)) => continue,
            other => return other,
        }
    }
    Err(Error::Changed(id.to_string()))
}
