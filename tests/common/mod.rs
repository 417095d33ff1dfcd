//! Shared helpers for the integration tests: a fixture HOME with the three stores at their
//! default locations, and running the built `spool` binary against it.

#![allow(dead_code)]

pub mod catalog_rows;
pub mod counting;
pub mod rollouts;
pub mod rss;
pub mod search;
pub mod tmux;
pub mod transcripts;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A temporary HOME holding copies of the contract example fixtures at the default roots:
/// `~/.loop`, `~/.loom`, `~/.agent-harness/memory`.
pub struct Home {
    pub dir: tempfile::TempDir,
}

/// The store of `kind` among `stores` (every kind is configured in a test HOME).
pub fn store_of(
    stores: &spool::store::Stores,
    kind: spool::model::StoreKind,
) -> &dyn spool::store::Store {
    (stores.stores.iter())
        .find(|s| s.kind() == kind)
        .unwrap()
        .as_ref()
}

impl Home {
    /// An empty HOME.
    pub fn empty() -> Home {
        Home {
            dir: tempfile::tempdir().expect("tempdir"),
        }
    }

    /// A HOME with every store's contract fixtures copied in.
    pub fn with_fixtures() -> Home {
        let h = Home::empty();
        install_fixtures(h.path());
        h
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }
    pub fn loop_dir(&self) -> PathBuf {
        self.path().join(".loop")
    }
    pub fn loom_dir(&self) -> PathBuf {
        self.path().join(".loom")
    }
    /// The stores of this HOME, at their default roots.
    pub fn stores(&self) -> spool::store::Stores {
        spool::store::Stores::open(&spool::store::Roots {
            loop_dir: self.loop_dir(),
            loom_dir: self.loom_dir(),
            harness_dir: self.harness_dir(),
            claude_dir: self.claude_dir(),
            codex_dir: self.codex_dir(),
            pi_dir: self.pi_dir(),
            state_dir: self.state_dir(),
        })
    }

    /// pi's default session root, `~/.pi/agent/sessions` (read-only).
    pub fn pi_dir(&self) -> PathBuf {
        self.path().join(".pi/agent/sessions")
    }

    /// `~/.claude` (Claude Code, read-only).
    pub fn claude_dir(&self) -> PathBuf {
        self.path().join(".claude")
    }

    /// `~/.codex` (Codex CLI, read-only).
    pub fn codex_dir(&self) -> PathBuf {
        self.path().join(".codex")
    }

    /// spool's state for the read-only stores (`$XDG_DATA_HOME` is unset in tests).
    pub fn state_dir(&self) -> PathBuf {
        self.path().join(".local/share/spool/state")
    }

    pub fn harness_dir(&self) -> PathBuf {
        self.path().join(".agent-harness/memory")
    }

    /// `spool args...` with HOME (and the config and cache directories) here and no other
    /// store variables, for tests that spawn it themselves.
    pub fn command(&self, args: &[&str]) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_spool"));
        c.args(args)
            .env("HOME", self.path())
            .env_remove("LOOP_DATA_DIR")
            .env("XDG_CONFIG_HOME", self.path().join(".config"))
            .env("XDG_CACHE_HOME", self.path().join(".cache"));
        c
    }

    /// `spool args...` with HOME here and none of the stores' own variables set.
    fn isolated(&self, args: &[&str]) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_spool"));
        c.args(args)
            .env("HOME", self.path())
            .env_remove("LOOP_DATA_DIR")
            .env_remove("CLAUDE_CONFIG_DIR")
            .env_remove("CODEX_HOME")
            .env_remove("CODEX_SQLITE_HOME")
            .env_remove("PI_CODING_AGENT_DIR")
            .env_remove("PI_CODING_AGENT_SESSION_DIR")
            .env_remove("XDG_DATA_HOME")
            .env("XDG_CONFIG_HOME", self.path().join(".config"));
        c
    }

    /// Run `spool args...` with HOME here and no other store variables.
    pub fn run(&self, args: &[&str]) -> Output {
        self.isolated(args).output().expect("run spool")
    }

    /// Run `spool args...` as `run` does, with `bin` first on PATH (fake agents).
    pub fn run_with_path(&self, bin: &Path, args: &[&str]) -> Output {
        let path = format!(
            "{}:{}",
            bin.display(),
            std::env::var("PATH").unwrap_or_default()
        );
        self.isolated(args)
            .env("PATH", path)
            .output()
            .expect("run spool")
    }

    /// Run and expect success; returns stdout with the HOME path replaced by `~`.
    pub fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert!(
            out.status.success(),
            "spool {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        self.tidy(&String::from_utf8(out.stdout).expect("utf-8 stdout"))
    }

    /// Replace the temporary HOME path with `~` so outputs are stable.
    pub fn tidy(&self, s: &str) -> String {
        s.replace(&self.path().to_string_lossy().into_owned(), "~")
    }
}

/// Copy every store's contract fixtures into `home` at the default store roots.
pub fn install_fixtures(home: &Path) {
    let fx = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    for (store, root) in [
        ("loop", ".loop"),
        ("loom", ".loom"),
        ("harness", ".agent-harness/memory"),
    ] {
        let src = fx.join(store).join("sessions");
        if src.is_dir() {
            copy_tree(&src, &home.join(root).join("sessions"));
        }
    }
}

/// Copy the Claude Code contract fixtures (`tests/fixtures/claude/projects/`) into
/// `home/.claude/projects`. Kept apart from `install_fixtures` so the first stores' listings
/// are unchanged.
pub fn install_claude_fixtures(home: &Path) {
    install_settled("claude/projects", &home.join(".claude/projects"));
}

/// Copy the Codex contract fixtures (`tests/fixtures/codex/`) into `home/.codex`.
pub fn install_codex_fixtures(home: &Path) {
    install_settled("codex", &home.join(".codex"));
}

/// Copy `tests/fixtures/<fixture>` to `dst` with settled files (2026-03-16): a torn last line
/// is "truncated", not still being written.
fn install_settled(fixture: &str, dst: &Path) {
    let fx = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(fixture);
    copy_tree(&fx, dst);
    let t = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_773_619_200);
    for f in files_under(dst) {
        let file = std::fs::File::options().write(true).open(&f).expect("open");
        file.set_modified(t).expect("set mtime");
    }
}

/// Copy the pi contract fixtures (`tests/fixtures/pi/sessions/`) into
/// `home/.pi/agent/sessions`, the fork's `parentSession` pointed at the copy of its parent,
/// every file settled (a torn last line is "truncated", not still being written).
pub fn install_pi_fixtures(home: &Path) {
    let fx = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/pi/sessions");
    let dst = home.join(".pi/agent/sessions");
    copy_tree(&fx, &dst);
    let t = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_773_619_200);
    for f in files_under(&dst) {
        let text = std::fs::read_to_string(&f).expect("read fixture");
        let moved = format!("{}/", dst.display());
        std::fs::write(&f, text.replace("/home/user/.pi/agent/sessions/", &moved)).expect("write");
        let file = std::fs::File::options().write(true).open(&f).expect("open");
        file.set_modified(t).expect("set mtime");
    }
}

/// size, mtime (ns) and SHA-256 of every file under `dir`, and each directory's mtime: what
/// the no-write proofs compare before and after.
pub fn fingerprint(dir: &Path) -> std::collections::BTreeMap<PathBuf, (u64, i128, Vec<u8>)> {
    use sha2::{Digest, Sha256};
    use std::os::unix::fs::MetadataExt;
    let ns = |m: &std::fs::Metadata| m.mtime() as i128 * 1_000_000_000 + m.mtime_nsec() as i128;
    let mut out = std::collections::BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let m = std::fs::symlink_metadata(&d).expect("stat");
        out.insert(d.clone(), (0, ns(&m), Vec::new()));
        for e in std::fs::read_dir(&d).expect("list").flatten() {
            let p = e.path();
            let m = std::fs::symlink_metadata(&p).expect("stat");
            if m.is_dir() {
                stack.push(p);
            } else {
                let hash = Sha256::digest(std::fs::read(&p).expect("read")).to_vec();
                out.insert(p, (m.len(), ns(&m), hash));
            }
        }
    }
    out
}

/// A fake agent `name` in `home/bin` that writes its working directory and its argv, one a
/// line, to `home/<name>.log`: `(bin dir, log)`.
pub fn fake_agent(home: &Path, name: &str) -> (PathBuf, PathBuf) {
    let bin = home.join("bin");
    std::fs::create_dir_all(&bin).expect("mkdir bin");
    let log = home.join(format!("{name}.log"));
    let script = format!(
        "#!/bin/sh\nprintf '%s\\n' \"$PWD\" \"$@\" > '{}'\n",
        log.display()
    );
    let fake = bin.join(name);
    std::fs::write(&fake, script).expect("write fake agent");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    (bin, log)
}

/// Every CLI subcommand (list, show in every view, export in every format into `out_dir`,
/// search, pin, read, archive, rename, fork, delete, undelete, resume) on sessions `a` and
/// `b` of store `format` and on `live` (whose cwd exists, so resume and fork run the agent).
pub fn every_subcommand(format: &str, [a, b, live]: [&str; 3], out_dir: &Path) -> Vec<Vec<String>> {
    let file = |n: &str| out_dir.join(n).to_string_lossy().into_owned();
    let (md, html, json) = (file("a.md"), file("a.html"), file("a.json"));
    let runs: Vec<Vec<&str>> = vec![
        vec!["list"],
        vec!["list", "--json", "--all"],
        vec!["list", "--archived"],
        vec!["list", "--query", "router", "--format", format],
        vec!["show", a],
        vec!["show", b, "--json"],
        vec!["show", b, "--window"],
        vec!["show", b, "--raw"],
        vec!["show", a, "--last", "1"],
        vec!["export", a],
        vec!["export", a, "--to", "markdown", "-o", &md],
        vec!["export", b, "--to", "html", "-o", &html],
        vec!["export", b, "--to", "json", "-o", &json],
        vec!["search", "router"],
        vec!["pin", a],
        vec!["unpin", a],
        vec!["read", b],
        vec!["unread", b],
        vec!["archive", b],
        vec!["unarchive", b],
        vec!["rename", a, "spool title"],
        vec!["fork", a, "--print"],
        vec!["fork", live],
        vec!["delete", a, "--yes"],
        vec!["delete", b],
        vec!["undelete", a],
        vec!["resume", a, "--print"],
        vec!["resume", live],
    ];
    runs.into_iter()
        .map(|r| r.into_iter().map(String::from).collect())
        .collect()
}

/// Every browser operation on each of `refs` through the store side the browser uses (the
/// pane's three views, pin, read, archive twice each, rename, fork whole and cut, delete and
/// undo, an HTML export into `out_dir`); results are ignored, the no-write proofs compare
/// the agents' directories around it.
pub fn every_store_action(st: &spool::store::Stores, refs: &[&str], out_dir: &Path) {
    use spool::app::{OpInput, SessionOp};
    use spool::browser::perform;
    use spool::store::Span;
    for &r in refs {
        let s = st.resolve(r).unwrap();
        let store = st.store_for(&s);
        store.transcript(&s.id, Span::All).unwrap();
        store.transcript(&s.id, Span::LastRounds(1)).unwrap();
        store.window(&s.id).unwrap();
        store.raw(&s.id).unwrap();
        let ops = [
            (SessionOp::TogglePin, OpInput::None),
            (SessionOp::TogglePin, OpInput::None),
            (SessionOp::ToggleUnread, OpInput::None),
            (SessionOp::ToggleUnread, OpInput::None),
            (SessionOp::ToggleArchive, OpInput::None),
            (SessionOp::ToggleArchive, OpInput::None),
            (SessionOp::Rename, OpInput::Title("browser title".into())),
            (SessionOp::Fork, OpInput::ForkAt(None)),
            (SessionOp::Fork, OpInput::ForkAt(Some(1))),
            (SessionOp::Delete, OpInput::None),
            (SessionOp::UndoDelete, OpInput::None),
            (
                SessionOp::Export,
                OpInput::Export {
                    format: spool::export::Format::Html,
                    path: out_dir.join(format!("{}.html", s.id)),
                },
            ),
        ];
        for (op, input) in ops {
            let s = st.resolve(r).unwrap();
            let _ = perform(op, &s, input, st);
        }
        let _ = st.store_for(&s).in_use(&s.id);
        st.store_for(&s).tidy();
    }
}

/// Copy a directory tree (files and directories; symlinks are skipped).
pub fn copy_tree(src: &Path, dst: &Path) {
    std::fs::create_dir_all(dst).expect("mkdir");
    for e in std::fs::read_dir(src).expect("read_dir").flatten() {
        let ft = e.file_type().expect("file type");
        let to = dst.join(e.file_name());
        if ft.is_dir() {
            copy_tree(&e.path(), &to);
        } else if ft.is_file() {
            std::fs::copy(e.path(), &to).expect("copy");
        }
    }
}

/// Every regular file below `dir` (symlinks skipped).
pub fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let Ok(ft) = e.file_type() else { continue };
        if ft.is_dir() {
            out.extend(files_under(&e.path()));
        } else if ft.is_file() {
            out.push(e.path());
        }
    }
    out
}

/// Parse JSON Lines output.
pub fn json_lines(s: &str) -> Vec<serde_json::Value> {
    s.lines()
        .map(|l| serde_json::from_str(l).expect("JSON line"))
        .collect()
}
