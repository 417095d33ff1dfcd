//! `list --json`'s lines written straight from a row: the bytes of
//! `json_line(&row.to_json())` without building a `serde_json::Value` per row (a map, a copy
//! of every string, then an escaped copy of the whole line). At 10k rows that was a third of
//! the warm `spool list --json --all` (issue 10). `json_line` stays the contract; a test
//! holds the two byte-identical.

use std::borrow::Borrow;
use std::io::Write;

use crate::catalog::view::{RowView, Stamp};
use crate::model::SessionSummary;
use crate::model::session::rfc3339;

/// What a line prints, borrowed from a row or from the catalog's bytes (`catalog::view`):
/// both go through the one writer, so they cannot print differently.
pub struct Fields<'a> {
    pub store: crate::model::StoreKind,
    pub id: &'a str,
    pub title: &'a str,
    pub summary: &'a str,
    pub cwd: Option<&'a str>,
    pub created_at: Option<chrono::DateTime<chrono::Utc>>,
    pub updated_at: Option<chrono::DateTime<chrono::Utc>>,
    pub messages: u64,
    pub pinned: bool,
    pub unread: bool,
    pub archived: bool,
    pub forked_from: Option<&'a str>,
    /// The path as `Path::to_string_lossy` gives it.
    pub path: std::borrow::Cow<'a, str>,
    pub error: Option<&'a str>,
    pub ended: Option<crate::model::Ended>,
}

impl<'a> Fields<'a> {
    pub fn of(r: &'a SessionSummary) -> Fields<'a> {
        Fields {
            store: r.store,
            id: &r.id,
            title: r.title(),
            summary: r.summary(),
            cwd: r.cwd.as_deref(),
            created_at: r.created_at,
            updated_at: r.updated_at,
            messages: r.messages,
            pinned: r.pinned(),
            unread: r.unread,
            archived: r.archived,
            forked_from: r.forked_from(),
            // Owned: a row rebuilds its path when asked (`SessionSummary::path`).
            path: lossy(r.path().as_os_str().as_encoded_bytes())
                .into_owned()
                .into(),
            error: r.error(),
            ended: r.ended,
        }
    }
}

impl<'a> Fields<'a> {
    /// A row read in place from the catalog (`catalog::view`), its times checked there.
    pub fn of_view(r: &RowView<'a>) -> Fields<'a> {
        let at = |t: Stamp| t.and_then(|(s, n)| chrono::DateTime::from_timestamp(s, n));
        Fields {
            store: r.store,
            id: r.id,
            title: r.title,
            summary: r.summary,
            cwd: r.cwd,
            created_at: at(r.created_at),
            updated_at: at(r.updated_at),
            messages: r.messages,
            pinned: r.pinned(),
            unread: r.unread,
            archived: r.archived,
            forked_from: r.forked_from,
            path: lossy(r.path),
            error: r.error,
            ended: r.ended,
        }
    }
}

/// `String::from_utf8_lossy` (what `Path::to_string_lossy` is on Unix), with the check
/// of a valid path done by `from_utf8` alone: the lossy walk over its chunks was a tenth
/// of writing the lines.
fn lossy(b: &[u8]) -> std::borrow::Cow<'_, str> {
    match std::str::from_utf8(b) {
        Ok(s) => s.into(),
        Err(_) => String::from_utf8_lossy(b),
    }
}

/// Append `r`'s JSON line (no newline) to `out`.
pub fn row(out: &mut Vec<u8>, r: &SessionSummary) {
    fields(out, &Fields::of(r));
}

/// Append the JSON line of `r`'s fields (no newline) to `out`.
pub fn fields(out: &mut Vec<u8>, r: &Fields) {
    out.extend_from_slice(b"{\"ref\":\"");
    // `FORMAT:ID`: the format is a fixed lowercase word, only the id needs escaping.
    out.extend_from_slice(r.store.as_str().as_bytes());
    out.push(b':');
    escaped(out, r.id);
    out.extend_from_slice(b"\",\"format\":\"");
    out.extend_from_slice(r.store.as_str().as_bytes());
    out.extend_from_slice(b"\",\"id\":");
    string(out, r.id);
    out.extend_from_slice(b",\"title\":");
    string(out, r.title);
    out.extend_from_slice(b",\"summary\":");
    string(out, r.summary);
    out.extend_from_slice(b",\"cwd\":");
    opt(out, r.cwd);
    out.extend_from_slice(b",\"created_at\":");
    time(out, r.created_at);
    out.extend_from_slice(b",\"updated_at\":");
    time(out, r.updated_at);
    // Writing to a Vec cannot fail.
    let _ = write!(out, ",\"messages\":{}", r.messages);
    out.extend_from_slice(b",\"pinned\":");
    boolean(out, r.pinned);
    out.extend_from_slice(b",\"unread\":");
    boolean(out, r.unread);
    out.extend_from_slice(b",\"archived\":");
    boolean(out, r.archived);
    out.extend_from_slice(b",\"forked_from\":");
    opt(out, r.forked_from);
    out.extend_from_slice(b",\"path\":");
    string(out, &r.path);
    out.extend_from_slice(b",\"error\":");
    opt(out, r.error);
    out.extend_from_slice(b",\"ended\":");
    opt(out, r.ended.map(|e| e.as_str()));
    out.push(b'}');
}

/// Rows formatted per piece: a piece's lines are one write, and a few pieces in flight per
/// thread bound what the lines hold at once (up to four a thread: one formatted, two
/// waiting, one written), about 0.6 MB a piece.
const PIECE: usize = 1024;

/// Room for one line in a new piece's buffer. A Codex row's line is ~560 bytes (its
/// rollout's path alone ~130): at 512 every piece's buffer outgrew its room and doubled, so
/// at 100k rows the lines in flight held 17 MB, not 9 (issue 10: a warm `spool list` at its
/// peak).
const LINE_ROOM: usize = 640;

/// Every row's line (each ending in a newline) to `out`, in order: the bytes of `row` for
/// one row after another. The rows are formatted a piece at a time on the machine's cores
/// while this thread writes the pieces in order: on one thread the lines were the last
/// ~100 ms of a warm `spool list --json --all` at 100k rows, with the other core idle
/// (issue 10).
pub fn lines<R: Borrow<SessionSummary> + Sync>(
    out: &mut impl Write,
    rows: &[R],
) -> std::io::Result<()> {
    lines_of(out, rows, |buf, r| row(buf, r.borrow()))
}

/// `lines` for rows of any kind, each written by `line` (no newline).
pub fn lines_of<R: Sync>(
    out: &mut impl Write,
    rows: &[R],
    line: impl Fn(&mut Vec<u8>, &R) + Sync,
) -> std::io::Result<()> {
    let threads = crate::store::cores().map_or(1, |n| n.get().min(4));
    lines_in(out, rows, PIECE, threads, &line)
}

/// `lines_of` with the piece size and the number of formatting threads given (tests).
fn lines_in<R: Sync>(
    out: &mut impl Write,
    rows: &[R],
    piece: usize,
    threads: usize,
    line: &(impl Fn(&mut Vec<u8>, &R) + Sync),
) -> std::io::Result<()> {
    let pieces: Vec<&[R]> = rows.chunks(piece.max(1)).collect();
    let format = |buf: &mut Vec<u8>, p: &[R]| {
        buf.clear();
        for r in p {
            line(buf, r);
            buf.push(b'\n');
        }
    };
    if threads < 2 || pieces.len() < 2 {
        let mut buf = Vec::new();
        for p in pieces {
            format(&mut buf, p);
            out.write_all(&buf)?;
        }
        return Ok(());
    }
    std::thread::scope(|scope| {
        // Per thread: pieces formatted (at most two waiting), and buffers written, handed back
        // for reuse (a fresh megabyte buffer is a fresh mapping: page faults on every piece).
        let mut done = Vec::with_capacity(threads);
        let mut back = Vec::with_capacity(threads);
        for t in 0..threads {
            let (tx, rx) = std::sync::mpsc::sync_channel::<Vec<u8>>(2);
            let (give, take) = std::sync::mpsc::channel::<Vec<u8>>();
            let pieces = &pieces;
            scope.spawn(move || {
                for p in pieces.iter().skip(t).step_by(threads) {
                    // A new buffer starts at about a piece's size (a line is a few hundred
                    // bytes), not growing by doubling: each step past the allocator's mmap
                    // threshold was a fresh mapping and a copy.
                    let mut buf = take
                        .try_recv()
                        .unwrap_or_else(|_| Vec::with_capacity(p.len() * LINE_ROOM));
                    format(&mut buf, p);
                    // The writer stopped (a write failed): nothing more is wanted.
                    if tx.send(buf).is_err() {
                        return;
                    }
                }
            });
            done.push(rx);
            back.push(give);
        }
        for i in 0..pieces.len() {
            let buf = done[i % threads]
                .recv()
                .map_err(|_| std::io::Error::other("a thread formatting JSON lines stopped"))?;
            out.write_all(&buf)?;
            let _ = back[i % threads].send(buf);
        }
        Ok(())
    })
}

/// `rfc3339(t)` as a JSON string (or `null`), written in place: chrono's formatter and the
/// `String` it returns cost more than the rest of the row (two per row, 200k at 100k rows).
/// Years outside 0..=9999, which chrono writes with a sign, go through `rfc3339` itself.
fn time(out: &mut Vec<u8>, t: Option<chrono::DateTime<chrono::Utc>>) {
    use chrono::{Datelike, Timelike};
    let Some(t) = t else {
        out.extend_from_slice(b"null");
        return;
    };
    if !(0..=9999).contains(&t.year()) {
        return string(out, &rfc3339(t));
    }
    let digits = |out: &mut Vec<u8>, v: u32, n: u32| {
        for k in (0..n).rev() {
            out.push(b'0' + (v / 10u32.pow(k) % 10) as u8);
        }
    };
    out.push(b'"');
    digits(out, t.year() as u32, 4);
    out.push(b'-');
    digits(out, t.month(), 2);
    out.push(b'-');
    digits(out, t.day(), 2);
    out.push(b'T');
    digits(out, t.hour(), 2);
    out.push(b':');
    digits(out, t.minute(), 2);
    out.push(b':');
    // A leap second is nanoseconds past 1e9, written as second 60 (as chrono does).
    let (ns, leap) = (
        t.nanosecond() % 1_000_000_000,
        t.nanosecond() >= 1_000_000_000,
    );
    digits(out, t.second() + u32::from(leap), 2);
    // AutoSi: no fraction, or 3, 6 or 9 digits, the fewest that hold it exactly.
    if ns != 0 {
        out.push(b'.');
        if ns % 1_000_000 == 0 {
            digits(out, ns / 1_000_000, 3);
        } else if ns % 1_000 == 0 {
            digits(out, ns / 1_000, 6);
        } else {
            digits(out, ns, 9);
        }
    }
    out.extend_from_slice(b"Z\"");
}

fn boolean(out: &mut Vec<u8>, b: bool) {
    out.extend_from_slice(if b { b"true" } else { b"false" });
}

fn opt(out: &mut Vec<u8>, s: Option<&str>) {
    match s {
        Some(s) => string(out, s),
        None => out.extend_from_slice(b"null"),
    }
}

fn string(out: &mut Vec<u8>, s: &str) {
    out.push(b'"');
    escaped(out, s);
    out.push(b'"');
}

const HEX: &[u8; 16] = b"0123456789abcdef";

/// `\u` and four lowercase hex digits, as both serde_json and `escape_json_text` write them.
fn unicode(out: &mut Vec<u8>, c: u32) {
    out.extend_from_slice(b"\\u");
    for shift in [12, 8, 4, 0] {
        out.push(HEX[(c >> shift) as usize & 0xf]);
    }
}

/// What serde_json escapes (quote, backslash, controls below 0x20, with its short forms),
/// then what `escape_json_text` escapes (DEL, C1 controls, zero-width and bidi characters).
/// Byte-wise: plain ASCII and the continuation bytes of any character are skipped without
/// decoding, and only a lead byte that can start a risky character (U+0080..U+009F, U+2xxx,
/// U+FEFF) is decoded; walking `char_indices` was a tenth of the warm `list --json`.
fn escaped(out: &mut Vec<u8>, s: &str) {
    let bytes = s.as_bytes();
    let (mut start, mut i) = (0, 0);
    while i < bytes.len() {
        // Eight plain bytes at a time: titles and paths are mostly plain ASCII, and this
        // byte loop was still a twentieth of a warm `list --json --all` at 100k.
        if let Some(w) = bytes.get(i..i + 8)
            && plain8(u64::from_le_bytes(w.try_into().unwrap_or_default()))
        {
            i += 8;
            continue;
        }
        let b = bytes[i];
        let (c, len) = match b {
            b'"' | b'\\' | 0..0x20 | 0x7f => (char::from(b), 1),
            0xc2 | 0xe2 | 0xef => match s[i..].chars().next() {
                Some(c) if crate::cli::table::risky(c) => (c, c.len_utf8()),
                _ => {
                    i += 1;
                    continue;
                }
            },
            _ => {
                i += 1;
                continue;
            }
        };
        out.extend_from_slice(&bytes[start..i]);
        match c {
            '"' => out.extend_from_slice(b"\\\""),
            '\\' => out.extend_from_slice(b"\\\\"),
            '\u{8}' => out.extend_from_slice(b"\\b"),
            '\u{c}' => out.extend_from_slice(b"\\f"),
            '\n' => out.extend_from_slice(b"\\n"),
            '\r' => out.extend_from_slice(b"\\r"),
            '\t' => out.extend_from_slice(b"\\t"),
            c => unicode(out, c as u32),
        }
        i += len;
        start = i;
    }
    out.extend_from_slice(&bytes[start..]);
}

/// Whether none of the eight bytes in `w` needs a look from `escaped`: each is printable
/// ASCII (0x20..0x7e) other than `"` and `\\`. Any other byte (a control, DEL, or any byte
/// of a non-ASCII character) sends the word to the byte loop.
fn plain8(w: u64) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    // A byte's high bit set in `v - ONES` and clear in `v` exactly when some byte is zero
    // (the first such byte; the answer as a whole is exact).
    let zero = |v: u64| v.wrapping_sub(ONES) & !v & HIGH != 0;
    // Below 0x20: the same test against 0x20 (exact for any bound up to 0x80).
    let below = w.wrapping_sub(ONES * 0x20) & !w & HIGH != 0;
    // 0x7f or above: `b + 1` reaches 0x80 for 0x7f, and the high bit is set from 0x80 (a
    // carry out of 0xff only reaches a byte after one already caught).
    let high = (w | w.wrapping_add(ONES)) & HIGH != 0;
    !(below || high || zero(w ^ (ONES * u64::from(b'"'))) || zero(w ^ (ONES * u64::from(b'\\'))))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Ended, StoreKind};

    fn same(r: &SessionSummary) {
        let mut fast = Vec::new();
        row(&mut fast, r);
        let slow = crate::cli::table::json_line(&r.to_json());
        assert_eq!(String::from_utf8(fast).unwrap(), slow);
    }

    #[test]
    fn lines_are_byte_identical_to_the_value_path() {
        let mut r = SessionSummary::new(StoreKind::Loop, "a\"b\\c", "/p/x\u{1b}y");
        same(&r);
        r.set_title("t\u{0}\u{1}\u{8}\u{9}\n\u{b}\u{c}\r\u{1f} \u{7f}\u{80}\u{9b}\u{9f}\u{a0}");
        r.set_summary("z\u{200b}\u{200f}\u{2010}\u{2028}\u{2029}\u{202a}\u{202e}\u{2060}\u{206f}\u{feff}é日本😀");
        r.cwd = Some("/src/日本語".into());
        r.created_at = crate::model::session::parse_time("2026-03-14T09:15:02Z");
        r.updated_at = crate::model::session::parse_time("2026-03-14T09:15:02.123456Z");
        r.messages = 18_446_744_073_709_551_615;
        r.pinned_flag = true;
        r.unread = true;
        r.archived = true;
        r.set_forked_from(Some("loop:abc".into()));
        r.set_error(Some("bad \"line\"\u{202e}".into()));
        same(&r);
        for e in Ended::ALL {
            r.ended = Some(e);
            same(&r);
        }
        for k in StoreKind::ALL {
            same(&SessionSummary::new(k, "", ""));
        }
    }

    /// The lines written by several threads a piece at a time are the rows' lines one after
    /// another, in order, for every split of the rows into pieces and threads, and each row
    /// is on its own line (the rows differ, so a piece out of place or repeated shows).
    #[test]
    fn lines_from_several_threads_are_the_rows_lines_in_order() {
        let rows: Vec<SessionSummary> = (0..1000)
            .map(|i| {
                let mut r = SessionSummary::new(StoreKind::ALL[i % 6], format!("id{i}"), "/p");
                r.set_title(format!("title {i} \u{202e}"));
                r.messages = i as u64;
                r
            })
            .collect();
        for (n, piece, threads) in [
            (1000, 7, 2),
            (1000, 1, 3),
            (1000, 999, 2),
            (1000, 2048, 4),
            (1, 7, 2),
            (0, 7, 2),
            (1000, 13, 1),
        ] {
            let mut serial = Vec::new();
            for r in &rows[..n] {
                row(&mut serial, r);
                serial.push(b'\n');
            }
            let mut out = Vec::new();
            lines_in(&mut out, &rows[..n], piece, threads, &|b, r| row(b, r)).unwrap();
            let what = format!("{n} rows, {piece} a piece, {threads} threads");
            assert!(out == serial, "{what}");
            assert_eq!(out.iter().filter(|&&b| b == b'\n').count(), n, "{what}");
        }
    }

    /// A typical Codex row's line (a dated rollout path, a fork's parent, a prompt for a
    /// title: ~580 bytes, the 100k corpus's mean is 559) fits the room a piece's buffer
    /// gives a line, so the buffer does not double.
    #[test]
    fn a_codex_line_fits_its_room() {
        let id = "019d4490-f8d0-7368-bffd-f3896416e10c";
        let path = format!(
            "/home/someone/.codex/sessions/2026/03/31/rollout-2026-03-31T16-44-04-{id}.jsonl"
        );
        let mut r = SessionSummary::new(StoreKind::Codex, id, path);
        r.set_title("what does benches/test_fixture.rs do? (fork)");
        r.set_summary("Column mock handler span fixture query.");
        r.cwd = Some("/home/someone/projects/web-ui".into());
        r.created_at = crate::model::session::parse_time("2026-03-31T15:44:04.816Z");
        r.updated_at = crate::model::session::parse_time("2026-03-31T16:21:35.518Z");
        r.messages = 10;
        r.set_forked_from(Some(format!("codex:{id}")));
        r.ended = Some(Ended::Done);
        let mut out = Vec::new();
        row(&mut out, &r);
        assert!((560..LINE_ROOM).contains(&out.len()), "{} bytes", out.len());
    }

    /// A write that fails stops the threads and is the error returned (no hang, no panic).
    #[test]
    fn a_failed_write_stops_the_lines() {
        struct Fails(usize);
        impl Write for Fails {
            fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
                if self.0 == 0 {
                    return Err(std::io::Error::other("full"));
                }
                self.0 -= 1;
                Ok(b.len())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let rows: Vec<SessionSummary> = (0..500)
            .map(|i| SessionSummary::new(StoreKind::Loop, format!("{i}"), "/p"))
            .collect();
        let e = lines_in(&mut Fails(3), &rows, 5, 2, &|b, r| row(b, r)).unwrap_err();
        assert_eq!(e.to_string(), "full");
    }

    #[test]
    fn times_are_written_as_rfc3339_writes_them() {
        let mut r = SessionSummary::new(StoreKind::Loop, "x", "/p");
        let at = |s, ns| chrono::DateTime::from_timestamp(s, ns);
        // Every fraction width, a leap second, the edges of 4-digit years and beyond them.
        for (s, ns) in [
            (0, 0),
            (1_773_480_000, 0),
            (1_773_480_000, 870_000_000),
            (1_773_480_000, 1_000),
            (1_773_480_000, 123_456_000),
            (1_773_480_000, 1),
            (1_773_480_000, 999_999_999),
            (1_773_480_059, 1_500_000_000),
            (-62_167_219_200, 0),
            (-62_167_219_201, 5),
            (253_402_300_799, 10),
            (253_402_300_800, 0),
            (-1, 0),
        ] {
            r.created_at = at(s, ns);
            r.updated_at = at(s, ns).map(|t| t + chrono::TimeDelta::nanoseconds(7));
            same(&r);
        }
    }

    #[test]
    fn a_special_byte_is_escaped_in_every_lane_of_a_word() {
        // Each byte `plain8` must refuse, alone in plain ASCII at every offset of two words,
        // so a lane the word test missed would be copied through unescaped.
        let mut r = SessionSummary::new(StoreKind::Loom, "x", "/p");
        for c in (0u32..0x20)
            .chain([
                0x22, 0x5c, 0x7e, 0x7f, 0x80, 0x9b, 0xe9, 0x200b, 0x202e, 0xfeff,
            ])
            .filter_map(char::from_u32)
        {
            for at in 0..17 {
                r.set_title(format!("{}{c}{}", "a".repeat(at), "b".repeat(17 - at)));
                same(&r);
            }
        }
        let w = |b: &[u8; 8]| plain8(u64::from_le_bytes(*b));
        assert!(w(b"plain !~"));
        for bad in [0u8, 0x1f, b'"', b'\\', 0x7f, 0x80, 0xc2, 0xff] {
            for lane in 0..8 {
                let mut b = *b"abcdefgh";
                b[lane] = bad;
                assert!(!w(&b), "{bad:#x} in lane {lane}");
            }
        }
    }

    #[test]
    fn every_char_escapes_as_the_value_path_does() {
        // Every char of the BMP's first 0x3000 and the specials: one row each would be slow,
        // so each goes in a title of its own line, compared in bulk.
        let mut r = SessionSummary::new(StoreKind::Loom, "x", "/p");
        for chunk in (0u32..0x3000)
            .chain(0xfe00..0x10000)
            .collect::<Vec<_>>()
            .chunks(64)
        {
            r.set_title(
                chunk
                    .iter()
                    .filter_map(|&c| char::from_u32(c))
                    .collect::<String>(),
            );
            same(&r);
        }
    }
}
