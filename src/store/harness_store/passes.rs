//! Passes over a record read as a stream (issue 11, bounded memory): a record is one JSON
//! object whose histories can hold 100+ MB, so the views read it more than once from one
//! open file instead of holding it. A pass keeps nothing of the history but what its
//! callback keeps: one entry is parsed, handed over and dropped before the next.

use std::collections::HashMap;
use std::fs::File;
use std::io::{self, BufReader, Seek};

use serde::de::{DeserializeSeed, Error as _, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

/// Read buffer of a pass: large enough that a pass costs few `read` calls.
const BUF: usize = 1 << 16;

/// What a pass does with each entry of the history `key` from index `from` on (the entries
/// before are read past, never parsed into values). It may fail, to stop the pass (a sink
/// whose reader went away).
pub type OnEntry<'a> = dyn FnMut(usize, Value) -> io::Result<()> + 'a;

/// Walk the entries of the top-level array `key` of the record in `f`, from its start:
/// `on` gets each entry at index `from` or later. `Ok(false)` when the record does not
/// read as an object whose `key` (when present) is an array: the caller then takes the
/// careful path, which words the problem. An error is `on`'s, or the file's.
pub fn walk(f: &mut File, key: &str, from: usize, on: &mut OnEntry) -> io::Result<bool> {
    let mut entries = Entries {
        from,
        on,
        failed: None,
    };
    let read = pass(f, key, &mut entries)?;
    match entries.failed {
        Some(e) => Err(e),
        None => Ok(read),
    }
}

/// Tool names by call id over the assistant entries of history `key` (what a tool result is
/// paired with), read without holding an entry's content: only each entry's role and
/// `tool_calls` are parsed. `None` as for `walk`.
pub fn call_names(f: &mut File, key: &str) -> io::Result<Option<HashMap<String, String>>> {
    let mut names = CallNames(HashMap::new());
    let read = pass(f, key, &mut names)?;
    Ok(read.then_some(names.0))
}

/// One pass over the record in `f`: `history` reads the array `key`, every other value is
/// read past. Whether the whole record read as such.
fn pass<H: History>(f: &mut File, key: &str, history: &mut H) -> io::Result<bool> {
    f.rewind()?;
    let mut de = serde_json::Deserializer::from_reader(BufReader::with_capacity(BUF, &mut *f));
    let read = Top { key, history }.deserialize(&mut de).is_ok() && de.end().is_ok();
    Ok(read)
}

/// What a pass does with the history's entries.
trait History {
    fn read<'de, A: SeqAccess<'de>>(&mut self, a: A) -> Result<(), A::Error>;
}

/// The record object, reading past every key but `key`.
struct Top<'a, H> {
    key: &'a str,
    history: &'a mut H,
}

impl<'de, H: History> DeserializeSeed<'de> for Top<'_, H> {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de, H: History> Visitor<'de> for Top<'_, H> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a record object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<(), A::Error> {
        let mut seen = false;
        while let Some(k) = a.next_key::<String>()? {
            if k != self.key {
                a.next_value::<IgnoredAny>()?;
                continue;
            }
            // A repeated history key: the last one wins when the record is parsed whole,
            // and the first would already have been handed over. Decline.
            if seen {
                return Err(A::Error::custom("history key repeated"));
            }
            seen = true;
            a.next_value_seed(Seq(&mut *self.history))?;
        }
        Ok(())
    }
}

/// The history array, handed to its `History`.
struct Seq<'a, H>(&'a mut H);

impl<'de, H: History> DeserializeSeed<'de> for Seq<'_, H> {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de, H: History> Visitor<'de> for Seq<'_, H> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("an array")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, a: A) -> Result<(), A::Error> {
        self.0.read(a)
    }
}

/// `walk`'s reading: entries before `from` read past, the rest parsed and handed to `on`.
struct Entries<'a, 'b> {
    from: usize,
    on: &'a mut OnEntry<'b>,
    failed: Option<io::Error>,
}

impl History for Entries<'_, '_> {
    fn read<'de, A: SeqAccess<'de>>(&mut self, mut a: A) -> Result<(), A::Error> {
        let mut i = 0;
        loop {
            if i < self.from {
                if a.next_element::<IgnoredAny>()?.is_none() {
                    return Ok(());
                }
            } else {
                let Some(v) = a.next_element::<Value>()? else {
                    return Ok(());
                };
                if let Err(e) = (self.on)(i, v) {
                    self.failed = Some(e);
                    return Err(A::Error::custom("the reader stopped"));
                }
            }
            i += 1;
        }
    }
}

/// `call_names`' reading: the tool calls of each assistant entry.
struct CallNames(HashMap<String, String>);

impl History for CallNames {
    fn read<'de, A: SeqAccess<'de>>(&mut self, mut a: A) -> Result<(), A::Error> {
        while let Some(calls) = a.next_element_seed(AssistantCalls)? {
            for c in calls.iter().flat_map(super::render::tool_calls_of) {
                self.0.insert(c.id, c.name);
            }
        }
        Ok(())
    }
}

/// One entry, kept only as its `tool_calls` when it is an assistant's (as `role()` reads a
/// role: a string `role` field, the last of repeated keys winning); anything else is read
/// past.
struct AssistantCalls;

impl<'de> DeserializeSeed<'de> for AssistantCalls {
    type Value = Option<Value>;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Option<Value>, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for AssistantCalls {
    type Value = Option<Value>;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("an entry")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Option<Value>, A::Error> {
        let (mut role, mut calls) = (None, None);
        while let Some(k) = a.next_key::<String>()? {
            match k.as_str() {
                "role" => role = Some(a.next_value::<Value>()?),
                "tool_calls" => calls = Some(a.next_value::<Value>()?),
                _ => {
                    a.next_value::<IgnoredAny>()?;
                }
            }
        }
        let assistant = role.as_ref().and_then(Value::as_str) == Some("assistant");
        Ok(calls.filter(|_| assistant))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<Option<Value>, A::Error> {
        while a.next_element::<IgnoredAny>()?.is_some() {}
        Ok(None)
    }
    fn visit_bool<E>(self, _: bool) -> Result<Option<Value>, E> {
        Ok(None)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Option<Value>, E> {
        Ok(None)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Option<Value>, E> {
        Ok(None)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Option<Value>, E> {
        Ok(None)
    }
    fn visit_str<E>(self, _: &str) -> Result<Option<Value>, E> {
        Ok(None)
    }
    fn visit_unit<E>(self) -> Result<Option<Value>, E> {
        Ok(None)
    }
}
