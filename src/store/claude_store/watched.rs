//! The directories the file watcher registers for Claude Code: `projects/` and each project
//! directory without their subdirectories, and each session's `subagents/` tree. A recursive
//! watch of `projects/` also took every session's `tool-results/` directory (14,884
//! directories and about 7 MB of watch bookkeeping at 10k sessions) though no row is read
//! from them (claude-code.md section 1, step 4).

use std::path::Path;

use super::discover;
use super::seen::{Probe, Project};
use crate::store::WatchDir;

/// `projects/`, every project directory, and the `subagents/` tree of every session
/// directory in them (the rows' subagent counts).
pub fn watch_dirs(projects: &Path) -> Vec<WatchDir> {
    let mut out = vec![WatchDir::flat(projects)];
    for dir in discover::project_dirs(projects) {
        out.extend(project(&dir));
    }
    out
}

/// One project directory and the subagent trees of its session directories. Each
/// `<id>/subagents` is looked up from a handle on the project (6,954 lookups from `/` at
/// 10k sessions before), and one whose link count says it holds no subdirectory is
/// registered without being listed (`WatchDir::leaf_tree`).
fn project(dir: &Path) -> Vec<WatchDir> {
    let mut out = vec![WatchDir::flat(dir)];
    let Ok(rd) = std::fs::read_dir(dir) else {
        return out;
    };
    let handle = Project::open(dir, true);
    for e in rd.flatten() {
        // Not followed: discovery walks no symlinked session directory either.
        if !e.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        let name = e.file_name();
        let probe = name
            .to_str()
            .and_then(|n| handle.watched_subagents(n))
            .unwrap_or_else(|| by_path(&e.path()));
        let path = || e.path().join("subagents");
        match probe {
            Probe::Absent => {}
            Probe::Leaf => out.push(WatchDir::leaf_tree(&path())),
            Probe::Walk => out.push(WatchDir::tree(&path())),
        }
    }
    out
}

/// `<session_dir>/subagents` looked up by its path, its final symlink not followed.
fn by_path(session_dir: &Path) -> Probe {
    let dir = std::fs::symlink_metadata(session_dir.join("subagents")).is_ok_and(|m| m.is_dir());
    if dir { Probe::Walk } else { Probe::Absent }
}

fn subagents(session_dir: &Path) -> Option<WatchDir> {
    let path = session_dir.join("subagents");
    std::fs::symlink_metadata(&path)
        .is_ok_and(|m| m.is_dir())
        .then(|| WatchDir::tree(&path))
}

/// What an event naming `path` adds: a new project directory (with what it already holds),
/// or the `subagents/` tree of the session a path in a project directory names. A session's
/// first subagent makes `<id>/subagents/` where nothing watches it, but the parent's
/// transcript is written as the subagent starts, and that event adds the tree and re-reads
/// the row with its new count.
pub fn watch_more(projects: &Path, path: &Path) -> Vec<WatchDir> {
    let Some(parent) = path.parent() else {
        return Vec::new();
    };
    if parent == projects {
        let hidden = path
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with('.'));
        if hidden || !std::fs::metadata(path).is_ok_and(|m| m.is_dir()) {
            return Vec::new();
        }
        return project(path);
    }
    if parent.parent() != Some(projects) {
        return Vec::new();
    }
    let Some(name) = path.file_name().map(|n| n.to_string_lossy().into_owned()) else {
        return Vec::new();
    };
    let stem = name.strip_suffix(".jsonl").unwrap_or(&name);
    if stem.is_empty() || stem.starts_with('.') {
        return Vec::new();
    }
    subagents(&parent.join(stem)).into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn dir(p: PathBuf, recursive: bool) -> WatchDir {
        if recursive {
            WatchDir::tree(&p)
        } else {
            WatchDir::flat(&p)
        }
    }

    /// Two projects; one session with subagents and tool results, one with tool results only.
    fn fixture() -> (tempfile::TempDir, PathBuf) {
        let d = tempfile::tempdir().unwrap();
        let projects = d.path().join("projects");
        let (p1, p2) = (projects.join("-home-a"), projects.join("-home-b"));
        std::fs::create_dir_all(p1.join("s1/subagents/workflows/w1")).unwrap();
        std::fs::create_dir_all(p1.join("s1/tool-results")).unwrap();
        std::fs::create_dir_all(p2.join("s2/tool-results")).unwrap();
        std::fs::create_dir_all(projects.join(".hidden/s3/subagents")).unwrap();
        std::fs::write(p1.join("s1.jsonl"), "{}\n").unwrap();
        std::fs::write(p2.join("s2.jsonl"), "{}\n").unwrap();
        (d, projects)
    }

    /// The watch set: no `tool-results/` (most of a real store's directories), no hidden
    /// project, the subagent tree recursive and everything else flat.
    #[test]
    fn only_the_project_directories_and_subagent_trees_are_watched() {
        let (_d, projects) = fixture();
        let mut got = watch_dirs(&projects);
        got.sort();
        let mut want = vec![
            dir(projects.clone(), false),
            dir(projects.join("-home-a"), false),
            dir(projects.join("-home-a/s1/subagents"), true),
            dir(projects.join("-home-b"), false),
        ];
        want.sort();
        assert_eq!(got, want);
    }

    /// A project directory that appears later is watched with what it already holds, and a
    /// session's transcript event adds its new subagent tree.
    #[test]
    fn a_new_project_directory_and_a_new_subagent_tree_are_added() {
        let (_d, projects) = fixture();
        let p3 = projects.join("-home-c");
        std::fs::create_dir_all(p3.join("s4/subagents")).unwrap();
        let mut got = watch_more(&projects, &p3);
        got.sort();
        // The empty `subagents/` may be registered without a read (the filesystem's link
        // counts decide): a tree all the same.
        got.iter_mut().for_each(|w| w.leaf = false);
        assert_eq!(
            got,
            vec![dir(p3.clone(), false), dir(p3.join("s4/subagents"), true)]
        );
        let p2 = projects.join("-home-b");
        assert!(watch_more(&projects, &p2.join("s2.jsonl")).is_empty());
        std::fs::create_dir_all(p2.join("s2/subagents")).unwrap();
        assert_eq!(
            watch_more(&projects, &p2.join("s2.jsonl")),
            vec![dir(p2.join("s2/subagents"), true)]
        );
        // Nothing for paths deeper down, hidden or outside the store.
        assert!(watch_more(&projects, &p2.join("s2/tool-results/t.txt")).is_empty());
        assert!(watch_more(&projects, &projects.join(".hidden")).is_empty());
        assert!(watch_more(&projects, Path::new("/")).is_empty());
    }
}
