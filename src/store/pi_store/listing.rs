//! The listing row (pi.md section 3 and 7.2): one pass over the entries read for listing,
//! the DECIDED title precedence (`session_info` name, else the first user message in file
//! order), the message count over the whole file, times, cwd, model and thinking level on
//! the active path, the summary, labels, and the badges for pi's own flags.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::SystemTime;

use chrono::{DateTime, Utc};
use serde_json::Value;

use super::read::{Ent, Header, LARGE, Parsed};
use super::tree::Tree;
use crate::model::ended::LIVE_WINDOW;
use crate::model::{Ended, SessionSummary, StoreKind};
use crate::text::plural;

/// What one pass over a session derives.
#[derive(Debug, Default)]
pub struct Facts {
    /// The last `session_info` name (an empty one clears it).
    pub name: Option<String>,
    pub first_user: Option<String>,
    /// user + assistant message entries, all branches.
    pub messages: u64,
    /// Every `message` entry (pi's own picker count).
    pub entries: u64,
    pub updated: Option<DateTime<Utc>>,
    pub newest_assistant: Option<DateTime<Utc>>,
    pub model: Option<String>,
    pub thinking: Option<String>,
    pub summary: String,
    /// target id -> label (last wins, empty clears).
    pub labels: BTreeMap<String, String>,
    pub tokens: u64,
    pub cost: f64,
    pub branch_points: usize,
    pub other: u64,
    /// The leaf awaits the assistant (a user message, or a `toolUse` stop).
    pub leaf_waiting: bool,
    /// "ended with error" / "aborted" when the leaf is such an assistant message.
    pub leaf_status: Option<&'static str>,
    /// How the active path's last message ends, before the clock is asked (`None`: no
    /// message on the path).
    pub leaf_end: Option<LeafEnd>,
}

/// The active path's last message, as `ended` needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LeafEnd {
    /// An assistant `stop`: its text.
    Reply(String),
    Errored,
    /// Stopped inside a turn; `true` when pi would still be working on it (the `live` leaf).
    Open(bool),
}

fn s<'a>(v: &'a Value, k: &str) -> Option<&'a str> {
    v.get(k).and_then(Value::as_str)
}

/// The display text of a user message's content: a string, or its `text` blocks joined
/// with a space.
pub fn user_text(msg: &Value) -> String {
    match msg.get("content") {
        Some(Value::String(t)) => t.clone(),
        Some(Value::Array(blocks)) => blocks
            .iter()
            .filter(|b| s(b, "type") == Some("text"))
            .filter_map(|b| s(b, "text"))
            .collect::<Vec<_>>()
            .join(" "),
        _ => String::new(),
    }
}

const KNOWN: [&str; 9] = [
    "message",
    "model_change",
    "thinking_level_change",
    "compaction",
    "branch_summary",
    "custom",
    "custom_message",
    "label",
    "session_info",
];

pub fn facts(p: &Parsed, t: &Tree) -> Facts {
    let mut f = Facts::default();
    let large = p.size > LARGE;
    for e in &p.ents {
        match e.kind.as_str() {
            "message" => {
                f.entries += 1;
                let role = e.role.as_deref().unwrap_or("");
                if matches!(role, "user" | "assistant") {
                    f.messages += 1;
                    let when = if large { e.ts } else { e.msg_ts.or(e.ts) };
                    f.updated = f.updated.max(when);
                }
                if role == "assistant" {
                    f.newest_assistant = f.newest_assistant.max(e.msg_ts.or(e.ts));
                }
                if role == "user"
                    && f.first_user.is_none()
                    && let Some(m) = e.v.get("message")
                {
                    f.first_user = Some(user_text(m));
                }
            }
            "session_info" => {
                let n = s(&e.v, "name").map(str::trim).unwrap_or("");
                f.name = (!n.is_empty()).then(|| n.to_string());
            }
            "label" => {
                if let Some(target) = s(&e.v, "targetId") {
                    match s(&e.v, "label").map(str::trim).filter(|l| !l.is_empty()) {
                        Some(l) => f.labels.insert(target.to_string(), l.to_string()),
                        None => f.labels.remove(target),
                    };
                }
            }
            k if !KNOWN.contains(&k) => f.other += 1,
            _ => {}
        }
        f.tokens += e.tokens;
        f.cost += e.cost;
    }
    path_facts(&mut f, &p.ents, t);
    f.branch_points = t.branch_points();
    f
}

/// Model, thinking level, summary and leaf state from the active path.
fn path_facts(f: &mut Facts, ents: &[Ent], t: &Tree) {
    let mut compaction = None;
    let mut branch = None;
    for &i in &t.path {
        let e = &ents[i];
        match e.kind.as_str() {
            "model_change" => {
                if let (Some(p), Some(m)) = (s(&e.v, "provider"), s(&e.v, "modelId")) {
                    f.model = Some(format!("{p}/{m}"));
                }
            }
            "thinking_level_change" => {
                f.thinking = s(&e.v, "thinkingLevel").map(str::to_string);
            }
            "message" if e.role.as_deref() == Some("assistant") && e.model.is_some() => {
                f.model.clone_from(&e.model);
            }
            "compaction" => compaction = s(&e.v, "summary").map(str::to_string),
            "branch_summary" => branch = s(&e.v, "summary").map(str::to_string),
            _ => {}
        }
    }
    f.summary = compaction.or(branch).unwrap_or_default();
    f.leaf_end = t
        .path
        .iter()
        .rev()
        .map(|&i| &ents[i])
        .find(|e| e.kind == "message")
        .map(leaf_end);
    if let Some(&leaf) = t.path.last() {
        let e = &ents[leaf];
        if e.kind == "message" {
            let stop = e.stop.as_deref();
            f.leaf_waiting = match e.role.as_deref() {
                Some("user") => true,
                Some("assistant") => stop == Some("toolUse"),
                _ => false,
            };
            if e.role.as_deref() == Some("assistant") {
                f.leaf_status = match stop {
                    Some("error") => Some("ended with error"),
                    Some("aborted") => Some("aborted"),
                    _ => None,
                };
            }
        }
    }
}

fn leaf_end(e: &Ent) -> LeafEnd {
    match (e.role.as_deref(), e.stop.as_deref()) {
        (Some("assistant"), Some("stop")) => LeafEnd::Reply(e.reply.clone().unwrap_or_default()),
        (Some("assistant"), Some("error")) => LeafEnd::Errored,
        (Some("assistant"), Some("toolUse")) | (Some("user"), _) => LeafEnd::Open(true),
        (Some("toolResult"), _) if e.is_error => LeafEnd::Errored,
        // `aborted`, `length`, a tool result or a bash/custom message last.
        _ => LeafEnd::Open(false),
    }
}

/// docs/stores.md "How each session ended": the active leaf decides; `running` is the
/// `live` badge's rule (written in the last 2 minutes with the leaf awaiting the assistant).
fn ended(p: &Parsed, f: &Facts, live: bool) -> Option<Ended> {
    if f.messages == 0 {
        return None;
    }
    if p.pending {
        return Some(Ended::Running);
    }
    if p.truncated {
        return Some(Ended::Interrupted);
    }
    Some(match f.leaf_end.as_ref()? {
        LeafEnd::Reply(text) => Ended::after_reply(text),
        LeafEnd::Errored => Ended::Errored,
        LeafEnd::Open(true) if live => Ended::Running,
        LeafEnd::Open(_) => Ended::Interrupted,
    })
}

/// The title without the spool state title (which `state::apply` puts on top).
pub fn title(f: &Facts) -> String {
    let t = f
        .name
        .clone()
        .or_else(|| f.first_user.clone())
        .unwrap_or_else(|| "(no messages)".to_string());
    crate::store::claude_store::clean_title(&t)
}

/// The session id from a file stem: the part after the first `_`, else the whole stem.
pub fn stem_id(path: &Path) -> String {
    // Borrowed until the id is known: one copy a session, not two.
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy())
        .unwrap_or_default();
    match stem.split_once('_') {
        Some((_, id)) if !id.is_empty() => id.to_string(),
        _ => stem.into_owned(),
    }
}

/// The creation time in a file name (`2026-03-14T09-15-02-101Z_<id>`).
fn stem_time(path: &Path) -> Option<DateTime<Utc>> {
    let stem = path.file_stem()?.to_string_lossy().into_owned();
    let (t, _) = stem.split_once('_')?;
    let n = chrono::NaiveDateTime::parse_from_str(t, "%Y-%m-%dT%H-%M-%S-%3fZ").ok()?;
    Some(n.and_utc())
}

/// The decoded directory name (`--home-user-x--` -> `/home/user/x`), lossy: a guess.
fn guessed_cwd(path: &Path) -> Option<String> {
    let dir = path.parent()?.file_name()?.to_string_lossy().into_owned();
    let inner = dir.strip_prefix("--")?.strip_suffix("--")?;
    (!inner.is_empty()).then(|| format!("/{}", inner.replace('-', "/")))
}

/// The row, before spool's state is applied. `parent` is the parent's `(id, title)` when
/// the session is a fork whose parent file could be read.
pub fn summary(
    path: &Path,
    p: &Parsed,
    f: &Facts,
    parent: Option<(String, String)>,
    now: SystemTime,
) -> SessionSummary {
    let (id, created, cwd, parent_path, version) = match &p.header {
        Header::Valid {
            id,
            timestamp,
            cwd,
            parent,
            version,
        } => (
            id.clone(),
            *timestamp,
            Some(cwd.clone()).filter(|c| !c.is_empty()),
            parent.clone(),
            *version,
        ),
        _ => (stem_id(path), None, None, None, Some(3)),
    };
    let mut s = SessionSummary::new(StoreKind::Pi, id, path);
    let mtime = p.mtime.map(DateTime::<Utc>::from);
    s.set_title(title(f));
    s.set_summary(f.summary.clone());
    s.created_at = created.or_else(|| stem_time(path)).or(mtime);
    s.updated_at = f.updated.or(s.created_at);
    s.messages = f.messages;
    s.has_user_message = f.messages > 0;
    s.set_first_prompt(f.first_user.clone().unwrap_or_default());
    s.model = f.model.as_deref().map(Into::into);
    s.read_only = true;
    let mut b = Vec::new();
    s.cwd = match cwd {
        Some(c) => Some(c),
        None => {
            let g = guessed_cwd(path);
            if g.is_some() {
                b.push("cwd (guessed)".to_string());
            }
            g
        }
    }
    .map(Into::into);
    if let Some(pp) = &parent_path {
        let (pid, ptitle) = parent.unwrap_or_else(|| (stem_id(Path::new(pp)), String::new()));
        s.set_forked_from(Some(format!("pi:{pid}")));
        if !ptitle.is_empty() && *ptitle == *s.title() {
            s.set_title(format!("{} (fork)", s.title()));
        }
    }
    if f.name.is_some() {
        b.push("named".into());
    }
    if !f.labels.is_empty() {
        b.push(plural(f.labels.len() as u64, "label", "labels"));
    }
    if f.branch_points > 0 {
        b.push(plural(
            f.branch_points as u64,
            "branch point",
            "branch points",
        ));
    }
    if let Some(st) = f.leaf_status {
        b.push(st.into());
    }
    if p.bad > 0 {
        b.push(plural(p.bad, "unreadable line", "unreadable lines"));
    }
    if p.truncated {
        b.push("truncated".into());
    }
    if p.pending {
        b.push("still being written".into());
    }
    if !p.oversized.is_empty() {
        let n = p.oversized.len() as u64;
        b.push(plural(n, "oversized line", "oversized lines"));
    }
    if version.is_some_and(|v| v < 3) || version.is_none() {
        b.push("old format: pi rewrites it when opened".into());
    }
    if let Some(c) = &s.cwd
        && !Path::new(c.as_str()).is_dir()
    {
        b.push(format!("cwd {c} is gone"));
    }
    let age = p.mtime.and_then(|m| now.duration_since(m).ok());
    let recent = age.is_some_and(|a| a < LIVE_WINDOW);
    if recent && f.leaf_waiting {
        b.push("live".into());
    }
    s.set_badges(b);
    s.ended = ended(p, f, recent);
    s
}
