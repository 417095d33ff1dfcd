//! The "left off" card: what a person needs to continue a session, built from the transcript
//! the pane already loaded (its last rounds), never from a second read of the log.

use std::collections::HashMap;

use serde::Serialize;
use serde_json::Value;

use super::{Message, Role, Transcript};

/// Lines kept of the last request and the last reply.
const FIRST_LINES: usize = 4;
/// Characters kept of any one text.
const MAX_CHARS: usize = 400;
const MAX_FILES: usize = 8;
const MAX_COMMANDS: usize = 5;

/// One open todo.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Todo {
    pub text: String,
    pub status: String,
}

/// One command the agent ran, with how it ended where that was recorded.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Command {
    pub command: String,
    /// The exit status the result states (`exit code 2`), when it states one.
    pub exit: Option<i64>,
    /// The result was flagged as an error; `None` while no result was recorded.
    pub failed: Option<bool>,
}

/// The card, and the `left_off` object of `show --json`.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct LeftOff {
    pub last_request: Option<String>,
    pub last_reply: Option<String>,
    pub todos: Vec<Todo>,
    /// Paths from edit, write and patch calls, most recent first, each once.
    pub files: Vec<String>,
    /// The last few commands, oldest first.
    pub commands: Vec<Command>,
    pub last_error: Option<String>,
    pub context_tokens: u64,
    /// How `context_tokens` was found.
    pub context_method: String,
}

/// The first lines of `text`, trimmed and capped.
fn first_lines(text: &str) -> Option<String> {
    let t: Vec<&str> = text
        .trim()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .take(FIRST_LINES)
        .collect();
    (!t.is_empty()).then(|| crate::text::truncate_chars(&t.join("\n"), MAX_CHARS))
}

fn lower(name: &str) -> String {
    name.to_ascii_lowercase()
}

fn is_todo_tool(name: &str) -> bool {
    lower(name).contains("todo")
}

fn is_shell_tool(name: &str) -> bool {
    matches!(
        lower(name).as_str(),
        "bash" | "shell" | "exec_command" | "run_command" | "run_shell_command" | "terminal"
    )
}

fn is_edit_tool(name: &str) -> bool {
    let n = lower(name);
    !is_todo_tool(name)
        && ["edit", "write", "patch", "str_replace", "create_file"]
            .iter()
            .any(|k| n.contains(k))
}

fn arg_str<'a>(args: &'a Value, keys: &[&str]) -> Option<&'a str> {
    keys.iter()
        .find_map(|k| args.get(*k).and_then(Value::as_str))
}

/// Paths an edit call touches: a path argument, or the file headers of a patch.
fn edited_paths(args: &Value) -> Vec<String> {
    if let Some(p) = arg_str(args, &["file_path", "path", "filePath", "file", "filename"]) {
        return vec![p.to_string()];
    }
    let patch = arg_str(args, &["patch", "input", "diff"]).unwrap_or_default();
    patch
        .lines()
        .filter_map(|l| {
            [
                "*** Update File: ",
                "*** Add File: ",
                "*** Delete File: ",
                "+++ b/",
            ]
            .iter()
            .find_map(|p| l.strip_prefix(p))
        })
        .map(|p| p.trim().to_string())
        .collect()
}

fn command_text(args: &Value) -> Option<String> {
    match args.get("command").or_else(|| args.get("cmd"))? {
        Value::String(s) => Some(s.clone()),
        Value::Array(a) => Some(
            a.iter()
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
                .join(" "),
        ),
        _ => None,
    }
}

/// `exit code 2`, `Exit code: 2`, `exit status 2`, `exited with code 2` in a result.
fn exit_status(text: &str) -> Option<i64> {
    let l = text.to_ascii_lowercase();
    ["exit code", "exit status", "exited with code", "exit_code"]
        .iter()
        .find_map(|k| {
            let rest = &l[l.rfind(k)? + k.len()..];
            let digits: String = rest
                .trim_start_matches([':', ' ', '='])
                .chars()
                .take_while(|c| c.is_ascii_digit() || *c == '-')
                .collect();
            digits.parse().ok()
        })
}

fn open_todos(args: &Value) -> Option<Vec<Todo>> {
    let items = args.get("todos")?.as_array()?;
    Some(
        items
            .iter()
            .filter_map(|t| {
                let text = arg_str(t, &["content", "text", "title", "description"])?;
                let status = arg_str(t, &["status", "state"]).unwrap_or("pending");
                let closed = matches!(
                    status,
                    "completed" | "done" | "cancelled" | "canceled" | "failed"
                );
                (!closed).then(|| Todo {
                    text: crate::text::truncate_chars(text, MAX_CHARS),
                    status: status.to_string(),
                })
            })
            .collect(),
    )
}

/// The card folded one message at a time, so a transcript streamed past (`show --json` of a
/// huge session) gives the same card as one held whole.
#[derive(Default)]
pub struct Builder {
    lo: LeftOff,
    by_id: HashMap<String, usize>,
    unpaired: Vec<usize>,
    files: Vec<String>,
    last_usage: Option<u64>,
    estimated: u64,
    stored_todos: Option<Vec<Todo>>,
}

impl Builder {
    /// The todo list the store records beside the messages (`Transcript::todos`).
    pub fn stored(&mut self, todos: Option<Vec<Todo>>) {
        self.stored_todos = todos;
    }

    pub fn push(&mut self, m: &Message) {
        let lo = &mut self.lo;
        if m.usage_tokens.is_some() {
            self.last_usage = m.usage_tokens;
        }
        self.estimated += m.estimated_tokens();
        match m.role {
            Role::User if !m.is_virtual => {
                if let Some(t) = first_lines(&m.text) {
                    lo.last_request = Some(t);
                }
            }
            Role::Assistant => {
                if let Some(t) = first_lines(&m.text) {
                    lo.last_reply = Some(t);
                }
                if m.is_error {
                    lo.last_error = first_lines(m.note.as_deref().unwrap_or(&m.text));
                }
                self.unpaired.clear();
                for c in &m.tool_calls {
                    if is_todo_tool(&c.name)
                        && let Some(todos) = open_todos(&c.arguments)
                    {
                        lo.todos = todos;
                    } else if is_edit_tool(&c.name) {
                        self.files.extend(edited_paths(&c.arguments));
                    } else if is_shell_tool(&c.name)
                        && let Some(cmd) = command_text(&c.arguments)
                    {
                        lo.commands.push(Command {
                            command: crate::text::truncate_chars(&cmd, MAX_CHARS),
                            exit: None,
                            failed: None,
                        });
                        let slot = lo.commands.len() - 1;
                        if c.id.is_empty() {
                            self.unpaired.push(slot);
                        } else {
                            self.by_id.insert(c.id.clone(), slot);
                        }
                    }
                }
            }
            Role::Tool => {
                if m.is_error {
                    let name = m.tool_name.as_deref().unwrap_or("tool");
                    lo.last_error = first_lines(&m.text).map(|t| format!("{name}: {t}"));
                }
                let slot = match &m.tool_call_id {
                    Some(id) => self.by_id.remove(id),
                    None if m.tool_name.as_deref().is_some_and(is_shell_tool) => {
                        (!self.unpaired.is_empty()).then(|| self.unpaired.remove(0))
                    }
                    None => None,
                };
                if let Some(c) = slot.and_then(|i| lo.commands.get_mut(i)) {
                    c.exit = exit_status(&m.text);
                    c.failed = Some(m.is_error || c.exit.is_some_and(|e| e != 0));
                }
            }
            _ => {}
        }
    }

    /// The card, for a transcript that held rounds `first_round..total_rounds`.
    pub fn finish(self, first_round: usize, total_rounds: usize) -> LeftOff {
        let mut lo = self.lo;
        let skip = lo.commands.len().saturating_sub(MAX_COMMANDS);
        lo.commands.drain(..skip);
        for f in self.files.into_iter().rev() {
            if !lo.files.contains(&f) && lo.files.len() < MAX_FILES {
                lo.files.push(f);
            }
        }
        // The store's own record of the list (harness `state.todos`, which its todo tool
        // keeps) is the list; tool calls only show what was passed to it.
        if let Some(todos) = self.stored_todos {
            lo.todos = todos;
        }
        if let Some(n) = self.last_usage {
            lo.context_tokens = n;
            lo.context_method = "recorded usage of the last reply".into();
            return lo;
        }
        lo.context_tokens = self.estimated;
        lo.context_method = if first_round > 0 {
            format!(
                "bytes/4 of the last {} rounds loaded",
                total_rounds - first_round
            )
        } else {
            "bytes/4 of the transcript".into()
        };
        lo
    }
}

impl LeftOff {
    /// The open todos of a stored todo list (`[{content, status}, …]`, as the harness keeps
    /// in `state.todos`): closed ones left out.
    pub fn stored_todos(list: &Value) -> Vec<Todo> {
        open_todos(&serde_json::json!({ "todos": list })).unwrap_or_default()
    }

    pub fn from_transcript(t: &Transcript) -> LeftOff {
        let mut b = Builder::default();
        b.stored(t.todos.clone());
        t.messages().for_each(|m| b.push(m));
        b.finish(t.first_round, t.total_rounds)
    }

    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Entry, SessionSummary, StoreKind, ToolCall};
    use serde_json::json;

    fn call(id: &str, name: &str, args: Value) -> ToolCall {
        ToolCall {
            id: id.into(),
            name: name.into(),
            arguments: args,
        }
    }

    fn result(id: &str, text: &str, err: bool) -> Message {
        let mut m = Message::new(Role::Tool, text);
        m.tool_call_id = Some(id.into());
        m.tool_name = Some("Bash".into());
        m.is_error = err;
        m
    }

    #[test]
    fn card_reads_requests_todos_files_commands_errors_and_usage() {
        let mut a1 = Message::new(Role::Assistant, "Running the tests.");
        a1.tool_calls = vec![
            call("c1", "Bash", json!({"command": "cargo test"})),
            call("c2", "Edit", json!({"file_path": "src/a.rs"})),
            call(
                "c3",
                "apply_patch",
                json!({"input": "*** Update File: src/b.rs\n@@"}),
            ),
            call("c4", "Edit", json!({"file_path": "src/a.rs"})),
            call(
                "c5",
                "TodoWrite",
                json!({"todos": [
                    {"content": "fix parser", "status": "in_progress"},
                    {"content": "write docs", "status": "completed"}
                ]}),
            ),
        ];
        let mut a2 = Message::new(Role::Assistant, "Tests fail.\nShould I revert?");
        a2.usage_tokens = Some(12_345);
        let entries = vec![
            Message::new(Role::User, "make the tests pass\nplease"),
            a1,
            result("c1", "test failed\nexit code 101", true),
            a2,
        ];
        let t = Transcript {
            summary: SessionSummary::new(StoreKind::Claude, "x", "/p"),
            entries: entries
                .into_iter()
                .map(|m| Entry::Message(Box::new(m)))
                .collect(),
            total_rounds: 1,
            first_round: 0,
            warnings: Vec::new(),
            todos: None,
        };
        let lo = LeftOff::from_transcript(&t);
        assert_eq!(
            lo.last_request.as_deref(),
            Some("make the tests pass\nplease")
        );
        assert_eq!(
            lo.last_reply.as_deref(),
            Some("Tests fail.\nShould I revert?")
        );
        assert_eq!(
            lo.todos,
            [Todo {
                text: "fix parser".into(),
                status: "in_progress".into()
            }]
        );
        assert_eq!(lo.files, ["src/a.rs", "src/b.rs"]);
        assert_eq!(
            lo.commands,
            [Command {
                command: "cargo test".into(),
                exit: Some(101),
                failed: Some(true)
            }]
        );
        assert_eq!(
            lo.last_error.as_deref(),
            Some("Bash: test failed\nexit code 101")
        );
        assert_eq!(lo.context_tokens, 12_345);
        assert_eq!(lo.context_method, "recorded usage of the last reply");
    }
}
