//! The pane: which session and view it shows, the newest load request (token), scrolling,
//! and the row index of the wrapped document (line heights, measured again only when the
//! content, expansion or width changes; rows themselves are built for the visible slice).

use std::sync::Arc;

use super::action::{Loaded, View};
use super::doc::{self, DocLine, Expansion, Fold};
use super::find::Find;
use super::timefmt::TimeFmt;
use crate::model::{Transcript, Window};
use crate::search::Key;

/// Rounds read first, and added each time the user scrolls to the top.
pub const ROUND_PAGE: usize = 20;
/// The window and raw views page from their end too (issue 11: the first screen of a huge
/// session holds a page): per round of `rounds`, this many window messages or raw bytes.
pub const WINDOW_PER_ROUND: usize = 5;
pub const RAW_PER_ROUND: u64 = 8 * 1024;
/// `Pane::rounds` meaning the whole history (`g` reads from the start).
pub const ALL_ROUNDS: usize = usize::MAX;

/// Rows shown above a match the pane scrolls to, so it is read in its context.
const MATCH_CONTEXT: usize = 2;

/// What the pane holds.
#[derive(Clone, Debug, Default)]
pub enum Content {
    #[default]
    Empty,
    Transcript(Arc<Transcript>),
    Window(Arc<Window>),
    /// The raw text, and whether earlier records are not loaded.
    Raw(Arc<String>, bool),
    Failed(String),
}

/// Pane state.
#[derive(Default)]
pub struct Pane {
    pub key: Option<Key>,
    pub view: View,
    pub content: Content,
    /// A request is outstanding (the newest one has this token).
    pub loading: bool,
    pub token: u64,
    /// Rounds requested for the transcript view.
    pub rounds: usize,
    /// Which tool outputs, thinking blocks and system prompts are open.
    pub open: Expansion,
    /// The zone message times are shown in.
    pub time: TimeFmt,
    /// First wrapped line shown.
    pub scroll: usize,
    /// Stick to the bottom (new output scrolls into view).
    pub follow: bool,
    /// `g` was pressed: stay at the top when the whole history arrives.
    pub want_top: bool,
    /// Marked read (automatically) at this message count.
    pub marked_read_at: Option<u64>,
    lines: Vec<DocLine>,
    /// Round starts in `lines` (transcript view).
    round_starts: Vec<doc::RoundStart>,
    /// Round starts as wrapped rows.
    wrapped_rounds: Vec<doc::RoundStart>,
    /// Foldable blocks (document lines).
    folds: Vec<Fold>,
    /// Heading lines of the stored messages: (line, index).
    messages: Vec<(usize, usize)>,
    /// Find in the session (`/` in the pane, or a text search's words).
    pub find: Find,
    /// `row_starts[i]`: the wrapped row where line `i` begins; the last entry is the total.
    /// Only heights are measured for the whole document; rows are built for the visible
    /// slice alone.
    row_starts: Vec<usize>,
    wrapped_width: usize,
    dirty: bool,
    /// The "left off" card is folded to one line (`l`).
    pub card_folded: bool,
    /// The card's lines, drawn above the transcript and not scrolled with it: it is what a
    /// person needs first, and the transcript opens at its end.
    pub card: Vec<DocLine>,
}

impl Pane {
    /// An empty pane showing times with `time`.
    pub fn new(time: TimeFmt) -> Pane {
        Pane {
            time,
            ..Pane::default()
        }
    }

    /// Point the pane at another session (content is dropped; a load follows).
    pub fn show(&mut self, key: Key) {
        self.key = Some(key);
        self.content = Content::Empty;
        self.rounds = ROUND_PAGE;
        self.scroll = 0;
        self.follow = true;
        self.want_top = false;
        self.marked_read_at = None;
        self.find.clear();
        self.lines.clear();
        self.card.clear();
        self.round_starts.clear();
        self.folds.clear();
        self.row_starts.clear();
        self.wrapped_rounds.clear();
        self.dirty = true;
    }

    /// Show no session (nothing is listed); the view and expansion stay as chosen.
    pub fn close(&mut self) {
        self.key = None;
        self.content = Content::Empty;
        self.loading = false;
        self.scroll = 0;
        self.find.clear();
        self.lines.clear();
        self.round_starts.clear();
        self.row_starts.clear();
        self.wrapped_rounds.clear();
        self.dirty = true;
    }

    /// Take a loader answer. Older rounds arriving on top keep the same text in view.
    pub fn accept(&mut self, content: Loaded) {
        self.loading = false;
        let before = self.total_lines();
        let from_bottom = before.saturating_sub(self.scroll);
        self.content = match content {
            Loaded::Transcript(t) => Content::Transcript(t),
            Loaded::Window(w) => Content::Window(w),
            Loaded::Raw(r, more) => Content::Raw(r, more),
            Loaded::Failed(e) => Content::Failed(e),
        };
        self.dirty = true;
        if std::mem::take(&mut self.want_top) {
            self.scroll = 0;
            self.follow = false;
        } else if !self.follow && self.find.pending.is_none() && self.wrapped_width > 0 {
            let w = self.wrapped_width;
            self.layout(w);
            self.scroll = self.total_lines().saturating_sub(from_bottom);
        }
    }

    /// Whether older rounds, window messages or raw records exist that are not loaded.
    pub fn has_more_above(&self) -> bool {
        match &self.content {
            Content::Transcript(t) => t.first_round > 0,
            Content::Window(w) => w.omitted > 0,
            Content::Raw(_, more) => *more,
            _ => false,
        }
    }

    /// Fold the "left off" card to one line, or open it.
    pub fn toggle_card(&mut self) {
        self.card_folded = !self.card_folded;
        self.dirty = true;
    }

    /// `O`: open every block, or close them all.
    pub fn toggle_all(&mut self) {
        self.open.toggle_all();
        self.dirty = true;
    }

    /// `o`: open or close the block in view, the one the top line is in, else the first
    /// that starts on screen. A block closed from inside keeps its first line in view.
    pub fn toggle_in_view(&mut self, height: usize) {
        if self.wrapped_width == 0 {
            return;
        }
        let row = |l: usize| self.row_starts.get(l).copied().unwrap_or(0);
        let top = self.scroll;
        let bottom = top + height;
        let hit = self
            .folds
            .iter()
            .find(|f| row(f.start) <= top && top < row(f.end))
            .or_else(|| {
                self.folds
                    .iter()
                    .find(|f| row(f.start) >= top && row(f.start) < bottom)
            });
        let Some(f) = hit.cloned() else { return };
        self.open.toggle(&f.key);
        self.dirty = true;
        let w = self.wrapped_width;
        self.layout(w);
        // Lines above the block did not change, so its first row is where it was.
        self.scroll = self.scroll.min(self.row_starts[f.start]);
        self.follow = false;
    }

    /// "Fork from here": cut before the stored user message that starts the round after the
    /// one in view, so the fork ends with the round being read. `None` (the whole session)
    /// when that is the last round, outside the transcript view, or before it has loaded.
    pub fn fork_cut(&self) -> Option<usize> {
        let here = self.round_in_view()?;
        self.round_starts
            .iter()
            .map(|&(_, i)| i)
            .find(|&i| i > here)
    }

    /// Wrap for `width` (cached) and clamp the scroll for a viewport of `height` rows.
    pub fn layout(&mut self, width: usize) {
        let refind = self.dirty;
        if self.dirty {
            // A find shows every block open: a match behind a fold would be counted but
            // never seen.
            let mut all_open = Expansion::default();
            all_open.toggle_all();
            let open = if self.find.is_active() {
                &all_open
            } else {
                &self.open
            };
            self.card.clear();
            let d = match &self.content {
                Content::Empty => doc::Doc::default(),
                Content::Transcript(t) => {
                    let lo = crate::model::left_off::LeftOff::from_transcript(t);
                    self.card = super::card::lines(&lo, self.card_folded);
                    doc::transcript(t, open, self.time)
                }
                Content::Window(w) => doc::window(w, open, self.time),
                Content::Raw(r, _) => doc::Doc {
                    lines: doc::raw(r),
                    ..doc::Doc::default()
                },
                Content::Failed(e) => doc::Doc {
                    lines: vec![vec![(
                        doc::Tone::Error,
                        format!("could not load: {}", crate::text::one_line(e)),
                    )]],
                    ..doc::Doc::default()
                },
            };
            self.lines = d.lines;
            self.round_starts = d.rounds;
            self.folds = d.folds;
            self.messages = d.messages;
            self.wrapped_width = 0;
            self.dirty = false;
        }
        if self.wrapped_width != width {
            let mut starts = Vec::with_capacity(self.lines.len() + 1);
            let mut row = 0;
            for l in &self.lines {
                starts.push(row);
                row += doc::wrapped_height(l, width);
            }
            starts.push(row);
            self.wrapped_rounds = self
                .round_starts
                .iter()
                .filter_map(|&(l, i)| Some((*starts.get(l)?, i)))
                .collect();
            self.row_starts = starts;
            self.wrapped_width = width;
        }
        if refind {
            self.apply_find();
        }
    }

    /// Paint the find's matches (painting keeps every width, so the rows stay valid) and
    /// make a pending jump once the requested content is in.
    fn apply_find(&mut self) {
        if self.loading || matches!(self.content, Content::Empty) {
            // The jump waits for the whole history; paint what is there.
            let pending = self.find.pending.take();
            self.find.apply(&mut self.lines, |_| 0, |_| None);
            self.find.pending = pending;
            return;
        }
        let starts = &self.row_starts;
        let messages = &self.messages;
        let total = starts.last().copied().unwrap_or(0);
        let line_of_row = |from_bottom: usize| {
            let row = total.saturating_sub(from_bottom);
            starts.partition_point(|&r| r <= row).saturating_sub(1)
        };
        let message_line = |m: usize| messages.iter().find(|&&(_, i)| i >= m).map(|&(l, _)| l);
        if let Some(line) = self.find.apply(&mut self.lines, line_of_row, message_line) {
            self.scroll_to_line(line);
        }
    }

    /// Put document line `line` near the top (a match the find moved to).
    pub fn scroll_to_line(&mut self, line: usize) {
        let row = self.row_starts.get(line).copied().unwrap_or(0);
        self.scroll = row.saturating_sub(MATCH_CONTEXT);
        self.follow = false;
    }

    /// Rebuild the document at the next layout (the find's terms or current match changed).
    pub fn refresh(&mut self) {
        self.dirty = true;
    }

    /// The stored index of the user message that starts the round at or above the top line
    /// in view (the first round when the view is above all of them).
    /// `None` outside the transcript view or before it has loaded.
    pub fn round_in_view(&self) -> Option<usize> {
        if !matches!(self.content, Content::Transcript(_)) {
            return None;
        }
        self.wrapped_rounds
            .iter()
            .rev()
            .find(|(l, _)| *l <= self.scroll)
            .or(self.wrapped_rounds.first())
            .map(|&(_, i)| i)
    }

    pub fn total_lines(&self) -> usize {
        self.row_starts.last().copied().unwrap_or(0)
    }

    fn max_scroll(&self, height: usize) -> usize {
        self.total_lines().saturating_sub(height)
    }

    /// Clamp the scroll for a viewport of `height`; stick to the bottom when following.
    pub fn clamp(&mut self, height: usize) {
        let max = self.max_scroll(height);
        if self.follow || self.scroll > max {
            self.scroll = max;
        }
    }

    /// Scroll by `delta` lines; scrolling up leaves follow mode, reaching the bottom enters it.
    pub fn scroll_by(&mut self, delta: isize, height: usize) {
        let max = self.max_scroll(height);
        let cur = if self.follow {
            max
        } else {
            self.scroll.min(max)
        };
        self.scroll = (cur as isize + delta).clamp(0, max as isize) as usize;
        self.follow = self.scroll >= max;
    }

    /// The visible slice of wrapped rows: only the lines it overlaps are wrapped.
    pub fn visible(&self, height: usize) -> Vec<DocLine> {
        let total = self.total_lines();
        let start = self.scroll.min(total);
        let end = (start + height).min(total);
        if start >= end {
            return Vec::new();
        }
        // The line holding row `start`: the last line that begins at or before it.
        let first = self.row_starts.partition_point(|&r| r <= start) - 1;
        let mut rows = Vec::with_capacity(height + 8);
        let mut line = first;
        while self.row_starts[line] < end && line < self.lines.len() {
            doc::wrap_one(&self.lines[line], self.wrapped_width, &mut rows);
            line += 1;
        }
        let skip = start - self.row_starts[first];
        rows.into_iter().skip(skip).take(end - start).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn visible_rows_equal_a_full_wrap_at_every_scroll() {
        let text: String = (0..40)
            .map(|i| format!("  line {i}: {}\n", "word ".repeat(i % 13)))
            .collect();
        let mut p = Pane {
            content: Content::Raw(Arc::new(text), false),
            dirty: true,
            ..Pane::default()
        };
        for width in [7, 20, 33] {
            p.layout(width);
            let full = doc::wrap(&p.lines, width);
            assert_eq!(p.total_lines(), full.len());
            for height in [1, 5, 12] {
                for scroll in 0..=full.len() {
                    p.scroll = scroll;
                    let end = (scroll + height).min(full.len());
                    let want = &full[scroll.min(end)..end];
                    assert_eq!(p.visible(height), want, "w{width} h{height} s{scroll}");
                }
            }
        }
    }
}
