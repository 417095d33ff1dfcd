//! The index's session table (`sessions.tsv`): for every indexed session its number, the
//! prints it was indexed at (`fresh::Print`), and what `spool search` prints and filters on (title,
//! last activity, archived, empty, cwd), so a search over unchanged stores lists nothing.
//!
//! Reading it is the warm `spool search`'s largest cost after freshness, so a row is kept as
//! its line's text and parsed into a `SessionSummary` only when a query's top sessions are
//! filtered and printed (about 20 of 10,000).
//!
//! The browser's two index threads (one writes, one searches) share one `Table` rather than
//! each reading the file: at 10k sessions a copy is 3.4 MB of the 30 MB the list may use
//! (issue 10). The searcher re-reads the file only when another process wrote it.

use std::collections::HashMap;
use std::io::Write;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::SystemTime;

use super::fresh::Print;
use crate::error::{Error, Result};
use crate::model::{SessionSummary, StoreKind, from_millis};

/// One indexed session: its prints and, unparsed, the rest of its table line
/// (`store flags updated id cwd file title`, tab-separated), as a range of the table's
/// text (no allocation per row when the table is read).
#[derive(Clone, Debug)]
pub struct Known {
    pub fp: Print,
    text: Arc<str>,
    line: Range<u32>,
}

/// Tabs and newlines would break a line of the table.
fn field(s: &str) -> String {
    s.replace(['\t', '\n', '\r'], " ")
}

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
            field(&s.path.to_string_lossy()),
            field(&s.title),
        );
        let len = line.len() as u32;
        Some(Known {
            fp,
            text: line.into(),
            line: 0..len,
        })
    }

    fn line(&self) -> &str {
        &self.text[self.line.start as usize..self.line.end as usize]
    }

    /// The listing fields search needs, as a summary (the rest left blank).
    pub fn row(&self) -> Option<SessionSummary> {
        let f: Vec<&str> = self.line().splitn(7, '\t').collect();
        let [store, flags, updated, id, cwd, file, title] = f.as_slice() else {
            return None;
        };
        let store = StoreKind::parse(store)?;
        let mut row = SessionSummary::new(store, *id, PathBuf::from(file));
        row.title = title.to_string().into();
        row.updated_at = updated.parse().ok().and_then(from_millis);
        row.archived = flags.contains('a');
        row.has_user_message = flags.contains('u');
        row.cwd = (!cwd.is_empty()).then(|| crate::model::Shared::new(cwd));
        Some(row)
    }
}

/// Bytes before a line's rest: three fields of 16 hex digits, each followed by a tab.
const PREFIX: usize = 51;

/// The table as written by `write`; lines it cannot read are left out (re-indexed).
pub fn read(path: &Path) -> HashMap<u64, Known> {
    let Ok(text) = std::fs::read_to_string(path) else {
        return HashMap::new();
    };
    let text: Arc<str> = text.into();
    if text.len() > u32::MAX as usize {
        return HashMap::new();
    }
    // Sized by the lines there are: a guess from the bytes (one per 200) doubled the
    // table's buckets at 100k sessions (12.6 MB of empty slots instead of 6.3, issue 10).
    let lines = memchr::memchr_iter(b'\n', text.as_bytes()).count() + 1;
    let mut out = HashMap::with_capacity(lines);
    let mut start = 0;
    while start < text.len() {
        let end =
            memchr::memchr(b'\n', &text.as_bytes()[start..]).map_or(text.len(), |n| start + n);
        let l = &text.as_bytes()[start..end];
        if let Some((sid, fp)) = prefix(l) {
            let known = Known {
                fp,
                text: text.clone(),
                line: (start + PREFIX) as u32..end as u32,
            };
            out.insert(sid, known);
        }
        start = end + 1;
    }
    out
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
    // A line longer than this holds a title no session has; skipped, it is re-indexed.
    crate::store::lines::for_each_line(f, 1 << 20, |l| {
        if let crate::store::lines::RawLine::Line { bytes, .. } = l
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
    stamp: Option<(u64, SystemTime)>,
}

fn stamp_of(path: &Path) -> Option<(u64, SystemTime)> {
    let m = std::fs::metadata(path).ok()?;
    Some((m.len(), m.modified().ok()?))
}

impl Table {
    /// The table in `path` (empty when it cannot be read).
    pub fn load(path: &Path) -> Table {
        let stamp = stamp_of(path);
        let map = read(path);
        Table(Arc::new(RwLock::new(Shared { map, stamp })))
    }

    /// Read access; a poisoned lock (a panic elsewhere) still holds a whole map.
    pub fn get(&self) -> RwLockReadGuard<'_, Shared> {
        self.0.read().unwrap_or_else(|e| e.into_inner())
    }

    pub fn get_mut(&self) -> RwLockWriteGuard<'_, Shared> {
        self.0.write().unwrap_or_else(|e| e.into_inner())
    }

    /// Write the table to `dir/file` and remember its stamp.
    pub fn save(&self, dir: &Path, file: &str) -> Result<()> {
        // Written under the read lock: searches go on meanwhile.
        write(dir, file, &self.get().map)?;
        self.get_mut().stamp = stamp_of(&dir.join(file));
        Ok(())
    }

    /// Whether both are the same table (tests).
    #[cfg(test)]
    pub fn same(&self, other: &Table) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }

    /// Re-read `path` if another process wrote it since this process last read or wrote it.
    pub fn reload_if_changed(&self, path: &Path) {
        let now = stamp_of(path);
        if now.is_some() && now == self.get().stamp {
            return;
        }
        let map = read(path);
        let mut t = self.get_mut();
        t.map = map;
        t.stamp = now;
    }
}

/// Written after the commit, atomically: a crash in between only re-indexes next time.
pub fn write(dir: &Path, file: &str, sessions: &HashMap<u64, Known>) -> Result<()> {
    let mut text = String::with_capacity(sessions.len() * 200);
    for (sid, k) in sessions {
        use std::fmt::Write as _;
        let _ = writeln!(
            text,
            "{sid:016x}\t{:016x}\t{:016x}\t{}",
            k.fp.full,
            k.fp.quick,
            k.line()
        );
    }
    let path = dir.join(file);
    let mut tmp =
        tempfile::NamedTempFile::new_in(dir).map_err(|e| Error::io("writing", &path, e))?;
    tmp.write_all(text.as_bytes())
        .map_err(|e| Error::io("writing", &path, e))?;
    tmp.persist(&path)
        .map_err(|e| Error::io("writing", &path, e.error))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The table read back is sized by its lines: a guess from its bytes left half of a big
    /// table's buckets empty (issue 10), and every line written is read back.
    #[test]
    fn a_read_table_is_sized_by_its_lines() {
        let d = tempfile::tempdir().unwrap();
        let mut map = HashMap::new();
        for i in 0..1700u64 {
            let mut s = SessionSummary::new(
                StoreKind::Loom,
                format!("20260314-{i:06}"),
                format!("/home/someone/.loom/sessions/20260314-{i:06}.jsonl"),
            );
            s.title = format!("a fairly long title of a session about module {i} and tests").into();
            s.cwd = Some("/home/someone/projects/a-project-with-a-long-name".into());
            let fp = Print { full: i, quick: i };
            map.insert(i, Known::new(fp, &s).unwrap());
        }
        write(d.path(), "t.tsv", &map).unwrap();
        let back = read(&d.path().join("t.tsv"));
        assert_eq!(back.len(), 1700);
        // 1,700 lines fit 2,048 buckets; the guess (about 2,000 from 400 KB) took 4,096.
        assert!(back.capacity() < 2 * 1700, "capacity {}", back.capacity());
        assert_eq!(&*back[&7].row().unwrap().id, "20260314-000007");
    }
}
