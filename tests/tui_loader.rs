//! The background loader over an in-memory store: rows stream in batches with progress, the
//! pane worker answers with request tokens, and a new session appears via the watcher poll.

mod tui_common;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, mpsc};
use std::time::Duration;

use spool::app::{Action, Loaded, View};
use spool::error::Result;
use spool::loader::{Event, Loader, Request};
use spool::model::{SessionSummary, StoreKind, Transcript, Window};
use spool::store::{Candidate, Span, Store, Stores};

struct Fake {
    dir: PathBuf,
    ids: Arc<Mutex<Vec<String>>>,
}

impl Store for Fake {
    fn kind(&self) -> StoreKind {
        StoreKind::Loom
    }
    fn sessions_dir(&self) -> &Path {
        &self.dir
    }
    fn discover(&self) -> Vec<Candidate> {
        let ids = self.ids.lock().unwrap().clone();
        ids.into_iter()
            .map(|id| Candidate {
                path: self.dir.join(&id),
                id,
                mtime: None,
                stat: None,
            })
            .collect()
    }
    fn summarize(&self, c: &Candidate) -> Option<SessionSummary> {
        Some(tui_common::row(
            StoreKind::Loom,
            &c.id,
            &format!("title {}", c.id),
            1,
        ))
    }
    fn transcript(&self, id: &str, span: Span) -> Result<Transcript> {
        let s = tui_common::row(StoreKind::Loom, id, "t", 1);
        let mut t = tui_common::transcript(&s);
        if let Span::LastRounds(n) = span {
            t.warnings = vec![format!("last {n}")];
        }
        Ok(t)
    }
    fn window(&self, id: &str) -> Result<Window> {
        Ok(tui_common::window(&tui_common::row(
            StoreKind::Loom,
            id,
            "t",
            1,
        )))
    }
    fn raw(&self, _id: &str) -> Result<String> {
        Ok("raw".into())
    }
    fn set_pinned(&self, _: &str, _: bool) -> Result<()> {
        Ok(())
    }
    fn set_unread(&self, _: &str, _: bool) -> Result<()> {
        Ok(())
    }
    fn set_archived(&self, _: &str, _: bool) -> Result<()> {
        Ok(())
    }
    fn rename(&self, _: &str, _: &str) -> Result<()> {
        Ok(())
    }
    fn fork(&self, id: &str, _: Option<usize>) -> Result<String> {
        Ok(format!("{id}-fork"))
    }
    fn delete(&self, _: &str) -> Result<()> {
        Ok(())
    }
}

#[test]
fn rows_stream_with_progress_then_pane_answers_and_watch_adds_new_sessions() {
    let dir = tempfile::tempdir().unwrap();
    let ids = Arc::new(Mutex::new(
        (0..1000).map(|i| format!("s{i:04}")).collect::<Vec<_>>(),
    ));
    let stores = Arc::new(Stores {
        stores: vec![Box::new(Fake {
            dir: dir.path().to_path_buf(),
            ids: ids.clone(),
        })],
        state_dir: dir.path().join("state"),
    });
    let (tx, rx) = mpsc::channel();
    let loader = Loader::start(stores, tx);
    let mut rows = 0;
    let mut batches = 0;
    let mut last: Option<(usize, usize, bool)> = None;
    while last.is_none_or(|(_, _, finished)| !finished) {
        match rx.recv_timeout(Duration::from_secs(10)).unwrap() {
            Event::Action(Action::Cached(r) | Action::Reread { rows: r, .. }) => {
                rows += r.len();
                batches += 1;
            }
            Event::Action(Action::Progress {
                done,
                total,
                finished,
                ..
            }) => last = Some((done, total, finished)),
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(rows, 1000);
    assert!(batches >= 4, "batches of at most 256: {batches}");
    assert_eq!(last, Some((1000, 1000, true)));

    let s = tui_common::row(StoreKind::Loom, "s0001", "t", 1);
    loader.request(Request {
        token: 7,
        summary: s.clone(),
        view: View::Transcript,
        rounds: Some(20),
    });
    match rx.recv_timeout(Duration::from_secs(10)).unwrap() {
        Event::Action(Action::Loaded {
            token: 7,
            content: Loaded::Transcript(t),
        }) => {
            assert_eq!(t.warnings, ["last 20"]);
        }
        other => panic!("{other:?}"),
    }

    // A new session shows up through the poll / watcher pass.
    ids.lock().unwrap().push("s9999".into());
    loader.poke();
    loop {
        match rx.recv_timeout(Duration::from_secs(10)).unwrap() {
            Event::Action(Action::Cached(r) | Action::Reread { rows: r, .. }) => {
                assert_eq!(r.len(), 1);
                assert_eq!(r[0].id, "s9999");
                break;
            }
            _ => continue,
        }
    }
}
