//! Fuzz target `claude_log`: see `spool::fuzz::Target::ClaudeLog`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    spool::fuzz::run(spool::fuzz::Target::ClaudeLog, data);
});
