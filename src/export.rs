//! Exports of a session: Markdown, standalone HTML and JSON renderings (pure functions over
//! the model), and the never-overwriting 0600 file write.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;

use crate::error::{Error, Result};
use crate::model::{Entry, Message, Role, SessionSummary, Transcript, Window, rfc3339};
use crate::store::atomic;

mod html;
pub use html::{escape_html, html};

/// An export format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Also `md`, the extension the help and the export dialog use.
    #[value(alias = "md")]
    Markdown,
    Html,
    Json,
}

impl Format {
    pub fn extension(self) -> &'static str {
        match self {
            Format::Markdown => "md",
            Format::Html => "html",
            Format::Json => "json",
        }
    }
}

const SHARE_WARNING: &str = "Exported by spool. This file contains the session's working \
directory and tool output, which can disclose local data; review it before sharing.";

/// Render a transcript in `format`.
pub fn render(t: &Transcript, format: Format) -> String {
    match format {
        Format::Markdown => markdown(t),
        Format::Html => html(t),
        Format::Json => {
            let mut s = serde_json::to_string_pretty(&t.to_json()).expect("JSON value");
            s.push('\n');
            s
        }
    }
}

/// The transcript as an exported Markdown file: title, metadata table, the sharing
/// warning, then every entry in order.
pub fn markdown(t: &Transcript) -> String {
    transcript_body(t, true)
}

/// The transcript as Markdown for reading (`spool show`): as exported, without the sharing
/// warning, which is about files that leave the machine.
pub fn transcript_markdown(t: &Transcript) -> String {
    transcript_body(t, false)
}

fn transcript_body(t: &Transcript, banner: bool) -> String {
    let mut out = String::new();
    let _ = transcript_pieces(t, banner, |p| {
        out.push_str(p);
        Ok(())
    });
    out
}

/// The transcript's Markdown (as `transcript_markdown`) piece by piece: the header, then one
/// piece per entry, so `show` writes (and sanitises) each as it comes and never holds the
/// whole text.
pub fn transcript_pieces(
    t: &Transcript,
    banner: bool,
    emit: impl FnMut(&str) -> std::io::Result<()>,
) -> std::io::Result<()> {
    streamed_pieces(t, t.entries.iter(), banner, emit)
}

/// `transcript_pieces` of a transcript whose entries come one at a time after its `head`
/// (a transcript without entries): `show` of a huge session.
pub fn streamed_pieces<E: std::borrow::Borrow<Entry>>(
    t: &Transcript,
    entries: impl Iterator<Item = E>,
    banner: bool,
    mut emit: impl FnMut(&str) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let mut out = header_markdown(&t.summary);
    if banner {
        let _ = writeln!(out, "> {SHARE_WARNING}\n");
    }
    if t.first_round > 0 {
        let _ = writeln!(
            out,
            "_Showing rounds {}–{} of {}._\n",
            t.first_round + 1,
            t.total_rounds,
            t.total_rounds
        );
    }
    for w in &t.warnings {
        let _ = writeln!(out, "> warning: {w}\n");
    }
    emit(&out)?;
    for e in entries {
        out.clear();
        entry_markdown(&mut out, e.borrow());
        emit(&out)?;
    }
    Ok(())
}

/// The replayed context window as Markdown, inserted messages marked.
pub fn window_markdown(w: &Window) -> String {
    let mut out = String::new();
    let _ = window_pieces(w, |p| {
        out.push_str(p);
        Ok(())
    });
    out
}

/// `window_markdown` piece by piece (see `transcript_pieces`).
pub fn window_pieces(
    w: &Window,
    emit: impl FnMut(&str) -> std::io::Result<()>,
) -> std::io::Result<()> {
    window_streamed(
        w,
        w.messages.len(),
        w.estimated_tokens(),
        w.messages.iter(),
        emit,
    )
}

/// The window's Markdown with its messages handed over one at a time (`show --window` of a
/// huge log): `w` holds everything but them, `count` and `tokens` are what they add up to.
pub fn window_streamed<M: std::borrow::Borrow<Message>>(
    w: &Window,
    count: usize,
    tokens: u64,
    messages: impl Iterator<Item = M>,
    mut emit: impl FnMut(&str) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let mut out = header_markdown(&w.summary);
    let _ = writeln!(
        out,
        "**Context window** as the agent would resume it: {}, about {} tokens.\n",
        crate::text::plural(count as u64, "message", "messages"),
        tokens
    );
    if let Some(n) = &w.system_note {
        let _ = writeln!(out, "> {n}\n");
    }
    for warn in &w.warnings {
        let _ = writeln!(out, "> {warn}\n");
    }
    emit(&out)?;
    for m in messages {
        out.clear();
        message_markdown(&mut out, m.borrow());
        emit(&out)?;
    }
    Ok(())
}

fn header_markdown(s: &SessionSummary) -> String {
    let mut out = format!("# {}\n\n| | |\n|---|---|\n", s.title());
    let mut row = |k: &str, v: &str| {
        if !v.is_empty() {
            let _ = writeln!(out, "| {k} | {} |", v.replace('|', "\\|"));
        }
    };
    row("session", &s.reference());
    row("cwd", s.cwd.as_deref().unwrap_or(""));
    row("model", s.model.as_deref().unwrap_or(""));
    row("created", &s.created_at.map(rfc3339).unwrap_or_default());
    row("updated", &s.updated_at.map(rfc3339).unwrap_or_default());
    row("messages", &s.messages.to_string());
    row("forked from", s.forked_from().unwrap_or(""));
    if !s.summary().is_empty() {
        row("summary", &crate::text::collapse_whitespace(s.summary()));
    }
    row("error", s.error().unwrap_or(""));
    out.push('\n');
    out
}

fn entry_markdown(out: &mut String, e: &Entry) {
    match e {
        Entry::Message(m) => message_markdown(out, m),
        Entry::Compaction { summary, timestamp } => {
            let when = timestamp.map(|t| format!(" ({})", rfc3339(t)));
            let _ = writeln!(
                out,
                "---\n\n**Context compacted here**{}\n\n{}\n\n---\n",
                when.unwrap_or_default(),
                quote(summary)
            );
        }
        Entry::SystemPrompt { text, .. } => {
            let _ = writeln!(
                out,
                "<details><summary>System prompt</summary>\n\n{}\n</details>\n",
                fenced(text, "text")
            );
        }
        Entry::Notice(n) => {
            let _ = writeln!(out, "> {n}\n");
        }
        // An export is the parent's own history: a child session is named, not copied.
        Entry::Nested(c) => {
            let _ = writeln!(out, "> {}\n", c.note);
        }
    }
}

fn message_markdown(out: &mut String, m: &Message) {
    let mut head = format!("## {}", role_label(&m.role));
    if let Some(model) = &m.model {
        let _ = write!(head, " · {model}");
    }
    if let Some(t) = m.timestamp {
        let _ = write!(head, " · {}", rfc3339(t));
    }
    if m.is_virtual {
        head.push_str(" · _inserted by replay_");
    }
    if m.is_error {
        head.push_str(" · **error**");
    }
    let _ = writeln!(out, "{head}\n");
    if let Some(n) = &m.note {
        let _ = writeln!(out, "> {n}\n");
    }
    for th in &m.thinking {
        let _ = writeln!(
            out,
            "<details><summary>Thinking</summary>\n\n{}\n</details>\n",
            quote(th)
        );
    }
    if m.role == Role::Tool {
        let label = match (&m.tool_name, &m.tool_call_id) {
            (Some(n), Some(id)) => format!("Result of `{n}` ({id})"),
            (Some(n), None) => format!("Result of `{n}`"),
            (None, Some(id)) => format!("Result ({id})"),
            (None, None) => "Result".to_string(),
        };
        let _ = writeln!(out, "{label}\n\n{}", fenced(&m.text, "text"));
    } else if !m.text.is_empty() {
        let _ = writeln!(out, "{}\n", m.text);
    }
    for img in &m.images {
        let _ = writeln!(out, "[image {}, {} bytes]\n", img.mime_type, img.bytes);
    }
    for c in &m.tool_calls {
        let args = serde_json::to_string_pretty(&c.arguments).unwrap_or_default();
        let _ = writeln!(
            out,
            "**Tool call** `{}` ({})\n\n{}",
            c.name,
            c.id,
            fenced(&args, "json")
        );
    }
}

fn role_label(r: &Role) -> String {
    match r {
        Role::System => "System".into(),
        Role::User => "User".into(),
        Role::Assistant => "Assistant".into(),
        Role::Tool => "Tool".into(),
        Role::Other(s) => format!("Unknown role `{s}`"),
    }
}

/// A fenced block whose fence is longer than any backtick run inside `body`.
fn fenced(body: &str, lang: &str) -> String {
    let longest = body.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest.max(2) + 1);
    let nl = if body.ends_with('\n') { "" } else { "\n" };
    format!("{fence}{lang}\n{body}{nl}{fence}\n")
}

fn quote(s: &str) -> String {
    s.lines()
        .map(|l| format!("> {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// A file-name slug of a title: lowercase ASCII letters and digits joined by `-`, at most 60
/// characters; "session" when nothing is left.
pub fn slug(title: &str) -> String {
    let mut out = String::new();
    for c in title.chars().flat_map(char::to_lowercase) {
        if c.is_ascii_alphanumeric() {
            out.push(c);
        } else if !out.ends_with('-') && !out.is_empty() {
            out.push('-');
        }
        if out.len() >= 60 {
            break;
        }
    }
    let out = out.trim_matches('-').to_string();
    if out.is_empty() {
        "session".into()
    } else {
        out
    }
}

/// Refuse an export target inside any of `store_dirs` (each store's root: `~/.loop`,
/// `~/.loom`, the harness memory directory). Both sides are resolved: the target's parent with
/// symlinks followed (the file itself does not exist yet), so `link-to-store/x.jsonl` and
/// `store/../store/x` are caught too. A file written there would list as a phantom session or
/// an error row.
pub fn refuse_inside_stores(path: &Path, store_dirs: &[&Path]) -> Result<()> {
    let abs = std::path::absolute(path).map_err(|e| Error::io("resolving", path, e))?;
    let parent = abs.parent().unwrap_or(Path::new("/"));
    let parent = std::fs::canonicalize(parent).map_err(|e| Error::io("resolving", parent, e))?;
    let target = match abs.file_name() {
        Some(name) => parent.join(name),
        None => parent,
    };
    for dir in store_dirs {
        let dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
        if target.starts_with(&dir) {
            return Err(Error::Refused(format!(
                "{} is inside the session store {}; exports are never written into a store",
                path.display(),
                dir.display()
            )));
        }
    }
    Ok(())
}

/// Write an export to `path`: created with O_EXCL and mode 0600, never overwriting; a failed
/// write removes the partial file. Callers check `refuse_inside_stores` first.
pub fn write_new(path: &Path, content: &str) -> Result<()> {
    let mut f = atomic::create_new(path).map_err(|e| {
        if e.kind() == std::io::ErrorKind::AlreadyExists {
            Error::Refused(format!(
                "{} already exists; exports never overwrite",
                path.display()
            ))
        } else {
            Error::io("creating", path, e)
        }
    })?;
    let res = f.write_all(content.as_bytes()).and_then(|_| f.sync_all());
    if let Err(e) = res {
        let _ = std::fs::remove_file(path);
        return Err(Error::io("writing", path, e));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{StoreKind, ToolCall};

    fn sample() -> Transcript {
        let mut s = SessionSummary::new(StoreKind::Loom, "20260314-091502", "/x.jsonl");
        s.set_title("Fix <script> & \"quotes\"");
        let mut a = Message::new(Role::Assistant, "");
        a.tool_calls.push(ToolCall {
            id: "c1".into(),
            name: "bash".into(),
            arguments: serde_json::json!({"command": "echo ```"}),
        });
        let mut r = Message::new(Role::Tool, "</pre><img src=x onerror=alert(1)>");
        r.tool_call_id = Some("c1".into());
        Transcript {
            summary: s,
            entries: vec![
                Entry::Message(Box::new(Message::new(Role::User, "hi <b>"))),
                Entry::Message(Box::new(a)),
                Entry::Message(Box::new(r)),
                Entry::Compaction {
                    summary: "S".into(),
                    timestamp: None,
                },
            ],
            total_rounds: 1,
            first_round: 0,
            warnings: vec![],
            todos: None,
        }
    }

    #[test]
    fn html_escapes_every_piece_of_text() {
        let h = html(&sample());
        assert!(!h.contains("<script>"));
        assert!(!h.contains("<img"));
        assert!(!h.contains("<b>"));
        assert!(h.contains("&lt;img src=x onerror=alert(1)&gt;"));
        assert!(h.contains("Fix &lt;script&gt; &amp; &quot;quotes&quot;"));
        assert!(!h.contains("<script"), "no scripts at all");
        assert!(!h.contains("http"), "no external resources");
    }

    #[test]
    fn markdown_fences_outgrow_backticks_in_content() {
        let m = markdown(&sample());
        assert!(m.contains("````json\n"), "{m}");
        assert!(m.contains("**Context compacted here**"));
        assert!(m.contains("Result (c1)"));
    }

    #[test]
    fn json_export_is_show_json() {
        let t = sample();
        let v: serde_json::Value = serde_json::from_str(&render(&t, Format::Json)).unwrap();
        assert_eq!(v["messages"].as_array().unwrap().len(), 3);
        assert_eq!(v["session"]["ref"], "loom:20260314-091502");
    }

    #[test]
    fn slug_is_filesystem_safe() {
        assert_eq!(
            slug("CI-only test failures from timezone"),
            "ci-only-test-failures-from-timezone"
        );
        assert_eq!(slug("../../etc/passwd"), "etc-passwd");
        assert_eq!(slug("日本語"), "session");
    }

    #[test]
    fn write_new_never_overwrites_and_is_0600() {
        use std::os::unix::fs::PermissionsExt;
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("x.md");
        write_new(&p, "one").unwrap();
        assert!(write_new(&p, "two").is_err());
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "one");
        let mode = std::fs::metadata(&p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
    }
}
