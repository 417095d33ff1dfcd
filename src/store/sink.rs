//! A transcript handed over a piece at a time (issue 11, bounded memory): `show` prints each
//! entry as a store produces it, so a huge session is never held whole, parsed or printed.

use std::collections::VecDeque;
use std::io;
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};

use crate::model::{Entry, Message, Transcript, Window};

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

/// A sink that gathers a transcript whole: a store that streams its transcript builds its
/// `transcript` (the browser's page, export) from the same reader, holding only what is
/// sent.
#[derive(Default)]
pub struct Gather(Option<Transcript>);

impl Gather {
    /// The transcript sent (`None` if no head came).
    pub fn finish(self) -> Option<Transcript> {
        self.0
    }
}

impl EntrySink for Gather {
    fn head(&mut self, head: Transcript) -> io::Result<()> {
        self.0 = Some(head);
        Ok(())
    }
    fn entry(&mut self, entry: Entry) -> io::Result<()> {
        if let Some(t) = self.0.as_mut() {
            t.entries.push(entry);
        }
        Ok(())
    }
}

/// The transcript `send` streams, gathered whole: the `transcript` of a store whose
/// `transcript_to` streams (`None` if no head came).
pub fn gathered(
    send: impl FnOnce(&mut Gather) -> crate::error::Result<()>,
) -> crate::error::Result<Option<Transcript>> {
    let mut all = Gather::default();
    send(&mut all)?;
    Ok(all.finish())
}

/// The raw view `write` hands over a piece at a time, gathered whole: the `raw` of a store
/// whose `raw_to` streams.
pub fn raw_gathered(
    write: impl FnOnce(&mut dyn FnMut(&str) -> io::Result<()>) -> crate::error::Result<()>,
) -> crate::error::Result<String> {
    let mut text = String::new();
    write(&mut |piece| {
        text.push_str(piece);
        Ok(())
    })?;
    Ok(text)
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

/// A window's head: everything but its messages, and what the messages add up to (the
/// Markdown header counts them before the first one is printed).
pub struct WindowHead {
    /// The window without its messages.
    pub window: Window,
    pub count: usize,
    pub tokens: u64,
}

impl WindowHead {
    /// The head of a window whose messages follow: what they add up to, and the rest of the
    /// window (no messages yet, none omitted).
    pub fn new(
        system_note: Option<String>,
        warnings: Vec<String>,
        summary: crate::model::SessionSummary,
        (count, tokens): (usize, u64),
    ) -> WindowHead {
        WindowHead {
            window: Window {
                messages: Vec::new(),
                system_note,
                warnings,
                summary,
                omitted: 0,
                omitted_tokens: 0,
            },
            count,
            tokens,
        }
    }
}

/// Where a store sends a replayed window as it reads it (`show --window`, the browser's
/// window page).
pub trait WindowSink {
    fn head(&mut self, head: WindowHead) -> io::Result<()>;
    fn message(&mut self, m: Message) -> io::Result<()>;
}

/// Hand a window already built whole to `sink`.
pub fn send_window(mut w: Window, sink: &mut dyn WindowSink) -> io::Result<()> {
    let messages = std::mem::take(&mut w.messages);
    let count = messages.len();
    let tokens = messages.iter().map(Message::estimated_tokens).sum();
    sink.head(WindowHead {
        window: w,
        count,
        tokens,
    })?;
    messages.into_iter().try_for_each(|m| sink.message(m))
}

/// Keeps the head and the last `keep` messages of a window (`usize::MAX`: all of them): the
/// browser's first screen of a long window holds a page, not the window.
pub struct LastMessages {
    head: Option<WindowHead>,
    ring: VecDeque<Message>,
    keep: usize,
    seen: usize,
    dropped_tokens: u64,
}

impl LastMessages {
    pub fn new(keep: usize) -> LastMessages {
        LastMessages {
            head: None,
            ring: VecDeque::new(),
            keep,
            seen: 0,
            dropped_tokens: 0,
        }
    }

    /// The window of what was kept (`None` if no head came).
    pub fn finish(self) -> Option<Window> {
        let mut w = self.head?.window;
        w.omitted = self.seen - self.ring.len();
        w.omitted_tokens = self.dropped_tokens;
        w.messages = self.ring.into();
        Some(w)
    }
}

impl WindowSink for LastMessages {
    fn head(&mut self, head: WindowHead) -> io::Result<()> {
        self.head = Some(head);
        Ok(())
    }
    fn message(&mut self, m: Message) -> io::Result<()> {
        self.seen += 1;
        self.ring.push_back(m);
        if self.ring.len() > self.keep
            && let Some(old) = self.ring.pop_front()
        {
            self.dropped_tokens += old.estimated_tokens();
        }
        Ok(())
    }
}

/// One piece of a streamed window.
pub enum WindowPiece {
    Head(Box<WindowHead>),
    Message(Box<Message>),
}

/// A window sink that passes pieces to another thread, a few at a time (as `ChannelSink`).
pub struct WindowChannel(pub SyncSender<WindowPiece>);

impl WindowSink for WindowChannel {
    fn head(&mut self, head: WindowHead) -> io::Result<()> {
        self.0.send(WindowPiece::Head(Box::new(head))).map_err(gone)
    }
    fn message(&mut self, m: Message) -> io::Result<()> {
        self.0.send(WindowPiece::Message(Box::new(m))).map_err(gone)
    }
}

/// A bounded channel for `WindowChannel`.
pub fn window_channel() -> (WindowChannel, Receiver<WindowPiece>) {
    let (tx, rx) = sync_channel(64);
    (WindowChannel(tx), rx)
}
