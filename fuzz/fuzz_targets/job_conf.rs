//! libFuzzer target: `circumflex_sim::fuzzing::job_conf` (see that function for the invariants checked).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| circumflex_sim::fuzzing::job_conf(data));
