//! Fork (section 8.5): replay the source like loom's `/fork`, then write the window into a
//! temp file and link it to a fresh local-time id. Existing logs are only read.

use std::fs::File;
use std::io::Write;
use std::path::Path;
use std::time::Duration;

use chrono::{Local, SecondsFormat};
use serde_json::{Map, Value};

use super::log;
use super::replay::{self, Slot};
use super::scan::LMsg;
use crate::error::{Error, Result};
use crate::store::atomic::{self, Step};
use crate::store::{lease, sidecar};

/// Fork `id` (whole, or cut before stored message `at`) into a new session; returns its id.
pub fn fork(sessions: &Path, id: &str, path: &Path, at: Option<usize>) -> Result<String> {
    let _lock = lease::instance_lock(&sidecar::dir(sessions), Duration::from_secs(2))?;
    let log = log::read(path, None, true).map_err(|e| Error::io("reading", path, e))?;
    if log.facts.long_lines > 0 {
        return Err(Error::Refused(format!(
            "loom session {id} has a line longer than 16 MiB; loom cannot fork it"
        )));
    }
    let events = match at {
        None => &log.events[..],
        Some(n) => replay::cut_before(&log.events, n).ok_or_else(|| {
            Error::Refused(format!(
                "loom session {id} has {} messages; cannot fork at message {n}",
                log.facts.messages
            ))
        })?,
    };
    let keeps_user = events.iter().any(|e| {
        matches!(&e.kind, log::EventKind::Record(r)
            if r.chat_message().is_some_and(|m| m.role == "user"))
    });
    if let Some(n) = at
        && !keeps_user
    {
        return Err(crate::store::empty_fork(
            crate::model::StoreKind::Loom,
            id,
            n,
        ));
    }
    let (mut window, system) = replay::replay(events);
    window.push(Slot {
        msg: LMsg::new("user", replay::reopened_notice(id)),
        index: None,
        time: String::new(),
        inserted: true,
    });
    let meta = log.facts.meta.clone().unwrap_or_default();
    let mut lines = vec![meta_line(&meta.model, &meta.cwd, id)];
    if system.is_some() {
        // window[0] is the last logged system prompt; loom would write a fresh one here.
        lines.push(record_line("system", &window[0].msg));
    }
    for s in &window[1..] {
        lines.push(record_line("message", &s.msg));
    }
    write_new_log(sessions, &lines)
}

/// Write the fork into `sessions/.fork-<random>.jsonl.tmp` (O_EXCL, 0600; not a `*.jsonl`,
/// so nothing lists it), fsync it, then publish it with `link` under the first free id of
/// `<YYYYMMDD-hhmmss>[-N]` (loom.md 8.5). A fork killed mid-write leaves only that temp, never
/// a truncated session that lists as a normal fork; on any error the temp is unlinked.
fn write_new_log(sessions: &Path, lines: &[Vec<u8>]) -> Result<String> {
    let tmp = sessions.join(format!(".fork-{}.jsonl.tmp", atomic::random_hex(8)));
    let written = atomic::create_new(&tmp).and_then(|f| fill(f, lines));
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(Error::io("writing", &tmp, e));
    }
    let published = publish(sessions, &tmp);
    let _ = std::fs::remove_file(&tmp);
    let new_id = published?;
    atomic::fsync_dir(sessions).map_err(|e| Error::io("syncing directory", sessions, e))?;
    Ok(new_id)
}

/// How old a fork temp must be before `tidy` removes it: a fork writes its temp in well
/// under a second, so one this old belongs to a fork that was killed.
pub const STALE_FORK_TEMP: Duration = Duration::from_secs(60 * 60);

/// Whether `name` is a temp file `write_new_log` writes: `.fork-<16 hex>.jsonl.tmp`.
fn is_fork_temp(name: &str) -> bool {
    name.strip_prefix(".fork-")
        .and_then(|r| r.strip_suffix(".jsonl.tmp"))
        .is_some_and(|h| h.len() == 16 && h.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// Remove the temps of killed forks: only regular files (never a symlink) with exactly
/// spool's name and older than `STALE_FORK_TEMP`. Best effort; returns how many went.
/// Runs as the browser quits: the name is checked before the `lstat`, as a `statx` of
/// every session in the directory (33k at 100k sessions) held the shell's prompt ~60 ms.
pub fn remove_stale_temps(sessions: &Path) -> usize {
    let Ok(rd) = std::fs::read_dir(sessions) else {
        return 0;
    };
    let now = std::time::SystemTime::now();
    let mut removed = 0;
    for e in rd.flatten() {
        if !is_fork_temp(&e.file_name().to_string_lossy()) {
            continue;
        }
        let stale = e
            .metadata()
            .ok()
            .filter(|m| m.file_type().is_file())
            .and_then(|m| {
                let age = now.duration_since(m.modified().ok()?).ok()?;
                Some(age > STALE_FORK_TEMP)
            });
        if stale == Some(true) && std::fs::remove_file(e.path()).is_ok() {
            removed += 1;
        }
    }
    removed
}

/// `link(tmp, sessions/<id>.jsonl)` for the base id, then `-1` to `-99`: atomic, and a taken
/// name fails with EEXIST instead of being replaced.
fn publish(sessions: &Path, tmp: &Path) -> Result<String> {
    let base = Local::now().format("%Y%m%d-%H%M%S").to_string();
    for n in 0..100 {
        let new_id = if n == 0 {
            base.clone()
        } else {
            format!("{base}-{n}")
        };
        let path = sessions.join(format!("{new_id}.jsonl"));
        match atomic::step(Step::Rename).and_then(|_| std::fs::hard_link(tmp, &path)) {
            Ok(()) => return Ok(new_id),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(Error::io("creating", &path, e)),
        }
    }
    Err(Error::Refused(format!(
        "no free loom session id for {base} (tried -1 to -99)"
    )))
}

fn fill(mut file: File, lines: &[Vec<u8>]) -> std::io::Result<()> {
    for line in lines {
        atomic::step(Step::Write)?;
        // One record per write, as loom's O_APPEND logger does.
        file.write_all(line)?;
    }
    atomic::step(Step::Fsync)?;
    file.sync_all()
}

fn now_local() -> String {
    Local::now().to_rfc3339_opts(SecondsFormat::Secs, true)
}

fn meta_line(model: &str, cwd: &str, forked_from: &str) -> Vec<u8> {
    let mut o = Map::new();
    o.insert("kind".into(), "meta".into());
    o.insert("time".into(), now_local().into());
    for (k, v) in [("model", model), ("cwd", cwd), ("forked_from", forked_from)] {
        if !v.is_empty() {
            o.insert(k.into(), v.into());
        }
    }
    encode(Value::Object(o))
}

fn record_line(kind: &str, m: &LMsg) -> Vec<u8> {
    let mut o = Map::new();
    o.insert("kind".into(), kind.into());
    o.insert("time".into(), now_local().into());
    o.insert("message".into(), message_json(m));
    encode(Value::Object(o))
}

/// A `Message` in Go field order, empty optional fields omitted (content is always present).
pub fn message_json(m: &LMsg) -> Value {
    let mut o = Map::new();
    o.insert("role".into(), m.role.clone().into());
    o.insert("content".into(), m.content.clone().into());
    if !m.thinking.is_empty() {
        o.insert("thinking".into(), m.thinking.clone().into());
    }
    if !m.tool_calls.is_empty() {
        let calls = m.tool_calls.iter().map(|c| {
            let mut f = Map::new();
            f.insert("name".into(), c.name.clone().into());
            f.insert("arguments".into(), c.arguments.clone());
            let mut call = Map::new();
            call.insert("function".into(), Value::Object(f));
            Value::Object(call)
        });
        o.insert("tool_calls".into(), Value::Array(calls.collect()));
    }
    if !m.tool_name.is_empty() {
        o.insert("tool_name".into(), m.tool_name.clone().into());
    }
    Value::Object(o)
}

/// One line as Go's `json.Marshal` writes it, plus `\n`.
fn encode(v: Value) -> Vec<u8> {
    let mut s = go_escape(&v.to_string());
    s.push('\n');
    s.into_bytes()
}

/// Go's HTML-safe escaping: `<`, `>`, `&`, U+2028 and U+2029 as `\uXXXX`. These characters
/// can only occur inside JSON strings, so escaping the whole text is safe.
pub fn go_escape(json: &str) -> String {
    let mut out = String::with_capacity(json.len());
    for c in json.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    out
}
