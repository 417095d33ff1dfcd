//! Byte-level reading of a loom log: a streaming line splitter that never holds more than
//! 16 MiB of one line (loom's `maxLogLine`), and the record decoder of section 6.1 (exact
//! lower-case keys, Go's typing rules, lossy UTF-8).

use std::io::{self, Read};

use serde_json::{Map, Value};

/// loom's `maxLogLine`: a longer line makes loom's scanner fail ("token too long").
pub const MAX_LINE: usize = 16 * 1024 * 1024;

pub use crate::store::lines::RawLine;

/// Split `r` on `\n` with loom's line limit (the shared splitter of `store::lines`).
pub fn for_each_line<R: Read>(r: R, f: impl FnMut(RawLine<'_>)) -> io::Result<()> {
    crate::store::lines::for_each_line(r, MAX_LINE, f)
}

/// A loom `Message` (Ollama `/api/chat` shape). Absent and empty strings are both `""`, as
/// in Go; writers omit the empty optional ones again.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LMsg {
    pub role: String,
    pub content: String,
    pub thinking: String,
    pub tool_calls: Vec<LCall>,
    pub tool_name: String,
}

/// One `tool_calls` item: `{"function":{"name":..,"arguments":..}}`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LCall {
    pub name: String,
    /// A JSON object, or `Null` when the model sent none.
    pub arguments: Value,
}

impl LMsg {
    pub fn new(role: &str, content: impl Into<String>) -> LMsg {
        LMsg {
            role: role.to_string(),
            content: content.into(),
            ..LMsg::default()
        }
    }
}

/// One decoded record. `kind` may be anything (unknown kinds are parseable and ignored).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Record {
    pub kind: String,
    pub time: String,
    pub model: String,
    pub cwd: String,
    pub forked_from: String,
    /// `None` for a missing or null `message` (ignored, not counted).
    pub message: Option<LMsg>,
    pub summary: String,
}

impl Record {
    /// The non-null message of a `message` record: what replay and the count use.
    pub fn chat_message(&self) -> Option<&LMsg> {
        if self.kind == "message" {
            self.message.as_ref()
        } else {
            None
        }
    }
}

/// What one line decodes to.
pub enum Parsed {
    /// Empty after trimming whitespace: skipped, not bad.
    Blank,
    /// Not a record (invalid JSON, truncated, wrong type): counted as bad.
    Bad,
    Record(Box<Record>),
}

/// Decode one line. The flag is true when the bytes were not valid UTF-8 and were decoded
/// lossily (Go would have replaced them with U+FFFD too).
pub fn parse_line(bytes: &[u8]) -> (Parsed, bool) {
    let (text, lossy) = match std::str::from_utf8(bytes) {
        Ok(s) => (std::borrow::Cow::Borrowed(s), false),
        Err(_) => (String::from_utf8_lossy(bytes), true),
    };
    if text.trim().is_empty() {
        return (Parsed::Blank, lossy);
    }
    let parsed = match serde_json::from_str::<Value>(&text) {
        Ok(v) => match record_from(&v) {
            Some(r) => Parsed::Record(Box::new(r)),
            None => Parsed::Bad,
        },
        Err(_) => Parsed::Bad,
    };
    (parsed, lossy)
}

/// Go's `json.Unmarshal` into `record`, with exact lower-case keys (DECIDED): a top-level
/// `null` is a zero record, any other non-object or a mistyped known field fails the line.
fn record_from(v: &Value) -> Option<Record> {
    let o = match v {
        Value::Null => return Some(Record::default()),
        Value::Object(o) => o,
        _ => return None,
    };
    Some(Record {
        kind: string(o, "kind")?,
        time: string(o, "time")?,
        model: string(o, "model")?,
        cwd: string(o, "cwd")?,
        forked_from: string(o, "forked_from")?,
        message: match o.get("message") {
            None | Some(Value::Null) => None,
            Some(Value::Object(m)) => Some(message_from(m)?),
            Some(_) => return None,
        },
        summary: string(o, "summary")?,
    })
}

fn message_from(m: &Map<String, Value>) -> Option<LMsg> {
    let tool_calls = match m.get("tool_calls") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) => items.iter().map(call_from).collect::<Option<_>>()?,
        Some(_) => return None,
    };
    Some(LMsg {
        role: string(m, "role")?,
        content: string(m, "content")?,
        thinking: string(m, "thinking")?,
        tool_calls,
        tool_name: string(m, "tool_name")?,
    })
}

fn call_from(v: &Value) -> Option<LCall> {
    let call = match v {
        Value::Null => return Some(LCall::default()),
        Value::Object(o) => o,
        _ => return None,
    };
    let f = match call.get("function") {
        None | Some(Value::Null) => return Some(LCall::default()),
        Some(Value::Object(f)) => f,
        Some(_) => return None,
    };
    let arguments = match f.get("arguments") {
        None | Some(Value::Null) => Value::Null,
        Some(a @ Value::Object(_)) => a.clone(),
        // Go's map[string]any cannot hold a non-object: the whole line fails (6.2).
        Some(_) => return None,
    };
    Some(LCall {
        name: string(f, "name")?,
        arguments,
    })
}

/// A Go `string` field: absent or null is `""`, a non-string fails the decode.
fn string(o: &Map<String, Value>, key: &str) -> Option<String> {
    match o.get(key) {
        None | Some(Value::Null) => Some(String::new()),
        Some(Value::String(s)) => Some(s.clone()),
        Some(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(bytes: &[u8]) -> Vec<(u64, Vec<u8>, bool)> {
        let mut out = Vec::new();
        for_each_line(bytes, |l| match l {
            RawLine::Line {
                start,
                bytes,
                terminated,
            } => out.push((start, bytes.to_vec(), terminated)),
            RawLine::TooLong { .. } => panic!("unexpected long line"),
        })
        .unwrap();
        out
    }

    #[test]
    fn final_line_without_newline_is_a_line() {
        let l = lines(b"a\n\nbc");
        assert_eq!(
            l,
            vec![
                (0, b"a".to_vec(), true),
                (2, b"".to_vec(), true),
                (3, b"bc".to_vec(), false)
            ]
        );
    }

    #[test]
    fn go_typing_rules() {
        let bad = |s: &str| matches!(parse_line(s.as_bytes()).0, Parsed::Bad);
        assert!(bad(r#"{"kind":5}"#));
        assert!(bad(r#"{"kind":"message","message":"x"}"#));
        assert!(bad(
            r#"{"kind":"message","message":{"role":"assistant","content":"","tool_calls":[{"function":{"name":"x","arguments":[1]}}]}}"#
        ));
        assert!(bad("[1]"));
        assert!(bad(r#"{"kind":"meta"} x"#));
        assert!(bad(r#"{"kind":"message","#));
        assert!(matches!(parse_line(b"  \t ").0, Parsed::Blank));
        // Exact lower-case keys: "Kind" is an unknown key, the record is an unknown kind.
        match parse_line(br#"{"Kind":"meta","kind":"weird"}"#).0 {
            Parsed::Record(r) => assert_eq!(r.kind, "weird"),
            _ => panic!("should parse"),
        }
        match parse_line(br#"{"kind":"message","message":{"role":"assistant","content":"","tool_calls":[{"function":{"name":"x","arguments":null}}]}}"#).0 {
            Parsed::Record(r) => {
                let m = r.chat_message().unwrap();
                assert_eq!(m.tool_calls[0].arguments, Value::Null);
            }
            _ => panic!("should parse"),
        }
        match parse_line(br#"{"kind":"message","message":null}"#).0 {
            Parsed::Record(r) => assert!(r.chat_message().is_none()),
            _ => panic!("should parse"),
        }
    }

    #[test]
    fn invalid_utf8_is_decoded_lossily() {
        let (p, lossy) = parse_line(
            b"{\"kind\":\"message\",\"message\":{\"role\":\"user\",\"content\":\"a\xffb\"}}",
        );
        assert!(lossy);
        match p {
            Parsed::Record(r) => assert_eq!(r.chat_message().unwrap().content, "a\u{fffd}b"),
            _ => panic!("should parse"),
        }
    }
}
