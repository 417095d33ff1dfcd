//! A field of the common row, plain ASCII, written straight into its quick-search item as
//! searched: one line, capped and lower-cased in one pass over the bytes it keeps.
//!
//! The general path (`one_line`, `truncate_chars`, `to_lowercase`) copies each field three or
//! four times and reads a whole long prompt though only 400 chars are kept: building the
//! items of 100k rows took the items thread 400-500 ms of CPU, the last of the warm start's
//! work to end (issue 10).

/// Append `f` as the quick search holds it (`one_line`, cut to `cap` chars by
/// `truncate_chars` when given, lower-cased) to `out`, and return `caps_of` it as searched.
/// `None`, with `out` as it was, when `f` has a byte other than printable ASCII, a newline or
/// a tab before the cap is reached: those are what the general path sanitizes or folds.
pub(super) fn push_plain(out: &mut Vec<u8>, f: &str, cap: Option<usize>) -> Option<u32> {
    let start = out.len();
    let cap = cap.unwrap_or(usize::MAX);
    let b = f.as_bytes();
    let mut chars = 0usize;
    let mut i = 0;
    // A space is owed between two words: written only when another word comes.
    let mut gap = false;
    while i < b.len() {
        if matches!(b[i], b' ' | b'\n' | b'\t') {
            gap = chars > 0;
            i += 1;
            continue;
        }
        // A word: a run of printable ASCII, copied whole (the byte loop is the scan alone).
        let from = i;
        while i < b.len() && matches!(b[i], b'!'..=b'~') {
            i += 1;
        }
        if from == i {
            out.truncate(start);
            return None;
        }
        let sep = usize::from(gap);
        if chars + sep + (i - from) > cap {
            // More than `cap` chars: `truncate_chars` keeps `cap - 1` and an ellipsis.
            let keep = cap.saturating_sub(1);
            if chars < keep {
                if gap {
                    out.push(b' ');
                }
                out.extend_from_slice(&b[from..from + (keep - chars - sep)]);
            }
            out.truncate(start + keep);
            let caps = lower_caps(&mut out[start..]);
            out.extend_from_slice("…".as_bytes());
            return Some(caps);
        }
        if gap {
            out.push(b' ');
        }
        out.extend_from_slice(&b[from..i]);
        chars += sep + (i - from);
        gap = false;
    }
    Some(lower_caps(&mut out[start..]))
}

/// Lower-case `kept` (ASCII) in place and return its capitals, one bit each (`A` is bit 0).
fn lower_caps(kept: &mut [u8]) -> u32 {
    let caps = (kept.iter()).fold(0u32, |m, &c| {
        m | if c.is_ascii_uppercase() {
            1 << (c - b'A')
        } else {
            0
        }
    });
    kept.make_ascii_lowercase();
    caps
}

#[cfg(test)]
mod tests {
    use super::push_plain;
    use crate::text::{one_line, truncate_chars};

    /// The general path `push_plain` stands in for: one line, cut, lower-cased, and the
    /// ASCII capitals of the field as searched (`item::caps_of` without folding).
    fn general(f: &str, cap: Option<usize>) -> (Vec<u8>, u32) {
        let line = one_line(f);
        let line = cap.map_or(line.clone(), |c| truncate_chars(&line, c));
        let caps = (line.bytes()).fold(0u32, |m, b| {
            m | if b.is_ascii_uppercase() {
                1 << (b - b'A')
            } else {
                0
            }
        });
        (line.to_lowercase().into_bytes(), caps)
    }

    /// Random fields around the cap, of plain bytes and of the ones the general path
    /// sanitizes: where `push_plain` answers it writes what the general path would, and
    /// a field of plain bytes it always answers.
    #[test]
    fn a_plain_field_is_written_as_the_general_path_writes_it() {
        let alphabet: [&str; 10] = ["a", "Q", "z", " ", "\n", "\t", "  ", "é", "\r", "\u{1b}[1m"];
        let mut next = crate::search::quick::tests::xorshift(0x2545_f491_4f6c_dd1d);
        for round in 0..20_000 {
            let cap = match round % 4 {
                0 => None,
                _ => Some(next(8)),
            };
            let plain_only = round % 3 != 0;
            let n = next(14);
            let f: String = (0..n)
                .map(|_| alphabet[next(if plain_only { 7 } else { 10 })])
                .collect();
            let mut out = b"kept\n".to_vec();
            match push_plain(&mut out, &f, cap) {
                Some(caps) => {
                    let (want, want_caps) = general(&f, cap);
                    assert_eq!(&out[5..], &want[..], "{f:?} cap {cap:?}");
                    assert_eq!(caps, want_caps, "{f:?} cap {cap:?}");
                }
                None => {
                    assert_eq!(out, b"kept\n", "{f:?}: written to though refused");
                    assert!(!plain_only, "{f:?}: a plain field refused");
                }
            }
        }
    }

    /// Past the cap nothing is read: a prompt whose first 400 chars are plain takes the
    /// quick path whatever comes after them.
    #[test]
    fn what_comes_after_the_cap_is_not_read() {
        let f = format!("{} tail \u{1b}[1mbold\r", "Word ".repeat(100));
        let mut out = Vec::new();
        assert_eq!(
            push_plain(&mut out, &f, Some(400)),
            Some(1 << (b'W' - b'A'))
        );
        assert_eq!(out, general(&f, Some(400)).0);
    }
}
