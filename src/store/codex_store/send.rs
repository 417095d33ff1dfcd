//! `show`, the pane's transcript and the window sent a piece at a time (issues 9 and 11):
//! the listing's pass gives the row, `stream` the passes over the records.

use std::io;

use super::stream::{self, Pairing, Scan};
use super::transcript::Ctx;
use super::{CodexStore, Loaded, read, view};
use crate::error::{Error, Result};
use crate::model::{Entry, Role, Transcript};
use crate::store::sink::{EntrySink, WindowHead, WindowSink};
use crate::store::{Span, sink_error};

impl CodexStore {
    /// The listing's pass and the first pass over the records.
    fn scanned(&self, id: &str) -> Result<(Loaded, Scan)> {
        let l = self.load_id(id, read::Mode::List)?;
        let parent = l
            .facts
            .forked_from
            .clone()
            .or(l.facts.parent_thread.clone());
        let turns = parent.as_deref().and_then(|p| self.parent_turns(p));
        let sc = stream::scan(&l.path, l.facts.copy_start, turns.as_deref())
            .map_err(|e| Error::io("reading", &l.path, e))?;
        Ok((l, sc))
    }

    /// The transcript to `sink`, an entry at a time; `span` keeps the last rounds (counted
    /// in the second pass).
    pub(super) fn send_all(&self, id: &str, span: Span, sink: &mut dyn EntrySink) -> Result<()> {
        let (l, sc) = self.scanned(id)?;
        let io = |e| Error::io("reading", &l.path, e);
        let cx = Ctx {
            copied: sc.copied,
            parent: Self::parent_ref(&l.facts),
            offset: 0,
        };
        let mut pairing = Pairing::default();
        let mut users = 0;
        stream::convert(&l.path, &sc, &cx, &mut |e| {
            pairing.learn(&e);
            users += usize::from(matches!(&e, Entry::Message(m) if m.role == Role::User));
        })
        .map_err(io)?;
        // As `store::last_rounds`: from the user message that starts the first kept round.
        let skip = match span {
            Span::LastRounds(n) if n < users => Some(users - n),
            _ => None,
        };
        sink.head(Transcript {
            summary: l.summary.clone(),
            entries: Vec::new(),
            total_rounds: users,
            first_round: skip.unwrap_or(0),
            warnings: Self::warnings(&sc.parsed, &l.facts),
            todos: None,
        })
        .map_err(sink_error)?;
        let (mut sending, mut seen) = (skip.is_none(), 0);
        let mut failed: Option<io::Error> = None;
        stream::convert(&l.path, &sc, &cx, &mut |mut e| {
            pairing.apply(&mut e);
            if let Entry::Message(m) = &e
                && m.role == Role::User
            {
                sending |= Some(seen) == skip;
                seen += 1;
            }
            if sending && failed.is_none() {
                failed = sink.entry(e).err();
            }
        })
        .map_err(io)?;
        failed.map_or(Ok(()), |e| Err(sink_error(e)))
    }

    /// The window to `sink`: counted and paired in one pass, sent in the next.
    pub(super) fn send_window(&self, id: &str, sink: &mut dyn WindowSink) -> Result<()> {
        let (l, sc) = self.scanned(id)?;
        let io = |e| Error::io("reading", &l.path, e);
        let tail_cx = Ctx {
            copied: sc.copied,
            parent: Self::parent_ref(&l.facts),
            offset: sc.last_compaction.map_or(0, |k| k + 1),
        };
        let mut pairing = Pairing::default();
        let (mut count, mut tokens) = (0, 0);
        let before = stream::window_pass(&l.path, &sc, &tail_cx, true, &mut |e, replayed| {
            if !replayed {
                pairing.learn(&e);
            }
            if let Some(m) = crate::store::entries::window_message(e) {
                count += 1;
                tokens += m.estimated_tokens();
            }
        })
        .map_err(io)?;
        pairing.next = before;
        sink.head(WindowHead::new(
            Some(view::SYSTEM_NOTE.into()),
            Self::warnings(&sc.parsed, &l.facts),
            l.summary.clone(),
            (count, tokens),
        ))
        .map_err(sink_error)?;
        let mut failed: Option<io::Error> = None;
        stream::window_pass(&l.path, &sc, &tail_cx, false, &mut |mut e, replayed| {
            if !replayed {
                pairing.apply(&mut e);
            }
            if failed.is_none()
                && let Some(m) = crate::store::entries::window_message(e)
            {
                failed = sink.message(m).err();
            }
        })
        .map_err(io)?;
        failed.map_or(Ok(()), |e| Err(sink_error(e)))
    }
}
