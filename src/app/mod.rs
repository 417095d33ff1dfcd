//! Browser state. Everything changes through `App::update(Action)`, which returns the
//! `Effect`s the run loop performs; no I/O and no terminal here, so tests drive it directly.

pub mod action;
mod card;
pub mod dialog;
pub mod doc;
pub mod find;
pub mod keymap;
mod layout;
pub mod line_input;
pub mod list;
mod mouse;
mod ops;
pub mod overlay;
pub mod pane;
mod preview;
mod status;
pub mod text_search;
pub mod timefmt;
pub mod tool_args;
mod units;

use std::collections::VecDeque;
use std::sync::Arc;

use chrono::{DateTime, Utc};

pub use action::{Action, Edit, Effect, Loaded, OpInput, Outcome, SessionOp, View};
pub use dialog::Dialog;
pub use keymap::{Ctx, Keymap};
pub use layout::Areas;
pub use line_input::LineInput;
use list::List;
pub use list::Slot;
pub use overlay::Overlay;
use pane::Pane;
pub use timefmt::TimeFmt;
pub use units::{age, thousands};

use crate::model::StoreKind;
use crate::search::Key;
use crate::store::registry::Filter;

/// Below this width the list and the pane are shown one at a time.
pub const NARROW: u16 = 100;
/// Screen rows per list row (title line + detail line).
pub const ROW_H: u16 = 2;
/// Rows of the pane header.
pub const HEADER_H: u16 = 5;
pub const MIN_SIDEBAR: u16 = 24;

/// Which part has the keyboard.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Focus {
    List,
    Search,
    Pane,
    /// Typing in the text search's query box (`s`); its results replace the list.
    Text,
    /// Typing what to find in the pane (`/` while the pane has focus).
    Find,
}

/// Listing progress of one store.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Progress {
    pub kind: StoreKind,
    pub done: usize,
    pub total: usize,
    pub finished: bool,
}

/// How the app starts.
pub struct Options {
    pub now: DateTime<Utc>,
    /// The directory spool was started in (for the `c` project filter).
    pub cwd: Option<String>,
    pub keymap: Keymap,
    pub filter: Filter,
    pub sidebar_width: u16,
    /// Mark a session read once the pane has shown its last message.
    pub mark_read_on_open: bool,
    /// The zone times are shown in (local in the browser, UTC in tests).
    pub time: TimeFmt,
    /// Called by the matcher when it has new results (the run loop wakes up).
    pub notify: Arc<dyn Fn() + Sync + Send>,
    /// The session directories read, for the "no sessions" screen (`store  path`).
    pub searched: Vec<String>,
}

impl Options {
    /// Defaults for tests and `--demo`: fixed time given, no cwd, default keys.
    pub fn new(now: DateTime<Utc>) -> Options {
        Options {
            now,
            cwd: None,
            keymap: Keymap::default(),
            filter: Filter::default(),
            sidebar_width: 46,
            mark_read_on_open: true,
            time: TimeFmt::utc(),
            notify: Arc::new(|| {}),
            searched: Vec::new(),
        }
    }
}

/// The whole browser state.
pub struct App {
    /// "Now" for relative ages; the run loop refreshes it, tests fix it.
    pub now: DateTime<Utc>,
    pub cwd: Option<String>,
    pub keymap: Keymap,
    pub list: List,
    pub pane: Pane,
    pub focus: Focus,
    /// The search query being typed (the list matches on its text).
    pub query: LineInput,
    /// The open overlay (help or message log) and how far it is scrolled.
    pub overlay: Option<Overlay>,
    pub overlay_scroll: usize,
    pub sidebar_width: u16,
    pub size: (u16, u16),
    pub progress: Vec<Progress>,
    /// One-line message for the status bar (results of session operations); it expires
    /// (see `status.rs`).
    pub status: Option<String>,
    /// When `status` appeared (app clock).
    pub status_at: DateTime<Utc>,
    /// The last status messages, oldest first.
    pub log: VecDeque<String>,
    /// The session directories read (for the "no sessions" screen).
    pub searched: Vec<String>,
    /// The open dialog (delete confirmation, rename prompt, export); it takes every key.
    pub dialog: Option<Dialog>,
    /// A session operation is running (its `OpDone` has not arrived): a second one would
    /// act on the row as it was before the first, so it waits.
    pub op_pending: bool,
    /// When this process last wrote each session (an operation's re-read row): older
    /// background re-reads of it are dropped (`Action::Reread`).
    written: std::collections::HashMap<Key, std::time::Instant>,
    /// The last delete `U` can undo (loom keeps a trash).
    pub last_deleted: Option<crate::model::SessionSummary>,
    /// Mark a session read once the pane has shown its last message (config).
    pub mark_read_on_open: bool,
    /// The open text search (`s`), whose results the sidebar shows.
    pub text: Option<text_search::TextSearch>,
    /// What is being typed in the pane's find box.
    pub find_input: LineInput,
    /// Background indexing: (done, total) while it runs.
    pub indexing: Option<(usize, usize)>,
    next_token: u64,
    pub quit: bool,
}

impl App {
    pub fn new(o: Options) -> App {
        App {
            now: o.now,
            cwd: o.cwd,
            keymap: o.keymap,
            list: List::new(o.filter, o.notify),
            pane: Pane::new(o.time),
            focus: Focus::List,
            query: LineInput::default(),
            overlay: None,
            overlay_scroll: 0,
            sidebar_width: o.sidebar_width,
            size: (120, 40),
            progress: Vec::new(),
            status: None,
            status_at: o.now,
            log: VecDeque::new(),
            searched: o.searched,
            dialog: None,
            op_pending: false,
            written: Default::default(),
            last_deleted: None,
            mark_read_on_open: o.mark_read_on_open,
            text: None,
            find_input: LineInput::default(),
            indexing: None,
            next_token: 0,
            quit: false,
        }
    }

    /// The keymap context for the current state.
    pub fn ctx(&self) -> Ctx {
        if let Some(d) = &self.dialog {
            if d.has_input() {
                Ctx::Prompt
            } else {
                Ctx::Confirm
            }
        } else if self.overlay.is_some() {
            Ctx::Help
        } else if matches!(self.focus, Focus::Search | Focus::Text | Focus::Find) {
            Ctx::Search
        } else {
            Ctx::Browse
        }
    }

    pub fn narrow(&self) -> bool {
        self.size.0 < NARROW
    }

    pub fn list_rows_visible(&self) -> usize {
        (self.areas().list.height / ROW_H).max(1) as usize
    }

    fn body_height(&self) -> usize {
        self.areas().body.height.max(1) as usize
    }

    /// Wrap the pane for the current body width (cached) and clamp scrolls.
    pub fn layout(&mut self) {
        let a = self.areas();
        // Narrow layouts lay the pane out at full width even while it is hidden.
        let w = if a.body.width > 0 {
            a.body.width
        } else {
            self.size.0
        };
        self.pane.layout(w as usize);
        self.pane.clamp(self.body_height());
        let rows = self.list_rows_visible();
        self.list.scroll_into_view(rows);
        if let Some(t) = self.text.as_mut() {
            t.scroll_into_view(rows);
        }
        if let Some(o) = self.overlay {
            let max = overlay::layout(self, o).max_scroll();
            self.overlay_scroll = self.overlay_scroll.min(max);
        }
    }

    /// Whether the pane is where movement keys go.
    fn pane_active(&self) -> bool {
        self.focus == Focus::Pane
    }

    /// The one entry point for state changes.
    pub fn update(&mut self, action: Action) -> Vec<Effect> {
        let mut fx = Vec::new();
        // The next key answers the last message: it leaves the footer (the log keeps it).
        if action.is_input() {
            self.status = None;
        }
        let status_before = self.status.clone();
        match action {
            // The text search and the find have their own query boxes and answers.
            // The index's news is taken under a dialog too: an open search dropped it.
            a if (self.dialog.is_none() || a.is_index_news()) && self.search_takes(&a) => {
                self.search_action(a, &mut fx)
            }
            Action::Quit => {
                self.quit = true;
                fx.push(Effect::Quit);
            }
            Action::ToggleHelp => self.toggle_overlay(Overlay::Help),
            Action::ToggleMessages => self.toggle_overlay(Overlay::Messages),
            Action::Back => self.back(),
            Action::FocusSearch => self.focus = Focus::Search,
            Action::SearchInput(c) => self.edit_query(Edit::Insert(c)),
            Action::Paste(s) if self.dialog.is_some() => {
                if let Some(i) = self.dialog.as_mut().and_then(Dialog::input_mut) {
                    i.paste(&s);
                }
            }
            Action::Paste(s) => {
                if self.focus != Focus::Search {
                    self.focus = Focus::Search;
                }
                self.query.paste(&crate::text::one_line(&s));
                self.list.set_query(&self.query.text());
            }
            Action::SearchBackspace => self.edit_query(Edit::Backspace),
            // Enter in the search box reads what it found (the list when nothing matched).
            Action::SearchAccept => {
                self.settle();
                self.focus = Focus::List;
                // With no match the selection is whatever it was before the query.
                if !self.list.is_empty() {
                    self.open(&mut fx);
                }
            }
            Action::Down => self.movement(1, &mut fx),
            Action::Up => self.movement(-1, &mut fx),
            Action::PageDown => self.movement(self.page() as isize, &mut fx),
            Action::PageUp => self.movement(-(self.page() as isize), &mut fx),
            Action::HalfPageDown => self.movement((self.page() / 2).max(1) as isize, &mut fx),
            Action::HalfPageUp => self.movement(-((self.page() / 2).max(1) as isize), &mut fx),
            Action::Top if self.pane_active() => self.pane_top(&mut fx),
            Action::Top => self.movement(isize::MIN / 2, &mut fx),
            Action::Bottom => self.movement(isize::MAX / 2, &mut fx),
            Action::Scroll { .. } | Action::Click { .. } if self.dialog.is_some() => {}
            Action::Open => self.open(&mut fx),
            Action::ToggleFocus => {
                self.list.keep_selection();
                self.focus = match self.focus {
                    Focus::Pane => Focus::List,
                    _ if self.list.selected.is_some() => Focus::Pane,
                    f => f,
                };
                if self.focus == Focus::Pane && self.pane.key != self.list.selected {
                    self.open_selected(&mut fx);
                }
            }
            Action::CycleView => {
                self.pane.view = self.pane.view.next();
                // Each view starts from its last page (a whole history read for one view
                // is not read again for the next).
                self.pane.rounds = pane::ROUND_PAGE;
                if self.pane.key.is_some() {
                    self.request(&mut fx, true);
                }
            }
            Action::ToggleExpand => {
                let h = self.body_height();
                self.pane.toggle_in_view(h);
            }
            Action::ToggleExpandAll => self.pane.toggle_all(),
            Action::ShrinkSidebar => {
                self.sidebar_width = self.sidebar_width.saturating_sub(4).max(MIN_SIDEBAR)
            }
            Action::GrowSidebar => {
                let max = self.size.0.saturating_sub(40).max(MIN_SIDEBAR);
                self.sidebar_width = (self.sidebar_width + 4).min(max);
            }
            Action::ToggleArchived => self.change_filter(&mut fx, |f| f.archived = !f.archived),
            Action::ToggleEmpty => self.change_filter(&mut fx, |f| f.empty = !f.empty),
            Action::ToggleCwd => {
                let cwd = self.cwd.clone();
                self.change_filter(&mut fx, |f| {
                    f.cwd = if f.cwd.is_some() { None } else { cwd }
                });
            }
            Action::ToggleInbox => {
                let on = !self.list.inbox;
                self.list.set_inbox(on);
                self.text_changed(&mut fx);
            }
            Action::ToggleCard => self.pane.toggle_card(),
            Action::ResumeChecked(s, r) => self.resume_checked(*s, r, &mut fx),
            Action::CycleStore => {
                let next = List::next_store(self.list.filter.format, |k| self.list.has_store(k));
                self.change_filter(&mut fx, |f| f.format = next);
            }
            Action::Session(op) => {
                // A key pressed right after typing a query acts on what the query selects,
                // not on the row that was on top before the matcher caught up.
                self.settle();
                self.session_op(op, &mut fx)
            }
            Action::DialogAccept => self.dialog_accept(&mut fx),
            Action::DialogCancel => {
                if self.dialog.take().is_some() {
                    self.status = Some("cancelled".into());
                }
            }
            Action::Edit(e) => {
                if let Some(i) = self.dialog.as_mut().and_then(Dialog::input_mut) {
                    i.apply(e);
                } else if self.focus == Focus::Search {
                    self.edit_query(e);
                }
            }
            Action::DialogCycle(forward) => {
                if let Some(d) = self.dialog.as_mut() {
                    d.cycle_format(forward);
                }
            }
            Action::Scroll { col, row, lines } => self.wheel(col, row, lines, &mut fx),
            Action::Click { col, row } => self.click(col, row, &mut fx),
            Action::Resize(w, h) => self.size = (w, h),
            Action::Rows(batch) => {
                let batch = batch.into_iter().map(std::sync::Arc::new).collect();
                self.take_rows(batch, &mut fx)
            }
            Action::Cached(batch) => self.take_rows(batch, &mut fx),
            Action::Prepared(h) => self.put_rows(|l| h.take().map(|p| l.install(p)), &mut fx),
            Action::Reread { mut rows, since } => {
                rows.retain(|r| {
                    self.written
                        .get(&(r.store, r.id.to_string()))
                        .is_none_or(|w| *w <= since)
                });
                self.take_rows(rows, &mut fx);
            }
            Action::Removed(keys) => self.list.remove(&keys),
            Action::Progress {
                store,
                kind,
                done,
                total,
                finished,
            } => {
                if self.progress.len() <= store {
                    self.progress.resize(
                        store + 1,
                        Progress {
                            kind,
                            done: 0,
                            total: 0,
                            finished: false,
                        },
                    );
                }
                self.progress[store] = Progress {
                    kind,
                    done,
                    total,
                    finished,
                };
            }
            Action::Loaded { token, content } => {
                // A closed pane takes no late answer.
                if token == self.pane.token && self.pane.key.is_some() {
                    self.pane.accept(content);
                }
            }
            Action::SessionChanged(k) => {
                if self.pane.key.as_ref() == Some(&k) {
                    self.request(&mut fx, false);
                }
            }
            Action::OpDone(outcome) => self.op_done(*outcome),
            Action::Tick => {
                self.list.tick(10);
                self.expire_status();
            }
            // Taken by `search_action` above.
            Action::TextSearch
            | Action::FindNext
            | Action::FindPrev
            | Action::TextResults { .. }
            | Action::IndexProgress { .. }
            | Action::IndexCommitted { .. } => {}
        }
        if self.pane.find.pending.is_some() {
            self.layout();
            self.report_find();
        }
        self.note_status(status_before);
        // With no rows (a query matching nothing) the pane shows no stale session; when
        // rows come back, `follow_selection` opens the selection again.
        if self.list.is_empty() && self.pane.key.is_some() && self.text.is_none() {
            self.pane.close();
            if self.focus == Focus::Pane {
                self.focus = Focus::List;
            }
        }
        self.follow_selection(&mut fx);
        self.layout();
        self.mark_read_if_seen(&mut fx);
        if fx
            .iter()
            .any(|f| matches!(f, Effect::Session { op, .. } if !op.is_automatic()))
        {
            self.op_pending = true;
        }
        fx
    }

    /// New or re-read rows: the pane reloads when its session was among them.
    fn take_rows(
        &mut self,
        batch: Vec<std::sync::Arc<crate::model::SessionSummary>>,
        fx: &mut Vec<Effect>,
    ) {
        if batch.is_empty() {
            return;
        }
        self.put_rows(|l| Some(l.upsert_shared(batch)), fx);
    }

    /// Rows go in with `put`: a row it replaced that the pane shows is loaded again.
    fn put_rows(&mut self, put: impl FnOnce(&mut List) -> Option<Vec<Key>>, fx: &mut Vec<Effect>) {
        let updated = put(&mut self.list).unwrap_or_default();
        if let Some(k) = &self.pane.key
            && updated.contains(k)
        {
            self.request(fx, false);
        }
    }

    fn page(&self) -> usize {
        if let Some(o) = self.overlay {
            overlay::layout(self, o).visible.saturating_sub(1).max(1)
        } else if self.pane_active() {
            self.body_height().saturating_sub(1).max(1)
        } else {
            self.list_rows_visible()
        }
    }

    fn movement(&mut self, delta: isize, fx: &mut Vec<Effect>) {
        if let Some(o) = self.overlay {
            let max = overlay::layout(self, o).max_scroll();
            self.overlay_scroll = self.overlay_scroll.saturating_add_signed(delta).min(max);
        } else if self.pane_active() {
            // Moving after `g` means the user no longer wants the top when it arrives.
            self.pane.want_top = false;
            let h = self.body_height();
            self.pane.layout(self.areas().body.width.max(1) as usize);
            self.pane.scroll_by(delta, h);
            self.maybe_more(fx);
        } else {
            self.list.move_by(delta);
        }
    }

    fn back(&mut self) {
        if self.overlay.is_some() {
            self.overlay = None;
        } else if self.focus == Focus::Search {
            self.clear_query();
            self.focus = Focus::List;
        } else if self.focus == Focus::Pane {
            self.focus = Focus::List;
        } else if !self.list.query().is_empty() {
            self.clear_query();
        }
    }

    /// Open `o`, or close it when it is the one open (another overlay is replaced).
    fn toggle_overlay(&mut self, o: Overlay) {
        if self.overlay == Some(o) {
            self.overlay = None;
        } else {
            self.overlay = Some(o);
            self.overlay_scroll = 0;
        }
    }

    fn edit_query(&mut self, e: Edit) {
        let old = self.query.text();
        self.query.apply(e);
        // Cursor moves do not restart the matcher (and keep the selection where it is).
        let q = self.query.text();
        if q != old {
            self.list.set_query(&q);
        }
    }

    fn clear_query(&mut self) {
        self.query = LineInput::default();
        self.list.set_query("");
    }

    /// Change the list's filter; an open text search asks again under it.
    fn change_filter(&mut self, fx: &mut Vec<Effect>, f: impl FnOnce(&mut Filter)) {
        let mut filter = self.list.filter.clone();
        f(&mut filter);
        self.list.set_filter(filter);
        self.text_changed(fx);
    }

    /// Whether a store is still being listed (the list may lack rows it will have); the
    /// full-text index building in the background is not that.
    pub fn reading_stores(&self) -> bool {
        !self.progress.is_empty() && !self.progress.iter().all(|p| p.finished)
    }

    /// Loading line for the status bar while any store is still being read.
    pub fn loading_text(&self) -> Option<String> {
        if !self.reading_stores() {
            return self.indexing_text();
        }
        let done: usize = self.progress.iter().map(|p| p.done).sum();
        let total: usize = self.progress.iter().map(|p| p.total).sum();
        Some(format!(
            "loading {} / {}",
            thousands(done),
            thousands(total)
        ))
    }

    /// The session the pane shows.
    pub fn pane_summary(&self) -> Option<&crate::model::SessionSummary> {
        self.pane.key.as_ref().and_then(|k| self.list.get(k))
    }

    /// Test helper and first-frame helper: tick the matcher until it is idle.
    pub fn settle(&mut self) {
        self.list.finish();
        self.list.repin();
        self.layout();
    }

    /// The key of the selected session.
    pub fn selected(&self) -> Option<&Key> {
        self.list.selected.as_ref()
    }
}
