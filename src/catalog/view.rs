//! The catalog's rows read in place: each entry's fields borrowed from the file's bytes,
//! for a warm `spool list --json` that prints them as they are (`list_warm`). Decoding every
//! row into its own `SessionSummary` was a quarter of that command's CPU at 100k sessions
//! (issue 10), a third of it the kernel zeroing fresh pages for the ~600k strings; here the
//! only memory is the file's bytes and one small view per entry.
//!
//! A section is read as heads (`EntryHead`): what the stat pass and the listing's filter and
//! order ask of an entry, and the entry's bytes, read again as a whole view (`RowHead::view`)
//! only as its line is printed. Issue 10: the whole views of 100k Codex rows were 30 MB,
//! alive beside the stores' surveys at a warm `spool list`'s peak; heads are about half.
//!
//! The views mirror the catalog's serde forms field by field (`wire::Out`, `row_wire::Out`):
//! postcard writes no names, so the order is the format. A test holds the two equal on
//! every field, and a catalog that does not read as views is simply read the usual way.

use serde::de::{SeqAccess, Visitor};
use serde::{Deserialize, Deserializer};
use std::path::Path;

use super::slim::Held;
use crate::model::{Ended, StoreKind};
use crate::store::registry::Facts;

/// A time as the catalog stores it (`wire::time_opt`): seconds and nanoseconds.
pub type Stamp = Option<(i64, u32)>;

/// A field the listing does not print, read past and not kept (no room in the view).
/// postcard names no types, so each is read as what it is: `T` is its form. A string is
/// read as bytes (the same bytes in postcard), not checked as UTF-8: `from_utf8` was a
/// tenth of reading the views, and the section's checksum already vouches for them.
struct Skip<T>(std::marker::PhantomData<T>);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Skip<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        T::deserialize(d).map(|_| Skip(std::marker::PhantomData))
    }
}

/// A list of strings (a row's badges), each read past as bytes.
struct Strs;

impl<'de> Deserialize<'de> for Strs {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Strs, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Strs;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a list of strings")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Strs, A::Error> {
                while seq.next_element::<Skip<&'de [u8]>>()?.is_some() {}
                Ok(Strs)
            }
        }
        d.deserialize_seq(V)
    }
}

/// A row's fields (`row_wire::Out`'s order), the printed ones borrowed.
#[derive(Deserialize)]
pub struct RowView<'a> {
    pub store: StoreKind,
    pub id: &'a str,
    pub title: &'a str,
    pub summary: &'a str,
    pub cwd: Option<&'a str>,
    pub created_at: Stamp,
    pub updated_at: Stamp,
    pub messages: u64,
    pub pinned_at: Stamp,
    pub pinned_flag: bool,
    pub unread: bool,
    pub archived: bool,
    pub forked_from: Option<&'a str>,
    pub child_of: Option<&'a str>,
    #[serde(borrow)]
    pub path: &'a [u8],
    pub error: Option<&'a str>,
    #[serde(borrow)]
    _first_prompt: Skip<&'a [u8]>,
    pub has_user_message: bool,
    #[serde(borrow)]
    _model: Skip<Option<&'a [u8]>>,
    _badges: Strs,
    _read_only: Skip<bool>,
    pub ended: Option<Ended>,
    #[serde(borrow)]
    _git_branch: Skip<Option<&'a [u8]>>,
}

impl RowView<'_> {
    pub fn pinned(&self) -> bool {
        self.pinned_at.is_some() || self.pinned_flag
    }

    /// `SessionSummary::last_activity`, as stored.
    pub fn last_activity(&self) -> Stamp {
        self.updated_at.or(self.created_at)
    }
}

/// An entry (`wire::Out`'s order): the meta's own id, path and cwd only where they differ
/// from the row's.
#[derive(Deserialize)]
pub struct EntryView<'a> {
    key: u64,
    cwd_dir: bool,
    expires: Option<i64>,
    #[serde(borrow)]
    pub row: Option<RowView<'a>>,
    id: Option<&'a str>,
    #[serde(borrow)]
    path: Option<&'a [u8]>,
    cwd: Option<Option<&'a str>>,
}

impl<'a> EntryView<'a> {
    /// Whether the entry names its session (the full decode refuses one that does not).
    fn whole(&self) -> bool {
        self.row.is_some() || (self.id.is_some() && self.path.is_some() && self.cwd.is_some())
    }
}

/// What the listing keeps of an entry's row until it prints it: the fields its filter and
/// order read, and the entry's bytes to read the rest from then.
pub struct RowHead<'a> {
    /// The whole entry's bytes (`view`).
    entry: &'a [u8],
    pub store: StoreKind,
    pub id: &'a str,
    cwd: Option<&'a str>,
    pub pinned_at: Stamp,
    pinned_flag: bool,
    last: Stamp,
    child: bool,
    error: bool,
    archived: bool,
    has_user_message: bool,
    pub ended: Option<Ended>,
}

impl<'a> RowHead<'a> {
    fn of(r: &RowView<'a>, entry: &'a [u8]) -> RowHead<'a> {
        RowHead {
            entry,
            store: r.store,
            id: r.id,
            cwd: r.cwd,
            pinned_at: r.pinned_at,
            pinned_flag: r.pinned_flag,
            last: r.last_activity(),
            child: r.child_of.is_some(),
            error: r.error.is_some(),
            archived: r.archived,
            has_user_message: r.has_user_message,
            ended: r.ended,
        }
    }

    /// The whole row, read again from the entry's bytes (which read so once already: `None`
    /// only were they changed since, which a mapped catalog's never are).
    pub fn view(&self) -> Option<RowView<'a>> {
        postcard::from_bytes::<EntryView>(self.entry).ok()?.row
    }

    /// What `list`'s filter decides on, as `Filter::accepts` reads it from a row.
    pub fn facts(&self) -> Facts<'a> {
        Facts {
            store: self.store,
            child: self.child,
            cwd: self.cwd,
            error: self.error,
            archived: self.archived,
            empty: crate::model::session::counts_as_empty(self.error, self.has_user_message),
        }
    }

    pub fn pinned(&self) -> bool {
        self.pinned_at.is_some() || self.pinned_flag
    }

    /// `SessionSummary::last_activity`, as stored.
    pub fn last_activity(&self) -> Stamp {
        self.last
    }
}

/// What the stat pass asks of an entry (`Held`), and its row's head.
pub struct EntryHead<'a> {
    key: u64,
    cwd_dir: bool,
    expires: Option<i64>,
    id: &'a str,
    path: &'a [u8],
    cwd: Option<&'a str>,
    pub row: Option<RowHead<'a>>,
}

impl<'a> EntryHead<'a> {
    fn of(e: EntryView<'a>, entry: &'a [u8]) -> EntryHead<'a> {
        let r = e.row.as_ref();
        EntryHead {
            key: e.key,
            cwd_dir: e.cwd_dir,
            expires: e.expires,
            id: (e.id.or(r.map(|r| r.id))).unwrap_or_default(),
            path: (e.path.or(r.map(|r| r.path))).unwrap_or_default(),
            cwd: match e.cwd {
                Some(c) => c,
                None => r.and_then(|r| r.cwd),
            },
            row: r.map(|r| RowHead::of(r, entry)),
        }
    }
}

impl Held for EntryHead<'_> {
    fn id(&self) -> &str {
        self.id
    }
    fn at(&self, path: &Path) -> bool {
        use std::os::unix::ffi::OsStrExt;
        self.path == path.as_os_str().as_bytes()
    }
    fn key(&self) -> u64 {
        self.key
    }
    fn cwd(&self) -> Option<&str> {
        self.cwd
    }
    fn cwd_dir(&self) -> bool {
        self.cwd_dir
    }
    fn expires(&self) -> Option<i64> {
        self.expires
    }
}

/// One store's section (`Section`'s order), its entries as heads.
pub struct SectionView<'a> {
    pub kind: StoreKind,
    pub dir: &'a [u8],
    pub entries: Vec<EntryHead<'a>>,
}

/// The section at `bytes`, which it must fill exactly; `None` for anything the full decode
/// would refuse (so the caller reads it that way and refuses it the same way). Its entries
/// are read one by one (postcard: the kind, the directory, the count, then the entries), so
/// that each head knows its entry's bytes.
pub fn section(bytes: &[u8]) -> Option<SectionView<'_>> {
    let (kind, rest) = postcard::take_from_bytes::<StoreKind>(bytes).ok()?;
    let (dir, rest) = postcard::take_from_bytes::<&[u8]>(rest).ok()?;
    let (n, mut rest) = postcard::take_from_bytes::<usize>(rest).ok()?;
    let times_hold = |r: &RowView| {
        [r.created_at, r.updated_at, r.pinned_at]
            .into_iter()
            .flatten()
            .all(|(s, n)| chrono::DateTime::from_timestamp(s, n).is_some())
    };
    // Bounded ahead, as `wire::entries`: a damaged count fails as the bytes run out.
    let mut entries = Vec::with_capacity(n.min(1 << 17));
    for _ in 0..n {
        let (e, after) = postcard::take_from_bytes::<EntryView>(rest).ok()?;
        if !e.whole() || !e.row.as_ref().is_none_or(times_hold) {
            return None;
        }
        entries.push(EntryHead::of(e, &rest[..rest.len() - after.len()]));
        rest = after;
    }
    rest.is_empty()
        .then_some(SectionView { kind, dir, entries })
}

/// The section's directory as the store names it.
pub fn is_dir_of(s: &SectionView, dir: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    s.dir == dir.as_os_str().as_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::{Catalog, Entry, Meta, Section, save, stream};
    use crate::model::SessionSummary;
    use std::sync::Arc;

    /// Rows with every field set in turn (and left empty), each field's value telling the
    /// rows apart: a view that reads one field from another's slot shows.
    fn rows() -> Vec<SessionSummary> {
        use std::os::unix::ffi::OsStrExt;
        let at = |s: i64, n: u32| chrono::DateTime::from_timestamp(s, n);
        (0..60usize)
            .map(|i| {
                let kind = StoreKind::ALL[i % 6];
                let bytes = [b'/', b'p', 0xff, b'0' + (i % 10) as u8];
                let path = std::ffi::OsStr::from_bytes(&bytes);
                let mut r = SessionSummary::new(kind, format!("id{i}\u{202e}\""), path);
                r.set_title(format!("title {i}\n"));
                r.set_summary(format!("summary {i} é"));
                r.cwd = (i % 3 > 0).then(|| format!("/cwd/{}", i % 4).into());
                r.created_at = (i % 4 > 0)
                    .then(|| at(1_700_000_000 + i as i64, 5))
                    .flatten();
                r.updated_at = (i % 5 > 0)
                    .then(|| at(1_800_000_000 - i as i64, 1_500_000_000))
                    .flatten();
                r.pinned_at = (i % 7 == 0).then(|| at(i as i64, 9)).flatten();
                r.messages = (i as u64) << (i % 64);
                r.pinned_flag = i % 2 == 0;
                r.unread = i % 3 == 0;
                r.archived = i % 5 == 0;
                r.set_first_prompt("x".repeat(i));
                r.has_user_message = i % 4 != 1;
                r.model = (i % 2 == 1).then(|| "m/x".into());
                r.set_badges((0..i % 3).map(|k| format!("badge {k}")));
                r.read_only = i % 6 == 0;
                r.ended = (i % 6 > 0).then(|| Ended::ALL[i % 5]);
                r.set_forked_from((i % 4 == 2).then(|| format!("loop:f{i}")));
                r.set_child_of((i % 9 == 3).then(|| format!("codex:c{i}")));
                r.set_error((i % 8 == 5).then(|| format!("bad {i}")));
                r.set_git_branch((i % 3 == 2).then(|| format!("b{i}")));
                r
            })
            .collect()
    }

    /// Entries over `rows()`, some metas differing from their rows, one without a row.
    fn catalog() -> Catalog {
        let mut entries: Vec<Entry> = (rows().into_iter().enumerate())
            .map(|(i, r)| Entry {
                meta: Meta {
                    id: if i % 11 == 4 {
                        format!("other{i}")
                    } else {
                        r.id.to_string()
                    },
                    path: if i % 13 == 6 {
                        "/elsewhere".into()
                    } else {
                        r.path()
                    },
                    key: i as u64 * 7919,
                    cwd: if i % 10 == 7 {
                        Some("/moved".into())
                    } else {
                        r.cwd.clone()
                    },
                    cwd_dir: i % 2 == 1,
                    expires: (i % 3 == 0).then_some(i as i64 - 30),
                },
                row: Some(Arc::new(r)),
            })
            .collect();
        entries.push(Entry {
            meta: Meta {
                id: "skipped".into(),
                path: "/p/skipped".into(),
                key: 1,
                cwd: None,
                cwd_dir: false,
                expires: None,
            },
            row: None,
        });
        let half = entries.split_off(30);
        Catalog {
            sections: vec![
                Section {
                    kind: StoreKind::Loom,
                    dir: "/s/a".into(),
                    entries,
                },
                Section {
                    kind: StoreKind::Pi,
                    dir: "/s/b".into(),
                    entries: half,
                },
            ],
        }
    }

    /// Each view reads every field the listing and the stat pass use as the full decode
    /// does, from the same file.
    #[test]
    fn a_section_read_in_place_holds_what_the_full_decode_gives() {
        use std::os::unix::ffi::OsStrExt;
        let d = tempfile::tempdir().unwrap();
        let cat = catalog();
        save(d.path(), &cat).unwrap();
        let (bytes, spans) = stream::whole(&crate::catalog::file(d.path())).unwrap();
        let full = crate::catalog::load(d.path()).unwrap();
        assert_eq!(spans.len(), full.sections.len());
        let at = |t: Stamp| t.and_then(|(s, n)| chrono::DateTime::from_timestamp(s, n));
        for ((r, sum), s) in spans.iter().zip(&full.sections) {
            assert!(stream::holds(&bytes[r.clone()], *sum));
            let v = section(&bytes[r.clone()]).expect("reads as views");
            assert_eq!((v.kind, v.dir), (s.kind, s.dir.as_os_str().as_bytes()));
            assert_eq!(v.entries.len(), s.entries.len());
            for (e, f) in v.entries.iter().zip(&s.entries) {
                let m = &f.meta;
                assert_eq!(
                    (e.id(), e.key(), e.cwd()),
                    (&*m.id, m.key, m.cwd.as_deref())
                );
                assert_eq!((e.cwd_dir(), e.expires()), (m.cwd_dir, m.expires));
                assert!(e.at(&m.path) && !e.at(Path::new("/nowhere")), "{}", m.id);
                let (Some(h), Some(r)) = (&e.row, &f.row) else {
                    assert!(e.row.is_none() && f.row.is_none());
                    continue;
                };
                // The head's own fields, then the whole row read again from its bytes.
                assert_eq!((h.store, h.id, h.ended), (r.store, &*r.id, r.ended));
                assert_eq!((at(h.pinned_at), h.pinned()), (r.pinned_at, r.pinned()));
                assert_eq!(
                    h.last_activity().and_then(|t| at(Some(t))),
                    r.last_activity()
                );
                let facts = h.facts();
                assert_eq!((facts.store, facts.cwd), (r.store, r.cwd.as_deref()));
                assert_eq!(
                    (facts.child, facts.error, facts.archived, facts.empty),
                    (
                        r.child_of().is_some(),
                        r.error().is_some(),
                        r.archived,
                        r.is_empty()
                    )
                );
                let v = &h.view().expect("reads again");
                assert_eq!(
                    (v.store, v.id, v.title, v.summary),
                    (r.store, &*r.id, r.title(), r.summary())
                );
                assert_eq!(v.cwd, r.cwd.as_deref());
                assert_eq!(
                    (at(v.created_at), at(v.updated_at)),
                    (r.created_at, r.updated_at)
                );
                assert_eq!(
                    (
                        at(v.pinned_at),
                        v.pinned(),
                        v.last_activity().and_then(|t| at(Some(t)))
                    ),
                    (r.pinned_at, r.pinned(), r.last_activity())
                );
                assert_eq!(
                    (v.messages, v.unread, v.archived),
                    (r.messages, r.unread, r.archived)
                );
                assert_eq!(
                    (v.forked_from, v.child_of, v.error),
                    (r.forked_from(), r.child_of(), r.error())
                );
                assert_eq!(v.path, r.path().as_os_str().as_bytes());
                assert_eq!((v.has_user_message, v.ended), (r.has_user_message, r.ended));
            }
        }
    }

    /// The file mapped whole is the file's bytes, and stays them while a save replaces the
    /// catalog (by a rename: the inode mapped is never rewritten); a file too short for its
    /// header, or empty (which cannot be mapped), is no catalog.
    #[test]
    fn the_mapped_file_is_its_bytes_and_outlives_a_save_over_it() {
        let d = tempfile::tempdir().unwrap();
        save(d.path(), &catalog()).unwrap();
        let f = crate::catalog::file(d.path());
        let want = std::fs::read(&f).unwrap();
        let (bytes, spans) = stream::whole(&f).unwrap();
        assert_eq!(&bytes[..], &want[..]);
        save(d.path(), &Catalog { sections: vec![] }).unwrap();
        assert_ne!(std::fs::read(&f).unwrap(), want);
        assert_eq!(&bytes[..], &want[..]);
        assert!((spans.iter()).all(|(r, sum)| stream::holds(&bytes[r.clone()], *sum)));
        for short in [&b""[..], &want[..10]] {
            std::fs::write(&f, short).unwrap();
            assert!(stream::whole(&f).is_none());
        }
    }

    /// A section cut short, or with a byte more, is not read as views.
    #[test]
    fn a_section_that_does_not_end_where_its_entries_do_is_refused() {
        let d = tempfile::tempdir().unwrap();
        save(d.path(), &catalog()).unwrap();
        let (bytes, spans) = stream::whole(&crate::catalog::file(d.path())).unwrap();
        let r = spans[0].0.clone();
        assert!(section(&bytes[r.clone()]).is_some());
        assert!(section(&bytes[r.start..r.end - 1]).is_none());
        let mut more = bytes[r].to_vec();
        more.push(0);
        assert!(section(&more).is_none());
    }
}
