//! Lower bounds on what any schedule can achieve for a workload on a cluster, as the simulator models
//! them: mean response time, mean stretch and max stretch. Every result can then say how far it is
//! from optimal (`circumflex sweep` prints the ratio of each run to these bounds).
//!
//! **The model the bounds hold for.** Job `j` arrives at `r_j` with map tasks and reduce tasks of known
//! durations; a task runs on one slot, without interruption, for its duration (a task killed and run again
//! only adds work); reduces start only after `reduce_slowstart × maps` maps have finished (all of them at
//! the default 1.0); a job finishes with its last task. Slots: `split` pools give `P_M` map and `P_R`
//! reduce slots, `shared` one pool of `P` slots for both phases. The simulator adds heartbeat granularity,
//! delay scheduling and locality, all of which can only make a job later, so they are left out: a bound
//! for the relaxed model holds for what the simulator measures. A map may run faster on an accelerated
//! node (`accel_speedup`); each map counts here at its fastest duration. Stretch divides by the
//! simulator's own isolated time ([`isolated_time`]), so the stretch bounds are bounds on the measured
//! stretch. Jobs rejected by admission control are outside the model (the bounds assume every job runs).
//!
//! **Per-job bound `L_j`.** With `A_j = max(longest map, map work / P_M)` and `B_j` likewise for the
//! reduces (a phase cannot end before its longest task, nor before its work spread over every slot of its
//! pool), any schedule has `C_j − r_j ≥ L_j = A_j + B_j` (reduces start after the last map; with slow
//! start below 1, `max(A_j, m_j + B_j)` where `m_j` is the shortest map if any map must finish first).
//!
//! **Fluid relaxations.** Take one pool of `P` slots and give each job a release `ρ_j`, a work `w_j` (slot
//! time it needs in that pool) and a tail `τ_j` (time it needs after that work is done). Any real schedule,
//! read as the rate at which each job's work is processed (at most `P` in total at any instant), is a
//! schedule of a single machine of speed `P` that may split its speed among jobs. Three relaxations are
//! used: maps (`ρ_j = r_j`, map work, `P = P_M`, `τ_j = B_j` at slow start 1 else 0), reduces
//! (`ρ_j = r_j + A_j` at slow start 1, reduce work, `P = P_R`, `τ_j = 0`; a job without reduces is done at
//! its release), and all work (`ρ_j = r_j`, all work, `P` = every slot of the cluster). In shared pools
//! `P_M = P_R = P`. In each, the real `C_j ≥` (completion of the job's work in the relaxation) `+ τ_j`.
//!
//! - *Mean response time* `≥ max(Σ L_j, SRPT sum of each relaxation) / n`: a processor-sharing schedule
//!   of one machine is turned into a preemptive one in which no job ends later (run, at every instant,
//!   the job that ends first in the shared schedule among those released: EDF with the shared
//!   schedule's completions as deadlines, which meets them because they are feasible), and preemptive
//!   SRPT minimises the sum of completion times on one machine with release dates (Schrage 1968).
//! - *Mean stretch* `≥ max(Σ L_j / iso_j, WSPT mean-busy-time bound of each relaxation) / n`: with weight
//!   `ω_j = 1 / iso_j`, a job's mean busy time `M_j` (the average instant at which its work is processed)
//!   satisfies `C_j ≥ M_j + p_j / 2` (`p_j = w_j / P`: at most speed 1 for the job, so its work is at best
//!   packed just before `C_j`), and preemptive WSPT (highest `ω_j / p_j` first among released jobs)
//!   minimises `Σ ω_j M_j` over all preemptive schedules of one machine with release dates (Goemans 1996),
//!   which the processor-sharing ones are the limits of.
//! - *Max stretch*: stretch `S` is reachable only if every job can finish by `D_j = r_j + S · iso_j`, so
//!   in each relaxation the work must be done by `D_j − τ_j`; preemptive EDF decides that on one machine
//!   with release dates exactly (Horn 1974), and `S ≥ max L_j / iso_j`. The bound is the largest `S` shown
//!   infeasible by bisection (or the per-job bound when that is larger), so it never exceeds the optimum.
//!
//! Floating-point: relaxations compute in `f64` ms; EDF counts a deadline met within a relative `1e-9`,
//! erring towards feasible, so rounding can only lower the max-stretch bound. The argument in prose, with
//! what the bounds leave out, is in `docs/lower-bounds.md`; brute force over small instances checks them.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use serde::{Deserialize, Serialize};

use crate::sim::metrics::isolated_time;
use crate::sim::workload::{SimJob, Workload};
use crate::sim::ClusterSpec;
use circumflex_core::model::{Phase, Time};
use circumflex_core::policy::PoolMode;

/// The lower bounds of one workload on one cluster.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Bounds {
    /// Jobs in the workload.
    pub jobs: u32,
    /// Lower bound on the mean response time, s.
    pub mean_response_s: f64,
    /// Lower bound on the mean stretch.
    pub mean_stretch: f64,
    /// Lower bound on the max stretch.
    pub max_stretch: f64,
    /// The per-job part alone: mean of `L_j`, s (shows which argument binds).
    pub mean_alone_s: f64,
}

/// One job as the relaxations see it.
#[derive(Clone, Copy, Debug)]
struct JobFacts {
    release: f64,
    map_work: f64,
    reduce_work: f64,
    /// Least time from arrival to the end of the map phase.
    map_phase: f64,
    /// Least time from the moment reduces may start to their end.
    reduce_phase: f64,
    /// Least time from arrival until reduces may start.
    reduce_offset: f64,
    /// Whether the job's end waits for its reduces after its last map (slow start 1 with reduces).
    reduces_after_maps: bool,
    /// `L_j`.
    alone: f64,
    /// The simulator's isolated time (stretch denominator), ms.
    iso: f64,
}

/// Fastest duration of map `d` of `job` (accelerated nodes divide it, as `SimJob::duration_on` does).
fn fastest_map(job: &SimJob, d: Time) -> f64 {
    match job.accel_speedup {
        Some(s) if s.is_finite() && s > 0.0 => (d as f64).min(((d as f64 / s).round()).max(1.0)),
        _ => d as f64,
    }
}

fn facts(job: &SimJob, cluster: &ClusterSpec) -> JobFacts {
    let caps = cluster.phase_capacity();
    let maps: Vec<f64> = job.map_ms.iter().map(|&d| fastest_map(job, d)).collect();
    let reduces: Vec<f64> = job.reduce_ms.iter().map(|&d| d as f64).collect();
    let phase = |ds: &[f64], cap: u32| {
        let longest = ds.iter().copied().fold(0.0, f64::max);
        longest.max(ds.iter().sum::<f64>() / cap.max(1) as f64)
    };
    let map_phase = phase(&maps, caps[Phase::Map.idx()]);
    let reduce_phase = phase(&reduces, caps[Phase::Reduce.idx()]);
    let slowstart = job.spec.reduce_slowstart;
    let reduces_after_maps = slowstart >= 1.0 && !reduces.is_empty();
    // Maps that must finish before any reduce may start (the engine's test: finished ≥ slowstart × maps).
    let must_finish = (slowstart * maps.len() as f64).ceil();
    let reduce_offset = if slowstart >= 1.0 {
        map_phase
    } else if must_finish > 0.0 {
        maps.iter().copied().fold(f64::INFINITY, f64::min)
    } else {
        0.0
    };
    let alone = if reduces.is_empty() { map_phase } else { map_phase.max(reduce_offset + reduce_phase) };
    JobFacts {
        release: job.spec.submit_ms as f64,
        map_work: maps.iter().sum(),
        reduce_work: reduces.iter().sum(),
        map_phase,
        reduce_phase,
        reduce_offset,
        reduces_after_maps,
        alone,
        iso: isolated_time(job, cluster) as f64,
    }
}

/// One job in a single-pool relaxation: released at `release`, needs `work` slot-ms, then `tail` ms more.
#[derive(Clone, Copy, Debug)]
struct Fluid {
    release: f64,
    work: f64,
    tail: f64,
    /// Weight for the mean-stretch bound (`1 / iso`).
    weight: f64,
    /// Real release (arrival), to turn completions into response times.
    arrival: f64,
    /// Stretch denominator.
    iso: f64,
}

/// The three relaxations (maps, reduces, all work) of `jobs` on `cluster`.
fn relaxations(jobs: &[JobFacts], cluster: &ClusterSpec) -> Vec<(f64, Vec<Fluid>)> {
    let caps = cluster.phase_capacity();
    let all_slots = cluster.total_slots() as f64;
    let fluid = |f: &JobFacts, release: f64, work: f64, tail: f64| Fluid {
        release,
        work,
        tail,
        weight: 1.0 / f.iso,
        arrival: f.release,
        iso: f.iso,
    };
    let maps = jobs
        .iter()
        .map(|f| fluid(f, f.release, f.map_work, if f.reduces_after_maps { f.reduce_phase } else { 0.0 }))
        .collect();
    let reduces = jobs
        .iter()
        .map(|f| {
            if f.reduce_work > 0.0 {
                fluid(f, f.release + f.reduce_offset, f.reduce_work, 0.0)
            } else {
                fluid(f, f.release + f.map_phase, 0.0, 0.0)
            }
        })
        .collect();
    let all = jobs.iter().map(|f| fluid(f, f.release, f.map_work + f.reduce_work, 0.0)).collect();
    let pool = |cap: u32| match cluster.pool {
        PoolMode::Split => cap.max(1) as f64,
        PoolMode::Shared => all_slots.max(1.0),
    };
    vec![(pool(caps[Phase::Map.idx()]), maps), (pool(caps[Phase::Reduce.idx()]), reduces), (all_slots.max(1.0), all)]
}

/// A job waiting in a single-machine schedule, ordered by `key` (smallest first), ties by index.
#[derive(Clone, Copy, Debug)]
struct Waiting {
    key: f64,
    index: usize,
}

impl PartialEq for Waiting {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Waiting {}
impl PartialOrd for Waiting {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Waiting {
    /// Reversed, so that `BinaryHeap` pops the smallest key.
    fn cmp(&self, other: &Self) -> Ordering {
        other.key.total_cmp(&self.key).then_with(|| other.index.cmp(&self.index))
    }
}

/// Runs a preemptive priority schedule of `jobs` on one machine of `speed`, the running job always
/// the released one with the smallest `priority(job, remaining work)` (re-evaluated at each release and
/// completion, which is exact for SRPT, WSPT and EDF: their order changes only then). Calls
/// `done(index, completion, mean busy time)` for each job; returns `false` as soon as `done` does.
fn single_machine(
    jobs: &[Fluid],
    speed: f64,
    priority: impl Fn(&Fluid, f64) -> f64,
    mut done: impl FnMut(usize, f64, f64) -> bool,
) -> bool {
    let mut order: Vec<usize> = (0..jobs.len()).collect();
    order.sort_by(|&a, &b| jobs[a].release.total_cmp(&jobs[b].release).then(a.cmp(&b)));
    let mut remaining: Vec<f64> = jobs.iter().map(|j| j.work).collect();
    // Σ t·dt over the job's processing, to get its mean busy time.
    let mut busy_moment: Vec<f64> = vec![0.0; jobs.len()];
    let mut heap: BinaryHeap<Waiting> = BinaryHeap::new();
    let mut next = 0;
    let mut t = f64::NEG_INFINITY;
    loop {
        if heap.is_empty() {
            let Some(&i) = order.get(next) else { return true };
            t = t.max(jobs[i].release);
        }
        while let Some(&i) = order.get(next) {
            if jobs[i].release > t {
                break;
            }
            heap.push(Waiting { key: priority(&jobs[i], remaining[i]), index: i });
            next += 1;
        }
        let Some(top) = heap.pop() else { continue };
        let i = top.index;
        let next_release = order.get(next).map_or(f64::INFINITY, |&k| jobs[k].release);
        let finish = t + remaining[i] / speed;
        if finish <= next_release {
            busy_moment[i] += (t + finish) / 2.0 * (finish - t);
            remaining[i] = 0.0;
            t = finish;
            let p = jobs[i].work / speed;
            let mean_busy = if p > 0.0 { busy_moment[i] / p } else { t };
            if !done(i, t, mean_busy) {
                return false;
            }
        } else {
            busy_moment[i] += (t + next_release) / 2.0 * (next_release - t);
            remaining[i] -= (next_release - t) * speed;
            t = next_release;
            heap.push(Waiting { key: priority(&jobs[i], remaining[i]), index: i });
        }
    }
}

/// Σ (completion + tail − arrival) under preemptive SRPT: a lower bound on the sum of response times.
fn srpt_sum(jobs: &[Fluid], speed: f64) -> f64 {
    let mut sum = 0.0;
    single_machine(
        jobs,
        speed,
        |_, rem| rem,
        |i, c, _| {
            sum += c + jobs[i].tail - jobs[i].arrival;
            true
        },
    );
    sum
}

/// Σ ω (M + p/2 + tail − arrival) under preemptive WSPT: a lower bound on Σ ω · response.
fn wspt_sum(jobs: &[Fluid], speed: f64) -> f64 {
    let mut sum = 0.0;
    single_machine(
        jobs,
        speed,
        // Highest ω / p first; zero-work jobs first of all (they take no time).
        |j, _| if j.work > 0.0 { -(j.weight * speed / j.work) } else { f64::NEG_INFINITY },
        |i, _, mean_busy| {
            let j = &jobs[i];
            sum += j.weight * (mean_busy + j.work / speed / 2.0 + j.tail - j.arrival);
            true
        },
    );
    sum
}

/// Whether every job can finish its work by `arrival + stretch × iso − tail` (preemptive EDF).
fn edf_feasible(jobs: &[Fluid], speed: f64, stretch: f64) -> bool {
    let deadline = |j: &Fluid| j.arrival + stretch * j.iso - j.tail;
    single_machine(
        jobs,
        speed,
        |j, _| deadline(j),
        |i, c, _| {
            let d = deadline(&jobs[i]);
            c <= d + 1e-9 * d.abs().max(1.0)
        },
    )
}

/// The lower bounds of `workload` on `cluster` (see the module docs).
pub fn lower_bounds(workload: &Workload, cluster: &ClusterSpec) -> Bounds {
    let jobs: Vec<JobFacts> = workload.jobs.iter().map(|j| facts(j, cluster)).collect();
    let n = jobs.len().max(1) as f64;
    let relax = relaxations(&jobs, cluster);
    let alone_sum: f64 = jobs.iter().map(|f| f.alone).sum();
    let response_sum = relax.iter().map(|(speed, r)| srpt_sum(r, *speed)).fold(alone_sum, f64::max);
    let alone_stretch: f64 = jobs.iter().map(|f| f.alone / f.iso).sum();
    let stretch_sum = relax.iter().map(|(speed, r)| wspt_sum(r, *speed)).fold(alone_stretch, f64::max);
    let per_job_max = jobs.iter().map(|f| f.alone / f.iso).fold(0.0, f64::max);
    let feasible = |s: f64| relax.iter().all(|(speed, r)| edf_feasible(r, *speed, s));
    let max_stretch = if jobs.is_empty() || feasible(per_job_max) {
        per_job_max
    } else {
        // `lo` is infeasible, `hi` feasible; every job's deadline grows with S, so feasibility is monotone.
        let mut lo = per_job_max;
        let mut hi = (2.0 * lo).max(1.0);
        let mut doublings = 0;
        while !feasible(hi) && doublings < 64 {
            lo = hi;
            hi *= 2.0;
            doublings += 1;
        }
        for _ in 0..48 {
            let mid = (lo + hi) / 2.0;
            if feasible(mid) {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        lo
    };
    Bounds {
        jobs: jobs.len() as u32,
        mean_response_s: response_sum / n / 1000.0,
        mean_stretch: stretch_sum / n,
        max_stretch,
        mean_alone_s: alone_sum / n / 1000.0,
    }
}

#[cfg(test)]
mod tests;
