//! What a Claude row's catalog key rests on and how a session is found by id: the subagent
//! directories (never each subagent file, never an `lstat` of an absent directory), and a
//! lookup by id that agrees with discovery without listing every session.

use std::path::{Path, PathBuf};

use serde_json::json;

use super::tests_read::{one, row, user};
use super::*;
use crate::catalog::stamp;
use crate::store::Store;

fn candidate(store: &ClaudeStore, id: &str) -> Candidate {
    store.discover().into_iter().find(|c| c.id == id).unwrap()
}

fn key(store: &ClaudeStore, id: &str) -> u64 {
    stamp::key(&store.summary_inputs(&candidate(store, id)))
}

fn agent(dir: &Path, name: &str) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let p = dir.join(format!("agent-{name}.jsonl"));
    let rec = json!({"type":"user","isSidechain":true,"sessionId":"s1","uuid":"x1",
        "message":{"role":"user","content":"sub task"}});
    std::fs::write(&p, format!("{rec}\n")).unwrap();
    p
}

/// A directory's mtime moves on to a whole second later, so a change within the same
/// second as the last stamp is still a different stamp on every filesystem.
fn later_mtime(dir: &Path) {
    let m = std::fs::metadata(dir).unwrap().modified().unwrap();
    let t = m + std::time::Duration::from_secs(2);
    std::fs::File::open(dir).unwrap().set_modified(t).unwrap();
}

#[test]
fn a_session_without_subagents_rests_on_its_file_settings_and_state_only() {
    let (d, store, p) = one("s1", "-w", &[user("u1", None, "p", "2026-03-14T09:00:00Z")]);
    let inputs = store.summary_inputs(&candidate(&store, "s1"));
    assert_eq!(
        inputs,
        [
            p,
            d.path().join("claude/settings.json"),
            store.state_file("s1")
        ],
        "no absent subagent directory to stamp"
    );
}

#[test]
fn subagent_directories_come_first_and_their_files_count_without_being_stamped() {
    let (d, store, p) = one("s1", "-w", &[user("u1", None, "p", "2026-03-14T09:00:00Z")]);
    let subs = d.path().join("claude/projects/-w/s1/subagents");
    let first = agent(&subs, "a1");
    let nested = subs.join("workflows/wf1");
    agent(&nested, "a2");
    let inputs = store.summary_inputs(&candidate(&store, "s1"));
    // The first input is the top subagent directory, so the stat pass stamps the others
    // below it by their own `lstat` (not in its table of files shared between sessions).
    assert_eq!(inputs[0], subs);
    assert!(inputs.contains(&nested) && inputs.contains(&subs.join("workflows")));
    assert!(inputs.contains(&p));
    assert!(
        !inputs
            .iter()
            .any(|i| i.extension().is_some_and(|e| e == "jsonl") && *i != p),
        "no subagent file is an input: {inputs:?}"
    );
    assert!(row(&store, "s1").badges().any(|b| b == "2 subagents"));

    // A subagent writing more does not touch the parent's row.
    let k = key(&store, "s1");
    let mut f = std::fs::File::options().append(true).open(&first).unwrap();
    std::io::Write::write_all(&mut f, b"{\"type\":\"user\"}\n").unwrap();
    assert_eq!(key(&store, "s1"), k);

    // A new subagent, even in a nested directory, does.
    agent(&nested, "a3");
    later_mtime(&nested);
    assert_ne!(key(&store, "s1"), k);
    assert!(row(&store, "s1").badges().any(|b| b == "3 subagents"));

    // A first subagent directory appearing changes the key too.
    let (d2, store2, _) = one("s1", "-w", &[user("u1", None, "p", "2026-03-14T09:00:00Z")]);
    let k2 = key(&store2, "s1");
    agent(&d2.path().join("claude/projects/-w/s1/subagents"), "b1");
    assert_ne!(key(&store2, "s1"), k2);
}

#[test]
fn a_session_is_found_by_id_as_discovery_finds_it() {
    let (d, store, p) = one("s1", "-w", &[user("u1", None, "p", "2026-03-14T09:00:00Z")]);
    let projects = d.path().join("claude/projects");
    // The same id in a second project directory, newer: the newer file wins in both.
    let other = projects.join("-x");
    std::fs::create_dir_all(&other).unwrap();
    let newer = other.join("s1.jsonl");
    std::fs::copy(&p, &newer).unwrap();
    let t = std::fs::metadata(&p).unwrap().modified().unwrap();
    (std::fs::File::options().write(true).open(&newer).unwrap())
        .set_modified(t + std::time::Duration::from_secs(60))
        .unwrap();
    agent(&projects.join("-w"), "c1");
    std::os::unix::fs::symlink(&p, projects.join("-w/s2.jsonl")).unwrap();
    std::fs::create_dir_all(projects.join("-w/s3.jsonl")).unwrap();
    let by_discovery = |id: &str| {
        (discover::discover(&projects, &mut Default::default()).into_iter())
            .find(|c| c.id == id)
            .map(|c| c.path)
    };
    for id in ["s1", "agent-c1", "s2", "s3", "nope"] {
        assert_eq!(discover::find(&projects, id), by_discovery(id), "{id}");
    }
    assert_eq!(discover::find(&projects, "s1"), Some(newer.clone()));
    assert_eq!(store.locate("s1").unwrap(), newer);
    assert!(store.locate("agent-c1").is_err() && store.locate("s2").is_err());
}

/// The stat pass looks for `<id>/subagents` only where the discovery before it saw an `<id>`
/// directory (issue 10: 8,550 failed opens a warm check at 10k). A directory made after that
/// discovery is therefore left out of the key of the same pass, which shows that no lookup
/// was made; the old code looked and named it. The next discovery sees it and the key moves.
#[test]
fn a_key_looks_for_no_subagents_where_discovery_saw_no_session_directory() {
    let (d, store, p) = one("s1", "-w", &[user("u1", None, "p", "2026-03-14T09:00:00Z")]);
    let c = candidate(&store, "s1");
    let before = stamp::key(&store.summary_inputs(&c));
    let subs = d.path().join("claude/projects/-w/s1/subagents");
    agent(&subs, "a1");
    assert_eq!(
        store.summary_inputs(&c),
        [
            p.clone(),
            d.path().join("claude/settings.json"),
            store.state_file("s1")
        ],
        "discovery saw no s1/, so nothing was looked up"
    );
    assert_eq!(stamp::key(&store.summary_inputs(&c)), before);
    // The next pass's discovery lists s1/: its subagents are named, the key is new.
    let c = candidate(&store, "s1");
    assert_eq!(store.summary_inputs(&c)[0], subs);
    assert_ne!(stamp::key(&store.summary_inputs(&c)), before);
    assert!(row(&store, "s1").badges().any(|b| b == "1 subagent"));
}

/// Where discovery saw `<id>/` (tool results, say) the lookup is made, as before: a
/// `subagents/` made there after discovery is named at once, and one absent is not.
#[test]
fn a_session_directory_discovery_saw_is_looked_into() {
    let (d, store, p) = one("s1", "-w", &[user("u1", None, "p", "2026-03-14T09:00:00Z")]);
    let sdir = d.path().join("claude/projects/-w/s1");
    std::fs::create_dir_all(sdir.join("tool-results")).unwrap();
    let c = candidate(&store, "s1");
    assert_eq!(store.summary_inputs(&c)[0], p, "no subagents/, none named");
    agent(&sdir.join("subagents"), "a1");
    assert_eq!(store.summary_inputs(&c)[0], sdir.join("subagents"));
    // A `subagents` that is a file is not absent: the walk names it, as before.
    let (d2, store2, _) = one("s2", "-w", &[user("u1", None, "p", "2026-03-14T09:00:00Z")]);
    let s2 = d2.path().join("claude/projects/-w/s2");
    std::fs::create_dir_all(&s2).unwrap();
    std::fs::write(s2.join("subagents"), b"").unwrap();
    let c2 = candidate(&store2, "s2");
    assert_eq!(store2.summary_inputs(&c2)[0], s2.join("subagents"));
}

/// A legacy subagent in the project directory is still an input of the session it names
/// (discovery says the project holds one, so the per-project list is asked).
#[test]
fn a_legacy_subagent_is_an_input_of_its_parent() {
    let (d, store, _) = one("s1", "-w", &[user("u1", None, "p", "2026-03-14T09:00:00Z")]);
    let dir = d.path().join("claude/projects/-w");
    let sub = json!({"type":"user","isSidechain":true,"sessionId":"s1","uuid":"x1",
        "message":{"role":"user","content":"sub task"}});
    std::fs::write(dir.join("agent-ab12.jsonl"), format!("{sub}\n")).unwrap();
    let inputs = store.summary_inputs(&candidate(&store, "s1"));
    assert!(inputs.contains(&dir.join("agent-ab12.jsonl")), "{inputs:?}");
}

/// A `subagents/` that holds no directory is named without being listed (its link count
/// says so), exactly as the walk names it; one that holds a directory is walked, so a
/// nested workflow directory and a new agent there still move the key.
#[test]
fn a_subagents_directory_without_subdirectories_is_named_as_the_walk_names_it() {
    let (d, store, p) = one("s1", "-w", &[user("u1", None, "p", "2026-03-14T09:00:00Z")]);
    let project = d.path().join("claude/projects/-w");
    let subs = project.join("s1/subagents");
    agent(&subs, "a1");
    let c = candidate(&store, "s1");
    assert_eq!(
        discover::subagent_dirs(&project, "s1"),
        std::slice::from_ref(&subs)
    );
    assert_eq!(store.summary_inputs(&c)[..2], [subs.clone(), p.clone()]);
    let k = key(&store, "s1");
    let nested = subs.join("workflows/wf1");
    agent(&nested, "a2");
    let walked = discover::subagent_dirs(&project, "s1");
    assert_eq!(walked.len(), 3);
    assert_eq!(store.summary_inputs(&c)[..3], walked[..]);
    assert_ne!(key(&store, "s1"), k);
    let k = key(&store, "s1");
    agent(&nested, "a3");
    later_mtime(&nested);
    assert_ne!(key(&store, "s1"), k);
}

/// A row whose project the discovery before it listed with no legacy subagent does not list
/// that project again for them (issue 10: the cold first screen's 18 rows listed 11 project
/// directories of 1,400 entries a second time, behind one lock). A legacy subagent made
/// after that discovery is then left out of the row as it is of the key, and both count it
/// once the next discovery has seen it; where discovery saw one, the project is listed.
#[test]
fn a_row_lists_its_project_for_legacy_subagents_only_where_discovery_saw_one() {
    let (d, store, _) = one("s1", "-w", &[user("u1", None, "p", "2026-03-14T09:00:00Z")]);
    let dir = d.path().join("claude/projects/-w");
    let counted = |s: &SessionSummary| s.badges().any(|b| b == "1 subagent");
    let c = candidate(&store, "s1");
    assert!(!counted(&store.summarize(&c).unwrap()));
    let listed = || store.legacy.lock().unwrap().contains_key(&dir);
    assert!(
        !listed(),
        "discovery saw no agent-*.jsonl: the project was not listed again"
    );
    let sub = json!({"type":"user","isSidechain":true,"sessionId":"s1","uuid":"x1",
        "message":{"role":"user","content":"sub task"}});
    std::fs::write(dir.join("agent-ab12.jsonl"), format!("{sub}\n")).unwrap();
    assert!(
        !counted(&store.summarize(&c).unwrap()),
        "the row agrees with its key"
    );
    assert!(
        !store
            .summary_inputs(&c)
            .contains(&dir.join("agent-ab12.jsonl"))
    );
    let c = candidate(&store, "s1");
    assert!(counted(&store.summarize(&c).unwrap()));
    assert!(listed());
    assert!(
        store
            .summary_inputs(&c)
            .contains(&dir.join("agent-ab12.jsonl"))
    );
}

/// The warm check's survey (each `<id>/subagents` stamped with the `lstat` its probe took)
/// keys every session as a read does (`stamp::key` of the
/// inputs, each file `lstat`ed by its path): a `subagents/` that is a leaf, one walked, a
/// symlink to one, a file named so, a session directory with tool results only, and
/// sessions in two projects. The probe's stat is handed over exactly where it is the
/// first input, and is that input's `lstat`.
#[test]
fn the_survey_keys_every_session_as_a_read_does_with_the_probes_stat() {
    let (d, store, _) = one("s1", "-w", &[user("u1", None, "p", "2026-03-14T09:00:00Z")]);
    let projects = d.path().join("claude/projects");
    let (w, x) = (projects.join("-w"), projects.join("-x"));
    std::fs::create_dir_all(&x).unwrap();
    let transcript = |dir: &Path, id: &str| {
        let p = dir.join(format!("{id}.jsonl"));
        std::fs::write(
            &p,
            format!("{}\n", user("u1", None, id, "2026-03-14T09:00:00Z")),
        )
        .unwrap();
    };
    for (dir, id) in [(&w, "leaf"), (&w, "walked"), (&w, "linked"), (&w, "file")] {
        transcript(dir, id);
    }
    for id in ["tools", "plain", "s1"] {
        transcript(&x, id);
    }
    agent(&w.join("leaf/subagents"), "a1");
    agent(&w.join("walked/subagents/workflows/wf1"), "a2");
    agent(&w.join("elsewhere"), "a3");
    std::fs::create_dir_all(w.join("linked")).unwrap();
    std::os::unix::fs::symlink(w.join("elsewhere"), w.join("linked/subagents")).unwrap();
    std::fs::create_dir_all(w.join("file")).unwrap();
    std::fs::write(w.join("file/subagents"), b"").unwrap();
    std::fs::create_dir_all(x.join("tools/tool-results")).unwrap();

    let survey = crate::catalog::survey::survey(&store);
    let mut got: Vec<(PathBuf, u64)> = (survey.candidates.iter())
        .map(|c| c.path.clone())
        .zip(survey.keys.iter().copied())
        .collect();
    got.sort();
    let mut want: Vec<(PathBuf, u64)> = (store.discover().into_iter())
        .map(|c| (c.path.clone(), stamp::key(&store.summary_inputs(&c))))
        .collect();
    want.sort();
    assert_eq!(got.len(), 8);
    assert_eq!(got, want);

    let lstat = |p: &Path| Some(stamp::Stat::of(&std::fs::symlink_metadata(p).unwrap()));
    for id in ["leaf", "walked", "linked", "file"] {
        let (inputs, first) = store.summary_inputs_stated(&candidate(&store, id));
        assert_eq!(inputs[0], w.join(id).join("subagents"), "{id}");
        assert_eq!(first, lstat(&inputs[0]), "{id}");
    }
    for id in ["tools", "plain"] {
        assert_eq!(store.summary_inputs_stated(&candidate(&store, id)).1, None);
    }
}

/// The browser's survey keys each project's sessions where it lists them, from what that
/// listing saw: no session's subagent directories are walked for (before the listing is
/// stored, the store knew nothing of the project and walked for each session's: a warm
/// check of 100k sessions at 0.9-1.5 s instead of 0.54). A store that has listed nothing
/// does walk for them, so the count can fail.
#[test]
fn a_survey_keyed_where_it_lists_walks_for_no_subagents() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path().join("claude");
    for (project, id) in [("-w-a", "s1"), ("-w-a", "s2"), ("-w-b", "s3")] {
        let dir = root.join("projects").join(project);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(format!("{id}.jsonl")), "{}\n").unwrap();
    }
    let ours = |walked: &[PathBuf]| walked.iter().filter(|p| p.starts_with(&root)).count();
    let walked = || discover::WALKED.lock().unwrap().clone();
    let store = ClaudeStore::new(&root, &d.path().join("state"));
    let survey = crate::catalog::survey::packed(&store);
    assert_eq!(crate::catalog::packed::Listed::count(&survey), 3);
    assert_eq!(ours(&walked()), 0, "{:?}", walked());
    // Keyed by a store that has listed nothing, each session is walked for.
    let fresh = ClaudeStore::new(&root, &d.path().join("state"));
    fresh.summary_inputs_stated(&survey_candidate(&root, "-w-b", "s3"));
    assert_eq!(ours(&walked()), 1, "{:?}", walked());
}

fn survey_candidate(root: &Path, project: &str, id: &str) -> Candidate {
    Candidate {
        id: id.into(),
        path: root
            .join("projects")
            .join(project)
            .join(format!("{id}.jsonl")),
        mtime: None,
        stat: None,
    }
}
