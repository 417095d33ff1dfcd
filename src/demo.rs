//! The bundled demo store (`assets/demo/`, embedded in the binary) and `--demo`, which copies
//! it into a private temporary directory so nothing the user does touches the originals.
//! The demo's projects (`/home/demo/projects/<name>`) are relocated into the copy and
//! created there, so resume, fork and the project filter work on them like on real ones.

use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, RwLock};

use include_dir::{Dir, DirEntry, include_dir};

use crate::error::{Error, Result};
use crate::store::Roots;

static DEMO: Dir<'_> = include_dir!("$CARGO_MANIFEST_DIR/assets/demo");

/// Where the demo sessions say their projects are.
const DEMO_PROJECTS: &str = "/home/demo/projects/";
/// Where the demo's pi sessions say pi keeps them (a fork's `parentSession` names its
/// parent's file): relocated to the copy's `pi/`, so the fork finds its parent there.
const DEMO_PI_SESSIONS: &str = "/home/demo/.pi/agent/sessions/";

/// The live demo copy, for the exit-signal handler: it ends the process without running
/// destructors, so it removes the copy itself (`remove_live`).
static LIVE: Mutex<Option<PathBuf>> = Mutex::new(None);

/// Demo copies being removed: no directory may be created under them any more. Held for
/// reading around every cache directory creation (`create_cache_dir`), so closing waits for
/// one in flight, and none starts after.
static CLOSED: RwLock<Vec<PathBuf>> = RwLock::new(Vec::new());

/// Create spool's cache directory `dir` (0700, with its parents), unless it lies under a
/// demo copy being removed. The index, catalog and hints writers run on threads of their own
/// that may outlive the exit signal; a recursive create from one of them after the removal
/// made the whole copy again (the flake of `tui_signals_tmux`). Stopping them mid-write is
/// not possible from a signal thread, so they are refused the directory instead: a file
/// they write into a removed directory fails, and only a directory create brought it back.
pub fn create_cache_dir(dir: &Path) -> std::io::Result<()> {
    if ONLY_LAST.load(Ordering::Relaxed) {
        return create_last(dir);
    }
    let closed = CLOSED.read().unwrap_or_else(|e| e.into_inner());
    if closed.iter().any(|root| dir.starts_with(root)) {
        return Err(std::io::Error::other(format!(
            "{} is being removed (spool is exiting)",
            dir.display()
        )));
    }
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
}

/// Set in the index child (`spool __index`): it creates only the last component of a
/// directory. Its directories lie in the browser's cache, which the browser made before
/// starting it; `CLOSED` is the browser's and a separate process cannot see it, so a child
/// still opening its index while the browser removed its `--demo` copy on a signal made the
/// whole copy again by a recursive create (a `tui_signals_tmux` flake). Without the parent,
/// the create fails instead.
static ONLY_LAST: AtomicBool = AtomicBool::new(false);

/// From now on, `create_cache_dir` makes only the last component (see `ONLY_LAST`).
pub fn create_only_last_components() {
    ONLY_LAST.store(true, Ordering::Relaxed);
}

/// Create `dir` itself (0700), not its parents; one that exists already is fine.
fn create_last(dir: &Path) -> std::io::Result<()> {
    match std::fs::DirBuilder::new().mode(0o700).create(dir) {
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && dir.is_dir() => Ok(()),
        r => r,
    }
}

/// Refuse every directory under `root` from now on (waits for a create in flight).
fn close(root: &Path) {
    let mut closed = CLOSED.write().unwrap_or_else(|e| e.into_inner());
    closed.push(root.to_path_buf());
}

/// A private copy of the demo store; removed when dropped.
pub struct DemoStore {
    dir: tempfile::TempDir,
}

impl Drop for DemoStore {
    fn drop(&mut self) {
        if let Ok(mut live) = LIVE.lock() {
            live.take();
        }
        // The TempDir field would try once, right after this.
        remove_copy(self.dir.path());
    }
}

/// Remove the live demo copy now, if there is one (the process is about to exit on a
/// signal). Safe to call from any thread, more than once.
pub fn remove_live() {
    let dir = LIVE.lock().ok().and_then(|mut live| live.take());
    if let Some(dir) = dir {
        remove_copy(&dir);
    }
}

/// Remove a demo copy. The browser's index thread may still be writing into the copy's
/// cache: a file it creates mid-removal fails that pass (directory not empty), so try a
/// few more times: up to 2 s, since on a loaded machine the index writer's threads (and the
/// catalog) can keep creating files for longer than a few passes (a SIGVTALRM test left the
/// copy behind after 200 ms of tries).
/// A writer that was mid-way may also create its directory again just after a removal
/// succeeded (a SIGPROF test found the copy back), so the copy must stay gone for a moment.
fn remove_copy(dir: &Path) {
    close(dir);
    for _ in 0..100 {
        if std::fs::remove_dir_all(dir).is_ok() || !dir.exists() {
            std::thread::sleep(std::time::Duration::from_millis(30));
            if !dir.exists() {
                return;
            }
            continue;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

impl DemoStore {
    /// Copy the demo into a fresh 0700 temporary directory.
    pub fn create() -> Result<DemoStore> {
        let dir = tempfile::Builder::new()
            .prefix("spool-demo-")
            .tempdir()
            .map_err(|e| Error::io("creating", std::env::temp_dir(), e))?;
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700))
            .map_err(|e| Error::io("securing", dir.path(), e))?;
        let projects = format!("{}/projects/", dir.path().display());
        let pi = format!("{}/pi/", dir.path().display());
        let mut names = std::collections::BTreeSet::new();
        copy_dir(&DEMO, dir.path(), &[&projects, &pi], &mut names)?;
        for name in names {
            let p = dir.path().join("projects").join(name);
            std::fs::create_dir_all(&p).map_err(|e| Error::io("creating", &p, e))?;
        }
        // The read-only agents' files were "last written" an hour ago: settled (a damaged
        // file's torn tail reads as truncated, not still being written) and not live.
        let hour_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
        for store in ["claude", "pi", "codex"] {
            settle(&dir.path().join(store), hour_ago);
        }
        if let Ok(mut live) = LIVE.lock() {
            *live = Some(dir.path().to_path_buf());
        }
        Ok(DemoStore { dir })
    }

    /// spool's cache for the demo (start-up hints), inside the copy: the user's own cache
    /// must not fill with hints pointing at copies that are gone.
    pub fn cache_dir(&self) -> PathBuf {
        self.dir.path().join("cache")
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// All three store roots inside the copy.
    pub fn roots(&self) -> Roots {
        Roots::all_in(self.dir.path())
    }
}

/// Set the mtime of every file under `dir` (best effort: only a badge depends on it).
fn settle(dir: &Path, when: std::time::SystemTime) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        match e.file_type() {
            Ok(t) if t.is_dir() => settle(&e.path(), when),
            Ok(t) if t.is_file() => {
                if let Ok(f) = std::fs::File::options().write(true).open(e.path()) {
                    let _ = f.set_modified(when);
                }
            }
            _ => {}
        }
    }
}

/// Copy the embedded tree, pointing project paths at `to[0]` (collecting the project
/// names) and pi's session paths at `to[1]`. Loop's hashed message bytes and its round index
/// are copied untouched.
fn copy_dir(
    dir: &Dir<'_>,
    dest_root: &Path,
    to: &[&str; 2],
    names: &mut std::collections::BTreeSet<String>,
) -> Result<()> {
    for entry in dir.entries() {
        let target = dest_root.join(entry.path());
        match entry {
            DirEntry::Dir(d) => {
                std::fs::DirBuilder::new()
                    .recursive(true)
                    .mode(0o700)
                    .create(&target)
                    .map_err(|e| Error::io("creating", &target, e))?;
                copy_dir(d, dest_root, to, names)?;
            }
            DirEntry::File(f) => {
                if f.path().file_name().is_some_and(|n| n == ".gitkeep") {
                    continue;
                }
                let hashed = f
                    .path()
                    .file_name()
                    .is_some_and(|n| n == "messages.jsonl" || n == "index.json");
                let relocated = match std::str::from_utf8(f.contents()) {
                    Ok(text) if !hashed && text.contains(DEMO_PROJECTS) => {
                        for part in text.split(DEMO_PROJECTS).skip(1) {
                            let name: String = part
                                .chars()
                                .take_while(|c| c.is_ascii_alphanumeric() || "-_.".contains(*c))
                                .collect();
                            if !name.is_empty() && name != "." && name != ".." {
                                names.insert(name);
                            }
                        }
                        Some(
                            text.replace(DEMO_PROJECTS, to[0])
                                .replace(DEMO_PI_SESSIONS, to[1]),
                        )
                    }
                    _ => None,
                };
                let bytes = relocated.as_ref().map_or(f.contents(), |t| t.as_bytes());
                std::fs::write(&target, bytes).map_err(|e| Error::io("writing", &target, e))?;
                std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o600))
                    .map_err(|e| Error::io("securing", &target, e))?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A writer thread that outlives the removal must not make the copy again.
    #[test]
    fn no_cache_directory_is_made_under_a_copy_being_removed() {
        let root = tempfile::tempdir().unwrap().keep();
        let cache = root.join("cache/spool/index");
        create_cache_dir(&cache).unwrap();
        remove_copy(&root);
        assert!(!root.exists());
        assert!(create_cache_dir(&cache).is_err());
        assert!(!root.exists(), "the copy was made again");
        // Elsewhere, directories are still made.
        let other = tempfile::tempdir().unwrap();
        create_cache_dir(&other.path().join("a/b")).unwrap();
    }

    /// The index child's way: the last component only, and an existing one is fine.
    #[test]
    fn the_last_component_alone_is_made() {
        let root = tempfile::tempdir().unwrap();
        assert!(create_last(&root.path().join("a/b")).is_err());
        assert!(!root.path().join("a").exists());
        create_last(&root.path().join("a")).unwrap();
        create_last(&root.path().join("a")).unwrap();
        let mode = std::fs::metadata(root.path().join("a"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o700);
    }
}
