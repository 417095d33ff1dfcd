//! Discovery (pi.md section 1): the session root from pi's own environment and settings,
//! and the session files in it: `*.jsonl` directly in the root and one directory level
//! down, never deeper, never dot-files, never through a symlink. Only directories are
//! listed and one small settings file is read; nothing is created.

use std::path::{Path, PathBuf};

use crate::store::Candidate;
use crate::store::regular::{self, Links, META_CAP};

/// `~` and `~/…` expanded against `home`; a relative path made absolute.
fn expand(v: &str, home: &Path) -> PathBuf {
    if v == "~" {
        return home.to_path_buf();
    }
    match v.strip_prefix("~/") {
        Some(rest) => home.join(rest),
        None => std::path::absolute(v).unwrap_or_else(|_| PathBuf::from(v)),
    }
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

/// pi's agent directory: `$PI_CODING_AGENT_DIR`, else `~/.pi/agent`.
pub fn agent_dir(home: &Path) -> PathBuf {
    env("PI_CODING_AGENT_DIR").map_or_else(|| home.join(".pi").join("agent"), |v| expand(&v, home))
}

/// The session root (DECIDED order, mirroring pi): `$PI_CODING_AGENT_SESSION_DIR`, else
/// `sessionDir` from `<agent dir>/settings.json`, else `<agent dir>/sessions`.
pub fn default_root(home: &Path) -> PathBuf {
    if let Some(v) = env("PI_CODING_AGENT_SESSION_DIR") {
        return expand(&v, home);
    }
    let agent = agent_dir(home);
    settings_session_dir(&agent, home).unwrap_or_else(|| agent.join("sessions"))
}

/// A non-empty string `sessionDir` in the settings (a missing, huge or invalid file: none).
fn settings_session_dir(agent: &Path, home: &Path) -> Option<PathBuf> {
    // A user's dotfiles often symlink their settings: followed, like spool's own config.
    let bytes = regular::read(&agent.join("settings.json"), META_CAP, Links::Follow).ok()?;
    let v: serde_json::Value = serde_json::from_slice(&bytes).ok()?;
    let d = v.get("sessionDir")?.as_str()?.trim();
    (!d.is_empty()).then(|| expand(d, home))
}

/// Ids that may reach a state path or an argv: `[A-Za-z0-9][A-Za-z0-9._-]{0,127}`.
pub fn valid_id(id: &str) -> bool {
    crate::store::claude_store::valid_id(id)
}

/// Regular, non-dot `*.jsonl` files of `dir` (a symlinked file is not one pi wrote); with
/// `only`, just the files whose name gives that id (the others are never `lstat`ed).
fn files_in(
    dir: &Path,
    out: &mut Vec<Candidate>,
    subdirs: Option<&mut Vec<PathBuf>>,
    only: Option<&str>,
) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        out.push(Candidate::unreadable_dir(dir));
        return;
    };
    let mut subdirs = subdirs;
    for e in rd.flatten() {
        // One copy of the name (a lossy `String` of it was a second, per session).
        let os_name = e.file_name();
        let name = os_name.to_string_lossy();
        if name.starts_with('.') {
            continue;
        }
        let Ok(ft) = e.file_type() else { continue };
        if ft.is_dir() {
            if let Some(s) = subdirs.as_deref_mut() {
                s.push(e.path());
            }
            continue;
        }
        if !ft.is_file() || !name.ends_with(".jsonl") || name.len() == ".jsonl".len() {
            continue;
        }
        let id = super::listing::stem_id(Path::new(&*name));
        if only.is_some_and(|o| o != id) {
            continue;
        }
        let meta = e.metadata().ok();
        out.push(Candidate {
            id,
            path: crate::store::fanout::path_of(dir, &os_name),
            mtime: meta.as_ref().and_then(|m| m.modified().ok()),
            stat: meta.as_ref().map(crate::catalog::stamp::Stat::of),
        });
    }
}

/// Every session candidate, newest mtime first. A missing root is simply empty; a
/// directory that cannot be listed is one candidate (an error row).
pub fn discover(root: &Path) -> Vec<Candidate> {
    candidates(root, None)
}

/// `each` of every directory's session candidates (the root's own files first, then each
/// per-cwd directory's on the listing's threads), in order: `discover` before its lists are
/// merged and sorted (`only`: of that id alone), or a survey packed where each was made.
pub fn by_dir<R: Send>(
    root: &Path,
    only: Option<&str>,
    each: impl Fn(Vec<Candidate>) -> R + Sync,
) -> Vec<R> {
    if !root.is_dir() {
        return Vec::new();
    }
    let (mut top, mut dirs) = (Vec::new(), Vec::new());
    files_in(root, &mut top, Some(&mut dirs), only);
    let top = each(top);
    // The per-cwd directories on two threads (a `statx` per session was most of a warm
    // check's discovery), gathered in the order one thread lists them.
    let listed = crate::store::fanout::in_order(&dirs, |d| {
        let mut v = Vec::new();
        files_in(d, &mut v, None, only);
        each(v)
    });
    std::iter::once(top).chain(listed).collect()
}

/// The candidates `discover` finds with the id `id`, in its order, taking an `lstat` of
/// those files only: opening a session listed and `lstat`ed all 10k of a generated store.
pub fn named(root: &Path, id: &str) -> Vec<Candidate> {
    let mut v = candidates(root, Some(id));
    // An unreadable directory's stand-in carries the directory's name as its id.
    v.retain(|c| c.id == id);
    v
}

fn candidates(root: &Path, only: Option<&str>) -> Vec<Candidate> {
    let listed = by_dir(root, only, |found| found);
    let mut out = Vec::with_capacity(listed.iter().map(Vec::len).sum());
    listed.into_iter().for_each(|found| out.extend(found));
    // Unstable: a stable sort's scratch buffer was half the candidates again; the paths
    // (unique) make the order total all the same.
    out.sort_unstable_by(|a, b| b.mtime.cmp(&a.mtime).then_with(|| b.path.cmp(&a.path)));
    out
}
