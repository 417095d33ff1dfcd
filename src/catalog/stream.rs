//! Reading and writing the catalog file without holding it: checked by a streamed checksum,
//! then decoded from buffered readers (issue 10: at 100k sessions the file is ~74 MB, and
//! holding it whole while its rows were decoded put that much on top of the rows at the
//! start's peak); written through a summing buffer, its header filled in last.
//!
//! The body is each section's postcard bytes in turn, then a table of their lengths (one
//! little-endian word each) and the section count (one more word). The table lets large
//! sections decode on threads of their own: decoding was one thread's ~155 ms of CPU at
//! 100k sessions, and while the stores' surveys ran beside it on several threads it got a
//! share of the cores small enough to be the last thing a warm `spool list` waited for.

use std::io::{BufReader, Read, Seek, SeekFrom, Write};
use std::os::unix::fs::FileExt;
use std::path::Path;

use super::{CAP, Catalog, HEADER, MAGIC, Section, Sum, VERSION, schema};
use crate::store::regular;

/// How much of the file is read at a time (a multiple of 8: the checksum mixes words).
const CHUNK: usize = 1 << 16;
/// A section shorter than this is decoded on the thread reading the file: a thread costs
/// more than decoding it (the patch log and the tests load many tiny catalogs).
const OWN_THREAD: u64 = 256 << 10;

/// Bytes read by position, by any number of threads at once: the file, or `decode`'s bytes.
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

/// The bytes `from..to` of a source, read in order (each section's own reader).
struct Range<'a, S: Source + ?Sized> {
    src: &'a S,
    at: u64,
    to: u64,
}

impl<S: Source + ?Sized> Read for Range<'_, S> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let room = usize::try_from(self.to - self.at).unwrap_or(usize::MAX);
        let want = buf.len().min(room);
        if want == 0 {
            return Ok(0);
        }
        let n = self.src.read_at(&mut buf[..want], self.at)?;
        self.at += n as u64;
        Ok(n)
    }
}

/// The catalog at `path` and its body's checksum (the log's base), or `None` for anything
/// but an intact file of this version and schema, as `decode` decides for bytes.
pub fn read(path: &Path) -> Option<(Catalog, u64)> {
    let f = regular::open(path, regular::Links::Refuse).ok()?;
    let size = f.metadata().ok()?.len();
    read_from(&f, size)
}

/// `read` from any source of `size` bytes: the file, or `decode`'s bytes, so that the tests
/// of damaged catalogs go through the one check the warm start uses.
pub fn read_from<S: Source + ?Sized>(src: &S, size: u64) -> Option<(Catalog, u64)> {
    if size > CAP || size < HEADER as u64 {
        return None;
    }
    let mut head = [0u8; HEADER];
    read_exact_at(src, 0, &mut head)?;
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
    let mut body = Range {
        src,
        at: HEADER as u64,
        to: size,
    };
    loop {
        let n = fill(&mut body, &mut buf)?;
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
    let spans = table(src, size)?;
    let sections = decode_sections(src, &spans)?;
    Some((Catalog { sections }, sum))
}

/// Where each section's bytes are, from the table at the body's end: `None` unless the
/// sections and the table fill the body exactly.
fn table<S: Source + ?Sized>(src: &S, size: u64) -> Option<Vec<(u64, u64)>> {
    let body = size - HEADER as u64;
    let mut w = [0u8; 8];
    if body < 8 {
        return None;
    }
    read_exact_at(src, size - 8, &mut w)?;
    let n = u64::from_le_bytes(w);
    let lens_at = (body - 8).checked_sub(n.checked_mul(8)?)? + HEADER as u64;
    let mut lens = vec![0u8; usize::try_from(n * 8).ok()?];
    read_exact_at(src, lens_at, &mut lens)?;
    let mut at = HEADER as u64;
    let mut spans = Vec::with_capacity(lens.len() / 8);
    for l in lens.chunks_exact(8) {
        let l = u64::from_le_bytes(l.try_into().ok()?);
        spans.push((at, l));
        at = at.checked_add(l)?;
    }
    (at == lens_at).then_some(spans)
}

/// Every section, the large ones each on a thread of its own (the first section read on
/// this one); `None` if any fails to decode or does not end where the table says.
fn decode_sections<S: Source + ?Sized>(src: &S, spans: &[(u64, u64)]) -> Option<Vec<Section>> {
    let (alone, here): (Vec<usize>, Vec<usize>) =
        (0..spans.len()).partition(|&i| i > 0 && spans[i].1 >= OWN_THREAD);
    let mut out: Vec<Option<Section>> = (0..spans.len()).map(|_| None).collect();
    std::thread::scope(|scope| {
        let threads: Vec<_> = (alone.iter())
            .map(|&i| (i, scope.spawn(move || section(src, spans[i]))))
            .collect();
        for i in here {
            out[i] = section(src, spans[i]);
        }
        for (i, t) in threads {
            // A decoding thread that panicked is a catalog not read, never a crash.
            out[i] = t.join().ok().flatten();
        }
    });
    out.into_iter().collect()
}

/// One section from its span of the body.
fn section<S: Source + ?Sized>(src: &S, (at, len): (u64, u64)) -> Option<Section> {
    // postcard copies each string through this scratch space before it allocates it, and
    // only ever uses its start (the longest single field); it must be as long as the
    // section only for a section that is one field.
    let mut scratch = Scratch::new(usize::try_from(len).ok()?)?;
    let range = Range {
        src,
        at,
        to: at + len,
    };
    let reader = BufReader::with_capacity(CHUNK, range);
    let (s, (reader, _)) = postcard::from_io::<Section, _>((reader, scratch.bytes())).ok()?;
    // Every byte of the span is the section's: a shorter one would mean a mislaid table.
    (reader.buffer().is_empty() && reader.get_ref().at == at + len).then_some(s)
}

/// Fill `buf` from `src` at `at`; `None` if the source ends first or fails.
fn read_exact_at<S: Source + ?Sized>(src: &S, at: u64, buf: &mut [u8]) -> Option<()> {
    let to = at.checked_add(buf.len() as u64)?;
    let mut range = Range { src, at, to };
    (fill(&mut range, buf)? == buf.len()).then_some(())
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

/// A writer that counts the bytes passed through it (a section's length in the table).
struct Counted<W: Write> {
    out: W,
    n: u64,
}

impl<W: Write> Write for Counted<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let k = self.out.write(buf)?;
        self.n += k as u64;
        Ok(k)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
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
    let mut w = std::io::BufWriter::with_capacity(CHUNK, &mut out);
    // Each section in turn, its length counted as it goes out; then the table.
    let mut lens = Vec::with_capacity(cat.sections.len() + 1);
    for s in &cat.sections {
        let mut counted = Counted { out: &mut w, n: 0 };
        postcard::to_io(s, &mut counted).map_err(std::io::Error::other)?;
        lens.push(counted.n);
    }
    lens.push(cat.sections.len() as u64);
    for l in lens {
        w.write_all(&l.to_le_bytes())?;
    }
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
