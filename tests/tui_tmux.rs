//! Real-terminal tests of the browser: the built `spool` binary under tmux. The first screen
//! appears; `/` and typing filter; Enter opens the pane; `v` switches views; sessions written
//! while spool runs show up; the stores are tidied while it runs; `q` exits 0 (signals:
//! `tui_signals_tmux.rs`); `--demo` leaves nothing behind in TMPDIR or the user's cache.

mod common;

use std::io::Write;

use common::tmux::{Tmux, demo_copies, restored, run_demo};

#[test]
fn browse_search_open_view_quit() {
    let Some(t) = Tmux::new("browse") else { return };
    t.run("--demo");
    let first = t.wait_listed();
    assert!(first.contains("sessions"), "{first}");
    // Three letters of a word in a title find it; nothing matches a nonsense query.
    t.keys(&["/"]);
    t.type_text("zqxjzqxj");
    t.wait_for("no matches");
    t.keys(&["Escape"]);
    t.wait_for("/ search");
    t.keys(&["/"]);
    t.type_text("pyt");
    // The list narrows to what matches: the pytest session stays, mkdocs goes.
    t.wait_until("the list to narrow to 'pyt'", |s| {
        s.contains("/ pyt") && s.contains("pytest") && !s.contains("mkdocs build")
    });
    t.keys(&["Enter"]);
    t.wait_for("esc back");
    t.keys(&["v"]);
    t.wait_for("context window");
    t.keys(&["v"]);
    // Raw: the stored records, pretty-printed (the pane opens at their end).
    t.wait_for("\"timestamp\": ");
    t.keys(&["q"]);
    let end = t.wait_for("STTY-DONE");
    assert!(end.contains("EXIT=0"), "{end}");
    restored(&end);
}

/// The demo's 62-round session, found by search and opened with one Enter: the pane shows
/// its last message (the matcher's tick moved the selection; that load used to be lost and
/// the pane said `loading…` until the selection moved again).
fn open_the_long_session(t: &Tmux) -> String {
    t.run("--demo");
    t.wait_listed();
    t.keys(&["/"]);
    t.type_text("port");
    t.wait_until("the list to narrow to 'port'", |s| {
        s.contains("/ port") && s.contains("Port the test suite")
    });
    t.keys(&["Enter"]);
    t.wait_until("the session's last message in the pane", |s| {
        s.contains("That completes the port")
    })
}

#[test]
fn a_session_found_by_search_is_shown_not_left_loading() {
    let Some(t) = Tmux::new("search-open") else {
        return;
    };
    let s = open_the_long_session(&t);
    assert!(!s.contains("loading…"), "{s}");
    t.keys(&["q"]);
    assert!(t.wait_for("STTY-DONE").contains("EXIT=0"));
}

/// A query with capitals matches only where they are written (smart case), and the session
/// it finds opens in the pane: the quick search skips rows without the term's capitals, so a
/// wrong skip would show "no matches" or an empty pane here.
#[test]
fn a_query_with_capitals_finds_the_session_and_opens_it() {
    let Some(t) = Tmux::new("search-caps") else {
        return;
    };
    t.run("--demo");
    t.wait_listed();
    t.keys(&["/"]);
    t.type_text("PORT");
    t.wait_for("no matches");
    t.keys(&["Escape"]);
    t.wait_for("/ search");
    t.keys(&["/"]);
    t.type_text("Port");
    t.wait_until("the list to narrow to 'Port'", |s| {
        s.contains("/ Port") && s.contains("Port the test suite")
    });
    t.keys(&["Enter"]);
    let s = t.wait_until("the session's last message in the pane", |s| {
        s.contains("That completes the port")
    });
    assert!(!s.contains("loading…"), "{s}");
    t.keys(&["q"]);
    assert!(t.wait_for("STTY-DONE").contains("EXIT=0"));
}

#[test]
fn g_and_g_reach_the_first_and_last_message_of_a_long_session() {
    let Some(t) = Tmux::new("top") else { return };
    open_the_long_session(&t);
    // One press: the first message of 62 rounds, not round 23.
    t.keys(&["g"]);
    let s = t.wait_until("the first message", |s| {
        s.contains("We're moving the weatherstation tests")
    });
    assert!(!s.contains("earlier rounds"), "{s}");
    t.keys(&["G"]);
    t.wait_until("the last message again", |s| {
        s.contains("That completes the port") && !s.contains("We're moving")
    });
    t.keys(&["q"]);
    assert!(t.wait_for("STTY-DONE").contains("EXIT=0"));
}

#[test]
fn sessions_written_while_running_show_up() {
    let Some(t) = Tmux::new("live") else { return };
    common::install_fixtures(&t.home());
    t.run("");
    let before = t.wait_listed();
    assert!(before.contains("why does router_test.go fail?"), "{before}");
    assert!(!before.contains("live session appears"));

    // A new loom session appears.
    let sessions = t.home().join(".loom/sessions");
    std::fs::write(
        sessions.join("20260315-080000.jsonl"),
        "{\"kind\":\"meta\",\"time\":\"2026-03-15T08:00:00Z\",\"cwd\":\"/tmp\"}\n\
         {\"kind\":\"message\",\"time\":\"2026-03-15T08:00:01Z\",\"message\":{\"role\":\"user\",\"content\":\"live session appears\"}}\n",
    )
    .unwrap();
    t.wait_for("live session appears");
    // The pane previews the selected row and marks it read when its end is shown: select
    // another row, so the appended session below is not the one on screen.
    t.keys(&["j"]);
    std::thread::sleep(std::time::Duration::from_millis(300));

    // New output in an existing session makes it unread (its read marker is in the sidecar).
    // Its row is the pinned one (◆); only the sidebar part of the screen is looked at.
    let line = |s: &str| {
        s.lines()
            .map(|l| l.split('│').next().unwrap_or_default())
            .find(|l| l.contains("◆ why does router_test.go fail?"))
            .unwrap_or_default()
            .to_string()
    };
    assert!(!line(&t.screen()).contains('●'), "{}", t.screen());
    let mut log = std::fs::OpenOptions::new()
        .append(true)
        .open(sessions.join("20260314-091502.jsonl"))
        .unwrap();
    writeln!(
        log,
        "{{\"kind\":\"message\",\"time\":\"2026-03-15T09:00:00Z\",\"message\":{{\"role\":\"assistant\",\"content\":\"fixed\"}}}}"
    )
    .unwrap();
    drop(log);
    t.wait_until("the unread dot on the appended session", |s| {
        line(s).contains('●')
    });
    t.keys(&["q"]);
    let end = t.wait_for("STTY-DONE");
    assert!(end.contains("EXIT=0"), "{end}");
}

/// The stores are tidied while the browser runs, once the list is in, not at the quit (at
/// 100k loom sessions the quit's sweep held the shell's prompt for ~60 ms): a killed fork's
/// temp is gone before `q` is pressed.
#[test]
fn a_killed_forks_temp_is_swept_while_the_browser_runs() {
    let Some(t) = Tmux::new("tidy") else { return };
    common::install_fixtures(&t.home());
    let temp = t
        .home()
        .join(".loom/sessions/.fork-0123456789abcdef.jsonl.tmp");
    let f = std::fs::File::create(&temp).unwrap();
    f.set_modified(std::time::SystemTime::now() - std::time::Duration::from_secs(3 * 3600))
        .unwrap();
    drop(f);
    t.run("");
    t.wait_listed();
    let t0 = std::time::Instant::now();
    while temp.exists() && t0.elapsed() < std::time::Duration::from_secs(20) {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let running = t.screen();
    assert!(!temp.exists(), "the temp is still there: {running}");
    assert!(
        !running.contains("STTY-DONE"),
        "spool is still running: {running}"
    );
    // The quit, with nothing left to tidy, hands the terminal back as it was.
    t.keys(&["q"]);
    let end = t.wait_for("STTY-DONE");
    assert!(end.contains("EXIT=0"), "{end}");
    restored(&end);
}

#[test]
fn demo_keeps_its_cache_and_copy_to_itself() {
    let Some(t) = Tmux::new("democache") else {
        return;
    };
    let tmp = run_demo(&t);
    t.wait_listed();
    t.keys(&["q"]);
    let end = t.wait_for("STTY-DONE");
    assert!(end.contains("EXIT=0"), "{end}");
    assert_eq!(demo_copies(&tmp), Vec::<String>::new());
    // Start-up hints of the demo stay inside its copy, not in the user's cache.
    let cache = t.home().join(".cache");
    assert!(!cache.exists(), "{:?}", common::files_under(&cache));
}

#[test]
fn ctrl_c_in_a_resumed_agent_does_not_end_spool() {
    let Some(t) = Tmux::new("resumeint") else {
        return;
    };
    common::install_fixtures(&t.home());
    // The agent is `sleep`; the harness record without project_root resumes in the
    // current directory.
    let config = t.home().join(".config/spool");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(
        config.join("config.toml"),
        "[filters]\nstore = \"harness\"\n\n[resume]\nharness = \"sleep 30\"\n",
    )
    .unwrap();
    // The pane's shell shares the process group too; a trap keeps it alive (an interactive
    // shell would have put spool in a group of its own).
    t.run_with("trap : INT;", "-u XDG_CONFIG_HOME", "");
    t.wait_listed();
    t.keys(&["j"]);
    t.wait_for("List the TODO comments");
    t.keys(&["r"]);
    t.wait_until("the agent to own the terminal", |s| !s.contains("/ search"));
    // Ctrl-C goes to the whole foreground process group: the agent ends, spool stays.
    t.keys(&["C-c"]);
    let back = t.wait_for("/ search");
    assert!(!back.contains("EXIT="), "{back}");
    t.keys(&["q"]);
    let end = t.wait_for("STTY-DONE");
    assert!(end.contains("EXIT=0"), "{end}");
}
