//! Hostile store layouts (issue 11.4): FIFOs, devices and unreadable directories where files
//! belong must give an error, a badge or an error row at once; never a hang, never an 8 GB
//! read, never a row that silently loses its state.

mod common;

use std::path::Path;
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

use common::Home;

const LOOM: &str = "20260314-091502";
const V3: &str = "3f6b2c1e-8a4d-4e2f-9b7c-1d2e3f4a5b6c";
const COL: &str = ".loop/sessions/767af75ec9c3c6ac7b4a00e5";
const HARNESS: &str = "Qm3xT8vLk2pR9aZc";

fn mkfifo(p: &Path) {
    let _ = std::fs::remove_file(p);
    let c = std::ffi::CString::new(p.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0, "mkfifo");
}

/// Run spool, killing it after 10 s: a hang is a failure, not a stuck test.
fn run_within(h: &Home, args: &[&str]) -> Output {
    let mut child = h
        .command(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(10) {
            let _ = child.kill();
            panic!("spool {args:?} hung");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

#[test]
fn a_sidecar_linked_to_dev_zero_is_a_badge_not_a_memory_blowup() {
    let h = Home::with_fixtures();
    let spool = h.loom_dir().join("sessions/.spool");
    std::fs::create_dir_all(&spool).unwrap();
    let side = spool.join(format!("{LOOM}.json"));
    let _ = std::fs::remove_file(&side);
    std::os::unix::fs::symlink("/dev/zero", &side).unwrap();
    let rows = h.stores().list_all();
    let r = rows
        .iter()
        .find(|r| r.id == LOOM.into())
        .expect("row listed");
    assert!(
        r.badges().any(|b| b.starts_with("spool state unreadable")),
        "{:?}",
        r.badges()
    );
    assert!(run_within(&h, &["list"]).status.success());
}

#[test]
fn fifos_where_files_belong_never_hang_a_command() {
    let cases: &[(String, &[&str])] = &[
        (format!(".loom/sessions/.spool/{LOOM}.json"), &["list"]),
        (format!(".loom/sessions/.spool/{LOOM}.json"), &["pin", LOOM]),
        (".loom/sessions/.spool/.lock".to_string(), &["pin", LOOM]),
        (format!("{COL}/{V3}/meta.json"), &["list"]),
        (format!("{COL}/{V3}/meta.json"), &["pin", V3]),
        (format!("{COL}/{V3}/messages.jsonl"), &["show", V3]),
        (format!("{COL}/{V3}/index.json"), &["show", V3]),
        (format!("{COL}/archive.json"), &["archive", V3]),
        (format!("{COL}/archive.json"), &["list"]),
        (
            format!(".agent-harness/memory/sessions/{HARNESS}.lock"),
            &["list"],
        ),
        (
            format!(".agent-harness/memory/sessions/{HARNESS}.lock"),
            &["archive", HARNESS],
        ),
        (
            format!(".agent-harness/memory/sessions/.spool/{HARNESS}.json"),
            &["list"],
        ),
        (
            format!(".agent-harness/memory/sessions/.spool/{HARNESS}.json"),
            &["pin", HARNESS],
        ),
    ];
    for (rel, args) in cases {
        let h = Home::with_fixtures();
        let p = h.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        mkfifo(&p);
        let _ = run_within(&h, args);
    }
}

#[test]
fn a_fifo_as_the_config_is_an_error_not_a_hang() {
    let h = Home::with_fixtures();
    let cfg = h.path().join("config.toml");
    mkfifo(&cfg);
    let out = run_within(&h, &["--config", cfg.to_str().unwrap(), "list"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("FIFO"));
}

#[test]
fn an_unreadable_collection_is_an_error_row() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        eprintln!("skipped: root reads a chmod-000 directory anyway");
        return;
    }
    use std::os::unix::fs::PermissionsExt;
    let h = Home::with_fixtures();
    let col = h.path().join(COL);
    std::fs::set_permissions(&col, std::fs::Permissions::from_mode(0o000)).unwrap();
    let rows = h.stores().list_all();
    std::fs::set_permissions(&col, std::fs::Permissions::from_mode(0o700)).unwrap();
    assert!(
        rows.iter().any(|r| r
            .error()
            .is_some_and(|e| e.contains("cannot read directory"))),
        "{rows:?}"
    );
}

#[test]
fn export_refuses_every_target_inside_a_store() {
    let h = Home::with_fixtures();
    let link = h.path().join("elsewhere");
    std::os::unix::fs::symlink(h.loom_dir().join("sessions"), &link).unwrap();
    let targets = [
        h.loom_dir().join("sessions/20990101-000000.jsonl"),
        h.loop_dir()
            .join("sessions/767af75ec9c3c6ac7b4a00e5/x.jsonl"),
        h.harness_dir().join("sessions/Zz9.json"),
        link.join("20990101-000001.jsonl"),
        h.loom_dir()
            .join("sessions/../sessions/20990101-000002.jsonl"),
    ];
    for t in &targets {
        let out = run_within(
            &h,
            &["export", HARNESS, "--to", "json", "-o", t.to_str().unwrap()],
        );
        assert!(!out.status.success(), "{} accepted", t.display());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("inside the session store"), "{err}");
        assert!(
            std::fs::symlink_metadata(t).is_err(),
            "{} written",
            t.display()
        );
    }
    let ok = h.path().join("out.json");
    assert!(
        run_within(
            &h,
            &[
                "export",
                HARNESS,
                "--to",
                "json",
                "-o",
                ok.to_str().unwrap()
            ]
        )
        .status
        .success()
    );
}

#[test]
fn an_option_like_loom_id_never_reaches_the_agent() {
    let h = Home::with_fixtures();
    let s = h.loom_dir().join("sessions");
    std::fs::copy(s.join(format!("{LOOM}.jsonl")), s.join("-rf.jsonl")).unwrap();
    let cfg = h.path().join("c.toml");
    std::fs::write(&cfg, "[resume]\nloom = \"loom --resume {id}\"\n").unwrap();
    let cfg = cfg.to_str().unwrap();
    let out = run_within(&h, &["--config", cfg, "resume", "loom:-rf", "--print"]);
    assert!(!out.status.success());
    assert!(
        out.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let ok = run_within(
        &h,
        &[
            "--config",
            cfg,
            "resume",
            &format!("loom:{LOOM}"),
            "--print",
        ],
    );
    assert!(String::from_utf8_lossy(&ok.stdout).contains(&format!("loom --resume {LOOM}")));
}

#[test]
fn a_sessions_directory_that_cannot_be_listed_is_an_error_row() {
    // Runs as root too: a file where `sessions/` belongs cannot be listed by anyone.
    let h = Home::with_fixtures();
    for dir in [h.loom_dir(), h.harness_dir()] {
        let s = dir.join("sessions");
        std::fs::remove_dir_all(&s).unwrap();
        std::fs::write(&s, b"not a directory").unwrap();
    }
    let rows = h.stores().list_all();
    for kind in ["loom", "harness"] {
        assert!(
            rows.iter().any(|r| r.store.as_str() == kind
                && r.error()
                    .is_some_and(|e| e.contains("cannot read directory"))),
            "{kind}: {rows:?}"
        );
    }
}
