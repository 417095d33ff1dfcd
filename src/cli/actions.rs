//! `show`, `export` and `delete`: the subcommands that print a session or ask before acting.

use std::cell::RefCell;
use std::io::{BufRead, IsTerminal, Write};
use std::sync::mpsc::Receiver;

use super::stream::{self, Sanitized};
use super::{DeleteArgs, ExportArgs, ShowArgs, note, stdout_err};
use crate::error::{Error, Result};
use crate::export;
use crate::model::Entry;
use crate::model::SessionSummary;
use crate::model::left_off::Builder;
use crate::store::sink::{self, Piece, WindowPiece};
use crate::store::{Span, Store, Stores};
use crate::text;

pub(super) fn show(out: &mut impl Write, stores: &Stores, a: &ShowArgs) -> Result<()> {
    let s = stores.resolve(&a.reference)?;
    let store = stores.store_for(&s);
    // Written as it is produced, a piece at a time: a huge session's output is never held
    // whole (nor its sanitised copy).
    let mut out = Sanitized::new(std::io::BufWriter::with_capacity(1 << 16, out));
    if a.raw {
        store.raw_to(&s.id, &mut |p| out.put_lines(p))?;
    } else if a.window {
        window(&mut out, store, &s.id, a.json)?;
    } else {
        let span = a.last.map_or(Span::All, |n| Span::LastRounds(n as usize));
        transcript(&mut out, store, &s.id, span, a.json)?;
    }
    if !out.ends_with_newline {
        out.put("\n").map_err(stdout_err)?;
    }
    out.inner().flush().map_err(stdout_err)
}

/// `show`'s transcript as the store reads it: the store sends its pieces from a thread of
/// its own, a few ahead of the writer, so neither side holds the session (issue 11).
fn transcript<W: Write>(
    out: &mut Sanitized<W>,
    store: &dyn Store,
    id: &str,
    span: Span,
    json: bool,
) -> Result<()> {
    let (mut sink, pieces) = sink::channel();
    std::thread::scope(|scope| {
        let reader = scope.spawn(move || store.transcript_to(id, span, &mut sink));
        let written = write_transcript(out, &pieces, json);
        // A failed write ends the reader: its next send finds the channel closed.
        drop(pieces);
        let read = reader
            .join()
            .unwrap_or_else(|_| Err(Error::Refused("reading the session failed".into())));
        // The reader's own error explains a missing head; a write error comes after it.
        read?;
        written.map_err(stdout_err)
    })
}

/// `show --window` as the store replays it, from a thread of its own as `transcript` (a
/// huge loom log's window is planned from offsets and read a message at a time).
fn window<W: Write>(out: &mut Sanitized<W>, store: &dyn Store, id: &str, json: bool) -> Result<()> {
    let (mut sink, pieces) = sink::window_channel();
    std::thread::scope(|scope| {
        let reader = scope.spawn(move || store.window_to(id, &mut sink));
        let written = write_window(out, &pieces, json);
        drop(pieces);
        let read = reader
            .join()
            .unwrap_or_else(|_| Err(Error::Refused("reading the session failed".into())));
        read?;
        written.map_err(stdout_err)
    })
}

fn write_window<W: Write>(
    out: &mut Sanitized<W>,
    pieces: &Receiver<WindowPiece>,
    json: bool,
) -> std::io::Result<()> {
    let Ok(WindowPiece::Head(head)) = pieces.recv() else {
        return Ok(());
    };
    let messages = pieces.iter().filter_map(|p| match p {
        WindowPiece::Message(m) => Some(*m),
        WindowPiece::Head(_) => None,
    });
    let w = &head.window;
    if json {
        stream::json(out.inner(), &w.summary, messages, Some(head.tokens), || {
            None
        })
    } else {
        export::window_streamed(w, head.count, head.tokens, messages, |p| out.put(p))
    }
}

fn write_transcript<W: Write>(
    out: &mut Sanitized<W>,
    pieces: &Receiver<Piece>,
    json: bool,
) -> std::io::Result<()> {
    let Ok(Piece::Head(head)) = pieces.recv() else {
        // The reader failed before its first piece; it says why.
        return Ok(());
    };
    let entries = pieces.iter().filter_map(|p| match p {
        Piece::Entry(e) => Some(e),
        Piece::Head(_) => None,
    });
    if json {
        // The "left off" card is folded from the messages as they go out.
        let mut b = Builder::default();
        b.stored(head.todos.clone());
        let card = RefCell::new(b);
        let messages = entries.filter_map(|e| match e {
            Entry::Message(m) => {
                card.borrow_mut().push(&m);
                Some(*m)
            }
            _ => None,
        });
        let left_off = || {
            let b = std::mem::take(&mut *card.borrow_mut());
            Some(b.finish(head.first_round, head.total_rounds).to_json())
        };
        stream::json(out.inner(), &head.summary, messages, None, left_off)
    } else {
        // The export banner warns about sharing a file; `show` writes none.
        export::streamed_pieces(&head, entries, false, |p| out.put(p))
    }
}

pub(super) fn export_cmd(out: &mut impl Write, stores: &Stores, a: &ExportArgs) -> Result<()> {
    let s = stores.resolve(&a.reference)?;
    let t = stores.store_for(&s).transcript(&s.id, Span::All)?;
    let body = export::render(&t, a.to);
    match &a.output {
        Some(path) => {
            stores.write_export(path, &body)?;
            note(&format!("exported {} to {}", s.reference(), path.display()));
        }
        None => {
            // To a terminal, session text is sanitised; to a pipe or file, exact.
            let body = if std::io::stdout().is_terminal() {
                text::sanitize(&body)
            } else {
                body
            };
            out.write_all(body.as_bytes()).map_err(stdout_err)?;
        }
    }
    Ok(())
}

/// The delete question, sanitised whole: the ref is a file name and as untrusted as the title.
fn confirm_prompt(s: &SessionSummary) -> String {
    let first = if crate::store::delete_archives_first(s) {
        " (Loop deletes only archived sessions: it is archived first)"
    } else {
        ""
    };
    format!(
        "Delete {} \"{}\"{first}? [y/N] ",
        text::one_line(&s.reference()),
        text::one_line(s.title())
    )
}

/// Ask on stderr and read y/N from a terminal; `refusal` when stdin is not one.
fn ask(prompt: &str, refusal: String, cancelled: &str) -> Result<()> {
    if !std::io::stdin().is_terminal() {
        return Err(Error::Refused(refusal));
    }
    let _ = write!(std::io::stderr().lock(), "{prompt}");
    let mut answer = String::new();
    std::io::stdin()
        .lock()
        .read_line(&mut answer)
        .map_err(|e| Error::io("reading", "stdin", e))?;
    if !matches!(answer.trim(), "y" | "Y" | "yes") {
        return Err(Error::Refused(cancelled.into()));
    }
    Ok(())
}

/// The checks before `spool resume`, on stderr: refuse what will fail, ask (or `--yes`)
/// when the ground moved.
pub(super) fn preflight(
    s: &SessionSummary,
    plan: &crate::resume::ResumePlan,
    yes: bool,
) -> Result<()> {
    let in_use = false; // `resume::plan` already refused a session in use.
    let r = crate::preflight::check(s, &plan.cwd, plan.problem(), in_use);
    // A refusal is the error itself: one sentence, the cause first.
    if !r.refusals.is_empty() {
        return Err(Error::Refused(r.refusals.join("; ")));
    }
    for l in r.lines() {
        note(&format!("spool: {}", text::one_line(&l)));
    }
    if !r.surprises.is_empty() && !yes {
        ask(
            "resume anyway? [y/N] ",
            format!(
                "not resuming {}: the ground moved (see above); pass --yes",
                s.reference()
            ),
            "resume cancelled",
        )?;
    }
    Ok(())
}

pub(super) fn delete(stores: &Stores, a: &DeleteArgs) -> Result<()> {
    let s = stores.resolve(&a.reference)?;
    if s.store.read_only() {
        // Refused before asking: there is nothing to confirm.
        return stores.store_for(&s).delete(&s.id);
    }
    if !a.yes {
        let refusal = format!(
            "not deleting {} without confirmation; pass --yes",
            s.reference()
        );
        ask(&confirm_prompt(&s), refusal, "delete cancelled")?;
    }
    crate::store::delete_confirmed(stores.store_for(&s), &s)?;
    note(&format!("deleted {}", s.reference()));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_delete_prompt_prints_no_escape_from_the_ref() {
        use crate::model::StoreKind;
        let mut s =
            SessionSummary::new(StoreKind::Loom, "x\u{1b}]52;c;aGk=\u{7}\u{1b}[2J\ny", "/p");
        s.set_title("t\u{1b}[31m");
        let p = confirm_prompt(&s);
        assert!(!p.chars().any(|c| c.is_control()), "{p:?}");
        assert!(p.starts_with("Delete loom:x"), "{p}");
    }
}
