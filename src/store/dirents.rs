//! A directory's entries by name and type, without a heap allocation per entry: on Linux
//! `getdents64` into one large buffer, each name handed out as bytes borrowed from it. A cold
//! start at 100k sessions lists 33k loom logs before its first rows, and std's `read_dir`
//! copied every name into a `CString` of its own (then the caller into a `PathBuf` and a
//! `String`): about three quarters of that directory read's 25 ms of CPU was user space
//! (issue 10). Elsewhere it is std's `read_dir`.

use std::io;
use std::path::Path;

/// An entry's type as its directory entry says, never following a symlink (as
/// `DirEntry::file_type`: an entry whose type the file system does not record is `lstat`ed).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    File,
    Dir,
    Symlink,
    /// A FIFO, socket or device, or an entry gone before its type could be read.
    Other,
}

/// Call `f` with every entry of `dir` but `.` and `..`, in directory order. An error opening
/// `dir` is returned before any call; one while reading ends the walk with the entries read
/// so far handed out (as std's `read_dir().flatten()` did).
pub fn each(dir: &Path, f: impl FnMut(&[u8], Kind)) -> io::Result<()> {
    imp::each(dir, f)
}

#[cfg(target_os = "linux")]
mod imp {
    use super::Kind;
    use std::ffi::CStr;
    use std::fs::{File, OpenOptions};
    use std::io;
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::OpenOptionsExt;
    use std::path::Path;

    /// About a thousand entries a system call (glibc's `readdir` takes 32 KiB). The kernel's
    /// work per entry is the same at any size (6.2 ms for 33k logs at 32 KiB, 1 MiB or 4 MiB);
    /// a larger buffer only costs the page faults of its first use.
    const BUF: usize = 64 << 10;

    /// `struct linux_dirent64`: inode (8), offset (8), record length (2), type (1), name.
    const NAME_AT: usize = 19;

    pub(super) fn each(dir: &Path, mut f: impl FnMut(&[u8], Kind)) -> io::Result<()> {
        let d: File = OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_DIRECTORY | libc::O_CLOEXEC)
            .open(dir)?;
        let fd = d.as_raw_fd();
        let mut buf = vec![0u8; BUF];
        loop {
            // SAFETY: the kernel writes at most `buf.len()` bytes into `buf`, which lives
            // across the call; `fd` is open for as long as `d` is.
            let n = unsafe {
                libc::syscall(
                    libc::SYS_getdents64,
                    fd,
                    buf.as_mut_ptr().cast::<libc::c_void>(),
                    buf.len(),
                )
            };
            if n <= 0 {
                return Ok(());
            }
            let filled = &buf[..n as usize];
            let mut at = 0;
            while at + NAME_AT <= filled.len() {
                let len = usize::from(u16::from_ne_bytes([filled[at + 16], filled[at + 17]]));
                if len == 0 || at + len > filled.len() {
                    // A record the kernel would never write: stop rather than misread.
                    return Ok(());
                }
                let rec = &filled[at..at + len];
                at += len;
                let Ok(name) = CStr::from_bytes_until_nul(&rec[NAME_AT..]) else {
                    continue;
                };
                let name = name.to_bytes();
                if name == b"." || name == b".." {
                    continue;
                }
                let kind = match rec[18] {
                    libc::DT_REG => Kind::File,
                    libc::DT_DIR => Kind::Dir,
                    libc::DT_LNK => Kind::Symlink,
                    libc::DT_UNKNOWN => lstat_kind(fd, name),
                    _ => Kind::Other,
                };
                f(name, kind);
            }
        }
    }

    /// The type of an entry whose directory entry does not record it (some file systems).
    fn lstat_kind(fd: libc::c_int, name: &[u8]) -> Kind {
        let Ok(c) = std::ffi::CString::new(name) else {
            return Kind::Other;
        };
        // SAFETY: `st` is written by fstatat before it is read, `c` is a valid C string.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        if unsafe { libc::fstatat(fd, c.as_ptr(), &mut st, libc::AT_SYMLINK_NOFOLLOW) } != 0 {
            return Kind::Other;
        }
        match st.st_mode & libc::S_IFMT {
            libc::S_IFREG => Kind::File,
            libc::S_IFDIR => Kind::Dir,
            libc::S_IFLNK => Kind::Symlink,
            _ => Kind::Other,
        }
    }

    /// The fallback for file systems that leave the entry's type out (tmpfs and ext4 record
    /// it, so `each` never reaches it in the other tests).
    #[test]
    fn an_untyped_entry_is_typed_by_lstat() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("f"), "").unwrap();
        std::fs::create_dir(d.path().join("d")).unwrap();
        std::os::unix::fs::symlink("f", d.path().join("l")).unwrap();
        let dir = File::open(d.path()).unwrap();
        let fd = dir.as_raw_fd();
        assert_eq!(lstat_kind(fd, b"f"), Kind::File);
        assert_eq!(lstat_kind(fd, b"d"), Kind::Dir);
        assert_eq!(lstat_kind(fd, b"l"), Kind::Symlink);
        assert_eq!(lstat_kind(fd, b"gone"), Kind::Other);
        assert_eq!(lstat_kind(fd, b"nul\0inside"), Kind::Other);
    }
}

#[cfg(not(target_os = "linux"))]
mod imp {
    use super::Kind;
    use std::io;
    use std::os::unix::ffi::OsStrExt;
    use std::path::Path;

    pub(super) fn each(dir: &Path, mut f: impl FnMut(&[u8], Kind)) -> io::Result<()> {
        for e in std::fs::read_dir(dir)?.flatten() {
            let kind = match e.file_type() {
                Ok(t) if t.is_file() => Kind::File,
                Ok(t) if t.is_dir() => Kind::Dir,
                Ok(t) if t.is_symlink() => Kind::Symlink,
                _ => Kind::Other,
            };
            f(e.file_name().as_bytes(), kind);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::ffi::OsStrExt;

    /// What std's `read_dir` lists, as (name, kind).
    fn by_std(dir: &Path) -> Vec<(Vec<u8>, Kind)> {
        let mut v: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .flatten()
            .map(|e| {
                let t = e.file_type().unwrap();
                let kind = if t.is_file() {
                    Kind::File
                } else if t.is_dir() {
                    Kind::Dir
                } else if t.is_symlink() {
                    Kind::Symlink
                } else {
                    Kind::Other
                };
                (e.file_name().as_bytes().to_vec(), kind)
            })
            .collect();
        v.sort();
        v
    }

    fn by_each(dir: &Path) -> Vec<(Vec<u8>, Kind)> {
        let mut v = Vec::new();
        each(dir, |n, k| v.push((n.to_vec(), k))).unwrap();
        v.sort();
        v
    }

    /// Odd names (spaces, newlines, invalid UTF-8, dots, the longest a name can be) and
    /// every kind of entry, and more entries than one buffer holds: exactly what std lists.
    #[test]
    fn lists_exactly_what_read_dir_lists() {
        use std::ffi::OsStr;
        let d = tempfile::tempdir().unwrap();
        let p = d.path();
        let odd: Vec<Vec<u8>> = vec![
            b"plain.jsonl".to_vec(),
            b"with space.jsonl".to_vec(),
            b"new\nline".to_vec(),
            b".hidden".to_vec(),
            b"...".to_vec(),
            b"\xff\xfe not utf-8".to_vec(),
            "ümlaut-日本".as_bytes().to_vec(),
            vec![b'x'; 255],
        ];
        for n in &odd {
            std::fs::write(p.join(OsStr::from_bytes(n)), "").unwrap();
        }
        std::fs::create_dir(p.join("a dir")).unwrap();
        std::os::unix::fs::symlink("plain.jsonl", p.join("link.jsonl")).unwrap();
        std::os::unix::fs::symlink("nowhere", p.join("dangling")).unwrap();
        let fifo = std::ffi::CString::new(p.join("fifo").as_os_str().as_bytes()).unwrap();
        // SAFETY: a valid C string path.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
        // About 2.5 buffers of 60-byte names.
        for i in 0..11_000 {
            std::fs::write(p.join(format!("{i:0>40}.jsonl")), "").unwrap();
        }
        let got = by_each(p);
        assert_eq!(got.len(), odd.len() + 4 + 11_000);
        assert_eq!(got, by_std(p));
        assert!(got.contains(&(b"a dir".to_vec(), Kind::Dir)));
        assert!(got.contains(&(b"link.jsonl".to_vec(), Kind::Symlink)));
        assert!(got.contains(&(b"fifo".to_vec(), Kind::Other)));
        assert!(got.contains(&(vec![b'x'; 255], Kind::File)));
    }

    #[test]
    fn an_empty_directory_lists_nothing_and_a_missing_one_is_an_error() {
        let d = tempfile::tempdir().unwrap();
        assert!(by_each(d.path()).is_empty());
        let e = each(&d.path().join("gone"), |_, _| {}).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::NotFound);
        std::fs::write(d.path().join("file"), "").unwrap();
        assert!(each(&d.path().join("file"), |_, _| {}).is_err());
    }
}
