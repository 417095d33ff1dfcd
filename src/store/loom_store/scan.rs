//! Byte-level reading of a loom log: a streaming line splitter that never holds more than
//! 16 MiB of one line (loom's `maxLogLine`), and the record decoder of section 6.1 (exact
//! lower-case keys, Go's typing rules, lossy UTF-8).

use std::io::{self, BufRead, BufReader, Read};

use serde_json::{Map, Value};

/// loom's `maxLogLine`: a longer line makes loom's scanner fail ("token too long").
pub const MAX_LINE: usize = 16 * 1024 * 1024;

/// One physical line of the log, as the splitter hands it out.
pub enum RawLine<'a> {
    /// A line of at most `MAX_LINE` bytes (without its `\n`).
    Line {
        start: u64,
        bytes: &'a [u8],
        /// False for a final line that has no `\n` (still a line, section 6.1).
        terminated: bool,
    },
    /// A line longer than `MAX_LINE`; its bytes were skipped up to the next `\n`.
    TooLong {
        start: u64,
        len: u64,
        terminated: bool,
    },
}

impl RawLine<'_> {
    pub fn start(&self) -> u64 {
        match self {
            RawLine::Line { start, .. } | RawLine::TooLong { start, .. } => *start,
        }
    }

    /// Offset just past this line (after its `\n` when it has one).
    pub fn end(&self) -> u64 {
        match self {
            RawLine::Line {
                start,
                bytes,
                terminated,
            } => start + bytes.len() as u64 + u64::from(*terminated),
            RawLine::TooLong {
                start,
                len,
                terminated,
            } => start + len + u64::from(*terminated),
        }
    }

    pub fn terminated(&self) -> bool {
        match self {
            RawLine::Line { terminated, .. } | RawLine::TooLong { terminated, .. } => *terminated,
        }
    }
}

/// Split `r` on `\n` and hand every line to `f`, streaming: a line over `MAX_LINE` is never
/// buffered beyond the limit, the splitter resynchronises at the next `\n` instead.
pub fn for_each_line<R: Read>(r: R, mut f: impl FnMut(RawLine<'_>)) -> io::Result<()> {
    let mut reader = BufReader::with_capacity(64 * 1024, r);
    let mut line: Vec<u8> = Vec::new();
    let mut start: u64 = 0;
    // Some(len) while skipping the rest of an over-long line.
    let mut skipping: Option<u64> = None;
    loop {
        let buf = match reader.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if buf.is_empty() {
            break;
        }
        let (chunk, found) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (&buf[..i], true),
            None => (buf, false),
        };
        let used = chunk.len() + usize::from(found);
        match skipping.as_mut() {
            Some(len) => *len += chunk.len() as u64,
            None if line.len() + chunk.len() > MAX_LINE => {
                skipping = Some((line.len() + chunk.len()) as u64);
                line = Vec::new();
            }
            None => line.extend_from_slice(chunk),
        }
        reader.consume(used);
        if found {
            let item = emit(start, &line, skipping, true);
            start = item.end();
            f(item);
            line.clear();
            skipping = None;
        }
    }
    if !line.is_empty() || skipping.is_some() {
        f(emit(start, &line, skipping, false));
    }
    Ok(())
}

fn emit(start: u64, line: &[u8], skipping: Option<u64>, terminated: bool) -> RawLine<'_> {
    match skipping {
        Some(len) => RawLine::TooLong {
            start,
            len,
            terminated,
        },
        None => RawLine::Line {
            start,
            bytes: line,
            terminated,
        },
    }
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
