//! The one reader for files spool expects to be small and regular (metadata, sidecars,
//! `archive.json`, `index.json`, the config): opened `O_NONBLOCK` so a FIFO or device cannot
//! hang `open`, checked with `fstat` to be a regular file, and capped, so a sidecar symlinked to
//! `/dev/zero` or a 10 GB `meta.json` is an error instead of a read into memory.

use std::fs::{File, OpenOptions};
use std::io::{self, Read};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// What a metadata file may hold (the formats' README: 16 MiB).
pub const META_CAP: u64 = 16 << 20;

/// Whether the last path component may be a symlink: only where users put one on purpose
/// (their config); inside a store, spool never follows a link it did not expect.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Links {
    Follow,
    Refuse,
}

/// Open `path` for reading if it is a regular file; a FIFO, device, directory (or, with
/// `Links::Refuse`, a symlink) is an error naming what it is, at once.
pub fn open(path: &Path, links: Links) -> io::Result<File> {
    let mut flags = libc::O_NONBLOCK | libc::O_CLOEXEC;
    if links == Links::Refuse {
        flags |= libc::O_NOFOLLOW;
    }
    let f = OpenOptions::new()
        .read(true)
        .custom_flags(flags)
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ELOOP) => io::Error::other("a symlink, which spool does not follow"),
            _ => e,
        })?;
    let ft = f.metadata()?.file_type();
    if !ft.is_file() {
        use std::os::unix::fs::FileTypeExt;
        let what = if ft.is_fifo() {
            "a FIFO"
        } else if ft.is_dir() {
            "a directory"
        } else if ft.is_char_device() || ft.is_block_device() {
            "a device"
        } else {
            "not a regular file"
        };
        return Err(io::Error::other(format!("{what}, not a regular file")));
    }
    Ok(f)
}

/// The whole of a regular file of at most `cap` bytes (`open`'s checks first). A file that
/// grows past `cap` while being read is refused too.
pub fn read(path: &Path, cap: u64, links: Links) -> io::Result<Vec<u8>> {
    let f = open(path, links)?;
    let len = f.metadata()?.len();
    if len > cap {
        return Err(too_large(cap));
    }
    let mut buf = Vec::with_capacity(len as usize);
    f.take(cap + 1).read_to_end(&mut buf)?;
    if buf.len() as u64 > cap {
        return Err(too_large(cap));
    }
    Ok(buf)
}

fn too_large(cap: u64) -> io::Error {
    io::Error::other(format!("larger than {} MiB", cap >> 20))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fifos_devices_links_and_big_files_are_refused_at_once() {
        let d = tempfile::tempdir().unwrap();
        let fifo = d.path().join("f.json");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let e = read(&fifo, META_CAP, Links::Follow)
            .unwrap_err()
            .to_string();
        assert!(e.contains("FIFO"), "{e}");
        let e = read(Path::new("/dev/zero"), META_CAP, Links::Follow).unwrap_err();
        assert!(e.to_string().contains("device"), "{e}");
        let link = d.path().join("l.json");
        std::os::unix::fs::symlink("/dev/zero", &link).unwrap();
        let e = read(&link, META_CAP, Links::Refuse).unwrap_err();
        assert!(e.to_string().contains("symlink"), "{e}");
        let big = d.path().join("big.json");
        std::fs::write(&big, vec![b' '; 2048]).unwrap();
        assert!(read(&big, 1024, Links::Refuse).is_err());
        assert_eq!(read(&big, 4096, Links::Refuse).unwrap().len(), 2048);
    }
}
