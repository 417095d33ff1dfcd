//! What a store's survey holds while it waits for its stat pass, counted by a counting
//! allocator (bytes, not time). The browser surveys every store while the catalog decodes,
//! so each survey sits on top of the decoded rows until its check (issue 10: at 100k
//! sessions, discovery's candidates were about 280 bytes each, where a warm start's memory
//! peaked).

mod common;

use common::Home;
use common::counting::{Counting, live};
use spool::catalog::live::Early;
use spool::model::StoreKind;

#[global_allocator]
static A: Counting = Counting;

const N: usize = 3000;

/// Per candidate, what a taken survey keeps: its id and file name in one byte string, a
/// spot of three `u32`, its mtime and its key (about 75 bytes for these names). Discovery's
/// `Candidate` is 136 bytes inline before its id and path (about 220 here): the old code
/// fails this bound.
const SURVEY_BYTES: usize = 100;

/// One test: the counts are process-wide, so nothing else may allocate meanwhile.
#[test]
fn a_survey_waiting_for_its_check_is_packed() {
    let h = Home::empty();
    let stores = h.stores();
    let store = common::store_of(&stores, StoreKind::Loom);
    let dir = store.sessions_dir().to_path_buf();
    std::fs::create_dir_all(&dir).unwrap();
    for i in 0..N {
        std::fs::write(dir.join(format!("20260314-{i:06}.jsonl")), "{}\n").unwrap();
    }
    let before = live();
    let early = Early::take(store, None);
    let kept = live() - before;
    drop(early);
    assert!(
        kept <= N * SURVEY_BYTES,
        "a survey keeps {} bytes a candidate (bound {SURVEY_BYTES})",
        kept / N
    );
    eprintln!("survey {} B/candidate", kept / N);
}
