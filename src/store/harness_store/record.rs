//! Loading one session record and deriving its listing row (contract sections 3, 6 and 7).

use std::io::Read;
use std::path::Path;

use serde_json::{Map, Value};

use super::json::{self, Parsed};
use super::lean::{Hist, Kind};
use crate::model::{SessionSummary, StoreKind, parse_time};
use crate::store::regular::{self, Links};
use crate::store::{lease, sidecar};

/// Records beyond this size are refused as unreadable rather than read into memory.
pub const MAX_RECORD_BYTES: u64 = 512 * 1024 * 1024;

/// A record file as read from disk.
#[derive(Clone, Debug)]
pub struct Loaded {
    /// The raw bytes (shown by `raw()` when the record cannot be re-serialised faithfully).
    pub bytes: Vec<u8>,
    /// The parsed object, or why it is unreadable.
    pub parsed: Result<Parsed, String>,
}

/// Read `path` without following a symlink (discovery skips symlinks; a swap must not
/// redirect us). I/O failures become the "unreadable record" reason.
pub fn load(path: &Path) -> Result<Loaded, std::io::Error> {
    let mut f = regular::open(path, Links::Refuse)?;
    let meta = f.metadata()?;
    if meta.len() > MAX_RECORD_BYTES {
        return Ok(Loaded {
            bytes: Vec::new(),
            parsed: Err(format!("file too large ({} bytes)", meta.len())),
        });
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    f.read_to_end(&mut bytes)?;
    let parsed = json::parse_record(&bytes);
    Ok(Loaded { bytes, parsed })
}

/// `load` for a view that never shows the top-level array `skip`: parsed from the file as
/// it is read, that array skipped (`json::parse_without`). `None` when that does not apply;
/// `load` then reads the record as usual.
pub fn load_lean(path: &Path, skip: &str) -> Result<Option<Loaded>, std::io::Error> {
    let f = regular::open(path, Links::Refuse)?;
    if f.metadata()?.len() > MAX_RECORD_BYTES {
        return Ok(None);
    }
    Ok(json::parse_without(f, skip).map(|map| Loaded {
        bytes: Vec::new(),
        parsed: Ok(Parsed {
            map,
            non_finite: false,
            hist: None,
        }),
    }))
}

/// `load` for the listing row: parsed as it is read, the histories reduced to what the row
/// shows (`lean::parse_row`), so a row never holds a record's history. Records that path
/// declines are read by `load`, which words their error.
pub fn load_row(path: &Path) -> Result<Loaded, std::io::Error> {
    let f = regular::open(path, Links::Refuse)?;
    if f.metadata()?.len() <= MAX_RECORD_BYTES
        && let Some(parsed) = super::lean::parse_row(f)
    {
        return Ok(Loaded {
            bytes: Vec::new(),
            parsed: Ok(parsed),
        });
    }
    load(path)
}

/// A string field (absent or another type → `None`).
pub fn str_field<'a>(map: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    map.get(key).and_then(Value::as_str)
}

/// The full history: `transcript`, falling back to `messages` when missing.
pub fn history(map: &Map<String, Value>) -> Option<&Vec<Value>> {
    match map.get("transcript") {
        Some(t) => t.as_array(),
        None => map.get("messages").and_then(Value::as_array),
    }
}

/// Why a parsed record is malformed (section 6), or `None` when it is usable. `stem` is the
/// file name without `.json`.
pub fn problem(map: &Map<String, Value>, stem: &str) -> Option<String> {
    let Some(id) = map.get("id") else {
        return Some("missing id".into());
    };
    let Some(id) = id.as_str() else {
        return Some("id is not a string".into());
    };
    if !map.get("updated_at").is_some_and(Value::is_string) {
        return Some("missing updated_at".into());
    }
    if id != stem {
        return Some("id/file mismatch".into());
    }
    match map.get("messages") {
        None => return Some("missing messages".into()),
        Some(v) if !v.is_array() => return Some("messages is not an array".into()),
        _ => {}
    }
    if map.get("transcript").is_some_and(|v| !v.is_array()) {
        return Some("transcript is not an array".into());
    }
    None
}

/// The role of a stored entry (`None` for non-objects and entries without a string role).
pub fn role(entry: &Value) -> Option<&str> {
    entry.get("role").and_then(Value::as_str)
}

/// Display text of a `content` value: strings as is, null/missing empty, arrays of parts
/// joined (text parts verbatim, `[image]` for anything else), other JSON raw.
pub fn content_text(content: Option<&Value>) -> String {
    match content {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .map(
                |p| match (p.get("type").and_then(Value::as_str), p.get("text")) {
                    (Some("text"), Some(Value::String(t))) => t.clone(),
                    _ => "[image]".to_string(),
                },
            )
            .collect::<Vec<_>>()
            .join("\n"),
        Some(other) => other.to_string(),
    }
}

const USER_OPEN: &str = "<user_input>\n";
const USER_CLOSE: &str = "\n</user_input>";

/// Strip one `<user_input>\n … \n</user_input>` wrapper when both ends are present.
pub fn unwrap_user(s: &str) -> &str {
    if s.starts_with(USER_OPEN) && s.ends_with(USER_CLOSE) {
        // The two ends may share the newline ("<user_input>\n</user_input>"): empty input.
        return s
            .get(USER_OPEN.len()..s.len() - USER_CLOSE.len())
            .unwrap_or("");
    }
    s
}

/// Strip a `<tool_result name="X">\n … \n</tool_result>` wrapper, returning the tool name.
pub fn unwrap_tool(s: &str) -> Option<(&str, &str)> {
    const OPEN: &str = "<tool_result name=\"";
    const CLOSE: &str = "\n</tool_result>";
    let rest = s.strip_prefix(OPEN)?;
    let end = rest.find("\">\n")?;
    let name = &rest[..end];
    let body_start = OPEN.len() + end + 3;
    if !s.ends_with(CLOSE) {
        return None;
    }
    let body = s.get(body_start..s.len() - CLOSE.len()).unwrap_or("");
    Some((name, body))
}

/// The first user message of the history, unwrapped.
pub fn first_user_text(hist: Option<&Hist>) -> Option<String> {
    let first = hist?.first_user.as_ref()?;
    Some(unwrap_user(&content_text(first.get("content"))).to_string())
}

/// Section 3's title chain: title → first user message (collapsed, 80 chars) → first line
/// of summary → id.
pub fn title(map: &Map<String, Value>, hist: Option<&Hist>, id: &str) -> String {
    let t = str_field(map, "title").unwrap_or("").trim();
    if !t.is_empty() {
        return t.to_string();
    }
    if let Some(u) = first_user_text(hist) {
        let c: String = crate::text::collapse_whitespace(&u)
            .chars()
            .take(80)
            .collect();
        if !c.is_empty() {
            return c;
        }
    }
    let line = str_field(map, "summary")
        .unwrap_or("")
        .lines()
        .next()
        .unwrap_or("")
        .trim();
    if !line.is_empty() {
        return line.to_string();
    }
    id.to_string()
}

/// The listing row for the record at `path` (file stem `stem`). Never fails: problems become
/// an error row holding whatever could be read.
pub fn summarize(sessions: &Path, stem: &str, path: &Path, loaded: &Loaded) -> SessionSummary {
    let mut s = SessionSummary::new(StoreKind::Harness, stem, path);
    let parsed = match &loaded.parsed {
        Ok(p) => p,
        Err(why) => {
            s.set_error(Some(format!("unreadable record: {why}")));
            s.read_only = true;
            return s;
        }
    };
    let map = &parsed.map;
    // Parsed for the row only, the history is already reduced; else reduce it here.
    let whole = match parsed.hist {
        Some(_) => None,
        None => history(map).map(|h| Hist::of(h)),
    };
    let hist = parsed.hist.as_ref().or(whole.as_ref());
    if let Some(why) = problem(map, stem) {
        s.set_error(Some(why));
        s.read_only = true;
        if let Some(inner) = str_field(map, "id").filter(|i| *i != stem) {
            s.add_badge(&format!("record id {inner}"));
        }
    }
    s.set_title(title(map, hist, stem));
    s.set_summary(str_field(map, "summary").unwrap_or(""));
    s.cwd = str_field(map, "project_root").map(Into::into);
    match str_field(map, "updated_at").map(|u| (u, parse_time(u))) {
        Some((_, Some(t))) => {
            s.updated_at = Some(t);
            s.created_at = str_field(map, "created_at").and_then(parse_time);
        }
        // Unparseable: sort last (no time at all, created_at included) and show it raw.
        Some((raw, None)) => s.add_badge(&format!("updated_at {raw:?}")),
        None => {}
    }
    if let Some(h) = hist {
        s.messages = h.kinds.iter().filter(|k| **k != Kind::System).count() as u64;
        s.has_user_message = h.kinds.contains(&Kind::User);
    }
    s.set_first_prompt(first_user_text(hist).unwrap_or_default());
    s.archived = map.get("archived").is_some_and(json::truthy);
    s.set_forked_from(
        str_field(map, "branched_from")
            .filter(|b| !b.is_empty())
            .map(|b| format!("harness:{b}")),
    );
    s.model = str_field(map, "model").map(Into::into);
    if let Some(b) = status_badge(sessions, stem, map) {
        s.add_badge(&b);
    }
    if s.error().is_none() {
        s.ended = super::ended::ended(sessions, stem, map, hist.and_then(|h| h.last.as_ref()));
    }
    if parsed.non_finite {
        s.add_badge("non-finite numbers");
    }
    let side = sidecar::read(sessions, stem);
    if let Some(w) = side.warning() {
        s.add_badge(&w);
    }
    if let Some(m) = side.map()
        && let Some(p) = m.get("pinned_at").filter(|p| !p.is_null())
    {
        s.pinned_at = p.as_str().and_then(parse_time);
        s.pinned_flag = s.pinned_at.is_none();
    }
    if let Some(h) = hist {
        s.unread = h.unread(side.u64("read_transcript_len"));
    }
    s
}

/// The status badge: nothing for "saved" (the default), "running"/"interrupted" for "active"
/// by a lease probe, any other status shown raw.
pub fn status_badge(sessions: &Path, id: &str, map: &Map<String, Value>) -> Option<String> {
    match map.get("status") {
        None => None,
        Some(Value::String(st)) if st == "saved" => None,
        Some(Value::String(st)) if st == "active" => {
            let lock = sessions.join(format!("{id}.lock"));
            Some(
                if lease::lease_held(&lock) {
                    "running"
                } else {
                    "interrupted"
                }
                .into(),
            )
        }
        Some(Value::String(st)) => Some(st.clone()),
        Some(other) => Some(other.to_string()),
    }
}
