//! Fuzz target `config`: see `spool::fuzz::Target::Config`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    spool::fuzz::run(spool::fuzz::Target::Config, data);
});
