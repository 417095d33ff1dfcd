//! Fuzz target `loop_legacy`: see `spool::fuzz::Target::LoopLegacy`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    spool::fuzz::run(spool::fuzz::Target::LoopLegacy, data);
});
