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
    let version = std::fs::read_to_string(dir.join(VERSION_FILE));
    if version.ok().as_deref() != Some(SCHEMA_VERSION) {
        return false;
    }
    let Some(mut prints) = table::prints(&dir.join(SESSIONS_FILE)) else {
        return false;
    };
    let mut print = Prints::default();
    for r in rows.iter().map(R::borrow).filter(|r| r.error().is_none()) {
        let sid = session_number(r.store, &r.id);
        // Removed as it is matched, so a session listed twice is a doubt, and what is left
        // at the end is what `update` would drop.
        let Some(indexed) = prints.remove(&sid) else {
            return false;
        };
        // The same print `update` compares (`fresh::changed`).
        if indexed != print.of(r.path(), &stores.store_for(r).state_file(&r.id)) {
            return false;
        }
    }
    prints.is_empty()
}
