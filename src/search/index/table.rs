//! The index's session table (`sessions.tsv`): for every indexed session its number, the
//! prints it was indexed at (`fresh::Print`), and what `spool search` prints and filters on (title,
//! last activity, archived, empty, cwd), so a search over unchanged stores lists nothing.
//!
//! In memory a session is its prints and where its line is in the file: the lines stay on
//! disk and a row is read (one `pread`) and parsed into a `SessionSummary` only when a
//! query's top sessions are filtered and printed (about 20 of 10,000). Holding the file's
//! text was 27 MB at 100k sessions, and writing it built a second copy (issue 10: a warm
//! start whose index was stale peaked at 150 MB). Sessions indexed since the last write
//! hold their line until the next write, which streams the old file into the new one.
//!
//! The browser's two index threads (one writes, one searches) share one `Table` rather than
//! each reading the file. The searcher re-reads the file only when another process wrote it.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::SystemTime;

use super::fresh::Print;
use crate::error::{Error, Result};
use crate::model::{SessionSummary, StoreKind, from_millis};
use crate::store::lines::{RawLine, for_each_line};
use crate::store::positional::Range;

/// One indexed session: its prints and where the rest of its table line
/// (`store flags updated id cwd file title`, tab-separated) is.
#[derive(Clone, Debug)]
pub struct Known {
    pub fp: Print,
    line: Line,
}

#[derive(Clone, Debug, PartialEq)]
enum Line {
    /// In the table's file as last read or written here: the rest's byte range.
    At { start: u32, len: u32 },
    /// Indexed since: written to the file at the next save.
    New(Box<str>),
}

/// Tabs and newlines would break a line of the table.
fn field(s: &str) -> String {
    s.replace(['\t', '\n', '\r'], " ")
}

/// A line longer than this holds a title no session has; skipped, it is re-indexed.
const LINE_CAP: usize = 1 << 20;

impl Known {
    /// `None` for an id a line cannot hold (a tab or newline in it): never indexed.
    pub fn new(fp: Print, s: &SessionSummary) -> Option<Known> {
        if s.id.contains(['\t', '\n', '\r']) {
            return None;
        }
        let flags = format!(
            "{}{}-",
            if s.archived { "a" } else { "" },
            if s.has_user_message { "u" } else { "" }
        );
        let updated = s
            .last_activity()
            .map_or(String::new(), |t| t.timestamp_millis().to_string());
        let line = format!(
            "{}\t{flags}\t{updated}\t{}\t{}\t{}\t{}",
            s.store,
            s.id,
            field(s.cwd.as_deref().unwrap_or("")),
            field(&s.path().to_string_lossy()),
            field(s.title()),
        );
        Some(Known {
            fp,
            line: Line::New(line.into()),
        })
    }
}

/// The listing fields search needs from a line's rest, as a summary (the rest left blank).
fn row_of(line: &str) -> Option<SessionSummary> {
    let f: Vec<&str> = line.splitn(7, '\t').collect();
    let [store, flags, updated, id, cwd, file, title] = f.as_slice() else {
        return None;
    };
    let store = StoreKind::parse(store)?;
    let mut row = SessionSummary::new(store, *id, PathBuf::from(file));
    row.set_title(title);
    row.updated_at = updated.parse().ok().and_then(from_millis);
    row.archived = flags.contains('a');
    row.has_user_message = flags.contains('u');
    row.cwd = (!cwd.is_empty()).then(|| crate::model::Shared::new(cwd));
    Some(row)
}

/// Bytes before a line's rest: three fields of 16 hex digits, each followed by a tab.
const PREFIX: usize = 51;

/// The table in `file`, as (session, prints, where the rest is), streamed: the lines it
/// cannot read are left out (re-indexed). `None` when the file cannot be read whole.
fn scan(file: &File) -> Option<HashMap<u64, Known>> {
    if file.metadata().ok()?.len() > u32::MAX as u64 {
        return None;
    }
    // Sized by the lines there are (a first pass counts them): a guess from the bytes
    // doubled the map's buckets at 100k sessions, and growing it held both sizes at once.
    let mut lines = 0;
    let mut buf = vec![0; 64 * 1024];
    let mut r = Range::from(file, 0);
    loop {
        match std::io::Read::read(&mut r, &mut buf) {
            Ok(0) => break,
            Ok(n) => lines += memchr::memchr_iter(b'\n', &buf[..n]).count(),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return None,
        }
    }
    drop(buf);
    let mut out = HashMap::with_capacity(lines + 1);
    for_each_line(Range::from(file, 0), LINE_CAP, |l| {
        if let RawLine::Line { start, bytes, .. } = l
            && let Some((sid, fp)) = prefix(bytes)
        {
            out.insert(
                sid,
                Known {
                    fp,
                    line: line_at(start, bytes),
                },
            );
        }
    })
    .ok()?;
    Some(out)
}

/// Where the rest of the line read at `start` is.
fn line_at(start: u64, bytes: &[u8]) -> Line {
    Line::At {
        start: (start as usize + PREFIX) as u32,
        len: (bytes.len() - PREFIX) as u32,
    }
}

/// A line's session number and prints, `None` for a line the table cannot read.
fn prefix(l: &[u8]) -> Option<(u64, Print)> {
    let hex = |at: usize| {
        std::str::from_utf8(&l[at..at + 16])
            .ok()
            .and_then(|s| u64::from_str_radix(s, 16).ok())
    };
    if l.len() > PREFIX && l[16] == b'\t' && l[33] == b'\t' && l[50] == b'\t' {
        return Some((
            hex(0)?,
            Print {
                full: hex(17)?,
                quick: hex(34)?,
            },
        ));
    }
    None
}

/// Each session's number and full print, streamed from the table (the rest of each line is
/// not kept): what deciding whether the index must be opened at all needs. `None` when the
/// file cannot be read.
pub fn prints(path: &Path) -> Option<HashMap<u64, u64>> {
    let f = std::fs::File::open(path).ok()?;
    let mut out = HashMap::new();
    for_each_line(f, LINE_CAP, |l| {
        if let RawLine::Line { bytes, .. } = l
            && let Some((sid, fp)) = prefix(bytes)
        {
            out.insert(sid, fp.full);
        }
    })
    .ok()?;
    Some(out)
}

/// The table in memory, shared by the handles of one process (`TextIndex::open_sharing`),
/// with the file's (length, mtime) as last read or written here.
#[derive(Clone, Default)]
pub struct Table(Arc<RwLock<Shared>>);

#[derive(Default)]
pub struct Shared {
    pub map: HashMap<u64, Known>,
    /// The file the `Line::At` ranges are in: the one last read or written here, kept open
    /// (another process replaces the path, never this file's bytes).
    file: Option<File>,
    stamp: Option<(u64, SystemTime)>,
}

fn stamp_of(m: &std::fs::Metadata) -> Option<(u64, SystemTime)> {
    Some((m.len(), m.modified().ok()?))
}

impl Shared {
    /// The listing row of session `sid` (from its line in the file, or its new line).
    pub fn row(&self, sid: u64) -> Option<SessionSummary> {
        match &self.map.get(&sid)?.line {
            Line::New(l) => row_of(l),
            Line::At { start, len } => {
                let mut buf = vec![0; *len as usize];
                self.file
                    .as_ref()?
                    .read_exact_at(&mut buf, u64::from(*start))
                    .ok()?;
                row_of(std::str::from_utf8(&buf).ok()?)
            }
        }
    }

    /// Read `path` (an empty table when it cannot be read).
    fn read(path: &Path) -> Shared {
        let Ok(file) = File::open(path) else {
            return Shared::default();
        };
        let stamp = file.metadata().ok().as_ref().and_then(stamp_of);
        match scan(&file) {
            Some(map) => Shared {
                map,
                file: Some(file),
                stamp,
            },
            None => Shared {
                stamp,
                ..Shared::default()
            },
        }
    }
}

impl Table {
    /// The table in `path` (empty when it cannot be read).
    pub fn load(path: &Path) -> Table {
        Table(Arc::new(RwLock::new(Shared::read(path))))
    }

    /// Read access; a poisoned lock (a panic elsewhere) still holds a whole map.
    pub fn get(&self) -> RwLockReadGuard<'_, Shared> {
        self.0.read().unwrap_or_else(|e| e.into_inner())
    }

    pub fn get_mut(&self) -> RwLockWriteGuard<'_, Shared> {
        self.0.write().unwrap_or_else(|e| e.into_inner())
    }

    /// Write the table to `dir/file` and remember its stamp. Only the thread that changes
    /// the map saves it, so the map read here is still the map when the new places are
    /// recorded.
    pub fn save(&self, dir: &Path, file: &str) -> Result<()> {
        // Written under the read lock: searches go on meanwhile.
        let (new, places) = write(dir, file, &self.get())?;
        let mut t = self.get_mut();
        let mut placed = 0;
        for &(sid, start, len) in &places {
            if let Some(k) = t.map.get_mut(&sid) {
                k.line = Line::At { start, len };
                placed += 1;
            }
        }
        // Every entry has a line in the new file, unless the old file could not be read
        // back whole: those left out are dropped (re-indexed by the next pass).
        if placed != t.map.len() {
            let placed: std::collections::HashSet<u64> = places.iter().map(|p| p.0).collect();
            t.map.retain(|sid, _| placed.contains(sid));
        }
        t.stamp = new.metadata().ok().as_ref().and_then(stamp_of);
        t.file = Some(new);
        Ok(())
    }

    /// Whether both are the same table (tests).
    #[cfg(test)]
    pub fn same(&self, other: &Table) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }

    /// Re-read `path` if another process wrote it since this process last read or wrote it.
    pub fn reload_if_changed(&self, path: &Path) {
        let now = std::fs::metadata(path).ok().as_ref().and_then(stamp_of);
        if now.is_some() && now == self.get().stamp {
            return;
        }
        *self.get_mut() = Shared::read(path);
    }
}

/// Where a session's rest was written: (session, start, length).
type Places = Vec<(u64, u32, u32)>;

/// Written after the commit, atomically: a crash in between only re-indexes next time. The
/// lines already in the old file are copied from it in its order, streamed (their prints
/// from the map, which a quick print may have changed), then the new ones; returns the new
/// file, open, and where each line's rest is in it.
fn write(dir: &Path, file: &str, t: &Shared) -> Result<(File, Places)> {
    let path = dir.join(file);
    let err = |e| Error::io("writing", &path, e);
    let tmp = tempfile::NamedTempFile::new_in(dir).map_err(err)?;
    let mut out = BufWriter::with_capacity(64 * 1024, tmp.as_file());
    let mut places: Places = Vec::with_capacity(t.map.len());
    let mut at: u64 = 0;
    let mut put = |out: &mut BufWriter<&File>, sid: u64, fp: Print, rest: &[u8]| {
        let head = format!("{sid:016x}\t{:016x}\t{:016x}\t", fp.full, fp.quick);
        out.write_all(head.as_bytes())?;
        out.write_all(rest)?;
        out.write_all(b"\n")?;
        let start = at + PREFIX as u64;
        at = start + rest.len() as u64 + 1;
        if at > u32::MAX as u64 {
            return Err(std::io::Error::other("the session table is over 4 GB"));
        }
        places.push((sid, start as u32, rest.len() as u32));
        Ok(())
    };
    if let Some(old) = &t.file {
        let mut failed = None;
        for_each_line(Range::from(old, 0), LINE_CAP, |l| {
            let RawLine::Line { start, bytes, .. } = l else {
                return;
            };
            let Some((sid, _)) = prefix(bytes) else {
                return;
            };
            // Still this session's line (not replaced by a new one, nor dropped).
            if let Some(k) = t.map.get(&sid)
                && k.line == line_at(start, bytes)
                && failed.is_none()
                && let Err(e) = put(&mut out, sid, k.fp, &bytes[PREFIX..])
            {
                failed = Some(e);
            }
        })
        .map_err(err)?;
        if let Some(e) = failed {
            return Err(err(e));
        }
    }
    for (sid, k) in &t.map {
        if let Line::New(l) = &k.line {
            put(&mut out, *sid, k.fp, l.as_bytes()).map_err(err)?;
        }
    }
    out.flush().map_err(err)?;
    drop(out);
    let f = tmp.persist(&path).map_err(|e| err(e.error))?;
    Ok((f, places))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary(i: u64) -> SessionSummary {
        let mut s = SessionSummary::new(
            StoreKind::Loom,
            format!("20260314-{i:06}"),
            format!("/home/someone/.loom/sessions/20260314-{i:06}.jsonl"),
        );
        s.set_title(format!(
            "a fairly long title of a session about module {i} and tests"
        ));
        s.cwd = Some("/home/someone/projects/a-project-with-a-long-name".into());
        s
    }

    /// A table of `n` new sessions (numbered 0..n), saved in `dir`.
    fn saved(dir: &Path, n: u64) -> Table {
        let t = Table::default();
        for i in 0..n {
            let fp = Print { full: i, quick: i };
            t.get_mut()
                .map
                .insert(i, Known::new(fp, &summary(i)).unwrap());
        }
        t.save(dir, "t.tsv").unwrap();
        t
    }

    /// The table read back is sized by its lines: a guess from its bytes left half of a big
    /// table's buckets empty (issue 10), and every line written is read back.
    #[test]
    fn a_read_table_is_sized_by_its_lines() {
        let d = tempfile::tempdir().unwrap();
        saved(d.path(), 1700);
        let back = Table::load(&d.path().join("t.tsv"));
        let back = back.get();
        assert_eq!(back.map.len(), 1700);
        // 1,700 lines fit 2,048 buckets; the guess (about 2,000 from 400 KB) took 4,096.
        assert!(
            back.map.capacity() < 2 * 1700,
            "capacity {}",
            back.map.capacity()
        );
        assert_eq!(&*back.row(7).unwrap().id, "20260314-000007");
    }

    /// No session's line is held in memory once the table is read or saved: each is read
    /// from the file when its row is asked for (at 100k sessions the lines were 27 MB,
    /// issue 10), and the rows read so are the rows written.
    #[test]
    fn lines_stay_in_the_file_and_rows_come_back_whole() {
        let d = tempfile::tempdir().unwrap();
        let t = saved(d.path(), 300);
        let loaded = Table::load(&d.path().join("t.tsv"));
        for table in [&t, &loaded] {
            let g = table.get();
            assert!(g.map.values().all(|k| matches!(k.line, Line::At { .. })));
            for i in [0, 1, 150, 299] {
                let want = summary(i);
                let r = g.row(i).unwrap();
                assert_eq!(
                    (&*r.id, r.title(), &r.path()),
                    (&*want.id, want.title(), &want.path())
                );
                assert_eq!(r.cwd.as_deref(), want.cwd.as_deref());
                assert_eq!(g.map[&i].fp, Print { full: i, quick: i });
            }
            assert!(g.row(300).is_none());
        }
    }

    /// A stale table updated in place: a save keeps the unchanged sessions' lines (with a
    /// changed quick print), replaces the re-indexed ones, drops the removed ones and adds
    /// the new ones; the file read again says the same, and rows read after the save come
    /// from the new file.
    #[test]
    fn a_save_streams_the_old_lines_and_writes_the_changes() {
        let d = tempfile::tempdir().unwrap();
        let path = d.path().join("t.tsv");
        let t = saved(d.path(), 200);
        {
            let mut g = t.get_mut();
            g.map.remove(&3);
            g.map.get_mut(&4).unwrap().fp.quick = 44;
            let mut s = summary(5);
            s.set_title("renamed");
            g.map
                .insert(5, Known::new(Print { full: 55, quick: 5 }, &s).unwrap());
            let s = summary(900);
            g.map
                .insert(900, Known::new(Print { full: 9, quick: 9 }, &s).unwrap());
        }
        t.save(d.path(), "t.tsv").unwrap();
        let again = Table::load(&path);
        for table in [&t, &again] {
            let g = table.get();
            assert_eq!(g.map.len(), 200, "one dropped, one added");
            assert!(!g.map.contains_key(&3) && g.row(3).is_none());
            assert_eq!(g.map[&4].fp, Print { full: 4, quick: 44 });
            assert_eq!(g.row(4).unwrap().title(), summary(4).title());
            assert_eq!(g.map[&5].fp.full, 55);
            assert_eq!(g.row(5).unwrap().title(), "renamed");
            assert_eq!(&*g.row(900).unwrap().id, "20260314-000900");
            assert_eq!(&*g.row(199).unwrap().id, "20260314-000199");
        }
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text.lines().count(), 200, "each session once");
    }

    /// Another process replacing the file leaves this table reading its own file (the
    /// ranges it holds are in it) until it reloads.
    #[test]
    fn rows_come_from_the_file_read_until_a_reload() {
        let d = tempfile::tempdir().unwrap();
        let path = d.path().join("t.tsv");
        let t = saved(d.path(), 50);
        let other = tempfile::tempdir().unwrap();
        saved(other.path(), 10);
        std::fs::rename(other.path().join("t.tsv"), &path).unwrap();
        assert_eq!(&*t.get().row(40).unwrap().id, "20260314-000040");
        t.reload_if_changed(&path);
        assert_eq!(t.get().map.len(), 10);
        assert!(t.get().row(40).is_none());
        assert_eq!(&*t.get().row(9).unwrap().id, "20260314-000009");
    }
}
