//! Tolerant JSON for the read-only stores' records: an object that repeats a key keeps the
//! **first** value (claude-code.md 6.1, DECIDED), where `serde_json::Value` would keep the last
//! and a derived struct would reject the line.

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

/// A JSON value parsed with first-wins duplicate keys.
pub struct FirstWins(pub Value);

/// Parse one line into a value (first-wins on duplicate keys); `None` when it is not JSON.
pub fn parse(bytes: &[u8]) -> Option<Value> {
    serde_json::from_slice::<FirstWins>(bytes).ok().map(|f| f.0)
}

impl<'de> Deserialize<'de> for FirstWins {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(V).map(FirstWins)
    }
}

/// The scalar arms of a `Visitor` whose value is a `serde_json::Value`: the same for the
/// first-wins decode here and the Claude listing's pruned one.
macro_rules! value_scalars {
    () => {
        fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
            Ok(Value::Bool(v))
        }
        fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
            Ok(Value::from(v))
        }
        fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
            Ok(Value::from(v))
        }
        fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
            Ok(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number))
        }
        fn visit_str<E>(self, v: &str) -> Result<Value, E> {
            Ok(Value::String(v.to_string()))
        }
        fn visit_string<E>(self, v: String) -> Result<Value, E> {
            Ok(Value::String(v))
        }
        fn visit_unit<E>(self) -> Result<Value, E> {
            Ok(Value::Null)
        }
    };
}
pub(crate) use value_scalars;

struct V;

impl<'de> Visitor<'de> for V {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("any JSON value")
    }
    value_scalars!();
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        FirstWins::deserialize(d).map(|f| f.0)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut out = Vec::new();
        while let Some(FirstWins(v)) = seq.next_element()? {
            out.push(v);
        }
        Ok(Value::Array(out))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        // With `arbitrary_precision`, serde_json hands numbers over as a one-key map; let the
        // real Value deserializer handle that token so numbers stay exact.
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if key == "$serde_json::private::Number" {
                let s: String = map.next_value()?;
                return Ok(s
                    .parse::<serde_json::Number>()
                    .map_or(Value::Null, Value::Number));
            }
            let FirstWins(v) = map.next_value()?;
            out.entry(key).or_insert(v);
        }
        Ok(Value::Object(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duplicate_keys_first_wins_numbers_exact() {
        let v =
            parse(br#"{"a":1,"a":2,"b":{"c":"x","c":"y"},"n":12345678901234567890123}"#).unwrap();
        assert_eq!(v["a"], 1);
        assert_eq!(v["b"]["c"], "x");
        assert_eq!(v["n"].to_string(), "12345678901234567890123");
        assert!(parse(b"{\"a\":").is_none());
    }
}
