//! The set of stores spool reads: where their roots are, listing order and filters over all
//! of them, and resolving a `REF` (`format:id`, id, or unique prefix) to one session.

use std::cmp::Ordering;
use std::path::{Path, PathBuf};

use super::{
    Store, claude_store::ClaudeStore, codex_store::CodexStore, harness_store::HarnessStore,
    loom_store::LoomStore, loop_store::LoopStore, pi_store::PiStore,
};
use crate::error::{Error, Result};
use crate::model::{SessionSummary, StoreKind};

/// The store roots (the agent directories), and where spool keeps its own state for the
/// read-only stores.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Roots {
    pub loop_dir: PathBuf,
    pub loom_dir: PathBuf,
    pub harness_dir: PathBuf,
    /// Claude Code's config root (transcripts under `projects/`), read-only.
    pub claude_dir: PathBuf,
    /// Codex's home (rollouts under `sessions/` and `archived_sessions/`), read-only.
    pub codex_dir: PathBuf,
    /// pi's session root (pi.md section 1), read-only.
    pub pi_dir: PathBuf,
    /// `<data dir>/spool/state`: pin/read/archive/title of the read-only stores.
    pub state_dir: PathBuf,
}

impl Roots {
    /// Defaults of the CLI contract: `$LOOP_DATA_DIR` or `~/.loop`, `~/.loom`,
    /// `~/.agent-harness/memory`, with `~` = `$HOME`.
    pub fn from_env() -> Roots {
        let home = std::env::var_os("HOME")
            .map(PathBuf::from)
            .or_else(|| directories::BaseDirs::new().map(|b| b.home_dir().to_path_buf()))
            .unwrap_or_else(|| PathBuf::from("/"));
        let loop_dir = std::env::var_os("LOOP_DATA_DIR")
            .filter(|v| !v.is_empty())
            .map(|v| absolute(Path::new(&v)))
            .unwrap_or_else(|| home.join(".loop"));
        Roots {
            loop_dir,
            loom_dir: home.join(".loom"),
            harness_dir: home.join(".agent-harness").join("memory"),
            claude_dir: super::claude_store::default_root(&home),
            codex_dir: super::codex_store::default_root(&home),
            pi_dir: super::pi_store::default_root(&home),
            state_dir: super::state::default_root(&home),
        }
    }

    /// Every store and the state in one directory (the demo store).
    pub fn all_in(dir: &Path) -> Roots {
        Roots {
            loop_dir: dir.join("loop"),
            loom_dir: dir.join("loom"),
            harness_dir: dir.join("harness"),
            claude_dir: dir.join("claude"),
            codex_dir: dir.join("codex"),
            pi_dir: dir.join("pi"),
            state_dir: dir.join("state"),
        }
    }
}

fn absolute(p: &Path) -> PathBuf {
    std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf())
}

/// Filters of `list` (and the browser's toggles).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Filter {
    /// Show everything (archived and empty included).
    pub all: bool,
    /// Show only archived sessions.
    pub archived: bool,
    /// Include empty sessions.
    pub empty: bool,
    pub format: Option<StoreKind>,
    /// Only sessions whose cwd is this directory.
    pub cwd: Option<String>,
}

impl Filter {
    /// Whether a row passes. Error rows always pass the archived/empty rules.
    pub fn accepts(&self, s: &SessionSummary) -> bool {
        self.admits(Facts {
            store: s.store,
            child: s.child_of().is_some(),
            cwd: s.cwd.as_deref(),
            error: s.error().is_some(),
            archived: s.archived,
            empty: s.is_empty(),
        })
    }

    /// `accepts` over the few facts it looks at (a row, or a row read in place from the
    /// catalog by a warm `list --json`).
    pub fn admits(&self, s: Facts) -> bool {
        if let Some(f) = self.format
            && s.store != f
        {
            return false;
        }
        // Subagent threads are shown under their parent, never as rows of their own.
        if s.child {
            return false;
        }
        if let Some(cwd) = &self.cwd
            && !same_dir(s.cwd, cwd)
        {
            return false;
        }
        if s.error || self.all {
            return true;
        }
        if self.archived != s.archived {
            return false;
        }
        self.empty || !s.empty
    }
}

/// What `Filter` decides on.
pub struct Facts<'a> {
    pub store: StoreKind,
    /// Shown under another session (`child_of`).
    pub child: bool,
    pub cwd: Option<&'a str>,
    /// An error row.
    pub error: bool,
    pub archived: bool,
    /// `SessionSummary::is_empty`.
    pub empty: bool,
}

fn same_dir(a: Option<&str>, b: &str) -> bool {
    let Some(a) = a else { return false };
    let norm = |p: &str| {
        std::fs::canonicalize(p)
            .map(|c| c.to_string_lossy().into_owned())
            .unwrap_or_else(|_| p.trim_end_matches('/').to_string())
    };
    a.trim_end_matches('/') == b.trim_end_matches('/') || norm(a) == norm(b)
}

/// The list order of the contract: pinned first (newest pin first), then by last activity,
/// newest first; ties by id descending so the order is total and stable.
pub fn list_order(a: &SessionSummary, b: &SessionSummary) -> Ordering {
    b.pinned()
        .cmp(&a.pinned())
        .then_with(|| b.pinned_at.cmp(&a.pinned_at))
        .then_with(|| b.last_activity().cmp(&a.last_activity()))
        .then_with(|| b.id.cmp(&a.id))
        .then_with(|| a.store.cmp(&b.store))
}

/// Sort `rows` into `list_order`, stable. Each row's leading fields (pin, pin time, last
/// activity) are read once into a compact key that the sort compares, the rows themselves
/// only where two keys tie: comparing the rows behind `Arc`s read two scattered rows per
/// comparison, a cache miss each (issue 10: at 100k rows the sort was ~25 ms of a warm
/// `spool list --json --all`, on the one thread left running at its end).
pub fn sort_listed<R: std::borrow::Borrow<SessionSummary>>(rows: &mut Vec<R>) {
    type Key = (
        bool,
        Option<chrono::DateTime<chrono::Utc>>,
        Option<chrono::DateTime<chrono::Utc>>,
    );
    let key = |r: &SessionSummary| -> Key { (r.pinned(), r.pinned_at, r.last_activity()) };
    let mut keyed: Vec<(Key, R)> = (rows.drain(..)).map(|r| (key(r.borrow()), r)).collect();
    // Descending keys as `list_order` orders those fields; a tie is settled by the rows.
    keyed.sort_by(|(ka, a), (kb, b)| kb.cmp(ka).then_with(|| list_order(a.borrow(), b.borrow())));
    rows.extend(keyed.into_iter().map(|(_, r)| r));
}

/// All configured stores.
pub struct Stores {
    pub stores: Vec<Box<dyn Store>>,
    /// Where the read-only stores' state lives (extra roots of those kinds share it).
    pub state_dir: PathBuf,
}

impl Stores {
    /// Write an export to `path`, refused inside any store's root directory.
    pub fn write_export(&self, path: &std::path::Path, content: &str) -> crate::error::Result<()> {
        let roots: Vec<&std::path::Path> = self
            .stores
            .iter()
            .map(|s| s.sessions_dir().parent().unwrap_or(s.sessions_dir()))
            .collect();
        crate::export::refuse_inside_stores(path, &roots)?;
        crate::export::write_new(path, content)
    }

    pub fn open(roots: &Roots) -> Stores {
        Stores {
            stores: vec![
                Box::new(LoopStore::new(&roots.loop_dir)),
                Box::new(LoomStore::new(&roots.loom_dir)),
                Box::new(HarnessStore::new(&roots.harness_dir)),
                Box::new(ClaudeStore::new(&roots.claude_dir, &roots.state_dir)),
                Box::new(CodexStore::new(&roots.codex_dir, &roots.state_dir)),
                Box::new(PiStore::new(&roots.pi_dir, &roots.state_dir)),
            ],
            state_dir: roots.state_dir.clone(),
        }
    }

    /// Add extra roots (from the config file) for a store kind.
    pub fn add(&mut self, kind: StoreKind, root: &Path) {
        let s: Box<dyn Store> = match kind {
            StoreKind::Loop => Box::new(LoopStore::new(root)),
            StoreKind::Loom => Box::new(LoomStore::new(root)),
            StoreKind::Harness => Box::new(HarnessStore::new(root)),
            StoreKind::Claude => Box::new(ClaudeStore::new(root, &self.state_dir)),
            StoreKind::Codex => Box::new(CodexStore::new(root, &self.state_dir)),
            StoreKind::Pi => Box::new(PiStore::new(root, &self.state_dir)),
        };
        self.stores.push(s);
    }

    /// Every session of every store, in list order (unfiltered).
    pub fn list_all(&self) -> Vec<SessionSummary> {
        self.list_of(None)
    }

    /// Every session of the stores of `kind` (all stores for `None`), in list order.
    pub fn list_of(&self, kind: Option<StoreKind>) -> Vec<SessionSummary> {
        // Stores are independent: read them side by side.
        let stores = self
            .stores
            .iter()
            .filter(|s| kind.is_none_or(|k| s.kind() == k));
        let mut all = super::gather_parallel(stores, |s| s.list());
        sort_listed(&mut all);
        all
    }

    /// The store that holds `summary` (by kind and path prefix).
    pub fn store_for(&self, summary: &SessionSummary) -> &dyn Store {
        self.stores
            .iter()
            .filter(|s| s.kind() == summary.store)
            .find(|s| summary.path().starts_with(s.sessions_dir()))
            .or_else(|| self.stores.iter().find(|s| s.kind() == summary.store))
            .map(|b| b.as_ref())
            .expect("every kind has a store")
    }

    /// Resolve `REF` against the listing: `format:id`, bare id, or a unique prefix of either.
    ///
    /// Only sessions whose discovered id could match are read, so a script's `spool pin REF`
    /// does not pay for listing every store.
    pub fn resolve(&self, reference: &str) -> Result<SessionSummary> {
        let (kind, _) = split_ref(reference);
        let stores = self
            .stores
            .iter()
            .filter(|s| kind.is_none_or(|k| s.kind() == k));
        let candidates = super::gather_parallel(stores, |s| {
            s.discover()
                .into_iter()
                .filter(|c| {
                    c.id.starts_with(reference)
                        || format!("{}:{}", s.kind(), c.id).starts_with(reference)
                })
                .filter_map(|c| s.summarize(&c))
                .collect()
        });
        resolve_in(&candidates, reference)
    }
}

/// A reference's store and id: `loom:2026…` gives `(Some(Loom), "2026…")`; anything without
/// a known `format:` prefix is a bare id (or prefix).
pub fn split_ref(reference: &str) -> (Option<StoreKind>, &str) {
    match reference.split_once(':') {
        Some((k, id)) if StoreKind::parse(k).is_some() => (StoreKind::parse(k), id),
        _ => (None, reference),
    }
}

/// Resolve a reference among `sessions`: exact `format:id` or id wins over prefixes.
pub fn resolve_in(sessions: &[SessionSummary], reference: &str) -> Result<SessionSummary> {
    if reference.is_empty() {
        return Err(Error::Usage("empty session reference".into()));
    }
    let exact: Vec<&SessionSummary> = sessions
        .iter()
        .filter(|s| s.reference() == reference || s.id == reference.into())
        .collect();
    let found = if exact.is_empty() {
        sessions
            .iter()
            .filter(|s| s.reference().starts_with(reference) || s.id.starts_with(reference))
            .collect()
    } else {
        exact
    };
    match found.as_slice() {
        [] => Err(Error::NotFound(reference.to_string())),
        [one] => Ok((*one).clone()),
        many => Err(Error::Ambiguous {
            reference: reference.to_string(),
            candidates: candidate_list(many),
        }),
    }
}

/// How many candidates an ambiguous reference lists; the rest are counted.
const CANDIDATES_SHOWN: usize = 8;

/// The candidates of an ambiguous reference, in list order, each with its title (one line,
/// sanitised, cut) so the user can tell which one they meant.
fn candidate_list(many: &[&SessionSummary]) -> Vec<String> {
    let mut sorted = many.to_vec();
    sorted.sort_by(|a, b| list_order(a, b));
    let mut out: Vec<String> = sorted
        .iter()
        .take(CANDIDATES_SHOWN)
        .map(|s| {
            let title = crate::text::truncate_chars(&crate::text::one_line(s.title()), 40);
            format!("{} \"{title}\"", s.reference())
        })
        .collect();
    if sorted.len() > CANDIDATES_SHOWN {
        out.push(format!("and {} more", sorted.len() - CANDIDATES_SHOWN));
    }
    out
}

#[cfg(test)]
mod tests {
    /// The keyed sort orders rows exactly as sorting by `list_order` does: pins with and
    /// without a time, equal times (so ids and stores decide), rows without any time.
    #[test]
    fn the_keyed_sort_is_the_list_order() {
        use crate::model::{SessionSummary, StoreKind};
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = move |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        let time = |s: u64| chrono::DateTime::from_timestamp(1_700_000_000 + s as i64, 0);
        let mut rows: Vec<SessionSummary> = (0..5000)
            .map(|_| {
                let kind = StoreKind::ALL[next(6) as usize];
                let mut r = SessionSummary::new(kind, format!("id{}", next(400)), "/p");
                r.updated_at = (next(4) > 0).then(|| time(next(50))).flatten();
                r.created_at = (next(2) > 0).then(|| time(next(50))).flatten();
                match next(10) {
                    0 => r.pinned_at = time(next(5)),
                    1 => r.pinned_flag = true,
                    _ => {}
                }
                r
            })
            .collect();
        let mut want = rows.clone();
        want.sort_by(list_order);
        sort_listed(&mut rows);
        assert!(rows == want, "the keyed sort differs from list_order");
        let mut shared: Vec<std::sync::Arc<SessionSummary>> = want
            .iter()
            .rev()
            .cloned()
            .map(std::sync::Arc::new)
            .collect();
        sort_listed(&mut shared);
        assert_eq!(shared.len(), want.len());
        assert!(shared.windows(2).all(|w| list_order(&w[0], &w[1]).is_le()));
    }

    use super::*;
    use chrono::TimeZone;

    fn row(kind: StoreKind, id: &str, hour: u32) -> SessionSummary {
        let mut s = SessionSummary::new(kind, id, format!("/s/{id}"));
        s.updated_at = Some(
            chrono::Utc
                .with_ymd_and_hms(2026, 3, 1, hour, 0, 0)
                .unwrap(),
        );
        s.has_user_message = true;
        s
    }

    #[test]
    fn pinned_first_then_newest() {
        let mut a = row(StoreKind::Loop, "a", 1);
        let b = row(StoreKind::Loom, "b", 5);
        let mut c = row(StoreKind::Harness, "c", 3);
        a.pinned_at = c.updated_at;
        c.pinned_at = b.updated_at;
        let mut v = [a, b, c];
        v.sort_by(list_order);
        let ids: Vec<_> = v.iter().map(|s| s.id.as_ref()).collect();
        assert_eq!(ids, ["c", "a", "b"]);
    }

    #[test]
    fn filters_hide_archived_and_empty_but_never_errors() {
        let f = Filter::default();
        let mut arch = row(StoreKind::Loop, "a", 1);
        arch.archived = true;
        let mut empty = row(StoreKind::Loop, "e", 1);
        empty.has_user_message = false;
        let err = SessionSummary::error_row(StoreKind::Loom, "x", "/x", "bad");
        assert!(!f.accepts(&arch));
        assert!(!f.accepts(&empty));
        assert!(f.accepts(&err));
        let only_arch = Filter {
            archived: true,
            ..Filter::default()
        };
        assert!(only_arch.accepts(&arch));
        assert!(!only_arch.accepts(&row(StoreKind::Loop, "n", 1)));
    }

    #[test]
    fn resolve_exact_prefix_ambiguous_unknown() {
        let v = vec![
            row(StoreKind::Loop, "abc1", 1),
            row(StoreKind::Loom, "abc2", 1),
        ];
        assert_eq!(resolve_in(&v, "loom:abc2").unwrap().id, "abc2".into());
        assert_eq!(resolve_in(&v, "abc1").unwrap().id, "abc1".into());
        assert_eq!(resolve_in(&v, "loop:a").unwrap().id, "abc1".into());
        let e = resolve_in(&v, "abc").unwrap_err();
        assert!(matches!(e, Error::Ambiguous { .. }));
        let mut evil = row(StoreKind::Loop, "abc3", 1);
        evil.set_title("Fix \u{1b}[2Jthe\nlogin bug");
        let e = resolve_in(&[v[0].clone(), evil], "abc").unwrap_err();
        // Candidates carry their titles, sanitised to one line.
        let text = e.to_string();
        assert!(text.contains("loop:abc3 \"Fix"), "{text}");
        assert!(text.contains("login bug\""), "{text}");
        assert!(!text.contains('\u{1b}') && !text.contains('\n'), "{text}");
        assert!(matches!(resolve_in(&v, "zzz"), Err(Error::NotFound(_))));
    }
}
