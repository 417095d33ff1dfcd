//! Real-terminal tests of the text search and the find in the pane: the built `spool` on
//! `--demo` under tmux. `s` finds a phrase that only a tool result of an old round holds,
//! Enter shows it highlighted in the pane; `/` in the pane finds, `n` steps and wraps. In
//! every writable store a phrase only in thinking, a tool result or a compaction summary is
//! previewed highlighted as soon as it is found, and stays so after Enter; a query nothing
//! matches empties the pane.

mod common;

use common::tmux::Tmux;

/// Only in a tool result of round 3 of the demo's 62-round session (far above its last page).
const DEEP: &str = "CsvReaderTest";

/// The screen with its colours and attributes (SGR sequences).
fn styled(t: &Tmux) -> String {
    t.tmux(&["capture-pane", "-p", "-e", "-t", "t"])
}

/// Whether the attributes set since the last reset in `before` include reverse video.
fn reversed(before: &str) -> bool {
    let since = before.rsplit("\x1b[0m").next().unwrap_or("");
    since
        .split("\x1b[")
        .filter_map(|sgr| sgr.split_once('m').map(|(p, _)| p))
        .any(|p| {
            let mut ns = p.split(';');
            while let Some(n) = ns.next() {
                match n {
                    "7" => return true,
                    // A colour's own numbers (38;5;N, 38;2;R;G;B) are not attributes.
                    "38" | "48" | "58" => {
                        let skip = if ns.next() == Some("5") { 1 } else { 3 };
                        ns.by_ref().take(skip).for_each(drop);
                    }
                    _ => {}
                }
            }
            false
        })
}

#[test]
fn text_search_opens_the_session_at_a_deep_hit() {
    let Some(t) = Tmux::new("textsearch") else {
        return;
    };
    t.run("--demo");
    t.wait_listed();
    t.keys(&["s"]);
    t.type_text(DEEP);
    t.wait_until("the one result", |s| {
        s.contains("Port the test suite") && s.contains("1 hit · #18")
    });
    t.keys(&["Enter"]);
    // In the pane (right of the divider), reversed as a hit.
    t.wait_until("the hit in the pane", |s| {
        s.lines()
            .any(|l| l.split_once('│').is_some_and(|(_, p)| p.contains(DEEP)))
    });
    let hit = styled(&t)
        .lines()
        .filter_map(|l| l.split_once('│').map(|(_, p)| p.to_string()))
        .find(|p| p.contains(DEEP))
        .unwrap();
    let before = &hit[..hit.find(DEEP).unwrap()];
    assert!(reversed(before), "not reversed: {hit:?}");
    t.keys(&["q"]);
    assert!(t.wait_for("STTY-DONE").contains("EXIT=0"));
}

/// `/` in the pane of the long session finds in rounds not loaded yet; `n` steps, and
/// wraps with a note.
#[test]
fn find_in_the_pane_steps_and_wraps() {
    let Some(t) = Tmux::new("find") else { return };
    t.run("--demo");
    t.wait_listed();
    t.keys(&["/"]);
    t.type_text("port");
    t.wait_until("the long session listed", |s| {
        s.contains("Port the test suite")
    });
    t.keys(&["Enter"]);
    t.wait_for("That completes the port");
    // Only in round 3, far above the last page that was loaded.
    t.keys(&["/"]);
    t.type_text("csvreadertest");
    t.wait_for("/csvreadertest");
    t.keys(&["Enter"]);
    t.wait_until("the match in the pane", |s| {
        s.lines()
            .any(|l| l.split_once('│').is_some_and(|(_, p)| p.contains(DEEP)))
    });
    t.keys(&["n"]);
    let s = t.wait_for("match ");
    assert!(s.contains("of "), "{s}");
    // Step until the last match wraps to the first.
    let mut wrapped = false;
    for _ in 0..20 {
        t.keys(&["n"]);
        if t.screen().contains("search wrapped") {
            wrapped = true;
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(wrapped, "{}", t.screen());
    t.keys(&["q"]);
    assert!(t.wait_for("STTY-DONE").contains("EXIT=0"));
}

/// The part of each screen line right of the divider: the pane.
fn pane_lines(screen: &str) -> Vec<String> {
    screen
        .lines()
        .filter_map(|l| l.split_once('│').map(|(_, p)| p.to_string()))
        .collect()
}

/// `word` is in the pane, reversed (a hit of the find).
fn highlighted_in_pane(t: &Tmux, word: &str) -> bool {
    pane_lines(&styled(t))
        .iter()
        .any(|p| p.match_indices(word).any(|(at, _)| reversed(&p[..at])))
}

#[test]
fn phrases_in_every_writable_store_are_previewed_and_opened_highlighted() {
    let Some(t) = Tmux::new("phrases") else {
        return;
    };
    let demo = spool::demo::DemoStore::create().unwrap();
    let fixtures = t.dir.path().join("phrases");
    for store in ["loom", "harness"] {
        let from = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/phrases")
            .join(store);
        common::copy_tree(&from, &fixtures.join(store));
    }
    t.run(&format!(
        "--loop-dir {}/loop --loom-dir {f}/loom --harness-dir {f}/harness",
        demo.path().display(),
        f = fixtures.display()
    ));
    t.wait_listed();
    // (query typed, word checked in the pane): where each phrase is the only place it is.
    let cases = [
        ("\"e2e log is cut\"", "e2e"),    // Loop: thinking
        ("\"keyset batches\"", "keyset"), // Loop: compaction summary
        (DEEP, DEEP),                     // Loop: tool result, round 3 of 62
        ("marmalade", "marmalade"),       // loom: thinking
        ("quillfeather", "quillfeather"), // loom: tool result
        ("tangerine", "tangerine"),       // loom: the first of two compaction summaries
        ("porcupine", "porcupine"),       // harness: reasoning_content
        ("walrus", "walrus"),             // harness: tool result
        ("saffron", "saffron"),           // harness: compaction summary
    ];
    t.keys(&["s"]);
    for (query, word) in cases {
        t.keys(&["C-u"]);
        t.type_text(query);
        // The live preview: the result under the cursor, at its hit, highlighted.
        t.wait_until(&format!("{word} previewed"), |_| {
            highlighted_in_pane(&t, word)
        });
        t.keys(&["Enter"]);
        t.wait_until(&format!("{word} opened"), |s| {
            s.contains("hit") && highlighted_in_pane(&t, word)
        });
        // Back to the results for the next query: Esc clears the find, Esc again leaves
        // the pane.
        t.keys(&["Escape"]);
        t.wait_until("the find cleared", |_| !highlighted_in_pane(&t, word));
        t.keys(&["Escape"]);
        t.wait_for("enter open at the hit");
    }
    // Nothing matches: the pane is emptied, not left on the last session.
    t.keys(&["C-u"]);
    t.type_text("zzqqxxnothing");
    let s = t.wait_for("no result to show");
    assert!(pane_lines(&s).iter().all(|p| !p.contains("saffron")), "{s}");
    t.keys(&["Escape"]);
    t.wait_for("enter open · / search");
    t.keys(&["q"]);
    assert!(t.wait_for("STTY-DONE").contains("EXIT=0"));
}

/// The usual start: an index written by an earlier run, and a session that has grown since.
/// The browser hands the change to its index child; a text search for what was appended
/// finds it, and Enter shows it in the pane.
#[test]
fn a_stale_index_is_brought_current_and_the_new_text_is_found_and_opened() {
    use std::io::Write;
    let Some(t) = Tmux::new("stale-index") else {
        return;
    };
    let corpus = t.dir.path().join("corpus");
    let spec = spool::corpus::CorpusSpec {
        sessions: 60,
        rounds_per_session: 2,
        seed: 5,
        big_transcript_mb: None,
    };
    spool::corpus::generate(&corpus, &spec).unwrap();
    let args = format!(
        "--loop-dir {c}/loop --loom-dir {c}/loom --harness-dir {c}/harness --claude-dir {c}/none \
         --codex-dir {c}/none --pi-dir {c}/none",
        c = corpus.display()
    );
    let home = t.home();
    let env = t.cache_env();
    // An earlier run's index: `spool search` brings it up to date.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_spool"))
        .args(args.split(' '))
        .args(["search", "anything"])
        .env("HOME", &home)
        .env("XDG_CACHE_HOME", home.join(".cache"))
        .env("XDG_DATA_HOME", home.join(".local/share"))
        .output()
        .unwrap();
    assert!(out.status.code().is_some_and(|c| c < 2), "{out:?}");
    assert!(home.join(".cache/spool/index").is_dir(), "no index written");
    // Then a loom session grows by a message whose word the index has never seen.
    let loom = corpus.join("loom/sessions");
    let mut names: Vec<_> = std::fs::read_dir(&loom)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file() && p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    names.sort();
    let grown = &names[0];
    let id = grown.file_stem().unwrap().to_string_lossy().to_string();
    let word = "Quetzalcoatlus";
    let line = format!(
        "{{\"kind\":\"message\",\"time\":\"2026-11-30T09:00:00+01:00\",\"message\":{{\"role\":\"user\",\"content\":\"where did the {word} fixture go\"}}}}\n"
    );
    std::fs::OpenOptions::new()
        .append(true)
        .open(grown)
        .unwrap()
        .write_all(line.as_bytes())
        .unwrap();
    t.run_env(&env, &args);
    t.wait_listed();
    t.keys(&["s"]);
    t.type_text(word);
    t.wait_until("the grown session found", |s| s.contains("1 hit"));
    t.keys(&["Enter"]);
    t.wait_until(
        "the appended message in the pane, under the session's id",
        |s| {
            s.contains(&id)
                && s.lines()
                    .any(|l| l.split_once('│').is_some_and(|(_, p)| p.contains(word)))
        },
    );
    t.keys(&["q"]);
    assert!(t.wait_for("STTY-DONE").contains("EXIT=0"));
}
