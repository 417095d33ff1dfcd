//! Writer tests.
