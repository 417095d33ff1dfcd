//! Positional reads of a byte range: a file (or bytes in memory) read with `pread` from an
//! offset on, leaving the file's own position alone, so any number of threads can read one
//! file at once. The catalog's sections decode from their spans of one file on threads of
//! their own, and the index's session table is read by two threads; both read through this.

use std::io::Read;
use std::os::unix::fs::FileExt;

/// Bytes read by position, by any number of threads at once: a file, or bytes in memory.
pub trait Source: Sync {
    fn read_at(&self, buf: &mut [u8], at: u64) -> std::io::Result<usize>;
}

impl Source for std::fs::File {
    fn read_at(&self, buf: &mut [u8], at: u64) -> std::io::Result<usize> {
        FileExt::read_at(self, buf, at)
    }
}

impl Source for [u8] {
    fn read_at(&self, buf: &mut [u8], at: u64) -> std::io::Result<usize> {
        let from = usize::try_from(at).unwrap_or(usize::MAX).min(self.len());
        let n = buf.len().min(self.len() - from);
        buf[..n].copy_from_slice(&self[from..from + n]);
        Ok(n)
    }
}

/// The bytes `at..to` of a source, read in order; `at` is where the next read starts.
pub struct Range<'a, S: Source + ?Sized> {
    pub src: &'a S,
    pub at: u64,
    pub to: u64,
}

impl<'a, S: Source + ?Sized> Range<'a, S> {
    /// The bytes `at..to` of `src`.
    pub fn new(src: &'a S, at: u64, to: u64) -> Self {
        Range { src, at, to }
    }

    /// Everything from `at` to the source's end.
    pub fn from(src: &'a S, at: u64) -> Self {
        Range::new(src, at, u64::MAX)
    }
}

impl<S: Source + ?Sized> Read for Range<'_, S> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let room = usize::try_from(self.to.saturating_sub(self.at)).unwrap_or(usize::MAX);
        let want = buf.len().min(room);
        if want == 0 {
            return Ok(0);
        }
        let n = self.src.read_at(&mut buf[..want], self.at)?;
        self.at += n as u64;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_range_reads_only_its_bytes() {
        let bytes: &[u8] = b"0123456789";
        let mut out = String::new();
        Range::new(bytes, 2, 6).read_to_string(&mut out).unwrap();
        assert_eq!(out, "2345");
        out.clear();
        Range::from(bytes, 7).read_to_string(&mut out).unwrap();
        assert_eq!(out, "789");
        out.clear();
        Range::from(bytes, 20).read_to_string(&mut out).unwrap();
        assert_eq!(out, "");
    }

    #[test]
    fn a_file_is_read_by_position_not_by_its_cursor() {
        use std::io::{Seek, SeekFrom, Write};
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(b"abcdefgh").unwrap();
        f.seek(SeekFrom::Start(6)).unwrap();
        let mut out = String::new();
        Range::new(&f, 1, 4).read_to_string(&mut out).unwrap();
        assert_eq!(out, "bcd");
        assert_eq!(f.stream_position().unwrap(), 6);
    }
}
