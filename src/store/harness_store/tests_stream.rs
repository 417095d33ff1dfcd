//! The views read in passes (`streamed`, `raw`) equal the views of the record parsed whole,
//! on every fixture and on records built to reach each corner: rounds and compaction
//! markers at the cut, unanswered calls, entries that are not objects, histories that are
//! not arrays, repeated keys, NaN literals, a BOM.

use std::path::Path;

use super::tests_read::with_files;
use super::*;

/// Records that reach the passes' corners (each is also read the careful way).
fn corner_records() -> Vec<(String, String)> {
    let calls = r#"{"role": "assistant", "content": "", "tool_calls": [
        {"id": "c1", "function": {"name": "bash", "arguments": "{\"command\": \"ls\"}"}},
        {"id": "c2", "function": {"name": "read", "arguments": "not json"}},
        {"id": "", "function": {"name": "x"}}]}"#;
    let hist = format!(
        r#"[{{"role": "system", "content": "sys"}}, {{"role": "user", "content": "<user_input>\none\n</user_input>"}},
        {calls}, {{"role": "tool", "tool_call_id": "c1", "content": "[bash] out"}},
        {{"role": "user", "content": "two"}}, 3, "text", null, [1, 2], {{"role": 5}},
        {{"role": "assistant", "content": "done", "reasoning": "think"}},
        {{"role": "tool", "tool_call_id": "zz", "content": "orphan"}},
        {{"role": "user", "content": "three"}}, {calls}]"#
    );
    let head = |id: &str| {
        format!(
            r#""id": "{id}", "updated_at": "2026-03-14T10:00:00+00:00", "created_at": "2026-03-14T09:00:00+00:00", "title": "t", "state": {{"todos": [{{"content": "a", "status": "pending"}}], "calls": 2}}"#
        )
    };
    let compactions = r#""compactions": [{"summary": "s4", "transcript_length": 4}, {"summary": "s0", "transcript_length": 0}, {"summary": "far", "transcript_length": 99}, {"summary": {"x": 1}}, {"summary": "s12", "transcript_length": 12}]"#;
    let mut out = Vec::new();
    let mut add = |id: &str, body: String| out.push((id.to_string(), body));
    add(
        "both",
        format!(
            r#"{{{}, "messages": {hist}, "transcript": {hist}, {compactions}, "n": 1.5e300, "big": 123456789012345678901234567890}}"#,
            head("both")
        ),
    );
    add(
        "msgonly",
        format!(
            r#"{{{}, {compactions}, "messages": {hist}}}"#,
            head("msgonly")
        ),
    );
    add(
        "nouser",
        format!(
            r#"{{{}, "messages": [{{"role": "assistant", "content": "a"}}], "compactions": [{{"summary": "z"}}]}}"#,
            head("nouser")
        ),
    );
    add(
        "empty",
        format!(r#"{{{}, "messages": [], "transcript": []}}"#, head("empty")),
    );
    add("nomsgs", format!(r#"{{{}}}"#, head("nomsgs")));
    add("bare", "{}".into());
    add(
        "notarray",
        format!(
            r#"{{{}, "messages": {{"a": 1}}, "transcript": 7}}"#,
            head("notarray")
        ),
    );
    add(
        "dupkey",
        format!(
            r#"{{{}, "messages": [{{"role": "user", "content": "old"}}], "title": "t2", "messages": [{{"role": "user", "content": "new"}}]}}"#,
            head("dupkey")
        ),
    );
    add(
        "nan",
        format!(
            r#"{{{}, "messages": [{{"role": "user", "content": "x"}}], "cost": NaN}}"#,
            head("nan")
        ),
    );
    add(
        "bom",
        format!("\u{feff}{{{}, \"messages\": []}}", head("bom")),
    );
    add(
        "torn",
        format!(r#"{{{}, "messages": [{{"role": "user""#, head("torn")),
    );
    out
}

/// Every fixture record of the harness kind, by directory.
fn fixture_dirs() -> Vec<std::path::PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut dirs = vec![
        root.join("harness/sessions"),
        root.join("harness/ended/sessions"),
    ];
    if let Ok(rd) = std::fs::read_dir(root.join("phrases/harness")) {
        dirs.extend(rd.flatten().map(|e| e.path().join("sessions")));
    }
    dirs.retain(|d| d.is_dir());
    dirs
}

/// `{:?}` of a result: errors are compared by their words.
fn shown<T: std::fmt::Debug>(r: &Result<T>) -> String {
    format!("{r:?}")
}

fn assert_same_views(store: &HarnessStore, id: &str) {
    for span in [
        Span::All,
        Span::LastRounds(0),
        Span::LastRounds(1),
        Span::LastRounds(2),
        Span::LastRounds(5),
    ] {
        assert_eq!(
            shown(&store.transcript(id, span)),
            shown(&store.transcript_whole(id, span)),
            "transcript of {id}, {span:?}"
        );
    }
    assert_eq!(
        shown(&store.window(id)),
        shown(&store.window_whole(id)),
        "window of {id}"
    );
    let whole = store.raw_whole(id);
    assert_eq!(shown(&store.raw(id)), shown(&whole), "raw of {id}");
    let Ok(whole) = whole else { return };
    for bytes in [1, 40, 200, 1 << 20] {
        let (page, cut) = store.raw_page(id, bytes).unwrap();
        assert!(whole.ends_with(&page), "raw page {bytes} of {id}: {page:?}");
        assert_eq!(cut, page.len() < whole.len(), "raw page {bytes} of {id}");
        if !cut {
            assert_eq!(page, whole);
        }
    }
}

#[test]
fn streamed_views_equal_the_whole_read_on_every_fixture() {
    let dirs = fixture_dirs();
    assert!(dirs.len() >= 2, "{dirs:?}");
    let mut seen = 0;
    for dir in dirs {
        let store = HarnessStore::new(dir.parent().unwrap());
        for c in store.discover() {
            assert_same_views(&store, &c.id);
            seen += 1;
        }
    }
    assert!(seen >= 9, "only {seen} fixture records");
}

#[test]
fn streamed_views_equal_the_whole_read_on_corner_records() {
    let records = corner_records();
    let files: Vec<(String, Vec<u8>)> = records
        .iter()
        .map(|(id, body)| (format!("{id}.json"), body.clone().into_bytes()))
        .collect();
    let refs: Vec<(&str, &[u8])> = files
        .iter()
        .map(|(n, b)| (n.as_str(), b.as_slice()))
        .collect();
    let (_d, store) = with_files(&refs);
    for (id, _) in &records {
        assert_same_views(&store, id);
    }
    // The passes read the records they can and decline the rest, sending nothing.
    for (id, _) in &records {
        let streams = !["notarray", "dupkey", "nan", "bom", "torn"].contains(&id.as_str());
        let mut gather = crate::store::sink::Gather::default();
        let sent = streamed::transcript_to(&store, id, Span::All, &mut gather).unwrap();
        assert_eq!(sent, streams, "transcript of {id}");
        assert_eq!(gather.finish().is_some(), streams, "transcript of {id}");
        let mut last = crate::store::sink::LastMessages::new(usize::MAX);
        let sent = streamed::window_to(&store, id, &mut last).unwrap();
        // `messages` missing: the window of no messages, read in passes all the same.
        assert_eq!(sent, streams, "window of {id}");
        let mut f = store.open_record(id).unwrap().unwrap();
        let mut pieces = 0;
        let dumped = raw::dump_to(&mut f, &mut |_| {
            pieces += 1;
            Ok(())
        })
        .unwrap();
        // The raw dump takes any object without repeated keys, whatever its histories.
        let dumps = streams || *id == "notarray";
        assert_eq!(dumped, dumps, "raw of {id}");
        assert_eq!(pieces > 0, dumps, "raw of {id}");
    }
    // The passes did read these (not the careful path): a cut transcript starts at its
    // round, with the marker after the cut and not the one at it.
    let t = store.transcript("msgonly", Span::LastRounds(1)).unwrap();
    assert_eq!((t.first_round, t.total_rounds), (2, 3));
    let w = store.window("msgonly").unwrap();
    let notices = w.messages.iter().filter(|m| m.text == NOTICE).count();
    assert_eq!(notices, 3, "c2 once, then c1 and c2 after the last calls");
}

/// A sink that fails after `n` entries stops the passes with its error, not a read error.
#[test]
fn a_sink_that_stops_ends_the_passes_with_its_error() {
    struct Stop(usize);
    impl crate::store::sink::EntrySink for Stop {
        fn head(&mut self, _: Transcript) -> std::io::Result<()> {
            Ok(())
        }
        fn entry(&mut self, _: crate::model::Entry) -> std::io::Result<()> {
            if self.0 == 0 {
                return Err(std::io::Error::new(std::io::ErrorKind::BrokenPipe, "gone"));
            }
            self.0 -= 1;
            Ok(())
        }
    }
    let records = corner_records();
    let body = records[0].1.as_bytes();
    let (_d, store) = with_files(&[("both.json", body)]);
    let e = store
        .transcript_to("both", Span::All, &mut Stop(2))
        .unwrap_err();
    assert!(e.to_string().contains("writing"), "{e}");
    let mut n = 0;
    let e = store
        .raw_to("both", &mut |_| {
            n += 1;
            if n > 3 {
                Err(std::io::Error::new(std::io::ErrorKind::BrokenPipe, "gone"))
            } else {
                Ok(())
            }
        })
        .unwrap_err();
    assert!(e.to_string().contains("writing"), "{e}");
}
