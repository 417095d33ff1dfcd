//! A fold gives what decoding the catalog whole, changing it and saving it gives, and an
//! interrupted or racing one leaves a catalog that still reads.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::*;
use crate::catalog::{Catalog, Meta, Section, file, head, in_list_order, load, log, save};
use crate::model::SessionSummary;

/// A session of `kind` in `dir`, last active at `t` (seconds), with messages unless `empty`.
fn entry(kind: StoreKind, dir: &Path, id: &str, t: i64, key: u64) -> Entry {
    let path = dir.join(format!("{id}.jsonl"));
    let mut row = SessionSummary::new(kind, id, path.clone());
    row.set_title(format!("title of {id}"));
    row.cwd = Some("/home/u/acme".into());
    row.updated_at = chrono::DateTime::from_timestamp(1_773_000_000 + t, 0);
    row.messages = if t % 5 == 0 { 0 } else { 3 };
    row.archived = t % 7 == 0;
    Entry {
        meta: Meta {
            id: id.into(),
            path,
            key,
            cwd: row.cwd.clone(),
            cwd_dir: true,
            expires: None,
        },
        row: Some(Arc::new(row)),
    }
}

/// A candidate the store skips (no row), and one whose meta differs from its row.
fn odd(dir: &Path) -> [Entry; 2] {
    let mut skipped = entry(StoreKind::Loom, dir, "skipped", 1, 1);
    skipped.row = None;
    let mut other = entry(StoreKind::Loom, dir, "other", 2, 2);
    other.meta.id = "other-meta".into();
    other.meta.path = dir.join("elsewhere.jsonl");
    [skipped, other]
}

struct Fixture {
    _tmp: tempfile::TempDir,
    cache: PathBuf,
    dirs: [PathBuf; 4],
}

/// A saved catalog of three stores (Loop's section large enough for a thread of its own
/// when decoded), plus a fourth store's directory with no section yet.
fn fixture() -> Fixture {
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("cache");
    let dirs = ["loop", "loom", "harness", "claude"].map(|d| tmp.path().join(d));
    for d in &dirs {
        std::fs::create_dir_all(d).unwrap();
    }
    let kinds = [StoreKind::Loop, StoreKind::Loom, StoreKind::Harness];
    let sizes = [1500, 40, 0];
    let mut cat = Catalog::default();
    for ((kind, dir), n) in kinds.iter().zip(&dirs).zip(sizes) {
        let mut entries: Vec<Entry> = (0..n)
            .map(|i| {
                entry(
                    *kind,
                    dir,
                    &format!("{}-{i}", kind.as_str()),
                    i * 37 % 1000,
                    1,
                )
            })
            .collect();
        if *kind == StoreKind::Loom {
            entries.extend(odd(dir));
        }
        cat.sections.push(Section {
            kind: *kind,
            dir: dir.clone(),
            entries,
        });
    }
    in_list_order(&mut cat);
    save(&cache, &cat).unwrap();
    Fixture {
        _tmp: tmp,
        cache,
        dirs,
    }
}

/// Patches in the log: appends, rewrites (a newer copy of a session), deletes, a session
/// added then deleted, and a store with no section yet.
fn patch_log(f: &Fixture) {
    let [lp, lm, _, cl] = &f.dirs;
    let e = |k, d, id: &str, t| entry(k, d, id, t, 9);
    log::append(
        &f.cache,
        StoreKind::Loop,
        lp,
        &[e(StoreKind::Loop, lp, "new-1", 5000)],
        &[],
    );
    let rewrites = [
        e(StoreKind::Loop, lp, "loop-3", 4),
        e(StoreKind::Loop, lp, "loop-10", 999),
    ];
    log::append(&f.cache, StoreKind::Loop, lp, &rewrites, &["loop-7".into()]);
    log::append(
        &f.cache,
        StoreKind::Loom,
        lm,
        &[e(StoreKind::Loom, lm, "x", 3)],
        &[],
    );
    log::append(
        &f.cache,
        StoreKind::Claude,
        cl,
        &[e(StoreKind::Claude, cl, "c1", 8)],
        &[],
    );
    let gone = ["x".into(), "skipped".into(), "loom-4".into()];
    log::append(
        &f.cache,
        StoreKind::Loom,
        lm,
        &[e(StoreKind::Loom, lm, "new-1", 4000)],
        &gone,
    );
    log::append(
        &f.cache,
        StoreKind::Loop,
        lp,
        &[e(StoreKind::Loop, lp, "loop-3", 6)],
        &[],
    );
    assert!(log::file(&f.cache).exists(), "the patches are in the log");
}

/// A copy of the cache directory (to run the plain way beside the fold).
fn copy(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
    }
}

/// The fold's files and the plain way's: catalog, head, log.
fn files(cache: &Path) -> [Option<Vec<u8>>; 3] {
    [file(cache), head::file(cache), log::file(cache)].map(|p| std::fs::read(p).ok())
}

/// Fold `edit` into `f`'s catalog, and do the same the plain way on a copy: the same rows,
/// order and metas, byte for byte.
fn same_as_rewrite(f: &Fixture, edit: Option<(StoreKind, &Path, Change<'_>)>) -> Catalog {
    let plain = f.cache.with_file_name("plain");
    copy(&f.cache, &plain);
    let before = load(&f.cache).unwrap_or_default();
    fold(&f.cache, edit).expect("folded");
    crate::catalog::rewrite(&plain, edit);
    let got = load(&f.cache).unwrap();
    assert_eq!(got, load(&plain).unwrap());
    assert_eq!(files(&f.cache), files(&plain));
    assert!(files(&f.cache)[1].is_some(), "a head");
    assert!(!log::file(&f.cache).exists(), "the log is folded in");
    assert_ne!(got, before);
    std::fs::remove_dir_all(&plain).unwrap();
    got
}

#[test]
fn a_fold_gives_what_decoding_changing_and_saving_give() {
    let f = fixture();
    patch_log(&f);
    let lp = f.dirs[0].clone();
    let fresh = [entry(StoreKind::Loop, &lp, "loop-3", 7000, 5)];
    let apply = Change::Apply {
        fresh: &fresh,
        gone: &["loop-12".into(), "not-there".into()],
    };
    let got = same_as_rewrite(&f, Some((StoreKind::Loop, &lp, apply)));
    // Sections move last as they are patched (`Catalog::take` and `put`).
    let kinds: Vec<StoreKind> = got.sections.iter().map(|s| s.kind).collect();
    use StoreKind::{Claude, Harness, Loom, Loop};
    assert_eq!(kinds, [Harness, Loom, Claude, Loop]);
    let first = &got.sections[3].entries[0].meta;
    assert_eq!(
        (first.id.as_str(), first.key),
        ("loop-3", 5),
        "the edit's copy, first"
    );

    // The log alone, then a section replaced whole, and a store whose directory is gone.
    patch_log(&f);
    same_as_rewrite(&f, None);
    patch_log(&f);
    std::fs::remove_dir_all(&f.dirs[2]).unwrap();
    let whole: Vec<Entry> = (0..300)
        .map(|i| {
            entry(
                StoreKind::Loom,
                &f.dirs[1],
                &format!("r{i}"),
                i * 13 % 97,
                3,
            )
        })
        .collect();
    let got = same_as_rewrite(
        &f,
        Some((StoreKind::Loom, &f.dirs[1], Change::Replace(&whole))),
    );
    assert!(got.sections.iter().all(|s| s.kind != StoreKind::Harness));
}

#[test]
fn a_fold_without_a_base_writes_one() {
    let f = fixture();
    std::fs::remove_file(file(&f.cache)).unwrap();
    std::fs::remove_file(head::file(&f.cache)).unwrap();
    let fresh = [entry(StoreKind::Loom, &f.dirs[1], "a", 1, 1)];
    let apply = Change::Apply {
        fresh: &fresh,
        gone: &[],
    };
    same_as_rewrite(&f, Some((StoreKind::Loom, &f.dirs[1], apply)));
}

/// A damaged record ends the log there, as `replay` does: the records before it are folded
/// in, it and those after are not.
#[test]
fn a_fold_stops_at_a_damaged_record() {
    let f = fixture();
    let lm = &f.dirs[1];
    let one = |id: &str| [entry(StoreKind::Loom, lm, id, 3, 9)];
    log::append(&f.cache, StoreKind::Loom, lm, &one("first"), &[]);
    let good = std::fs::metadata(log::file(&f.cache)).unwrap().len() as usize;
    log::append(&f.cache, StoreKind::Loom, lm, &one("second"), &[]);
    log::append(&f.cache, StoreKind::Loom, lm, &one("third"), &[]);
    let mut bytes = std::fs::read(log::file(&f.cache)).unwrap();
    bytes[good + 20] ^= 0x5a;
    std::fs::write(log::file(&f.cache), &bytes).unwrap();
    let got = same_as_rewrite(&f, None);
    let ids: Vec<&str> = (got.sections.iter())
        .flat_map(|s| s.entries.iter().map(|e| e.meta.id.as_str()))
        .collect();
    assert!(ids.contains(&"first"));
    assert!(!ids.contains(&"second") && !ids.contains(&"third"));
}

/// A base section out of list order (not written by this spool) is not merged into: the
/// fold declines, and `patch` gives the plain way's result.
#[test]
fn a_base_out_of_list_order_falls_back_to_the_plain_way() {
    let f = fixture();
    let mut cat = load(&f.cache).unwrap();
    cat.sections[0].entries.reverse();
    save(&f.cache, &cat).unwrap();
    patch_log(&f);
    let plain = f.cache.with_file_name("plain");
    copy(&f.cache, &plain);
    let lp = &f.dirs[0];
    let fresh = [entry(StoreKind::Loop, lp, "n", 1, 1)];
    let apply = Change::Apply {
        fresh: &fresh,
        gone: &[],
    };
    assert!(fold(&f.cache, Some((StoreKind::Loop, lp, apply))).is_err());
    crate::catalog::patch(&f.cache, StoreKind::Loop, lp, apply);
    crate::catalog::rewrite(&plain, Some((StoreKind::Loop, lp, apply)));
    assert_eq!(load(&f.cache), load(&plain));
}

/// A fold that fails before its rename (a crash mid-write) leaves the old file and its log:
/// the catalog reads as it did, with every patch.
#[test]
fn an_interrupted_fold_leaves_the_old_catalog_and_log() {
    let f = fixture();
    patch_log(&f);
    let before = (load(&f.cache).unwrap(), files(&f.cache));
    crate::store::atomic::inject_fault(crate::store::atomic::Step::Rename);
    let fresh = [entry(StoreKind::Loop, &f.dirs[0], "n", 1, 1)];
    let apply = Change::Apply {
        fresh: &fresh,
        gone: &[],
    };
    assert!(fold(&f.cache, Some((StoreKind::Loop, &f.dirs[0], apply))).is_err());
    assert_eq!((load(&f.cache).unwrap(), files(&f.cache)), before);
    let left = std::fs::read_dir(&f.cache).unwrap().count();
    assert_eq!(left, 3, "no temp file left");
}

/// The environment variable naming a child's cache, and its directories.
const CHILD: &str = "SPOOL_FOLD_TEST_CHILD";
/// Each child's patches, and their rows' title length: about a dozen folds a child.
const CHILD_PATCHES: usize = 300;
const TITLE: usize = 8000;

/// Not a test: the body of one of the processes `two_processes_patching_at_once` starts.
#[test]
#[ignore]
fn fold_child() {
    let Ok(spec) = std::env::var(CHILD) else {
        return;
    };
    let mut it = spec.split('\n');
    let (cache, dir, tag) = (it.next().unwrap(), it.next().unwrap(), it.next().unwrap());
    let dir = Path::new(dir);
    for i in 0..CHILD_PATCHES {
        let mut e = entry(StoreKind::Loop, dir, &format!("{tag}-{i}"), i as i64, 1);
        if let Some(r) = e.row.as_mut().map(Arc::make_mut) {
            r.set_title("y".repeat(TITLE));
        }
        log::append(Path::new(cache), StoreKind::Loop, dir, &[e], &[]);
    }
}

/// Two processes patching one catalog at once (each passing `COMPACT_AT` several times, so
/// folding while the other appends or folds): a patch may be lost (the loser's write), the
/// catalog never: it reads, holds only whole sessions the processes wrote, and its head
/// agrees with it.
#[test]
fn two_processes_patching_at_once() {
    let f = fixture();
    let lp = f.dirs[0].to_str().unwrap();
    let kids: Vec<_> = ["a", "b"]
        .iter()
        .map(|tag| {
            std::process::Command::new(std::env::current_exe().unwrap())
                .args(["--exact", "catalog::fold::tests::fold_child", "--ignored"])
                .env(CHILD, format!("{}\n{lp}\n{tag}", f.cache.display()))
                .stdout(std::process::Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut k in kids {
        assert!(k.wait().unwrap().success());
    }
    let cat = load(&f.cache).expect("the catalog reads");
    let lp = &cat
        .sections
        .iter()
        .find(|s| s.kind == StoreKind::Loop)
        .unwrap();
    let new: Vec<&Entry> = (lp.entries.iter())
        .filter(|e| e.meta.id.starts_with("a-") || e.meta.id.starts_with("b-"))
        .collect();
    let all = 2 * CHILD_PATCHES;
    assert!(new.len() > all / 4, "{} of {all} patches kept", new.len());
    assert!(
        new.iter()
            .all(|e| e.row.as_ref().unwrap().title() == "y".repeat(TITLE))
    );
    assert_eq!(lp.entries.len(), 1500 + new.len());
    let stores: Vec<(StoreKind, &Path)> = (cat.sections.iter())
        .map(|s| (s.kind, s.dir.as_path()))
        .collect();
    if let Some(h) = head::read(&f.cache, &stores, &Default::default()) {
        assert_eq!(h, head::cut(&cat).unwrap().0);
    }
}
