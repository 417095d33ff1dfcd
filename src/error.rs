//! The errors spool reports, each one clear sentence, each mapped to an exit code.

use std::path::PathBuf;

/// A failure of a store operation or a command. `Display` is the sentence shown to the user.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Bad option or argument (exit 2).
    #[error("{0}")]
    Usage(String),
    /// No session matches the reference (exit 2).
    #[error("no session matches '{0}'")]
    NotFound(String),
    /// The reference matches several sessions (exit 2).
    #[error("'{reference}' is ambiguous; it matches: {}", candidates.join(", "))]
    Ambiguous {
        reference: String,
        candidates: Vec<String>,
    },
    /// Another process holds the session (harness lease, loom open handle).
    #[error("session {0} is in use by another process")]
    InUse(String),
    /// The session changed on disk while we prepared a write (optimistic check failed).
    #[error("session {0} changed on disk while writing; retry")]
    Changed(String),
    /// The stored data is damaged or not what the contract allows.
    #[error("{0}")]
    Corrupt(String),
    /// The action is not possible for this session (read-only row, archived, no cut here...).
    #[error("{0}")]
    Refused(String),
    /// An I/O failure, with the path it concerns.
    #[error("{action} {}: {source}", path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl Error {
    /// The process exit code of the CLI contract: 2 for usage errors, 1 for failed actions.
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::Usage(_) | Error::NotFound(_) | Error::Ambiguous { .. } => 2,
            _ => 1,
        }
    }

    /// Output to a closed pipe (`spool list | head -1`): the reader has what it wanted, so
    /// this is a quiet success, not an error.
    pub fn is_broken_pipe(&self) -> bool {
        matches!(self, Error::Io { source, .. } if source.kind() == std::io::ErrorKind::BrokenPipe)
    }

    /// Wrap an `io::Error` with what was being done to which path.
    pub fn io(action: &'static str, path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            action,
            path: path.into(),
            source,
        }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
