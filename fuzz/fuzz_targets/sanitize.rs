//! Fuzz target `sanitize`: see `spool::fuzz::Target::Sanitize`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    spool::fuzz::run(spool::fuzz::Target::Sanitize, data);
});
