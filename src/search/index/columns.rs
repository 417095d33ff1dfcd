//! The fast-field columns a query reads, opened once per segment and kept while the segment
//! is searched. Opening a column decodes its whole block index (a block per 512 documents:
//! thousands at 100k sessions), and a query opened about eighty of them (the session number
//! in each pass, three per shown hit for its place): at 100k that was a fifth of a phrase
//! query's time.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tantivy::columnar::Column;
use tantivy::index::SegmentId;
use tantivy::{Searcher, SegmentReader};

/// The columns of one segment.
pub(super) struct Columns {
    pub sid: Column<u64>,
    pub message: Column<u64>,
    pub round: Column<u64>,
    pub ord: Column<u64>,
    pub updated: Column<i64>,
}

/// Columns by segment, shared by the queries of one handle. Deletes leave a segment's
/// columns as they are (they live in the alive bitset), so a segment id is key enough.
#[derive(Default)]
pub(super) struct ColumnCache(Mutex<HashMap<SegmentId, Arc<Columns>>>);

impl ColumnCache {
    /// The columns of `seg`, opened on first use.
    pub fn get(&self, seg: &SegmentReader) -> tantivy::Result<Arc<Columns>> {
        let id = seg.segment_id();
        if let Some(c) = self.lock().get(&id) {
            return Ok(c.clone());
        }
        let ff = seg.fast_fields();
        let c = Arc::new(Columns {
            sid: ff.u64("sid")?,
            message: ff.u64("message")?,
            round: ff.u64("round")?,
            ord: ff.u64("ord")?,
            updated: ff.i64("updated")?,
        });
        self.lock().insert(id, c.clone());
        Ok(c)
    }

    /// Forget the segments `searcher` no longer holds (merged away or deleted), so their
    /// files' maps are released.
    pub fn keep_only(&self, searcher: &Searcher) {
        let segs = searcher.segment_readers();
        self.lock()
            .retain(|id, _| segs.iter().any(|s| s.segment_id() == *id));
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<SegmentId, Arc<Columns>>> {
        // A panic elsewhere leaves a map of whole entries: still usable.
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}
