//! Modal dialogs of the browser: the delete confirmation, the rename prompt and the export
//! dialog, with the one-line editor they share. Pure state: keys reach them as `Action`s.

use std::path::PathBuf;

use crate::export::{self, Format};
use crate::model::{SessionSummary, StoreKind};

/// One editing step in a text field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Edit {
    /// Insert a character at the cursor.
    Insert(char),
    /// Delete the character before the cursor.
    Backspace,
    /// Delete the character under the cursor.
    Delete,
    Left,
    Right,
    Home,
    End,
    /// Clear the whole field (Ctrl-u).
    Clear,
}

/// A single-line text field with a cursor (a char index, so wide characters stay whole).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LineInput {
    chars: Vec<char>,
    cursor: usize,
}

impl LineInput {
    /// A field holding `s` with the cursor at the end.
    pub fn new(s: &str) -> LineInput {
        let chars: Vec<char> = s.chars().collect();
        LineInput {
            cursor: chars.len(),
            chars,
        }
    }

    pub fn text(&self) -> String {
        self.chars.iter().collect()
    }

    /// The cursor position in chars.
    pub fn cursor(&self) -> usize {
        self.cursor
    }

    pub fn apply(&mut self, e: Edit) {
        match e {
            Edit::Insert(c) if !c.is_control() => {
                self.chars.insert(self.cursor, c);
                self.cursor += 1;
            }
            Edit::Insert(_) => {}
            Edit::Backspace if self.cursor > 0 => {
                self.cursor -= 1;
                self.chars.remove(self.cursor);
            }
            Edit::Backspace => {}
            Edit::Delete if self.cursor < self.chars.len() => {
                self.chars.remove(self.cursor);
            }
            Edit::Delete => {}
            Edit::Left => self.cursor = self.cursor.saturating_sub(1),
            Edit::Right => self.cursor = (self.cursor + 1).min(self.chars.len()),
            Edit::Home => self.cursor = 0,
            Edit::End => self.cursor = self.chars.len(),
            Edit::Clear => {
                self.chars.clear();
                self.cursor = 0;
            }
        }
    }

    /// Insert pasted text at the cursor, flattened to one line (line breaks and tabs become
    /// spaces, other control characters are dropped).
    pub fn paste(&mut self, s: &str) {
        let s = s.trim_end_matches(['\n', '\r']);
        for c in s.chars() {
            let c = if matches!(c, '\n' | '\r' | '\t') {
                ' '
            } else {
                c
            };
            self.apply(Edit::Insert(c));
        }
    }

    /// Replace the text, cursor at the end.
    pub fn set(&mut self, s: &str) {
        *self = LineInput::new(s);
    }
}

/// The open dialog, if any. While one is open it takes every key.
#[derive(Clone, Debug)]
pub enum Dialog {
    /// "Delete this session?" y/Enter confirms, n/Esc cancels.
    ConfirmDelete { summary: Box<SessionSummary> },
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
            | Dialog::Rename { summary, .. }
            | Dialog::Export { summary, .. } => summary,
        }
    }

    /// Whether the dialog has a text field (typing edits it) rather than y/n keys.
    pub fn has_input(&self) -> bool {
        !matches!(self, Dialog::ConfirmDelete { .. })
    }

    pub fn input_mut(&mut self) -> Option<&mut LineInput> {
        match self {
            Dialog::ConfirmDelete { .. } => None,
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
    format!("./{}.{}", export::slug(&s.title), f.extension())
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

    #[test]
    fn editing_keys() {
        let mut i = LineInput::new("héllo");
        i.apply(Edit::Home);
        i.apply(Edit::Delete);
        i.apply(Edit::Insert('J'));
        i.apply(Edit::End);
        i.apply(Edit::Backspace);
        i.apply(Edit::Left);
        i.apply(Edit::Insert('世'));
        assert_eq!(i.text(), "Jél世l");
        assert_eq!(i.cursor(), 4);
        i.apply(Edit::Right);
        i.apply(Edit::Right);
        assert_eq!(i.cursor(), 5);
        i.paste("a\nb");
        assert_eq!(i.text(), "Jél世la b");
        i.apply(Edit::Insert('\u{1b}'));
        assert_eq!(i.text(), "Jél世la b");
        i.apply(Edit::Clear);
        assert_eq!((i.text().as_str(), i.cursor()), ("", 0));
        i.apply(Edit::Backspace);
        i.apply(Edit::Left);
        assert_eq!(i.cursor(), 0);
    }
}
