//! Reading and writing the catalog file without holding it: checked by a streamed checksum,
//! then decoded from a buffered reader (issue 10: at 100k sessions the file is ~74 MB, and
//! holding it whole while its rows were decoded put that much on top of the rows at the
//! start's peak); written through a summing buffer, its header filled in last.

use std::io::{BufReader, Read, Seek, SeekFrom, Write};
use std::path::Path;

use super::{CAP, Catalog, HEADER, MAGIC, Sum, VERSION, schema};
use crate::store::regular;

/// How much of the file is read at a time (a multiple of 8: the checksum mixes words).
const CHUNK: usize = 1 << 16;

/// The catalog at `path` and its body's checksum (the log's base), or `None` for anything
/// but an intact file of this version and schema, as `decode` decides for bytes.
pub fn read(path: &Path) -> Option<(Catalog, u64)> {
    let f = regular::open(path, regular::Links::Refuse).ok()?;
    let size = f.metadata().ok()?.len();
    read_from(f, size)
}

/// `read` from any source of `size` bytes: the file, or `decode`'s bytes, so that the tests
/// of damaged catalogs go through the one check the warm start uses.
pub fn read_from(mut f: impl Read + Seek, size: u64) -> Option<(Catalog, u64)> {
    if size > CAP {
        return None;
    }
    let mut head = [0u8; HEADER];
    f.read_exact(&mut head).ok()?;
    let word = |at: usize| u64::from_le_bytes(head[at..at + 8].try_into().unwrap_or_default());
    let version = u32::from_le_bytes(head[8..12].try_into().ok()?);
    if &head[..8] != MAGIC || version != VERSION || word(12) != schema() {
        return None;
    }
    let (len, sum) = (word(20), word(28));
    if size - HEADER as u64 != len {
        return None;
    }
    // First the checksum over the whole body, so nothing is decoded from a damaged file.
    let mut s = Sum::new(len);
    let mut buf = vec![0u8; CHUNK];
    let mut seen = 0u64;
    loop {
        let n = fill(&mut f, &mut buf)?;
        s.add(&buf[..n]);
        seen += n as u64;
        if n < CHUNK {
            break;
        }
    }
    if seen != len || s.finish() != sum {
        return None;
    }
    drop(buf);
    f.seek(SeekFrom::Start(HEADER as u64)).ok()?;
    // postcard copies each string through this scratch space before it allocates it, and
    // only ever uses its start (the longest single field); it must be as long as the body
    // only for a body that is one field.
    let mut scratch = Scratch::new(len as usize)?;
    let reader = BufReader::with_capacity(CHUNK, f.take(len));
    let (cat, _) = postcard::from_io((reader, scratch.bytes())).ok()?;
    Some((cat, sum))
}

/// Read until `buf` is full or the file ends; the bytes read.
fn fill(f: &mut impl Read, buf: &mut [u8]) -> Option<usize> {
    let mut n = 0;
    while n < buf.len() {
        match f.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return None,
        }
    }
    Some(n)
}

/// Zeroed pages mapped straight from the kernel, which become resident only where written:
/// `len` bytes of room that cost the longest field's pages. (A `vec![0; len]` is the same
/// only while the allocator serves it by `mmap`; from its heap it is written whole.)
struct Scratch {
    at: *mut u8,
    len: usize,
}

impl Scratch {
    fn new(len: usize) -> Option<Scratch> {
        let len = len.max(1);
        // SAFETY: a fresh private anonymous mapping, no address hint, no file.
        let at = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        (at != libc::MAP_FAILED).then_some(Scratch { at: at.cast(), len })
    }

    fn bytes(&mut self) -> &mut [u8] {
        // SAFETY: `len` mapped, zero-filled (so initialized) bytes, borrowed mutably once.
        unsafe { std::slice::from_raw_parts_mut(self.at, self.len) }
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        // SAFETY: the mapping `new` made, unmapped once; nothing borrows it any more.
        unsafe { libc::munmap(self.at.cast(), self.len) };
    }
}

/// Write `cat`'s file to `out` (at its start) without holding it: a placeholder header, the
/// body serialized through a buffer of `CHUNK` bytes, then the body read back from `out`
/// for its checksum (seeded with its length, so known only once the body is written: a
/// read from the page cache, far cheaper than serializing twice), then the real header.
/// Returns the header. Issue 10: the save serialized the whole file into one buffer first,
/// as large as the file (tens of MB at 100k sessions), on top of the decoded catalog.
pub fn write_to(mut out: impl Read + Write + Seek, cat: &Catalog) -> std::io::Result<[u8; HEADER]> {
    let mut head = [0u8; HEADER];
    head[..8].copy_from_slice(MAGIC);
    head[8..12].copy_from_slice(&VERSION.to_le_bytes());
    head[12..20].copy_from_slice(&schema().to_le_bytes());
    out.write_all(&head)?;
    let w = std::io::BufWriter::with_capacity(CHUNK, &mut out);
    let mut w = postcard::to_io(cat, w).map_err(std::io::Error::other)?;
    w.flush()?;
    drop(w);
    let len = out.stream_position()? - HEADER as u64;
    out.seek(SeekFrom::Start(HEADER as u64))?;
    let mut s = Sum::new(len);
    let mut buf = vec![0u8; CHUNK];
    let mut seen = 0u64;
    loop {
        let n = fill(&mut out, &mut buf).ok_or_else(|| std::io::Error::other("read back"))?;
        s.add(&buf[..n]);
        seen += n as u64;
        if n < CHUNK {
            break;
        }
    }
    if seen != len {
        return Err(std::io::Error::other(
            "the catalog read back is not what was written",
        ));
    }
    head[20..28].copy_from_slice(&len.to_le_bytes());
    head[28..36].copy_from_slice(&s.finish().to_le_bytes());
    out.seek(SeekFrom::Start(0))?;
    out.write_all(&head)?;
    out.flush()?;
    Ok(head)
}
