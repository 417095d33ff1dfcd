//! The catalog file: round trip, and every damaged or foreign file refused.

use super::*;

fn sample() -> Catalog {
    let mut row = SessionSummary::new(StoreKind::Loom, "20260314-091502", "/s/a.jsonl");
    row.set_title("Fix the login bug");
    row.cwd = Some("/home/u/acme".into());
    row.updated_at = chrono::DateTime::from_timestamp(1_773_480_000, 870_000_000);
    row.set_badges(["cwd missing"]);
    let meta = Meta {
        id: row.id.to_string(),
        path: row.path(),
        key: 42,
        cwd: row.cwd.clone(),
        cwd_dir: false,
        expires: Some(7),
    };
    Catalog {
        sections: vec![Section {
            kind: StoreKind::Loom,
            dir: "/s".into(),
            entries: vec![Entry {
                meta,
                row: Some(std::sync::Arc::new(row)),
            }],
        }],
    }
}

#[test]
fn catalog_round_trips_through_its_file() {
    let d = tempfile::tempdir().unwrap();
    let cache = d.path().join("cache/spool");
    let cat = sample();
    save(&cache, &cat).unwrap();
    assert_eq!(load(&cache), Some(cat));
}

#[test]
fn damaged_truncated_and_foreign_catalogs_are_refused() {
    let bytes = encode(&sample()).unwrap();
    assert!(decode(&bytes).is_some());
    // Every single flipped byte, anywhere, is refused (header or body).
    for i in 0..bytes.len() {
        let mut b = bytes.clone();
        b[i] ^= 0x5a;
        assert_eq!(decode(&b), None, "flipped byte {i}");
    }
    for n in 0..bytes.len() {
        assert_eq!(decode(&bytes[..n]), None, "cut at {n}");
    }
    // Another version of the layout.
    let mut v = bytes.clone();
    v[8..12].copy_from_slice(&(VERSION + 1).to_le_bytes());
    assert_eq!(decode(&v), None);
    let mut s = bytes;
    s[12..20].copy_from_slice(&(schema() ^ 1).to_le_bytes());
    assert_eq!(decode(&s), None);
}

#[test]
fn entries_keep_a_meta_that_differs_from_their_row_and_rows_that_are_skipped() {
    let mut cat = sample();
    let s = &mut cat.sections[0];
    // A store may list a session under another id or path than its row says (an id
    // mismatch), or skip a candidate (no row): those metas are written out in full.
    let mut odd = s.entries[0].clone();
    odd.meta.id = "other".into();
    odd.meta.path = "/s/other.jsonl".into();
    odd.meta.cwd = None;
    let skipped = Entry {
        meta: Meta {
            id: "not-a-session".into(),
            path: "/s/not-a-session.txt".into(),
            key: 9,
            cwd: Some("/w".into()),
            cwd_dir: true,
            expires: None,
        },
        row: None,
    };
    s.entries.push(odd);
    s.entries.push(skipped);
    let bytes = encode(&cat).unwrap();
    assert_eq!(decode(&bytes), Some(cat.clone()));
    // The common entry's meta costs a few bytes beyond its row, not a second id and path.
    let one = postcard::to_stdvec(&cat.sections[0].entries[0]).unwrap();
    let row = postcard::to_stdvec(cat.sections[0].entries[0].row.as_deref().unwrap()).unwrap();
    assert!(one.len() < row.len() + 16, "{} vs {}", one.len(), row.len());
}

#[test]
fn a_pass_memo_gives_the_same_key_as_one_lstat_per_input() {
    let d = tempfile::tempdir().unwrap();
    let (session, shared, state) = (
        d.path().join("col/s1"),
        d.path().join("col/archive.json"),
        d.path().join(".spool"),
    );
    std::fs::create_dir_all(&session).unwrap();
    std::fs::write(session.join("meta.json"), "{}").unwrap();
    let inputs = |id: &str| {
        vec![
            session.clone(),
            session.join("meta.json"),
            shared.clone(),
            state.join(format!("{id}.json")),
        ]
    };
    let memo_key =
        |id: &str| stamp::Memo::new(Some(state.clone())).key(&inputs(id), &session, None);
    // No state directory, no shared file: both count as missing.
    assert_eq!(memo_key("a"), stamp::key(&inputs("a")));
    // Both present; a state file of another id is still missing.
    std::fs::create_dir_all(&state).unwrap();
    std::fs::write(state.join("a.json"), "{}").unwrap();
    std::fs::write(&shared, "[]").unwrap();
    assert_eq!(memo_key("a"), stamp::key(&inputs("a")));
    assert_eq!(memo_key("b"), stamp::key(&inputs("b")));
    assert_ne!(memo_key("a"), memo_key("b"));
    // One memo over many sessions: the shared file stamped once still gives each its key.
    let mut memo = stamp::Memo::new(Some(state.clone()));
    for id in ["a", "b", "a"] {
        assert_eq!(
            memo.key(&inputs(id), &session, None),
            stamp::key(&inputs(id)),
            "{id}"
        );
    }
    // Discovery's `lstat` of the session's path stands for that input's: the same key, and
    // a stale one (the path changed since) gives another key, so the row is read again.
    let seen = stamp::Stat::of(&std::fs::symlink_metadata(&session).unwrap());
    assert_eq!(
        memo.key(&inputs("a"), &session, Some(&seen)),
        stamp::key(&inputs("a"))
    );
    let other = stamp::Stat::of(&std::fs::symlink_metadata(&shared).unwrap());
    assert_ne!(
        memo.key(&inputs("a"), &session, Some(&other)),
        stamp::key(&inputs("a"))
    );
}

/// A new entry for the sample's section (another loom session).
fn entry(id: &str) -> Entry {
    let mut e = sample().sections[0].entries[0].clone();
    let path = PathBuf::from(format!("/s/{id}.jsonl"));
    if let Some(r) = e.row.as_mut().map(std::sync::Arc::make_mut) {
        r.set_id(id);
        r.set_path(path.clone());
    }
    e.meta.id = id.into();
    e.meta.path = path;
    e
}

#[test]
fn patches_go_to_the_log_and_load_replays_them_on_their_base_only() {
    let d = tempfile::tempdir().unwrap();
    let cache = d.path().join("cache");
    std::fs::create_dir_all(d.path().join("s")).unwrap();
    let mut cat = sample();
    cat.sections[0].dir = d.path().join("s");
    save(&cache, &cat).unwrap();
    let base = std::fs::read(file(&cache)).unwrap();
    let dir = cat.sections[0].dir.clone();
    let first = cat.sections[0].entries[0].meta.id.clone();

    // A new session, a changed one, a gone one: the base file is not rewritten.
    log::append(&cache, StoreKind::Loom, &dir, &[entry("n1")], &[]);
    let mut changed = entry("n1");
    changed.meta.key = 99;
    log::append(&cache, StoreKind::Loom, &dir, &[changed.clone()], &[first]);
    assert_eq!(std::fs::read(file(&cache)).unwrap(), base);
    let mut want = cat.clone();
    want.sections[0].entries = vec![changed];
    assert_eq!(load(&cache), Some(want.clone()));

    // Every damaged or cut log gives the base with a prefix of the patches, never a crash.
    let log = std::fs::read(log::file(&cache)).unwrap();
    for n in 0..log.len() {
        std::fs::write(log::file(&cache), &log[..n]).unwrap();
        assert!(load(&cache).is_some(), "cut at {n}");
        let mut b = log.clone();
        b[n] ^= 0x5a;
        std::fs::write(log::file(&cache), &b).unwrap();
        let got = load(&cache).unwrap();
        assert!(
            got == want || got.sections[0].entries.len() <= 2,
            "flipped {n}"
        );
    }
    // A log left from an older base (another process saved since) is ignored.
    std::fs::write(log::file(&cache), &log).unwrap();
    let mut other = cat.clone();
    other.sections[0].entries[0].meta.key = 1;
    save(&cache, &other).unwrap();
    assert!(!log::file(&cache).exists(), "save folds the log away");
    std::fs::write(log::file(&cache), &log).unwrap();
    assert_eq!(load(&cache), Some(other));
}

#[test]
fn a_long_log_is_folded_into_the_base_and_threads_lose_no_patch() {
    let d = tempfile::tempdir().unwrap();
    let cache = d.path().join("cache");
    let dir = d.path().join("s");
    std::fs::create_dir_all(&dir).unwrap();
    // No base yet: the first patch writes one.
    log::append(&cache, StoreKind::Loom, &dir, &[entry("a0")], &[]);
    assert!(file(&cache).exists());
    let threads: Vec<_> = (0..4)
        .map(|t| {
            let (cache, dir) = (cache.clone(), dir.clone());
            std::thread::spawn(move || {
                for i in 0..150 {
                    // Long titles, so the log passes `COMPACT_AT` a few times.
                    let mut e = entry(&format!("t{t}-{i}"));
                    if let Some(r) = e.row.as_mut().map(std::sync::Arc::make_mut) {
                        r.set_title("x".repeat(2000));
                    }
                    log::append(&cache, StoreKind::Loom, &dir, &[e], &[]);
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let log_len = std::fs::metadata(log::file(&cache)).map_or(0, |m| m.len());
    assert!(log_len <= log::COMPACT_AT as u64, "log {log_len} bytes");
    let cat = load(&cache).unwrap();
    assert_eq!(cat.sections.len(), 1);
    assert_eq!(cat.sections[0].entries.len(), 1 + 4 * 150);
}

/// A section's entries are decoded into a vector of their exact count (serde's doubling
/// copied and over-allocated megabytes before the warm start's first frame, issue 10).
#[test]
fn entries_decode_into_a_vector_of_their_exact_count() {
    let mut cat = sample();
    cat.sections[0].entries = (0..5000).map(|i| entry(&format!("e{i}"))).collect();
    let back = decode(&encode(&cat).unwrap()).unwrap();
    assert_eq!(back, cat);
    let e = &back.sections[0].entries;
    assert_eq!((e.len(), e.capacity()), (5000, 5000));
}

/// A saved section is in list order (rowless entries last), so a reader's sort of the
/// sections' rows only merges sorted runs; no entry is lost or changed on the way.
#[test]
fn sections_are_put_in_list_order_before_a_save() {
    let mut cat = sample();
    let s = &mut cat.sections[0];
    let mut skipped = entry("not-a-session");
    skipped.row = None;
    s.entries.insert(0, skipped);
    for (i, id) in ["b", "pinned", "a", "c"].into_iter().enumerate() {
        let mut e = entry(id);
        if let Some(r) = e.row.as_mut().map(std::sync::Arc::make_mut) {
            r.updated_at = chrono::DateTime::from_timestamp(1_773_480_000 + 60 * i as i64, 0);
            if id == "pinned" {
                r.pinned_at = r.updated_at;
            }
        }
        s.entries.push(e);
    }
    let mut before: Vec<Entry> = s.entries.clone();
    in_list_order(&mut cat);
    let after = &cat.sections[0].entries;
    let ids: Vec<&str> = after.iter().map(|e| e.meta.id.as_str()).collect();
    assert_eq!(ids[0], "pinned");
    assert_eq!(ids.last(), Some(&"not-a-session"));
    let rows: Vec<&SessionSummary> = after.iter().filter_map(|e| e.row.as_deref()).collect();
    assert!(rows.is_sorted_by(|a, b| crate::store::registry::list_order(a, b).is_le()));
    before.sort_by(|a, b| a.meta.id.cmp(&b.meta.id));
    let mut now = after.clone();
    now.sort_by(|a, b| a.meta.id.cmp(&b.meta.id));
    assert_eq!(now, before);
}

/// `stream` checks the file piece by piece: any split into whole words, then one last piece
/// of any length, gives the checksum of the whole body, and a flipped byte anywhere changes
/// it (the last piece's tail bytes are mixed in too).
#[test]
fn the_checksum_taken_piece_by_piece_is_the_whole_bodys() {
    let body: Vec<u8> = (0..203u32).map(|i| (i * 37 % 251) as u8).collect();
    for len in [0, 1, 7, 8, 9, 64, 130, 203] {
        let body = &body[..len];
        let whole = super::checksum(body);
        for word_pieces in [1, 2, 3, 8] {
            let mut sum = super::Sum::new(len as u64);
            let mut at = 0;
            while body.len() - at > 8 * word_pieces {
                sum.add(&body[at..at + 8 * word_pieces]);
                at += 8 * word_pieces;
            }
            sum.add(&body[at..]);
            assert_eq!(
                sum.finish(),
                whole,
                "{len} bytes in pieces of {word_pieces} words"
            );
        }
        for i in 0..len {
            let mut flipped = body.to_vec();
            flipped[i] ^= 1;
            assert_ne!(
                super::checksum(&flipped),
                whole,
                "byte {i} of {len} flipped"
            );
        }
    }
}

/// A catalog of three stores: an empty section, one large enough to be decoded on a thread
/// of its own (`stream::OWN_THREAD`), and a small one.
fn three_sections() -> Catalog {
    let entry = |i: usize| {
        let mut e = sample().sections.remove(0).entries.remove(0);
        let mut row = (*e.row.take().unwrap()).clone();
        row.set_id(format!("20260314-{i:06}"));
        row.set_path(std::path::PathBuf::from(format!("/s/{}.jsonl", row.id)));
        row.set_title(format!("session {i} {}", "x".repeat(300)));
        e.meta.id = row.id.to_string();
        e.meta.path = row.path();
        e.meta.key = i as u64;
        e.row = Some(std::sync::Arc::new(row));
        e
    };
    let section = |kind, dir: &str, n: std::ops::Range<usize>| Section {
        kind,
        dir: dir.into(),
        entries: n.map(entry).collect(),
    };
    Catalog {
        sections: vec![
            section(StoreKind::Loop, "/empty", 0..0),
            section(StoreKind::Loom, "/big", 0..2000),
            section(StoreKind::Harness, "/small", 2000..2003),
        ],
    }
}

/// The table at the body's end: for each section, little-endian words, its length and
/// its checksum.
fn table_of(bytes: &[u8]) -> Vec<(u64, u64)> {
    let word = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap());
    let end = bytes.len();
    let n = word(end - 8) as usize;
    let at = end - 8 - 16 * n;
    (0..n)
        .map(|i| (word(at + 16 * i), word(at + 16 * i + 8)))
        .collect()
}

/// The body ends in a table: each section's length and checksum, then their count, one
/// little-endian word each; the sections and the table fill the body exactly, and the
/// header's checksum is the table's. Each section decodes from its own span, large ones on
/// threads of their own, and they come back in file order.
#[test]
fn the_body_ends_in_a_table_of_its_sections_lengths_and_checksums() {
    let cat = three_sections();
    let bytes = encode(&cat).unwrap();
    let end = bytes.len();
    assert_eq!(&bytes[end - 8..], 3u64.to_le_bytes(), "the section count");
    let table = table_of(&bytes);
    let lens: Vec<u64> = table.iter().map(|t| t.0).collect();
    assert_eq!(
        HEADER as u64 + lens.iter().sum::<u64>() + 56,
        end as u64,
        "{lens:?}"
    );
    let mut at = HEADER;
    for (i, &(len, sum)) in table.iter().enumerate() {
        let own = postcard::to_stdvec(&cat.sections[i]).unwrap();
        assert_eq!(&bytes[at..at + len as usize], own.as_slice(), "section {i}");
        let mut r = super::Running::new();
        r.add(&own);
        assert_eq!(r.finish(), sum, "section {i}'s checksum");
        at += len as usize;
    }
    assert_eq!(
        bytes[28..36],
        checksum(&bytes[at..]).to_le_bytes(),
        "the header's checksum is the table's"
    );
    assert!(
        lens[1] > 256 << 10,
        "the big section gets a thread: {}",
        lens[1]
    );
    assert_eq!(decode(&bytes), Some(cat.clone()));
    // Through the file as a warm start reads it.
    let d = tempfile::tempdir().unwrap();
    save(d.path(), &cat).unwrap();
    assert_eq!(load(d.path()), Some(cat));
    assert_eq!(
        decode(&encode(&Catalog::default()).unwrap()),
        Some(Catalog::default())
    );
}

/// `bytes` with its header's checksum taken again over the table its count word points to
/// (as a writer's bug would leave a file: the checksums hold, the table is wrong).
fn resum(mut b: Vec<u8>) -> Vec<u8> {
    let end = b.len();
    let n = u64::from_le_bytes(b[end - 8..].try_into().unwrap());
    if let Some(at) = (n.checked_mul(16).and_then(|t| t.checked_add(8)))
        .and_then(|t| (end as u64).checked_sub(t))
        .filter(|&at| at >= HEADER as u64)
    {
        let sum = checksum(&b[at as usize..]);
        b[28..36].copy_from_slice(&sum.to_le_bytes());
    }
    b
}

/// A table that does not describe the body is refused, even under a checksum that holds:
/// lengths that overrun the body or stop short of the table, two sections swapped in the
/// table, a count larger than the body, an older layout.
#[test]
fn a_table_that_does_not_describe_the_body_is_refused() {
    let bytes = encode(&three_sections()).unwrap();
    assert_eq!(decode(&resum(bytes.clone())), Some(three_sections()));
    let end = bytes.len();
    let set = |at: usize, v: u64| {
        let mut b = bytes.clone();
        b[at..at + 8].copy_from_slice(&v.to_le_bytes());
        resum(b)
    };
    // The entries: the empty section at end - 56, the big one at end - 40, the small one
    // at end - 24; each its length, then its checksum.
    let word = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap());
    let small = word(end - 24);
    for (what, b) in [
        ("overrun", set(end - 24, small + 1)),
        ("short", set(end - 24, small - 1)),
        ("count", set(end - 8, u64::MAX / 4)),
        ("no sections", set(end - 8, 0)),
        ("one more", set(end - 8, 4)),
    ] {
        assert!(decode(&b).is_none(), "{what}");
    }
    // Swapped entries: the spans still fill the body and each checksum is right for the
    // bytes it names, but no section ends where it should.
    let mut b = bytes.clone();
    b[end - 40..end - 24].copy_from_slice(&bytes[end - 24..end - 8]);
    b[end - 24..end - 8].copy_from_slice(&bytes[end - 40..end - 24]);
    assert!(decode(&resum(b)).is_none(), "swapped");
    let mut old = bytes;
    old[8..12].copy_from_slice(&(VERSION - 1).to_le_bytes());
    assert!(
        decode(&old).is_none(),
        "the layout before the checksums in the table"
    );
}

/// Each section is checked on its own: a changed byte in any section is refused although
/// the header's checksum (the table's) still holds, and so is a table naming another
/// checksum for a section whose bytes are intact.
#[test]
fn a_section_whose_bytes_changed_is_refused_by_its_own_checksum() {
    let bytes = encode(&three_sections()).unwrap();
    let table = table_of(&bytes);
    let mut at = HEADER;
    for (i, &(len, _)) in table.iter().enumerate() {
        // The first, middle and last byte of each non-empty section.
        for k in [0, len as usize / 2, (len as usize).saturating_sub(1)] {
            if len == 0 {
                continue;
            }
            let mut b = bytes.clone();
            b[at + k] ^= 0x20;
            assert!(decode(&b).is_none(), "section {i}, byte {k}");
        }
        let mut b = bytes.clone();
        let entry = bytes.len() - 8 - 16 * (table.len() - i);
        b[entry + 8] ^= 1;
        assert!(
            decode(&resum(b)).is_none(),
            "section {i}'s checksum in the table"
        );
        at += len as usize;
    }
}

/// Bytes read by position, counted: how much of the file a decode reads.
struct Counting {
    bytes: Vec<u8>,
    read: std::sync::atomic::AtomicU64,
}

impl crate::store::positional::Source for Counting {
    fn read_at(&self, buf: &mut [u8], at: u64) -> std::io::Result<usize> {
        let n = crate::store::positional::Source::read_at(self.bytes.as_slice(), buf, at)?;
        (self.read).fetch_add(n as u64, std::sync::atomic::Ordering::Relaxed);
        Ok(n)
    }
}

/// A decode reads each byte of the file once, not the body once for a checksum and again to
/// decode it (issue 10: at 100k sessions, a serial pass over ~37 MB before any decoding).
#[test]
fn a_decode_reads_the_file_once() {
    let bytes = encode(&three_sections()).unwrap();
    let size = bytes.len() as u64;
    let src = Counting {
        bytes,
        read: Default::default(),
    };
    let (cat, _) = super::stream::read_from(&src, size).unwrap();
    assert_eq!(cat, three_sections());
    let read = src.read.load(std::sync::atomic::Ordering::Relaxed);
    // The count word is read twice: alone, then with the table it ends.
    assert!(read <= size + 8, "{read} bytes read of a {size}-byte file");
}
