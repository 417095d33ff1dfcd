//! The README's Usage examples run as written against the demo store: each `spool ...` line
//! of its first `sh` block (commands split at `;`, comments dropped) runs with `--demo` and
//! must succeed. The browser (bare `spool`) needs a terminal and is left to the tmux tests.

use std::path::Path;
use std::process::Command;

/// The commands of the Usage section's first code block, each as argv without `spool`.
fn usage_examples() -> Vec<Vec<String>> {
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md"))
        .expect("README.md");
    let usage = &readme[readme.find("\n## Usage").expect("a Usage section")..];
    let block = usage
        .split("```sh\n")
        .nth(1)
        .and_then(|b| b.split("```").next())
        .expect("a sh block in Usage");
    let mut commands = Vec::new();
    for line in block.lines() {
        // Comments start at "  #" (no example has a '#' of its own).
        let code = line.split("  #").next().unwrap_or_default();
        for cmd in code.split(';') {
            let words = spool::resume::split_words(cmd).expect("shell words");
            if words.is_empty() {
                continue;
            }
            assert_eq!(words[0], "spool", "not a spool command: {line}");
            commands.push(words[1..].to_vec());
        }
    }
    commands
}

#[test]
fn every_usage_example_runs_against_the_demo() {
    let examples = usage_examples();
    assert!(examples.len() >= 15, "{examples:?}");
    let home = tempfile::tempdir().unwrap();
    for args in examples.iter().filter(|a| !a.is_empty()) {
        let out = Command::new(env!("CARGO_BIN_EXE_spool"))
            .arg("--demo")
            .args(args)
            .current_dir(home.path())
            .env("HOME", home.path())
            .env_remove("LOOP_DATA_DIR")
            .env("XDG_CONFIG_HOME", home.path().join(".config"))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "spool --demo {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // The export example wrote its file where it was run.
    assert!(home.path().join("session.html").is_file());
}
