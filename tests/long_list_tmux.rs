//! A long list in a real terminal: with over 2,000 sessions shown the quick search's items are built on
//! a thread after the first frame (`app::list::background`), so this follows the whole task
//! on a cold start and on a warm one: type a query as soon as the list shows, Enter, and read
//! the session in the pane.

mod common;

use common::tmux::{Tmux, restored};
use spool::corpus::{CorpusSpec, generate};

#[test]
fn a_query_typed_at_once_on_a_long_list_opens_the_session_it_finds() {
    let Some(t) = Tmux::new("longlist") else {
        return;
    };
    let c = t.home().join("c");
    // Over 4,096 rows shown, so the items are built in two halves on two threads
    // (`search::quick::HALVES_FROM`) and the match is found across the join.
    let spec = CorpusSpec {
        sessions: 5000,
        rounds_per_session: 2,
        seed: 7,
        big_transcript_mb: None,
    };
    generate(&c, &spec).unwrap();
    // One session no generated one resembles, found by a word of its first prompt.
    let log = c.join("loom/sessions/20260101-000000.jsonl");
    let meta = r#"{"kind":"meta","time":"2026-01-01T00:00:00Z","model":"m","cwd":"/p"}"#;
    let user = r#"{"kind":"message","time":"2026-01-01T00:00:01Z","message":{"role":"user","content":"quokka migration plan"}}"#;
    let reply = r#"{"kind":"message","time":"2026-01-01T00:00:02Z","message":{"role":"assistant","content":"the wombat step goes first"}}"#;
    std::fs::write(&log, format!("{meta}\n{user}\n{reply}\n")).unwrap();
    let args = format!(
        "--loop-dir {0}/loop --loom-dir {0}/loom --harness-dir {0}/harness --claude-dir {0}/claude",
        c.display()
    );

    let env = format!("XDG_CACHE_HOME={}/.cache", t.home().display());

    // A first start (no catalog) lists every session and leaves the catalog behind. loom
    // lists first there, and the other stores insert their rows around it while the user
    // types: the query goes in as soon as the first rows show, Enter opens the match, and
    // the pane shows it.
    t.run_env(&env, &args);
    t.wait_for("/ search");
    t.keys(&["/"]);
    t.type_text("quokka");
    t.wait_until("the cold list to narrow to the quokka session", |s| {
        s.contains("/ quokka") && s.contains("quokka migration plan")
    });
    t.keys(&["Enter"]);
    t.wait_until("the session in the pane on a cold start", |s| {
        s.contains("esc back") && s.contains("20260101-000000") && s.contains("wombat step")
    });
    // Back to the list, the search cleared.
    t.keys(&["Escape"]);
    t.wait_until("the list again", |s| !s.contains("esc back"));
    t.keys(&["Escape"]);
    t.wait_until("the search cleared", |s| !s.contains("/ quokka"));
    let cold = t.wait_listed();
    // (Archived and empty generated sessions are hidden by the default filter.)
    let shown: usize = cold
        .split(" sessions")
        .next()
        .and_then(|s| s.rsplit(' ').next())
        .map(|n| n.replace(',', ""))
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    assert!(
        shown > 4_096,
        "a list long enough to build on a thread, in two halves: {cold}"
    );
    t.keys(&["q"]);
    t.wait_for("STTY-DONE");

    // A session made while spool was closed: the catalog does not hold it, so only the warm
    // start's stat pass (its survey packed while the catalog decodes) can find and read it.
    let later = c.join("loom/sessions/20260102-000000.jsonl");
    let user = r#"{"kind":"message","time":"2026-01-02T00:00:01Z","message":{"role":"user","content":"platypus survey notes"}}"#;
    let reply = r#"{"kind":"message","time":"2026-01-02T00:00:02Z","message":{"role":"assistant","content":"the echidna count is done"}}"#;
    std::fs::write(&later, format!("{meta}\n{user}\n{reply}\n")).unwrap();

    // The warm start: the query is typed as soon as the first frame shows, while the items
    // may still be building; it must match every session, and Enter must open the match.
    // A second terminal (its own tmux server) with the same cache.
    let Some(t) = Tmux::new("longlist-warm") else {
        return;
    };
    t.run_env(&env, &args);
    t.wait_for("/ search");
    t.keys(&["/"]);
    t.type_text("quokka");
    t.wait_until("the list to narrow to the quokka session", |s| {
        s.contains("/ quokka") && s.contains("quokka migration plan") && s.contains("1 session")
    });
    t.keys(&["Enter"]);
    let pane = t.wait_until("the session in the pane", |s| {
        s.contains("esc back") && s.contains("20260101-000000") && s.contains("wombat step")
    });
    assert!(pane.contains("quokka migration plan"), "{pane}");
    // The session the warm check found: searched for, opened, read in the pane.
    t.keys(&["Escape"]);
    t.wait_until("the list again", |s| !s.contains("esc back"));
    t.keys(&["Escape"]);
    t.wait_until("the search cleared", |s| !s.contains("/ quokka"));
    t.keys(&["/"]);
    t.type_text("platypus");
    t.wait_until("the list to narrow to the session made since", |s| {
        s.contains("/ platypus") && s.contains("platypus survey notes") && s.contains("1 session")
    });
    t.keys(&["Enter"]);
    t.wait_until("the session made since in the pane", |s| {
        s.contains("esc back") && s.contains("20260102-000000") && s.contains("echidna count")
    });
    t.keys(&["q"]);
    let end = t.wait_for("STTY-DONE");
    assert!(end.contains("EXIT=0"), "{end}");
    restored(&end);
}
