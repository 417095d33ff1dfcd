//! Find in the open session, as `less` does: the pane's document lines are searched for the
//! terms (case-insensitive), every match is painted `Tone::Hit` and the current one
//! `Tone::HitNow`; `n` / `N` step and wrap. A text search hands its words here, so its `n` / `N`
//! step through the hits of the session it opened.

use std::ops::Range;

use super::doc::{DocLine, Tone};

/// Where the first match is taken once the document is there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Jump {
    /// The first match at or below the row that was on top, counted from the bottom (older
    /// rounds loading above keep that text where it was).
    FromBottom(usize),
    /// The first match in stored message `#N` or after it (a text search's hit).
    Message(usize),
}

/// One match: a document line and a byte range of its text (the runs joined).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Match {
    pub line: usize,
    pub bytes: Range<usize>,
}

/// The pane's find state.
#[derive(Clone, Debug, Default)]
pub struct Find {
    /// What is looked for, lowercased; empty when no find is active.
    pub terms: Vec<String>,
    pub matches: Vec<Match>,
    /// The match `n` / `N` stands on.
    pub current: Option<usize>,
    /// A jump to make when the (whole) document arrives.
    pub pending: Option<Jump>,
    /// The last jump found nothing (the app says so once).
    pub missed: bool,
}

impl Find {
    pub fn is_active(&self) -> bool {
        !self.terms.is_empty()
    }

    /// Look for `terms` (empty ones are dropped).
    pub fn start(&mut self, terms: &[String], jump: Jump) {
        self.terms = terms
            .iter()
            .map(|t| t.to_lowercase())
            .filter(|t| !t.trim().is_empty())
            .collect();
        self.matches.clear();
        self.current = None;
        self.pending = self.is_active().then_some(jump);
    }

    pub fn clear(&mut self) {
        *self = Find::default();
    }

    /// Find every match in `lines` and paint them; `message_line` maps a stored message
    /// index to its heading line. Returns the line to scroll to when a pending jump was made.
    pub fn apply(
        &mut self,
        lines: &mut [DocLine],
        line_of_row: impl Fn(usize) -> usize,
        message_line: impl Fn(usize) -> Option<usize>,
    ) -> Option<usize> {
        if !self.is_active() {
            return None;
        }
        self.matches = lines
            .iter()
            .enumerate()
            .flat_map(|(i, l)| {
                line_matches(&joined(l), &self.terms)
                    .into_iter()
                    .map(move |bytes| Match { line: i, bytes })
            })
            .collect();
        let mut jumped = None;
        if let Some(j) = self.pending.take() {
            let from = match j {
                Jump::FromBottom(row) => line_of_row(row),
                Jump::Message(m) => message_line(m).unwrap_or(0),
            };
            self.current = (!self.matches.is_empty()).then(|| {
                self.matches
                    .iter()
                    .position(|m| m.line >= from)
                    .unwrap_or(0)
            });
            jumped = self.current.map(|c| self.matches[c].line);
            self.missed = jumped.is_none();
        }
        self.current = self.current.filter(|&c| c < self.matches.len());
        for (i, m) in self.matches.iter().enumerate() {
            let tone = if Some(i) == self.current {
                Tone::HitNow
            } else {
                Tone::Hit
            };
            paint(&mut lines[m.line], m.bytes.clone(), tone);
        }
        jumped
    }

    /// Step to the next (`forward`) or previous match; `(line, wrapped)` of the new one.
    pub fn step(&mut self, forward: bool) -> Option<(usize, bool)> {
        let n = self.matches.len();
        if n == 0 {
            return None;
        }
        let (next, wrapped) = match (self.current, forward) {
            (None, true) => (0, false),
            (None, false) => (n - 1, false),
            (Some(c), true) if c + 1 >= n => (0, true),
            (Some(c), true) => (c + 1, false),
            (Some(0), false) => (n - 1, true),
            (Some(c), false) => (c - 1, false),
        };
        self.current = Some(next);
        Some((self.matches[next].line, wrapped))
    }
}

fn joined(l: &DocLine) -> String {
    l.iter().map(|(_, s)| s.as_str()).collect()
}

/// Byte ranges of `text` where any of `terms` (lowercase) occurs, case-insensitively,
/// sorted and not overlapping. Text whose lowercase changes its length is searched as
/// written (the offsets must hold for the original).
fn line_matches(text: &str, terms: &[String]) -> Vec<Range<usize>> {
    let lower = text.to_lowercase();
    let hay = if lower.len() == text.len() {
        lower.as_str()
    } else {
        text
    };
    let mut out: Vec<Range<usize>> = terms
        .iter()
        .flat_map(|t| hay.match_indices(t.as_str()).map(|(i, m)| i..i + m.len()))
        .collect();
    out.sort_by_key(|r| r.start);
    out.dedup_by(|b, a| b.start < a.end);
    out
}

/// Give bytes `range` of the line's joined text the tone `tone`, splitting runs.
fn paint(line: &mut DocLine, range: Range<usize>, tone: Tone) {
    let mut out: DocLine = Vec::with_capacity(line.len() + 2);
    let mut at = 0;
    for (t, s) in line.drain(..) {
        let (start, end) = (at, at + s.len());
        at = end;
        let a = range.start.clamp(start, end) - start;
        let b = range.end.clamp(start, end) - start;
        if a == b || !s.is_char_boundary(a) || !s.is_char_boundary(b) {
            out.push((t, s));
            continue;
        }
        for (piece, pt) in [(&s[..a], t), (&s[a..b], tone), (&s[b..], t)] {
            if !piece.is_empty() {
                out.push((pt, piece.to_string()));
            }
        }
    }
    *line = out;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_span_runs_and_wrap_when_stepping() {
        let mut lines = vec![
            vec![
                (Tone::Plain, "a Needle in".into()),
                (Tone::Dim, "dle".into()),
            ],
            vec![(Tone::Plain, "nothing".into())],
            vec![(Tone::Plain, "needle".into())],
        ];
        let mut f = Find::default();
        f.start(&["needle".into()], Jump::FromBottom(0));
        let jumped = f.apply(&mut lines, |_| 1, |_| None);
        assert_eq!(jumped, Some(2));
        assert_eq!(f.matches.len(), 2);
        assert_eq!(lines[0][1], (Tone::Hit, "Needle".to_string()));
        assert_eq!(lines[2][0], (Tone::HitNow, "needle".to_string()));
        assert_eq!(f.step(true), Some((0, true)));
        assert_eq!(f.step(false), Some((2, true)));
    }
}
