//! `spool list`: the filtered rows (ranked by the quick-search rules with `--query`) as a
//! terminal table or JSON Lines, every string from a store passed through the one sanitiser
//! (file names are untrusted too).

use std::borrow::Borrow;
use std::io::Write;
use std::sync::Arc;

use super::{ListArgs, filter, stdout_err};
use crate::catalog::view::RowHead;
use crate::error::Result;
use crate::model::SessionSummary;
use crate::store::Stores;
use crate::store::registry::Filter;
use crate::text;

pub(super) fn list(out: &mut impl Write, stores: &Stores, a: &ListArgs) -> Result<()> {
    let filter = filter(a.all, a.archived, a.empty, a.format, a.cwd.as_ref());
    // Through spool's catalog: warm, a stat pass instead of a read of every session.
    let cache = crate::hints::cache_dir();
    let query = a.query.as_deref().filter(|q| !q.trim().is_empty());
    let mut taken = Vec::new();
    if let Some(c) = cache.as_deref()
        && a.json
        && query.is_none()
        && !a.inbox
    {
        match warm_json(out, stores, c, &filter, a) {
            Ok(r) => return r,
            Err(surveys) => taken = surveys,
        }
    }
    // The rows stay in the catalog's `Arc`s: moving 100k of them out cost more than it saved.
    let (listed, left) =
        crate::catalog::pass::list_surveyed(stores, a.format, cache.as_deref(), taken);
    let mut rows: Vec<Arc<SessionSummary>> = listed
        .into_iter()
        .filter(|s| filter.accepts(s))
        .filter(|s| ended_so(a, s.ended))
        .collect();
    if a.inbox {
        rows = crate::inbox::rows(rows);
    }
    if let Some(q) = query {
        let owned = rows.into_iter().map(Arc::unwrap_or_clone).collect();
        rows = (crate::search::rank_rows(owned, q).into_iter())
            .map(Arc::new)
            .collect();
    }
    if let Some(n) = a.limit {
        rows.truncate(n);
    }
    // One write per 64 KiB, not per line: stdout is line-buffered, and at 10k rows the
    // write calls alone cost more than the stat pass behind them.
    let mut out = std::io::BufWriter::with_capacity(1 << 16, out);
    if a.json {
        // `jsonl::lines` writes what `json_line` would for each row, a line each.
        super::jsonl::lines(&mut out, &rows).map_err(stdout_err)?;
    } else {
        write_table(&mut out, &rows).map_err(stdout_err)?;
    }
    out.flush().map_err(stdout_err)?;
    // The process ends right after printing: freeing every row's strings one by one (tens
    // of thousands of `free`s at 10k rows), and the catalog's metas and discovery's
    // candidates behind them, would only delay the exit the OS does at once.
    std::mem::forget(rows);
    std::mem::forget(left);
    Ok(())
}

/// Whether a row that ended so passes `--ended` (every row when it is not given).
fn ended_so(a: &ListArgs, ended: Option<crate::model::Ended>) -> bool {
    a.ended.is_empty() || ended.is_some_and(|x| a.ended.contains(&x))
}

/// `list --json` printed from the catalog's own bytes when the stat pass finds it current
/// (`catalog::list_warm`); otherwise the surveys taken, for the usual path.
fn warm_json(
    out: &mut impl Write,
    stores: &Stores,
    cache: &std::path::Path,
    filter: &Filter,
    a: &ListArgs,
) -> std::result::Result<Result<()>, Vec<crate::catalog::survey::Survey>> {
    crate::catalog::list_warm::json(stores, a.format, cache, |rows| {
        let keep = |r: &&RowHead| filter.admits(r.facts()) && ended_so(a, r.ended);
        let rows: Vec<&RowHead> = (rows.iter().copied().filter(keep))
            .take(a.limit.unwrap_or(usize::MAX))
            .collect();
        let mut out = std::io::BufWriter::with_capacity(1 << 16, out);
        // Each row read whole only now, as its line is written (`RowHead::view`).
        super::jsonl::lines_of(&mut out, &rows, |buf, r| {
            if let Some(v) = r.view() {
                super::jsonl::fields(buf, &super::jsonl::Fields::of_view(&v))
            }
        })
        .and_then(|()| out.flush())
        .map_err(stdout_err)
    })
}

/// Compact JSON with every character a terminal could act on escaped (serde_json leaves
/// DEL, C1 controls and bidi overrides raw).
pub fn json_line(v: &serde_json::Value) -> String {
    escape_json_text(&v.to_string())
}

pub(super) fn escape_json_text(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if risky(c) {
            out.push_str(&format!("\\u{:04x}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

/// A character a terminal could act on that serde_json leaves raw.
pub(super) fn risky(c: char) -> bool {
    ('\u{7f}'..='\u{9f}').contains(&c)
        || matches!(c, '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2028}'
            | '\u{2029}' | '\u{2060}'..='\u{206F}' | '\u{FEFF}')
}

fn write_table<R: Borrow<SessionSummary>>(out: &mut impl Write, rows: &[R]) -> std::io::Result<()> {
    let ref_w = (rows.iter().map(Borrow::borrow))
        .map(|r: &SessionSummary| {
            unicode_width::UnicodeWidthStr::width(text::one_line(&r.reference()).as_str())
        })
        .max()
        .unwrap_or(3)
        .max(3);
    // Terminal columns, not chars: a CJK project name is twice as wide as it is long.
    let proj = |r: &SessionSummary| text::fit(&text::one_line(r.project()), 20);
    let proj_w = (rows.iter().map(Borrow::borrow))
        .map(|r| unicode_width::UnicodeWidthStr::width(proj(r).as_str()))
        .max()
        .unwrap_or(7)
        .max(7);
    writeln!(
        out,
        "{:3} {:ref_w$}  {:16}  {:>5}  {:proj_w$}  TITLE",
        "", "REF", "UPDATED", "MSGS", "PROJECT"
    )?;
    for r in rows {
        let r: &SessionSummary = r.borrow();
        let flags = format!(
            "{}{}{}",
            if r.error().is_some() {
                '!'
            } else if r.pinned() {
                'P'
            } else {
                ' '
            },
            if r.unread { 'U' } else { ' ' },
            if r.archived { 'A' } else { ' ' }
        );
        let updated = r
            .last_activity()
            .map(|t| t.format("%Y-%m-%d %H:%M").to_string())
            .unwrap_or_else(|| "-".into());
        let mut title = text::one_line(r.title());
        if let Some(e) = &r.error() {
            title = format!("{title}  [error: {}]", text::one_line(e));
        }
        // A file name is as untrusted as a message: `x\e]52;…\a.jsonl` must not reach the
        // clipboard, nor a newline in it forge a row.
        writeln!(
            out,
            "{flags} {}  {updated:16}  {:>5}  {}  {title}",
            text::pad(&text::one_line(&r.reference()), ref_w),
            r.messages,
            text::pad(&proj(r), proj_w),
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_lines_escape_terminal_controls() {
        let v = serde_json::json!({"t": "a\u{1b}[2Jb\u{9b}c\u{202e}d"});
        let s = json_line(&v);
        assert!(!s.contains('\u{1b}') && !s.contains('\u{9b}') && !s.contains('\u{202e}'));
        let back: serde_json::Value = serde_json::from_str(&s).unwrap();
        assert_eq!(back, v, "escaping keeps the JSON value");
    }

    #[test]
    fn hostile_file_names_neither_escape_nor_forge_rows() {
        use crate::model::StoreKind;
        let a = SessionSummary::new(StoreKind::Loom, "x\u{1b}]52;c;aGk=\u{7}\u{1b}[2J", "/p");
        let b = SessionSummary::new(StoreKind::Loom, "y\nP   loom:forged", "/p");
        let c = SessionSummary::new(StoreKind::Loom, "z\u{202e}\u{9b}31m", "/p");
        let mut out = Vec::new();
        write_table(&mut out, &[a, b, c]).unwrap();
        let out = String::from_utf8(out).unwrap();
        assert!(
            !out.chars().any(|c| (c < ' ' && c != '\n')
                || ('\u{7f}'..='\u{9f}').contains(&c)
                || c == '\u{202e}'),
            "{out:?}"
        );
        assert_eq!(out.lines().count(), 4, "a header and three rows: {out}");
    }

    #[test]
    fn the_table_aligns_wide_project_names_by_columns() {
        use crate::model::StoreKind;
        let mut a = SessionSummary::new(StoreKind::Loop, "aaaa0001", "/p");
        a.cwd = Some("/src/日本語".into());
        let mut b = SessionSummary::new(StoreKind::Loop, "bbbb0002", "/p");
        b.cwd = Some("/src/abc".into());
        let mut out = Vec::new();
        write_table(&mut out, &[a, b]).unwrap();
        let out = String::from_utf8(out).unwrap();
        // The title starts after the last two-space gap; it must sit in the same column.
        let title_col: Vec<usize> = out
            .lines()
            .map(|l| unicode_width::UnicodeWidthStr::width(&l[..l.rfind("  ").unwrap() + 2]))
            .collect();
        assert!(title_col.windows(2).all(|w| w[0] == w[1]), "{out}");
    }
}
