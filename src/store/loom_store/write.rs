//! Metadata writers (sections 8.2-8.4): pin, read marker, archive and title live in the
//! sidecar `sessions/.spool/<id>.json`; the log itself is never touched.

use std::path::Path;

use serde_json::Value;

use super::log::Facts;
use crate::error::{Error, Result};
use crate::store::sidecar;

/// Pin/archive: set `key` to now (UTC) when turning on and it is null, keep an existing
/// value; clear it to null when turning off.
pub fn set_time_key(sessions: &Path, id: &str, key: &str, on: bool) -> Result<()> {
    sidecar::update(sessions, id, |m| {
        let is_set = m.get(key).is_some_and(|v| !v.is_null());
        match (on, is_set) {
            (true, false) => {
                m.insert(key.into(), Value::from(sidecar::now_utc()));
                true
            }
            (false, true) => {
                m.insert(key.into(), Value::Null);
                true
            }
            _ => false,
        }
    })
}

/// Mark read (8.3): the marker goes to the end of the last complete line, with the message
/// count of those bytes, so it always sits on a record boundary even while loom appends.
pub fn mark_read(sessions: &Path, id: &str, f: &Facts) -> Result<()> {
    store_marker(sessions, id, f.complete_len, f.complete_messages)
}

/// Mark unread: move the marker to the start of the last assistant/tool record, so the
/// unread rule (a reply after `read_bytes`) holds again.
pub fn mark_unread(sessions: &Path, id: &str, f: &Facts) -> Result<()> {
    match f.last_reply_start {
        Some(start) => store_marker(sessions, id, start, f.messages_before_last_reply),
        None => Err(Error::Refused(format!(
            "loom session {id} has no assistant or tool message, so it cannot be unread"
        ))),
    }
}

fn store_marker(sessions: &Path, id: &str, bytes: u64, messages: u64) -> Result<()> {
    sidecar::update(sessions, id, |m| {
        m.insert("read_bytes".into(), Value::from(bytes));
        m.insert("read_messages".into(), Value::from(messages));
        m.insert("read_at".into(), Value::from(sidecar::now_utc()));
        true
    })
}

/// Rename = the sidecar `title` (it wins over the derived title); blank clears it.
pub fn set_title(sessions: &Path, id: &str, title: &str) -> Result<()> {
    let new = if title.trim().is_empty() {
        Value::Null
    } else {
        Value::from(title)
    };
    sidecar::update(sessions, id, |m| {
        if m.get("title").unwrap_or(&Value::Null) == &new {
            return false;
        }
        m.insert("title".into(), new);
        true
    })
}
