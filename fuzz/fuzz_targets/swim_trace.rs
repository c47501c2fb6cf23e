//! libFuzzer target: `circumflex_sim::fuzzing::swim_trace` (see that function for the invariants checked).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| circumflex_sim::fuzzing::swim_trace(data));
