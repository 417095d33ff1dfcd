//! How an agent-harness session ended (docs/stores.md): from `status`, the lease, and the
//! last entry of the history the listing already parsed.

use std::path::Path;

use serde_json::{Map, Value};

use super::record::{content_text, role, unwrap_tool};
use super::render::NOTICE;
use crate::model::Ended;
use crate::model::ended::reports_error;
use crate::store::lease;

/// `last` is the history's last entry with a role other than `system`.
pub fn ended(
    sessions: &Path,
    id: &str,
    map: &Map<String, Value>,
    last: Option<&Value>,
) -> Option<Ended> {
    let last = last?;
    match map.get("status").and_then(Value::as_str) {
        Some("active") => {
            let lock = sessions.join(format!("{id}.lock"));
            // Lease held: the harness runs it now. Free: it died without cleanup.
            return Some(if lease::lease_held(&lock) {
                Ended::Running
            } else {
                Ended::Interrupted
            });
        }
        Some("aborted") => return Some(Ended::Interrupted),
        _ => {}
    }
    let text = content_text(last.get("content"));
    Some(match role(last) {
        Some("assistant") => {
            let calls = last.get("tool_calls").and_then(Value::as_array);
            if calls.is_some_and(|c| !c.is_empty()) {
                Ended::Interrupted
            } else {
                Ended::after_reply(&text)
            }
        }
        Some("tool") => {
            let body = unwrap_tool(&text).map_or(text.as_str(), |(_, b)| b);
            if body != NOTICE && reports_error(body) {
                Ended::Errored
            } else {
                Ended::Interrupted
            }
        }
        _ => Ended::Interrupted,
    })
}
