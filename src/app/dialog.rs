//! Modal dialogs of the browser: the delete confirmation, the rename prompt and the export
//! dialog. Pure state: keys reach them as `Action`s; their text fields are `LineInput`s.

use std::path::PathBuf;

pub use super::line_input::{Edit, LineInput};
use crate::export::{self, Format};
use crate::model::{SessionSummary, StoreKind};

/// The open dialog, if any. While one is open it takes every key.
#[derive(Clone, Debug)]
pub enum Dialog {
    /// "Delete this session?" y/Enter confirms, n/Esc cancels.
    ConfirmDelete { summary: Box<SessionSummary> },
    /// The checks before resume found changes (`preflight::Report::lines`): y/Enter resumes
    /// anyway, n/Esc does not.
    ConfirmResume {
        summary: Box<SessionSummary>,
        lines: Vec<String>,
    },
    /// "Let Codex unarchive this thread, then resume (or fork) it?" (codex.md section 8).
    ConfirmUnarchive {
        summary: Box<SessionSummary>,
        op: super::action::SessionOp,
    },
    /// The new title, prefilled with the current one.
    Rename {
        summary: Box<SessionSummary>,
        input: LineInput,
    },
    /// Format (Tab cycles) and the file to write (never overwritten).
    Export {
        summary: Box<SessionSummary>,
        format: Format,
        path: LineInput,
    },
}

impl Dialog {
    pub fn summary(&self) -> &SessionSummary {
        match self {
            Dialog::ConfirmDelete { summary }
            | Dialog::ConfirmResume { summary, .. }
            | Dialog::ConfirmUnarchive { summary, .. }
            | Dialog::Rename { summary, .. }
            | Dialog::Export { summary, .. } => summary,
        }
    }

    /// Whether the dialog has a text field (typing edits it) rather than y/n keys.
    pub fn has_input(&self) -> bool {
        !matches!(
            self,
            Dialog::ConfirmDelete { .. }
                | Dialog::ConfirmResume { .. }
                | Dialog::ConfirmUnarchive { .. }
        )
    }

    pub fn input_mut(&mut self) -> Option<&mut LineInput> {
        match self {
            Dialog::ConfirmDelete { .. }
            | Dialog::ConfirmResume { .. }
            | Dialog::ConfirmUnarchive { .. } => None,
            Dialog::Rename { input, .. } => Some(input),
            Dialog::Export { path, .. } => Some(path),
        }
    }

    /// The export dialog for `s`: Markdown to `./<title-slug>.md`.
    pub fn export(s: &SessionSummary) -> Dialog {
        Dialog::Export {
            summary: Box::new(s.clone()),
            format: Format::Markdown,
            path: LineInput::new(&default_export_path(s, Format::Markdown)),
        }
    }

    /// Cycle the export format; a path still ending in the old extension follows along.
    pub fn cycle_format(&mut self, forward: bool) {
        if let Dialog::Export { format, path, .. } = self {
            let next = if forward {
                match format {
                    Format::Markdown => Format::Html,
                    Format::Html => Format::Json,
                    Format::Json => Format::Markdown,
                }
            } else {
                match format {
                    Format::Markdown => Format::Json,
                    Format::Html => Format::Markdown,
                    Format::Json => Format::Html,
                }
            };
            let text = path.text();
            let old = format!(".{}", format.extension());
            if let Some(stem) = text.strip_suffix(&old) {
                path.set(&format!("{stem}.{}", next.extension()));
            }
            *format = next;
        }
    }
}

/// `./<title-slug>.<ext>` in the current directory.
pub fn default_export_path(s: &SessionSummary, f: Format) -> String {
    format!("./{}.{}", export::slug(s.title()), f.extension())
}

/// The path typed in the export dialog: `~/` means the home directory.
pub fn expand_path(typed: &str) -> PathBuf {
    match typed.strip_prefix("~/") {
        Some(rest) => std::env::var_os("HOME")
            .map(|h| PathBuf::from(h).join(rest))
            .unwrap_or_else(|| PathBuf::from(typed)),
        None => PathBuf::from(typed),
    }
}

/// What deleting means in each store, for the confirmation dialog.
pub fn delete_note(s: &SessionSummary) -> String {
    match s.store {
        // Short enough for the dialog's width (the key hint says "archive and delete").
        StoreKind::Loop if !s.archived => {
            "Loop deletes only archived sessions: it is archived, then removed.".into()
        }
        StoreKind::Loop => "The session and its backup are removed for good.".into(),
        StoreKind::Loom => {
            "It moves to loom's trash; U undoes the delete within 10 minutes.".into()
        }
        StoreKind::Harness => "The session is removed for good (its lock file is kept).".into(),
        StoreKind::Claude => {
            "spool never deletes Claude Code's files; archive hides it in spool.".into()
        }
        StoreKind::Codex => "spool never deletes Codex's files; archive hides it in spool.".into(),
        StoreKind::Pi => "spool never deletes pi's files; archive hides it in spool.".into(),
    }
}

/// What confirming the delete dialog does, for its key hint: only what can work is offered.
pub fn delete_action(s: &SessionSummary) -> &'static str {
    if crate::store::delete_archives_first(s) {
        "archive and delete"
    } else {
        "delete"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unarchived_loop_session_is_offered_archive_and_delete() {
        let mut s = SessionSummary::new(StoreKind::Loop, "a", "/s/a");
        assert_eq!(delete_action(&s), "archive and delete");
        assert!(!delete_note(&s).contains("archive it first"));
        s.archived = true;
        assert_eq!(delete_action(&s), "delete");
        s.store = StoreKind::Harness;
        s.archived = false;
        assert_eq!(delete_action(&s), "delete");
    }
}
