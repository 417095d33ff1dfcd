//! What discovery saw in each project directory, kept for the stat pass that follows it: the
//! names that are (or may be) directories, whether any legacy `agent-*.jsonl` lies there, and
//! an `O_PATH` handle on the directory. A session's `<id>/subagents` is probed only where
//! discovery saw `<id>`, and from that handle (issue 10: a warm check at 10k sessions tried
//! 8,550 absent subagent directories, each looked up from `/`, most of its kernel time). A
//! `subagents/` whose link count says it holds no directory is not listed (`Probe::Leaf`).
//!
//! A hint, never the truth about a row: a directory made after discovery listed the project
//! leaves it out of a key taken in the same pass, and the next discovery, which sees it, gives
//! the session another key, so the row is read again then. Rows themselves are read as before,
//! but that a project listed with no legacy subagent is not listed again for them
//! (`ClaudeStore::legacy_maybe`: a row and its key agree).

use std::ffi::OsStr;
use std::hash::BuildHasher;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::{Arc, RwLock};

use rustc_hash::{FxBuildHasher, FxHashMap, FxHashSet};

/// One project directory as discovery listed it.
#[derive(Debug, Default)]
pub struct Project {
    /// FxHash of each name that is a directory, a symlink (it may lead to one) or of a type
    /// the listing did not say. A collision only costs a probe. A set, not a sorted list:
    /// a project holds thousands (each session's `<id>/` of tool results), and the binary
    /// search's dozen steps, most of them cache misses, were 5% of a warm `spool list`'s
    /// samples at 100k Claude Code sessions (issue 10).
    dirs: FxHashSet<u64>,
    /// Some name looked like a legacy subagent (`agent-*.jsonl`).
    pub legacy: bool,
    /// The directory itself, to look `<id>/subagents` up from (`None`: it could not be opened).
    fd: Option<OwnedFd>,
    /// The project's device where a directory's link count tells whether it has
    /// subdirectories (see `leaf_rule`).
    leaf_rule: Option<(u32, u32)>,
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
        let fd = handle.then(|| open_path(dir)).flatten();
        Project {
            dirs: FxHashSet::default(),
            legacy: false,
            leaf_rule: fd.as_ref().and_then(leaf_rule),
            fd,
        }
    }

    /// Note one entry of the listing; `dir` unless the listing says it is a regular file.
    pub fn saw(&mut self, name: &OsStr, dir: bool) {
        let b = name.as_bytes();
        if dir {
            self.dirs.insert(hash(b));
        } else if b.starts_with(b"agent-") && b.ends_with(b".jsonl") {
            self.legacy = true;
        }
    }

    /// What `saw` collected, held without spare room.
    pub fn done(mut self) -> Project {
        self.dirs.shrink_to_fit();
        self
    }

    /// Whether the listing may have held a directory named `name`.
    pub fn may_hold(&self, name: &str) -> bool {
        self.dirs.contains(&hash(name.as_bytes()))
    }

    /// What a lookup of `<name>/subagents` from the project's handle says about the walk of
    /// it (`discover::subagent_dirs`), without listing it where the answer is certain, and
    /// the `lstat` of it when it exists (the stat pass's key of that input): one `statx`
    /// that does not follow a final symlink, which for anything but a symlink also tells
    /// what following it would (the walk's `read_dir` follows one). Issue 10: the key took a
    /// second `statx` of each `subagents/` the probe had just found (15k of a warm check's
    /// 184k at 100k Claude sessions).
    pub fn subagents(&self, name: &str) -> (Probe, Option<crate::catalog::stamp::Stat>) {
        let st = match self.look(name, false) {
            None => return (Probe::Walk, None),
            Some(Err(e)) if e == libc::ENOENT => return (Probe::Absent, None),
            Some(Err(_)) => return (Probe::Walk, None),
            Some(Ok(st)) => st,
        };
        let stat = crate::catalog::at::of_statx(&st);
        let probe = match u32::from(st.stx_mode) & libc::S_IFMT {
            // A symlink: what it leads to decides, as before.
            libc::S_IFLNK => self.follow(name),
            _ if is_dir(&st) && self.leaf(&st) => Probe::Leaf,
            _ => Probe::Walk,
        };
        (probe, stat)
    }

    /// The probe of `subagents` through a final symlink.
    fn follow(&self, name: &str) -> Probe {
        match self.look(name, true) {
            None => Probe::Walk,
            Some(Err(e)) if e == libc::ENOENT => Probe::Absent,
            Some(Err(_)) => Probe::Walk,
            Some(Ok(st)) if is_dir(&st) && self.leaf(&st) => Probe::Leaf,
            Some(Ok(_)) => Probe::Walk,
        }
    }

    /// What the watcher registers for `<name>/subagents` (`watched`): the lookup does not
    /// follow a final symlink, as the watcher never does. `Absent` for anything but a
    /// directory (or a failed lookup), as `symlink_metadata` of the path said before;
    /// `None` without a handle, so the caller looks it up by its path.
    pub fn watched_subagents(&self, name: &str) -> Option<Probe> {
        Some(match self.look(name, false)? {
            Ok(st) if is_dir(&st) && self.leaf(&st) => Probe::Leaf,
            Ok(st) if is_dir(&st) => Probe::Walk,
            _ => Probe::Absent,
        })
    }

    /// Whether the link count of the directory `st` describes says it holds no
    /// subdirectory (see `leaf_rule`).
    fn leaf(&self, st: &libc::statx) -> bool {
        let counted = st.stx_mask & libc::STATX_NLINK != 0;
        counted && st.stx_nlink == 2 && self.leaf_rule == Some(dev(st))
    }

    /// A `statx` of `<name>/subagents` from the project's handle (type and link count), or
    /// its errno; `None` without a handle or for a name that cannot be one.
    ///
    /// A `statx`, not an open: most session directories hold `tool-results/` and no
    /// `subagents/` (5,506 of 6,955 at 10k Claude sessions), and a failed open still
    /// allocates and frees a file around its lookup (1.75 µs of CPU a probe against 0.95 µs
    /// for a `statx`).
    fn look(&self, name: &str, follow: bool) -> Option<Result<libc::statx, i32>> {
        let fd = self.fd.as_ref()?;
        let mut rel = Vec::with_capacity(name.len() + 11);
        rel.extend_from_slice(name.as_bytes());
        rel.extend_from_slice(b"/subagents\0");
        if rel[..rel.len() - 1].contains(&0) {
            return None;
        }
        let flags = if follow { 0 } else { libc::AT_SYMLINK_NOFOLLOW };
        let mut out = std::mem::MaybeUninit::<libc::statx>::zeroed();
        // SAFETY: `rel` is NUL-terminated with no other NUL, `fd` is open for the call, and
        // `out` is a zeroed buffer of the size the call writes.
        let got = unsafe {
            libc::statx(
                fd.as_raw_fd(),
                rel.as_ptr().cast(),
                libc::AT_STATX_SYNC_AS_STAT | flags,
                // What `subagents` keys with besides (the type and the link count
                // come at no extra cost with the rest).
                libc::STATX_BASIC_STATS,
                out.as_mut_ptr(),
            )
        };
        if got != 0 {
            return Some(Err(std::io::Error::last_os_error()
                .raw_os_error()
                .unwrap_or(0)));
        }
        // SAFETY: the call succeeded, so it filled the buffer (and it was zeroed before).
        Some(Ok(unsafe { out.assume_init() }))
    }
}

fn is_dir(st: &libc::statx) -> bool {
    u32::from(st.stx_mode) & libc::S_IFMT == libc::S_IFDIR
}

/// What `Project::subagents` found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Probe {
    /// `<id>/subagents` does not exist: the walk would list nothing and name nothing.
    Absent,
    /// A directory with no subdirectory, on a filesystem whose directory link count says
    /// so: the walk would name it alone, so it need not be listed.
    Leaf,
    /// Anything else: walk it as always.
    Walk,
}

/// The device of a `statx` result.
fn dev(st: &libc::statx) -> (u32, u32) {
    (st.stx_dev_major, st.stx_dev_minor)
}

/// The device of `fd` when its filesystem counts each subdirectory in its parent's link
/// count (2 + subdirectories: ext2/3/4, XFS, tmpfs; ext4 gives 1 past 65,000, never 2 with
/// one). Others (btrfs gives 1 always, and a network or FUSE filesystem may say anything)
/// are `None`, and every `subagents/` there is walked. A `subagents/` on another device
/// (a mount, or a symlink leading off the project's filesystem) is walked too.
fn leaf_rule(fd: &OwnedFd) -> Option<(u32, u32)> {
    const EXT: i64 = 0xEF53;
    const XFS: i64 = 0x5846_5342;
    const TMPFS: i64 = 0x0102_1994;
    let mut fs = std::mem::MaybeUninit::<libc::statfs>::zeroed();
    // SAFETY: `fd` is open for the call and `fs` is a buffer of the size it writes.
    if unsafe { libc::fstatfs(fd.as_raw_fd(), fs.as_mut_ptr()) } != 0 {
        return None;
    }
    // SAFETY: the call succeeded, so it filled the buffer.
    // `f_type` is an i64 here, a u32 or i32 on other targets.
    #[allow(clippy::unnecessary_cast)]
    let kind = unsafe { fs.assume_init() }.f_type as i64;
    if ![EXT, XFS, TMPFS].contains(&kind) {
        return None;
    }
    let mut out = std::mem::MaybeUninit::<libc::statx>::zeroed();
    // SAFETY: an empty NUL-terminated name with AT_EMPTY_PATH stats `fd` itself; `out` is a
    // buffer of the size the call writes.
    let got = unsafe {
        libc::statx(
            fd.as_raw_fd(),
            c"".as_ptr(),
            libc::AT_EMPTY_PATH | libc::AT_STATX_SYNC_AS_STAT,
            libc::STATX_TYPE,
            out.as_mut_ptr(),
        )
    };
    // SAFETY: the call succeeded, so it filled the buffer.
    (got == 0).then(|| dev(&unsafe { out.assume_init() }))
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
