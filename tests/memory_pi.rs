//! Memory follows what is shown for pi sessions (issues 9 and 11): a generated session of
//! 100+ MB whose tool results are 1 MB each, with compactions. Peak RSS of the built binary,
//! read from the kernel for that one child (`wait4`'s rusage) or, in the browser, from its
//! `VmHWM`. Not timed: a bound on bytes.

mod common;

use std::io::Write;
use std::path::Path;

use common::Home;
use common::tmux::Tmux;

use common::rss::{MIB, assert_peak_under, high_water, settle, write_lines};
const ID: &str = "019cf444-0000-7000-8000-0000000000a1";

/// A pi session of about `mib` MiB under the session root `root`: rounds of a prompt, a
/// tool call, its 1 MB result and an answer, a compaction every 20 rounds. Returns its size
/// and its number of rounds (the last answer reads "done ROUNDS-1").
fn pi_session(root: &Path, mib: u64) -> (u64, u64) {
    let dir = root.join("--w--");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("2026-03-15T09-00-00-000Z_{ID}.jsonl"));
    let mut f = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    let ts = r#""timestamp":"2026-03-15T08:00:00.000Z""#;
    let ms = r#""timestamp":1773561600000"#;
    // Written in pi's key order (`type` first, the role before the content): the first pass
    // tells a bulky line from its first bytes.
    let mut lines = vec![
        format!(r#"{{"type":"session","version":3,"id":"{ID}",{ts},"cwd":"/w"}}"#),
        format!(
            r#"{{"type":"model_change","id":"m0","parentId":null,{ts},"provider":"anthropic","modelId":"claude"}}"#
        ),
    ];
    let bulk = "y".repeat(1_000_000);
    let (mut size, mut parent, mut t) = (0u64, "m0".to_string(), 0u64);
    while size < mib * MIB {
        let msg = |id: &str, parent: &str, m: String| {
            format!(r#"{{"type":"message","id":"{id}","parentId":"{parent}",{ts},"message":{m}}}"#)
        };
        lines.extend([
            msg(&format!("u{t}"), &parent, format!(r#"{{"role":"user","content":"prompt {t}",{ms}}}"#)),
            msg(
                &format!("a{t}"),
                &format!("u{t}"),
                format!(
                    r#"{{"role":"assistant","content":[{{"type":"toolCall","id":"c{t}","name":"bash","arguments":{{"command":"ls"}}}}],"provider":"anthropic","model":"claude","stopReason":"toolUse",{ms}}}"#
                ),
            ),
            // The bulky result (`write_lines`).
            String::new(),
            msg(
                &format!("b{t}"),
                &format!("r{t}"),
                format!(
                    r#"{{"role":"assistant","content":[{{"type":"text","text":"done {t}"}}],"provider":"anthropic","model":"claude","stopReason":"stop",{ms}}}"#
                ),
            ),
        ]);
        parent = format!("b{t}");
        if t % 20 == 19 {
            lines.push(format!(
                r#"{{"type":"compaction","id":"k{t}","parentId":"b{t}",{ts},"summary":"summary {t}","firstKeptEntryId":"u{}","tokensBefore":1000}}"#,
                t - 2
            ));
            parent = format!("k{t}");
        }
        let head = format!(
            r#"{{"type":"message","id":"r{t}","parentId":"a{t}",{ts},"message":{{"role":"toolResult","toolCallId":"c{t}","toolName":"bash","content":[{{"type":"text","text":""#
        );
        let tail = format!(r#""}}],"isError":false,{ms}}}}}"#);
        size += write_lines(&mut f, &mut lines, (&head, &bulk, &tail));
        t += 1;
    }
    f.flush().unwrap();
    drop(f);
    settle(&path);
    (size, t)
}

/// Every `show` of a 100+ MB session holds the slim first pass, a line and the converted
/// entries, never the entries' bodies: the last round under 40 MiB (issue 11 asks 64; the
/// whole read took 115 MiB), and the whole transcript, its JSON, its window and its raw
/// records each under half the file (issue 11 asks 2x; the whole read took about 2.1x).
#[test]
fn pi_show_holds_a_line_not_the_session() {
    let h = Home::empty();
    let (size, _) = pi_session(&h.pi_dir(), 104);
    assert!(size > 100 * MIB);
    let r = format!("pi:{ID}");
    let variants: [(&[&str], u64); 6] = [
        (&["--last", "1"], 40 * MIB),
        (&["--last", "5"], 40 * MIB),
        (&[], size / 2),
        (&["--json"], size / 2),
        (&["--window"], size / 2),
        (&["--raw"], size / 2),
    ];
    for (v, bound) in variants {
        let mut args = vec!["show"];
        args.extend_from_slice(v);
        args.push(&r);
        assert_peak_under(&h, &args, bound, size);
    }
}

/// The browser's transcript, window and raw views of a 100+ MB session open at their end
/// holding a page: the last answer is on screen in each and the process stays under 64 MiB.
#[test]
fn browser_views_of_a_big_pi_session_hold_a_page() {
    let Some(t) = Tmux::new("pi-pages") else {
        return;
    };
    let (size, rounds) = pi_session(&t.home().join(".pi/agent/sessions"), 104);
    // No cache directory can be made, so no search index: this test is about the views.
    let blocked = t.dir.path().join("not-a-dir");
    std::fs::write(&blocked, "").unwrap();
    t.run_env(&format!("XDG_CACHE_HOME={}/cache", blocked.display()), "");
    t.wait_listed();
    let last = format!("done {}", rounds - 1);
    t.keys(&["Enter"]);
    t.wait_until("the transcript's end", |s| s.contains(&last));
    t.keys(&["v"]);
    t.wait_until("the window's end", |s| {
        s.contains("context window") && s.contains(&last)
    });
    t.keys(&["v"]);
    t.wait_until("the raw view's last record", |s| s.contains(&last));
    let rss = high_water(t.spool_pid());
    assert!(
        rss < 64 * MIB,
        "the views of a {} MiB session peaked at {} MiB",
        size / MIB,
        rss / MIB
    );
    t.keys(&["q"]);
}
