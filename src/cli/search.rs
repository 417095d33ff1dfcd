//! `spool search QUERY`: bring the full-text index up to date, then print one line per
//! matching session, best first (`../shared/cli.md`, `search`).

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

use clap::Args;
use serde_json::json;

use super::{filter, json_line, parse_kind, stdout_err};
use crate::app::thousands;
use crate::error::{Error, Result};
use crate::model::{SessionSummary, StoreKind};
use crate::search::index::{self, Hit, TextIndex};
use crate::search::query::TextQuery;
use crate::store::Stores;
use crate::text;

#[derive(Debug, Args)]
pub struct SearchArgs {
    /// Words (all in one message, any order), "quoted phrases", -word to exclude; several
    /// arguments are joined. Quote a query with -word ('tz -flaky') or put it after `--`, so
    /// options after the query stay options.
    #[arg(required = true, num_args = 1.., value_name = "QUERY")]
    pub query: Vec<String>,
    /// JSON Lines, one object per session
    #[arg(long)]
    pub json: bool,
    /// At most N sessions
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
    /// Search archived and empty sessions too
    #[arg(long)]
    pub all: bool,
    /// Search only archived sessions
    #[arg(long)]
    pub archived: bool,
    /// Only this store: loop, loom or harness
    #[arg(long, value_name = "F", value_parser = parse_kind)]
    pub format: Option<StoreKind>,
    /// Only sessions whose working directory is DIR
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,
}

/// Returns the exit code: 0 something matched, 1 nothing did.
pub fn run(
    out: &mut impl Write,
    stores: &Stores,
    a: &SearchArgs,
    index_dir: Option<&Path>,
) -> Result<i32> {
    let query = TextQuery::parse(&a.query.join(" ")).map_err(Error::Usage)?;
    let dir = match index_dir {
        Some(d) => d.to_path_buf(),
        None => index::default_dir(stores)
            .ok_or_else(|| Error::Refused("no cache directory for the search index".into()))?,
    };
    let keep = filter(a.all, a.archived, false, a.format, a.cwd.as_ref());
    let limit = a.limit.unwrap_or(usize::MAX);
    // The index covers every store whatever the filters (so a filtered search never drops
    // other stores' sessions from it); its session table answers the filters, row by row
    // for the sessions a query can show.
    let answer = |ix: &mut TextIndex| -> Result<Vec<(Hit, SessionSummary)>> {
        let mut hits = ix.search_rows(&query, &|r| keep.accepts(r), limit, Some(stores))?;
        // A warm check looks at few sessions (`spool search --help`): those about to be
        // shown are checked in full, and any that changed are re-indexed and asked again.
        for _ in 0..3 {
            let rows: Vec<SessionSummary> = hits.iter().map(|(_, r)| r.clone()).collect();
            if !ix.restale(&rows, stores)? {
                break;
            }
            hits = ix.search_rows(&query, &|r| keep.accepts(r), limit, Some(stores))?;
        }
        Ok(hits)
    };
    let hits = match fresh_index(&dir, stores).and_then(|mut ix| answer(&mut ix)) {
        Ok(h) => h,
        // A segment that broke under us: the index is a cache, so rebuild it and ask again.
        Err(_) => {
            index::wipe(&dir);
            answer(&mut fresh_index(&dir, stores)?)?
        }
    };
    if a.json {
        for (h, s) in &hits {
            writeln!(out, "{}", json_line(&hit_json(s, h))).map_err(stdout_err)?;
        }
    } else {
        write_table(out, &hits).map_err(stdout_err)?;
    }
    out.flush().map_err(stdout_err)?;
    Ok(if hits.is_empty() { 1 } else { 0 })
}

/// Open the index and bring it up to date, with progress on stderr when it is a terminal.
fn fresh_index(dir: &Path, stores: &Stores) -> Result<TextIndex> {
    let mut ix = TextIndex::open(dir)?;
    let tty = std::io::stderr().is_terminal();
    let progress = |done: usize, total: usize| {
        if tty && (done.is_multiple_of(100) || done == total) {
            eprint!("\rindexing {} / {}", thousands(done), thousands(total));
        }
    };
    let r = ix.update_from_disk(stores, &progress);
    if tty {
        eprint!("\r\x1b[K");
    }
    r?;
    Ok(ix)
}

fn hit_json(s: &SessionSummary, h: &Hit) -> serde_json::Value {
    let row = s.to_json();
    json!({
        "ref": row["ref"],
        "format": row["format"],
        "id": row["id"],
        "title": row["title"],
        "updated_at": row["updated_at"],
        "message": h.message,
        "round": h.round,
        "role": h.role,
        "snippet": text::one_line(&h.snippet),
        "hits": h.hits,
        "score": h.score,
    })
}

/// Where the best hit is, for people.
fn place(h: &Hit) -> String {
    match (h.round, h.message) {
        (Some(r), Some(m)) => format!("round {r}, message {m}"),
        _ => "title/summary".into(),
    }
}

fn write_table(out: &mut impl Write, hits: &[(Hit, SessionSummary)]) -> std::io::Result<()> {
    let rows: Vec<[String; 4]> = hits
        .iter()
        .map(|(h, s)| {
            [
                text::truncate_chars(&text::one_line(s.title()), 40),
                s.reference(),
                place(h),
                text::one_line(&h.snippet),
            ]
        })
        .collect();
    let width = |i: usize| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0);
    let (w0, w1, w2) = (width(0).max(5), width(1).max(3), width(2).max(5));
    if rows.is_empty() {
        return Ok(());
    }
    writeln!(
        out,
        "{:w0$}  {:w1$}  {:w2$}  SNIPPET",
        "TITLE", "REF", "WHERE"
    )?;
    for [t, r, p, snip] in &rows {
        // Pad by chars, not bytes: titles are often not ASCII.
        let pad = |s: &str, w: usize| format!("{s}{}", " ".repeat(w - s.chars().count()));
        writeln!(
            out,
            "{}  {}  {}  {snip}",
            pad(t, w0),
            pad(r, w1),
            pad(p, w2)
        )?;
    }
    Ok(())
}
