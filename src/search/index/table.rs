//! The index's session table (`sessions.tsv`): for every indexed session its number, the
//! prints it was indexed at (`fresh::Print`), and what `spool search` prints and filters on (title,
//! last activity, archived, empty, cwd), so a search over unchanged stores lists nothing.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use super::fresh::Print;
use crate::error::{Error, Result};
use crate::model::{SessionSummary, StoreKind, from_millis};
use crate::search::Key;

/// One indexed session.
#[derive(Clone, Debug)]
pub struct Known {
    pub key: Key,
    pub fp: Print,
    /// The listing fields search needs, as a summary (the rest left blank).
    pub row: SessionSummary,
}

impl Known {
    pub fn new(fp: Print, s: &SessionSummary) -> Known {
        let mut row = SessionSummary::new(s.store, s.id.clone(), s.path.clone());
        row.title = s.title.clone();
        row.updated_at = s.last_activity();
        row.archived = s.archived;
        row.has_user_message = s.has_user_message;
        row.cwd = s.cwd.clone();
        Known {
            key: (s.store, s.id.clone()),
            fp,
            row,
        }
    }
}

/// Tabs and newlines would break a line of the table.
fn field(s: &str) -> String {
    s.replace(['\t', '\n', '\r'], " ")
}

pub fn read(path: &Path) -> HashMap<u64, Known> {
    let Ok(text) = std::fs::read_to_string(path) else {
        return HashMap::new();
    };
    text.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.splitn(10, '\t').collect();
            let [
                sid,
                full,
                quick,
                store,
                flags,
                updated,
                id,
                cwd,
                file,
                title,
            ] = f.as_slice()
            else {
                return None;
            };
            let store = StoreKind::parse(store)?;
            let mut row = SessionSummary::new(store, *id, PathBuf::from(file));
            row.title = title.to_string();
            row.updated_at = updated.parse().ok().and_then(from_millis);
            row.archived = flags.contains('a');
            row.has_user_message = flags.contains('u');
            row.cwd = (!cwd.is_empty()).then(|| cwd.to_string());
            let known = Known {
                key: (store, id.to_string()),
                fp: Print {
                    full: u64::from_str_radix(full, 16).ok()?,
                    quick: u64::from_str_radix(quick, 16).ok()?,
                },
                row,
            };
            Some((u64::from_str_radix(sid, 16).ok()?, known))
        })
        .collect()
}

/// Written after the commit, atomically: a crash in between only re-indexes next time.
pub fn write(dir: &Path, file: &str, sessions: &HashMap<u64, Known>) -> Result<()> {
    let mut text = String::with_capacity(sessions.len() * 160);
    for (sid, k) in sessions {
        let r = &k.row;
        if r.id.contains(['\t', '\n', '\r']) {
            continue;
        }
        let flags = format!(
            "{}{}-",
            if r.archived { "a" } else { "" },
            if r.has_user_message { "u" } else { "" }
        );
        let updated = r
            .updated_at
            .map_or(String::new(), |t| t.timestamp_millis().to_string());
        text.push_str(&format!(
            "{sid:016x}\t{:016x}\t{:016x}\t{}\t{flags}\t{updated}\t{}\t{}\t{}\t{}\n",
            k.fp.full,
            k.fp.quick,
            r.store,
            r.id,
            field(r.cwd.as_deref().unwrap_or("")),
            field(&r.path.to_string_lossy()),
            field(&r.title),
        ));
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
