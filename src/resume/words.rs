//! Words in and out of a shell: splitting a command template into argv the way a shell would
//! (without running one), and quoting a word so a shell reads back exactly the same bytes.

use crate::error::{Error, Result};

/// Split a command template into words: whitespace separates, single quotes are literal,
/// double quotes allow `\"` and `\\`, a backslash outside quotes escapes the next character.
pub fn split_words(s: &str) -> Result<Vec<String>> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => cur.push(c),
                        None => return Err(unclosed(s)),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(c @ ('"' | '\\')) => cur.push(c),
                            Some(c) => {
                                cur.push('\\');
                                cur.push(c);
                            }
                            None => return Err(unclosed(s)),
                        },
                        Some(c) => cur.push(c),
                        None => return Err(unclosed(s)),
                    }
                }
            }
            '\\' => {
                in_word = true;
                if let Some(c) = chars.next() {
                    cur.push(c);
                }
            }
            c => {
                in_word = true;
                cur.push(c);
            }
        }
    }
    if in_word {
        words.push(cur);
    }
    Ok(words)
}

fn unclosed(s: &str) -> Error {
    Error::Usage(format!("unclosed quote in resume command: {s}"))
}

/// Quote a word for a POSIX shell (single quotes unless it is plainly safe).
pub fn shell_quote(s: &str) -> String {
    let safe = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:=@%+,".contains(c));
    if safe {
        s.to_string()
    } else if s.chars().any(crate::text::terminal_unsafe) {
        ansi_c_quote(s)
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// bash's `$'…'` form: controls, bidi overrides and zero-width characters become `\xHH` per
/// UTF-8 byte, so the line is inert on a terminal and still names exactly the same path.
fn ansi_c_quote(s: &str) -> String {
    let mut out = String::from("$'");
    for c in s.chars() {
        match c {
            '\'' => out.push_str("\\'"),
            '\\' => out.push_str("\\\\"),
            c if crate::text::terminal_unsafe(c) => {
                let mut buf = [0u8; 4];
                for b in c.encode_utf8(&mut buf).bytes() {
                    out.push_str(&format!("\\x{b:02x}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}
