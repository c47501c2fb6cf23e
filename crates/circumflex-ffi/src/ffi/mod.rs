//! The foreign-function boundary shared by the JNI exports ([`jni`]) and the C ABI ([`capi`]).
//!
//! This module owns what both boundaries have in common:
//! - **Handles.** An engine lives in a `Box<EngineHandle>` whose address is the opaque handle
//!   (`jlong` for Java, `*mut CircumflexEngine` for C). Every live address is recorded in one
//!   registry; [`with_handle`] looks the address up there *before* dereferencing it, so a null,
//!   garbage or already-closed handle is an [`Error::UnknownId`] with kind `"handle"`, never
//!   undefined behaviour or a panic. [`close_handle`] removes the address and frees the box exactly
//!   once; a second close is an error, not a double free. Calls hold the registry's read lock for
//!   their duration and close takes the write lock, so a close waits for calls in flight.
//! - **Errors.** [`FfiError`] is a core [`Error`], a JNI failure, a bad argument from the host,
//!   or a caught panic. [`ErrorKind`] is the ONE table from error to kind; the JNI layer maps each
//!   kind to a named Java exception class and the C ABI to a numeric code.
//! - **Panics.** [`install_panic_hook`] records each panic's message, location and a forced
//!   backtrace in a thread-local, and [`panic_message`] turns a caught payload into a message that
//!   carries them (as DataFusion Comet does), so a panic in a policy reaches the ResourceManager log
//!   as a diagnosable `CircumflexInternalException`.
//!
//! **Decision: a poisoned engine stays poisoned.** A panic while the engine mutex is held (a policy
//! bug, or the `test-panic` policy) may leave the engine half-updated: a job pushed but not
//! indexed, say. Silently recovering the guard would hand the host decisions computed from
//! inconsistent state. So every later call on that handle fails with a
//! `CircumflexInternalException` that says the engine was poisoned by an earlier panic and names
//! that panic; the process and every other handle stay healthy. The host decides what to do: the
//! YARN shim falls back to FIFO order; closing the handle still works and frees it.
//!
//! **Observability** (for the daemons' scheduler pages, REST answers and metrics): the status
//! document ([`ops::status_json`]) carries the policy, objective, epoch, each job's target and
//! running slots, predicted and actual completion, deadline and admission decision, and the
//! structure of flows and datasets, and the live shared scans as the policy planned them
//! (`scans`: per dataset, the jobs in chain order with their splits left and done, subjob work and
//! remaining amount `r_k`; filled by `circumflex`, see `Plan::scans`); [`ops::counters`] packs the numeric counters into a
//! caller-owned array for metrics sources. Admission decisions (with the policy's reason) are
//! kept per handle, the last [`DECISIONS_KEPT`], because the engine keeps only a job's status, and
//! only while the job is live or among its last `RECENT_JOBS` ended jobs.
//!
//! **Decision: a refresh may not change the slot model.** [`ops::reconfigure`] swaps policy and
//! parameters through `Engine::reconfigure`, but refuses a new `circumflex.pool.mode`: node
//! capacities and running counts were reported in the old model and would be misread. Likewise it
//! refuses turning the AM gate (`circumflex.am.admission.enabled`) on or off: a host places AMs by the
//! gate's answers, and jobs submitted under the other rule would be stranded (its share may change).

pub mod batch;
pub mod capi;
pub mod jni;
pub mod logbuf;
pub mod page;

use std::cell::RefCell;
use std::collections::{BTreeMap, HashSet, VecDeque};
use std::sync::{Mutex, Once, PoisonError, RwLock};

use serde::Serialize;

use circumflex_core::config::EngineConfig;
use circumflex_core::engine::Engine;
use circumflex_core::error::Error;
use circumflex_core::model::{JobId, Locality, NodeId, Phase, Time};

/// Library version, reported by `init` so the Java side can check jar and library agree.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Integers per choice in the packed node-update output: job, phase, count, locality.
pub const CHOICE_STRIDE: usize = 4;

/// Admission decisions kept per handle for the status document.
pub const DECISIONS_KEPT: usize = 256;

/// Names of the values [`ops::counters`] writes, in order (metrics sources read them by index).
pub const COUNTER_NAMES: [&str; 13] = [
    "plans",
    "last_plan_ns",
    "total_plan_ns",
    "node_updates",
    "admitted",
    "rejected",
    "finished",
    "deadline_misses",
    "active_jobs",
    "preemptions",
    "preempted_tasks",
    "preempted_lost_ms",
    "preemptions_in_flight",
];

/// One admission decision as the status document shows it.
#[derive(Clone, Debug, Serialize)]
pub struct AdmissionRecord {
    /// Engine job id.
    pub job: u32,
    /// The host's job id.
    pub external_id: String,
    /// When the job was submitted.
    pub at_ms: Time,
    /// `accept` or `reject`.
    pub decision: &'static str,
    /// The policy's reason for a rejection.
    pub reason: Option<String>,
}

/// One engine behind a foreign handle.
pub struct EngineHandle {
    engine: Mutex<Engine>,
    /// Message of the panic that poisoned `engine`, if one did.
    poisoned_by: Mutex<Option<String>>,
    /// Reusable packing buffer for node updates, so the hot path does not allocate.
    pub(crate) scratch: Mutex<Vec<i32>>,
    /// Reusable buffer for batched task ends read from the host ([`batch::tasks_finished`]).
    pub(crate) scratch_long: Mutex<Vec<i64>>,
    /// Preemption decisions already taken from the engine that did not fit the host's array, packed
    /// ([`batch::PREEMPTION_STRIDE`] each); [`batch::preemptions`] hands them out first.
    pub(crate) preempt_backlog: Mutex<Vec<i32>>,
    /// The last [`DECISIONS_KEPT`] admission decisions, oldest first.
    decisions: Mutex<VecDeque<AdmissionRecord>>,
}

impl EngineHandle {
    fn new(engine: Engine) -> EngineHandle {
        EngineHandle {
            engine: Mutex::new(engine),
            poisoned_by: Mutex::new(None),
            scratch: Mutex::new(Vec::new()),
            scratch_long: Mutex::new(Vec::new()),
            preempt_backlog: Mutex::new(Vec::new()),
            decisions: Mutex::new(VecDeque::new()),
        }
    }

    fn record_decision(&self, record: AdmissionRecord) {
        let mut decisions = self.decisions.lock().unwrap_or_else(PoisonError::into_inner);
        if decisions.len() >= DECISIONS_KEPT {
            decisions.pop_front();
        }
        decisions.push_back(record);
    }

    /// Runs `f` on the engine under its mutex. If `f` panics, the panic is caught here, remembered
    /// as the cause of poisoning, and returned as [`FfiError::Panic`]. A poisoned engine is an
    /// error (see the module docs for why it is not recovered).
    pub fn with_engine<T>(&self, f: impl FnOnce(&mut Engine) -> Result<T, FfiError>) -> Result<T, FfiError> {
        // The engine mutex itself is never poisoned: panics are caught while the guard is held.
        // `poisoned_by` is the authority on whether the engine state can be trusted.
        let mut guard = self.engine.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(cause) = self.poisoned_by.lock().unwrap_or_else(PoisonError::into_inner).as_ref() {
            return Err(FfiError::Internal(format!(
                "engine is unusable after an earlier panic ({cause}); close this engine and create a new one"
            )));
        }
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(&mut guard))) {
            Ok(result) => result,
            Err(payload) => {
                let message = panic_message(payload.as_ref());
                *self.poisoned_by.lock().unwrap_or_else(PoisonError::into_inner) =
                    Some(first_line(&message).to_string());
                Err(FfiError::Panic(message))
            }
        }
    }
}

/// Every live handle address.
static LIVE: RwLock<Option<HashSet<usize>>> = RwLock::new(None);

/// Creates an engine from `circumflex.*` pairs and returns its handle address (never 0).
pub fn create_handle(config: &BTreeMap<String, String>) -> Result<usize, FfiError> {
    let cfg = EngineConfig::from_pairs(config.iter().map(|(k, v)| (k.as_str(), v.as_str())))?;
    let engine = circumflex_policies::new_engine(cfg)?;
    let raw = Box::into_raw(Box::new(EngineHandle::new(engine))) as usize;
    LIVE.write().unwrap_or_else(PoisonError::into_inner).get_or_insert_with(HashSet::new).insert(raw);
    Ok(raw)
}

/// Runs `f` with the engine handle at address `raw`. Unknown, null or closed addresses are an
/// [`Error::UnknownId`] of kind `"handle"`; the address is never dereferenced unless it is live.
pub fn with_handle<T>(raw: i64, f: impl FnOnce(&EngineHandle) -> Result<T, FfiError>) -> Result<T, FfiError> {
    let live = LIVE.read().unwrap_or_else(PoisonError::into_inner);
    let known = usize::try_from(raw).ok().filter(|addr| live.as_ref().is_some_and(|set| set.contains(addr)));
    let Some(addr) = known else {
        return Err(Error::UnknownId { kind: "handle", id: raw }.into());
    };
    // SAFETY: `addr` came from `Box::into_raw` in `create_handle` and is still in LIVE; it is only
    // freed by `close_handle`, which needs the write lock we hold for reading until `f` returns.
    let handle = unsafe { &*(addr as *const EngineHandle) };
    f(handle)
}

/// Frees the engine at `raw` exactly once. Closing an unknown or already-closed handle is an error.
pub fn close_handle(raw: i64) -> Result<(), FfiError> {
    let mut live = LIVE.write().unwrap_or_else(PoisonError::into_inner);
    let removed = usize::try_from(raw).ok().filter(|addr| live.as_mut().is_some_and(|set| set.remove(addr)));
    let Some(addr) = removed else {
        return Err(Error::UnknownId { kind: "handle", id: raw }.into());
    };
    // SAFETY: `addr` was live (created by `Box::into_raw`) and has just been removed from LIVE
    // under the write lock, so no call holds a reference and no other close can free it again.
    drop(unsafe { Box::from_raw(addr as *mut EngineHandle) });
    Ok(())
}

/// Number of live handles (for leak checks in tests).
pub fn live_handles() -> usize {
    LIVE.read().unwrap_or_else(PoisonError::into_inner).as_ref().map_or(0, HashSet::len)
}

/// Everything that can fail at the boundary.
#[derive(Debug, thiserror::Error)]
pub enum FfiError {
    /// An engine error (bad configuration, bad job, unknown id, rejection, ...).
    #[error(transparent)]
    Core(#[from] Error),
    /// A JNI call failed (a Java exception may be pending).
    #[error("JNI: {0}")]
    Jni(#[from] ::jni::errors::Error),
    /// The host passed an argument the boundary cannot accept (null string, short array, ...).
    #[error("illegal argument: {0}")]
    Argument(String),
    /// A panic was caught; the message carries its location and backtrace.
    #[error("internal error (panic): {0}")]
    Panic(String),
    /// The engine is unusable (poisoned by an earlier panic).
    #[error("internal error: {0}")]
    Internal(String),
}

/// The kinds of boundary failure: the one table both boundaries map from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// Bad scheduler configuration.
    Config,
    /// Bad job specification or job configuration.
    InvalidJob,
    /// Unknown job, node or handle id.
    UnknownId,
    /// Refused by admission control.
    Rejected,
    /// Bad argument from the host.
    Argument,
    /// IO or input-file errors.
    Io,
    /// Panics, poisoned engines, JNI failures.
    Internal,
}

impl ErrorKind {
    /// The Java exception class (JNI binary name) for this kind.
    pub fn java_class(self) -> &'static str {
        match self {
            ErrorKind::Config => "io/circumflex/CircumflexConfigException",
            ErrorKind::InvalidJob => "io/circumflex/CircumflexInvalidJobException",
            ErrorKind::UnknownId => "io/circumflex/CircumflexUnknownIdException",
            ErrorKind::Rejected => "io/circumflex/CircumflexRejectedException",
            ErrorKind::Argument => "java/lang/IllegalArgumentException",
            ErrorKind::Io => "io/circumflex/CircumflexException",
            ErrorKind::Internal => "io/circumflex/CircumflexInternalException",
        }
    }

    /// The C ABI status code for this kind (0 is success; see `CircumflexStatus`).
    pub fn c_code(self) -> i32 {
        match self {
            ErrorKind::Config => 1,
            ErrorKind::InvalidJob => 2,
            ErrorKind::UnknownId => 3,
            ErrorKind::Rejected => 4,
            ErrorKind::Argument => 5,
            ErrorKind::Io => 6,
            ErrorKind::Internal => 7,
        }
    }
}

impl FfiError {
    /// The one error-to-kind table.
    pub fn kind(&self) -> ErrorKind {
        match self {
            FfiError::Core(Error::InvalidConfig { .. }) => ErrorKind::Config,
            FfiError::Core(Error::Json { what, .. }) if *what == JSON_CONFIG => ErrorKind::Config,
            FfiError::Core(Error::InvalidJob { .. }) | FfiError::Core(Error::Json { .. }) => ErrorKind::InvalidJob,
            FfiError::Core(Error::UnknownId { .. }) => ErrorKind::UnknownId,
            FfiError::Core(Error::Rejected { .. }) => ErrorKind::Rejected,
            FfiError::Core(Error::BadInput { .. }) | FfiError::Core(Error::Io { .. }) => ErrorKind::Io,
            FfiError::Argument(_) => ErrorKind::Argument,
            FfiError::Jni(_) | FfiError::Panic(_) | FfiError::Internal(_) => ErrorKind::Internal,
        }
    }
}

/// `what` of JSON errors in the scheduler configuration document.
pub const JSON_CONFIG: &str = "configuration";
/// `what` of JSON errors in a job configuration document.
pub const JSON_JOB: &str = "job configuration";

/// Decodes a JSON object of string keys to string values (configuration maps).
pub fn parse_string_map(json: &str, what: &'static str) -> Result<BTreeMap<String, String>, FfiError> {
    serde_json::from_str(json).map_err(|e| Error::Json { what, message: e.to_string() }.into())
}

// ----- process-wide calls shared by both boundaries -------------------------------------------

/// Process set-up for a host (JNI `nativeInit`, C `circumflex_init`): installs the panic hook and the
/// native log buffer with `log_level` (`env_logger` directives; empty = `warn`) and returns the
/// library version. A later call only changes the level. A level that does not parse is an
/// [`Error::InvalidConfig`] naming it, and the previous level stays.
pub fn init(log_level: &str) -> Result<&'static str, FfiError> {
    install_panic_hook();
    // A second init (or a host that installed its own logger first) keeps the first logger.
    let _first = logbuf::install(log_level)?;
    Ok(VERSION)
}

/// Takes every buffered native log record, encoded for the host by [`logbuf::encode`]
/// (`LEVEL US target US message RS` per record). Empty when there is nothing to report.
pub fn drain_logs() -> String {
    logbuf::encode(&logbuf::drain())
}

// ----- panics --------------------------------------------------------------------------------

thread_local! {
    /// Message, location and backtrace of the last panic on this thread, set by the hook.
    static LAST_PANIC: RefCell<Option<String>> = const { RefCell::new(None) };
}

static HOOK: Once = Once::new();

/// Installs (once per process) a panic hook that records each panic with a forced backtrace for
/// [`panic_message`], then runs the previous hook (which prints to stderr, the daemon's log).
pub fn install_panic_hook() {
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let backtrace = std::backtrace::Backtrace::force_capture();
            let payload = info.payload();
            let text = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "panic with a non-string payload".to_string());
            let at = info.location().map(|l| format!(" at {}:{}", l.file(), l.line())).unwrap_or_default();
            let record = format!("{text}{at}\nnative backtrace:\n{backtrace}");
            LAST_PANIC.with(|slot| *slot.borrow_mut() = Some(record));
            previous(info);
        }));
    });
}

/// The message of a caught panic: the hook's record (with location and backtrace) when the hook
/// saw it, else the payload's text.
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(record) = LAST_PANIC.with(|slot| slot.borrow_mut().take()) {
        return record;
    }
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "panic with a non-string payload".to_string()
    }
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or(s)
}

// ----- operations shared by both boundaries ---------------------------------------------------

fn phase_arg(code: i32) -> Result<Phase, FfiError> {
    Phase::from_code(code).ok_or_else(|| FfiError::Argument(format!("phase = {code}: expected 0 (map) or 1 (reduce)")))
}

fn locality_arg(code: i32) -> Result<Locality, FfiError> {
    match code {
        0 => Ok(Locality::Node),
        1 => Ok(Locality::Rack),
        2 => Ok(Locality::Any),
        _ => Err(FfiError::Argument(format!("locality = {code}: expected 0 (node), 1 (rack) or 2 (any)"))),
    }
}

/// Most slots one node may declare (per phase). A million containers per node is far beyond any
/// machine, and with it no sum over nodes or heartbeat budget comes near `u32::MAX` in practice.
pub const MAX_NODE_SLOTS: u32 = 1 << 20;

/// Longest node or rack name, in bytes.
const MAX_NAME_BYTES: usize = 4_096;

fn bounded_count_arg(name: &str, value: i32, max: u32) -> Result<u32, FfiError> {
    u32::try_from(value)
        .ok()
        .filter(|&v| v <= max)
        .ok_or_else(|| FfiError::Argument(format!("{name} = {value}: expected a count in 0 ..= {max}")))
}

/// A host time (`now`) or duration: 0 ..= [`circumflex_core::model::MAX_TIME`]. Negative or absurd times are
/// refused here so that no engine arithmetic on them can overflow.
fn time_arg(name: &str, value: Time) -> Result<Time, FfiError> {
    if (0..=circumflex_core::model::MAX_TIME).contains(&value) {
        Ok(value)
    } else {
        Err(FfiError::Argument(format!("{name} = {value}: expected milliseconds in 0 ..= 2^50")))
    }
}

fn name_arg<'a>(name: &str, value: &'a str) -> Result<&'a str, FfiError> {
    if value.len() > MAX_NAME_BYTES || value.chars().any(char::is_control) {
        let shown: String = value.chars().take(40).collect();
        return Err(FfiError::Argument(format!(
            "{name} = '{}' ({} bytes): expected at most {MAX_NAME_BYTES} bytes without control characters",
            shown.escape_debug(),
            value.len()
        )));
    }
    Ok(value)
}

fn id_arg(name: &str, value: i32) -> Result<u32, FfiError> {
    u32::try_from(value).map_err(|_| FfiError::Argument(format!("{name} = {value}: expected an id >= 0")))
}

/// A value the host receives as a Java / C `int` (ids, phase codes, counts written), checked: engine
/// ids are dense from 0, so this fails only past 2^31 - 1 jobs or nodes in one engine's life, and then
/// the error names the value instead of handing the host a negative id.
pub(crate) fn to_jint<T>(what: &'static str, value: T) -> Result<i32, FfiError>
where
    T: Copy + std::fmt::Display + TryInto<i32>,
{
    value
        .try_into()
        .map_err(|_| FfiError::Internal(format!("{what} {value} does not fit a Java int (at most {})", i32::MAX)))
}

/// Typed operations on a handle, used by both the JNI exports and the C ABI so the two
/// boundaries cannot drift apart. Integer arguments arrive as the host's signed types and are
/// checked here.
pub mod ops {
    use super::*;

    /// Registers a node; returns its id.
    pub fn add_node(
        h: &EngineHandle,
        name: &str,
        rack: &str,
        map_slots: i32,
        reduce_slots: i32,
    ) -> Result<i32, FfiError> {
        let name = name_arg("name", name)?;
        let rack = name_arg("rack", rack)?;
        let map_slots = bounded_count_arg("mapSlots", map_slots, MAX_NODE_SLOTS)?;
        let reduce_slots = bounded_count_arg("reduceSlots", reduce_slots, MAX_NODE_SLOTS)?;
        h.with_engine(|e| to_jint("node id", e.add_node(name, rack, map_slots, reduce_slots).0))
    }

    /// Marks a node lost.
    pub fn remove_node(h: &EngineHandle, node: i32, now: Time) -> Result<(), FfiError> {
        let node = NodeId(id_arg("node", node)?);
        let now = time_arg("now", now)?;
        h.with_engine(|e| Ok(e.remove_node(node, now)?))
    }

    /// Puts a node in or out of the accelerated pool (hardware affinity; YARN node labels).
    pub fn set_node_accelerated(h: &EngineHandle, node: i32, accelerated: bool) -> Result<(), FfiError> {
        let node = NodeId(id_arg("node", node)?);
        h.with_engine(|e| Ok(e.set_node_accelerated(node, accelerated)?))
    }

    /// Changes a node's capacity.
    pub fn set_node_capacity(h: &EngineHandle, node: i32, map_slots: i32, reduce_slots: i32) -> Result<(), FfiError> {
        let node = NodeId(id_arg("node", node)?);
        let map_slots = bounded_count_arg("mapSlots", map_slots, MAX_NODE_SLOTS)?;
        let reduce_slots = bounded_count_arg("reduceSlots", reduce_slots, MAX_NODE_SLOTS)?;
        h.with_engine(|e| Ok(e.set_node_capacity(node, map_slots, reduce_slots)?))
    }

    /// Submits a job from its configuration map (JSON object of strings). A rejection is
    /// [`Error::Rejected`] carrying the policy's reason.
    pub fn submit_job(h: &EngineHandle, conf_json: &str, now: Time) -> Result<i32, FfiError> {
        let now = time_arg("now", now)?;
        let conf = parse_string_map(conf_json, JSON_JOB)?;
        let spec = circumflex_core::config::job_spec_from_conf(&conf, now)?;
        let external_id = spec.external_id.clone();
        let (id, policy, admission) = h.with_engine(|e| {
            let (id, admission) = e.submit(spec, now)?;
            Ok((id, e.policy_name(), admission))
        })?;
        let (decision, reason) = match admission {
            circumflex_core::policy::Admission::Accept => ("accept", None),
            circumflex_core::policy::Admission::Reject { reason } => ("reject", Some(reason)),
        };
        let record = AdmissionRecord { job: id.0, external_id: external_id.clone(), at_ms: now, decision, reason };
        let reason = record.reason.clone();
        h.record_decision(record);
        match reason {
            None => to_jint("job id", id.0),
            Some(reason) => {
                log::info!("job {} ({external_id}) rejected by {policy}: {reason}", id.0);
                Err(Error::Rejected { policy: policy.to_string(), reason }.into())
            }
        }
    }

    /// Replaces the policy and its parameters from a JSON object of every `circumflex.*` key
    /// (operator refresh). A configuration that does not parse, names an unknown policy or changes
    /// the pool mode is an [`Error::InvalidConfig`] and the running policy stays.
    pub fn reconfigure(h: &EngineHandle, config_json: &str, now: Time) -> Result<(), FfiError> {
        let result = (|| {
            let pairs = parse_string_map(config_json, JSON_CONFIG)?;
            let config = EngineConfig::from_pairs(pairs.iter().map(|(k, v)| (k.as_str(), v.as_str())))?;
            // The registry validates the policy's keys here, once, before the engine is touched.
            let policy = circumflex_policies::create(&config)?;
            h.with_engine(|e| {
                let old_policy = e.policy_name();
                let old_mode = e.config().pool_mode;
                if config.pool_mode != old_mode {
                    return Err(Error::config(
                        "circumflex.pool.mode",
                        format!("{:?}", config.pool_mode).to_lowercase(),
                        format!("the running mode ({old_mode:?}): the slot model cannot change without a restart")
                            .to_lowercase(),
                    )
                    .into());
                }
                if config.am.enabled != e.config().am.enabled {
                    // Jobs whose AM the gate holds (or AMs a host placed without it) would be stranded.
                    return Err(Error::config(
                        circumflex_core::config::KEY_AM_ADMISSION,
                        config.am.enabled.to_string(),
                        format!(
                            "the running value ({}): the AM gate cannot be turned on or off without a restart",
                            e.config().am.enabled
                        ),
                    )
                    .into());
                }
                e.reconfigure(config, policy, now);
                log::info!(
                    "refreshed: policy {old_policy} -> {}, {} active jobs re-planned",
                    e.policy_name(),
                    e.active().len()
                );
                Ok(())
            })
        })();
        if let Err(err) = &result {
            log::warn!("refresh rejected, the running policy keeps running: {err}");
        }
        result
    }

    /// Writes the counters named by [`COUNTER_NAMES`] into `out` (as many as fit) and returns how
    /// many it wrote. Deadline misses are finished jobs whose finish came after their deadline.
    pub fn counters(h: &EngineHandle, out: &mut [i64]) -> Result<usize, FfiError> {
        h.with_engine(|e| {
            let s = e.stats();
            let clamp = |v: u64| i64::try_from(v).unwrap_or(i64::MAX);
            let values = [
                clamp(s.plans),
                clamp(s.last_plan_ns),
                clamp(s.total_plan_ns),
                clamp(s.node_updates),
                clamp(s.admitted),
                clamp(s.rejected),
                clamp(s.finished),
                clamp(s.deadline_misses),
                clamp(e.active().len() as u64),
                clamp(s.preemptions),
                clamp(s.preempted_tasks),
                clamp(s.preempted_lost_ms),
                clamp(u64::from(e.preemptions_in_flight())),
            ];
            let n = values.len().min(out.len());
            out[..n].copy_from_slice(&values[..n]);
            Ok(n)
        })
    }

    /// Sets a phase's pending task count.
    pub fn set_pending(h: &EngineHandle, job: i32, phase: i32, pending: i32) -> Result<(), FfiError> {
        let job = JobId(id_arg("job", job)?);
        let phase = phase_arg(phase)?;
        let pending = bounded_count_arg("pending", pending, circumflex_core::model::MAX_TASKS)?;
        h.with_engine(|e| Ok(e.set_pending(job, phase, pending)?))
    }

    /// Overrides whether a job's reduces may run.
    pub fn set_reduces_ready(h: &EngineHandle, job: i32, ready: bool) -> Result<(), FfiError> {
        let job = JobId(id_arg("job", job)?);
        h.with_engine(|e| Ok(e.set_reduces_ready(job, ready)?))
    }

    /// A task started.
    pub fn task_started(
        h: &EngineHandle,
        job: i32,
        phase: i32,
        node: i32,
        locality: i32,
        now: Time,
    ) -> Result<(), FfiError> {
        let job = JobId(id_arg("job", job)?);
        let phase = phase_arg(phase)?;
        let node = NodeId(id_arg("node", node)?);
        let locality = locality_arg(locality)?;
        let now = time_arg("now", now)?;
        h.with_engine(|e| Ok(e.task_started(job, phase, node, locality, now)?))
    }

    /// A task ended.
    #[allow(clippy::too_many_arguments)]
    pub fn task_finished(
        h: &EngineHandle,
        job: i32,
        phase: i32,
        node: i32,
        duration_ms: Time,
        success: bool,
        now: Time,
    ) -> Result<(), FfiError> {
        let job = JobId(id_arg("job", job)?);
        let phase = phase_arg(phase)?;
        let node = NodeId(id_arg("node", node)?);
        let duration_ms = time_arg("durationMs", duration_ms)?;
        let now = time_arg("now", now)?;
        h.with_engine(|e| Ok(e.task_finished(job, phase, node, duration_ms, success, now)?))
    }

    /// Ends a job.
    pub fn finish_job(h: &EngineHandle, job: i32, now: Time) -> Result<(), FfiError> {
        let job = JobId(id_arg("job", job)?);
        let now = time_arg("now", now)?;
        h.with_engine(|e| Ok(e.finish_job(job, now)?))
    }

    /// Re-plans if due; returns whether it planned.
    pub fn tick(h: &EngineHandle, now: Time) -> Result<bool, FfiError> {
        let now = time_arg("now", now)?;
        h.with_engine(|e| Ok(e.tick(now)))
    }

    /// Answers a heartbeat, packing choices into `out` ([`CHOICE_STRIDE`] integers each: job,
    /// phase code, count, locality code). Writes as many whole choices as fit and returns how many
    /// it wrote; choices beyond that are fallbacks the host could not have used.
    pub fn node_update(
        h: &EngineHandle,
        node: i32,
        free_map: i32,
        free_reduce: i32,
        now: Time,
        out: &mut [i32],
    ) -> Result<usize, FfiError> {
        let node = NodeId(id_arg("node", node)?);
        let free = [
            bounded_count_arg("freeMap", free_map, MAX_NODE_SLOTS)?,
            bounded_count_arg("freeReduce", free_reduce, MAX_NODE_SLOTS)?,
        ];
        let now = time_arg("now", now)?;
        h.with_engine(|e| {
            let choices = e.node_update(node, free, now)?;
            let mut written = 0;
            for (c, slot) in choices.iter().zip(out.chunks_exact_mut(CHOICE_STRIDE)) {
                slot[0] = to_jint("job id", c.job.0)?;
                slot[1] = to_jint("phase index", c.phase.idx())?;
                slot[2] = i32::try_from(c.count).unwrap_or(i32::MAX);
                slot[3] = c.locality.code();
                written += 1;
            }
            Ok(written)
        })
    }

    /// The current plan as JSON.
    pub fn plan_json(h: &EngineHandle) -> Result<String, FfiError> {
        h.with_engine(|e| {
            // The plan as the status shows it, predictions included (computed here, on demand).
            e.predict_completions();
            to_json(e.plan())
        })
    }

    /// Engine status as JSON: policy, objective, epoch, statistics, cluster, nodes, the counters,
    /// targets, predictions and admission decision of the live jobs and of the recently ended ones
    /// (the engine retires ended jobs and keeps the last `RECENT_JOBS`), the flows and datasets, and
    /// the live shared scans of the current plan.
    pub fn status_json(h: &EngineHandle, now: Time) -> Result<String, FfiError> {
        with_status(h, now, |status| to_json(status))
    }

    /// The same status as an HTML fragment for the daemons' scheduler pages (see [`super::page`]).
    pub fn status_html(h: &EngineHandle, now: Time) -> Result<String, FfiError> {
        with_status(h, now, |status| Ok(super::page::render(status)))
    }

    fn with_status<T>(
        h: &EngineHandle,
        now: Time,
        f: impl FnOnce(&Status<'_>) -> Result<T, FfiError>,
    ) -> Result<T, FfiError> {
        let decisions: Vec<AdmissionRecord> =
            h.decisions.lock().unwrap_or_else(PoisonError::into_inner).iter().cloned().collect();
        h.with_engine(|e| {
            // A view is when predicted completions are worth computing (`Policy::predict_completions`).
            e.predict_completions();
            let plan = e.plan();
            // Live jobs, then the recently ended ones the engine still keeps (newest last).
            let jobs: Vec<JobStatusView<'_>> = e
                .live_jobs()
                .chain(e.recent_jobs())
                .map(|j| {
                    let mut view = JobStatusView::from(j);
                    if let Some(entry) = plan.entry(j.id).filter(|_| j.is_active()) {
                        view.target = entry.target;
                        view.predicted_completion_ms = entry.predicted_completion_ms;
                    }
                    view.admission = decisions.iter().rev().find(|d| d.job == j.id.0).cloned();
                    view
                })
                .collect();
            let status = Status {
                version: VERSION,
                policy: e.policy_name(),
                objective: e.config().objective.as_deref(),
                epoch_ms: e.config().epoch_ms,
                pool_mode: e.config().pool_mode,
                params: &e.config().params,
                plan_computed_at_ms: plan.computed_at,
                rule: plan.rule,
                now,
                stats: e.stats(),
                deadline_misses: e.stats().deadline_misses,
                cluster: e.cluster(),
                nodes: e.nodes(),
                flows: flows_of(e.live_jobs().chain(e.recent_jobs())),
                datasets: datasets_of(e.live_jobs().chain(e.recent_jobs())),
                scans: &plan.scans,
                decisions: &decisions,
                preemption: PreemptionView {
                    config: e.config().preemption,
                    in_flight: e.preemptions_in_flight(),
                    recent: e.recent_preemptions().rev().collect(),
                },
                am_admission: AmAdmissionView {
                    config: e.config().am,
                    gate: e.am_gate_view(),
                    waiting: e.am_waiting(),
                },
                jobs,
            };
            f(&status)
        })
    }

    fn to_json<T: Serialize>(value: &T) -> Result<String, FfiError> {
        serde_json::to_string(value).map_err(|e| FfiError::Internal(format!("cannot encode JSON: {e}")))
    }
}

/// Every flow of the live and recently ended jobs: id, the members' (job, node name) and the
/// adjacency the submitters declared (union over members, first declaration of a node wins).
fn flows_of<'a>(jobs: impl Iterator<Item = &'a circumflex_core::model::JobState>) -> Vec<FlowView<'a>> {
    let mut flows: BTreeMap<&str, FlowView<'_>> = BTreeMap::new();
    for j in jobs {
        let Some(flow) = j.spec.flow.as_ref() else { continue };
        let view = flows.entry(flow.flow_id.as_str()).or_insert_with(|| FlowView {
            flow_id: &flow.flow_id,
            members: Vec::new(),
            adjacency: BTreeMap::new(),
        });
        view.members.push(FlowMemberView { job: j.id.0, node: &flow.node_name, status: j.status });
        for (node, successors) in &flow.adjacency {
            view.adjacency.entry(node.as_str()).or_insert(successors.as_slice());
        }
    }
    flows.into_values().collect()
}

/// Every dataset named by a live or recently ended job, with the jobs that read it.
fn datasets_of<'a>(jobs: impl Iterator<Item = &'a circumflex_core::model::JobState>) -> Vec<DatasetView<'a>> {
    let mut sets: BTreeMap<&str, Vec<u32>> = BTreeMap::new();
    for j in jobs {
        if let Some(d) = j.spec.dataset.as_deref() {
            sets.entry(d).or_default().push(j.id.0);
        }
    }
    sets.into_iter().map(|(dataset, jobs)| DatasetView { dataset, jobs }).collect()
}

#[derive(Serialize)]
struct FlowView<'a> {
    flow_id: &'a str,
    members: Vec<FlowMemberView<'a>>,
    adjacency: BTreeMap<&'a str, &'a [String]>,
}

#[derive(Serialize)]
struct FlowMemberView<'a> {
    job: u32,
    node: &'a str,
    status: circumflex_core::model::JobStatus,
}

#[derive(Serialize)]
struct DatasetView<'a> {
    dataset: &'a str,
    jobs: Vec<u32>,
}

#[derive(Serialize)]
struct Status<'a> {
    version: &'static str,
    policy: &'static str,
    objective: Option<&'a str>,
    epoch_ms: Time,
    pool_mode: circumflex_core::policy::PoolMode,
    params: &'a BTreeMap<String, String>,
    plan_computed_at_ms: Time,
    rule: circumflex_core::policy::AssignmentRule,
    now: Time,
    stats: circumflex_core::engine::EngineStats,
    deadline_misses: u64,
    cluster: circumflex_core::policy::ClusterView,
    nodes: &'a [circumflex_core::engine::NodeState],
    flows: Vec<FlowView<'a>>,
    datasets: Vec<DatasetView<'a>>,
    /// The live shared scans as the policy planned them (CIRCUMFLEX's subjob chains; empty for
    /// policies that do not model shared scans).
    scans: &'a [circumflex_core::policy::PlanScan],
    decisions: &'a [AdmissionRecord],
    preemption: PreemptionView<'a>,
    am_admission: AmAdmissionView,
    jobs: Vec<JobStatusView<'a>>,
}

/// The AM gate as the status shows it (`circumflex.am.*`, `engine/admission.rs`): the keys, the
/// gate's figures, and every job whose AM has not started, in gate order, with why.
#[derive(Serialize)]
struct AmAdmissionView {
    config: circumflex_core::config::AmAdmissionConfig,
    gate: circumflex_core::engine::AmGateView,
    waiting: Vec<circumflex_core::engine::AmWait>,
}

/// Preemption as the status shows it: the keys, the tasks asked back and not yet killed, and the
/// last kills the hosts reported, newest first (`docs/preemption.md`). The counters are in `stats`.
#[derive(Serialize)]
struct PreemptionView<'a> {
    config: circumflex_core::config::PreemptionConfig,
    in_flight: u32,
    recent: Vec<&'a circumflex_core::engine::PreemptionRecord>,
}

#[derive(Serialize)]
struct JobStatusView<'a> {
    id: u32,
    external_id: &'a str,
    name: &'a str,
    status: circumflex_core::model::JobStatus,
    phases: &'a [circumflex_core::model::PhaseState; 2],
    submit_ms: Time,
    started_ms: Option<Time>,
    finished_ms: Option<Time>,
    deadline_ms: Option<Time>,
    weight: f64,
    dataset: Option<&'a str>,
    flow_id: Option<&'a str>,
    /// Target slots per phase in the current plan (0 for jobs no longer active).
    target: [u32; 2],
    /// Running tasks per phase (the actual slots).
    running: [u32; 2],
    predicted_completion_ms: Option<Time>,
    admission: Option<AdmissionRecord>,
}

impl<'a> From<&'a circumflex_core::model::JobState> for JobStatusView<'a> {
    fn from(j: &'a circumflex_core::model::JobState) -> Self {
        JobStatusView {
            id: j.id.0,
            external_id: &j.spec.external_id,
            name: &j.spec.name,
            status: j.status,
            phases: &j.phases,
            submit_ms: j.spec.submit_ms,
            started_ms: j.started_ms,
            finished_ms: j.finished_ms,
            deadline_ms: j.spec.deadline_ms,
            weight: j.spec.weight,
            dataset: j.spec.dataset.as_deref(),
            flow_id: j.spec.flow.as_ref().map(|f| f.flow_id.as_str()),
            target: [0, 0],
            running: [j.phases[0].running, j.phases[1].running],
            predicted_completion_ms: None,
            admission: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A handle with `entries` and no locality delays (a task goes to the first free slot).
    fn handle_without_delays(entries: &[(&str, &str)]) -> i64 {
        let mut cfg = BTreeMap::from([
            ("circumflex.locality.node.delay".to_string(), "0".to_string()),
            ("circumflex.locality.rack.delay".to_string(), "0".to_string()),
        ]);
        cfg.extend(entries.iter().map(|&(k, v)| (k.to_string(), v.to_string())));
        create_handle(&cfg).unwrap() as i64
    }

    fn fifo() -> i64 {
        handle_without_delays(&[("circumflex.policy", "fifo")])
    }

    #[test]
    fn handles_close_exactly_once_and_unknown_handles_are_errors() {
        let h = fifo();
        assert!(with_handle(h, |_| Ok(())).is_ok());
        close_handle(h).unwrap();
        let err = close_handle(h).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::UnknownId);
        assert!(with_handle(h, |_| Ok(())).is_err());
        assert!(with_handle(0, |_| Ok(())).is_err());
        assert!(with_handle(-7, |_| Ok(())).is_err());
        assert!(with_handle(12345, |_| Ok(())).is_err(), "a made-up address is never dereferenced");
    }

    #[test]
    fn nodes_join_the_accelerated_pool_through_the_ops_layer() {
        let h = fifo();
        with_handle(h, |e| {
            let node = ops::add_node(e, "h1", "/r", 2, 0)?;
            ops::set_node_accelerated(e, node, true)?;
            assert_eq!(e.with_engine(|eng| Ok(eng.accelerated_map_slots()))?, 2);
            assert_eq!(ops::set_node_accelerated(e, node + 7, true).unwrap_err().kind(), ErrorKind::UnknownId);
            Ok(())
        })
        .unwrap();
        close_handle(h).unwrap();
    }

    #[test]
    fn error_table_maps_every_core_variant() {
        let cases = [
            (Error::config("k", "v", "a"), ErrorKind::Config),
            (Error::job("f", "v", "a"), ErrorKind::InvalidJob),
            (Error::UnknownId { kind: "job", id: 3 }, ErrorKind::UnknownId),
            (Error::Rejected { policy: "p".into(), reason: "r".into() }, ErrorKind::Rejected),
            (Error::Json { what: JSON_CONFIG, message: "m".into() }, ErrorKind::Config),
            (Error::Json { what: JSON_JOB, message: "m".into() }, ErrorKind::InvalidJob),
            (Error::Io { path: "p".into(), message: "m".into() }, ErrorKind::Io),
        ];
        for (err, kind) in cases {
            assert_eq!(FfiError::from(err.clone()).kind(), kind, "{err}");
        }
        assert_eq!(FfiError::Panic("x".into()).kind().java_class(), "io/circumflex/CircumflexInternalException");
    }

    #[test]
    fn node_update_packs_choices_and_truncates_to_whole_choices() {
        let h = fifo();
        with_handle(h, |handle| {
            let node = ops::add_node(handle, "h1", "/r1", 4, 0)?;
            let a = ops::submit_job(handle, r#"{"mapreduce.job.maps":"3","mapreduce.job.reduces":"0"}"#, 0)?;
            let b = ops::submit_job(handle, r#"{"mapreduce.job.maps":"3","mapreduce.job.reduces":"0"}"#, 1)?;
            let mut out = [-1i32; 64];
            let n = ops::node_update(handle, node, 4, 0, 2, &mut out)?;
            let mut per_job = [0, 0];
            for c in out[..n * CHOICE_STRIDE].chunks_exact(CHOICE_STRIDE) {
                assert_eq!((c[1], c[3]), (0, 2), "maps at any locality");
                per_job[if c[0] == a { 0 } else { 1 }] += c[2];
            }
            assert_eq!(per_job, [3, 1], "fifo: the first job's 3 maps, the spare slot to the second ({b})");
            assert!(n >= 2);
            let mut short = [-1i32; 6];
            assert_eq!(ops::node_update(handle, node, 4, 0, 2, &mut short)?, 1);
            assert_eq!(short[4..], [-1, -1], "a partial choice is never written");
            Ok(())
        })
        .unwrap();
        close_handle(h).unwrap();
    }

    #[test]
    fn bad_arguments_name_the_argument() {
        let h = fifo();
        let err = with_handle(h, |handle| ops::set_pending(handle, 0, 7, 1)).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Argument);
        assert!(err.to_string().contains("phase = 7"), "{err}");
        let err = with_handle(h, |handle| ops::submit_job(handle, "{not json", 0)).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidJob);
        close_handle(h).unwrap();
    }

    fn config_json(policy: &str, extra: &str) -> String {
        format!(
            r#"{{"circumflex.policy":"{policy}","circumflex.locality.node.delay":"0","circumflex.locality.rack.delay":"0"{extra}}}"#
        )
    }

    #[test]
    fn reconfigure_swaps_the_policy_and_a_bad_one_keeps_the_old() {
        let h = fifo();
        with_handle(h, |handle| {
            ops::add_node(handle, "h1", "/r1", 4, 0)?;
            ops::submit_job(handle, r#"{"mapreduce.job.maps":"3","mapreduce.job.reduces":"0"}"#, 0)?;
            ops::reconfigure(handle, &config_json("fair", ""), 5)?;
            let status: serde_json::Value = serde_json::from_str(&ops::status_json(handle, 6)?).unwrap();
            assert_eq!(status["policy"], "fair");
            let err = ops::reconfigure(handle, &config_json("no-such-policy", ""), 7).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::Config);
            assert!(err.to_string().contains("no-such-policy"), "{err}");
            let err =
                ops::reconfigure(handle, &config_json("fifo", r#","circumflex.pool.mode":"split""#), 8).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::Config);
            assert!(err.to_string().contains("circumflex.pool.mode"), "{err}");
            let err = ops::reconfigure(handle, "{not json", 9).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::Config);
            let status: serde_json::Value = serde_json::from_str(&ops::status_json(handle, 10)?).unwrap();
            assert_eq!(status["policy"], "fair", "every rejected refresh left the running policy alone");
            Ok(())
        })
        .unwrap();
        close_handle(h).unwrap();
    }

    #[test]
    fn status_shows_targets_running_slots_decisions_flows_and_datasets() {
        let h = fifo();
        with_handle(h, |handle| {
            let node = ops::add_node(handle, "h1", "/r1", 4, 0)?;
            let conf = r#"{"mapreduce.job.maps":"3","mapreduce.job.reduces":"0","mapreduce.job.name":"etl",
                "mapreduce.input.fileinputformat.inputdir":"hdfs://nn/logs",
                "mapreduce.workflow.id":"wf1","mapreduce.workflow.node.name":"a",
                "mapreduce.workflow.adjacency.a":"b"}"#;
            let job = ops::submit_job(handle, conf, 0)?;
            ops::task_started(handle, job, 0, node, 2, 1)?;
            ops::tick(handle, 2)?;
            let status: serde_json::Value = serde_json::from_str(&ops::status_json(handle, 3)?).unwrap();
            assert_eq!(status["policy"], "fifo");
            assert!(status["epoch_ms"].as_i64().unwrap() > 0);
            let j = &status["jobs"][0];
            assert_eq!(j["target"][0], 3, "{j}");
            assert_eq!(j["running"][0], 1, "{j}");
            assert_eq!(j["admission"]["decision"], "accept", "{j}");
            assert_eq!(status["flows"][0]["flow_id"], "wf1", "{status}");
            assert_eq!(status["flows"][0]["adjacency"]["a"][0], "b", "{status}");
            assert_eq!(status["datasets"][0]["jobs"][0], job, "{status}");
            assert_eq!(status["decisions"].as_array().map(Vec::len), Some(1));
            Ok(())
        })
        .unwrap();
        close_handle(h).unwrap();
    }

    /// FLEX leaves predicted completions out of its plans (nothing on the heartbeat path reads
    /// them) and computes them when a view asks: the status JSON, the page and the plan JSON all
    /// show them, as of the plan's snapshot, and a later view of the same plan shows the same.
    #[test]
    fn flex_predictions_are_computed_when_a_view_asks() {
        let h = handle_without_delays(&[("circumflex.policy", "flex"), ("circumflex.pool.mode", "shared")]);
        with_handle(h, |handle| {
            ops::add_node(handle, "h1", "/r1", 4, 0)?;
            let conf = |maps: u32| {
                format!(
                    r#"{{"mapreduce.job.maps":"{maps}","mapreduce.job.reduces":"0","circumflex.job.map.ms":"1000"}}"#
                )
            };
            let big = ops::submit_job(handle, &conf(4), 0)?;
            let small = ops::submit_job(handle, &conf(2), 1)?;
            ops::tick(handle, 2)?;
            assert!(handle.with_engine(|e| Ok(e.plan().completions_pending))?, "the plan carries no predictions");
            // Planned at the second arrival (t = 1): small (2 x 1 s on 2 slots) ends at 1 + 1000; big
            // has 2 slots for 1 s, then 4 slots for its last 2 slot-s of work.
            let status: serde_json::Value = serde_json::from_str(&ops::status_json(handle, 500)?).unwrap();
            let predicted = |status: &serde_json::Value, job: i32| {
                status["jobs"]
                    .as_array()
                    .and_then(|js| js.iter().find(|j| j["id"] == job))
                    .map(|j| j["predicted_completion_ms"].clone())
            };
            assert_eq!(predicted(&status, small), Some(serde_json::json!(1001)), "{status}");
            assert_eq!(predicted(&status, big), Some(serde_json::json!(1501)), "{status}");
            let plan: serde_json::Value = serde_json::from_str(&ops::plan_json(handle)?).unwrap();
            assert_eq!(plan["entries"][0]["predicted_completion_ms"], 1001, "{plan}");
            let again: serde_json::Value = serde_json::from_str(&ops::status_json(handle, 900)?).unwrap();
            assert_eq!(predicted(&again, big), Some(serde_json::json!(1501)), "{again}");
            let page = ops::status_html(handle, 900)?;
            assert!(page.contains("<td>in 0.6 s</td>") && page.contains("<td>in 0.1 s</td>"), "{page}");
            Ok(())
        })
        .unwrap();
        close_handle(h).unwrap();
    }

    /// Shared-scan jobs as `SharedScan.submit` creates them on YARN (the input path as the dataset,
    /// `mapreduce.job.maps` = the job's driver splits, one no-op map when it drives none), through
    /// the ops layer the YARN shim calls: the `circumflex` policy plans them as one subjob chain,
    /// the k-th job owning subjob (d,k); only the ready subjob's job gets map slots; the status
    /// JSON and page show the scan with its cursor and its jobs in chain order.
    #[test]
    fn circumflex_plans_shared_scan_jobs_as_a_chain_and_the_status_shows_the_scan() {
        let h = handle_without_delays(&[("circumflex.policy", "circumflex"), ("circumflex.pool.mode", "shared")]);
        let conf = |id: &str, name: &str, input: &str, maps: u32, reduces: u32| {
            format!(
                r#"{{"mapreduce.job.id":"{id}","mapreduce.job.name":"{name}","mapreduce.job.maps":"{maps}",
                "mapreduce.job.reduces":"{reduces}","mapreduce.input.fileinputformat.inputdir":"{input}",
                "circumflex.job.map.ms":"10000","circumflex.job.reduce.ms":"5000"}}"#
            )
        };
        with_handle(h, |handle| {
            let node = ops::add_node(handle, "h1", "/r1", 4, 0)?;
            // A drives all 8 splits of the dataset (it came first); it has scanned 3 and scans 2.
            let a = ops::submit_job(handle, &conf("job_a", "wordcount", "hdfs://nn/data/bench.txt", 8, 1), 0)?;
            for _ in 0..5 {
                ops::task_started(handle, a, 0, node, 0, 1)?;
            }
            for _ in 0..3 {
                ops::task_finished(handle, a, 0, node, 9_000, true, 9_001)?;
            }
            // B arrives: it rides A's 3 unclaimed splits and drives the 5 A has claimed; C arrives
            // next and rides everything (one no-op map); U reads another dataset.
            let b = ops::submit_job(handle, &conf("job_b", "grep", "hdfs://nn/data/bench.txt", 5, 1), 9_100)?;
            let c = ops::submit_job(handle, &conf("job_c", "sum", "hdfs://nn/data/bench.txt", 1, 2), 9_200)?;
            let u = ops::submit_job(handle, &conf("job_u", "other", "hdfs://nn/data/other", 2, 1), 9_300)?;
            ops::tick(handle, 1_000_000)?;
            let plan: serde_json::Value = serde_json::from_str(&ops::plan_json(handle)?).unwrap();
            let target = |job: i32| {
                plan["entries"].as_array().unwrap().iter().find(|e| e["job"] == job).map(|e| e["target"][0].clone())
            };
            assert!(target(a).unwrap().as_u64().unwrap() > 0, "the ready subjob (d,1) is scanned: {plan}");
            assert_eq!(target(b), Some(0.into()), "(d,2) waits for (d,1): {plan}");
            assert_eq!(target(c), Some(0.into()), "(d,3) waits for (d,2): {plan}");
            let total: u64 = plan["entries"].as_array().unwrap().iter().map(|e| e["target"][0].as_u64().unwrap()).sum();
            assert!(total <= 4, "{plan}");

            let status: serde_json::Value = serde_json::from_str(&ops::status_json(handle, 1_000_000)?).unwrap();
            let scans = status["scans"].as_array().unwrap();
            assert_eq!(scans.len(), 2, "one chain per dataset: {status}");
            let scan = scans.iter().find(|s| s["dataset"] == "hdfs://nn/data/bench.txt").unwrap();
            let chain: Vec<_> = scan["subjobs"].as_array().unwrap().iter().collect();
            let ids: Vec<i64> = chain.iter().map(|s| s["job"].as_i64().unwrap()).collect();
            assert_eq!(ids, vec![i64::from(a), i64::from(b), i64::from(c)], "chain order = attach order: {scan}");
            let field = |k: usize, f: &str| chain[k][f].as_f64().unwrap();
            assert_eq!((field(0, "splits_left"), field(0, "splits_done"), field(0, "concurrency")), (5.0, 3.0, 3.0));
            assert_eq!((field(1, "splits_left"), field(1, "splits_done"), field(1, "concurrency")), (5.0, 0.0, 2.0));
            assert_eq!((field(2, "splits_left"), field(2, "concurrency")), (1.0, 1.0));
            // r_k nests: each job still has to see the older jobs' remaining subjobs and its own.
            for k in 0..3 {
                let before = if k == 0 { 0.0 } else { field(k - 1, "remaining_ms") };
                assert!((field(k, "remaining_ms") - before - field(k, "work_ms")).abs() < 1e-6, "{scan}");
                assert!(field(k, "work_ms") > 0.0, "{scan}");
            }
            let other = scans.iter().find(|s| s["dataset"] == "hdfs://nn/data/other").unwrap();
            assert_eq!(other["subjobs"][0]["job"], u, "{other}");

            let html = ops::status_html(handle, 1_000_000)?;
            assert!(html.contains("id=\"circumflex-scans\""), "{html}");
            assert!(
                html.contains("<td>hdfs://nn/data/bench.txt</td><td>job 0 (job_a): 3 of 8 splits scanned</td>"),
                "{html}"
            );
            assert!(html.contains("1 (job_b): 5 left"), "{html}");

            // A's maps end (only its reduce is left): B's subjob is the ready one and gets the slots.
            for _ in 0..3 {
                ops::task_started(handle, a, 0, node, 0, 1_000_001)?;
            }
            for _ in 0..5 {
                ops::task_finished(handle, a, 0, node, 9_000, true, 1_010_000)?;
            }
            ops::tick(handle, 2_000_000)?;
            let status: serde_json::Value = serde_json::from_str(&ops::status_json(handle, 2_000_000)?).unwrap();
            let scan = status["scans"]
                .as_array()
                .unwrap()
                .iter()
                .find(|s| s["dataset"] == "hdfs://nn/data/bench.txt")
                .unwrap();
            let ids: Vec<i64> =
                scan["subjobs"].as_array().unwrap().iter().map(|s| s["job"].as_i64().unwrap()).collect();
            assert_eq!(ids, vec![i64::from(b), i64::from(c)], "A left the chain with its maps done: {scan}");
            let plan: serde_json::Value = serde_json::from_str(&ops::plan_json(handle)?).unwrap();
            let b_target =
                plan["entries"].as_array().unwrap().iter().find(|e| e["job"] == b).unwrap()["target"][0].clone();
            assert!(b_target.as_u64().unwrap() > 0, "{plan}");
            Ok(())
        })
        .unwrap();
        close_handle(h).unwrap();
    }

    /// The engine retires ended jobs; the status still lists the recent ones, after the live ones.
    #[test]
    fn status_lists_recently_ended_jobs_after_live_ones() {
        let h = fifo();
        with_handle(h, |handle| {
            let done = ops::submit_job(handle, r#"{"mapreduce.job.maps":"1","mapreduce.job.name":"old"}"#, 0)?;
            let live = ops::submit_job(handle, r#"{"mapreduce.job.maps":"1","mapreduce.job.name":"new"}"#, 1)?;
            ops::finish_job(handle, done, 40)?;
            let status: serde_json::Value = serde_json::from_str(&ops::status_json(handle, 50)?).unwrap();
            let jobs = status["jobs"].as_array().unwrap();
            assert_eq!(jobs.len(), 2, "{status}");
            assert_eq!((jobs[0]["id"].as_i64(), jobs[0]["status"].as_str()), (Some(live.into()), Some("active")));
            assert_eq!((jobs[1]["id"].as_i64(), jobs[1]["status"].as_str()), (Some(done.into()), Some("finished")));
            assert_eq!(jobs[1]["finished_ms"], 40, "{status}");
            assert_eq!(jobs[1]["admission"]["decision"], "accept", "{status}");
            let html = ops::status_html(handle, 50)?;
            assert!(html.contains(">old<") && html.contains(">new<"), "{html}");
            Ok(())
        })
        .unwrap();
        close_handle(h).unwrap();
    }

    #[test]
    fn counters_move_and_count_deadline_misses() {
        let h = fifo();
        with_handle(h, |handle| {
            let node = ops::add_node(handle, "h1", "/r1", 4, 0)?;
            let mut out = [0i64; COUNTER_NAMES.len()];
            let late = ops::submit_job(handle, r#"{"mapreduce.job.maps":"1","circumflex.job.deadline.ms":"100"}"#, 0)?;
            let on_time =
                ops::submit_job(handle, r#"{"mapreduce.job.maps":"1","circumflex.job.deadline.ms":"900"}"#, 0)?;
            ops::node_update(handle, node, 4, 0, 1, &mut [0i32; 16])?;
            ops::finish_job(handle, late, 500)?;
            ops::finish_job(handle, on_time, 500)?;
            assert_eq!(ops::counters(handle, &mut out)?, COUNTER_NAMES.len());
            let get = |name: &str| out[COUNTER_NAMES.iter().position(|n| *n == name).unwrap()];
            assert!(get("plans") >= 2 && get("total_plan_ns") > 0, "{out:?}");
            assert_eq!((get("node_updates"), get("admitted"), get("rejected")), (1, 2, 0), "{out:?}");
            assert_eq!((get("finished"), get("deadline_misses"), get("active_jobs")), (2, 1, 0), "{out:?}");
            let mut short = [0i64; 2];
            assert_eq!(ops::counters(handle, &mut short)?, 2);
            Ok(())
        })
        .unwrap();
        close_handle(h).unwrap();
    }

    #[cfg(feature = "test-policies")]
    #[test]
    fn a_panic_poisons_only_its_engine() {
        install_panic_hook();
        let cfg = BTreeMap::from([("circumflex.policy".to_string(), "test-panic".to_string())]);
        let h = create_handle(&cfg).unwrap() as i64;
        let err = with_handle(h, |handle| ops::submit_job(handle, r#"{"mapreduce.job.maps":"1"}"#, 0)).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Internal);
        assert!(err.to_string().contains("deliberate panic"), "{err}");
        assert!(err.to_string().contains("backtrace"), "{err}");
        let again = with_handle(h, |handle| ops::tick(handle, 1)).unwrap_err();
        assert!(again.to_string().contains("unusable after an earlier panic"), "{again}");
        assert!(again.to_string().contains("deliberate panic"), "{again}");
        close_handle(h).unwrap();
        let other = fifo();
        assert!(with_handle(other, |handle| ops::tick(handle, 1)).is_ok());
        close_handle(other).unwrap();
    }

    #[test]
    fn ids_past_the_java_int_range_are_named_errors() {
        assert_eq!(to_jint("job id", 7u32).unwrap(), 7);
        let err = to_jint("job id", u32::MAX).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Internal);
        assert!(err.to_string().contains("job id 4294967295") && err.to_string().contains("2147483647"), "{err}");
    }
}
