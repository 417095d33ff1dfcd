//! Phrase queries find their top sessions without reading every match's positions (issue 8):
//! the pruned answer must equal the exhaustive one, with no phrase match dropped and no
//! message that holds the words apart ranked in. Sessions where the words are frequent but
//! never adjacent score highest on the words alone, which is what a pruned walk could
//! wrongly keep; rare, short messages holding the phrase are what it could wrongly skip.

use std::path::Path;

use spool::search::index::TextIndex;
use spool::search::query::TextQuery;
use spool::store::{Roots, Stores};

/// A loom session of user messages.
fn loom(dir: &Path, id: &str, day: u32, texts: &[String]) {
    let mut s =
        format!("{{\"kind\":\"meta\",\"time\":\"2026-01-{day:02}T10:00:00Z\",\"cwd\":\"/w\"}}\n");
    for t in texts {
        let m = serde_json::json!({"kind": "message", "time": format!("2026-01-{day:02}T10:01:00Z"),
            "message": {"role": "user", "content": t}});
        s.push_str(&format!("{m}\n"));
    }
    std::fs::write(dir.join(format!("{id}.jsonl")), s).unwrap();
}

/// Whether the session's text holds `phrase` word for word (lower case, words split on
/// anything not alphanumeric, as the index's tokenizer does).
fn holds(texts: &[String], phrase: &[&str]) -> bool {
    texts.iter().any(|t| {
        let words: Vec<String> = t
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(str::to_lowercase)
            .collect();
        words.windows(phrase.len()).any(|w| w == phrase)
    })
}

#[test]
fn a_pruned_phrase_query_equals_the_exhaustive_one() {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join("loom/sessions");
    std::fs::create_dir_all(&dir).unwrap();
    let mut sessions = Vec::new();
    for i in 0..240u32 {
        let filler = "lorem ipsum dolor sit amet ".repeat((i % 7) as usize);
        let texts: Vec<String> = match i % 6 {
            // The words often, never adjacent: the highest scores on the words alone.
            0 => vec![format!("router router router the test test test {filler}")],
            1 => vec![format!(
                "test then router; {filler} router again, test again"
            )],
            // The phrase, in messages of different lengths and counts.
            2 => vec![format!("the router test failed {filler}")],
            3 => vec![
                format!("{filler} router test router test flaky"),
                "nothing here".into(),
            ],
            // The phrase only in a long message, with the words apart elsewhere.
            4 => vec![
                format!("{filler} {filler} we ran the router test at last"),
                "router and test and router".into(),
            ],
            _ => vec![format!("unrelated {filler}")],
        };
        let id = format!("s{i:03}");
        loom(&dir, &id, 1 + i % 28, &texts);
        sessions.push((id, texts));
    }
    let stores = Stores::open(&Roots::all_in(home.path()));
    let rows = stores.list_all();
    let ixdir = home.path().join("index");
    let mut ix = TextIndex::open(&ixdir).unwrap();
    ix.update(&rows, &stores, &|_, _| {}).unwrap();

    for (q, words, without) in [
        ("\"router test\"", vec!["router", "test"], None),
        (
            "\"router test\" -flaky",
            vec!["router", "test"],
            Some("flaky"),
        ),
        ("\"router test\" failed", vec!["router", "test"], None),
        ("\"the router test\"", vec!["the", "router", "test"], None),
        // A rare word leading a common one: most documents are dropped on its count alone.
        ("\"test flaky\"", vec!["test", "flaky"], None),
        ("\"test failed\" router", vec!["test", "failed"], None),
    ] {
        let parsed = TextQuery::parse(q).unwrap();
        // Above 1000 the index folds every match (no pruning): the reference.
        let all = ix.search(&parsed, &|_| true, 5000).unwrap();
        // Every session holding the phrase (and `failed` where asked) can match; those with
        // no message holding the excluded word must (an exclusion drops messages, and a
        // title cut short of the word can still match).
        let can: Vec<&String> = sessions
            .iter()
            .filter(|(_, t)| holds(t, &words))
            .filter(|(_, t)| !q.contains(" failed") || t.iter().any(|m| m.contains("failed")))
            .filter(|(_, t)| !q.ends_with("router") || t.iter().any(|m| m.contains("router")))
            .map(|(id, _)| id)
            .collect();
        let must: Vec<&String> = sessions
            .iter()
            .filter(|(id, t)| {
                can.contains(&id) && without.is_none_or(|w| !t.iter().any(|m| m.contains(w)))
            })
            .map(|(id, _)| id)
            .collect();
        let got_all: Vec<&String> = all.iter().map(|h| &h.key.1).collect();
        assert!(!must.is_empty(), "{q}: the fixture has matches");
        for id in &must {
            assert!(
                got_all.contains(id),
                "{q}: {id} holds the phrase and was dropped"
            );
        }
        for id in &got_all {
            assert!(can.contains(id), "{q}: {id} does not hold the phrase");
        }
        if without.is_none() {
            assert_eq!(
                got_all.len(),
                must.len(),
                "{q}: exactly the sessions holding it"
            );
        }
        for limit in [1, 3, 10, 20, 50] {
            let top = ix.search(&parsed, &|_| true, limit).unwrap();
            let want: Vec<(&String, f32)> = all
                .iter()
                .take(limit)
                .map(|h| (&h.key.1, h.score))
                .collect();
            let got: Vec<(&String, f32)> = top.iter().map(|h| (&h.key.1, h.score)).collect();
            assert_eq!(
                got, want,
                "{q} limit {limit}: the pruned top equals the full ranking"
            );
        }
        // A filter that turns down the best sessions: the next ones still come, in order.
        let best: Vec<String> = all.iter().take(5).map(|h| h.key.1.clone()).collect();
        let accept = |k: &spool::search::Key| !best.contains(&k.1);
        let top = ix.search(&parsed, &accept, 10).unwrap();
        let want: Vec<&String> = all.iter().skip(5).take(10).map(|h| &h.key.1).collect();
        let got: Vec<&String> = top.iter().map(|h| &h.key.1).collect();
        assert_eq!(got, want, "{q}: filtered");
    }
}

/// A handle that keeps searching while its index grows (the browser's searcher during a
/// first build) answers as a handle opened afresh: the columns it keeps per segment follow
/// new, merged and emptied segments.
#[test]
fn a_handle_searching_across_commits_answers_as_a_fresh_one() {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join("loom/sessions");
    std::fs::create_dir_all(&dir).unwrap();
    let ixdir = home.path().join("index");
    let mut ix = TextIndex::open(&ixdir).unwrap();
    // Small batches: several segments, so documents of one query sit in different ones.
    ix.set_batches(spool::search::index::Batches {
        sessions: 7,
        every: std::time::Duration::from_secs(600),
    });
    let q = TextQuery::parse("\"router test\"").unwrap();
    for wave in 0..3u32 {
        for i in 0..40u32 {
            let filler = "lorem ipsum ".repeat(((i + wave) % 5) as usize);
            let text = format!("{filler} the router test number {wave} {i} router");
            loom(&dir, &format!("w{wave}s{i:02}"), 1 + (i % 27), &[text]);
        }
        if wave == 2 {
            // A session gone: its segment loses documents.
            std::fs::remove_file(dir.join("w0s00.jsonl")).unwrap();
        }
        let stores = Stores::open(&Roots::all_in(home.path()));
        ix.update(&stores.list_all(), &stores, &|_, _| {}).unwrap();
        for limit in [5, 20, 5000] {
            let kept = ix.search(&q, &|_| true, limit).unwrap();
            let fresh = TextIndex::open(&ixdir)
                .unwrap()
                .search(&q, &|_| true, limit)
                .unwrap();
            assert_eq!(kept, fresh, "wave {wave}, limit {limit}");
            assert_eq!(
                kept.len(),
                limit.min(40 * (wave as usize + 1) - (wave == 2) as usize)
            );
            for h in &kept {
                assert_eq!(
                    h.message,
                    Some(0),
                    "{:?}: the message, not the title",
                    h.key
                );
            }
        }
    }
}
