//! Tests of the lower bounds: hand-computed cases, exhaustive search of every non-preemptive schedule of
//! small instances (the bound never exceeds the optimum), and the simulator's own runs (the bound never
//! exceeds what any policy measured).

use proptest::prelude::*;

use super::*;
use crate::sim::{SimConfig, Simulation};

fn cluster(map_slots: u32, reduce_slots: u32, pool: PoolMode) -> ClusterSpec {
    ClusterSpec { nodes: 1, map_slots, reduce_slots, racks: 1, pool }
}

fn workload(jobs: Vec<SimJob>) -> Workload {
    Workload::new("bound-test", jobs).expect("valid test workload")
}

/// One map of 10 on one slot: the bound is the job itself.
#[test]
fn single_job_bounds_are_its_isolated_time() {
    let c = cluster(1, 1, PoolMode::Split);
    let w = workload(vec![SimJob::new(0, vec![10_000], vec![4_000])]);
    let b = lower_bounds(&w, &c);
    assert!((b.mean_response_s - 14.0).abs() < 1e-9);
    assert!((b.max_stretch - 1.0).abs() < 1e-9);
    assert!((b.mean_stretch - 1.0).abs() < 1e-9);
}

/// Two one-map jobs of 10 s arriving together on one slot: one waits 10 s. SRPT gives 10 + 20.
#[test]
fn queueing_is_counted_by_the_fluid_bound() {
    let c = cluster(1, 1, PoolMode::Split);
    let w = workload(vec![SimJob::new(0, vec![10_000], vec![]), SimJob::new(0, vec![10_000], vec![])]);
    let b = lower_bounds(&w, &c);
    assert!((b.mean_response_s - 15.0).abs() < 1e-9, "{b:?}");
    assert!((b.mean_alone_s - 10.0).abs() < 1e-9);
    // Both by 10 × S: S = 2 exactly is feasible, anything less is not.
    assert!((b.max_stretch - 2.0).abs() < 1e-6, "{b:?}");
    // WSPT mean busy times 5 and 15, plus p/2 = 5 each: (10 + 20) / 10 / 2.
    assert!((b.mean_stretch - 1.5).abs() < 1e-9, "{b:?}");
}

/// Reduces wait for the maps: a job alone is map phase + reduce phase, not their max.
#[test]
fn reduces_follow_maps() {
    let c = cluster(2, 1, PoolMode::Shared);
    let w = workload(vec![SimJob::new(0, vec![3_000, 3_000, 3_000], vec![2_000])]);
    let b = lower_bounds(&w, &c);
    // 3 slots: maps 3 s, reduce 2 s.
    assert!((b.mean_alone_s - 5.0).abs() < 1e-9, "{b:?}");
}

/// An empty workload has zero bounds (not NaN).
#[test]
fn empty_workload() {
    let b = lower_bounds(&workload(vec![]), &cluster(1, 1, PoolMode::Split));
    assert_eq!((b.jobs, b.mean_response_s, b.max_stretch, b.mean_stretch), (0, 0.0, 0.0, 0.0));
}

// ----- brute force ---------------------------------------------------------------------------------

/// A task in the exhaustive search: `(job, is_reduce, duration)`.
type Task = (usize, bool, Time);

/// The best of the jobs still unfinished from a state on: Σ response, Σ stretch, max stretch, each
/// minimised on its own over every continuation.
type Best = (Time, f64, f64);

/// Exhaustive search over every non-preemptive schedule (integer data): at every release and completion
/// instant, every set of available tasks may start. Starting tasks only at such instants loses nothing: a
/// task started between two of them could have started at the earlier one (its slot was free and it was
/// available then), which ends no job later. States are memoised (the future does not depend on the past
/// beyond the state), and identical tasks of one job are started in one canonical way.
struct Search<'a> {
    jobs: &'a [SimJob],
    iso: Vec<f64>,
    /// Slots per pool: split `[map, reduce]`, shared `[all, 0]`.
    slots: [u32; 2],
    shared: bool,
    memo: std::collections::HashMap<State, Best>,
}

#[derive(Clone, PartialEq, Eq, Hash)]
struct State {
    t: Time,
    /// Sorted.
    pending: Vec<Task>,
    /// Sorted `(end, task)`.
    running: Vec<(Time, Task)>,
    maps_left: Vec<usize>,
    tasks_left: Vec<usize>,
}

impl Search<'_> {
    fn pool(&self, reduce: bool) -> usize {
        usize::from(reduce && !self.shared)
    }

    fn run(&mut self, s: &State) -> Best {
        if s.tasks_left.iter().all(|&n| n == 0) {
            return (0, 0.0, 0.0);
        }
        if let Some(&b) = self.memo.get(s) {
            return b;
        }
        let available: Vec<usize> = (0..s.pending.len())
            .filter(|&k| {
                let (j, reduce, _) = s.pending[k];
                self.jobs[j].spec.submit_ms <= s.t && (!reduce || s.maps_left[j] == 0)
            })
            .collect();
        let mut free = self.slots;
        for &(_, (_, reduce, _)) in &s.running {
            free[self.pool(reduce)] -= 1;
        }
        let mut best: Best = (Time::MAX, f64::INFINITY, f64::INFINITY);
        let mut seen = std::collections::HashSet::new();
        for mask in 0u32..(1 << available.len()) {
            let chosen: Vec<usize> =
                (0..available.len()).filter(|b| mask & (1 << b) != 0).map(|b| available[b]).collect();
            let mut need = [0u32; 2];
            for &k in &chosen {
                need[self.pool(s.pending[k].1)] += 1;
            }
            if need[0] > free[0] || need[1] > free[1] {
                continue;
            }
            // Identical tasks: one canonical choice per multiset.
            let tuples: Vec<Task> = chosen.iter().map(|&k| s.pending[k]).collect();
            if !seen.insert(tuples) {
                continue;
            }
            let mut n = s.clone();
            for &k in chosen.iter().rev() {
                let task = n.pending.remove(k);
                n.running.push((s.t + task.2, task));
            }
            let next_done = n.running.iter().map(|r| r.0).min();
            let next_release = self.jobs.iter().map(|j| j.spec.submit_ms).filter(|&r| r > s.t).min();
            let Some(next) = [next_done, next_release].into_iter().flatten().min() else { continue };
            n.t = next;
            let (done, still): (Vec<_>, Vec<_>) = n.running.into_iter().partition(|r| r.0 <= next);
            n.running = still;
            n.running.sort_unstable();
            let mut now: Best = (0, 0.0, 0.0);
            for (_, (j, reduce, _)) in done {
                if !reduce {
                    n.maps_left[j] -= 1;
                }
                n.tasks_left[j] -= 1;
                if n.tasks_left[j] == 0 {
                    let resp = next - self.jobs[j].spec.submit_ms;
                    let stretch = resp as f64 / self.iso[j];
                    now = (now.0 + resp, now.1 + stretch, now.2.max(stretch));
                }
            }
            let future = self.run(&n);
            best.0 = best.0.min(now.0.saturating_add(future.0));
            best.1 = best.1.min(now.1 + future.1);
            best.2 = best.2.min(now.2.max(future.2));
        }
        self.memo.insert(s.clone(), best);
        best
    }
}

/// Mean response time (s), mean stretch and max stretch of the best non-preemptive schedules.
fn brute_force(jobs: &[SimJob], c: &ClusterSpec) -> (f64, f64, f64) {
    let mut pending = Vec::new();
    for (j, job) in jobs.iter().enumerate() {
        pending.extend(job.map_ms.iter().map(|&d| (j, false, d)));
        pending.extend(job.reduce_ms.iter().map(|&d| (j, true, d)));
    }
    pending.sort_unstable();
    let shared = c.pool == PoolMode::Shared;
    let slots = if shared { [c.map_slots + c.reduce_slots, 0] } else { [c.map_slots, c.reduce_slots] };
    let mut search = Search {
        jobs,
        iso: jobs.iter().map(|j| isolated_time(j, c) as f64).collect(),
        slots,
        shared,
        memo: std::collections::HashMap::new(),
    };
    let state = State {
        t: jobs.iter().map(|j| j.spec.submit_ms).min().unwrap_or(0),
        pending,
        running: Vec::new(),
        maps_left: jobs.iter().map(|j| j.map_ms.len()).collect(),
        tasks_left: jobs.iter().map(|j| j.map_ms.len() + j.reduce_ms.len()).collect(),
    };
    let (sum, sum_stretch, max_stretch) = search.run(&state);
    let n = jobs.len() as f64;
    (sum as f64 / n / 1000.0, sum_stretch / n, max_stretch)
}

fn small_job() -> impl Strategy<Value = SimJob> {
    // Unit-ish tasks (1..3 s), arrivals 0..3 s, 1..2 maps and 0..2 reduces.
    (0i64..4, prop::collection::vec(1i64..4, 1..3), prop::collection::vec(1i64..4, 0..3)).prop_map(|(r, m, d)| {
        SimJob::new(r * 1_000, m.into_iter().map(|x| x * 1_000).collect(), d.into_iter().map(|x| x * 1_000).collect())
    })
}

/// Counts of the brute-force comparison, for the summary the test prints.
#[derive(Default)]
struct Tally {
    cases: u32,
    tight_mean: u32,
    tight_max: u32,
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]
    /// Every bound is at most the best non-preemptive schedule (exhaustive search), on 1..3 slots.
    #[test]
    fn bounds_never_exceed_the_optimum(
        jobs in prop::collection::vec(small_job(), 1..4),
        map_slots in 1u32..3,
        reduce_slots in 1u32..3,
        shared in any::<bool>(),
    ) {
        // Shared: 1..=3 slots in all; split: 1..=2 map + 1 reduce slot.
        let c = if shared {
            cluster(map_slots + reduce_slots - 1, 0, PoolMode::Shared)
        } else {
            cluster(map_slots, reduce_slots, PoolMode::Split)
        };
        let w = workload(jobs);
        let b = lower_bounds(&w, &c);
        let (mean, mean_stretch, max_stretch) = brute_force(&w.jobs, &c);
        prop_assert!(b.mean_response_s <= mean + 1e-9, "mean response bound {} > optimum {mean}", b.mean_response_s);
        prop_assert!(b.mean_stretch <= mean_stretch + 1e-9, "mean stretch bound {} > optimum {mean_stretch}", b.mean_stretch);
        prop_assert!(b.max_stretch <= max_stretch + 1e-9, "max stretch bound {} > optimum {max_stretch}", b.max_stretch);
    }
}

/// The same comparison over a fixed set of instances, printing how often each bound is tight (the
/// brute-force summary quoted in docs/lower-bounds.md; `cargo test -p circumflex-sim --lib sim::bound -- --nocapture`).
#[test]
fn brute_force_summary() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::{Config, TestRunner};
    let mut runner = TestRunner::new_with_rng(
        Config::default(),
        proptest::test_runner::TestRng::deterministic_rng(proptest::test_runner::RngAlgorithm::ChaCha),
    );
    let strategy = (prop::collection::vec(small_job(), 1..4), 1u32..3, any::<bool>());
    let mut tally = Tally::default();
    let (mut gap_mean, mut gap_max) = (0.0f64, 0.0f64);
    for _ in 0..200 {
        let Ok(tree) = strategy.new_tree(&mut runner) else { continue };
        let (jobs, slots, shared) = tree.current();
        let c = if shared { cluster(slots, 0, PoolMode::Shared) } else { cluster(slots, 1, PoolMode::Split) };
        let w = workload(jobs);
        let b = lower_bounds(&w, &c);
        let (mean, _, max_stretch) = brute_force(&w.jobs, &c);
        assert!(b.mean_response_s <= mean + 1e-9 && b.max_stretch <= max_stretch + 1e-9);
        tally.cases += 1;
        tally.tight_mean += u32::from(b.mean_response_s >= mean - 1e-9);
        tally.tight_max += u32::from(b.max_stretch >= max_stretch - 1e-6);
        gap_mean = gap_mean.max(mean / b.mean_response_s);
        gap_max = gap_max.max(max_stretch / b.max_stretch);
    }
    assert!(tally.cases >= 150);
    println!(
        "brute force: {} instances; mean response bound = optimum in {}, max stretch bound = optimum in {}; \
         worst optimum/bound {:.3} (mean response), {:.3} (max stretch)",
        tally.cases, tally.tight_mean, tally.tight_max, gap_mean, gap_max
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]
    /// No policy run by the simulator (heartbeats, locality, delay scheduling and all) beats the bounds.
    #[test]
    fn simulated_runs_respect_the_bounds(
        seed in 0u64..1_000,
        nodes in 1u32..4,
        map_slots in 1u32..3,
        reduce_slots in 1u32..3,
        shared in any::<bool>(),
        policy in prop::sample::select(vec!["fifo", "fair", "flex", "asrpt"]),
        jobs in 1u32..20,
    ) {
        let pool = if shared { PoolMode::Shared } else { PoolMode::Split };
        let c = ClusterSpec { nodes, map_slots, reduce_slots, racks: 1, pool };
        let spec = crate::sim::SyntheticSpec {
            jobs,
            mean_interarrival_ms: 3_000.0,
            maps: crate::sim::workload::Dist::Zipf { n: 20.0, s: 1.0 },
            reduces: crate::sim::workload::Dist::Uniform { lo: 0.0, hi: 4.0 },
            ..crate::sim::SyntheticSpec::default()
        };
        let w = spec.generate(&mut crate::sim::workload_rng(seed), &c).expect("synthetic workload");
        let mut cfg = SimConfig { cluster: c.clone(), seed, heartbeat_ms: 500, ..SimConfig::default() };
        cfg.replicas = cfg.replicas.min(nodes);
        cfg.engine.policy = policy.into();
        let r = Simulation::new(cfg, &w).expect("config").run().expect("run");
        let b = lower_bounds(&w, &c);
        let s = &r.summary;
        prop_assert!(b.mean_response_s <= s.mean_response_s + 1e-9, "{b:?} vs {s:?}");
        prop_assert!(b.mean_stretch <= s.mean_stretch + 1e-9, "{b:?} vs {s:?}");
        prop_assert!(b.max_stretch <= s.max_stretch + 1e-9, "{b:?} vs {s:?}");
    }
}
