//! Simulator scenario and property tests: hand-checked timelines, determinism, conservation of work,
//! capacity at every instant, and every registered policy driven to completion.

use proptest::prelude::*;

use super::*;
use crate::sim::metrics::list_schedule_makespan;
use circumflex_core::model::{Locality, Phase};
use circumflex_policies::POLICY_NAMES;

fn config(policy: &str, cluster: ClusterSpec) -> SimConfig {
    let mut c = SimConfig { cluster, replicas: 0, record_tasks: true, ..SimConfig::default() };
    c.engine.policy = policy.into();
    c
}

fn one_slot_each() -> ClusterSpec {
    ClusterSpec { nodes: 1, map_slots: 1, reduce_slots: 1, racks: 1, pool: PoolMode::Split }
}

fn two_jobs() -> Workload {
    let a = SimJob::new(0, vec![1_000, 1_000], vec![500]);
    let b = SimJob::new(100, vec![300], vec![]);
    Workload::new("two", vec![a, b]).unwrap()
}

fn finishes(r: &SimResult) -> Vec<Option<i64>> {
    r.jobs.iter().map(|j| j.finish_ms).collect()
}

/// 1 node, 1 map + 1 reduce slot, heartbeats every 1 s from t=0, FIFO.
/// t=0: A's map 0 (to 1000). t=1000: map 1 (to 2000). t=2000: the epoch re-plans, A's last map ends
/// and its reduce becomes runnable; the heartbeat launches A's reduce (to 2500) and, in the free map
/// slot, B's map (to 2300).
#[test]
fn hand_checked_fifo_split() {
    let mut cfg = config("fifo", one_slot_each());
    cfg.heartbeat_ms = 1_000;
    let w = two_jobs();
    let r = Simulation::new(cfg, &w).unwrap().run().unwrap();
    assert_eq!(finishes(&r), vec![Some(2_500), Some(2_300)]);
    assert_eq!(r.jobs[1].response_ms, Some(2_200));
    let starts: Vec<(u32, Phase, i64)> = r.tasks.iter().map(|t| (t.job, t.phase, t.start_ms)).collect();
    assert_eq!(
        starts,
        vec![(0, Phase::Map, 0), (0, Phase::Map, 1_000), (0, Phase::Reduce, 2_000), (1, Phase::Map, 2_000)]
    );
    assert_eq!(r.summary.mean_response_s, (2.5 + 2.2) / 2.0);
    // Isolated: A = 2 maps on 1 slot + reduce = 2500 ms; B = 300 ms.
    assert_eq!(r.jobs[0].stretch, Some(1.0));
    assert_eq!(r.jobs[1].stretch, Some(2_200.0 / 300.0));
}

/// Shared pool of one slot: B waits for A's reduce; it starts on the next periodic heartbeat (t=3000),
/// or at once (t=2500) with out-of-band heartbeats.
#[test]
fn hand_checked_fifo_shared_with_and_without_out_of_band() {
    let cluster = ClusterSpec { nodes: 1, map_slots: 1, reduce_slots: 0, racks: 1, pool: PoolMode::Shared };
    let mut cfg = config("fifo", cluster);
    cfg.heartbeat_ms = 1_000;
    let w = two_jobs();
    let r = Simulation::new(cfg.clone(), &w).unwrap().run().unwrap();
    assert_eq!(finishes(&r), vec![Some(2_500), Some(3_300)]);
    cfg.out_of_band_heartbeat = true;
    let r = Simulation::new(cfg, &w).unwrap().run().unwrap();
    assert_eq!(finishes(&r), vec![Some(2_500), Some(2_800)]);
}

fn synthetic(seed: u64, jobs: u32, cluster: &ClusterSpec) -> Workload {
    let spec = SyntheticSpec {
        jobs,
        mean_interarrival_ms: 5_000.0,
        maps: workload::Dist::Zipf { n: 60.0, s: 1.0 },
        reduces: workload::Dist::Uniform { lo: 0.0, hi: 6.0 },
        deadline_factor: Some(3.0),
        ..SyntheticSpec::default()
    };
    spec.generate(&mut workload_rng(seed), cluster).unwrap()
}

fn cluster(pool: PoolMode) -> ClusterSpec {
    ClusterSpec { nodes: 6, map_slots: 2, reduce_slots: 1, racks: 2, pool }
}

#[test]
fn same_seed_gives_byte_identical_json() {
    let c = cluster(PoolMode::Split);
    let w = synthetic(3, 60, &c);
    let mut cfg = config("fair", c);
    cfg.replicas = 3;
    cfg.seed = 42;
    let a = serde_json::to_string(&Simulation::new(cfg.clone(), &w).unwrap().run().unwrap()).unwrap();
    let b = serde_json::to_string(&Simulation::new(cfg.clone(), &w).unwrap().run().unwrap()).unwrap();
    assert_eq!(a, b);
    cfg.seed = 43;
    let c = serde_json::to_string(&Simulation::new(cfg, &w).unwrap().run().unwrap()).unwrap();
    assert_ne!(a, c, "the seed drives replica placement, so it changes the run");
}

/// At every instant, each node runs at most its capacity per pool.
fn assert_capacity(r: &SimResult) {
    let cap = r.config.cluster.node_capacity();
    let shared = r.config.cluster.pool == PoolMode::Shared;
    let mut edges: Vec<(u32, usize, i64, i32)> = Vec::new();
    for t in &r.tasks {
        let pool = if shared { 0 } else { t.phase.idx() };
        edges.push((t.node, pool, t.start_ms, 1));
        edges.push((t.node, pool, t.end_ms, -1));
    }
    // At equal times ends (-1) sort before starts (+1): a slot freed at t may be reused at t.
    edges.sort();
    let mut running = std::collections::HashMap::new();
    for (node, pool, at, delta) in edges {
        let n = running.entry((node, pool)).or_insert(0i32);
        *n += delta;
        assert!(*n <= cap[pool] as i32, "node {node} pool {pool} runs {n} > {} at {at}", cap[pool]);
    }
}

/// Every job finishes, busy time equals the work of the workload, and each task ran exactly once for
/// exactly its duration.
/// Jobs refused by admission control run nothing and are not counted as finished.
fn assert_conservation(w: &Workload, r: &SimResult) {
    let who = &r.summary.policy;
    assert_eq!(r.summary.finished + r.summary.rejected, w.jobs.len() as u32, "{who}");
    assert!(r.jobs.iter().all(|j| j.finish_ms.is_some() != j.rejected), "{who}");
    let accepted = || w.jobs.iter().zip(&r.jobs).filter(|(_, rec)| !rec.rejected).map(|(j, _)| j);
    let work: i64 = accepted().map(SimJob::work_ms).sum();
    let busy: i64 = r.tasks.iter().map(|t| t.end_ms - t.start_ms).sum();
    assert_eq!(busy, work, "{who}");
    assert_eq!(r.summary.tasks, accepted().map(|j| (j.map_ms.len() + j.reduce_ms.len()) as u64).sum::<u64>());
    let capacity = r.config.cluster.total_slots() as f64 * r.summary.makespan_s * 1000.0;
    assert!((r.summary.utilization - work as f64 / capacity).abs() < 1e-9);
    for (j, rec) in w.jobs.iter().zip(&r.jobs).filter(|(_, rec)| !rec.rejected) {
        let mine = |ph: Phase| {
            let mut d: Vec<i64> =
                r.tasks.iter().filter(|t| t.job == rec.index && t.phase == ph).map(|t| t.end_ms - t.start_ms).collect();
            d.sort();
            d
        };
        let mut want = j.map_ms.clone();
        want.sort();
        assert_eq!(mine(Phase::Map), want);
        let mut want = j.reduce_ms.clone();
        want.sort();
        assert_eq!(mine(Phase::Reduce), want);
        // Reduces start after the job's last map (slow start 1.0).
        let last_map = r.tasks.iter().filter(|t| t.job == rec.index && t.phase == Phase::Map).map(|t| t.end_ms).max();
        for t in r.tasks.iter().filter(|t| t.job == rec.index && t.phase == Phase::Reduce) {
            assert!(Some(t.start_ms) >= last_map);
        }
        assert!(rec.start_ms >= Some(rec.arrival_ms));
    }
}

#[test]
fn every_policy_conserves_work_and_respects_capacity() {
    for pool in [PoolMode::Split, PoolMode::Shared] {
        let c = cluster(pool);
        let w = synthetic(9, 40, &c);
        for &policy in POLICY_NAMES {
            for (oob, replicas) in [(false, 0), (true, 3), (false, 2)] {
                let mut cfg = config(policy, c.clone());
                cfg.out_of_band_heartbeat = oob;
                cfg.replicas = replicas;
                let r = Simulation::new(cfg, &w).unwrap().run().unwrap();
                assert_conservation(&w, &r);
                assert_capacity(&r);
                assert!(r.summary.policy.starts_with(policy));
                let loc = r.summary.locality;
                let maps: u64 = w
                    .jobs
                    .iter()
                    .zip(&r.jobs)
                    .filter(|(_, rec)| !rec.rejected)
                    .map(|(j, _)| j.map_ms.len() as u64)
                    .sum();
                assert_eq!(loc.node + loc.rack + loc.any, maps, "{policy}");
                if policy != "rtmr" && policy != "deadline-constraint" {
                    assert_eq!(r.summary.rejected, 0, "{policy} has no admission control");
                }
            }
        }
    }
}

#[test]
fn delay_scheduling_improves_locality() {
    let c = ClusterSpec { nodes: 20, map_slots: 2, reduce_slots: 1, racks: 4, pool: PoolMode::Split };
    let w = synthetic(5, 40, &c);
    let mut cfg = config("fair", c);
    cfg.replicas = 3;
    cfg.record_tasks = false;
    cfg.engine.node_locality_delay = 0;
    cfg.engine.rack_locality_delay = 0;
    let eager = Simulation::new(cfg.clone(), &w).unwrap().run().unwrap().summary.locality;
    cfg.engine.node_locality_delay = 20;
    cfg.engine.rack_locality_delay = 10;
    let patient = Simulation::new(cfg, &w).unwrap().run().unwrap().summary.locality;
    assert!(patient.node_fraction() > eager.node_fraction(), "eager {eager:?} vs patient {patient:?}");
    assert!(eager.any > 0);
}

#[test]
fn unknown_policy_is_the_registry_error() {
    let w = two_jobs();
    let err = Simulation::new(config("lottery", one_slot_each()), &w).unwrap_err().to_string();
    assert!(err.contains("lottery") && err.contains("fifo") && err.contains("fair"), "{err}");
    let mut cfg = config("fifo", one_slot_each());
    cfg.cluster.reduce_slots = 0;
    assert!(Simulation::new(cfg, &w).unwrap_err().to_string().contains("reduce-slots"));
}

#[test]
fn tasks_see_locality_levels() {
    let c = ClusterSpec { nodes: 8, map_slots: 1, reduce_slots: 1, racks: 2, pool: PoolMode::Split };
    let w = Workload::new("one", vec![SimJob::new(0, vec![1_000; 16], vec![])]).unwrap();
    let mut cfg = config("fifo", c);
    cfg.replicas = 1;
    cfg.engine.node_locality_delay = 1_000;
    cfg.engine.rack_locality_delay = 1_000;
    let r = Simulation::new(cfg, &w).unwrap().run().unwrap();
    // With effectively unbounded patience every map runs where its only replica is.
    assert!(r.tasks.iter().all(|t| t.locality == Locality::Node));
    assert_eq!(r.summary.locality.node, 16);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]
    #[test]
    fn random_workloads_finish_within_capacity(
        seed in 0u64..1_000,
        nodes in 1u32..5,
        map_slots in 1u32..3,
        reduce_slots in 1u32..3,
        shared in any::<bool>(),
        oob in any::<bool>(),
        replicas in 0u32..3,
        fair in any::<bool>(),
        jobs in 1u32..12,
    ) {
        let pool = if shared { PoolMode::Shared } else { PoolMode::Split };
        let c = ClusterSpec { nodes, map_slots, reduce_slots, racks: 1, pool };
        let w = synthetic(seed, jobs, &c);
        let mut cfg = config(if fair { "fair" } else { "fifo" }, c);
        cfg.out_of_band_heartbeat = oob;
        cfg.replicas = replicas.min(nodes);
        cfg.seed = seed;
        let r = Simulation::new(cfg, &w).unwrap().run().unwrap();
        assert_conservation(&w, &r);
        assert_capacity(&r);
        for (j, rec) in w.jobs.iter().zip(&r.jobs) {
            // Lower bound: its longest map, then (after every map) its longest reduce.
            let bound = j.map_ms.iter().max().unwrap_or(&0) + j.reduce_ms.iter().max().unwrap_or(&0);
            prop_assert!(rec.response_ms.unwrap() >= bound);
            prop_assert!(rec.isolated_ms >= list_schedule_makespan(&j.map_ms, u32::MAX));
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]
    /// Skipping heartbeats that cannot launch anything (the default) gives exactly the jobs, tasks and
    /// locality of sending every periodic heartbeat.
    #[test]
    fn dormant_heartbeats_change_no_outcome(
        seed in 0u64..1_000,
        nodes in 1u32..9,
        map_slots in 1u32..3,
        reduce_slots in 1u32..4,
        shared in any::<bool>(),
        oob in any::<bool>(),
        replicas in 0u32..4,
        policy in prop::sample::select(vec!["fifo", "fair", "flex"]),
        heartbeat_ms in prop::sample::select(vec![700i64, 3_000]),
        jobs in 1u32..30,
    ) {
        let pool = if shared { PoolMode::Shared } else { PoolMode::Split };
        let c = ClusterSpec { nodes, map_slots, reduce_slots, racks: 1, pool };
        let w = synthetic(seed, jobs, &c);
        let mut cfg = config(policy, c);
        cfg.out_of_band_heartbeat = oob;
        cfg.replicas = replicas.min(nodes);
        cfg.heartbeat_ms = heartbeat_ms;
        cfg.seed = seed;
        let skipping = Simulation::new(cfg.clone(), &w).unwrap().run().unwrap();
        cfg.idle_heartbeats = true;
        let every = Simulation::new(cfg, &w).unwrap().run().unwrap();
        prop_assert_eq!(&skipping.jobs, &every.jobs);
        prop_assert_eq!(&skipping.tasks, &every.tasks);
        prop_assert_eq!(skipping.summary.locality, every.summary.locality);
        prop_assert!(skipping.summary.events <= every.summary.events);
    }
}

/// One node of 4 slots held by a job of 600 s maps from t = 0; two short jobs arrive at 10 s.
fn long_job_then_short_ones() -> Workload {
    let long = SimJob::new(0, vec![600_000; 8], vec![]);
    let short_a = SimJob::new(10_000, vec![5_000, 5_000], vec![1_000]);
    let short_b = SimJob::new(10_000, vec![5_000], vec![]);
    Workload::new("long then short", vec![long, short_a, short_b]).unwrap()
}

/// Preemption on (engine-decided, carried out after the grace period): the short jobs no longer wait for
/// the long job's 600 s maps; every job still finishes; no node runs over capacity at any instant; every
/// task's last run lasts exactly its duration and the earlier, killed runs are exactly the lost work the
/// summary reports. Off, the short jobs wait, as before.
#[test]
fn preemption_frees_slots_for_starved_jobs_and_loses_nothing_but_the_killed_runs() {
    let w = long_job_then_short_ones();
    for policy in ["fair", "flex"] {
        for pool in [PoolMode::Shared, PoolMode::Split] {
            let cluster = ClusterSpec { nodes: 1, map_slots: 4, reduce_slots: 1, racks: 1, pool };
            let mut cfg = config(policy, cluster);
            cfg.heartbeat_ms = 1_000;
            let off = Simulation::new(cfg.clone(), &w).unwrap().run().unwrap();
            assert_eq!(off.summary.preempted_tasks, 0);
            assert!(off.jobs[2].response_ms.unwrap() > 590_000, "{policy} {pool:?}: off, the short job waits");
            cfg.engine.preemption.enabled = true;
            cfg.engine.preemption.delay_ms = 2_000;
            cfg.engine.preemption.grace_ms = 5_000;
            cfg.engine.preemption.max_fraction = 1.0;
            if policy == "flex" {
                // A reserve of the whole pool leaves the long job one slot: the short jobs run at once on
                // the others, without a kill.
                let mut reserving = cfg.clone();
                reserving.engine.preemption.long_task_reserve = 1.0;
                let r = Simulation::new(reserving, &w).unwrap().run().unwrap();
                assert_eq!((r.summary.preempted_tasks, r.summary.finished), (0, 3), "{pool:?}");
                assert!(r.jobs[1..].iter().all(|j| j.response_ms.unwrap() < 40_000), "{pool:?}");
            }
            let on = Simulation::new(cfg, &w).unwrap().run().unwrap();
            let who = format!("{policy} {pool:?}");
            // FLEX's long-task reserve (10% of 4 slots) keeps no slot here: both policies must preempt.
            assert!(on.summary.preempted_tasks > 0, "{who}");
            assert_eq!(on.summary.finished, 3, "{who}");
            for j in &on.jobs[1..] {
                assert!(j.response_ms.unwrap() < 40_000, "{who}: short job {} took {:?}", j.index, j.response_ms);
            }
            assert_capacity(&on);
            let (killed, ran): (Vec<&TaskRecord>, Vec<&TaskRecord>) = on.tasks.iter().partition(|t| t.preempted);
            assert_eq!(killed.len() as u64, on.summary.preempted_tasks, "{who}");
            let lost: i64 = killed.iter().map(|t| t.end_ms - t.start_ms).sum();
            assert_eq!(lost as f64 / 1000.0, on.summary.preempted_lost_s, "{who}");
            let mut runs: Vec<(u32, Phase, i64)> =
                ran.iter().map(|t| (t.job, t.phase, t.end_ms - t.start_ms)).collect();
            let mut want: Vec<(u32, Phase, i64)> = Vec::new();
            for (i, j) in w.jobs.iter().enumerate() {
                want.extend(j.map_ms.iter().map(|&d| (i as u32, Phase::Map, d)));
                want.extend(j.reduce_ms.iter().map(|&d| (i as u32, Phase::Reduce, d)));
            }
            runs.sort();
            want.sort();
            assert_eq!(runs, want, "{who}: every task's completed run is exactly its duration");
            // Utilization is the slot time used: the killed runs count, they held their slots.
            let work: i64 = w.jobs.iter().map(SimJob::work_ms).sum();
            let capacity = on.config.cluster.total_slots() as f64 * on.summary.makespan_s * 1000.0;
            assert!((on.summary.utilization - (work + lost) as f64 / capacity).abs() < 1e-9, "{who}");
        }
    }
}

/// The kill lands when the host's shim makes it land ([`SimConfig::kill_timing`]). One node (its
/// heartbeat grid at multiples of 3 s), epochs every 2 s, preemption delay 2 s, grace 5 s: the short
/// jobs arrive at 10 s and are starved from the epoch at 10 s, so the engine decides at the epoch at
/// 12 s. YARN (shared pool): the kill lands after the grace, at 17 s. MRv1 (split pool): the node's
/// heartbeat at 12 s (after the epoch of its instant) carries the kill action and the one at 15 s
/// reports the KILLED attempt; the grace does not apply.
#[test]
fn a_kill_lands_after_the_grace_on_yarn_and_at_the_second_heartbeat_on_mrv1() {
    let w = long_job_then_short_ones();
    for (pool, timing, lands) in
        [(PoolMode::Shared, KillTiming::Grace, 17_000), (PoolMode::Split, KillTiming::TrackerHeartbeats, 15_000)]
    {
        let cluster = ClusterSpec { nodes: 1, map_slots: 4, reduce_slots: 1, racks: 1, pool };
        let mut cfg = config("fair", cluster);
        cfg.heartbeat_ms = 3_000;
        cfg.engine.epoch_ms = 2_000;
        cfg.engine.preemption.enabled = true;
        cfg.engine.preemption.delay_ms = 2_000;
        cfg.engine.preemption.grace_ms = 5_000;
        cfg.engine.preemption.max_fraction = 1.0;
        assert_eq!(cfg.kill_timing(), timing);
        let on = Simulation::new(cfg, &w).unwrap().run().unwrap();
        let first_kills: Vec<i64> = on.tasks.iter().filter(|t| t.preempted).map(|t| t.end_ms).collect();
        assert!(!first_kills.is_empty(), "{pool:?}: something is killed");
        assert_eq!(first_kills.iter().min(), Some(&lands), "{pool:?}: the first kill lands at {lands} ms");
        assert_capacity(&on);
    }
}

/// Replicas drawn on a second thread give the run drawn at each arrival, byte for byte, with and
/// without jobs refused at admission (a refused job draws nothing: the drawing thread's lists are
/// then dropped and the run draws inline from the generator as it was before the refused job).
#[test]
fn replicas_drawn_ahead_give_the_run_drawn_inline() {
    let mut refused = 0;
    for pool in [PoolMode::Split, PoolMode::Shared] {
        let c = cluster(pool);
        let w = synthetic(5, 60, &c);
        for policy in ["fair", "fifo", "rtmr", "deadline-constraint"] {
            for replicas in [1, 3, 6] {
                let mut cfg = config(policy, c.clone());
                cfg.replicas = replicas;
                cfg.seed = 7;
                let run = |ahead: bool| {
                    let r = Simulation::new(cfg.clone(), &w).unwrap().with_draw_ahead(ahead).run().unwrap();
                    serde_json::to_string(&r).unwrap()
                };
                let inline = run(false);
                assert_eq!(run(true), inline, "{policy}, {replicas} replicas, {pool:?}");
                refused += Simulation::new(cfg.clone(), &w).unwrap().run().unwrap().summary.rejected;
            }
        }
    }
    assert!(refused > 0, "some runs refuse jobs, so the switch to inline drawing is exercised");
}
