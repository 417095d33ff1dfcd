//! Advisory `flock` locks, the one lock helper: the agent-harness session lease (never waited
//! on, lock file never deleted), the TUI-instance lock that serialises spool processes on a
//! sidecar directory, and the directory lock around Loop's read-check-rename (loop.md 9.1).

use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::time::{Duration, Instant};

use crate::error::{Error, Result};

/// A held exclusive lock; released (not deleted) on drop.
#[derive(Debug)]
pub struct Held {
    file: File,
}

impl Drop for Held {
    fn drop(&mut self) {
        // SAFETY: the fd is owned by `self.file` and still open.
        unsafe {
            libc::flock(self.file.as_raw_fd(), libc::LOCK_UN);
        }
    }
}

fn flock(file: &File, op: libc::c_int) -> io::Result<()> {
    // SAFETY: the fd is owned by `file` and open for the duration of the call.
    if unsafe { libc::flock(file.as_raw_fd(), op) } == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// The harness lease: open `lock_path` (create 0600, append), `flock(LOCK_EX|LOCK_NB)`.
/// A held lock is refused at once with `Error::InUse(id)`; the lock file is never removed.
pub fn take_lease(lock_path: &Path, id: &str) -> Result<Held> {
    let file = open_lock_file(lock_path)?;
    match flock(&file, libc::LOCK_EX | libc::LOCK_NB) {
        Ok(()) => Ok(Held { file }),
        Err(e) if e.raw_os_error() == Some(libc::EWOULDBLOCK) => Err(Error::InUse(id.to_string())),
        Err(e) => Err(Error::io("locking", lock_path, e)),
    }
}

/// Read-only status probe: is the lease held by someone? Opens the lock file only if it
/// exists (never creates it) and releases at once.
pub fn lease_held(lock_path: &Path) -> bool {
    // Non-blocking and not following links: a FIFO or a symlink planted as the lock file must
    // neither hang a listing nor be opened elsewhere; only a regular file is probed.
    let Ok(file) = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(lock_path)
    else {
        return false;
    };
    if !file.metadata().is_ok_and(|m| m.is_file()) {
        return false;
    }
    match flock(&file, libc::LOCK_SH | libc::LOCK_NB) {
        Ok(()) => {
            let _ = flock(&file, libc::LOCK_UN);
            false
        }
        Err(_) => true,
    }
}

/// The TUI-instance lock `<dir>/.lock` (dir created 0700 when missing), waited on for at most
/// `timeout` (the contracts say 2 s).
pub fn instance_lock(dir: &Path, timeout: Duration) -> Result<Held> {
    create_private_dir(dir)?;
    let path = dir.join(".lock");
    let file = open_lock_file(&path)?;
    wait_exclusive(file, &path, timeout)
}

/// Take `LOCK_EX` on `file`, retrying for at most `timeout`; then "busy", naming `path`.
fn wait_exclusive(file: File, path: &Path, timeout: Duration) -> Result<Held> {
    let start = Instant::now();
    loop {
        match flock(&file, libc::LOCK_EX | libc::LOCK_NB) {
            Ok(()) => return Ok(Held { file }),
            Err(e) if e.raw_os_error() == Some(libc::EWOULDBLOCK) => {
                if start.elapsed() >= timeout {
                    return Err(Error::Refused(format!(
                        "another spool holds {}; try again",
                        path.display()
                    )));
                }
                std::thread::sleep(Duration::from_millis(5));
            }
            Err(e) => return Err(Error::io("locking", path, e)),
        }
    }
}

/// An exclusive lock on a directory itself (loop.md 9.1): opened `O_RDONLY|O_DIRECTORY|
/// O_NOFOLLOW`, so it creates no file Loop could trip over and a symlink is refused. Held from
/// before a read until after the rename, it keeps two spool processes from losing each
/// other's change; waited on for at most `timeout` (2 s in the contract).
pub fn dir_lock(dir: &Path, timeout: Duration) -> Result<Held> {
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(dir)
        .map_err(|e| Error::io("locking directory", dir, e))?;
    wait_exclusive(file, dir, timeout)
}

/// Open (creating 0600) a lock file that must be a regular file of its own: `O_NOFOLLOW`, so a
/// dangling symlink planted as `<id>.lock` or `.spool/.lock` creates nothing outside the store,
/// and `O_NONBLOCK`, so a FIFO there fails at once instead of hanging `open` (the lock timeout
/// never applies to a blocked open).
fn open_lock_file(path: &Path) -> Result<File> {
    let file = OpenOptions::new()
        .append(true)
        .create(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ELOOP) => refuse_link(path),
            _ => Error::io("opening lock", path, e),
        })?;
    let meta = file
        .metadata()
        .map_err(|e| Error::io("opening lock", path, e))?;
    if !meta.is_file() {
        return Err(Error::Refused(format!(
            "{} is not a regular file; not using it as a lock",
            path.display()
        )));
    }
    Ok(file)
}

fn refuse_link(path: &Path) -> Error {
    Error::Refused(format!(
        "{} is a symlink; spool does not follow it",
        path.display()
    ))
}

/// Refuse unless `dir` is a real directory, not a symlink to one (`lstat`): spool's own
/// directories (`.spool/`, `.spool/trash/`) are written and purged, and a link planted there
/// would send those writes and unlinks outside the store. A missing `dir` is `Ok(false)`.
pub fn real_dir(dir: &Path) -> Result<bool> {
    match std::fs::symlink_metadata(dir) {
        Ok(m) if m.file_type().is_symlink() => Err(refuse_link(dir)),
        Ok(m) if m.is_dir() => Ok(true),
        Ok(_) => Err(Error::Refused(format!(
            "{} is not a directory",
            dir.display()
        ))),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(Error::io("checking", dir, e)),
    }
}

/// Create a directory with mode 0700 if missing (never chmods an existing one); an existing
/// one must be a real directory (`real_dir`).
pub fn create_private_dir(dir: &Path) -> Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    match std::fs::DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => real_dir(dir).map(|_| ()),
        Err(e) => Err(Error::io("creating directory", dir, e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn second_lease_is_refused_not_waited() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("abc.lock");
        let held = take_lease(&p, "abc").unwrap();
        assert!(lease_held(&p));
        // flock locks are per open file description, so a second open conflicts.
        assert!(matches!(take_lease(&p, "abc"), Err(Error::InUse(_))));
        drop(held);
        assert!(!lease_held(&p));
        assert!(p.exists(), "lock file is never deleted");
    }

    #[test]
    fn probe_never_creates_the_lock_file() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("x.lock");
        assert!(!lease_held(&p));
        assert!(!p.exists());
    }

    #[test]
    fn dir_lock_excludes_a_second_holder_and_refuses_symlinks() {
        let d = tempfile::tempdir().unwrap();
        let held = dir_lock(d.path(), Duration::from_millis(10)).unwrap();
        assert!(dir_lock(d.path(), Duration::from_millis(30)).is_err());
        drop(held);
        assert!(dir_lock(d.path(), Duration::from_millis(10)).is_ok());
        let link = d.path().join("link");
        std::os::unix::fs::symlink(d.path(), &link).unwrap();
        assert!(dir_lock(&link, Duration::from_millis(10)).is_err());
        assert_eq!(
            std::fs::read_dir(d.path()).unwrap().count(),
            1,
            "no file created"
        );
    }

    #[test]
    fn planted_links_and_fifos_are_refused_as_locks_and_dirs() {
        let d = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        // A dangling `<id>.lock` link would have created a file outside the store.
        let lock = d.path().join("abc.lock");
        std::os::unix::fs::symlink(outside.path().join("made"), &lock).unwrap();
        let e = take_lease(&lock, "abc").unwrap_err().to_string();
        assert!(e.contains("abc.lock") && e.contains("symlink"), "{e}");
        assert!(!lease_held(&lock));
        // A symlinked `.spool` would have taken its lock (and sidecars) elsewhere.
        let spool = d.path().join(".spool");
        std::os::unix::fs::symlink(outside.path(), &spool).unwrap();
        let e = instance_lock(&spool, Duration::from_millis(10))
            .unwrap_err()
            .to_string();
        assert!(e.contains(".spool") && e.contains("symlink"), "{e}");
        assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);
        // A FIFO as the lock: refused at once, not a hang in open(2).
        let fifo = d.path().join("f.lock");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        assert!(take_lease(&fifo, "f").is_err());
        assert!(!lease_held(&fifo));
    }

    #[test]
    fn instance_lock_times_out() {
        let d = tempfile::tempdir().unwrap();
        let dir = d.path().join(".spool");
        let _a = instance_lock(&dir, Duration::from_millis(50)).unwrap();
        assert!(instance_lock(&dir, Duration::from_millis(50)).is_err());
    }
}
