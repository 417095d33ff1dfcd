//! How a session ended: the five endings every store derives from the tail of its log while
//! listing (docs/stores.md has each store's rule), and the question test they share.

use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// How a session's log ends, in the order the inbox groups them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Ended {
    /// The agent finished its turn by asking the user something.
    Waiting,
    /// The last assistant turn is a model/API error, or the last tool result is an error the
    /// agent never answered.
    Errored,
    /// The log stops inside a turn: an unanswered tool call, a partial message, a torn line.
    Interrupted,
    /// Another process holds the session right now.
    Running,
    /// The agent finished its turn without asking anything.
    Done,
}

/// A log written this recently without an end of turn counts as still being written.
pub const LIVE_WINDOW: Duration = Duration::from_secs(120);

impl Ended {
    pub const ALL: [Ended; 5] = [
        Ended::Waiting,
        Ended::Errored,
        Ended::Interrupted,
        Ended::Running,
        Ended::Done,
    ];

    /// The endings the inbox shows, in its heading order.
    pub const INBOX: [Ended; 3] = [Ended::Waiting, Ended::Errored, Ended::Interrupted];

    /// The word of `list --json`, `--ended` and the detail line.
    pub fn as_str(self) -> &'static str {
        match self {
            Ended::Waiting => "waiting",
            Ended::Errored => "errored",
            Ended::Interrupted => "interrupted",
            Ended::Running => "running",
            Ended::Done => "done",
        }
    }

    pub fn parse(s: &str) -> Option<Ended> {
        Ended::ALL.into_iter().find(|e| e.as_str() == s.trim())
    }

    /// One narrow glyph for the row (single column in every terminal font).
    pub fn glyph(self) -> &'static str {
        match self {
            Ended::Waiting => "?",
            Ended::Errored => "!",
            Ended::Interrupted => "~",
            Ended::Running => ">",
            Ended::Done => "✓",
        }
    }

    pub fn in_inbox(self) -> bool {
        Ended::INBOX.contains(&self)
    }

    /// The ending of a finished assistant turn whose text is `last_text`.
    pub fn after_reply(last_text: &str) -> Ended {
        if asks_user(last_text) {
            Ended::Waiting
        } else {
            Ended::Done
        }
    }
}

impl fmt::Display for Ended {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Parse a comma-separated `--ended` list (`waiting,errored`); the unknown word is the error.
pub fn parse_list(s: &str) -> Result<Vec<Ended>, String> {
    s.split(',')
        .filter(|w| !w.trim().is_empty())
        .map(|w| {
            Ended::parse(w).ok_or_else(|| {
                format!(
                    "unknown ending {:?} (one of waiting, errored, interrupted, running, done)",
                    w.trim()
                )
            })
        })
        .collect()
}

/// Openings of a last line that hand the decision to the user without a question mark.
const ASKING: [&str; 6] = [
    "let me know",
    "please confirm",
    "please approve",
    "please choose",
    "please review",
    "tell me which",
];

/// Whether the agent's last message asks the user something: its last non-blank line ends
/// with a question mark (after closing markdown, quotes and brackets, or before a trailing
/// parenthetical aside), or opens with one of
/// a few fixed requests for a decision.
pub fn asks_user(text: &str) -> bool {
    let Some(last) = text.lines().map(str::trim).rfind(|l| !l.is_empty()) else {
        return false;
    };
    let closing = ['*', '_', '`', '"', '\'', ')', ']', '»', '”', ' '];
    // A trailing aside (`… want? (main or dev)`) does not hide the question before it.
    let unaside = match (last.ends_with(')'), last.rfind('(')) {
        (true, Some(i)) if i > 0 => last[..i].trim_end(),
        _ => last,
    };
    for l in [last, unaside] {
        let end = l.trim_end_matches(closing);
        if end.ends_with('?') || end.ends_with('？') {
            return true;
        }
    }
    let lower = last.trim_start_matches(['*', '_', '-', ' ']).to_lowercase();
    ASKING.iter().any(|p| lower.starts_with(p))
}

/// Whether a tool result's text reports a failure, for formats without an error flag (loom,
/// agent-harness): it opens with `error`, `permission denied` or `unknown tool`.
pub fn reports_error(text: &str) -> bool {
    let t = text.trim_start().to_ascii_lowercase();
    ["error", "permission denied", "unknown tool"]
        .iter()
        .any(|p| t.starts_with(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn questions_and_requests_wait_statements_are_done() {
        assert!(asks_user("Tests pass.\n\nShould I also update the docs?"));
        assert!(asks_user("Which branch do you want? (main or dev)\n"));
        assert!(asks_user("**Shall I push?**"));
        assert!(asks_user(
            "Done with the draft.\nLet me know which option you prefer."
        ));
        assert!(!asks_user(
            "Fixed: router.go no longer strips the slash. Tests pass."
        ));
        assert!(!asks_user("Is it? No. It was the cache.\nAll good now."));
        assert!(!asks_user(""));
        assert_eq!(Ended::after_reply("Ready to merge?"), Ended::Waiting);
        assert_eq!(Ended::after_reply("Merged."), Ended::Done);
    }

    #[test]
    fn words_round_trip_and_lists_parse() {
        for e in Ended::ALL {
            assert_eq!(Ended::parse(e.as_str()), Some(e));
            assert_eq!(
                serde_json::to_value(e).unwrap(),
                serde_json::Value::from(e.as_str())
            );
        }
        assert_eq!(
            parse_list("waiting, errored").unwrap(),
            [Ended::Waiting, Ended::Errored]
        );
        assert!(parse_list("waiting,bogus").unwrap_err().contains("bogus"));
    }
}
