//! Every state change of the browser is one `Action`; `App::update` returns `Effect`s that the
//! run loop carries out (loading, store writes, resume, quitting).

use std::sync::Arc;

use std::path::PathBuf;

pub use super::dialog::Edit;
use crate::export::Format;
use crate::model::{SessionSummary, StoreKind, Transcript, Window};
use crate::search::Key;
use crate::search::index::Hit;
use crate::search::query::TextQuery;
use crate::store::registry::Filter;

/// What the user (through the keymap) or a background thread asks the app to do.
#[derive(Clone, Debug)]
pub enum Action {
    // ---- navigation --------------------------------------------------------------------
    /// Move the selection (list) or scroll (pane) one line down.
    Down,
    /// Move the selection (list) or scroll (pane) one line up.
    Up,
    /// Jump to the first row / the top of the pane.
    Top,
    /// Jump to the last row / the bottom of the pane.
    Bottom,
    /// One page down.
    PageDown,
    /// One page up.
    PageUp,
    /// Half a page down (Ctrl-d).
    HalfPageDown,
    /// Half a page up (Ctrl-u).
    HalfPageUp,
    /// Open the selected session in the pane and focus it (Enter).
    Open,
    /// Switch focus between the list and the pane (Tab).
    ToggleFocus,
    /// Leave the current mode: close help, clear search, go back from the pane.
    Back,
    /// Cycle the pane view: transcript, context window, raw records.
    CycleView,
    /// Expand or collapse the block in view (tool call and output, thinking, system prompt).
    ToggleExpand,
    /// Expand or collapse every block in the pane.
    ToggleExpandAll,
    /// Make the sidebar narrower.
    ShrinkSidebar,
    /// Make the sidebar wider.
    GrowSidebar,
    /// Show or hide the help overlay.
    ToggleHelp,
    /// Show or hide the log of the last status messages.
    ToggleMessages,
    /// Quit the browser.
    Quit,

    // ---- search ------------------------------------------------------------------------
    /// Focus the search bar.
    FocusSearch,
    /// Type one character into the search bar.
    SearchInput(char),
    /// Delete the character before the cursor in the query.
    SearchBackspace,
    /// Paste text into the query (bracketed paste).
    Paste(String),
    /// Keep the query and go back to the list (Enter in the search bar); in a text search,
    /// open the selected hit; in a find, look for what was typed.
    SearchAccept,
    /// Open the text search over every session's messages (`s`).
    TextSearch,
    /// Next match of the find in the pane (`n`).
    FindNext,
    /// Previous match of the find in the pane (`N`).
    FindPrev,

    // ---- filters -----------------------------------------------------------------------
    /// Toggle the archived view (`.`).
    ToggleArchived,
    /// Toggle showing empty sessions (`E`).
    ToggleEmpty,
    /// Toggle "current directory's project only" (`c`).
    ToggleCwd,
    /// Cycle the store filter: all, loop, loom, harness (`F`).
    CycleStore,
    /// The checks before resume finished (on a worker thread: git may be slow).
    ResumeChecked(Box<SessionSummary>, crate::preflight::Report),
    /// Switch the sidebar between all sessions by time and the inbox (`i`).
    ToggleInbox,
    /// Collapse the pane's "left off" card to one line, or open it again (`l`).
    ToggleCard,

    // ---- session actions: returned as `Effect::Session` for the run loop to perform ------
    /// Run an operation on the selected session (delete, rename and export open a dialog
    /// first; fork from the focused pane cuts at the round in view).
    Session(SessionOp),

    // ---- dialogs: the delete confirmation, rename prompt and export dialog ------------
    /// Confirm the open dialog (y / Enter).
    DialogAccept,
    /// Close the open dialog without doing anything (n / Esc).
    DialogCancel,
    /// Edit the text field that has the keyboard: the dialog's, else the search query.
    Edit(Edit),
    /// Next (true) or previous export format (Tab / Shift-Tab).
    DialogCycle(bool),

    // ---- mouse -------------------------------------------------------------------------
    /// Wheel scroll at a screen position (positive = down).
    Scroll { col: u16, row: u16, lines: i32 },
    /// Click at a screen position.
    Click { col: u16, row: u16 },

    // ---- internal: produced by the run loop and the loaders, never bound to keys -------
    /// The terminal size changed.
    Resize(u16, u16),
    /// A batch of summaries from a store's listing (new or re-summarized rows).
    Rows(Vec<SessionSummary>),
    /// Rows already shared (the catalog's at a warm start, a cold pass's as it records them
    /// for the catalog): the list keeps these `Arc`s as they are, with no copy (issue 10).
    Cached(Vec<std::sync::Arc<SessionSummary>>),
    /// A long batch of rows (the catalog's) made ready on the thread that decoded it
    /// (`list::Prepared`), so taking it costs the UI thread pointer swaps.
    Prepared(super::list::Handoff),
    /// Sessions that disappeared from a store.
    Removed(Vec<Key>),
    /// Listing progress of store number `store`.
    Progress {
        store: usize,
        kind: StoreKind,
        done: usize,
        total: usize,
        finished: bool,
    },
    /// An answer from the pane loader; dropped when `token` is not the newest request.
    Loaded { token: u64, content: Loaded },
    /// The session shown in the pane changed on disk.
    SessionChanged(Key),
    /// Rows re-read in the background (a watcher or catalog pass, a refresh) by a read that
    /// began at `since`: a row an operation of this process wrote after `since` is older
    /// than the one on screen and is dropped.
    Reread {
        rows: Vec<std::sync::Arc<SessionSummary>>,
        since: std::time::Instant,
    },
    /// A session operation finished: its sentence for the status line and what changed.
    OpDone(Box<Outcome>),
    /// Tick the search matcher (once per frame).
    Tick,
    /// The index's answer to text search `token`; dropped unless it is the newest.
    TextResults { token: u64, hits: Vec<Hit> },
    /// Background indexing: `done` of `total` sessions (re)indexed.
    IndexProgress { done: usize, total: usize },
    /// A batch of an indexing pass was committed (`done` of `total` sessions now
    /// searchable): an open text search is asked again, as its answer may predate them.
    IndexCommitted { done: usize, total: usize },
}

impl Action {
    /// From the background index: its progress, its commits and its answers.
    pub fn is_index_news(&self) -> bool {
        matches!(
            self,
            Action::TextResults { .. }
                | Action::IndexProgress { .. }
                | Action::IndexCommitted { .. }
        )
    }

    /// A short name for the trace (`SPOOL_KEYTRACE`): the loaders' and the run loop's
    /// actions by name with their row count where it matters, the user's as "input".
    pub fn kind(&self) -> &'static str {
        match self {
            Action::Resize(..) => "resize",
            Action::Rows(_) => "rows",
            Action::Cached(_) => "cached",
            Action::Prepared(_) => "prepared",
            Action::Reread { .. } => "reread",
            Action::Removed(_) => "removed",
            Action::Progress { .. } => "progress",
            Action::Loaded { .. } => "loaded",
            Action::SessionChanged(_) => "session_changed",
            Action::OpDone(_) => "op_done",
            Action::Tick => "tick",
            Action::TextResults { .. } => "text_results",
            Action::IndexProgress { .. } => "index_progress",
            Action::IndexCommitted { .. } => "index_committed",
            Action::ResumeChecked(..) => "resume_checked",
            _ => "input",
        }
    }

    /// Whether the user caused this (a key, the mouse, a paste), as opposed to the run loop
    /// and the loaders. A user action clears the last status message.
    pub fn is_input(&self) -> bool {
        !matches!(
            self,
            Action::Resize(..)
                | Action::Rows(_)
                | Action::Cached(_)
                | Action::Prepared(_)
                | Action::Reread { .. }
                | Action::Removed(_)
                | Action::Progress { .. }
                | Action::Loaded { .. }
                | Action::SessionChanged(_)
                | Action::OpDone(_)
                | Action::Tick
                | Action::TextResults { .. }
                | Action::IndexProgress { .. }
                | Action::IndexCommitted { .. }
        )
    }
}

/// Payload of a pane load.
#[derive(Clone, Debug)]
pub enum Loaded {
    Transcript(Arc<Transcript>),
    Window(Arc<Window>),
    /// The raw text, and whether earlier records were left out (paged from the end).
    Raw(Arc<String>, bool),
    Failed(String),
}

/// Operations on a session that write to a store or leave the browser.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SessionOp {
    /// Resume the session with its agent (`r`).
    Resume,
    /// Fork the session (`f`).
    Fork,
    /// Pin or unpin (`p`).
    TogglePin,
    /// Mark read or unread (`u`).
    ToggleUnread,
    /// Archive or unarchive (`a`).
    ToggleArchive,
    /// Export to Markdown, HTML or JSON (`e`), after the export dialog.
    Export,
    /// Delete (`d`), after the confirmation dialog.
    Delete,
    /// Rename (`R`).
    Rename,
    /// Undo the last delete (`U`).
    UndoDelete,
    /// Mark read because the pane showed the last message (`mark_read_on_open`); not a key,
    /// so not in `ALL`.
    MarkRead,
}

impl SessionOp {
    pub const ALL: [SessionOp; 9] = [
        SessionOp::Resume,
        SessionOp::Fork,
        SessionOp::TogglePin,
        SessionOp::ToggleUnread,
        SessionOp::ToggleArchive,
        SessionOp::Export,
        SessionOp::Delete,
        SessionOp::Rename,
        SessionOp::UndoDelete,
    ];

    pub fn name(self) -> &'static str {
        match self {
            SessionOp::Resume => "resume",
            SessionOp::Fork => "fork",
            SessionOp::TogglePin => "pin",
            SessionOp::ToggleUnread => "unread",
            SessionOp::ToggleArchive => "archive",
            SessionOp::Export => "export",
            SessionOp::Delete => "delete",
            SessionOp::Rename => "rename",
            SessionOp::UndoDelete => "undo-delete",
            SessionOp::MarkRead => "mark-read",
        }
    }

    /// Done by spool on its own, not asked for by a key: it reports only failures and does
    /// not hold up the user's next operation.
    pub fn is_automatic(self) -> bool {
        self == SessionOp::MarkRead
    }
}

/// Which pane view to load.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum View {
    #[default]
    Transcript,
    Window,
    Raw,
}

impl View {
    pub fn next(self) -> View {
        match self {
            View::Transcript => View::Window,
            View::Window => View::Raw,
            View::Raw => View::Transcript,
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            View::Transcript => "transcript",
            View::Window => "window",
            View::Raw => "raw",
        }
    }
}

/// What the run loop must do after an update.
#[derive(Clone, Debug, PartialEq)]
pub enum Effect {
    /// Load `view` of `summary` (for `Span::LastRounds(rounds)` when `rounds` is `Some`),
    /// answering with `Action::Loaded { token, .. }`.
    Load {
        token: u64,
        summary: Box<SessionSummary>,
        view: View,
        rounds: Option<usize>,
    },
    /// Perform `op` on the session (the seam to the store writers and resume).
    Session {
        op: SessionOp,
        summary: Box<SessionSummary>,
        input: OpInput,
    },
    /// Search the index for `query` among the sessions `filter` accepts, answering with
    /// `Action::TextResults { token, .. }`.
    TextQuery {
        token: u64,
        query: TextQuery,
        filter: Filter,
    },
    /// Leave the browser.
    Quit,
}

/// What an operation needs beyond the session, gathered by the browser (dialogs, the pane).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub enum OpInput {
    #[default]
    None,
    /// Fork: `Some(i)` cuts before stored message `i` ("fork from here"), `None` = whole.
    ForkAt(Option<usize>),
    /// Rename: the new title.
    Title(String),
    /// Export: format and the file to create.
    Export { format: Format, path: PathBuf },
    /// Resume: the checks before resume ran, and the user confirmed what they found.
    Checked,
    /// Resume or fork a thread the agent archived: the user confirmed that the agent
    /// unarchives it first (Codex's `codex unarchive`).
    UnarchiveFirst,
}

/// The result of a session operation, as the run loop reports it back to the app.
#[derive(Clone, Debug, Default)]
pub struct Outcome {
    /// One sentence for the status bar (success or the reason it failed).
    pub message: String,
    /// Rows re-read after the write, shown at once.
    pub rows: Vec<SessionSummary>,
    /// Sessions that are gone.
    pub removed: Vec<Key>,
    /// Select this session as soon as it is listed (a fork, an undone delete).
    pub select: Option<Key>,
    /// A delete that `U` can undo.
    pub undoable: Option<SessionSummary>,
    /// The answer to an automatic operation (`SessionOp::is_automatic`).
    pub automatic: bool,
    /// When the operation finished: background re-reads begun before it are stale.
    pub finished: Option<std::time::Instant>,
}

impl Outcome {
    /// Only a sentence (failures, and operations that change nothing listed).
    pub fn message(m: impl Into<String>) -> Outcome {
        Outcome {
            message: m.into(),
            ..Outcome::default()
        }
    }
}
