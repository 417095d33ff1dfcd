//! JSON the way the harness's Python reads and writes it: lenient parsing (NaN/Infinity
//! literals, duplicate keys last-wins, BOM rejected like `json.loads`) and a byte-exact
//! `json.dump(indent=2, ensure_ascii=False)` serialiser over a lossless value.

use serde_json::{Map, Value};

/// A parsed record object and whether the file held non-finite number literals.
#[derive(Clone, Debug)]
pub struct Parsed {
    pub map: Map<String, Value>,
    /// `NaN`/`Infinity`/`-Infinity` were read as `null`; such a record must never be rewritten
    /// (we could not reproduce those values).
    pub non_finite: bool,
    /// The history reduced for the row when the record was parsed for its row only
    /// (`lean::parse_row`): `messages` and `transcript` are then empty arrays in `map`.
    pub hist: Option<super::lean::Hist>,
}

/// Parse a record file. Errors are the reason text for an "unreadable record" row.
pub fn parse_record(bytes: &[u8]) -> Result<Parsed, String> {
    if bytes.starts_with(b"\xEF\xBB\xBF") {
        // Python's json.loads raises "Unexpected UTF-8 BOM"; the harness cannot load it either.
        return Err("starts with a UTF-8 BOM".into());
    }
    let (cleaned, non_finite) = replace_non_finite(bytes);
    let value: Value = serde_json::from_slice(cleaned.as_deref().unwrap_or(bytes))
        .map_err(|e| format!("invalid JSON ({e})"))?;
    match value {
        Value::Object(map) => Ok(Parsed {
            map,
            non_finite,
            hist: None,
        }),
        _ => Err("not a JSON object".into()),
    }
}

/// Replace `NaN`, `Infinity` and `-Infinity` outside strings with `null`. Outside strings the
/// only other bare words are `true`/`false`/`null`, so a plain scan is unambiguous. Returns a
/// new buffer only when something was replaced.
fn replace_non_finite(bytes: &[u8]) -> (Option<Vec<u8>>, bool) {
    let mut out: Option<Vec<u8>> = None;
    let mut in_string = false;
    let mut escaped = false;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if in_string {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
        } else if b == b'"' {
            in_string = true;
        } else {
            let rest = &bytes[i..];
            let word = [&b"-Infinity"[..], b"Infinity", b"NaN"]
                .into_iter()
                .find(|w| rest.starts_with(w));
            if let Some(w) = word {
                let buf = out.get_or_insert_with(|| bytes[..i].to_vec());
                buf.extend_from_slice(b"null");
                i += w.len();
                continue;
            }
        }
        if let Some(buf) = out.as_mut() {
            buf.push(b);
        }
        i += 1;
    }
    let found = out.is_some();
    (out, found)
}

/// Python's `json.dump(v, f, indent=2, ensure_ascii=False)` followed by `"\n"`.
pub fn py_dump(v: &Value) -> String {
    let mut out = String::new();
    write_value(&mut out, v, 0);
    out.push('\n');
    out
}

fn indent(out: &mut String, level: usize) {
    for _ in 0..level {
        out.push_str("  ");
    }
}

pub fn write_value(out: &mut String, v: &Value, level: usize) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        // arbitrary_precision keeps the number's original text.
        Value::Number(n) => out.push_str(&n.to_string()),
        Value::String(s) => write_str(out, s),
        Value::Array(a) if a.is_empty() => out.push_str("[]"),
        Value::Array(a) => {
            out.push_str("[\n");
            for (i, item) in a.iter().enumerate() {
                if i > 0 {
                    out.push_str(",\n");
                }
                indent(out, level + 1);
                write_value(out, item, level + 1);
            }
            out.push('\n');
            indent(out, level);
            out.push(']');
        }
        Value::Object(m) if m.is_empty() => out.push_str("{}"),
        Value::Object(m) => {
            out.push_str("{\n");
            for (i, (k, item)) in m.iter().enumerate() {
                if i > 0 {
                    out.push_str(",\n");
                }
                indent(out, level + 1);
                write_str(out, k);
                out.push_str(": ");
                write_value(out, item, level + 1);
            }
            out.push('\n');
            indent(out, level);
            out.push('}');
        }
    }
}

/// `py_encode_basestring`: escape `"`, `\`, and C0 controls (short forms for \n \r \t \b \f,
/// `\u00xx` lowercase otherwise); everything else, DEL and non-ASCII included, stays raw.
pub fn write_str(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Python truthiness of a JSON value (`archived` may be any type).
pub fn truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_none_or(|f| f != 0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Object(m) => !m.is_empty(),
    }
}

/// Parse a record object straight from `r` (never held as text), keeping the top-level
/// array `skip` only as its shape: an empty array. `None` when that fast path does not apply
/// (not an object, `skip` not an array, NaN literals, a BOM, invalid JSON): the caller reads
/// the file the careful way, which also words the error (issue 11, bounded memory).
pub fn parse_without(r: impl std::io::Read, skip: &str) -> Option<Map<String, Value>> {
    use serde::de::DeserializeSeed;
    let r = std::io::BufReader::with_capacity(1 << 16, r);
    let mut de = serde_json::Deserializer::from_reader(r);
    let map = TopLevel { skip }.deserialize(&mut de).ok()?;
    de.end().ok()?;
    Some(map)
}

/// The record object with one key's array skipped; later duplicate keys win, as in
/// `parse_record`.
struct TopLevel<'a> {
    skip: &'a str,
}

impl<'de> serde::de::DeserializeSeed<'de> for TopLevel<'_> {
    type Value = Map<String, Value>;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> serde::de::Visitor<'de> for TopLevel<'_> {
    type Value = Map<String, Value>;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a record object")
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut a: A) -> Result<Self::Value, A::Error> {
        let mut map = Map::new();
        while let Some(key) = a.next_key::<String>()? {
            let v = if key == self.skip {
                a.next_value::<SkippedArray>()?;
                Value::Array(Vec::new())
            } else {
                a.next_value::<Value>()?
            };
            map.insert(key, v);
        }
        Ok(map)
    }
}

/// An array whose items are read past, not kept.
struct SkippedArray;

impl<'de> serde::Deserialize<'de> for SkippedArray {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_seq(SkippedArray)
    }
}

impl<'de> serde::de::Visitor<'de> for SkippedArray {
    type Value = SkippedArray;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("an array")
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut a: A) -> Result<Self, A::Error> {
        while a.next_element::<serde::de::IgnoredAny>()?.is_some() {}
        Ok(SkippedArray)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn non_finite_literals_read_as_null_outside_strings_only() {
        let p = parse_record(br#"{"a": NaN, "b": [Infinity, -Infinity], "c": "NaN Infinity"}"#)
            .unwrap();
        assert!(p.non_finite);
        assert_eq!(p.map["a"], Value::Null);
        assert_eq!(p.map["b"], serde_json::json!([null, null]));
        assert_eq!(p.map["c"], "NaN Infinity");
        let q = parse_record(br#"{"c": "say \"NaN\""}"#).unwrap();
        assert!(!q.non_finite);
    }

    #[test]
    fn bom_and_non_objects_are_rejected() {
        assert!(parse_record(b"\xEF\xBB\xBF{}").unwrap_err().contains("BOM"));
        assert_eq!(parse_record(b"[1]").unwrap_err(), "not a JSON object");
        assert!(parse_record(b"{").unwrap_err().starts_with("invalid JSON"));
    }

    #[test]
    fn duplicate_keys_last_wins_at_first_position() {
        let p = parse_record(br#"{"a": 1, "b": 2, "a": 3}"#).unwrap();
        assert_eq!(
            py_dump(&Value::Object(p.map)),
            "{\n  \"a\": 3,\n  \"b\": 2\n}\n"
        );
    }

    #[test]
    fn dump_matches_python_byte_style() {
        let p = parse_record(
            "{\"x\": [], \"y\": {}, \"n\": [0.0, 1e-05, 12345678901234567890123, -0.5], \
             \"s\": \"é\\u0001\\u007f\\n\\t\\b\\f\\r\\\"\\\\/\"}"
                .as_bytes(),
        )
        .unwrap();
        let want = "{\n  \"x\": [],\n  \"y\": {},\n  \"n\": [\n    0.0,\n    1e-05,\n    \
                    12345678901234567890123,\n    -0.5\n  ],\n  \"s\": \"é\\u0001\u{7f}\\n\\t\\b\\f\\r\\\"\\\\/\"\n}\n";
        assert_eq!(py_dump(&Value::Object(p.map)), want);
    }

    #[test]
    fn python_truthiness() {
        for (v, t) in [
            ("null", false),
            ("0", false),
            ("-0.0", false),
            ("\"\"", false),
            ("[]", false),
            ("{}", false),
            ("false", false),
            ("2", true),
            ("\"no\"", true),
            ("[0]", true),
        ] {
            let val: Value = serde_json::from_str(v).unwrap();
            assert_eq!(truthy(&val), t, "{v}");
        }
    }
}
