//! Folding changes into `catalog.bin` without decoding it whole: the patch log past
//! `log::COMPACT_AT` (with the patch that took it there), and a cold pass's section.
//!
//! Issue 10: both decoded the whole catalog into entries (every row a copy of the browser's
//! own), changed it and wrote it back: at 100k sessions about 65 MB beside the rows the
//! browser already held (its peak with 1,000 sessions changed, 155 MB, and a cold start's,
//! 200 MB). Here the new file is written section by section, from the old file's bytes: a
//! section no patch touches is copied as it is, a patched one is decoded one entry at a
//! time and merged with its patches' entries as it is written, and a section a cold pass
//! replaces is written from the pass's own entries (the old one is never decoded). What
//! is held is one entry, the patches, and the head's digests and first rows.
//!
//! The result is the one `load`, the change, `in_list_order` and `save` give (the tests
//! compare them), and it falls back to that (`Err(Fallback)`) when it cannot be sure of it:
//! a base section out of list order, or a damaged base. The new file replaces the old
//! through `store::atomic`: a fold cut short leaves the old file and its log as they were.

use std::collections::HashSet;
use std::io::{BufReader, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::stream::{CHUNK, Scratch, Span, Summed};
use super::{Entry, Running, entry_order, head, wire::In};
use crate::model::StoreKind;
use crate::store::positional::{Range, Source};
use crate::store::{atomic, regular};

/// A change to one store's section.
#[derive(Clone, Copy)]
pub enum Change<'a> {
    /// Entries re-read (replacing theirs) and ids gone, as a patch.
    Apply {
        fresh: &'a [Entry],
        gone: &'a [String],
    },
    /// The section's entries, whole (a cold pass read every session).
    Replace(&'a [Entry]),
}

/// No base file: no plan reads one.
struct Nothing;

impl Source for Nothing {
    fn read_at(&self, _: &mut [u8], _: u64) -> std::io::Result<usize> {
        Ok(0)
    }
}

/// Why a fold did not write: the caller decodes, changes and saves the catalog instead.
#[derive(Debug)]
pub struct Fallback;

/// A section's first fields, before its entries.
#[derive(Deserialize)]
struct Start {
    kind: StoreKind,
    #[serde(with = "crate::model::wire::path_bytes")]
    dir: PathBuf,
}

#[derive(Serialize)]
struct StartOut<'a> {
    kind: StoreKind,
    #[serde(with = "crate::model::wire::path_bytes")]
    dir: &'a Path,
}

/// One section of the new file: where its base entries are (if kept), and its patches.
struct Plan<'a> {
    kind: StoreKind,
    dir: PathBuf,
    base: Option<Span>,
    /// (re-read entries, gone ids) in order; a replacing change clears what came before.
    ops: Vec<(&'a [Entry], &'a [String])>,
}

/// Fold the log of `cache` (and `edit`, the change to the section of store `kind` at `dir`)
/// into a new `catalog.bin`. The caller holds the patch lock.
pub fn fold(cache: &Path, edit: Option<(StoreKind, &Path, Change<'_>)>) -> Result<(), Fallback> {
    crate::demo::create_cache_dir(cache).map_err(|_| Fallback)?;
    let path = super::file(cache);
    let base = match regular::open(&path, regular::Links::Refuse) {
        Ok(f) => Some(f),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(_) => return Err(Fallback),
    };
    let (spans, sum) = match &base {
        Some(f) => {
            let size = f.metadata().map_err(|_| Fallback)?.len();
            super::stream::spans(f, size).ok_or(Fallback)?
        }
        None => (Vec::new(), 0),
    };
    let src: &dyn Source = match &base {
        Some(f) => f,
        None => &Nothing,
    };
    let mut records = Vec::new();
    if base.is_some() {
        super::log::each(cache, sum, |r| records.push(r));
    }
    let mut plans = Vec::with_capacity(spans.len() + 1);
    for span in &spans {
        let (start, _) = open(src, *span).ok_or(Fallback)?;
        plans.push(Plan {
            kind: start.kind,
            dir: start.dir,
            base: Some(*span),
            ops: Vec::new(),
        });
    }
    // Each patch moves its section last, as `Catalog::take` and `put` do.
    let plan_for = |plans: &mut Vec<Plan<'_>>, kind: StoreKind, dir: &Path| {
        let p = match plans.iter().position(|p| p.kind == kind && p.dir == dir) {
            Some(i) => plans.swap_remove(i),
            None => Plan {
                kind,
                dir: dir.to_path_buf(),
                base: None,
                ops: Vec::new(),
            },
        };
        plans.push(p);
        plans.len() - 1
    };
    for r in &records {
        let i = plan_for(&mut plans, r.kind, &r.dir);
        plans[i].ops.push((&r.fresh, &r.gone));
    }
    if let Some((kind, dir, change)) = edit {
        let i = plan_for(&mut plans, kind, dir);
        match change {
            Change::Apply { fresh, gone } => plans[i].ops.push((fresh, gone)),
            Change::Replace(entries) => {
                plans[i].base = None;
                plans[i].ops = vec![(entries, &[])];
            }
        }
    }
    // Stores that are gone (a removed root, a test's temporary store) leave with their rows.
    plans.retain(|p| p.dir.is_dir());
    let mut cut = head::Cut::default();
    let mut header = [0u8; super::HEADER];
    let mut failed = false;
    let wrote = atomic::replace_with(&path, atomic::Replace::default(), &mut |f| {
        let r = super::stream::write_each(f, plans.len(), &mut |i, w| {
            let p = &plans[i];
            cut.store(p.kind, &p.dir);
            write_section(src, p, w, &mut cut).inspect_err(|_| failed = true)
        });
        header = r?;
        Ok(())
    });
    if failed || wrote.is_err() {
        return Err(Fallback);
    }
    // After the catalog: a head naming it can only appear once it is in place.
    head::write(cache, cut.finish(), &header);
    // The log's patches are in the new base (its header names the old one, so a reader in
    // between ignores it anyway).
    let _ = std::fs::remove_file(super::log::file(cache));
    Ok(())
}

/// Write one section of the new file, feeding its rows to `cut`.
fn write_section(
    src: &dyn Source,
    p: &Plan<'_>,
    w: &mut dyn Write,
    cut: &mut head::Cut,
) -> std::io::Result<()> {
    let bad = || std::io::Error::other("the base catalog cannot be folded");
    // Which base ids the patches drop, and which of the patches' entries are still there at
    // the end (a later patch drops an earlier one's).
    let mut later: HashSet<&str> = HashSet::new();
    let mut fresh: Vec<&Entry> = Vec::new();
    for (f, gone) in p.ops.iter().rev() {
        let before = fresh.len();
        fresh.extend(f.iter().filter(|e| !later.contains(e.meta.id.as_str())));
        fresh[before..].reverse();
        later.extend(gone.iter().map(String::as_str));
        later.extend(f.iter().map(|e| e.meta.id.as_str()));
    }
    fresh.reverse();
    // A stable sort of the base's entries then the patches' is a merge of the two, the base
    // (already in list order) first among equals.
    fresh.sort_by(|a, b| entry_order(a, b));
    let start = StartOut {
        kind: p.kind,
        dir: &p.dir,
    };
    let Some(span) = p.base else {
        postcard::to_io(&start, &mut *w).map_err(std::io::Error::other)?;
        postcard::to_io(&(fresh.len() as u64), &mut *w).map_err(std::io::Error::other)?;
        for e in fresh {
            if let Some(r) = e.row.as_deref() {
                cut.row(r);
            }
            postcard::to_io(e, &mut *w).map_err(std::io::Error::other)?;
        }
        return Ok(());
    };
    if p.ops.is_empty() {
        // Untouched: its rows for the head, then its bytes as they are.
        each_entry(src, span, |e| {
            if let Some(r) = e.row.as_deref() {
                cut.row(r);
            }
        })
        .ok_or_else(bad)?;
        let mut from = Range::new(src, span.at, span.at + span.len);
        let n = std::io::copy(&mut from, w)?;
        return if n == span.len { Ok(()) } else { Err(bad()) };
    }
    // First the count of the entries kept (the file gives it before them), and whether the
    // base is in list order; then the entries.
    let mut kept = 0u64;
    let mut prev: Option<Entry> = None;
    let mut sorted = true;
    each_entry(src, span, |e| {
        if later.contains(e.meta.id.as_str()) {
            return;
        }
        kept += 1;
        if prev.as_ref().is_some_and(|p| entry_order(p, &e).is_gt()) {
            sorted = false;
        }
        prev = Some(e);
    })
    .ok_or_else(bad)?;
    if !sorted {
        return Err(bad());
    }
    postcard::to_io(&start, &mut *w).map_err(std::io::Error::other)?;
    postcard::to_io(&(kept + fresh.len() as u64), &mut *w).map_err(std::io::Error::other)?;
    let mut fresh = fresh.into_iter().peekable();
    let mut err = None;
    let mut put = |e: &Entry, w: &mut dyn Write| {
        if let Some(r) = e.row.as_deref() {
            cut.row(r);
        }
        if let Err(x) = postcard::to_io(e, w) {
            err.get_or_insert(std::io::Error::other(x));
        }
    };
    each_entry(src, span, |e| {
        if later.contains(e.meta.id.as_str()) {
            return;
        }
        while let Some(f) = fresh.next_if(|f| entry_order(f, &e).is_lt()) {
            put(f, w);
        }
        put(&e, w);
    })
    .ok_or_else(bad)?;
    for f in fresh {
        put(f, w);
    }
    err.map_or(Ok(()), Err)
}

/// The section at `span`: its first fields, and a reader at its entries' count.
fn open<'s>(src: &'s dyn Source, span: Span) -> Option<(Start, Entries<'s>)> {
    let len = usize::try_from(span.len).ok()?;
    let range = Summed {
        inner: Range::new(src, span.at, span.at + span.len),
        sum: Running::new(),
    };
    let mut e = Entries {
        reader: BufReader::with_capacity(CHUNK, range),
        // As in `stream::section`: only its start is used, and only it becomes resident.
        scratch: Scratch::new(len)?,
    };
    let start = e.next::<Start>()?;
    Some((start, e))
}

/// A section's bytes, decoded a value at a time.
struct Entries<'s> {
    reader: BufReader<Summed<Range<'s, dyn Source + 's>>>,
    scratch: Scratch,
}

impl Entries<'_> {
    fn next<T: serde::de::DeserializeOwned>(&mut self) -> Option<T> {
        let (v, _) = postcard::from_io::<T, _>((&mut self.reader, self.scratch.bytes())).ok()?;
        Some(v)
    }
}

/// Hand `f` each entry of the section at `span`, in order; `None` (after some, perhaps)
/// unless every one decodes and the section's bytes are all read and have its checksum.
fn each_entry(src: &dyn Source, span: Span, mut f: impl FnMut(Entry)) -> Option<()> {
    let (_, mut e) = open(src, span)?;
    let n = e.next::<u64>()?;
    for _ in 0..n {
        f(e.next::<In>()?.entry().ok()?);
    }
    let reader = e.reader;
    if !reader.buffer().is_empty() || reader.get_ref().inner.at != span.at + span.len {
        return None;
    }
    (reader.into_inner().sum.finish() == span.sum).then_some(())
}

#[cfg(test)]
#[path = "fold_tests.rs"]
mod tests;
