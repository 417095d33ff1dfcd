//! The browser's pages of the window and raw views (issue 11): each is exactly the end of
//! the whole view, tool results paired and orphans flagged across the page's first line.

use super::tests_read::{A, A_ID, META, home};
use super::*;
use crate::store::sink::{WindowHead, WindowSink};

/// Example A, then rounds with calls, results (one call left unanswered mid-log) and a
/// compaction between them, so pages start on every kind of message.
fn big_log() -> Vec<u8> {
    let mut log = A.to_vec();
    let t = r#""time":"2026-03-14T15:00:00+01:00""#;
    let msg = |role: &str, body: &str| {
        format!(
            r#"{{"kind":"message",{t},"message":{{"role":"{role}","content":"{body}"{}}}}}"#,
            ""
        )
    };
    let call = r#"{"function":{"name":"bash","arguments":{"command":"ls"}}}"#;
    for i in 0..30 {
        log.extend(msg("user", &format!("question {i}")).bytes());
        log.push(b'\n');
        let calls = if i % 7 == 3 { 2 } else { 1 };
        let list = vec![call; calls].join(",");
        log.extend(
            format!(
                r#"{{"kind":"message",{t},"message":{{"role":"assistant","content":"","tool_calls":[{list}]}}}}"#
            )
            .bytes(),
        );
        log.push(b'\n');
        log.extend(msg("tool", &format!("output {i}")).bytes());
        log.push(b'\n');
        log.extend(msg("assistant", &format!("answer {i}")).bytes());
        log.push(b'\n');
        if i == 12 {
            log.extend(format!(r#"{{"kind":"compact",{t},"summary":"half way"}}"#).bytes());
            log.push(b'\n');
        }
    }
    log
}

#[test]
fn a_window_page_is_the_end_of_the_whole_window() {
    let (_d, s) = home(&[(&format!("{A_ID}.jsonl"), &big_log())]);
    let whole = s.window(A_ID).unwrap();
    assert_eq!(whole.omitted, 0);
    assert!(whole.messages.len() > 40, "{}", whole.messages.len());
    for keep in [0, 1, 2, 3, 5, 8, 13, 40, whole.messages.len() + 3] {
        let page = s.window_page(A_ID, keep).unwrap();
        let n = keep.min(whole.messages.len());
        assert_eq!(
            page.messages,
            whole.messages[whole.messages.len() - n..],
            "keep {keep}"
        );
        assert_eq!(page.omitted, whole.messages.len() - n);
        assert_eq!(page.len(), whole.len());
        assert_eq!(
            page.estimated_tokens(),
            whole.estimated_tokens(),
            "keep {keep}"
        );
        assert_eq!(page.warnings, whole.warnings);
        assert_eq!(page.system_note, whole.system_note);
    }
}

/// `show --window`'s stream: its head counts what follows, and the messages are the window's.
#[test]
fn the_streamed_window_is_the_window() {
    #[derive(Default)]
    struct Collect(Option<(usize, u64)>, Vec<crate::model::Message>);
    impl WindowSink for Collect {
        fn head(&mut self, h: WindowHead) -> std::io::Result<()> {
            self.0 = Some((h.count, h.tokens));
            Ok(())
        }
        fn message(&mut self, m: crate::model::Message) -> std::io::Result<()> {
            self.1.push(m);
            Ok(())
        }
    }
    for log in [big_log(), A.to_vec(), format!("{META}\n").into_bytes()] {
        let (_d, s) = home(&[(&format!("{A_ID}.jsonl"), &log)]);
        let whole = s.window(A_ID).unwrap();
        let mut c = Collect::default();
        s.window_to(A_ID, &mut c).unwrap();
        assert_eq!(c.0, Some((whole.messages.len(), whole.estimated_tokens())));
        assert_eq!(c.1, whole.messages);
    }
}

#[test]
fn a_raw_page_is_the_end_of_the_raw_view_in_whole_records() {
    let (_d, s) = home(&[(&format!("{A_ID}.jsonl"), &big_log())]);
    let whole = s.raw(A_ID).unwrap();
    let size = big_log().len() as u64;
    for bytes in [1, 100, 700, 4096] {
        let (page, more) = s.raw_page(A_ID, bytes).unwrap();
        assert!(more, "{bytes}");
        assert!(whole.ends_with(&page), "{bytes}: {page}");
        assert!(
            page.starts_with('{'),
            "{bytes}: a record cut in half: {page}"
        );
    }
    assert_eq!(s.raw_page(A_ID, size).unwrap(), (whole.clone(), false));
    assert_eq!(s.raw_page(A_ID, size * 2).unwrap(), (whole, false));
}
