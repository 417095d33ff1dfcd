//! The format-neutral session summary: one row of the list, one object of `list --json`.

use std::fmt;
use std::path::PathBuf;

use chrono::{DateTime, SecondsFormat, Utc};
use serde::{Deserialize, Serialize};

use super::Shared;

/// Which agent's store a session lives in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StoreKind {
    Loop,
    Loom,
    Harness,
    /// Claude Code (read-only).
    Claude,
    /// OpenAI Codex CLI (read-only).
    Codex,
    /// pi coding agent (read-only).
    Pi,
}

impl StoreKind {
    pub const ALL: [StoreKind; 6] = [
        StoreKind::Loop,
        StoreKind::Loom,
        StoreKind::Harness,
        StoreKind::Claude,
        StoreKind::Codex,
        StoreKind::Pi,
    ];

    /// The `format` string of the CLI contract (`loop`, `loom`, `harness`, `claude`, `pi`).
    pub fn as_str(self) -> &'static str {
        match self {
            StoreKind::Loop => "loop",
            StoreKind::Loom => "loom",
            StoreKind::Harness => "harness",
            StoreKind::Claude => "claude",
            StoreKind::Codex => "codex",
            StoreKind::Pi => "pi",
        }
    }

    /// Stores spool only reads: its own state lives outside them, delete is refused, fork
    /// and resume go through the agent's own command.
    pub fn read_only(self) -> bool {
        matches!(self, StoreKind::Claude | StoreKind::Codex | StoreKind::Pi)
    }

    pub fn parse(s: &str) -> Option<StoreKind> {
        StoreKind::ALL.into_iter().find(|k| k.as_str() == s)
    }
}

impl fmt::Display for StoreKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Everything the list shows about one session, derived by a store's cheap listing pass.
///
/// The first fields are exactly the keys of `list --json` (see `to_json`); the rest serve the
/// browser (search text, sort keys, badges). Its serde form (`row_wire`) is the catalog's
/// row: a new field there changes the catalog's schema fingerprint.
///
/// One row is held for every session as long as spool runs (issue 10: 100k rows), so the
/// fields most rows leave empty (`forked_from`, `child_of`, `error`) live in one box behind
/// accessors: 8 bytes a row instead of 72, and no allocation when all are empty. Badges and
/// the git branch are interned (`Shared`): most rows that have one say the same few words.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(from = "super::row_wire::Wire")]
pub struct SessionSummary {
    pub store: StoreKind,
    /// Give a row another id with `set_id`: its path is held relative to the id (`text`),
    /// so assigning this field would change `path()` too.
    pub id: std::sync::Arc<str>,
    /// Title, summary, first prompt, the badges that are counts, and path, in one
    /// allocation (`row_text`: `title()`, `summary()`, `first_prompt()`, `path()` and their
    /// setters; `badges`). The path is held relative to `id`: change it with `set_id`.
    pub(super) text: super::row_text::RowText,
    /// Interned: a few cwds are shared by many sessions (`Shared`).
    pub cwd: Option<Shared>,
    pub created_at: Option<DateTime<Utc>>,
    pub updated_at: Option<DateTime<Utc>>,
    /// Message count as the format's contract defines it.
    pub messages: u64,
    /// When pinned; `Some` means pinned. Pinned rows sort by this, newest first.
    pub pinned_at: Option<DateTime<Utc>>,
    /// Pinned although no parsable pin time exists (e.g. Loop's non-canonical `pinnedAt`).
    pub pinned_flag: bool,
    pub unread: bool,
    pub archived: bool,
    /// False when the session has no user message (hidden by default as "empty").
    pub has_user_message: bool,
    /// Model label (`provider/id`, loom's tag), when the store records one.
    pub model: Option<Shared>,
    /// Short warnings shown beside the row: "cwd missing", "2 unreadable lines", ...
    /// (`badges()`, `add_badge`): the interned ones; counts at the end live in `text`.
    pub(super) badges: Box<[Shared]>,
    /// Writers must refuse this session (error rows, id mismatches, non-standard names).
    pub read_only: bool,
    /// How the log ends (`Store::summarize` derives it from the tail it reads); `None` for
    /// empty or unreadable sessions and for stores that do not derive it yet.
    pub ended: Option<super::Ended>,
    /// The git branch the session recorded last (Claude Code's `gitBranch`), for the checks
    /// before resume. Interned, not a rare field: every Claude Code row has one, and as a
    /// box of rare fields and a `String` it cost ~150 bytes a row (14 MB of a warm start's
    /// peak on a 100k Claude Code store, where a few branch names repeat); here it takes
    /// the row's last free 8 bytes (`the_row_does_not_grow_unnoticed`).
    pub(super) git_branch: Option<Shared>,
    /// The fields most rows leave empty (see the type's doc); `None` when all are.
    pub(super) rare: RareBox,
}

/// The fields of a row that most sessions leave empty.
#[derive(Clone, Debug, Default, PartialEq)]
pub(super) struct Rare {
    /// `FORMAT:ID` of the parent session.
    pub forked_from: Option<String>,
    /// Shown under another session, never as a row of its own (a Codex subagent thread):
    /// the parent's `FORMAT:ID`, or `codex:internal` for an internal thread without one.
    pub child_of: Option<String>,
    /// Why the session could not be read (an error row).
    pub error: Option<String>,
}

const NO_RARE: Rare = Rare {
    forked_from: None,
    child_of: None,
    error: None,
};

/// A row's rare fields, boxed; equal whether absent or present and all empty.
#[derive(Clone, Debug, Default)]
pub(super) struct RareBox(pub Option<Box<Rare>>);

impl RareBox {
    pub fn get(&self) -> &Rare {
        self.0.as_deref().unwrap_or(&NO_RARE)
    }

    /// Set one field: the box is allocated on the first value, and dropped again when the
    /// last value goes, so an empty row never carries one.
    fn set(&mut self, value: Option<String>, field: fn(&mut Rare) -> &mut Option<String>) {
        match (&mut self.0, value) {
            (None, None) => {}
            (Some(r), v) => {
                *field(r) = v;
                if **r == NO_RARE {
                    self.0 = None;
                }
            }
            (None, v) => {
                let mut r = Box::<Rare>::default();
                *field(&mut r) = v;
                self.0 = Some(r);
            }
        }
    }
}

impl PartialEq for RareBox {
    fn eq(&self, o: &RareBox) -> bool {
        self.get() == o.get()
    }
}

impl SessionSummary {
    /// A blank summary for `id` at `path`; stores fill in what they read.
    pub fn new(store: StoreKind, id: impl Into<String>, path: impl Into<PathBuf>) -> Self {
        let id: std::sync::Arc<str> = id.into().into();
        let path: PathBuf = path.into();
        SessionSummary {
            store,
            text: super::row_text::RowText::new([&id, "", ""], &[], &path, &id),
            id,
            cwd: None,
            created_at: None,
            updated_at: None,
            messages: 0,
            pinned_at: None,
            pinned_flag: false,
            unread: false,
            archived: false,
            has_user_message: false,
            model: None,
            badges: Box::default(),
            read_only: false,
            ended: None,
            git_branch: None,
            rare: RareBox::default(),
        }
    }

    /// A row for a session that could not be read: `error` set, read-only, always listed.
    pub fn error_row(
        store: StoreKind,
        id: impl Into<String>,
        path: impl Into<PathBuf>,
        why: impl Into<String>,
    ) -> Self {
        let mut s = SessionSummary::new(store, id, path);
        s.set_error(Some(why.into()));
        s.read_only = true;
        s
    }

    /// `FORMAT:ID` of the parent session.
    pub fn forked_from(&self) -> Option<&str> {
        self.rare.get().forked_from.as_deref()
    }

    pub fn set_forked_from(&mut self, v: Option<String>) {
        self.rare.set(v, |r| &mut r.forked_from);
    }

    /// The parent's `FORMAT:ID` of a row shown under another session (see `Rare`).
    pub fn child_of(&self) -> Option<&str> {
        self.rare.get().child_of.as_deref()
    }

    pub fn set_child_of(&mut self, v: Option<String>) {
        self.rare.set(v, |r| &mut r.child_of);
    }

    /// Why the session could not be read; `Some` makes this an error row.
    pub fn error(&self) -> Option<&str> {
        self.rare.get().error.as_deref()
    }

    pub fn set_error(&mut self, v: Option<String>) {
        self.rare.set(v, |r| &mut r.error);
    }

    /// The git branch the session recorded last (Claude Code's `gitBranch`).
    pub fn git_branch(&self) -> Option<&str> {
        self.git_branch.as_deref()
    }

    pub fn set_git_branch(&mut self, v: Option<String>) {
        self.git_branch = v.map(Shared::from);
    }

    /// `FORMAT:ID`.
    pub fn reference(&self) -> String {
        format!("{}:{}", self.store, self.id)
    }

    pub fn pinned(&self) -> bool {
        self.pinned_at.is_some() || self.pinned_flag
    }

    /// Hidden by default as an empty session (no user message). Error rows are never empty.
    pub fn is_empty(&self) -> bool {
        counts_as_empty(self.error().is_some(), self.has_user_message)
    }

    /// The name the browser shows. The stores' own titles follow their contracts (`list
    /// --json` keeps them), but there an unreadable Loop session looks like a new one and
    /// empty sessions have three names; here an unreadable session is named by its id and
    /// the reason, and an empty one without a title of its own is `(empty)` in every store.
    pub fn display_title(&self) -> String {
        if let Some(e) = self.error() {
            return format!("{} — {e}", self.id);
        }
        let placeholder = match self.store {
            StoreKind::Loop => self.title() == "New session",
            StoreKind::Loom => self.title() == "(empty session)",
            StoreKind::Harness => self.title() == &*self.id,
            StoreKind::Claude => self.title() == "(no prompt)",
            StoreKind::Codex => self.title() == "(no message yet)",
            StoreKind::Pi => self.title() == "(no messages)",
        };
        if placeholder && !self.has_user_message {
            return "(empty)".into();
        }
        self.title().to_string()
    }

    /// The parent of a fork, as a list key (`forked_from` is `FORMAT:ID`).
    pub fn parent_key(&self) -> Option<(StoreKind, String)> {
        let (f, id) = self.forked_from()?.split_once(':')?;
        Some((StoreKind::parse(f)?, id.to_string()))
    }

    /// Last activity used for ordering: `updated_at`, else `created_at`.
    pub fn last_activity(&self) -> Option<DateTime<Utc>> {
        self.updated_at.or(self.created_at)
    }

    /// The project label: basename of the cwd.
    pub fn project(&self) -> &str {
        match &self.cwd {
            Some(c) => c
                .trim_end_matches('/')
                .rsplit('/')
                .next()
                .filter(|s| !s.is_empty())
                .unwrap_or(c.as_str()),
            None => "",
        }
    }

    /// The `list --json` object: exactly the contract's keys, in its order.
    pub fn to_json(&self) -> serde_json::Value {
        let mut m = serde_json::Map::new();
        m.insert("ref".into(), self.reference().into());
        m.insert("format".into(), self.store.as_str().into());
        m.insert("id".into(), self.id.to_string().into());
        m.insert("title".into(), self.title().to_string().into());
        m.insert("summary".into(), self.summary().to_string().into());
        m.insert("cwd".into(), opt(self.cwd.clone().map(String::from)));
        m.insert("created_at".into(), opt(self.created_at.map(rfc3339)));
        m.insert("updated_at".into(), opt(self.updated_at.map(rfc3339)));
        m.insert("messages".into(), self.messages.into());
        m.insert("pinned".into(), self.pinned().into());
        m.insert("unread".into(), self.unread.into());
        m.insert("archived".into(), self.archived.into());
        m.insert(
            "forked_from".into(),
            opt(self.forked_from().map(String::from)),
        );
        m.insert(
            "path".into(),
            self.path().to_string_lossy().into_owned().into(),
        );
        m.insert("error".into(), opt(self.error().map(String::from)));
        m.insert(
            "ended".into(),
            opt(self.ended.map(|e| e.as_str().to_string())),
        );
        serde_json::Value::Object(m)
    }
}

fn opt(v: Option<String>) -> serde_json::Value {
    v.map(serde_json::Value::from)
        .unwrap_or(serde_json::Value::Null)
}

/// RFC 3339 in UTC with a `Z`, whole seconds unless the time has a fraction.
pub fn rfc3339(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::AutoSi, true)
}

/// Parse any RFC 3339 / ISO-8601 time the stores write into UTC.
pub fn parse_time(s: &str) -> Option<DateTime<Utc>> {
    if let Ok(t) = DateTime::parse_from_rfc3339(s) {
        return Some(t.with_timezone(&Utc));
    }
    // Python's isoformat without offset, or a space separator.
    chrono::NaiveDateTime::parse_from_str(s, "%Y-%m-%dT%H:%M:%S%.f")
        .or_else(|_| chrono::NaiveDateTime::parse_from_str(s, "%Y-%m-%d %H:%M:%S%.f"))
        .ok()
        .map(|n| n.and_utc())
}

/// Milliseconds since the epoch (pi-ai timestamps) to UTC.
pub fn from_millis(ms: i64) -> Option<DateTime<Utc>> {
    DateTime::from_timestamp_millis(ms)
}

/// A session is empty when it is readable and no user message was ever said in it (the
/// rule of `SessionSummary::is_empty`, also read from a catalog row in place).
pub fn counts_as_empty(error: bool, has_user_message: bool) -> bool {
    !error && !has_user_message
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_has_exactly_the_contract_keys_in_order() {
        let s = SessionSummary::new(StoreKind::Loom, "20260314-091502", "/x/y.jsonl");
        let v = s.to_json();
        let keys: Vec<&str> = v.as_object().unwrap().keys().map(|k| k.as_str()).collect();
        assert_eq!(
            keys,
            [
                "ref",
                "format",
                "id",
                "title",
                "summary",
                "cwd",
                "created_at",
                "updated_at",
                "messages",
                "pinned",
                "unread",
                "archived",
                "forked_from",
                "path",
                "error",
                "ended"
            ]
        );
        assert_eq!(v["ref"], "loom:20260314-091502");
    }

    #[test]
    fn times_parse_from_every_store_style() {
        let a = parse_time("2026-03-14T09:15:02+01:00").unwrap();
        assert_eq!(rfc3339(a), "2026-03-14T08:15:02Z");
        let b = parse_time("2026-03-14T09:35:01.870Z").unwrap();
        assert_eq!(rfc3339(b), "2026-03-14T09:35:01.870Z");
        assert!(parse_time("yesterday").is_none());
    }

    #[test]
    fn display_title_names_error_and_empty_rows_the_same_in_every_store() {
        let e = SessionSummary::error_row(StoreKind::Loop, "ab12", "/p", "messages.jsonl is cut");
        assert_eq!(e.display_title(), "ab12 — messages.jsonl is cut");
        for (kind, stored) in [
            (StoreKind::Loop, "New session"),
            (StoreKind::Loom, "(empty session)"),
            (StoreKind::Harness, "h1"),
        ] {
            let mut s = SessionSummary::new(kind, "h1", "/p");
            s.set_title(stored);
            assert_eq!(s.display_title(), "(empty)", "{kind}");
            s.has_user_message = true;
            assert_eq!(s.display_title(), stored, "{kind}");
        }
        let mut f = SessionSummary::new(StoreKind::Loom, "b", "/p");
        f.set_forked_from(Some("loom:20260314-091502".into()));
        assert_eq!(
            f.parent_key(),
            Some((StoreKind::Loom, "20260314-091502".into()))
        );
    }

    /// One row is held for every session (100k in issue 10's benchmark, 19 MB inline): a
    /// field added here costs that many times its size, so growth must be a decision.
    /// 344 bytes until cwd and model became `Shared` (16 bytes each, not 24); 328 until the
    /// rare fields moved into one box and badges became a boxed slice of `Shared`; 232 until
    /// id, title, summary, first_prompt and path became boxed (no capacity word); 192 until
    /// `Shared` became a thin pointer; 176 until title, summary, first prompt and path went
    /// into one buffer (`row_text`); 128 until the git branch left the rare box (`Shared`).
    /// At 136 the row's `Arc` (16 more) is a 152-byte request: glibc's 160-byte chunk (208
    /// at 176), where a row 8 bytes bigger cost 16 a row; under jemalloc, the allocator
    /// spool now uses (`heap`), its 160-byte size class, which a row 8 bytes bigger still
    /// fits and one 16 bytes bigger leaves for the 192-byte class.
    #[test]
    fn the_row_does_not_grow_unnoticed() {
        let n = std::mem::size_of::<SessionSummary>();
        assert!(n <= 136, "a row is {n} bytes inline");
    }

    /// The box of rare fields exists only while one of them is set, so a common row costs
    /// no allocation for them, and two rows that say the same compare equal either way.
    #[test]
    fn the_rare_box_comes_and_goes_with_its_values() {
        let mut s = SessionSummary::new(StoreKind::Loop, "x", "/p");
        assert!(s.rare.0.is_none());
        s.set_error(None);
        assert!(s.rare.0.is_none(), "setting nothing allocates nothing");
        s.set_error(Some("cut".into()));
        s.set_forked_from(Some("loop:y".into()));
        assert_eq!((s.error(), s.forked_from()), (Some("cut"), Some("loop:y")));
        s.set_error(None);
        assert!(s.rare.0.is_some());
        s.set_forked_from(None);
        assert!(s.rare.0.is_none(), "the last value gone drops the box");
        let mut t = s.clone();
        t.rare = RareBox(Some(Box::default()));
        assert_eq!(s, t);
    }

    /// Every Claude Code row has a git branch, and a few names repeat: a row that has one
    /// decodes without a box of rare fields, and rows that name the same branch share its
    /// text (a box and a `String` a row were ~150 bytes at the warm start's peak).
    #[test]
    fn a_git_branch_is_shared_and_needs_no_rare_box() {
        let rows: Vec<SessionSummary> = ["a", "b"]
            .iter()
            .map(|id| {
                let mut s = SessionSummary::new(StoreKind::Claude, *id, "/p");
                s.set_git_branch(Some("feature/x".into()));
                let bytes = postcard::to_allocvec(&s).unwrap();
                let back: SessionSummary = postcard::from_bytes(&bytes).unwrap();
                assert_eq!(back, s);
                back
            })
            .collect();
        assert!(rows.iter().all(|r| r.rare.0.is_none()));
        let texts: Vec<_> = rows.iter().map(|r| r.git_branch().unwrap()).collect();
        assert_eq!(texts, ["feature/x", "feature/x"]);
        assert_eq!(texts[0].as_ptr(), texts[1].as_ptr(), "one copy of the name");
        let mut c = rows[0].clone();
        c.set_git_branch(None);
        assert_eq!(
            (
                c.git_branch(),
                serde_json::to_value(&c).unwrap()["git_branch"].clone()
            ),
            (None, serde_json::Value::Null)
        );
    }

    /// The serde form (the catalog's row) is the one rows had before the box: the same
    /// fields in the same order, so old catalogs still read and the fingerprint holds.
    #[test]
    fn the_serde_form_keeps_every_field_in_its_place() {
        let mut s = SessionSummary::new(StoreKind::Codex, "c1", "/p/c1.jsonl");
        s.set_child_of(Some("codex:p".into()));
        s.set_error(Some("cut".into()));
        s.set_badges(["1 subagent", "cwd missing"]);
        s.add_badge("late");
        s.insert_badge(0, "first");
        let v = serde_json::to_value(&s).unwrap();
        let keys: Vec<&str> = v.as_object().unwrap().keys().map(|k| k.as_str()).collect();
        assert_eq!(
            keys,
            [
                "store",
                "id",
                "title",
                "summary",
                "cwd",
                "created_at",
                "updated_at",
                "messages",
                "pinned_at",
                "pinned_flag",
                "unread",
                "archived",
                "forked_from",
                "child_of",
                "path",
                "error",
                "first_prompt",
                "has_user_message",
                "model",
                "badges",
                "read_only",
                "ended",
                "git_branch"
            ]
        );
        assert_eq!(
            v["badges"],
            serde_json::json!(["first", "1 subagent", "cwd missing", "late"])
        );
        let bytes = postcard::to_allocvec(&s).unwrap();
        let back: SessionSummary = postcard::from_bytes(&bytes).unwrap();
        assert_eq!(back, s);
        assert_eq!(back.child_of(), Some("codex:p"));
        let plain: SessionSummary = postcard::from_bytes(
            &postcard::to_allocvec(&SessionSummary::new(StoreKind::Loop, "a", "/a")).unwrap(),
        )
        .unwrap();
        assert!(
            plain.rare.0.is_none(),
            "a row without rare fields decodes without a box"
        );
    }

    #[test]
    fn project_is_cwd_basename() {
        let mut s = SessionSummary::new(StoreKind::Loop, "x", "/p");
        s.cwd = Some("/home/u/projects/acme-api/".into());
        assert_eq!(s.project(), "acme-api");
    }
}
