//! spool's own state for the read-only stores (Claude Code, Codex, pi): pin, read marker,
//! spool-side archive and title override in `$XDG_DATA_HOME/spool/state/<store>/<id>.json`
//! (formats README, "State outside the store"). Nothing is ever written inside those agents'
//! directories, so this state lives in spool's data directory instead of a sidecar, through
//! the same reader, atomic writer and instance lock as the in-store sidecars (`sidecar`).

use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use serde_json::{Map, Value};

use super::sidecar::{self, Sidecar};
use crate::error::{Error, Result};
use crate::model::{SessionSummary, parse_time};

/// `$XDG_DATA_HOME/spool/state` (an absolute `XDG_DATA_HOME` only, as the XDG spec says),
/// else `$HOME/.local/share/spool/state`.
pub fn default_root(home: &Path) -> PathBuf {
    std::env::var_os("XDG_DATA_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .unwrap_or_else(|| home.join(".local").join("share"))
        .join("spool")
        .join("state")
}

/// The state directory of one read-only store (`<root>/claude-code`, …).
#[derive(Clone, Debug)]
pub struct StateDir {
    dir: PathBuf,
}

impl StateDir {
    pub fn new(root: &Path, store: &str) -> StateDir {
        StateDir {
            dir: root.join(store),
        }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// `<dir>/<id>.json`, the file `Store::state_file` names, built in one allocation: the
    /// stat pass asks for it once per session, and `join` of a `format!` was two (with
    /// the path's separator checks), a visible part of a warm `spool list` (issue 10).
    pub fn file(&self, id: &str) -> PathBuf {
        use std::os::unix::ffi::{OsStrExt, OsStringExt};
        if id.starts_with('/') {
            // `join` of an absolute name replaces the directory; the sidecar read does the
            // same, so the key must name that file too.
            return self.dir.join(format!("{id}.json"));
        }
        let dir = self.dir.as_os_str().as_bytes();
        let mut b = Vec::with_capacity(dir.len() + id.len() + 6);
        b.extend_from_slice(dir);
        if !dir.ends_with(b"/") {
            b.push(b'/');
        }
        b.extend_from_slice(id.as_bytes());
        b.extend_from_slice(b".json");
        PathBuf::from(std::ffi::OsString::from_vec(b))
    }

    /// The state of `id` (read-only: a missing directory is just "no state").
    pub fn read(&self, id: &str) -> Sidecar {
        sidecar::read_in(&self.dir, id)
    }

    /// Read-modify-write the state of `id`; the directories are created 0700 when missing.
    pub fn update(
        &self,
        id: &str,
        change: impl FnOnce(&mut Map<String, Value>) -> bool,
    ) -> Result<()> {
        create_private_dirs(&self.dir)?;
        sidecar::update_in(&self.dir, id, change)
    }

    /// Set (`on`) or clear a time-valued key such as `pinned_at` / `archived_at`.
    pub fn set_time_key(&self, id: &str, key: &str, on: bool) -> Result<()> {
        self.update(id, |m| {
            let set = m.get(key).is_some_and(|v| !v.is_null());
            if set == on {
                return false;
            }
            let v = if on {
                Value::from(sidecar::now_utc())
            } else {
                Value::Null
            };
            m.insert(key.into(), v);
            true
        })
    }

    /// The title override (an empty title clears it).
    pub fn set_title(&self, id: &str, title: &str) -> Result<()> {
        let t = crate::text::collapse_whitespace(title);
        self.update(id, |m| {
            m.insert(
                "title".into(),
                if t.is_empty() {
                    Value::Null
                } else {
                    Value::from(t)
                },
            );
            true
        })
    }

    /// Mark read up to `newest` (the newest assistant record's timestamp), or unread.
    pub fn set_read(&self, id: &str, newest: Option<DateTime<Utc>>, unread: bool) -> Result<()> {
        self.update(id, |m| {
            if unread {
                m.insert("read_upto".into(), Value::Null);
                m.insert("read_at".into(), Value::Null);
                // No marker at all would read as "never opened" (read), so unread is an
                // explicit flag that the next read clears.
                m.insert("unread".into(), Value::Bool(true));
            } else {
                let upto = newest.map(crate::model::rfc3339);
                m.insert("read_upto".into(), upto.map_or(Value::Null, Value::from));
                m.insert("read_at".into(), Value::from(sidecar::now_utc()));
                m.remove("unread");
            }
            true
        })
    }
}

/// Apply pin, archive, title and unread from `state` to a row. `newest_assistant` is the
/// newest main assistant record's timestamp: unread when strictly newer than `read_upto`.
pub fn apply(s: &mut SessionSummary, state: &Sidecar, newest_assistant: Option<DateTime<Utc>>) {
    if let Some(w) = state.warning() {
        s.add_badge("spool state unreadable");
        s.add_badge(&w);
    }
    let Some(m) = state.map() else { return };
    if let Some(p) = m.get("pinned_at").filter(|v| !v.is_null()) {
        match p.as_str().and_then(parse_time) {
            Some(t) => s.pinned_at = Some(t),
            None => s.pinned_flag = true,
        }
    }
    s.archived = m.get("archived_at").is_some_and(|v| !v.is_null());
    if let Some(t) = m.get("title").and_then(Value::as_str)
        && !t.trim().is_empty()
    {
        s.set_title(t);
    }
    let upto = m
        .get("read_upto")
        .and_then(Value::as_str)
        .and_then(parse_time);
    s.unread = m.get("unread").and_then(Value::as_bool) == Some(true)
        || matches!((newest_assistant, upto), (Some(n), Some(u)) if n > u);
}

/// Create `dir` and its missing ancestors with mode 0700, refusing a symlink where the state
/// directory itself belongs (README: never follow an unexpected symlink when writing).
fn create_private_dirs(dir: &Path) -> Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    if let Ok(m) = std::fs::symlink_metadata(dir)
        && m.file_type().is_symlink()
    {
        return Err(Error::Refused(format!(
            "spool's state directory {} is a symlink; not writing through it",
            dir.display()
        )));
    }
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|e| Error::io("creating directory", dir, e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::StoreKind;

    #[test]
    fn a_state_file_is_the_path_the_sidecar_read_joins() {
        for dir in ["/s/claude-code", "/s/claude-code/", "rel", "/"] {
            let sd = StateDir {
                dir: PathBuf::from(dir),
            };
            for id in ["0190-ab", "", ".", "a/b", "/abs", "é\u{0}x"] {
                let want = sd.dir.join(format!("{id}.json"));
                assert_eq!(sd.file(id), want, "{dir:?} {id:?}");
                assert_eq!(sd.file(id).as_os_str(), want.as_os_str(), "{dir:?} {id:?}");
            }
        }
    }

    #[test]
    fn state_round_trip_and_unread_by_timestamp() {
        let d = tempfile::tempdir().unwrap();
        let st = StateDir::new(&d.path().join("a/b/state"), "claude-code");
        assert!(matches!(st.read("x"), Sidecar::Absent));
        let t1 = parse_time("2026-03-14T09:16:40.552Z");
        st.set_read("x", t1, false).unwrap();
        st.set_time_key("x", "pinned_at", true).unwrap();
        st.set_title("x", "  my   title ").unwrap();
        let mut s = SessionSummary::new(StoreKind::Loop, "x", "/p");
        apply(&mut s, &st.read("x"), t1);
        assert!(!s.unread && s.pinned() && s.title() == "my title");
        apply(&mut s, &st.read("x"), parse_time("2026-03-14T09:17:00Z"));
        assert!(s.unread);
        st.set_read("x", None, true).unwrap();
        apply(&mut s, &st.read("x"), t1);
        assert!(s.unread);
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(st.dir()).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
        let f = std::fs::metadata(st.dir().join("x.json")).unwrap();
        assert_eq!(f.permissions().mode() & 0o777, 0o600);
    }

    #[test]
    fn other_version_is_ignored_and_kept() {
        let d = tempfile::tempdir().unwrap();
        let st = StateDir::new(d.path(), "pi");
        std::fs::create_dir_all(st.dir()).unwrap();
        std::fs::write(
            st.dir().join("x.json"),
            r#"{"version":2,"pinned_at":"2026-01-01T00:00:00Z"}"#,
        )
        .unwrap();
        let mut s = SessionSummary::new(StoreKind::Loop, "x", "/p");
        apply(&mut s, &st.read("x"), None);
        assert!(!s.pinned());
        assert!(s.badges().any(|b| b == "spool state unreadable"));
        assert!(st.set_time_key("x", "pinned_at", true).is_err());
    }
}
