//! Real-terminal tests of the one-key actions: the `spool` binary under tmux. Pin shows its
//! mark at once, fork selects the new session, and resume hands every keystroke to a fake
//! agent and brings the browser back exactly as it was. Skipped (with a note) without tmux.

mod common;

use std::path::PathBuf;

use common::tmux::{Tmux, restored};

/// The screen without its status bar (the last non-empty line).
fn above_status(screen: &str) -> String {
    let lines: Vec<&str> = screen.lines().collect();
    let last = lines
        .iter()
        .rposition(|l| !l.trim().is_empty())
        .unwrap_or(0);
    lines[..last].join("\n")
}

/// The id shown in the pane header (`<store> <id>` on its second line), e.g. `loom 2026…`.
fn header_id(screen: &str, store: &str) -> Option<String> {
    let prefix = format!("│{store} ");
    screen.lines().find_map(|l| {
        let at = l.find(&prefix)?;
        l[at + prefix.len()..]
            .split_whitespace()
            .next()
            .map(str::to_string)
    })
}

fn the_line<'a>(screen: &'a str, needle: &str) -> &'a str {
    screen
        .lines()
        .find(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("no line with {needle:?}:\n{screen}"))
}

#[test]
fn pin_shows_the_mark_at_once() {
    let Some(t) = Tmux::new("pin") else { return };
    t.run("--demo");
    t.wait_listed();
    t.keys(&["/"]);
    t.type_text("DST duplicate");
    t.keys(&["Enter"]);
    // The row's first line starts with its marks (after the selection bar): `◆` when pinned.
    let pinned = |s: &str| s.lines().any(|l| l.contains(" ◆ DST duplicate rows"));
    let listed = |s: &str| s.lines().any(|l| l.contains("  DST duplicate rows"));
    let before = t.wait_for("loom 20261026-085415");
    assert!(listed(&before) && !pinned(&before), "{before}");
    t.keys(&["p"]);
    // At once: the same frame that reports the write shows the mark.
    let s = t.wait_for("pinned loom:20261026-085415");
    assert!(pinned(&s), "no pin mark:\n{s}");
    t.keys(&["p"]);
    let s = t.wait_for("unpinned loom:20261026-085415");
    assert!(!pinned(&s) && listed(&s), "{s}");
    t.keys(&["q"]);
    let end = t.wait_for("STTY-DONE");
    assert!(end.contains("EXIT=0"), "{end}");
}

#[test]
fn fork_selects_the_new_session_with_its_parent() {
    let Some(t) = Tmux::new("fork") else { return };
    t.run("--demo");
    t.wait_listed();
    // Loom only; move down and back so the selection is the user's.
    t.keys(&["F", "F", "j", "k"]);
    let s = t.wait_stable("a loom session in the pane", |s| {
        header_id(s, "loom").is_some()
    });
    let parent = header_id(&s, "loom").unwrap();
    t.keys(&["f"]);
    let s = t.wait_for(&format!("forked loom:{parent} into loom:"));
    let status = the_line(&s, "into loom:");
    let child = status
        .split("into loom:")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .unwrap()
        .to_string();
    assert_ne!(child, parent);
    let s = t.wait_until("the fork selected", |s| {
        header_id(s, "loom").as_deref() == Some(child.as_str())
    });
    assert!(
        s.contains(&format!("forked from loom:{parent}")),
        "parent not shown:\n{s}"
    );
    t.keys(&["q"]);
    let end = t.wait_for("STTY-DONE");
    assert!(end.contains("EXIT=0"), "{end}");
}

/// A harness session whose project directory exists, and a config whose harness resume
/// command is a script that reads one line and writes it to a file.
fn resume_fixture(t: &Tmux) -> (PathBuf, PathBuf) {
    let proj = t.dir.path().join("proj");
    std::fs::create_dir_all(&proj).unwrap();
    let sessions = t.home().join(".agent-harness/memory/sessions");
    std::fs::create_dir_all(&sessions).unwrap();
    let record = serde_json::json!({
        "id": "ResumeTestSess01",
        "created_at": "2026-03-01T10:00:00+00:00",
        "updated_at": "2026-03-01T10:05:00+00:00",
        "summary": "",
        "title": "Resume me please",
        "project_root": proj.to_string_lossy(),
        "archived": false,
        "messages": [
            {"role": "user", "content": "hello"},
            {"role": "assistant", "content": "hi there"}
        ]
    });
    std::fs::write(
        sessions.join("ResumeTestSess01.json"),
        serde_json::to_vec_pretty(&record).unwrap(),
    )
    .unwrap();
    let got = t.dir.path().join("got.txt");
    let agent = t.dir.path().join("fake-agent.sh");
    std::fs::write(
        &agent,
        format!(
            "#!/bin/sh\necho \"FAKE AGENT $1 in $(pwd)\"\nIFS= read -r line\n\
             printf '%s|%s' \"$1\" \"$line\" > {got}\n",
            got = got.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&agent, std::fs::Permissions::from_mode(0o755)).unwrap();
    let config = t.dir.path().join("config.toml");
    std::fs::write(
        &config,
        format!("[resume]\nharness = \"{} {{id}}\"\n", agent.display()),
    )
    .unwrap();
    (config, got)
}

#[test]
fn resume_hands_every_key_to_the_agent_and_comes_back_intact() {
    let Some(t) = Tmux::new("resume") else { return };
    let (config, got) = resume_fixture(&t);
    t.run(&format!("--config {}", config.display()));
    t.wait_listed();
    // Some state to keep: a search query, the pane focused and scrolled, raw view.
    t.keys(&["/"]);
    t.type_text("resume");
    t.keys(&["Enter", "Enter", "v", "v"]);
    let before = t.wait_stable("the raw view", |s| s.contains("\"hi there\""));
    t.keys(&["r"]);
    let proj = t.dir.path().join("proj");
    let canon = proj.canonicalize().unwrap_or(proj);
    t.wait_until("the fake agent", |s| {
        s.contains("FAKE AGENT ResumeTestSess01 in") && s.contains(&*canon.to_string_lossy())
    });
    // Keys spool binds (q quits, j moves, / searches) must all reach the agent.
    t.type_text("q/jk typed while the agent runs");
    t.keys(&["Enter"]);
    let after = t.wait_for("back from harness:ResumeTestSess01");
    assert_eq!(
        std::fs::read_to_string(&got).unwrap(),
        "ResumeTestSess01|q/jk typed while the agent runs"
    );
    // Fully redrawn and exactly as before: query, focus, view, selection.
    assert_eq!(above_status(&after), above_status(&before));
    assert!(after.contains("resume"), "{after}");
    t.keys(&["q"]);
    let end = t.wait_for("STTY-DONE");
    assert!(end.contains("EXIT=0"), "{end}");
    restored(&end);
}

#[test]
fn resume_refusal_is_one_line_and_the_browser_goes_on() {
    let Some(t) = Tmux::new("refuse") else { return };
    t.run("--demo");
    t.wait_listed();
    t.keys(&["/"]);
    t.type_text("DST duplicate");
    t.keys(&["Enter"]);
    t.wait_for("loom 20261026-085415");
    t.keys(&["r"]);
    // loom has no resume command: spool says exactly what to type in loom's prompt.
    t.wait_for("/resume 20261026-085415");
    t.keys(&["d"]);
    t.wait_for("delete session");
    t.keys(&["Escape"]);
    t.wait_for("cancelled");
    t.keys(&["q"]);
    let end = t.wait_for("STTY-DONE");
    assert!(end.contains("EXIT=0"), "{end}");
}

/// Esc leaves the pane (Enter in the search box opened it), a second Esc on the list clears
/// the query. Each Escape is seen handled before another key goes: an Escape read together
/// with the next key is one key, Alt and that key. Under load a second Escape sent blind (the
/// first had already cleared the query) was read with the `.` after it, and the view never
/// changed.
fn clear_query(t: &Tmux) {
    // The sidebar's line for an empty query (the status bar's hint reads "/ search · ? help").
    const EMPTY: &str = "/ search   ? help";
    for _ in 0..3 {
        let before = t.screen();
        if before.contains(EMPTY) {
            return;
        }
        t.keys(&["Escape"]);
        t.wait_until("the Escape to be handled", |s| s != before);
    }
    t.wait_for(EMPTY);
}

/// The demo's DST session, found by search and selected.
fn select_dst(t: &Tmux) {
    t.run("--demo");
    t.wait_listed();
    t.keys(&["/"]);
    t.type_text("DST duplicate");
    t.keys(&["Enter"]);
    t.wait_for("loom 20261026-085415");
}

#[test]
fn rename_prompt_writes_the_new_title() {
    let Some(t) = Tmux::new("rename") else { return };
    select_dst(&t);
    t.keys(&["R"]);
    t.wait_for("rename loom:20261026-085415");
    t.keys(&["C-u"]);
    t.type_text("Sensor CSV: DST fix");
    t.keys(&["Enter"]);
    t.wait_for("renamed loom:20261026-085415");
    // The row shows the new title once the query no longer hides it.
    clear_query(&t);
    t.keys(&["/"]);
    t.type_text("Sensor CSV");
    t.keys(&["Enter"]);
    let s = t.wait_for("Sensor CSV: DST fix");
    assert!(s.contains("loom 20261026-085415"), "{s}");
    t.keys(&["q"]);
    assert!(t.wait_for("STTY-DONE").contains("EXIT=0"));
}

#[test]
fn export_dialog_writes_a_private_file_and_never_overwrites() {
    use std::os::unix::fs::PermissionsExt;
    let Some(t) = Tmux::new("export") else { return };
    select_dst(&t);
    t.keys(&["e"]);
    t.wait_for("Export loom:20261026-085415");
    t.keys(&["Enter"]);
    t.wait_for("exported loom:20261026-085415");
    let file = t.dir.path().join("dst-duplicate-rows-in-sensor-csv.md");
    let text = std::fs::read_to_string(&file).expect("the export was written");
    assert!(
        text.starts_with("# DST duplicate rows in sensor CSV"),
        "{text}"
    );
    let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    // Again: the same path is refused, the file is left as it was.
    t.keys(&["e"]);
    t.wait_for("Export loom:20261026-085415");
    t.keys(&["Enter"]);
    let refused = t.wait_for("already exists");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), text);
    // The refusal closed the dialog. (An Escape sent here had nothing to close, and under
    // load it was read together with the `q` after it as one key, Alt-q, which quits nothing.)
    assert!(
        !refused.contains("Export loom:20261026-085415"),
        "{refused}"
    );
    t.keys(&["q"]);
    assert!(t.wait_for("STTY-DONE").contains("EXIT=0"));
}

#[test]
fn delete_confirmed_then_undone() {
    let Some(t) = Tmux::new("delete") else { return };
    select_dst(&t);
    t.keys(&["d"]);
    t.wait_for("delete session");
    t.keys(&["y"]);
    t.wait_for("deleted loom:20261026-085415");
    t.wait_until("the row to leave the list", |s| {
        !above_status(s).contains("DST duplicate rows in sensor CSV")
    });
    t.keys(&["U"]);
    t.wait_for("restored loom:20261026-085415");
    t.wait_until("the row to come back", |s| {
        above_status(s).contains("DST duplicate rows in sensor CSV")
    });
    t.keys(&["q"]);
    assert!(t.wait_for("STTY-DONE").contains("EXIT=0"));
}

/// The list side of the screen (left of the pane's border), status bar excluded.
fn sidebar(screen: &str) -> String {
    common::tmux::sidebar(&above_status(screen))
}

#[test]
fn archive_hides_the_row_and_the_archived_view_restores_it() {
    let Some(t) = Tmux::new("archive") else {
        return;
    };
    select_dst(&t);
    t.keys(&["a"]);
    t.wait_for("archived loom:20261026-085415");
    t.wait_until("the row to leave the default view", |s| {
        !sidebar(s).contains("DST duplicate rows in sensor CSV")
    });
    // The archived view lists it; the same key restores it.
    clear_query(&t);
    t.keys(&["."]);
    t.wait_until("the archived view to list it", |s| {
        sidebar(s).contains("DST duplicate rows in sensor CSV") && s.contains("sessions · archived")
    });
    t.keys(&["/"]);
    t.type_text("DST duplicate");
    t.keys(&["Enter"]);
    t.wait_for("loom 20261026-085415");
    t.keys(&["a"]);
    t.wait_for("unarchived loom:20261026-085415");
    // Back to the default view, the query still set: the row is listed there again.
    t.keys(&["."]);
    t.wait_until("the default view to list it again", |s| {
        sidebar(s).contains("DST duplicate rows in sensor CSV")
            && !s.contains("sessions · archived")
    });
    t.keys(&["q"]);
    assert!(t.wait_for("STTY-DONE").contains("EXIT=0"));
}
