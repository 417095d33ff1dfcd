//! Packing a survey: every candidate comes back as it went in, names that hold the id
//! store it once, pieces joined are the whole, and a packed survey is small.

use super::*;

fn c(id: &str, path: &str, mtime: Option<u64>) -> Candidate {
    Candidate {
        id: id.into(),
        path: path.into(),
        mtime: mtime.map(|s| SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(s)),
        stat: None,
    }
}

/// Every candidate comes back as it went in, byte for byte: a name that is its id, one
/// that is not, several directories in any order, a trailing slash, a root, a non-UTF-8
/// name, an empty id.
#[test]
fn a_packed_candidate_comes_back_as_it_went_in() {
    let bad = OsStr::from_bytes(b"/s/\xffname.jsonl").to_os_string();
    let mut cs = vec![
        c("a1", "/s/loop/a1", Some(5)),
        c("a2", "/s/loop/a2", None),
        c("b", "/p/one/b.jsonl", Some(7)),
        c("a3", "/s/loop/a3", Some(9)),
        c("d", "/p/two/d.jsonl", None),
        c("e", "/p/one/sub/", None),
        c("f", "/", None),
        c("", "/s/loop/x", None),
        c("g", "rel/g", None),
        c("i", "//i", None),
        c("j", "/s//j", None),
        c("k", "/s/./k", None),
        c("l", "/s/l/.", None),
        c("m", "/s/l/..", None),
        c("n", "/n", None),
        c("o", "o", None),
        c("q", "/p/one/q.jsonl.jsonl", None),
        c("r.jsonl", "/p/one/r.jsonl", None),
        c("", "/p/two/.jsonl", None),
        c("t", "/p/two/t.json", None),
        c("u", "/p/two/rollout-1-u.jsonl", None),
        c("v", "/p/two/xv", None),
        c("w.jsonl", "/p/two/aw.jsonl.jsonl", None),
        c("yy", "/p/two/y.jsonl", None),
    ];
    cs.push(Candidate {
        id: "h".into(),
        path: bad.into(),
        mtime: None,
        stat: None,
    });
    let keys: Vec<u64> = (0..cs.len() as u64).collect();
    let p = Packed::of(Survey {
        candidates: cs.clone(),
        keys: keys.clone(),
    });
    assert_eq!(p.count(), cs.len());
    assert_eq!(p.keys, keys);
    let mut buf = PathBuf::new();
    for (i, want) in cs.iter().enumerate() {
        assert_eq!(p.id(i), want.id);
        assert_eq!(
            p.path(i, &mut buf).as_os_str().as_bytes(),
            want.path.as_os_str().as_bytes(),
            "{i}"
        );
        p.with(i, |got| {
            assert_eq!(
                (&got.id, got.path.as_os_str(), got.mtime),
                (&want.id, want.path.as_os_str(), want.mtime)
            );
        });
    }
    assert_eq!(
        p.parts[0].dirs.len(),
        13,
        "one entry per directory: {:?}",
        p.parts[0].dirs
    );
}

/// Claude Code's transcripts are named by their id and `.jsonl`: only the ids are
/// stored, and each path comes back whole.
#[test]
fn a_transcript_named_by_its_id_stores_only_the_id() {
    let id = |i: u32| format!("{i:08x}-0000-4000-8000-000000000000");
    let cs: Vec<Candidate> = (0..1000)
        .map(|i| {
            c(
                &id(i),
                &format!("/h/.claude/projects/-p{}/{}.jsonl", i % 7, id(i)),
                None,
            )
        })
        .collect();
    let (p, _) = Packed::pack(cs.clone());
    assert_eq!(p.parts[0].text.len(), 1000 * 36, "the ids alone");
    comes_back_whole(&p, &cs);
}

/// Each of `cs` comes back from `p` whole, by `path` and by `fill`.
fn comes_back_whole(p: &Packed, cs: &[Candidate]) {
    let mut buf = PathBuf::new();
    let mut got = Candidate::unreadable_dir(Path::new("/x"));
    for (i, want) in cs.iter().enumerate() {
        assert_eq!(p.path(i, &mut buf), want.path, "{i}");
        p.fill(i, &mut got);
        assert_eq!((&got.id, &got.path), (&want.id, &want.path), "{i}");
    }
}

/// Codex's rollouts are named `rollout-<time>-<id>.jsonl`: each id is stored once,
/// with what comes before it, and each path comes back whole.
#[test]
fn a_rollout_named_with_its_id_stores_the_id_once() {
    let id = |i: u32| format!("019c{i:04x}-0000-7000-8000-000000000000");
    let name = |i: u32| format!("rollout-2026-03-14T10-15-{:02}-{}.jsonl", i % 60, id(i));
    let cs: Vec<Candidate> = (0..1000)
        .map(|i| {
            c(
                &id(i),
                &format!("/h/.codex/sessions/2026/03/{}/{}", i % 9, name(i)),
                None,
            )
        })
        .collect();
    let (p, _) = Packed::pack(cs.clone());
    assert_eq!(
        p.parts[0].text.len(),
        1000 * (36 + 28),
        "the ids and the prefixes"
    );
    comes_back_whole(&p, &cs);
}

/// Surveys packed and keyed apart and joined are the survey packed and keyed whole:
/// every candidate, its path and key come back, across the parts' bounds. The pieces'
/// texts are taken as they are, not copied (issue 10: the copy beside the freed pieces was
/// ~10 MB of a warm start's peak at 100k rollouts).
#[test]
fn pieces_joined_are_the_whole_packed() {
    let d = tempfile::tempdir().unwrap();
    let store = crate::store::loom_store::LoomStore::new(d.path());
    let keyer = super::super::survey::Keyer::new(&store);
    let mut cs = vec![
        c("a", "/p/one/a.jsonl", Some(1)),
        c("b", "/p/one/rollout-1-b.jsonl", None),
        c("x", "/p/two/y", Some(2)),
        c("d", "/p/one/d", None),
        c("e", "/", None),
        c("f", "/p/two/f.jsonl", Some(3)),
    ];
    for (i, cand) in cs.iter_mut().enumerate() {
        cand.stat = (i != 2).then(|| Stat::from_fields([i as u64; 8]));
    }
    let pieces = [&cs[0..2], &cs[2..4], &cs[4..4], &cs[4..]];
    let pieces: Vec<Packed> = (pieces.iter())
        .map(|p| Packed::keyed(p.to_vec(), &keyer))
        .collect();
    let texts: Vec<*const u8> = (pieces.iter())
        .flat_map(|p| p.parts.iter().map(|p| p.text.as_ptr()))
        .collect();
    let joined = Packed::join(pieces);
    let (mut whole, stats) = Packed::pack(cs.clone());
    whole.keys = keyer.keys_packed(&whole, &stats);
    assert_eq!(joined.count(), cs.len());
    assert_eq!(joined.parts.len(), 3, "the empty piece is left out");
    let taken: Vec<*const u8> = joined.parts.iter().map(|p| p.text.as_ptr()).collect();
    assert_eq!(taken, texts, "each piece's text is taken, not copied");
    assert_eq!(joined.keys, whole.keys);
    assert_eq!(joined.keys, keyer.keys(&cs));
    let (mut a, mut b) = (PathBuf::new(), PathBuf::new());
    for (i, want) in cs.iter().enumerate() {
        assert_eq!(joined.id(i), want.id, "{i}");
        assert_eq!(joined.path(i, &mut a), want.path, "{i}");
        assert_eq!(joined.path(i, &mut a), whole.path(i, &mut b), "{i}");
        joined.with(i, |got| assert_eq!(got.mtime, want.mtime, "{i}"));
    }
    let text: Vec<u8> = (joined.parts.iter()).flat_map(|p| p.text.clone()).collect();
    assert_eq!(
        text, whole.parts[0].text,
        "the parts' texts are the whole's, in order"
    );
}

/// A Loop-like store of 10k sessions in one directory: its packed survey is a fraction
/// of discovery's (136 bytes inline a candidate, plus its id and path on the heap).
#[test]
fn a_packed_survey_is_small() {
    let dir = "/home/someone/.local/share/loop/sessions";
    let cs: Vec<Candidate> = (0..10_000)
        .map(|i| {
            let id = format!("{i:08x}-0000-4000-8000-000000000000");
            c(&id, &format!("{dir}/{id}"), Some(i))
        })
        .collect();
    let keys = vec![0; cs.len()];
    let p = Packed::of(Survey {
        candidates: cs,
        keys,
    });
    let per = p.bytes() / 10_000;
    assert!(per <= 72, "{per} bytes a candidate");
}

/// The browser's warm check over a packed survey finds what `spool list`'s check over
/// discovery's candidates finds, after every kind of change: a log appended to, one
/// removed, a new one, one left alone.
#[test]
fn a_check_over_a_packed_survey_equals_one_over_the_candidates() {
    use std::io::Write;

    use crate::catalog::pass::{self, ById, Checked};
    use crate::store::Store;
    use crate::store::loom_store::LoomStore;
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/loom");
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("sessions");
    std::fs::create_dir_all(&dir).unwrap();
    for e in std::fs::read_dir(fixture.join("sessions")).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_file() {
            std::fs::copy(e.path(), dir.join(e.file_name())).unwrap();
        }
    }
    let store = LoomStore::new(tmp.path());
    let before = store.discover();
    assert!(before.len() >= 3);
    let metas: Vec<_> = before.iter().map(|c| pass::read(&store, c).meta).collect();
    // Appended to, removed, and a new log; the rest left alone.
    let first = &before[0].path;
    let log = std::fs::read(first).unwrap();
    std::fs::OpenOptions::new()
        .append(true)
        .open(first)
        .unwrap()
        .write_all(&log)
        .unwrap();
    std::fs::remove_file(&before[1].path).unwrap();
    std::fs::copy(&before[2].path, dir.join("20260315-101010.jsonl")).unwrap();
    let seen = |c: Checked| {
        let mut fresh: Vec<_> = c.fresh.iter().map(|e| e.meta.clone()).collect();
        fresh.sort_by(|a, b| a.id.cmp(&b.id));
        let mut known: Vec<_> = (c.known.keys())
            .map(|id| (id.to_string(), *c.known.get(id).unwrap()))
            .collect();
        known.sort_by(|a, b| a.0.cmp(&b.0));
        let (mut changed, mut gone) = (c.changed, c.gone);
        changed.sort();
        gone.sort();
        (fresh, known, changed, gone)
    };
    let plain = seen(pass::check(
        &store,
        ById::new(metas.clone()),
        &store.discover_unordered(),
    ));
    let packed = Packed::of(crate::catalog::survey::survey(&store));
    let from_packed = seen(pass::check_packed(&store, ById::new(metas), &packed));
    assert_eq!(from_packed, plain);
    // The changes were seen: one changed, one gone, one new, and every log known.
    let (fresh, known, changed, gone) = plain;
    assert_eq!(changed, [before[0].id.to_string()]);
    assert_eq!(gone, [before[1].id.to_string()]);
    assert_eq!(fresh.len(), 2, "{fresh:?}");
    assert_eq!(known.len(), before.len());
}
