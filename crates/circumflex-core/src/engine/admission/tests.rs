//! The AM gate on small hand-built states (FIFO's plan order, priorities to reorder it), and its
//! invariants under random host behaviour.

use super::*;
use crate::config::{AmAdmissionConfig, EngineConfig, PreemptionConfig};
use crate::engine::{Choice, Preemption};
use crate::model::{JobSpec, Locality, NodeId, Phase};
use crate::policy::{Policy, PoolMode};
use proptest::prelude::*;

fn engine_with(policy: &str, am: AmAdmissionConfig, preemption: PreemptionConfig) -> Engine {
    let cfg = EngineConfig {
        policy: policy.into(),
        pool_mode: PoolMode::Shared,
        node_locality_delay: 0,
        rack_locality_delay: 0,
        am,
        preemption,
        ..EngineConfig::default()
    };
    let p: Box<dyn Policy> = match policy {
        "fifo" => Box::new(crate::baseline::fifo::Fifo::default()),
        _ => Box::new(crate::baseline::fair::Fair::default()),
    };
    Engine::with_policy(cfg, p)
}

fn gate(max_share: f64, slots: u32) -> AmAdmissionConfig {
    AmAdmissionConfig { enabled: true, max_share, slots, max_starting_per_node: 0 }
}

fn gate_starting(max_share: f64, slots: u32, max_starting: u32) -> AmAdmissionConfig {
    AmAdmissionConfig { max_starting_per_node: max_starting, ..gate(max_share, slots) }
}

fn fifo(am: AmAdmissionConfig) -> Engine {
    engine_with("fifo", am, PreemptionConfig::default())
}

/// Submits a job of `maps` maps with FIFO priority `priority`, as the YARN shim does: the declared
/// counts, then pending counts of 0 (nothing asked yet).
fn submit(e: &mut Engine, maps: u32, priority: i32, now: Time) -> JobId {
    let mut spec = JobSpec::new(now, maps, 0);
    spec.priority = priority;
    let (id, _) = e.submit(spec, now).unwrap();
    e.set_pending(id, Phase::Map, 0).unwrap();
    e.set_pending(id, Phase::Reduce, 0).unwrap();
    id
}

/// Each job waiting for its AM with its reason, in the status page's order.
fn wait_reasons(e: &Engine) -> Vec<(JobId, AmWaitReason)> {
    e.am_waiting().iter().map(|w| (w.job, w.reason)).collect()
}

fn offered_jobs(e: &mut Engine, n: NodeId, free: u32) -> Vec<JobId> {
    let mut jobs: Vec<JobId> = e.node_update(n, [free, 0], 0).unwrap().iter().map(|c: &Choice| c.job).collect();
    jobs.dedup();
    jobs
}

#[test]
fn off_by_default_nothing_is_gated_and_zero_pending_counts_as_before() {
    let mut e = fifo(AmAdmissionConfig::default());
    let n = e.add_node("n0", "/r", 8, 0);
    let a = submit(&mut e, 4, 0, 0);
    assert_eq!(e.job(a).unwrap().phase(Phase::Map).pending, 0, "the host's 0 applies");
    assert!(e.am_admissions(0).is_empty());
    assert!(e.am_waiting().is_empty());
    e.am_requested(a, 2, 0).unwrap();
    e.am_started(a, 2, 0).unwrap();
    assert_eq!(e.am_phase(a), None, "events are no-ops while off");
    e.set_pending(a, Phase::Map, 4).unwrap();
    assert_eq!(offered_jobs(&mut e, n, 8), vec![a]);
}

#[test]
fn a_job_is_planned_with_its_declared_size_before_its_am_runs_and_offered_nothing() {
    let mut e = engine_with("fair", gate(0.5, 1), PreemptionConfig::default());
    let n = e.add_node("n0", "/r", 8, 0);
    let a = submit(&mut e, 6, 0, 0);
    e.tick(0);
    assert_eq!(e.job(a).unwrap().phase(Phase::Map).pending, 6, "the declared count stays");
    let entry = e.plan().entry(a).copied().unwrap();
    assert!(entry.target[0] > 0, "ranked and given a target by its real size: {entry:?}");
    assert!(offered_jobs(&mut e, n, 8).is_empty(), "no task before the AM registers");
    assert_eq!(e.am_admissions(0), &[a]);
    e.am_started(a, 1, 10).unwrap();
    e.set_node_capacity(n, 7, 0).unwrap();
    assert_eq!(e.am_phase(a), Some(AmPhase::Starting));
    assert!(offered_jobs(&mut e, n, 7).is_empty(), "starting: still gated");
    // The AM's first ask registers it; its tasks are offered from then on.
    e.set_pending(a, Phase::Map, 6).unwrap();
    assert_eq!(e.am_phase(a), Some(AmPhase::Registered));
    assert_eq!(offered_jobs(&mut e, n, 7), vec![a]);
}

#[test]
fn ams_start_in_plan_order_within_the_share_and_the_rest_wait_with_a_reason() {
    // 8 slots, share 0.25: at most 2 slots of AMs (1 slot each) once one runs.
    let mut e = fifo(gate(0.25, 1));
    e.add_node("n0", "/r", 8, 0);
    let low = submit(&mut e, 2, 0, 0);
    let high = submit(&mut e, 2, 5, 1);
    let mid = submit(&mut e, 2, 3, 2);
    let last = submit(&mut e, 2, 1, 3);
    e.tick(3);
    assert_eq!(e.am_admissions(3), &[high, mid], "plan order (priority), not arrival order");
    assert_eq!(
        wait_reasons(&e),
        vec![
            (high, AmWaitReason::Admitted),
            (mid, AmWaitReason::Admitted),
            (last, AmWaitReason::OverShare),
            (low, AmWaitReason::RankedBehind)
        ]
    );
    // Admitted AMs are named again until placed; an admission is never taken back.
    assert_eq!(e.am_admissions(4), &[high, mid]);
    let view = e.am_gate_view();
    assert_eq!((view.capacity, view.held, view.limit, view.running), (8, 2, 2, 0));
}

#[test]
fn a_bound_on_starting_ams_admits_in_plan_order_and_the_next_when_one_registers() {
    // The share would admit all four; at most two may be between admission and registration.
    let mut e = fifo(gate_starting(0.9, 1, 2));
    let n = e.add_node("n0", "/r", 16, 0);
    let low = submit(&mut e, 2, 0, 0);
    let high = submit(&mut e, 2, 5, 1);
    let mid = submit(&mut e, 2, 3, 2);
    let last = submit(&mut e, 2, 1, 3);
    e.tick(3);
    assert_eq!(e.am_admissions(3), &[high, mid], "two starting at most, in plan order");
    assert_eq!(
        wait_reasons(&e),
        vec![
            (high, AmWaitReason::Admitted),
            (mid, AmWaitReason::Admitted),
            (last, AmWaitReason::StartingFull),
            (low, AmWaitReason::RankedBehind)
        ]
    );
    // Placed but not registered still counts as starting.
    e.am_started(high, 1, 4).unwrap();
    e.am_started(mid, 1, 4).unwrap();
    e.set_node_capacity(n, 14, 0).unwrap();
    assert_eq!(e.am_admissions(5), &[] as &[JobId]);
    // One registers: the next in plan order may start.
    e.set_pending(high, Phase::Map, 2).unwrap();
    assert_eq!(e.am_admissions(6), &[last]);
    e.am_started(last, 1, 6).unwrap();
    e.set_node_capacity(n, 13, 0).unwrap();
    e.set_pending(mid, Phase::Map, 2).unwrap();
    e.set_pending(last, Phase::Map, 2).unwrap();
    assert_eq!(e.am_admissions(7), &[low]);
}

#[test]
fn the_starting_bound_is_per_live_node() {
    // One AM starting per node: two nodes let two start; when one node is lost, one.
    let mut e = fifo(gate_starting(0.9, 1, 1));
    e.add_node("n0", "/r", 8, 0);
    let n1 = e.add_node("n1", "/r", 8, 0);
    let jobs: Vec<JobId> = (0..4).map(|i| submit(&mut e, 2, 0, i)).collect();
    e.tick(3);
    assert_eq!(e.am_admissions(3), &jobs[..2], "two live nodes: two AMs starting");
    e.am_started(jobs[0], 1, 4).unwrap();
    e.am_started(jobs[1], 1, 4).unwrap();
    e.set_pending(jobs[0], Phase::Map, 2).unwrap();
    e.set_pending(jobs[1], Phase::Map, 2).unwrap();
    e.remove_node(n1, 5).unwrap();
    assert_eq!(e.am_admissions(6), &jobs[2..3], "one live node: one AM starting");
    assert_eq!(wait_reasons(&e)[1], (jobs[3], AmWaitReason::StartingFull));
}

#[test]
fn without_a_starting_bound_the_gate_is_as_before() {
    // The same state as above with max_starting 0: the share alone decides.
    let mut e = fifo(gate_starting(0.9, 1, 0));
    e.add_node("n0", "/r", 16, 0);
    let jobs: Vec<JobId> = (0..4).map(|i| submit(&mut e, 2, 0, i)).collect();
    e.tick(3);
    assert_eq!(e.am_admissions(3), jobs.as_slice());
}

#[test]
fn a_finished_am_frees_its_share_for_the_next_in_line() {
    let mut e = fifo(gate(0.25, 2));
    let n = e.add_node("n0", "/r", 8, 0);
    let a = submit(&mut e, 1, 0, 0);
    let b = submit(&mut e, 1, 0, 1);
    e.tick(1);
    assert_eq!(e.am_admissions(1), &[a], "share 2 of 8: one AM of 2");
    e.am_started(a, 2, 2).unwrap();
    e.set_node_capacity(n, 6, 0).unwrap();
    assert_eq!(e.am_admissions(3), &[] as &[JobId]);
    e.am_finished(a, 5).unwrap();
    e.set_node_capacity(n, 8, 0).unwrap();
    assert_eq!(e.am_admissions(6), &[b]);
}

#[test]
fn at_least_one_am_always_starts_however_small_the_share() {
    let mut e = fifo(gate(0.01, 2));
    e.add_node("n0", "/r", 8, 0);
    let a = submit(&mut e, 1, 0, 0);
    let b = submit(&mut e, 1, 0, 0);
    e.tick(0);
    assert_eq!(e.am_admissions(0), &[a]);
    assert_eq!(e.am_waiting()[1], AmWait { job: b, rank: 1, slots: 2, since_ms: 0, reason: AmWaitReason::OverShare });
}

#[test]
fn ams_never_take_the_last_task_slot() {
    // Share 0.99 of 3 slots: a second AM of 1 would leave one slot, a third none.
    let mut e = fifo(gate(0.99, 1));
    let n = e.add_node("n0", "/r", 3, 0);
    let a = submit(&mut e, 1, 0, 0);
    let b = submit(&mut e, 1, 0, 0);
    let c = submit(&mut e, 1, 0, 0);
    e.tick(0);
    assert_eq!(e.am_admissions(0), &[a, b]);
    assert_eq!(e.am_waiting()[2].reason, AmWaitReason::NoCapacity);
    for j in [a, b] {
        e.am_started(j, 1, 1).unwrap();
    }
    e.set_node_capacity(n, 1, 0).unwrap();
    e.set_pending(a, Phase::Map, 1).unwrap();
    assert_eq!(offered_jobs(&mut e, n, 1), vec![a], "the last slot runs a task");
    let _ = c;
    // No node at all: nothing can start.
    let mut empty = fifo(gate(0.5, 1));
    submit(&mut empty, 1, 0, 0);
    assert!(empty.am_admissions(0).is_empty());
    assert_eq!(empty.am_waiting()[0].reason, AmWaitReason::NoCapacity);
}

#[test]
fn no_preemption_is_decided_for_a_job_whose_am_has_not_registered() {
    let pre =
        PreemptionConfig { enabled: true, delay_ms: 0, grace_ms: 0, max_fraction: 1.0, ..PreemptionConfig::default() };
    let mut e = engine_with("fair", gate(0.5, 1), pre);
    let n = e.add_node("n0", "/r", 4, 0);
    let long = submit(&mut e, 40, 0, 0);
    e.am_admissions(0);
    e.am_started(long, 1, 0).unwrap();
    e.set_node_capacity(n, 3, 0).unwrap();
    e.set_pending(long, Phase::Map, 40).unwrap();
    e.tick(0);
    for _ in 0..3 {
        e.task_started(long, Phase::Map, n, Locality::Any, 0).unwrap();
    }
    let short = submit(&mut e, 2, 0, 1_000);
    e.tick(1_000);
    assert!(e.plan().entry(short).unwrap().target[0] > 0, "fair gives it a share");
    assert!(e.preemptions(2_000).is_empty(), "its AM has not registered: nothing to run yet");
    assert!(e.preemptions(60_000).is_empty());
}

/// An AM the gate admitted but no node could hold (the host reserved a node for it) is starved for
/// its slots: the engine takes them back from the job above its target, once, and the kills' earmarks
/// are held for the AM instead of going to its (still gated) tasks.
#[test]
fn an_admitted_am_that_cannot_be_placed_is_preempted_for_once() {
    let pre = PreemptionConfig {
        enabled: true,
        delay_ms: 1_000,
        grace_ms: 0,
        max_fraction: 1.0,
        ..PreemptionConfig::default()
    };
    let mut e = engine_with("fair", gate(0.5, 2), pre);
    let n = e.add_node("n0", "/r", 8, 0);
    let mut spec = JobSpec::new(0, 40, 0);
    spec.maps.task_ms = Some(600_000);
    let (long, _) = e.submit(spec, 0).unwrap();
    e.set_pending(long, Phase::Map, 0).unwrap();
    assert_eq!(e.am_admissions(0), &[long]);
    e.am_started(long, 2, 0).unwrap();
    e.set_node_capacity(n, 6, 0).unwrap();
    e.set_pending(long, Phase::Map, 40).unwrap();
    e.tick(0);
    for _ in 0..6 {
        e.task_started(long, Phase::Map, n, Locality::Any, 1_000).unwrap();
    }
    let short = submit(&mut e, 2, 0, 2_000);
    e.tick(2_000);
    assert_eq!(e.am_admissions(2_000), &[short], "within the share");
    // The host found no room and reserved the node: its task capacity drops by the AM's 2 slots.
    e.set_node_capacity(n, 4, 0).unwrap();
    assert!(e.preemptions(2_500).is_empty(), "starved for less than the delay");
    let decided = e.preemptions(3_500).to_vec();
    assert_eq!(decided, vec![Preemption { victim: long, phase: Phase::Map, count: 2, beneficiary: short }]);
    assert!(e.preemptions(4_000).is_empty(), "in flight: not asked twice");
    for _ in 0..2 {
        e.task_preempted(long, Phase::Map, n, 3_000, 4_500).unwrap();
    }
    assert!(e.preemptions(5_000).is_empty(), "the freed slots wait in the reservation: not asked again");
    // The reservation holds them, so the node reports no free task slot; no task of the gated job is offered.
    assert!(offered_jobs(&mut e, n, 0).is_empty());
    e.am_started(short, 2, 5_200).unwrap();
    e.set_node_capacity(n, 4, 0).unwrap();
    assert!(e.preemptions(60_000).is_empty(), "the AM runs: its job is not starved until it asks");
    assert_eq!(e.recent_preemptions().filter(|r| r.beneficiary == Some(short)).count(), 2);
}

#[test]
fn a_refresh_that_turns_the_gate_off_frees_every_job() {
    let mut e = fifo(gate(0.25, 1));
    let n = e.add_node("n0", "/r", 4, 0);
    let a = submit(&mut e, 2, 0, 0);
    e.tick(0);
    assert!(offered_jobs(&mut e, n, 4).is_empty());
    let cfg = EngineConfig { am: AmAdmissionConfig::default(), ..e.config().clone() };
    e.reconfigure(cfg, Box::new(crate::baseline::fifo::Fifo::default()), 1);
    assert_eq!(e.am_phase(a), None);
    assert_eq!(offered_jobs(&mut e, n, 4), vec![a]);
}

#[test]
fn a_new_attempt_waits_again_and_ended_jobs_are_forgotten() {
    let mut e = fifo(gate(0.5, 1));
    let n = e.add_node("n0", "/r", 4, 0);
    let a = submit(&mut e, 1, 0, 0);
    e.am_admissions(0);
    e.am_started(a, 1, 0).unwrap();
    e.am_registered(a, 1).unwrap();
    e.am_finished(a, 2).unwrap();
    assert_eq!(e.am_phase(a), Some(AmPhase::Ended));
    assert!(offered_jobs(&mut e, n, 4).is_empty(), "no AM, no tasks");
    e.am_requested(a, 2, 3).unwrap();
    assert_eq!(e.am_phase(a), Some(AmPhase::Waiting));
    assert_eq!(e.am_admissions(3), &[a]);
    e.finish_job(a, 4).unwrap();
    assert_eq!(e.am_phase(a), None);
    assert!(e.am_started(a, 1, 5).is_err(), "an ended job is an unknown id");
}

/// One step of a host driving the gate.
#[derive(Clone, Debug)]
enum Step {
    Submit {
        maps: u32,
        priority: i32,
    },
    /// Ask the gate and place every admitted AM that fits on the node.
    Heartbeat,
    /// The `k`-th starting AM (mod the count) registers.
    Register(usize),
    /// The `k`-th live job (mod the count) ends.
    Finish(usize),
    /// The `k`-th placed AM (mod the count) ends without its job (a failed attempt) and asks again.
    Retry(usize),
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        (1u32..6, 0i32..4).prop_map(|(maps, priority)| Step::Submit { maps, priority }),
        Just(Step::Heartbeat),
        Just(Step::Heartbeat),
        (0usize..8).prop_map(Step::Register),
        (0usize..8).prop_map(Step::Finish),
        (0usize..8).prop_map(Step::Retry),
    ]
}

proptest! {
    /// Whatever the host does: AMs never hold more than the share once more than one runs, never the
    /// last task slot, at least one starts whenever none holds anything and one fits, and no
    /// heartbeat offers a task of a job whose AM has not registered.
    #[test]
    fn the_gate_bounds_ams_never_starves_and_never_offers_gated_tasks(
        node_slots in 3u32..20,
        am_slots in 1u32..4,
        share in 0.05f64..0.95,
        max_starting in 0u32..4,
        steps in proptest::collection::vec(step(), 1..60),
    ) {
        let mut e = fifo(gate_starting(share, am_slots, max_starting));
        let n = e.add_node("n0", "/r", node_slots, 0);
        let mut live: Vec<JobId> = Vec::new();
        // AM slots placed on the node (the host takes them out of its task capacity).
        let mut placed: BTreeMap<JobId, u32> = BTreeMap::new();
        for (t, s) in steps.into_iter().enumerate() {
            let now = t as Time * 100;
            match s {
                Step::Submit { maps, priority } => live.push(submit(&mut e, maps, priority, now)),
                Step::Heartbeat => {
                    e.tick(now);
                    let admitted = e.am_admissions(now).to_vec();
                    let view = e.am_gate_view();
                    if view.held > 0 {
                        prop_assert!(view.capacity.saturating_sub(view.held) >= 1, "{view:?}");
                    }
                    if max_starting > 0 {
                        let starting = placed.keys().filter(|&&j| e.am_phase(j) == Some(AmPhase::Starting)).count()
                            + admitted.iter().filter(|&&j| e.am_phase(j) == Some(AmPhase::Admitted)).count();
                        prop_assert!(starting as u32 <= max_starting, "{starting} starting, bound {max_starting}");
                    }
                    let holders = admitted.len() as u32 + placed.len() as u32;
                    if holders > 1 {
                        prop_assert!(view.held <= view.limit, "{view:?} with {holders} AMs");
                    }
                    let waiting = e.am_waiting();
                    let none_starting = admitted.is_empty()
                        && !placed.keys().any(|&j| e.am_phase(j) == Some(AmPhase::Starting));
                    if none_starting {
                        prop_assert!(
                            waiting.iter().all(|w| w.reason != AmWaitReason::StartingFull),
                            "held back by starting AMs while none starts: {waiting:?}"
                        );
                    }
                    if placed.is_empty() && admitted.is_empty() {
                        if let Some(first) = waiting.first() {
                            prop_assert!(view.capacity < first.slots + 1, "starved: {waiting:?} {view:?}");
                        }
                    }
                    for job in admitted {
                        let used: u32 = placed.values().sum();
                        if used + am_slots <= node_slots {
                            e.am_started(job, am_slots, now).unwrap();
                            placed.insert(job, am_slots);
                            e.set_node_capacity(n, node_slots - used - am_slots, 0).unwrap();
                        }
                    }
                }
                Step::Register(k) => {
                    let starting: Vec<JobId> =
                        placed.keys().copied().filter(|&j| e.am_phase(j) == Some(AmPhase::Starting)).collect();
                    if !starting.is_empty() {
                        let j = starting[k % starting.len()];
                        let maps = e.job(j).unwrap().phase(Phase::Map).total;
                        e.set_pending(j, Phase::Map, maps).unwrap();
                        prop_assert_eq!(e.am_phase(j), Some(AmPhase::Registered));
                    }
                }
                Step::Finish(k) if !live.is_empty() => {
                    let j = live.remove(k % live.len());
                    e.finish_job(j, now).unwrap();
                    if placed.remove(&j).is_some() {
                        let used: u32 = placed.values().sum();
                        e.set_node_capacity(n, node_slots - used, 0).unwrap();
                    }
                }
                Step::Retry(k) if !placed.is_empty() => {
                    let j = *placed.keys().nth(k % placed.len()).unwrap();
                    placed.remove(&j);
                    e.am_finished(j, now).unwrap();
                    let used: u32 = placed.values().sum();
                    e.set_node_capacity(n, node_slots - used, 0).unwrap();
                    e.am_requested(j, am_slots, now).unwrap();
                }
                _ => {}
            }
            let free = e.nodes()[n.0 as usize].capacity[0];
            let choices = e.node_update(n, [free, 0], now).unwrap().to_vec();
            for c in choices {
                prop_assert_eq!(e.am_phase(c.job), Some(AmPhase::Registered), "offered a gated job: {:?}", c);
            }
        }
    }
}
