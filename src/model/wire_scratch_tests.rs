//! A row's texts decoded through the thread's scratch come back as they were written, in any
//! serde format and field order, and the scratch is empty again after each row.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;

use super::{BYTES, ITEMS, clear};
use crate::model::{SessionSummary, StoreKind};

/// How many bytes and list items the scratch holds on this thread.
fn held() -> (usize, usize) {
    (BYTES.with_borrow(Vec::len), ITEMS.with_borrow(Vec::len))
}

/// Rows that use every text: a Codex rollout with interned and counted badges, one with a
/// path that is not UTF-8 and a prompt equal to its title, and a bare one.
fn rows() -> Vec<SessionSummary> {
    let id = "019ceba0-ae55-7d10-9f2a-4b8e6c1d2a30";
    let path = format!("/h/.codex/sessions/2026/03/14/rollout-2026-03-14T10-15-02-{id}.jsonl");
    let mut a = SessionSummary::new(StoreKind::Codex, id, path);
    a.set_title("fix the flaky test");
    a.set_summary("ran the suite twice");
    a.set_first_prompt("why does it fail on CI?");
    a.set_badges(["duplicate in archive", "branch main", "9240 tokens"]);
    let mut b = SessionSummary::new(StoreKind::Loop, "b", OsStr::from_bytes(b"/s/\xff/b"));
    b.set_title("same");
    b.set_first_prompt("same");
    b.set_error(Some("2 unreadable lines".into()));
    let c = SessionSummary::new(StoreKind::Loom, "", "");
    vec![a, b, c]
}

fn badges(s: &SessionSummary) -> Vec<String> {
    s.badges().map(str::to_owned).collect()
}

#[test]
fn rows_read_back_through_postcard_and_leave_the_scratch_empty() {
    let want = rows();
    let bytes = postcard::to_allocvec(&want).unwrap();
    let got: Vec<SessionSummary> = postcard::from_bytes(&bytes).unwrap();
    assert_eq!(got, want);
    assert_eq!(
        got.iter().map(badges).collect::<Vec<_>>(),
        want.iter().map(badges).collect::<Vec<_>>()
    );
    assert_eq!(
        held(),
        (0, 0),
        "each row's texts are dropped once it is built"
    );
}

/// JSON gives the path as a list of numbers, and a map's fields in any order: the scratch
/// is cut at the row's first text wherever it came.
#[test]
fn rows_read_back_through_json_in_any_field_order() {
    for want in rows() {
        let mut v = serde_json::to_value(&want).unwrap();
        let o = v.as_object_mut().unwrap();
        // The texts last first: the path and badges before the title.
        let mut fields: Vec<_> = std::mem::take(o).into_iter().collect();
        fields.reverse();
        o.extend(fields);
        let text = serde_json::to_string(&v).unwrap();
        assert!(text.find("\"badges\"") < text.find("\"title\""), "{text}");
        let got: SessionSummary = serde_json::from_str(&text).unwrap();
        assert_eq!(got, want);
        assert_eq!(got.path(), want.path());
        assert_eq!(held(), (0, 0), "{text}");
    }
}

/// A row whose bytes end half way leaves its texts, which `clear` drops (the catalog's
/// decode calls it when its run of rows ends, failed or not).
#[test]
fn a_row_cut_short_leaves_texts_that_clear_drops() {
    let bytes = postcard::to_allocvec(&rows()[0]).unwrap();
    let cut = &bytes[..bytes.len() - 20];
    assert!(postcard::from_bytes::<SessionSummary>(cut).is_err());
    assert_ne!(
        held().0,
        0,
        "the title and what came after it are still held"
    );
    clear();
    assert_eq!(held(), (0, 0));
    // The next row reads back whole.
    let want = rows().remove(1);
    let got: SessionSummary = postcard::from_bytes(&postcard::to_allocvec(&want).unwrap()).unwrap();
    assert_eq!(got, want);
}

/// Catalog entries decode from a reader through a scratch as long as one field: no text of a
/// row is taken out of postcard's scratch for good (it is asked for as a `string`, never a
/// `str`, `super::super::wire::arc_str`). Asked for as `str`, the ids, cwds, models and
/// badges of 100k rows kept ~15 MB of the scratch resident until their section was decoded,
/// at a warm start's peak (issue 10); here a 1 KiB scratch would run out after a few rows.
#[test]
fn rows_decode_through_a_scratch_of_one_field() {
    use crate::catalog::{Entry, Meta};
    let entries: Vec<Entry> = (0..2000)
        .map(|i| {
            let mut row = rows().remove(0);
            row.set_id(format!("019ceba0-ae55-7d10-9f2a-{i:012x}"));
            row.cwd = Some("/home/u/acme".into());
            row.model = Some("openai/gpt-5".into());
            row.set_git_branch(Some("main".into()));
            let meta = Meta {
                id: row.id.to_string(),
                path: row.path(),
                key: i,
                cwd: row.cwd.clone(),
                cwd_dir: true,
                expires: None,
            };
            Entry {
                meta,
                row: Some(std::sync::Arc::new(row)),
            }
        })
        .collect();
    let bytes = postcard::to_allocvec(&entries).unwrap();
    let mut scratch = [0u8; 1024];
    let (got, _): (Vec<Entry>, _) = postcard::from_io((&bytes[..], &mut scratch[..])).unwrap();
    assert_eq!(got, entries);
}
