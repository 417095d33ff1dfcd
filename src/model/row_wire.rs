//! A row's serde form (the catalog's row, and the schema fingerprint's field names): every
//! field in its own slot, in the order rows had before the rare fields moved into a box, so
//! the catalog's bytes did not change with the row's memory layout.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize, Serializer};

use super::row_text::RowText;
use super::session::{Rare, RareBox};
use super::wire_scratch::{self, Bytes, List, Text};
use super::{Ended, SessionSummary, Shared, StoreKind};

/// What is written, borrowed from the row (encoding copies nothing).
#[derive(Serialize)]
struct Out<'a> {
    store: StoreKind,
    id: &'a str,
    title: &'a str,
    summary: &'a str,
    cwd: &'a Option<Shared>,
    #[serde(with = "super::wire::time_opt")]
    created_at: &'a Option<DateTime<Utc>>,
    #[serde(with = "super::wire::time_opt")]
    updated_at: &'a Option<DateTime<Utc>>,
    messages: u64,
    #[serde(with = "super::wire::time_opt")]
    pinned_at: &'a Option<DateTime<Utc>>,
    pinned_flag: bool,
    unread: bool,
    archived: bool,
    forked_from: Option<&'a str>,
    child_of: Option<&'a str>,
    #[serde(with = "super::wire::path_bytes")]
    path: PathBuf,
    error: Option<&'a str>,
    first_prompt: &'a str,
    has_user_message: bool,
    model: &'a Option<Shared>,
    #[serde(serialize_with = "badges")]
    badges: &'a SessionSummary,
    read_only: bool,
    ended: Option<Ended>,
    git_branch: Option<&'a str>,
}

/// What is read: the same fields, the texts held in this thread's scratch until the row is
/// built (`wire_scratch`), the rest owned.
#[derive(Deserialize)]
pub(super) struct Wire {
    store: StoreKind,
    #[serde(deserialize_with = "super::wire::arc_str::deserialize")]
    id: std::sync::Arc<str>,
    title: Text,
    summary: Text,
    cwd: Option<Shared>,
    #[serde(with = "super::wire::time_opt")]
    created_at: Option<DateTime<Utc>>,
    #[serde(with = "super::wire::time_opt")]
    updated_at: Option<DateTime<Utc>>,
    messages: u64,
    #[serde(with = "super::wire::time_opt")]
    pinned_at: Option<DateTime<Utc>>,
    pinned_flag: bool,
    unread: bool,
    archived: bool,
    forked_from: Option<String>,
    child_of: Option<String>,
    path: Bytes,
    error: Option<String>,
    first_prompt: Text,
    has_user_message: bool,
    model: Option<Shared>,
    /// Not `Shared`: a count is the row's own (`badges`), never interned.
    badges: List,
    read_only: bool,
    ended: Option<Ended>,
    git_branch: Option<Shared>,
}

impl Serialize for SessionSummary {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        Out {
            store: self.store,
            id: &self.id,
            title: self.title(),
            summary: self.summary(),
            cwd: &self.cwd,
            created_at: &self.created_at,
            updated_at: &self.updated_at,
            messages: self.messages,
            pinned_at: &self.pinned_at,
            pinned_flag: self.pinned_flag,
            unread: self.unread,
            archived: self.archived,
            forked_from: self.forked_from(),
            child_of: self.child_of(),
            path: self.path(),
            error: self.error(),
            first_prompt: self.first_prompt(),
            has_user_message: self.has_user_message,
            model: &self.model,
            badges: self,
            read_only: self.read_only,
            ended: self.ended,
            git_branch: self.git_branch(),
        }
        .serialize(s)
    }
}

impl From<Wire> for SessionSummary {
    fn from(w: Wire) -> SessionSummary {
        let rare = Rare {
            forked_from: w.forked_from,
            child_of: w.child_of,
            error: w.error,
        };
        let texts = [w.title, w.summary, w.first_prompt];
        let (text, badges) = wire_scratch::take(texts, w.path, w.badges, |h| {
            // Split as `set_badges` does, so the buffer is built once.
            let (badges, own) = super::badges::split(&h.list(w.badges));
            let path = Path::new(OsStr::from_bytes(h.bytes(w.path)));
            let texts = texts.map(|t| h.text(t));
            (RowText::new(texts, &own, path, &w.id), badges)
        });
        SessionSummary {
            store: w.store,
            text,
            id: w.id,
            cwd: w.cwd,
            created_at: w.created_at,
            updated_at: w.updated_at,
            messages: w.messages,
            pinned_at: w.pinned_at,
            pinned_flag: w.pinned_flag,
            unread: w.unread,
            archived: w.archived,
            has_user_message: w.has_user_message,
            model: w.model,
            badges,
            read_only: w.read_only,
            ended: w.ended,
            git_branch: w.git_branch,
            rare: RareBox((rare != Rare::default()).then(|| Box::new(rare))),
        }
    }
}

/// A row's badges as the sequence of strings they were (interned or the row's own alike).
fn badges<S: Serializer>(s: &&SessionSummary, out: S) -> Result<S::Ok, S::Error> {
    out.collect_seq(s.badges())
}
