//! What the index holds for one session: one document per message (its display text, thinking,
//! tool calls and their arguments, capped), one per compaction summary, and one for the title
//! and summary; plus the fingerprint that says whether the session changed since.

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use crate::model::{Entry, Message, SessionSummary, StoreKind, Transcript};

/// Bytes of one part of a message (its text, one thinking block, one tool call) that are
/// indexed: a 2 MB tool output is found by its first 4 KiB, and the index stays small.
pub const PART_CAP: usize = 4096;

/// One document to index.
#[derive(Debug, Clone, PartialEq)]
pub struct Doc {
    /// `index` of the message (as in `show --json`); `None` for the title/summary document.
    pub message: Option<usize>,
    /// 0-based round of the message.
    pub round: Option<usize>,
    pub role: Option<String>,
    pub text: String,
}

/// The stable number of a session in the index (`store:id` hashed).
pub fn session_number(store: StoreKind, id: &str) -> u64 {
    let mut h = DefaultHasher::new();
    (store.as_str(), id).hash(&mut h);
    h.finish()
}

/// What changes when a session changes, from the disk alone (no parsing), so an unchanged
/// session costs a few `stat`s: its file or its directory's files (path, size, mtime), the
/// file spool keeps its state in (`state_file`: pin, title; a sidecar, or the state
/// directory of a read-only store) and the collection's `archive.json` (Loop's archive
/// state). `DefaultHasher` is stable within one
/// build; a new build at worst re-indexes everything.
pub fn fingerprint(path: &Path, state_file: &Path) -> u64 {
    Prints::default().of(path, state_file)
}

/// Full fingerprints taken in one pass over many sessions. A collection's `archive.json` is
/// the same file for all of its sessions, so it is stat'ed once a pass rather than once a
/// session (a browser's start checks every listed session: at 10k Claude sessions that was
/// 8.4k lookups of 12 paths). A change made during the pass shows in the next one, as a
/// change made just after it would.
#[derive(Default)]
pub struct Prints {
    archives: HashMap<PathBuf, Stat>,
}

/// What a print says of one file: whether it is there, its length and mtime.
type Stat = Option<(u64, Option<u128>)>;

impl Prints {
    /// `fingerprint` of one session. The session's own path is stat'ed once (its type comes
    /// from that stat), and a directory's files from the directory's handle, so no path is
    /// looked up from the root twice.
    pub fn of(&mut self, path: &Path, state_file: &Path) -> u64 {
        let mut h = DefaultHasher::new();
        path.hash(&mut h);
        let m = std::fs::metadata(path);
        hash_stat(&stat_of(&m), &mut h);
        if m.is_ok_and(|m| m.is_dir())
            && let Ok(rd) = std::fs::read_dir(path)
        {
            let mut files: Vec<_> = rd.flatten().map(|e| (e.path(), entry_stat(&e))).collect();
            files.sort_by(|a, b| a.0.cmp(&b.0));
            for (p, st) in files {
                p.hash(&mut h);
                hash_stat(&st, &mut h);
            }
        }
        hash_stat(&stat_of(&std::fs::metadata(state_file)), &mut h);
        if let Some(parent) = path.parent() {
            let archive = (self.archives.entry(parent.to_path_buf()))
                .or_insert_with(|| stat_of(&std::fs::metadata(parent.join("archive.json"))));
            hash_stat(archive, &mut h);
        }
        h.finish()
    }
}

/// An entry of a session's directory as `std::fs::metadata` of its path sees it: stat'ed
/// from the directory's handle, but a symlink followed (the entry's own stat would not).
fn entry_stat(e: &std::fs::DirEntry) -> Stat {
    match e.file_type() {
        Ok(t) if !t.is_symlink() => stat_of(&e.metadata()),
        _ => stat_of(&std::fs::metadata(e.path())),
    }
}

fn stat_of(m: &std::io::Result<std::fs::Metadata>) -> Stat {
    let m = m.as_ref().ok()?;
    let t = m
        .modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok());
    Some((m.len(), t.map(|d| d.as_nanos())))
}

/// Hashed as the prints always were (presence, then length and mtime), so an index built
/// before this way of taking them is still current.
fn hash_stat(s: &Stat, h: &mut DefaultHasher) {
    s.is_some().hash(h);
    if let Some((len, t)) = s {
        len.hash(h);
        t.hash(h);
    }
}

/// Cut `s` to at most `PART_CAP` bytes on a char boundary.
fn capped(s: &str) -> &str {
    if s.len() <= PART_CAP {
        return s;
    }
    let mut end = PART_CAP;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// A message's searchable text: display text, thinking, tool calls (name and arguments).
fn message_text(m: &Message) -> String {
    let mut parts: Vec<String> = Vec::new();
    if !m.text.is_empty() {
        parts.push(capped(&m.text).to_string());
    }
    for t in &m.thinking {
        parts.push(capped(t).to_string());
    }
    for c in &m.tool_calls {
        let args = match &c.arguments {
            serde_json::Value::String(s) => s.clone(),
            v => v.to_string(),
        };
        parts.push(format!("{} {}", c.name, capped(&args)));
    }
    if let Some(n) = &m.tool_name
        && m.tool_calls.is_empty()
    {
        parts.push(n.clone());
    }
    parts.join("\n")
}

/// The document of a session's title and summary.
pub fn title_doc(s: &SessionSummary) -> Doc {
    Doc {
        message: None,
        round: None,
        role: None,
        text: format!("{}\n{}", s.title(), capped(s.summary())),
    }
}

/// The documents of one session, in history order: the title/summary document first.
pub fn docs(s: &SessionSummary, t: &Transcript) -> Vec<Doc> {
    let mut out = vec![title_doc(s)];
    let mut b = DocBuilder::new(t.first_round);
    for e in &t.entries {
        b.entry(e, &mut |d| out.push(d));
    }
    b.finish(&mut |d| out.push(d));
    out
}

/// Turns a history's entries into documents as they arrive, so a session is indexed
/// without holding its transcript whole (a 300 MB log is read one entry at a time).
pub struct DocBuilder {
    first_round: usize,
    users: usize,
    /// Index and round of the last message, where trailing compaction summaries land.
    last: (Option<usize>, usize),
    /// Compaction summaries are shown just before the message they precede: they take its
    /// index and round, so "round R, message M" lands where they are drawn.
    pending: Vec<String>,
}

impl DocBuilder {
    pub fn new(first_round: usize) -> Self {
        DocBuilder {
            first_round,
            users: 0,
            last: (None, 0),
            pending: Vec::new(),
        }
    }

    /// The documents `e` completes, in order.
    pub fn entry(&mut self, e: &Entry, out: &mut dyn FnMut(Doc)) {
        match e {
            Entry::Message(m) => {
                if m.role == crate::model::Role::User {
                    self.users += 1;
                }
                let round = self.first_round + self.users.saturating_sub(1);
                for text in self.pending.drain(..) {
                    out(Doc {
                        message: m.index,
                        round: Some(round),
                        role: Some("compaction".into()),
                        text,
                    });
                }
                self.last = (m.index, round);
                let text = message_text(m);
                if !text.trim().is_empty() {
                    out(Doc {
                        message: m.index,
                        round: Some(round),
                        role: Some(m.role.as_str().to_string()),
                        text,
                    });
                }
            }
            Entry::Compaction { summary, .. } if !summary.trim().is_empty() => {
                self.pending.push(capped(summary).to_string());
            }
            // A subagent's transcript is searched under its parent, at the message that
            // spawned it (its own messages have no position in the parent).
            Entry::Nested(n) => {
                for e in &n.entries {
                    self.nested(e, out);
                }
            }
            _ => {}
        }
    }

    fn nested(&self, e: &Entry, out: &mut dyn FnMut(Doc)) {
        match e {
            Entry::Message(m) => {
                let text = message_text(m);
                if !text.trim().is_empty() {
                    out(Doc {
                        message: self.last.0,
                        round: Some(self.last.1),
                        role: Some("subagent".into()),
                        text,
                    });
                }
            }
            Entry::Nested(n) => n.entries.iter().for_each(|e| self.nested(e, out)),
            _ => {}
        }
    }

    /// Compaction summaries after the last message.
    pub fn finish(self, out: &mut dyn FnMut(Doc)) {
        for text in self.pending {
            out(Doc {
                message: self.last.0,
                round: Some(self.last.1),
                role: Some("compaction".into()),
                text,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Nested, Role};

    #[test]
    fn a_subagents_messages_are_documents_at_the_call_that_spawned_it() {
        let mut call = Message::new(Role::Tool, "spawned");
        call.index = Some(4);
        let mut user = Message::new(Role::User, "fix it");
        user.index = Some(3);
        let nested = Entry::Nested(Box::new(Nested {
            key: "a1".into(),
            note: "subagent a1".into(),
            entries: vec![
                Entry::Message(Box::new(Message::new(Role::User, "find the flaky test"))),
                Entry::Message(Box::new(Message::new(Role::Assistant, "it is zebrafish"))),
            ],
        }));
        let mut b = DocBuilder::new(0);
        let mut out = Vec::new();
        for e in [
            Entry::Message(Box::new(user)),
            Entry::Message(Box::new(call)),
            nested,
        ] {
            b.entry(&e, &mut |d| out.push(d));
        }
        let sub: Vec<_> = out
            .iter()
            .filter(|d| d.role.as_deref() == Some("subagent"))
            .map(|d| (d.message, d.round, d.text.as_str()))
            .collect();
        assert_eq!(
            sub,
            [
                (Some(4), Some(0), "find the flaky test"),
                (Some(4), Some(0), "it is zebrafish")
            ]
        );
    }
}
