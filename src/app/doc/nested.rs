//! A child session (a Claude Code subagent) inside its parent's transcript: one line under
//! the call that spawned it, and its own transcript behind `o`, drawn inside a rule.

use super::{Builder, Tone, anchor, is_paired, line, paired};
use crate::model::{Entry, Message, Nested};
use crate::text::one_line;

impl Builder<'_> {
    /// A child session (a subagent) under the call that spawned it: one line, and its own
    /// transcript behind `o`, drawn inside a rule so it reads as part of the parent.
    pub(super) fn nested(&mut self, c: &Nested) {
        let msgs: Vec<&Message> = c
            .entries
            .iter()
            .filter_map(|e| match e {
                Entry::Message(m) => Some(m.as_ref()),
                _ => None,
            })
            .collect();
        self.fold(format!("n:{}", c.key), !msgs.is_empty(), |b, open| {
            let (mark, hint) = match (open, msgs.is_empty()) {
                (true, _) => ("▾", ""),
                (false, false) => ("▸", " (o opens)"),
                (false, true) => ("▸", ""),
            };
            b.push(line(
                Tone::Tool,
                format!("  {mark} {}{hint}", one_line(&c.note)),
            ));
            if !open {
                return;
            }
            let start = b.doc.lines.len();
            let results = paired(&msgs);
            let total = c.entries.len();
            for (i, e) in c.entries.iter().enumerate() {
                match e {
                    Entry::Message(m) if is_paired(m, &results) => {}
                    Entry::Message(m) => {
                        let anchor = format!("n:{}:{}", c.key, anchor(m, total - i));
                        b.message(m, &anchor, &results);
                    }
                    Entry::Compaction { summary, .. } => {
                        b.push(line(Tone::Virtual, "── context compacted ──"));
                        b.text(summary, Tone::Dim, "  ", None);
                    }
                    Entry::Notice(n) => b.push(line(Tone::Warn, format!("⚠ {}", one_line(n)))),
                    Entry::SystemPrompt { .. } | Entry::Nested(_) => {}
                }
            }
            for l in &mut b.doc.lines[start..] {
                l.insert(0, (Tone::Dim, "  │ ".to_string()));
            }
            b.push(line(Tone::Dim, "  └ end of subagent"));
        });
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Expansion, transcript};
    use crate::app::timefmt::TimeFmt;
    use crate::model::{Entry, Message, Nested, Role, SessionSummary, StoreKind, Transcript};

    fn text(l: &super::super::DocLine) -> String {
        l.iter().map(|(_, s)| s.as_str()).collect()
    }

    #[test]
    fn a_subagent_is_one_line_until_opened_then_its_transcript_inside_a_rule() {
        let mut ask = Message::new(Role::User, "survey the call sites");
        ask.index = Some(0);
        let mut answer = Message::new(Role::Assistant, "Three call sites.");
        answer.model = Some("claude-haiku-4-5".into());
        let t = Transcript {
            summary: SessionSummary::new(StoreKind::Claude, "p", "/p.jsonl"),
            entries: vec![
                Entry::Message(Box::new(ask)),
                Entry::Nested(Box::new(Nested {
                    key: "b8e4".into(),
                    note: "subagent b8e4: 2 messages".into(),
                    entries: vec![
                        Entry::Message(Box::new(Message::new(Role::User, "List them."))),
                        Entry::Message(Box::new(answer)),
                    ],
                })),
            ],
            total_rounds: 1,
            first_round: 0,
            warnings: vec![],
            todos: None,
        };
        let mut open = Expansion::default();
        let closed = transcript(&t, &open, TimeFmt::default());
        let lines: Vec<String> = closed.lines.iter().map(text).collect();
        assert_eq!(
            lines.last().unwrap(),
            "  ▸ subagent b8e4: 2 messages (o opens)"
        );
        assert!(!lines.iter().any(|l| l.contains("List them.")));
        let fold = closed.folds.last().unwrap().clone();
        assert_eq!(fold.key, "n:b8e4");
        open.toggle(&fold.key);
        let doc = transcript(&t, &open, TimeFmt::default());
        let lines: Vec<String> = doc.lines.iter().map(text).collect();
        let at = lines
            .iter()
            .position(|l| l.starts_with("  ▾ subagent b8e4"))
            .unwrap();
        assert_eq!(
            lines[at + 1..],
            [
                "  │ ",
                "  │ ▌ you",
                "  │   List them.",
                "  │ ",
                "  │ ● assistant · claude-haiku-4-5",
                "  │   Three call sites.",
                "  └ end of subagent",
            ]
        );
        // The child's messages are not the parent's: no stored positions, no rounds.
        assert_eq!(doc.messages, closed.messages);
        assert_eq!(doc.rounds, closed.rounds);
    }
}
