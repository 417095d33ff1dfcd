//! Compact serde forms for the summary fields the catalog stores: times as (seconds, nanos)
//! rather than RFC 3339 text (no parsing on the start path), paths as raw bytes (a path that
//! is not UTF-8 still round-trips).

use chrono::{DateTime, Utc};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// `Option<DateTime<Utc>>` as `Option<(i64, u32)>`.
pub mod time_opt {
    use super::*;

    pub fn serialize<S: Serializer>(t: &Option<DateTime<Utc>>, s: S) -> Result<S::Ok, S::Error> {
        t.map(|t| (t.timestamp(), t.timestamp_subsec_nanos()))
            .serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<DateTime<Utc>>, D::Error> {
        let v: Option<(i64, u32)> = Deserialize::deserialize(d)?;
        match v {
            None => Ok(None),
            Some((secs, nanos)) => DateTime::from_timestamp(secs, nanos)
                .map(Some)
                .ok_or_else(|| serde::de::Error::custom("time out of range")),
        }
    }
}

/// `Arc<str>` read straight from the decoder's text: one allocation, where a `String`
/// converted after would be two (the row's id, shared with the watcher's table).
///
/// Every text the catalog holds is asked for as a `string`, never a `str`: postcard, reading
/// from a file, hands a `str` out of its scratch space for good (it may be borrowed for the
/// whole decode) and a `string` from its start, reused. Issue 10: asked for as `str`, each
/// row's id, cwd, model and badges took ~150 bytes of the scratch that stayed resident
/// until the section was decoded, ~15 MB at 100k rows, at the warm start's peak
/// (`catalog::stream`'s test `rows_decode_through_a_scratch_of_one_field`).
pub mod arc_str {
    use super::*;
    use std::sync::Arc;

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Arc<str>, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = Arc<str>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a string")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Arc<str>, E> {
                Ok(Arc::from(v))
            }
        }
        d.deserialize_string(V)
    }
}

/// `PathBuf` as its bytes.
pub mod path_bytes {
    use super::*;
    use std::os::unix::ffi::{OsStrExt, OsStringExt};
    use std::path::PathBuf;

    pub fn serialize<S: Serializer>(p: &std::path::Path, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bytes(p.as_os_str().as_bytes())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<PathBuf, D::Error> {
        let v: serde_bytes_vec::Bytes = Deserialize::deserialize(d)?;
        Ok(PathBuf::from(std::ffi::OsString::from_vec(v.0)))
    }

    /// A byte buffer that accepts both a byte string and a sequence (self-describing formats
    /// such as JSON give the latter).
    mod serde_bytes_vec {
        use serde::de::{Deserialize, Deserializer, SeqAccess, Visitor};

        pub struct Bytes(pub Vec<u8>);

        impl<'de> Deserialize<'de> for Bytes {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Bytes, D::Error> {
                struct V;
                impl<'de> Visitor<'de> for V {
                    type Value = Bytes;
                    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                        f.write_str("bytes")
                    }
                    fn visit_bytes<E>(self, v: &[u8]) -> Result<Bytes, E> {
                        Ok(Bytes(v.to_vec()))
                    }
                    fn visit_byte_buf<E>(self, v: Vec<u8>) -> Result<Bytes, E> {
                        Ok(Bytes(v))
                    }
                    fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<Bytes, A::Error> {
                        let mut out = Vec::new();
                        while let Some(b) = a.next_element()? {
                            out.push(b);
                        }
                        Ok(Bytes(out))
                    }
                }
                d.deserialize_byte_buf(V)
            }
        }
    }
}
