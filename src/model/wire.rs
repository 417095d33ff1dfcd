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
        let mut v = Vec::new();
        d.deserialize_byte_buf(ByteSink(|b: &[u8]| v.extend_from_slice(b)))?;
        Ok(PathBuf::from(std::ffi::OsString::from_vec(v)))
    }

    /// A byte string given to its closure, piece by piece: whole as the decoder has it, or
    /// a byte at a time from a sequence (self-describing formats such as JSON give that).
    /// Decoded with `deserialize_byte_buf`, which postcard reads through its reused scratch
    /// (see `arc_str`).
    pub struct ByteSink<F>(pub F);

    impl<'de, F: FnMut(&[u8])> serde::de::Visitor<'de> for ByteSink<F> {
        type Value = ();
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("bytes")
        }
        fn visit_bytes<E>(mut self, v: &[u8]) -> Result<(), E> {
            (self.0)(v);
            Ok(())
        }
        fn visit_seq<A: serde::de::SeqAccess<'de>>(mut self, mut a: A) -> Result<(), A::Error> {
            while let Some(b) = a.next_element::<u8>()? {
                (self.0)(&[b]);
            }
            Ok(())
        }
    }
}
