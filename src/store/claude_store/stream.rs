//! The main view produced one record at a time (issues 9 and 11): the listing's pass already
//! holds every record pruned to what the chain, chunk merging and pairing read (`lite`), with
//! its offset; each record on the chain is then read again, whole but with its image payloads
//! elided (`slim`), only when its turn comes, and dropped once its entries are out. What
//! pairing needs from further on (which calls get a result) is taken from the pruned records,
//! so nothing waits for look-ahead but the chunks of the one assistant message being merged.

use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::{self, BufReader, Read, Seek, SeekFrom};

use serde_json::Value;

use super::chain::Chain;
use super::read::Rec;
use super::record::{self as r, UserKind};
use super::transcript::{self, Ctx};
use crate::model::{Entry, Role};

/// Where the converter gets records from.
pub trait Source {
    /// The record at `pos` as far as classifying it, merging chunks and pairing calls need.
    fn skel(&self, pos: usize) -> &Value;
    /// The record at `pos` as the view needs it, read when it is converted.
    fn full(&self, pos: usize) -> io::Result<Cow<'_, Value>>;
}

/// Records already read whole (a tail read, a subagent, the tests' reference).
pub struct InMemory<'a>(pub &'a [Rec]);

impl Source for InMemory<'_> {
    fn skel(&self, pos: usize) -> &Value {
        &self.0[pos].v
    }
    fn full(&self, pos: usize) -> io::Result<Cow<'_, Value>> {
        Ok(Cow::Borrowed(&self.0[pos].v))
    }
}

/// The listing's pruned records, each read again from the file when it is shown.
pub struct FromFile<'a> {
    recs: &'a [Rec],
    file: RefCell<(BufReader<File>, u64)>,
}

impl<'a> FromFile<'a> {
    pub fn new(recs: &'a [Rec], file: File) -> FromFile<'a> {
        FromFile {
            recs,
            file: RefCell::new((BufReader::with_capacity(64 * 1024, file), u64::MAX)),
        }
    }
}

impl Source for FromFile<'_> {
    fn skel(&self, pos: usize) -> &Value {
        &self.recs[pos].v
    }
    fn full(&self, pos: usize) -> io::Result<Cow<'_, Value>> {
        let rec = &self.recs[pos];
        let mut guard = self.file.borrow_mut();
        let (reader, at) = &mut *guard;
        // The chain mostly moves forward through the file: skip within the buffer when it
        // does, seek when it jumps back.
        if *at != u64::MAX && rec.start >= *at && rec.start - *at <= 64 * 1024 {
            reader.seek_relative((rec.start - *at) as i64)?;
        } else {
            reader.seek(SeekFrom::Start(rec.start))?;
        }
        let mut line = vec![0; rec.len as usize];
        reader.read_exact(&mut line)?;
        *at = rec.start + rec.len;
        // A file rewritten since the listing's pass: show what that pass read.
        Ok(match super::slim::decode(&line) {
            Some((v, _)) => Cow::Owned(v),
            None => Cow::Borrowed(&rec.v),
        })
    }
}

/// Calls answered by a result, from the pruned records of `positions` (a result block stays
/// a result whatever else the record holds).
fn answered(src: &dyn Source, positions: &[usize]) -> HashSet<String> {
    let mut out = HashSet::new();
    for &pos in positions {
        let v = src.skel(pos);
        if r::kind(v) == "user" && r::classify_user(v) == UserKind::ToolResult {
            for b in r::blocks(v) {
                if r::s(b, "type") == Some("tool_result") {
                    out.insert(r::s(b, "tool_use_id").unwrap_or("").to_string());
                }
            }
        }
    }
    out
}

/// Every call's tool name in `positions`: for a result that comes before its call.
fn call_names(src: &dyn Source, positions: &[usize]) -> HashMap<String, String> {
    let mut out = HashMap::new();
    for &pos in positions {
        let v = src.skel(pos);
        if r::kind(v) == "assistant" {
            for b in r::blocks(v) {
                if matches!(r::s(b, "type"), Some("tool_use" | "server_tool_use")) {
                    out.insert(
                        r::s(b, "id").unwrap_or("").to_string(),
                        r::s(b, "name").unwrap_or("").to_string(),
                    );
                }
            }
        }
    }
    out
}

/// Numbering and pairing of entries as they are sent (`entries::number` and `entries::pair`
/// over a whole transcript, one entry at a time).
struct Pairing {
    next: usize,
    /// Names of the calls sent so far (the latest wins, as over a whole transcript).
    seen: HashMap<String, String>,
    all: HashMap<String, String>,
    answered: HashSet<String>,
}

impl Pairing {
    fn apply(&mut self, e: &mut Entry) {
        let Entry::Message(m) = e else {
            return;
        };
        if !m.is_virtual {
            m.index = Some(self.next);
            self.next += 1;
        }
        for c in &m.tool_calls {
            self.seen.insert(c.id.clone(), c.name.clone());
        }
        if let Some(id) = &m.tool_call_id {
            m.tool_name = self.seen.get(id).or_else(|| self.all.get(id)).cloned();
        }
        let open = m.tool_calls.iter().any(|c| !self.answered.contains(&c.id));
        if open && m.note.is_none() {
            m.note = Some("no result (interrupted or still running)".into());
        }
    }
}

/// Send the entries of the main view along `chain` to `out`, in order, message `index`
/// counting from `first_index`; `spawned` links calls to subagents (`progress` records).
pub fn emit(
    src: &dyn Source,
    chain: &Chain,
    cx: &Ctx<'_>,
    first_index: usize,
    spawned: &HashMap<String, String>,
    out: &mut dyn FnMut(Entry) -> io::Result<()>,
) -> io::Result<()> {
    let every: Vec<usize> = chain.path.iter().chain(&chain.unlinked).copied().collect();
    let mut pairing = Pairing {
        next: first_index,
        seen: HashMap::new(),
        all: call_names(src, &every),
        answered: answered(src, &every),
    };
    drop(every);
    run(
        src,
        &chain.path,
        Some(chain),
        cx,
        spawned,
        &mut pairing,
        out,
    )?;
    if chain.unlinked.is_empty() {
        return Ok(());
    }
    out(Entry::Notice(format!(
        "unlinked records ({}): their parent was not found",
        chain.unlinked.len()
    )))?;
    // Unlinked records were paired among themselves.
    pairing.answered = answered(src, &chain.unlinked);
    run(src, &chain.unlinked, None, cx, spawned, &mut pairing, out)
}

fn run(
    src: &dyn Source,
    path: &[usize],
    branches: Option<&Chain>,
    cx: &Ctx<'_>,
    spawned: &HashMap<String, String>,
    pairing: &mut Pairing,
    out: &mut dyn FnMut(Entry) -> io::Result<()>,
) -> io::Result<()> {
    let mut buf: Vec<Entry> = Vec::new();
    let mut i = 0;
    while i < path.len() {
        let pos = path[i];
        let sk = src.skel(pos);
        i += 1;
        match r::kind(sk) {
            "assistant" => {
                // Consecutive chunks of one message.id are one message.
                let id = r::message_id(sk);
                let mut chunks = vec![src.full(pos)?];
                while i < path.len() {
                    let w = src.skel(path[i]);
                    if r::kind(w) == "assistant" && id.is_some() && r::message_id(w) == id {
                        chunks.push(src.full(path[i])?);
                        i += 1;
                    } else {
                        break;
                    }
                }
                let refs: Vec<&Value> = chunks.iter().map(|c| c.as_ref()).collect();
                buf.push(Entry::Message(Box::new(transcript::assistant(&refs))));
            }
            "user" => transcript::user(&*src.full(pos)?, cx, spawned, &mut buf),
            "attachment" => {
                let v = src.full(pos)?;
                if let Some(p) = r::queued_prompt(&v) {
                    let mut m = crate::model::Message::new(Role::User, p);
                    m.timestamp = r::timestamp(&v);
                    buf.push(Entry::Message(Box::new(m)));
                }
            }
            "system" => transcript::system(&*src.full(pos)?, &mut buf),
            _ => {}
        }
        if let Some(n) = branches.and_then(|c| c.branches.get(&pos)) {
            buf.push(Entry::Notice(format!(
                "{n} alternative branch{} not shown",
                if *n == 1 { "" } else { "es" }
            )));
        }
        for mut e in buf.drain(..) {
            pairing.apply(&mut e);
            out(e)?;
        }
    }
    Ok(())
}

/// What the main view along `chain` adds up to without reading any record again: `(user
/// messages, messages)` (rounds, and the positions before a window's cut). The pruned
/// records classify exactly as whole ones; subagents and side files are not read.
pub fn counts(
    recs: &[Rec],
    chain: &Chain,
    cx: &Ctx<'_>,
    spawned: &HashMap<String, String>,
) -> (usize, usize) {
    let cx = Ctx {
        session_dir: cx.session_dir,
        subagents: &[],
    };
    let (mut users, mut messages) = (0, 0);
    let _ = emit(&InMemory(recs), chain, &cx, 0, spawned, &mut |e| {
        if let Entry::Message(m) = e {
            messages += 1;
            users += usize::from(m.role == Role::User);
        }
        Ok(())
    });
    (users, messages)
}
