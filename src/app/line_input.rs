//! The one-line text editor behind every text field of the browser: the search query, the
//! rename prompt and the export path. Readline's keys (Ctrl-U, Ctrl-W, Alt-Backspace, Home,
//! End, arrows) behave the same in all of them because there is only this one type.

/// One editing step in a text field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Edit {
    /// Insert a character at the cursor.
    Insert(char),
    /// Delete the character before the cursor.
    Backspace,
    /// Delete the character under the cursor.
    Delete,
    Left,
    Right,
    Home,
    End,
    /// Delete everything before the cursor (Ctrl-u, as in readline).
    KillToStart,
    /// Delete the word before the cursor and the spaces after it (Ctrl-w, Alt-Backspace).
    DeleteWord,
}

/// A single-line text field with a cursor (a char index, so wide characters stay whole).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LineInput {
    chars: Vec<char>,
    cursor: usize,
}

impl LineInput {
    /// A field holding `s` with the cursor at the end.
    pub fn new(s: &str) -> LineInput {
        let chars: Vec<char> = s.chars().collect();
        LineInput {
            cursor: chars.len(),
            chars,
        }
    }

    pub fn text(&self) -> String {
        self.chars.iter().collect()
    }

    pub fn is_empty(&self) -> bool {
        self.chars.is_empty()
    }

    /// The cursor position in chars.
    pub fn cursor(&self) -> usize {
        self.cursor
    }

    pub fn apply(&mut self, e: Edit) {
        match e {
            Edit::Insert(c) if !c.is_control() => {
                self.chars.insert(self.cursor, c);
                self.cursor += 1;
            }
            Edit::Insert(_) => {}
            Edit::Backspace if self.cursor > 0 => {
                self.cursor -= 1;
                self.chars.remove(self.cursor);
            }
            Edit::Backspace => {}
            Edit::Delete if self.cursor < self.chars.len() => {
                self.chars.remove(self.cursor);
            }
            Edit::Delete => {}
            Edit::Left => self.cursor = self.cursor.saturating_sub(1),
            Edit::Right => self.cursor = (self.cursor + 1).min(self.chars.len()),
            Edit::Home => self.cursor = 0,
            Edit::End => self.cursor = self.chars.len(),
            Edit::KillToStart => {
                self.chars.drain(..self.cursor);
                self.cursor = 0;
            }
            Edit::DeleteWord => {
                let mut start = self.cursor;
                while start > 0 && self.chars[start - 1].is_whitespace() {
                    start -= 1;
                }
                while start > 0 && !self.chars[start - 1].is_whitespace() {
                    start -= 1;
                }
                self.chars.drain(start..self.cursor);
                self.cursor = start;
            }
        }
    }

    /// Insert pasted text at the cursor, flattened to one line (line breaks and tabs become
    /// spaces, other control characters are dropped).
    pub fn paste(&mut self, s: &str) {
        let s = s.trim_end_matches(['\n', '\r']);
        for c in s.chars() {
            let c = if matches!(c, '\n' | '\r' | '\t') {
                ' '
            } else {
                c
            };
            self.apply(Edit::Insert(c));
        }
    }

    /// Replace the text, cursor at the end.
    pub fn set(&mut self, s: &str) {
        *self = LineInput::new(s);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn editing_keys() {
        let mut i = LineInput::new("héllo");
        i.apply(Edit::Home);
        i.apply(Edit::Delete);
        i.apply(Edit::Insert('J'));
        i.apply(Edit::End);
        i.apply(Edit::Backspace);
        i.apply(Edit::Left);
        i.apply(Edit::Insert('世'));
        assert_eq!(i.text(), "Jél世l");
        assert_eq!(i.cursor(), 4);
        i.apply(Edit::Right);
        i.apply(Edit::Right);
        assert_eq!(i.cursor(), 5);
        i.paste("a\nb");
        assert_eq!(i.text(), "Jél世la b");
        i.apply(Edit::Insert('\u{1b}'));
        assert_eq!(i.text(), "Jél世la b");
        i.apply(Edit::KillToStart);
        assert_eq!((i.text().as_str(), i.cursor()), ("", 0));
        i.apply(Edit::Backspace);
        i.apply(Edit::Left);
        assert_eq!(i.cursor(), 0);
    }

    #[test]
    fn word_and_line_kills_stop_at_the_cursor() {
        let mut i = LineInput::new("fix the  parser test");
        i.apply(Edit::Left);
        i.apply(Edit::Left);
        i.apply(Edit::Left);
        i.apply(Edit::Left);
        i.apply(Edit::Left); // before " test"
        i.apply(Edit::DeleteWord);
        assert_eq!((i.text().as_str(), i.cursor()), ("fix the   test", 9));
        i.apply(Edit::DeleteWord);
        assert_eq!((i.text().as_str(), i.cursor()), ("fix  test", 4));
        i.apply(Edit::KillToStart);
        assert_eq!((i.text().as_str(), i.cursor()), (" test", 0));
        i.apply(Edit::DeleteWord);
        assert_eq!(i.text(), " test");
    }
}
