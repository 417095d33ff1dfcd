//! The agent-harness store: one pretty-printed JSON record per session in
//! `<memory-dir>/sessions/<id>.json`, guarded by the harness's `<id>.lock` lease
//! (contract: shared/formats/harness.md).

mod ended;
mod json;
mod lean;
mod passes;
mod raw;
mod record;
mod render;
mod streamed;
mod write;

#[cfg(test)]
mod tests_malformed;
#[cfg(test)]
mod tests_read;
#[cfg(test)]
mod tests_stream;
#[cfg(test)]
mod tests_write;

use std::path::{Path, PathBuf};

use super::sink::{EntrySink, WindowSink};
use super::{Candidate, Span, Store, lease, sidecar};
use crate::error::{Error, Result};
use crate::model::{SessionSummary, StoreKind, Transcript, Window};
use crate::store::regular::{self, Links};

pub use render::NOTICE;

/// Records from this size on are read in passes (`streamed`, `raw`); smaller ones whole,
/// in one read, which costs less than three passes and at most a few MB. Unit tests and
/// the fuzzer (`cargo fuzz` builds with `--cfg fuzzing`) take the passes for every record,
/// so the fixtures prove them equal to the whole read and the fuzzer reaches them.
const STREAM_FROM: u64 = if cfg!(any(test, fuzzing)) { 0 } else { 1 << 20 };

pub struct HarnessStore {
    root: PathBuf,
    sessions: PathBuf,
}

/// The harness's `_session_path` rule: the id must fully match `[A-Za-z0-9_-]+`.
pub fn valid_id(id: &str) -> bool {
    !id.is_empty()
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

impl HarnessStore {
    /// The store for the memory directory `root` (sessions under `root/sessions/`).
    pub fn new(root: &Path) -> Self {
        HarnessStore {
            root: root.to_path_buf(),
            sessions: root.join("sessions"),
        }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `sessions/<id>.json`, refusing ids the harness itself would refuse (no path tricks).
    fn record_path(&self, id: &str) -> Result<PathBuf> {
        if !valid_id(id) {
            return Err(Error::NotFound(format!("harness:{id}")));
        }
        Ok(self.sessions.join(format!("{id}.json")))
    }

    fn lock_path(&self, id: &str) -> Result<PathBuf> {
        if !valid_id(id) {
            return Err(Error::NotFound(format!("harness:{id}")));
        }
        Ok(self.sessions.join(format!("{id}.lock")))
    }

    /// Load the record of `id`; a missing file is `NotFound`.
    pub(crate) fn load_existing(&self, id: &str) -> Result<(PathBuf, record::Loaded)> {
        let path = self.record_path(id)?;
        match record::load(&path) {
            Ok(l) => Ok((path, l)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                Err(Error::NotFound(format!("harness:{id}")))
            }
            Err(e) => Err(Error::io("reading", &path, e)),
        }
    }

    /// Read `id` for display: its row and its parsed record. Unreadable records and records
    /// whose `messages`/`transcript` are not arrays are refused (the raw view still works).
    fn open(&self, id: &str) -> Result<(SessionSummary, json::Parsed)> {
        let (path, loaded) = self.load_existing(id)?;
        self.checked(id, &path, loaded)
    }

    /// `open` for the transcript, which shows `transcript` and not the working context
    /// (`messages`): that array is skipped while parsing when the record has a transcript.
    fn open_transcript(&self, id: &str) -> Result<(SessionSummary, json::Parsed)> {
        let path = self.record_path(id)?;
        if let Ok(Some(loaded)) = record::load_lean(&path, "messages")
            && loaded
                .parsed
                .as_ref()
                .is_ok_and(|p| p.map.contains_key("transcript"))
        {
            return self.checked(id, &path, loaded);
        }
        self.open(id)
    }

    /// `open` for the window, which shows `messages` and not `transcript`: the row comes
    /// from its own lean parse (`record::load_row`) and the record is parsed without
    /// `transcript`, so neither history is held twice (issue 11).
    fn open_window(&self, id: &str) -> Result<(SessionSummary, json::Parsed)> {
        let path = self.record_path(id)?;
        if let Ok(row) = record::load_row(&path)
            && let Ok(Some(loaded)) = record::load_lean(&path, "transcript")
        {
            let summary = record::summarize(&self.sessions, id, &path, &row);
            drop(row);
            return self.checked_as(id, summary, loaded);
        }
        self.open(id)
    }

    fn checked(
        &self,
        id: &str,
        path: &std::path::Path,
        loaded: record::Loaded,
    ) -> Result<(SessionSummary, json::Parsed)> {
        let summary = record::summarize(&self.sessions, id, path, &loaded);
        self.checked_as(id, summary, loaded)
    }

    /// `checked` with the row already built.
    fn checked_as(
        &self,
        id: &str,
        summary: SessionSummary,
        loaded: record::Loaded,
    ) -> Result<(SessionSummary, json::Parsed)> {
        let parsed = loaded.parsed.map_err(|why| {
            Error::Corrupt(format!(
                "harness session {id} is an unreadable record: {why}"
            ))
        })?;
        if let Some(why) = record::problem(&parsed.map, id)
            && why.contains("array")
        {
            return Err(Error::Corrupt(format!(
                "harness session {id} is malformed ({why}); use the raw view"
            )));
        }
        Ok((summary, parsed))
    }

    /// Warnings shown with the transcript and the window.
    fn warnings(&self, id: &str, s: &SessionSummary, p: &json::Parsed) -> Vec<String> {
        let mut w = Vec::new();
        if let Some(e) = &s.error() {
            w.push(format!("{e}: read-only"));
        }
        if p.non_finite {
            w.push("record holds NaN/Infinity numbers: read-only".into());
        }
        if let Some(sw) = sidecar::read(&self.sessions, id).warning() {
            w.push(sw);
        }
        w
    }
    /// The window's warnings: the transcript's and what stops a resume.
    fn window_warnings(&self, id: &str, s: &SessionSummary, p: &json::Parsed) -> Vec<String> {
        let mut warnings = self.warnings(id, s, p);
        if s.archived {
            warnings.push("archived: the harness refuses to resume it until unarchived".into());
        }
        if s.badges().any(|b| b == "running") {
            warnings.push("running: another harness process holds the session".into());
        }
        warnings
    }

    /// The transcript from the record parsed whole: the careful path, for the records the
    /// passes decline (it words what is wrong with them).
    fn transcript_whole(&self, id: &str, span: Span) -> Result<Transcript> {
        let (summary, parsed) = self.open_transcript(id)?;
        let warnings = self.warnings(id, &summary, &parsed);
        // `state` is saved apart from `messages` and may lag them after a crash (the
        // contract calls it advisory): the card shows it as the recorded list all the same.
        let todos = parsed
            .map
            .get("state")
            .and_then(|s| s.get("todos"))
            .filter(|t| t.is_array())
            .map(crate::model::left_off::LeftOff::stored_todos);
        let all = render::entries(parsed.map);
        let (entries, first_round, total_rounds) = match span {
            Span::All => render::last_rounds(all, usize::MAX),
            Span::LastRounds(n) => render::last_rounds(all, n),
        };
        Ok(Transcript {
            summary,
            entries,
            total_rounds,
            first_round,
            warnings,
            todos,
        })
    }

    /// The window from the record parsed whole (as `transcript_whole`).
    fn window_whole(&self, id: &str) -> Result<Window> {
        let (summary, parsed) = self.open_window(id)?;
        let warnings = self.window_warnings(id, &summary, &parsed);
        let map = &parsed.map;
        let messages: &[serde_json::Value] = map
            .get("messages")
            .and_then(serde_json::Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or(&[]);
        Ok(Window {
            messages: render::window_messages(messages),
            system_note: Some(render::resume_note(map)),
            summary,
            warnings,
            omitted: 0,
            omitted_tokens: 0,
        })
    }
    /// The record of `id` opened for a streamed read; `None` when it is small enough to read
    /// whole in one go (the passes read it three times), or too big to read at all (the
    /// careful path words that).
    fn open_record(&self, id: &str) -> Result<Option<std::fs::File>> {
        let path = self.record_path(id)?;
        let f = match regular::open(&path, Links::Refuse) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(Error::NotFound(format!("harness:{id}")));
            }
            Err(e) => return Err(Error::io("reading", &path, e)),
        };
        let fits = f
            .metadata()
            .is_ok_and(|m| (STREAM_FROM..=record::MAX_RECORD_BYTES).contains(&m.len()));
        Ok(fits.then_some(f))
    }

    /// The record pretty-printed as the harness writes it, parsed whole; records that cannot
    /// be re-serialised faithfully (unparsable, non-finite numbers) are shown as stored.
    fn raw_whole(&self, id: &str) -> Result<String> {
        let path = self.record_path(id)?;
        let loaded = record::load(&path).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => Error::NotFound(format!("harness:{id}")),
            _ => Error::io("reading", &path, e),
        })?;
        let record::Loaded { bytes, parsed } = loaded;
        Ok(match parsed {
            // The text is not shown once parsed: dropped before the dump is built.
            Ok(p) if !p.non_finite => {
                drop(bytes);
                json::py_dump(&serde_json::Value::Object(p.map))
            }
            _ => String::from_utf8_lossy(&bytes).into_owned(),
        })
    }

    /// The session records in directory order, each with its `lstat` when `stat` is set.
    /// Read with `getdents64`: std's `read_dir` allocated each of 66k names at 100k sessions
    /// (a lock file beside each record) and `DirEntry::path` each record's path again, about
    /// a tenth of a warm `spool list`'s CPU over this store alone (issue 10).
    fn scan(&self, stat: bool) -> Vec<Candidate> {
        use crate::store::dirents::{self, Kind};
        let mut out = Vec::new();
        let listed = dirents::each(&self.sessions, |name, kind| {
            // Every valid id is ASCII; the entry's type does not follow symlinks.
            let Some(id) = (std::str::from_utf8(name).ok())
                .filter(|n| !n.starts_with('.') && kind == Kind::File)
                .and_then(|n| n.strip_suffix(".json"))
                .filter(|stem| valid_id(stem))
            else {
                return;
            };
            let path = crate::store::fanout::path_of_stem(&self.sessions, id, ".json");
            let meta = (stat.then(|| std::fs::symlink_metadata(&path).ok())).flatten();
            out.push(Candidate {
                id: id.to_string(),
                path,
                mtime: meta.as_ref().and_then(|m| m.modified().ok()),
                stat: meta.as_ref().map(crate::catalog::stamp::Stat::of),
            });
        });
        match listed {
            Ok(()) => out,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(_) => vec![Candidate::unreadable_dir(&self.sessions)],
        }
    }
}

impl Store for HarnessStore {
    fn root_dir(&self) -> Option<&Path> {
        Some(&self.root)
    }

    fn kind(&self) -> StoreKind {
        StoreKind::Harness
    }

    fn sessions_dir(&self) -> &Path {
        &self.sessions
    }

    /// Records sit in `sessions/` itself (a non-recursive glob, harness.md section 1): no
    /// subdirectory holds a row's input but the sidecar directory, registered on its own.
    fn watch_depth(&self) -> u32 {
        0
    }

    /// Regular `sessions/*.json` files with a valid id stem, newest mtime first. Dot-files,
    /// temps, symlinks and other names are not sessions. Never creates anything.
    fn discover(&self) -> Vec<Candidate> {
        let mut out = self.scan(true);
        out.sort_by(|a, b| b.mtime.cmp(&a.mtime).then_with(|| a.id.cmp(&b.id)));
        out
    }

    /// `discover` in directory order and without an `lstat` of each record: the stat pass
    /// keys candidates in any order and takes each record's `lstat` itself, split over the
    /// cores. Taken here, they were one thread's 33k `statx` at 100k sessions, under load
    /// the last survey of a warm `spool list` to end (issue 10).
    fn discover_unordered(&self) -> Vec<Candidate> {
        self.scan(false)
    }

    fn summarize(&self, c: &Candidate) -> Option<SessionSummary> {
        if c.path == self.sessions {
            return crate::store::unreadable_dir_row(StoreKind::Harness, c);
        }
        Some(match record::load_row(&c.path) {
            Ok(loaded) => record::summarize(&self.sessions, &c.id, &c.path, &loaded),
            Err(e) => SessionSummary::error_row(
                StoreKind::Harness,
                c.id.clone(),
                c.path.clone(),
                format!("unreadable record: {e}"),
            ),
        })
    }

    fn transcript(&self, id: &str, span: Span) -> Result<Transcript> {
        let mut gather = super::sink::Gather::default();
        if streamed::transcript_to(self, id, span, &mut gather)?
            && let Some(t) = gather.finish()
        {
            return Ok(t);
        }
        self.transcript_whole(id, span)
    }

    /// The entries shown, read and sent one at a time (`streamed`): a 100 MB record costs
    /// what is shown.
    fn transcript_to(&self, id: &str, span: Span, sink: &mut dyn EntrySink) -> Result<()> {
        if streamed::transcript_to(self, id, span, sink)? {
            return Ok(());
        }
        let t = self.transcript_whole(id, span)?;
        super::sink::send_whole(t, sink).map_err(super::sink_error)
    }

    fn window(&self, id: &str) -> Result<Window> {
        self.window_page(id, usize::MAX)
    }

    /// The window's messages, counted in one pass and sent in the next (`streamed`).
    fn window_to(&self, id: &str, sink: &mut dyn WindowSink) -> Result<()> {
        if streamed::window_to(self, id, sink)? {
            return Ok(());
        }
        let w = self.window_whole(id)?;
        super::sink::send_window(w, sink).map_err(super::sink_error)
    }

    /// The record pretty-printed as the harness writes it, gathered from `raw_to`.
    fn raw(&self, id: &str) -> Result<String> {
        super::sink::raw_gathered(|out| self.raw_to(id, out))
    }

    /// The dump written a field, and a history entry, at a time (`raw`); records that
    /// cannot be re-serialised faithfully (unparsable, non-finite numbers, a repeated key)
    /// take the careful path.
    fn raw_to(&self, id: &str, out: &mut dyn FnMut(&str) -> std::io::Result<()>) -> Result<()> {
        if let Some(mut f) = self.open_record(id)? {
            let mut failed = false;
            let done = raw::dump_to(&mut f, &mut |p| out(p).inspect_err(|_| failed = true));
            match done {
                Ok(true) => return Ok(()),
                Ok(false) => {}
                Err(e) if failed => return Err(super::sink_error(e)),
                Err(e) => return Err(Error::io("reading", &self.record_path(id)?, e)),
            }
        }
        let text = self.raw_whole(id)?;
        out(&text).map_err(super::sink_error)
    }

    /// The dump's last `bytes` or so, in whole fields and history entries.
    fn raw_page(&self, id: &str, bytes: u64) -> Result<(String, bool)> {
        if let Some(mut f) = self.open_record(id)?
            && let Some(page) = raw::tail(&mut f, bytes)
                .map_err(|e| Error::Corrupt(format!("harness:{id}: {e}")))?
        {
            return Ok(page);
        }
        Ok((self.raw_whole(id)?, false))
    }

    fn set_pinned(&self, id: &str, pinned: bool) -> Result<()> {
        self.write_pinned(id, pinned)
    }

    fn set_unread(&self, id: &str, unread: bool) -> Result<()> {
        self.write_unread(id, unread)
    }

    fn set_archived(&self, id: &str, archived: bool) -> Result<()> {
        self.write_archived(id, archived)
    }

    fn rename(&self, id: &str, title: &str) -> Result<()> {
        self.write_title(id, title)
    }

    fn fork(&self, id: &str, at: Option<usize>) -> Result<String> {
        self.write_fork(id, at)
    }

    fn delete(&self, id: &str) -> Result<()> {
        self.write_delete(id)
    }

    /// The read-only lease probe (never creates the lock file).
    fn in_use(&self, id: &str) -> bool {
        self.lock_path(id).is_ok_and(|p| lease::lease_held(&p))
    }
}
