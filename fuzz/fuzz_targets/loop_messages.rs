//! Fuzz target `loop_messages`: see `spool::fuzz::Target::LoopMessages`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    spool::fuzz::run(spool::fuzz::Target::LoopMessages, data);
});
