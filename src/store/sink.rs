//! A transcript handed over a piece at a time (issue 11, bounded memory): `show` prints each
//! entry as a store produces it, so a huge session is never held whole, parsed or printed.

use std::io;
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};

use crate::model::{Entry, Transcript};

/// Where a store sends a transcript as it reads it.
pub trait EntrySink {
    /// Everything but the entries (summary, rounds, warnings), before the first entry.
    fn head(&mut self, head: Transcript) -> io::Result<()>;
    fn entry(&mut self, entry: Entry) -> io::Result<()>;
}

/// Hand a transcript already read whole to `sink`: the stores that page or bound their reads
/// another way use this.
pub fn send_whole(t: Transcript, sink: &mut dyn EntrySink) -> io::Result<()> {
    let Transcript {
        summary,
        entries,
        total_rounds,
        first_round,
        warnings,
        todos,
    } = t;
    sink.head(Transcript {
        summary,
        entries: Vec::new(),
        total_rounds,
        first_round,
        warnings,
        todos,
    })?;
    entries.into_iter().try_for_each(|e| sink.entry(e))
}

/// One piece of a streamed transcript.
pub enum Piece {
    // Boxed: entries, not the one head, fill the channel.
    Head(Box<Transcript>),
    Entry(Entry),
}

/// A sink that passes pieces to another thread, a few at a time: the reader runs ahead of
/// the writer by at most the channel's bound, so memory stays flat.
pub struct ChannelSink(pub SyncSender<Piece>);

impl EntrySink for ChannelSink {
    fn head(&mut self, head: Transcript) -> io::Result<()> {
        self.0.send(Piece::Head(Box::new(head))).map_err(gone)
    }
    fn entry(&mut self, entry: Entry) -> io::Result<()> {
        self.0.send(Piece::Entry(entry)).map_err(gone)
    }
}

/// The receiving side went away (its write failed): the reader stops.
fn gone<T>(_: T) -> io::Error {
    io::Error::new(io::ErrorKind::BrokenPipe, "the transcript's reader stopped")
}

/// A bounded channel for `ChannelSink`.
pub fn channel() -> (ChannelSink, Receiver<Piece>) {
    let (tx, rx) = sync_channel(64);
    (ChannelSink(tx), rx)
}
