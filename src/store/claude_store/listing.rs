//! The listing row (claude-code.md section 3 and 7.2): one pass over the records read for
//! listing, the DECIDED title precedence, message count, times, launch dir, branch, model,
//! and the badges for Claude's own flags.

use std::collections::HashSet;
use std::path::Path;
use std::time::SystemTime;

use chrono::{DateTime, Utc};
use serde_json::Value;

use super::discover;
use super::read::Parsed;
use super::record::{self as r, UserKind};
use crate::model::{SessionSummary, StoreKind};

/// What one pass over a transcript derives.
#[derive(Debug, Default)]
pub struct Facts {
    pub custom_title: Option<String>,
    pub ai_title: Option<String>,
    pub agent_name: Option<String>,
    /// `(summary, leafUuid)` in file order.
    pub summaries: Vec<(String, Option<String>)>,
    pub uuids: HashSet<String>,
    pub first_prompt: Option<String>,
    pub first_slash: Option<String>,
    pub last_prompt: Option<String>,
    pub user_turns: u64,
    pub assistant_ids: HashSet<String>,
    pub compact_summary: Option<String>,
    pub created: Option<DateTime<Utc>>,
    pub updated: Option<DateTime<Utc>>,
    pub newest_assistant: Option<DateTime<Utc>>,
    pub cwds: Vec<String>,
    pub branch: Option<String>,
    pub worktree_branch: Option<String>,
    pub model: Option<String>,
    pub entrypoint: Option<String>,
    pub background: bool,
    pub forked_from: Option<String>,
    pub internal_id: Option<String>,
    /// `leafUuid` of the `summary` records that open the file (before any message).
    pub leading_leaves: Vec<String>,
    /// The last main record is an assistant `end_turn` (the turn is over).
    pub ended: bool,
    pub ended_with_api_error: bool,
    pub other_types: u64,
    /// The main chain's last turn, for `SessionSummary::ended`.
    pub tail: super::ended::Tail,
}

fn later(a: Option<DateTime<Utc>>, b: Option<DateTime<Utc>>) -> Option<DateTime<Utc>> {
    a.max(b)
}

fn earlier(a: Option<DateTime<Utc>>, b: Option<DateTime<Utc>>) -> Option<DateTime<Utc>> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.min(y)),
        (x, y) => x.or(y),
    }
}

/// A title record counts for this file when its `sessionId` is absent or is this id.
fn own(v: &Value, id: &str) -> bool {
    r::s(v, "sessionId").is_none_or(|s| s == id)
}

fn non_empty(v: &Value, key: &str) -> Option<String> {
    r::s(v, key)
        .filter(|t| !t.trim().is_empty())
        .map(str::to_string)
}

pub fn facts(id: &str, p: &Parsed) -> Facts {
    let mut f = Facts::default();
    for rec in &p.recs {
        let v = &rec.v;
        let ts = r::timestamp(v);
        let snap = v
            .get("snapshot")
            .and_then(|s| r::s(s, "timestamp"))
            .and_then(crate::model::parse_time);
        f.created = earlier(earlier(f.created, ts), snap);
        if let Some(u) = r::uuid(v) {
            f.uuids.insert(u.to_string());
        }
        let main = r::is_main(v);
        let kind = r::kind(v);
        if main && matches!(kind, "user" | "assistant" | "system" | "attachment") {
            f.updated = later(f.updated, ts);
            if let Some(c) = r::s(v, "cwd").filter(|c| !c.is_empty())
                && !f.cwds.iter().any(|x| x == c)
            {
                f.cwds.push(c.to_string());
            }
        }
        if f.forked_from.is_none()
            && let Some(parent) = v.get("forkedFrom").and_then(|x| r::s(x, "sessionId"))
            && parent != id
        {
            f.forked_from = Some(parent.to_string());
        }
        if main
            && f.internal_id.is_none()
            && let Some(sid) = r::s(v, "sessionId")
            && sid != id
            && matches!(kind, "user" | "assistant")
        {
            f.internal_id = Some(sid.to_string());
        }
        if r::s(v, "sessionKind") == Some("bg") {
            f.background = true;
        }
        if main && matches!(kind, "user" | "assistant") {
            if f.entrypoint.is_none() {
                f.entrypoint = r::s(v, "entrypoint").map(str::to_string);
            }
            if let Some(b) = r::s(v, "gitBranch").filter(|b| !b.is_empty()) {
                f.branch = Some(b.to_string());
            }
            f.ended = false;
            f.ended_with_api_error = false;
            f.tail.record(v);
        }
        match kind {
            "custom-title" if own(v, id) => {
                if let Some(t) = non_empty(v, "customTitle") {
                    f.custom_title = Some(t);
                }
            }
            "ai-title" if own(v, id) => {
                if let Some(t) = non_empty(v, "aiTitle") {
                    f.ai_title = Some(t);
                }
            }
            "agent-name" => {
                if let Some(t) = non_empty(v, "agentName") {
                    f.agent_name = Some(t);
                }
            }
            "summary" => {
                if f.uuids.is_empty()
                    && let Some(l) = r::s(v, "leafUuid")
                {
                    f.leading_leaves.push(l.to_string());
                }
                if let Some(t) = non_empty(v, "summary") {
                    f.summaries
                        .push((t, r::s(v, "leafUuid").map(str::to_string)));
                }
            }
            "worktree-state" => {
                if let Some(b) = v
                    .get("worktreeSession")
                    .and_then(|w| r::s(w, "worktreeBranch"))
                    .filter(|b| !b.is_empty())
                {
                    f.worktree_branch = Some(b.to_string());
                }
            }
            "user" if main => match r::classify_user(v) {
                UserKind::Prompt(t) => {
                    f.user_turns += 1;
                    f.first_prompt.get_or_insert_with(|| t.clone());
                    f.last_prompt = Some(t);
                }
                UserKind::Slash(c) => {
                    f.user_turns += 1;
                    f.first_slash.get_or_insert(c);
                }
                UserKind::CompactSummary => {
                    f.compact_summary = Some(r::user_text(v));
                }
                _ => {}
            },
            "attachment" if main => {
                if let Some(p) = r::queued_prompt(v) {
                    f.user_turns += 1;
                    f.first_prompt.get_or_insert_with(|| p.to_string());
                    f.last_prompt = Some(p.to_string());
                }
            }
            "assistant" if main => {
                if r::assistant_counts(v)
                    && let Some(mid) = r::message_id(v)
                {
                    f.assistant_ids.insert(mid.to_string());
                }
                if !r::is_api_error(v) {
                    f.newest_assistant = later(f.newest_assistant, ts);
                    if let Some(m) = r::model(v) {
                        f.model = Some(m.to_string());
                    }
                }
                f.ended = r::stop_reason(v) == Some("end_turn");
                f.ended_with_api_error = r::is_api_error(v);
            }
            "user"
            | "assistant"
            | "system"
            | "attachment"
            | "progress"
            | "file-history-snapshot"
            | "file-history-delta"
            | "queue-operation"
            | "last-prompt"
            | "pr-link"
            | "mode"
            | "permission-mode"
            | "custom-title"
            | "ai-title"
            | "agent-setting"
            | "saved_hook_context"
            | "relocated"
            | "fork-context-ref"
            | "bridge-session"
            | "frame-link"
            | "atis-latch"
            | "started"
            | "result" => {}
            _ => f.other_types += 1,
        }
    }
    f
}

/// Title (section 3, DECIDED precedence, without the spool state title which `state::apply`
/// puts on top): custom > ai > agent-name > in-file summary > sessions-index.json > first
/// prompt > first slash command > "(no prompt)"; and whether a `summary` record was used.
pub fn title(f: &Facts, index_title: impl FnOnce() -> Option<String>) -> (String, Option<usize>) {
    let chosen_summary = f
        .summaries
        .iter()
        .rposition(|(_, leaf)| leaf.as_ref().is_some_and(|l| f.uuids.contains(l)))
        .or_else(|| f.summaries.len().checked_sub(1));
    let pick = f
        .custom_title
        .clone()
        .or_else(|| f.ai_title.clone())
        .or_else(|| f.agent_name.clone());
    if let Some(t) = pick {
        return (clean_title(&t), None);
    }
    if let Some(i) = chosen_summary {
        return (clean_title(&f.summaries[i].0), Some(i));
    }
    let t = index_title()
        .or_else(|| f.first_prompt.clone())
        .or_else(|| f.first_slash.clone())
        .unwrap_or_else(|| "(no prompt)".to_string());
    (clean_title(&t), None)
}

/// Whitespace collapsed, C0/C1 controls as spaces, cut to 100 characters with `…`.
pub fn clean_title(t: &str) -> String {
    let spaced: String = t
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    crate::text::truncate_chars(&crate::text::collapse_whitespace(&spaced), 100)
}

/// The launch dir (section 8): the first recorded cwd that owns the project directory, else
/// the first recorded cwd.
pub fn launch_dir(f: &Facts, project_dir_name: &str) -> Option<String> {
    f.cwds
        .iter()
        .find(|c| discover::owns(c, project_dir_name))
        .or(f.cwds.first())
        .cloned()
}

/// `customTitle`, then `summary`, of this id's entry in `<project>/sessions-index.json`
/// (a fallback only; absent, stale or invalid files are ignored).
pub fn index_title(project_dir: &Path, id: &str) -> Option<String> {
    let bytes = super::read::read_small(&project_dir.join("sessions-index.json")).ok()?;
    let v = crate::store::json_first::parse(&bytes)?;
    let entries = v.get("entries").and_then(Value::as_array)?;
    let e = entries.iter().find(|e| r::s(e, "sessionId") == Some(id))?;
    non_empty(e, "customTitle").or_else(|| non_empty(e, "summary"))
}

/// Context for building a row beyond the file itself.
pub struct RowContext<'a> {
    pub project_dir: &'a Path,
    pub subagents: usize,
    pub cleanup_days: Option<f64>,
    pub now: SystemTime,
}

pub fn summary(
    id: &str,
    path: &Path,
    p: &Parsed,
    f: &Facts,
    cx: &RowContext<'_>,
) -> SessionSummary {
    let mut s = SessionSummary::new(StoreKind::Claude, id, path);
    let dir_name = cx
        .project_dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let (title, used_summary) = title(f, || index_title(cx.project_dir, id));
    s.set_title(title);
    s.set_summary(
        match (&f.compact_summary, f.summaries.len().checked_sub(1)) {
            (Some(c), _) => c.clone(),
            (None, Some(last)) if used_summary.is_none() => f.summaries[last].0.clone(),
            _ => String::new(),
        },
    );
    s.cwd = launch_dir(f, &dir_name).map(Into::into);
    let mtime = p.mtime.map(DateTime::<Utc>::from);
    s.created_at = f.created.or(mtime);
    s.updated_at = f.updated.or(mtime);
    s.messages = f.user_turns + f.assistant_ids.len() as u64;
    s.has_user_message = s.messages > 0;
    s.set_first_prompt(
        f.first_prompt
            .clone()
            .or_else(|| f.first_slash.clone())
            .unwrap_or_default(),
    );
    s.model = f.model.as_deref().map(Into::into);
    s.set_forked_from(f.forked_from.as_ref().map(|p| format!("claude:{p}")));
    s.read_only = true;
    s.set_badges(badges(p, f, cx, s.cwd.as_deref()));
    s.ended = f.tail.ended(live(p, f, cx), p.truncated);
    s.set_git_branch(f.branch.clone());
    s
}

/// Written in the last two minutes without an end of turn: Claude is probably writing it.
fn live(p: &Parsed, f: &Facts, cx: &RowContext<'_>) -> bool {
    let age = p.mtime.and_then(|m| cx.now.duration_since(m).ok());
    age.is_some_and(|a| a < crate::model::ended::LIVE_WINDOW) && !f.ended
}

fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

fn badges(p: &Parsed, f: &Facts, cx: &RowContext<'_>, cwd: Option<&str>) -> Vec<String> {
    // Most telling first: the row's detail line is cut at the sidebar's width.
    let mut b = Vec::new();
    if cx.subagents > 0 {
        b.push(plural(cx.subagents as u64, "subagent", "subagents"));
    }
    if p.bad > 0 {
        b.push(plural(p.bad, "unreadable line", "unreadable lines"));
    }
    if p.truncated {
        b.push("truncated".into());
    }
    if !p.oversized.is_empty() {
        b.push(plural(
            p.oversized.len() as u64,
            "oversized line",
            "oversized lines",
        ));
    }
    if p.lossy > 0 {
        b.push(plural(
            p.lossy,
            "line with invalid UTF-8",
            "lines with invalid UTF-8",
        ));
    }
    if f.entrypoint
        .as_deref()
        .is_some_and(|e| e.starts_with("sdk"))
    {
        b.push("non-interactive".into());
    }
    if f.background {
        b.push("background".into());
    }
    if f.worktree_branch.is_some() {
        b.push("worktree".into());
    }
    if f.ended_with_api_error {
        b.push("ended with API error".into());
    }
    if let Some(i) = &f.internal_id {
        b.push(format!("internal id {i}"));
    }
    if let Some(c) = cwd
        && !Path::new(c).is_dir()
    {
        b.push(format!("start dir {c} is gone"));
    }
    if p.size > 10 * 1000 * 1000 {
        b.push("large transcript: claude --resume may be slow".into());
    }
    if let Some(branch) = f.worktree_branch.as_ref().or(f.branch.as_ref()) {
        b.push(format!("branch {branch}"));
    }
    let age = p.mtime.and_then(|m| cx.now.duration_since(m).ok());
    if live(p, f, cx) {
        b.push("live".into());
    }
    if let (Some(days), Some(age)) = (cx.cleanup_days, age) {
        let left = days - age.as_secs_f64() / 86400.0;
        if left < 0.0 {
            b.push("overdue for Claude's cleanup".into());
        } else if left <= 7.0 {
            let n = left.ceil() as u64;
            b.push(format!(
                "deleted by Claude Code in {}",
                plural(n, "day", "days")
            ));
        }
    }
    b
}

/// The next moment after `now` at which the clock alone changes a row's badges: "live" ends
/// two minutes after the last write, and the cleanup countdown ticks once a day in its last
/// week and turns "overdue" at the end. `None` once nothing is left to change.
pub fn badges_change_at(
    mtime: SystemTime,
    cleanup_days: Option<f64>,
    now: SystemTime,
) -> Option<SystemTime> {
    let mut moments = vec![mtime + std::time::Duration::from_secs(120)];
    if let Some(days) = cleanup_days {
        // `left` = days - age crosses each whole number k in 0..=7 at age = days - k; the
        // badge turns at the first instant past it, so one second later is safe.
        for k in 0..=7u32 {
            let at = days - f64::from(k);
            if at > 0.0 {
                moments.push(mtime + std::time::Duration::from_secs_f64(at * 86400.0 + 1.0));
            }
        }
    }
    moments.into_iter().filter(|m| *m > now).min()
}
