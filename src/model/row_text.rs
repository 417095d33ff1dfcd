//! A row's texts (title, summary, first prompt, its own badges and its path) in one
//! allocation, behind accessors.
//!
//! Why (issue 10): a row is held for every session as long as spool runs. Held as four
//! boxes, each text cost a 16-byte pointer in the row and an allocation of its own (8 bytes
//! of glibc header and up to 15 of rounding each); at 100k sessions that was about 3.3
//! allocations a row. One buffer, its three 32-bit ends at its head, is 16 bytes in the row
//! instead of 64, and one allocation. Setting a field rebuilds the buffer: rows are built once and
//! rarely changed, and read thousands of times. A first prompt that is the title (a Claude
//! Code session without a summary is titled by it) is not stored twice: a bit of its end says
//! so, and it reads the title's bytes.
//!
//! After the three texts comes the tail: a byte of flags, the badges the row holds itself
//! (`badges`: counts such as Codex's "9240 tokens", which differ on nearly every row, cost
//! about 100 bytes a row interned), then the path. A path is held as the number of its
//! directory (`dirs`) and its file name, with the session's id left out of the name when
//! it is there (Codex's `rollout-<time>-<id>.jsonl`, Claude Code's `<id>.jsonl`): 70–90
//! bytes a row less at 100k sessions. So the path is rebuilt when asked for (`path()`
//! returns it owned), and a row's path depends on its id: `set_id` changes both.

use std::ffi::{OsStr, OsString};
use std::fmt;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

use super::SessionSummary;

/// Title, summary and first prompt (UTF-8), then the tail (see the module's doc), after a
/// header of where the first three end (the first prompt's with `SAME_PROMPT` and no bytes of
/// its own when it is the title). The ends live in the buffer, not beside it: 12
/// bytes fewer in the row put its `Arc` in glibc's 160-byte chunk, not 176 (1.6 MB at 100k);
/// under jemalloc, which spool now uses (`heap`), in its 160-byte class, not 192.
#[derive(Clone, PartialEq, Eq)]
pub(super) struct RowText {
    /// Invariant: `HEAD` bytes of three native-endian `u32` ends (offsets after the header,
    /// ascending, within the buffer), then the texts; the first three are each valid UTF-8
    /// (only `build` writes a buffer, from `&str`s for those), then a tail `Tail::write`
    /// wrote.
    buf: Box<[u8]>,
}

/// The header: the ends of title, summary and first prompt.
const HEAD: usize = 12;

/// Which of the texts (`RowText::bytes`); the tail is what follows the last.
const TITLE: usize = 0;
const SUMMARY: usize = 1;
const PROMPT: usize = 2;

/// In the first prompt's end: the first prompt is the title, and holds no bytes of its own
/// (its end is the summary's). Issue 10: at 100k Claude Code sessions a title that was the
/// first prompt held it twice, ~40 bytes a row for most rows.
const SAME_PROMPT: u32 = 1 << 31;

/// The tail's flags: own badges follow (a `u16` length, then the badges, each ended by a
/// NUL); the path is a directory's number (`u32`) and a file name; the id is left out of
/// the name (a `u8`: how many of the name's bytes come before it).
const OWN: u8 = 1;
const DIR: u8 = 2;
const ID: u8 = 4;

/// A tail read back: the row's own badges (NUL-ended each) and its path's parts.
struct Tail<'a> {
    own: &'a [u8],
    /// The path as written: its flags (`DIR`, `ID`) and the bytes after the own badges.
    path: Encoded<'a>,
    /// `(directory, bytes of the name before the id)`, or `None`: `name` is the whole path.
    dir: Option<(u32, Option<usize>)>,
    name: &'a [u8],
}

/// A path as a tail holds it: the flags that say how (`DIR`, `ID`) and its bytes.
#[derive(Clone, Copy)]
struct Encoded<'a>(u8, &'a [u8]);

/// A path to write into a tail: as given, or as another tail holds it for the same id.
enum PathIn<'a> {
    Whole(&'a [u8]),
    Encoded(Encoded<'a>),
}

impl<'a> Tail<'a> {
    fn read(t: &'a [u8]) -> Tail<'a> {
        let flags = t[0];
        let mut at = 1;
        let mut own: &[u8] = &[];
        if flags & OWN != 0 {
            let n = usize::from(u16::from_le_bytes([t[1], t[2]]));
            own = &t[3..3 + n];
            at = 3 + n;
        }
        let path = Encoded(flags & (DIR | ID), &t[at..]);
        let mut dir = None;
        if flags & DIR != 0 {
            let n = u32::from_le_bytes(t[at..at + 4].try_into().expect("4 bytes"));
            at += 4;
            let pre = (flags & ID != 0).then(|| {
                at += 1;
                usize::from(t[at - 1])
            });
            dir = Some((n, pre));
        }
        Tail {
            own,
            path,
            dir,
            name: &t[at..],
        }
    }

    /// Append the encoding of `own` (NUL-ended badges) and `path` (a session `id`'s) to `out`.
    fn write(own: &[u8], path: PathIn<'_>, id: &str, out: &mut Vec<u8>) {
        let flags_at = out.len();
        out.push(0);
        let mut flags = 0;
        if !own.is_empty() {
            let n = u16::try_from(own.len()).expect("own badges are capped (`badges::OWN_CAP`)");
            flags |= OWN;
            out.extend_from_slice(&n.to_le_bytes());
            out.extend_from_slice(own);
        }
        let path = match path {
            PathIn::Encoded(Encoded(f, bytes)) => {
                out.extend_from_slice(bytes);
                out[flags_at] = flags | f;
                return;
            }
            PathIn::Whole(p) => p,
        };
        // Split at the last `/`: the directory, then a name that is not empty.
        let split = (path.iter().rposition(|&b| b == b'/'))
            .filter(|&i| i + 1 < path.len())
            .and_then(|i| Some((i, super::dirs::number(&path[..i])?)));
        match split {
            None => out.extend_from_slice(path),
            Some((slash, n)) => {
                flags |= DIR;
                out.extend_from_slice(&n.to_le_bytes());
                let name = &path[slash + 1..];
                let id = id.as_bytes();
                let at = (!id.is_empty())
                    .then(|| name.windows(id.len()).position(|w| w == id))
                    .flatten()
                    .filter(|&p| p <= usize::from(u8::MAX));
                match at {
                    Some(p) => {
                        flags |= ID;
                        out.push(p as u8);
                        out.extend_from_slice(&name[..p]);
                        out.extend_from_slice(&name[p + id.len()..]);
                    }
                    None => out.extend_from_slice(name),
                }
            }
        }
        out[flags_at] = flags;
    }

    /// The path, for a row of session `id`, appended to `out`.
    fn path_into(&self, id: &str, out: &mut Vec<u8>) {
        match self.dir {
            None => out.extend_from_slice(self.name),
            Some((n, pre)) => {
                super::dirs::push(n, out);
                out.push(b'/');
                match pre {
                    None => out.extend_from_slice(self.name),
                    Some(p) => {
                        out.extend_from_slice(&self.name[..p]);
                        out.extend_from_slice(id.as_bytes());
                        out.extend_from_slice(&self.name[p..]);
                    }
                }
            }
        }
    }
}

impl RowText {
    pub fn new(texts: [&str; 3], own: &[u8], path: &Path, id: &str) -> RowText {
        let [t, s, p] = texts.map(str::as_bytes);
        let path = PathIn::Whole(path.as_os_str().as_bytes());
        RowText::build([t, s, p], own, path, id)
    }

    /// One buffer of exactly the header, the texts and the tail (no spare capacity): put
    /// together in this thread's scratch, then copied into one allocation of its size (the
    /// tail's length is known only once the path is encoded; growing and shrinking a fresh
    /// vector instead was three allocator calls a row, ~6% of a warm start's decode).
    fn build(mut texts: [&[u8]; 3], own: &[u8], path: PathIn<'_>, id: &str) -> RowText {
        let same = !texts[PROMPT].is_empty() && texts[PROMPT] == texts[TITLE];
        if same {
            texts[PROMPT] = &[];
        }
        with_scratch(|buf| {
            buf.resize(HEAD, 0);
            for (i, p) in texts.iter().enumerate() {
                buf.extend_from_slice(p);
                let end = u32::try_from(buf.len() - HEAD)
                    .ok()
                    .filter(|&e| e < SAME_PROMPT)
                    .expect("a row's texts exceed 2 GiB");
                let flag = if i == PROMPT && same { SAME_PROMPT } else { 0 };
                buf[4 * i..4 * i + 4].copy_from_slice(&(end | flag).to_ne_bytes());
            }
            Tail::write(own, path, id, buf);
            RowText {
                buf: Box::from(buf.as_slice()),
            }
        })
    }

    /// Text `i`'s end as written in the header (with `SAME_PROMPT` for the first prompt).
    fn word(&self, i: usize) -> u32 {
        let b: [u8; 4] = self.buf[4 * i..4 * i + 4].try_into().expect("4 bytes");
        u32::from_ne_bytes(b)
    }

    /// Where text `i`'s own bytes end, after the header.
    fn end(&self, i: usize) -> usize {
        HEAD + (self.word(i) & !SAME_PROMPT) as usize
    }

    fn bytes(&self, i: usize) -> &[u8] {
        if i == PROMPT && self.word(PROMPT) & SAME_PROMPT != 0 {
            return self.bytes(TITLE);
        }
        let start = if i == 0 { HEAD } else { self.end(i - 1) };
        &self.buf[start..self.end(i)]
    }

    fn text(&self, i: usize) -> &str {
        let b = self.bytes(i);
        // SAFETY: the first three parts are copies of `&str`s (`build`'s callers: `new` and
        // the setters, which pass a `&str` for the one they set and the old bytes for the
        // others).
        unsafe { std::str::from_utf8_unchecked(b) }
    }

    fn tail(&self) -> Tail<'_> {
        Tail::read(&self.buf[self.end(PROMPT)..])
    }

    /// The row's own badges, each ended by a NUL.
    pub(super) fn own(&self) -> &[u8] {
        self.tail().own
    }

    /// The path of a row whose session is `id`.
    pub(super) fn path(&self, id: &str) -> PathBuf {
        let mut out = Vec::new();
        self.tail().path_into(id, &mut out);
        OsString::from_vec(out).into()
    }

    /// The same row with some of its parts replaced (`None`: kept), for a session `id`
    /// (and the path it had read back with `old_id`).
    pub(super) fn rebuilt(
        &self,
        texts: [Option<&[u8]>; 3],
        own: Option<&[u8]>,
        path: Option<&[u8]>,
        (old_id, id): (&str, &str),
    ) -> RowText {
        let t = [0, 1, 2].map(|i| texts[i].unwrap_or_else(|| self.bytes(i)));
        let tail = self.tail();
        let mut old_path = Vec::new();
        let path = match path {
            Some(p) => PathIn::Whole(p),
            // The same path for the same id: its encoding as it stands.
            None if old_id == id => PathIn::Encoded(tail.path),
            None => {
                tail.path_into(old_id, &mut old_path);
                PathIn::Whole(&old_path)
            }
        };
        RowText::build(t, own.unwrap_or(tail.own), path, id)
    }

    /// Replace text `i` by `with`.
    fn replace(&mut self, i: usize, with: &str, id: &str) {
        let mut texts = [None; 3];
        texts[i] = Some(with.as_bytes());
        *self = self.rebuilt(texts, None, None, (id, id));
    }
}

/// `f` of this thread's reusable byte buffer, empty: a row's buffer put together before it
/// is allocated at its size, a path rebuilt to be read once. Taken out while `f` runs, so a
/// use inside `f` starts afresh; not kept past 64 KiB (a huge row's room is not kept).
fn with_scratch<R>(f: impl FnOnce(&mut Vec<u8>) -> R) -> R {
    thread_local! {
        static SCRATCH: std::cell::Cell<Vec<u8>> = const { std::cell::Cell::new(Vec::new()) };
    }
    let mut buf = SCRATCH.take();
    buf.clear();
    let out = f(&mut buf);
    if buf.capacity() <= 64 << 10 {
        SCRATCH.set(buf);
    }
    out
}

impl fmt::Debug for RowText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let tail = self.tail();
        f.debug_struct("RowText")
            .field("title", &self.text(TITLE))
            .field("summary", &self.text(SUMMARY))
            .field("first_prompt", &self.text(PROMPT))
            .field("own_badges", &String::from_utf8_lossy(tail.own))
            .field("dir", &tail.dir)
            .field("name", &String::from_utf8_lossy(tail.name))
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

    /// Where the session lives (file or directory), as its store found it. Rebuilt from the
    /// row's parts on each call (see the module's doc): hold it rather than ask again.
    pub fn path(&self) -> PathBuf {
        self.text.path(&self.id)
    }

    /// `f` of the row's path, rebuilt in this thread's scratch instead of a new `PathBuf`
    /// (the warm start hashes every row's path as it decodes it).
    pub fn with_path<R>(&self, f: impl FnOnce(&Path) -> R) -> R {
        with_scratch(|buf| {
            self.text.tail().path_into(&self.id, buf);
            f(Path::new(OsStr::from_bytes(buf)))
        })
    }

    pub fn set_title(&mut self, v: impl AsRef<str>) {
        self.text.replace(TITLE, v.as_ref(), &self.id);
    }

    pub fn set_summary(&mut self, v: impl AsRef<str>) {
        self.text.replace(SUMMARY, v.as_ref(), &self.id);
    }

    pub fn set_first_prompt(&mut self, v: impl AsRef<str>) {
        self.text.replace(PROMPT, v.as_ref(), &self.id);
    }

    pub fn set_path(&mut self, v: impl AsRef<Path>) {
        let p = v.as_ref().as_os_str().as_bytes();
        self.text = self
            .text
            .rebuilt([None; 3], None, Some(p), (&self.id, &self.id));
    }

    /// Give the row another id, its path unchanged (the path is held relative to the id:
    /// assigning `id` directly would change `path()`).
    pub fn set_id(&mut self, id: impl Into<std::sync::Arc<str>>) {
        let id = id.into();
        self.text = self.text.rebuilt([None; 3], None, None, (&self.id, &id));
        self.id = id;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::StoreKind;
    use std::ffi::OsStr;

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
        let odd = Path::new(OsStr::from_bytes(b"/s/\xff\xfe/x")).to_path_buf();
        s.set_path(&odd);
        assert_eq!(
            (s.title(), s.summary(), s.first_prompt(), s.path()),
            ("", "résumé ✓", "why does\nit fail?", odd.clone())
        );
        s.set_title("Fix the router");
        s.set_first_prompt("");
        assert_eq!(
            (s.title(), s.summary(), s.first_prompt(), s.path()),
            ("Fix the router", "résumé ✓", "", odd)
        );
        // The tail: flags, the directory's number, the name "x".
        let len = HEAD + "Fix the router".len() + "résumé ✓".len() + 1 + 4 + 1;
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
        // The tail: flags, the directory's number, where the id goes, ".jsonl".
        let once = HEAD + p.len() + "sum".len() + 1 + 4 + 1 + ".jsonl".len();
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
        assert_eq!(t.text.buf.len(), HEAD + "renamedsum".len() + 1 + 4 + 1);
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

    /// Every shape of path reads back byte for byte: the id anywhere in the name or not at
    /// all, no directory, a trailing slash, a doubled one, non-UTF-8, an id far into a long
    /// name; and a new id (`set_id`) leaves the path as it was. A store's usual path keeps
    /// only what is neither its directory nor its id.
    #[test]
    fn every_path_reads_back_as_set_and_a_usual_one_is_short() {
        let id = "019ceba0-ae55-7d10-9f2a-4b8e6c1d2a30";
        let codex = format!("/h/.codex/sessions/2026/03/14/rollout-2026-03-14T10-15-02-{id}.jsonl");
        let far = format!("/d/{}{id}.jsonl", "x".repeat(300));
        let paths: Vec<Vec<u8>> = [
            codex.as_str(),
            &format!("/h/.claude/projects/-h-p/{id}.jsonl"),
            &format!("/p/{id}"),
            "/p/other.jsonl",
            "relative",
            "",
            "/",
            "/a/b/",
            "/a//b",
            &far,
        ]
        .iter()
        .map(|p| p.as_bytes().to_vec())
        .chain([b"/s/\xff/\xfe.jsonl".to_vec()])
        .collect();
        for p in &paths {
            let p = Path::new(OsStr::from_bytes(p));
            let mut s = SessionSummary::new(StoreKind::Codex, id, p);
            assert_eq!(s.path(), p, "{p:?}");
            // Rebuilt in the scratch, the same bytes; and again inside itself.
            let inner = s.with_path(|q| (q.to_path_buf(), s.with_path(Path::to_path_buf)));
            assert_eq!(inner, (p.to_path_buf(), p.to_path_buf()), "{p:?}");
            s.set_id("another");
            assert_eq!((&*s.id, s.path()), ("another", p.to_path_buf()), "{p:?}");
            s.set_title("t");
            assert_eq!(s.path(), p, "{p:?}");
            // A setter keeps the path's encoding as it stood: the same bytes a fresh build
            // writes.
            let fresh = RowText::new(["t", "", ""], &[], p, "another");
            assert_eq!(s.text, fresh, "{p:?}");
        }
        let s = SessionSummary::new(StoreKind::Codex, id, &codex);
        let tail = s.text.buf.len() - HEAD - id.len();
        assert_eq!(tail, 1 + 4 + 1 + "rollout-2026-03-14T10-15-02-.jsonl".len());
    }
}
