//! pi in the real browser (tmux): its sessions are listed beside another store's, `F`
//! reaches the pi store (skipping empty stores), a fork sits under its parent, and the pane
//! marks where another branch leaves the active path.

mod common;

use std::path::Path;

use common::tmux::Tmux;

#[test]
fn pi_rows_store_cycling_and_branch_marker() {
    let Some(t) = Tmux::new("pi") else { return };
    let fx = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/loom/sessions");
    common::copy_tree(&fx, &t.home().join(".loom/sessions"));
    common::install_pi_fixtures(&t.home());
    t.run("");
    let s = t.wait_listed();
    assert!(s.contains("router trailing slash"), "{s}");
    assert!(s.contains("run the benchmarks"), "{s}");
    // Loop, harness and Claude Code are empty: F goes to loom, then straight to pi.
    t.keys(&["F"]);
    t.wait_stable("only loom rows", |s| {
        s.contains("run the benchmarks") && !s.contains("router trailing slash")
    });
    t.keys(&["F"]);
    t.wait_stable("only pi rows", |s| {
        s.contains("router trailing slash") && !s.contains("run the benchmarks")
    });
    // The fork with a branch: the marker says how many branches leave the path there.
    t.keys(&["/"]);
    t.type_text("router_test");
    t.wait_until("the fork's row", |s| {
        s.contains("[pi]") && s.contains("why does router_test")
    });
    t.keys(&["Enter"]);
    // The transcript opens at its end, under the "left off" card: scroll up to the marker.
    t.wait_until("1 other branch leaves here", |s| {
        let seen = s.contains("1 other branch leaves here");
        if !seen {
            t.keys(&["k"]);
        }
        seen
    });
    // `q` quits from the pane. (Escapes sent with it in one go could be read apart, the
    // second glued to the `q` as Alt-q, which quits nothing.)
    t.keys(&["q"]);
    let end = t.wait_for("STTY-DONE");
    assert!(end.contains("EXIT=0"), "{end}");
}

/// One pi session in `root`'s cwd directory `dir`: started `created` seconds after
/// 2026-03-01T00:00:00Z (its name), last written (mtime) `active` seconds after, its prompt
/// `title`.
fn pi_session(root: &Path, dir: &str, n: u64, created: u64, active: u64, title: &str) {
    let t0 = 1_772_323_200u64;
    let at = |s: u64| chrono::DateTime::from_timestamp((t0 + s) as i64, 0).unwrap();
    let (c, a) = (at(created), at(active));
    let id = format!("019ceba0-0000-7000-8000-{n:012x}");
    let ts = |t: chrono::DateTime<chrono::Utc>| t.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string();
    let lines = [
        serde_json::json!({"type":"session","version":3,"id":id,"timestamp":ts(c),"cwd":"/w"}),
        serde_json::json!({"type":"message","id":"e0","parentId":null,"timestamp":ts(a),
            "message":{"role":"user","content":[{"type":"text","text":title}],
            "timestamp":a.timestamp_millis()}}),
    ];
    let dir = root.join(dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{}_{id}.jsonl", c.format("%Y-%m-%dT%H-%M-%S-%3fZ")));
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&path, text).unwrap();
    let f = std::fs::File::options().write(true).open(&path).unwrap();
    f.set_modified(std::time::UNIX_EPOCH + std::time::Duration::from_secs(t0 + active))
        .unwrap();
}

/// A cold start on a pi store alone (issue 10): the first frame with rows holds the newest
/// session, found by the start time in the files' names before every file is stat'ed, and
/// selected; as the rest arrive, a session resumed later (started first, so only the full
/// discovery finds it early) is inserted above, and the selection stays put.
#[test]
fn a_cold_pi_start_shows_the_newest_first_and_the_selection_holds() {
    let Some(t) = Tmux::new("pi-cold") else {
        return;
    };
    let root = t.home().join(".pi/agent/sessions");
    let count = 1500u64;
    for n in 0..count {
        let dir = format!("--w-p{}--", n % 6);
        let title = format!("session {n}");
        pi_session(&root, &dir, n, n * 3600, n * 3600 + 600, &title);
    }
    pi_session(&root, "--w-p0--", count, 0, count * 3600 + 900, "resumed");
    // The resumed session went in above the selection (out of view, the selected row kept
    // its place on screen): one row up is it, and opened, the pane reads it, not the one
    // selected before.
    let up = |t: &Tmux| {
        t.keys(&["Up"]);
        t.wait_stable("the row above selected", |s| {
            common::tmux::selected_row(s).is_some_and(|r| r.starts_with("resumed "))
        });
    };
    let header = format!("pi 019ceba0-0000-7000-8000-{count:012x}");
    t.cold_start_selects("session 1499", "1,501 sessions", up, &header);
}
