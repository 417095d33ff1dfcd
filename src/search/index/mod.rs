//! The full-text index (tantivy) over every message of every session, in spool's cache
//! directory (`<cache dir>/spool/index/<stores>/`), never inside a store.
//!
//! It is a cache: a missing, corrupt or old-schema index is wiped and rebuilt without a word;
//! deleting it loses nothing. `update` re-indexes only the sessions whose fingerprint (files'
//! path, size, mtime; sidecar; collection archive file) changed and drops the sessions that
//! are gone; it runs from any thread and reports progress as (done, total), committing in
//! batches (`write`). `spool search` checks freshness cheaply (`fresh`). One process writes at
//! a time (tantivy's own writer lock); another finds the lock taken and searches what is there.

mod columns;
mod current;
mod docs;
mod fresh;
mod hits;
mod phrase;
mod session_docs;
mod stamps;
mod table;
mod top;
mod write;

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use tantivy::schema::{FAST, Field, NumericOptions, Schema, TEXT};
use tantivy::{Index, IndexReader, ReloadPolicy, TantivyDocument};

pub use current::{Changes, changes, is_current};
pub use docs::{Doc, PART_CAP, Prints, docs, fingerprint, session_number, title_doc};
pub use fresh::Print;
pub use hits::Hit;
use session_docs::each_session_doc;
pub use write::{Batches, Hooks, writers_opened};

use crate::error::{Error, Result};
use crate::model::{SessionSummary, StoreKind};
use crate::store::Stores;

/// Bump when the schema or what goes into a document changes: the old index is rebuilt.
// 6: subagent transcripts are indexed under their parent.
const SCHEMA_VERSION: &str = "spool-index 6\n";
const VERSION_FILE: &str = "spool-schema";
/// The session table (`table`): number, fingerprint and listing fields of each session.
const SESSIONS_FILE: &str = "sessions.tsv";
/// The writer's whole memory budget, set explicitly: tantivy flushes a segment when a
/// thread's share fills, so this bounds memory while building. It counts in the browser's
/// peak RSS (issue 10: ≤ 30 MB at 10k sessions), so it is one thread at tantivy's minimum
/// (15 MB a thread): more, smaller segments, which the merges fold together later.
const WRITER_BUDGET: usize = 16 << 20;
/// tantivy's indexing threads: one, so the budget above is not split below its minimum.
const WRITER_THREADS: usize = 1;
/// Indexing threads (tantivy's) and reading threads (ours): the machines are shared.
const THREADS: usize = 2;

/// The schema's fields.
#[derive(Clone, Copy)]
struct Fields {
    sid: Field,
    message: Field,
    round: Field,
    ord: Field,
    text: Field,
    updated: Field,
}

fn schema() -> (Schema, Fields) {
    let mut b = Schema::builder();
    let f = Fields {
        // Indexed for deletes and `top::only`, with no field norms (a byte per document).
        sid: b.add_u64_field("sid", NumericOptions::default().set_indexed().set_fast()),
        // Nothing is stored: the snippets of the few sessions shown are cut from their
        // files (`hits`), which keeps the index at about a third of the text it indexes.
        message: b.add_u64_field("message", FAST),
        round: b.add_u64_field("round", FAST),
        // The document's place in `docs(session)`, to find its text again.
        ord: b.add_u64_field("ord", FAST),
        text: b.add_text_field("text", TEXT),
        updated: b.add_i64_field("updated", FAST),
    };
    (b.build(), f)
}

/// What `update` did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Freshness {
    /// This process wrote: `indexed` sessions (re)indexed, `removed` dropped.
    Updated { indexed: usize, removed: usize },
    /// Another process holds the writer lock: searches see what it has committed.
    ReadOnly,
}

use table::Table;

/// The open index.
pub struct TextIndex {
    dir: PathBuf,
    index: Index,
    f: Fields,
    reader: IndexReader,
    /// The session table, shared with the other handle of this process (`open_sharing`).
    sessions: Table,
    batches: Batches,
    hooks: Hooks,
    /// Quick prints to record at the next table write (`fresh`).
    requick: Vec<(u64, u64)>,
    /// The fast-field columns searches read, per segment.
    columns: columns::ColumnCache,
}

/// `<cache dir>/spool/index/<hash of the stores' directories>`: one index per set of
/// stores, so `--loop-dir /tmp/corpus` never evicts the user's own sessions.
pub fn default_dir(stores: &Stores) -> Option<PathBuf> {
    let mut dirs: Vec<String> = stores
        .stores
        .iter()
        .map(|s| s.sessions_dir().to_string_lossy().into_owned())
        .collect();
    dirs.sort();
    let n = session_number(StoreKind::Loop, &dirs.join("\n"));
    Some(
        crate::hints::cache_dir()?
            .join("index")
            .join(format!("{n:016x}")),
    )
}

fn index_err(dir: &Path, e: impl std::fmt::Display) -> Error {
    Error::Refused(format!("the search index in {} failed: {e}", dir.display()))
}

impl TextIndex {
    /// Open the index in `dir`, rebuilding it silently (empty, to be filled by `update`)
    /// when it is missing, corrupt or of an old schema.
    pub fn open(dir: &Path) -> Result<TextIndex> {
        if let Some(ix) = Self::try_open(dir) {
            return Ok(ix);
        }
        wipe(dir);
        // Through the demo's gate: an index opened as spool exits must not make the
        // `--demo` copy again.
        crate::demo::create_cache_dir(dir).map_err(|e| Error::io("creating", dir, e))?;
        let (schema, f) = schema();
        let index = match Index::create_in_dir(dir, schema) {
            Ok(i) => i,
            // Another process created it between our look and now: use theirs.
            Err(_) => {
                return Self::try_open(dir).ok_or_else(|| index_err(dir, "cannot create"));
            }
        };
        std::fs::write(dir.join(VERSION_FILE), SCHEMA_VERSION)
            .map_err(|e| Error::io("writing", dir.join(VERSION_FILE), e))?;
        let reader = reader(&index).map_err(|e| index_err(dir, e))?;
        Ok(TextIndex {
            dir: dir.to_path_buf(),
            index,
            f,
            reader,
            sessions: Table::default(),
            batches: Batches::default(),
            hooks: Hooks::default(),
            requick: Vec::new(),
            columns: Default::default(),
        })
    }

    /// A second handle on the index `other` has open (the browser's searcher beside its
    /// writer), sharing its session table instead of reading another copy, and its
    /// directory: tantivy's directory keeps one map of each file, so both readers share
    /// those pages. Opening the directory again mapped every index file twice, and the
    /// pages the kernel maps around each touch counted twice in spool's RSS (at 10k
    /// sessions, about 3 MB of the 30 MB the browser may use).
    pub fn open_sharing(other: &TextIndex) -> Option<TextIndex> {
        Some(TextIndex {
            dir: other.dir.clone(),
            index: other.index.clone(),
            f: other.f,
            reader: reader(&other.index).ok()?,
            sessions: other.sessions.clone(),
            batches: Batches::default(),
            hooks: Hooks::default(),
            requick: Vec::new(),
            columns: Default::default(),
        })
    }

    /// The index as it is, if it is whole and of this schema; never created nor wiped (the
    /// browser's searcher, beside a child that writes).
    pub fn open_existing(dir: &Path) -> Option<TextIndex> {
        Self::try_open(dir)
    }

    /// The index as it is, if it is whole and of this schema, with its table.
    fn try_open(dir: &Path) -> Option<TextIndex> {
        if std::fs::read_to_string(dir.join(VERSION_FILE)).ok()? != SCHEMA_VERSION {
            return None;
        }
        let index = Index::open_in_dir(dir).ok()?;
        let (schema, f) = schema();
        if index.schema() != schema {
            return None;
        }
        let reader = reader(&index).ok()?;
        // Open every segment's files now, so a truncated or deleted one is found here and
        // not in the middle of a search.
        let searcher = reader.searcher();
        for seg in searcher.segment_readers() {
            seg.fast_fields().u64("sid").ok()?;
            seg.inverted_index(f.text).ok()?;
            seg.get_store_reader(1).ok()?;
        }
        Some(TextIndex {
            dir: dir.to_path_buf(),
            index,
            f,
            reader,
            sessions: Table::load(&dir.join(SESSIONS_FILE)),
            batches: Batches::default(),
            hooks: Hooks::default(),
            requick: Vec::new(),
            columns: Default::default(),
        })
    }

    /// Sessions indexed so far.
    pub fn session_count(&self) -> usize {
        self.sessions.get().map.len()
    }

    /// The indexed sessions as listing rows (title, last activity, archived, empty, cwd):
    /// what `spool search` filters and prints without listing the stores again.
    pub fn listed(&self) -> impl Iterator<Item = SessionSummary> + use<> {
        let t = self.sessions.get();
        let rows: Vec<SessionSummary> = t.map.keys().filter_map(|sid| t.row(*sid)).collect();
        rows.into_iter()
    }

    /// Bring the index up to date with `rows` (every listed session of `stores`, as the
    /// browser holds them): index the changed ones, drop the vanished ones.
    /// `progress(done, total)` is called from the indexing threads as sessions are read.
    pub fn update<R: std::borrow::Borrow<SessionSummary>>(
        &mut self,
        rows: &[R],
        stores: &Stores,
        progress: &(dyn Fn(usize, usize) + Sync),
    ) -> Result<Freshness> {
        let mut seen = HashSet::with_capacity(rows.len());
        let changed = self.changed(rows, stores, &mut seen);
        self.apply(changed, seen, stores, progress)
    }

    /// Re-index only those of `rows` that changed and keep every other session: the
    /// browser's watcher reports one session at a time.
    pub fn update_some<R: std::borrow::Borrow<SessionSummary>>(
        &mut self,
        rows: &[R],
        stores: &Stores,
        progress: &(dyn Fn(usize, usize) + Sync),
    ) -> Result<Freshness> {
        let mut seen: HashSet<u64> = self.sessions.get().map.keys().copied().collect();
        let changed = self.changed(rows, stores, &mut seen);
        self.apply(changed, seen, stores, progress)
    }

    /// `update_some`, and drop `gone` too: the index's child process (`index_child`), given
    /// the browser's rows that changed (`current::changes`, the watcher's re-reads) and the
    /// sessions it deleted or no longer lists.
    pub fn update_rows(
        &mut self,
        rows: &[SessionSummary],
        gone: &[u64],
        stores: &Stores,
        progress: &(dyn Fn(usize, usize) + Sync),
    ) -> Result<Freshness> {
        let gone: HashSet<u64> = gone.iter().copied().collect();
        let mut seen: HashSet<u64> = {
            let known = &self.sessions.get().map;
            known
                .keys()
                .filter(|s| !gone.contains(s))
                .copied()
                .collect()
        };
        let changed = self.changed(rows, stores, &mut seen);
        self.apply(changed, seen, stores, progress)
    }

    /// Re-read what other processes committed (a read-only process after their update);
    /// false when the reader could not reload.
    pub fn refresh(&mut self) -> bool {
        let ok = self.reader.reload().is_ok();
        self.sessions
            .reload_if_changed(&self.dir.join(SESSIONS_FILE));
        ok
    }
}

fn to_doc(f: Fields, sid: u64, row: &SessionSummary, ord: usize, d: Doc) -> TantivyDocument {
    let mut doc = TantivyDocument::default();
    doc.add_u64(f.sid, sid);
    doc.add_u64(f.message, d.message.map_or(u64::MAX, |m| m as u64));
    doc.add_u64(f.round, d.round.map_or(u64::MAX, |r| r as u64));
    doc.add_u64(f.ord, ord as u64);
    doc.add_text(f.text, &d.text);
    doc.add_i64(
        f.updated,
        row.last_activity().map_or(i64::MIN, |t| t.timestamp()),
    );
    doc
}

fn reader(index: &Index) -> tantivy::Result<IndexReader> {
    index
        .reader_builder()
        .reload_policy(ReloadPolicy::Manual)
        .try_into()
}

/// Remove the index's files (the cache is rebuilt by the next `open` + `update`).
pub fn wipe(dir: &Path) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            let _ = std::fs::remove_dir_all(&p);
        } else {
            let _ = std::fs::remove_file(&p);
        }
    }
}

#[cfg(test)]
mod tests;
