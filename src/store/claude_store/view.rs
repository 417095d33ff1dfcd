//! The streamed views of a Claude transcript (issues 9 and 11): `show`, the pane's whole
//! transcript, the replayed window and the full-text indexer follow the listing's pass (every
//! record pruned, with its offset) and read each shown record again, one at a time, so a
//! 40 MB transcript of base64 images is never held, nor built into a tree.

use std::io;
use std::path::Path;

use super::chain::{self, Chain};
use super::transcript::{self, Ctx};
use super::{ClaudeStore, read, stream};
use crate::error::{Error, Result};
use crate::model::{Entry, Transcript};
use crate::store::sink::{EntrySink, WindowHead, WindowSink};
use crate::store::{lines, sink_error};

/// A sink's own failure, told apart from the store's read failure.
fn sink_failed(slot: &mut Option<io::Error>, e: io::Error) -> io::Error {
    let out = io::Error::new(e.kind(), e.to_string());
    *slot = Some(e);
    out
}

impl ClaudeStore {
    /// The whole main view to `sink`, a record at a time.
    pub(super) fn send_all(&self, id: &str, sink: &mut dyn EntrySink) -> Result<()> {
        let (path, mut l) = self.load_id(id)?;
        let io = |e| Error::io("reading", &path, e);
        let file = read::open(&path).map_err(io)?;
        let sdir = Self::session_dir(&path, id);
        Self::read_subagents(&sdir, &mut l.subagents);
        let cx = Ctx {
            session_dir: &sdir,
            subagents: &l.subagents,
        };
        let continued = Self::continued(&path, &l.facts, id);
        let recs = &l.parsed.recs;
        let chain = chain::build(recs);
        let spawned = transcript::progress_links(recs);
        let (users, _) = stream::counts(recs, &chain, &cx, &spawned);
        let warnings = Self::warnings(&l.parsed, &l.facts);
        sink.head(Transcript {
            summary: l.summary.clone(),
            entries: Vec::new(),
            total_rounds: users,
            first_round: 0,
            warnings,
            todos: None,
        })
        .map_err(sink_error)?;
        if let Some(parent) = continued {
            sink.entry(Entry::Notice(format!("continued from claude:{parent}")))
                .map_err(sink_error)?;
        }
        let src = stream::FromFile::new(recs, file);
        let mut failed = None;
        let read = stream::emit(&src, &chain, &cx, 0, &spawned, &mut |e| {
            sink.entry(e).map_err(|e| sink_failed(&mut failed, e))
        });
        if let Some(e) = failed {
            return Err(sink_error(e));
        }
        read.map_err(io)
    }

    /// The window to `sink`: its messages are counted in a first pass over the records
    /// after the last compaction and read again as they are sent.
    pub(super) fn send_window(&self, id: &str, sink: &mut dyn WindowSink) -> Result<()> {
        let (path, l) = self.load_id(id)?;
        let io = |e| Error::io("reading", &path, e);
        let sdir = Self::session_dir(&path, id);
        let cx = Ctx {
            session_dir: &sdir,
            subagents: &l.subagents,
        };
        let recs = &l.parsed.recs;
        let c = chain::build(recs);
        let spawned = transcript::progress_links(recs);
        let start = super::window::after_last_compaction(recs, &c.path);
        let before = Chain {
            path: c.path[..start].to_vec(),
            ..Chain::default()
        };
        // Positions continue the transcript's numbering.
        let (_, first) = stream::counts(recs, &before, &cx, &spawned);
        let tail = Chain {
            path: c.path[start..].to_vec(),
            ..Chain::default()
        };
        let (mut count, mut tokens) = (0, 0);
        let src = stream::FromFile::new(recs, read::open(&path).map_err(io)?);
        stream::emit(&src, &tail, &cx, first, &spawned, &mut |e| {
            if let Some(m) = crate::store::entries::window_message(e) {
                count += 1;
                tokens += m.estimated_tokens();
            }
            Ok(())
        })
        .map_err(io)?;
        sink.head(WindowHead::new(
            Some(super::window::SYSTEM_NOTE.into()),
            Self::warnings(&l.parsed, &l.facts),
            l.summary.clone(),
            (count, tokens),
        ))
        .map_err(sink_error)?;
        let src = stream::FromFile::new(recs, read::open(&path).map_err(io)?);
        let mut failed = None;
        let read = stream::emit(&src, &tail, &cx, first, &spawned, &mut |e| {
            match crate::store::entries::window_message(e) {
                Some(m) => sink.message(m).map_err(|e| sink_failed(&mut failed, e)),
                None => Ok(()),
            }
        });
        if let Some(e) = failed {
            return Err(sink_error(e));
        }
        read.map_err(io)
    }
}

/// The records that start in the last `bytes` (at least the last one), each pretty-printed,
/// and whether records before them were left out: the browser's raw page.
pub(super) fn raw_page(path: &Path, bytes: u64) -> Result<(String, bool)> {
    let io = |e| Error::io("reading", path, e);
    lines::page_from_end(read::open(path).map_err(io)?, bytes, read::MAX_LINE).map_err(io)
}

/// `show --raw` a record at a time.
pub(super) fn raw_to(path: &Path, out: &mut dyn FnMut(&str) -> io::Result<()>) -> Result<()> {
    let file = read::open(path).map_err(|e| Error::io("reading", path, e))?;
    lines::raw_records(out, |each| lines::pretty_each(file, read::MAX_LINE, each)).map_err(|e| {
        match e {
            Ok(e) => sink_error(e),
            Err(e) => Error::io("reading", path, e),
        }
    })
}
