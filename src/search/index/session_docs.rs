//! A session's documents read straight from its store, one entry at a time: indexing a
//! 300 MB log holds one entry and its documents, never the transcript (issue 11).

use std::io;

use super::docs::{Doc, DocBuilder, title_doc};
use crate::model::{Entry, SessionSummary, Transcript};
use crate::store::Stores;
use crate::store::sink::EntrySink;

/// Call `f(ord, doc)` for each of the session's documents in order, the title/summary
/// document first (ord 0); `f` returns false to stop early (a snippet found its document).
/// A session the store cannot read is still found by its title and summary; one that fails
/// part way keeps the documents read before the failure, in the same order every time.
pub fn each_session_doc(
    stores: &Stores,
    row: &SessionSummary,
    f: &mut dyn FnMut(usize, Doc) -> bool,
) {
    if !f(0, title_doc(row)) {
        return;
    }
    let mut sink = DocSink {
        f,
        ord: 1,
        builder: None,
        stopped: false,
    };
    let read = stores.store_for(row).index_entries_to(row, &mut sink);
    if read.is_ok()
        && !sink.stopped
        && let Some(b) = sink.builder.take()
    {
        let DocSink { f, ord, .. } = &mut sink;
        b.finish(&mut |d| {
            let _ = f(*ord, d);
            *ord += 1;
        });
    }
}

/// The documents of a session as a vector (the tests compare it with `docs`).
#[cfg(test)]
pub fn session_docs(stores: &Stores, row: &SessionSummary) -> Vec<Doc> {
    let mut out = Vec::new();
    each_session_doc(stores, row, &mut |_, d| {
        out.push(d);
        true
    });
    out
}

struct DocSink<'a> {
    f: &'a mut dyn FnMut(usize, Doc) -> bool,
    ord: usize,
    builder: Option<DocBuilder>,
    stopped: bool,
}

impl EntrySink for DocSink<'_> {
    fn head(&mut self, head: Transcript) -> io::Result<()> {
        self.builder = Some(DocBuilder::new(head.first_round));
        Ok(())
    }

    fn entry(&mut self, entry: Entry) -> io::Result<()> {
        let Some(b) = self.builder.as_mut() else {
            return Ok(());
        };
        let (f, ord, stopped) = (&mut self.f, &mut self.ord, &mut self.stopped);
        b.entry(&entry, &mut |d| {
            if !*stopped && !f(*ord, d) {
                *stopped = true;
            }
            *ord += 1;
        });
        if self.stopped {
            // Ends the store's read: the caller has what it wanted.
            return Err(io::Error::other("enough documents"));
        }
        Ok(())
    }
}
