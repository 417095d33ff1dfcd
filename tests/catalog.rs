//! spool's catalog against the stores: after every kind of change, listing through the
//! catalog gives exactly what listing the stores gives; a damaged or foreign catalog is
//! rebuilt; two processes listing at once leave a catalog that still reads.

mod common;

use std::path::{Path, PathBuf};
use std::time::{Duration, UNIX_EPOCH};

use common::Home;
use spool::catalog;
use spool::model::SessionSummary;
use spool::store::Stores;

fn home() -> Home {
    let h = Home::with_fixtures();
    common::install_claude_fixtures(h.path());
    h
}

/// List through the catalog (cache under the test's HOME) and straight from the stores;
/// they must agree, and the catalog must have been written.
fn agree(h: &Home, stores: &Stores, what: &str) -> Vec<SessionSummary> {
    let cache = h.path().join(".cache/spool");
    let through = catalog::list(stores, None, Some(&cache));
    let direct = stores.list_of(None);
    assert_eq!(through, direct, "catalog listing differs after {what}");
    assert!(
        catalog::load(&cache).is_some(),
        "catalog readable after {what}"
    );
    through
}

fn loom_file(h: &Home, id: &str) -> PathBuf {
    h.loom_dir().join("sessions").join(format!("{id}.jsonl"))
}

fn set_mtime(p: &Path, secs: u64) {
    let f = std::fs::File::options().write(true).open(p).expect("open");
    f.set_modified(UNIX_EPOCH + Duration::from_secs(secs))
        .expect("mtime");
}

#[test]
fn catalog_listing_round_trips_and_follows_every_kind_of_change() {
    let h = home();
    let stores = h.stores();
    let first = agree(&h, &stores, "a cold start");
    assert!(first.len() >= 8, "fixtures listed: {}", first.len());
    // Warm, unchanged.
    agree(&h, &stores, "nothing changed");

    // Append: a new user message at the end of a loom log.
    let log = loom_file(&h, "20260314-141500");
    let before = std::fs::read_to_string(&log).unwrap();
    let last = before.lines().last().unwrap().to_string();
    std::fs::write(&log, format!("{before}{last}\n")).unwrap();
    agree(&h, &stores, "an append");

    // A Loop session's messages appended (its directory's mtime does not move), then the
    // session archived: that writes its collection's `archive.json`, an input every session
    // of the collection shares (a pass stamps it once).
    let loop_row = stores
        .list_of(Some(spool::model::StoreKind::Loop))
        .into_iter()
        .find(|s| s.id == "3f6b2c1e-8a4d-4e2f-9b7c-1d2e3f4a5b6c".into())
        .expect("the v3 Loop fixture");
    let msgs = loop_row.path().join("messages.jsonl");
    let before = std::fs::read_to_string(&msgs).unwrap();
    let last = before.lines().last().unwrap().to_string();
    std::fs::write(&msgs, format!("{before}{last}\n")).unwrap();
    agree(&h, &stores, "an append to a Loop session's messages");
    stores
        .store_for(&loop_row)
        .set_archived(&loop_row.id, true)
        .unwrap();
    let archived = agree(&h, &stores, "an archive.json written");
    assert!(archived.iter().any(|s| s.id == loop_row.id && s.archived));

    // Rewrite in place with the same size, and the mtime set back to before the write.
    let harness = h.harness_dir().join("sessions/h2Jd9sWq0TzN4bXe.json");
    let old_mtime = std::fs::metadata(&harness).unwrap().modified().unwrap();
    let text = std::fs::read_to_string(&harness).unwrap();
    let changed = text.replacen("\"title\"", "\"tItle\"", 1);
    assert_eq!(changed.len(), text.len());
    std::fs::write(&harness, &changed).unwrap();
    let back = old_mtime.duration_since(UNIX_EPOCH).unwrap().as_secs() - 3600;
    set_mtime(&harness, back);
    agree(
        &h,
        &stores,
        "a same-size rewrite with the mtime going backwards",
    );

    // Rename and pin through spool's own writers (state and sidecar files).
    for s in stores.list_of(None).iter().filter(|s| !s.read_only).take(4) {
        let store = stores.store_for(s);
        store.rename(&s.id, "renamed by the test").unwrap();
        store.set_pinned(&s.id, !s.pinned()).unwrap();
    }
    let claude: Vec<SessionSummary> = stores
        .list_of(Some(spool::model::StoreKind::Claude))
        .into_iter()
        .filter(|s| s.error().is_none())
        .collect();
    if let Some(c) = claude.first() {
        stores.store_for(c).set_pinned(&c.id, true).unwrap();
    }
    agree(&h, &stores, "renames and pins");

    // A new session file, then a deleted one.
    let new = loom_file(&h, "20260314-235959");
    std::fs::copy(loom_file(&h, "20260314-091502"), &new).unwrap();
    let with_new = agree(&h, &stores, "a new file");
    assert!(with_new.iter().any(|s| s.id == "20260314-235959".into()));
    std::fs::remove_file(&new).unwrap();
    let without = agree(&h, &stores, "a deleted file");
    assert!(!without.iter().any(|s| s.id == "20260314-235959".into()));

    // A whole store's directory gone.
    std::fs::remove_dir_all(h.harness_dir()).unwrap();
    agree(&h, &stores, "a removed store");
}

#[test]
fn corrupt_and_foreign_catalogs_are_rebuilt_silently() {
    let h = home();
    let stores = h.stores();
    let cache = h.path().join(".cache/spool");
    agree(&h, &stores, "a cold start");
    let file = catalog::file(&cache);
    let good = std::fs::read(&file).unwrap();
    let mut bad = good.clone();
    let mid = bad.len() / 2;
    bad[mid] ^= 0xff;
    for (what, bytes) in [
        ("a flipped byte", bad),
        ("a cut file", good[..good.len() / 3].to_vec()),
        ("garbage", b"not a catalog at all".to_vec()),
        ("an empty file", Vec::new()),
    ] {
        std::fs::write(&file, &bytes).unwrap();
        agree(&h, &stores, what);
    }
    let mut skew = good;
    skew[8..12].copy_from_slice(&(catalog::VERSION + 9).to_le_bytes());
    std::fs::write(&file, &skew).unwrap();
    agree(&h, &stores, "another version");
    // A directory where the file belongs is no catalog, and no crash.
    std::fs::remove_file(&file).unwrap();
    std::fs::create_dir(&file).unwrap();
    let rows = catalog::list(&stores, None, Some(&cache));
    assert_eq!(rows, stores.list_of(None));
}

#[test]
fn two_processes_listing_at_once_leave_a_readable_catalog() {
    let h = home();
    let args = ["list", "--json", "--all"];
    let expected = h.ok(&args);
    for _ in 0..3 {
        let _ = std::fs::remove_dir_all(h.path().join(".cache/spool"));
        let kids: Vec<_> = (0..2)
            .map(|_| {
                h.command(&args)
                    .stdout(std::process::Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        for k in kids {
            let out = k.wait_with_output().unwrap();
            assert!(out.status.success());
            assert_eq!(h.tidy(&String::from_utf8_lossy(&out.stdout)), expected);
        }
        assert!(catalog::load(&h.path().join(".cache/spool")).is_some());
        assert_eq!(h.ok(&args), expected);
    }
}

/// A small deterministic generator (no dependency for a test).
struct Lcg(u64);
impl Lcg {
    fn next(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((self.0 >> 33) as usize) % n.max(1)
    }
}

#[test]
fn catalog_equals_stores_on_every_fixture_after_random_changes() {
    for seed in 1..=3u64 {
        let h = home();
        let stores = h.stores();
        let mut rng = Lcg(seed);
        agree(&h, &stores, "a cold start");
        for round in 0..12 {
            let rows = stores.list_of(None);
            let s = &rows[rng.next(rows.len())];
            let store = stores.store_for(s);
            let what = match rng.next(6) {
                0 => store.set_pinned(&s.id, !s.pinned()).map(|_| "pin"),
                1 => store.set_unread(&s.id, !s.unread).map(|_| "unread"),
                2 => store
                    .rename(&s.id, &format!("title {round}"))
                    .map(|_| "rename"),
                3 => store.set_archived(&s.id, !s.archived).map(|_| "archive"),
                4 => {
                    // Touch: same bytes, another mtime.
                    if s.path().is_file() {
                        set_mtime(&s.path(), 1_700_000_000 + round);
                    }
                    Ok("touch")
                }
                _ => {
                    let copy = loom_file(&h, &format!("20260315-0000{round:02}"));
                    std::fs::copy(loom_file(&h, "20260314-162041"), copy).unwrap();
                    Ok("new file")
                }
            };
            // Refusals (read-only rows, error rows) change nothing, which is also a case.
            let what = what.unwrap_or("refused write");
            agree(&h, &stores, &format!("seed {seed} round {round}: {what}"));
        }
    }
}

#[test]
fn a_warm_start_with_a_store_that_does_not_exist_leaves_the_catalog_file_alone() {
    use std::os::unix::fs::MetadataExt;
    use std::sync::{Arc, mpsc};

    use spool::app::Action;
    use spool::loader::{Event, Loader};

    let h = home();
    let mut stores = h.stores();
    // A configured root with no sessions directory: it has no section, so it loads cold.
    stores.add(
        spool::model::StoreKind::Loom,
        &h.path().join("no-such-root"),
    );
    let cache = h.path().join(".cache/spool");
    agree(&h, &stores, "a cold start");
    let stamp = |p: &Path| std::fs::metadata(p).map(|m| (m.ino(), m.mtime_nsec(), m.size()));
    let before = stamp(&catalog::file(&cache)).unwrap();
    let stores = Arc::new(stores);
    let (_, warm) = catalog::warm::open(&cache, &stores);
    let (tx, rx) = mpsc::channel();
    let loader = Loader::start_with(stores.clone(), tx, Some(warm));
    let mut finished = 0;
    while finished < stores.stores.len() {
        if let Event::Action(Action::Progress { finished: true, .. }) = rx
            .recv_timeout(Duration::from_secs(20))
            .expect("every store finishes")
        {
            finished += 1;
        }
    }
    // The stat passes' records are written before each store reports; give a stray write
    // (the old whole-file patch) the time to land before looking.
    std::thread::sleep(Duration::from_millis(300));
    drop(loader);
    assert_eq!(
        stamp(&catalog::file(&cache)).unwrap(),
        before,
        "catalog.bin rewritten by a warm start"
    );
}

/// `spool list --json --all` (and the table) prints the same bytes with a warm catalog as
/// with none, after random changes to the fixtures: the catalog and the fast JSON writer
/// change what it costs, never what it says (issue 10).
#[test]
fn list_output_with_a_warm_catalog_equals_output_without_one() {
    let h = home();
    let stores = h.stores();
    let cache = h.path().join(".cache/spool");
    let mut rng = Lcg(7);
    for round in 0..6u64 {
        for args in [&["list", "--json", "--all"][..], &["list", "--all"][..]] {
            let _ = std::fs::remove_dir_all(&cache);
            let cold = h.ok(args);
            assert!(catalog::load(&cache).is_some(), "the cold run wrote it");
            assert_eq!(h.ok(args), cold, "round {round}: warm {args:?} differs");
        }
        let rows = stores.list_of(None);
        let s = &rows[rng.next(rows.len())];
        let store = stores.store_for(s);
        let _ = match rng.next(4) {
            0 => store.set_pinned(&s.id, !s.pinned()),
            1 => store.set_unread(&s.id, !s.unread),
            2 => store.rename(&s.id, &format!("title \u{202e}{round} \"q\"")),
            _ => store.set_archived(&s.id, !s.archived),
        };
        // The next round's cold run starts from no catalog; its warm run must see the change.
        let warm_before = h.ok(&["list", "--json", "--all"]);
        let _ = std::fs::remove_dir_all(&cache);
        assert_eq!(
            h.ok(&["list", "--json", "--all"]),
            warm_before,
            "round {round}"
        );
    }
}

/// A warm `spool list` that finds nothing changed writes nothing: `catalog.bin` and its
/// head keep their inode, mtime and size (issue 10: a rewrite is the whole file, ~37 MB at
/// 100k sessions). A change is still written, by the next list.
#[test]
fn a_warm_list_with_nothing_changed_leaves_the_catalog_files_alone() {
    use std::os::unix::fs::MetadataExt;
    let h = home();
    let cache = h.path().join(".cache/spool");
    let args = ["list", "--json", "--all"];
    let cold = h.ok(&args);
    let stamp = |name: &str| {
        let m = std::fs::metadata(cache.join(name)).expect(name);
        (m.ino(), m.mtime(), m.mtime_nsec(), m.size())
    };
    let before = (stamp(catalog::FILE), stamp("head.bin"));
    for run in 0..3 {
        assert_eq!(h.ok(&args), cold, "warm run {run}");
        assert_eq!(
            (stamp(catalog::FILE), stamp("head.bin")),
            before,
            "warm run {run} rewrote the catalog"
        );
    }
    let stores = h.stores();
    let rows = stores.list_of(None);
    let s = rows.iter().find(|r| !r.archived).expect("a session");
    stores
        .store_for(s)
        .set_archived(&s.id, true)
        .expect("archive");
    h.ok(&args);
    assert_ne!(stamp(catalog::FILE), before.0, "the change was not written");
}

/// A running session's row expires at the pass that reads it, so every list reads it again;
/// when what it reads is what the catalog holds, the catalog is not rewritten (at 100k
/// sessions every `spool list` while an agent ran rewrote 37 MB to store a new expiry time).
#[test]
fn a_warm_list_beside_a_running_session_leaves_the_catalog_alone() {
    use std::os::unix::fs::MetadataExt;
    let h = home();
    // A loom log written now and held open by this process: loom's row says running.
    let id = "20260314-100000";
    let now = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let log = loom_file(&h, id);
    std::fs::write(
        &log,
        format!(
            "{{\"kind\":\"meta\",\"time\":\"{now}\",\"cwd\":\"/tmp\"}}\n\
             {{\"kind\":\"message\",\"time\":\"{now}\",\"message\":{{\"role\":\"user\",\"content\":\"hi\"}}}}\n"
        ),
    )
    .expect("loom log");
    let held = std::fs::File::open(&log).expect("hold");
    let cache = h.path().join(".cache/spool");
    let args = ["list", "--json", "--all"];
    let cold = h.ok(&args);
    let running = format!("\"id\":\"{id}\"");
    let line = cold
        .lines()
        .find(|l| l.contains(&running))
        .expect("the running row");
    assert!(line.contains("\"ended\":\"running\""), "{line}");
    let stamp = || {
        let m = std::fs::metadata(cache.join(catalog::FILE)).expect("catalog");
        (m.ino(), m.mtime(), m.mtime_nsec(), m.size())
    };
    let before = stamp();
    for run in 0..2 {
        // Past the second the first list stored as the row's expiry time.
        std::thread::sleep(Duration::from_millis(1100));
        assert_eq!(h.ok(&args), cold, "warm run {run}");
        assert_eq!(stamp(), before, "warm run {run} rewrote the catalog");
    }
    drop(held);
    let ended = h.ok(&args);
    assert_ne!(ended, cold, "the closed log was not seen");
    assert_ne!(stamp(), before, "the ended row was not written");
}

/// A start whose first frame came from the head decodes the catalog on a thread of its own
/// (`Loader::start_deferred`): the loader returns while that decode runs (the UI answers
/// keys meanwhile), the cached rows reach the UI before any store's news, and the stores
/// are then checked against the cached metas, not listed cold.
#[test]
fn a_deferred_warm_start_returns_at_once_and_its_rows_come_before_the_checks() {
    use std::sync::{Arc, mpsc};

    use spool::app::Action;
    use spool::loader::{Event, Loader};

    let h = home();
    let stores = h.stores();
    let cache = h.path().join(".cache/spool");
    agree(&h, &stores, "a cold start");
    let stores = Arc::new(stores);
    let (tx, rx) = mpsc::channel();
    let (go, wait) = mpsc::channel::<()>();
    let loader = {
        let (stores, tx, cache) = (stores.clone(), tx.clone(), cache.clone());
        Loader::start_deferred(stores.clone(), tx.clone(), move || {
            // Held until the test has seen the loader return: the decode is not the caller's.
            wait.recv().ok()?;
            let (rows, warm) = catalog::warm::open(&cache, &stores);
            tx.send(Event::Action(Action::Cached(rows))).ok()?;
            Some(warm)
        })
    };
    assert!(
        rx.try_recv().is_err(),
        "nothing is sent before the catalog is read"
    );
    go.send(()).unwrap();
    let mut cached = None;
    let mut finished = 0;
    while finished < stores.stores.len() {
        match rx
            .recv_timeout(Duration::from_secs(20))
            .expect("every store finishes")
        {
            Event::Action(Action::Cached(rows)) => cached = Some(rows.len()),
            Event::Action(a) => {
                assert!(
                    cached.is_some(),
                    "a store's news before the cached rows: {a:?}"
                );
                assert!(
                    !matches!(a, Action::Rows(_)),
                    "a store was listed cold, not checked against the catalog"
                );
                if let Action::Progress { finished: true, .. } = a {
                    finished += 1;
                }
            }
            _ => {}
        }
    }
    assert!(cached.unwrap() > 0);
    drop(loader);
}

/// `list_keeping` is `list` with the catalog's metas and discovery's candidates handed back
/// (the CLI leaves them to the exit): the same rows, and one meta and one candidate per
/// session, warm or after a change.
#[test]
fn listing_and_keeping_what_was_read_gives_the_same_rows() {
    let h = home();
    let stores = h.stores();
    let cache = h.path().join(".cache/spool");
    let cold = catalog::list(&stores, None, Some(&cache));
    for what in ["warm", "after an append"] {
        let (rows, left) = catalog::pass::list_keeping(&stores, None, Some(&cache));
        assert_eq!(rows, catalog::list(&stores, None, Some(&cache)), "{what}");
        assert_eq!(rows.len(), cold.len(), "{what}");
        assert!(left.metas() >= rows.len(), "{what}: {} metas", left.metas());
        assert_eq!(left.candidates(), left.metas(), "{what}");
        let log = loom_file(&h, "20260314-141500");
        let before = std::fs::read_to_string(&log).unwrap();
        std::fs::write(
            &log,
            format!("{before}{}\n", before.lines().last().unwrap()),
        )
        .unwrap();
    }
}

/// A warm `list --json` prints from the catalog's bytes (`list_warm`) only while the stat
/// pass finds every session as cached: then its rows, in order, are the stores' own. After
/// an append, a new session or a removal it hands the surveys it took to the usual path,
/// which brings the catalog up to date, and the next list reads in place again.
#[test]
fn a_warm_list_reads_rows_in_place_only_while_the_catalog_is_current() {
    use spool::catalog::list_warm;
    let h = home();
    let stores = h.stores();
    let cache = h.path().join(".cache/spool");
    let refs = |rows: &[&spool::catalog::view::RowHead]| -> Vec<String> {
        rows.iter()
            .map(|r| format!("{}:{}", r.store, r.id))
            .collect()
    };
    let direct = |kind| -> Vec<String> {
        stores
            .list_of(kind)
            .iter()
            .map(SessionSummary::reference)
            .collect()
    };
    let settle = |what: &str| {
        let taken = list_warm::json(&stores, None, &cache, refs)
            .expect_err(&format!("{what}: the catalog is not current"));
        assert_eq!(taken.len(), stores.stores.len(), "{what}: a survey a store");
        let (rows, _) = catalog::pass::list_surveyed(&stores, None, Some(&cache), taken);
        let rows: Vec<String> = rows.iter().map(|r| r.reference()).collect();
        assert_eq!(rows, direct(None), "{what}: the usual path's rows");
        let warm = list_warm::json(&stores, None, &cache, refs)
            .unwrap_or_else(|_| panic!("{what}: current again"));
        assert_eq!(warm, rows, "{what}: rows read in place");
    };
    settle("a cold start");
    let loom = Some(spool::model::StoreKind::Loom);
    let only = list_warm::json(&stores, loom, &cache, refs).unwrap_or_else(|_| panic!("loom"));
    assert!(!only.is_empty());
    assert_eq!(only, direct(loom), "one store's rows");

    let log = loom_file(&h, "20260314-141500");
    let before = std::fs::read_to_string(&log).unwrap();
    let last = before.lines().last().unwrap().to_string();
    std::fs::write(&log, format!("{before}{last}\n")).unwrap();
    settle("an append");
    std::fs::copy(
        loom_file(&h, "20260314-162041"),
        loom_file(&h, "20260316-000000"),
    )
    .unwrap();
    settle("a new session");
    std::fs::remove_file(loom_file(&h, "20260314-162041")).unwrap();
    settle("a session gone");
}

/// A cold pass stopped part-way (the user quit while a large store was still being read:
/// a 100k Claude Code store reads for minutes) leaves what it had read in the catalog, so
/// the next start lists those sessions warm and reads only the rest; that start then lists
/// exactly what the stores hold.
#[test]
fn a_cold_pass_stopped_part_way_keeps_what_it_read() {
    use std::sync::{Arc, mpsc};

    use spool::app::Action;
    use spool::loader::{Event, Loader};
    use spool::model::StoreKind;

    catalog::checkpoint::first_at_once_for_tests();
    let d = tempfile::tempdir().unwrap();
    let codex = d.path().join("codex");
    let count = 3000;
    common::rollouts::store(&codex, count);
    let stores = Arc::new(Stores::open(&spool::store::Roots {
        codex_dir: codex,
        ..spool::store::Roots::all_in(&d.path().join("empty"))
    }));
    let cache = d.path().join("cache");
    let (_, warm) = catalog::warm::open(&cache, &stores);
    let (tx, rx) = mpsc::channel();
    let loader = Loader::start_with(stores.clone(), tx, Some(warm));
    // Quit as soon as the store's first rows are out: its pass is still reading.
    loop {
        let e = rx.recv_timeout(Duration::from_secs(20)).expect("rows");
        if matches!(&e, Event::Action(Action::Cached(r)) if !r.is_empty()) {
            break;
        }
    }
    drop(loader);
    drop(rx);
    // The pass returns at its next session; a write under way is atomic either way.
    std::thread::sleep(Duration::from_millis(300));
    let kept = catalog::load(&cache)
        .and_then(|c| c.sections.into_iter().find(|s| s.kind == StoreKind::Codex))
        .map_or(0, |s| s.entries.len());
    let total = count as usize + 2 - 1; // the archived copy is the same session
    assert!(kept > 0, "nothing the stopped pass read was kept");
    assert!(
        kept < total,
        "the pass was not stopped part-way ({kept} kept): the test proves nothing"
    );
    // The next start: what was kept is listed through the catalog, the rest read; the
    // whole equals the stores' own listing.
    let through = catalog::list(&stores, None, Some(&cache));
    assert_eq!(through, stores.list_of(None));
    assert_eq!(through.len(), total);
}
