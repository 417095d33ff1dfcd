//! Precision of the quick search (`/` in the list, `list --query`): a query finds the sessions
//! that say it (in title, summary, first prompt or project), not every session whose long
//! summary holds its letters somewhere.

mod common;

use common::{Home, json_lines};
use spool::model::SessionSummary;
use spool::search::rank_rows;
use spool::store::Stores;

fn all_rows(stores: &Stores) -> Vec<SessionSummary> {
    stores.stores.iter().flat_map(|s| s.list()).collect()
}

fn says(s: &SessionSummary, word: &str) -> bool {
    let w = word.to_lowercase();
    [s.title(), s.summary(), s.first_prompt(), s.project()]
        .iter()
        .any(|f| f.to_lowercase().contains(&w))
}

#[test]
fn demo_tim_and_port_match_only_sessions_that_say_them() {
    let demo = spool::demo::DemoStore::create().unwrap();
    let rows = all_rows(&Stores::open(&demo.roots()));
    for q in ["tim", "port"] {
        let hits = rank_rows(rows.clone(), q);
        // Only the first 400 characters of a summary or prompt are searched, so a session
        // may say it further down and still not match; never the other way round.
        let truly = rows.iter().filter(|s| says(s, q)).count();
        assert!(
            hits.len() <= truly && !hits.is_empty(),
            "/{q}: {}",
            hits.len()
        );
        for s in &hits {
            assert!(
                says(s, q),
                "/{q} matched {:?} that does not say it",
                s.title()
            );
        }
    }
}

#[test]
fn one_title_word_finds_its_session_first_and_nothing_unrelated() {
    let h = Home::with_fixtures();
    let rows = all_rows(&h.stores());
    let mut checked = 0;
    for s in &rows {
        for word in s.title().split(|c: char| !c.is_alphanumeric()) {
            let unique = rows
                .iter()
                .filter(|r| r.title().to_lowercase().contains(&word.to_lowercase()))
                .count()
                == 1;
            if word.chars().count() < 4 || !unique {
                continue;
            }
            let hits = rank_rows(rows.clone(), word);
            assert_eq!(hits.first().map(|r| &r.id), Some(&s.id), "{word}");
            for r in &hits {
                assert!(says(r, word), "{word} matched {:?}", r.title());
            }
            checked += 1;
        }
    }
    assert!(checked >= 5, "only {checked} title words checked");
}

#[test]
fn list_query_uses_the_same_rules() {
    let h = Home::with_fixtures();
    let rows = all_rows(&h.stores());
    let word = rows
        .iter()
        .flat_map(|s| s.title().split(' ').map(str::to_string).collect::<Vec<_>>())
        .find(|w| w.len() >= 5)
        .unwrap();
    let listed = json_lines(&h.ok(&["list", "--json", "--all", "--query", &word]));
    let ranked = rank_rows(rows, &word);
    let ids: Vec<&str> = listed.iter().map(|r| r["id"].as_str().unwrap()).collect();
    let want: Vec<&str> = ranked.iter().map(|r| r.id.as_ref()).collect();
    assert_eq!(ids, want);
}
