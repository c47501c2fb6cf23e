//! Batched and primitive-only operations shared by the JNI exports and the C ABI: what one
//! heartbeat or one submission sends across the boundary in one call instead of one call per event.
//!
//! - [`tasks_started`]: every container or task a host started in one heartbeat, as packed `i32`
//!   records of [`STARTED_STRIDE`] (job, phase, node, locality) and one `now`.
//! - [`tasks_finished`]: every task end a host saw in one heartbeat, as packed `i64` records of
//!   [`FINISHED_STRIDE`] (job, phase, node, duration ms, success 0/1, finish time).
//! - [`submit_job_with`]: a submission with the job's initial reduce readiness and pending counts
//!   (the YARN shim used to follow `submitJob` with three more calls).
//! - [`set_pending_phases`]: both phases' pending counts of a job in one call.
//! - [`plan_order`]: the plan's job ids in priority order into a caller-owned array, so MRv1's
//!   `getJobs` no longer scans the plan's JSON text (which also matched flow nodes' `"job"` keys).
//! - [`preemptions`]: the engine's preemption decisions (`docs/preemption.md`), packed as
//!   [`PREEMPTION_STRIDE`] `i32`s each (victim, phase, count, beneficiary) into a caller-owned array,
//!   from the host's timer; [`tasks_preempted`]: the kills the host carried out, as packed `i64`
//!   records of [`PREEMPTED_STRIDE`] (job, phase, node, ran ms, kill time), in one call.
//! - [`am_admissions`]: which waiting AMs may start now (`Engine::am_admissions`, the AM gate of
//!   `engine/admission.rs`), job ids in plan order into a caller-owned array, once per heartbeat batch;
//!   [`am_events`]: AM requests, starts, registrations and ends as packed `i64` records of
//!   [`AM_EVENT_STRIDE`] (kind, job, slots, time), in one call.
//!
//! Every record is checked before any is applied, and the error names the record (`records[3].phase
//! = 7: expected ...`), so a malformed batch changes nothing. Then the records are applied in order
//! under one engine lock.
//!
//! **Decision: a record whose job or node the engine no longer knows is skipped, not an error.** The
//! per-event calls raise an unknown-id error there, which both shims ignore (a job completes on its
//! last task while Hadoop still reports its cleanup); failing the whole batch for it would drop the
//! other records. The functions return how many records were applied, so a host (and a test) can see
//! the skips. Any other engine error stops the batch at that record and is returned; the records
//! before it stay applied (the same state the per-event calls would have left).

use super::{bounded_count_arg, id_arg, locality_arg, phase_arg, time_arg, EngineHandle, FfiError};
use circumflex_core::error::Error;
use circumflex_core::model::{JobId, NodeId, Phase, Time};

/// `i32`s per record of [`tasks_started`]: job, phase code, node, locality code.
pub const STARTED_STRIDE: usize = 4;
/// `i64`s per record of [`tasks_finished`]: job, phase code, node, duration ms, success (0 or 1),
/// finish time ms.
pub const FINISHED_STRIDE: usize = 6;

/// `i32`s per decision of [`preemptions`]: victim job, phase code, count, beneficiary job.
pub const PREEMPTION_STRIDE: usize = 4;
/// `i64`s per record of [`tasks_preempted`]: job, phase code, node, ran ms, kill time ms.
pub const PREEMPTED_STRIDE: usize = 5;
/// `i64`s per record of [`am_events`]: kind ([`AM_REQUESTED`] ..= [`AM_FINISHED`]), job, AM slots
/// (0: as requested, or `circumflex.am.slots`), time ms.
pub const AM_EVENT_STRIDE: usize = 4;
/// [`am_events`] kind: the job's AM asks for a container (`Engine::am_requested`).
pub const AM_REQUESTED: i64 = 0;
/// [`am_events`] kind: the job's AM container runs (`Engine::am_started`).
pub const AM_STARTED: i64 = 1;
/// [`am_events`] kind: the job's AM asks for tasks (`Engine::am_registered`).
pub const AM_REGISTERED: i64 = 2;
/// [`am_events`] kind: the job's AM container ended (`Engine::am_finished`).
pub const AM_FINISHED: i64 = 3;

/// The records of a packed array: `count` records of `stride` values, refused if the array is short.
fn records<T>(values: &[T], count: i32, stride: usize, what: &str) -> Result<usize, FfiError> {
    let count = usize::try_from(count)
        .map_err(|_| FfiError::Argument(format!("{what} count = {count}: expected a count >= 0")))?;
    let needed = count.saturating_mul(stride);
    if needed > values.len() {
        return Err(FfiError::Argument(format!(
            "{what} count = {count}: the array holds {} values, {stride} per record",
            values.len()
        )));
    }
    Ok(count)
}

/// Names the record an argument error came from.
fn in_record(i: usize, err: FfiError) -> FfiError {
    match err {
        FfiError::Argument(message) => FfiError::Argument(format!("records[{i}].{message}")),
        other => other,
    }
}

/// Applies `f`; an unknown job or node is a skip (`Ok(false)`), anything else passes through.
fn applied(result: circumflex_core::error::Result<()>) -> Result<bool, FfiError> {
    match result {
        Ok(()) => Ok(true),
        Err(Error::UnknownId { .. }) => Ok(false),
        Err(other) => Err(other.into()),
    }
}

/// The first `count` records of `packed` ([`STARTED_STRIDE`] each) started at `now`. Returns how
/// many were applied (the rest named a job or node the engine no longer knows).
pub fn tasks_started(h: &EngineHandle, packed: &[i32], count: i32, now: Time) -> Result<usize, FfiError> {
    let count = records(packed, count, STARTED_STRIDE, "started")?;
    let now = time_arg("now", now)?;
    let packed = &packed[..count * STARTED_STRIDE];
    for (i, r) in packed.chunks_exact(STARTED_STRIDE).enumerate() {
        (|| {
            id_arg("job", r[0])?;
            phase_arg(r[1])?;
            id_arg("node", r[2])?;
            locality_arg(r[3])
        })()
        .map_err(|e| in_record(i, e))?;
    }
    h.with_engine(|e| {
        let mut done = 0;
        for r in packed.chunks_exact(STARTED_STRIDE) {
            let (job, phase, node, locality) =
                (JobId(id_arg("job", r[0])?), phase_arg(r[1])?, NodeId(id_arg("node", r[2])?), locality_arg(r[3])?);
            if applied(e.task_started(job, phase, node, locality, now))? {
                done += 1;
            }
        }
        Ok(done)
    })
}

/// One checked record of [`tasks_finished`].
struct Finished {
    job: JobId,
    phase: Phase,
    node: NodeId,
    duration_ms: Time,
    success: bool,
    at: Time,
}

fn finished_record(r: &[i64]) -> Result<Finished, FfiError> {
    let int = |name: &str, v: i64| {
        i32::try_from(v).map_err(|_| FfiError::Argument(format!("{name} = {v}: expected a 32-bit value")))
    };
    let success = match r[4] {
        0 => false,
        1 => true,
        v => return Err(FfiError::Argument(format!("success = {v}: expected 0 or 1"))),
    };
    Ok(Finished {
        job: JobId(id_arg("job", int("job", r[0])?)?),
        phase: phase_arg(int("phase", r[1])?)?,
        node: NodeId(id_arg("node", int("node", r[2])?)?),
        duration_ms: time_arg("durationMs", r[3])?,
        success,
        at: time_arg("now", r[5])?,
    })
}

/// The first `count` records of `packed` ([`FINISHED_STRIDE`] each) ended. Returns how many were
/// applied (the rest named a job or node the engine no longer knows).
pub fn tasks_finished(h: &EngineHandle, packed: &[i64], count: i32) -> Result<usize, FfiError> {
    let count = records(packed, count, FINISHED_STRIDE, "finished")?;
    let packed = &packed[..count * FINISHED_STRIDE];
    for (i, r) in packed.chunks_exact(FINISHED_STRIDE).enumerate() {
        finished_record(r).map_err(|e| in_record(i, e))?;
    }
    h.with_engine(|e| {
        let mut done = 0;
        for r in packed.chunks_exact(FINISHED_STRIDE) {
            let f = finished_record(r)?;
            if applied(e.task_finished(f.job, f.phase, f.node, f.duration_ms, f.success, f.at))? {
                done += 1;
            }
        }
        Ok(done)
    })
}

/// Sets both phases' pending task counts of `job`.
pub fn set_pending_phases(h: &EngineHandle, job: i32, pending_map: i32, pending_reduce: i32) -> Result<(), FfiError> {
    let job = JobId(id_arg("job", job)?);
    let map = bounded_count_arg("pendingMap", pending_map, circumflex_core::model::MAX_TASKS)?;
    let reduce = bounded_count_arg("pendingReduce", pending_reduce, circumflex_core::model::MAX_TASKS)?;
    h.with_engine(|e| {
        e.set_pending(job, Phase::Map, map)?;
        Ok(e.set_pending(job, Phase::Reduce, reduce)?)
    })
}

/// Submits a job (as [`super::ops::submit_job`]: a rejection is an error carrying the policy's
/// reason) and sets its reduce readiness and pending counts, in one call.
pub fn submit_job_with(
    h: &EngineHandle,
    conf_json: &str,
    now: Time,
    reduces_ready: bool,
    pending_map: i32,
    pending_reduce: i32,
) -> Result<i32, FfiError> {
    // Checked before the submission, so a bad count cannot leave a submitted job behind.
    bounded_count_arg("pendingMap", pending_map, circumflex_core::model::MAX_TASKS)?;
    bounded_count_arg("pendingReduce", pending_reduce, circumflex_core::model::MAX_TASKS)?;
    let job = super::ops::submit_job(h, conf_json, now)?;
    let id = JobId(id_arg("job", job)?);
    h.with_engine(|e| Ok(e.set_reduces_ready(id, reduces_ready)?))?;
    set_pending_phases(h, job, pending_map, pending_reduce)?;
    Ok(job)
}

/// Writes the current plan's job ids in priority order into `out` (as many as fit) and returns how
/// many the plan has; a caller whose array was too short grows it and calls again.
pub fn plan_order(h: &EngineHandle, out: &mut [i32]) -> Result<usize, FfiError> {
    h.with_engine(|e| {
        let entries = &e.plan().entries;
        for (slot, entry) in out.iter_mut().zip(entries) {
            *slot = i32::try_from(entry.job.0).unwrap_or(i32::MAX);
        }
        Ok(entries.len())
    })
}

/// Asks the engine for preemption decisions at `now` (`Engine::preemptions`: call from the host's
/// timer after the tick, never from a heartbeat) and writes as many whole decisions as fit into `out`
/// ([`PREEMPTION_STRIDE`] values each: victim, phase code, count, beneficiary). Returns how many it
/// wrote. Decisions that did not fit are kept on the handle and written first by the next call, so a
/// short array loses nothing: a host whose array came back full calls again. Empty while preemption
/// is off.
pub fn preemptions(h: &EngineHandle, now: Time, out: &mut [i32]) -> Result<usize, FfiError> {
    let now = time_arg("now", now)?;
    let mut backlog = h.preempt_backlog.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    h.with_engine(|e| {
        for d in e.preemptions(now) {
            backlog.extend_from_slice(&[
                super::to_jint("victim job id", d.victim.0)?,
                super::to_jint("phase index", d.phase.idx())?,
                i32::try_from(d.count).unwrap_or(i32::MAX),
                super::to_jint("beneficiary job id", d.beneficiary.0)?,
            ]);
        }
        Ok(())
    })?;
    let fit = (out.len() / PREEMPTION_STRIDE).min(backlog.len() / PREEMPTION_STRIDE);
    let values = fit * PREEMPTION_STRIDE;
    out[..values].copy_from_slice(&backlog[..values]);
    backlog.drain(..values);
    Ok(fit)
}

/// One checked record of [`tasks_preempted`].
struct Preempted {
    job: JobId,
    phase: Phase,
    node: NodeId,
    ran_ms: Time,
    at: Time,
}

fn preempted_record(r: &[i64]) -> Result<Preempted, FfiError> {
    let int = |name: &str, v: i64| {
        i32::try_from(v).map_err(|_| FfiError::Argument(format!("{name} = {v}: expected a 32-bit value")))
    };
    Ok(Preempted {
        job: JobId(id_arg("job", int("job", r[0])?)?),
        phase: phase_arg(int("phase", r[1])?)?,
        node: NodeId(id_arg("node", int("node", r[2])?)?),
        ran_ms: time_arg("ranMs", r[3])?,
        at: time_arg("now", r[4])?,
    })
}

/// The first `count` records of `packed` ([`PREEMPTED_STRIDE`] each) are tasks the host killed for a
/// preemption (`Engine::task_preempted`, reported instead of a task end: the task is re-queued, its
/// work counted as lost, the freed slot earmarked for the decision's beneficiary). Returns how many
/// were applied; records naming a job or node the engine no longer knows are skipped, and a malformed
/// record is refused by name before any is applied, as for [`tasks_finished`].
pub fn tasks_preempted(h: &EngineHandle, packed: &[i64], count: i32) -> Result<usize, FfiError> {
    let count = records(packed, count, PREEMPTED_STRIDE, "preempted")?;
    let packed = &packed[..count * PREEMPTED_STRIDE];
    for (i, r) in packed.chunks_exact(PREEMPTED_STRIDE).enumerate() {
        preempted_record(r).map_err(|e| in_record(i, e))?;
    }
    h.with_engine(|e| {
        let mut done = 0;
        for r in packed.chunks_exact(PREEMPTED_STRIDE) {
            let p = preempted_record(r)?;
            if applied(e.task_preempted(p.job, p.phase, p.node, p.ran_ms, p.at))? {
                done += 1;
            }
        }
        Ok(done)
    })
}

/// Which waiting AMs may start at `now` (`Engine::am_admissions`): writes their job ids in plan order
/// into `out` (as many as fit) and returns how many there are; a caller whose array was too short
/// grows it and calls again (the admissions stand until the host reports the AMs started). Empty
/// while the AM gate is off.
pub fn am_admissions(h: &EngineHandle, now: Time, out: &mut [i32]) -> Result<usize, FfiError> {
    let now = time_arg("now", now)?;
    h.with_engine(|e| {
        let admitted = e.am_admissions(now);
        for (slot, job) in out.iter_mut().zip(admitted) {
            *slot = super::to_jint("job id", job.0)?;
        }
        Ok(admitted.len())
    })
}

/// One checked record of [`am_events`].
struct AmEvent {
    kind: i64,
    job: JobId,
    slots: u32,
    at: Time,
}

fn am_event_record(r: &[i64]) -> Result<AmEvent, FfiError> {
    if !(AM_REQUESTED..=AM_FINISHED).contains(&r[0]) {
        return Err(FfiError::Argument(format!(
            "kind = {}: expected 0 (requested), 1 (started), 2 (registered) or 3 (finished)",
            r[0]
        )));
    }
    let job =
        i32::try_from(r[1]).map_err(|_| FfiError::Argument(format!("job = {}: expected a 32-bit value", r[1])))?;
    let slots =
        i32::try_from(r[2]).map_err(|_| FfiError::Argument(format!("slots = {}: expected a 32-bit value", r[2])))?;
    Ok(AmEvent {
        kind: r[0],
        job: JobId(id_arg("job", job)?),
        slots: bounded_count_arg("slots", slots, super::MAX_NODE_SLOTS)?,
        at: time_arg("now", r[3])?,
    })
}

/// The first `count` records of `packed` ([`AM_EVENT_STRIDE`] each) are AM events, applied in order
/// (`Engine::am_requested`, `am_started`, `am_registered`, `am_finished`; no-ops while the gate is off).
/// Returns how many were applied; records naming a job the engine no longer knows are skipped, and a
/// malformed record is refused by name before any is applied, as for [`tasks_finished`].
pub fn am_events(h: &EngineHandle, packed: &[i64], count: i32) -> Result<usize, FfiError> {
    let count = records(packed, count, AM_EVENT_STRIDE, "AM event")?;
    let packed = &packed[..count * AM_EVENT_STRIDE];
    for (i, r) in packed.chunks_exact(AM_EVENT_STRIDE).enumerate() {
        am_event_record(r).map_err(|e| in_record(i, e))?;
    }
    h.with_engine(|e| {
        let mut done = 0;
        for r in packed.chunks_exact(AM_EVENT_STRIDE) {
            let a = am_event_record(r)?;
            let result = match a.kind {
                AM_REQUESTED => e.am_requested(a.job, a.slots, a.at),
                AM_STARTED => e.am_started(a.job, a.slots, a.at),
                AM_REGISTERED => e.am_registered(a.job, a.at),
                _ => e.am_finished(a.job, a.at),
            };
            if applied(result)? {
                done += 1;
            }
        }
        Ok(done)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ffi::{close_handle, create_handle, ops, with_handle, ErrorKind, COUNTER_NAMES};
    use std::collections::BTreeMap;

    fn handle(policy: &str) -> i64 {
        let mut config = BTreeMap::new();
        config.insert("circumflex.policy".to_string(), policy.to_string());
        config.insert("circumflex.pool.mode".to_string(), "shared".to_string());
        create_handle(&config).map(|a| a as i64).expect("engine")
    }

    fn status(raw: i64) -> serde_json::Value {
        let json = with_handle(raw, |h| ops::status_json(h, 10)).expect("status");
        serde_json::from_str(&json).expect("json")
    }

    #[test]
    fn a_batch_of_starts_and_ends_matches_the_per_event_calls() {
        let (batched, single) = (handle("fair"), handle("fair"));
        for raw in [batched, single] {
            with_handle(raw, |h| {
                ops::add_node(h, "n0", "/r", 4, 0)?;
                let job = submit_job_with(h, r#"{"mapreduce.job.maps":"3"}"#, 0, true, 3, 0)?;
                assert_eq!(job, 0);
                Ok(())
            })
            .expect("set-up");
        }
        with_handle(batched, |h| {
            assert_eq!(tasks_started(h, &[0, 0, 0, 0, 0, 0, 0, 2, 9, 9, 9, 9], 2, 5)?, 2, "count bounds the records");
            assert_eq!(tasks_finished(h, &[0, 0, 0, 4, 1, 9], 1)?, 1);
            Ok(())
        })
        .expect("batched");
        with_handle(single, |h| {
            ops::task_started(h, 0, 0, 0, 0, 5)?;
            ops::task_started(h, 0, 0, 0, 2, 5)?;
            ops::task_finished(h, 0, 0, 0, 4, true, 9)
        })
        .expect("single");
        assert_eq!(status(batched)["jobs"], status(single)["jobs"]);
        assert_eq!(status(batched)["nodes"], status(single)["nodes"]);
        for raw in [batched, single] {
            close_handle(raw).expect("close");
        }
    }

    #[test]
    fn unknown_ids_are_skipped_and_bad_records_change_nothing() {
        let raw = handle("fifo");
        with_handle(raw, |h| {
            ops::add_node(h, "n0", "/r", 4, 0)?;
            submit_job_with(h, r#"{"mapreduce.job.maps":"2"}"#, 0, true, 2, 0)?;
            assert_eq!(tasks_started(h, &[0, 0, 0, 0, 7, 0, 0, 0, 0, 0, 5, 0], 3, 1)?, 1, "job 7, node 5 skipped");
            let err = tasks_started(h, &[0, 0, 0, 0, 0, 9, 0, 0], 2, 1).expect_err("bad phase");
            assert_eq!(err.kind(), ErrorKind::Argument);
            assert!(err.to_string().contains("records[1].phase = 9"), "{err}");
            let err = tasks_finished(h, &[0, 0, 0, 1, 2, 3], 1).expect_err("bad success");
            assert!(err.to_string().contains("records[0].success = 2"), "{err}");
            let err = tasks_started(h, &[0, 0, 0], 1, 1).expect_err("short array");
            assert!(err.to_string().contains("holds 3 values"), "{err}");
            let err = tasks_finished(h, &[], -1).expect_err("negative count");
            assert!(err.to_string().contains("finished count = -1"), "{err}");
            let err = tasks_started(h, &[0; 8], i32::MAX, 1).expect_err("absurd count");
            assert_eq!(err.kind(), ErrorKind::Argument);
            let err = tasks_started(h, &[0, 0, 0, 0], 1, -5).expect_err("negative time");
            assert!(err.to_string().contains("now = -5"), "{err}");
            assert_eq!(tasks_finished(h, &[0, 0, 0, 1, 1, 3, 7, 0, 0, 1, 1, 3], 2)?, 1, "job 7 skipped");
            Ok(())
        })
        .expect("batches");
        let jobs = &status(raw)["jobs"];
        assert_eq!(jobs[0]["running"][0], 0, "the one started task ended, the refused batch started none: {jobs}");
        close_handle(raw).expect("close");
    }

    #[test]
    fn plan_order_lists_the_plan_and_reports_its_length() {
        let raw = handle("fifo");
        with_handle(raw, |h| {
            ops::add_node(h, "n0", "/r", 4, 0)?;
            for t in 0..3 {
                submit_job_with(h, r#"{"mapreduce.job.maps":"1"}"#, t, true, 1, 0)?;
            }
            ops::tick(h, 100)?;
            let mut out = [-1; 2];
            assert_eq!(plan_order(h, &mut out)?, 3, "the whole plan's length");
            assert_eq!(out, [0, 1], "as many ids as fit, in priority order");
            let mut all = [-1; 4];
            assert_eq!(plan_order(h, &mut all)?, 3);
            assert_eq!(all, [0, 1, 2, -1]);
            let err = submit_job_with(h, r#"{"mapreduce.job.maps":"1"}"#, 5, true, -1, 0).expect_err("bad count");
            assert!(err.to_string().contains("pendingMap = -1"), "{err}");
            assert_eq!(plan_order(h, &mut all)?, 3, "a refused submission leaves no job behind");
            Ok(())
        })
        .expect("plan order");
        close_handle(raw).expect("close");
    }

    fn preempting(raw_policy: &str) -> i64 {
        let config = BTreeMap::from([
            ("circumflex.policy".to_string(), raw_policy.to_string()),
            ("circumflex.pool.mode".to_string(), "shared".to_string()),
            ("circumflex.preemption.enabled".to_string(), "true".to_string()),
            ("circumflex.preemption.delay.ms".to_string(), "1000".to_string()),
            ("circumflex.preemption.grace.ms".to_string(), "1000".to_string()),
            ("circumflex.preemption.max.fraction".to_string(), "1".to_string()),
        ]);
        create_handle(&config).map(|a| a as i64).expect("engine")
    }

    /// A long job (10-minute maps) holds all 4 slots of node 0 since t = 0; a short job arrives at 1 s.
    fn long_job_holds_the_node(h: &EngineHandle) -> Result<(), FfiError> {
        ops::add_node(h, "n0", "/r", 4, 0)?;
        submit_job_with(h, r#"{"mapreduce.job.maps":"40","circumflex.job.map.ms":"600000"}"#, 0, true, 40, 0)?;
        assert_eq!(tasks_started(h, &[0, 0, 0, 0].repeat(4), 4, 0)?, 4);
        submit_job_with(h, r#"{"mapreduce.job.maps":"2","circumflex.job.map.ms":"5000"}"#, 1_000, true, 2, 0)?;
        ops::tick(h, 1_000)?;
        Ok(())
    }

    #[test]
    fn preemptions_cross_packed_and_a_short_array_loses_none() {
        let raw = preempting("fair");
        with_handle(raw, |h| {
            long_job_holds_the_node(h)?;
            let mut out = [-1i32; 8];
            assert_eq!(preemptions(h, 1_000, &mut out)?, 0, "starved, not yet for the delay");
            let mut short = [-1i32; 5];
            assert_eq!(preemptions(h, 2_500, &mut short)?, 1, "one whole decision fits");
            assert_eq!(short, [0, 0, 2, 1, -1], "victim 0, map, 2 tasks, for job 1; no partial decision");
            assert_eq!(preemptions(h, 2_600, &mut out)?, 0, "in flight: not decided twice");
            let mut counters = [0i64; COUNTER_NAMES.len()];
            ops::counters(h, &mut counters)?;
            let get = |name: &str| counters[COUNTER_NAMES.iter().position(|n| *n == name).expect(name)];
            assert_eq!((get("preemptions"), get("preemptions_in_flight")), (2, 2));
            // The host kills both after the grace: re-queued, work lost, the slots earmarked for job 1.
            assert_eq!(tasks_preempted(h, &[0, 0, 0, 3_500, 3_500, 0, 0, 0, 3_500, 3_500, 9, 0, 0, 1, 3_500], 3)?, 2);
            let mut choices = [-1i32; 16];
            let n = ops::node_update(h, 0, 2, 0, 3_600, &mut choices)?;
            assert!(n >= 1 && choices[0] == 1, "the freed slots go to the beneficiary first: {choices:?}");
            ops::counters(h, &mut counters)?;
            let get = |name: &str| counters[COUNTER_NAMES.iter().position(|n| *n == name).expect(name)];
            assert_eq!((get("preempted_tasks"), get("preempted_lost_ms"), get("preemptions_in_flight")), (2, 7_000, 0));
            Ok(())
        })
        .expect("preemption");
        let s = status(raw);
        assert_eq!(s["preemption"]["in_flight"], 0, "{s}");
        assert_eq!(s["preemption"]["config"]["grace_ms"], 1000, "{s}");
        let recent = &s["preemption"]["recent"];
        assert_eq!(recent.as_array().map(Vec::len), Some(2), "{s}");
        assert_eq!((recent[0]["victim"].as_i64(), recent[0]["beneficiary"].as_i64()), (Some(0), Some(1)), "{s}");
        assert_eq!((recent[0]["phase"].as_str(), recent[0]["lost_ms"].as_i64()), (Some("map"), Some(3_500)), "{s}");
        assert_eq!(s["stats"]["preempted_lost_ms"], 7_000, "{s}");
        let html = with_handle(raw, |h| ops::status_html(h, 4_000)).expect("page");
        assert!(html.contains("id=\"circumflex-preemptions\""), "{html}");
        close_handle(raw).expect("close");
    }

    #[test]
    fn bad_preemption_records_change_nothing_and_off_decides_nothing() {
        let raw = preempting("fair");
        with_handle(raw, |h| {
            long_job_holds_the_node(h)?;
            let err = tasks_preempted(h, &[0, 0, 0, 10, 20, 0, 3, 0, 10, 20], 2).expect_err("bad phase");
            assert_eq!(err.kind(), ErrorKind::Argument);
            assert!(err.to_string().contains("records[1].phase = 3"), "{err}");
            let err = tasks_preempted(h, &[0, 0, 0, -1, 20], 1).expect_err("negative ran");
            assert!(err.to_string().contains("records[0].ranMs = -1"), "{err}");
            let err = tasks_preempted(h, &[0, 0, 0], 1).expect_err("short array");
            assert!(err.to_string().contains("holds 3 values"), "{err}");
            let err = preemptions(h, -1, &mut [0; 4]).expect_err("negative now");
            assert!(err.to_string().contains("now = -1"), "{err}");
            Ok(())
        })
        .expect("refusals");
        assert_eq!(status(raw)["jobs"][0]["running"][0], 4, "nothing was applied");
        close_handle(raw).expect("close");
        let off = handle("fair");
        with_handle(off, |h| {
            long_job_holds_the_node(h)?;
            let mut out = [-1i32; 8];
            for t in [1_000, 5_000, 60_000] {
                assert_eq!(preemptions(h, t, &mut out)?, 0);
            }
            Ok(())
        })
        .expect("off");
        close_handle(off).expect("close");
    }

    fn gated() -> i64 {
        let config = BTreeMap::from([
            ("circumflex.policy".to_string(), "fifo".to_string()),
            ("circumflex.pool.mode".to_string(), "shared".to_string()),
            ("circumflex.am.admission.enabled".to_string(), "true".to_string()),
            ("circumflex.am.max.share".to_string(), "0.25".to_string()),
        ]);
        create_handle(&config).map(|a| a as i64).expect("engine")
    }

    #[test]
    fn the_am_gate_crosses_in_batches_and_shows_who_waits_and_why() {
        let raw = gated();
        with_handle(raw, |h| {
            let node = ops::add_node(h, "n0", "/r", 8, 0)?;
            for k in 0..3 {
                let job =
                    submit_job_with(h, r#"{"mapreduce.job.maps":"4","mapreduce.job.reduces":"0"}"#, k, true, 0, 0)?;
                assert_eq!(job, k as i32);
            }
            ops::tick(h, 3)?;
            // AMs of 2 slots: the first is admitted alone (share 2 of 8), the others wait.
            assert_eq!(am_events(h, &[AM_REQUESTED, 0, 2, 3, AM_REQUESTED, 1, 2, 3, AM_REQUESTED, 2, 2, 3], 3)?, 3);
            let mut out = [-1i32; 1];
            assert_eq!(am_admissions(h, 4, &mut out)?, 1);
            assert_eq!(out, [0]);
            let mut none = [0i32; 4];
            assert_eq!(ops::node_update(h, node, 8, 0, 4, &mut none)?, 0, "no task before an AM registers");
            assert_eq!(am_events(h, &[AM_STARTED, 0, 2, 5, AM_STARTED, 99, 2, 5], 2)?, 1, "job 99 skipped");
            ops::set_node_capacity(h, node, 6, 0)?;
            ops::set_pending(h, 0, 0, 4)?;
            let mut choices = [0i32; 8];
            assert_eq!(ops::node_update(h, node, 6, 0, 6, &mut choices)?, 1);
            assert_eq!(&choices[..3], &[0, 0, 4], "job 0's four maps once its AM asked");
            Ok(())
        })
        .expect("gate");
        let s = status(raw);
        let waiting = s["am_admission"]["waiting"].as_array().expect("waiting").clone();
        assert_eq!(waiting.len(), 2, "{s}");
        assert_eq!((waiting[0]["job"].as_i64(), waiting[0]["reason"].as_str()), (Some(1), Some("over_share")), "{s}");
        assert_eq!(waiting[1]["reason"], "ranked_behind", "{s}");
        assert_eq!(s["am_admission"]["gate"]["held"], 2, "{s}");
        let html = with_handle(raw, |h| ops::status_html(h, 10)).expect("page");
        assert!(html.contains("id=\"circumflex-am-waiting\"") && html.contains("over the AM share"), "{html}");
        with_handle(raw, |h| {
            let err = am_events(h, &[AM_STARTED, 0, 2, 5, 7, 0, 2, 5], 2).expect_err("bad kind");
            assert!(err.to_string().contains("records[1].kind = 7"), "{err}");
            let err = am_events(h, &[AM_STARTED, 0, -2, 5], 1).expect_err("negative slots");
            assert!(err.to_string().contains("records[0].slots = -2"), "{err}");
            Ok(())
        })
        .expect("refusals");
        close_handle(raw).expect("close");
        let off = handle("fifo");
        with_handle(off, |h| {
            submit_job_with(h, r#"{"mapreduce.job.maps":"1"}"#, 0, true, 0, 0)?;
            assert_eq!(am_events(h, &[AM_REQUESTED, 0, 2, 0], 1)?, 1, "accepted, a no-op");
            assert_eq!(am_admissions(h, 1, &mut [0; 4])?, 0, "off: nothing to admit");
            Ok(())
        })
        .expect("off");
        assert_eq!(status(off)["am_admission"]["waiting"].as_array().map(Vec::len), Some(0));
        close_handle(off).expect("close");
    }
}
