//! Fuzz target `codex_rollout`: see `spool::fuzz::Target::CodexRollout`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    spool::fuzz::run(spool::fuzz::Target::CodexRollout, data);
});
