//! A row's texts (title, summary, first prompt, path) in one allocation, behind accessors.
//!
//! Why (issue 10): a row is held for every session as long as spool runs. Held as four
//! boxes, each text cost a 16-byte pointer in the row and an allocation of its own (8 bytes
//! of glibc header and up to 15 of rounding each); at 100k sessions that was about 3.3
//! allocations a row. One buffer, its three 32-bit ends at its head, is 16 bytes in the row
//! instead of 64, and one allocation. Setting a field rebuilds the buffer: rows are built once and
//! rarely changed, and read thousands of times. A first prompt that is the title (a Claude
//! Code session without a summary is titled by it) is not stored twice: a bit of its end says
//! so, and it reads the title's bytes.

use std::ffi::OsStr;
use std::fmt;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use super::SessionSummary;

/// Title, summary and first prompt (UTF-8) then the path (any bytes), end to end, after a
/// header of where the first three end (the first prompt's with `SAME_PROMPT` and no bytes of
/// its own when it is the title). The ends live in the buffer, not beside it: 12
/// bytes fewer in the row put its `Arc` in glibc's 160-byte chunk, not 176 (1.6 MB at 100k).
#[derive(Clone, PartialEq, Eq)]
pub(super) struct RowText {
    /// Invariant: `HEAD` bytes of three native-endian `u32` ends (offsets after the header,
    /// ascending, within the buffer), then the texts; the first three are each valid UTF-8
    /// (only `build` writes a buffer, from `&str`s for those).
    buf: Box<[u8]>,
}

/// The header: the ends of title, summary and first prompt.
const HEAD: usize = 12;

/// Which of the texts (`RowText::bytes`); the path is what follows the last.
const TITLE: usize = 0;
const SUMMARY: usize = 1;
const PROMPT: usize = 2;
const PATH: usize = 3;

/// In the first prompt's end: the first prompt is the title, and holds no bytes of its own
/// (its end is the summary's). Issue 10: at 100k Claude Code sessions a title that was the
/// first prompt held it twice, ~40 bytes a row for most rows.
const SAME_PROMPT: u32 = 1 << 31;

impl RowText {
    pub fn new(title: &str, summary: &str, first_prompt: &str, path: &Path) -> RowText {
        RowText::build([
            title.as_bytes(),
            summary.as_bytes(),
            first_prompt.as_bytes(),
            path.as_os_str().as_bytes(),
        ])
    }

    /// One buffer of exactly the header and the parts (no spare capacity).
    fn build(mut parts: [&[u8]; 4]) -> RowText {
        let same = !parts[PROMPT].is_empty() && parts[PROMPT] == parts[TITLE];
        if same {
            parts[PROMPT] = &[];
        }
        let mut buf = vec![0u8; HEAD];
        buf.reserve_exact(parts.iter().map(|p| p.len()).sum());
        for (i, p) in parts.iter().enumerate() {
            buf.extend_from_slice(p);
            if i < PATH {
                let end = u32::try_from(buf.len() - HEAD)
                    .ok()
                    .filter(|&e| e < SAME_PROMPT)
                    .expect("a row's texts exceed 2 GiB");
                let flag = if i == PROMPT && same { SAME_PROMPT } else { 0 };
                buf[4 * i..4 * i + 4].copy_from_slice(&(end | flag).to_ne_bytes());
            }
        }
        RowText {
            buf: buf.into_boxed_slice(),
        }
    }

    /// Text `i`'s end as written in the header (with `SAME_PROMPT` for the first prompt).
    fn word(&self, i: usize) -> u32 {
        let b: [u8; 4] = self.buf[4 * i..4 * i + 4].try_into().expect("4 bytes");
        u32::from_ne_bytes(b)
    }

    /// Where text `i`'s own bytes end, after the header (the path: the buffer's end).
    fn end(&self, i: usize) -> usize {
        match i {
            PATH => self.buf.len(),
            _ => HEAD + (self.word(i) & !SAME_PROMPT) as usize,
        }
    }

    fn bytes(&self, i: usize) -> &[u8] {
        if i == PROMPT && self.word(PROMPT) & SAME_PROMPT != 0 {
            return self.bytes(TITLE);
        }
        let start = if i == 0 { HEAD } else { self.end(i - 1) };
        &self.buf[start..self.end(i)]
    }

    fn text(&self, i: usize) -> &str {
        debug_assert!(i < PATH);
        let b = self.bytes(i);
        // SAFETY: the first three parts are copies of `&str`s (`build`'s callers: `new` and
        // `replace`, which passes a `&str` for those and the old bytes for the others).
        unsafe { std::str::from_utf8_unchecked(b) }
    }

    /// The same texts with part `i` replaced by `with`.
    fn replace(&mut self, i: usize, with: &[u8]) {
        let mut parts = [0, 1, 2, 3].map(|j| self.bytes(j));
        parts[i] = with;
        *self = RowText::build(parts);
    }
}

impl fmt::Debug for RowText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RowText")
            .field("title", &self.text(TITLE))
            .field("summary", &self.text(SUMMARY))
            .field("first_prompt", &self.text(PROMPT))
            .field("path", &Path::new(OsStr::from_bytes(self.bytes(PATH))))
            .finish()
    }
}

impl SessionSummary {
    /// The title as the store's contract defines it (`list --json`'s `title`).
    pub fn title(&self) -> &str {
        self.text.text(TITLE)
    }

    pub fn summary(&self) -> &str {
        self.text.text(SUMMARY)
    }

    /// Text of the first real user message (search input), empty when unknown.
    pub fn first_prompt(&self) -> &str {
        self.text.text(PROMPT)
    }

    /// Where the session lives (file or directory), as its store found it.
    pub fn path(&self) -> &Path {
        Path::new(OsStr::from_bytes(self.text.bytes(PATH)))
    }

    pub fn set_title(&mut self, v: impl AsRef<str>) {
        self.text.replace(TITLE, v.as_ref().as_bytes());
    }

    pub fn set_summary(&mut self, v: impl AsRef<str>) {
        self.text.replace(SUMMARY, v.as_ref().as_bytes());
    }

    pub fn set_first_prompt(&mut self, v: impl AsRef<str>) {
        self.text.replace(PROMPT, v.as_ref().as_bytes());
    }

    pub fn set_path(&mut self, v: impl AsRef<Path>) {
        self.text.replace(PATH, v.as_ref().as_os_str().as_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::StoreKind;

    /// Every accessor returns what was set, whichever field changed last, with empty,
    /// non-ASCII and non-UTF-8 (path) texts among them.
    #[test]
    fn each_text_reads_back_as_set() {
        let mut s = SessionSummary::new(StoreKind::Loop, "id-1", "/store/sessions/id-1");
        assert_eq!((s.title(), s.summary(), s.first_prompt()), ("id-1", "", ""));
        assert_eq!(s.path(), Path::new("/store/sessions/id-1"));
        s.set_summary("résumé ✓");
        s.set_first_prompt("why does\nit fail?");
        s.set_title("");
        let odd = Path::new(OsStr::from_bytes(b"/s/\xff\xfe/x"));
        s.set_path(odd);
        assert_eq!(
            (s.title(), s.summary(), s.first_prompt(), s.path()),
            ("", "résumé ✓", "why does\nit fail?", odd)
        );
        s.set_title("Fix the router");
        s.set_first_prompt("");
        assert_eq!(
            (s.title(), s.summary(), s.first_prompt(), s.path()),
            ("Fix the router", "résumé ✓", "", odd)
        );
        let len = HEAD + "Fix the router".len() + "résumé ✓".len() + odd.as_os_str().len();
        assert_eq!(s.text.buf.len(), len, "one buffer of exactly the texts");
    }

    /// A first prompt that is the title is held once, and every text still reads back as
    /// set, whichever changes next (the two part again, or meet again); through the
    /// catalog's serde form too.
    #[test]
    fn a_first_prompt_that_is_the_title_is_held_once() {
        let p = "fix the flaky test in net/retry.rs";
        let mut s = SessionSummary::new(StoreKind::Claude, "c1", "/p/c1.jsonl");
        s.set_summary("sum");
        s.set_title(p);
        s.set_first_prompt(p);
        let read = |s: &SessionSummary| {
            (
                s.title().to_owned(),
                s.summary().to_owned(),
                s.first_prompt().to_owned(),
            )
        };
        assert_eq!(read(&s), (p.into(), "sum".into(), p.into()));
        assert_eq!(s.path(), Path::new("/p/c1.jsonl"));
        let once = HEAD + p.len() + "sum".len() + "/p/c1.jsonl".len();
        assert_eq!(s.text.buf.len(), once, "the prompt is not stored twice");
        let back: SessionSummary =
            postcard::from_bytes(&postcard::to_allocvec(&s).unwrap()).unwrap();
        assert_eq!((read(&back), back.path()), (read(&s), s.path()));
        assert_eq!(back, s);
        let mut t = s.clone();
        t.set_title("renamed");
        assert_eq!(read(&t), ("renamed".into(), "sum".into(), p.into()));
        assert_eq!(t.path(), Path::new("/p/c1.jsonl"));
        t.set_first_prompt("renamed");
        t.set_path("/q");
        assert_eq!(read(&t), ("renamed".into(), "sum".into(), "renamed".into()));
        assert_eq!(t.text.buf.len(), HEAD + "renamedsum/q".len());
        t.set_first_prompt("");
        assert_eq!(read(&t), ("renamed".into(), "sum".into(), String::new()));
        assert_eq!(t.path(), Path::new("/q"));
        assert_ne!(s, t);
    }

    /// Rows compare by their texts, not by how the buffer happens to split: two rows whose
    /// texts differ only in where one ends and the next begins are different rows.
    #[test]
    fn rows_with_the_same_bytes_split_differently_differ() {
        let mut a = SessionSummary::new(StoreKind::Loom, "x", "/p");
        let mut b = a.clone();
        a.set_title("ab");
        b.set_title("a");
        b.set_summary("b");
        assert_ne!(a, b);
        a.set_title("a");
        a.set_summary("b");
        assert_eq!(a, b);
    }
}
