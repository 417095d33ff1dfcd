//! A decoded row's texts (title, summary, first prompt, path, badges) held in one buffer per
//! thread until the row is built from them, instead of a `String` each that the row copies
//! and frees at once.
//!
//! Issue 10: a warm start decodes every row of the catalog. With a `String` a field, each
//! row was six to ten allocations freed again within microseconds; at 100k rows glibc's
//! bookkeeping for them (`malloc_consolidate`, `unlink_chunk`, `_int_free`) was about a
//! quarter of the decode's CPU, on the two cores that also run the stores' stat passes
//! (measured before spool moved to jemalloc, `heap`; the allocations saved are saved there too).
//!
//! A row's serde form is decoded and turned into the row at once (`#[serde(from)]`), so the
//! texts of one row are the buffer's last bytes when the row is built (`take`), and are cut
//! off again after. Any serde format works: the texts are appended from whatever the
//! decoder gives (`visit_str`, a byte string, or a sequence of bytes for a path in JSON).

use std::cell::RefCell;

use serde::de::{Deserialize, Deserializer, Error, SeqAccess, Visitor};

thread_local! {
    /// The texts decoded on this thread and not yet taken, end to end.
    static BYTES: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
    /// The spans of the lists' items (`List`), in order.
    static ITEMS: RefCell<Vec<Span>> = const { RefCell::new(Vec::new()) };
}

/// Past this much room, the buffers are let go once emptied, not kept for the next row
/// (a thread that once decoded a huge row does not hold its room for good).
const KEEP: usize = 64 << 10;

/// Where some bytes are in this thread's buffer.
#[derive(Clone, Copy, Debug)]
struct Span {
    at: usize,
    len: usize,
}

fn push(b: &[u8]) -> Span {
    BYTES.with_borrow_mut(|buf| {
        let at = buf.len();
        buf.extend_from_slice(b);
        Span { at, len: b.len() }
    })
}

/// A UTF-8 text in the buffer.
#[derive(Clone, Copy, Debug)]
pub struct Text(Span);

/// A path's bytes in the buffer (any bytes: a path need not be UTF-8).
#[derive(Clone, Copy, Debug)]
pub struct Bytes(Span);

/// A sequence of texts in the buffer (a row's badges).
#[derive(Clone, Copy, Debug)]
pub struct List {
    first: usize,
    n: usize,
}

impl<'de> Deserialize<'de> for Text {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Text, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Text;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a string")
            }
            fn visit_str<E: Error>(self, v: &str) -> Result<Text, E> {
                Ok(Text(push(v.as_bytes())))
            }
        }
        // `string`, not `str`: see `super::wire::arc_str`.
        d.deserialize_string(V)
    }
}

impl<'de> Deserialize<'de> for Bytes {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Bytes, D::Error> {
        let at = BYTES.with_borrow(Vec::len);
        let sink = |b: &[u8]| BYTES.with_borrow_mut(|buf| buf.extend_from_slice(b));
        d.deserialize_byte_buf(super::wire::path_bytes::ByteSink(sink))?;
        let len = BYTES.with_borrow(Vec::len) - at;
        Ok(Bytes(Span { at, len }))
    }
}

impl<'de> Deserialize<'de> for List {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<List, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = List;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a list of strings")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<List, A::Error> {
                let first = ITEMS.with_borrow(Vec::len);
                let mut n = 0;
                while let Some(Text(s)) = a.next_element::<Text>()? {
                    ITEMS.with_borrow_mut(|items| items.push(s));
                    n += 1;
                }
                Ok(List { first, n })
            }
        }
        d.deserialize_seq(V)
    }
}

/// One row's texts, read back while it is built (`take`).
pub struct Held<'a> {
    bytes: &'a [u8],
    items: &'a [Span],
}

impl<'a> Held<'a> {
    pub fn bytes(&self, b: Bytes) -> &'a [u8] {
        &self.bytes[b.0.at..b.0.at + b.0.len]
    }

    pub fn text(&self, t: Text) -> &'a str {
        let b = &self.bytes[t.0.at..t.0.at + t.0.len];
        // SAFETY: a `Text`'s span holds the bytes of the one `&str` it was made from
        // (`visit_str`), and the buffer is only ever appended to or cut at a span's start.
        unsafe { std::str::from_utf8_unchecked(b) }
    }

    /// A list's texts, in order.
    pub fn list(&self, l: List) -> Vec<&'a str> {
        let items = &self.items[l.first..l.first + l.n];
        items.iter().map(|&s| self.text(Text(s))).collect()
    }
}

/// Build a row from its texts, then drop them and everything decoded after the first of
/// them: a row's serde form is decoded and turned into the row before the next is decoded,
/// so nothing after belongs to another row.
pub fn take<R>(texts: [Text; 3], path: Bytes, list: List, build: impl FnOnce(&Held<'_>) -> R) -> R {
    // Out of the thread-locals while `build` runs: a row built inside `build` (none is)
    // would find them empty, never borrowed twice.
    let mut bytes = BYTES.take();
    let mut items = ITEMS.take();
    // Fields may come in any order (a JSON map's): cut at the earliest text, the list's
    // first item's included.
    let first_item = (list.n > 0).then(|| items.get(list.first).map(|s| s.at));
    let from = (texts.iter().map(|t| t.0.at))
        .chain(first_item.flatten())
        .fold(path.0.at, usize::min);
    let out = build(&Held {
        bytes: &bytes,
        items: &items,
    });
    bytes.truncate(from);
    items.truncate(list.first);
    put_back(bytes, items);
    out
}

fn put_back(mut bytes: Vec<u8>, mut items: Vec<Span>) {
    if bytes.is_empty() && bytes.capacity() > KEEP {
        bytes = Vec::new();
    }
    if items.is_empty() && items.capacity() * size_of::<Span>() > KEEP {
        items = Vec::new();
    }
    BYTES.set(bytes);
    ITEMS.set(items);
}

/// Drop whatever this thread decoded and did not take: the texts of a row whose decoding
/// failed half way (a damaged catalog), which no `take` cuts off. Called when a run of
/// rows ends, whether or not it failed.
pub fn clear() {
    let (mut bytes, mut items) = (BYTES.take(), ITEMS.take());
    bytes.clear();
    items.clear();
    put_back(bytes, items);
}

#[cfg(test)]
#[path = "wire_scratch_tests.rs"]
mod tests;
