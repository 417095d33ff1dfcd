//! Fuzz target `codex_zst`: see `spool::fuzz::Target::CodexZst`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    spool::fuzz::run(spool::fuzz::Target::CodexZst, data);
});
