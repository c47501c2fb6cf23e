//! The short fuzz run of the default tests: every target of `circumflex_sim::fuzzing` over the
//! committed seed corpus (`fuzz/corpus/<target>/`) and then over a fixed number of seeded
//! mutations of it. Stable Rust, no coverage guidance: a regression net that runs in seconds, while
//! `make fuzz` runs the same targets under libFuzzer (cargo fuzz, nightly) for as long as asked.
//!
//! `FUZZ_ITERATIONS` (default 3000 per target) and `FUZZ_SEED` (default 1) change the run; a
//! failing input is written to `target/fuzz-failures/<target>-<n>` and named in the panic, so it
//! can be added to the corpus once fixed.

use std::path::{Path, PathBuf};

use circumflex_sim::fuzzing::TARGETS;
use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64;

/// Tokens a hostile host or trace would use: boundary numbers, float specials, JSON and TSV syntax,
/// and the keys the decoders know.
const DICTIONARY: &[&str] = &[
    "-1",
    "0",
    "NaN",
    "inf",
    "-inf",
    "1e309",
    "9223372036854775807",
    "-9223372036854775808",
    "18446744073709551615",
    "2147483647",
    "4294967296",
    "\"",
    "\\u0000",
    ",",
    ":",
    "\t",
    "\n",
    "{",
    "}",
    "[",
    "]",
    "null",
    "\"mapreduce.job.maps\"",
    "\"mapreduce.workflow.adjacency.a\"",
    "\"circumflex.job.sla\"",
    "\"circumflex.policy\"",
    "\"submitTime\"",
    "\"startTime\"",
    "\"finishTime\"",
    "\"mapTasks\"",
    "\"SUCCESS\"",
];

fn corpus_dir(target: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus").join(target)
}

fn seeds(target: &str) -> Vec<Vec<u8>> {
    let dir = corpus_dir(target);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    let seeds: Vec<Vec<u8>> = files.iter().map(|f| std::fs::read(f).unwrap()).collect();
    assert!(!seeds.is_empty(), "{}: empty seed corpus", dir.display());
    seeds
}

/// One random edit: flip, insert, delete, duplicate a span, splice a dictionary token or another
/// seed's bytes.
fn mutate(rng: &mut Pcg64, input: &mut Vec<u8>, others: &[Vec<u8>]) {
    let len = input.len();
    let at = if len == 0 { 0 } else { rng.random_range(0..=len) };
    match rng.random_range(0..7u8) {
        0 if len > 0 => {
            let i = at.min(len - 1);
            input[i] ^= 1 << rng.random_range(0..8u32);
        }
        1 => input.insert(at, rng.random()),
        2 if len > 0 => {
            let end = (at + rng.random_range(1..=8usize)).min(len);
            input.drain(at.min(len - 1)..end.max(at.min(len - 1) + 1).min(len));
        }
        3 if len > 0 => {
            let start = at.min(len - 1);
            let end = (start + rng.random_range(1..=16usize)).min(len);
            let span = input[start..end].to_vec();
            let to = rng.random_range(0..=input.len());
            input.splice(to..to, span);
        }
        4 | 5 => {
            let token = DICTIONARY[rng.random_range(0..DICTIONARY.len())].as_bytes();
            input.splice(at..at, token.iter().copied());
        }
        _ => {
            let other = &others[rng.random_range(0..others.len())];
            if !other.is_empty() {
                let start = rng.random_range(0..other.len());
                let end = (start + rng.random_range(1..=64usize)).min(other.len());
                input.splice(at..at, other[start..end].iter().copied());
            }
        }
    }
    input.truncate(1 << 16);
}

fn run(name: &str, target: circumflex_sim::fuzzing::Target, input: &[u8], n: usize) {
    let outcome = std::panic::catch_unwind(|| target(input));
    if outcome.is_err() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/fuzz-failures");
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join(format!("{name}-{n}"));
        std::fs::write(&file, input).unwrap();
        panic!("fuzz target {name} failed on input {n}, saved to {}", file.display());
    }
}

fn env_number(key: &str, default: u64) -> u64 {
    std::env::var(key).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

#[test]
fn every_target_survives_its_corpus_and_seeded_mutations() {
    let iterations = env_number("FUZZ_ITERATIONS", 3_000);
    let seed = env_number("FUZZ_SEED", 1);
    let mut executions = 0u64;
    for (name, target) in TARGETS {
        let corpus = seeds(name);
        for (n, input) in corpus.iter().enumerate() {
            run(name, *target, input, n);
        }
        let mut rng = Pcg64::seed_from_u64(seed ^ name.len() as u64);
        for n in 0..iterations as usize {
            let mut input = corpus[rng.random_range(0..corpus.len())].clone();
            for _ in 0..rng.random_range(1..=8u32) {
                mutate(&mut rng, &mut input, &corpus);
            }
            run(name, *target, &input, corpus.len() + n);
        }
        executions += corpus.len() as u64 + iterations;
    }
    println!("fuzz_short: {executions} executions over {} targets (seed {seed})", TARGETS.len());
}
