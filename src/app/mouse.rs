//! The mouse on the app side: the wheel scrolls what is under the pointer, a click selects a
//! row or focuses the part it lands in (dialogs swallow both, see `App::update`).

use ratatui::layout::Position;

use super::{App, Effect, Focus, ROW_H};

impl App {
    pub(super) fn wheel(&mut self, col: u16, row: u16, lines: i32, fx: &mut Vec<Effect>) {
        if self.overlay.is_some() {
            return self.movement(lines as isize, fx);
        }
        let a = self.areas();
        let p = Position::new(col, row);
        if a.list.contains(p) && self.text.is_some() {
            self.move_hits(lines as isize);
        } else if a.list.contains(p) {
            self.list.move_by(lines as isize);
        } else if a.body.contains(p) || a.header.contains(p) || a.card.contains(p) {
            let h = self.body_height();
            self.pane.scroll_by(lines as isize, h);
            self.maybe_more(fx);
        }
    }

    pub(super) fn click(&mut self, col: u16, row: u16, fx: &mut Vec<Effect>) {
        let a = self.areas();
        let p = Position::new(col, row);
        if let Some(t) = self
            .text
            .as_mut()
            .filter(|_| a.list.contains(p) || a.search.contains(p))
        {
            // The sidebar shows the text search's results: a click picks one of them.
            if a.list.contains(p) {
                let r = ((row - a.list.y) / ROW_H) as usize + t.offset;
                t.cursor = r.min(t.hits.len().saturating_sub(1));
            }
            self.focus = Focus::Text;
        } else if a.list.contains(p) {
            let slot = ((row - a.list.y) / ROW_H) as usize + self.list.offset;
            // A click on an inbox heading selects nothing.
            if let Some(r) = self.list.row_at_slot(slot) {
                self.list.select_row(r);
                self.focus = Focus::List;
            }
        } else if a.search.contains(p) {
            self.focus = Focus::Search;
        } else if (a.body.contains(p) || a.header.contains(p) || a.card.contains(p))
            && self.pane.key.is_some()
        {
            self.focus = Focus::Pane;
        }
        let _ = fx;
    }
}
