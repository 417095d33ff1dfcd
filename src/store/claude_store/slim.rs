//! The transcript's decode: every key the view reads kept exactly as the full decode keeps
//! it, but an image's base64 `source.data` (in a message's blocks, or a tool result's) is
//! replaced by its length, and `toolUseResult` (Claude's second copy of a tool's output,
//! base64 images included) and a progress record's `data` are pruned to the keys the view
//! reads. A 30 MB image line then costs its line buffer and nothing more: serde hands an
//! unescaped string over borrowed, so the elided payload is never copied.

use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use crate::store::json_first::{FirstWins, value_scalars};

/// Where an elided image payload's length is kept, in place of `data` (a key no record
/// carries, so a real `data` of another type still reads as absent).
pub const DATA_LEN: &str = "\u{0}spool:data-len";

use super::lite::NUMBER_KEY;

/// Parse one line; `(value, was_lossy)` like `entries::decode` (lossy as `lite` counts it).
pub fn decode(bytes: &[u8]) -> Option<(Value, bool)> {
    super::lite::decode_with(bytes, parse)
}

fn parse(bytes: &[u8]) -> Option<Value> {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let v = Slim(Level::Record).deserialize(&mut de).ok()?;
    de.end().ok()?;
    Some(v)
}

/// The length of an image source's payload, elided or not (`None`: no string payload).
pub fn data_len(source: &Value) -> Option<usize> {
    match source.get("data") {
        Some(Value::String(s)) => Some(s.len()),
        _ => source
            .get(DATA_LEN)
            .and_then(Value::as_u64)
            .map(|n| n as usize),
    }
}

/// Where in a record a value sits.
#[derive(Clone, Copy)]
enum Level {
    Record,
    /// `message`.
    Message,
    /// A `content` that may be a block array.
    Blocks,
    Block,
    /// A block's `source`.
    Source,
    /// An object pruned to these keys (other values whole).
    Only(&'static [&'static str]),
}

#[derive(Clone, Copy)]
struct Slim(Level);

impl<'de> DeserializeSeed<'de> for Slim {
    type Value = Value;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

/// What a key's value becomes at `level`: `None` skips it.
enum Then {
    Whole,
    Seed(Level),
    Skip,
    Elide,
}

fn then(level: Level, key: &str) -> Then {
    match (level, key) {
        (Level::Record, "message") => Then::Seed(Level::Message),
        (Level::Record, "toolUseResult") => {
            Then::Seed(Level::Only(&["agentId", "persistedOutputPath"]))
        }
        (Level::Record, "data") => Then::Seed(Level::Only(&["agentId"])),
        (Level::Message, "content") | (Level::Block, "content") => Then::Seed(Level::Blocks),
        (Level::Block, "source") => Then::Seed(Level::Source),
        (Level::Source, "data") => Then::Elide,
        (Level::Only(keys), k) if !keys.contains(&k) => Then::Skip,
        _ => Then::Whole,
    }
}

/// A string's length, without keeping it (any other value is kept).
struct Len;

impl<'de> Visitor<'de> for Len {
    type Value = Result<usize, Value>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Ok(v.len()))
    }
    fn visit_bool<E>(self, v: bool) -> Result<Self::Value, E> {
        Ok(Err(Value::Bool(v)))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Self::Value, E> {
        Ok(Err(Value::from(v)))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Self::Value, E> {
        Ok(Err(Value::from(v)))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Self::Value, E> {
        Ok(Err(
            serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number)
        ))
    }
    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(Err(Value::Null))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        FirstWinsVisitor.visit_seq(seq).map(Err)
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        FirstWinsVisitor.visit_map(map).map(Err)
    }
}

impl<'de> DeserializeSeed<'de> for Len {
    type Value = Result<usize, Value>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

/// The first-wins decode as a visitor, for a value that turned out not to be a string.
struct FirstWinsVisitor;

impl FirstWinsVisitor {
    fn visit_seq<'de, A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut out = Vec::new();
        while let Some(FirstWins(v)) = seq.next_element()? {
            out.push(v);
        }
        Ok(Value::Array(out))
    }
    fn visit_map<'de, A: MapAccess<'de>>(self, map: A) -> Result<Value, A::Error> {
        Slim(Level::Only(&[]))
            .visit_map_as(map, true)
            .map(|v| v.unwrap_or(Value::Null))
    }
}

impl Slim {
    /// A map at this level; with `all`, every key kept whole (the first-wins decode).
    fn visit_map_as<'de, A: MapAccess<'de>>(
        self,
        mut map: A,
        all: bool,
    ) -> Result<Option<Value>, A::Error> {
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if key == NUMBER_KEY {
                let s: String = map.next_value()?;
                return Ok(Some(
                    s.parse::<serde_json::Number>()
                        .map_or(Value::Null, Value::Number),
                ));
            }
            if out.contains_key(&key) {
                // A repeat: the first one wins.
                map.next_value::<IgnoredAny>()?;
                continue;
            }
            let how = if all { Then::Whole } else { then(self.0, &key) };
            match how {
                Then::Whole => {
                    let FirstWins(v) = map.next_value()?;
                    out.insert(key, v);
                }
                Then::Seed(level) => {
                    let v = map.next_value_seed(Slim(level))?;
                    out.insert(key, v);
                }
                Then::Skip => {
                    map.next_value::<IgnoredAny>()?;
                }
                Then::Elide => match map.next_value_seed(Len)? {
                    Ok(n) if !out.contains_key(DATA_LEN) => {
                        // Marks `data` as seen, so a repeated key still loses to this one.
                        out.insert(DATA_LEN.into(), Value::from(n as u64));
                    }
                    Ok(_) => {}
                    Err(v) if !out.contains_key(DATA_LEN) => {
                        out.insert(key, v);
                    }
                    Err(_) => {}
                },
            }
        }
        Ok(Some(Value::Object(out)))
    }
}

impl<'de> Visitor<'de> for Slim {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    value_scalars!();
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        // Only a block array's elements are blocks; any other array is kept whole.
        let item = match self.0 {
            Level::Blocks => Level::Block,
            _ => return FirstWinsVisitor.visit_seq(seq),
        };
        let mut out = Vec::new();
        while let Some(v) = seq.next_element_seed(Slim(item))? {
            out.push(v);
        }
        Ok(Value::Array(out))
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Value, A::Error> {
        self.visit_map_as(map, false)
            .map(|v| v.unwrap_or(Value::Null))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn image_payloads_become_lengths_and_the_rest_is_as_decoded_whole() {
        let line = br#"{"type":"user","uuid":"u","toolUseResult":{"agentId":"a1","file":{"base64":"QUJD"}},"message":{"role":"user","content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"QUJDRA=="}},{"type":"tool_result","tool_use_id":"t","content":[{"type":"image","source":{"data":"QUJD","data":"x"}},{"type":"text","text":"ok"}]},{"type":"tool_use","id":"x","input":{"source":{"data":"kept"}}}]},"n":1e400}"#;
        let (v, lossy) = decode(line).unwrap();
        assert!(!lossy);
        let blocks = v["message"]["content"].as_array().unwrap();
        assert_eq!(data_len(&blocks[0]["source"]), Some(8));
        assert_eq!(blocks[0]["source"]["media_type"], "image/png");
        assert!(blocks[0]["source"].get("data").is_none());
        // First wins on a repeated key, elided or not.
        assert_eq!(data_len(&blocks[1]["content"][0]["source"]), Some(4));
        assert_eq!(blocks[1]["content"][1], json!({"type":"text","text":"ok"}));
        // A tool's input is shown as stored.
        assert_eq!(blocks[2]["input"], json!({"source":{"data":"kept"}}));
        assert_eq!(v["toolUseResult"], json!({"agentId":"a1"}));
        let (full, _) = crate::store::entries::decode(line).unwrap();
        assert_eq!(v["n"], full["n"]);
        assert_eq!(v["uuid"], full["uuid"]);
    }

    #[test]
    fn bad_lines_and_wrong_types_are_as_in_the_full_decode() {
        for line in [
            &br#"{"type":"user","message":{"content":[1,2"#[..],
            b"[1,2]",
            br#"{"a":1} x"#,
        ] {
            assert!(decode(line).is_none());
        }
        let line = br#"{"type":"user","message":7,"data":"s","toolUseResult":[1],"x":{"source":{"data":"k"}},"m":{"content":[{"source":{"data":5}}]}}"#;
        assert_eq!(
            decode(line).unwrap().0,
            crate::store::entries::decode(line).unwrap().0
        );
        let line = br#"{"message":{"content":[{"type":"image","source":{"data":5}}]}}"#;
        assert_eq!(
            decode(line).unwrap().0,
            crate::store::entries::decode(line).unwrap().0
        );
        let (_, lossy) = decode(b"{\"type\":\"user\",\"toolUseResult\":{\"x\":\"\xff\"}}").unwrap();
        assert!(lossy);
    }
}
