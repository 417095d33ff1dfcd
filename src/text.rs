//! Text hygiene: sanitising untrusted session text before it reaches a terminal, and the
//! title normalisation rules the formats share, and fitting text to terminal columns.

use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

/// Make untrusted text safe for a terminal: escape sequences (CSI, OSC, other ESC forms) are
/// removed, other control characters become visible `^X` / `\u{..}` forms, and bidi overrides
/// and zero-width characters are shown as `<U+XXXX>`. Newlines and tabs are kept (tabs become
/// spaces so widths stay predictable).
pub fn sanitize(s: &str) -> String {
    if !s.chars().any(needs_care) {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\n' => out.push('\n'),
            '\t' => out.push_str("    "),
            '\u{1b}' => skip_escape(&mut chars),
            '\u{9b}' => skip_csi_body(&mut chars),
            '\u{9d}' => skip_osc_body(&mut chars),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                out.push('^');
                out.push(((c as u8) ^ 0x40) as char);
            }
            c if ('\u{80}'..='\u{9f}').contains(&c) => {
                out.push_str(&format!("<U+{:04X}>", c as u32));
            }
            c if invisible(c) => out.push_str(&format!("<U+{:04X}>", c as u32)),
            c => out.push(c),
        }
    }
    out
}

/// `1 line`, `2 lines`: a count with the noun agreeing with it.
pub fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// Sanitise and fold onto one line (list rows, headers): newlines become spaces.
pub fn one_line(s: &str) -> String {
    let clean = sanitize(s);
    collapse_whitespace(&clean)
}

/// Whether `one_line` leaves `s` as it is: printable ASCII, no space at either end and no
/// two together. Most titles are, and a reader that only needs the one-line form (the quick
/// search, reading a row's title as written) then uses `s` itself, with no copy.
pub fn is_one_line(s: &str) -> bool {
    let b = s.as_bytes();
    b.iter().all(|c| (b' '..=b'~').contains(c))
        && b.first() != Some(&b' ')
        && b.last() != Some(&b' ')
        && !b.windows(2).any(|w| w == b"  ")
}

fn needs_care(c: char) -> bool {
    (c as u32) < 0x20 && c != '\n' || ('\u{7f}'..='\u{9f}').contains(&c) || invisible(c)
}

/// A character a terminal may act on or that hides text: every control (newline included)
/// and the bidi and zero-width characters. For quoting that must stay exact (`resume --print`).
pub fn terminal_unsafe(c: char) -> bool {
    c.is_control() || invisible(c)
}

/// Bidi controls and zero-width characters that can hide or reorder text.
fn invisible(c: char) -> bool {
    matches!(c,
        '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2060}'..='\u{206F}' | '\u{FEFF}')
}

fn skip_escape(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    match chars.peek() {
        Some('[') => {
            chars.next();
            skip_csi_body(chars);
        }
        Some(']') | Some('P') | Some('_') | Some('^') | Some('X') => {
            chars.next();
            skip_osc_body(chars);
        }
        Some(_) => {
            // Two-character escapes (ESC c, ESC 7, ESC ( B ...): drop the next char, and one
            // more for charset designations.
            let c = chars.next();
            if matches!(c, Some('(') | Some(')') | Some('*') | Some('+') | Some('#')) {
                chars.next();
            }
        }
        None => {}
    }
}

fn skip_csi_body(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    // Parameters and intermediates, then one final byte in @..~.
    for c in chars.by_ref() {
        if ('@'..='~').contains(&c) {
            break;
        }
        if !(' '..='?').contains(&c) {
            break;
        }
    }
}

fn skip_osc_body(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    while let Some(c) = chars.next() {
        if c == '\u{7}' || c == '\u{9c}' {
            break;
        }
        if c == '\u{1b}' {
            if chars.peek() == Some(&'\\') {
                chars.next();
            }
            break;
        }
    }
}

/// Collapse runs of whitespace to single spaces and trim.
pub fn collapse_whitespace(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Cut `s` to at most `width` terminal columns (display width, so CJK and emoji count two),
/// ending with `…` when cut. Every fit on the screen goes through here.
pub fn fit(s: &str, width: usize) -> String {
    if s.width() <= width {
        return s.to_string();
    }
    let mut out = String::new();
    let mut w = 0;
    for c in s.chars() {
        let cw = c.width().unwrap_or(0);
        if w + cw + 1 > width {
            break;
        }
        out.push(c);
        w += cw;
    }
    if width > 0 {
        out.push('…');
    }
    out
}

/// `fit` to `width` columns, then pad with spaces to exactly `width` columns (`format!`'s
/// `{:<n}` pads by chars, which is wrong for wide characters).
pub fn pad(s: &str, width: usize) -> String {
    let mut out = fit(s, width);
    let w = out.width();
    out.extend(std::iter::repeat_n(' ', width.saturating_sub(w)));
    out
}

/// Cut to at most `max` characters, adding `…` when cut (a count of chars, for stored
/// titles and search text; use `fit` for anything measured on screen).
pub fn truncate_chars(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut out: String = s.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// Loop's `normalizeTitle(s, maxBytes)`: strip OSC/CSI sequences and invisible controls,
/// collapse whitespace, keep whole code points up to `max_bytes` UTF-8 bytes, trim again.
pub fn normalize_title(s: &str, max_bytes: usize) -> String {
    let mut stripped = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            match chars.peek() {
                Some(']') => {
                    chars.next();
                    skip_osc_body(&mut chars);
                    continue;
                }
                Some('[') => {
                    chars.next();
                    skip_strict_csi(&mut chars, &mut stripped);
                    continue;
                }
                _ => continue, // a lone ESC is a deleted control character
            }
        }
        if title_deleted(c) {
            continue;
        }
        stripped.push(c);
    }
    let collapsed = collapse_whitespace(&stripped);
    let mut out = String::new();
    for c in collapsed.chars() {
        if out.len() + c.len_utf8() > max_bytes {
            break;
        }
        out.push(c);
    }
    out.trim().to_string()
}

/// CSI per Loop's regex `ESC [ [0-?]* [ -/]* [@-~]`; when the sequence does not complete, the
/// text after `ESC [` is kept (the regex would not have matched).
fn skip_strict_csi(chars: &mut std::iter::Peekable<std::str::Chars<'_>>, out: &mut String) {
    let mut body = String::new();
    let mut in_intermediate = false;
    while let Some(&c) = chars.peek() {
        if !in_intermediate && ('0'..='?').contains(&c) {
            body.push(c);
            chars.next();
        } else if (' '..='/').contains(&c) {
            in_intermediate = true;
            body.push(c);
            chars.next();
        } else if ('@'..='~').contains(&c) {
            chars.next();
            return;
        } else {
            break;
        }
    }
    // Unterminated: ESC was deleted as a control char; keep "[" and the body.
    out.push('[');
    out.push_str(&body);
}

fn title_deleted(c: char) -> bool {
    matches!(c,
        '\u{0}'..='\u{8}' | '\u{B}' | '\u{C}' | '\u{E}'..='\u{1F}' | '\u{7F}'..='\u{9F}'
        | '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2060}'..='\u{206F}' | '\u{FEFF}')
}

#[cfg(test)]
mod tests {

    /// `is_one_line` must agree with `one_line` on every text it says yes to.
    #[test]
    fn a_text_is_one_line_only_where_one_line_keeps_it() {
        for t in [
            "Fix it",
            "a",
            "",
            " x",
            "x ",
            "a  b",
            "a\tb",
            "a\nb",
            "é",
            "\u{1b}[2J",
            "~!",
        ] {
            if is_one_line(t) {
                assert_eq!(one_line(t), t, "{t:?}");
            }
        }
        assert!(is_one_line("Fix the parser (v2)"));
        assert!(!is_one_line("a  b") && !is_one_line("x ") && !is_one_line("é"));
    }

    #[test]
    fn plural_agrees_with_the_count() {
        assert_eq!(plural(1, "line", "lines"), "1 line");
        assert_eq!(plural(0, "line", "lines"), "0 lines");
        assert_eq!(plural(2, "match", "matches"), "2 matches");
    }

    use super::*;

    #[test]
    fn escape_sequences_never_pass() {
        let evil =
            "a\u{1b}[31mred\u{1b}[0m \u{1b}]0;title\u{7}b\u{1b}]8;;http://x\u{1b}\\c\u{7}d\u{9b}2J";
        let s = sanitize(evil);
        assert!(!s.contains('\u{1b}'));
        assert!(!s.contains('\u{7}'));
        assert!(!s.contains('\u{9b}'));
        assert_eq!(s, "ared bc^Gd");
    }

    #[test]
    fn bidi_and_zero_width_become_visible() {
        assert_eq!(sanitize("a\u{202E}b\u{200B}"), "a<U+202E>b<U+200B>");
        assert_eq!(sanitize("x\ry"), "x^My");
    }

    #[test]
    fn plain_text_is_untouched() {
        assert_eq!(sanitize("héllo 世界 🎉\nnext"), "héllo 世界 🎉\nnext");
    }

    #[test]
    fn normalize_title_collapses_and_caps_bytes() {
        assert_eq!(
            normalize_title("What does this   error\nmean?", 96),
            "What does this error mean?"
        );
        assert_eq!(normalize_title("\u{1b}[1mBold\u{1b}[0m", 120), "Bold");
        assert_eq!(normalize_title("ééé", 5), "éé");
        assert_eq!(normalize_title("a\u{200B}b", 120), "ab");
    }

    #[test]
    fn fit_and_pad_count_terminal_columns() {
        assert_eq!(fit("日本語のタイトル", 7), "日本語…");
        assert_eq!(fit("日本語", 6), "日本語");
        assert_eq!(pad("日本", 6), "日本  ");
        assert_eq!(pad("🎉 wide", 5), "🎉 w…");
        assert_eq!(fit("abc", 0), "");
    }

    #[test]
    fn truncate_adds_ellipsis() {
        assert_eq!(truncate_chars("abcdef", 4), "abc…");
        assert_eq!(truncate_chars("abc", 4), "abc");
    }
}
