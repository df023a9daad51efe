#![no_main]
// The body is rextio_fuzz::ir_text (fuzz/src/lib.rs), which stable tests run over the corpus too.
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| rextio_fuzz::ir_text(data));
