//! Context-window replay (section 6): normalisation with tool repair, runtime context
//! placement, the last compaction checkpoint, and the system prompt reconstructed from its
//! checkpoints. Stored messages are never changed; everything here is in memory.

use std::collections::HashSet;

use serde_json::{Value, json};

use super::checkpoints::system_prompt;
use super::convert::to_message;
use super::envelope::Head;
use super::header::safe_uint;
use super::history::read_full;
use super::listing::summary_from_head;
use super::validate::{self, is_failed_assistant, role, tool_calls};
use super::{Layout, Loc, stream};
use crate::error::Result;
use crate::model::{Message, Role, Window};
use crate::store::sink::{LastMessages, WindowHead, WindowSink};
use crate::store::sink_error;

/// One projected message: its value, the stored message it comes from, and whether it is
/// that stored message itself (or an insert attributed to it).
struct Projected {
    value: Value,
    source: usize,
    stored: bool,
    note: Option<&'static str>,
}

/// The virtual tool result pi-ai inserts for an unanswered call.
fn repair(id: &str, name: &str, source: usize) -> Projected {
    Projected {
        value: json!({"role": "toolResult", "toolCallId": id, "toolName": name,
            "content": [{"type": "text", "text": "No result provided"}], "isError": true}),
        source,
        stored: false,
        note: Some("tool-repair"),
    }
}

/// Step 2, one message at a time: drop failed assistants, insert repairs for calls left
/// unanswered when a user message or a new assistant message arrives (pi-ai
/// `transformMessages`).
#[derive(Default)]
struct Normalizer {
    pending: Vec<(String, String, usize)>,
    answered: HashSet<String>,
}

impl Normalizer {
    fn flush(&mut self, out: &mut impl FnMut(Projected)) {
        for (id, name, src) in self.pending.drain(..) {
            if !self.answered.contains(&id) {
                out(repair(&id, &name, src));
            }
        }
        self.answered.clear();
    }

    fn push(
        &mut self,
        i: usize,
        m: Value,
        warnings: &mut Vec<String>,
        out: &mut impl FnMut(Projected),
    ) {
        match role(&m) {
            "assistant" => {
                self.flush(out);
                if is_failed_assistant(&m) {
                    return;
                }
                self.pending = tool_calls(&m)
                    .into_iter()
                    .map(|(id, name)| (id, name, i))
                    .collect();
            }
            "toolResult" => {
                let id = m.get("toolCallId").and_then(Value::as_str).unwrap_or("");
                self.answered.insert(id.to_string());
            }
            "user" => self.flush(out),
            _ => {
                warnings.push(format!("message {i}: unknown role left out of the window"));
                return;
            }
        }
        out(Projected {
            value: m,
            source: i,
            stored: true,
            note: None,
        });
    }
}

/// Step 3, one projected message at a time: runtime context snapshots, keyed by user
/// ordinal.
struct Placer<'a> {
    rcs: &'a [&'a Value],
    ordinal: u64,
}

impl Placer<'_> {
    fn push(&mut self, mut p: Projected, out: &mut impl FnMut(Projected)) {
        let is_user = p.stored && role(&p.value) == "user";
        let ordinal = self.ordinal;
        let rc = if is_user {
            self.rcs
                .iter()
                .find(|r| safe_uint(r.get("userTurn")) == Some(ordinal))
        } else {
            None
        };
        if is_user {
            self.ordinal += 1;
        }
        let Some(rc) = rc else {
            return out(p);
        };
        let content = rc.get("content").and_then(Value::as_str).unwrap_or("");
        if rc.get("placement").and_then(Value::as_str) == Some("user") {
            match p.value.get_mut("content") {
                Some(Value::String(s)) => *s = format!("{content}\n\n{s}"),
                Some(Value::Array(a)) => a.insert(0, json!({"type": "text", "text": content})),
                _ => {}
            }
            p.note = Some("runtime context prepended");
            out(p);
        } else {
            let source = p.source;
            out(p);
            out(Projected {
                value: json!({"role": "user", "content": content,
                    "timestamp": rc.get("timestamp").cloned().unwrap_or(Value::Null)}),
                source,
                stored: false,
                note: Some("runtime context"),
            });
        }
    }
}

/// The context window the next model request would carry, its last `keep` messages held
/// (`usize::MAX`: all; the browser pages a long window). A v3 history is read twice, one
/// line at a time (`stream`): only the kept messages are held, and after a compaction only
/// those it keeps (issue 11).
pub(crate) fn window(loc: &Loc, keep: usize) -> Result<Window> {
    let mut out = LastMessages::new(keep);
    if loc.layout == Layout::V3
        && let Some(c) = stream::check(loc)?
    {
        let is_user = |i: usize| c.is_user.get(i).copied();
        let (hd, n) = (&c.head, c.is_user.len());
        build_window(loc, hd, &c.warnings, n, is_user, &mut out, |f| {
            stream::each_message(loc, &c, f)
        })?;
        return finish(out);
    }
    let h = read_full(loc)?;
    let is_user = |i: usize| h.messages.get(i).map(|m| role(m) == "user");
    let n = h.messages.len();
    build_window(loc, &h.head, &h.warnings, n, is_user, &mut out, |f| {
        h.messages
            .iter()
            .enumerate()
            .try_for_each(|(i, m)| f(i, m.clone()))
    })?;
    finish(out)
}

fn finish(out: LastMessages) -> Result<Window> {
    out.finish()
        .ok_or_else(|| crate::error::Error::Refused("the window has no head".into()))
}

type Each<'f> = &'f mut dyn FnMut(usize, Value) -> Result<()>;

/// The window of a history of `n` messages that `each` hands over in order.
fn build_window(
    loc: &Loc,
    head: &Head,
    history_warnings: &[String],
    n: usize,
    is_user: impl Fn(usize) -> Option<bool>,
    out: &mut LastMessages,
    each: impl FnOnce(Each<'_>) -> Result<()>,
) -> Result<()> {
    let (hd, check) = (&head.header, &head.check);
    let users = (0..n).filter(|&i| is_user(i) == Some(true)).count() as u64;
    let (mut normalize_w, mut later_w) = (Vec::new(), Vec::new());
    let rcs = validate::runtime_contexts(hd, check.runtime_ok, users, &mut later_w);
    let comps = validate::compactions(hd, check.compactions_ok, n as u64, is_user, &mut later_w);
    // The system prompt depends on the header and the message count only: it goes first.
    let mut warnings = history_warnings.to_vec();
    let cps = validate::checkpoints(hd, check.checkpoints_ok, n as u64, &mut later_w);
    let mut system_note = None;
    let mut pending = Vec::new();
    if let Some(text) = system_prompt(&cps) {
        pending.push(Message::inserted(Role::System, text));
        system_note = Some(
            "system prompt reconstructed from the session's checkpoints (Loop renders it live)"
                .to_string(),
        );
    }
    let mut first = 0;
    if let Some(c) = comps.last() {
        first = safe_uint(c.get("firstKeptMessageIndex")).unwrap_or(0) as usize;
        let summary = c.get("summary").and_then(Value::as_str).unwrap_or("");
        let value = json!({"role": "user", "content": format!(
            "The conversation history before this point was compacted into the following summary:\n\n<summary>\n{summary}\n</summary>"),
            "timestamp": c.get("timestamp").cloned().unwrap_or(Value::Null)});
        let mut m = to_message(None, &value);
        m.note = Some("compaction summary".into());
        pending.push(m);
    }
    for m in pending {
        out.message(m).map_err(sink_error)?;
    }
    let mut keep = |p: Projected| {
        // What precedes the last compaction is replaced by its summary.
        if p.source < first {
            return;
        }
        let mut m = to_message(p.stored.then_some(p.source), &p.value);
        if let Some(note) = p.note {
            m.note = Some(note.into());
        }
        // Keeping a message never fails.
        let _ = out.message(m);
    };
    let mut normalizer = Normalizer::default();
    let mut placer = Placer {
        rcs: &rcs,
        ordinal: 0,
    };
    each(&mut |i, m| {
        normalizer.push(i, m, &mut normalize_w, &mut |p| placer.push(p, &mut keep));
        Ok(())
    })?;
    warnings.append(&mut normalize_w);
    warnings.append(&mut later_w);
    out.head(WindowHead {
        window: Window {
            summary: summary_from_head(loc, head),
            messages: Vec::new(),
            system_note,
            warnings,
            omitted: 0,
            omitted_tokens: 0,
        },
        count: 0,
        tokens: 0,
    })
    .map_err(sink_error)
}
