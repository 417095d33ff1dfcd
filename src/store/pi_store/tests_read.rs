//! The contract's examples (pi.md section 10) with their derived values asserted exactly,
//! and the reading rules of sections 1, 3-5 and 7 on small hand-made files.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::*;
use crate::model::{Entry, Role, rfc3339};
use crate::store::Store;

pub const A: &str = "019ceba0-ae56-7f60-8a1b-2c3d4e5f6a7b";
pub const B: &str = "019cec00-c780-7d2e-9f30-415263748596";
const PROJ: &str = "--home-user-projects-tinyhttp--";

/// A pi session root with the contract fixtures (B's `parentSession` pointed at the copy
/// of A), every file aged (not growing).
pub fn fixture_root() -> (tempfile::TempDir, PiStore) {
    let d = tempfile::tempdir().unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/pi/sessions");
    let root = d.path().join("sessions");
    for e in std::fs::read_dir(src.join(PROJ)).unwrap().flatten() {
        let text = std::fs::read_to_string(e.path()).unwrap();
        let text = text.replace(
            "/home/user/.pi/agent/sessions/",
            &format!("{}/", root.display()),
        );
        let to = root.join(PROJ).join(e.file_name());
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::write(&to, text).unwrap();
        age(&to);
    }
    let store = PiStore::new(&root, &d.path().join("state"));
    (d, store)
}

/// Set a file's mtime to 2026-03-16 (settled, not live).
pub fn age(p: &Path) {
    let t = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_773_619_200);
    std::fs::File::options()
        .write(true)
        .open(p)
        .unwrap()
        .set_modified(t)
        .unwrap();
}

/// A store holding one file `name` (in a cwd directory) with these bytes.
pub fn raw_one(name: &str, bytes: &[u8]) -> (tempfile::TempDir, PiStore, PathBuf) {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("sessions").join("--w--");
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    age(&p);
    let store = PiStore::new(&d.path().join("sessions"), &d.path().join("state"));
    (d, store, p)
}

/// A session `s1` with a header and these entry lines.
pub fn one(lines: &[Value]) -> (tempfile::TempDir, PiStore, PathBuf) {
    let mut text = format!("{}\n", header("s1"));
    for l in lines {
        text.push_str(&format!("{l}\n"));
    }
    raw_one("2026-03-14T09-00-00-000Z_s1.jsonl", text.as_bytes())
}

pub fn header(id: &str) -> Value {
    json!({"type":"session","version":3,"id":id,"timestamp":"2026-03-14T09:00:00.000Z","cwd":"/w"})
}

pub fn user(id: &str, parent: Option<&str>, text: &str) -> Value {
    json!({"type":"message","id":id,"parentId":parent,"timestamp":"2026-03-14T09:01:00.000Z",
           "message":{"role":"user","content":text,"timestamp":1773478860000_i64}})
}

pub fn asst(id: &str, parent: &str, text: &str) -> Value {
    json!({"type":"message","id":id,"parentId":parent,"timestamp":"2026-03-14T09:02:00.000Z",
           "message":{"role":"assistant","content":[{"type":"text","text":text}],
                      "provider":"p","model":"m","stopReason":"stop","timestamp":1773478920000_i64}})
}

pub fn row(store: &PiStore, id: &str) -> SessionSummary {
    store
        .list()
        .into_iter()
        .find(|s| s.id == id.into())
        .expect("listed")
}

fn texts(t: &Transcript) -> Vec<(String, String)> {
    t.messages()
        .map(|m| (m.role.as_str().to_string(), m.text.clone()))
        .collect()
}

fn notices(t: &Transcript) -> Vec<String> {
    t.entries
        .iter()
        .filter_map(|e| match e {
            Entry::Notice(n) => Some(n.clone()),
            _ => None,
        })
        .collect()
}

#[test]
fn example_a_listing_fields() {
    let (_d, store) = fixture_root();
    let s = row(&store, A);
    assert_eq!(s.title(), "router trailing slash");
    assert_eq!(s.messages, 6);
    assert_eq!(s.summary(), "");
    assert_eq!(rfc3339(s.created_at.unwrap()), "2026-03-14T09:15:02.101Z");
    assert_eq!(rfc3339(s.updated_at.unwrap()), "2026-03-14T09:16:40.552Z");
    assert_eq!(s.cwd.as_deref(), Some("/home/user/projects/tinyhttp"));
    assert_eq!(s.model.as_deref(), Some("anthropic/claude-sonnet-4-6"));
    assert_eq!(s.forked_from(), None);
    assert!(s.error().is_none() && s.read_only);
    assert!(s.badges().any(|b| b == "named"), "{:?}", s.badges());
    assert!(s.badges().any(|b| b == "1 label"), "{:?}", s.badges());
    assert!(
        !s.badges().any(|b| b.contains("branch")),
        "{:?}",
        s.badges()
    );
    let (_, l) = store.load_id(A, read::Mode::List).unwrap();
    assert_eq!(
        l.facts.entries, 8,
        "pi's own count includes the 2 tool results"
    );
    assert_eq!(l.facts.thinking.as_deref(), Some("medium"));
    assert!((l.facts.cost - 0.0283).abs() < 0.0001, "{}", l.facts.cost);
    assert_eq!(
        l.facts.labels.get("c3d4e5f6").map(String::as_str),
        Some("bug report")
    );
    // The active path is all 12 entries: the leaf is the last one, the label.
    let t = tree::build(
        &read::read(&l.summary.path(), read::Mode::Full)
            .unwrap()
            .ents,
    );
    assert_eq!(t.path.len(), 12);
    assert!(t.forks().is_empty());
}

#[test]
fn example_a_title_without_the_name_and_transcript() {
    let (_d, store) = fixture_root();
    let (_, l) = store.load_id(A, read::Mode::List).unwrap();
    let f = listing::Facts {
        name: None,
        ..l.facts
    };
    assert_eq!(listing::title(&f), "why does router_test.go fail?");
    let t = store.transcript(A, Span::All).unwrap();
    let m: Vec<_> = t.messages().collect();
    assert_eq!(m.len(), 8);
    assert_eq!(m[0].note.as_deref(), Some("label: bug report"));
    assert_eq!(m[1].thinking, ["Run the test suite first."]);
    assert_eq!(m[1].tool_calls[0].id, "toolu_01");
    assert_eq!(m[2].role, Role::Tool);
    assert_eq!(m[2].tool_call_id.as_deref(), Some("toolu_01"));
    assert!(
        m[6].text.contains("+12     // keep the trailing slash"),
        "the edit's diff"
    );
    let n = notices(&t);
    assert!(
        n.contains(&"model: anthropic/claude-sonnet-4-6".to_string()),
        "{n:?}"
    );
    assert!(n.contains(&"thinking: medium".to_string()), "{n:?}");
    assert!(
        n.contains(&"named \"router trailing slash\"".to_string()),
        "{n:?}"
    );
    assert!(t.warnings.is_empty(), "{:?}", t.warnings);
}

#[test]
fn example_b_listing_fields() {
    let (_d, store) = fixture_root();
    let s = row(&store, B);
    assert_eq!(s.title(), "why does router_test.go fail?");
    assert_eq!(s.forked_from(), Some(&*format!("pi:{A}")));
    assert_eq!(s.messages, 10);
    assert_eq!(
        s.summary(),
        "Goal: configurable trailing-slash matching. Router.StrictSlash exists and defaults to \
         true (set in NewRouter). A package-level variable was tried and dropped."
    );
    assert_eq!(rfc3339(s.updated_at.unwrap()), "2026-03-14T11:10:00Z");
    assert!(s.badges().any(|b| b == "truncated"), "{:?}", s.badges());
    assert!(
        s.badges().any(|b| b == "1 unreadable line"),
        "{:?}",
        s.badges()
    );
    assert!(!s.badges().any(|b| b == "live"));
    let (_, l) = store.load_id(B, read::Mode::List).unwrap();
    assert_eq!(l.facts.entries, 11);
    assert_eq!(l.parsed.ents.len(), 15, "15 good entries");
    assert_eq!(l.parsed.bad, 1);
}

#[test]
fn example_b_tree_branches_copied_region_and_window() {
    let (_d, store) = fixture_root();
    let (_, l) = store.load_id(B, read::Mode::List).unwrap();
    let full = read::read(&l.summary.path(), read::Mode::Full).unwrap();
    let t = tree::build(&full.ents);
    let ids: Vec<&str> = t.path.iter().map(|&i| full.ents[i].id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "a1b2c3d4", "b2c3d4e5", "c3d4e5f6", "d4e5f6a7", "e5f6a7b8", "f6a7b8c9", "11aa22bb",
            "22bb33cc", "55ee66ff", "66ff7700", "77008811", "88119922", "99223300"
        ]
    );
    let forks = t.forks();
    assert_eq!(forks.len(), 1);
    assert_eq!(full.ents[forks[0].at].id, "22bb33cc");
    assert_eq!(full.ents[forks[0].others[0]].id, "33cc44dd");
    let tr = store.transcript(B, Span::All).unwrap();
    let n = notices(&tr);
    assert!(
        n.iter().any(|x| x
            .starts_with("⑂ 1 other branch leaves here: left with summary: Tried a package-level")),
        "{n:?}"
    );
    assert!(
        n.iter()
            .any(|x| x == &format!("↑ 6 entries copied from pi:{A} \"router trailing slash\"")),
        "{n:?}"
    );
    // The abandoned branch is not in the main view.
    assert!(
        !texts(&tr)
            .iter()
            .any(|(_, t)| t.contains("package-level variable"))
    );
    let w = store.window(B).unwrap();
    let got: Vec<(String, String, bool)> = w
        .messages
        .iter()
        .map(|m| (m.role.as_str().into(), m.text.clone(), m.is_virtual))
        .collect();
    assert_eq!(got.len(), 4, "{got:?}");
    assert!(got[0].1.starts_with("Goal: configurable") && got[0].2);
    assert_eq!(got[1].1, "keep it on Router, but default to true");
    assert_eq!(
        got[2].1,
        "Router.StrictSlash now defaults to true; NewRouter sets it."
    );
    assert_eq!(
        (got[3].0.as_str(), got[3].1.as_str(), got[3].2),
        ("user", "add a test for the default", false)
    );
    assert!(w.system_note.unwrap().contains("thinking level medium"));
}

#[test]
fn fork_title_gets_the_suffix_only_when_equal_to_the_parent() {
    let (d, store) = fixture_root();
    let parent = store.locate(A).unwrap();
    let h = json!({"type":"session","version":3,"id":"c1","timestamp":"2026-03-15T00:00:00.000Z",
                   "cwd":"/w","parentSession":parent});
    let n = json!({"type":"session_info","id":"x1","parentId":null,"timestamp":"2026-03-15T00:00:01.000Z","name":"router trailing slash"});
    let p = d
        .path()
        .join("sessions")
        .join(PROJ)
        .join("2026-03-15T00-00-00-000Z_c1.jsonl");
    std::fs::write(&p, format!("{h}\n{n}\n{}\n", user("u1", Some("x1"), "hi"))).unwrap();
    let s = row(&store, "c1");
    assert_eq!(s.title(), "router trailing slash (fork)");
    assert_eq!(s.forked_from(), Some(&*format!("pi:{A}")));
    // Legacy `branchedFrom` means the same; a missing parent falls back to the stem's id.
    let h2 = json!({"type":"session","version":3,"id":"c2","timestamp":"2026-03-15T00:00:00.000Z",
                    "cwd":"/w","branchedFrom":"/gone/2026-01-01T00-00-00-000Z_p9.jsonl"});
    let p2 = d
        .path()
        .join("sessions")
        .join(PROJ)
        .join("2026-03-15T00-00-00-000Z_c2.jsonl");
    std::fs::write(&p2, format!("{h2}\n{}\n", user("u1", None, "hi"))).unwrap();
    assert_eq!(row(&store, "c2").forked_from(), Some("pi:p9"));
    let t = store.transcript("c2", Span::All).unwrap();
    assert!(notices(&t).iter().any(|n| n.starts_with("parent missing")));
}

#[test]
fn title_precedence_name_clears_and_control_characters() {
    let (_d, store, _) = one(&[
        json!({"type":"session_info","id":"n1","parentId":null,"timestamp":"2026-03-14T09:00:01.000Z","name":"first name"}),
        user("u1", Some("n1"), "fix\tthe\u{7}  bug\nnow"),
        json!({"type":"session_info","id":"n2","parentId":"u1","timestamp":"2026-03-14T09:00:02.000Z","name":"  "}),
    ]);
    // The later empty name clears the earlier one: the first user message, cleaned.
    assert_eq!(row(&store, "s1").title(), "fix the bug now");
    let (_d, store, _) = one(&[json!({"type":"model_change","id":"m1","parentId":null,
        "timestamp":"2026-03-14T09:00:01.000Z","provider":"p","modelId":"m"})]);
    let s = store.list().remove(0);
    assert_eq!(s.title(), "(no messages)");
    assert!(s.is_empty() && s.display_title() == "(empty)");
    let long = "x".repeat(150);
    let (_d, store, _) = one(&[user("u1", None, &long)]);
    assert_eq!(row(&store, "s1").title().chars().count(), 100);
}

/// The last rounds read only the path's lines from their first round on (by offset, after
/// the slim first pass): exact rounds and positions, no "read from the end" caveat.
#[test]
fn last_rounds_read_from_their_first_round_along_the_path() {
    let mut lines = Vec::new();
    let mut parent: Option<String> = None;
    let pad = "y".repeat(2000);
    for i in 0..400 {
        let u = format!("u{i}");
        let a = format!("a{i}");
        lines.push(user(&u, parent.as_deref(), &format!("prompt {i} {pad}")));
        lines.push(asst(&a, &u, &format!("answer {i}")));
        parent = Some(a);
    }
    let (_d, store, p) = one(&lines);
    assert!(std::fs::metadata(&p).unwrap().len() > 800_000);
    let tr = store.transcript("s1", Span::LastRounds(2)).unwrap();
    let got: Vec<String> = texts(&tr)
        .into_iter()
        .map(|(_, t)| t.chars().take(12).collect())
        .collect();
    assert_eq!(
        got,
        ["prompt 398 y", "answer 398", "prompt 399 y", "answer 399"]
    );
    assert_eq!((tr.total_rounds, tr.first_round), (400, 398));
    let first = tr.messages().next().and_then(|m| m.index);
    assert_eq!(first, Some(796), "positions count from the first entry");
    assert!(tr.warnings.is_empty(), "{:?}", tr.warnings);
}

#[test]
fn discovery_root_files_one_level_and_no_deeper() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path().join("sessions");
    let body = |id: &str| format!("{}\n{}\n", header(id), user("u1", None, "hi"));
    std::fs::create_dir_all(root.join("--a--/nested")).unwrap();
    std::fs::write(root.join("2026-01-01T00-00-00-000Z_top.jsonl"), body("top")).unwrap();
    std::fs::write(
        root.join("--a--/2026-01-01T00-00-00-000Z_one.jsonl"),
        body("one"),
    )
    .unwrap();
    std::fs::write(root.join("--a--/nested/x_deep.jsonl"), body("deep")).unwrap();
    std::fs::write(root.join("--a--/.hidden.jsonl"), body("hid")).unwrap();
    std::fs::write(root.join("--a--/notes.txt"), "x").unwrap();
    std::os::unix::fs::symlink(
        root.join("--a--/2026-01-01T00-00-00-000Z_one.jsonl"),
        root.join("--a--/x_link.jsonl"),
    )
    .unwrap();
    let store = PiStore::new(&root, &d.path().join("state"));
    let mut ids: Vec<String> = store.list().into_iter().map(|s| s.id.to_string()).collect();
    ids.sort();
    assert_eq!(ids, ["one", "top"]);
    // A missing root is simply empty.
    assert!(
        PiStore::new(&d.path().join("nope"), d.path())
            .list()
            .is_empty()
    );
}

#[test]
fn state_lives_outside_the_store_and_delete_is_refused() {
    let (d, store) = fixture_root();
    store.set_pinned(A, true).unwrap();
    store.set_archived(A, true).unwrap();
    store.rename(A, "renamed in spool").unwrap();
    store.set_unread(A, true).unwrap();
    let s = row(&store, A);
    assert!(s.pinned() && s.archived && s.unread);
    assert_eq!(s.title(), "renamed in spool");
    store.set_unread(A, false).unwrap();
    assert!(!row(&store, A).unread);
    let state_file = store.state_file(A);
    assert_eq!(state_file, d.path().join(format!("state/pi/{A}.json")));
    let state: Value = serde_json::from_slice(&std::fs::read(&state_file).unwrap()).unwrap();
    assert_eq!(state["version"], 1);
    assert_eq!(state["read_upto"], "2026-03-14T09:16:40.552Z");
    let e = store.delete(A).unwrap_err().to_string();
    assert!(
        e.contains("never writes inside") && e.contains("archive"),
        "{e}"
    );
    let e = store.fork(A, None).unwrap_err().to_string();
    assert!(e.contains("pi --fork "), "{e}");
    let files: Vec<_> = std::fs::read_dir(d.path().join("sessions").join(PROJ))
        .unwrap()
        .collect();
    assert_eq!(files.len(), 2);
}

/// A session is found by the id in its file name as discovery finds it (the newest of two
/// files naming it, root and one level down, never a symlink or a dot-file), with only the
/// files that name it stat'ed; a file named by another tool is still found by its header.
#[test]
fn a_session_is_found_by_id_as_discovery_finds_it() {
    let (d, store) = fixture_root();
    let root = d.path().join("sessions");
    let proj = root.join(PROJ);
    let a = (discover::discover(&root).into_iter())
        .find(|c| c.id == A)
        .unwrap()
        .path;
    let newer = root.join(format!("2026-03-20T00-00-00-000Z_{A}.jsonl"));
    std::fs::copy(&a, &newer).unwrap();
    std::os::unix::fs::symlink(&a, proj.join("2026-03-21T00-00-00-000Z_lnk.jsonl")).unwrap();
    std::fs::write(proj.join(".2026-03-21T00-00-00-000Z_dot.jsonl"), "").unwrap();
    let other = proj.join("by-another-tool.jsonl");
    std::fs::write(&other, format!("{}\n", header("tooled"))).unwrap();
    for id in [A, B, "lnk", "dot", "by-another-tool", "nope"] {
        let all: Vec<PathBuf> = (discover::discover(&root).into_iter())
            .filter(|c| c.id == id)
            .map(|c| c.path)
            .collect();
        let named: Vec<PathBuf> = discover::named(&root, id)
            .into_iter()
            .map(|c| c.path)
            .collect();
        assert_eq!(named, all, "{id}");
    }
    assert_eq!(store.locate(A).unwrap(), newer);
    assert_eq!(store.locate("tooled").unwrap(), other);
    assert!(store.locate("lnk").is_err());
}
