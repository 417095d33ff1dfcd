//! What discovery saw in each project directory, kept for the stat pass that follows it: the
//! names that are (or may be) directories, whether any legacy `agent-*.jsonl` lies there, and
//! an `O_PATH` handle on the directory. A session's `<id>/subagents` is probed only where
//! discovery saw `<id>`, and from that handle (issue 10: a warm check at 10k sessions tried
//! 8,550 absent subagent directories, each looked up from `/`, most of its kernel time).
//!
//! A hint, never the truth about a row: a directory made after discovery listed the project
//! leaves it out of a key taken in the same pass, and the next discovery, which sees it, gives
//! the session another key, so the row is read again then. Rows themselves are read as before.

use std::ffi::OsStr;
use std::hash::BuildHasher;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::{Arc, RwLock};

use rustc_hash::{FxBuildHasher, FxHashMap};

/// One project directory as discovery listed it.
#[derive(Debug, Default)]
pub struct Project {
    /// FxHash of each name that is a directory, a symlink (it may lead to one) or of a type
    /// the listing did not say; sorted. A collision only costs a probe.
    dirs: Vec<u64>,
    /// Some name looked like a legacy subagent (`agent-*.jsonl`).
    pub legacy: bool,
    /// The directory itself, to look `<id>/subagents` up from (`None`: it could not be opened).
    fd: Option<OwnedFd>,
}

/// Handles kept at most, one per project directory, for the life of the store: a user with
/// thousands of projects must not run out of descriptors. Past them, `<id>/subagents` is
/// looked up by its path, as before.
pub const MAX_HANDLES: usize = 64;

fn hash(name: &[u8]) -> u64 {
    FxBuildHasher.hash_one(name)
}

impl Project {
    /// An empty listing of `dir`, with a handle on it when `handle` (see `MAX_HANDLES`).
    pub fn open(dir: &Path, handle: bool) -> Project {
        Project {
            dirs: Vec::new(),
            legacy: false,
            fd: handle.then(|| open_path(dir)).flatten(),
        }
    }

    /// Note one entry of the listing; `dir` unless the listing says it is a regular file.
    pub fn saw(&mut self, name: &OsStr, dir: bool) {
        let b = name.as_bytes();
        if dir {
            self.dirs.push(hash(b));
        } else if b.starts_with(b"agent-") && b.ends_with(b".jsonl") {
            self.legacy = true;
        }
    }

    /// Sort what `saw` collected, for `may_hold`.
    pub fn done(mut self) -> Project {
        self.dirs.sort_unstable();
        self.dirs.dedup();
        self.dirs.shrink_to_fit();
        self
    }

    /// Whether the listing may have held a directory named `name`.
    pub fn may_hold(&self, name: &str) -> bool {
        self.dirs.binary_search(&hash(name.as_bytes())).is_ok()
    }

    /// Whether `<name>/subagents` is absent for sure: looking it up from the project's
    /// handle says it does not exist. Anything else (it exists, another error, no handle) is
    /// left to the ordinary walk, which then decides exactly as before.
    ///
    /// A `statx` asking for the type only, not an open: most session directories hold
    /// `tool-results/` and no `subagents/`, so this lookup fails for most of them (5,506 of
    /// 6,955 at 10k Claude sessions), and a failed open still allocates and frees a file
    /// before its lookup (about 1.75 µs a probe against 0.95 µs for a `statx`, CPU time). It
    /// follows a final symlink as the open did, so the same names are absent.
    pub fn surely_absent(&self, name: &str) -> bool {
        let Some(fd) = &self.fd else { return false };
        let mut rel = Vec::with_capacity(name.len() + 11);
        rel.extend_from_slice(name.as_bytes());
        rel.extend_from_slice(b"/subagents\0");
        if rel[..rel.len() - 1].contains(&0) {
            return false;
        }
        let mut out = std::mem::MaybeUninit::<libc::statx>::uninit();
        // SAFETY: `rel` is NUL-terminated with no other NUL, `fd` is open for the call, and
        // `out` is a buffer of the size the call writes; it is never read here.
        let got = unsafe {
            libc::statx(
                fd.as_raw_fd(),
                rel.as_ptr().cast(),
                libc::AT_STATX_SYNC_AS_STAT,
                libc::STATX_TYPE,
                out.as_mut_ptr(),
            )
        };
        got != 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::ENOENT)
    }
}

/// An `O_PATH` handle on `dir` (a symlink to it followed, as `read_dir` of a path through it
/// would): enough to look names up below it, no read permission needed.
fn open_path(dir: &Path) -> Option<OwnedFd> {
    let c = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
    // SAFETY: `c` is a valid NUL-terminated string; the returned fd is owned by us alone.
    let fd = unsafe {
        libc::open(
            c.as_ptr(),
            libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC,
        )
    };
    // SAFETY: a non-negative return is a freshly opened descriptor nobody else owns.
    (fd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(fd) })
}

/// The project directories of the last discovery, by path bytes; each discovery replaces
/// the whole table, so a project gone since is forgotten. A read lock: every thread of a
/// stat pass looks its sessions up here (a mutex made them wait on each other in `futex`).
#[derive(Default)]
pub struct Seen(RwLock<Projects>);

/// Project directories by path bytes.
pub type Projects = FxHashMap<Box<[u8]>, Arc<Project>>;

impl Seen {
    pub fn replace(&self, projects: Projects) {
        *self.0.write().unwrap_or_else(|e| e.into_inner()) = projects;
    }

    /// What the last discovery saw in `project` (`None`: it did not list it, so nothing may
    /// be skipped).
    pub fn get(&self, project: &Path) -> Option<Arc<Project>> {
        let all = self.0.read().unwrap_or_else(|e| e.into_inner());
        all.get(project.as_os_str().as_bytes()).cloned()
    }
}
