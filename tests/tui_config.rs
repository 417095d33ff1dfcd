//! Config file errors name the line and the key; remaps reach the keymap.

use spool::config::Config;

#[test]
fn unknown_key_names_line_and_key() {
    let src = "theme = \"dark\"\n\n[filters]\narchived = true\ncolour = \"red\"\n";
    let e = Config::parse(src, "cfg.toml").unwrap_err().to_string();
    assert!(
        e.starts_with("config cfg.toml: line 5, key `colour`:"),
        "{e}"
    );
    assert!(e.contains("unknown field"), "{e}");
}

#[test]
fn wrong_type_names_line_and_key() {
    let e = Config::parse("sidebar_width = \"wide\"\n", "c")
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("config c: line 1, key `sidebar_width`:"),
        "{e}"
    );
}

#[test]
fn unknown_command_and_bad_key_in_keys_section() {
    let e = Config::parse("[keys]\nteleport = \"t\"\n", "c")
        .unwrap_err()
        .to_string();
    assert_eq!(
        e,
        "config c: line 2, key `teleport`: unknown command `teleport`"
    );
    let e = Config::parse("[keys]\n\npin = \"hyper-x\"\n", "c")
        .unwrap_err()
        .to_string();
    assert_eq!(
        e,
        "config c: line 3, key `pin`: bad key `hyper-x` for `pin`"
    );
}

#[test]
fn remap_conflict_is_an_error() {
    let e = Config::parse("[keys]\npin = \"q\"\n", "c")
        .unwrap_err()
        .to_string();
    assert_eq!(
        e,
        "config c: [keys]: key `q` is bound to both `quit` and `pin`"
    );
}

#[test]
fn bad_theme_and_store_values() {
    let e = Config::parse("theme = \"neon\"\n", "c")
        .unwrap_err()
        .to_string();
    assert_eq!(
        e,
        "config c: line 1, key `theme`: unknown theme `neon` (dark or light)"
    );
    let e = Config::parse("[filters]\nstore = \"git\"\n", "c")
        .unwrap_err()
        .to_string();
    assert_eq!(
        e,
        "config c: line 2, key `store`: unknown store `git` (loop, loom, harness, claude, codex or pi)"
    );
}

#[test]
fn file_on_disk_and_missing_file() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("config.toml");
    std::fs::write(&p, "[resume]\nharness = \"agent-harness --resume {id}\"\n").unwrap();
    let c = Config::load(Some(&p)).unwrap();
    assert_eq!(
        c.resume.for_store(spool::model::StoreKind::Harness),
        Some("agent-harness --resume {id}")
    );
    assert_eq!(c.path.as_deref(), Some(p.as_path()));
    // A file named explicitly must exist (only the default file is optional).
    assert!(Config::load(Some(&dir.path().join("nope.toml"))).is_err());
}
