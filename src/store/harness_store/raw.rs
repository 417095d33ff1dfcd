//! The raw view of a record written as it is read (issue 11, bounded memory): the record
//! pretty-printed the way the harness writes it (`json::py_dump`), one top-level field at a
//! time and the histories one entry at a time, so neither the record nor its dump is held
//! whole. A first pass checks that no top-level key repeats (a repeated key's last value is
//! printed at its first place, which a single pass cannot know); a record that does not
//! parse (NaN literals included) is shown as stored by the careful path, as before.

use std::collections::{HashSet, VecDeque};
use std::fs::File;
use std::io::{self, BufReader, Seek};

use serde::de::{DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use super::json;

/// Where the pieces of the dump go.
pub type Out<'a> = dyn FnMut(&str) -> io::Result<()> + 'a;

/// Write the dump of the record in `f` to `out`; `Ok(false)` (nothing written) where the
/// record is not an object read in one go (the caller then dumps it the careful way).
pub fn dump_to(f: &mut File, out: &mut Out) -> io::Result<bool> {
    if !unique_keys(f)? {
        return Ok(false);
    }
    f.rewind()?;
    let mut de = serde_json::Deserializer::from_reader(BufReader::with_capacity(1 << 16, &mut *f));
    let mut failed = None;
    let done = Dump {
        out,
        failed: &mut failed,
    }
    .deserialize(&mut de)
    .is_ok()
        && de.end().is_ok();
    if let Some(e) = failed {
        return Err(e);
    }
    if !done {
        // Read fine once, then not: the file changed under the open descriptor.
        return Err(io::Error::other("the record changed while it was read"));
    }
    Ok(true)
}

/// The last `bytes` or so of the dump in whole pieces (a top-level field, or one entry of a
/// history), and whether earlier pieces were left out: the browser's raw page. `None` as for
/// `dump_to`.
pub fn tail(f: &mut File, bytes: u64) -> io::Result<Option<(String, bool)>> {
    let mut kept: VecDeque<String> = VecDeque::new();
    let (mut held, mut dropped) = (0usize, false);
    let want = usize::try_from(bytes.max(1)).unwrap_or(usize::MAX);
    let done = dump_to(f, &mut |piece| {
        held += piece.len();
        kept.push_back(piece.to_string());
        while kept.len() > 1 && held - kept[0].len() >= want {
            held -= kept.pop_front().map_or(0, |p| p.len());
            dropped = true;
        }
        Ok(())
    })?;
    if !done {
        return Ok(None);
    }
    let mut text = String::with_capacity(held);
    kept.iter().for_each(|p| text.push_str(p));
    if dropped {
        // A piece starts with the separator after the one before it.
        text = text.trim_start_matches([',', '\n']).to_string();
    }
    Ok(Some((text, dropped)))
}

/// Whether the record reads as an object whose top-level keys are all different.
fn unique_keys(f: &mut File) -> io::Result<bool> {
    f.rewind()?;
    let mut de = serde_json::Deserializer::from_reader(BufReader::with_capacity(1 << 16, &mut *f));
    Ok(Keys.deserialize(&mut de).unwrap_or(false) && de.end().is_ok())
}

struct Keys;

impl<'de> DeserializeSeed<'de> for Keys {
    type Value = bool;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<bool, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Keys {
    type Value = bool;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a record object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<bool, A::Error> {
        let mut seen = HashSet::new();
        let mut unique = true;
        while let Some(k) = a.next_key::<String>()? {
            a.next_value::<IgnoredAny>()?;
            unique &= seen.insert(k);
        }
        Ok(unique)
    }
}

/// The record object, dumped field by field.
struct Dump<'a, 'b> {
    out: &'a mut Out<'b>,
    failed: &'a mut Option<io::Error>,
}

impl Dump<'_, '_> {
    /// Send `piece`, keeping the first error (it ends the pass).
    fn send<E: serde::de::Error>(&mut self, piece: &str) -> Result<(), E> {
        (self.out)(piece).map_err(|e| {
            *self.failed = Some(e);
            E::custom("the reader stopped")
        })
    }
}

impl<'de> DeserializeSeed<'de> for Dump<'_, '_> {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Dump<'_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a record object")
    }
    fn visit_map<A: MapAccess<'de>>(mut self, mut a: A) -> Result<(), A::Error> {
        let mut first = true;
        while let Some(k) = a.next_key::<String>()? {
            let mut head = String::from(if first { "{\n  " } else { ",\n  " });
            first = false;
            json::write_str(&mut head, &k);
            head.push_str(": ");
            if k == "messages" || k == "transcript" {
                self.send(&head)?;
                a.next_value_seed(Field {
                    dump: Dump {
                        out: &mut *self.out,
                        failed: &mut *self.failed,
                    },
                })?;
            } else {
                let v = a.next_value::<Value>()?;
                json::write_value(&mut head, &v, 1);
                self.send(&head)?;
            }
        }
        self.send(if first { "{}\n" } else { "\n}\n" })
    }
}

/// A top-level field's value: an array is dumped entry by entry, anything else whole.
struct Field<'a, 'b> {
    dump: Dump<'a, 'b>,
}

impl<'de> DeserializeSeed<'de> for Field<'_, '_> {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Field<'_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_seq<A: SeqAccess<'de>>(mut self, mut a: A) -> Result<(), A::Error> {
        let mut first = true;
        while let Some(v) = a.next_element::<Value>()? {
            let mut piece = String::from(if first { "[\n    " } else { ",\n    " });
            first = false;
            json::write_value(&mut piece, &v, 2);
            drop(v);
            self.dump.send(&piece)?;
        }
        self.dump.send(if first { "[]" } else { "\n  ]" })
    }
    // Anything else is dumped as the whole parse would: through a value.
    fn visit_map<A: MapAccess<'de>>(self, a: A) -> Result<(), A::Error> {
        let v = Value::deserialize(serde::de::value::MapAccessDeserializer::new(a))?;
        self.whole(&v)
    }
    fn visit_bool<E: serde::de::Error>(self, b: bool) -> Result<(), E> {
        self.whole(&Value::Bool(b))
    }
    fn visit_i64<E: serde::de::Error>(self, n: i64) -> Result<(), E> {
        self.whole(&Value::from(n))
    }
    fn visit_u64<E: serde::de::Error>(self, n: u64) -> Result<(), E> {
        self.whole(&Value::from(n))
    }
    fn visit_f64<E: serde::de::Error>(self, n: f64) -> Result<(), E> {
        self.whole(&Value::from(n))
    }
    fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<(), E> {
        self.whole(&Value::String(s.to_string()))
    }
    fn visit_unit<E: serde::de::Error>(self) -> Result<(), E> {
        self.whole(&Value::Null)
    }
}

impl Field<'_, '_> {
    fn whole<E: serde::de::Error>(mut self, v: &Value) -> Result<(), E> {
        let mut piece = String::new();
        json::write_value(&mut piece, v, 1);
        self.dump.send(&piece)
    }
}

use serde::Deserialize;
