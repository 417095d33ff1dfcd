//! Reading a pi session file safely and tolerantly (pi.md 6.1): regular files only, opened
//! without following a symlink or blocking on a FIFO; split on `\n` with a 64 MiB line cap;
//! bad lines skipped and counted; a torn last line pending while the file changes, "truncated"
//! once it has settled. Listing reads parse fully only the header, the small metadata entries
//! and the first user message; every other line is read for its ids, times and role only, so
//! an extension's huge `custom` state (kendex#177) is never materialized.

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;
use std::time::SystemTime;

use chrono::{DateTime, Utc};
use serde::Deserialize;
use serde_json::Value;

use crate::model::{from_millis, parse_time};
use crate::store::json_first;
use crate::store::lines::{self, RawLine};
use crate::store::regular::{self, Links};

/// Line cap (DECIDED 9): a longer line is counted and shown as a placeholder.
pub const MAX_LINE: usize = 64 * 1024 * 1024;
/// Files above this use the entry `timestamp` for `updated` (pi.md 6.2, first row).
pub const LARGE: u64 = 8 * 1024 * 1024;

/// Open a session file: a regular file, not through a symlink, never blocking.
pub fn open(path: &Path) -> io::Result<File> {
    regular::open(path, Links::Refuse)
}

/// The first line, as pi judges it (section 1, "Validity").
#[derive(Clone, Debug, Default, PartialEq)]
pub enum Header {
    Valid {
        version: Option<i64>,
        id: String,
        timestamp: Option<DateTime<Utc>>,
        cwd: String,
        /// `parentSession`, or the legacy `branchedFrom`.
        parent: Option<String>,
    },
    /// The first non-empty line is not a usable `session` header.
    Invalid,
    /// Nothing but whitespace (or nothing at all) in the file.
    #[default]
    Empty,
}

/// One entry line, with the fields every pass needs lifted out of its JSON.
#[derive(Clone, Debug)]
pub struct Ent {
    pub kind: String,
    /// The entry id; a v1 entry without one gets `#<line>` (linked to the previous entry).
    pub id: String,
    pub parent: Option<String>,
    pub ts: Option<DateTime<Utc>>,
    /// `message.role` of `message` entries.
    pub role: Option<String>,
    /// `message.timestamp` (Unix ms) of `message` entries.
    pub msg_ts: Option<DateTime<Utc>>,
    /// Assistant `provider/model`.
    pub model: Option<String>,
    pub stop: Option<String>,
    /// A `toolResult` with `isError: true`.
    pub is_error: bool,
    /// An assistant message's text blocks, one per line: what `ended` judges a finished
    /// turn by. `None` for every other role (tool output is not kept).
    pub reply: Option<String>,
    pub tokens: u64,
    pub cost: f64,
    /// The whole line, or `Null` where a listing read skipped it.
    pub v: Value,
    /// Where the line starts in the file and its length: the streamed views read a skipped
    /// line again from here (`stream::Lines`) rather than holding it.
    pub at: u64,
    pub len: u64,
}

/// What a read produced.
#[derive(Debug, Default)]
pub struct Parsed {
    pub header: Header,
    pub ents: Vec<Ent>,
    pub bad: u64,
    pub oversized: Vec<u64>,
    pub lossy: u64,
    pub truncated: bool,
    pub pending: bool,
    /// Entries without an `id` (v1), linked linearly in memory.
    pub v1: u64,
    pub size: u64,
    pub mtime: Option<SystemTime>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Every line parsed whole (transcript, window).
    Full,
    /// Listing: metadata entries and the first user message whole, the rest slim.
    List,
    /// The streamed views' first pass: read as `List`, and invalid UTF-8 in a slim line is
    /// counted as a whole read counts it (their warnings are the file's).
    Scan,
}

/// The keys a listing pass reads from most lines; everything else is skipped unparsed.
/// `C` is what a message's `content` is read as: its text (`SlimText`) for an assistant
/// message, whose reply `ended` judges, and nothing (`IgnoredAny`) for every other role, so
/// tool output and prompts are scanned past without being copied.
#[derive(Deserialize)]
struct Slim<C> {
    #[serde(rename = "type")]
    kind: String,
    id: Option<String>,
    #[serde(rename = "parentId")]
    parent: Option<String>,
    timestamp: Option<String>,
    message: Option<SlimMsg<C>>,
}

/// A message's `content` as a listing keeps it.
trait Content {
    fn into_text(self) -> String;
}

impl Content for SlimText {
    fn into_text(self) -> String {
        self.0
    }
}

impl Content for serde::de::IgnoredAny {
    fn into_text(self) -> String {
        String::new()
    }
}

#[derive(Deserialize)]
struct SlimMsg<C> {
    role: Option<String>,
    timestamp: Option<f64>,
    provider: Option<String>,
    model: Option<String>,
    #[serde(rename = "stopReason")]
    stop: Option<String>,
    usage: Option<SlimUsage>,
    #[serde(rename = "isError")]
    is_error: Option<bool>,
    content: Option<C>,
}

/// The text blocks of a message's `content` (a string, or blocks whose `text` blocks are
/// joined by newlines); every other block is skipped unparsed.
struct SlimText(String);

#[derive(Deserialize)]
struct SlimBlock {
    #[serde(rename = "type")]
    kind: Option<String>,
    text: Option<String>,
}

impl<'de> Deserialize<'de> for SlimText {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = SlimText;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("message content")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<SlimText, E> {
                Ok(SlimText(v.to_string()))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut a: A,
            ) -> Result<SlimText, A::Error> {
                let mut out = Vec::new();
                while let Some(b) = a.next_element::<SlimBlock>()? {
                    if b.kind.as_deref() == Some("text") {
                        out.extend(b.text);
                    }
                }
                Ok(SlimText(out.join("\n")))
            }
        }
        d.deserialize_any(V)
    }
}

/// The text blocks of an assistant message parsed whole, as `SlimText` reads them.
fn reply_of(msg: &Value) -> String {
    match msg.get("content") {
        Some(Value::String(t)) => t.clone(),
        Some(Value::Array(blocks)) => blocks
            .iter()
            .filter(|b| s(b, "type").as_deref() == Some("text"))
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

#[derive(Deserialize)]
struct SlimUsage {
    #[serde(rename = "totalTokens")]
    total: Option<f64>,
    cost: Option<SlimCost>,
}

#[derive(Deserialize)]
struct SlimCost {
    total: Option<f64>,
}

fn s(v: &Value, k: &str) -> Option<String> {
    v.get(k).and_then(Value::as_str).map(str::to_string)
}

/// Token and cost totals of a `usage` object.
pub fn usage_of(u: Option<&Value>) -> (u64, f64) {
    let Some(u) = u else { return (0, 0.0) };
    let t = u.get("totalTokens").and_then(Value::as_f64).unwrap_or(0.0);
    let c = u
        .get("cost")
        .and_then(|c| c.get("total"))
        .and_then(Value::as_f64)
        .unwrap_or(0.0);
    (t.max(0.0) as u64, c)
}

impl Ent {
    fn from_value(v: Value) -> Option<Ent> {
        let kind = s(&v, "type")?;
        let msg = v.get("message");
        let role = msg.and_then(|m| s(m, "role"));
        let (mut tokens, mut cost) = usage_of(v.get("usage"));
        if let Some(m) = msg {
            let (t, c) = usage_of(m.get("usage"));
            tokens += t;
            cost += c;
        }
        let model = msg.and_then(|m| Some(format!("{}/{}", s(m, "provider")?, s(m, "model")?)));
        Some(Ent {
            id: s(&v, "id").unwrap_or_default(),
            parent: s(&v, "parentId"),
            ts: v
                .get("timestamp")
                .and_then(Value::as_str)
                .and_then(parse_time),
            msg_ts: msg
                .and_then(|m| m.get("timestamp"))
                .and_then(Value::as_f64)
                .and_then(|t| from_millis(t as i64)),
            stop: msg.and_then(|m| s(m, "stopReason")),
            is_error: msg
                .and_then(|m| m.get("isError"))
                .and_then(Value::as_bool)
                .unwrap_or(false),
            reply: msg
                .filter(|_| role.as_deref() == Some("assistant"))
                .map(reply_of),
            role,
            model,
            tokens,
            cost,
            kind,
            v,
            at: 0,
            len: 0,
        })
    }

    fn from_slim<C: Content>(x: Slim<C>) -> Ent {
        let m = x.message;
        let (tokens, cost) = m
            .as_ref()
            .and_then(|m| m.usage.as_ref())
            .map_or((0, 0.0), |u| {
                (
                    u.total.unwrap_or(0.0).max(0.0) as u64,
                    u.cost.as_ref().and_then(|c| c.total).unwrap_or(0.0),
                )
            });
        let (role, msg_ts, model, is_error, stop, reply) = match m {
            Some(m) => {
                let model = match (&m.provider, &m.model) {
                    (Some(p), Some(id)) => Some(format!("{p}/{id}")),
                    _ => None,
                };
                let reply = (m.role.as_deref() == Some("assistant"))
                    .then(|| m.content.map_or(String::new(), Content::into_text));
                (
                    m.role,
                    m.timestamp.and_then(|t| from_millis(t as i64)),
                    model,
                    m.is_error.unwrap_or(false),
                    m.stop,
                    reply,
                )
            }
            None => (None, None, None, false, None, None),
        };
        Ent {
            kind: x.kind,
            id: x.id.unwrap_or_default(),
            parent: x.parent,
            ts: x.timestamp.as_deref().and_then(parse_time),
            role,
            msg_ts,
            model,
            is_error,
            reply,
            stop,
            tokens,
            cost,
            v: Value::Null,
            at: 0,
            len: 0,
        }
    }
}

/// Whether a listing read parses this line whole: the header, metadata entries, and a user
/// message while the first one has not been seen. pi writes `type` first, so the line's
/// opening bytes tell its type.
fn parse_whole(bytes: &[u8], need_user: bool) -> bool {
    const SLIM: [&[u8]; 2] = [b"{\"type\":\"message\"", b"{\"type\":\"custom\""];
    if !SLIM.iter().any(|p| bytes.starts_with(p)) {
        return true;
    }
    const USER: &[u8] = b"\"role\":\"user\"";
    need_user && bytes.starts_with(SLIM[0]) && bytes.windows(USER.len()).any(|w| w == USER)
}

/// Whether a `message` line may be an assistant's, from its opening bytes (pi writes the role
/// before the content). When the role is not where expected the text is read anyway.
fn is_assistant(bytes: &[u8]) -> bool {
    const ROLE: &[u8] = b"\"role\":\"";
    let head = &bytes[..bytes.len().min(512)];
    match memchr::memmem::find(head, ROLE) {
        Some(i) => head[i + ROLE.len()..].starts_with(b"assistant\""),
        None => true,
    }
}

/// Parse one line into an object (first-wins duplicate keys); `(value, was_lossy)`.
pub fn decode(bytes: &[u8]) -> Option<(Value, bool)> {
    if let Some(v) = json_first::parse(bytes) {
        return v.is_object().then_some((v, false));
    }
    if std::str::from_utf8(bytes).is_err() {
        let text = String::from_utf8_lossy(bytes);
        let v = json_first::parse(text.as_bytes())?;
        return v.is_object().then_some((v, true));
    }
    None
}

fn header_of(v: &Value) -> Header {
    if v.get("type").and_then(Value::as_str) != Some("session") {
        return Header::Invalid;
    }
    let Some(id) = s(v, "id") else {
        return Header::Invalid;
    };
    Header::Valid {
        version: v.get("version").and_then(Value::as_i64),
        id,
        timestamp: v
            .get("timestamp")
            .and_then(Value::as_str)
            .and_then(parse_time),
        cwd: s(v, "cwd").unwrap_or_default(),
        parent: s(v, "parentSession")
            .or_else(|| s(v, "branchedFrom"))
            .filter(|p| !p.is_empty()),
    }
}

/// Read a whole session file. The last rounds need no read from the end: the views read the
/// path's lines again by offset after this pass (`stream`).
pub fn read(path: &Path, mode: Mode) -> io::Result<Parsed> {
    let f = open(path)?;
    let meta = f.metadata()?;
    let mut p = Parsed {
        size: meta.len(),
        mtime: meta.modified().ok(),
        ..Parsed::default()
    };
    let settled = lines::settled(p.mtime);
    let mut first = true;
    let mut need_user = true;
    let size = p.size;
    lines::for_each_line(f.take(size), MAX_LINE, |line| {
        let (bytes, terminated, line_no) = match line {
            RawLine::TooLong { len, .. } => {
                first = false;
                p.oversized.push(len);
                return;
            }
            RawLine::Line {
                bytes,
                terminated,
                start,
            } => (bytes, terminated, start),
        };
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return;
        }
        if first {
            first = false;
            p.header = match decode(bytes) {
                Some((v, _)) => header_of(&v),
                None => Header::Invalid,
            };
            if matches!(p.header, Header::Valid { .. }) {
                return;
            }
        }
        let slim = mode != Mode::Full && !parse_whole(bytes, need_user);
        let ent = if slim && is_assistant(bytes) {
            serde_json::from_slice::<Slim<SlimText>>(bytes)
                .ok()
                .map(Ent::from_slim)
        } else if slim {
            serde_json::from_slice::<Slim<serde::de::IgnoredAny>>(bytes)
                .ok()
                .map(Ent::from_slim)
        } else {
            None
        };
        // A slim parse skips strings unchecked; a whole parse would have read them lossily.
        if ent.is_some() && mode == Mode::Scan && std::str::from_utf8(bytes).is_err() {
            p.lossy += 1;
        }
        let ent = ent.or_else(|| {
            let (v, lossy) = decode(bytes)?;
            p.lossy += u64::from(lossy);
            Ent::from_value(v)
        });
        match ent {
            Some(mut e) => {
                (e.at, e.len) = (line_no, bytes.len() as u64);
                if e.kind == "message" && e.role.as_deref() == Some("user") && !e.v.is_null() {
                    need_user = false;
                }
                if e.id.is_empty() {
                    // A v1 entry: linked to the previous one in memory only (DECIDED 11).
                    p.v1 += 1;
                    e.id = format!("#{line_no}");
                    e.parent = p.ents.last().map(|prev| prev.id.clone());
                }
                p.ents.push(e);
            }
            None if !terminated && !settled => p.pending = true,
            None if !terminated => {
                p.bad += 1;
                p.truncated = true;
            }
            None => p.bad += 1,
        }
    })?;
    Ok(p)
}
