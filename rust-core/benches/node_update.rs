//! Benchmark placeholder until the FLEX branch lands its criterion benchmarks.
fn main() {}
