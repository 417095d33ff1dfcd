//! spool: a full-screen terminal browser for the saved sessions of AI coding agents.
//!
//! `model` holds the format-neutral types, `store` the readers and writers of each agent's
//! format, `cli` the scriptable subcommands; the browser lives in `app` (state), `ui`
//! (drawing) and `tui` (the terminal).

pub mod corpus;
pub mod error;
pub mod model;
pub mod store;
pub mod text;
