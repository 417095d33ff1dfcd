//! Tests of the Loop store.
