//! Terms with capitals: the shortcuts that spare reading a row (its capitals, an ASCII
//! title's lower-cased letters, a field's runs) must give what reading it gives.

use std::sync::Arc;

use super::FIELD_CAP;
use super::item::{self, Item, Pairs, Row};
use super::matching::Query;
use crate::model::{SessionSummary, StoreKind};
use crate::text::{one_line, truncate_chars};

/// Chars that test the shortcuts' edges: capitals and their lower case, whitespace, an
/// accent, `İ` (two chars lower-cased), `Ŕ` (`R` to nucleo's folding), the Kelvin sign
/// (`k` lower-cased), a control (`^R` once sanitized) and a zero-width space (`<U+200B>`).
const ALPHABET: &[char] = &[
    'R', 'o', 'u', 't', 'e', 'r', 'F', 'i', 'x', 'U', 'B', 'k', ' ', ' ', '\n', '\t', 'é', 'İ',
    'Ŕ', '\u{212A}', '\u{12}', '\u{200B}',
];

struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }

    /// A text of up to `max` chars; now and then one past `FIELD_CAP`, to cross the cap.
    fn text(&mut self, max: usize) -> String {
        let len = match self.below(8) {
            0 => FIELD_CAP - 6 + self.below(12),
            _ => self.below(max),
        };
        (0..len)
            .map(|_| ALPHABET[self.below(ALPHABET.len())])
            .collect()
    }
}

fn session(r: &mut Rng) -> Arc<SessionSummary> {
    let mut s = SessionSummary::new(StoreKind::Loop, "a", "/x");
    s.set_title(r.text(14));
    s.set_summary(r.text(20));
    s.set_first_prompt(r.text(20));
    s.cwd = Some(format!("/p/{}", r.text(8).replace('/', "")).into());
    Arc::new(s)
}

const QUERIES: &[&str] = &[
    "R",
    "Ro",
    "Route",
    "Rout",
    "route",
    "Fix",
    "FIX",
    "fIx",
    "Ix",
    "U",
    "B",
    "K",
    "U+",
    "^R",
    "'Route",
    "^Fi",
    "ute$",
    "!R",
    "Fix Route",
    "Ro r",
    "rOUTE",
    "Rou\\ te",
    "Ŕo",
    "İ",
    "É",
];

/// A random query over the alphabet's letters, capitals and all.
fn random_query(r: &mut Rng) -> String {
    let letters = ['R', 'o', 'u', 't', 'e', 'r', 'F', 'i', 'x', 'U', 'B', 'k'];
    (0..1 + r.below(6))
        .map(|_| letters[r.below(letters.len())])
        .collect()
}

/// Every query ranks every random row as it does with the row's hints off (the path that
/// reads the row's title and text as written for every term with capitals), and every
/// term says the same of its title.
#[test]
fn capitals_rank_rows_as_reading_them_does() {
    let mut r = Rng(0x2545_f491_4f6c_dd1d);
    let mut queries: Vec<String> = QUERIES.iter().map(|q| q.to_string()).collect();
    let mut said = 0;
    for round in 0..3000 {
        if round % 100 == 0 {
            queries.push(random_query(&mut r));
        }
        let s = session(&mut r);
        let fast = Item::new(&s);
        let slow = Item::new(&s).without_hints();
        let pairs = Pairs::of(fast.text_lower());
        let lower = fast.title_lower();
        let title = item::folded(lower.as_bytes());
        let row = Row::of(&title, &pairs, 7);
        for q in &queries {
            let mut query = Query::parse(q);
            let want = query.rank(&slow, row, None);
            // `Rank` has no `Debug`: compared whole, shown by its parts.
            assert!(
                query.rank(&fast, row, None).map(|(r, _)| r) == want.map(|(r, _)| r),
                "{q:?} on {:?}",
                (&s.title(), &s.summary(), &s.first_prompt(), s.project())
            );
            said += usize::from(want.is_some());
            for t in 0..query.terms.len() {
                let want = query.in_title(t, &slow, row);
                assert_eq!(query.in_title(t, &fast, row), want, "{q:?} term {t}");
            }
        }
    }
    assert!(said > 1000, "the rows say the queries often enough: {said}");
}

/// Said in a field's runs, when it answers, is what making the field one line says.
#[test]
fn a_field_read_in_runs_says_what_its_one_line_says() {
    let mut r = Rng(0x9e37_79b9_7f4a_7c15);
    let mut answered = 0;
    for _ in 0..20_000 {
        let f = r.text(30);
        let needle = match r.below(3) {
            0 => random_query(&mut r),
            _ => f
                .chars()
                .skip(r.below(f.len() + 1))
                .take(1 + r.below(4))
                .collect(),
        };
        if needle.is_empty() {
            continue;
        }
        let finder = memchr::memmem::Finder::new(needle.as_bytes());
        for capped in [false, true] {
            let line = one_line(&f);
            let line = if capped {
                truncate_chars(&line, FIELD_CAP)
            } else {
                line
            };
            let want = line.contains(&needle);
            assert_eq!(
                item::says_written(&f, capped, &finder),
                want,
                "{f:?} {needle:?}"
            );
            if let Some(got) = item::said_in_runs(&f, capped, &finder) {
                assert_eq!(got, want, "{f:?} {needle:?} capped {capped}");
                answered += 1;
            }
        }
    }
    assert!(answered > 5000, "the runs answer most fields: {answered}");
    // A match that ends on the cap's last char: cut by the ellipsis when the field is longer.
    let f = format!("{}  Rx\tbb", "a ".repeat(199));
    let finder = memchr::memmem::Finder::new(b"Rx");
    assert!(!item::says_written(&f, true, &finder));
    assert_ne!(item::said_in_runs(&f, true, &finder), Some(true));
    assert!(item::says_written(&f, false, &finder));
}
