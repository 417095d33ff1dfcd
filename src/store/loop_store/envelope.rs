//! Reading a session's metadata: the v3 `meta.json` envelope (section 2.1) or the legacy
//! header line (section 2.6), without touching message bytes beyond what is needed.

use serde_json::{Map, Value};

use super::header::{HeaderCheck, check_header, header_supported, safe_uint};
use super::{Layout, Loc};
use crate::error::{Error, Result};
use crate::store::regular;

/// A legacy single file holds its messages too, so it may be larger than `meta.json`
/// (capped at `regular::META_CAP`); larger than this is refused rather than read into memory.
pub(crate) const LEGACY_CAP: u64 = 64 << 20;

/// The committed range of `messages.jsonl` and its hash (v3), or the legacy file's lines.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Range {
    pub start: u64,
    pub bytes: u64,
    pub count: u64,
    pub generation: String,
}

/// A session's metadata as read from disk.
#[derive(Debug)]
pub(crate) struct Head {
    pub header: Map<String, Value>,
    /// The whole v3 envelope (header included); `None` for legacy files.
    pub envelope: Option<Map<String, Value>>,
    /// The bytes read: `meta.json`, or the whole legacy file (the optimistic check's `B0`).
    pub raw: Vec<u8>,
    /// v3: the envelope's range. Legacy: start = offset of line 2, bytes = rest of the file.
    pub range: Range,
    pub check: HeaderCheck,
}

/// Why metadata could not be used.
#[derive(Debug)]
pub(crate) enum HeadError {
    /// Unsupported format or version: skip silently.
    Unsupported,
    /// Broken: an error row, with the header if it parsed.
    Invalid(String, Option<Map<String, Value>>),
}

impl HeadError {
    pub fn into_error(self) -> Error {
        match self {
            HeadError::Unsupported => Error::Refused("unsupported Loop session format".into()),
            HeadError::Invalid(why, _) => Error::Corrupt(why),
        }
    }
}

fn read_limited(path: &std::path::Path, what: &str, cap: u64) -> Result<Vec<u8>, HeadError> {
    regular::read(path, cap, regular::Links::Refuse).map_err(|e| {
        let why = if e.kind() == std::io::ErrorKind::NotFound {
            format!("invalid session directory: {what} missing")
        } else {
            format!("cannot read {what}: {e}")
        };
        HeadError::Invalid(why, None)
    })
}

/// Read the session's metadata (v3 `meta.json`, or the legacy file).
pub(crate) fn read_head(loc: &Loc) -> Result<Head, HeadError> {
    match loc.layout {
        Layout::V3 => parse_meta(read_limited(
            &loc.meta_path(),
            "meta.json",
            regular::META_CAP,
        )?),
        Layout::Legacy => parse_legacy(read_limited(&loc.path, "session file", LEGACY_CAP)?),
    }
}

/// Parse and check a v3 envelope.
pub(crate) fn parse_meta(raw: Vec<u8>) -> Result<Head, HeadError> {
    let v: Value = serde_json::from_slice(&raw)
        .map_err(|e| HeadError::Invalid(format!("meta.json is not valid JSON: {e}"), None))?;
    let Value::Object(env) = v else {
        return Err(HeadError::Invalid(
            "meta.json is not an object".into(),
            None,
        ));
    };
    if env.get("format").and_then(Value::as_str) != Some("loop-session")
        || env.get("version").and_then(Value::as_u64) != Some(3)
    {
        return Err(HeadError::Unsupported);
    }
    let header = match env.get("header") {
        Some(h @ Value::Object(m)) if header_supported(h) => m.clone(),
        Some(h @ Value::Object(_)) if h.get("format").is_some() || h.get("version").is_some() => {
            return Err(HeadError::Unsupported);
        }
        _ => {
            return Err(HeadError::Invalid(
                "meta.json has no valid header".into(),
                None,
            ));
        }
    };
    let generation = env
        .get("generation")
        .and_then(Value::as_str)
        .filter(|g| g.len() == 64 && g.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')));
    let (start, bytes, count) = (
        safe_uint(env.get("start")),
        safe_uint(env.get("bytes")),
        safe_uint(env.get("messageCount")),
    );
    let (Some(generation), Some(start), Some(bytes), Some(count)) =
        (generation, start, bytes, count)
    else {
        return Err(HeadError::Invalid(
            "meta.json has an invalid committed range".into(),
            Some(header),
        ));
    };
    if (count == 0) != (bytes == 0) {
        return Err(HeadError::Invalid(
            "meta.json messageCount and bytes disagree".into(),
            Some(header),
        ));
    }
    let range = Range {
        start,
        bytes,
        count,
        generation: generation.to_string(),
    };
    let check = check_header(&header);
    Ok(Head {
        header,
        envelope: Some(env),
        raw,
        range,
        check,
    })
}

/// Parse a legacy file's header line and measure its message lines.
pub(crate) fn parse_legacy(raw: Vec<u8>) -> Result<Head, HeadError> {
    let nl = raw.iter().position(|&b| b == b'\n');
    let first = &raw[..nl.unwrap_or(raw.len())];
    let v: Value = serde_json::from_slice(first)
        .map_err(|e| HeadError::Invalid(format!("header line is not valid JSON: {e}"), None))?;
    if !header_supported(&v) {
        return Err(HeadError::Unsupported);
    }
    let Value::Object(header) = v else {
        return Err(HeadError::Unsupported);
    };
    let start = nl.map_or(raw.len(), |i| i + 1) as u64;
    let rest = &raw[start as usize..];
    let count = rest
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .count() as u64;
    let range = Range {
        start,
        bytes: rest.len() as u64,
        count,
        generation: String::new(),
    };
    let check = check_header(&header);
    Ok(Head {
        header,
        envelope: None,
        raw,
        range,
        check,
    })
}
