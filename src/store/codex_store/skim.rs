//! Listing without parsing every record (codex.md 6.2): Codex writes `timestamp`, `type` and
//! the payload's `type` (and a message's `role`) first on every line, so a line's kind is read
//! from its opening bytes and only the records the listing row needs are parsed whole. The
//! others (tool outputs, reasoning, injected context, event duplicates: most of the bytes)
//! become stubs that carry their time and kind, which keep the order, the counts and
//! `updated` right without building their JSON.

use serde_json::{Map, Value};

use super::record as r;

/// The opening fields of a record line.
#[derive(Debug, PartialEq, Eq)]
pub struct Head<'a> {
    pub ts: &'a str,
    pub kind: &'a str,
    pub ptype: &'a str,
    pub role: &'a str,
}

/// A JSON string value at the start of `b` after `prefix`, up to its closing quote; `None`
/// when it holds an escape (never in the fields read here) or does not close.
fn string_after<'a>(b: &'a [u8], prefix: &[u8]) -> Option<(&'a str, &'a [u8])> {
    let rest = b.strip_prefix(prefix)?;
    let end = memchr::memchr2(b'"', b'\\', rest)?;
    (rest[end] == b'"').then_some(())?;
    Some((std::str::from_utf8(&rest[..end]).ok()?, &rest[end + 1..]))
}

/// The head of `{"timestamp":"…","type":"…","payload":{"type":"…","role":"…"`; `None` when
/// the line is shaped otherwise (it is then parsed whole).
pub fn head(line: &[u8]) -> Option<Head<'_>> {
    let (ts, rest) = string_after(line, b"{\"timestamp\":\"")?;
    let (kind, rest) = string_after(rest, b",\"type\":\"")?;
    let rest = rest.strip_prefix(b",\"payload\":{")?;
    let (ptype, rest) = string_after(rest, b"\"type\":\"").unwrap_or(("", rest));
    let role = if ptype == "message" {
        let near = &rest[..rest.len().min(256)];
        memchr::memmem::find(near, b"\"role\":\"")
            .and_then(|i| string_after(&near[i..], b"\"role\":\""))
            .map_or("", |(role, _)| role)
    } else {
        ""
    };
    Some(Head {
        ts,
        kind,
        ptype,
        role,
    })
}

/// What the listing has seen so far that decides which later records it still needs.
#[derive(Debug, Default)]
pub struct Need {
    /// The preview (the first preview-bearing event) is known: later prompts are only counted.
    pub preview_seen: bool,
    /// `call_id`s of `spawn_agent` calls, quoted: their outputs name child threads.
    pub spawn_calls: Vec<Vec<u8>>,
    /// The last `token_count` line stubbed and its place among the records: the row's token
    /// total is the last one, so only that line is parsed, once the file is read.
    pub last_tokens: Option<(usize, Vec<u8>)>,
}

impl Need {
    /// Whether the listing needs this record parsed whole (`line` is the whole line).
    pub fn whole(&self, h: &Head<'_>, line: &[u8]) -> bool {
        let has = |needle: &[u8]| memchr::memmem::find(line, needle).is_some();
        match h.kind {
            "event_msg" => match h.ptype {
                "user_message" => !self.preview_seen,
                // Only the last one counts: it is kept aside (`last_tokens`) and parsed at the end.
                "token_count" => false,
                // Duplicates of response items and tool-card enrichments: never listed.
                "agent_message"
                | "agent_reasoning"
                | "agent_reasoning_raw_content"
                | "exec_command_end"
                | "patch_apply_end"
                | "mcp_tool_call_end"
                | "web_search_end"
                | "image_generation_end"
                | "item_completed" => false,
                // Turn state, tokens, goals, subagent links and anything unknown.
                _ => true,
            },
            "response_item" => match h.ptype {
                // Counted only with a non-empty `output_text`, which takes the text to judge.
                "message" => h.role == "assistant",
                "function_call" => has(b"\"spawn_agent\""),
                "function_call_output" => self.spawn_calls.iter().any(|c| has(c)),
                _ => false,
            },
            // session_meta, turn_context, compacted and unknown kinds.
            _ => true,
        }
    }

    /// Learn from a record parsed whole what later records are needed.
    pub fn saw(&mut self, v: &Value) {
        let pl = r::payload(v);
        match (r::kind(v), r::s(pl, "type").unwrap_or("")) {
            ("event_msg", "user_message") if !self.preview_seen => {
                self.preview_seen = r::user_message_preview(pl).is_some();
            }
            ("event_msg", "thread_goal_updated") if !self.preview_seen => {
                self.preview_seen = r::goal_preview(pl).is_some();
            }
            ("response_item", "function_call") if r::s(pl, "name") == Some("spawn_agent") => {
                if let Some(c) = r::s(pl, "call_id") {
                    self.spawn_calls.push(format!("\"{c}\"").into_bytes());
                }
            }
            _ => {}
        }
    }
}

const RECORD_START: &[u8] = b"{\"timestamp\":\"";

/// Whether a line may be stubbed unparsed: a whole record by its shape (it closes, no second
/// record starts inside it, valid UTF-8). A line that fails is parsed whole, so bad lines,
/// salvage and invalid UTF-8 are still counted as the full read counts them.
pub fn plausible(line: &[u8]) -> bool {
    // Built once: a finder per line showed in the listing's profile.
    static START: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
        std::sync::LazyLock::new(|| memchr::memmem::Finder::new(RECORD_START));
    line.trim_ascii_end().ends_with(b"}")
        && START.find(&line[1..]).is_none()
        && std::str::from_utf8(line).is_ok()
}

/// The stand-in for a record the listing does not parse: its time, kind, payload type and
/// role.
pub fn stub(h: &Head<'_>) -> Value {
    let mut pl = Map::new();
    if !h.ptype.is_empty() {
        pl.insert("type".into(), h.ptype.into());
    }
    if !h.role.is_empty() {
        pl.insert("role".into(), h.role.into());
    }
    let mut v = Map::new();
    v.insert("timestamp".into(), h.ts.into());
    v.insert("type".into(), h.kind.into());
    v.insert("payload".into(), Value::Object(pl));
    Value::Object(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn head_reads_the_opening_fields() {
        let line = br#"{"timestamp":"2026-03-14T09:15:02.120Z","type":"response_item","payload":{"type":"message","role":"developer","content":[]}}"#;
        assert_eq!(
            head(line),
            Some(Head {
                ts: "2026-03-14T09:15:02.120Z",
                kind: "response_item",
                ptype: "message",
                role: "developer",
            })
        );
        let meta = br#"{"timestamp":"t","type":"session_meta","payload":{"id":"x"}}"#;
        assert_eq!(
            head(meta).map(|h| (h.kind, h.ptype)),
            Some(("session_meta", ""))
        );
        assert_eq!(head(br#"{"type":"message"}"#), None);
        assert_eq!(
            head(br#"{"timestamp":"a\"b","type":"x","payload":{}}"#),
            None
        );
    }

    #[test]
    fn only_needed_records_are_whole() {
        let mut need = Need::default();
        let h = |kind, ptype, role| Head {
            ts: "t",
            kind,
            ptype,
            role,
        };
        assert!(need.whole(&h("event_msg", "user_message", ""), b""));
        assert!(!need.whole(&h("event_msg", "agent_message", ""), b""));
        assert!(need.whole(&h("event_msg", "task_complete", ""), b""));
        assert!(!need.whole(&h("event_msg", "token_count", ""), b""));
        assert!(need.whole(&h("response_item", "message", "assistant"), b""));
        assert!(!need.whole(&h("response_item", "message", "developer"), b""));
        assert!(!need.whole(&h("response_item", "function_call_output", ""), b"\"c1\""));
        assert!(need.whole(&h("session_meta", "", ""), b""));
        need.saw(&serde_json::json!({"type":"event_msg","payload":{"type":"user_message","message":"hi"}}));
        assert!(!need.whole(&h("event_msg", "user_message", ""), b""));
        need.saw(&serde_json::json!({"type":"response_item","payload":{"type":"function_call","name":"spawn_agent","call_id":"c1"}}));
        assert!(need.whole(
            &h("response_item", "function_call_output", ""),
            b"{\"call_id\":\"c1\"}"
        ));
    }

    #[test]
    fn torn_or_overlapping_lines_are_not_stubbed() {
        assert!(plausible(br#"{"timestamp":"t","type":"x","payload":{}}"#));
        assert!(!plausible(br#"{"timestamp":"t","type":"x","payload":{"#));
        assert!(!plausible(
            br#"{"timestamp":"t","type":"x","pay{"timestamp":"u","type":"x","payload":{}}"#
        ));
        assert!(!plausible(b"{\"timestamp\":\"t\",\"x\":\"\xff\"}"));
    }
}
