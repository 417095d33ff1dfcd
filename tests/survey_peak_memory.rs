//! The most a survey of an agent store holds while it is taken, counted by a counting
//! allocator (bytes, not time). The browser surveys while the decoded rows are held, so a
//! survey's peak lands on top of them (issue 10: at 100k sessions, Codex's survey walked
//! the store twice, held its entries, a candidate of each and the packed survey's room at
//! once; Claude Code's and pi's held each directory's candidates and all of them merged).

mod common;

use std::path::Path;

use common::Home;
use common::counting::{Counting, peak_during};
use spool::catalog::live::Early;
use spool::model::StoreKind;
use spool::store::Store;

#[global_allocator]
static A: Counting = Counting;

const N: usize = 3000;

/// Per session, the most a survey may hold while it is taken (the counted bytes include
/// every vector's spare capacity). Measured at 3,000 sessions: Codex 300 bytes (646 before
/// this single discovery, packed walk and keys taken where each directory is
/// packed), Claude Code 149 (433 when every project's candidates were merged, then packed,
/// then keyed), pi 196 (495); their names here are 69, 42 and 72 bytes.
const CODEX_BYTES: usize = 380;
const CLAUDE_BYTES: usize = 210;
const PI_BYTES: usize = 260;

fn id(i: usize) -> String {
    format!("019c{i:04x}-0000-7000-8000-{i:012x}")
}

/// `N` sessions of `kind` under `h`, spread over a few directories as the agents do.
fn fill(h: &Home, kind: StoreKind) {
    for i in 0..N {
        let path = match kind {
            StoreKind::Codex => h.codex_dir().join(format!(
                "sessions/2026/03/{:02}/rollout-2026-03-{:02}T10-00-{:02}-{}.jsonl",
                1 + i % 20,
                1 + i % 20,
                i % 60,
                id(i)
            )),
            StoreKind::Claude => {
                h.claude_dir()
                    .join(format!("projects/-w-p{}/{}.jsonl", i % 30, id(i)))
            }
            _ => h.pi_dir().join(format!(
                "--w-p{}--/2026-03-14T10-00-00-000Z_{}.jsonl",
                i % 30,
                id(i)
            )),
        };
        put(&path);
    }
}

fn put(path: &Path) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, "{}\n").unwrap();
}

/// One test: the counts are process-wide, so nothing else may allocate meanwhile.
#[test]
fn an_agent_stores_survey_never_holds_its_sessions_twice() {
    for (kind, bound) in [
        (StoreKind::Codex, CODEX_BYTES),
        (StoreKind::Claude, CLAUDE_BYTES),
        (StoreKind::Pi, PI_BYTES),
    ] {
        let h = Home::empty();
        fill(&h, kind);
        let stores = h.stores();
        let store: &dyn Store = common::store_of(&stores, kind);
        let (early, peak) = peak_during(|| Early::take(store, None));
        assert_eq!(early.survey.keys.len(), N, "{kind:?}");
        drop(early);
        eprintln!("{kind:?}: survey peak {} B/session", peak / N);
        assert!(
            peak <= N * bound,
            "{kind:?}: a survey's peak is {} bytes a session (bound {bound})",
            peak / N
        );
    }
}
