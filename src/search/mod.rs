//! Search, in one room: the quick search over the list's rows (`quick`: titles fuzzily,
//! summaries and first prompts as substrings), the full-text query language (`query`) and
//! the full-text index over every message of every session (`index`).

pub mod index;
pub mod query;
pub mod quick;

pub use quick::{Key, Search, haystack, line_matches, rank_rows};
