//! Fuzz target `loop_meta`: see `spool::fuzz::Target::LoopMeta`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    spool::fuzz::run(spool::fuzz::Target::LoopMeta, data);
});
