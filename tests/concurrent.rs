//! Two spool processes changing one Loop session at once (issue 11.2): a `pin` and a `rename`
//! started together must both land, on a v3 session (`meta.json`) and on a legacy v2 file,
//! and an `archive` racing an `unarchive` of two sessions must both land in `archive.json`.

mod common;

use std::process::{Child, Stdio};

use common::{Home, json_lines};

const V3: &str = "loop:3f6b2c1e-8a4d-4e2f-9b7c-1d2e3f4a5b6c";
const V2: &str = "loop:e9d4a6b1-2f3c-4d5e-8a7b-6c5d4e3f2a1b";
const V3B: &str = "loop:b41e07d2-5c9a-4f13-a8e6-0f2d7c3b9e54";

fn spawn(h: &Home, args: &[&str]) -> Child {
    h.command(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn spool")
}

fn finish(c: Child) {
    let out = c.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "a concurrent write failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn row(h: &Home, reference: &str) -> serde_json::Value {
    json_lines(&h.ok(&["list", "--json", "--all"]))
        .into_iter()
        .find(|r| r["ref"] == reference)
        .unwrap_or_else(|| panic!("{reference} listed"))
}

/// Pin (or unpin) and rename at once, `trials` times; returns how many changes were lost.
fn lost_pin_or_title(h: &Home, reference: &str, trials: u32) -> u32 {
    let mut lost = 0;
    for n in 0..trials {
        let pin = n % 2 == 0;
        let title = format!("title {n}");
        let a = spawn(h, &[if pin { "pin" } else { "unpin" }, reference]);
        let b = spawn(h, &["rename", reference, &title]);
        finish(a);
        finish(b);
        let r = row(h, reference);
        if r["pinned"].as_bool() != Some(pin) || r["title"] != title.as_str() {
            lost += 1;
        }
    }
    lost
}

#[test]
fn pin_and_rename_at_once_both_land_on_v3_and_legacy() {
    let h = Home::with_fixtures();
    let v3 = lost_pin_or_title(&h, V3, 60);
    let v2 = lost_pin_or_title(&h, V2, 60);
    assert_eq!((v3, v2), (0, 0), "lost updates in 60 trials each (v3, v2)");
}

#[test]
fn two_archive_changes_at_once_both_land() {
    let h = Home::with_fixtures();
    let mut lost = 0;
    for n in 0..60 {
        let on = n % 2 == 0;
        let verb = if on { "archive" } else { "unarchive" };
        let a = spawn(&h, &[verb, V3]);
        let b = spawn(&h, &[verb, V3B]);
        finish(a);
        finish(b);
        if row(&h, V3)["archived"].as_bool() != Some(on)
            || row(&h, V3B)["archived"].as_bool() != Some(on)
        {
            lost += 1;
        }
    }
    assert_eq!(lost, 0, "lost archive.json updates in 60 trials");
}
