//! A tool call's arguments as readable lines: `key: value`, multi-line values indented under
//! their key, and edits (old/new text pairs, patch or diff text) as `-`/`+` diff lines.
//! Lines are sanitised here, as everything in the pane's document is.

use serde_json::Value;

use super::doc::{DocLine, Tone};
use crate::text::{one_line, sanitize};

/// Pairs of argument names that hold the text an edit replaces and its replacement, as the
/// agents name them (Loop/pi `oldText`/`newText`, Claude Code `old_string`/`new_string`,
/// others `old_str`/`new_str`).
const EDIT_PAIRS: [(&str, &str); 3] = [
    ("old_string", "new_string"),
    ("oldText", "newText"),
    ("old_str", "new_str"),
];

/// Argument names that hold a whole patch or unified diff.
const PATCH_KEYS: [&str; 4] = ["patch", "diff", "input", "unified_diff"];

/// The argument lines of one call, each starting with `indent`.
pub fn lines(args: &Value, indent: &str) -> Vec<DocLine> {
    let mut out = Vec::new();
    match args {
        Value::Object(map) => {
            let pair = EDIT_PAIRS
                .iter()
                .find(|(o, n)| map.get(*o).is_some_and(Value::is_string) && map.contains_key(*n));
            for (k, v) in map {
                if let Some((old, new)) = pair {
                    if k == old {
                        let new_text = map.get(*new).and_then(Value::as_str).unwrap_or_default();
                        edit_diff(&mut out, indent, v.as_str().unwrap_or_default(), new_text);
                        continue;
                    }
                    if k == new {
                        continue;
                    }
                }
                match v {
                    Value::String(s) if PATCH_KEYS.contains(&k.as_str()) && looks_like_patch(s) => {
                        out.push(key_line(indent, k, ""));
                        patch(&mut out, &format!("{indent}  "), s);
                    }
                    _ => value(&mut out, indent, k, v),
                }
            }
        }
        Value::String(s) if looks_like_patch(s) => patch(&mut out, indent, s),
        Value::String(s) => text(&mut out, indent, s, Tone::Dim),
        Value::Null => {}
        v => text(&mut out, indent, &pretty(v), Tone::Dim),
    }
    out
}

fn key_line(indent: &str, k: &str, v: &str) -> DocLine {
    let mut l = vec![(Tone::Tool, format!("{indent}{}:", one_line(k)))];
    if !v.is_empty() {
        l.push((Tone::Dim, format!(" {v}")));
    }
    l
}

/// `key: value` on one line when the value is one line, else the key and the value's lines
/// indented under it.
fn value(out: &mut Vec<DocLine>, indent: &str, k: &str, v: &Value) {
    let s = match v {
        Value::String(s) => s.clone(),
        Value::Array(_) | Value::Object(_) => pretty(v),
        v => v.to_string(),
    };
    let clean = sanitize(&s);
    let mut ls = clean.lines();
    match (ls.next(), ls.next()) {
        (None, _) => out.push(key_line(indent, k, "\"\"")),
        (Some(one), None) => out.push(key_line(indent, k, one)),
        _ => {
            out.push(key_line(indent, k, ""));
            text(out, &format!("{indent}  "), &s, Tone::Dim);
        }
    }
}

fn pretty(v: &Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_else(|_| v.to_string())
}

fn text(out: &mut Vec<DocLine>, indent: &str, s: &str, tone: Tone) {
    for l in sanitize(s).lines() {
        out.push(vec![(tone, format!("{indent}{l}"))]);
    }
}

/// An old/new text pair as a diff: every old line removed, every new line added (the
/// agents replace the whole old text, so this is exactly what the edit does).
fn edit_diff(out: &mut Vec<DocLine>, indent: &str, old: &str, new: &str) {
    for l in sanitize(old).lines() {
        out.push(vec![(Tone::Removed, format!("{indent}- {l}"))]);
    }
    for l in sanitize(new).lines() {
        out.push(vec![(Tone::Added, format!("{indent}+ {l}"))]);
    }
}

fn looks_like_patch(s: &str) -> bool {
    s.starts_with("*** Begin Patch")
        || s.starts_with("--- ")
        || s.starts_with("diff --git")
        || s.contains("\n@@")
        || s.starts_with("@@")
}

/// Patch text with each line toned by its first character.
fn patch(out: &mut Vec<DocLine>, indent: &str, s: &str) {
    for l in sanitize(s).lines() {
        let tone = if l.starts_with("+++") || l.starts_with("---") || l.starts_with("***") {
            Tone::Heading
        } else if l.starts_with('+') {
            Tone::Added
        } else if l.starts_with('-') {
            Tone::Removed
        } else if l.starts_with("@@") {
            Tone::Tool
        } else {
            Tone::Dim
        };
        out.push(vec![(tone, format!("{indent}{l}"))]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn texts(v: &Value) -> Vec<String> {
        lines(v, "  ")
            .iter()
            .map(|l| l.iter().map(|(_, s)| s.as_str()).collect())
            .collect()
    }

    #[test]
    fn keys_and_values_one_a_line_multi_line_values_indented() {
        let v = json!({"path": "src/lib.rs", "limit": 20, "content": "a\nb"});
        assert_eq!(
            texts(&v),
            [
                "  path: src/lib.rs",
                "  limit: 20",
                "  content:",
                "    a",
                "    b"
            ]
        );
    }

    #[test]
    fn edits_are_diffs() {
        let v = json!({"path": "a.rs", "oldText": "let x = 1;\nfoo();", "newText": "let x = 2;"});
        let l = lines(&v, "");
        let t: Vec<(Tone, String)> = l.into_iter().flatten().collect();
        assert_eq!(
            t,
            [
                (Tone::Tool, "path:".to_string()),
                (Tone::Dim, " a.rs".to_string()),
                (Tone::Removed, "- let x = 1;".to_string()),
                (Tone::Removed, "- foo();".to_string()),
                (Tone::Added, "+ let x = 2;".to_string()),
            ]
        );
        let p = json!({"input": "*** Begin Patch\n@@ fn a\n-old\n+new\n ctx"});
        let tones: Vec<Tone> = lines(&p, "").iter().map(|l| l[0].0).collect();
        assert_eq!(
            tones,
            [
                Tone::Tool,
                Tone::Heading,
                Tone::Tool,
                Tone::Removed,
                Tone::Added,
                Tone::Dim
            ]
        );
    }

    #[test]
    fn hostile_text_is_sanitised() {
        let v = json!({"cmd": "echo \u{1b}[2Jhi"});
        assert_eq!(texts(&v), ["  cmd: echo hi"]);
    }
}
