//! Items that read a field from the row (`Field::own`) must say what items holding every
//! field's lower-cased copy say (as items were built before): the same text, the same
//! places, the same letter pairs and the same ranks, over random rows and queries.

use std::sync::Arc;

use super::find_lowered;
use crate::model::{SessionSummary, StoreKind};
use crate::search::quick::FIELD_CAP;
use crate::search::quick::item::{Item, Pairs, Row, folded};
use crate::search::quick::matching::Query;
use crate::search::quick::tests::xorshift;
use crate::text::{one_line, truncate_chars};

/// Words of plain fields (capitals, digits, punctuation), and now and then what makes a
/// field not plain: whitespace to fold, an accent, `İ` (two chars lower-cased), a control.
const WORDS: &[&str] = &[
    "fix", "Fix", "FIX", "login", "LogIn", "route", "Router", "port", "a", "Z", "b2", "-x", "(ci)",
    "fi", "xl", "og", "in", "\n", "\t", "  ", "é", "İ", "\u{12}",
];

/// A field of random words: mostly plain ones; sometimes long enough to cross the cap.
fn field(next: &mut impl FnMut(usize) -> usize) -> String {
    let plain = next(3) != 0;
    let words = if plain { WORDS.len() - 6 } else { WORDS.len() };
    let n = match next(10) {
        0 => 0,
        1 => FIELD_CAP / 3 - 3 + next(6),
        _ => next(12),
    };
    let mut f = String::new();
    for i in 0..n {
        if i > 0 && next(4) != 0 {
            f.push(' ');
        }
        f.push_str(WORDS[next(words)]);
    }
    f
}

/// The text as searched, made the general way: each field one line, capped, lower-cased.
fn searched(s: &SessionSummary) -> Vec<u8> {
    let cap = |f: &str| truncate_chars(&one_line(f), FIELD_CAP);
    let fields = [
        cap(s.summary()),
        cap(s.first_prompt()),
        one_line(s.project()),
    ];
    fields.map(|f| f.to_lowercase()).join("\n").into_bytes()
}

const QUERIES: &[&str] = &[
    "f",
    "fi",
    "fix",
    "fixl",
    "fixlo",
    "fixlogin",
    "login",
    "Fix",
    "FIX",
    "LogIn",
    "^fix",
    "^Fix",
    "login$",
    "'rou",
    "!fix",
    "fix rou",
    "fix\\ login",
    "(ci)",
    "-x",
    "é",
    "x",
    "2",
    "z",
    "Z",
    "in$",
    "^a",
    "'xl",
    "!LOGIN",
];

#[test]
fn items_reading_the_rows_own_fields_answer_as_items_holding_copies() {
    let mut next = xorshift(0x51a7_e0f3_c2d1_9b85);
    let mut own = 0;
    let mut said = 0;
    for round in 0..4000 {
        let mut s = SessionSummary::new(StoreKind::Loop, "a", "/x");
        s.set_title(field(&mut next));
        s.set_summary(field(&mut next));
        s.set_first_prompt(field(&mut next));
        s.cwd = Some(format!("/p/{}", field(&mut next).replace('/', "")).into());
        let s = Arc::new(s);
        let (item, copied) = (Item::new(&s), Item::copied(&s));
        let text = searched(&s);
        assert_eq!(copied.text_lower(), text, "{s:?}");
        assert_eq!(item.text_lower(), text, "{s:?}");
        own += usize::from(item.reads_the_row());
        let (p, q) = (item.pairs(), Pairs::of(&text));
        assert!(p.has_all(&q) && q.has_all(&p), "pairs of {s:?}");
        // Needles: pieces of the text (some crossing a field's end), and random words.
        for _ in 0..6 {
            let needle: Vec<u8> = match next(3) {
                0 => WORDS[next(WORDS.len())].to_lowercase().into_bytes(),
                _ => {
                    let at = next(text.len() + 1);
                    text[at..].iter().take(1 + next(6)).copied().collect()
                }
            };
            let finder = memchr::memmem::Finder::new(&needle);
            for from in (0..text.len() + 2).step_by(1 + next(5)) {
                let want = (text.get(from..)).and_then(|t| Some(finder.find(t)? + from));
                assert_eq!(
                    item.text_find(&finder, from),
                    want,
                    "{needle:?} from {from}"
                );
                let here = (text.get(from..)).is_some_and(|t| t.starts_with(&needle));
                assert_eq!(item.says_at(&needle, from), here, "{needle:?} at {from}");
            }
            assert_eq!(item.text_has(&finder, None), copied.text_has(&finder, None));
        }
        let lower = item.title_lower();
        let title = folded(lower.as_bytes());
        let row = Row::of(&title, &p, round as i64);
        for q in QUERIES {
            let mut query = Query::parse(q);
            let want = query.rank(&copied, row, None);
            assert!(query.rank(&item, row, None) == want, "{q:?} on {s:?}");
            said += usize::from(want.is_some());
            // Where the last term was seen carries to the next key: looked for again from
            // any place, the item and the copy find it in the same place.
            let t = query.terms.len().wrapping_sub(1);
            if query.carries(t) {
                for h in 1..text.len() as u32 + 2 {
                    let want = query.said_from(t, &copied, h);
                    assert_eq!(query.said_from(t, &item, h), want, "{q:?} from {h}");
                }
            }
        }
    }
    assert!(
        own > 2000,
        "most rows have a field read from the row: {own}"
    );
    assert!(said > 4000, "the rows say the queries often enough: {said}");
}

/// `find_lowered` finds what memmem finds in the text lower-cased, for any bytes.
#[test]
fn find_lowered_finds_what_a_search_of_the_lower_cased_text_finds() {
    let mut next = xorshift(0x2545_f491_4f6c_dd1d);
    let bytes = b"aAbBzZ09 -\xc3\xa9";
    for _ in 0..50_000 {
        let hay: Vec<u8> = (0..next(16)).map(|_| bytes[next(bytes.len())]).collect();
        let needle: Vec<u8> = (0..next(4)).map(|_| bytes[next(bytes.len())]).collect();
        let want = memchr::memmem::find(&hay.to_ascii_lowercase(), &needle);
        assert_eq!(find_lowered(&hay, &needle), want, "{hay:?} {needle:?}");
    }
}
