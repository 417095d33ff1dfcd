//! The Loop `SessionHeader` (contract sections 2.2 and 4): which problems make a row an error,
//! which only make it read-only, and the title rules (`normalizeTitle`, fallback title).

use chrono::{DateTime, Utc};
use serde_json::{Map, Value};

use crate::store::atomic;
use crate::text::normalize_title;

/// `^[a-f0-9-]{36}$`, Loop's id check (character set and length, not UUID layout).
pub fn valid_id(s: &str) -> bool {
    s.len() == 36
        && s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b) || b == b'-')
}

/// A `crypto.randomUUID()`-style lowercase v4 UUID.
pub(crate) fn new_uuid() -> String {
    let mut b = atomic::random_bytes(16);
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let h = crate::hex::encode(&b);
    format!(
        "{}-{}-{}-{}-{}",
        &h[..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..]
    )
}

/// Largest integer JavaScript represents exactly (`Number.MAX_SAFE_INTEGER`).
const MAX_SAFE: u64 = (1 << 53) - 1;

/// A safe non-negative integer, as Loop's validators require.
pub fn safe_uint(v: Option<&Value>) -> Option<u64> {
    v.and_then(Value::as_u64).filter(|n| *n <= MAX_SAFE)
}

fn finite_non_negative(v: Option<&Value>) -> bool {
    v.and_then(Value::as_f64)
        .is_some_and(|f| f.is_finite() && f >= 0.0)
}

fn is_string(v: Option<&Value>) -> bool {
    matches!(v, Some(Value::String(_)))
}

fn not_blank(v: Option<&Value>) -> bool {
    v.and_then(Value::as_str)
        .is_some_and(|s| !s.trim().is_empty())
}

/// Whether a header object is the supported format (`loop-session`, version 2). Anything
/// else is skipped silently, as Loop does.
pub fn header_supported(h: &Value) -> bool {
    h.get("format").and_then(Value::as_str) == Some("loop-session")
        && h.get("version").and_then(Value::as_u64) == Some(2)
}

/// `new Date(v).toISOString() === v`: exactly `YYYY-MM-DDTHH:mm:ss.sssZ` and a real instant.
pub fn canonical_time(s: &str) -> Option<DateTime<Utc>> {
    let t = DateTime::parse_from_rfc3339(s).ok()?.with_timezone(&Utc);
    (iso_string(t) == s).then_some(t)
}

/// JavaScript's `toISOString()`.
pub fn iso_string(t: DateTime<Utc>) -> String {
    t.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string()
}

/// Roughly what `Date.parse` accepts: ISO date-times, bare dates and RFC 2822 dates.
fn date_parses(s: &str) -> bool {
    crate::model::parse_time(s).is_some()
        || chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d").is_ok()
        || DateTime::parse_from_rfc2822(s).is_ok()
}

/// The outcome of checking a header without its messages (the listing pass).
#[derive(Debug, Default)]
pub struct HeaderCheck {
    /// Problems that make the row an error row (Loop rejects the metadata).
    pub fatal: Vec<String>,
    /// Problems that make the row read-only but still displayable (the bad sub-object is
    /// ignored for display).
    pub soft: Vec<String>,
    pub title_ok: bool,
    pub compactions_ok: bool,
    pub runtime_ok: bool,
    pub checkpoints_ok: bool,
    pub pinned_at: Option<DateTime<Utc>>,
    /// `pinnedAt` present but not canonical: shown as pinned, read-only.
    pub pinned_flag: bool,
}

impl HeaderCheck {
    /// Writers refuse a session with any problem.
    pub fn writable(&self) -> bool {
        self.fatal.is_empty() && self.soft.is_empty()
    }
}

const EFFORTS: [&str; 8] = [
    "default", "off", "minimal", "low", "medium", "high", "xhigh", "max",
];
const PRESETS: [&str; 3] = ["read-only", "workspace-write", "danger-full-access"];

/// Check a header per section 2.2 (sub-objects structurally, per section 4).
pub fn check_header(h: &Map<String, Value>) -> HeaderCheck {
    let mut c = HeaderCheck::default();
    if !h.get("id").and_then(Value::as_str).is_some_and(valid_id) {
        c.fatal.push("invalid header id".into());
    }
    if !h
        .get("cwd")
        .and_then(Value::as_str)
        .is_some_and(|s| s.starts_with('/'))
    {
        c.fatal.push("cwd is not an absolute path".into());
    }
    for key in ["createdAt", "updatedAt"] {
        if !h.get(key).and_then(Value::as_str).is_some_and(date_parses) {
            c.fatal.push(format!("invalid {key}"));
        }
    }
    if h.get("unread").is_some_and(|v| !v.is_boolean()) {
        c.fatal.push("unread is not a boolean".into());
    }
    match h.get("pinnedAt") {
        None => {}
        Some(v) => match v.as_str().and_then(canonical_time) {
            Some(t) => c.pinned_at = Some(t),
            None => {
                c.pinned_flag = true;
                c.soft.push("non-canonical pinnedAt".into());
            }
        },
    }
    if let Some(m) = h.get("model")
        && !valid_model(m)
    {
        c.fatal.push("invalid model".into());
    }
    if !h
        .get("permissionPreset")
        .and_then(Value::as_str)
        .is_some_and(|p| PRESETS.contains(&p))
    {
        c.fatal.push("invalid permissionPreset".into());
    }
    c.title_ok = h.get("title").is_none_or(valid_title);
    if !c.title_ok {
        c.soft.push("invalid title".into());
    }
    c.compactions_ok = h.get("compactions").is_none_or(compactions_shape_ok);
    if !c.compactions_ok {
        c.soft.push("invalid compactions".into());
    }
    c.runtime_ok = h.get("runtimeContexts").is_none_or(runtime_shape_ok);
    if !c.runtime_ok {
        c.soft.push("invalid runtime contexts".into());
    }
    c.checkpoints_ok = h
        .get("systemPromptCheckpoints")
        .is_none_or(checkpoints_shape_ok);
    if !c.checkpoints_ok {
        c.soft.push("invalid system prompt checkpoints".into());
    }
    c
}

fn valid_model(m: &Value) -> bool {
    m.is_object()
        && is_string(m.get("provider"))
        && is_string(m.get("id"))
        && m.get("effort")
            .is_none_or(|e| e.as_str().is_some_and(|e| EFFORTS.contains(&e)))
}

/// `SessionTitle` (section 4.1).
pub fn valid_title(t: &Value) -> bool {
    let source_ok = t
        .get("source")
        .and_then(Value::as_str)
        .is_some_and(|s| ["fallback", "model", "user"].contains(&s));
    let indices_ok = t
        .get("messageIndices")
        .and_then(Value::as_array)
        .is_some_and(|a| strictly_increasing(a.iter().map(|v| safe_uint(Some(v)))));
    let model_ok = t
        .get("model")
        .is_none_or(|m| m.is_object() && is_string(m.get("provider")) && is_string(m.get("id")));
    t.is_object() && is_string(t.get("text")) && source_ok && indices_ok && model_ok
}

fn strictly_increasing(it: impl Iterator<Item = Option<u64>>) -> bool {
    let mut prev: Option<u64> = None;
    for v in it {
        let Some(v) = v else { return false };
        if prev.is_some_and(|p| v <= p) {
            return false;
        }
        prev = Some(v);
    }
    true
}

fn compactions_shape_ok(v: &Value) -> bool {
    let Some(a) = v.as_array() else { return false };
    let mut prev_first = 0u64;
    let mut ids = std::collections::HashSet::new();
    for c in a {
        let id_ok = c
            .get("id")
            .and_then(Value::as_str)
            .is_some_and(|s| valid_id(s) && ids.insert(s.to_string()));
        let (Some(first), Some(count)) = (
            safe_uint(c.get("firstKeptMessageIndex")),
            safe_uint(c.get("historyMessageCount")),
        ) else {
            return false;
        };
        let usage = c.get("usage");
        let usage_ok = ["input", "output", "cacheRead", "cacheWrite", "totalTokens"]
            .iter()
            .all(|k| finite_non_negative(usage.and_then(|u| u.get(*k))));
        let ok = id_ok
            && first > prev_first
            && first < count
            && not_blank(c.get("summary"))
            && safe_uint(c.get("timestamp")).is_some()
            && is_string(c.get("provider"))
            && is_string(c.get("model"))
            && usage_ok;
        if !ok {
            return false;
        }
        prev_first = first;
    }
    true
}

fn runtime_shape_ok(v: &Value) -> bool {
    let Some(a) = v.as_array() else { return false };
    let turns = a.iter().map(|r| safe_uint(r.get("userTurn")));
    strictly_increasing(turns)
        && a.iter().all(|r| {
            not_blank(r.get("content"))
                && safe_uint(r.get("timestamp")).is_some()
                && r.get("placement").is_none_or(|p| p == "user")
                && r.get("skills").is_none_or(Value::is_array)
        })
}

fn section_name_ok(n: &str) -> bool {
    let mut b = n.bytes();
    b.next().is_some_and(|c| c.is_ascii_lowercase())
        && b.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'_' || c == b'-')
}

fn checkpoints_shape_ok(v: &Value) -> bool {
    let Some(a) = v.as_array() else { return false };
    let mut prev = 1u64;
    for c in a {
        let Some(n) = safe_uint(c.get("messageCount")) else {
            return false;
        };
        let sections_ok = c
            .get("sections")
            .and_then(Value::as_object)
            .is_some_and(|s| {
                !s.is_empty()
                    && s.iter()
                        .all(|(k, v)| section_name_ok(k) && (v.is_string() || v.is_null()))
            });
        if n < prev || !sections_ok || safe_uint(c.get("timestamp")).is_none() {
            return false;
        }
        prev = n;
    }
    true
}

/// The title inputs' text of a message: user content string, or its text blocks joined with
/// `"\n"` (images ignored). `None` for non-user messages.
pub fn user_text(m: &Value) -> Option<String> {
    if m.get("role").and_then(Value::as_str) != Some("user") {
        return None;
    }
    Some(content_text(m.get("content")))
}

/// Text of a content value: a string, or the `text` blocks joined with `"\n"`.
pub fn content_text(c: Option<&Value>) -> String {
    match c {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(blocks)) => blocks
            .iter()
            .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// The fallback title text for one title input, or `None` when it normalises to nothing.
pub fn fallback_title(text: &str) -> Option<String> {
    let first = normalize_title(text, 96);
    if first.is_empty() {
        return None;
    }
    let words: Vec<&str> = first.split(' ').take(8).collect();
    let t = normalize_title(&words.join(" "), 96);
    (!t.is_empty()).then_some(t)
}

/// The display title: a valid stored title's text, else the fallback, else "New session".
pub fn display_title(h: &Map<String, Value>, title_ok: bool, fallback: Option<&str>) -> String {
    if title_ok
        && let Some(t) = h
            .get("title")
            .and_then(|t| t.get("text"))
            .and_then(Value::as_str)
    {
        return t.to_string();
    }
    fallback.unwrap_or("New session").to_string()
}
