//! The context-window view (codex.md section 4, DECIDED: the last compaction's
//! `replacement_history`, or its summary, followed by the items after it), `show --last N`
//! read from the end of the file in growing steps, and the raw records.

use std::path::Path;

use super::read::{self, Rec};
use super::record as r;
use super::transcript::{self, Ctx};
use crate::model::{Entry, Message, Role};
use crate::store::lines::{self, RawLine};

/// What Codex resends besides the rollout's items.
pub const SYSTEM_NOTE: &str = "Codex also sends its base instructions and tool definitions \
     (recorded in session_meta, not shown) and rebuilds the environment context on resume";

/// The window's messages.
pub fn window(
    recs: &[Rec],
    copied: Option<(usize, usize)>,
    parent: Option<String>,
) -> Vec<Message> {
    let last = recs.iter().rposition(|rec| r::kind(&rec.v) == "compacted");
    let Some(k) = last else {
        let cx = Ctx {
            copied,
            parent,
            offset: 0,
        };
        return crate::store::entries::window_messages(transcript::entries(recs, &cx, 0));
    };
    let pl = r::payload(&recs[k].v);
    let mut out = match pl.get("replacement_history").and_then(|h| h.as_array()) {
        Some(items) => transcript::replacement(items),
        None => {
            let mut m = Message::inserted(Role::User, r::s(pl, "message").unwrap_or(""));
            m.timestamp = r::timestamp(&recs[k].v);
            vec![m]
        }
    };
    let before = transcript::entries(&recs[..k], &Ctx::default(), 0)
        .iter()
        .filter(|e| matches!(e, Entry::Message(_)))
        .count();
    let cx = Ctx {
        copied,
        parent,
        offset: k + 1,
    };
    out.extend(crate::store::entries::window_messages(transcript::entries(
        &recs[k + 1..],
        &cx,
        before,
    )));
    out
}

/// The last `n` rounds of a plain rollout read from the end: `(entries, rounds in what was
/// read, first kept round, whole file read)`.
pub fn last_rounds(
    path: &Path,
    n: usize,
    parent: Option<String>,
) -> std::io::Result<(Vec<Entry>, usize, usize, bool)> {
    crate::store::rounds_from_end(n, |bytes| {
        let p = read::read_tail(path, bytes)?;
        let cx = Ctx {
            parent: parent.clone(),
            ..Ctx::default()
        };
        Ok((transcript::entries(&p.recs, &cx, 0), p.from == 0))
    })
}

/// The stored records, pretty-printed where they are JSON (a `.zst` decompressed).
pub fn raw(path: &Path) -> std::io::Result<String> {
    let f = read::open(path)?;
    let mut out = Vec::new();
    let each = |line: RawLine<'_>, out: &mut Vec<String>| match line {
        RawLine::TooLong { len, .. } => out.push(format!(
            "[line of {len} bytes, longer than 64 MiB, not shown]"
        )),
        RawLine::Line { bytes, .. } => {
            let text = String::from_utf8_lossy(bytes);
            if text.trim().is_empty() {
                return;
            }
            match crate::store::json_first::parse(text.as_bytes()) {
                Some(v) => out.push(serde_json::to_string_pretty(&v).unwrap_or(text.into_owned())),
                None => out.push(text.into_owned()),
            }
        }
    };
    if read::is_zst(path) {
        let dec = zstd::stream::read::Decoder::new(f)?;
        let r = std::io::Read::take(dec, read::MAX_INFLATED);
        lines::for_each_line(r, read::MAX_LINE, |l| each(l, &mut out))?;
    } else {
        lines::for_each_line(f, read::MAX_LINE, |l| each(l, &mut out))?;
    }
    Ok(out.join("\n"))
}
