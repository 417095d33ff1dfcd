//! The streamed views of a pi session (issues 9 and 11): `show`, the pane's transcript and
//! the replayed window read the file in passes and never hold its entries' bodies. The
//! first pass is the listing's slim read (`read::Mode::Scan`): per entry only its ids, kind,
//! role, times and where its line is. The tree and active path come from that; the later
//! passes read only the path's lines again, one at a time, by their offsets, convert each
//! and send it on.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::Path;

use serde_json::Value;

use super::read::{self, Ent, Parsed};
use super::transcript::{self, Ctx};
use super::tree::{self, Tree};
use super::{PiStore, window};
use crate::error::{Error, Result};
use crate::model::{Entry, SessionSummary, Transcript};
use crate::store::sink::{EntrySink, WindowHead, WindowSink};
use crate::store::{Span, sink_error};

/// The lines of a file's entries, read again by their offsets.
pub struct Lines<'a> {
    file: File,
    ents: &'a [Ent],
    /// Lines that no longer hold their entry (pi rewrote the file between the passes).
    pub changed: u64,
}

impl<'a> Lines<'a> {
    pub fn open(path: &Path, ents: &'a [Ent]) -> io::Result<Lines<'a>> {
        Ok(Lines {
            file: read::open(path)?,
            ents,
            changed: 0,
        })
    }

    /// Entry `i`'s whole line: kept by the first pass (metadata entries), else read again.
    /// A line that no longer parses as the same entry is `Null` (shows nothing) and counted.
    pub fn load(&mut self, i: usize) -> Cow<'a, Value> {
        let e = &self.ents[i];
        if !e.v.is_null() {
            return Cow::Borrowed(&e.v);
        }
        match self.reread(e) {
            Some(v) => Cow::Owned(v),
            None => {
                self.changed += 1;
                Cow::Owned(Value::Null)
            }
        }
    }

    fn reread(&mut self, e: &Ent) -> Option<Value> {
        self.file.seek(SeekFrom::Start(e.at)).ok()?;
        let mut bytes = Vec::new();
        (&mut self.file).take(e.len).read_to_end(&mut bytes).ok()?;
        let (v, _) = read::decode(&bytes)?;
        // A v1 entry has no id of its own (`#<offset>`), so its kind is what can be checked.
        let same = v.get("type").and_then(Value::as_str) == Some(e.kind.as_str())
            && (e.id.starts_with('#') || v.get("id").and_then(Value::as_str) == Some(&e.id));
        same.then_some(v)
    }
}

/// The notice for lines that changed under the reader, if any did.
fn changed_notice(changed: u64) -> Option<Entry> {
    (changed > 0).then(|| {
        Entry::Notice(format!(
            "{changed} entr{} changed while the file was read (pi rewrote it?): not shown",
            if changed == 1 { "y" } else { "ies" }
        ))
    })
}

/// Ids of the entries that also exist in the parent file (with the same type): a fork's
/// copied region (pi.md section 5).
pub fn copied(ents: &[Ent], parent_ids: &HashMap<String, String>) -> HashSet<String> {
    ents.iter()
        .filter(|e| parent_ids.get(&e.id) == Some(&e.kind))
        .map(|e| e.id.to_string())
        .collect()
}

/// The path positions of the user messages: where rounds start.
fn user_positions(ents: &[Ent], t: &Tree) -> Vec<usize> {
    t.path
        .iter()
        .enumerate()
        .filter(|&(_, &i)| ents[i].kind == "message" && ents[i].role.as_deref() == Some("user"))
        .map(|(k, _)| k)
        .collect()
}

impl PiStore {
    /// The transcript to `sink`, an entry at a time. The rounds are counted from the first
    /// pass; `--last N` starts at the user message of its first round and reads no line
    /// before it (but the extension messages it must number).
    pub(super) fn send_all(&self, id: &str, span: Span, sink: &mut dyn EntrySink) -> Result<()> {
        let (path, l) = self.load_id(id, read::Mode::Scan)?;
        let p: &Parsed = &l.parsed;
        let (parent, parent_ids, missing) = Self::parent_of(p);
        let copied = copied(&p.ents, &parent_ids);
        drop(parent_ids);
        let cx = Ctx {
            labels: &l.facts.labels,
            copied: &copied,
            parent: parent.as_deref(),
        };
        let mut notices = Vec::new();
        if !l.facts.labels.is_empty() {
            let list: Vec<String> = l.facts.labels.values().cloned().collect();
            notices.push(Entry::Notice(format!("labels: {}", list.join(", "))));
        }
        notices.extend(missing.map(Entry::Notice));
        let head = l.summary.clone();
        Self::send_parsed(&path, p, &cx, (head, notices), span, sink)
    }

    /// What the full-text index reads (`Store::index_entries_to`): the messages and
    /// compactions of the active path, numbered as `send_all` numbers them, from the file the
    /// row names. Only that file is read, once whole and then the path's lines: no search
    /// for the file by id, no listing row, state or fork parent (those give notices and
    /// labels, which the index does not hold).
    pub(super) fn send_indexed(
        &self,
        row: &SessionSummary,
        sink: &mut dyn EntrySink,
    ) -> Result<()> {
        let path = self.listed_file(row)?;
        let p = read::read(&path, read::Mode::Scan).map_err(|e| Error::io("reading", &path, e))?;
        let none = (std::collections::BTreeMap::new(), HashSet::new());
        let cx = Ctx {
            labels: &none.0,
            copied: &none.1,
            parent: None,
        };
        Self::send_parsed(&path, &p, &cx, (row.clone(), Vec::new()), Span::All, sink)
    }

    /// The transcript of the file at `path`, read in its first pass as `p`, to `sink`: `head`
    /// is the row sent first and the notices shown before the path when the history is
    /// sent from its start.
    fn send_parsed(
        path: &Path,
        p: &Parsed,
        cx: &Ctx<'_>,
        (head, notices): (SessionSummary, Vec<Entry>),
        span: Span,
        sink: &mut dyn EntrySink,
    ) -> Result<()> {
        let io = |e| Error::io("reading", path, e);
        let t = tree::build(&p.ents);
        // As `store::last_rounds` over the whole path: from the user message of the first
        // kept round (none when `n` is 0).
        let users = user_positions(&p.ents, &t);
        let total = users.len();
        let (first_round, from) = match span {
            Span::LastRounds(n) if n < total => (
                total - n,
                users.get(total - n).copied().unwrap_or(t.path.len()),
            ),
            _ => (0, 0),
        };
        sink.head(Transcript {
            summary: head,
            entries: Vec::new(),
            total_rounds: total,
            first_round,
            warnings: Self::warnings(p, &t),
            todos: None,
        })
        .map_err(sink_error)?;
        let mut failed: Option<io::Error> = None;
        let mut send = |e: Entry| {
            if failed.is_none() {
                failed = sink.entry(e).err();
            }
        };
        if first_round == 0 {
            notices.into_iter().for_each(&mut send);
        }
        let mut lines = Lines::open(path, &p.ents).map_err(io)?;
        transcript::each(
            &p.ents,
            &t,
            &t.path,
            cx,
            (0, from),
            &mut |i| lines.load(i),
            &mut send,
        );
        if matches!(span, Span::All) {
            let on_path = t.on_path();
            let unlinked = t.orphans.iter().filter(|o| !on_path.contains(o)).count();
            if unlinked > 0 {
                send(Entry::Notice(format!(
                    "unlinked entries: {unlinked} entr{} whose parent is missing, off the \
                     active path",
                    if unlinked == 1 { "y" } else { "ies" }
                )));
            }
        }
        if let Some(n) = changed_notice(lines.changed) {
            send(n);
        }
        failed.map_or(Ok(()), |e| Err(sink_error(e)))
    }

    /// The window to `sink`: counted in one pass over the replayed lines, sent in the next.
    pub(super) fn send_window(&self, id: &str, sink: &mut dyn WindowSink) -> Result<()> {
        let (path, l) = self.load_id(id, read::Mode::Scan)?;
        let io = |e| Error::io("reading", &path, e);
        let p: &Parsed = &l.parsed;
        let t = tree::build(&p.ents);
        let (mut count, mut tokens) = (0, 0);
        let mut lines = Lines::open(&path, &p.ents).map_err(io)?;
        window::each(&p.ents, &t, &mut |i| lines.load(i), &mut |m| {
            count += 1;
            tokens += m.estimated_tokens();
        });
        sink.head(WindowHead::new(
            Some(window::system_note(
                l.facts.model.as_deref(),
                l.facts.thinking.as_deref(),
            )),
            Self::warnings(p, &t),
            l.summary.clone(),
            (count, tokens),
        ))
        .map_err(sink_error)?;
        let mut failed: Option<io::Error> = None;
        window::each(&p.ents, &t, &mut |i| lines.load(i), &mut |m| {
            if failed.is_none() {
                failed = sink.message(m).err();
            }
        });
        failed.map_or(Ok(()), |e| Err(sink_error(e)))
    }
}
