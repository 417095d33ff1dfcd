//! The context-window view (claude-code.md section 4, DECIDED: the records after the last
//! `compact_boundary` on the active chain, preceded by the compaction summary) and
//! `show --last N`, which reads from the end of the file in growing steps instead of parsing
//! the whole transcript.

use std::path::Path;

use super::chain::{self, Chain};
use super::read;
use super::record as r;
use super::transcript::{self, Ctx};
use crate::model::{Entry, Message, Role, round_starts};

/// What Claude resends besides the transcript (not stored in it).
pub const SYSTEM_NOTE: &str = "Claude Code also sends its system prompt, tool definitions and \
     CLAUDE.md memory files; they are not stored in the transcript";

/// The messages of the window, from the whole-file chain.
pub fn messages(recs: &[read::Rec], chain: &Chain, cx: &Ctx<'_>) -> Vec<Message> {
    let start = chain
        .path
        .iter()
        .rposition(|&i| {
            r::kind(&recs[i].v) == "system"
                && r::s(&recs[i].v, "subtype") == Some("compact_boundary")
        })
        .map_or(0, |k| k + 1);
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
    transcript::entries(recs, &tail, cx, first)
        .into_iter()
        .filter_map(|e| match e {
            Entry::Message(m) => Some(*m),
            Entry::Compaction { summary, timestamp } => {
                let mut m = Message::inserted(Role::User, summary);
                m.timestamp = timestamp;
                Some(m)
            }
            _ => None,
        })
        .collect()
}

/// The last `n` rounds read from the end: `(entries, rounds in what was read, first kept
/// round, whole file read)`. Rounds are numbered within what was read when the start of the
/// file was not reached.
pub fn last_rounds(
    path: &Path,
    n: usize,
    cx: &Ctx<'_>,
) -> std::io::Result<(Vec<Entry>, usize, usize, bool)> {
    crate::store::lines::from_the_end(|bytes| {
        let p = read::read_tail(path, bytes)?;
        let whole = p.from == 0;
        let mut c = chain::build(&p.recs);
        if !whole {
            // Parents before the cut are simply not read yet.
            c.unlinked.clear();
        }
        let entries = transcript::entries(&p.recs, &c, cx, 0);
        let msgs: Vec<&Message> = entries
            .iter()
            .filter_map(|e| match e {
                Entry::Message(m) => Some(m.as_ref()),
                _ => None,
            })
            .collect();
        let rounds = round_starts(&msgs).len();
        // One round more than asked: the first round of a tail read may have started before
        // the cut.
        Ok((whole || rounds > n).then(|| {
            let (kept, total, first) =
                crate::store::last_rounds(entries, crate::store::Span::LastRounds(n));
            (kept, total, first, whole)
        }))
    })
}
