//! `show`, `export` and `delete`: the subcommands that print a session or ask before acting.

use std::io::{BufRead, IsTerminal, Write};

use super::stream::{self, Sanitized};
use super::{DeleteArgs, ExportArgs, ShowArgs, note, stdout_err};
use crate::error::{Error, Result};
use crate::export;
use crate::model::SessionSummary;
use crate::store::{Span, Stores};
use crate::text;

pub(super) fn show(out: &mut impl Write, stores: &Stores, a: &ShowArgs) -> Result<()> {
    let s = stores.resolve(&a.reference)?;
    let store = stores.store_for(&s);
    // Written as it is produced, a piece at a time: a huge session's output is never held
    // whole (nor its sanitised copy).
    let mut out = Sanitized::new(std::io::BufWriter::with_capacity(1 << 16, out));
    if a.raw {
        out.put_lines(&store.raw(&s.id)?).map_err(stdout_err)?;
    } else if a.window {
        let w = store.window(&s.id)?;
        if a.json {
            let tokens = Some(w.estimated_tokens());
            stream::json(out.inner(), &w.summary, w.messages.iter(), tokens, None)
        } else {
            export::window_pieces(&w, |p| out.put(p))
        }
        .map_err(stdout_err)?;
    } else {
        let span = a.last.map_or(Span::All, |n| Span::LastRounds(n as usize));
        let t = store.transcript(&s.id, span)?;
        if a.json {
            // The "left off" card is built from the transcript already read.
            let lo = crate::model::left_off::LeftOff::from_transcript(&t).to_json();
            stream::json(out.inner(), &t.summary, t.messages(), None, Some(lo))
        } else {
            // The export banner warns about sharing a file; `show` writes none.
            export::transcript_pieces(&t, false, |p| out.put(p))
        }
        .map_err(stdout_err)?;
    }
    if !out.ends_with_newline {
        out.put("\n").map_err(stdout_err)?;
    }
    out.inner().flush().map_err(stdout_err)
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
        text::one_line(&s.title)
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
        s.title = "t\u{1b}[31m".into();
        let p = confirm_prompt(&s);
        assert!(!p.chars().any(|c| c.is_control()), "{p:?}");
        assert!(p.starts_with("Delete loom:x"), "{p}");
    }
}
