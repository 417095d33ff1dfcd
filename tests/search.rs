//! `spool search` and its full-text index, through the built binary: phrases found where only
//! one message holds them (tool result, thinking, compaction summary, an old round), with the
//! right message index and round; exclusions and phrases; incremental updates; a broken
//! index rebuilt; two processes at once.

mod common;

use std::path::Path;
use std::process::Command;

use common::search::{refs, search_json, spool};
use common::{Home, json_lines};
use spool::model::{Entry, Message, Role, round_starts};
use spool::store::{Roots, Span, Stores};

/// Lower-case alphanumeric tokens, as the index's tokenizer cuts them.
fn tokens(s: &str) -> Vec<String> {
    s.split(|c: char| !c.is_alphanumeric())
        .filter(|t| !t.is_empty())
        .map(str::to_lowercase)
        .collect()
}

fn holds(hay: &[String], needle: &[String]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

fn message_text(m: &Message) -> String {
    let mut s = format!("{}\n{}", m.text, m.thinking.join("\n"));
    for c in &m.tool_calls {
        s.push_str(&format!("\n{} {}", c.name, c.arguments));
    }
    s
}

/// A place a phrase can hide in: kind, session ref, its text, expected message and round.
struct Spot {
    kind: &'static str,
    reference: String,
    text: String,
    message: usize,
    round: usize,
}

/// Every tool result, thinking block, compaction summary and old-round message of `stores`,
/// plus every searchable text (to check a phrase is in one place only).
fn spots(stores: &Stores) -> (Vec<Spot>, Vec<Vec<String>>) {
    let mut spots = Vec::new();
    let mut all = Vec::new();
    for store in &stores.stores {
        for s in store.list() {
            all.push(tokens(&format!("{}\n{}", s.title(), s.summary())));
            let Ok(t) = store.transcript(&s.id, Span::All) else {
                continue;
            };
            let msgs: Vec<&Message> = t.messages().collect();
            let starts = round_starts(&msgs);
            let round_of = |i: usize| starts.iter().filter(|&&st| st <= i).count().max(1) - 1;
            let mut pos = 0;
            let mut pending = Vec::new();
            for e in &t.entries {
                match e {
                    Entry::Message(m) => {
                        let (Some(idx), round) = (m.index, round_of(pos)) else {
                            pos += 1;
                            continue;
                        };
                        for text in pending.drain(..) {
                            spots.push(Spot {
                                kind: "compaction",
                                reference: s.reference(),
                                text,
                                message: idx,
                                round,
                            });
                        }
                        all.push(tokens(&message_text(m)));
                        let mut spot = |kind, text: &str| {
                            spots.push(Spot {
                                kind,
                                reference: s.reference(),
                                text: text.to_string(),
                                message: idx,
                                round,
                            });
                        };
                        if m.role == Role::Tool {
                            spot("tool result", &m.text);
                        }
                        for th in &m.thinking {
                            spot("thinking", th);
                        }
                        if s.store == spool::model::StoreKind::Loop
                            && round + 6 < t.total_rounds
                            && round <= 1
                        {
                            spot("old round", &m.text);
                        }
                        pos += 1;
                    }
                    Entry::Compaction { summary, .. } => {
                        all.push(tokens(summary));
                        pending.push(summary.clone());
                    }
                    _ => {}
                }
            }
        }
    }
    (spots, all)
}

/// A four-word phrase from the start of `text` found in no other searchable text.
fn unique_phrase(text: &str, all: &[Vec<String>]) -> Option<String> {
    let head: String = text.chars().take(1500).collect();
    let toks = tokens(&head);
    toks.windows(4)
        .find(|w| all.iter().filter(|t| holds(t, w)).count() == 1)
        .map(|w| w.join(" "))
}

fn check_spots(
    home: &Path,
    extra: &[&str],
    stores: &Stores,
    found: &mut Vec<(String, &'static str)>,
) {
    let (spots, all) = spots(stores);
    for spot in &spots {
        let store = spot.reference.split(':').next().unwrap().to_string();
        if found.iter().any(|(s, k)| *s == store && *k == spot.kind) {
            continue;
        }
        let Some(phrase) = unique_phrase(&spot.text, &all) else {
            continue;
        };
        let (code, rows) = search_json(home, extra, &format!("\"{phrase}\""));
        assert_eq!(code, 0, "{} phrase {phrase:?} not found", spot.kind);
        let row = rows
            .iter()
            .find(|r| r["ref"] == spot.reference.as_str())
            .unwrap_or_else(|| panic!("{phrase:?}: {} missing from {rows:?}", spot.reference));
        assert_eq!(row["message"], spot.message, "{} {phrase:?}", spot.kind);
        assert_eq!(row["round"], spot.round, "{} {phrase:?}", spot.kind);
        found.push((store, spot.kind));
    }
}

/// `check_spots` over the stores under `dir` (`loop/`, `loom/`, `harness/`, `claude/`, `codex/`, `pi/`), searched with a
/// HOME of `home`.
fn check_stores_in(home: &Path, dir: &Path, found: &mut Vec<(String, &'static str)>) {
    let d = dir.to_string_lossy().into_owned();
    let (lp, lm, hn) = (
        format!("{d}/loop"),
        format!("{d}/loom"),
        format!("{d}/harness"),
    );
    let (cl, cx, pi) = (
        format!("{d}/claude"),
        format!("{d}/codex"),
        format!("{d}/pi"),
    );
    let extra = [
        "--loop-dir",
        &lp,
        "--loom-dir",
        &lm,
        "--harness-dir",
        &hn,
        "--claude-dir",
        &cl,
        "--codex-dir",
        &cx,
        "--pi-dir",
        &pi,
    ];
    check_spots(home, &extra, &Stores::open(&Roots::all_in(dir)), found);
}

#[test]
fn phrases_are_found_at_their_message_and_round_in_every_store() {
    let mut found = Vec::new();
    let h = Home::with_fixtures();
    check_spots(h.path(), &[], &h.stores(), &mut found);
    let demo = spool::demo::DemoStore::create().unwrap();
    let home = Home::empty();
    check_stores_in(home.path(), demo.path(), &mut found);
    // The phrase fixtures: loom and harness sessions with thinking, a tool result and an
    // earlier compaction summary (tests/fixtures/phrases/README.md).
    let phrases = Home::empty();
    for store in ["loom", "harness"] {
        common::copy_tree(
            &Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/fixtures/phrases")
                .join(store),
            &phrases.path().join(store),
        );
    }
    check_stores_in(home.path(), phrases.path(), &mut found);
    found.sort();
    found.dedup();
    eprintln!("found: {found:?}");
    for store in ["loop", "loom", "harness"] {
        for kind in ["tool result", "thinking", "compaction"] {
            assert!(
                found.iter().any(|(s, k)| s == store && *k == kind),
                "no {store} {kind} phrase checked: {found:?}"
            );
        }
    }
    assert!(found.iter().any(|(s, k)| s == "loop" && *k == "old round"));
}

/// A loom session of `msgs` (role, content) in `home`'s default loom store.
fn loom_session(home: &Path, id: &str, msgs: &[(&str, &str)]) {
    let dir = home.join(".loom/sessions");
    std::fs::create_dir_all(&dir).unwrap();
    let mut s = String::from(
        "{\"kind\":\"meta\",\"time\":\"2026-03-14T09:15:02+01:00\",\"model\":\"m\",\"cwd\":\"/tmp\"}\n",
    );
    for (role, content) in msgs {
        s.push_str(&loom_line(role, content));
    }
    std::fs::write(dir.join(format!("{id}.jsonl")), s).unwrap();
}

fn loom_line(role: &str, content: &str) -> String {
    let msg = serde_json::json!({"kind": "message", "time": "2026-03-14T09:16:00+01:00",
        "message": {"role": role, "content": content}});
    format!("{msg}\n")
}

#[test]
fn words_phrases_and_exclusions() {
    let h = Home::empty();
    loom_session(
        h.path(),
        "20260314-100000",
        &[
            ("user", "deploy the frobnicator to staging"),
            ("assistant", "staging frobnicator deployed with warnings"),
        ],
    );
    loom_session(
        h.path(),
        "20260314-110000",
        &[("user", "frobnicator staging rollback")],
    );
    let (a, b) = ("loom:20260314-100000", "loom:20260314-110000");
    let q = |q: &str| search_json(h.path(), &[], q);
    let (code, rows) = q("Frobnicator staging");
    assert_eq!(code, 0);
    let mut got = refs(&rows);
    got.sort();
    assert_eq!(got, vec![a, b], "words in any order, any case");
    let (_, rows) = q("\"frobnicator to staging\"");
    assert_eq!(refs(&rows), vec![a]);
    assert_eq!(rows[0]["message"], 0);
    let (_, rows) = q("\"staging frobnicator\"");
    assert_eq!(refs(&rows), vec![a], "a phrase keeps its order");
    assert_eq!(
        (rows[0]["message"].as_u64(), rows[0]["role"].as_str()),
        (Some(1), Some("assistant"))
    );
    let (_, rows) = q("frobnicator -rollback");
    assert_eq!(refs(&rows), vec![a]);
    let (_, rows) = q("frobnicator -\"to staging\"");
    assert_eq!(
        rows.len(),
        2,
        "a's second message and b still match: {rows:?}"
    );
    let (code, rows) = q("deploy warnings");
    assert_eq!(
        (code, rows.len()),
        (1, 0),
        "all words must be in one message"
    );
    let out = spool(h.path(), &["search", "--", "-frobnicator"]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "only exclusions is a usage error"
    );
}

#[test]
fn appended_and_deleted_sessions_are_followed() {
    let h = Home::empty();
    let id = "20260314-100000";
    loom_session(h.path(), id, &[("user", "look at the quuxification")]);
    loom_session(
        h.path(),
        "20260314-110000",
        &[("user", "zorblax only here")],
    );
    assert_eq!(search_json(h.path(), &[], "quuxification").0, 0);
    assert_eq!(search_json(h.path(), &[], "wibblewobble").0, 1);
    let path = h.path().join(format!(".loom/sessions/{id}.jsonl"));
    let mut text = std::fs::read_to_string(&path).unwrap();
    text.push_str(&loom_line("assistant", "the wibblewobble is fixed"));
    std::fs::write(&path, text).unwrap();
    let (code, rows) = search_json(h.path(), &[], "wibblewobble");
    assert_eq!((code, rows[0]["message"].as_u64()), (0, Some(1)));
    std::fs::remove_file(h.path().join(".loom/sessions/20260314-110000.jsonl")).unwrap();
    assert_eq!(
        search_json(h.path(), &[], "zorblax").0,
        1,
        "a deleted session is gone"
    );
}

/// The index directory of a HOME (one per set of stores).
fn index_dir(home: &Path) -> std::path::PathBuf {
    let root = home.join(".cache/spool/index");
    std::fs::read_dir(&root)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path()
}

#[test]
fn a_broken_index_is_rebuilt_without_a_word() {
    let h = Home::with_fixtures();
    let (_, want) = search_json(h.path(), &[], "router");
    assert!(!want.is_empty());
    let dir = index_dir(h.path());
    let files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    let segment = |ext: &str| {
        files
            .iter()
            .find(|p| p.extension().is_some_and(|e| e == ext))
            .cloned()
    };
    // Truncate the postings, delete the stored text, then an old schema and garbage metas.
    let idx = segment("idx").expect("a segment");
    std::fs::write(&idx, b"").unwrap();
    let check = |what: &str| {
        let out = spool(h.path(), &["search", "--all", "--json", "router"]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{what}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.stderr.is_empty(), "{what}: silent");
        assert_eq!(
            json_lines(&String::from_utf8(out.stdout).unwrap()),
            want,
            "{what}"
        );
    };
    check("truncated segment");
    let files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    let store = files
        .iter()
        .find(|p| p.extension().is_some_and(|e| e == "store"))
        .unwrap();
    std::fs::remove_file(store).unwrap();
    check("deleted segment file");
    std::fs::write(dir.join("spool-schema"), "spool-index 0\n").unwrap();
    check("old schema");
    std::fs::write(dir.join("meta.json"), "{garbage").unwrap();
    check("corrupt meta");
    std::fs::remove_dir_all(&dir).unwrap();
    check("deleted index");
}

#[test]
fn two_processes_index_and_search_at_once() {
    let h = Home::with_fixtures();
    let demo = spool::demo::DemoStore::create().unwrap();
    common::copy_tree(
        &demo.path().join("loop/sessions"),
        &h.loop_dir().join("sessions"),
    );
    let run = || {
        Command::new(env!("CARGO_BIN_EXE_spool"))
            .args(["search", "--all", "--json", "test"])
            .env("HOME", h.path())
            .env("XDG_CACHE_HOME", h.path().join(".cache"))
            .env_remove("LOOP_DATA_DIR")
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let kids: Vec<_> = (0..3).map(|_| run()).collect();
    for k in kids {
        let out = k.wait_with_output().unwrap();
        assert!(
            out.status.code().is_some_and(|c| c <= 1),
            "{:?}",
            out.status
        );
    }
    let (code, rows) = search_json(h.path(), &[], "test");
    assert_eq!(code, 0);
    let again = search_json(h.path(), &[], "test").1;
    assert_eq!(rows, again, "a settled index answers the same");
}

#[test]
fn list_filters_apply_and_the_table_says_where() {
    let h = Home::with_fixtures();
    let q = ["search", "\"error ts2307 cannot find\""];
    let out = spool(h.path(), &q);
    assert_eq!(
        out.status.code(),
        Some(1),
        "archived sessions are hidden by default"
    );
    let out = spool(h.path(), &[&q[..], &["--archived"]].concat());
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let table = String::from_utf8(out.stdout).unwrap();
    let mut lines = table.lines();
    assert!(lines.next().unwrap().starts_with("TITLE"));
    let row = lines.next().unwrap();
    assert!(
        row.contains("loop:e9d4a6b1") && row.contains("round 0, message 2"),
        "{row}"
    );
    let out = spool(h.path(), &[&q[..], &["--all", "--format", "loom"]].concat());
    assert_eq!(out.status.code(), Some(1), "--format keeps one store");
    let out = spool(
        h.path(),
        &["search", "router", "--all", "--limit", "1", "--json"],
    );
    assert_eq!(json_lines(&String::from_utf8(out.stdout).unwrap()).len(), 1);
    let out = spool(h.path(), &["search", "router", "-test"]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "an unquoted -word is an unknown option"
    );
    let out = spool(
        h.path(),
        &["search", "--all", "--", "router", "-nosuchword"],
    );
    assert_eq!(out.status.code(), Some(0), "after -- it is an exclusion");
}
