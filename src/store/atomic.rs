//! Crash-safe file writes shared by every store: temp file (O_EXCL, 0600) in the target's
//! directory, write, fsync, optional optimistic check, rename, fsync the directory.
//!
//! Every step goes through `step()`, a seam where tests inject I/O errors (`inject_fault`) to
//! prove that a failure never leaves a partial or temp file behind.

use std::cell::Cell;
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// A step of the write protocol where a fault can be injected.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    Create,
    Write,
    Fsync,
    Rename,
    DirFsync,
}

thread_local! {
    static FAULT: Cell<Option<Step>> = const { Cell::new(None) };
}

/// Make the next write on this thread fail at `step` with an injected I/O error
/// (`ENOSPC` for writes, `EIO` otherwise). The fault fires once.
pub fn inject_fault(step: Step) {
    FAULT.with(|f| f.set(Some(step)));
}

/// The fault seam itself, for writers outside this module that follow the same protocol
/// (loom's fork writes a new log record by record).
pub fn step(s: Step) -> io::Result<()> {
    if FAULT.with(|f| f.get()) == Some(s) {
        FAULT.with(|f| f.set(None));
        let code = if s == Step::Write {
            libc::ENOSPC
        } else {
            libc::EIO
        };
        return Err(io::Error::from_raw_os_error(code));
    }
    Ok(())
}

/// 16 lowercase hex characters from the OS's random source.
pub fn random_hex(n_bytes: usize) -> String {
    crate::hex::encode(&random_bytes(n_bytes))
}

/// Random bytes from `/dev/urandom`, with a time-and-pid fallback that is still unique enough
/// for temp names if the device is missing.
pub fn random_bytes(n: usize) -> Vec<u8> {
    let mut buf = vec![0u8; n];
    if File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut buf))
        .is_ok()
    {
        return buf;
    }
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0)
        ^ ((std::process::id() as u128) << 64);
    let mut x = seed as u64 ^ (seed >> 64) as u64 | 1;
    for b in &mut buf {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        *b = x as u8;
    }
    buf
}

/// Create `path` exclusively with mode 0600 (readable too: a streamed write reads back what
/// it wrote, `replace_with`).
pub fn create_new(path: &Path) -> io::Result<File> {
    step(Step::Create)?;
    OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
}

/// fsync a directory so a rename or unlink in it is durable.
pub fn fsync_dir(dir: &Path) -> io::Result<()> {
    step(Step::DirFsync)?;
    File::open(dir)?.sync_all()
}

/// Write `bytes` into a fresh temp file at `tmp` (O_EXCL, 0600) and fsync it.
/// On failure the temp file is removed.
pub fn write_temp(tmp: &Path, bytes: &[u8]) -> Result<()> {
    write_temp_with(tmp, &mut |f| f.write_all(bytes))
}

/// `write_temp` with the contents written by `write` into the open file, for a file too
/// large to be built in memory first (the catalog at 100k sessions is tens of MB).
fn write_temp_with(tmp: &Path, write: &mut dyn FnMut(&mut File) -> io::Result<()>) -> Result<()> {
    let res = (|| {
        let mut f = create_new(tmp)?;
        step(Step::Write)?;
        write(&mut f)?;
        step(Step::Fsync)?;
        f.sync_all()
    })();
    res.map_err(|e| {
        let _ = std::fs::remove_file(tmp);
        Error::io("writing", tmp, e)
    })
}

/// Options for `replace`.
#[derive(Default)]
pub struct Replace<'a> {
    /// Temp file name in the target's directory; default `<name>.<16 hex>.tmp`.
    pub temp_name: Option<String>,
    /// Called right before the rename; an `Err` aborts (the optimistic check).
    pub precheck: Option<&'a dyn Fn() -> Result<()>>,
}

/// Atomically replace (or create) `path` with `bytes`: temp (O_EXCL, 0600) -> write -> fsync ->
/// precheck -> rename -> fsync dir. The original is intact on any failure and no temp is left.
pub fn replace(path: &Path, bytes: &[u8], opts: Replace<'_>) -> Result<()> {
    replace_with(path, opts, &mut |f| f.write_all(bytes))
}

/// `replace` with the new contents written by `write` into the temp file (which it may seek
/// in), so that they are never held whole in memory. The same protocol and guarantees: an
/// `Err` from `write` leaves the original intact and no temp behind.
pub fn replace_with(
    path: &Path,
    opts: Replace<'_>,
    write: &mut dyn FnMut(&mut File) -> io::Result<()>,
) -> Result<()> {
    let dir = parent(path);
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(
        opts.temp_name
            .unwrap_or_else(|| format!("{name}.{}.tmp", random_hex(8))),
    );
    write_temp_with(&tmp, write)?;
    let finish = (|| {
        if let Some(check) = opts.precheck {
            check()?;
        }
        step(Step::Rename)
            .and_then(|_| std::fs::rename(&tmp, path))
            .map_err(|e| Error::io("replacing", path, e))
    })();
    if let Err(e) = finish {
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    fsync_dir(&dir).map_err(|e| Error::io("syncing directory", &dir, e))
}

/// Create `path` with `bytes` without ever clobbering an existing file: temp -> write -> fsync
/// -> link(temp, path) (fails with EEXIST if taken) -> unlink temp -> fsync dir.
pub fn create_no_clobber(path: &Path, bytes: &[u8], temp_name: &str) -> Result<()> {
    let dir = parent(path);
    let tmp = dir.join(temp_name);
    write_temp(&tmp, bytes)?;
    let linked = step(Step::Rename).and_then(|_| std::fs::hard_link(&tmp, path));
    let _ = std::fs::remove_file(&tmp);
    linked.map_err(|e| Error::io("creating", path, e))?;
    fsync_dir(&dir).map_err(|e| Error::io("syncing directory", &dir, e))
}

/// Rename a staged directory to `to` only if `to` does not exist (renameat2 RENAME_NOREPLACE,
/// falling back to a check-then-rename where the kernel or filesystem lacks it).
pub fn rename_no_replace(from: &Path, to: &Path) -> io::Result<()> {
    step(Step::Rename)?;
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;
    let f = CString::new(from.as_os_str().as_bytes())?;
    let t = CString::new(to.as_os_str().as_bytes())?;
    // SAFETY: both are valid NUL-terminated paths; AT_FDCWD resolves them like rename(2).
    let rc = unsafe {
        libc::renameat2(
            libc::AT_FDCWD,
            f.as_ptr(),
            libc::AT_FDCWD,
            t.as_ptr(),
            libc::RENAME_NOREPLACE,
        )
    };
    if rc == 0 {
        return Ok(());
    }
    let err = io::Error::last_os_error();
    match err.raw_os_error() {
        Some(libc::ENOSYS) | Some(libc::EINVAL) => {
            if to.exists() {
                return Err(io::Error::from_raw_os_error(libc::EEXIST));
            }
            std::fs::rename(from, to)
        }
        _ => Err(err),
    }
}

fn parent(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Names of leftover temp files in `dir` (for tests and cleanup offers).
pub fn temp_files_in(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn replace_writes_0600_and_leaves_no_temp() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("meta.json");
        std::fs::write(&p, "old").unwrap();
        replace(&p, b"new", Replace::default()).unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"new");
        let mode = std::fs::metadata(&p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        assert!(temp_files_in(d.path()).is_empty());
    }

    #[test]
    fn every_injected_fault_keeps_the_original_and_no_temp() {
        for s in [Step::Create, Step::Write, Step::Fsync, Step::Rename] {
            let d = tempfile::tempdir().unwrap();
            let p = d.path().join("a.json");
            std::fs::write(&p, "old").unwrap();
            inject_fault(s);
            assert!(replace(&p, b"new", Replace::default()).is_err(), "{s:?}");
            assert_eq!(std::fs::read(&p).unwrap(), b"old", "{s:?}");
            assert!(temp_files_in(d.path()).is_empty(), "{s:?}");
        }
    }

    #[test]
    fn failing_precheck_aborts_before_rename() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("a.json");
        std::fs::write(&p, "old").unwrap();
        let check = || Err(Error::Changed("x".into()));
        let opts = Replace {
            temp_name: None,
            precheck: Some(&check),
        };
        assert!(matches!(replace(&p, b"new", opts), Err(Error::Changed(_))));
        assert_eq!(std::fs::read(&p).unwrap(), b"old");
        assert!(temp_files_in(d.path()).is_empty());
    }

    #[test]
    fn no_clobber_refuses_existing() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("x.json");
        create_no_clobber(&p, b"1", "tmpaaaa.tmp").unwrap();
        assert!(create_no_clobber(&p, b"2", "tmpbbbb.tmp").is_err());
        assert_eq!(std::fs::read(&p).unwrap(), b"1");
        assert!(temp_files_in(d.path()).is_empty());
    }

    #[test]
    fn rename_no_replace_refuses_existing_target() {
        let d = tempfile::tempdir().unwrap();
        let a = d.path().join("a");
        let b = d.path().join("b");
        std::fs::create_dir(&a).unwrap();
        std::fs::create_dir(&b).unwrap();
        assert!(rename_no_replace(&a, &b).is_err());
        let c = d.path().join("c");
        rename_no_replace(&a, &c).unwrap();
        assert!(c.is_dir() && !a.exists());
    }
}
