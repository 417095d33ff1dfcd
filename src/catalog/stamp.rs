//! The key a cached row is valid for: one 64-bit digest of (dev, inode, size, mtime, ctime,
//! mode) of every file the row was derived from (`Store::summary_inputs`), a missing file
//! counted as missing. Any change to any input (an append, a rewrite, a rename over it, an
//! mtime set backwards, a chmod) changes the digest; equality, never ordering, is compared.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// Mixes one word into the digest (splitmix64's finaliser: every input bit moves every
/// output bit, and the digest does not depend on the Rust version, unlike `DefaultHasher`).
fn mix(h: u64, v: u64) -> u64 {
    let mut z = (h ^ v).wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The digest of one file's metadata (`lstat`: a symlink is keyed as itself, never followed).
fn stamp(h: u64, p: &Path) -> u64 {
    match std::fs::symlink_metadata(p) {
        Ok(m) => of(h, &m),
        Err(_) => mix(h, 0),
    }
}

/// The fields of one `lstat` a key is made of: (dev, inode, size, mtime, ctime, mode).
/// Discovery keeps the one it takes of a session's own path (`Candidate::stat`), so the
/// pass does not `lstat` that path a second time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stat([u64; 8]);

impl Stat {
    pub fn of(m: &std::fs::Metadata) -> Stat {
        Stat([
            m.dev(),
            m.ino(),
            m.size(),
            m.mtime() as u64,
            m.mtime_nsec() as u64,
            m.ctime() as u64,
            m.ctime_nsec() as u64,
            u64::from(m.mode()),
        ])
    }

    /// The same fields from another call (`at::Dirs::lstat`), in `of`'s order.
    pub fn from_fields(f: [u64; 8]) -> Stat {
        Stat(f)
    }

    /// The modification time, as `Metadata::modified` gives it for the same call.
    pub fn mtime(&self) -> Option<std::time::SystemTime> {
        use std::time::{Duration, UNIX_EPOCH};
        let (secs, nanos) = (self.0[3] as i64, Duration::from_nanos(self.0[4]));
        if secs >= 0 {
            UNIX_EPOCH.checked_add(Duration::from_secs(secs as u64) + nanos)
        } else {
            (UNIX_EPOCH.checked_sub(Duration::from_secs(secs.unsigned_abs())))
                .and_then(|t| t.checked_add(nanos))
        }
    }
}

/// `h` with one present file's metadata mixed in.
fn of(h: u64, m: &std::fs::Metadata) -> u64 {
    with(h, &Stat::of(m))
}

fn with(h: u64, s: &Stat) -> u64 {
    s.0.into_iter().fold(mix(h, 1), mix)
}

/// The key of a row derived from `inputs` (in the order the store names them).
pub fn key(inputs: &[PathBuf]) -> u64 {
    inputs
        .iter()
        .fold(mix(0, inputs.len() as u64), |h, p| stamp(h, p))
}

/// What one stat pass has already learnt, so the key of each session costs fewer syscalls
/// (a Loop session's six inputs took six `lstat`s; most are now one per session file):
/// - the store's state directory is listed once, and a state file it does not hold counts as
///   missing without an `lstat` (almost every session has none);
/// - an input outside the session's own path (a collection's `archive.json`, Claude's
///   `settings.json`) is stamped once per pass, not once per session.
///
/// - a file at or below the session's own path is looked up from an open handle on the
///   directory holding that path (`at`), not from `/`.
///
/// Each is what an `lstat` at the moment of the listing would have said; a change after it
/// is caught by the next pass exactly as a change right after an `lstat` is.
pub struct Memo {
    state_dir: Option<PathBuf>,
    /// The state directory's names (`None`: not listed yet; `Some(None)`: cannot be listed,
    /// so every state file is stamped by `lstat`).
    listed: Option<Option<rustc_hash::FxHashSet<std::ffi::OsString>>>,
    /// Inputs outside the session's own path, by their bytes (FxHash: SipHash over a
    /// `Path` hashes it component by component, and the lookup cloned the path; both were
    /// paid once per Loop session for its collection's `archive.json`).
    shared: rustc_hash::FxHashMap<Box<[u8]>, Option<Stat>>,
    dirs: super::at::Dirs,
}

impl Memo {
    /// A memo for one pass over a store whose state files live in `state_dir`.
    pub fn new(state_dir: Option<PathBuf>) -> Memo {
        Memo {
            state_dir,
            listed: None,
            shared: rustc_hash::FxHashMap::default(),
            dirs: super::at::Dirs::default(),
        }
    }

    /// `key(inputs)`, with what the memo knows: the same digest for the same files. `seen`
    /// is discovery's `lstat` of `path` (the candidate's own path), used for that input.
    /// Inputs at or below `path` are looked up from the directory holding `path` (a Loop
    /// session's `meta.json` as `<id>/meta.json` from its collection).
    pub fn key(&mut self, inputs: &[PathBuf], path: &Path, seen: Option<&Stat>) -> u64 {
        self.key_with(inputs, path, seen, None)
    }

    /// `key`, with `first` the `lstat` of `inputs[0]` that the store took as it named it
    /// (`Store::summary_inputs_stated`), used for that input instead of another.
    pub fn key_with(
        &mut self,
        inputs: &[PathBuf],
        path: &Path,
        seen: Option<&Stat>,
        first: Option<&Stat>,
    ) -> u64 {
        let mut h = mix(0, inputs.len() as u64);
        for (i, p) in inputs.iter().enumerate() {
            h = if let Some(s) = seen.filter(|_| p.as_os_str() == path.as_os_str()) {
                with(h, s)
            } else if let Some(s) = first.filter(|_| i == 0) {
                with(h, s)
            } else if self.in_state_dir(p) {
                if self.absent(p) {
                    mix(h, 0)
                } else {
                    self.in_state(h, p)
                }
            } else if within(p, path) || in_sibling_dir(p, path) {
                self.near(h, p, path)
            } else {
                match self.shared_stat(p) {
                    Some(s) => with(h, &s),
                    None => mix(h, 0),
                }
            };
        }
        h
    }

    /// `stamp(h, p)` for `p` at or below `first`, looked up from the directory holding
    /// `first` (any failure there falls back to the path's own `lstat`).
    fn near(&mut self, h: u64, p: &Path, first: &Path) -> u64 {
        match super::at::split(p, first).and_then(|(dir, rel)| self.dirs.lstat(dir, rel)) {
            Some(s) => with(h, &s),
            None => stamp(h, p),
        }
    }

    /// The `lstat` of `p`, an input outside the session's own path, taken once per pass.
    fn shared_stat(&mut self, p: &Path) -> Option<Stat> {
        use std::os::unix::ffi::OsStrExt;
        let bytes = p.as_os_str().as_bytes();
        if let Some(s) = self.shared.get(bytes) {
            return *s;
        }
        let s = std::fs::symlink_metadata(p).ok().map(|m| Stat::of(&m));
        self.shared.insert(bytes.into(), s);
        s
    }

    /// `stamp(h, p)` for `p` directly in the state directory, looked up by its name from an
    /// open handle on that directory: from `/` the walk passed every directory above it
    /// (and any symlink there) for each of the few sessions with a state file (issue 10: at
    /// 100k, about one `statx` in twelve of a warm `spool list`). Any failure falls back to
    /// the path's own `lstat`, so an error never reads as a different file.
    fn in_state(&mut self, h: u64, p: &Path) -> u64 {
        use std::os::unix::ffi::OsStrExt;
        let (Some(dir), Some(name)) = (self.state_dir.as_deref(), p.file_name()) else {
            return stamp(h, p);
        };
        match self.dirs.lstat(dir.as_os_str().as_bytes(), name.as_bytes()) {
            Some(s) => with(h, &s),
            None => stamp(h, p),
        }
    }

    /// Whether `p` is a file directly in the state directory (by bytes; a miss only costs
    /// an `lstat`, but a hit must be exact: `absent` trusts the listing for it).
    fn in_state_dir(&self, p: &Path) -> bool {
        use std::os::unix::ffi::OsStrExt;
        let Some(d) = self.state_dir.as_deref() else {
            return false;
        };
        p.as_os_str()
            .as_bytes()
            .strip_prefix(d.as_os_str().as_bytes())
            .and_then(|rest| rest.strip_prefix(b"/"))
            .is_some_and(|name| !name.is_empty() && !name.contains(&b'/'))
    }

    /// Whether the state directory's listing proves `p` missing.
    fn absent(&mut self, p: &Path) -> bool {
        let dir = self.state_dir.as_deref();
        let listed = self.listed.get_or_insert_with(|| {
            let rd = match std::fs::read_dir(dir?) {
                Ok(rd) => rd,
                // No directory: nothing in it, as an `lstat` of each file would say.
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    return Some(Default::default());
                }
                Err(_) => return None,
            };
            rd.map(|e| e.map(|e| e.file_name()))
                .collect::<Result<_, _>>()
                .ok()
        });
        match (listed, p.file_name()) {
            (Some(names), Some(n)) => !names.contains(n),
            _ => false,
        }
    }
}

/// Whether `p` is `dir` or below it, by bytes: a prefix that ends at a separator. The
/// component-wise `Path::starts_with` and `parent` were a twentieth of a warm `spool list`
/// at 100k. Both paths come from `join`, so a path this misses (`a//b`, `a/./b`) only loses
/// the memo's shortcut (it is stamped by its own `lstat`), never its right key.
fn within(p: &Path, dir: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let (p, d) = (p.as_os_str().as_bytes(), dir.as_os_str().as_bytes());
    p.starts_with(d) && (p.len() == d.len() || p[d.len()] == b'/' || d.ends_with(b"/"))
}

/// Whether `p` lies inside a directory beside `path` (`<dir>/<name>/…`): Claude's
/// `<id>/subagents` beside `<id>.jsonl`, one a session, looked up from `path`'s directory
/// rather than from `/` (1,458 walks of nine components at 10k Claude sessions, a tenth of
/// a warm `spool list`'s `statx` time). A file directly beside `path` is not: one shared by
/// the store's sessions (a collection's `archive.json`) is stamped once per pass instead.
fn in_sibling_dir(p: &Path, path: &Path) -> bool {
    super::at::split(p, path).is_some_and(|(_, rel)| rel.contains(&b'/'))
}

/// Seconds since the epoch (what `Meta::expires` holds).
pub fn unix_secs(t: std::time::SystemTime) -> i64 {
    match t.duration_since(std::time::UNIX_EPOCH) {
        Ok(d) => d.as_secs() as i64,
        Err(e) => -(e.duration().as_secs() as i64),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_prefixes_end_at_a_separator_and_state_files_are_direct_children() {
        let p = Path::new;
        assert!(within(p("/a/b"), p("/a/b")));
        assert!(within(p("/a/b/c"), p("/a/b")));
        assert!(within(p("/a/b/c"), p("/a/b/")));
        assert!(!within(p("/a/bc"), p("/a/b")));
        assert!(!within(p("/a"), p("/a/b")));
        let m = Memo::new(Some(PathBuf::from("/s/.spool")));
        assert!(m.in_state_dir(p("/s/.spool/x.json")));
        for miss in [
            "/s/.spool",
            "/s/.spool/",
            "/s/.spool/d/x.json",
            "/s/.spoolx/a",
            "/t/a",
        ] {
            assert!(!m.in_state_dir(p(miss)), "{miss}");
        }
        assert!(!Memo::new(None).in_state_dir(p("/s/.spool/x.json")));
    }

    #[test]
    fn one_memo_sees_every_change_to_a_state_file_looked_up_from_its_directory() {
        let t = tempfile::tempdir().unwrap();
        // The state directory is reached through a symlink, as a store given by one is.
        let real = t.path().join("real");
        std::fs::create_dir_all(real.join("sessions/.spool")).unwrap();
        std::os::unix::fs::symlink(&real, t.path().join("link")).unwrap();
        let (session, state) = (
            t.path().join("link/sessions/s.jsonl"),
            t.path().join("link/sessions/.spool"),
        );
        std::fs::write(&session, b"{}").unwrap();
        let file = state.join("s.json");
        std::fs::write(&file, b"{}").unwrap();
        let inputs = [session.clone(), file.clone()];
        // One memo for the whole test: its open state directory must never stand in for a
        // stat, and its listing (taken once) must not hide a state file's changes.
        let mut memo = Memo::new(Some(state.clone()));
        let mut last = memo.key(&inputs, &session, None);
        assert_eq!(last, key(&inputs));
        let steps: [&dyn Fn(); 5] = [
            &|| {
                use std::io::Write;
                let mut f = std::fs::OpenOptions::new()
                    .append(true)
                    .open(&file)
                    .unwrap();
                f.write_all(b"\n").unwrap();
            },
            &|| {
                std::fs::write(state.join("new"), b"{}").unwrap();
                std::fs::rename(state.join("new"), &file).unwrap();
            },
            &|| {
                use std::os::unix::fs::PermissionsExt;
                std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
            },
            &|| {
                std::fs::rename(&file, state.join("old")).unwrap();
                std::os::unix::fs::symlink("old", &file).unwrap();
            },
            &|| std::fs::remove_file(&file).unwrap(),
        ];
        for (i, step) in steps.iter().enumerate() {
            step();
            let now = memo.key(&inputs, &session, None);
            assert_eq!(now, key(&inputs), "step {i}");
            assert_ne!(now, last, "step {i}");
            last = now;
        }
    }

    /// Claude's layout: `<id>/subagents` beside `<id>.jsonl` is stamped from the project's
    /// handle, never kept in the table of shared inputs (one entry a session), and its key
    /// is the one every `lstat` by path gives, before and after the directory changes.
    #[test]
    fn a_directory_beside_the_session_is_looked_up_from_their_parent() {
        let t = tempfile::tempdir().unwrap();
        let project = t.path().join("projects/-p");
        let (session, sub) = (project.join("s.jsonl"), project.join("s/subagents"));
        std::fs::create_dir_all(&sub).unwrap();
        std::fs::write(&session, b"{}").unwrap();
        let (shared, gone) = (t.path().join("settings.json"), project.join("x/y"));
        let inputs = [sub.clone(), session.clone(), shared, gone];
        let mut memo = Memo::new(None);
        let before = memo.key(&inputs, &session, None);
        assert_eq!(before, key(&inputs));
        // Only the file outside the project is in the table.
        assert_eq!(memo.shared.len(), 1);
        std::fs::write(sub.join("agent-a.jsonl"), b"{}").unwrap();
        let after = memo.key(&inputs, &session, None);
        assert_eq!(after, key(&inputs));
        assert_ne!(after, before);
        assert!(!in_sibling_dir(&project.join("archive.json"), &session));
        assert!(!in_sibling_dir(&sub, Path::new("s.jsonl")));
    }

    #[test]
    fn one_memo_sees_every_change_below_a_session_looked_up_from_its_directory() {
        let t = tempfile::tempdir().unwrap();
        let session = t.path().join("col/s");
        std::fs::create_dir_all(&session).unwrap();
        let files = ["meta.json", "messages.jsonl", "index.json"];
        for f in files {
            std::fs::write(session.join(f), b"{}").unwrap();
        }
        let inputs: Vec<PathBuf> = std::iter::once(session.clone())
            .chain(files.map(|f| session.join(f)))
            .collect();
        // One memo for the whole test: its open directory must never stand in for a stat.
        let mut memo = Memo::new(None);
        let mut last = memo.key(&inputs, &session, None);
        assert_eq!(last, key(&inputs));
        let steps: [&dyn Fn(); 4] = [
            &|| {
                use std::io::Write;
                let mut f = std::fs::OpenOptions::new()
                    .append(true)
                    .open(session.join("messages.jsonl"))
                    .unwrap();
                f.write_all(b"\n").unwrap();
            },
            &|| std::fs::remove_file(session.join("index.json")).unwrap(),
            &|| std::fs::write(session.join("index.json"), b"{}").unwrap(),
            &|| {
                std::fs::rename(session.join("meta.json"), session.join("m")).unwrap();
                std::os::unix::fs::symlink("m", session.join("meta.json")).unwrap();
            },
        ];
        for (i, step) in steps.iter().enumerate() {
            step();
            let now = memo.key(&inputs, &session, None);
            assert_eq!(now, key(&inputs), "step {i}");
            assert_ne!(now, last, "step {i}");
            last = now;
        }
    }
}
