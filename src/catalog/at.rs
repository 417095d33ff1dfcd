//! `lstat` relative to an open directory (`statx` with a dirfd), for the stat pass: a Loop
//! session's three files were each looked up from `/` through every directory above them
//! (and any symlink there), which was most of the pass's kernel time (issue 10: at 10k, 36%
//! of a warm `spool list` in statx and 11% in dentry lookup). From the collection's fd only
//! `<id>/meta.json` is walked. The last component is never followed, as in `lstat`.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;

use super::stamp::Stat;

/// At most this many directories stay open per pass (a store has a few: Loop's collections,
/// one `sessions/` directory); past it, paths are stamped by their own `lstat`.
const MAX_OPEN: usize = 64;

/// The directories opened by one pass, by path bytes (`None`: could not be opened).
#[derive(Default)]
pub struct Dirs {
    open: Vec<(Vec<u8>, Option<OwnedFd>)>,
    name: Vec<u8>,
}

impl Dirs {
    /// The `lstat` of `rel` below the directory `dir` (both as bytes), or `None` when the
    /// directory cannot be opened or the call fails for any reason: the caller then stamps
    /// the whole path the ordinary way, so an error never reads as a different file.
    pub fn lstat(&mut self, dir: &[u8], rel: &[u8]) -> Option<Stat> {
        let fd = self.fd(dir)?;
        if rel.is_empty() || rel.contains(&0) {
            return None;
        }
        self.name.clear();
        self.name.extend_from_slice(rel);
        self.name.push(0);
        statx(fd, &self.name)
    }

    fn fd(&mut self, dir: &[u8]) -> Option<RawFd> {
        if let Some((_, fd)) = self.open.iter().find(|(d, _)| d.as_slice() == dir) {
            return fd.as_ref().map(AsRawFd::as_raw_fd);
        }
        if self.open.len() >= MAX_OPEN {
            return None;
        }
        let fd = open_dir(dir);
        let raw = fd.as_ref().map(AsRawFd::as_raw_fd);
        self.open.push((dir.to_vec(), fd));
        raw
    }
}

/// An `O_PATH` handle on the directory `dir` (following a symlink to it, as a path lookup
/// through it would): enough to look names up below it, no read permission needed.
fn open_dir(dir: &[u8]) -> Option<OwnedFd> {
    let c = std::ffi::CString::new(dir).ok()?;
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

/// `statx(fd, name, AT_SYMLINK_NOFOLLOW)` as the fields `Stat::of` takes from std's
/// `Metadata` (std also fills it from `statx`, with the device as `makedev(major, minor)`),
/// so a key made here equals one made by `symlink_metadata`. `name` ends with a NUL.
fn statx(fd: RawFd, name: &[u8]) -> Option<Stat> {
    // SAFETY: all-zero bytes are a valid `statx` (plain integers).
    let mut buf: libc::statx = unsafe { std::mem::zeroed() };
    // SAFETY: `name` is NUL-terminated (checked by the caller building it), `buf` is a
    // valid, writable `statx`, and `fd` is open for the call's duration.
    let r = unsafe {
        libc::statx(
            fd,
            name.as_ptr().cast(),
            libc::AT_SYMLINK_NOFOLLOW | libc::AT_STATX_SYNC_AS_STAT,
            libc::STATX_BASIC_STATS,
            &mut buf,
        )
    };
    if r != 0 {
        return None;
    }
    of_statx(&buf)
}

/// The `Stat` of a `statx` taken with `AT_SYMLINK_NOFOLLOW` and `STATX_BASIC_STATS` (`None`
/// when the kernel did not fill them all), equal to `Stat::of` of `symlink_metadata`.
pub fn of_statx(buf: &libc::statx) -> Option<Stat> {
    if buf.stx_mask & libc::STATX_BASIC_STATS != libc::STATX_BASIC_STATS {
        return None;
    }
    Some(Stat::from_fields([
        libc::makedev(buf.stx_dev_major, buf.stx_dev_minor),
        buf.stx_ino,
        buf.stx_size,
        buf.stx_mtime.tv_sec as u64,
        u64::from(buf.stx_mtime.tv_nsec),
        buf.stx_ctime.tv_sec as u64,
        u64::from(buf.stx_ctime.tv_nsec),
        u64::from(buf.stx_mode),
    ]))
}

/// Where `p`, at or below `first`, can be looked up from: the directory holding `first` and
/// `p` relative to it (`None`: `first` has no such directory worth opening).
pub fn split<'a>(p: &'a std::path::Path, first: &std::path::Path) -> Option<(&'a [u8], &'a [u8])> {
    let (pb, fb) = (p.as_os_str().as_bytes(), first.as_os_str().as_bytes());
    let cut = fb.iter().rposition(|&b| b == b'/').filter(|&c| c > 0)?;
    if !pb.starts_with(&fb[..=cut]) {
        return None;
    }
    Some((&pb[..cut], &pb[cut + 1..]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn a_stat_from_a_directory_fd_equals_the_path_lstat_of_every_kind_of_file() {
        let t = tempfile::tempdir().unwrap();
        let col = t.path().join("col");
        std::fs::create_dir_all(col.join("s")).unwrap();
        std::fs::write(col.join("s/meta.json"), b"{}").unwrap();
        std::os::unix::fs::symlink("meta.json", col.join("s/link")).unwrap();
        std::os::unix::fs::symlink("/nowhere", col.join("dangling")).unwrap();
        let mut dirs = Dirs::default();
        let colb = col.as_os_str().as_bytes();
        for rel in ["s", "s/meta.json", "s/link", "dangling"] {
            let want = Stat::of(&std::fs::symlink_metadata(col.join(rel)).unwrap());
            assert_eq!(dirs.lstat(colb, rel.as_bytes()), Some(want), "{rel}");
        }
        // A symlink is stamped as itself, never as what it names.
        assert_ne!(
            dirs.lstat(colb, b"s/link"),
            dirs.lstat(colb, b"s/meta.json")
        );
        // A missing name, an empty or NUL-holding one, or a directory that cannot be
        // opened: `None`, so the caller stamps the path itself.
        assert_eq!(dirs.lstat(colb, b"s/gone.json"), None);
        assert_eq!(dirs.lstat(colb, b""), None);
        assert_eq!(dirs.lstat(colb, b"s\0x"), None);
        assert_eq!(dirs.lstat(b"/no/such/dir", b"x"), None);
        assert_eq!(
            dirs.lstat(
                t.path().join("col/s/meta.json").as_os_str().as_bytes(),
                b"x"
            ),
            None
        );
    }

    #[test]
    fn a_path_splits_at_the_directory_holding_the_first_input() {
        let p = Path::new;
        let s = |a, b| split(p(a), p(b));
        let want = |d: &'static str, r: &'static str| Some((d.as_bytes(), r.as_bytes()));
        assert_eq!(
            s("/a/col/id/meta.json", "/a/col/id"),
            want("/a/col", "id/meta.json")
        );
        assert_eq!(s("/a/col/id", "/a/col/id"), want("/a/col", "id"));
        assert_eq!(s("/a/col/id/x", "/a/col/id/"), want("/a/col/id", "x"));
        assert_eq!(s("/top", "/top"), None);
        assert_eq!(s("rel", "rel"), None);
        assert_eq!(s("/b/col/id", "/a/col/id"), None);
    }
}
