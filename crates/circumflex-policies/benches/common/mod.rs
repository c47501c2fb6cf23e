//! Shared workload for the benchmarks: a deterministic population of active MapReduce jobs at
//! various stages, on an MRv1-like cluster (split map and reduce pools).

#![allow(dead_code)]

pub mod cpu;
pub mod flows;

use circumflex_core::baseline::{fair::Fair, fifo::Fifo};
use circumflex_core::model::{JobId, JobSpec, JobState, SlaStep};
use circumflex_core::policy::{ClusterView, Policy, PoolMode, Snapshot};
use circumflex_policies::flex::metrics::Objective;
use circumflex_policies::flex::FlexPolicy;

/// Nodes of the benchmark cluster, with 8 map and 4 reduce slots each (4000 map, 2000 reduce).
pub const NODES: u32 = 500;
/// Map slots per node.
pub const MAP_SLOTS: u32 = 8;
/// Reduce slots per node.
pub const REDUCE_SLOTS: u32 = 4;

/// The cluster as policies see it.
pub fn cluster() -> ClusterView {
    ClusterView {
        map_slots: NODES * MAP_SLOTS,
        reduce_slots: NODES * REDUCE_SLOTS,
        mode: PoolMode::Split,
        nodes: NODES,
    }
}

/// xorshift64*: a tiny deterministic generator, so the benchmark needs no RNG crate.
pub struct Rng(u64);

impl Rng {
    /// Seeded generator (seed 0 is mapped to a fixed non-zero state).
    pub fn new(seed: u64) -> Rng {
        Rng(seed.max(1).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    /// Next 64 random bits.
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// Uniform in `lo..hi`.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next() % (hi - lo).max(1)
    }
}

/// Job specs of `n` jobs submitted over the last `n` seconds before `now`, heavy-tailed sizes
/// (most jobs small, a few with thousands of maps), random weights, minima, maxima, deadlines
/// and SLA steps.
pub fn specs(n: usize, now: i64, seed: u64) -> Vec<JobSpec> {
    let mut rng = Rng::new(seed);
    (0..n)
        .map(|i| {
            let submit = now - (n - i) as i64 * 1000;
            let size_class = rng.range(0, 100);
            let maps = match size_class {
                0..=59 => rng.range(1, 10),
                60..=89 => rng.range(10, 200),
                _ => rng.range(200, 3000),
            } as u32;
            let reduces = (maps / 10).min(rng.range(0, 30) as u32);
            let mut s = JobSpec::new(submit.max(0), maps, reduces)
                .with_task_ms(rng.range(1_000, 60_000) as i64, rng.range(5_000, 120_000) as i64);
            s.weight = rng.range(1, 6) as f64;
            s.min_slots = rng.range(0, 3) as u32;
            if rng.range(0, 4) == 0 {
                s.max_slots = Some(rng.range(s.min_slots.max(1) as u64, 100) as u32);
            }
            if rng.range(0, 2) == 0 {
                s.deadline_ms = Some(s.submit_ms + rng.range(60_000, 3_600_000) as i64);
            }
            if rng.range(0, 3) == 0 {
                let d = s.submit_ms + rng.range(60_000, 1_800_000) as i64;
                s.sla =
                    vec![SlaStep { deadline_ms: d, penalty: 1.0 }, SlaStep { deadline_ms: d + 600_000, penalty: 5.0 }];
            }
            s
        })
        .collect()
}

/// Advances job `j` to a random stage: some maps done or running, for some all maps done and
/// reduces under way. Keeps the counters consistent (pending + running + finished = total).
pub fn progress(j: &mut JobState, rng: &mut Rng) {
    let maps = j.phases[0].total;
    let stage = rng.range(0, 10);
    let (done, running) = match stage {
        0..=3 => (0, 0),
        4..=7 => {
            let d = rng.range(0, maps as u64) as u32;
            (d, rng.range(0, (maps - d) as u64 + 1).min(50) as u32)
        }
        _ => (maps, 0),
    };
    let p = &mut j.phases[0];
    p.finished = done;
    p.running = running;
    p.pending = maps - done - running;
    p.observed_ms_sum = done as i64 * 20_000;
    if done == maps && j.phases[1].total > 0 {
        let r = &mut j.phases[1];
        let rdone = rng.range(0, r.total as u64) as u32;
        let rrun = rng.range(0, (r.total - rdone) as u64 + 1) as u32;
        r.finished = rdone;
        r.running = rrun;
        r.pending = r.total - rdone - rrun;
    }
}

/// `n` active jobs with ids `0..n`, at various stages.
pub fn jobs(n: usize, now: i64, seed: u64) -> Vec<JobState> {
    let mut rng = Rng::new(seed ^ 0xABCD);
    specs(n, now, seed)
        .into_iter()
        .enumerate()
        .map(|(i, s)| {
            let mut j = JobState::new(JobId(i as u32), s);
            progress(&mut j, &mut rng);
            j
        })
        .collect()
}

/// Every 50th job of `jobs` with one task more finished (or started, if none runs): an epoch.
pub fn one_epoch_later(jobs: &[JobState]) -> (Vec<JobState>, Vec<JobId>) {
    let mut later = jobs.to_vec();
    let mut changed = Vec::new();
    for j in later.iter_mut().step_by(50) {
        let ph = if j.phases[0].running + j.phases[0].pending > 0 { 0 } else { 1 };
        let p = &mut j.phases[ph];
        if p.running > 0 {
            p.running -= 1;
            p.finished += 1;
        } else if p.pending > 0 {
            p.pending -= 1;
            p.running += 1;
        }
        changed.push(j.id);
    }
    (later, changed)
}

/// The policies the incremental re-plan cases time (`plan.rs` `replan/*`, `plan_cpu.rs`), by case name.
pub const REPLAN_POLICIES: [&str; 4] = ["fifo", "fair", "flex_avg_response_time", "flex_max_stretch"];

/// A fresh policy for a name of [`REPLAN_POLICIES`] or `flex_<objective>` for any FLEX objective
/// ([`flex_names`]; an unknown name is FLEX max_stretch).
pub fn replan_policy(name: &str) -> Box<dyn Policy> {
    match name {
        "fifo" => Box::new(Fifo::default()),
        "fair" => Box::new(Fair::default()),
        _ => {
            let objective = name.strip_prefix("flex_").and_then(|o| Objective::parse(o).ok());
            Box::new(FlexPolicy::new(objective.unwrap_or(Objective::MaxStretch)))
        }
    }
}

/// `flex_<objective>` for every FLEX objective not among [`REPLAN_POLICIES`] (issue 20's target is
/// for every objective; `plan_cpu` times them with `CIRCUMFLEX_ALL_OBJECTIVES=1`).
pub fn flex_names() -> Vec<String> {
    Objective::ALL.iter().map(|o| format!("flex_{o}")).filter(|n| !REPLAN_POLICIES.contains(&n.as_str())).collect()
}

/// The incremental re-plan cases (`docs/performance.md` §7): `n` jobs at `now`, the same jobs one
/// epoch later, and the snapshots a policy alternates between.
pub struct Replans {
    now: i64,
    jobs: Vec<JobState>,
    later: Vec<JobState>,
    changed: Vec<JobId>,
    active: Vec<JobId>,
}

impl Replans {
    /// The cases for `n` (at least 1) jobs of seed 7 at `now`.
    pub fn new(n: usize, now: i64) -> Replans {
        let jobs = jobs(n, now, 7);
        let (later, changed) = one_epoch_later(&jobs);
        let active = jobs.iter().map(|j| j.id).collect();
        Replans { now, jobs, later, changed, active }
    }

    /// Two snapshots one epoch apart (every 50th job has a task more finished or started), each
    /// naming the changed jobs.
    pub fn epochs(&self) -> [Snapshot<'_>; 2] {
        [
            Snapshot::new(self.now, cluster(), &self.jobs, &self.active).with_changes(&self.changed),
            Snapshot::new(self.now + 2_000, cluster(), &self.later, &self.active).with_changes(&self.changed),
        ]
    }

    /// The last job leaves (the jobs vector still holds it, but it is not active) and comes back.
    pub fn arrivals(&self) -> [Snapshot<'_>; 2] {
        let (all_but_last, last) = self.active.split_at(self.active.len() - 1);
        [
            Snapshot::new(self.now, cluster(), &self.jobs, &self.active).with_changes(last),
            Snapshot::new(self.now, cluster(), &self.jobs, all_but_last).with_changes(&[]),
        ]
    }
}
