//! Fuzz target `pi_session`: see `spool::fuzz::Target::PiSession`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    spool::fuzz::run(spool::fuzz::Target::PiSession, data);
});
