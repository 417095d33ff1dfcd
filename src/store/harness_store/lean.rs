//! What the listing row needs of a record's history, and a parse that keeps only that
//! (issue 11, bounded memory): each entry's role, the first user entry and the last entry in
//! full. A row built this way never holds the history, parsed or as text.

use serde::de::{DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use super::json::Parsed;
use super::record::role;

/// The role of a stored entry, as far as the row tells roles apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Not an object, or no string role.
    NoRole,
    System,
    User,
    Assistant,
    Tool,
    Other,
}

impl Kind {
    pub fn of(entry: &Value) -> Kind {
        match role(entry) {
            None => Kind::NoRole,
            Some("system") => Kind::System,
            Some("user") => Kind::User,
            Some("assistant") => Kind::Assistant,
            Some("tool") => Kind::Tool,
            Some(_) => Kind::Other,
        }
    }
}

/// A history reduced to what the row shows.
#[derive(Clone, Debug, Default)]
pub struct Hist {
    pub kinds: Vec<Kind>,
    /// The first user entry.
    pub first_user: Option<Value>,
    /// The last entry with a role other than `system` (how the session ended).
    pub last: Option<Value>,
}

impl Hist {
    /// Add the next entry, taking it only when the row shows it.
    fn push(&mut self, entry: Value) {
        let kind = Kind::of(&entry);
        self.kinds.push(kind);
        if kind == Kind::User && self.first_user.is_none() {
            self.first_user = Some(entry.clone());
        }
        if !matches!(kind, Kind::NoRole | Kind::System) {
            self.last = Some(entry);
        }
    }

    /// The reduction of a history held whole.
    pub fn of(entries: &[Value]) -> Hist {
        let shown = |e: &&Value| !matches!(Kind::of(e), Kind::NoRole | Kind::System);
        Hist {
            kinds: entries.iter().map(Kind::of).collect(),
            first_user: entries.iter().find(|e| Kind::of(e) == Kind::User).cloned(),
            last: entries.iter().rfind(shown).cloned(),
        }
    }

    /// Section 7's unread rule over the sidecar's `read_transcript_len`.
    pub fn unread(&self, read_len: Option<u64>) -> bool {
        let Some(n) = read_len.and_then(|n| usize::try_from(n).ok()) else {
            return false;
        };
        // Shorter than the marker: a stale marker.
        self.kinds.len() >= n
            && self.kinds[n..]
                .iter()
                .any(|k| matches!(k, Kind::Assistant | Kind::Tool))
    }
}

/// Parse a record object for its row straight from `r`: `messages` and `transcript` are
/// read one entry at a time into a `Hist` and kept as empty arrays. `None` when that does
/// not apply (not an object, a history that is not an array, NaN literals, a BOM, invalid
/// JSON): the caller reads the file the careful way, which also words the error.
pub fn parse_row(r: impl std::io::Read) -> Option<Parsed> {
    let r = std::io::BufReader::with_capacity(1 << 16, r);
    let mut de = serde_json::Deserializer::from_reader(r);
    let (map, mut hists) = RowLevel.deserialize(&mut de).ok()?;
    de.end().ok()?;
    // The history is `transcript`, falling back to `messages` (record::history).
    let key = if map.contains_key("transcript") {
        "transcript"
    } else {
        "messages"
    };
    let hist = hists.remove(key);
    Some(Parsed {
        map,
        non_finite: false,
        hist,
    })
}

type Hists = std::collections::HashMap<String, Hist>;

/// The record object with its histories reduced; later duplicate keys win, as in
/// `json::parse_record`.
struct RowLevel;

impl<'de> DeserializeSeed<'de> for RowLevel {
    type Value = (Map<String, Value>, Hists);
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for RowLevel {
    type Value = (Map<String, Value>, Hists);
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a record object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Self::Value, A::Error> {
        let (mut map, mut hists) = (Map::new(), Hists::new());
        while let Some(key) = a.next_key::<String>()? {
            let v = if key == "messages" || key == "transcript" {
                hists.insert(key.clone(), a.next_value_seed(HistSeed)?);
                Value::Array(Vec::new())
            } else {
                a.next_value::<Value>()?
            };
            map.insert(key, v);
        }
        Ok((map, hists))
    }
}

/// An array read one entry at a time into a `Hist`.
struct HistSeed;

impl<'de> DeserializeSeed<'de> for HistSeed {
    type Value = Hist;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Hist, D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for HistSeed {
    type Value = Hist;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("an array")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<Hist, A::Error> {
        let mut h = Hist::default();
        while let Some(e) = a.next_element::<Value>()? {
            h.push(e);
        }
        Ok(h)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The row parse keeps what the full parse shows in the row, and nothing of the rest.
    #[test]
    fn row_parse_keeps_roles_first_user_and_last_entry() {
        let text = br#"{"id": "x", "messages": [{"role": "system", "content": "s"}],
            "transcript": [{"role": "system", "content": "s"}, 3,
              {"role": "user", "content": "first"}, {"role": "assistant", "content": "a"},
              {"role": "user", "content": "second"}, {"role": "tool", "content": "t"},
              {"role": "system", "content": "late"}], "title": ""}"#;
        let p = parse_row(&text[..]).unwrap();
        assert_eq!(p.map["transcript"], Value::Array(Vec::new()));
        let h = p.hist.unwrap();
        use Kind::*;
        assert_eq!(
            h.kinds,
            [System, NoRole, User, Assistant, User, Tool, System]
        );
        assert_eq!(h.first_user.unwrap()["content"], "first");
        assert_eq!(h.last.unwrap()["content"], "t");
        let full = super::super::json::parse_record(text).unwrap();
        let whole = Hist::of(super::super::record::history(&full.map).unwrap());
        assert_eq!(
            whole.kinds,
            [System, NoRole, User, Assistant, User, Tool, System]
        );
        assert!(whole.unread(Some(5)) && !whole.unread(Some(6)) && !whole.unread(Some(8)));
    }

    /// What the careful parse must word is left to it.
    #[test]
    fn row_parse_declines_what_it_cannot_word() {
        for text in [
            &b"\xEF\xBB\xBF{}"[..],
            b"[1]",
            b"{\"messages\": 3}",
            b"{\"a\": NaN}",
            b"{} x",
        ] {
            assert!(parse_row(text).is_none());
        }
    }
}
