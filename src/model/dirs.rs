//! The directories rows' paths sit in, each held once for the process and named by a number.
//!
//! Why (issue 10): a row keeps its session's path for as long as spool runs, and at 100k
//! sessions the paths were about 12 MB of a warm start's peak, yet a store holds its sessions
//! in a few directories (Codex's day directories, Claude Code's and pi's project
//! directories): the same 40–70 bytes repeated on every row. A row now keeps the number of
//! its directory (`row_text`). The table only grows: a directory is a few dozen bytes, a
//! store has one for every few hundred sessions, and a number handed out must stay valid
//! for every row that holds it. Past `CAP` directories (a hostile store), rows keep their
//! whole paths instead.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

/// At most this many directories are numbered (about 100 MB of paths at the worst).
const CAP: usize = 1 << 20;

#[derive(Default)]
struct Table {
    dirs: Vec<Arc<[u8]>>,
    by_dir: HashMap<Arc<[u8]>, u32>,
}

static TABLE: RwLock<Option<Table>> = RwLock::new(None);

thread_local! {
    /// The directory this thread numbered or read last: rows come a directory at a time
    /// (a decode, a store's listing), so most calls skip the lock and the hash.
    static LAST: std::cell::RefCell<Option<(u32, Arc<[u8]>)>> = const { std::cell::RefCell::new(None) };
}

/// The number of directory `dir` (numbered on first sight), or `None` past `CAP`.
pub(super) fn number(dir: &[u8]) -> Option<u32> {
    let last = LAST.with_borrow(|l| l.as_ref().filter(|(_, d)| **d == *dir).map(|(n, _)| *n));
    if last.is_some() {
        return last;
    }
    let (n, d) = lookup(dir)?;
    LAST.set(Some((n, d)));
    Some(n)
}

fn lookup(dir: &[u8]) -> Option<(u32, Arc<[u8]>)> {
    {
        let t = TABLE.read().unwrap_or_else(|e| e.into_inner());
        if let Some((d, &n)) = t.as_ref().and_then(|t| t.by_dir.get_key_value(dir)) {
            return Some((n, d.clone()));
        }
    }
    let mut guard = TABLE.write().unwrap_or_else(|e| e.into_inner());
    let t = guard.get_or_insert_with(Table::default);
    if let Some((d, &n)) = t.by_dir.get_key_value(dir) {
        return Some((n, d.clone()));
    }
    if t.dirs.len() >= CAP {
        return None;
    }
    let n = t.dirs.len() as u32;
    let d: Arc<[u8]> = Arc::from(dir);
    t.dirs.push(d.clone());
    t.by_dir.insert(d.clone(), n);
    Some((n, d))
}

/// Append directory `n`'s bytes to `out`.
///
/// # Panics
/// When `n` was not handed out by `number` (rows only hold numbers it returned).
pub(super) fn push(n: u32, out: &mut Vec<u8>) {
    let hit = LAST.with_borrow(|l| match l {
        Some((m, d)) if *m == n => {
            out.extend_from_slice(d);
            true
        }
        _ => false,
    });
    if hit {
        return;
    }
    let d = {
        let t = TABLE.read().unwrap_or_else(|e| e.into_inner());
        let d = t.as_ref().and_then(|t| t.dirs.get(n as usize)).cloned();
        d.expect("a directory number handed out by `number`")
    };
    out.extend_from_slice(&d);
    LAST.set(Some((n, d)));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A directory keeps its number, two directories get two, and each reads back.
    #[test]
    fn a_directory_keeps_its_number() {
        let a = number(b"/dirs-test/a").unwrap();
        let b = number(b"/dirs-test/b").unwrap();
        assert_ne!(a, b);
        assert_eq!(number(b"/dirs-test/a"), Some(a));
        let mut out = b"x".to_vec();
        push(b, &mut out);
        assert_eq!(out, b"x/dirs-test/b");
    }
}
