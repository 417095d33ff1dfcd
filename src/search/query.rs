//! The full-text query language of `spool search` (`../shared/cli.md`): words, all of which
//! must occur in one message, in any order, case-insensitive; `"a quoted phrase"` must occur
//! as written; `-word` (or `-"a phrase"`) excludes messages containing it.

/// One parsed query; each term is raw text, tokenised later by the index's own analyzer.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TextQuery {
    /// Words and phrases that must all occur (a phrase holds spaces).
    pub required: Vec<String>,
    /// Words and phrases whose messages are left out.
    pub excluded: Vec<String>,
}

impl TextQuery {
    /// Parse `q`. An unterminated quote runs to the end. Fails when nothing is left to look
    /// for (an empty query, or only exclusions).
    pub fn parse(q: &str) -> Result<TextQuery, String> {
        let mut out = TextQuery::default();
        let mut chars = q.chars().peekable();
        loop {
            while chars.next_if(|c| c.is_whitespace()).is_some() {}
            let Some(&c) = chars.peek() else { break };
            let negate = c == '-';
            if negate {
                chars.next();
            }
            let mut term = String::new();
            if chars.peek() == Some(&'"') {
                chars.next();
                term.extend(chars.by_ref().take_while(|&c| c != '"'));
            } else {
                while let Some(c) = chars.next_if(|c| !c.is_whitespace()) {
                    term.push(c);
                }
            }
            let term = term.trim().to_string();
            if term.is_empty() {
                continue;
            }
            if negate {
                out.excluded.push(term);
            } else {
                out.required.push(term);
            }
        }
        if out.required.is_empty() {
            return Err(format!(
                "the query '{}' has no word to look for (only exclusions or nothing)",
                crate::text::one_line(q)
            ));
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_phrases_and_exclusions() {
        let q = TextQuery::parse(r#"tz  "connection reset" -flaky -"not this" it's"#).unwrap();
        assert_eq!(q.required, vec!["tz", "connection reset", "it's"]);
        assert_eq!(q.excluded, vec!["flaky", "not this"]);
        let q = TextQuery::parse(r#""open quote runs on"#).unwrap();
        assert_eq!(q.required, vec!["open quote runs on"]);
        assert!(TextQuery::parse("  -only ").is_err());
        assert!(TextQuery::parse(r#" "" - "#).is_err());
    }
}
