//! The transcript (codex.md section 4): the `response_item` stream in file order turned into
//! messages. Reasoning summaries and tool calls join the assistant message they belong to,
//! outputs pair by `call_id`, injected context collapses into one line per turn, event
//! duplicates are ignored, compactions and rollbacks are dividers, a fork's copied prefix is
//! marked, and a `spawn_agent` call names the child thread it started.

use serde_json::Value;

use super::read::Rec;
use super::record::{self as r};
use crate::model::{Entry, Message, Role, ToolCall};
use crate::store::entries::{self, cut};

/// How much of one tool output is shown inline; the rest is counted.
pub const SHOW_BYTES: usize = 64 * 1024;

/// What converting needs besides the records.
#[derive(Default)]
pub struct Ctx {
    /// The record range copied from the parent, and the parent's ref.
    pub copied: Option<(usize, usize)>,
    pub parent: Option<String>,
    /// The record index the conversion starts at (for `copied`).
    pub offset: usize,
}

/// A tool output's text: a string, the text items of an array (images as placeholders), or
/// an old build's `{content, success}` object.
pub fn output_text(o: Option<&Value>) -> String {
    match o {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(|i| match r::s(i, "type") {
                Some("input_image") => {
                    let img = r::image_ref(r::s(i, "image_url").unwrap_or(""));
                    Some(format!("image ({} KB)", img.bytes.div_ceil(1024)))
                }
                _ => r::s(i, "text").map(str::to_string),
            })
            .collect::<Vec<_>>()
            .join("\n"),
        Some(Value::Object(o)) => o
            .get("content")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string(),
        _ => String::new(),
    }
}

struct Builder<'a> {
    out: Vec<Entry>,
    /// The assistant message being assembled (reasoning, calls, text).
    cur: Option<Message>,
    model: Option<String>,
    shown_model: Option<(Option<String>, Option<String>)>,
    effort: Option<String>,
    context_noted: bool,
    /// Prompts come from `user_message` events (what the user typed); user response items
    /// are shown only where there are none (legacy files, replacement history).
    event_prompts: bool,
    copied: bool,
    calls: std::collections::HashMap<String, String>,
    /// The subagent notices sent so far (`out` is drained as entries are complete).
    subagents: std::collections::HashSet<String>,
    cx: &'a Ctx,
}

impl Builder<'_> {
    fn flush(&mut self) {
        if let Some(m) = self.cur.take() {
            self.push(m);
        }
    }

    fn push(&mut self, mut m: Message) {
        if self.copied {
            m.note = Some(match &self.cx.parent {
                Some(p) => format!("copied from {p}"),
                None => "copied from the parent".into(),
            });
        }
        self.out.push(Entry::Message(Box::new(m)));
    }

    fn notice(&mut self, t: String) {
        self.flush();
        self.out.push(Entry::Notice(t));
    }

    fn assistant(&mut self, ts: Option<chrono::DateTime<chrono::Utc>>) -> &mut Message {
        if self.cur.is_none() {
            let mut m = Message::new(Role::Assistant, "");
            m.timestamp = ts;
            m.model = self.model.clone();
            self.cur = Some(m);
        }
        self.cur.as_mut().expect("just set")
    }

    fn turn(&mut self, pl: &Value) {
        self.context_noted = false;
        if let Some(m) = r::s(pl, "model").filter(|m| !m.is_empty()) {
            self.model = Some(m.to_string());
        }
        if let Some(e) = r::s(pl, "effort").filter(|e| !e.is_empty()) {
            self.effort = Some(e.to_string());
        }
        let now = (self.model.clone(), self.effort.clone());
        if self.model.is_some() && self.shown_model.as_ref() != Some(&now) {
            let effort = now.1.as_deref().map(|e| format!(", effort {e}"));
            let t = format!(
                "model {}{}",
                now.0.as_deref().unwrap_or(""),
                effort.unwrap_or_default()
            );
            self.shown_model = Some(now);
            self.notice(t);
        }
    }

    fn item(&mut self, pl: &Value, ts: Option<chrono::DateTime<chrono::Utc>>) {
        let call = |pl: &Value, name: &str, args: Value| ToolCall {
            id: r::s(pl, "call_id")
                .or_else(|| r::s(pl, "id"))
                .unwrap_or("")
                .to_string(),
            name: name.to_string(),
            arguments: args,
        };
        match r::s(pl, "type").unwrap_or("") {
            "message" => match r::s(pl, "role").unwrap_or("") {
                "assistant" => {
                    let text = r::assistant_text(pl).unwrap_or_default();
                    if self.cur.as_ref().is_some_and(|m| !m.text.is_empty()) {
                        self.flush();
                    }
                    self.assistant(ts).text = text;
                }
                _ if r::is_injected(pl) => {
                    if !self.context_noted {
                        self.context_noted = true;
                        self.notice("context (AGENTS.md, environment, permissions)".into());
                    }
                }
                "user" if self.event_prompts => {}
                role => {
                    self.flush();
                    let mut m = Message::new(Role::parse(role), r::user_item_text(pl));
                    m.timestamp = ts;
                    m.images = r::images(pl);
                    self.push(m);
                }
            },
            "reasoning" => {
                let sums: Vec<String> = pl
                    .get("summary")
                    .and_then(Value::as_array)
                    .map(|a| {
                        a.iter()
                            .filter_map(|b| r::s(b, "text"))
                            .map(str::to_string)
                            .collect()
                    })
                    .unwrap_or_default();
                let m = self.assistant(ts);
                if sums.is_empty() {
                    m.thinking.push("(encrypted reasoning)".into());
                } else {
                    m.thinking.extend(sums);
                }
            }
            "function_call" => {
                let name = r::s(pl, "name").unwrap_or("function").to_string();
                let args = match pl.get("arguments") {
                    Some(Value::String(s)) => crate::store::json_first::parse(s.as_bytes())
                        .unwrap_or_else(|| Value::String(s.clone())),
                    Some(other) => other.clone(),
                    None => Value::Null,
                };
                let c = call(pl, &name, args);
                self.calls.insert(c.id.clone(), name);
                self.assistant(ts).tool_calls.push(c);
            }
            "custom_tool_call" => {
                let name = r::s(pl, "name").unwrap_or("tool").to_string();
                let input = Value::String(r::s(pl, "input").unwrap_or("").to_string());
                let c = call(pl, &name, input);
                self.assistant(ts).tool_calls.push(c);
            }
            "local_shell_call" => {
                let action = pl.get("action").cloned().unwrap_or(Value::Null);
                let c = call(pl, "shell", action);
                self.assistant(ts).tool_calls.push(c);
            }
            "tool_search_call" | "web_search_call" => {
                let action = pl.get("action").cloned().unwrap_or(Value::Null);
                let name = r::s(pl, "type")
                    .unwrap_or("")
                    .trim_end_matches("_call")
                    .to_string();
                let c = call(pl, &name, action);
                self.assistant(ts).tool_calls.push(c);
            }
            "function_call_output" | "custom_tool_call_output" | "tool_search_output" => {
                self.flush();
                let id = r::s(pl, "call_id").unwrap_or("").to_string();
                let full = output_text(pl.get("output"));
                let mut m = Message::new(Role::Tool, cut(&full, SHOW_BYTES));
                m.timestamp = ts;
                m.tool_call_id = Some(id.clone());
                let spawned = self.calls.get(&id).is_some_and(|n| n == "spawn_agent");
                self.push(m);
                if spawned {
                    for child in r::uuids_in(&full) {
                        let t = format!("subagent codex:{child}");
                        self.subagents.insert(t.clone());
                        self.out.push(Entry::Notice(t));
                    }
                }
            }
            "image_generation_call" => {
                let kb = r::s(pl, "result")
                    .map_or(0, |b| b.len() / 4 * 3)
                    .div_ceil(1024);
                self.notice(format!("image generated ({kb} KB)"));
            }
            "compaction" | "context_compaction" => self.notice("context compacted (server)".into()),
            _ => {}
        }
    }

    fn event(&mut self, pl: &Value, ts: Option<chrono::DateTime<chrono::Utc>>) {
        match r::s(pl, "type").unwrap_or("") {
            "user_message" if self.event_prompts => {
                self.flush();
                let mut m = Message::new(Role::User, r::s(pl, "message").unwrap_or("").trim());
                m.timestamp = ts;
                m.images = pl
                    .get("images")
                    .and_then(Value::as_array)
                    .map(|a| {
                        a.iter()
                            .filter_map(Value::as_str)
                            .map(r::image_ref)
                            .collect()
                    })
                    .unwrap_or_default();
                self.push(m);
            }
            "task_started" | "turn_started" => self.context_noted = false,
            "turn_aborted" => {
                let why = r::s(pl, "reason").unwrap_or("interrupted");
                self.notice(format!("turn aborted ({why})"));
            }
            "thread_rolled_back" => {
                let n = pl.get("num_turns").and_then(Value::as_u64).unwrap_or(0);
                self.notice(format!(
                    "rolled back: the last {} left the model's context",
                    crate::text::plural(n, "turn", "turns")
                ));
            }
            "entered_review_mode" => self.notice("review started".into()),
            "exited_review_mode" => self.notice("review ended".into()),
            "sub_agent_activity" => {
                if let Some(t) = r::s(pl, "agent_thread_id").filter(|t| r::is_uuid(t)) {
                    let t = format!("subagent codex:{}", t.to_ascii_lowercase());
                    if self.subagents.insert(t.clone()) {
                        self.notice(t);
                    }
                }
            }
            _ => {}
        }
    }
}

/// Records turned into entries one at a time: each entry is handed out once it is complete
/// (an assistant message waits for the record that ends it), so a streamed view holds only
/// the message being assembled. Entries come out unnumbered and unpaired.
pub struct Conv<'a> {
    b: Builder<'a>,
    /// The next record's index in the file.
    i: usize,
}

impl<'a> Conv<'a> {
    /// `event_prompts`: the records converted hold a `user_message` event.
    pub fn new(cx: &'a Ctx, event_prompts: bool) -> Conv<'a> {
        Conv {
            b: Builder {
                out: Vec::new(),
                cur: None,
                model: None,
                shown_model: None,
                effort: None,
                context_noted: false,
                event_prompts,
                copied: false,
                calls: Default::default(),
                subagents: Default::default(),
                cx,
            },
            i: cx.offset,
        }
    }

    /// Convert the next record; the entries it completed go to `out`.
    pub fn feed(&mut self, v: &Value, out: &mut dyn FnMut(Entry)) {
        let b = &mut self.b;
        let i = self.i;
        self.i += 1;
        if let Some((start, end)) = b.cx.copied {
            if i == start {
                let from = b.cx.parent.as_deref().unwrap_or("the parent");
                b.notice(format!("copied from {from}: the history before the fork"));
                b.copied = true;
            }
            if i == end && b.copied {
                b.notice("end of the copied history".into());
                b.copied = false;
            }
        }
        let ts = r::timestamp(v);
        let pl = r::payload(v);
        match r::kind(v) {
            "turn_context" => {
                b.flush();
                b.turn(pl);
            }
            "response_item" => b.item(pl, ts),
            "event_msg" => b.event(pl, ts),
            "compacted" => {
                b.flush();
                b.out.push(Entry::Compaction {
                    summary: r::s(pl, "message").unwrap_or("").to_string(),
                    timestamp: ts,
                });
            }
            _ => {}
        }
        b.out.drain(..).for_each(out);
    }

    /// The message still being assembled, to `out`.
    pub fn finish(mut self, out: &mut dyn FnMut(Entry)) {
        self.b.flush();
        self.b.out.drain(..).for_each(out);
    }
}

/// Whether the records hold a `user_message` event (prompts then come from events).
pub fn is_event_prompt(v: &Value) -> bool {
    r::kind(v) == "event_msg" && r::ptype(v) == "user_message"
}

/// A web search has no output item.
pub fn expects_result(name: &str) -> bool {
    name != "web_search"
}

/// The entries of `recs`, message positions counted from `first_index`.
pub fn entries(recs: &[Rec], cx: &Ctx, first_index: usize) -> Vec<Entry> {
    let mut conv = Conv::new(cx, recs.iter().any(|rec| is_event_prompt(&rec.v)));
    let mut out = Vec::new();
    for rec in recs {
        conv.feed(&rec.v, &mut |e| out.push(e));
    }
    conv.finish(&mut |e| out.push(e));
    entries::number(&mut out, first_index);
    entries::pair(&mut out, expects_result);
    out
}

/// Messages replayed from `replacement_history` (the window after a compaction).
pub fn replacement(items: &[Value]) -> Vec<Message> {
    let recs: Vec<Rec> = items
        .iter()
        .map(|i| Rec {
            v: serde_json::json!({"type": "response_item", "payload": i}),
        })
        .collect();
    entries(&recs, &Ctx::default(), 0)
        .into_iter()
        .filter_map(|e| match e {
            Entry::Message(mut m) => {
                m.is_virtual = true;
                m.index = None;
                Some(*m)
            }
            _ => None,
        })
        .collect()
}
