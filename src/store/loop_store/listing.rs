//! The lazy listing pass (sections 1 and 5): `meta.json` or the legacy header line, plus a
//! scan of the committed messages up to the first user text (fallback title, first prompt).

use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::Path;

use serde_json::{Map, Value};

use super::archive::is_archived;
use super::envelope::{Head, HeadError, read_head};
use super::header::{HeaderCheck, display_title, fallback_title, user_text};
use super::{Layout, Loc};
use crate::model::{SessionSummary, StoreKind, parse_time};
use crate::store::regular;

/// Lines longer than this are not parsed during the listing scan (they are checked on open).
const SCAN_LINE_LIMIT: usize = 16 << 20;

/// The row for one located session; `None` when its format or version is unsupported.
pub(crate) fn summarize(loc: &Loc) -> Option<SessionSummary> {
    match read_head(loc) {
        Ok(head) => Some(summary_from_head(loc, &head)),
        Err(HeadError::Unsupported) => None,
        Err(HeadError::Invalid(why, header)) => {
            let mut s = SessionSummary::error_row(StoreKind::Loop, &loc.id, &loc.path, why);
            if let Some(h) = header {
                fill_header(&mut s, &h, &super::header::check_header(&h));
            }
            apply_archive(&mut s, loc);
            Some(s)
        }
    }
}

/// What the scan of the committed messages found.
#[derive(Default)]
struct Scan {
    first_prompt: Option<String>,
    fallback: Option<String>,
    /// From the last committed message (`super::ended`).
    ended: Option<crate::model::Ended>,
}

/// Build the row from metadata already read.
pub(crate) fn summary_from_head(loc: &Loc, head: &Head) -> SessionSummary {
    let mut s = SessionSummary::new(StoreKind::Loop, &loc.id, &loc.path);
    fill_header(&mut s, &head.header, &head.check);
    s.messages = head.range.count;
    match scan(loc, head) {
        Ok(found) => {
            s.has_user_message = found.first_prompt.is_some();
            s.set_first_prompt(found.first_prompt.unwrap_or_default());
            s.set_title(display_title(
                &head.header,
                head.check.title_ok,
                found.fallback.as_deref(),
            ));
            s.ended = found.ended;
        }
        Err(why) => s.set_error(Some(why)),
    }
    let header_id = head.header.get("id").and_then(Value::as_str);
    if header_id.is_some_and(|h| h != loc.id) {
        s.set_error(Some(format!(
            "header id {} does not match the session name",
            header_id.unwrap_or_default()
        )));
    }
    if !head.check.fatal.is_empty() && s.error().is_none() {
        s.set_error(Some(format!(
            "invalid header: {}",
            head.check.fatal.join(", ")
        )));
    }
    for b in &head.check.soft {
        s.add_badge(b);
    }
    s.read_only = s.error().is_some() || !head.check.writable();
    apply_archive(&mut s, loc);
    s
}

/// Copy what the header says into the row (also used for error rows: "show whatever parsed").
fn fill_header(s: &mut SessionSummary, h: &Map<String, Value>, check: &HeaderCheck) {
    let text = |k: &str| h.get(k).and_then(Value::as_str);
    if let Some(cwd) = text("cwd") {
        s.cwd = Some(cwd.into());
        if !Path::new(cwd).is_dir() {
            s.add_badge("cwd missing");
        }
    }
    s.created_at = text("createdAt").and_then(parse_time);
    s.updated_at = text("updatedAt").and_then(parse_time);
    s.unread = h.get("unread") == Some(&Value::Bool(true));
    s.pinned_at = check.pinned_at;
    s.pinned_flag = check.pinned_flag;
    if s.error().is_none() || check.title_ok {
        s.set_title(display_title(h, check.title_ok, None));
    }
    if check.compactions_ok
        && let Some(sum) = h
            .get("compactions")
            .and_then(Value::as_array)
            .and_then(|a| a.last())
            .and_then(|c| c.get("summary"))
            .and_then(Value::as_str)
    {
        s.set_summary(sum);
    }
    if let Some(m) = h.get("model") {
        let (p, i) = (m.get("provider"), m.get("id"));
        if let (Some(p), Some(i)) = (p.and_then(Value::as_str), i.and_then(Value::as_str)) {
            s.model = Some(format!("{p}/{i}").into());
        }
    }
    s.set_forked_from(
        h.get("forkedFrom")
            .and_then(|f| f.get("id"))
            .and_then(Value::as_str)
            .map(|id| format!("loop:{id}")),
    );
}

fn apply_archive(s: &mut SessionSummary, loc: &Loc) {
    match is_archived(&loc.archive_path(), &loc.id) {
        Some(archived) => s.archived = archived,
        None => s.add_badge("archive state unreadable"),
    }
}

/// Scan committed lines from the start up to the first user line with title text.
fn scan(loc: &Loc, head: &Head) -> Result<Scan, String> {
    let r = &head.range;
    match loc.layout {
        Layout::Legacy => {
            // The whole file is already in memory: check every line as Loop's reader would.
            let rest = head.raw.get(r.start as usize..).unwrap_or_default();
            let body = rest.strip_suffix(b"\n").unwrap_or(rest);
            for (i, line) in body.split(|&b| b == b'\n').enumerate() {
                if body.is_empty() {
                    break;
                }
                if serde_json::from_slice::<serde::de::IgnoredAny>(line).is_err() {
                    return Err(format!("line {} is blank or not valid JSON", i + 2));
                }
            }
            Ok(Scan {
                ended: super::ended::from_bytes(rest),
                ..scan_lines(rest)
            })
        }
        Layout::V3 => {
            let path = loc.messages_path();
            let mut f = match regular::open(&path, regular::Links::Refuse) {
                Ok(f) => f,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound && r.bytes == 0 => {
                    return Ok(Scan::default());
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    return Err("committed bytes missing (messages.jsonl not found)".into());
                }
                Err(e) => return Err(format!("cannot read messages.jsonl: {e}")),
            };
            let size = f.metadata().map(|m| m.len()).unwrap_or(0);
            if size < r.start.saturating_add(r.bytes) {
                return Err("committed bytes missing".into());
            }
            // Bytes past the committed range: a writer died before publishing them.
            let ended = if size > r.start + r.bytes {
                Some(crate::model::Ended::Interrupted)
            } else {
                super::ended::from_file(&mut f, r.start, r.bytes)
            };
            f.seek(SeekFrom::Start(r.start))
                .map_err(|e| format!("cannot read messages.jsonl: {e}"))?;
            Ok(Scan {
                ended,
                ..scan_reader(BufReader::new(f.take(r.bytes)))
            })
        }
    }
}

fn scan_lines(bytes: &[u8]) -> Scan {
    scan_reader(BufReader::new(bytes))
}

fn scan_reader(mut r: impl BufRead) -> Scan {
    let mut found = Scan::default();
    let mut line = Vec::new();
    loop {
        line.clear();
        match r.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        // Only lines mentioning "user" can be user messages; skip parsing the rest.
        if line.len() > SCAN_LINE_LIMIT || !contains(&line, b"\"user\"") {
            continue;
        }
        let Ok(v) = serde_json::from_slice::<Value>(&line) else {
            continue;
        };
        let Some(text) = user_text(&v) else { continue };
        if found.first_prompt.is_none() {
            found.first_prompt = Some(text.clone());
        }
        if let Some(t) = fallback_title(&text) {
            found.fallback = Some(t);
            break;
        }
    }
    found
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}
