//! Fuzz target `loom_log`: see `spool::fuzz::Target::LoomLog`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    spool::fuzz::run(spool::fuzz::Target::LoomLog, data);
});
