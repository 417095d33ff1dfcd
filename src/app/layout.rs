//! Where things are on the screen: the search box, list, divider, pane header and body and
//! the status bar, from the size, the focus and the sidebar width. Shared by drawing, the
//! mouse and paging, so they agree.

use ratatui::layout::Rect;

use super::{App, Focus, HEADER_H, MIN_SIDEBAR};

/// Screen areas, derived from the size, focus and sidebar width (zero-sized when hidden).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Areas {
    pub search: Rect,
    /// The inbox's heading counts (only while the inbox is shown).
    pub inbox: Rect,
    pub list: Rect,
    /// The column between sidebar and pane.
    pub divider: Rect,
    pub header: Rect,
    /// The "left off" card, between the header and the transcript (at most half the pane).
    pub card: Rect,
    pub body: Rect,
    pub status: Rect,
}

impl App {
    /// Screen areas for the current size and focus.
    pub fn areas(&self) -> Areas {
        let (w, h) = self.size;
        let main_h = h.saturating_sub(1);
        let status = Rect::new(0, main_h, w, h.min(1));
        let (side, pane) = if self.narrow() {
            // The find box belongs to the pane: typing in it keeps the pane on screen.
            if matches!(self.focus, Focus::Pane | Focus::Find) {
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
        let inbox_h = u16::from(self.list.inbox).min(side.height.saturating_sub(search.height));
        let inbox = Rect::new(side.x, side.y + search.height, side.width, inbox_h);
        let list = Rect::new(
            side.x,
            side.y + search.height + inbox_h,
            side.width,
            side.height.saturating_sub(search.height + inbox_h),
        );
        let hh = HEADER_H.min(pane.height);
        let header = Rect::new(pane.x, pane.y, pane.width, hh);
        let rest = pane.height - hh;
        // The card never takes more than half of what is under the header (one line at
        // least while there is room), so the transcript stays readable under it.
        let card_h = if self.pane.key.is_some() && rest > 2 {
            (self.pane.card.len() as u16).min((rest / 2).max(1))
        } else {
            0
        };
        let card = Rect::new(pane.x, pane.y + hh, pane.width, card_h);
        let body = Rect::new(pane.x, pane.y + hh + card_h, pane.width, rest - card_h);
        Areas {
            search,
            inbox,
            list,
            divider,
            header,
            card,
            body,
            status,
        }
    }
}
