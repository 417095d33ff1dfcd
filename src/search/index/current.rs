//! Whether the index on disk already holds exactly the listed sessions, decided without
//! opening it: a warm browser whose index is current never maps the index's files nor holds
//! its session table (issue 10: at 10k sessions those were most of the gap between 28 MB
//! and the 30 MB target). Only the table's numbers and full prints are read, streamed, and
//! dropped once the answer is known. Any doubt (an old schema, an unreadable table, a line
//! it cannot read, a session listed twice) answers "not current": the caller then opens the
//! index and `update` decides, as it always did.

use std::borrow::Borrow;
use std::path::Path;

use super::{Prints, SCHEMA_VERSION, SESSIONS_FILE, VERSION_FILE, session_number, table};
use crate::model::SessionSummary;
use crate::store::Stores;

/// True when `update(rows)` on the index in `dir` would index and drop nothing: every row
/// (but error rows, which are never indexed) is in the table at its current full print, and
/// the table holds no other session.
pub fn is_current<R: Borrow<SessionSummary>>(dir: &Path, rows: &[R], stores: &Stores) -> bool {
    changes(dir, rows, stores).is_some_and(|c| c.changed.is_empty() && c.gone.is_empty())
}

/// What `update(rows)` would do, found without opening the index: the browser hands this
/// to the index's child process (`index_child`) instead of holding a writer itself.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Changes {
    /// Positions in `rows` of the sessions to (re)index.
    pub changed: Vec<usize>,
    /// Indexed sessions no longer listed.
    pub gone: Vec<u64>,
}

/// `None` when the index is of an old schema or its table cannot be read (everything is
/// to be indexed again, into an index rebuilt from nothing).
pub fn changes<R: Borrow<SessionSummary>>(
    dir: &Path,
    rows: &[R],
    stores: &Stores,
) -> Option<Changes> {
    let version = std::fs::read_to_string(dir.join(VERSION_FILE));
    if version.ok().as_deref() != Some(SCHEMA_VERSION) {
        return None;
    }
    let mut prints = table::prints(&dir.join(SESSIONS_FILE))?;
    let mut print = Prints::default();
    let mut out = Changes::default();
    for (i, r) in rows.iter().map(R::borrow).enumerate() {
        if r.error().is_some() {
            continue;
        }
        let sid = session_number(r.store, &r.id);
        // Removed as it is matched, so a session listed twice is indexed again, and what
        // is left at the end is what `update` would drop. The same print `update`
        // compares (`fresh::changed`).
        let full = print.of(&r.path(), &stores.store_for(r).state_file(&r.id));
        if prints.remove(&sid) != Some(full) {
            out.changed.push(i);
        }
    }
    out.gone = prints.into_keys().collect();
    Some(out)
}
