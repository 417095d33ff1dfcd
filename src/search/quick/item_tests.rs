//! Tests of one quick-search item: its letter pairs, its text as written and its capitals.

use super::*;
use crate::model::StoreKind;

#[test]
fn letter_pairs_rule_out_only_what_the_text_cannot_say() {
    let p = Pairs::of(b"fix the login\nretry");
    for said in ["fix", "login", "x", "retry", "n\nr", "the l"] {
        assert!(p.has_all(&Pairs::of(said.as_bytes())), "{said}");
    }
    // Letters it lacks, and common pairs (bits of their own) it lacks: `an`, `yo`.
    for not in ["an", "tryo", "z", "q"] {
        assert!(!p.has_all(&Pairs::of(not.as_bytes())), "{not}");
    }
}

/// For one letter or a common pair the bits answer alone, and for other needles they
/// never rule out a text that says them, so they must agree with a substring search:
/// random texts over a small alphabet (letters, a digit, a space, a newline, a capital),
/// every needle of one and two letters and some of three.
#[test]
fn letter_bits_decide_one_letter_needles_exactly_and_rule_out_only_the_unsaid() {
    let alphabet = b"abcfix1 \nZ";
    let mut next = crate::search::quick::tests::xorshift(0x9e37_79b9_7f4a_7c15);
    let needles: Vec<Vec<u8>> = (b'a'..=b'z')
        .map(|a| vec![a])
        .chain((b'a'..=b'j').flat_map(|a| (b'a'..=b'z').map(move |b| vec![a, b])))
        .chain([b"fix".to_vec(), b"abc".to_vec(), b"xif".to_vec()])
        .collect();
    for _ in 0..400 {
        let len = next(12);
        let text: Vec<u8> = (0..len).map(|_| alphabet[next(alphabet.len())]).collect();
        let p = Pairs::of(&text);
        for n in &needles {
            let said = memchr::memmem::find(&text, n).is_some();
            let passes = p.has_all(&Pairs::of(n));
            match Pairs::exact(n) {
                true => assert_eq!(passes, said, "{text:?} {n:?}"),
                false => assert!(passes || !said, "{text:?} {n:?}"),
            }
        }
    }
    assert!(Pairs::exact(b"f") && Pairs::exact(b"fi") && Pairs::exact(b"ti"));
    assert!(!Pairs::exact(b"xq") && !Pairs::exact(b"f1") && !Pairs::exact(b"F"));
    assert!(!Pairs::exact(b"fix"));
}

/// A row's pairs are 32 bytes: held for every session (issue 10), where one bit a pair
/// took 88.
#[test]
fn a_rows_letter_pairs_are_small() {
    assert!(std::mem::size_of::<Pairs>() <= 32);
}

#[test]
fn the_text_as_written_comes_back_from_the_row() {
    let mut s = SessionSummary::new(StoreKind::Loop, "a", "/x");
    s.set_title("Fix the PORT");
    s.set_summary("Retry in CI");
    let i = Item::new(&Arc::new(s.clone()));
    let mut buf = Vec::new();
    assert_eq!(i.title_written(&mut buf), b"Fix the PORT");
    assert_eq!(i.title_lower(), "fix the port");
    assert_eq!(i.text_lower(), b"retry in ci\n\n");
    let f = memchr::memmem::Finder::new(b"ci");
    let w = memchr::memmem::Finder::new(b"CI");
    assert!(i.text_has(&f, Some((&w, b"CI"))));
    let w = memchr::memmem::Finder::new(b"Ci");
    assert!(!i.text_has(&f, Some((&w, b"Ci"))));
    s.set_title("Été\n  à   l'été");
    s.set_summary("ÉTÉ");
    let i = Item::new(&Arc::new(s));
    assert_eq!(i.title_written(&mut buf), "Été à l'été".as_bytes());
    let f = memchr::memmem::Finder::new("été".as_bytes());
    let w = memchr::memmem::Finder::new("ÉTÉ".as_bytes());
    assert!(i.text_has(&f, Some((&w, "ÉTÉ".as_bytes()))));
    let w = memchr::memmem::Finder::new("Été".as_bytes());
    assert!(!i.text_has(&f, Some((&w, "Été".as_bytes()))));
}

/// A term with capitals is looked for in the text as the item searches it: one line,
/// sanitized, capped; not in the row's raw fields.
#[test]
fn capitals_are_looked_for_in_the_text_as_searched() {
    let mut s = SessionSummary::new(StoreKind::Loop, "a", "/x");
    s.set_summary("* Goal: \u{1b}[1mBo\u{1b}[0mld\n\n* Cause:  Tabs");
    s.set_first_prompt(format!("{} Tail", "a".repeat(FIELD_CAP)));
    s.cwd = Some("/src/My Project".into());
    let i = Item::new(&Arc::new(s));
    let has = |w: &str| {
        let l = w.to_lowercase();
        let f = memchr::memmem::Finder::new(l.as_bytes());
        let wf = memchr::memmem::Finder::new(w.as_bytes());
        i.text_has(&f, Some((&wf, w.as_bytes())))
    };
    assert!(has("Bold"), "escapes are gone from the searched text");
    assert!(has("Goal: Bold * Cause: Tabs"), "one line, single spaces");
    assert!(!has("Tail"), "past the cap");
    assert!(has("My Project") && !has("My project"));
}
