//! Preemption decisions on small hand-built states, with the Fair baseline's targets.

use super::*;
use crate::config::{EngineConfig, PreemptionConfig};
use crate::engine::Choice;
use crate::model::{JobSpec, Locality};
use crate::policy::Policy;

fn engine(preemption: PreemptionConfig) -> Engine {
    engine_with(preemption, Box::new(crate::baseline::fair::Fair::default()))
}

/// A shared-pool engine running `policy`.
fn engine_with(preemption: PreemptionConfig, policy: Box<dyn Policy>) -> Engine {
    let cfg =
        EngineConfig { policy: "fair".into(), pool_mode: PoolMode::Shared, preemption, ..EngineConfig::default() };
    Engine::with_policy(cfg, policy)
}

fn on(delay_ms: Time, grace_ms: Time) -> PreemptionConfig {
    PreemptionConfig { enabled: true, delay_ms, grace_ms, max_fraction: 1.0, ..PreemptionConfig::default() }
}

/// A long job (tasks of `task_ms`) holding all 4 slots of one node since t = 0, and a short job
/// arriving at t = 1 s. Returns (engine, node, long job, short job).
fn long_job_holds_the_node(preemption: PreemptionConfig, task_ms: Time) -> (Engine, NodeId, JobId, JobId) {
    long_job_holds(engine(preemption), task_ms)
}

/// [`long_job_holds_the_node`] in a given engine.
fn long_job_holds(mut e: Engine, task_ms: Time) -> (Engine, NodeId, JobId, JobId) {
    let n = e.add_node("n0", "/r0", 4, 0);
    let (long, _) = e.submit(JobSpec::new(0, 40, 0).with_task_ms(task_ms, 1), 0).unwrap();
    e.tick(0);
    let choices = e.node_update(n, [4, 0], 0).unwrap().to_vec();
    assert_eq!(choices.iter().map(|c| c.count).sum::<u32>(), 4);
    for _ in 0..4 {
        e.task_started(long, Phase::Map, n, Locality::Node, 0).unwrap();
    }
    let (short, _) = e.submit(JobSpec::new(1_000, 2, 0).with_task_ms(5_000, 1), 1_000).unwrap();
    e.tick(1_000);
    (e, n, long, short)
}

#[test]
fn off_decides_nothing_and_earmarks_nothing() {
    let (mut e, n, _, _) = long_job_holds_the_node(PreemptionConfig::default(), 600_000);
    for t in [1_000, 5_000, 60_000] {
        assert!(e.preemptions(t).is_empty());
    }
    assert_eq!(e.preemptions_in_flight(), 0);
    assert_eq!(e.stats().preemptions, 0);
    assert!(e.node_update(n, [0, 0], 60_000).unwrap().is_empty());
}

#[test]
fn a_starved_job_gets_the_youngest_tasks_of_the_job_above_its_share_after_the_delay() {
    let (mut e, n, long, short) = long_job_holds_the_node(on(3_000, 1_000), 600_000);
    // Starved from t = 1 s: not yet at 3 s, then its whole deficit (fair share 2, 2 tasks pending).
    assert!(e.preemptions(1_000).is_empty());
    assert!(e.preemptions(3_999).is_empty());
    let d = e.preemptions(4_000).to_vec();
    assert_eq!(d, vec![Preemption { victim: long, phase: Phase::Map, count: 2, beneficiary: short }]);
    // In flight: not decided twice.
    assert!(e.preemptions(5_000).is_empty());
    assert_eq!(e.preemptions_in_flight(), 2);
    // The host kills one after the grace; the freed slot goes to the short job, not back to the long one.
    e.task_preempted(long, Phase::Map, n, 5_000, 5_000).unwrap();
    assert_eq!(e.preemptions_in_flight(), 1);
    let c = e.node_update(n, [1, 0], 5_000).unwrap().to_vec();
    assert_eq!(c[0], Choice { job: short, phase: Phase::Map, count: 1, locality: Locality::Any });
    let st = e.stats();
    assert_eq!((st.preemptions, st.preempted_tasks, st.preempted_lost_ms), (2, 1, 5_000));
    let rec: Vec<_> = e.recent_preemptions().copied().collect();
    assert_eq!(rec.len(), 1);
    assert_eq!((rec[0].victim, rec[0].beneficiary, rec[0].lost_ms), (long, Some(short), 5_000));
    // The preempted task is pending again, not failed.
    let j = e.job(long).unwrap();
    assert_eq!((j.phase(Phase::Map).running, j.phase(Phase::Map).pending), (3, 37));
}

#[test]
fn tasks_that_would_end_before_the_kill_or_lose_more_than_they_save_are_left_alone() {
    // 20 s tasks, grace 15 s: a task 3 s old has 17 s left, freed 2 s earlier by a kill that throws
    // away 18 s: not worth it.
    let (mut e, _, _, _) = long_job_holds_the_node(on(0, 15_000), 20_000);
    assert!(e.preemptions(3_000).is_empty());
    // 600 s tasks: worth it while the slot comes back sooner by more than the redone work spread over
    // the victim's 4 running tasks ((r − g) · 4 > a + g), not once they are about to end.
    let (mut e, _, _, _) = long_job_holds_the_node(on(0, 15_000), 600_000);
    assert_eq!(e.preemptions(3_000).iter().map(|d| d.count).sum::<u32>(), 2);
    let (mut e, _, _, _) = long_job_holds_the_node(on(0, 15_000), 600_000);
    assert_eq!(e.preemptions(450_000).iter().map(|d| d.count).sum::<u32>(), 2, "(150 − 15) · 4 > 465");
    let (mut e, _, _, _) = long_job_holds_the_node(on(0, 15_000), 600_000);
    assert!(e.preemptions(480_000).is_empty(), "(120 − 15) · 4 <= 495");
}

#[test]
fn never_below_the_victims_target_and_never_over_the_per_pool_cap() {
    // Cap 1/4 of the 4-slot pool: one task in flight at a time.
    let mut cfg = on(0, 1_000);
    cfg.max_fraction = 0.25;
    let (mut e, n, long, short) = long_job_holds_the_node(cfg, 600_000);
    assert_eq!(e.preemptions(2_000).iter().map(|d| d.count).sum::<u32>(), 1);
    assert!(e.preemptions(2_500).is_empty());
    e.task_preempted(long, Phase::Map, n, 2_500, 2_500).unwrap();
    e.node_update(n, [1, 0], 2_500).unwrap();
    e.task_started(short, Phase::Map, n, Locality::Any, 2_500).unwrap();
    e.tick(2_500);
    assert_eq!(e.preemptions(3_000).iter().map(|d| d.count).sum::<u32>(), 1);
    e.task_preempted(long, Phase::Map, n, 3_000, 3_000).unwrap();
    e.node_update(n, [1, 0], 3_000).unwrap();
    e.task_started(short, Phase::Map, n, Locality::Any, 3_000).unwrap();
    e.tick(3_000);
    // Both at their fair share of 2 now: nothing more, ever.
    for t in [3_500, 10_000, 100_000] {
        assert!(e.preemptions(t).is_empty());
    }
}

#[test]
fn an_unannounced_kill_is_still_a_requeue_with_its_work_counted() {
    let (mut e, n, long, _) = long_job_holds_the_node(on(0, 1_000), 600_000);
    e.task_preempted(long, Phase::Map, n, 1_000, 1_000).unwrap();
    let rec = *e.recent_preemptions().next_back().unwrap();
    assert_eq!((rec.beneficiary, rec.lost_ms), (None, 1_000));
    assert_eq!(e.job(long).unwrap().phase(Phase::Map).pending, 37);
    assert!(e.task_preempted(JobId(99), Phase::Map, n, 1, 1).is_err());
}

#[test]
fn starts_remove_the_nearest_entry() {
    let mut s = Starts::default();
    for t in [10, 10, 20, 35] {
        s.add(t);
    }
    assert_eq!(s.youngest_first().collect::<Vec<_>>(), vec![35, 20, 10, 10]);
    s.remove_near(21);
    s.remove_near(10);
    assert_eq!(s.youngest_first().collect::<Vec<_>>(), vec![35, 10]);
    s.remove_near(1_000);
    s.remove_near(-5);
    s.remove_near(0);
    assert_eq!(s.youngest_first().count(), 0);
}

/// A split-pool node of 2 map slots and 1 reduce slot under Fair with `cfg`'s other settings: a long job's
/// maps hold both map slots since t = 0 and a 1-map short job arrives at t = 1 s (the MRv1 mini cluster's
/// shape). Returns (engine, node, long job, short job).
fn long_job_holds_the_map_slots(cfg: EngineConfig) -> (Engine, NodeId, JobId, JobId) {
    let cfg = EngineConfig { policy: "fair".into(), pool_mode: PoolMode::Split, ..cfg };
    let mut e = Engine::with_policy(cfg, Box::new(crate::baseline::fair::Fair::default()));
    let n = e.add_node("n0", "/r0", 2, 1);
    let (long, _) = e.submit(JobSpec::new(0, 20, 0).with_task_ms(600_000, 1), 0).unwrap();
    e.tick(0);
    e.node_update(n, [2, 1], 0).unwrap();
    for _ in 0..2 {
        e.task_started(long, Phase::Map, n, Locality::Node, 0).unwrap();
    }
    let (short, _) = e.submit(JobSpec::new(1_000, 1, 0).with_task_ms(5_000, 1), 1_000).unwrap();
    e.tick(1_000);
    (e, n, long, short)
}

/// MRv1 reports a KILLED attempt at a heartbeat where its map slot is still held by the attempt's
/// clean-up and only a reduce slot is free: the map earmark waits for a heartbeat with a free map slot
/// instead of being spent on nothing (the slot would then go back to the victim's re-queued task).
#[test]
fn an_earmark_waits_for_a_free_slot_in_its_pool() {
    let (mut e, n, long, short) =
        long_job_holds_the_map_slots(EngineConfig { preemption: on(0, 1_000), ..EngineConfig::default() });
    assert_eq!(e.preemptions(2_000).iter().map(|d| d.count).sum::<u32>(), 1);
    e.task_preempted(long, Phase::Map, n, 3_000, 3_000).unwrap();
    // The map slot is not free yet: nothing for the short job, and the earmark stays.
    assert!(e.node_update(n, [0, 1], 3_000).unwrap().iter().all(|c| c.job != short));
    assert_eq!(e.preempt.earmarks.len(), 1);
    let c = e.node_update(n, [1, 1], 4_000).unwrap().to_vec();
    assert_eq!(c[0], Choice { job: short, phase: Phase::Map, count: 1, locality: Locality::Any });
    assert!(e.preempt.earmarks.is_empty());
}

/// On a loaded MRv1 tracker the killed attempt's clean-up holds the map slot for longer than the earmark's
/// own hold (a JVM start): the tracker's heartbeats that find the map slots still full keep the earmark, so
/// the slot still goes to the short job when it frees, 40 s later, at any locality (before, the earmark lapsed
/// and the victim's re-queued task took the slot, kill after kill: the MRv1 `PreemptionIT` under load).
/// Once the node stops reporting a full pool the earmark lapses after its hold.
#[test]
fn an_earmark_outlives_a_slow_clean_up_while_its_node_reports_the_pool_full() {
    let cfg = EngineConfig { epoch_ms: 1_000, preemption: on(1_000, 10_000), ..EngineConfig::default() };
    let (mut e, n, long, short) = long_job_holds_the_map_slots(cfg);
    assert!(e.preemptions(1_000).is_empty());
    assert_eq!(e.preemptions(2_000).iter().map(|d| d.count).sum::<u32>(), 1);
    e.task_preempted(long, Phase::Map, n, 3_000, 3_000).unwrap();
    // Hold: grace 10 s + delay 1 s + 2 epochs = 13 s. The clean-up lasts 40 s; the tracker heartbeats every 3 s.
    let mut t = 3_000;
    while t < 43_000 {
        e.tick(t);
        assert!(e.preemptions(t).is_empty(), "the freed slot is on its way: no second kill at {t}");
        assert!(e.node_update(n, [0, 1], t).unwrap().iter().all(|c| c.job != short && c.phase != Phase::Map));
        t += 3_000;
    }
    assert_eq!(e.preempt.earmarks.len(), 1);
    let c = e.node_update(n, [1, 1], t).unwrap().to_vec();
    assert_eq!(c[0], Choice { job: short, phase: Phase::Map, count: 1, locality: Locality::Any });
    assert!(e.preempt.earmarks.is_empty());

    // A node that stops reporting: the earmark lapses its hold after the last full heartbeat.
    let (mut e, n, long, _) = long_job_holds_the_node(on(0, 1_000), 600_000);
    assert_eq!(e.preemptions(1_000).iter().map(|d| d.count).sum::<u32>(), 2);
    e.task_preempted(long, Phase::Map, n, 1_000, 1_000).unwrap();
    e.node_update(n, [0, 0], 5_000).unwrap();
    let hold = 1_000 + 2 * e.config.epoch_ms;
    e.preemptions(5_000 + hold);
    assert_eq!(e.preempt.earmarks.len(), 1, "within the hold of the last full heartbeat");
    e.preemptions(5_000 + hold + 1);
    assert!(e.preempt.earmarks.is_empty(), "lapsed");
}

/// Fair's targets with kills priced in stretch ([`KillPrice::Stretch`]), as FLEX's stretch objectives ask.
struct StretchPriced(crate::baseline::fair::Fair);

impl Policy for StretchPriced {
    fn name(&self) -> &'static str {
        "stretch-priced fair"
    }

    fn plan(&mut self, snapshot: &crate::policy::Snapshot<'_>) -> crate::policy::Plan {
        crate::policy::Plan { kill_price: KillPrice::Stretch, ..self.0.plan(snapshot) }
    }
}

#[test]
fn a_kill_priced_in_stretch_takes_an_old_task_of_a_long_job_for_a_short_one() {
    // 600 s tasks 480 s old: in time, (120 − 15) · 4 <= 495, left alone (the test above). In stretch the
    // short job (isolated 5 s) gains (120 − 15) · 4 / 5 = 84 against the long job's 495 / 6,000 = 0.08
    // (40 tasks of 600 s over 4 slots): taken.
    let stretch = Box::new(StretchPriced(crate::baseline::fair::Fair::default()));
    let (mut e, _, long, short) = long_job_holds(engine_with(on(0, 15_000), stretch), 600_000);
    e.tick(480_000);
    let d = e.preemptions(480_000).to_vec();
    assert_eq!(d, vec![Preemption { victim: long, phase: Phase::Map, count: 2, beneficiary: short }]);
}

/// A free slot on another node covers one slot of the starved job's deficit, not all of it: the job is
/// starved for the rest (before, any free slot in the pool reset its starvation, so a few short tasks
/// churning beside a wide job's long ones kept a job of many tasks from ever being served).
#[test]
fn a_free_slot_elsewhere_covers_only_its_part_of_the_deficit() {
    let mut e = engine(on(3_000, 1_000));
    let n = e.add_node("n0", "/r0", 4, 0);
    let _idle = e.add_node("n1", "/r0", 1, 0);
    let (long, _) = e.submit(JobSpec::new(0, 40, 0).with_task_ms(600_000, 1), 0).unwrap();
    e.tick(0);
    e.node_update(n, [4, 0], 0).unwrap();
    for _ in 0..4 {
        e.task_started(long, Phase::Map, n, Locality::Node, 0).unwrap();
    }
    let (short, _) = e.submit(JobSpec::new(1_000, 4, 0).with_task_ms(5_000, 1), 1_000).unwrap();
    e.tick(1_000);
    let target = e.plan.entry(short).unwrap().target[Phase::Map.idx()];
    assert!(target >= 2, "fair share of 5 slots between two jobs: {target}");
    assert!(e.preemptions(1_000).is_empty());
    let d = e.preemptions(4_000).to_vec();
    assert_eq!(d, vec![Preemption { victim: long, phase: Phase::Map, count: target - 1, beneficiary: short }]);
}

/// Kills in flight go to the starved jobs in plan order, soonest-landing first: a better-ranked job that
/// starves after a kill was decided for another takes it; the total in flight never changes, and kills
/// nobody claims keep their beneficiary.
#[test]
fn kills_in_flight_are_handed_to_the_claims_in_order_and_none_is_lost() {
    let mut e = engine(on(3_000, 1_000));
    let (victim, _) = e.submit(JobSpec::new(0, 8, 0).with_task_ms(600_000, 1), 0).unwrap();
    let (first, _) = e.submit(JobSpec::new(0, 8, 0).with_task_ms(5_000, 1), 0).unwrap();
    let (second, _) = e.submit(JobSpec::new(0, 8, 0).with_task_ms(5_000, 1), 0).unwrap();
    let kill = |beneficiary, count, expires| InFlight { victim, phase: Phase::Map, beneficiary, count, expires };
    e.preempt.inflight = vec![kill(second, 3, 9_000), kill(second, 1, 5_000)];
    e.hand_over_inflight(0, &[(first, 2), (second, 1)]);
    let got: Vec<(JobId, u32, Time)> = e.preempt.inflight.iter().map(|f| (f.beneficiary, f.count, f.expires)).collect();
    assert_eq!(got, vec![(first, 1, 5_000), (first, 1, 9_000), (second, 1, 9_000), (second, 1, 9_000)]);
    assert_eq!(e.preemptions_in_flight(), 4);
}
