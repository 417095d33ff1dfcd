//! Browser state. Everything changes through `App::update(Action)`, which returns the
//! `Effect`s the run loop performs; no I/O and no terminal here, so tests drive it directly.

pub mod action;
pub mod dialog;
pub mod doc;
pub mod keymap;
pub mod list;
mod ops;
pub mod pane;

use std::sync::Arc;

use chrono::{DateTime, Utc};
use ratatui::layout::Rect;

pub use action::{Action, Edit, Effect, Loaded, OpInput, Outcome, SessionOp, View};
pub use dialog::{Dialog, LineInput};
pub use keymap::{Ctx, Keymap};
use list::List;
use pane::{Pane, ROUND_PAGE};

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
}

/// Listing progress of one store.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Progress {
    pub kind: StoreKind,
    pub done: usize,
    pub total: usize,
    pub finished: bool,
}

/// Screen areas, derived from the size, focus and sidebar width (zero-sized when hidden).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Areas {
    pub search: Rect,
    pub list: Rect,
    /// The column between sidebar and pane.
    pub divider: Rect,
    pub header: Rect,
    pub body: Rect,
    pub status: Rect,
}

/// How the app starts.
pub struct Options {
    pub now: DateTime<Utc>,
    /// The directory spool was started in (for the `c` project filter).
    pub cwd: Option<String>,
    pub keymap: Keymap,
    pub filter: Filter,
    pub sidebar_width: u16,
    /// Called by the matcher when it has new results (the run loop wakes up).
    pub notify: Arc<dyn Fn() + Sync + Send>,
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
            notify: Arc::new(|| {}),
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
    pub help: bool,
    pub sidebar_width: u16,
    pub size: (u16, u16),
    pub progress: Vec<Progress>,
    /// One-line message for the status bar (results of session operations).
    pub status: Option<String>,
    /// The open dialog (delete confirmation, rename prompt, export); it takes every key.
    pub dialog: Option<Dialog>,
    /// A session operation is running (its `OpDone` has not arrived): a second one would
    /// act on the row as it was before the first, so it waits.
    pub op_pending: bool,
    /// The last delete `U` can undo (loom keeps a trash).
    pub last_deleted: Option<crate::model::SessionSummary>,
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
            pane: Pane::default(),
            focus: Focus::List,
            help: false,
            sidebar_width: o.sidebar_width,
            size: (120, 40),
            progress: Vec::new(),
            status: None,
            dialog: None,
            op_pending: false,
            last_deleted: None,
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
        } else if self.help {
            Ctx::Help
        } else if self.focus == Focus::Search {
            Ctx::Search
        } else {
            Ctx::Browse
        }
    }

    pub fn narrow(&self) -> bool {
        self.size.0 < NARROW
    }

    /// Screen areas for the current size and focus.
    pub fn areas(&self) -> Areas {
        let (w, h) = self.size;
        let main_h = h.saturating_sub(1);
        let status = Rect::new(0, main_h, w, h.min(1));
        let (side, pane) = if self.narrow() {
            if self.focus == Focus::Pane {
                (Rect::default(), Rect::new(0, 0, w, main_h))
            } else {
                (Rect::new(0, 0, w, main_h), Rect::default())
            }
        } else {
            let sw = self
                .sidebar_width
                .clamp(MIN_SIDEBAR, w.saturating_sub(40).max(MIN_SIDEBAR));
            (
                Rect::new(0, 0, sw, main_h),
                Rect::new(sw + 1, 0, w.saturating_sub(sw + 1), main_h),
            )
        };
        let divider = if side.width > 0 && pane.width > 0 {
            Rect::new(side.width, 0, 1, main_h)
        } else {
            Rect::default()
        };
        let search = Rect::new(side.x, side.y, side.width, side.height.min(1));
        let list = Rect::new(
            side.x,
            side.y + search.height,
            side.width,
            side.height.saturating_sub(search.height),
        );
        let hh = HEADER_H.min(pane.height);
        let header = Rect::new(pane.x, pane.y, pane.width, hh);
        let body = Rect::new(pane.x, pane.y + hh, pane.width, pane.height - hh);
        Areas {
            search,
            list,
            divider,
            header,
            body,
            status,
        }
    }

    fn list_rows_visible(&self) -> usize {
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
    }

    /// Whether the pane is where movement keys go.
    fn pane_active(&self) -> bool {
        self.focus == Focus::Pane
    }

    /// The one entry point for state changes.
    pub fn update(&mut self, action: Action) -> Vec<Effect> {
        let mut fx = Vec::new();
        let before = self.list.selected.clone();
        match action {
            Action::Quit => {
                self.quit = true;
                fx.push(Effect::Quit);
            }
            Action::ToggleHelp => self.help = !self.help,
            Action::Back => self.back(),
            Action::FocusSearch => self.focus = Focus::Search,
            Action::SearchInput(c) => self.edit_query(|q| q.push(c)),
            Action::Paste(s) if self.dialog.is_some() => {
                if let Some(i) = self.dialog.as_mut().and_then(Dialog::input_mut) {
                    i.paste(&s);
                }
            }
            Action::Paste(s) => {
                if self.focus != Focus::Search {
                    self.focus = Focus::Search;
                }
                let s = crate::text::one_line(&s);
                self.edit_query(|q| q.push_str(&s));
            }
            Action::SearchBackspace => self.edit_query(|q| {
                q.pop();
            }),
            Action::SearchAccept => self.focus = Focus::List,
            Action::Down => self.movement(1, &mut fx),
            Action::Up => self.movement(-1, &mut fx),
            Action::PageDown => self.movement(self.page() as isize, &mut fx),
            Action::PageUp => self.movement(-(self.page() as isize), &mut fx),
            Action::HalfPageDown => self.movement((self.page() / 2).max(1) as isize, &mut fx),
            Action::HalfPageUp => self.movement(-((self.page() / 2).max(1) as isize), &mut fx),
            Action::Top => self.movement(isize::MIN / 2, &mut fx),
            Action::Bottom => self.movement(isize::MAX / 2, &mut fx),
            Action::Scroll { .. } | Action::Click { .. } if self.dialog.is_some() => {}
            Action::Open => {
                self.list.keep_selection();
                if self.list.selected.is_some() {
                    self.focus = Focus::Pane;
                    if self.pane.key != self.list.selected {
                        self.open_selected(&mut fx);
                    }
                }
            }
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
                if self.pane.key.is_some() {
                    self.request(&mut fx, true);
                }
            }
            Action::ToggleExpand => self.pane.set_expanded(!self.pane.expanded),
            Action::ShrinkSidebar => {
                self.sidebar_width = self.sidebar_width.saturating_sub(4).max(MIN_SIDEBAR)
            }
            Action::GrowSidebar => {
                let max = self.size.0.saturating_sub(40).max(MIN_SIDEBAR);
                self.sidebar_width = (self.sidebar_width + 4).min(max);
            }
            Action::ToggleArchived => self.change_filter(|f| f.archived = !f.archived),
            Action::ToggleEmpty => self.change_filter(|f| f.empty = !f.empty),
            Action::ToggleCwd => {
                let cwd = self.cwd.clone();
                self.change_filter(|f| f.cwd = if f.cwd.is_some() { None } else { cwd });
            }
            Action::CycleStore => {
                let next = List::next_store(self.list.filter.format, |k| self.list.has_store(k));
                self.change_filter(|f| f.format = next);
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
            Action::DialogEdit(e) => {
                if let Some(i) = self.dialog.as_mut().and_then(Dialog::input_mut) {
                    i.apply(e);
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
                let updated = self.list.upsert(batch);
                if let Some(k) = &self.pane.key
                    && updated.contains(k)
                {
                    self.request(&mut fx, false);
                }
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
                if token == self.pane.token {
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
            }
        }
        if fx.iter().any(|f| matches!(f, Effect::Session { .. })) {
            self.op_pending = true;
        }
        // In the wide layout the pane previews the selection.
        // In the narrow layout only while the pane is up (a fork selected from the pane).
        if self.list.selected != before
            && (!self.narrow() || self.focus == Focus::Pane)
            && self.list.selected.is_some()
        {
            self.open_selected(&mut fx);
        }
        self.layout();
        fx
    }

    fn page(&self) -> usize {
        if self.pane_active() {
            self.body_height().saturating_sub(1).max(1)
        } else {
            self.list_rows_visible()
        }
    }

    fn movement(&mut self, delta: isize, fx: &mut Vec<Effect>) {
        if self.pane_active() {
            let h = self.body_height();
            self.pane.layout(self.areas().body.width.max(1) as usize);
            self.pane.scroll_by(delta, h);
            self.maybe_more(fx);
        } else {
            self.list.move_by(delta);
        }
    }

    /// At the top of a paged transcript: ask for more rounds (once per outstanding request).
    fn maybe_more(&mut self, fx: &mut Vec<Effect>) {
        if self.pane.scroll == 0
            && !self.pane.follow
            && self.pane.view == View::Transcript
            && self.pane.has_more_above()
            && !self.pane.loading
        {
            self.pane.rounds += ROUND_PAGE;
            self.request(fx, false);
        }
    }

    fn back(&mut self) {
        if self.help {
            self.help = false;
        } else if self.focus == Focus::Search {
            self.edit_query(String::clear);
            self.focus = Focus::List;
        } else if self.focus == Focus::Pane {
            self.focus = Focus::List;
        } else if !self.list.query().is_empty() {
            self.edit_query(String::clear);
        }
    }

    fn edit_query(&mut self, f: impl FnOnce(&mut String)) {
        let mut q = self.list.query().to_string();
        f(&mut q);
        self.list.set_query(&q);
    }

    fn change_filter(&mut self, f: impl FnOnce(&mut Filter)) {
        let mut filter = self.list.filter.clone();
        f(&mut filter);
        self.list.set_filter(filter);
    }

    fn open_selected(&mut self, fx: &mut Vec<Effect>) {
        if let Some(k) = self.list.selected.clone() {
            self.pane.show(k);
            self.request(fx, true);
        }
    }

    /// Ask the loader for the pane's session and view with a fresh token.
    fn request(&mut self, fx: &mut Vec<Effect>, reset: bool) {
        let Some(summary) = self.pane.key.as_ref().and_then(|k| self.list.get(k)) else {
            return;
        };
        if reset {
            self.pane.scroll = 0;
            self.pane.follow = true;
        }
        self.next_token += 1;
        self.pane.token = self.next_token;
        self.pane.loading = true;
        let rounds = (self.pane.view == View::Transcript).then_some(self.pane.rounds);
        fx.push(Effect::Load {
            token: self.pane.token,
            summary: Box::new(summary.clone()),
            view: self.pane.view,
            rounds,
        });
    }

    fn wheel(&mut self, col: u16, row: u16, lines: i32, fx: &mut Vec<Effect>) {
        let a = self.areas();
        let p = ratatui::layout::Position::new(col, row);
        if a.list.contains(p) {
            self.list.move_by(lines as isize);
        } else if a.body.contains(p) || a.header.contains(p) {
            let h = self.body_height();
            self.pane.scroll_by(lines as isize, h);
            self.maybe_more(fx);
        }
    }

    fn click(&mut self, col: u16, row: u16, fx: &mut Vec<Effect>) {
        let a = self.areas();
        let p = ratatui::layout::Position::new(col, row);
        if a.list.contains(p) {
            let r = ((row - a.list.y) / ROW_H) as usize + self.list.offset;
            if r < self.list.len() {
                self.list.select_row(r);
                self.focus = Focus::List;
            }
        } else if a.search.contains(p) {
            self.focus = Focus::Search;
        } else if (a.body.contains(p) || a.header.contains(p)) && self.pane.key.is_some() {
            self.focus = Focus::Pane;
        }
        let _ = fx;
    }

    /// Loading line for the status bar while any store is still being read.
    pub fn loading_text(&self) -> Option<String> {
        if self.progress.is_empty() || self.progress.iter().all(|p| p.finished) {
            return None;
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
        for _ in 0..1000 {
            if !self.list.tick(10) {
                break;
            }
        }
        self.list.repin();
        self.layout();
    }

    /// The key of the selected session.
    pub fn selected(&self) -> Option<&Key> {
        self.list.selected.as_ref()
    }
}

/// `1234567` → `1,234,567`.
pub fn thousands(n: usize) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Relative age: `now`, `5m`, `3h`, `2d`, `3w`, `4mo`, `2y`.
pub fn age(now: DateTime<Utc>, t: Option<DateTime<Utc>>) -> String {
    let Some(t) = t else { return "-".into() };
    let s = (now - t).num_seconds().max(0);
    match s {
        0..60 => "now".into(),
        60..3600 => format!("{}m", s / 60),
        3600..86400 => format!("{}h", s / 3600),
        86400..604800 => format!("{}d", s / 86400),
        604800..2592000 => format!("{}w", s / 604800),
        2592000..31536000 => format!("{}mo", s / 2592000),
        _ => format!("{}y", s / 31536000),
    }
}
