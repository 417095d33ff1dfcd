//! Entries to messages (pi.md section 4, "Rendering"): the active path in order, pi-ai
//! messages through the converter Loop's store shares (the same `AgentMessage` shapes),
//! user `!` shell commands as shell blocks, extension messages only when displayed, model
//! and thinking changes and names as thin markers, labels as tags on their target,
//! compactions and branch summaries as dividers, `custom` and unknown entries hidden. Where
//! other branches leave the path, a marker says how many and what each was about; entries
//! copied from a fork's parent are marked once.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashSet};

use serde_json::Value;

use super::listing::user_text;
use super::read::Ent;
use super::tree::Tree;
use crate::model::{Entry, Message, Role};
use crate::store::loop_store::convert::to_message;
use crate::text::plural;

/// What a transcript needs beyond the entries.
pub struct Ctx<'a> {
    pub labels: &'a BTreeMap<String, String>,
    /// Ids of entries that also exist in the parent file (the copied region of a fork).
    pub copied: &'a HashSet<String>,
    /// `pi:<id> "title"` of the parent, for the copied-region marker.
    pub parent: Option<&'a str>,
}

fn s<'a>(v: &'a Value, k: &str) -> Option<&'a str> {
    v.get(k).and_then(Value::as_str)
}

/// A `message` entry's `AgentMessage` as a display message (`None`: nothing to show).
pub fn agent_message(m: &Value, index: Option<usize>) -> Option<Message> {
    let role = s(m, "role").unwrap_or("");
    match role {
        "bashExecution" => {
            let mut msg = Message::new(Role::Tool, bash_text(m));
            msg.tool_name = Some("! shell".into());
            msg.index = index;
            msg.is_error = m
                .get("exitCode")
                .and_then(Value::as_i64)
                .is_some_and(|c| c != 0);
            if m.get("excludeFromContext") == Some(&Value::Bool(true)) {
                msg.note = Some("not sent to the model (!!)".into());
            }
            Some(msg)
        }
        "custom" | "hookMessage" => displayed(m).then(|| {
            let mut msg = extension(m);
            msg.index = index;
            msg
        }),
        "branchSummary" | "compactionSummary" => None,
        _ => {
            let mut msg = to_message(index, m);
            if role == "toolResult"
                && let Some(d) = m
                    .get("details")
                    .and_then(|d| d.get("diff"))
                    .and_then(Value::as_str)
            {
                msg.text = format!("{}\n{d}", msg.text);
            }
            Some(msg)
        }
    }
}

/// Extension messages are shown only when they ask to be (`display: true`).
fn displayed(v: &Value) -> bool {
    v.get("display") == Some(&Value::Bool(true))
}

/// An extension's message (`custom_message` entry or `custom` role), named by its type.
fn extension(v: &Value) -> Message {
    Message::new(
        Role::Other(format!("extension {}", s(v, "customType").unwrap_or(""))),
        user_text(v),
    )
}

fn bash_text(m: &Value) -> String {
    let mut t = format!("$ {}", s(m, "command").unwrap_or(""));
    if let Some(o) = s(m, "output").filter(|o| !o.is_empty()) {
        t.push('\n');
        t.push_str(o);
    }
    if let Some(c) = m
        .get("exitCode")
        .and_then(Value::as_i64)
        .filter(|c| *c != 0)
    {
        t.push_str(&format!("\n(exit code {c})"));
    }
    if m.get("cancelled") == Some(&Value::Bool(true)) {
        t.push_str("\n(cancelled)");
    }
    t
}

/// A one-line description of a side branch: the `branch_summary` that left it, else its
/// first user message (`load` gives an entry's whole line by its position: borrowed from a
/// whole read, or read again from the file by a streamed view, `stream::Lines`).
fn branch_label<'a>(
    ents: &'a [Ent],
    t: &Tree,
    root: usize,
    load: &mut dyn FnMut(usize) -> Cow<'a, Value>,
) -> String {
    let sub = t.subtree(root);
    let ids: HashSet<&str> = sub.iter().map(|&i| ents[i].id.as_str()).collect();
    let left = ents
        .iter()
        .rev()
        .find(|e| e.kind == "branch_summary" && s(&e.v, "fromId").is_some_and(|f| ids.contains(f)));
    if let Some(sum) = left.and_then(|e| s(&e.v, "summary")) {
        return format!("left with summary: {}", crate::text::one_line(sum));
    }
    sub.iter()
        .copied()
        .find(|&i| ents[i].kind == "message" && ents[i].role.as_deref() == Some("user"))
        .and_then(|i| load(i).get("message").map(user_text))
        .map(|t| {
            format!(
                "\"{}\"",
                crate::text::truncate_chars(&crate::text::one_line(&t), 60)
            )
        })
        .unwrap_or_else(|| "(no user message)".into())
}

/// The display entries of `path` (positions into `ents`), messages numbered from `first`.
#[cfg(test)]
pub fn entries(ents: &[Ent], t: &Tree, path: &[usize], cx: &Ctx<'_>, first: usize) -> Vec<Entry> {
    let mut out = Vec::new();
    each(
        ents,
        t,
        path,
        cx,
        (first, 0),
        &mut |i| Cow::Borrowed(&ents[i].v),
        &mut |e| out.push(e),
    );
    out
}

/// Whether a path entry becomes a numbered message, from what a listing read keeps (`None`:
/// only its whole line tells: an extension message shown only when it asks to be).
fn numbered(e: &Ent) -> Option<bool> {
    if e.kind != "message" {
        return Some(false);
    }
    match e.role.as_deref() {
        Some("custom" | "hookMessage") => None,
        Some("branchSummary" | "compactionSummary") => Some(false),
        _ => Some(true),
    }
}

/// The display entries of `path` to `out`, one at a time, each entry's line got through
/// `load` as it is reached. `(first, from)`: messages are numbered from `first`, and the
/// entries before path position `from` are only counted (the last rounds skip them unread).
pub fn each<'a>(
    ents: &'a [Ent],
    t: &Tree,
    path: &[usize],
    cx: &Ctx<'_>,
    (first, from): (usize, usize),
    load: &mut dyn FnMut(usize) -> Cow<'a, Value>,
    out: &mut dyn FnMut(Entry),
) {
    let forks: BTreeMap<usize, Vec<usize>> =
        t.forks().into_iter().map(|f| (f.at, f.others)).collect();
    let mut n = first;
    let copied_len = path
        .iter()
        .take_while(|&&i| cx.copied.contains(&ents[i].id))
        .count();
    for (k, &i) in path.iter().enumerate() {
        let e = &ents[i];
        if k < from {
            let counts = numbered(e).unwrap_or_else(|| {
                load(i)
                    .get("message")
                    .is_some_and(|m| agent_message(m, None).is_some())
            });
            n += usize::from(counts);
            continue;
        }
        let v = load(i);
        match e.kind.as_str() {
            "message" => {
                if let Some(mut m) = v.get("message").and_then(|m| agent_message(m, Some(n))) {
                    n += 1;
                    if let Some(l) = cx.labels.get(&e.id) {
                        let tag = format!("label: {l}");
                        m.note = Some(match m.note.take() {
                            Some(x) => format!("{x}; {tag}"),
                            None => tag,
                        });
                    }
                    out(Entry::Message(Box::new(m)));
                }
            }
            "custom_message" if displayed(&v) => {
                let mut m = extension(&v);
                m.timestamp = e.ts;
                out(Entry::Message(Box::new(m)));
            }
            "model_change" => out(Entry::Notice(format!(
                "model: {}/{}",
                s(&v, "provider").unwrap_or("?"),
                s(&v, "modelId").unwrap_or("?")
            ))),
            "thinking_level_change" => out(Entry::Notice(format!(
                "thinking: {}",
                s(&v, "thinkingLevel").unwrap_or("?")
            ))),
            "compaction" => out(Entry::Compaction {
                summary: s(&v, "summary").unwrap_or("").to_string(),
                timestamp: e.ts,
            }),
            "branch_summary" => out(Entry::Notice(format!(
                "returned from another branch: {}",
                s(&v, "summary").unwrap_or("(no summary)")
            ))),
            "session_info" => out(Entry::Notice(match s(&v, "name").map(str::trim) {
                Some(n) if !n.is_empty() => format!("named \"{n}\""),
                _ => "name cleared".into(),
            })),
            _ => {}
        }
        drop(v);
        if let Some(l) = cx.labels.get(&e.id).filter(|_| e.kind != "message") {
            out(Entry::Notice(format!("label: {l}")));
        }
        if let Some(others) = forks.get(&i) {
            let what: Vec<String> = others
                .iter()
                .map(|&o| branch_label(ents, t, o, load))
                .collect();
            let verb = if others.len() == 1 { "leaves" } else { "leave" };
            out(Entry::Notice(format!(
                "⑂ {} {verb} here: {}",
                plural(others.len() as u64, "other branch", "other branches"),
                what.join("; ")
            )));
        }
        if copied_len > 0 && k + 1 == copied_len {
            out(Entry::Notice(format!(
                "↑ {} copied from {}",
                plural(copied_len as u64, "entry", "entries"),
                cx.parent.unwrap_or("the parent session")
            )));
        }
    }
}
