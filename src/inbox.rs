//! The inbox: unarchived sessions that ended waiting, errored or interrupted, grouped under
//! those headings in that order, newest first within each. The browser's `i` view and
//! `spool list --inbox` both take their rows from here.

use std::borrow::Borrow;

use crate::model::{Ended, SessionSummary};

/// Whether `s` belongs in the inbox.
pub fn accepts(s: &SessionSummary) -> bool {
    !s.archived && s.ended.is_some_and(Ended::in_inbox)
}

/// The inbox rows of `rows`, in inbox order (group, then newest activity first, then id).
/// Generic over how a row is held: the CLI has references, the browser shared rows.
pub fn rows<R: Borrow<SessionSummary>>(rows: impl IntoIterator<Item = R>) -> Vec<R> {
    let mut out: Vec<R> = rows.into_iter().filter(|s| accepts(s.borrow())).collect();
    out.sort_by(|a, b| {
        let (a, b): (&SessionSummary, &SessionSummary) = (a.borrow(), b.borrow());
        a.ended
            .cmp(&b.ended)
            .then_with(|| b.last_activity().cmp(&a.last_activity()))
            .then_with(|| a.reference().cmp(&b.reference()))
    });
    out
}

/// `(ending, count)` for each inbox heading, zero counts included.
pub fn counts<'a>(rows: impl IntoIterator<Item = &'a SessionSummary>) -> [(Ended, usize); 3] {
    let mut n = Ended::INBOX.map(|e| (e, 0));
    for s in rows.into_iter().filter(|s| accepts(s)) {
        if let Some(slot) = n.iter_mut().find(|(e, _)| Some(*e) == s.ended) {
            slot.1 += 1;
        }
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::StoreKind;
    use chrono::TimeZone;

    fn row(id: &str, ended: Option<Ended>, hour: u32, archived: bool) -> SessionSummary {
        let mut s = SessionSummary::new(StoreKind::Loom, id, "/p");
        s.ended = ended;
        s.archived = archived;
        s.updated_at = chrono::Utc
            .with_ymd_and_hms(2026, 3, 1, hour, 0, 0)
            .single();
        s
    }

    #[test]
    fn groups_in_heading_order_newest_first_without_archived_or_done() {
        let all = [
            row("a", Some(Ended::Interrupted), 9, false),
            row("b", Some(Ended::Waiting), 8, false),
            row("c", Some(Ended::Waiting), 10, false),
            row("d", Some(Ended::Done), 11, false),
            row("e", Some(Ended::Errored), 7, true),
            row("f", Some(Ended::Errored), 6, false),
            row("g", Some(Ended::Running), 12, false),
            row("h", None, 12, false),
        ];
        let ids: Vec<&str> = rows(&all).iter().map(|s| s.id.as_ref()).collect();
        assert_eq!(ids, ["c", "b", "f", "a"]);
        assert_eq!(
            counts(&all),
            [
                (Ended::Waiting, 2),
                (Ended::Errored, 1),
                (Ended::Interrupted, 1)
            ]
        );
    }
}
