//! Fuzz target `harness_record`: see `spool::fuzz::Target::HarnessRecord`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    spool::fuzz::run(spool::fuzz::Target::HarnessRecord, data);
});
