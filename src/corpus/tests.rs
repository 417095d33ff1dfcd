//! Tests of the corpus generator: the files it writes satisfy the format contracts.
use super::*;

fn spec(sessions: usize, big: Option<usize>) -> CorpusSpec {
    CorpusSpec {
        sessions,
        rounds_per_session: 3,
        seed: 7,
        big_transcript_mb: big,
    }
}

fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p)
            } else {
                out.push(p)
            }
        }
    }
    out.sort();
    out
}

/// Checks a v3 dir the way the contract's full open does; returns the message count.
fn check_v3(dir: &Path) -> usize {
    let meta: Value = serde_json::from_slice(&fs::read(dir.join("meta.json")).unwrap()).unwrap();
    let data = fs::read(dir.join("messages.jsonl")).unwrap();
    let (start, bytes) = (
        meta["start"].as_u64().unwrap() as usize,
        meta["bytes"].as_u64().unwrap() as usize,
    );
    assert_eq!(start, 0);
    assert_eq!(data.len(), bytes);
    let range = &data[start..start + bytes];
    assert_eq!(
        meta["generation"].as_str().unwrap(),
        hex(&Sha256::digest(range))
    );
    assert_eq!(*range.last().unwrap(), b'\n');
    let count = range.iter().filter(|&&b| b == b'\n').count();
    assert_eq!(meta["messageCount"].as_u64().unwrap() as usize, count);
    let lines: Vec<Value> = range
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_slice(l).unwrap())
        .collect();
    let users: Vec<usize> = (0..lines.len())
        .filter(|&i| lines[i]["role"] == "user")
        .collect();
    let index: Value = serde_json::from_slice(&fs::read(dir.join("index.json")).unwrap()).unwrap();
    assert_eq!(index["generation"], meta["generation"]);
    let rounds = index["rounds"].as_array().unwrap();
    assert_eq!(rounds.len(), users.len());
    for (r, &u) in rounds.iter().zip(&users) {
        assert_eq!(r["messageIndex"].as_u64().unwrap() as usize, u);
        let off = r["byteOffset"].as_u64().unwrap() as usize;
        assert!(off < bytes);
        assert!(
            off == 0 || range[off - 1] == b'\n',
            "offset {off} is not a line start"
        );
        assert!(range[off..].starts_with(br#"{"role":"user""#));
    }
    // The header passes the contract's listing checks.
    let h = &meta["header"];
    assert_eq!(
        h["id"].as_str().unwrap(),
        dir.file_name().unwrap().to_str().unwrap()
    );
    assert_eq!(h["version"], 2);
    count
}

#[test]
fn small_corpus_is_contract_valid() {
    let tmp = tempfile::tempdir().unwrap();
    let stats = generate(tmp.path(), &spec(60, None)).unwrap();
    assert_eq!(
        (
            stats.loop_sessions,
            stats.loom_sessions,
            stats.harness_sessions
        ),
        (20, 20, 20)
    );

    let (mut v3, mut v2, mut archives) = (0, 0, 0);
    for coll in fs::read_dir(tmp.path().join("loop/sessions")).unwrap() {
        let coll = coll.unwrap().path();
        assert_eq!(coll.file_name().unwrap().len(), 24);
        for e in fs::read_dir(&coll).unwrap() {
            let p = e.unwrap().path();
            let name = p.file_name().unwrap().to_str().unwrap().to_string();
            if p.is_dir() {
                assert_eq!(name.len(), 36);
                // 3 rounds: user + reply each, plus a call and its result when there is a call.
                let text = fs::read_to_string(p.join("messages.jsonl")).unwrap();
                let calls = text.matches(r#""type":"toolCall""#).count();
                assert_eq!(check_v3(&p), 2 * 3 + 2 * calls);
                v3 += 1;
            } else if name == "archive.json" {
                let ids: Vec<String> = serde_json::from_slice(&fs::read(&p).unwrap()).unwrap();
                assert!(ids.iter().all(|id| coll.join(id).is_dir()));
                archives += 1;
            } else {
                assert!(name.ends_with(".jsonl"));
                let text = fs::read_to_string(&p).unwrap();
                let first: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
                assert_eq!(
                    first["id"].as_str().unwrap(),
                    name.trim_end_matches(".jsonl")
                );
                v2 += 1;
            }
        }
    }
    assert_eq!((v3, v2), (19, 1));
    assert!(archives >= 1);

    let loom: Vec<PathBuf> = fs::read_dir(tmp.path().join("loom/sessions"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    assert_eq!(loom.len(), 20);
    for p in &loom {
        let name = p.file_stem().unwrap().to_str().unwrap();
        assert!(name.len() == 15 && name.as_bytes()[8] == b'-', "{name}");
        let text = fs::read_to_string(p).unwrap();
        assert!(!text.contains(['<', '>', '&']), "Go escapes < > &");
        for line in text.lines() {
            let v: Value = serde_json::from_str(line).unwrap();
            assert_eq!(
                v.as_object().unwrap().keys().take(2).collect::<Vec<_>>(),
                ["kind", "time"]
            );
        }
        assert_eq!(text.lines().count(), 2 + 3 * 4);
    }
    for p in files_under(&tmp.path().join("loom/sessions/.spool")) {
        let v: Value = serde_json::from_slice(&fs::read(&p).unwrap()).unwrap();
        let log = tmp
            .path()
            .join("loom/sessions")
            .join(p.file_name().unwrap())
            .with_extension("jsonl");
        let off = v["read_bytes"].as_u64().unwrap() as usize;
        let data = fs::read(log).unwrap();
        assert!(
            off <= data.len() && (off == 0 || data[off - 1] == b'\n'),
            "read_bytes on a record boundary"
        );
    }

    let mut harness = 0;
    for p in files_under(&tmp.path().join("harness/sessions")) {
        if p.parent().unwrap().ends_with(".spool") || p.extension().unwrap() == "lock" {
            continue;
        }
        let text = fs::read_to_string(&p).unwrap();
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(
            v["id"].as_str().unwrap(),
            p.file_stem().unwrap().to_str().unwrap()
        );
        assert_eq!(v["id"].as_str().unwrap().len(), 16);
        assert!(p.with_extension("lock").exists());
        assert_eq!(v["transcript"].as_array().unwrap().len(), 1 + 3 * 4);
        assert!(v["updated_at"].as_str().unwrap().ends_with("+00:00"));
        assert!(text.ends_with("}\n") && text.contains("\n  \"messages\": [\n"));
        harness += 1;
    }
    assert_eq!(harness, 20);
    assert_eq!(stats.files, files_under(tmp.path()).len());
}

#[test]
fn same_seed_same_bytes_other_seed_differs() {
    let (a, b, c) = (
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
    );
    generate(a.path(), &spec(12, None)).unwrap();
    generate(b.path(), &spec(12, None)).unwrap();
    generate(
        c.path(),
        &CorpusSpec {
            seed: 8,
            ..spec(12, None)
        },
    )
    .unwrap();
    let read_all = |d: &Path| -> Vec<(PathBuf, Vec<u8>)> {
        files_under(d)
            .into_iter()
            .map(|p| {
                (
                    p.strip_prefix(d).unwrap().to_path_buf(),
                    fs::read(&p).unwrap(),
                )
            })
            .collect()
    };
    assert_eq!(read_all(a.path()), read_all(b.path()));
    assert_ne!(read_all(a.path()), read_all(c.path()));
}

#[test]
fn big_transcript_has_a_valid_index() {
    let tmp = tempfile::tempdir().unwrap();
    let stats = generate(tmp.path(), &spec(3, Some(1))).unwrap();
    let id = stats.big_session.unwrap();
    assert_eq!(stats.loop_sessions, 2);
    let dir = tmp
        .path()
        .join("loop/sessions")
        .join(collection(&cwd(0)))
        .join(&id);
    let len = fs::metadata(dir.join("messages.jsonl")).unwrap().len();
    assert!(
        (1024 * 1024..1024 * 1024 + 64 * 1024).contains(&len),
        "{len}"
    );
    assert!(check_v3(&dir) > 100);
}

#[test]
fn ids_have_the_contract_shapes() {
    let mut rng = Rng::new(0);
    for _ in 0..100 {
        let u = rng.uuid();
        assert_eq!(u.len(), 36);
        assert!(
            u.bytes()
                .all(|b| b == b'-' || b.is_ascii_digit() || (b'a'..=b'f').contains(&b)),
            "{u}"
        );
        assert_eq!(&u[14..15], "4");
        let h = rng.harness_id();
        assert!(
            h.len() == 16
                && h.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        );
    }
    // The contract's example: the collection of /home/user/projects/acme-api.
    assert_eq!(
        collection("/home/user/projects/acme-api"),
        "767af75ec9c3c6ac7b4a00e5"
    );
    assert_eq!(iso_ms(BASE_MS), "2026-11-30T00:00:00.000Z");
    assert_eq!(iso_secs(BASE_MS, 1), "2026-11-30T01:00:00+01:00");
}
