//! Memory follows what is shown for Codex CLI rollouts (issues 9 and 11): a generated
//! rollout of 100+ MB whose tool outputs are 1 MB each, with compactions. Peak RSS of the
//! built binary, read from the kernel for that one child (`wait4`'s rusage). Not timed: a
//! bound on bytes.

mod common;

use std::io::Write;

use common::Home;

use common::rss::{MIB, assert_peak_under, settle, write_lines};
const ID: &str = "019cf333-0000-7000-8000-0000000000f1";

/// A rollout of about `mib` MiB: turns of a prompt, a call whose output is `out` bytes, an
/// answer, and a compaction every 20 turns. Returns its path and size.
fn codex_rollout(h: &Home, mib: u64, out: usize) -> (std::path::PathBuf, u64) {
    let dir = h.codex_dir().join("sessions/2026/03/15");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("rollout-2026-03-15T09-00-00-{ID}.jsonl"));
    let mut f = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    let ts = "2026-03-15T08:00:00Z";
    let bulk = "y".repeat(out);
    let mut size = 0u64;
    // Written in Codex's key order (serde_json's map sorts keys): the listing classifies a
    // bulky line from its first bytes.
    let env = |kind: &str, pl: String| {
        format!(r#"{{"timestamp":"{ts}","type":"{kind}","payload":{pl}}}"#)
    };
    let mut lines = vec![env(
        "session_meta",
        format!(r#"{{"id":"{ID}","timestamp":"{ts}","cwd":"/w","source":"cli"}}"#),
    )];
    let mut t = 0;
    while size < mib * MIB {
        lines.extend([
            env("turn_context", format!(r#"{{"turn_id":"t{t}","model":"gpt-5"}}"#)),
            env("event_msg", format!(r#"{{"type":"user_message","message":"prompt {t}"}}"#)),
            env(
                "response_item",
                format!(r#"{{"type":"function_call","name":"shell","call_id":"c{t}","arguments":"{{}}"}}"#),
            ),
            // The bulky output (`write_lines`).
            String::new(),
            env(
                "response_item",
                format!(
                    r#"{{"type":"message","role":"assistant","content":[{{"type":"output_text","text":"done {t}"}}]}}"#
                ),
            ),
        ]);
        if t % 20 == 19 {
            lines.push(env("compacted", format!(r#"{{"message":"summary {t}"}}"#)));
        }
        let head = format!(
            r#"{{"timestamp":"{ts}","type":"response_item","payload":{{"type":"function_call_output","call_id":"c{t}","output":""#
        );
        size += write_lines(&mut f, &mut lines, (&head, &bulk, "\"}}"));
        t += 1;
    }
    f.flush().unwrap();
    drop(f);
    settle(&path);
    (path, size)
}

/// Every `show` of a 100+ MB rollout holds a line and the converted entries, never the
/// records: the last round under 40 MiB (issue 11 asks 64; the whole read took about 3x the
/// file), and the whole transcript, its JSON, its window and its raw records each under half
/// the file (issue 11 asks 2x), plain and compressed.
#[test]
fn codex_show_holds_a_line_not_the_rollout() {
    let h = Home::empty();
    let (path, size) = codex_rollout(&h, 104, 1_000_000);
    assert!(size > 100 * MIB);
    let r = format!("codex:{ID}");
    let all: [&[&str]; 4] = [&[], &["--json"], &["--window"], &["--raw"]];
    assert_peak_under(&h, &["show", "--last", "1", &r], 40 * MIB, size);
    for v in all {
        let mut args = vec!["show"];
        args.extend_from_slice(v);
        args.push(&r);
        assert_peak_under(&h, &args, size / 2, size);
    }
    // Compressed: no reading from the end, the passes decode the stream each time.
    // Compressed as a stream: a spawned child inherits this process's peak RSS.
    let zst = std::fs::File::create(format!("{}.zst", path.display())).unwrap();
    zstd::stream::copy_encode(std::fs::File::open(&path).unwrap(), zst, 1).unwrap();
    std::fs::remove_file(&path).unwrap();
    assert_peak_under(&h, &["show", "--last", "1", &r], 40 * MIB, size);
    for v in all {
        let mut args = vec!["show"];
        args.extend_from_slice(v);
        args.push(&r);
        assert_peak_under(&h, &args, size / 2, size);
    }
}
