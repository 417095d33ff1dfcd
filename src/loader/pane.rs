//! The pane worker: one request at a time from a one-slot mailbox (only the newest runs),
//! read from its store and answered with the request's token.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Sender;

use super::{Event, Mailbox, Request};
use crate::app::pane::{RAW_PER_ROUND, WINDOW_PER_ROUND};
use crate::app::{Action, Loaded, View};
use crate::store::{Span, Stores};

pub(super) fn pane_worker(
    stores: &Stores,
    mailbox: &Mailbox,
    tx: &Sender<Event>,
    stop: &AtomicBool,
) {
    let (lock, cv) = &**mailbox;
    loop {
        let req = {
            let Ok(mut slot) = lock.lock() else { return };
            while slot.is_none() {
                if stop.load(Ordering::SeqCst) {
                    return;
                }
                slot = match cv.wait(slot) {
                    Ok(s) => s,
                    Err(_) => return,
                };
            }
            slot.take()
        };
        let Some(req) = req else { continue };
        let content = load(stores, &req);
        let msg = Event::Action(Action::Loaded {
            token: req.token,
            content,
        });
        if tx.send(msg).is_err() {
            return;
        }
    }
}

/// Read one pane request from its store.
pub fn load(stores: &Stores, req: &Request) -> Loaded {
    let store = stores.store_for(&req.summary);
    let id = &req.summary.id;
    let r = match req.view {
        View::Transcript => {
            let span = req.rounds.map(Span::LastRounds).unwrap_or(Span::All);
            store
                .transcript(id, span)
                .map(|t| Loaded::Transcript(Arc::new(t)))
        }
        // A page from the end: only what the first screens show is read and held.
        View::Window => match req.rounds {
            Some(r) => store.window_page(id, r.saturating_mul(WINDOW_PER_ROUND)),
            None => store.window(id),
        }
        .map(|w| Loaded::Window(Arc::new(w))),
        View::Raw => match req.rounds {
            Some(r) => store.raw_page(id, (r as u64).saturating_mul(RAW_PER_ROUND)),
            None => store.raw(id).map(|t| (t, false)),
        }
        .map(|(r, more)| Loaded::Raw(Arc::new(r), more)),
    };
    r.unwrap_or_else(|e| Loaded::Failed(e.to_string()))
}
