//! spool's own per-session state for stores that have none (loom, agent-harness):
//! `sessions/.spool/<id>.json`, version 1, unknown keys preserved, written atomically under the
//! `.spool/.lock` instance lock. A sidecar that fails to parse is ignored and never overwritten.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Map, Value};

use super::{atomic, lease, regular};
use crate::error::{Error, Result};

/// What a sidecar file holds.
#[derive(Clone, Debug, PartialEq)]
pub enum Sidecar {
    /// No file: default state.
    Absent,
    /// A version-1 object.
    Valid(Map<String, Value>),
    /// Unparsable or another version: ignored for reading, never overwritten.
    Invalid(String),
}

impl Sidecar {
    /// The object, when valid.
    pub fn map(&self) -> Option<&Map<String, Value>> {
        match self {
            Sidecar::Valid(m) => Some(m),
            _ => None,
        }
    }

    /// A string field (null and absent are `None`).
    pub fn str(&self, key: &str) -> Option<&str> {
        self.map()?.get(key)?.as_str()
    }

    /// A non-negative integer field.
    pub fn u64(&self, key: &str) -> Option<u64> {
        self.map()?.get(key)?.as_u64()
    }

    /// The warning to show when the sidecar is being ignored.
    pub fn warning(&self) -> Option<String> {
        match self {
            Sidecar::Invalid(why) => Some(format!("spool state unreadable: {why}")),
            _ => None,
        }
    }
}

/// `sessions/.spool`.
pub fn dir(sessions_dir: &Path) -> PathBuf {
    sessions_dir.join(".spool")
}

/// `sessions/.spool/<id>.json`: `dir(sessions_dir).join(format!("{id}.json"))` in one
/// allocation, as a stat pass names it for every session (issue 10: the three allocations
/// were a fifth of the warm check's Loop thread at 100k sessions).
pub fn path(sessions_dir: &Path, id: &str) -> PathBuf {
    let mut p = PathBuf::with_capacity(sessions_dir.as_os_str().len() + id.len() + 14);
    p.push(sessions_dir);
    p.push(".spool");
    // `push(id)` then the suffix on the same component is `push("<id>.json")`.
    p.push(id);
    p.as_mut_os_string().push(".json");
    p
}

/// Read the sidecar of `id` (read-only; never creates anything).
pub fn read(sessions_dir: &Path, id: &str) -> Sidecar {
    read_in(&dir(sessions_dir), id)
}

/// Read `<state_dir>/<id>.json`. Shared by the in-store sidecars and the state directory
/// of read-only stores.
pub fn read_in(state_dir: &Path, id: &str) -> Sidecar {
    let p = state_dir.join(format!("{id}.json"));
    // A FIFO, device or symlink here is a badge on the row, never a hang or an 8 GB read.
    match regular::read(&p, regular::META_CAP, regular::Links::Refuse) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Sidecar::Absent,
        Err(e) => Sidecar::Invalid(format!("cannot read {}: {e}", p.display())),
        Ok(bytes) => parse(&bytes),
    }
}

fn parse(bytes: &[u8]) -> Sidecar {
    match serde_json::from_slice::<Value>(bytes) {
        Ok(Value::Object(m)) => match m.get("version").and_then(Value::as_u64) {
            Some(1) => Sidecar::Valid(m),
            _ => Sidecar::Invalid("unsupported sidecar version".into()),
        },
        Ok(_) => Sidecar::Invalid("sidecar is not a JSON object".into()),
        Err(e) => Sidecar::Invalid(format!("sidecar is not valid JSON ({e})")),
    }
}

/// Read-modify-write the sidecar of `id` under the instance lock. `change` edits the object
/// (starting from `{"version":1}` when absent) and returns whether anything changed; nothing
/// is written when it did not. An invalid sidecar is refused, never overwritten.
pub fn update(
    sessions_dir: &Path,
    id: &str,
    change: impl FnOnce(&mut Map<String, Value>) -> bool,
) -> Result<()> {
    update_in(&dir(sessions_dir), id, change)
}

/// `update` for `<state_dir>/<id>.json`, the directory created 0700 when missing (with its
/// `.lock` instance lock inside it).
pub fn update_in(
    state_dir: &Path,
    id: &str,
    change: impl FnOnce(&mut Map<String, Value>) -> bool,
) -> Result<()> {
    let d = state_dir;
    let _lock = lease::instance_lock(d, Duration::from_secs(2))?;
    let mut map = match read_in(d, id) {
        Sidecar::Absent => {
            let mut m = Map::new();
            m.insert("version".into(), Value::from(1));
            m
        }
        Sidecar::Valid(m) => m,
        Sidecar::Invalid(why) => {
            return Err(Error::Refused(format!(
                "spool's state file for {id} is unreadable ({why}); not overwriting it"
            )));
        }
    };
    if !change(&mut map) {
        return Ok(());
    }
    let mut bytes = serde_json::to_vec(&Value::Object(map)).expect("JSON map serialises");
    bytes.push(b'\n');
    let opts = atomic::Replace {
        temp_name: Some(format!(".{id}.json.{}.tmp", atomic::random_hex(8))),
        precheck: None,
    };
    atomic::replace(&d.join(format!("{id}.json")), &bytes, opts)
}

/// Remove the sidecar of `id` (after a delete), under the instance lock.
pub fn remove(sessions_dir: &Path, id: &str) -> Result<()> {
    let d = dir(sessions_dir);
    if !d.exists() {
        return Ok(());
    }
    let _lock = lease::instance_lock(&d, Duration::from_secs(2))?;
    let p = path(sessions_dir, id);
    match std::fs::remove_file(&p) {
        Ok(()) => atomic::fsync_dir(&d).map_err(|e| Error::io("syncing directory", &d, e)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(Error::io("removing", &p, e)),
    }
}

/// Current UTC time as the sidecars store it (`2026-03-14T13:00:05Z`).
pub fn now_utc() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The one-allocation path is the path `dir(..).join(format!("{id}.json"))` names, for
    /// every shape of directory and id (a trailing slash, an empty or absolute id).
    #[test]
    fn a_sidecar_path_is_its_directory_joined_with_the_ids_file_name() {
        for dir in ["/s/sessions", "/s/sessions/", "rel", ""] {
            for id in ["a1b2", "", "x.y", "/abs", "d/"] {
                let want = dir_of(Path::new(dir)).join(format!("{id}.json"));
                let got = path(Path::new(dir), id);
                assert_eq!(got.as_os_str(), want.as_os_str(), "{dir:?} {id:?}");
            }
        }
    }

    fn dir_of(sessions: &Path) -> PathBuf {
        sessions.join(".spool")
    }

    #[test]
    fn update_creates_version_1_and_preserves_unknown_keys() {
        let d = tempfile::tempdir().unwrap();
        update(d.path(), "a", |m| {
            m.insert("pinned_at".into(), "2026-01-01T00:00:00Z".into());
            true
        })
        .unwrap();
        let p = path(d.path(), "a");
        let mut v: Value = serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap();
        assert_eq!(v["version"], 1);
        v["future"] = Value::from("kept");
        std::fs::write(&p, serde_json::to_vec(&v).unwrap()).unwrap();
        update(d.path(), "a", |m| {
            m.insert("pinned_at".into(), Value::Null);
            true
        })
        .unwrap();
        assert_eq!(read(d.path(), "a").str("future"), Some("kept"));
        assert!(atomic::temp_files_in(&dir(d.path())).is_empty());
    }

    #[test]
    fn invalid_sidecar_is_ignored_and_never_overwritten() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir(d.path())).unwrap();
        std::fs::write(path(d.path(), "a"), "{not json").unwrap();
        assert!(matches!(read(d.path(), "a"), Sidecar::Invalid(_)));
        assert!(update(d.path(), "a", |_| true).is_err());
        assert_eq!(
            std::fs::read_to_string(path(d.path(), "a")).unwrap(),
            "{not json"
        );
        std::fs::write(path(d.path(), "b"), r#"{"version":2}"#).unwrap();
        assert!(matches!(read(d.path(), "b"), Sidecar::Invalid(_)));
    }

    #[test]
    fn unchanged_update_writes_nothing() {
        let d = tempfile::tempdir().unwrap();
        update(d.path(), "a", |_| false).unwrap();
        assert!(!path(d.path(), "a").exists());
    }
}
