//! Discovery (section 1) and the listing row (sections 3 and 7): ids, the DECIDED sort key,
//! derived title/summary/times, badges, and the sidecar's pin/archive/title/unread state.

use std::path::Path;
use std::time::SystemTime;

use chrono::{DateTime, Local, NaiveDateTime, TimeZone, Utc};

use super::log::{Facts, Log};
use crate::model::{SessionSummary, StoreKind, parse_time};
use crate::store::Candidate;
use crate::store::sidecar::{self, Sidecar};
use crate::text::{collapse_whitespace, plural, truncate_chars};

/// Whether `id` is one loom creates: `^[0-9]{8}-[0-9]{6}(-[1-9][0-9]?)?$`.
pub fn is_standard_id(id: &str) -> bool {
    let b = id.as_bytes();
    let digits = |r: std::ops::Range<usize>| b[r].iter().all(u8::is_ascii_digit);
    if b.len() < 15 || !digits(0..8) || b[8] != b'-' || !digits(9..15) {
        return false;
    }
    match &b[15..] {
        [] => true,
        [b'-', d] => (b'1'..=b'9').contains(d),
        [b'-', d, e] => (b'1'..=b'9').contains(d) && e.is_ascii_digit(),
        _ => false,
    }
}

/// The DECIDED sort key `(id[0..15], numeric suffix or 0)`; `None` for non-standard ids.
pub fn sort_key(id: &str) -> Option<(&str, u32)> {
    if !is_standard_id(id) {
        return None;
    }
    let suffix = id.get(16..).and_then(|s| s.parse().ok()).unwrap_or(0);
    Some((&id[..15], suffix))
}

/// Regular `*.jsonl` files directly in `sessions/` (no directories, symlinks or dot-files),
/// newest first by the DECIDED key, ties and non-standard ids by id.
pub fn discover(sessions: &Path) -> Vec<Candidate> {
    // The ids in one buffer, keyed by one number (below) and their place in it: the sort
    // moves 24 bytes a log, and no `String` or `PathBuf` is made before the order is known.
    let mut ids = String::new();
    let mut keyed: Vec<(u64, usize, usize)> = Vec::new();
    let listed = logs(sessions, |id| {
        let at = ids.len();
        ids.push_str(id);
        keyed.push((rank(id), at, ids.len()));
    });
    if let Err(e) = listed {
        return unlisted(sessions, e);
    }
    // Standard ids first, then newest key, then id. File names are unique, so the order is
    // total and an unstable sort gives the one a stable sort gave. The key is one number:
    // a cached key of two `String`s a log, copied and freed, cost more than the directory
    // read of a cold 100k start (33k logs) before its first rows.
    keyed.sort_unstable_by(|&(ra, a, ae), &(rb, b, be)| {
        rb.cmp(&ra).then_with(|| ids[b..be].cmp(&ids[a..ae]))
    });
    let mut out = Vec::with_capacity(keyed.len());
    out.extend(
        keyed
            .iter()
            .map(|&(_, a, e)| candidate(sessions, &ids[a..e])),
    );
    out
}

/// `sort_key(id)` as one number in the same order, standard ids above all others (`0`):
/// the key's 14 digits, then its suffix (below 100).
fn rank(id: &str) -> u64 {
    let Some((stamp, n)) = sort_key(id) else {
        return 0;
    };
    let digits = stamp
        .bytes()
        .filter(u8::is_ascii_digit)
        .fold(0u64, |v, d| v * 10 + u64::from(d - b'0'));
    (1 << 63) | (digits * 100 + u64::from(n))
}

/// `discover`'s candidates in directory order: what the stat pass keys (any order), without
/// a sort (issue 10: at 100k, a warm check sorted 33k logs it then looked up by id).
pub fn discover_unordered(sessions: &Path) -> Vec<Candidate> {
    let mut out = Vec::new();
    match logs(sessions, |id| out.push(candidate(sessions, id))) {
        Ok(()) => out,
        Err(e) => unlisted(sessions, e),
    }
}

/// Call `f` with the id of every log in `sessions/`, in directory order: a regular file
/// (the entry's type, not following a symlink) named `<id>.jsonl`, UTF-8, not a dot-file.
/// No stat: the id already orders the logs, and a stat per file is most of the cost of
/// discovering a large store (mtime is only a rare tie-break).
fn logs(sessions: &Path, mut f: impl FnMut(&str)) -> std::io::Result<()> {
    crate::store::dirents::each(sessions, |name, kind| {
        if kind != crate::store::dirents::Kind::File || name.starts_with(b".") {
            return;
        }
        let Some(id) = name.strip_suffix(b".jsonl") else {
            return;
        };
        if let Ok(id) = std::str::from_utf8(id)
            && !id.is_empty()
        {
            f(id);
        }
    })
}

/// What discovery gives for a `sessions/` it could not list: nothing when there is none, else
/// the stand-in row for an unreadable directory.
fn unlisted(sessions: &Path, e: std::io::Error) -> Vec<Candidate> {
    if e.kind() == std::io::ErrorKind::NotFound {
        Vec::new()
    } else {
        vec![Candidate::unreadable_dir(sessions)]
    }
}

/// The candidate for log `id`: its path is `sessions/<id>.jsonl`, built in one allocation.
fn candidate(sessions: &Path, id: &str) -> Candidate {
    Candidate {
        id: id.to_string(),
        path: crate::store::fanout::path_of_stem(sessions, id, ".jsonl"),
        mtime: None,
        stat: None,
    }
}

/// The id read as local time (`YYYYMMDD-hhmmss`), the fallback for `started`.
pub fn id_time(id: &str) -> Option<DateTime<Utc>> {
    let naive = NaiveDateTime::parse_from_str(id.get(..15)?, "%Y%m%d-%H%M%S").ok()?;
    Local
        .from_local_datetime(&naive)
        .earliest()
        .map(|t| t.with_timezone(&Utc))
}

/// The row for a log that was read, with its sidecar applied.
pub fn summary(
    id: &str,
    path: &Path,
    mtime: Option<SystemTime>,
    log: &Log,
    side: &Sidecar,
) -> SessionSummary {
    let f = &log.facts;
    let mut s = SessionSummary::new(StoreKind::Loom, id, path);
    let meta = f.meta.clone().unwrap_or_default();
    s.created_at = parse_time(&meta.time).or_else(|| id_time(id));
    s.cwd = non_empty(&meta.cwd).map(Into::into);
    s.model = non_empty(&meta.model).map(Into::into);
    s.set_forked_from(non_empty(&meta.forked_from).map(|p| format!("loom:{p}")));
    s.messages = f.messages;
    s.updated_at = f
        .last_time
        .or_else(|| mtime.map(DateTime::<Utc>::from))
        .or(s.created_at);
    s.set_summary(f.last_summary.clone().unwrap_or_default());
    s.set_first_prompt(
        f.first_real_user
            .clone()
            .or_else(|| f.first_user.clone())
            .unwrap_or_default(),
    );
    // The contract's "empty session" is message count == 0 (section 3).
    s.has_user_message = f.messages > 0;
    s.set_title(title(side, s.first_prompt()));
    s.set_badges(badges(id, f, side));
    s.read_only = !is_standard_id(id);
    if f.long_lines > 0 {
        s.set_error(Some(
            "a line is longer than 16 MiB; loom cannot resume this session".into(),
        ));
    }
    apply_sidecar(&mut s, f, side);
    // Probing /proc per session would cost more than the listing; only a log written in the
    // last two minutes can be one loom is writing right now.
    let recent = f.last_time.is_some_and(|t| {
        (Utc::now() - t).to_std().unwrap_or_default() < crate::model::ended::LIVE_WINDOW
    });
    s.ended = f.tail.ended(f.size > f.complete_len, || {
        recent && super::trash::open_elsewhere(path) == Some(true)
    });
    s
}

fn non_empty(s: &str) -> Option<String> {
    (!s.is_empty()).then(|| s.to_string())
}

fn title(side: &Sidecar, first: &str) -> String {
    if let Some(t) = side.str("title").filter(|t| !t.trim().is_empty()) {
        return t.to_string();
    }
    let collapsed = collapse_whitespace(first);
    if collapsed.is_empty() {
        "(empty session)".to_string()
    } else {
        truncate_chars(&collapsed, 80)
    }
}

fn badges(id: &str, f: &Facts, side: &Sidecar) -> Vec<String> {
    let mut b = Vec::new();
    if !is_standard_id(id) {
        b.push("non-standard id".to_string());
    }
    if f.bad_lines > 0 {
        b.push(plural(f.bad_lines, "unreadable line", "unreadable lines"));
    }
    if f.long_lines > 0 {
        b.push("line over 16 MiB: not resumable".to_string());
    }
    if f.lossy_lines > 0 {
        b.push(plural(
            f.lossy_lines,
            "line with invalid UTF-8",
            "lines with invalid UTF-8",
        ));
    }
    if f.meta_records > 1 {
        b.push(format!("{} meta records (first used)", f.meta_records));
    }
    if let Some(w) = side.warning() {
        b.push(w);
    }
    b
}

/// Pin, archive and unread from a valid sidecar (section 7).
fn apply_sidecar(s: &mut SessionSummary, f: &Facts, side: &Sidecar) {
    if let Some(p) = side.map().and_then(|m| m.get("pinned_at")) {
        if let Some(t) = p.as_str().and_then(parse_time) {
            s.pinned_at = Some(t);
        } else if !p.is_null() {
            s.pinned_flag = true;
        }
    }
    s.archived = side
        .map()
        .and_then(|m| m.get("archived_at"))
        .is_some_and(|v| !v.is_null());
    s.unread = match side.u64("read_bytes") {
        None => false,
        // The log shrank (replaced): stale marker, not unread.
        Some(b) if f.size < b => false,
        Some(_) => f.reply_after_marker,
    };
}

/// Sidecar state for `id` (read-only).
pub fn sidecar_of(sessions: &Path, id: &str) -> Sidecar {
    sidecar::read(sessions, id)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The one-number rank orders ids exactly as the DECIDED key does, standard ids above
    /// the rest; and discovery lists newest first, ties and non-standard ids by id.
    #[test]
    fn the_rank_orders_as_the_sort_key_and_discovery_follows_it() {
        let ids = [
            "20260314-101502",
            "20260314-101502-1",
            "20260314-101502-2",
            "20260314-101502-10",
            "20260314-101502-99",
            "20260314-101503",
            "20260315-000000",
            "20251231-235959-9",
            "19991231-235959",
            "99991231-235959-99",
            "20260314-101502-0",
            "20260314-1015",
            "notes",
            "zzz",
        ];
        for a in ids {
            for b in ids {
                assert_eq!(
                    rank(a).cmp(&rank(b)),
                    sort_key(a).cmp(&sort_key(b)),
                    "{a} {b}"
                );
            }
        }
        let d = tempfile::tempdir().unwrap();
        for id in ids {
            std::fs::write(d.path().join(format!("{id}.jsonl")), "").unwrap();
        }
        let got: Vec<String> = discover(d.path()).into_iter().map(|c| c.id).collect();
        let mut want: Vec<&str> = ids.to_vec();
        want.sort_by_key(|id| std::cmp::Reverse((sort_key(id), *id)));
        assert_eq!(got, want);
    }
}
