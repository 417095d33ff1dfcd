//! Reading and writing the catalog file without holding it: decoded from buffered readers
//! (issue 10: at 100k sessions the file is ~37 MB, and holding it whole while its rows were
//! decoded put that much on top of the rows at the start's peak); written through a summing
//! writer, its header filled in last.
//!
//! The body is each section's postcard bytes in turn, then a table: each section's length
//! and checksum (one little-endian word each), then the section count (one more word). The
//! header's checksum covers the table, and each section's covers its bytes, so every byte of
//! the file is checked, and each section is checked by the thread that decodes it, as its
//! bytes pass. Before, one checksum covered the body and was checked first, on one thread:
//! the whole file read twice, and at 100k sessions ~25 ms that nothing overlapped, before
//! the first section could start. The table lets large sections decode on threads of their
//! own: decoding was one thread's ~155 ms of CPU at 100k sessions, and while the stores'
//! surveys ran beside it on several threads it got a share of the cores small enough to be
//! the last thing a warm `spool list` waited for.
//!
//! A damaged section is decoded before its checksum fails: decoding untrusted bytes is
//! bounded (strings go through the section-sized scratch, entries are allocated at most
//! `wire::AHEAD` ahead), and nothing decoded is used unless every section's checksum holds.

use std::io::{BufReader, Read, Seek, SeekFrom, Write};
use std::path::Path;

use super::wire::Gather;
use super::{CAP, Catalog, HEADER, MAGIC, Running, Section, VERSION, checksum, schema};
use crate::store::positional::{Range, Source};
use crate::store::regular;

/// How much of the file is read (and written) at a time.
pub(super) const CHUNK: usize = 1 << 16;
/// A section shorter than this is decoded on the thread reading the file: a thread costs
/// more than decoding it (the patch log and the tests load many tiny catalogs).
const OWN_THREAD: u64 = 256 << 10;

/// The catalog at `path` and its header's checksum (the log's base), or `None` for anything
/// but an intact file of this version and schema, as `decode` decides for bytes.
pub fn read<L: Gather + Send>(path: &Path) -> Option<(Catalog<L>, u64)> {
    let f = regular::open(path, regular::Links::Refuse).ok()?;
    let size = f.metadata().ok()?.len();
    read_from(&f, size)
}

/// `read` from any source of `size` bytes: the file, or `decode`'s bytes, so that the tests
/// of damaged catalogs go through the one check the warm start uses.
pub fn read_from<S: Source + ?Sized, L: Gather + Send>(
    src: &S,
    size: u64,
) -> Option<(Catalog<L>, u64)> {
    let (spans, sum) = spans(src, size)?;
    let sections = decode_sections(src, &spans)?;
    Some((Catalog { sections }, sum))
}

/// The catalog file at `path` whole, and where each section's bytes are in it with the
/// checksum they must have (`holds`): for reading the rows in place (`view`). `None` where
/// `read` would refuse the file before its sections.
pub fn whole(path: &Path) -> Option<(Mapped, Vec<Placed>)> {
    let f = regular::open(path, regular::Links::Refuse).ok()?;
    let size = f.metadata().ok()?.len();
    if size > CAP || size < HEADER as u64 {
        return None;
    }
    let buf = Mapped::of(&f, usize::try_from(size).ok()?)?;
    let (spans, _) = spans(&buf[..], size)?;
    let at = |x: u64| usize::try_from(x).ok();
    let ranges = (spans.iter())
        .map(|s| Some((at(s.at)?..at(s.at + s.len)?, s.sum)))
        .collect::<Option<Vec<_>>>()?;
    Some((buf, ranges))
}

/// A file's bytes mapped read-only from the page cache. Issue 10: reading the 37 MB
/// catalog of 100k sessions into a buffer cost ~9,000 page faults, each zeroing a fresh
/// page the copy then overwrote (~20 ms of a warm `spool list`'s CPU); mapped, the same
/// bytes cost ~600 faults and no copy (~3 ms). The catalog is only ever replaced by a
/// rename (`store::atomic`), never rewritten or truncated in place, so the inode mapped
/// keeps its bytes while it is read, whatever another spool saves meanwhile.
pub struct Mapped {
    at: *const u8,
    len: usize,
}

// SAFETY: a private read-only mapping that nothing writes: shared reads from any thread.
unsafe impl Send for Mapped {}
// SAFETY: as above; `&Mapped` only hands out `&[u8]`.
unsafe impl Sync for Mapped {}

impl Mapped {
    /// The first `len` bytes of `f` (`len` > 0, at most the file's size), or `None` when
    /// the kernel will not map them.
    fn of(f: &std::fs::File, len: usize) -> Option<Mapped> {
        use std::os::fd::AsRawFd;
        if len == 0 {
            return None;
        }
        // SAFETY: a fresh private read-only mapping of an open file, no address hint.
        let at = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ,
                libc::MAP_PRIVATE,
                f.as_raw_fd(),
                0,
            )
        };
        (at != libc::MAP_FAILED).then_some(Mapped {
            at: at.cast_const().cast(),
            len,
        })
    }
}

impl std::ops::Deref for Mapped {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        // SAFETY: `len` mapped bytes, readable while `self` lives (unmapped only by Drop).
        unsafe { std::slice::from_raw_parts(self.at, self.len) }
    }
}

impl Drop for Mapped {
    fn drop(&mut self) {
        // SAFETY: the mapping `of` made, unmapped once; no borrow of it outlives `self`.
        unsafe { libc::munmap(self.at.cast_mut().cast(), self.len) };
    }
}

/// Where a section's bytes are in the file, and their checksum.
pub type Placed = (std::ops::Range<usize>, u64);

/// Whether a section's bytes have the checksum its table entry names.
pub fn holds(bytes: &[u8], sum: u64) -> bool {
    let mut r = Running::new();
    r.add(bytes);
    r.finish() == sum
}

/// The header's checks and the table's spans, with the table's checksum.
pub(super) fn spans<S: Source + ?Sized>(src: &S, size: u64) -> Option<(Vec<Span>, u64)> {
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
    Some((table(src, size, sum)?, sum))
}

/// One section's place in the body and the checksum of its bytes.
#[derive(Clone, Copy)]
pub(super) struct Span {
    pub at: u64,
    pub len: u64,
    pub sum: u64,
}

/// Where each section's bytes are, from the table at the body's end: `None` unless the
/// table's checksum is `sum` and the sections and the table fill the body exactly.
fn table<S: Source + ?Sized>(src: &S, size: u64, sum: u64) -> Option<Vec<Span>> {
    let body = size - HEADER as u64;
    let mut w = [0u8; 8];
    if body < 8 {
        return None;
    }
    read_exact_at(src, size - 8, &mut w)?;
    let n = u64::from_le_bytes(w);
    let table_len = n.checked_mul(16)?.checked_add(8)?;
    let table_at = body.checked_sub(table_len)? + HEADER as u64;
    let mut t = vec![0u8; usize::try_from(table_len).ok()?];
    read_exact_at(src, table_at, &mut t)?;
    if checksum(&t) != sum {
        return None;
    }
    let mut at = HEADER as u64;
    let mut spans = Vec::with_capacity(t.len() / 16);
    for e in t[..t.len() - 8].chunks_exact(16) {
        let len = u64::from_le_bytes(e[..8].try_into().ok()?);
        let sum = u64::from_le_bytes(e[8..].try_into().ok()?);
        spans.push(Span { at, len, sum });
        at = at.checked_add(len)?;
    }
    (at == table_at).then_some(spans)
}

/// Every section, the large ones each on a thread of its own (the first section read on
/// this one); `None` if any fails to decode or does not end where the table says.
fn decode_sections<S: Source + ?Sized, L: Gather + Send>(
    src: &S,
    spans: &[Span],
) -> Option<Vec<Section<L>>> {
    let (alone, here): (Vec<usize>, Vec<usize>) =
        (0..spans.len()).partition(|&i| i > 0 && spans[i].len >= OWN_THREAD);
    let mut out: Vec<Option<Section<L>>> = (0..spans.len()).map(|_| None).collect();
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

/// One section from its span of the body, `None` unless its bytes' checksum is the table's.
fn section<S: Source + ?Sized, L: Gather>(src: &S, span: Span) -> Option<Section<L>> {
    let Span { at, len, sum } = span;
    // postcard copies each string through this scratch space before it allocates it, and
    // only ever uses its start (the longest single field) as long as every text is asked
    // for as a `string` (`model::wire::arc_str`); it must be as long as the section only
    // for a section that is one field. Pages never written are never resident.
    let mut scratch = Scratch::new(usize::try_from(len).ok()?)?;
    let range = Summed {
        inner: Range::new(src, at, at + len),
        sum: Running::new(),
    };
    let reader = BufReader::with_capacity(CHUNK, range);
    let (s, (reader, _)) = postcard::from_io::<Section<L>, _>((reader, scratch.bytes())).ok()?;
    // Every byte of the span is the section's (a shorter one would mean a mislaid table),
    // and every byte passed through the sum.
    if !reader.buffer().is_empty() || reader.get_ref().inner.at != at + len {
        return None;
    }
    (reader.into_inner().sum.finish() == sum).then_some(s)
}

/// A reader that sums the bytes read through it (a section's checksum, as it decodes).
pub(super) struct Summed<R: Read> {
    pub inner: R,
    pub sum: Running,
}

impl<R: Read> Read for Summed<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.sum.add(&buf[..n]);
        Ok(n)
    }
}

/// Fill `buf` from `src` at `at`; `None` if the source ends first or fails.
fn read_exact_at<S: Source + ?Sized>(src: &S, at: u64, buf: &mut [u8]) -> Option<()> {
    let to = at.checked_add(buf.len() as u64)?;
    let mut range = Range::new(src, at, to);
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
pub(super) struct Scratch {
    at: *mut u8,
    len: usize,
}

impl Scratch {
    pub(super) fn new(len: usize) -> Option<Scratch> {
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

    pub(super) fn bytes(&mut self) -> &mut [u8] {
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

/// A writer that sums the bytes passed through it (a section's length and checksum in the
/// table).
struct Counted<W: Write> {
    out: W,
    sum: Running,
}

impl<W: Write> Write for Counted<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let k = self.out.write(buf)?;
        self.sum.add(&buf[..k]);
        Ok(k)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}

/// Write `cat`'s file to `out` (at its start) without holding it: a placeholder header, the
/// sections serialized through a buffer of `CHUNK` bytes, each summed as it goes out, then
/// the table, then the real header. Returns the header. Issue 10: the save serialized the
/// whole file into one buffer first, as large as the file (tens of MB at 100k sessions), on
/// top of the decoded catalog; and until each section had its own checksum, the body was
/// read back after it was written for the one checksum that covered it.
pub fn write_to(out: impl Write + Seek, cat: &Catalog) -> std::io::Result<[u8; HEADER]> {
    write_each(out, cat.sections.len(), &mut |i, w| {
        postcard::to_io(&cat.sections[i], w).map_err(std::io::Error::other)?;
        Ok(())
    })
}

/// `write_to` with each of the `n` sections' bytes written by `put(i, ..)` (a fold writes
/// sections it never holds whole, `fold`).
pub(super) fn write_each(
    mut out: impl Write + Seek,
    n: usize,
    put: &mut dyn FnMut(usize, &mut dyn Write) -> std::io::Result<()>,
) -> std::io::Result<[u8; HEADER]> {
    let mut head = [0u8; HEADER];
    head[..8].copy_from_slice(MAGIC);
    head[8..12].copy_from_slice(&VERSION.to_le_bytes());
    head[12..20].copy_from_slice(&schema().to_le_bytes());
    out.write_all(&head)?;
    let mut w = std::io::BufWriter::with_capacity(CHUNK, &mut out);
    // Each section in turn, its length and checksum taken as it goes out; then the table.
    let mut table = Vec::with_capacity(16 * n + 8);
    for i in 0..n {
        let mut counted = Counted {
            out: &mut w,
            sum: Running::new(),
        };
        put(i, &mut counted)?;
        table.extend_from_slice(&counted.sum.len.to_le_bytes());
        table.extend_from_slice(&counted.sum.finish().to_le_bytes());
    }
    table.extend_from_slice(&(n as u64).to_le_bytes());
    w.write_all(&table)?;
    w.flush()?;
    drop(w);
    let len = out.stream_position()? - HEADER as u64;
    head[20..28].copy_from_slice(&len.to_le_bytes());
    head[28..36].copy_from_slice(&checksum(&table).to_le_bytes());
    out.seek(SeekFrom::Start(0))?;
    out.write_all(&head)?;
    out.flush()?;
    Ok(head)
}
