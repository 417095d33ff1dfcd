//! Catalog entries for the catalog's memory tests: a loom session's row, with texts of a
//! chosen size, and the meta that keys it, as a store's listing would give them.

use std::path::PathBuf;
use std::sync::Arc;

use spool::catalog::{Entry, Meta};
use spool::model::{SessionSummary, StoreKind};

/// How each entry is made: where its file is, how long its texts are, how many cwds the
/// sessions share.
pub struct Texts {
    pub sessions_dir: &'static str,
    pub summary_repeat: usize,
    /// 0: no first prompt.
    pub first_prompt_repeat: usize,
    /// 1: one cwd for every session; n: session i works in the (i mod n)th.
    pub cwds: usize,
}

pub fn entry(i: usize, key: u64, t: &Texts) -> Entry {
    let id = format!("20260101-{i:06}");
    let path = PathBuf::from(format!("{}/{id}.jsonl", t.sessions_dir));
    let mut s = SessionSummary::new(StoreKind::Loom, id.clone(), path.clone());
    s.set_title(format!("Fix the parser in module {i} before the release"));
    s.set_summary(
        format!("* Goal: make test {i} pass\n* Cause: a trailing slash. ").repeat(t.summary_repeat),
    );
    s.set_first_prompt(
        format!("why does test {i} fail after the router change? ").repeat(t.first_prompt_repeat),
    );
    s.cwd = Some(match t.cwds {
        1 => "/home/u/projects/acme-api".into(),
        n => format!("/home/u/projects/acme-api-{}", i % n).into(),
    });
    Entry {
        meta: Meta {
            id,
            path,
            key,
            cwd: s.cwd.clone(),
            cwd_dir: true,
            expires: None,
        },
        row: Some(Arc::new(s)),
    }
}

/// A catalog of one loom section in `dir`: `n` entries, session i keyed by i.
pub fn catalog(dir: &std::path::Path, n: usize, t: &Texts) -> spool::catalog::Catalog {
    spool::catalog::Catalog {
        sections: vec![spool::catalog::Section {
            kind: StoreKind::Loom,
            dir: dir.to_path_buf(),
            entries: (0..n).map(|i| entry(i, i as u64, t)).collect(),
        }],
    }
}
