//! The transcript and the window of a record read in passes over one open file (issue 11,
//! bounded memory): the row's lean parse (`lean::parse_row`, which also yields every
//! top-level field but the histories and where each round starts), the tool names by call
//! id, then the entries shown, converted and handed to the sink one at a time. Nothing of
//! the history is held beyond what the sink keeps, so `show --last 1` and the browser's
//! first page cost the page, not the record. A record these passes decline (NaN literals,
//! a BOM, a history that is not an array, a repeated history key, invalid JSON) is read the
//! careful whole way by the caller, which also words what is wrong with it.

use std::fs::File;

use super::lean::Kind;
use super::record::{self, Loaded};
use super::render::{self, WindowWalk};
use super::{HarnessStore, json::Parsed};
use crate::error::{Error, Result};
use crate::model::{Entry, SessionSummary, Transcript};
use crate::store::sink::{EntrySink, WindowHead, WindowSink};
use crate::store::{Span, sink_error};

/// A record opened for passes: the file, its row and its top-level fields.
struct Opened {
    file: File,
    summary: SessionSummary,
    parsed: Parsed,
}

/// Open `id` and read its row; `None` where the passes do not apply.
fn open(store: &HarnessStore, id: &str) -> Result<Option<Opened>> {
    let Some(mut file) = store.open_record(id)? else {
        return Ok(None);
    };
    let Some(parsed) = super::lean::parse_row(&mut file) else {
        return Ok(None);
    };
    let loaded = Loaded {
        bytes: Vec::new(),
        parsed: Ok(parsed),
    };
    let path = store.record_path(id)?;
    let summary = record::summarize(&store.sessions, id, &path, &loaded);
    let Ok(parsed) = loaded.parsed else {
        return Ok(None);
    };
    Ok(Some(Opened {
        file,
        summary,
        parsed,
    }))
}

/// A pass that read fine once and then not: the record changed under the open file (it
/// never should: the harness replaces records by rename).
fn changed(id: &str) -> Error {
    Error::Corrupt(format!("harness session {id} changed while it was read"))
}

/// `Store::transcript_to` through passes; `Ok(false)` (nothing sent) where they decline.
pub fn transcript_to(
    store: &HarnessStore,
    id: &str,
    span: Span,
    sink: &mut dyn EntrySink,
) -> Result<bool> {
    let Some(Opened {
        mut file,
        summary,
        parsed,
    }) = open(store, id)?
    else {
        return Ok(false);
    };
    let map = &parsed.map;
    // The history shown is `transcript`, falling back to `messages` (`record::history`);
    // the row parse reduced exactly that one.
    let key = if map.contains_key("transcript") {
        "transcript"
    } else {
        "messages"
    };
    let kinds = parsed.hist.as_ref().map_or(&[][..], |h| &h.kinds[..]);
    let len = kinds.len();
    // A round starts at each user entry; anything before the first belongs to round 0.
    let users: Vec<usize> = (0..len).filter(|&i| kinds[i] == Kind::User).collect();
    let total = users.len();
    let want = match span {
        Span::All => usize::MAX,
        Span::LastRounds(n) => n,
    };
    let first = total.saturating_sub(want);
    // Entries from `from` on are shown, and the markers placed after entry `from` (a
    // marker placed at the cut belongs to the round before it).
    let (from, nothing) = match first {
        0 => (0, false),
        f => users.get(f).map_or((len, true), |&u| (u, false)),
    };
    let mut markers = render::markers(map, len);
    if first > 0 {
        markers.retain(|(at, _)| !nothing && *at > from);
    }
    let Some(calls) = passes::call_names(&mut file, key).map_err(read_error(id))? else {
        return Ok(false);
    };
    let todos = map
        .get("state")
        .and_then(|s| s.get("todos"))
        .filter(|t| t.is_array())
        .map(crate::model::left_off::LeftOff::stored_todos);
    let warnings = store.warnings(id, &summary, &parsed);
    sink.head(Transcript {
        summary,
        entries: Vec::new(),
        total_rounds: total,
        first_round: first,
        warnings,
        todos,
    })
    .map_err(sink_error)?;
    if nothing {
        return Ok(true);
    }
    let mut markers = markers.into_iter().peekable();
    let read = passes::walk(&mut file, key, from, &mut |i, v| {
        while let Some((_, m)) = markers.next_if(|(at, _)| *at <= i) {
            sink.entry(m)?;
        }
        let m = render::message(i, &v, &calls);
        drop(v);
        sink.entry(Entry::Message(Box::new(m)))
    })
    .map_err(sink_error)?;
    if !read {
        return Err(changed(id));
    }
    markers
        .try_for_each(|(_, m)| sink.entry(m))
        .map_err(sink_error)?;
    Ok(true)
}

/// `Store::window_to` through passes; `Ok(false)` (nothing sent) where they decline. The
/// window's header counts its messages and tokens before the first is sent, so one pass
/// counts them and the next sends them.
pub fn window_to(store: &HarnessStore, id: &str, sink: &mut dyn WindowSink) -> Result<bool> {
    let Some(Opened {
        mut file,
        summary,
        parsed,
    }) = open(store, id)?
    else {
        return Ok(false);
    };
    let Some(calls) = passes::call_names(&mut file, "messages").map_err(read_error(id))? else {
        return Ok(false);
    };
    let (mut count, mut tokens) = (0usize, 0u64);
    let mut walk = WindowWalk::default();
    let mut tally = |m: crate::model::Message| {
        count += 1;
        tokens += m.estimated_tokens();
        Ok(())
    };
    let read = passes::walk(&mut file, "messages", 0, &mut |i, v| {
        walk.push(i, &v, &calls, &mut tally)
    })
    .map_err(read_error(id))?;
    walk.finish(&mut tally).map_err(read_error(id))?;
    if !read {
        return Ok(false);
    }
    let warnings = store.window_warnings(id, &summary, &parsed);
    sink.head(WindowHead::new(
        Some(render::resume_note(&parsed.map)),
        warnings,
        summary,
        (count, tokens),
    ))
    .map_err(sink_error)?;
    drop(parsed);
    let mut walk = WindowWalk::default();
    let mut send = |m| sink.message(m);
    let read = passes::walk(&mut file, "messages", 0, &mut |i, v| {
        walk.push(i, &v, &calls, &mut send)
    })
    .map_err(sink_error)?;
    if !read {
        return Err(changed(id));
    }
    walk.finish(&mut send).map_err(sink_error)?;
    Ok(true)
}

/// A read of the record that failed (not a sink's).
fn read_error(id: &str) -> impl Fn(std::io::Error) -> Error + '_ {
    move |e| Error::Corrupt(format!("harness session {id} could not be read: {e}"))
}

use super::passes;
