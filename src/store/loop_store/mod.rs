//! The Loop store (contract: shared/formats/loop.md): per-project collections under
//! `<agent_dir>/sessions/`, each holding v3 session directories (`meta.json`,
//! `messages.jsonl`, `index.json`), legacy v2 single files and `archive.json`.
//!
//! `discover`/`locate` find sessions (here), `envelope` parses `meta.json` or the legacy
//! header line, `listing` builds rows, `history` reads and validates messages, `convert` maps
//! pi-ai messages to the neutral model, `replay` rebuilds the context window, and `write`,
//! `archive` and `fork` are the writers of section 9.

mod archive;
mod checkpoints;
pub(crate) mod convert;
mod ended;
mod envelope;
mod fork;
mod guard;
mod header;
mod history;
mod listing;
mod replay;
mod stream;
mod validate;
mod write;

#[cfg(test)]
mod tests;

use std::fs;
use std::path::{Path, PathBuf};

use super::{Candidate, Span, Store};
use crate::error::{Error, Result};
use crate::model::{SessionSummary, StoreKind, Transcript, Window};

pub use header::{fallback_title, valid_id};

/// `sha256(realpath(cwd))`, first 24 lowercase hex characters: the workspace collection name.
pub fn workspace_hash(realpath: &str) -> String {
    use sha2::{Digest, Sha256};
    let d = Sha256::digest(realpath.as_bytes());
    crate::hex::encode(&d[..12])
}

/// The Loop store rooted at an agent directory (`$LOOP_DATA_DIR` or `~/.loop`).
pub struct LoopStore {
    root: PathBuf,
    sessions: PathBuf,
}

/// Which layout a located session uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Layout {
    /// `<collection>/<id>/` with `meta.json`, `messages.jsonl`, `index.json`.
    V3,
    /// `<collection>/<id>.jsonl` with no `<id>/` beside it.
    Legacy,
}

/// Where one session lives.
#[derive(Clone, Debug)]
pub(crate) struct Loc {
    /// The directory or file name's id (what the row is called, even if the header differs).
    pub id: String,
    pub collection: PathBuf,
    pub path: PathBuf,
    pub layout: Layout,
}

impl Loc {
    pub fn meta_path(&self) -> PathBuf {
        self.path.join("meta.json")
    }
    pub fn messages_path(&self) -> PathBuf {
        self.path.join("messages.jsonl")
    }
    pub fn index_path(&self) -> PathBuf {
        self.path.join("index.json")
    }
    pub fn archive_path(&self) -> PathBuf {
        self.collection.join("archive.json")
    }
}

/// Names that are never sessions: dot entries (staging, deletion) and atomic-write temps.
fn is_debris(name: &str) -> bool {
    name.starts_with('.') || name.ends_with(".tmp")
}

impl LoopStore {
    pub fn new(root: &Path) -> Self {
        LoopStore {
            root: root.to_path_buf(),
            sessions: root.join("sessions"),
        }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Every immediate, real (non-symlink) subdirectory of `sessions/` is a collection.
    fn collections(&self) -> Vec<PathBuf> {
        let mut out: Vec<PathBuf> = fs::read_dir(&self.sessions)
            .into_iter()
            .flatten()
            .flatten()
            .filter(|e| !is_debris(&e.file_name().to_string_lossy()))
            .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
            .map(|e| e.path())
            .collect();
        out.sort();
        out
    }

    /// Candidates of one collection (section 1, discovery steps 2 to 5).
    /// `stat`: whether each candidate gets its `lstat` (its mtime orders `discover`; a
    /// stat pass keys the session's files, not its directory, and goes without).
    fn discover_in(collection: &Path, out: &mut Vec<Candidate>, stat: bool) {
        let Ok(entries) = fs::read_dir(collection) else {
            out.push(Candidate::unreadable_dir(collection));
            return;
        };
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if is_debris(&name) {
                continue;
            }
            // DirEntry::file_type does not follow symlinks, so symlinks are neither.
            let Ok(ft) = e.file_type() else { continue };
            let id = if ft.is_dir() && valid_id(&name) {
                name
            } else if ft.is_file()
                && let Some(stem) = name.strip_suffix(".jsonl")
                && valid_id(stem)
                && !dir_exists(&collection.join(stem))
            {
                stem.to_string()
            } else {
                continue;
            };
            let meta = stat.then(|| e.metadata().ok()).flatten();
            out.push(Candidate {
                id,
                path: e.path(),
                mtime: meta.as_ref().and_then(|m| m.modified().ok()),
                stat: meta.as_ref().map(crate::catalog::stamp::Stat::of),
            });
        }
    }

    /// Every collection's candidates (unsorted), the collections split over up to `threads`
    /// threads: discovery `lstat`s every session, and with several collections the two
    /// halves overlap (a collection is the unit: each is one directory read).
    fn discover_split(&self, threads: usize, stat: bool) -> Vec<Candidate> {
        let cols = self.collections();
        let threads = threads.clamp(1, cols.len().max(1));
        if threads == 1 {
            let mut out = Vec::new();
            for col in &cols {
                Self::discover_in(col, &mut out, stat);
            }
            return out;
        }
        super::gather_parallel(cols.chunks(cols.len().div_ceil(threads)), |part| {
            let mut out = Vec::new();
            for col in part {
                Self::discover_in(col, &mut out, stat);
            }
            out
        })
    }

    /// Find a session by id in any collection. A directory hides a same-named `.jsonl`
    /// (the migration backup), even if the directory is invalid.
    pub(crate) fn locate(&self, id: &str) -> Result<Loc> {
        if !valid_id(id) {
            return Err(Error::NotFound(id.to_string()));
        }
        for col in self.collections() {
            if let Some(loc) = loc_in(&col, id) {
                return Ok(loc);
            }
        }
        Err(Error::NotFound(id.to_string()))
    }
}

/// Discovery's threads: the machine has two cores to share with the other stores' passes.
const DISCOVERY_THREADS: usize = 2;

/// A real directory (or a symlink, which also hides the backup but is never listed).
fn dir_exists(p: &Path) -> bool {
    fs::symlink_metadata(p).is_ok_and(|m| m.is_dir() || m.file_type().is_symlink())
}

fn loc_in(col: &Path, id: &str) -> Option<Loc> {
    let dir = col.join(id);
    let file = col.join(format!("{id}.jsonl"));
    let layout = if fs::symlink_metadata(&dir).is_ok_and(|m| m.is_dir()) {
        Layout::V3
    } else if !dir_exists(&dir) && fs::symlink_metadata(&file).is_ok_and(|m| m.is_file()) {
        Layout::Legacy
    } else {
        return None;
    };
    Some(Loc {
        id: id.to_string(),
        collection: col.to_path_buf(),
        path: if layout == Layout::V3 { dir } else { file },
        layout,
    })
}

/// The location a candidate path names (its parent is the collection).
fn loc_of(c: &Candidate) -> Option<Loc> {
    loc_in(c.path.parent()?, &c.id)
}

impl Store for LoopStore {
    fn root_dir(&self) -> Option<&Path> {
        Some(&self.root)
    }

    fn kind(&self) -> StoreKind {
        StoreKind::Loop
    }
    fn sessions_dir(&self) -> &Path {
        &self.sessions
    }
    /// Collections, and the v3 session directories in them: `meta.json` and `messages.jsonl`
    /// change inside a session's directory, which its collection's watch does not see
    /// (loop.md section 1). Nothing deeper is read; staging (`.stage-`, `.delete-`) is
    /// dot-named and skipped, and a staged session renamed into place is registered on its
    /// rename event.
    fn watch_depth(&self) -> u32 {
        2
    }
    fn discover(&self) -> Vec<Candidate> {
        let mut out = self.discover_split(DISCOVERY_THREADS, true);
        out.sort_by(|a, b| b.mtime.cmp(&a.mtime).then_with(|| b.id.cmp(&a.id)));
        out
    }
    /// Entry types only: a session's directory is no input of its key.
    fn discover_unordered(&self) -> Vec<Candidate> {
        self.discover_split(DISCOVERY_THREADS, false)
    }
    /// The session's files the row is read from, by name (no directory read), its
    /// collection's `archive.json` (archived comes from there) and the state file. Not
    /// `index.json`: only history paging reads it, never the row (`listing::summarize`), so
    /// stamping it cost every warm pass one `statx` per session for nothing (issue 10).
    /// The layout is told by the name
    /// discovery gave (`<id>.jsonl` is a legacy file, `<id>` a v3 directory), not by a stat:
    /// the path's own stamp already holds its type, so a name of the wrong type changes the
    /// key and is re-read, and a legacy file shadowed by a new `<id>/` is a new candidate.
    ///
    /// A v3 session's directory is no input either: the row is read from its two files by
    /// name, whose own stamps catch every write, rename over them, removal and chmod, and a
    /// directory that can no longer be searched makes their lookups fail (a changed key).
    /// Discovery tells a directory from a file or a symlink by its entry type, and a path
    /// of another layout is another candidate path. Without it a stat pass takes two
    /// `statx` per session, not three (issue 10), and discovery for a pass stats nothing.
    fn summary_inputs(&self, c: &Candidate) -> Vec<PathBuf> {
        let mut v = Vec::with_capacity(5);
        let Some(col) = c.path.parent().filter(|p| *p != self.sessions.as_path()) else {
            // The error row of a collection that cannot be listed.
            v.push(c.path.clone());
            v.push(self.state_file(&c.id));
            return v;
        };
        // `<id>.jsonl`, compared without building the name (once per session per pass).
        let legacy = c
            .path
            .file_name()
            .is_some_and(|n| n.as_encoded_bytes().strip_suffix(b".jsonl") == Some(c.id.as_bytes()));
        if legacy {
            v.push(c.path.clone());
        } else {
            v.extend(["meta.json", "messages.jsonl"].map(|f| c.path.join(f)));
        }
        v.push(col.join("archive.json"));
        v.push(self.state_file(&c.id));
        v
    }
    fn summarize(&self, c: &Candidate) -> Option<SessionSummary> {
        if c.path.parent() == Some(self.sessions.as_path()) {
            return super::unreadable_dir_row(StoreKind::Loop, c);
        }
        listing::summarize(&loc_of(c)?)
    }
    fn transcript(&self, id: &str, span: Span) -> Result<Transcript> {
        history::transcript(&self.locate(id)?, span)
    }
    fn transcript_to(
        &self,
        id: &str,
        span: Span,
        sink: &mut dyn super::sink::EntrySink,
    ) -> Result<()> {
        stream::transcript_to(&self.locate(id)?, span, sink)
    }
    fn window(&self, id: &str) -> Result<Window> {
        replay::window(&self.locate(id)?, usize::MAX)
    }
    /// The page's messages are the only ones held.
    fn window_page(&self, id: &str, keep: usize) -> Result<Window> {
        replay::window(&self.locate(id)?, keep)
    }
    fn raw_page(&self, id: &str, bytes: u64) -> Result<(String, bool)> {
        stream::raw_page(&self.locate(id)?, bytes)
    }
    fn raw(&self, id: &str) -> Result<String> {
        history::raw(&self.locate(id)?)
    }
    fn raw_to(&self, id: &str, out: &mut dyn FnMut(&str) -> std::io::Result<()>) -> Result<()> {
        stream::raw_to(&self.locate(id)?, out)
    }
    fn set_pinned(&self, id: &str, pinned: bool) -> Result<()> {
        write::set_pinned(&self.locate(id)?, pinned)
    }
    fn set_unread(&self, id: &str, unread: bool) -> Result<()> {
        let loc = self.locate(id)?;
        if unread {
            write::mark_unread(&loc)
        } else {
            write::mark_read_current(&loc).map(|_| ())
        }
    }
    fn set_archived(&self, id: &str, archived: bool) -> Result<()> {
        archive::set_archived(&self.locate(id)?, archived)
    }
    fn rename(&self, id: &str, title: &str) -> Result<()> {
        write::rename(&self.locate(id)?, title)
    }
    fn fork(&self, id: &str, at: Option<usize>) -> Result<String> {
        fork::fork(&self.locate(id)?, at)
    }
    fn delete(&self, id: &str) -> Result<()> {
        archive::delete(&self.locate(id)?)
    }
}
