//! The browser's store side (`browser::perform`) on copies of the contract fixtures: each
//! operation's outcome (sentence, re-read row, removal, what to select) and its file effect.

mod common;

use std::os::unix::fs::PermissionsExt;

use common::Home;
use spool::app::{OpInput, SessionOp};
use spool::browser::perform;
use spool::export::Format;
use spool::model::{SessionSummary, StoreKind};

fn get(st: &spool::store::Stores, r: &str) -> SessionSummary {
    st.resolve(r).unwrap()
}

#[test]
fn metadata_writes_return_the_re_read_row() {
    let h = Home::with_fixtures();
    let st = h.stores();
    let s = get(&st, "loom:20260314-162041");
    assert!(!s.pinned());
    let o = perform(SessionOp::TogglePin, &s, OpInput::None, &st).unwrap();
    assert_eq!(o.message, "pinned loom:20260314-162041");
    assert_eq!(o.rows.len(), 1);
    assert!(o.rows[0].pinned());
    let o = perform(
        SessionOp::Rename,
        &o.rows[0],
        OpInput::Title("Benchmarks, again".into()),
        &st,
    )
    .unwrap();
    assert_eq!(o.message, "renamed loom:20260314-162041");
    assert_eq!(o.rows[0].title(), "Benchmarks, again");
    let o = perform(SessionOp::ToggleArchive, &o.rows[0], OpInput::None, &st).unwrap();
    assert!(o.rows[0].archived);
}

#[test]
fn a_held_lease_is_one_sentence() {
    let h = Home::with_fixtures();
    let st = h.stores();
    let s = get(&st, "harness:Qm3xT8vLk2pR9aZc");
    // Another holder of the lease (flock locks are per open file, so this conflicts).
    let held = spool::store::lease::take_lease(
        &h.harness_dir().join("sessions/Qm3xT8vLk2pR9aZc.lock"),
        "x",
    )
    .unwrap();
    let e = perform(SessionOp::Rename, &s, OpInput::Title("new".into()), &st)
        .unwrap_err()
        .to_string();
    assert!(e.contains("in use by another process"), "{e}");
    assert!(!e.contains('\n'));
    drop(held);
}

#[test]
fn export_writes_0600_and_never_overwrites() {
    let h = Home::with_fixtures();
    let st = h.stores();
    let s = get(&st, "loom:20260314-091502");
    let path = h.path().join("out.html");
    let input = OpInput::Export {
        format: Format::Html,
        path: path.clone(),
    };
    let o = perform(SessionOp::Export, &s, input.clone(), &st).unwrap();
    assert_eq!(
        o.message,
        format!("exported loom:20260314-091502 to {}", path.display())
    );
    let meta = std::fs::metadata(&path).unwrap();
    assert_eq!(meta.permissions().mode() & 0o777, 0o600);
    let first = std::fs::read(&path).unwrap();
    assert!(first.starts_with(b"<!DOCTYPE html>") || first.starts_with(b"<!doctype html>"));
    let e = perform(SessionOp::Export, &s, input, &st).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!("{} already exists; exports never overwrite", path.display())
    );
    assert_eq!(std::fs::read(&path).unwrap(), first);
}

#[test]
fn fork_asks_to_select_the_new_session() {
    let h = Home::with_fixtures();
    let st = h.stores();
    let s = get(&st, "loom:20260314-091502");
    let o = perform(SessionOp::Fork, &s, OpInput::ForkAt(None), &st).unwrap();
    let (kind, id) = o.select.clone().unwrap();
    assert_eq!(kind, StoreKind::Loom);
    assert_eq!(
        o.message,
        format!("forked loom:20260314-091502 into loom:{id}")
    );
    let child = get(&st, &format!("loom:{id}"));
    assert_eq!(child.forked_from(), Some("loom:20260314-091502"));
    // A cut: the sentence names the last message the fork keeps, numbered as the pane
    // numbers messages (`#N`).
    let o = perform(SessionOp::Fork, &s, OpInput::ForkAt(Some(4)), &st).unwrap();
    let id = o.select.unwrap().1;
    assert_eq!(
        o.message,
        format!("forked loom:20260314-091502 through message #3 into loom:{id}")
    );
    // A cut past the history is refused with the store's sentence; nothing is created.
    let before = st.list_all().len();
    let e = perform(SessionOp::Fork, &s, OpInput::ForkAt(Some(6)), &st).unwrap_err();
    let e = e.to_string();
    assert!(!e.is_empty() && !e.contains('\n'), "{e}");
    assert_eq!(st.list_all().len(), before);
    // "Fork from here" on the first round would copy no user message: refused, said why.
    let e = perform(SessionOp::Fork, &s, OpInput::ForkAt(Some(0)), &st).unwrap_err();
    assert!(e.to_string().contains("empty session"), "{e}");
    assert_eq!(st.list_all().len(), before);
}

#[test]
fn loom_delete_is_undoable_and_undo_reselects() {
    let h = Home::with_fixtures();
    let st = h.stores();
    let s = get(&st, "loom:20260314-162041");
    let o = perform(SessionOp::Delete, &s, OpInput::None, &st).unwrap();
    assert_eq!(
        o.message,
        "deleted loom:20260314-162041 (U undoes within 10 minutes)"
    );
    assert_eq!(o.removed, vec![(StoreKind::Loom, "20260314-162041".into())]);
    assert_eq!(
        o.undoable.as_ref().map(|u| u.id.as_ref()),
        Some("20260314-162041")
    );
    assert!(st.resolve("loom:20260314-162041").is_err());
    let o = perform(SessionOp::UndoDelete, &s, OpInput::None, &st).unwrap();
    assert_eq!(o.message, "restored loom:20260314-162041");
    assert_eq!(o.select, Some((StoreKind::Loom, "20260314-162041".into())));
    assert_eq!(o.rows[0].id, "20260314-162041".into());
}

#[test]
fn loop_delete_archives_first_in_the_one_confirmed_step() {
    let h = Home::with_fixtures();
    let st = h.stores();
    // Loop deletes only archived sessions: the dialog's one confirmation archives, then
    // deletes (it used to offer a delete that could only fail).
    let s = get(&st, "loop:b41e07d2");
    assert!(!s.archived);
    let o = perform(SessionOp::Delete, &s, OpInput::None, &st).unwrap();
    assert_eq!(o.message, format!("deleted {}", s.reference()));
    assert!(st.resolve("loop:b41e07d2").is_err());
    let archived = get(&st, "loop:e9d4a6b1");
    let o = perform(SessionOp::Delete, &archived, OpInput::None, &st).unwrap();
    assert!(o.undoable.is_none());
    assert_eq!(o.message, format!("deleted {}", archived.reference()));
}
