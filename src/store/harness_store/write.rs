//! The safe writers of section 8: every record rewrite runs under the harness's own lease on
//! `<id>.lock` (never waited on, never deleted), re-reads the record, and replaces it atomically
//! in Python's byte style; pin and read state go to the sidecar only.

use serde_json::{Map, Value};

use super::HarnessStore;
use super::json::{self, Parsed};
use super::record::{self, history, role};
use crate::error::{Error, Result};
use crate::store::{atomic, lease, sidecar};

/// `tmp` + 8 random characters of `[a-z0-9_]` + `.tmp`, the harness's mkstemp shape, so the
/// harness's own glob never matches an in-flight temp.
pub fn temp_name() -> String {
    const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789_";
    let tail: String = atomic::random_bytes(8)
        .iter()
        .map(|b| ALPHABET[*b as usize % ALPHABET.len()] as char)
        .collect();
    format!("tmp{tail}.tmp")
}

/// A new session id: 12 random bytes as URL-safe base64 without padding (16 characters),
/// like `secrets.token_urlsafe(12)`.
pub fn new_id() -> String {
    const B64: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let bytes = atomic::random_bytes(12);
    let mut out = String::with_capacity(16);
    for chunk in bytes.chunks(3) {
        let n = (u32::from(chunk[0]) << 16) | (u32::from(chunk[1]) << 8) | u32::from(chunk[2]);
        for shift in [18, 12, 6, 0] {
            out.push(B64[((n >> shift) & 63) as usize] as char);
        }
    }
    out
}

/// `_timestamp()`: `YYYY-MM-DDTHH:MM:SS+00:00`.
pub fn harness_now() -> String {
    chrono::Utc::now()
        .format("%Y-%m-%dT%H:%M:%S+00:00")
        .to_string()
}

impl HarnessStore {
    /// Read `id` for a write: it must exist, parse and be well-formed; `rewrite` also refuses
    /// records with non-finite numbers (they cannot be written back faithfully).
    fn load_valid(&self, id: &str, rewrite: bool) -> Result<Parsed> {
        let (_, loaded) = self.load_existing(id)?;
        let parsed = loaded.parsed.map_err(|why| {
            Error::Refused(format!(
                "harness session {id} is an unreadable record ({why}); not changing it"
            ))
        })?;
        if let Some(why) = record::problem(&parsed.map, id) {
            return Err(Error::Refused(format!(
                "harness session {id} is malformed ({why}); not changing it"
            )));
        }
        if rewrite && parsed.non_finite {
            return Err(Error::Refused(format!(
                "harness session {id} holds NaN or Infinity numbers; spool will not rewrite it"
            )));
        }
        Ok(parsed)
    }

    /// Fail with NotFound before taking a lease, so no lock file is created for a session
    /// that does not exist.
    fn require_exists(&self, id: &str) -> Result<()> {
        let path = self.record_path(id)?;
        match std::fs::symlink_metadata(&path) {
            Ok(m) if m.is_file() => Ok(()),
            _ => Err(Error::NotFound(format!("harness:{id}"))),
        }
    }

    /// Serialise and atomically replace `<id>.json` (8.2).
    fn write_record(&self, id: &str, map: Map<String, Value>) -> Result<()> {
        let bytes = json::py_dump(&Value::Object(map));
        let opts = atomic::Replace {
            temp_name: Some(temp_name()),
            precheck: None,
        };
        atomic::replace(&self.record_path(id)?, bytes.as_bytes(), opts)
    }

    /// Lease → re-read → `change` (returns whether anything changed) → atomic write → release.
    fn edit(&self, id: &str, change: impl FnOnce(&mut Map<String, Value>) -> bool) -> Result<()> {
        self.require_exists(id)?;
        let _lease = lease::take_lease(&self.lock_path(id)?, id)?;
        let mut parsed = self.load_valid(id, true)?;
        if !change(&mut parsed.map) {
            return Ok(());
        }
        self.write_record(id, parsed.map)
    }

    /// 8.3: `updated_at` stays unchanged; the value is normalised to a bool.
    pub(super) fn write_archived(&self, id: &str, archived: bool) -> Result<()> {
        self.edit(id, |m| set(m, "archived", Value::Bool(archived)))
    }

    pub(super) fn write_title(&self, id: &str, title: &str) -> Result<()> {
        self.edit(id, |m| set(m, "title", Value::String(title.to_string())))
    }

    /// 8.4: sidecar only, no lease; re-pinning keeps the existing timestamp.
    pub(super) fn write_pinned(&self, id: &str, pinned: bool) -> Result<()> {
        self.load_valid(id, false)?;
        sidecar::update(&self.sessions, id, |m| {
            let is_pinned = m.get("pinned_at").is_some_and(|v| !v.is_null());
            match (pinned, is_pinned) {
                (true, false) => set(m, "pinned_at", Value::String(sidecar::now_utc())),
                (false, true) => set(m, "pinned_at", Value::Null),
                _ => false,
            }
        })
    }

    /// Mark read: `read_transcript_len = len(transcript)` of a fresh read, plus `read_at`.
    /// Mark unread: move the marker back to the last assistant/tool entry.
    pub(super) fn write_unread(&self, id: &str, unread: bool) -> Result<()> {
        let parsed = self.load_valid(id, false)?;
        let hist: &[Value] = history(&parsed.map).map(Vec::as_slice).unwrap_or(&[]);
        let marker = if unread {
            hist.iter()
                .rposition(|e| matches!(role(e), Some("assistant") | Some("tool")))
                .unwrap_or(0)
        } else {
            hist.len()
        };
        sidecar::update(&self.sessions, id, |m| {
            let changed = set(m, "read_transcript_len", Value::from(marker as u64));
            if !unread {
                m.insert("read_at".into(), Value::String(sidecar::now_utc()));
                return true;
            }
            changed
        })
    }

    /// 8.5: copy (optionally cut before user message `at`) into a new id, created without
    /// clobbering under the new id's lease.
    pub(super) fn write_fork(&self, id: &str, at: Option<usize>) -> Result<String> {
        let src = self.load_valid(id, true)?;
        let mut map = src.map;
        if let Some(n) = at {
            cut(&mut map, id, n)?;
        }
        let mut new = new_id();
        for _ in 0..16 {
            if std::fs::symlink_metadata(self.record_path(&new)?).is_err() {
                break;
            }
            new = new_id();
        }
        let lock = self.lock_path(&new)?;
        let lock_was_there = std::fs::symlink_metadata(&lock).is_ok();
        let lease = lease::take_lease(&lock, &new)?;
        let now = harness_now();
        let title = match record::str_field(&map, "title") {
            Some(t) if !t.is_empty() => format!("{t} (branch)"),
            _ => String::new(),
        };
        map.insert("id".into(), Value::String(new.clone()));
        map.insert("created_at".into(), Value::String(now.clone()));
        map.insert("updated_at".into(), Value::String(now));
        map.insert("title".into(), Value::String(title));
        map.insert("archived".into(), Value::Bool(false));
        map.insert("status".into(), Value::String("saved".into()));
        map.insert("branched_from".into(), Value::String(id.to_string()));
        let bytes = json::py_dump(&Value::Object(map));
        let created =
            atomic::create_no_clobber(&self.record_path(&new)?, bytes.as_bytes(), &temp_name());
        if created.is_err() && !lock_was_there {
            // The lock file was made for a session that never came to be (a full disk): an
            // orphan `<new>.lock` would be left for good, since lock files are never deleted.
            let _ = std::fs::remove_file(&lock);
        }
        drop(lease);
        created.map(|_| new)
    }

    /// 8.6: lease → unlink → fsync dir → remove sidecar; the lock file stays.
    pub(super) fn write_delete(&self, id: &str) -> Result<()> {
        self.require_exists(id)?;
        let _lease = lease::take_lease(&self.lock_path(id)?, id)?;
        self.load_valid(id, false)?;
        let path = self.record_path(id)?;
        std::fs::remove_file(&path).map_err(|e| Error::io("deleting", &path, e))?;
        atomic::fsync_dir(&self.sessions)
            .map_err(|e| Error::io("syncing directory", &self.sessions, e))?;
        sidecar::remove(&self.sessions, id)
    }
}

/// Set `key` (in place when present, appended otherwise, like a Python dict); false when the
/// value is already exactly that.
fn set(m: &mut Map<String, Value>, key: &str, v: Value) -> bool {
    if m.get(key) == Some(&v) {
        return false;
    }
    m.insert(key.to_string(), v);
    true
}

/// Fork at a point (8.5.5): only without compactions and with `messages == transcript`, cut
/// both before user message `n`, and reset `state`.
fn cut(map: &mut Map<String, Value>, id: &str, n: usize) -> Result<()> {
    if map
        .get("compactions")
        .is_some_and(|c| c.as_array().is_none_or(|a| !a.is_empty()))
    {
        return Err(Error::Refused(format!(
            "harness session {id} has compactions, so it can only be forked whole"
        )));
    }
    let messages = map.get("messages").and_then(Value::as_array);
    if let Some(t) = map.get("transcript")
        && Some(t) != map.get("messages")
    {
        return Err(Error::Refused(format!(
            "harness session {id}'s context differs from its transcript, so it can only be \
             forked whole"
        )));
    }
    let kept_user = messages.is_some_and(|m| m.iter().take(n).any(|e| role(e) == Some("user")));
    if !kept_user {
        return Err(crate::store::empty_fork(
            crate::model::StoreKind::Harness,
            id,
            n,
        ));
    }
    let is_user = n > 0
        && messages
            .and_then(|m| m.get(n))
            .is_some_and(|e| role(e) == Some("user"));
    if !is_user {
        return Err(Error::Refused(format!(
            "message {n} of harness session {id} is not a user message; a fork must cut \
             before a user message"
        )));
    }
    for key in ["messages", "transcript"] {
        if let Some(Value::Array(a)) = map.get_mut(key) {
            a.truncate(n);
        }
    }
    map.insert("state".into(), Value::Object(Map::new()));
    Ok(())
}
