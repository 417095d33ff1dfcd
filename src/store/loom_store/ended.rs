//! How a loom session ended (docs/stores.md): folded from the last records during the one
//! listing pass, so no extra read.

use super::scan::LMsg;
use crate::model::Ended;
use crate::model::ended::{asks_user, reports_error};

/// What the end of the log looks like, updated record by record.
#[derive(Clone, Debug, Default)]
pub struct Tail {
    /// Role of the last message record.
    pub last_role: Option<String>,
    /// The last message asks the user something (assistant) or reports an error (tool);
    /// judged as each message passes, so no text is kept.
    pub last_flag: bool,
    /// Tool calls of the last assistant message not yet followed by a `tool` message.
    pub unanswered: usize,
    /// The last non-blank line did not decode (torn, or over 16 MiB).
    pub last_line_bad: bool,
}

impl Tail {
    pub fn message(&mut self, m: &LMsg) {
        self.last_line_bad = false;
        match m.role.as_str() {
            "assistant" => self.unanswered = m.tool_calls.len(),
            "tool" => self.unanswered = self.unanswered.saturating_sub(1),
            _ => self.unanswered = 0,
        }
        self.last_flag = match m.role.as_str() {
            "assistant" => asks_user(&m.content),
            "tool" => reports_error(&m.content),
            _ => false,
        };
        if self.last_role.as_deref() != Some(m.role.as_str()) {
            self.last_role = Some(m.role.clone());
        }
    }

    /// A record that is not a message (meta, system, compact): the turn is not cut by it.
    pub fn other_record(&mut self) {
        self.last_line_bad = false;
    }

    pub fn bad_line(&mut self) {
        self.last_line_bad = true;
    }

    /// The ending, given whether the file ends without a newline and whether it is open in
    /// another process right now (probed only for recently written logs).
    pub fn ended(&self, torn: bool, held: impl FnOnce() -> bool) -> Option<Ended> {
        let role = self.last_role.as_deref()?;
        if held() {
            return Some(Ended::Running);
        }
        if torn || self.last_line_bad || self.unanswered > 0 {
            return Some(Ended::Interrupted);
        }
        Some(match role {
            "assistant" if self.last_flag => Ended::Waiting,
            "assistant" => Ended::Done,
            "tool" if self.last_flag => Ended::Errored,
            // A tool result or a user message (a reopen notice included) never answered.
            _ => Ended::Interrupted,
        })
    }
}
