//! The listing's decode (claude-code.md section 3): each line becomes a record that keeps only
//! the keys the derived listing fields read. Every title record, message id and bad line still
//! counts (the contract's table needs all of them: the last `custom-title` can sit anywhere,
//! the count is over every distinct `message.id`), but base64 images, tool output, thinking
//! text and progress snapshots are only scanned, never copied into a tree. Duplicate keys keep
//! the first value, as in `json_first`.

use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use crate::store::json_first::{FirstWins, value_scalars};

/// What to keep of a key's value.
#[derive(Clone, Copy)]
enum Keep {
    /// The whole value.
    All,
    /// An object (or each object of an array) pruned to these keys; other values whole.
    Only(Spec),
}

type Spec = &'static [(&'static str, Keep)];

use Keep::{All, Only};

/// Content blocks: the type (counting, classifying), text (prompts, the "asks the user"
/// ending), tool ids and names (open calls), and a result's error flag.
const BLOCK: Spec = &[
    ("type", All),
    ("text", All),
    ("id", All),
    ("name", All),
    ("tool_use_id", All),
    ("is_error", All),
];

const MESSAGE: Spec = &[
    ("id", All),
    ("model", All),
    ("stop_reason", All),
    ("content", Only(BLOCK)),
];

/// Every key `listing::facts`, `record` and `ended::Tail` read from a record.
const RECORD: Spec = &[
    ("type", All),
    ("isSidechain", All),
    ("uuid", All),
    // The chain and the subagent links, so a view can follow the listing's records and
    // read each one whole only when it is shown (`stream`).
    ("parentUuid", All),
    ("logicalParentUuid", All),
    ("subtype", All),
    ("parentToolUseID", All),
    ("data", Only(&[("agentId", All)])),
    ("timestamp", All),
    ("snapshot", Only(&[("timestamp", All)])),
    ("cwd", All),
    ("forkedFrom", Only(&[("sessionId", All)])),
    ("sessionId", All),
    ("sessionKind", All),
    ("entrypoint", All),
    ("gitBranch", All),
    ("customTitle", All),
    ("aiTitle", All),
    ("agentName", All),
    ("summary", All),
    ("leafUuid", All),
    ("worktreeSession", Only(&[("worktreeBranch", All)])),
    ("isMeta", All),
    ("isCompactSummary", All),
    ("isApiErrorMessage", All),
    ("attachment", Only(&[("type", All), ("prompt", All)])),
    ("message", Only(MESSAGE)),
];

/// With `arbitrary_precision`, serde_json hands a number over as a map with this one key.
pub(super) const NUMBER_KEY: &str = "$serde_json::private::Number";

/// Parse one line into a pruned object; `(value, was_lossy)` like `entries::decode`.
pub fn decode(bytes: &[u8]) -> Option<(Value, bool)> {
    decode_with(bytes, parse)
}

/// One line through `parse` (a pruning deserializer), as an object, and whether it was
/// lossy: invalid UTF-8 anywhere in the line counts, as in the full decode, even inside a
/// value that is not kept (serde only checks the strings it builds).
pub(super) fn decode_with(
    bytes: &[u8],
    parse: impl Fn(&[u8]) -> Option<Value>,
) -> Option<(Value, bool)> {
    if std::str::from_utf8(bytes).is_ok() {
        let v = parse(bytes)?;
        return v.is_object().then_some((v, false));
    }
    let text = String::from_utf8_lossy(bytes);
    let v = parse(text.as_bytes())?;
    v.is_object().then_some((v, true))
}

fn parse(bytes: &[u8]) -> Option<Value> {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let v = Pruned(RECORD).deserialize(&mut de).ok()?;
    de.end().ok()?;
    Some(v)
}

/// A value pruned to a spec.
#[derive(Clone, Copy)]
struct Pruned(Spec);

impl<'de> DeserializeSeed<'de> for Pruned {
    type Value = Value;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

/// A key: its place in the spec, the number token, or a key nobody reads.
enum Key {
    At(usize),
    Number,
    Other,
}

struct KeySeed(Spec);

impl<'de> DeserializeSeed<'de> for KeySeed {
    type Value = Key;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Key, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for KeySeed {
    type Value = Key;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object key")
    }
    fn visit_str<E>(self, k: &str) -> Result<Key, E> {
        if k == NUMBER_KEY {
            return Ok(Key::Number);
        }
        Ok(self
            .0
            .iter()
            .position(|(name, _)| *name == k)
            .map_or(Key::Other, Key::At))
    }
}

impl<'de> Visitor<'de> for Pruned {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    value_scalars!();
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut out = Vec::new();
        while let Some(v) = seq.next_element_seed(self)? {
            out.push(v);
        }
        Ok(Value::Array(out))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(key) = map.next_key_seed(KeySeed(self.0))? {
            match key {
                Key::Number => {
                    let s: String = map.next_value()?;
                    return Ok(s
                        .parse::<serde_json::Number>()
                        .map_or(Value::Null, Value::Number));
                }
                Key::At(i) if !out.contains_key(self.0[i].0) => {
                    let (name, keep) = self.0[i];
                    let v = match keep {
                        All => map.next_value::<FirstWins>()?.0,
                        Only(spec) => map.next_value_seed(Pruned(spec))?,
                    };
                    out.insert(name.to_string(), v);
                }
                // A key nobody reads, or a repeat (the first one wins): scanned, not kept.
                Key::At(_) | Key::Other => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(Value::Object(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_listing_keys_are_kept() {
        let line = br#"{"type":"user","uuid":"u1","toolUseResult":{"stdout":"big"},"message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":[{"type":"image","source":{"data":"AAAA"}}]},{"type":"text","text":"hi"}]},"type":"assistant"}"#;
        let (v, lossy) = decode(line).unwrap();
        assert!(!lossy);
        assert_eq!(
            v,
            serde_json::json!({"type":"user","uuid":"u1","message":{"content":[
                {"type":"tool_result","tool_use_id":"t1"},{"type":"text","text":"hi"}]}})
        );
    }

    #[test]
    fn bad_lines_and_wrong_types_are_as_in_the_full_decode() {
        assert!(decode(br#"{"type":"user","message":{"content":[1,2"#).is_none());
        assert!(decode(b"[1,2]").is_none());
        assert!(decode(br#"{"a":1} x"#).is_none());
        // Wrong types are kept as they are (the accessors read them as absent).
        let (v, _) = decode(br#"{"type":"user","message":7,"timestamp":3.5}"#).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"type":"user","message":7,"timestamp":3.5})
        );
        let (v, lossy) = decode(b"{\"type\":\"user\",\"cwd\":\"/a\xff\"}").unwrap();
        assert!(lossy);
        assert_eq!(v["cwd"], "/a\u{fffd}");
        // Also inside a value the listing does not keep.
        let (_, lossy) = decode(b"{\"type\":\"user\",\"toolUseResult\":\"\xff\"}").unwrap();
        assert!(lossy);
    }

    /// Every fixture and demo transcript (and subagent file) lists the same through the
    /// pruned decode as through the full one.
    #[test]
    fn the_listing_is_the_same_as_from_whole_records() {
        use super::super::{listing, read};
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut files = Vec::new();
        let mut dirs = vec![
            root.join("tests/fixtures/claude"),
            root.join("assets/demo/claude"),
        ];
        while let Some(d) = dirs.pop() {
            for e in std::fs::read_dir(&d).unwrap().flatten() {
                let p = e.path();
                if p.is_dir() {
                    dirs.push(p);
                } else if p.extension().is_some_and(|x| x == "jsonl") {
                    files.push(p);
                }
            }
        }
        assert!(files.len() >= 10, "{files:?}");
        let now = std::time::SystemTime::now();
        for f in files {
            let id = f.file_stem().unwrap().to_string_lossy().into_owned();
            let cx = listing::RowContext {
                project_dir: f.parent().unwrap(),
                subagents: 0,
                cleanup_days: Some(30.0),
                now,
            };
            let row = |mode| {
                let p = read::read(&f, mode).unwrap();
                let facts = listing::facts(&id, &p);
                let s = listing::summary(&id, &f, &p, &facts, &cx);
                (
                    s.to_json(),
                    facts.newest_assistant,
                    facts.leading_leaves,
                    facts.uuids,
                    (p.bad, p.lossy, p.truncated, p.pending),
                )
            };
            assert_eq!(
                row(read::Mode::List),
                row(read::Mode::Full),
                "{}",
                f.display()
            );
        }
    }
}
