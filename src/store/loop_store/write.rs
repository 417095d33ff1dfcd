//! Metadata writers (sections 9.1 to 9.4 and 9.8): pin, mark read/unread and rename. Each
//! replaces only `meta.json` (or, for a legacy file, rewrites its header line and copies the
//! message bytes verbatim), under the optimistic check, at most three tries.

use std::cell::Cell;
use std::path::Path;
use std::time::Duration;

use chrono::Utc;
use serde_json::{Map, Value, json};

use super::envelope::{Head, read_head};
use super::header::iso_string;
use super::listing::summary_from_head;
use super::{Layout, Loc};
use crate::error::{Error, Result};
use crate::store::atomic::{self, Replace};
use crate::store::{lease, regular};
use crate::text::normalize_title;

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

/// Refuse writes to rows the listing marks read-only (errors, id mismatch, invalid parts).
pub(crate) fn ensure_writable(loc: &Loc, head: &Head) -> Result<()> {
    let row = summary_from_head(loc, head);
    if !row.read_only {
        return Ok(());
    }
    let why = row
        .error
        .clone()
        .or_else(|| (!row.badges.is_empty()).then(|| row.badges.join(", ")))
        .unwrap_or_else(|| "invalid metadata".into());
    Err(Error::Refused(format!(
        "session {} is read-only ({why}); not changing it",
        loc.id
    )))
}

/// The new file bytes for a header change: `meta.json` in 2-space JSON (range fields as read),
/// or the legacy file with a new compact header line and the message bytes verbatim.
fn render(loc: &Loc, head: &Head, header: Map<String, Value>) -> Result<Vec<u8>> {
    match loc.layout {
        Layout::V3 => {
            let mut env = head
                .envelope
                .clone()
                .ok_or_else(|| Error::Corrupt("meta.json envelope missing".into()))?;
            env.insert("header".into(), Value::Object(header));
            let mut out = serde_json::to_string_pretty(&Value::Object(env))
                .map_err(|e| Error::Corrupt(e.to_string()))?;
            out.push('\n');
            Ok(out.into_bytes())
        }
        Layout::Legacy => {
            let line = serde_json::to_string(&Value::Object(header))
                .map_err(|e| Error::Corrupt(e.to_string()))?;
            let rest = head
                .raw
                .get(head.range.start as usize..)
                .unwrap_or_default();
            let mut out = Vec::with_capacity(line.len() + 1 + rest.len() + 1);
            out.extend_from_slice(line.as_bytes());
            out.push(b'\n');
            out.extend_from_slice(rest);
            if !rest.is_empty() && !rest.ends_with(b"\n") {
                out.push(b'\n');
            }
            Ok(out)
        }
    }
}

/// Apply `change` to the header and publish it; `change` returns whether anything changed
/// (nothing changed = no write). Returns whether a file was written.
pub(crate) fn update_header(
    loc: &Loc,
    change: impl Fn(&Head, &mut Map<String, Value>) -> Result<bool>,
) -> Result<bool> {
    let dir = match loc.layout {
        Layout::V3 => &loc.path,
        Layout::Legacy => &loc.collection,
    };
    locked(dir, || {
        with_retries(&loc.id, || {
            let head = read_head(loc).map_err(|e| e.into_error())?;
            ensure_writable(loc, &head)?;
            let mut header = head.header.clone();
            if !change(&head, &mut header)? {
                return Ok(false);
            }
            let bytes = render(loc, &head, header)?;
            let path = match loc.layout {
                Layout::V3 => loc.meta_path(),
                Layout::Legacy => loc.path.clone(),
            };
            replace_checked(&path, Some(&head.raw), &bytes, &loc.id)?;
            Ok(true)
        })
    })
}

/// `setPinned` (9.2): keep an existing pin time, else now; unpin deletes the key.
pub(crate) fn set_pinned(loc: &Loc, pinned: bool) -> Result<()> {
    update_header(loc, |_, h| {
        if pinned {
            if h.contains_key("pinnedAt") {
                return Ok(false);
            }
            h.insert("pinnedAt".into(), Value::String(iso_string(Utc::now())));
            Ok(true)
        } else {
            Ok(h.shift_remove("pinnedAt").is_some())
        }
    })
    .map(|_| ())
}

/// `markRead(n)` (9.3): `false` (no write) for a stale count, `true` otherwise.
pub(crate) fn mark_read(loc: &Loc, n: u64) -> Result<bool> {
    let result = Cell::new(true);
    update_header(loc, |head, h| {
        if n == 0 || n != head.range.count {
            result.set(false);
            return Ok(false);
        }
        result.set(true);
        if h.get("unread") != Some(&Value::Bool(true)) {
            return Ok(false);
        }
        h.insert("unread".into(), Value::Bool(false));
        Ok(true)
    })?;
    Ok(result.get())
}

/// Mark read with the count on disk now (`set_unread(id, false)`).
pub(crate) fn mark_read_current(loc: &Loc) -> Result<bool> {
    let head = read_head(loc).map_err(|e| e.into_error())?;
    mark_read(loc, head.range.count)
}

/// Mark unread: `header.unread = true`.
pub(crate) fn mark_unread(loc: &Loc) -> Result<()> {
    update_header(loc, |_, h| {
        if h.get("unread") == Some(&Value::Bool(true)) {
            return Ok(false);
        }
        h.insert("unread".into(), Value::Bool(true));
        Ok(true)
    })
    .map(|_| ())
}

/// `setTitle` (9.4): a user title, normalised; empty is refused.
pub(crate) fn rename(loc: &Loc, input: &str) -> Result<()> {
    let text = normalize_title(input, 120);
    if text.is_empty() {
        return Err(Error::Refused(
            "the title is empty after normalisation".into(),
        ));
    }
    let title = json!({"text": text, "source": "user", "messageIndices": []});
    update_header(loc, |_, h| {
        if h.get("title") == Some(&title) {
            return Ok(false);
        }
        h.insert("title".into(), title.clone());
        Ok(true)
    })
    .map(|_| ())
}
