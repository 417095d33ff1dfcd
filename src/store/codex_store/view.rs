//! The context-window view (codex.md section 4, DECIDED: the last compaction's
//! `replacement_history`, or its summary, followed by the items after it), `show --last N`
//! read from the end of the file in growing steps, and the raw records.

use std::path::Path;

use super::read;
#[cfg(test)]
use super::read::Rec;
#[cfg(test)]
use super::record as r;
use super::transcript::{self, Ctx};
use crate::model::Entry;
#[cfg(test)]
use crate::model::Message;
use crate::store::lines::{self, RawLine};

/// What Codex resends besides the rollout's items.
pub const SYSTEM_NOTE: &str = "Codex also sends its base instructions and tool definitions \
     (recorded in session_meta, not shown) and rebuilds the environment context on resume";

/// The window's messages from records read whole (the streamed window's reference).
#[cfg(test)]
pub fn window(
    recs: &[Rec],
    copied: Option<(usize, usize)>,
    parent: Option<String>,
) -> Vec<Message> {
    let last = recs.iter().rposition(|rec| r::kind(&rec.v) == "compacted");
    let Some(k) = last else {
        let cx = Ctx {
            copied,
            parent,
            offset: 0,
        };
        return crate::store::entries::window_messages(transcript::entries(recs, &cx, 0));
    };
    let mut out = super::stream::replayed(&recs[k].v);
    let before = transcript::entries(&recs[..k], &Ctx::default(), 0)
        .iter()
        .filter(|e| matches!(e, Entry::Message(_)))
        .count();
    let cx = Ctx {
        copied,
        parent,
        offset: k + 1,
    };
    out.extend(crate::store::entries::window_messages(transcript::entries(
        &recs[k + 1..],
        &cx,
        before,
    )));
    out
}

/// The last `n` rounds of a plain rollout read from the end: `(entries, rounds in what was
/// read, first kept round, whole file read)`.
pub fn last_rounds(
    path: &Path,
    n: usize,
    parent: Option<String>,
) -> std::io::Result<(Vec<Entry>, usize, usize, bool)> {
    crate::store::rounds_from_end(n, |bytes| {
        let p = read::read_tail(path, bytes)?;
        let cx = Ctx {
            parent: parent.clone(),
            ..Ctx::default()
        };
        Ok((transcript::entries(&p.recs, &cx, 0), p.from == 0))
    })
}

/// `show --raw` a record at a time (a `.zst` through the stream decoder).
pub fn raw_to(
    path: &Path,
    out: &mut dyn FnMut(&str) -> std::io::Result<()>,
) -> crate::error::Result<()> {
    let io = |e| crate::error::Error::io("reading", path, e);
    let f = read::open(path).map_err(io)?;
    let zst = read::is_zst(path);
    lines::raw_records(out, |each| {
        if zst {
            let dec = zstd::stream::read::Decoder::new(f)?;
            lines::pretty_each(
                std::io::Read::take(dec, read::MAX_INFLATED),
                read::MAX_LINE,
                each,
            )
        } else {
            lines::pretty_each(f, read::MAX_LINE, each)
        }
    })
    .map_err(|e| match e {
        Ok(e) => crate::store::sink_error(e),
        Err(e) => io(e),
    })
}

/// The records that start in the last `bytes` (at least the last one), pretty-printed, and
/// whether records before them were left out: the browser's raw page. A plain rollout is
/// read from the end; a compressed one is decoded through, keeping only the last records.
pub fn raw_page(path: &Path, bytes: u64) -> std::io::Result<(String, bool)> {
    let bytes = bytes.max(1);
    let f = read::open(path)?;
    if !read::is_zst(path) {
        return lines::page_from_end(f, bytes, read::MAX_LINE);
    }
    let dec = std::io::Read::take(zstd::stream::read::Decoder::new(f)?, read::MAX_INFLATED);
    // (stored length, pretty text) of the records kept.
    let mut kept: std::collections::VecDeque<(u64, String)> = Default::default();
    let (mut held, mut dropped) = (0u64, false);
    lines::for_each_line(dec, read::MAX_LINE, |l| {
        let len = match &l {
            RawLine::TooLong { len, .. } => *len,
            RawLine::Line { bytes, .. } => bytes.len() as u64 + 1,
        };
        let mut one = Vec::new();
        lines::pretty_line(l, read::MAX_LINE, |t| one.push(t));
        for t in one {
            kept.push_back((len, t));
            held += len;
        }
        while held > bytes && kept.len() > 1 {
            let (n, _) = kept.pop_front().expect("more than one");
            held -= n;
            dropped = true;
        }
    })?;
    let text: Vec<String> = kept.into_iter().map(|(_, t)| t).collect();
    Ok((text.join("\n"), dropped))
}
