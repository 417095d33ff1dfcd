//! The resume and fork command templates per store, from the config file's `[resume]` table,
//! and each agent's default.

use crate::model::StoreKind;

/// Resume command templates per store, from the config file's `[resume]` table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResumeCommands {
    pub loop_cmd: Option<String>,
    pub loom_cmd: Option<String>,
    pub harness_cmd: Option<String>,
    pub claude_cmd: Option<String>,
    /// `[resume] claude_fork`: the fork command (default `CLAUDE_FORK_DEFAULT`).
    pub claude_fork: Option<String>,
    pub codex_cmd: Option<String>,
    /// `[resume] codex_fork`: the fork command (default `CODEX_FORK_DEFAULT`).
    pub codex_fork: Option<String>,
    pub pi_cmd: Option<String>,
    /// `[resume] pi_fork`: the fork command (default `PI_FORK_DEFAULT`).
    pub pi_fork: Option<String>,
}

/// agent-harness's own resume invocation (its CLI takes the memory dir explicitly).
pub const HARNESS_DEFAULT: &str = "uv run agent.py --resume {id} --memory-dir {store}";
/// Claude Code finds a session only from the directory it was started in, so this runs in
/// the session's launch dir (claude-code.md section 8).
pub const CLAUDE_DEFAULT: &str = "claude --resume {id}";
pub const CLAUDE_FORK_DEFAULT: &str = "claude --resume {id} --fork-session";
/// Codex resolves names too, but a name can pick a thread of another project
/// (openai/codex#30995): spool always passes the UUID (codex.md section 8).
pub const CODEX_DEFAULT: &str = "codex resume {id}";
pub const CODEX_FORK_DEFAULT: &str = "codex fork {id}";
/// pi opens a session by its file path (older builds take only a path), in the header cwd
/// so its tools and project config resolve as they did (pi.md section 8).
pub const PI_DEFAULT: &str = "pi --session {path}";
pub const PI_FORK_DEFAULT: &str = "pi --fork {path}";

impl Default for ResumeCommands {
    fn default() -> Self {
        ResumeCommands {
            loop_cmd: None,
            loom_cmd: None,
            harness_cmd: Some(HARNESS_DEFAULT.to_string()),
            claude_cmd: Some(CLAUDE_DEFAULT.to_string()),
            claude_fork: None,
            codex_cmd: Some(CODEX_DEFAULT.to_string()),
            codex_fork: None,
            pi_cmd: Some(PI_DEFAULT.to_string()),
            pi_fork: None,
        }
    }
}

impl ResumeCommands {
    pub fn for_kind(&self, kind: StoreKind) -> Option<&str> {
        match kind {
            StoreKind::Loop => self.loop_cmd.as_deref(),
            StoreKind::Loom => self.loom_cmd.as_deref(),
            StoreKind::Harness => self.harness_cmd.as_deref(),
            StoreKind::Claude => self.claude_cmd.as_deref(),
            StoreKind::Codex => self.codex_cmd.as_deref(),
            StoreKind::Pi => self.pi_cmd.as_deref(),
        }
        .filter(|s| !s.trim().is_empty())
    }
}
