//! The context window pi resumes with (pi.md section 4, `buildSessionContext`): the active
//! path; after its last compaction C, C's summary, then C's `retainedTail` (newer files) or
//! the path entries from `firstKeptEntryId` up to C, then the entries after C.

use serde_json::Value;

use super::read::Ent;
use super::transcript::agent_message;
use super::tree::Tree;
use crate::model::{Message, Role};

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

/// What one path entry (`v`, its whole line) adds to the context.
fn context_message(e: &Ent, v: &Value) -> Option<Message> {
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

/// The window's messages from a whole read (the streamed window's reference).
#[cfg(test)]
pub fn messages(ents: &[Ent], t: &Tree) -> Vec<Message> {
    let mut out = Vec::new();
    each(
        ents,
        t,
        &mut |i| std::borrow::Cow::Borrowed(&ents[i].v),
        &mut |m| out.push(m),
    );
    out
}

/// One path entry's context message to `out`, its line got through `load`.
fn emit<'a>(
    ents: &'a [Ent],
    i: usize,
    load: &mut dyn FnMut(usize) -> std::borrow::Cow<'a, Value>,
    out: &mut dyn FnMut(Message),
) {
    if let Some(m) = context_message(&ents[i], &load(i)) {
        out(m);
    }
}

/// The window's messages to `out`, one at a time, each path entry's line got through `load`
/// as it is reached (only the entries the window replays are read).
pub fn each<'a>(
    ents: &'a [Ent],
    t: &Tree,
    load: &mut dyn FnMut(usize) -> std::borrow::Cow<'a, Value>,
    out: &mut dyn FnMut(Message),
) {
    let path = &t.path;
    let Some(c) = path.iter().rposition(|&i| ents[i].kind == "compaction") else {
        path.iter().for_each(|&i| emit(ents, i, load, out));
        return;
    };
    let comp = load(path[c]);
    let mut summary = Message::inserted(Role::User, s(&comp, "summary").unwrap_or(""));
    summary.note = Some("compaction summary".into());
    out(summary);
    if let Some(tail) = comp.get("retainedTail").and_then(Value::as_array) {
        tail.iter()
            .filter_map(|m| agent_message(m, None).map(stored))
            .for_each(&mut *out);
    } else if let Some(first) = s(&comp, "firstKeptEntryId")
        && let Some(k) = path[..c].iter().position(|&i| ents[i].id == first)
    {
        path[k..c].iter().for_each(|&i| emit(ents, i, load, out));
    }
    drop(comp);
    path[c + 1..].iter().for_each(|&i| emit(ents, i, load, out));
}
