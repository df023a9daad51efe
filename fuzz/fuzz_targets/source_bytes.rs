#![no_main]
// The body is rextio_fuzz::source_bytes (fuzz/src/lib.rs), which stable tests run over the corpus too.
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| rextio_fuzz::source_bytes(data));
