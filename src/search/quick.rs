//! The fuzzy search over sessions: a thin wrapper around `nucleo`.
//!
//! Items go in through an `Injector` (cheap, lock-free), the worker pool matches in the
//! background and calls `notify` (the browser turns that into a wake-up event), and the UI
//! thread calls `tick` once per frame, then reads only the visible range of matches and
//! computes highlight indices only for those rows, with one shared `Matcher`.

use std::ops::Range;
use std::sync::Arc;

use nucleo::pattern::{CaseMatching, Normalization};
use nucleo::{Config, Matcher, Nucleo, Utf32Str};

use crate::model::{SessionSummary, StoreKind};
use crate::text::{one_line, truncate_chars};

/// Identity of a session across reloads: its store and id (never its row number).
pub type Key = (StoreKind, String);

/// How much of a first prompt / summary goes into the haystack (long pastes would only slow
/// matching down without helping anyone find a session).
const FIELD_CAP: usize = 400;

/// The text a session is matched on: title, project, first prompt and summary.
pub fn haystack(s: &SessionSummary) -> String {
    format!(
        "{} {} {} {}",
        one_line(&s.title),
        s.project(),
        truncate_chars(&one_line(&s.first_prompt), FIELD_CAP),
        truncate_chars(&one_line(&s.summary), FIELD_CAP)
    )
}

/// The nucleo matcher plus the query it was last given.
pub struct Search {
    nucleo: Nucleo<Key>,
    matcher: Matcher,
    query: String,
    indices: Vec<u32>,
    buf: Vec<char>,
}

impl Search {
    /// `notify` is called (from a worker thread) whenever `tick` should be called again.
    pub fn new(notify: Arc<dyn Fn() + Sync + Send>) -> Search {
        Search {
            // Two workers at most: the machines this runs on are shared.
            nucleo: Nucleo::new(Config::DEFAULT, notify, Some(2), 1),
            matcher: Matcher::new(Config::DEFAULT),
            query: String::new(),
            indices: Vec::new(),
            buf: Vec::new(),
        }
    }

    /// Add one session to the matcher.
    pub fn push(&self, s: &SessionSummary) {
        let text = haystack(s);
        self.nucleo
            .injector()
            .push((s.store, s.id.clone()), move |_, cols| {
                cols[0] = text.as_str().into();
            });
    }

    /// Drop every item (re-filled by the caller right after); the old matches stay visible
    /// until the next tick has matched the new items, so the list does not blink.
    pub fn clear(&mut self) {
        self.nucleo.restart(false);
    }

    pub fn query(&self) -> &str {
        &self.query
    }

    pub fn set_query(&mut self, q: &str) {
        let append = q.starts_with(&self.query) && !self.query.is_empty();
        self.nucleo
            .pattern
            .reparse(0, q, CaseMatching::Smart, Normalization::Smart, append);
        self.query = q.to_string();
    }

    /// Let the worker publish new matches; returns whether the snapshot changed and whether
    /// the worker is still running.
    pub fn tick(&mut self, timeout_ms: u64) -> (bool, bool) {
        let st = self.nucleo.tick(timeout_ms);
        (st.changed, st.running)
    }

    pub fn matched_count(&self) -> usize {
        self.nucleo.snapshot().matched_item_count() as usize
    }

    pub fn item_count(&self) -> usize {
        self.nucleo.snapshot().item_count() as usize
    }

    /// Keys of the matches in `range` (clamped), best first.
    pub fn matched_keys(&self, range: Range<usize>) -> Vec<Key> {
        let snap = self.nucleo.snapshot();
        let n = snap.matched_item_count() as usize;
        let end = range.end.min(n);
        let start = range.start.min(end);
        snap.matched_items(start as u32..end as u32)
            .map(|it| it.data.clone())
            .collect()
    }

    /// Position of `key` among the matches (a scan; called only when the snapshot changed).
    pub fn position(&self, key: &Key) -> Option<usize> {
        let snap = self.nucleo.snapshot();
        snap.matched_items(..).position(|it| it.data == key)
    }

    /// Char indices of `text` that match the query, sorted and unique (for highlighting the
    /// visible rows only).
    pub fn highlight(&mut self, text: &str) -> Vec<usize> {
        if self.query.trim().is_empty() {
            return Vec::new();
        }
        self.indices.clear();
        let hay = Utf32Str::new(text, &mut self.buf);
        let pat = self.nucleo.pattern.column_pattern(0);
        if pat
            .indices(hay, &mut self.matcher, &mut self.indices)
            .is_none()
        {
            // The title alone may not match (the hit is in the prompt): no highlight then,
            // but the atoms that do match the title still help the eye.
            self.indices.clear();
            for atom in &pat.atoms {
                let hay = Utf32Str::new(text, &mut self.buf);
                let mut one = Vec::new();
                if atom.indices(hay, &mut self.matcher, &mut one).is_some() {
                    self.indices.extend(one);
                }
            }
        }
        let mut v: Vec<usize> = self.indices.iter().map(|&i| i as usize).collect();
        v.sort_unstable();
        v.dedup();
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(id: &str, title: &str) -> SessionSummary {
        let mut s = SessionSummary::new(StoreKind::Loop, id, "/x");
        s.title = title.into();
        s
    }

    fn settle(s: &mut Search) {
        for _ in 0..500 {
            let (_, running) = s.tick(10);
            if !running {
                return;
            }
        }
    }

    #[test]
    fn matches_and_highlights_char_indices() {
        let mut s = Search::new(Arc::new(|| {}));
        s.push(&row("a", "Fix the parser"));
        s.push(&row("b", "日本語 parser"));
        s.push(&row("c", "unrelated"));
        s.set_query("parser");
        settle(&mut s);
        assert_eq!(s.matched_count(), 2);
        // Char indices, not bytes: the CJK title's "p" is char 4.
        assert_eq!(s.highlight("日本語 parser"), vec![4, 5, 6, 7, 8, 9]);
        assert!(s.position(&(StoreKind::Loop, "c".into())).is_none());
    }
}
