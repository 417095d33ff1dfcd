//! The text search (`s`) over every session's messages and the find in the pane (`/` while
//! the pane has focus): their query boxes, the newest request's token (older answers are
//! dropped), the result rows, opening a hit at its message, and `n` / `N`.

use super::action::{Action, Edit, Effect, View};
use super::find::Jump;
use super::line_input::LineInput;
use super::pane::ALL_ROUNDS;
use super::{App, Focus, thousands};
use crate::search::Key;
use crate::search::index::Hit;
use crate::search::query::TextQuery;

/// Sessions a text search asks the index for.
pub const TEXT_LIMIT: usize = 200;

/// An open text search: while it is open the sidebar shows its results instead of the list.
#[derive(Clone, Debug, Default)]
pub struct TextSearch {
    pub input: LineInput,
    /// The newest request; answers with another token are stale.
    pub token: u64,
    /// An answer is outstanding.
    pub searching: bool,
    /// Best first: relevance, then recency (the index's order).
    pub hits: Vec<Hit>,
    pub cursor: usize,
    /// First result row shown.
    pub offset: usize,
    /// The hit the pane shows (session and message), so moving back to it or an answer
    /// that keeps it on top does not load it again.
    pub previewed: Option<(Key, Option<usize>)>,
}

impl TextSearch {
    /// Words and phrases to highlight in the pane for this query.
    pub fn terms(&self) -> Vec<String> {
        TextQuery::parse(&self.input.text())
            .map(|q| q.required)
            .unwrap_or_default()
    }

    fn move_by(&mut self, delta: isize) {
        let last = self.hits.len().saturating_sub(1);
        self.cursor = self.cursor.saturating_add_signed(delta).min(last);
    }

    /// Keep the cursor's row among the `rows` shown.
    pub fn scroll_into_view(&mut self, rows: usize) {
        if self.cursor < self.offset {
            self.offset = self.cursor;
        } else if self.cursor >= self.offset + rows {
            self.offset = self.cursor + 1 - rows;
        }
    }
}

impl App {
    /// Whether the text search or the find takes `a` (their query boxes, their answers).
    pub(super) fn search_takes(&self, a: &Action) -> bool {
        let typing = matches!(
            a,
            Action::SearchInput(_)
                | Action::SearchBackspace
                | Action::SearchAccept
                | Action::Edit(_)
                | Action::Paste(_)
                | Action::Back
        );
        if a.is_index_news() {
            return true;
        }
        match self.focus {
            Focus::Find => typing,
            Focus::Text => {
                typing
                    || matches!(
                        a,
                        Action::Down
                            | Action::Up
                            | Action::PageDown
                            | Action::PageUp
                            | Action::ToggleFocus
                    )
            }
            Focus::Pane if matches!(a, Action::Back) => {
                self.pane.find.is_active() || self.text.is_some()
            }
            Focus::Pane if matches!(a, Action::ToggleFocus) => self.text.is_some(),
            Focus::Pane if matches!(a, Action::FocusSearch) => self.pane.key.is_some(),
            Focus::List if matches!(a, Action::Back) => self.text.is_some(),
            _ => matches!(a, Action::TextSearch | Action::FindNext | Action::FindPrev),
        }
    }

    /// Carry out an action `search_takes`.
    pub(super) fn search_action(&mut self, a: Action, fx: &mut Vec<Effect>) {
        match a {
            Action::FocusSearch => {
                self.find_input = LineInput::default();
                self.focus = Focus::Find;
            }
            Action::TextSearch => {
                self.text.get_or_insert_with(TextSearch::default);
                self.focus = Focus::Text;
            }
            Action::SearchInput(c) => self.edit_field(Edit::Insert(c), fx),
            Action::SearchBackspace => self.edit_field(Edit::Backspace, fx),
            Action::Edit(e) => self.edit_field(e, fx),
            Action::Paste(s) => {
                let s = crate::text::one_line(&s);
                if let Some(i) = self.field() {
                    i.paste(&s);
                }
                self.text_changed(fx);
            }
            Action::SearchAccept if self.focus == Focus::Find => self.find_accept(fx),
            Action::SearchAccept => self.open_hit(fx),
            Action::Back => match self.focus {
                Focus::Find => self.focus = Focus::Pane,
                Focus::Pane if self.pane.find.is_active() => {
                    self.pane.find.clear();
                    self.pane.refresh();
                }
                Focus::Pane => self.focus = Focus::Text,
                _ => {
                    // The pane goes back to the list's selection (`follow_selection`).
                    if self.text.take().is_some_and(|t| t.previewed.is_some()) {
                        self.pane.close();
                    }
                    self.focus = Focus::List;
                }
            },
            Action::Down => self.move_hits(1),
            Action::Up => self.move_hits(-1),
            Action::PageDown => self.move_hits(self.list_rows_visible() as isize),
            Action::PageUp => self.move_hits(-(self.list_rows_visible() as isize)),
            Action::ToggleFocus if self.focus == Focus::Pane => self.focus = Focus::Text,
            Action::ToggleFocus if self.pane.key.is_some() => self.focus = Focus::Pane,
            Action::FindNext => self.find_step(true),
            Action::FindPrev => self.find_step(false),
            Action::TextResults { token, hits } => {
                if let Some(t) = self.text.as_mut().filter(|t| t.token == token) {
                    // A session deleted since it was indexed is not offered, nor one the
                    // filters hide now (archived since: the index's row is older).
                    let list = &self.list;
                    t.hits = hits
                        .into_iter()
                        .filter(|h| list.get(&h.key).is_some_and(|s| list.filter.accepts(s)))
                        .collect();
                    // Asked again after the index caught up: the cursor stays on its session.
                    let was = t.previewed.as_ref().map(|p| &p.0);
                    t.cursor = was
                        .and_then(|k| t.hits.iter().position(|h| &h.key == k))
                        .unwrap_or(0);
                    t.offset = t.offset.min(t.cursor);
                    t.searching = false;
                }
            }
            Action::IndexCommitted { done, total } => {
                if done >= total {
                    self.indexing = None;
                }
                // Whatever the open search was answered from (an index still being built, or
                // one whose first pass had not started), more is searchable now.
                if self.text.is_some() {
                    self.text_changed(fx);
                }
            }
            Action::IndexProgress { done, total } => {
                self.indexing = (done < total).then_some((done, total));
                // A pass that indexed something ended: an open search is asked again, so
                // text appended while it is open shows up without retyping.
                if done == total && total > 0 && self.text.is_some() {
                    self.text_changed(fx);
                }
            }
            _ => {}
        }
    }

    /// The text field that has the keyboard.
    fn field(&mut self) -> Option<&mut LineInput> {
        match self.focus {
            Focus::Find => Some(&mut self.find_input),
            Focus::Text => self.text.as_mut().map(|t| &mut t.input),
            _ => None,
        }
    }

    fn edit_field(&mut self, e: Edit, fx: &mut Vec<Effect>) {
        if let Some(i) = self.field() {
            i.apply(e);
        }
        self.text_changed(fx);
    }

    pub(super) fn move_hits(&mut self, delta: isize) {
        if let Some(t) = self.text.as_mut() {
            t.move_by(delta);
        }
    }

    /// Ask the index again when the text query changed (cursor moves ask nothing).
    pub(super) fn text_changed(&mut self, fx: &mut Vec<Effect>) {
        let Some(t) = self.text.as_mut() else { return };
        let Ok(query) = TextQuery::parse(&t.input.text()) else {
            t.hits.clear();
            t.searching = false;
            return;
        };
        self.next_token += 1;
        t.token = self.next_token;
        t.searching = true;
        fx.push(Effect::TextQuery {
            token: t.token,
            query,
            filter: self.list.filter.clone(),
        });
    }

    /// Enter on a result: its session in the pane (previewed already, unless the layout is
    /// narrow), focused.
    fn open_hit(&mut self, fx: &mut Vec<Effect>) {
        let Some(t) = &self.text else { return };
        if t.hits.get(t.cursor).is_none() {
            return;
        }
        self.focus = Focus::Pane;
        self.follow_hit(fx);
    }

    /// Keep the pane on the result under the cursor, as the list's preview does: the whole
    /// history, at the hit's message, the query's words highlighted. With no result for a
    /// query, the pane is emptied (not left on a session that does not match).
    pub(super) fn follow_hit(&mut self, fx: &mut Vec<Effect>) {
        let Some(t) = &self.text else { return };
        // In the narrow layout the pane is not on screen until Enter.
        if self.narrow() && self.focus != Focus::Pane {
            return;
        }
        let Some(h) = t.hits.get(t.cursor) else {
            if !t.searching && !t.input.text().trim().is_empty() && self.pane.key.is_some() {
                self.pane.close();
                if let Some(t) = self.text.as_mut() {
                    t.previewed = None;
                }
                if self.focus == Focus::Pane {
                    self.focus = Focus::Text;
                }
            }
            return;
        };
        let want = (h.key.clone(), h.message);
        // Shown already; or shown and being read (the search asked again after the index
        // caught up, and its best message moved): the pane is not scrolled from under it.
        let shown = t.previewed.as_ref().filter(|p| p.0 == want.0);
        if self.pane.key.as_ref() == Some(&want.0)
            && shown.is_some_and(|p| p.1 == want.1 || self.focus == Focus::Pane)
        {
            return;
        }
        let terms = t.terms();
        self.pane.view = View::Transcript;
        self.pane.show(want.0.clone());
        self.pane.rounds = ALL_ROUNDS;
        // A title-only hit lands on the first match.
        self.pane
            .find
            .start(&terms, Jump::Message(want.1.unwrap_or(0)));
        if let Some(t) = self.text.as_mut() {
            t.previewed = Some(want);
        }
        self.request(fx, true);
    }

    /// Enter in the find box: look for what was typed from the top row in view, reading the
    /// whole history first when only its last rounds are loaded.
    fn find_accept(&mut self, fx: &mut Vec<Effect>) {
        self.focus = Focus::Pane;
        let q = self.find_input.text();
        if q.trim().is_empty() {
            return;
        }
        let from_bottom = self.pane.total_lines().saturating_sub(self.pane.scroll);
        self.pane.find.start(&[q], Jump::FromBottom(from_bottom));
        self.pane.refresh();
        let partial = self.pane.has_more_above();
        if partial && self.pane.rounds != ALL_ROUNDS {
            self.pane.rounds = ALL_ROUNDS;
            self.request(fx, false);
        }
    }

    /// `n` / `N`: the next or previous match, wrapping with a note.
    fn find_step(&mut self, forward: bool) {
        if !self.pane.find.is_active() {
            self.status = Some("no find: / in the pane looks for text".into());
            return;
        }
        let Some((line, wrapped)) = self.pane.find.step(forward) else {
            self.status = Some("pattern not found".into());
            return;
        };
        self.pane.scroll_to_line(line);
        self.pane.refresh();
        let n = self.pane.find.matches.len();
        let at = self.pane.find.current.map_or(0, |c| c + 1);
        let of = format!("match {} of {}", thousands(at), thousands(n));
        self.status = Some(if wrapped {
            format!("search wrapped · {of}")
        } else {
            of
        });
    }

    /// After a layout made a find's jump: say when it found nothing.
    pub(super) fn report_find(&mut self) {
        if std::mem::take(&mut self.pane.find.missed) {
            self.status = Some("pattern not found".into());
        }
    }

    /// The indexing line for the status bar while the background index catches up.
    pub fn indexing_text(&self) -> Option<String> {
        self.indexing
            .map(|(d, t)| format!("indexing {} / {}", thousands(d), thousands(t)))
    }
}
