//! The listing row (codex.md sections 3, 5 and 7.2): one pass over a rollout's records for
//! the thread's own `session_meta`, the preview Codex's picker shows, message counts, times,
//! project and current dir, branch, model, last turn state, lineage (fork, subagent,
//! copied prefix), and the badges for Codex's own flags.

use std::collections::{BTreeSet, HashSet};

use chrono::{DateTime, Utc};
use serde_json::Value;

use super::read::{Parsed, Rec, Skimmed};
use super::record::{self as r};

/// What launched the thread (`session_meta.source`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Kind {
    #[default]
    Interactive,
    Exec,
    Mcp,
    Subagent,
    Internal,
}

/// The state of the last turn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TurnState {
    Waiting,
    MidTurn,
    Interrupted,
}

/// What one pass over a rollout derives.
#[derive(Debug, Default)]
pub struct Facts {
    /// Payload of the thread's own `session_meta` (the first with the file's id, else the
    /// first at all).
    pub meta: Option<Value>,
    /// The first `session_meta` carries another id and none carries the file's.
    pub meta_mismatch: Option<String>,
    /// Record index of the first later `session_meta` with another id (a copied parent).
    pub copy_start: Option<usize>,
    pub forked_from: Option<String>,
    pub parent_thread: Option<String>,
    pub kind: Kind,
    pub agent_name: Option<String>,
    pub preview: Option<String>,
    pub legacy_prompt: Option<String>,
    pub user_turns: u64,
    pub assistant_msgs: u64,
    pub summary: Option<String>,
    pub last_answer: Option<String>,
    pub created: Option<DateTime<Utc>>,
    pub first_ts: Option<DateTime<Utc>>,
    pub updated: Option<DateTime<Utc>>,
    pub newest_assistant: Option<DateTime<Utc>>,
    pub current_cwd: Option<String>,
    pub model: Option<String>,
    pub effort: Option<String>,
    pub tokens: Option<u64>,
    pub state: Option<TurnState>,
    /// `last_agent_message` of the last `task_complete` (empty when it had none): the text
    /// a finished turn's ending is judged by.
    pub turn_reply: String,
    /// Child thread ids this thread spawned (`sub_agent_activity`, `spawn_agent` outputs).
    pub children: BTreeSet<String>,
    /// The first parseable record is not a `session_meta`.
    pub no_meta_first: bool,
}

impl Facts {
    pub fn cwd(&self) -> Option<String> {
        self.meta
            .as_ref()
            .and_then(|m| r::s(m, "cwd"))
            .filter(|c| !c.is_empty())
            .map(str::to_string)
    }

    pub fn branch(&self) -> Option<String> {
        let git = self.meta.as_ref()?.get("git")?;
        r::s(git, "branch")
            .filter(|b| !b.is_empty())
            .map(str::to_string)
    }

    /// Empty (DECIDED 7): no `session_meta` or nothing preview-bearing.
    pub fn is_empty(&self) -> bool {
        self.meta.is_none() || (self.preview.is_none() && self.legacy_prompt.is_none())
    }
}

fn later(a: Option<DateTime<Utc>>, b: Option<DateTime<Utc>>) -> Option<DateTime<Utc>> {
    a.max(b)
}

fn kind_of(meta: &Value) -> (Kind, Option<String>) {
    let parent = r::s(meta, "parent_thread_id").map(str::to_string);
    let source = meta.get("source");
    let kind = match source {
        Some(Value::String(s)) => match s.as_str() {
            "exec" => Kind::Exec,
            "mcp" => Kind::Mcp,
            _ => Kind::Interactive,
        },
        Some(Value::Object(o)) if o.contains_key("subagent") => Kind::Subagent,
        Some(Value::Object(o)) if o.contains_key("internal") => Kind::Internal,
        _ => Kind::Interactive,
    };
    let spawn_parent = source
        .and_then(|s| s.get("subagent"))
        .and_then(|s| s.get("thread_spawn"))
        .and_then(|t| r::s(t, "parent_thread_id"))
        .map(str::to_string);
    let kind = match r::s(meta, "thread_source") {
        Some("subagent") => Kind::Subagent,
        Some("memory_consolidation") if kind == Kind::Interactive => Kind::Internal,
        _ => kind,
    };
    (kind, spawn_parent.or(parent))
}

fn agent_name(meta: &Value) -> Option<String> {
    let spawn = meta
        .get("source")
        .and_then(|s| s.get("subagent"))
        .and_then(|s| s.get("thread_spawn"));
    let pick = |k: &str| {
        r::s(meta, k)
            .or_else(|| spawn.and_then(|t| r::s(t, k)))
            .filter(|t| !t.is_empty())
    };
    pick("agent_nickname")
        .map(str::to_string)
        .or_else(|| pick("agent_path").and_then(|p| p.rsplit('/').next().map(str::to_string)))
}

/// The thread's own facts. `copied` is the record range treated as the parent's copy.
pub fn facts(id: &str, p: &Parsed) -> Facts {
    let mut f = Facts::default();
    let mut calls: std::collections::HashMap<String, String> = Default::default();
    f.no_meta_first = p
        .recs
        .first()
        .is_some_and(|rec| r::kind(&rec.v) != "session_meta");
    let mut first_meta: Option<(usize, Value)> = None;
    for (i, rec) in p.recs.iter().enumerate() {
        let v = &rec.v;
        let ts = r::timestamp(v);
        if f.first_ts.is_none() {
            f.first_ts = ts;
        }
        f.updated = later(f.updated, ts);
        let pl = r::payload(v);
        match r::kind(v) {
            "session_meta" => {
                let mid = r::s(pl, "id").map(str::to_ascii_lowercase);
                if mid.as_deref() == Some(id) {
                    if f.meta.is_none() {
                        f.meta = Some(pl.clone());
                    }
                } else if first_meta.is_none() && f.meta.is_none() && i == 0 {
                    first_meta = Some((i, pl.clone()));
                } else if f.copy_start.is_none() && (f.meta.is_some() || first_meta.is_some()) {
                    f.copy_start = Some(i);
                }
            }
            "turn_context" => {
                if let Some(c) = r::s(pl, "cwd").filter(|c| !c.is_empty()) {
                    f.current_cwd = Some(c.to_string());
                }
                if let Some(m) = r::s(pl, "model").filter(|m| !m.is_empty()) {
                    f.model = Some(m.to_string());
                }
                if let Some(e) = r::s(pl, "effort").filter(|e| !e.is_empty()) {
                    f.effort = Some(e.to_string());
                }
            }
            "compacted" => {
                if let Some(m) = r::s(pl, "message").filter(|m| !m.trim().is_empty()) {
                    f.summary = Some(m.to_string());
                }
            }
            "event_msg" => event(&mut f, pl),
            "response_item" => item(&mut f, pl, ts, &mut calls, p.legacy),
            _ => {}
        }
    }
    if f.meta.is_none()
        && let Some((_, m)) = first_meta
    {
        f.meta_mismatch = r::s(&m, "id").map(str::to_string);
        f.meta = Some(m);
    }
    if let Some(m) = &f.meta {
        f.created = r::s(m, "timestamp").and_then(crate::model::parse_time);
        f.forked_from = r::s(m, "forked_from_id")
            .filter(|p| !p.is_empty())
            .map(str::to_ascii_lowercase);
        let (kind, parent) = kind_of(m);
        f.kind = kind;
        f.parent_thread = parent.map(|p| p.to_ascii_lowercase());
        f.agent_name = agent_name(m);
    }
    for s in &p.skimmed {
        match s {
            Skimmed::UserMessage => f.user_turns += 1,
            Skimmed::Assistant => f.assistant_msgs += 1,
            Skimmed::Other => {}
        }
    }
    f
}

fn event(f: &mut Facts, pl: &Value) {
    match r::s(pl, "type").unwrap_or("") {
        "user_message" => {
            f.user_turns += 1;
            if f.preview.is_none() {
                f.preview = r::user_message_preview(pl);
            }
        }
        "thread_goal_updated" if f.preview.is_none() => f.preview = r::goal_preview(pl),
        "task_started" | "turn_started" => f.state = Some(TurnState::MidTurn),
        "task_complete" | "turn_complete" => {
            f.state = Some(TurnState::Waiting);
            r::s(pl, "last_agent_message")
                .unwrap_or("")
                .clone_into(&mut f.turn_reply);
            if let Some(a) = r::s(pl, "last_agent_message").filter(|a| !a.is_empty()) {
                f.last_answer = Some(a.to_string());
            }
        }
        "turn_aborted" => f.state = Some(TurnState::Interrupted),
        "token_count" => {
            if let Some(t) = pl
                .get("info")
                .and_then(|i| i.get("total_token_usage"))
                .and_then(|u| u.get("total_tokens"))
                .and_then(Value::as_u64)
            {
                f.tokens = Some(t);
            }
        }
        "sub_agent_activity" => {
            if let Some(t) = r::s(pl, "agent_thread_id").filter(|t| r::is_uuid(t)) {
                f.children.insert(t.to_ascii_lowercase());
            }
        }
        _ => {}
    }
}

fn item(
    f: &mut Facts,
    pl: &Value,
    ts: Option<DateTime<Utc>>,
    calls: &mut std::collections::HashMap<String, String>,
    legacy: bool,
) {
    match r::s(pl, "type").unwrap_or("") {
        "message" if r::is_assistant_message(pl) => {
            f.assistant_msgs += 1;
            f.newest_assistant = later(f.newest_assistant, ts);
        }
        "message" if legacy && r::s(pl, "role") == Some("user") && !r::is_injected(pl) => {
            // Legacy files have no user_message events: prompts come from the items.
            f.user_turns += 1;
            if f.legacy_prompt.is_none() {
                let t = r::user_item_text(pl);
                f.legacy_prompt = (!t.is_empty()).then_some(t);
            }
        }
        "function_call" => {
            if let (Some(c), Some(n)) = (r::s(pl, "call_id"), r::s(pl, "name")) {
                calls.insert(c.to_string(), n.to_string());
            }
        }
        "function_call_output" => {
            let spawn = r::s(pl, "call_id")
                .and_then(|c| calls.get(c))
                .map(String::as_str);
            if spawn == Some("spawn_agent") {
                let text = super::transcript::output_text(pl.get("output"));
                f.children.extend(r::uuids_in(&text));
            }
        }
        _ => {}
    }
}

/// Title (section 3, without the spool state title that `state::apply` puts on top):
/// session_index name > preview > legacy first prompt > `(no message yet)`; forks get
/// ` (fork)` on a preview.
pub fn title(f: &Facts, index_name: Option<&str>) -> String {
    if let Some(n) = index_name {
        return clean_title(n);
    }
    match f.preview.as_ref().or(f.legacy_prompt.as_ref()) {
        Some(p) if f.forked_from.is_some() => format!("{} (fork)", clean_title(p)),
        Some(p) => clean_title(p),
        None => NO_MESSAGE.into(),
    }
}

pub const NO_MESSAGE: &str = "(no message yet)";

/// Whitespace collapsed, controls as spaces, cut to 100 characters.
pub fn clean_title(t: &str) -> String {
    let spaced: String = t
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    crate::text::truncate_chars(&crate::text::collapse_whitespace(&spaced), 100)
}

/// The copied prefix of a fork or subagent (DECIDED 10): from the copied parent
/// `session_meta` to the first `turn_context` whose `turn_id` the parent does not hold.
/// `None` when there is no copy or the parent's turn ids are unknown.
pub fn copied_range(
    recs: &[Rec],
    f: &Facts,
    parent_turns: Option<&HashSet<String>>,
) -> Option<(usize, usize)> {
    let start = f.copy_start?;
    let turns = parent_turns?;
    let end = recs[start..]
        .iter()
        .position(|rec| {
            r::kind(&rec.v) == "turn_context"
                && r::s(r::payload(&rec.v), "turn_id").is_none_or(|t| !turns.contains(t))
        })
        .map_or(recs.len(), |k| start + k);
    Some((start, end))
}

/// Messages (as counted) inside `range`.
pub fn counted_in(recs: &[Rec], range: (usize, usize)) -> u64 {
    recs[range.0..range.1]
        .iter()
        .filter(|rec| {
            let pl = r::payload(&rec.v);
            match r::kind(&rec.v) {
                "event_msg" => r::s(pl, "type") == Some("user_message"),
                "response_item" => r::is_assistant_message(pl),
                _ => false,
            }
        })
        .count() as u64
}
