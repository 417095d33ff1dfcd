//! A store's file watch on Linux: inotify used directly, one descriptor per store, a watch
//! per directory, and a compact table from watch descriptor to (parent, name), so a path is
//! built only when an event names it.
//!
//! Why not the `notify` crate here (issue 10): at 100k sessions Loop's watch takes 32,010
//! directories, and notify kept two maps of full paths (wd → PathBuf and PathBuf → wd) and
//! made a round trip to its event thread for each registration: 20–25 MB of the browser's
//! peak resident memory and about 0.35 s of CPU during a warm start. Here a directory costs
//! 12 bytes of table and its name's bytes, and its registration one system call.

use std::ffi::{CString, OsStr};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};

use rustc_hash::FxHashMap;

use super::{Hits, Reg};

/// A watch descriptor: what an event names its directory by.
pub(super) type Handle = i32;

/// What a directory's watch reports: entries made, removed, renamed in or out, written or
/// with new metadata, and the directory itself removed or moved. Not opens, reads and
/// closes: reads (ours included) would re-read in a loop; notify's access events were
/// dropped for that. Only a directory is ever registered.
const MASK: u32 = libc::IN_ATTRIB
    | libc::IN_CREATE
    | libc::IN_DELETE
    | libc::IN_MODIFY
    | libc::IN_MOVED_FROM
    | libc::IN_MOVED_TO
    | libc::IN_DELETE_SELF
    | libc::IN_MOVE_SELF
    | libc::IN_ONLYDIR;

/// Bytes of an event before its name (`struct inotify_event`).
const HEADER: usize = 16;

/// No parent: the node's name is its whole path (a root, or a directory registered alone).
const NO_PARENT: Handle = -1;

/// Parents followed at most to build a path: nodes left stale by a move cannot loop it.
const MAX_DEPTH: usize = 4096;

/// One watched directory: its parent's watch descriptor (or `NO_PARENT`) and where its name
/// is in the table's `names`.
#[derive(Clone, Copy, Debug)]
struct Node {
    parent: Handle,
    start: u32,
    len: u32,
}

/// Watch descriptor → (parent, name): the path of a directory is rebuilt from its chain of
/// names, for an event only. A directory moved out of the store keeps its old path until
/// it is removed (as with notify); one moved within it is registered again on its parent's
/// event, which gives it its new place.
#[derive(Default)]
pub(super) struct Table {
    nodes: FxHashMap<Handle, Node>,
    /// Every node's name, one after another.
    names: Vec<u8>,
    /// Bytes of `names` no node points at any more.
    dead: usize,
}

impl Table {
    /// Record `wd` as `name` in the directory `parent` (or, without one, as the whole path
    /// `name`). True when `wd` is new: the kernel gives a directory registered again its
    /// old descriptor.
    pub(super) fn insert(&mut self, wd: Handle, parent: Option<Handle>, name: &OsStr) -> bool {
        let parent = parent.unwrap_or(NO_PARENT);
        let name = name.as_bytes();
        if let Some(n) = self.nodes.get(&wd)
            && n.parent == parent
            && self.name(n) == name
        {
            return false;
        }
        let node = Node {
            parent,
            start: self.names.len() as u32,
            len: name.len() as u32,
        };
        self.names.extend_from_slice(name);
        match self.nodes.insert(wd, node) {
            Some(old) => {
                self.dead += old.len as usize;
                false
            }
            None => true,
        }
    }

    fn name(&self, n: &Node) -> &[u8] {
        &self.names[n.start as usize..(n.start + n.len) as usize]
    }

    /// The path of the directory `wd` watches, if it is still in the table.
    pub(super) fn path(&self, wd: Handle) -> Option<PathBuf> {
        let mut parts: Vec<&[u8]> = Vec::new();
        let mut at = wd;
        loop {
            let n = self.nodes.get(&at)?;
            parts.push(self.name(n));
            if n.parent == NO_PARENT {
                break;
            }
            if parts.len() > MAX_DEPTH {
                return None;
            }
            at = n.parent;
        }
        let mut path = PathBuf::new();
        for part in parts.iter().rev() {
            path.push(OsStr::from_bytes(part));
        }
        Some(path)
    }

    /// Give back the room `names` grew by while the first walk registered every directory
    /// (doubling: up to twice the names, ~1 MB at 32k Loop sessions, issue 10).
    pub(super) fn settle(&mut self) {
        self.names.shrink_to_fit();
    }

    /// Drop `wd` (the kernel removed its watch); the names are packed again once most of
    /// them are dead, so a long session that sees many directories come and go stays small.
    fn remove(&mut self, wd: Handle) {
        if let Some(n) = self.nodes.remove(&wd) {
            self.dead += n.len as usize;
        }
        if self.dead > 4096 && self.dead * 2 > self.names.len() {
            let old = std::mem::take(&mut self.names);
            for n in self.nodes.values_mut() {
                let start = self.names.len() as u32;
                self.names
                    .extend_from_slice(&old[n.start as usize..(n.start + n.len) as usize]);
                n.start = start;
            }
            self.dead = 0;
        }
    }

    /// Directories in the table.
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.nodes.len()
    }

    /// The names' bytes and the room held for them.
    #[cfg(test)]
    pub(super) fn names_room(&self) -> (usize, usize) {
        (self.names.len(), self.names.capacity())
    }

    /// Read one buffer of events into `hits`: the path each names (its directory's, and the
    /// entry's name in it), `lost` when the kernel's queue overflowed, and each watch the
    /// kernel removed (its directory deleted or unmounted) dropped.
    pub(super) fn apply(&mut self, buf: &[u8], hits: &mut Hits) {
        let mut at = 0;
        while at + HEADER <= buf.len() {
            let word = |i: usize| {
                [
                    buf[at + i],
                    buf[at + i + 1],
                    buf[at + i + 2],
                    buf[at + i + 3],
                ]
            };
            let wd = i32::from_ne_bytes(word(0));
            let mask = u32::from_ne_bytes(word(4));
            let len = u32::from_ne_bytes(word(12)) as usize;
            let end = (at + HEADER + len).min(buf.len());
            // The name is padded with NULs to an aligned length.
            let name = &buf[at + HEADER..end];
            let name = &name[..name.iter().position(|&b| b == 0).unwrap_or(name.len())];
            at = end;
            if mask & libc::IN_Q_OVERFLOW != 0 {
                hits.lost = true;
                continue;
            }
            if mask & libc::IN_IGNORED != 0 {
                self.remove(wd);
                continue;
            }
            // Not in the table: a directory moved out with a parent since removed.
            let Some(mut path) = self.path(wd) else {
                continue;
            };
            if !name.is_empty() {
                path.push(OsStr::from_bytes(name));
            }
            hits.paths.push(path);
        }
    }
}

/// One store's inotify descriptor, its table, and the thread that reads its events.
pub(super) struct Backend {
    fd: Arc<OwnedFd>,
    /// An eventfd that wakes the reading thread to end it.
    wake: Arc<OwnedFd>,
    table: Arc<Mutex<Table>>,
    reader: Option<JoinHandle<()>>,
}

impl Backend {
    /// A descriptor and its reading thread, which adds what events name to `hits` and pokes
    /// the store's loader. None when the kernel or the thread refuses (the store is polled).
    pub(super) fn new(hits: Arc<Mutex<Hits>>, poke: Sender<()>) -> Option<Backend> {
        // SAFETY: plain system calls; each descriptor is owned once it is known valid.
        let fd = unsafe { libc::inotify_init1(libc::IN_NONBLOCK | libc::IN_CLOEXEC) };
        if fd < 0 {
            return None;
        }
        let fd = Arc::new(unsafe { OwnedFd::from_raw_fd(fd) });
        let wake = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) };
        if wake < 0 {
            return None;
        }
        let wake = Arc::new(unsafe { OwnedFd::from_raw_fd(wake) });
        let table: Arc<Mutex<Table>> = Arc::default();
        let (f, w, t) = (fd.clone(), wake.clone(), table.clone());
        let reader = thread::Builder::new()
            .name("spool-inotify".into())
            .spawn(move || read_events(&f, &w, &t, &hits, &poke))
            .ok()?;
        Some(Backend {
            fd,
            wake,
            table,
            reader: Some(reader),
        })
    }

    /// Watch `dir` (not its subdirectories), found in the directory `parent` watches, or on
    /// its own. Symlinks are not followed below a root (a root may be one: a store kept
    /// elsewhere and linked in).
    pub(super) fn register(&mut self, dir: &Path, parent: Option<Handle>) -> Reg {
        let Ok(cpath) = CString::new(dir.as_os_str().as_bytes()) else {
            return Reg::Failed;
        };
        let (parent, name) = match (parent, dir.file_name()) {
            (Some(p), Some(n)) => (Some(p), n),
            _ => (None, dir.as_os_str()),
        };
        let mask = if parent.is_some() {
            MASK | libc::IN_DONT_FOLLOW
        } else {
            MASK
        };
        // Held across the registration: an event of the new descriptor read before its
        // entry exists would be dropped.
        let Ok(mut table) = self.table.lock() else {
            return Reg::Failed;
        };
        // SAFETY: `cpath` is a NUL-terminated string that outlives the call.
        let wd = unsafe { libc::inotify_add_watch(self.fd.as_raw_fd(), cpath.as_ptr(), mask) };
        if wd < 0 {
            return match std::io::Error::last_os_error().raw_os_error() {
                // Removed since its parent was read (or replaced by a file): nothing to watch
                // in it, and its removal is an event in the parent.
                Some(libc::ENOENT | libc::ENOTDIR) => Reg::Gone,
                // ENOSPC is the kernel's watch limit: the store is polled instead.
                _ => Reg::Failed,
            };
        }
        Reg::Done {
            handle: wd,
            new: table.insert(wd, parent, name),
        }
    }

    /// The first walk is over: its table is held at its size (`Table::settle`).
    pub(super) fn settle(&self) {
        if let Ok(mut t) = self.table.lock() {
            t.settle();
        }
    }

    /// Directories watched (tests).
    #[cfg(test)]
    pub(super) fn table(&self) -> &Mutex<Table> {
        &self.table
    }
}

impl Drop for Backend {
    /// Wake the reading thread and wait for it; the descriptors close after it (the kernel
    /// drops every watch with the inotify descriptor).
    fn drop(&mut self) {
        let one = 1u64.to_ne_bytes();
        // SAFETY: writes 8 bytes from a live buffer to an eventfd this value owns.
        let woke = unsafe { libc::write(self.wake.as_raw_fd(), one.as_ptr().cast(), 8) } == 8;
        if let Some(h) = self.reader.take()
            && woke
        {
            let _ = h.join();
        }
    }
}

/// The reading thread: wait for events (or the wake), read every buffer the kernel has, and
/// hand what they name to the loader in one batch with one poke.
fn read_events(
    fd: &OwnedFd,
    wake: &OwnedFd,
    table: &Mutex<Table>,
    hits: &Mutex<Hits>,
    poke: &Sender<()>,
) {
    // Room for hundreds of events a read; the kernel's queue is drained read by read.
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        let mut fds = [
            libc::pollfd {
                fd: fd.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            },
            libc::pollfd {
                fd: wake.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            },
        ];
        // SAFETY: two valid pollfd entries.
        let r = unsafe { libc::poll(fds.as_mut_ptr(), 2, -1) };
        if r < 0 {
            if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return;
        }
        if fds[1].revents != 0 || fds[0].revents & (libc::POLLERR | libc::POLLNVAL) != 0 {
            return;
        }
        let mut batch = Hits::default();
        loop {
            // SAFETY: reads at most `buf.len()` bytes into `buf`.
            let n = unsafe { libc::read(fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
            if n <= 0 {
                // Drained (EAGAIN), or interrupted: poll again either way.
                break;
            }
            if let Ok(mut t) = table.lock() {
                t.apply(&buf[..n as usize], &mut batch);
            }
        }
        if batch.lost || !batch.paths.is_empty() {
            if let Ok(mut h) = hits.lock() {
                h.paths.append(&mut batch.paths);
                h.lost |= batch.lost;
            }
            if poke.send(()).is_err() {
                return;
            }
        }
    }
}

#[cfg(test)]
#[path = "inotify_tests.rs"]
mod tests;
