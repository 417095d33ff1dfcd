//! Metadata writers (sections 9.1 to 9.4 and 9.8): pin, mark read/unread and rename. Each
//! replaces only `meta.json` (or, for a legacy file, rewrites its header line and copies the
//! message bytes verbatim), under the optimistic check, at most three tries.

use std::cell::Cell;

use chrono::Utc;
use serde_json::{Map, Value, json};

use super::envelope::{Head, read_head};
use super::guard::{locked, replace_checked, with_retries};
use super::header::iso_string;
use super::listing::summary_from_head;
use super::{Layout, Loc};
use crate::error::{Error, Result};
use crate::text::normalize_title;

/// Refuse writes to rows the listing marks read-only (errors, id mismatch, invalid parts).
pub(crate) fn ensure_writable(loc: &Loc, head: &Head) -> Result<()> {
    let row = summary_from_head(loc, head);
    if !row.read_only {
        return Ok(());
    }
    let why = row
        .error()
        .map(String::from)
        .or_else(|| row.has_badges().then(|| row.badge_text()))
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
