//! The loom (append-only JSONL event log) store. IN PROGRESS: being implemented per ../shared/formats.

use std::path::{Path, PathBuf};

use super::{Candidate, Span, Store};
use crate::error::{Error, Result};
use crate::model::{SessionSummary, StoreKind, Transcript, Window};

pub struct LoomStore {
    root: PathBuf,
    sessions: PathBuf,
}

impl LoomStore {
    pub fn new(root: &Path) -> Self {
        LoomStore {
            root: root.to_path_buf(),
            sessions: root.join("sessions"),
        }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }
}

fn todo() -> Error {
    Error::Refused("not implemented yet".into())
}

impl Store for LoomStore {
    fn kind(&self) -> StoreKind {
        StoreKind::Loom
    }
    fn sessions_dir(&self) -> &Path {
        &self.sessions
    }
    fn discover(&self) -> Vec<Candidate> {
        Vec::new()
    }
    fn summarize(&self, _c: &Candidate) -> Option<SessionSummary> {
        None
    }
    fn transcript(&self, _id: &str, _span: Span) -> Result<Transcript> {
        Err(todo())
    }
    fn window(&self, _id: &str) -> Result<Window> {
        Err(todo())
    }
    fn raw(&self, _id: &str) -> Result<String> {
        Err(todo())
    }
    fn set_pinned(&self, _id: &str, _pinned: bool) -> Result<()> {
        Err(todo())
    }
    fn set_unread(&self, _id: &str, _unread: bool) -> Result<()> {
        Err(todo())
    }
    fn set_archived(&self, _id: &str, _archived: bool) -> Result<()> {
        Err(todo())
    }
    fn rename(&self, _id: &str, _title: &str) -> Result<()> {
        Err(todo())
    }
    fn fork(&self, _id: &str, _at: Option<usize>) -> Result<String> {
        Err(todo())
    }
    fn delete(&self, _id: &str) -> Result<()> {
        Err(todo())
    }
}
