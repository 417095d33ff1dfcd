//! Fuzz target `loop_index`: see `spool::fuzz::Target::LoopIndex`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    spool::fuzz::run(spool::fuzz::Target::LoopIndex, data);
});
