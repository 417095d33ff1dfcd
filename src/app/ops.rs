//! Session operations on the app side: which session a key acts on, the dialogs that gather
//! what an operation needs (confirmation, title, format and path), "fork from here", and
//! taking the run loop's `Outcome` back (rows updated at once, selection after delete/fork).

use super::action::{Effect, OpInput, Outcome, SessionOp};
use super::dialog::{self, Dialog};
use super::{App, Focus};
use crate::model::SessionSummary;

impl App {
    /// The session a key acts on: the pane's when it has focus, else the selection.
    fn target(&self) -> Option<SessionSummary> {
        let key = if self.focus == Focus::Pane {
            self.pane.key.as_ref()
        } else {
            self.list.selected.as_ref()
        };
        key.and_then(|k| self.list.get(k)).cloned()
    }

    /// A session key: open a dialog, or ask the run loop to perform it.
    pub(super) fn session_op(&mut self, op: SessionOp, fx: &mut Vec<Effect>) {
        if self.op_pending {
            self.status = Some("still working on the last action; try again in a moment".into());
            return;
        }
        self.list.keep_selection();
        if op == SessionOp::UndoDelete {
            match self.last_deleted.take() {
                Some(s) => push(fx, op, s, OpInput::None),
                None => self.status = Some("nothing to undo".into()),
            }
            return;
        }
        let Some(s) = self.target() else {
            self.status = Some("no session selected".into());
            return;
        };
        match op {
            // Nothing to confirm: the store refuses with the reason (it never writes there).
            SessionOp::Delete if s.store.read_only() => push(fx, op, s, OpInput::None),
            SessionOp::Delete => {
                self.dialog = Some(Dialog::ConfirmDelete {
                    summary: Box::new(s),
                })
            }
            SessionOp::Rename => {
                self.dialog = Some(Dialog::Rename {
                    input: dialog::LineInput::new(s.title()),
                    summary: Box::new(s),
                })
            }
            SessionOp::Export => self.dialog = Some(Dialog::export(&s)),
            // Codex refuses an archived thread until `codex unarchive`: ask first. (A resume
            // asks after its checks: `resume_checked`.)
            SessionOp::Fork if crate::resume::needs_unarchive(&s) => {
                self.dialog = Some(Dialog::ConfirmUnarchive {
                    summary: Box::new(s),
                    op,
                })
            }
            SessionOp::Fork => {
                let at = if self.focus == Focus::Pane {
                    self.pane.fork_cut()
                } else {
                    None
                };
                push(fx, op, s, OpInput::ForkAt(at));
            }
            _ => push(fx, op, s, OpInput::None),
        }
    }

    /// The checks before resume came back: refuse, ask, or go on.
    pub(super) fn resume_checked(
        &mut self,
        s: SessionSummary,
        r: crate::preflight::Report,
        fx: &mut Vec<Effect>,
    ) {
        // The resume is over unless it goes on below (`update` marks a pushed op pending).
        self.op_pending = false;
        if let Some(why) = r.refusals.first() {
            self.status = Some(format!("not resuming: {why}"));
        } else if !r.surprises.is_empty() {
            self.dialog = Some(Dialog::ConfirmResume {
                summary: Box::new(s),
                lines: r.lines(),
            });
        } else {
            self.resume_after_checks(s, fx);
        }
    }

    /// Resume once the checks passed or the user accepted what they found: a thread archived
    /// in Codex still asks before `codex unarchive` runs.
    fn resume_after_checks(&mut self, s: SessionSummary, fx: &mut Vec<Effect>) {
        if crate::resume::needs_unarchive(&s) {
            self.dialog = Some(Dialog::ConfirmUnarchive {
                summary: Box::new(s),
                op: SessionOp::Resume,
            });
        } else {
            push(fx, SessionOp::Resume, s, OpInput::Checked);
        }
    }

    /// y / Enter in a dialog.
    pub(super) fn dialog_accept(&mut self, fx: &mut Vec<Effect>) {
        let Some(d) = self.dialog.take() else { return };
        match d {
            Dialog::ConfirmDelete { summary } => {
                push(fx, SessionOp::Delete, *summary, OpInput::None)
            }
            Dialog::ConfirmResume { summary, .. } => self.resume_after_checks(*summary, fx),
            Dialog::ConfirmUnarchive { summary, op } => {
                push(fx, op, *summary, OpInput::UnarchiveFirst)
            }
            Dialog::Rename { summary, input } => {
                let title = input.text().trim().to_string();
                if title.is_empty() {
                    self.status = Some("a title cannot be empty".into());
                    self.dialog = Some(Dialog::Rename { summary, input });
                } else if *title == *summary.title() {
                    self.status = Some("title unchanged".into());
                } else {
                    push(fx, SessionOp::Rename, *summary, OpInput::Title(title));
                }
            }
            Dialog::Export {
                summary,
                format,
                path,
            } => {
                let typed = path.text();
                if typed.trim().is_empty() {
                    self.status = Some("a file name is needed".into());
                    self.dialog = Some(Dialog::Export {
                        summary,
                        format,
                        path,
                    });
                } else {
                    let path = dialog::expand_path(typed.trim());
                    push(
                        fx,
                        SessionOp::Export,
                        *summary,
                        OpInput::Export { format, path },
                    );
                }
            }
        }
    }

    /// Remember when the operation's rows were read, so a background re-read begun before
    /// it (and arriving after it) does not put the old row back.
    fn note_written(&mut self, o: &Outcome) {
        let at = o.finished.unwrap_or_else(std::time::Instant::now);
        // Only the last few seconds matter: a re-read takes no longer than a pass.
        self.written
            .retain(|_, w| at.duration_since(*w) < std::time::Duration::from_secs(60));
        for r in &o.rows {
            self.written.insert((r.store, r.id.to_string()), at);
        }
    }

    /// The run loop finished an operation.
    pub(super) fn op_done(&mut self, o: Outcome) {
        self.note_written(&o);
        if o.automatic {
            if !o.message.is_empty() {
                self.status = Some(o.message);
            }
            if !o.rows.is_empty() {
                self.list.upsert(o.rows);
            }
            return;
        }
        self.op_pending = false;
        self.status = Some(o.message);
        if !o.removed.is_empty() {
            // The row number stays, so the selection lands on the neighbour below (or the
            // new last row).
            self.list.remove(&o.removed);
            if self
                .pane
                .key
                .as_ref()
                .is_some_and(|k| o.removed.contains(k))
            {
                self.focus = Focus::List;
            }
        }
        if !o.rows.is_empty() {
            self.list.upsert(o.rows);
        }
        if let Some(s) = o.undoable {
            self.last_deleted = Some(s);
        }
        if let Some(k) = o.select {
            self.list.select_when_listed(k);
        }
    }
}

fn push(fx: &mut Vec<Effect>, op: SessionOp, s: SessionSummary, input: OpInput) {
    fx.push(Effect::Session {
        op,
        summary: Box::new(s),
        input,
    });
}
