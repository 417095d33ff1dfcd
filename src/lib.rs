//! spool: a full-screen terminal browser for the saved sessions of AI coding agents.
//!
//! `model` holds the format-neutral types, `store` the readers and writers of each agent's
//! format, `cli` the scriptable subcommands; the browser lives in `app` (state), `ui`
//! (drawing) and `tui` (the terminal).

pub mod catalog;
pub mod cli;
pub mod corpus;
pub mod demo;
pub mod error;
pub mod export;
#[doc(hidden)]
pub mod fuzz;
pub mod hex;
pub mod hints;
pub mod inbox;
pub mod model;
pub mod preflight;
pub mod resume;
pub mod store;
pub mod text;

pub mod app;
pub mod browser;
pub mod config;
pub mod heap;
pub mod index_child;
pub mod indexer;
pub mod keytrace;
pub mod loader;
pub mod priority;
pub mod search;
pub mod tui;
pub mod ui;
