//! The browser's side of the catalog: each loader thread's part of it, the stat pass of a
//! store whose rows came from the catalog, and recording what later passes re-read.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::mpsc::Sender;

use super::packed::{Listed, Packed};
use super::slim::Slim;
use super::survey;
use super::{ById, Entry};
use crate::app::Action;
use crate::loader::Event;
use crate::model::SessionSummary;
use crate::store::Store;

/// One store's part of the catalog: where it lives, and the rows cached for this store.
pub struct Cat {
    pub cache: Option<PathBuf>,
    pub known: Option<Vec<Slim>>,
}

impl Cat {
    /// The cached metas by id, built on the loader's thread (not before the first frame).
    pub fn by_id(metas: Vec<Slim>) -> ById {
        ById::of(metas)
    }

    /// Add what a pass re-read (and what left) to the catalog's patch log: the cost of the
    /// change, not of the catalog.
    pub fn record(&self, store: &dyn Store, fresh: &[Entry], gone: &[String]) {
        if let Some(c) = &self.cache
            && (!fresh.is_empty() || !gone.is_empty())
        {
            crate::catalog::log::append(c, store.kind(), store.sessions_dir(), fresh, gone);
        }
    }
}

/// A store's survey taken before its cached metas were at hand (the browser surveys while
/// the catalog decodes, as `spool list` does), packed (it waits beside the decoded rows), and
/// when it started.
pub struct Early {
    pub survey: Packed,
    pub since: std::time::Instant,
    /// The pass under way, from before the survey to after the check has freed its memory
    /// (`heap::Peaks`: the quick search's items wait for it).
    pub peak: Option<crate::heap::Peak>,
}

impl Early {
    /// Survey `store` now, as part of the pass `peak`. Under SPOOL_KEYTRACE: the survey's
    /// time from its start, and when it ended since launch (issue 10's warm start).
    pub fn take(store: &dyn Store, peak: Option<crate::heap::Peak>) -> Early {
        let since = std::time::Instant::now();
        let survey = survey::packed(store);
        let kind = store.kind().as_str();
        crate::keytrace::phase(&format!("surveyed_{kind}"), since);
        crate::keytrace::phase_since_launch(&format!("surveyed_{kind}_at"));
        Early {
            survey,
            since,
            peak,
        }
    }
}

/// The stat pass of a store whose rows came from the catalog: only what changed is read and
/// sent. Returns the known sessions for the watcher, or `None` when the app went away.
/// `old` is consumed: the catalog's metas are freed (or moved into what is returned) before
/// the watcher starts, not held for the life of the browser. `early` is the store's survey
/// if it was taken already (else it is taken here). Nothing is sent before `before_news`
/// returns (the catalog's rows are then on the channel, `loader::gate`).
pub fn check_cached(
    store: &dyn Store,
    i: usize,
    tx: &Sender<Event>,
    cat: &Cat,
    old: ById,
    early: Option<Early>,
    before_news: impl FnOnce(),
) -> Option<crate::catalog::Known> {
    let kind = store.kind();
    let Early { survey, since, .. } = early.unwrap_or_else(|| Early::take(store, None));
    let checked = crate::catalog::pass::check_packed(store, old, &survey);
    crate::keytrace::phase(&format!("checked_{}", kind.as_str()), since);
    crate::keytrace::phase_since_launch(&format!("checked_{}_at", kind.as_str()));
    crate::keytrace::count(&format!("reread_{}", kind.as_str()), checked.fresh.len());
    before_news();
    if !checked.gone.is_empty() {
        let keys = checked.gone.iter().map(|id| (kind, id.clone())).collect();
        tx.send(Event::Action(Action::Removed(keys))).ok()?;
    }
    // The entries' own rows, shared with the list: a copy of each was made here.
    let rows: Vec<Arc<SessionSummary>> =
        checked.fresh.iter().filter_map(|e| e.row.clone()).collect();
    let changed: Vec<_> = checked.changed.into_iter().map(|id| (kind, id)).collect();
    if !rows.is_empty() {
        tx.send(Event::Action(Action::Reread { rows, since }))
            .ok()?;
    }
    for k in changed {
        tx.send(Event::Action(Action::SessionChanged(k))).ok()?;
    }
    let total = survey.count();
    let done = Action::Progress {
        store: i,
        kind,
        done: total,
        total,
        finished: true,
    };
    tx.send(Event::Action(done)).ok()?;
    cat.record(store, &checked.fresh, &checked.gone);
    Some(checked.known)
}
