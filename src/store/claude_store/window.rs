//! The context-window view (claude-code.md section 4, DECIDED: the records after the last
//! `compact_boundary` on the active chain, preceded by the compaction summary) and
//! `show --last N`, which reads from the end of the file in growing steps instead of parsing
//! the whole transcript.

use std::path::Path;

use super::chain;
use super::read;
use super::transcript::{self, Ctx};
use crate::model::Entry;

/// What Claude resends besides the transcript (not stored in it).
pub const SYSTEM_NOTE: &str = "Claude Code also sends its system prompt, tool definitions and \
     CLAUDE.md memory files; they are not stored in the transcript";

/// The messages of the window, from the whole-file chain (the tests' reference for the
/// streamed window).
#[cfg(test)]
pub fn messages(
    recs: &[read::Rec],
    chain: &chain::Chain,
    cx: &Ctx<'_>,
) -> Vec<crate::model::Message> {
    use chain::Chain;
    let start = after_last_compaction(recs, &chain.path);
    let tail = Chain {
        path: chain.path[start..].to_vec(),
        branches: Default::default(),
        unlinked: Vec::new(),
    };
    // Positions continue the transcript's numbering: count the messages before the cut.
    let before = Chain {
        path: chain.path[..start].to_vec(),
        ..Chain::default()
    };
    let first = transcript::entries(recs, &before, cx, 0)
        .iter()
        .filter(|e| matches!(e, Entry::Message(_)))
        .count();
    crate::store::entries::window_messages(transcript::entries(recs, &tail, cx, first))
}

/// The last `n` rounds read from the end: `(entries, rounds in what was read, first kept
/// round, whole file read)`. Rounds are numbered within what was read when the start of the
/// file was not reached.
pub fn last_rounds(
    path: &Path,
    n: usize,
    cx: &Ctx<'_>,
) -> std::io::Result<(Vec<Entry>, usize, usize, bool)> {
    crate::store::rounds_from_end(n, |bytes| {
        let p = read::read_tail(path, bytes)?;
        let whole = p.from == 0;
        let mut c = chain::build(&p.recs);
        if !whole {
            // Parents before the cut are simply not read yet.
            c.unlinked.clear();
        }
        Ok((transcript::entries(&p.recs, &c, cx, 0), whole))
    })
}

/// Where the window starts on the active `path`: after its last `compact_boundary`, or at its
/// first record when it has none.
pub(super) fn after_last_compaction(recs: &[super::read::Rec], path: &[usize]) -> usize {
    use super::record as r;
    path.iter()
        .rposition(|&i| {
            r::kind(&recs[i].v) == "system"
                && r::s(&recs[i].v, "subtype") == Some("compact_boundary")
        })
        .map_or(0, |k| k + 1)
}
