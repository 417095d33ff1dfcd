//! Format-neutral types every store produces and every view consumes.

pub mod badges;
mod dirs;
pub mod ended;
pub mod left_off;
pub mod message;
mod row_text;
mod row_wire;
pub mod session;
pub mod shared;
pub mod wire;
pub mod wire_scratch;

pub use ended::Ended;
pub use message::{
    Entry, ImageRef, Message, Nested, Role, ToolCall, Transcript, Window, round_starts,
};
pub use session::{SessionSummary, StoreKind, from_millis, parse_time, rfc3339};
pub use shared::Shared;
