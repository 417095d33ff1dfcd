//! The pane's side of the browser state: it follows the selection (one place notices the
//! selected session changed and asks for it), pages older rounds in, jumps to the first
//! message, and marks a session read once its last message has been on screen.

use super::action::{Effect, OpInput, SessionOp};
use super::pane::{ALL_ROUNDS, Content, ROUND_PAGE};
use super::{App, Focus};

impl App {
    /// The one place that keeps the pane on the selection: whatever moved it (a key, the
    /// matcher catching up with the query, rows arriving or leaving, an operation), the pane
    /// asks for the selected session. In the wide layout the pane previews the selection; in
    /// the narrow layout only while the pane is up (a fork selected from the pane).
    pub(super) fn follow_selection(&mut self, fx: &mut Vec<Effect>) {
        // An open text search decides what the pane shows: the result under its cursor.
        if self.text.is_some() {
            return self.follow_hit(fx);
        }
        if self.list.selected.is_some()
            && self.text.is_none()
            && !self.list.is_empty()
            && self.list.selected != self.pane.key
            && (!self.narrow() || self.focus == Focus::Pane)
        {
            self.open_selected(fx);
        }
    }

    /// Mark the pane's session read once its last message is on screen, as mail clients do
    /// (through the store's own read rule); once per message count, so `u` after it sticks.
    pub(super) fn mark_read_if_seen(&mut self, fx: &mut Vec<Effect>) {
        let body = self.areas().body;
        let shown = matches!(
            self.pane.content,
            Content::Transcript(_) | Content::Window(_)
        ) && body.width > 0
            && body.height > 0
            && self.pane.scroll + body.height as usize >= self.pane.total_lines();
        let Some(s) = self.pane_summary() else { return };
        if !self.mark_read_on_open
            || !shown
            || !s.unread
            || s.read_only
            || self.pane.marked_read_at == Some(s.messages)
        {
            return;
        }
        let mut s = s.clone();
        self.pane.marked_read_at = Some(s.messages);
        fx.push(Effect::Session {
            op: SessionOp::MarkRead,
            summary: Box::new(s.clone()),
            input: OpInput::None,
        });
        // The dot goes now; the store's re-read row confirms it.
        s.unread = false;
        self.list.upsert(vec![s]);
    }

    /// Focus the pane on the selected session (Enter).
    pub(super) fn open(&mut self, fx: &mut Vec<Effect>) {
        self.list.keep_selection();
        if self.list.selected.is_some() {
            self.focus = Focus::Pane;
            self.follow_selection(fx);
        }
    }

    /// At the top of a paged transcript: ask for more rounds (once per outstanding request).
    pub(super) fn maybe_more(&mut self, fx: &mut Vec<Effect>) {
        if self.pane.scroll == 0
            && !self.pane.follow
            && self.pane.has_more_above()
            && !self.pane.loading
        {
            self.pane.rounds = self.pane.rounds.saturating_add(ROUND_PAGE);
            self.request(fx, false);
        }
    }

    /// `g` in the pane: the first message, whatever was loaded. A paged transcript is read
    /// from the start in one request (paging back 20 rounds a press took four presses for
    /// 62 rounds), and the view stays at the top when it arrives.
    pub(super) fn pane_top(&mut self, fx: &mut Vec<Effect>) {
        self.pane.scroll = 0;
        self.pane.follow = false;
        let partial = self.pane.has_more_above() || matches!(self.pane.content, Content::Empty);
        if partial && self.pane.rounds != ALL_ROUNDS {
            self.pane.rounds = ALL_ROUNDS;
            self.pane.want_top = true;
            self.request(fx, false);
        }
    }

    pub(super) fn open_selected(&mut self, fx: &mut Vec<Effect>) {
        if let Some(k) = self.list.selected.clone() {
            self.pane.show(k);
            self.request(fx, true);
        }
    }

    /// Ask the loader for the pane's session and view with a fresh token.
    pub(super) fn request(&mut self, fx: &mut Vec<Effect>, reset: bool) {
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
        // Every view pages from its end (the loader turns rounds into messages or bytes).
        let rounds = (self.pane.rounds != ALL_ROUNDS).then_some(self.pane.rounds);
        fx.push(Effect::Load {
            token: self.pane.token,
            summary: Box::new(summary.clone()),
            view: self.pane.view,
            rounds,
        });
    }
}
