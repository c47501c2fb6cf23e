//! The YARN mechanics of the simulator (`YarnModel`): AM containers with their start-up, container
//! launch latency, the AM orders and the engine's AM gate.

use proptest::prelude::*;

use super::*;
use circumflex_core::model::Phase;

fn shared(slots: u32) -> ClusterSpec {
    ClusterSpec { nodes: 1, map_slots: slots, reduce_slots: 0, racks: 1, pool: PoolMode::Shared }
}

fn config(policy: &str, slots: u32, yarn: YarnModel) -> SimConfig {
    let mut c = SimConfig { cluster: shared(slots), replicas: 0, record_tasks: true, yarn, ..SimConfig::default() };
    c.engine.policy = policy.into();
    c.heartbeat_ms = 100;
    c.engine.epoch_ms = 1_000;
    c
}

fn yarn(am_slots: u32, am_startup_ms: Time, launch_ms: Time, am_order: AmOrder) -> YarnModel {
    YarnModel { am_slots, am_startup_ms, launch_ms, am_order, ..YarnModel::default() }
}

fn gate_on(c: &mut SimConfig, share: f64) {
    c.engine.am.enabled = true;
    c.engine.am.max_share = share;
}

fn run(c: SimConfig, w: &Workload) -> SimResult {
    Simulation::new(c, w).unwrap().run().unwrap()
}

/// One job of one 1 s map arriving at 0, on a heartbeat grid of 100 ms: its AM starts at 0, asks at
/// 5 s; the map is launched at 5 s and holds its slot 2 s before its 1 s of work: done at 8 s.
#[test]
fn a_job_waits_for_its_am_start_up_and_each_task_for_its_launch() {
    let w = Workload::new("one", vec![SimJob::new(0, vec![1_000], vec![])]).unwrap();
    let r = run(config("fifo", 4, yarn(2, 5_000, 2_000, AmOrder::Eager)), &w);
    assert_eq!(r.jobs[0].finish_ms, Some(8_000));
    assert_eq!((r.tasks[0].start_ms, r.tasks[0].end_ms), (5_000, 8_000));
    let off = run(config("fifo", 4, YarnModel::default()), &w);
    assert_eq!(off.jobs[0].finish_ms, Some(1_000), "without the model: at once");
}

/// Start-up contention on a host of 2 cores: the AM starts alone (1 s), then the job's 4 launches
/// begin together at 1 s and take 2, 2, 3 and 4 s (`base · max(1, n / 2)`); without the model each
/// takes 2 s. A start-up that begins after the others ended is uncontended again.
#[test]
fn overlapping_start_ups_on_a_host_stretch_each_other() {
    let w =
        Workload::new("four", vec![SimJob::new(0, vec![1_000; 4], vec![]), SimJob::new(20_000, vec![1_000], vec![])])
            .unwrap();
    let contended = YarnModel { host_cores: 2, nodes_per_host: 1, ..yarn(2, 1_000, 2_000, AmOrder::Eager) };
    let r = run(config("fifo", 8, contended), &w);
    let mut ends: Vec<Time> = r.tasks.iter().filter(|t| t.job == 0).map(|t| t.end_ms).collect();
    ends.sort_unstable();
    assert_eq!(ends, vec![4_000, 4_000, 5_000, 6_000]);
    let late = r.tasks.iter().find(|t| t.job == 1).unwrap();
    assert_eq!(late.end_ms - 20_000, 1_000 + 2_000 + 1_000, "alone: AM 1 s, launch 2 s, work 1 s");
    let fixed = run(config("fifo", 8, yarn(2, 1_000, 2_000, AmOrder::Eager)), &w);
    assert!(fixed.tasks.iter().filter(|t| t.job == 0).all(|t| t.end_ms == 4_000), "{:?}", fixed.tasks);
}

/// Hosts group consecutive nodes: two nodes on one host of 1 core contend, one node per host do not.
#[test]
fn only_start_ups_on_the_same_host_contend() {
    let w =
        Workload::new("two", vec![SimJob::new(0, vec![1_000], vec![]), SimJob::new(0, vec![1_000], vec![])]).unwrap();
    let cluster = ClusterSpec { nodes: 2, map_slots: 3, reduce_slots: 0, racks: 1, pool: PoolMode::Shared };
    let ams_ready = |nodes_per_host: u32| {
        let y = YarnModel { host_cores: 1, nodes_per_host, ..yarn(2, 4_000, 0, AmOrder::Eager) };
        let r = run(SimConfig { cluster: cluster.clone(), ..config("fifo", 3, y) }, &w);
        let mut first: Vec<Time> = r.tasks.iter().map(|t| t.start_ms).collect();
        first.sort_unstable();
        first
    };
    let separate = ams_ready(1);
    let shared = ams_ready(2);
    assert!(separate[1] < 5_000, "each AM alone on its host: {separate:?}");
    assert!(shared[1] >= 8_000, "the second AM shares the core with the first: {shared:?}");
}

/// Off is byte-identical: an explicit all-zero model is the default, and it is not serialized.
#[test]
fn the_model_off_changes_nothing_and_is_not_serialized() {
    let w = Workload::new(
        "two",
        vec![SimJob::new(0, vec![1_000, 1_500], vec![700]), SimJob::new(300, vec![400; 3], vec![])],
    )
    .unwrap();
    let base = config("fair", 3, YarnModel::default());
    let a = run(base.clone(), &w);
    let b = run(SimConfig { yarn: yarn(0, 7_000, 0, AmOrder::Queue), ..base }, &w);
    assert_eq!(a.jobs, b.jobs);
    let json = serde_json::to_string(&a.config).unwrap();
    assert!(!json.contains("yarn") && !json.contains("\"am\""), "{json}");
}

/// 6 slots, AMs of 2: the first job's 8 maps run 4 at a time from 1 s. The second job arrives at
/// 1.5 s. Eager: its AM takes 2 slots as soon as maps end (11 s), so the first job's next wave is 2
/// wide. Queue (the CapacityScheduler): the first job's pending maps go first.
#[test]
fn eager_ams_take_task_capacity_that_a_queue_leaves_to_earlier_jobs() {
    let w =
        Workload::new("ams", vec![SimJob::new(0, vec![10_000; 8], vec![]), SimJob::new(1_500, vec![10_000], vec![])])
            .unwrap();
    let eager = run(config("fifo", 6, yarn(2, 1_000, 0, AmOrder::Eager)), &w);
    let queue = run(config("fifo", 6, yarn(2, 1_000, 0, AmOrder::Queue)), &w);
    let first_starts = |r: &SimResult| {
        let mut s: Vec<Time> = r.tasks.iter().filter(|t| t.job == 0).map(|t| t.start_ms).collect();
        s.sort_unstable();
        s
    };
    assert_eq!(first_starts(&eager), vec![1_000, 1_000, 1_000, 1_000, 11_000, 11_000, 21_000, 21_000]);
    assert_eq!(first_starts(&queue), vec![1_000, 1_000, 1_000, 1_000, 11_000, 11_000, 11_000, 11_000]);
    assert!(queue.jobs[0].finish_ms < eager.jobs[0].finish_ms);
}

/// With the gate on, AMs start in the plan's order (FLEX: the small job first, though it arrived last)
/// within the share, and the small job's tasks are not waiting behind an AM the plan ranks lower.
#[test]
fn the_gate_starts_ams_in_plan_order_within_the_share() {
    let w = Workload::new(
        "gate",
        vec![
            SimJob::new(0, vec![20_000; 8], vec![]),
            SimJob::new(0, vec![20_000; 6], vec![]),
            SimJob::new(0, vec![2_000], vec![]),
        ],
    )
    .unwrap();
    // 10 slots, share 0.25: 2 slots of AMs, one AM of 2 at a time after the first.
    let mut c = config("flex", 10, yarn(2, 1_000, 0, AmOrder::Eager));
    gate_on(&mut c, 0.25);
    let r = run(c, &w);
    let first = |job: u32| r.tasks.iter().filter(|t| t.job == job).map(|t| t.start_ms).min().unwrap();
    assert!(first(2) < first(1) && first(2) < first(0), "the small job's AM went first: {:?}", r.tasks);
    assert!(r.jobs.iter().all(|j| j.finish_ms.is_some()));
}

/// Without an AM limit, three AMs of 2 slots fill a 6-slot node and no task can ever start (YARN's
/// AM deadlock): the run ends with an error naming the missing bound, for every policy and AM order,
/// instead of epochs forever; the gate at half the node runs the same jobs to the end.
#[test]
fn ams_that_fill_the_node_stall_the_run_with_an_error_naming_the_am_bound() {
    let w = Workload::new("full", (0..3).map(|i| SimJob::new(i * 100, vec![1_000; 2], vec![])).collect()).unwrap();
    for policy in ["fifo", "fair", "flex"] {
        for order in [AmOrder::Eager, AmOrder::Queue] {
            let c = config(policy, 6, yarn(2, 1_000, 0, order));
            let err = Simulation::new(c.clone(), &w).unwrap().run().unwrap_err().to_string();
            assert!(err.contains("circumflex.am.admission.enabled"), "{policy} {order:?}: {err}");
            assert!(err.contains("6 of 6 slots held by AM containers"), "{policy} {order:?}: {err}");
            let mut gated = c;
            gate_on(&mut gated, 0.5);
            let r = run(gated, &w);
            assert!(r.jobs.iter().all(|j| j.finish_ms.is_some()), "{policy} {order:?}: the gate runs every job");
        }
    }
}

proptest! {
    /// Whatever the jobs: with the gate (at any share, with or without a bound on starting AMs) on a
    /// node whose AMs could fill it many times over, and without it on a node sized for every AM (as the
    /// mini clusters are: without the gate, AMs that fill a node deadlock it), start-ups contended or
    /// not, every job finishes. No job runs a task before its AM started and asked,
    /// and AMs plus tasks never exceed the node.
    #[test]
    fn ams_never_deadlock_and_tasks_wait_for_their_am(
        jobs in proptest::collection::vec((0i64..20_000, 1usize..5, 0usize..2, 500i64..5_000), 1..12),
        slots in 3u32..9,
        am_slots in 1u32..3,
        startup in 0i64..3_000,
        launch in 0i64..1_000,
        order in prop_oneof![Just(AmOrder::Eager), Just(AmOrder::Queue)],
        gate in proptest::option::of(0.05f64..0.9),
        max_starting in 0u32..3,
        host_cores in 0u32..3,
        policy in prop_oneof![Just("fifo"), Just("fair"), Just("flex")],
    ) {
        prop_assume!(am_slots < slots);
        let slots = if gate.is_some() { slots } else { slots + am_slots * jobs.len() as u32 };
        let w = Workload::new(
            "p",
            jobs.iter().map(|&(at, m, r, ms)| SimJob::new(at, vec![ms; m], vec![ms / 2; r])).collect(),
        )
        .unwrap();
        let mut c = config(policy, slots, YarnModel { host_cores, ..yarn(am_slots, startup, launch, order) });
        if let Some(share) = gate {
            gate_on(&mut c, share);
            c.engine.am.max_starting_per_node = max_starting;
        }
        let r = run(c, &w);
        for (i, j) in r.jobs.iter().enumerate() {
            prop_assert!(j.finish_ms.is_some(), "job {i} never finished");
            let first = r.tasks.iter().filter(|t| t.job == i as u32).map(|t| t.start_ms).min().unwrap();
            prop_assert!(first >= j.arrival_ms + startup, "job {i} ran a task at {first} before its AM asked");
        }
        // Tasks alone never exceed the node less one AM (every job holds an AM while its tasks run).
        let mut edges: Vec<(Time, i32)> = r.tasks.iter().flat_map(|t| [(t.start_ms, 1), (t.end_ms, -1)]).collect();
        edges.sort_unstable_by_key(|&(t, d)| (t, d));
        let mut running = 0;
        for (_, d) in edges {
            running += d;
            prop_assert!(running as u32 <= slots - am_slots);
        }
        prop_assert!(r.tasks.iter().all(|t| t.phase == Phase::Map || t.phase == Phase::Reduce));
    }
}

/// An AM that does not fit reserves the node (as the shim's `AmPlacement` does): the next slots that
/// free go to it, not back to the running job's waiting tasks. Without the reservation a 2-slot AM
/// would need two slots free at one heartbeat, which a wide job whose tasks end 300 ms apart never
/// leaves (heartbeats every 100 ms), and the short job would wait for the wide job's last wave.
#[test]
fn an_am_that_does_not_fit_reserves_the_node_and_is_placed_as_slots_free() {
    let wide: Vec<Time> = (0..50).map(|k| 1_000 + 300 * (k % 4)).collect();
    let w =
        Workload::new("reserve", vec![SimJob::new(0, wide, vec![]), SimJob::new(3_000, vec![500], vec![])]).unwrap();
    for gate in [false, true] {
        let mut c = config("fair", 6, yarn(2, 1_000, 0, AmOrder::Eager));
        if gate {
            gate_on(&mut c, 1.0);
        }
        let r = run(c, &w);
        let (wide_end, short_end) = (r.jobs[0].finish_ms.unwrap(), r.jobs[1].finish_ms.unwrap());
        assert!(wide_end > 12_000, "the wide job runs 50 tasks on at most 4 slots: {wide_end}");
        // Arrival 3 s, two frees (each within 2 s), start-up 1 s, a free
        // slot for its task (2 s), work 0.5 s.
        assert!(short_end < 3_000 + 2 * 2_000 + 1_000 + 2_000 + 500, "gate {gate}: the short job ends at {short_end}");
    }
}
