//! The browser's session operations (pin, rename, archive, fork, delete, export): the store
//! side of each, run in order on a worker thread so writes and their fsyncs never stall the UI.

use std::sync::Arc;
use std::sync::mpsc;

use crate::app::{OpInput, Outcome, SessionOp};
use crate::error::Error;
use crate::loader::Event;
use crate::model::{SessionSummary, StoreKind};
use crate::store::{Candidate, Span, Stores};

/// Session operations, run one at a time in order on their own thread; each answers with
/// `Event::OpFinished`.
pub(super) struct OpsWorker {
    pub(super) jobs: mpsc::Sender<(SessionOp, Box<SessionSummary>, OpInput)>,
}

impl OpsWorker {
    pub(super) fn start(stores: Arc<Stores>, events: mpsc::Sender<Event>) -> OpsWorker {
        let (jobs, rx) = mpsc::channel::<(SessionOp, Box<SessionSummary>, OpInput)>();
        let _ = std::thread::Builder::new()
            .name("spool-ops".into())
            .spawn(move || {
                for (op, summary, input) in rx {
                    let mut outcome = perform(op, &summary, input, &stores)
                        .unwrap_or_else(|e| Outcome::message(e.to_string()));
                    outcome.automatic = op.is_automatic();
                    outcome.finished = Some(std::time::Instant::now());
                    let done = Event::OpFinished(Box::new(outcome));
                    if events.send(done).is_err() {
                        return;
                    }
                }
            });
        OpsWorker { jobs }
    }
}

/// The store side of every operation but resume. Metadata writes re-read the row so the
/// list shows the change at once.
pub fn perform(
    op: SessionOp,
    s: &SessionSummary,
    input: OpInput,
    stores: &Stores,
) -> crate::error::Result<Outcome> {
    let store = stores.store_for(s);
    let r = s.reference();
    let key = (s.store, s.id.to_string());
    let reread = |message: String| {
        let c = Candidate {
            id: s.id.to_string(),
            path: s.path(),
            mtime: None,
            stat: None,
        };
        Outcome {
            message,
            rows: store.summarize(&c).into_iter().collect(),
            ..Outcome::default()
        }
    };
    Ok(match op {
        SessionOp::TogglePin => {
            store.set_pinned(&s.id, !s.pinned())?;
            reread(format!(
                "{} {r}",
                if s.pinned() { "unpinned" } else { "pinned" }
            ))
        }
        SessionOp::ToggleUnread => {
            store.set_unread(&s.id, !s.unread)?;
            reread(format!(
                "marked {r} {}",
                if s.unread { "read" } else { "unread" }
            ))
        }
        // Quiet on success: the dot leaving the row says it.
        SessionOp::MarkRead => {
            store.set_unread(&s.id, false)?;
            reread(String::new())
        }
        SessionOp::ToggleArchive => {
            store.set_archived(&s.id, !s.archived)?;
            reread(format!(
                "{} {r}",
                if s.archived { "unarchived" } else { "archived" }
            ))
        }
        SessionOp::Rename => {
            let OpInput::Title(title) = input else {
                return Err(Error::Usage("rename needs a title".into()));
            };
            store.rename(&s.id, &title)?;
            reread(format!("renamed {r}"))
        }
        SessionOp::Fork => {
            let at = match input {
                OpInput::ForkAt(at) => at,
                _ => None,
            };
            let id = store.fork(&s.id, at)?;
            // Say where the fork ends in the pane's numbers (`#N` on each message).
            let from = match at {
                Some(0) => " before message #0".to_string(),
                Some(i) => format!(" through message #{}", i - 1),
                None => String::new(),
            };
            Outcome {
                message: format!("forked {r}{from} into {}:{id}", s.store),
                select: Some((s.store, id)),
                ..Outcome::default()
            }
        }
        SessionOp::Delete => {
            crate::store::delete_confirmed(store, s)?;
            let undoable = s.store == StoreKind::Loom;
            Outcome {
                message: if undoable {
                    format!("deleted {r} (U undoes within 10 minutes)")
                } else {
                    format!("deleted {r}")
                },
                removed: vec![key],
                undoable: undoable.then(|| s.clone()),
                ..Outcome::default()
            }
        }
        SessionOp::UndoDelete => {
            store.undo_delete(&s.id)?;
            let mut o = reread(format!("restored {r}"));
            o.select = Some(key);
            o
        }
        SessionOp::Export => {
            let OpInput::Export { format, path } = input else {
                return Err(Error::Usage("export needs a format and a path".into()));
            };
            let t = store.transcript(&s.id, Span::All)?;
            stores.write_export(&path, &crate::export::render(&t, format))?;
            let shown = std::path::absolute(&path).unwrap_or(path);
            Outcome::message(format!("exported {r} to {}", shown.display()))
        }
        SessionOp::Resume => Outcome::message("resume runs in the browser only"),
    })
}
