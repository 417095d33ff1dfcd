//! Advisory `flock` locks: the agent-harness session lease (never waited on, lock file never
//! deleted) and the TUI-instance lock that serialises spool processes on a sidecar directory.

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
    let file = OpenOptions::new()
        .append(true)
        .create(true)
        .mode(0o600)
        .open(lock_path)
        .map_err(|e| Error::io("opening lock", lock_path, e))?;
    match flock(&file, libc::LOCK_EX | libc::LOCK_NB) {
        Ok(()) => Ok(Held { file }),
        Err(e) if e.raw_os_error() == Some(libc::EWOULDBLOCK) => Err(Error::InUse(id.to_string())),
        Err(e) => Err(Error::io("locking", lock_path, e)),
    }
}

/// Read-only status probe: is the lease held by someone? Opens the lock file only if it
/// exists (never creates it) and releases at once.
pub fn lease_held(lock_path: &Path) -> bool {
    let Ok(file) = File::open(lock_path) else {
        return false;
    };
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
    let file = OpenOptions::new()
        .append(true)
        .create(true)
        .mode(0o600)
        .open(&path)
        .map_err(|e| Error::io("opening lock", &path, e))?;
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
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(e) => return Err(Error::io("locking", &path, e)),
        }
    }
}

/// Create a directory with mode 0700 if missing (never chmods an existing one).
pub fn create_private_dir(dir: &Path) -> Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    match std::fs::DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(()),
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
    fn instance_lock_times_out() {
        let d = tempfile::tempdir().unwrap();
        let dir = d.path().join(".spool");
        let _a = instance_lock(&dir, Duration::from_millis(50)).unwrap();
        assert!(instance_lock(&dir, Duration::from_millis(50)).is_err());
    }
}
