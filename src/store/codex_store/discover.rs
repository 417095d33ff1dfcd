//! Discovery (codex.md section 1): the Codex home, `sessions/` (dated `YYYY/MM/DD` and the
//! legacy flat layout, depth ≤ 4) and `archived_sessions/` (flat), rollout file names, the
//! plain file winning over its `.zst` sibling, active winning over an archived duplicate, and
//! the debris that becomes a warning row (pre-JSONL `.json` files, segmented directories).
//! Only directories are listed here; nothing is read or created.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use chrono::{DateTime, Local, NaiveDateTime, TimeZone, Utc};

use super::record::is_uuid;
use crate::store::Candidate;

/// `$CODEX_HOME` when set and non-empty (a leading `~/` expanded), else `~/.codex`.
pub fn default_root(home: &Path) -> PathBuf {
    crate::store::root_from_env("CODEX_HOME", home, ".codex")
}

/// What a discovered entry is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Found {
    Rollout,
    /// A pre-JSONL `rollout-*.json` single file (early 2025).
    LegacyJson,
    /// A directory named like a rollout (segmented layout of unconfirmed origin).
    Segmented,
}

/// One discovered rollout (or warning entry).
#[derive(Clone, Debug)]
pub struct Entry {
    pub id: String,
    pub path: PathBuf,
    pub mtime: Option<SystemTime>,
    /// Discovery's `lstat` of `path` (taken for `mtime`), handed to the catalog's stat pass
    /// so a warm check does not `lstat` every rollout a second time. `None` when the entry
    /// comes from the kept index (`found::ById`), which does not hold it.
    pub stat: Option<crate::catalog::stamp::Stat>,
    pub archived: bool,
    pub found: Found,
    /// The same id also sits in `archived_sessions/` (an interrupted archive).
    pub duplicate_in_archive: bool,
}

/// The id and local creation time of `rollout-YYYY-MM-DDThh-mm-ss-<uuid>` (no extension).
pub fn parse_stem(stem: &str) -> Option<(String, NaiveDateTime)> {
    let rest = stem.strip_prefix("rollout-")?;
    if rest.len() != 19 + 1 + 36 || !rest.is_char_boundary(19) {
        return None;
    }
    let (time, id) = (&rest[..19], &rest[20..]);
    if rest.as_bytes()[19] != b'-' || !is_uuid(id) {
        return None;
    }
    let t = NaiveDateTime::parse_from_str(time, "%Y-%m-%dT%H-%M-%S").ok()?;
    Some((id.to_ascii_lowercase(), t))
}

/// The filename time, read as the machine's local time (DECIDED; Codex reads it as UTC).
pub fn filename_time(path: &Path) -> Option<DateTime<Utc>> {
    let name = path.file_name()?.to_string_lossy().into_owned();
    let stem = name
        .strip_suffix(".jsonl.zst")
        .or_else(|| name.strip_suffix(".jsonl"))?;
    let (_, t) = parse_stem(stem)?;
    Local
        .from_local_datetime(&t)
        .earliest()
        .map(|l| l.with_timezone(&Utc))
}

/// Classify one directory entry by name.
fn classify(name: &str, is_dir: bool) -> Option<(String, Found, bool)> {
    if is_dir {
        return parse_stem(name).map(|(id, _)| (id, Found::Segmented, false));
    }
    if let Some(stem) = name.strip_suffix(".jsonl.zst") {
        return parse_stem(stem).map(|(id, _)| (id, Found::Rollout, true));
    }
    if let Some(stem) = name.strip_suffix(".jsonl") {
        return parse_stem(stem).map(|(id, _)| (id, Found::Rollout, false));
    }
    let stem = name.strip_suffix(".json")?;
    parse_stem(stem).map(|(id, _)| (id, Found::LegacyJson, false))
}

/// Walk `dir` to `depth_left` levels of subdirectories, collecting rollout entries.
fn walk(dir: &Path, depth_left: usize, archived: bool, out: &mut Vec<(Entry, bool)>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') {
            continue;
        }
        // DirEntry::file_type does not follow symlinks: a linked rollout is not Codex's.
        let Ok(ft) = e.file_type() else { continue };
        if ft.is_dir() && classify(&name, true).is_none() {
            if depth_left > 0 {
                walk(&e.path(), depth_left - 1, archived, out);
            }
            continue;
        }
        if !ft.is_file() && !ft.is_dir() {
            continue;
        }
        let Some((id, found, zst)) = classify(&name, ft.is_dir()) else {
            continue;
        };
        // `DirEntry::metadata` does not follow symlinks: the `lstat` the catalog keys on.
        let meta = e.metadata().ok();
        let entry = Entry {
            id,
            path: e.path(),
            mtime: meta.as_ref().and_then(|m| m.modified().ok()),
            stat: meta.as_ref().map(crate::catalog::stamp::Stat::of),
            archived,
            found,
            duplicate_in_archive: false,
        };
        out.push((entry, zst));
    }
}

/// Every rollout under `root`, one per id: plain beats `.zst`, active beats archived,
/// newest mtime first.
pub fn discover(root: &Path) -> Vec<Entry> {
    let mut all = Vec::new();
    walk(&root.join("sessions"), 4, false, &mut all);
    walk(&root.join("archived_sessions"), 0, true, &mut all);
    let rank = |e: &Entry, zst: bool| {
        let found = match e.found {
            Found::Rollout => 0,
            Found::LegacyJson | Found::Segmented => 1,
        };
        (found, u8::from(e.archived), u8::from(zst))
    };
    let mut best: HashMap<String, (Entry, bool)> = HashMap::new();
    let mut both: HashMap<String, (bool, bool)> = HashMap::new();
    for (e, zst) in all {
        let seen = both.entry(e.id.clone()).or_default();
        if e.found == Found::Rollout {
            if e.archived {
                seen.1 = true;
            } else {
                seen.0 = true;
            }
        }
        match best.get(&e.id) {
            Some((b, bz)) if rank(b, *bz) <= rank(&e, zst) => {}
            _ => {
                best.insert(e.id.clone(), (e, zst));
            }
        }
    }
    let mut out: Vec<Entry> = best
        .into_values()
        .map(|(mut e, _)| {
            e.duplicate_in_archive = both.get(&e.id) == Some(&(true, true));
            e
        })
        .collect();
    out.sort_by(|a, b| b.mtime.cmp(&a.mtime).then_with(|| b.id.cmp(&a.id)));
    out
}

impl From<&Entry> for Candidate {
    fn from(e: &Entry) -> Candidate {
        Candidate {
            id: e.id.clone(),
            path: e.path.clone(),
            mtime: e.mtime,
            stat: e.stat,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_and_plain_beats_zst_and_active_beats_archived() {
        let (id, t) =
            parse_stem("rollout-2026-03-14T10-15-02-019CEBA0-ae55-7d10-9f2a-4b8e6c1d2a30").unwrap();
        assert_eq!(id, "019ceba0-ae55-7d10-9f2a-4b8e6c1d2a30");
        assert_eq!(t.to_string(), "2026-03-14 10:15:02");
        assert!(parse_stem("rollout-2026-03-14T10-15-02-nope").is_none());
        let d = tempfile::tempdir().unwrap();
        let id = "019ceba0-ae55-7d10-9f2a-4b8e6c1d2a30";
        let name = format!("rollout-2026-03-14T10-15-02-{id}");
        let day = d.path().join("sessions/2026/03/14");
        std::fs::create_dir_all(&day).unwrap();
        std::fs::create_dir_all(d.path().join("archived_sessions")).unwrap();
        std::fs::write(day.join(format!("{name}.jsonl")), "").unwrap();
        std::fs::write(day.join(format!("{name}.jsonl.zst")), "").unwrap();
        std::fs::write(d.path().join(format!("archived_sessions/{name}.jsonl")), "").unwrap();
        let found = discover(d.path());
        assert_eq!(found.len(), 1);
        assert!(found[0].path.ends_with(format!("{name}.jsonl")));
        assert!(!found[0].archived && found[0].duplicate_in_archive);
    }

    /// The warm check keys every rollout: discovery's `lstat` goes with the candidate, so
    /// the pass does not take a second one (10k rollouts: 20,000 `statx` before, 10,000 now).
    #[test]
    fn a_candidate_carries_discoverys_lstat_of_its_rollout() {
        let d = tempfile::tempdir().unwrap();
        let id = "019ceba0-ae55-7d10-9f2a-4b8e6c1d2a30";
        let day = d.path().join("sessions/2026/03/14");
        std::fs::create_dir_all(&day).unwrap();
        let path = day.join(format!("rollout-2026-03-14T10-15-02-{id}.jsonl"));
        std::fs::write(&path, "{}\n").unwrap();
        let found = discover(d.path());
        let c = Candidate::from(&found[0]);
        let want = crate::catalog::stamp::Stat::of(&std::fs::symlink_metadata(&path).unwrap());
        assert_eq!(c.stat, Some(want));
    }
}
