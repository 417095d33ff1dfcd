//! Shared helpers for the integration tests: a fixture HOME with the three stores at their
//! default locations, and running the built `spool` binary against it.

#![allow(dead_code)]

pub mod tmux;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A temporary HOME holding copies of the contract example fixtures at the default roots:
/// `~/.loop`, `~/.loom`, `~/.agent-harness/memory`.
pub struct Home {
    pub dir: tempfile::TempDir,
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
            state_dir: self.state_dir(),
        })
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

    /// Run `spool args...` with HOME here and no other store variables.
    pub fn run(&self, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_spool"))
            .args(args)
            .env("HOME", self.path())
            .env_remove("LOOP_DATA_DIR")
            .env_remove("CLAUDE_CONFIG_DIR")
            .env_remove("CODEX_HOME")
            .env_remove("CODEX_SQLITE_HOME")
            .env_remove("XDG_DATA_HOME")
            .env("XDG_CONFIG_HOME", self.path().join(".config"))
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

/// size, mtime (ns) and SHA-256 of every file under `dir`, and the directories' mtimes: what
/// the no-write proofs compare before and after.
pub fn fingerprint(dir: &Path) -> std::collections::BTreeMap<PathBuf, (u64, i128, Vec<u8>)> {
    use sha2::Digest;
    use std::os::unix::fs::MetadataExt;
    let ns = |m: &std::fs::Metadata| m.mtime() as i128 * 1_000_000_000 + m.mtime_nsec() as i128;
    let mut out = std::collections::BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let m = std::fs::symlink_metadata(&d).unwrap();
        out.insert(d.clone(), (0, ns(&m), Vec::new()));
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            let m = std::fs::symlink_metadata(&p).unwrap();
            if m.is_dir() {
                stack.push(p);
            } else {
                let hash = sha2::Sha256::digest(std::fs::read(&p).unwrap()).to_vec();
                out.insert(p, (m.len(), ns(&m), hash));
            }
        }
    }
    out
}

/// Every browser-side operation on each of `refs`: the pane's views and every session op,
/// exports written to `out_dir`. Errors are expected (read-only stores refuse some).
pub fn exercise_store_side(st: &spool::store::Stores, refs: &[&str], out_dir: &Path) {
    use spool::app::{OpInput, SessionOp};
    use spool::store::Span;
    for r in refs {
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
            let _ = spool::browser::perform(op, &s, input, st);
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
