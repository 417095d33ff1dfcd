//! Discovery (claude-code.md section 1): the config root, `projects/*/<id>.jsonl` session
//! files, their subagent transcripts, id validation, the project-directory name rule used to
//! pick the launch dir (section 8), and `cleanupPeriodDays` from the user settings (7.2).
//! Everything here only lists directories and reads small files; nothing is created.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::SystemTime;

use super::seen::{Project, Projects};
use crate::catalog::stamp::Stat;
use crate::store::Candidate;

/// `$CLAUDE_CONFIG_DIR` when set and non-empty (a leading `~/` expanded), else `~/.claude`.
pub fn default_root(home: &Path) -> PathBuf {
    crate::store::root_from_env("CLAUDE_CONFIG_DIR", home, ".claude")
}

/// `^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`: the only stems that become part of a state path or
/// an argv (section 1, DECIDED).
pub fn valid_id(id: &str) -> bool {
    let b = id.as_bytes();
    !b.is_empty()
        && b.len() <= 128
        && b[0].is_ascii_alphanumeric()
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'.' | b'_' | b'-'))
}

/// Project directories under `projects/`: directories (a symlinked one is followed, users
/// make those), names not starting with `.`.
pub(super) fn project_dirs(projects: &Path) -> Vec<PathBuf> {
    project_dirs_dated(projects)
        .into_iter()
        .map(|(dir, _)| dir)
        .collect()
}

/// `project_dirs`, each with its mtime (a symlinked one's target's): the time a transcript
/// was last created (or one removed or renamed) in it, which the cold start's first screen
/// goes by (`newest`).
pub(super) fn project_dirs_dated(projects: &Path) -> Vec<(PathBuf, Option<SystemTime>)> {
    let Ok(rd) = std::fs::read_dir(projects) else {
        return Vec::new();
    };
    rd.flatten()
        .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
        .filter_map(|e| {
            let m = std::fs::metadata(e.path()).ok().filter(|m| m.is_dir())?;
            Some((e.path(), m.modified().ok()))
        })
        .collect()
}

/// Every session candidate: regular `*.jsonl` files directly in a project directory whose
/// stem does not start with `agent-` (those are legacy subagents). Newest mtime first. What
/// each project directory held besides goes to `seen` (see `seen::Project`), from the same
/// listing.
///
/// The project directories are listed on two threads (`fanout::in_order`, as Codex and pi
/// list theirs): a `statx` of every transcript (for the order) is most of a cold start's
/// first screen at 10k sessions (30 ms of CPU, more than reading the 32 first rows' 7.5 MB
/// on two threads), and the listing thread had the other core to itself meanwhile. The
/// order is total, so it does not depend on which thread listed what.
pub fn discover(projects: &Path, seen: &mut Projects) -> Vec<Candidate> {
    let listed = by_project(projects, seen, |found, _| found);
    let mut out = Vec::with_capacity(listed.iter().map(Vec::len).sum());
    listed.into_iter().for_each(|found| out.extend(found));
    // Unstable: a stable sort's scratch buffer was half the candidates again (1.4 MB at
    // 10k); the path makes the order total all the same.
    out.sort_unstable_by(newest_first);
    out
}

/// `each` of every project directory's session candidates and what it held besides (on
/// the listing's threads), in the directories' order, what each held going to `seen`:
/// `discover` before its lists are merged and sorted, or a survey packed and keyed where
/// each list was made.
pub fn by_project<R: Send>(
    projects: &Path,
    seen: &mut Projects,
    each: impl Fn(Vec<Candidate>, Option<&SeenEntry>) -> R + Sync,
) -> Vec<R> {
    let dirs = project_dirs(projects);
    let handles = AtomicUsize::new(seen.len());
    let listed = crate::store::fanout::in_order(&dirs, |dir| {
        let handle = handles.fetch_add(1, Ordering::Relaxed) < super::seen::MAX_HANDLES;
        let (found, project) = list_project(dir, handle);
        (each(found, project.as_ref()), project)
    });
    (listed.into_iter())
        .map(|(found, project)| {
            seen.extend(project);
            found
        })
        .collect()
}

/// Discovery's order: newest mtime first, then by id and path (a total order).
pub(super) fn newest_first(a: &Candidate, b: &Candidate) -> std::cmp::Ordering {
    (b.mtime.cmp(&a.mtime))
        .then_with(|| b.id.cmp(&a.id))
        .then_with(|| a.path.cmp(&b.path))
}

/// A project directory's entry in `seen`: its path's bytes and what it held.
pub(super) type SeenEntry = (Box<[u8]>, Arc<Project>);

/// The session candidates in one project directory, and what it held besides (its entry in
/// `seen`, none when it cannot be read), with a handle on it when `handle` (see
/// `seen::MAX_HANDLES`).
pub(super) fn list_project(dir: &Path, handle: bool) -> (Vec<Candidate>, Option<SeenEntry>) {
    let (mut found, seen) = list_unstated(dir, handle);
    let stats = stats_in(dir, &found);
    stamp(&mut found, stats);
    (found, seen)
}

/// `list_project` without the `statx` of each transcript (its `stat` and `mtime` are `None`
/// until `stamp`): the first screen spreads those over two threads (`newest`).
///
/// Listed by `dirents`, without a name copied into a `CString` and an `OsString` per entry
/// (a cold start's first screen waited for this listing of every project: 17k entries at
/// 10k sessions, issue 10).
pub(super) fn list_unstated(dir: &Path, handle: bool) -> (Vec<Candidate>, Option<SeenEntry>) {
    use crate::store::dirents::Kind;
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    let mut out = Vec::new();
    let mut project = Project::open(dir, handle);
    let listed = crate::store::dirents::each(dir, |name, kind| {
        // The listing's type, never following a symlink (`lstat` where it has none).
        let file = kind == Kind::File;
        let os = OsStr::from_bytes(name);
        project.saw(os, !file);
        let Some(stem) = name.strip_suffix(b".jsonl") else {
            return;
        };
        if stem.is_empty() || stem.starts_with(b".") || stem.starts_with(b"agent-") {
            return;
        }
        // A symlinked transcript is not one Claude wrote, and is not read.
        if !file {
            return;
        }
        out.push(Candidate {
            id: String::from_utf8_lossy(stem).into_owned(),
            path: crate::store::fanout::path_of(dir, os),
            mtime: None,
            stat: None,
        });
    });
    if listed.is_err() {
        return (Vec::new(), None);
    }
    let key = dir.as_os_str().as_bytes().into();
    (out, Some((key, Arc::new(project.done()))))
}

/// The `lstat` of each of `found` (listed from `dir`), `statx`ed from a handle on the
/// directory as std's `DirEntry::metadata` does (for `stamp`).
pub(super) fn stats_in(dir: &Path, found: &[Candidate]) -> Vec<Option<Stat>> {
    use std::os::unix::ffi::OsStrExt;
    // The stat pass's own `lstat`-from-a-handle (one handle, opened at the first stat).
    let mut at = crate::catalog::at::Dirs::default();
    let dir_bytes = dir.as_os_str().as_bytes();
    (found.iter())
        .map(|c| {
            let name = c.path.file_name().map_or(&[][..], OsStrExt::as_bytes);
            // `None` from the handle (it could not be opened, or the call failed): the
            // path's own `lstat`, as the stat pass does.
            at.lstat(dir_bytes, name)
                .or_else(|| (std::fs::symlink_metadata(&c.path).ok()).map(|m| Stat::of(&m)))
        })
        .collect()
}

/// Give each of `found` its `lstat` from `stats` (in order) and the mtime it holds.
pub(super) fn stamp(found: &mut [Candidate], stats: Vec<Option<Stat>>) {
    for (c, stat) in found.iter_mut().zip(stats) {
        c.mtime = stat.as_ref().and_then(Stat::mtime);
        c.stat = stat;
    }
}

/// The transcript of session `id` as `discover` would find it, by one `lstat` per project
/// directory instead of a listing of every session (opening a session listed all 10k of them
/// and took an `lstat` of each: 3.6 MB at the warm start's peak, for the first pane).
/// Where two project directories hold the id, the newest file wins, as in `discover`.
pub fn find(projects: &Path, id: &str) -> Option<PathBuf> {
    if id.starts_with('.') || id.starts_with("agent-") {
        return None;
    }
    let name = format!("{id}.jsonl");
    let mut best: Option<(Option<std::time::SystemTime>, PathBuf)> = None;
    for dir in project_dirs(projects) {
        let path = dir.join(&name);
        // Not followed: discovery reads no symlinked transcript.
        let Ok(m) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        let mtime = m.modified().ok();
        if m.is_file() && best.as_ref().is_none_or(|(t, _)| mtime > *t) {
            best = Some((mtime, path));
        }
    }
    best.map(|(_, p)| p)
}

/// Subagent transcripts of session `id` in `project_dir`: `<id>/subagents/**/agent-*.jsonl`
/// (depth ≤ 4) plus the legacy ones of `legacy` (see `legacy_agents`) that name `id`.
pub fn subagents(project_dir: &Path, id: &str, legacy: &[(String, PathBuf)]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    walk(
        &project_dir.join(id).join("subagents"),
        0,
        &mut out,
        &mut Vec::new(),
    );
    out.extend(
        legacy
            .iter()
            .filter(|(p, _)| p == id)
            .map(|(_, path)| path.clone()),
    );
    out.sort();
    out
}

/// Legacy subagents `agent-*.jsonl` directly in a project directory, each with the parent
/// `sessionId` found on its first line. Listed once per project directory and store (the
/// caller caches it), not once per session.
pub fn legacy_agents(project_dir: &Path) -> Vec<(String, PathBuf)> {
    let Ok(rd) = std::fs::read_dir(project_dir) else {
        return Vec::new();
    };
    rd.flatten()
        .filter(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            name.starts_with("agent-")
                && name.ends_with(".jsonl")
                && e.file_type().is_ok_and(|t| t.is_file())
        })
        .filter_map(|e| Some((legacy_parent(&e.path())?, e.path())))
        .collect()
}

/// Tests: the sessions whose subagent directories were walked for (`subagent_dirs`), to
/// show a survey keyed from its project's listing walks for none.
#[cfg(test)]
pub(super) static WALKED: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());

/// What the current subagent files of session `id` rest on: every directory the walk of
/// `<id>/subagents` lists, whose mtime changes with each file added, removed or renamed in
/// it, and a directory it cannot list for another reason than its absence (a chmod of it
/// changes its stamp). Empty for the usual session without subagents: one failed `open`,
/// no `lstat`. The files' own stamps do not matter: the row shows only how many there are.
pub fn subagent_dirs(project_dir: &Path, id: &str) -> Vec<PathBuf> {
    #[cfg(test)]
    WALKED
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(project_dir.join(id));
    let mut dirs = Vec::new();
    walk(
        &project_dir.join(id).join("subagents"),
        0,
        &mut Vec::new(),
        &mut dirs,
    );
    dirs
}

/// `agent-*.jsonl` files into `out`, and every directory listed (or unlistable but present)
/// into `dirs`, down to depth 4.
fn walk(dir: &Path, depth: usize, out: &mut Vec<PathBuf>, dirs: &mut Vec<PathBuf>) {
    if depth > 4 {
        return;
    }
    let rd = match std::fs::read_dir(dir) {
        Ok(rd) => rd,
        Err(e) => {
            if e.kind() != std::io::ErrorKind::NotFound {
                dirs.push(dir.to_path_buf());
            }
            return;
        }
    };
    dirs.push(dir.to_path_buf());
    for e in rd.flatten() {
        let Ok(ft) = e.file_type() else { continue };
        let name = e.file_name().to_string_lossy().into_owned();
        if ft.is_dir() {
            walk(&e.path(), depth + 1, out, dirs);
        } else if ft.is_file() && name.starts_with("agent-") && name.ends_with(".jsonl") {
            out.push(e.path());
        }
    }
}

/// The `sessionId` on the first line of a legacy `agent-*.jsonl` (its parent session).
fn legacy_parent(path: &Path) -> Option<String> {
    use std::io::{BufRead, Read};
    let f = super::read::open(path).ok()?;
    let mut line = Vec::new();
    std::io::BufReader::new(f.take(1 << 20))
        .read_until(b'\n', &mut line)
        .ok()?;
    let v = crate::store::json_first::parse(&line)?;
    v.get("sessionId")?.as_str().map(str::to_string)
}

/// The session in the same project directory whose transcript holds a record with `uuid`
/// (claude-code.md section 5, continuations of old builds). A byte search per sibling file,
/// so it runs only when a transcript is opened, never while listing.
pub fn holder_of(project_dir: &Path, uuid: &str, except: &str) -> Option<String> {
    use std::io::Read;
    let needle = format!("\"uuid\":\"{uuid}\"");
    let mut buf = Vec::new();
    for c in discover_in(project_dir) {
        if c.id == except {
            continue;
        }
        buf.clear();
        let Ok(f) = super::read::open(&c.path) else {
            continue;
        };
        if f.take(super::read::MAX_SMALL * 4)
            .read_to_end(&mut buf)
            .is_ok()
            && buf.windows(needle.len()).any(|w| w == needle.as_bytes())
        {
            return Some(c.id);
        }
    }
    None
}

/// Session candidates of one project directory.
fn discover_in(dir: &Path) -> Vec<Candidate> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    rd.flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let stem = name.strip_suffix(".jsonl")?;
            let ok = !stem.is_empty() && !stem.starts_with('.') && !stem.starts_with("agent-");
            (ok && e.file_type().ok()?.is_file()).then(|| Candidate {
                id: stem.to_string(),
                path: e.path(),
                mtime: None,
                stat: None,
            })
        })
        .collect()
}

/// Claude Code's project directory name for a launch directory: every character outside
/// `[A-Za-z0-9]` becomes `-`. Claude does this on UTF-16 code units (JavaScript), so a
/// character outside the BMP becomes two dashes.
pub fn project_name(cwd: &str) -> String {
    cwd.chars()
        .flat_map(|c| {
            let n = if c.is_ascii_alphanumeric() {
                0
            } else {
                c.len_utf16()
            };
            let keep = (n == 0).then_some(c);
            keep.into_iter().chain(std::iter::repeat_n('-', n))
        })
        .collect()
}

/// Whether `cwd` "owns" the project directory `dir_name` (section 8): equal names, or for
/// names over 200 characters, equal first 200 characters (the hash suffix changed across
/// versions).
pub fn owns(cwd: &str, dir_name: &str) -> bool {
    let name = project_name(cwd);
    if name.len() > 200 {
        return dir_name.len() > 200 && name[..200] == dir_name[..200];
    }
    name == dir_name
}

/// `cleanupPeriodDays` from `<root>/settings.json` (user settings only), default 30; a value
/// below 1 or not a number means no countdown (`None`).
pub fn cleanup_days(root: &Path) -> Option<f64> {
    let bytes = match super::read::read_small(&root.join("settings.json")) {
        Ok(b) => b,
        Err(_) => return Some(30.0),
    };
    let Some(v) = crate::store::json_first::parse(&bytes) else {
        return Some(30.0);
    };
    match v.get("cleanupPeriodDays") {
        None => Some(30.0),
        Some(n) => n.as_f64().filter(|d| *d >= 1.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, SystemTime};

    /// Discovery on two threads finds what one listing in order finds: every project's
    /// sessions, in the same total order (mtime, then id, then path, with ties across
    /// projects), and every project in `seen`.
    #[test]
    fn two_threads_discover_what_one_listing_finds() {
        let d = tempfile::tempdir().unwrap();
        let projects = d.path().join("projects");
        let t0 = SystemTime::UNIX_EPOCH + Duration::from_secs(1_770_000_000);
        let mut want = Vec::new();
        for p in 0..24 {
            let dir = projects.join(format!("-home-p{p}"));
            std::fs::create_dir_all(dir.join("s0/subagents")).unwrap();
            std::fs::write(dir.join("agent-a1.jsonl"), "{}\n").unwrap();
            for s in 0..30 {
                // Ids repeat across projects and mtimes repeat too: the order is total only
                // with the path.
                let path = dir.join(format!("s{s}.jsonl"));
                let mtime = t0 + Duration::from_secs(((p * 7 + s * 13) % 50) as u64);
                let f = std::fs::File::create(&path).unwrap();
                f.set_modified(mtime).unwrap();
                want.push((mtime, format!("s{s}"), path));
            }
        }
        want.sort_by(|a, b| {
            (b.0.cmp(&a.0))
                .then_with(|| b.1.cmp(&a.1))
                .then_with(|| a.2.cmp(&b.2))
        });
        let mut seen = Projects::default();
        let got: Vec<_> = discover(&projects, &mut seen)
            .into_iter()
            .map(|c| (c.mtime.unwrap(), c.id, c.path))
            .collect();
        assert_eq!(got, want);
        assert_eq!(seen.len(), 24);
        assert!(seen.values().all(|p| p.legacy && p.may_hold("s0")));
    }

    /// Each candidate carries the `lstat` and mtime std's `symlink_metadata` gives its path
    /// (the catalog keys rows on that stat, the order on that mtime), also for an mtime
    /// before 1970 and one with nanoseconds; a symlinked transcript, a directory named like
    /// one and `agent-*.jsonl` are not candidates, and still count in `seen`.
    #[test]
    fn a_candidates_stat_is_its_paths_lstat() {
        let d = tempfile::tempdir().unwrap();
        let projects = d.path().join("projects");
        let dir = projects.join("-home-p");
        std::fs::create_dir_all(dir.join("d.jsonl")).unwrap();
        let times = [
            SystemTime::UNIX_EPOCH + Duration::new(1_770_000_000, 123_456_789),
            SystemTime::UNIX_EPOCH - Duration::new(86_400, 0) + Duration::from_nanos(5),
            SystemTime::UNIX_EPOCH + Duration::new(1_600_000_000, 0),
        ];
        for (i, t) in times.iter().enumerate() {
            let f = std::fs::File::create(dir.join(format!("s{i}.jsonl"))).unwrap();
            f.set_modified(*t).unwrap();
        }
        std::os::unix::fs::symlink(dir.join("s0.jsonl"), dir.join("l.jsonl")).unwrap();
        std::fs::write(dir.join("agent-a1.jsonl"), "{}\n").unwrap();
        let mut seen = Projects::default();
        let got = discover(&projects, &mut seen);
        let ids: Vec<_> = got.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids, ["s0", "s2", "s1"]);
        for c in &got {
            let m = std::fs::symlink_metadata(&c.path).unwrap();
            assert_eq!(
                c.stat,
                Some(crate::catalog::stamp::Stat::of(&m)),
                "{}",
                c.id
            );
            assert_eq!(c.mtime, Some(m.modified().unwrap()), "{}", c.id);
        }
        assert_eq!(got[2].mtime, Some(times[1]));
        let p = seen.values().next().unwrap();
        assert!(p.legacy && p.may_hold("d.jsonl") && p.may_hold("l.jsonl"));
    }
}
