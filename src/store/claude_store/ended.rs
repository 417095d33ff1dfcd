//! How a Claude Code session ended (docs/stores.md): folded from the main-chain records the
//! listing pass already parses (a large file's tail is always parsed), so no extra read.

use std::collections::HashSet;

use serde_json::Value;

use super::record::{self as r, UserKind};
use crate::model::Ended;
use crate::model::ended::asks_user;

/// Tools whose call is Claude asking the user for a decision or an approval.
const ASKING_TOOLS: [&str; 2] = ["AskUserQuestion", "ExitPlanMode"];

/// What the main chain's last turn looks like so far.
#[derive(Debug, Default)]
pub struct Tail {
    last: Last,
    /// The last text block of the last assistant message asks the user something (only the
    /// end of a message decides, so no text is kept).
    asks: bool,
    message_id: Option<String>,
    /// `tool_use` ids of the last assistant message without a result yet, with their names.
    open_calls: Vec<(String, String)>,
}

#[derive(Debug, Default, PartialEq)]
enum Last {
    #[default]
    Nothing,
    Assistant {
        api_error: bool,
        stop: Option<String>,
    },
    ToolResult {
        error: bool,
    },
    /// A prompt or an interruption marker: the agent never answered it.
    User,
}

impl Tail {
    /// Fold one main-chain `user` or `assistant` record.
    pub fn record(&mut self, v: &Value) {
        match r::kind(v) {
            "assistant" => self.assistant(v),
            "user" => self.user(v),
            _ => {}
        }
    }

    fn assistant(&mut self, v: &Value) {
        let id = r::message_id(v).map(str::to_string);
        let same =
            id.is_some() && id == self.message_id && matches!(self.last, Last::Assistant { .. });
        if !same {
            self.asks = false;
            self.open_calls.clear();
            self.message_id = id;
        }
        for b in r::blocks(v) {
            match b.get("type").and_then(Value::as_str) {
                Some("text") => {
                    if let Some(t) = r::s(b, "text").filter(|t| !t.trim().is_empty()) {
                        self.asks = asks_user(t);
                    }
                }
                Some("tool_use") => self.open_calls.push((
                    r::s(b, "id").unwrap_or_default().to_string(),
                    r::s(b, "name").unwrap_or_default().to_string(),
                )),
                _ => {}
            }
        }
        let stop = r::stop_reason(v).map(str::to_string);
        let api_error = r::is_api_error(v);
        self.last = match &self.last {
            // Several lines of one message: the last non-null stop reason wins.
            Last::Assistant { stop: Some(s), .. } if same && stop.is_none() && !api_error => {
                Last::Assistant {
                    api_error,
                    stop: Some(s.clone()),
                }
            }
            _ => Last::Assistant { api_error, stop },
        };
    }

    fn user(&mut self, v: &Value) {
        match r::classify_user(v) {
            UserKind::ToolResult => {
                let mut answered = HashSet::new();
                let mut error = false;
                for b in r::blocks(v) {
                    if let Some(id) = r::s(b, "tool_use_id") {
                        answered.insert(id.to_string());
                        error = r::is_true(b, "is_error");
                    }
                }
                self.open_calls.retain(|(id, _)| !answered.contains(id));
                self.last = Last::ToolResult { error };
            }
            UserKind::Prompt(_) | UserKind::Slash(_) | UserKind::Interrupted => {
                self.open_calls.clear();
                self.last = Last::User;
            }
            _ => {}
        }
    }

    /// The ending; `live` is "written in the last two minutes without an end of turn",
    /// `truncated` a torn last line that has settled.
    pub fn ended(&self, live: bool, truncated: bool) -> Option<Ended> {
        if self.last == Last::Nothing {
            return None;
        }
        if live {
            return Some(Ended::Running);
        }
        if truncated {
            return Some(Ended::Interrupted);
        }
        Some(match &self.last {
            Last::Assistant {
                api_error: true, ..
            } => Ended::Errored,
            Last::Assistant { .. }
                if self
                    .open_calls
                    .iter()
                    .any(|(_, n)| ASKING_TOOLS.contains(&n.as_str())) =>
            {
                Ended::Waiting
            }
            Last::Assistant { stop, .. } => {
                if !self.open_calls.is_empty() || stop.as_deref() == Some("max_tokens") {
                    Ended::Interrupted
                } else {
                    // Claude often records no stop reason at all; a text block with no call
                    // after it is a finished turn.
                    if self.asks {
                        Ended::Waiting
                    } else {
                        Ended::Done
                    }
                }
            }
            Last::ToolResult { error: true } => Ended::Errored,
            Last::ToolResult { error: false } | Last::User | Last::Nothing => Ended::Interrupted,
        })
    }
}
