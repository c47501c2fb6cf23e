//! Fuzz entry points: one function per untrusted-input boundary, each taking raw bytes and driving
//! that boundary end to end. The cargo-fuzz targets in `fuzz/` (libFuzzer, nightly) and the short
//! stable fuzz run in the default tests (`tests/fuzz_short.rs`) call exactly these functions, so
//! both exercise the same code.
//!
//! Contract: for ANY input a function returns normally. Malformed input must come back from the
//! boundary as an `Error` (which is ignored here); a panic, an overflow (debug builds), an engine
//! poisoned by a panic, or a broken invariant listed on the function is a bug, and these functions
//! turn broken invariants into panics so the fuzzer reports them with the input.
//!
//! Decision: the engine policies exercised by [`job_conf`] and [`ffi_events`] are chosen from the
//! input bytes, so one corpus covers every registered policy without a target per policy.

use std::collections::BTreeMap;

use crate::trace::{rumen, swim};
use circumflex::ffi::{self, ops, ErrorKind, FfiError};
use circumflex_core::config::{job_spec_from_conf, EngineConfig};
use circumflex_core::model::{JobSpec, Time};
use circumflex_policies::POLICY_NAMES;

/// Submit time used for fuzzed job configurations (the job conf carries relative times only).
const FUZZ_NOW: Time = 1_000_000;

/// A boundary error is expected for hostile input; a panic or an internal error is a bug.
fn expect_no_internal<T>(what: &str, result: Result<T, FfiError>) -> Option<T> {
    match result {
        Ok(v) => Some(v),
        Err(e) if e.kind() == ErrorKind::Internal => panic!("{what}: internal error on fuzzed input: {e}"),
        Err(_) => None,
    }
}

/// The job-configuration decoder: bytes as a JSON object of strings (the JNI `submitJob`
/// document) -> [`job_spec_from_conf`] -> a submission and a plan under the policy picked by the
/// input. Invariants: an accepted spec passes [`JobSpec::validate`]; the engine accepts or rejects
/// it without panicking; its JSON encoding decodes again.
pub fn job_conf(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(conf) = ffi::parse_string_map(text, ffi::JSON_JOB) else { return };
    let Ok(spec) = job_spec_from_conf(&conf, FUZZ_NOW) else { return };
    if let Err(e) = spec.validate() {
        panic!("job_spec_from_conf accepted a spec that validate() refuses: {e}");
    }
    let encoded = serde_json::to_string(&spec).unwrap_or_else(|e| panic!("a valid spec must encode: {e}"));
    if let Err(e) = serde_json::from_str::<JobSpec>(&encoded) {
        panic!("a valid spec's JSON must decode again: {e}: {encoded}");
    }
    let policy = POLICY_NAMES[data.len() % POLICY_NAMES.len()];
    let config = EngineConfig { policy: policy.to_string(), ..EngineConfig::default() };
    let Ok(mut engine) = circumflex_policies::new_engine(config) else {
        panic!("every registered policy builds from the default configuration: {policy}")
    };
    engine.add_node("n0", "/r0", 4, 2);
    engine.add_node("n1", "/r0", 4, 2);
    let _ = engine.submit(JobSpec::new(0, 3, 1).with_task_ms(1_000, 2_000), 0);
    let _ = engine.submit(spec, FUZZ_NOW);
    engine.replan(FUZZ_NOW + 1);
    let _ = engine.node_update(circumflex_core::model::NodeId(0), [4, 2], FUZZ_NOW + 2);
}

/// The scheduler-configuration parser: bytes as a JSON object of strings (the JNI `init`
/// document) -> [`EngineConfig::from_pairs`] -> the registry (which validates the policy's keys) ->
/// an engine. Invariant: neither step panics, and an engine built from them plans a small workload.
pub fn engine_config(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(pairs) = ffi::parse_string_map(text, ffi::JSON_CONFIG) else { return };
    let Ok(config) = EngineConfig::from_pairs(pairs.iter().map(|(k, v)| (k.as_str(), v.as_str()))) else {
        return;
    };
    if config.policy == "test-panic" {
        return; // The deliberate-panic test policy (test builds only) panics by design.
    }
    let Ok(mut engine) = circumflex_policies::new_engine(config) else { return };
    engine.add_node("n0", "/r0", 3, 1);
    for k in 0..3 {
        let _ = engine.submit(JobSpec::new(k * 100, 2 + k as u32, 1).with_task_ms(500, 900), k * 100);
    }
    engine.replan(1_000);
    let _ = engine.node_update(circumflex_core::model::NodeId(0), [3, 1], 1_001);
}

/// The SWIM TSV reader. Invariant: a parsed trace is a valid simulator workload.
pub fn swim_trace(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(jobs) = swim::parse(text, "fuzz.tsv", &swim::SwimModel::default()) {
        if let Err(e) = crate::sim::Workload::new("fuzz", jobs) {
            panic!("swim::parse produced an invalid workload: {e}");
        }
    }
}

/// The Rumen JSON reader. Invariant: a parsed trace is a valid simulator workload.
pub fn rumen_trace(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(jobs) = rumen::parse(text, "fuzz.json") {
        if let Err(e) = crate::sim::Workload::new("fuzz", jobs) {
            panic!("rumen::parse produced an invalid workload: {e}");
        }
    }
}

/// Reads integers of the host's widths off the input, zero when it runs out.
struct Cursor<'a> {
    data: &'a [u8],
}

impl Cursor<'_> {
    fn byte(&mut self) -> u8 {
        let (first, rest) = self.data.split_first().map_or((0, &[][..]), |(b, r)| (*b, r));
        self.data = rest;
        first
    }

    /// Small values most of the time (so ids hit live jobs and nodes), any `i32` sometimes.
    fn int(&mut self) -> i32 {
        match self.byte() {
            0xF0..=0xFF => i32::from_le_bytes([self.byte(), self.byte(), self.byte(), self.byte()]),
            b => i32::from(b % 8),
        }
    }

    /// A host time: advancing from `clock` most of the time, any `i64` sometimes.
    fn time(&mut self, clock: &mut Time) -> Time {
        match self.byte() {
            0xF8..=0xFF => i64::from_le_bytes(std::array::from_fn(|_| self.byte())),
            b => {
                *clock += i64::from(b) * 37;
                *clock
            }
        }
    }
}

/// The JNI/C event boundary: the input is decoded as a sequence of [`ops`] and [`batch`] calls with raw
/// host integers (ids, phase and locality codes, counts, times) on one engine handle, the policy and
/// the levers (engine preemption, the AM gate) picked by the first byte, so the
/// preemption and AM calls reach live engine state. Invariants: no call panics or poisons the engine,
/// and every call after a refused one still works; the handle closes exactly once.
pub fn ffi_events(data: &[u8]) {
    use circumflex::ffi::batch;
    use circumflex_core::config::{KEY_AM_ADMISSION, KEY_AM_MAX_SHARE, KEY_POLICY, KEY_PREEMPTION};
    let mut input = Cursor { data };
    // The low bits pick the policy, the top two switch the levers on (so older corpus entries, whose
    // first byte is small, keep their meaning).
    let first = input.byte();
    let policy = POLICY_NAMES[usize::from(first) % POLICY_NAMES.len()];
    let levers = first >> 6;
    let mut config = BTreeMap::from([(KEY_POLICY.to_string(), policy.to_string())]);
    if levers & 1 != 0 {
        config.insert(KEY_PREEMPTION.to_string(), "true".to_string());
    }
    if levers & 2 != 0 {
        config.insert(KEY_AM_ADMISSION.to_string(), "true".to_string());
        config.insert(KEY_AM_MAX_SHARE.to_string(), format!("0.{}", 1 + first % 9));
    }
    let raw = ffi::create_handle(&config).unwrap_or_else(|e| panic!("{policy} ({config:?}) must build: {e}")) as i64;
    let mut clock: Time = 0;
    let mut out = [0i32; 64];
    let mut calls = 0;
    while !input.data.is_empty() && calls < 512 {
        calls += 1;
        let op = input.byte() % 17;
        let result = ffi::with_handle(raw, |h| {
            let now = input.time(&mut clock);
            match op {
                0 => ops::add_node(h, "n", "/r", input.int(), input.int()).map(drop),
                1 => ops::remove_node(h, input.int(), now),
                2 => ops::set_node_capacity(h, input.int(), input.int(), input.int()),
                3 => {
                    let (maps, reduces, ms) = (input.int(), input.int(), input.int());
                    let conf = format!(
                        r#"{{"mapreduce.job.maps":"{maps}","mapreduce.job.reduces":"{reduces}","circumflex.job.map.ms":"{ms}","circumflex.job.deadline.ms":"{}"}}"#,
                        input.int().wrapping_mul(1000)
                    );
                    ops::submit_job(h, &conf, now).map(drop)
                }
                4 => ops::set_pending(h, input.int(), input.int(), input.int()),
                5 => ops::set_reduces_ready(h, input.int(), input.byte() % 2 == 0),
                6 => ops::task_started(h, input.int(), input.int(), input.int(), input.int(), now),
                7 => {
                    let (job, phase, node, duration) = (input.int(), input.int(), input.int(), input.int());
                    ops::task_finished(h, job, phase, node, i64::from(duration), input.byte() % 4 != 0, now)
                }
                8 => ops::finish_job(h, input.int(), now),
                9 => ops::tick(h, now).map(drop),
                10 => ops::node_update(h, input.int(), input.int(), input.int(), now, &mut out).map(drop),
                11 => ops::plan_json(h).map(drop),
                12 => ops::status_json(h, now).map(drop),
                // A short output array now and then: decisions that do not fit wait on the handle.
                13 => batch::preemptions(h, now, &mut out[..usize::from(input.byte() % 3) * 4]).map(drop),
                14 => {
                    let record = [input.int(), input.int(), input.int(), input.int()].map(i64::from);
                    let packed = [record[0], record[1], record[2], record[3], now];
                    batch::tasks_preempted(h, &packed, input.int()).map(drop)
                }
                15 => batch::am_admissions(h, now, &mut out[..usize::from(input.byte() % 4)]).map(drop),
                _ => {
                    let kind = i64::from(input.byte() % 5); // 4 is no kind: refused by name
                    let packed = [kind, i64::from(input.int()), i64::from(input.int()), now];
                    batch::am_events(h, &packed, input.int()).map(drop)
                }
            }
        });
        expect_no_internal("ffi event", result);
    }
    ffi::close_handle(raw).unwrap_or_else(|e| panic!("a live handle must close: {e}"));
}

/// A fuzz entry point: raw input bytes in, returns normally unless it found a bug.
pub type Target = fn(&[u8]);

/// Every target by name, for drivers that run them all (the short fuzz test, `make fuzz`).
pub const TARGETS: &[(&str, Target)] = &[
    ("job_conf", job_conf),
    ("engine_config", engine_config),
    ("swim_trace", swim_trace),
    ("rumen_trace", rumen_trace),
    ("ffi_events", ffi_events),
];
