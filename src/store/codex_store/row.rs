//! The listing row of one rollout (codex.md sections 3 and 7.2): the summary fields from
//! the facts, and the badges for Codex's own flags (archived, exec/mcp/subagent/internal,
//! compressed, copied history, parse warnings, last turn state, live).

use std::time::SystemTime;

use chrono::{DateTime, Utc};

use super::listing::{self, Facts, Kind, TurnState};
use super::read::Parsed;
use crate::model::ended::LIVE_WINDOW;
use crate::model::{Ended, SessionSummary, StoreKind};
use crate::text::plural;

/// What the row needs beyond the rollout itself.
pub struct RowContext<'a> {
    pub archived: bool,
    pub duplicate_in_archive: bool,
    pub index_name: Option<&'a str>,
    /// Messages inside the copied prefix, when one was found.
    pub copied: Option<u64>,
    pub parent_missing: bool,
    pub now: SystemTime,
}

pub fn summary(
    id: &str,
    path: &std::path::Path,
    p: &Parsed,
    f: &Facts,
    cx: &RowContext<'_>,
) -> SessionSummary {
    let mut s = SessionSummary::new(StoreKind::Codex, id, path);
    s.set_title(listing::title(f, cx.index_name));
    s.set_summary(f.summary.clone().unwrap_or_default());
    s.cwd = f.cwd().or_else(|| f.current_cwd.clone()).map(Into::into);
    let mtime = p.mtime.map(DateTime::<Utc>::from);
    s.created_at = f
        .created
        .or(f.first_ts)
        .or_else(|| super::discover::filename_time(path))
        .or(mtime);
    s.updated_at = f.updated.or(mtime);
    s.messages = f.user_turns + f.assistant_msgs;
    s.has_user_message = !f.is_empty();
    s.set_first_prompt(
        f.preview
            .clone()
            .or_else(|| f.legacy_prompt.clone())
            .unwrap_or_default(),
    );
    s.model = f.model.as_deref().map(Into::into);
    s.set_forked_from(f.forked_from.as_ref().map(|p| format!("codex:{p}")));
    s.set_child_of(match f.kind {
        Kind::Subagent | Kind::Internal => Some(
            f.parent_thread
                .as_ref()
                .or(f.forked_from.as_ref())
                .map_or_else(|| "codex:internal".to_string(), |p| format!("codex:{p}")),
        ),
        _ => None,
    });
    s.archived = cx.archived;
    s.read_only = true;
    s.set_badges(badges(p, f, cx));
    s.ended = ended(p, f, cx);
    s
}

/// docs/stores.md "How each session ended": the last turn event decides. Codex persists no
/// API-error event (codex.md 2.4), so a Codex row is never `errored`; a failed turn ends as
/// `turn_aborted` or stays open.
fn ended(p: &Parsed, f: &Facts, cx: &RowContext<'_>) -> Option<Ended> {
    if f.is_empty() {
        return None;
    }
    if p.truncated {
        // A torn line still being written is the turn in progress.
        return Some(if is_live(p, cx) {
            Ended::Running
        } else {
            Ended::Interrupted
        });
    }
    match f.state? {
        TurnState::MidTurn if is_live(p, cx) => Some(Ended::Running),
        TurnState::MidTurn | TurnState::Interrupted => Some(Ended::Interrupted),
        TurnState::Waiting => Some(Ended::after_reply(&f.turn_reply)),
    }
}

/// Written within the live window: the same clock the `live` badge and `running` use.
fn is_live(p: &Parsed, cx: &RowContext<'_>) -> bool {
    p.mtime
        .and_then(|m| cx.now.duration_since(m).ok())
        .is_some_and(|a| a < LIVE_WINDOW)
}

fn badges(p: &Parsed, f: &Facts, cx: &RowContext<'_>) -> Vec<String> {
    // Most telling first: the row's detail line is cut at the sidebar's width.
    let mut b = Vec::new();
    if cx.archived {
        b.push("archived in Codex".into());
    }
    if !f.children.is_empty() {
        b.push(plural(f.children.len() as u64, "subagent", "subagents"));
    }
    match f.kind {
        Kind::Exec => b.push("exec".into()),
        Kind::Mcp => b.push("mcp".into()),
        Kind::Subagent => b.push(match &f.agent_name {
            Some(n) => format!("subagent {n}"),
            None => "subagent".into(),
        }),
        Kind::Internal => b.push("internal".into()),
        Kind::Interactive => {}
    }
    if p.bad > 0 {
        b.push(plural(p.bad, "bad line", "bad lines"));
    }
    if p.truncated {
        b.push("truncated".into());
    }
    if p.oversized > 0 {
        b.push(plural(p.oversized, "oversized record", "oversized records"));
    }
    if p.lossy > 0 {
        b.push(plural(
            p.lossy,
            "line with invalid UTF-8",
            "lines with invalid UTF-8",
        ));
    }
    if p.damaged.is_some() {
        b.push("compressed stream damaged".into());
    }
    if f.meta.is_none() || f.no_meta_first {
        b.push("does not start with session metadata: resume disabled".into());
    }
    if let Some(m) = &f.meta_mismatch {
        b.push(format!("meta id mismatch ({m})"));
    }
    if cx.duplicate_in_archive {
        b.push("duplicate in archive".into());
    }
    if p.compressed {
        b.push("compressed".into());
    }
    if let Some(n) = cx.copied {
        b.push(format!("{n} copied"));
    }
    if cx.parent_missing {
        b.push("parent missing".into());
    }
    match f.state {
        Some(TurnState::MidTurn) => b.push("mid-turn".into()),
        Some(TurnState::Interrupted) => b.push("interrupted".into()),
        _ => {}
    }
    if is_live(p, cx) && f.state == Some(TurnState::MidTurn) {
        b.push("live".into());
    }
    if let Some(branch) = f.branch() {
        b.push(format!("branch {branch}"));
    }
    if let Some(e) = &f.effort {
        b.push(format!("effort {e}"));
    }
    if let Some(t) = f.tokens {
        b.push(format!("{t} tokens"));
    }
    b
}
