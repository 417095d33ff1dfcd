//! The context window pi resumes with (pi.md section 4, `buildSessionContext`): the active
//! path; after its last compaction C, C's summary, then C's `retainedTail` (newer files) or
//! the path entries from `firstKeptEntryId` up to C, then the entries after C. And `--last N`
//! read from the end of the file.

use std::path::Path;

use serde_json::Value;

use super::read::{self, Ent};
use super::transcript::{self, Ctx, agent_message};
use super::tree::{self, Tree};
use crate::model::{Entry, Message, Role};

/// The note on how the window is obtained and what resume restores besides messages.
pub fn system_note(model: Option<&str>, thinking: Option<&str>) -> String {
    format!(
        "pi builds its system prompt at start-up (not stored in the session). Resume restores \
         model {} and thinking level {}.",
        model.unwrap_or("(default)"),
        thinking.unwrap_or("(default)")
    )
}

fn s<'a>(v: &'a Value, k: &str) -> Option<&'a str> {
    v.get(k).and_then(Value::as_str)
}

/// A stored message in the window: no history position, but not inserted by replay.
fn stored(mut m: Message) -> Message {
    m.is_virtual = false;
    m
}

/// What one path entry adds to the context.
fn context_message(e: &Ent) -> Option<Message> {
    let v = &e.v;
    match e.kind.as_str() {
        "message" => {
            let m = v.get("message")?;
            if s(m, "role") == Some("bashExecution")
                && m.get("excludeFromContext") == Some(&Value::Bool(true))
            {
                return None;
            }
            agent_message(m, None).map(stored)
        }
        "custom_message" => Some(Message::new(Role::User, super::listing::user_text(v))),
        "branch_summary" => s(v, "summary").filter(|t| !t.is_empty()).map(|t| {
            let mut m = Message::inserted(Role::User, t);
            m.note = Some("branch summary".into());
            m
        }),
        _ => None,
    }
}

pub fn messages(ents: &[Ent], t: &Tree) -> Vec<Message> {
    let path: Vec<&Ent> = t.path.iter().map(|&i| &ents[i]).collect();
    let Some(c) = path.iter().rposition(|e| e.kind == "compaction") else {
        return path.iter().filter_map(|e| context_message(e)).collect();
    };
    let comp = &path[c].v;
    let mut summary = Message::inserted(Role::User, s(comp, "summary").unwrap_or(""));
    summary.note = Some("compaction summary".into());
    let mut out = vec![summary];
    if let Some(tail) = comp.get("retainedTail").and_then(Value::as_array) {
        out.extend(
            tail.iter()
                .filter_map(|m| agent_message(m, None).map(stored)),
        );
    } else if let Some(first) = s(comp, "firstKeptEntryId")
        && let Some(k) = path[..c].iter().position(|e| e.id == first)
    {
        out.extend(path[k..c].iter().filter_map(|e| context_message(e)));
    }
    out.extend(path[c + 1..].iter().filter_map(|e| context_message(e)));
    out
}

/// The last `n` rounds along the active path, read from the end: `(entries, rounds in what
/// was read, first kept round, whole file read)`. The path is a walk from the leaf (the last
/// line) through `parentId`s, which may jump anywhere earlier in the file; a tail read is
/// enough once the walk meets `n` user messages (plus one) before leaving what was read.
pub fn last_rounds(
    path: &Path,
    n: usize,
    cx: &Ctx<'_>,
) -> std::io::Result<(Vec<Entry>, usize, usize, bool)> {
    crate::store::lines::from_the_end(|bytes| {
        let p = read::read_tail(path, bytes)?;
        let whole = p.from == 0;
        let t = tree::build(&p.ents);
        let users = t
            .path
            .iter()
            .filter(|&&i| p.ents[i].role.as_deref() == Some("user"))
            .count();
        Ok((whole || users > n).then(|| {
            let entries = transcript::entries(&p.ents, &t, &t.path, cx, 0);
            let (kept, total, first) =
                crate::store::last_rounds(entries, crate::store::Span::LastRounds(n));
            (kept, total, first, whole)
        }))
    })
}
