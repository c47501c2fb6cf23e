//! The Adaptive Scheduler (thesis chapter 3; `circumflex.policy = adaptive`): completion-time goals
//! per job, on-line estimation of mean task length per phase, the slots each job needs
//! (`s_req`, Eq. 1), and the priority classes of §3.4.
//!
//! **From per-slot rule to plan.** The thesis rebuilds its queue at every heartbeat and gives each
//! free slot to the neediest job; each allocation lowers that job's `s_req` by exactly one. Here the
//! same greedy runs once per epoch over the pool's **whole** capacity, starting every job from zero
//! slots (its priority in class 2 is then `s_req + |R| − given`, the same order as the thesis's
//! `s_req − extra slots`), and its result becomes the plan's targets, which the engine's deficit
//! layer enforces between epochs: a slot freed by a job above its target goes to the job furthest
//! below its own. Running tasks are never killed (the thesis never pre-empts); a job above its target
//! simply gets no new slot. Targets over free slots only would freeze the status quo: a freed slot
//! would put its owner under target and go straight back to it. The thesis itself caches estimates
//! for minutes (§3.3.2), so nothing is lost, and the heartbeat path stays `O(k log n)`.
//!
//! Priority classes, highest first (§3.4): (0) jobs past the goal of the phase, round-robin, most
//! late first (gap 4: lateness relative to the goal's window); (1) jobs with no completed task in the
//! phase, oldest first, up to their demand; (2) the rest by `s_req` minus what the greedy already gave
//! them, which also spreads excess slots once every `s_req` is met (gap 6); (3) jobs without a goal,
//! oldest first, when `circumflex.adaptive.no.goal = lowest` (default; `asap` puts them in class 0).
//!
//! Decisions (digest §7): `s_req` stays real (gap 1); the remaining time of running tasks is
//! `max(0, |R|·µ − Σβ)`, clamped in total because the engine keeps `Σβ`, not per-task ages (gap 2);
//! phase goals (gap 3): the reduce phase's goal is the job's goal and the map phase's goal is the job's
//! goal minus the estimated reduce phase, `⌈R / reduce slots⌉ × ratio × µ_map`, with the ratio from
//! `circumflex.adaptive.reduce.cost.ratio` (default 1, the thesis's default).
//!
//! **On-line estimation** ([`mean_task_ms`], §3.3.2): `µ` of a phase is the mean length of its
//! completed tasks, kept by the engine as a running sum (`observed_ms_sum / finished`), so it is
//! refreshed at every plan without per-task state. Before the first task of a phase finishes the
//! thesis cannot compute `s_req` (the job sits in class 1), but the map goal still needs a reduce
//! estimate, so the fallbacks are, in order: the phase's observed mean; the submitter's estimate
//! (`JobSpec` `task_ms`, e.g. from a previous run); for reduces, `ratio × µ_map` (the thesis's
//! user-given relative cost, §3.4.6); the engine's default task length. A running task older
//! than `µ` is a straggler the mean has not seen yet; its remaining time is clamped at 0 (gap 2)
//! rather than letting it raise `µ` before it finishes, as the thesis's estimator would.
//!
//! **Data affinity** (§3.4.2, `circumflex.adaptive.locality.delays` = the maximum delays per task):
//! the plan carries a per-job locality wait ([`circumflex_core::policy::Plan::locality_waits`]) that the engine's
//! assignment layer applies instead of its global delay scheduling. Decisions (gap 8): a job is on
//! track when its map `s_req ≤ 0` at plan time, or it has no goal (`no.goal = lowest`); on-track jobs
//! get the configured delays, every other job 0 (a remote task launches at once). Delays are counted
//! in offers (heartbeats), per task: each launch restarts the count. There is no rack level, as in the
//! thesis. When no job can use a slot locally, the host leaves it free until the next heartbeat (the
//! engine does not know where data lives; the wait is bounded by the delay count).
//!
//! **Hardware affinity** (§3.4.3, see [`crate::adaptive::hardware`]): when the engine reports an
//! accelerated pool ([`Policy::on_accelerated_capacity`]), the map division starts with it. A job
//! without a finished map on both pools calibrates: it gets one accelerated slot (until one has
//! finished there) and a map target of at least one more for the regular pool. Accelerable jobs then
//! take the pool by Eq. 2, late jobs first, then the largest unmet need; the accelerated need the
//! pool cannot hold becomes regular slots by Eq. 3, and that sum is the job's whole map target (the
//! general greedy divides the rest of the map pool among everyone else). The pool's slots left after
//! the goals go to accelerable jobs too (same order, up to the maps they can run): they prefer it.
//! Regular jobs are not listed: they take accelerated slots no accelerable job can use, through the
//! deficit passes.
//! Decisions (gap 9): Eq. 2's summed age of running accelerated maps is the phase's summed age times
//! their share of the running maps (the engine keeps the sum per phase only); Eq. 3 converts the
//! need beyond what is left of the pool for this job (not its whole capacity), so two accelerable
//! jobs never both count the same slots; accelerable jobs are served before regular jobs on the
//! pool regardless of class (the thesis lets a much tighter regular job take accelerated nodes; here
//! it only takes what accelerable jobs leave).

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use circumflex_core::config::{parse_f64, parse_int, EngineConfig};
use circumflex_core::error::{Error, Result};
use circumflex_core::model::{JobId, JobState, Phase, Time};
use circumflex_core::policy::{slot_bounds, Plan, PlanBuilder, Policy, Pool, PoolMode, Snapshot};

/// What a job without a completion-time goal gets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NoGoal {
    /// Only slots no goal job wants (class 3).
    Lowest,
    /// As soon as possible (class 0).
    Asap,
}

/// Adaptive Scheduler configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct AdaptiveConfig {
    /// Cost of a reduce task relative to a map task.
    pub reduce_cost_ratio: f64,
    /// Jobs without a goal.
    pub no_goal: NoGoal,
    /// Data affinity (§3.4.2): most offers a map task of an on-track job may skip waiting for a
    /// node-local slot (`circumflex.adaptive.locality.delays`). `None`: the engine's global delay
    /// scheduling applies to every job (the basic Adaptive Scheduler).
    pub locality_delays: Option<u32>,
    /// Hardware affinity: `µ_reg / µ_acc` above which a job is accelerable
    /// (`circumflex.adaptive.speedup.threshold`).
    pub speedup_threshold: f64,
}

impl Default for AdaptiveConfig {
    /// The thesis's defaults: equal map and reduce cost, goal-less jobs last, no data affinity.
    fn default() -> Self {
        AdaptiveConfig {
            reduce_cost_ratio: 1.0,
            no_goal: NoGoal::Lowest,
            locality_delays: None,
            speedup_threshold: crate::adaptive::hardware::DEFAULT_SPEEDUP_THRESHOLD,
        }
    }
}

impl AdaptiveConfig {
    /// Reads `circumflex.adaptive.*`.
    pub fn from_engine(cfg: &EngineConfig) -> Result<AdaptiveConfig> {
        // The hardware-affinity keys are checked now so a bad value fails at configuration time.
        let hardware = crate::adaptive::hardware::HardwareConfig::from_engine(cfg)?;
        let mut c = AdaptiveConfig { speedup_threshold: hardware.speedup_threshold, ..AdaptiveConfig::default() };
        if let Some(v) = cfg.param("circumflex.adaptive.locality.delays") {
            c.locality_delays = Some(parse_int("circumflex.adaptive.locality.delays", v, 0, 1000)?);
        }
        if let Some(v) = cfg.param("circumflex.adaptive.reduce.cost.ratio") {
            c.reduce_cost_ratio = parse_f64("circumflex.adaptive.reduce.cost.ratio", v, 0.0, 1e6)?;
        }
        if let Some(v) = cfg.param("circumflex.adaptive.no.goal") {
            c.no_goal = match v.trim() {
                "lowest" => NoGoal::Lowest,
                "asap" => NoGoal::Asap,
                _ => return Err(Error::config("circumflex.adaptive.no.goal", v, "lowest or asap")),
            };
        }
        Ok(c)
    }
}

/// Equation (1): slots a phase needs beyond the `running` it holds to finish by its goal.
/// `mu` is the mean task length, `elapsed_running` the summed age of running tasks, `time_left`
/// the time to the phase goal (must be > 0).
pub fn slots_required(mu: f64, running: u32, elapsed_running: f64, unstarted: u32, time_left: f64) -> f64 {
    let remaining_running = (running as f64 * mu - elapsed_running).max(0.0);
    (remaining_running + unstarted as f64 * mu) / time_left - running as f64
}

/// Where a mean task length came from (see the module docs for the fallback order).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Estimate {
    /// Mean of the phase's completed tasks.
    Observed,
    /// The submitter's per-task estimate.
    Submitted,
    /// Reduces only: the reduce/map cost ratio times the map estimate.
    MapRatio,
    /// Nothing known: [`circumflex_core::model::DEFAULT_TASK_MS`].
    Default,
}

/// The on-line mean task length `µ` of `job`'s `phase` in ms (≥ 1), and where it came from.
/// `ratio` is the reduce/map cost ratio used before any reduce has finished.
pub fn mean_task_ms(job: &JobState, phase: Phase, ratio: f64) -> (f64, Estimate) {
    let p = job.phase(phase);
    if p.finished > 0 {
        return ((p.observed_ms_sum as f64 / p.finished as f64).max(1.0), Estimate::Observed);
    }
    if let Some(ms) = job.spec.phase(phase).task_ms {
        return ((ms as f64).max(1.0), Estimate::Submitted);
    }
    if phase == Phase::Reduce {
        let (map_mu, source) = mean_task_ms(job, Phase::Map, ratio);
        if source != Estimate::Default {
            return ((ratio * map_mu).max(1.0), Estimate::MapRatio);
        }
    }
    (circumflex_core::model::DEFAULT_TASK_MS as f64, Estimate::Default)
}

/// The goal of `phase` for `job` (absolute), see the module docs.
pub fn phase_goal(job: &JobState, phase: Phase, reduce_slots: u32, ratio: f64) -> Option<Time> {
    let goal = job.spec.goal_ms?;
    if phase == Phase::Reduce || job.phase(Phase::Reduce).total == 0 {
        return Some(goal);
    }
    let waves = (job.phase(Phase::Reduce).remaining() as f64 / reduce_slots.max(1) as f64).ceil();
    let reduce_ms = waves * mean_task_ms(job, Phase::Reduce, ratio).0;
    Some(goal - reduce_ms as Time)
}

/// A (job, phase) competing for a pool's free slots.
#[derive(Debug)]
struct Claim {
    class: u8,
    /// Larger first within a class.
    key: f64,
    rank: usize,
    job: JobId,
    phase: Phase,
    running: u32,
    given: u32,
    demand: u32,
    s_req: f64,
}

impl Claim {
    /// Data affinity's test (gap 8): the job already holds the slots its goal needs (`s_req ≤ 0`),
    /// or it has no goal to put at risk. Late and not-yet-measured jobs are never delayed.
    fn on_track(&self) -> bool {
        (self.class == 2 && self.s_req <= 0.0) || (self.class == 3)
    }

    fn priority(&self) -> (u8, f64) {
        let extra = self.given as f64 - self.running as f64;
        match self.class {
            0 => (0, -extra * 1e6 + self.key),
            2 => (2, self.s_req - extra),
            c => (c, self.key),
        }
    }
}

impl PartialEq for Claim {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Claim {}
impl PartialOrd for Claim {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Claim {
    /// Max-heap order: lower class, then larger key, then lower rank wins.
    fn cmp(&self, other: &Self) -> Ordering {
        let (ca, ka) = self.priority();
        let (cb, kb) = other.priority();
        cb.cmp(&ca).then(ka.total_cmp(&kb)).then(other.rank.cmp(&self.rank))
    }
}

/// The Adaptive Scheduler.
#[derive(Debug)]
pub struct AdaptivePolicy {
    cfg: AdaptiveConfig,
    /// Map slots of the accelerated pool, from the engine before each plan (0: no hardware affinity).
    accelerated_slots: u32,
}

/// One job's share of the accelerated pool (hardware affinity, see the module docs).
#[derive(Clone, Copy, Debug, PartialEq)]
struct PoolShare {
    job: JobId,
    /// Map slots on accelerated nodes.
    accelerated: u32,
    /// The job's whole map target when the hardware division fixes it (accelerable jobs:
    /// accelerated plus Eq. 3's regular slots); `None` = the general greedy decides.
    map_total: Option<u32>,
    /// At least this many map slots in total (calibration: one on each pool).
    map_floor: u32,
}

impl AdaptivePolicy {
    /// A policy with `cfg`.
    pub fn new(cfg: AdaptiveConfig) -> AdaptivePolicy {
        AdaptivePolicy { cfg, accelerated_slots: 0 }
    }

    /// The registry's constructor: the policy from `circumflex.adaptive.*` (validated).
    pub fn from_config(cfg: &EngineConfig) -> Result<AdaptivePolicy> {
        Ok(AdaptivePolicy::new(AdaptiveConfig::from_engine(cfg)?))
    }

    /// Hardware affinity (§3.4.3): calibration slots, then the accelerated pool to accelerable jobs
    /// by Eq. 2, most urgent first, with Eq. 3's overflow as regular slots. Empty without a pool.
    fn divide_accelerated_pool(&self, snapshot: &Snapshot<'_>, map_capacity: u32) -> Vec<PoolShare> {
        use crate::adaptive::hardware::{classify, extra_regular_slots, Affinity};
        use circumflex_core::model::MapPoolStats as P;
        let mut left = self.accelerated_slots.min(map_capacity);
        if left == 0 {
            return Vec::new();
        }
        let reduce_slots = match snapshot.cluster.mode {
            PoolMode::Split => snapshot.cluster.reduce_slots,
            PoolMode::Shared => snapshot.cluster.total_slots(),
        };
        let mut shares = Vec::new();
        // (lateness class, urgency, rank, job, µ_reg, µ_acc, accelerated slots needed)
        let mut accelerable: Vec<(u8, f64, usize, JobId, f64, f64, u32)> = Vec::new();
        for (rank, job) in snapshot.active_jobs().enumerate() {
            let m = job.phase(Phase::Map);
            let pending = if job.runnable(Phase::Map) { m.pending } else { 0 };
            let pools = &job.map_pools;
            if pending == 0 && pools.running[P::ACCELERATED] == 0 {
                continue;
            }
            let (mu_reg, mu_acc) = (pools.mean_ms(P::REGULAR), pools.mean_ms(P::ACCELERATED));
            match (classify(mu_reg, mu_acc, self.cfg.speedup_threshold), mu_reg, mu_acc) {
                (Affinity::Calibrating, _, _) => {
                    let on_acc = u32::from(pools.finished[P::ACCELERATED] == 0) * pools.running[P::ACCELERATED].max(1);
                    let on_acc = on_acc.min(pools.running[P::ACCELERATED] + pending).min(left);
                    let reg_missing = pools.finished[P::REGULAR] == 0 && pools.running[P::REGULAR] == 0;
                    let floor = on_acc + u32::from(reg_missing && pending > on_acc);
                    left -= on_acc;
                    shares.push(PoolShare { job: job.id, accelerated: on_acc, map_total: None, map_floor: floor });
                }
                (Affinity::Accelerable, Some(reg), Some(acc)) => {
                    let running = pools.running[P::ACCELERATED];
                    let most = running + pending;
                    let goal = phase_goal(job, Phase::Map, reduce_slots, self.cfg.reduce_cost_ratio);
                    let (class, need) = match goal {
                        Some(g) if g > snapshot.now => {
                            // Eq. 2 over the accelerated pool's tasks; their summed age is apportioned
                            // from the phase's by the share of running maps on the pool (gap 9).
                            let share = running as f64 / m.running.max(1) as f64;
                            let elapsed = m.running_elapsed_ms(snapshot.now) as f64 * share;
                            let s_req = slots_required(acc, running, elapsed, pending, (g - snapshot.now) as f64);
                            (1, (s_req + running as f64).ceil().clamp(0.0, most as f64))
                        }
                        Some(_) => (0, most as f64),
                        None => (2, most as f64),
                    };
                    accelerable.push((class, need - running as f64, rank, job.id, reg, acc, need as u32));
                }
                _ => {}
            }
        }
        accelerable.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.total_cmp(&a.1)).then(a.2.cmp(&b.2)));
        let first = shares.len();
        for &(_, _, _, job, reg, acc, need) in &accelerable {
            let given = need.min(left);
            left -= given;
            let extra = extra_regular_slots(reg, acc, need as f64, given).ceil() as u32;
            shares.push(PoolShare { job, accelerated: given, map_total: Some(given + extra), map_floor: 0 });
        }
        // What the goals leave of the pool goes to accelerable jobs too, in the same order, up to the
        // maps they can run: they prefer the pool, and regular jobs get what no accelerable job can use.
        for share in &mut shares[first..] {
            let j = snapshot.job(share.job);
            let pending = if j.runnable(Phase::Map) { j.phase(Phase::Map).pending } else { 0 };
            let more = (j.map_pools.running[P::ACCELERATED] + pending).saturating_sub(share.accelerated).min(left);
            left -= more;
            share.accelerated += more;
            let all = j.phase(Phase::Map).running + pending;
            share.map_total = share.map_total.map(|t| (t + more).min(all.max(share.accelerated)));
        }
        shares
    }

    fn claim(&self, snapshot: &Snapshot<'_>, job: &JobState, phase: Phase, pool: &Pool, rank: usize) -> Option<Claim> {
        let p = job.phase(phase);
        let pending = if job.runnable(phase) { p.pending } else { 0 };
        let (_, max) = slot_bounds(job, pool.capacity);
        let demand = (p.running + pending).min(max.max(p.running));
        if demand == 0 {
            return None;
        }
        let now = snapshot.now;
        let reduce_slots = match snapshot.cluster.mode {
            PoolMode::Split => snapshot.cluster.reduce_slots,
            PoolMode::Shared => snapshot.cluster.total_slots(),
        };
        let mut claim = Claim {
            class: 3,
            key: -(job.spec.submit_ms as f64),
            rank,
            job: job.id,
            phase,
            running: p.running,
            given: p.running,
            demand,
            s_req: 0.0,
        };
        match phase_goal(job, phase, reduce_slots, self.cfg.reduce_cost_ratio) {
            None => {
                if self.cfg.no_goal == NoGoal::Asap {
                    claim.class = 0;
                    claim.key = 0.0;
                }
            }
            Some(goal) if now >= goal => {
                claim.class = 0;
                let window = job.spec.goal_ms.unwrap_or(goal).saturating_sub(job.spec.submit_ms).max(1);
                claim.key = (now - goal) as f64 / window as f64;
            }
            Some(_) if p.finished == 0 => claim.class = 1,
            Some(goal) => {
                claim.class = 2;
                let mu = mean_task_ms(job, phase, self.cfg.reduce_cost_ratio).0;
                let elapsed = p.running_elapsed_ms(now) as f64;
                claim.s_req = slots_required(mu, p.running, elapsed, pending, (goal - now) as f64);
            }
        }
        Some(claim)
    }
}

impl Policy for AdaptivePolicy {
    fn name(&self) -> &'static str {
        "adaptive"
    }

    fn on_accelerated_capacity(&mut self, map_slots: u32) {
        self.accelerated_slots = map_slots;
    }

    fn plan(&mut self, snapshot: &Snapshot<'_>) -> Plan {
        let map_capacity = snapshot.cluster.pools().find(|p| p.phases.contains(&Phase::Map)).map_or(0, |p| p.capacity);
        let shares = self.divide_accelerated_pool(snapshot, map_capacity);
        let mut claims_by_pool = Vec::new();
        let mut job_priority: Vec<(u8, f64, usize, JobId)> = Vec::new();
        let mut waits: Vec<(JobId, u32)> = Vec::new();
        for pool in snapshot.cluster.pools() {
            let mut claims = Vec::new();
            for (rank, job) in snapshot.active_jobs().enumerate() {
                for &phase in pool.phases {
                    if let Some(mut c) = self.claim(snapshot, job, phase, &pool, rank) {
                        // Ranked by the thesis's s_req (slots beyond those held), then re-divided from zero.
                        let (class, key) = c.priority();
                        c.given = 0;
                        job_priority.push((class, key, rank, job.id));
                        if let (Some(delays), Phase::Map) = (self.cfg.locality_delays, phase) {
                            waits.push((job.id, if c.on_track() { delays } else { 0 }));
                        }
                        claims.push(c);
                    }
                }
            }
            claims_by_pool.push((pool, claims));
        }
        // Plan order: each job at its best claim's priority.
        job_priority.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.total_cmp(&a.1)).then(a.2.cmp(&b.2)));
        let mut builder = PlanBuilder::new(snapshot, job_priority.iter().map(|p| p.3));
        for (job, w) in waits {
            builder.set_locality_wait(job, w);
        }
        for share in &shares {
            builder.set_accelerated_target(share.job, share.accelerated);
        }
        for (pool, mut claims) in claims_by_pool {
            let mut free = pool.capacity;
            let fixed = |job: JobId| shares.iter().find(|s| s.job == job).and_then(|s| s.map_total);
            if pool.phases.contains(&Phase::Map) {
                // Accelerable jobs' maps were divided by the accelerated pool; the greedy shares the rest.
                claims.retain(|c| c.phase != Phase::Map || fixed(c.job).is_none());
                free = free.saturating_sub(shares.iter().filter_map(|s| s.map_total).sum());
            }
            let mut heap: BinaryHeap<Claim> = claims.into_iter().collect();
            let mut done: Vec<Claim> = Vec::new();
            while free > 0 {
                let Some(mut top) = heap.pop() else { break };
                if top.given >= top.demand {
                    done.push(top);
                    continue;
                }
                top.given += 1;
                free -= 1;
                heap.push(top);
            }
            done.extend(heap);
            let mut targets: Vec<(JobId, [u32; 2])> = Vec::new();
            for c in done {
                match targets.iter_mut().find(|t| t.0 == c.job) {
                    Some(t) => t.1[c.phase.idx()] = c.given,
                    None => {
                        let mut t = [0, 0];
                        t[c.phase.idx()] = c.given;
                        targets.push((c.job, t));
                    }
                }
            }
            if pool.phases.contains(&Phase::Map) {
                for share in &shares {
                    let i = match targets.iter().position(|t| t.0 == share.job) {
                        Some(i) => i,
                        None => {
                            targets.push((share.job, [0, 0]));
                            targets.len() - 1
                        }
                    };
                    let t = &mut targets[i].1[Phase::Map.idx()];
                    *t = share.map_total.unwrap_or(*t).max(share.map_floor);
                }
            }
            for (job, t) in targets {
                builder.set_phase_targets(job, &pool, t);
            }
        }
        builder.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use circumflex_core::engine::Engine;
    use circumflex_core::model::{JobSpec, Locality, NodeId, PhaseState};
    use circumflex_core::policy::ClusterView;
    use proptest::prelude::*;

    #[test]
    fn equation_1_examples() {
        // µ = 10, 4 running aged 2, 4, 6, 8 (Σβ = 20), 20 unstarted, 50 s to the goal.
        let s = slots_required(10.0, 4, 20.0, 20, 50.0);
        assert!((s - 0.4).abs() < 1e-9, "{s}");
        // Launching one more task lowers s_req by exactly one.
        let s2 = slots_required(10.0, 5, 20.0, 19, 50.0);
        assert!((s2 - (-0.6)).abs() < 1e-9, "{s2}");
    }

    fn job(id: u32, submit: Time, goal: Option<Time>, maps: u32, finished: u32, running: u32) -> JobState {
        let mut s = JobSpec::new(submit, maps, 0).with_task_ms(10_000, 10_000);
        s.goal_ms = goal;
        let mut j = JobState::new(JobId(id), s);
        j.phases[0] = PhaseState {
            total: maps,
            pending: maps - finished - running,
            running,
            finished,
            observed_ms_sum: finished as i64 * 10_000,
            observed_ms_max: 10_000,
            running_start_sum: 0,
            age_floor_ms: 0,
            prior_ms: 0,
        };
        j
    }

    #[test]
    fn class_order_missed_then_new_then_neediest() {
        // Example 4: a missed-goal job outranks a new job, which outranks a job needing +50 slots.
        let jobs = vec![
            job(0, 0, Some(1_000_000), 1000, 10, 0), // large s_req
            job(1, 5, Some(2_000_000), 10, 0, 0),    // new: nothing completed
            job(2, 1, Some(50_000), 10, 5, 0),       // goal passed at now = 100_000
        ];
        let active = [JobId(0), JobId(1), JobId(2)];
        let cluster = ClusterView { map_slots: 4, reduce_slots: 0, mode: PoolMode::Split, nodes: 1 };
        let snap = Snapshot::new(100_000, cluster, &jobs, &active);
        let plan = AdaptivePolicy::new(AdaptiveConfig::default()).plan(&snap);
        let order: Vec<u32> = plan.entries.iter().map(|e| e.job.0).collect();
        assert_eq!(order, vec![2, 1, 0]);
        // The late job (demand 5) takes all 4 slots before anyone else gets one.
        assert_eq!(plan.entry(JobId(2)).unwrap().target, [4, 0]);
    }

    fn two_job_targets(tight_goal: Time) -> (u32, u32) {
        // Two calibrated jobs with 99 pending 10 s maps at t = 10 s; job 1's goal is 600 s (s_req 1.68).
        let jobs = vec![job(0, 0, Some(tight_goal), 100, 1, 0), job(1, 0, Some(600_000), 100, 1, 0)];
        let active = [JobId(0), JobId(1)];
        let cluster = ClusterView { map_slots: 10, reduce_slots: 0, mode: PoolMode::Split, nodes: 1 };
        let snap = Snapshot::new(10_000, cluster, &jobs, &active);
        let plan = AdaptivePolicy::new(AdaptiveConfig::default()).plan(&snap);
        (plan.entry(JobId(0)).unwrap().target[0], plan.entry(JobId(1)).unwrap().target[0])
    }

    #[test]
    fn neediest_first_by_absolute_s_req() {
        // s_req 19.8 vs 1.68: every one of the 10 slots lowers job 0's need by one and it stays neediest.
        assert_eq!(two_job_targets(60_000), (10, 0));
        // s_req 9.9 vs 1.68: job 0 takes slots until its remaining need (0.9) drops below job 1's.
        assert_eq!(two_job_targets(110_000), (9, 1));
        // Both satisfied (s_req 1.98 and 1.68): the excess is spread by remaining need.
        let (a, b) = two_job_targets(510_000);
        assert_eq!(a + b, 10);
        assert!(a.abs_diff(b) <= 1, "{a} {b}");
    }

    #[test]
    fn map_goal_leaves_room_for_reduces() {
        let mut s = JobSpec::new(0, 10, 4);
        s.maps.task_ms = Some(10_000);
        s.goal_ms = Some(100_000);
        let mut j = JobState::new(JobId(0), s);
        // 4 reduces on 2 reduce slots: 2 waves of ratio × 10 s.
        assert_eq!(phase_goal(&j, Phase::Map, 2, 1.0), Some(80_000));
        assert_eq!(phase_goal(&j, Phase::Reduce, 2, 1.0), Some(100_000));
        assert_eq!(phase_goal(&j, Phase::Map, 2, 0.5), Some(90_000));
        // A submitted reduce estimate (5 s) outranks the ratio.
        j.spec.reduces.task_ms = Some(5_000);
        assert_eq!(phase_goal(&j, Phase::Map, 2, 3.0), Some(90_000));
    }

    #[test]
    fn estimates_fall_back_in_the_documented_order() {
        let mut j = JobState::new(JobId(0), JobSpec::new(0, 10, 2));
        assert_eq!(mean_task_ms(&j, Phase::Map, 2.0), (10_000.0, Estimate::Default));
        assert_eq!(mean_task_ms(&j, Phase::Reduce, 2.0), (10_000.0, Estimate::Default));
        j.spec.maps.task_ms = Some(4_000);
        assert_eq!(mean_task_ms(&j, Phase::Map, 2.0), (4_000.0, Estimate::Submitted));
        assert_eq!(mean_task_ms(&j, Phase::Reduce, 2.0), (8_000.0, Estimate::MapRatio));
        // Two maps finished in 3 s and 5 s: the observed mean replaces the submitted one, and the
        // reduce estimate follows it through the ratio until a reduce finishes.
        j.phases[0].finished = 2;
        j.phases[0].observed_ms_sum = 8_000;
        assert_eq!(mean_task_ms(&j, Phase::Map, 2.0), (4_000.0, Estimate::Observed));
        j.phases[0].observed_ms_sum = 6_000;
        assert_eq!(mean_task_ms(&j, Phase::Reduce, 2.0), (6_000.0, Estimate::MapRatio));
        j.spec.reduces.task_ms = Some(1_000);
        assert_eq!(mean_task_ms(&j, Phase::Reduce, 2.0), (1_000.0, Estimate::Submitted));
        j.phases[1].finished = 1;
        j.phases[1].observed_ms_sum = 7_000;
        assert_eq!(mean_task_ms(&j, Phase::Reduce, 2.0), (7_000.0, Estimate::Observed));
    }

    #[test]
    fn engine_learns_the_mean_online() {
        // The policy's µ is the mean of tasks completed so far, whatever the submitter guessed.
        let cfg = EngineConfig { policy: "adaptive".into(), ..EngineConfig::default() };
        let mut e = crate::new_engine(cfg).unwrap();
        let n = e.add_node("h", "/r", 4, 0);
        let mut spec = JobSpec::new(0, 8, 0);
        spec.maps.task_ms = Some(50_000);
        spec.goal_ms = Some(600_000);
        let a = e.submit(spec, 0).unwrap().0;
        for (start, end) in [(0, 2_000), (0, 6_000)] {
            e.task_started(a, Phase::Map, n, Locality::Any, start).unwrap();
            e.task_finished(a, Phase::Map, n, end - start, true, end).unwrap();
        }
        assert_eq!(mean_task_ms(e.job(a).unwrap(), Phase::Map, 1.0), (4_000.0, Estimate::Observed));
    }

    #[test]
    fn example_3_time_passing_moves_s_req_either_way_then_the_job_is_late() {
        // Example 1's job 10 s later with no event: Σδ = 20 − 4·10 clamps to 0, so s_req = 200/40 − 4 = 1.
        let later = slots_required(10.0, 4, 20.0 + 4.0 * 10.0, 20, 40.0);
        assert!((later - 1.0).abs() < 1e-9, "{later}");
        // With no running task the need only grows as the goal nears.
        assert!(slots_required(10.0, 0, 0.0, 20, 40.0) > slots_required(10.0, 0, 0.0, 20, 50.0));
        // Past the goal the job leaves class 2 for the missed class, which outranks everything.
        let jobs = vec![job(0, 0, Some(50_000), 30, 1, 0), job(1, 0, Some(10_000_000), 1000, 1, 0)];
        let active = [JobId(0), JobId(1)];
        let cluster = ClusterView { map_slots: 2, reduce_slots: 0, mode: PoolMode::Split, nodes: 1 };
        let mut policy = AdaptivePolicy::new(AdaptiveConfig::default());
        let before = policy.plan(&Snapshot::new(40_000, cluster, &jobs, &active));
        let after = policy.plan(&Snapshot::new(50_000, cluster, &jobs, &active));
        assert_eq!(before.entries[0].job, JobId(0));
        assert_eq!(after.entries[0].job, JobId(0));
        assert_eq!(after.entry(JobId(0)).unwrap().target, [2, 0]);
    }

    #[test]
    fn engine_runs_adaptive_with_elapsed_time_of_running_tasks() {
        let mut cfg = EngineConfig { policy: "adaptive".into(), ..EngineConfig::default() };
        cfg.params.insert("circumflex.adaptive.no.goal".into(), "asap".into());
        let mut e = crate::new_engine(cfg).unwrap();
        let n = e.add_node("h", "/r", 4, 0);
        let mut spec = JobSpec::new(0, 8, 0).with_task_ms(1000, 0);
        spec.goal_ms = Some(60_000);
        let a = e.submit(spec, 0).unwrap().0;
        e.task_started(a, Phase::Map, n, Locality::Any, 0).unwrap();
        e.task_started(a, Phase::Map, n, Locality::Any, 100).unwrap();
        let p = e.job(a).unwrap().phase(Phase::Map);
        assert_eq!(p.running_elapsed_ms(1000), 1000 + 900);
        e.task_finished(a, Phase::Map, n, 1000, true, 1000).unwrap();
        let p = e.job(a).unwrap().phase(Phase::Map);
        assert_eq!(p.running_elapsed_ms(1000), 900);
        let bad = EngineConfig::from_pairs([("circumflex.policy", "adaptive"), ("circumflex.adaptive.no.goal", "x")]);
        assert!(crate::registry::create(&bad.unwrap()).is_err());
    }

    /// An engine running `adaptive` with data affinity at `delays`, global delay scheduling at 3+3, one
    /// 4-slot node, and one job of 10 one-second maps that has run one task and holds one slot.
    fn affinity_engine(delays: &str, goal: Time) -> (Engine, NodeId, JobId) {
        let mut cfg = EngineConfig { policy: "adaptive".into(), ..EngineConfig::default() };
        cfg.params.insert("circumflex.adaptive.locality.delays".into(), delays.into());
        let mut e = crate::new_engine(cfg).unwrap();
        let n = e.add_node("h", "/r", 4, 0);
        let mut spec = JobSpec::new(0, 10, 0);
        spec.goal_ms = Some(goal);
        let a = e.submit(spec, 0).unwrap().0;
        e.task_started(a, Phase::Map, n, Locality::Node, 0).unwrap();
        e.task_started(a, Phase::Map, n, Locality::Node, 0).unwrap();
        e.task_finished(a, Phase::Map, n, 1000, true, 1000).unwrap();
        e.replan(1000);
        (e, n, a)
    }

    #[test]
    fn data_affinity_delays_remote_tasks_only_while_on_track() {
        // Goal in an hour: 8 pending seconds of work need far less than the slot it holds (s_req < 0).
        let (mut e, n, a) = affinity_engine("2", 3_600_000);
        assert_eq!(e.plan().locality_waits, vec![(a, 2)]);
        let loc = |e: &mut Engine| e.node_update(n, [3, 0], 1000).unwrap()[0].locality;
        assert_eq!(loc(&mut e), Locality::Node);
        assert_eq!(loc(&mut e), Locality::Node);
        assert_eq!(loc(&mut e), Locality::Any, "no rack level: 2 waits, then any slot");
        e.task_started(a, Phase::Map, n, Locality::Any, 1000).unwrap();
        assert_eq!(loc(&mut e), Locality::Node, "each task gets its own delays");
        // Goal in 3 s: 8 s of work need ~2.7 more slots; a remote task launches at once, although the
        // engine's global rule (3 node + 3 rack offers) would delay it.
        let (mut e, n, a) = affinity_engine("2", 4_000);
        assert_eq!(e.plan().locality_waits, vec![(a, 0)]);
        assert_eq!(e.node_update(n, [3, 0], 1000).unwrap()[0].locality, Locality::Any);
        // Data affinity off: the plan says nothing and the global rule applies.
        let mut cfg = EngineConfig { policy: "adaptive".into(), ..EngineConfig::default() };
        cfg.params.insert("circumflex.adaptive.locality.delays".into(), "x".into());
        assert!(crate::new_engine(cfg).unwrap_err().to_string().contains("circumflex.adaptive.locality.delays"));
    }

    #[test]
    fn without_data_affinity_the_plan_leaves_locality_to_the_engine() {
        let jobs = vec![job(0, 0, Some(1_000_000), 10, 1, 2)];
        let active = [JobId(0)];
        let cluster = ClusterView { map_slots: 4, reduce_slots: 0, mode: PoolMode::Split, nodes: 1 };
        let snap = Snapshot::new(10_000, cluster, &jobs, &active);
        assert!(AdaptivePolicy::new(AdaptiveConfig::default()).plan(&snap).locality_waits.is_empty());
        let cfg = AdaptiveConfig { locality_delays: Some(3), ..AdaptiveConfig::default() };
        assert_eq!(AdaptivePolicy::new(cfg).plan(&snap).locality_waits, vec![(JobId(0), 3)]);
    }

    proptest! {
        #[test]
        fn targets_within_capacity_and_demand(
            specs in prop::collection::vec((0i64..50_000, prop::option::of(1i64..400_000), 1u32..30, 0u32..5), 1..20),
            cap in 1u32..30, now in 0i64..200_000,
        ) {
            let jobs: Vec<JobState> = specs.iter().enumerate()
                .map(|(i, &(sub, goal, m, f))| job(i as u32, sub, goal.map(|g| sub + g), m + f, f, 0)).collect();
            let active: Vec<JobId> = jobs.iter().map(|j| j.id).collect();
            let cluster = ClusterView { map_slots: cap, reduce_slots: 0, mode: PoolMode::Split, nodes: 1 };
            let snap = Snapshot::new(now, cluster, &jobs, &active);
            let mut p = AdaptivePolicy::new(AdaptiveConfig::default());
            let plan = p.plan(&snap);
            prop_assert_eq!(plan.entries.len(), jobs.len());
            let total: u32 = plan.entries.iter().map(|e| e.target[0]).sum();
            let demand: u32 = jobs.iter().map(|j| j.phase(Phase::Map).pending).sum();
            prop_assert_eq!(total, cap.min(demand), "work conserving");
            for e in &plan.entries {
                prop_assert!(e.target[0] <= snap.job(e.job).phase(Phase::Map).pending);
            }
            prop_assert_eq!(plan, p.plan(&snap));
        }

        #[test]
        fn running_tasks_do_not_freeze_the_division(
            specs in prop::collection::vec((prop::option::of(1i64..400_000), 1u32..30, 0u32..5, 0u32..4), 1..12),
            now in 0i64..200_000,
        ) {
            // Jobs hold running tasks (at most the cluster): the whole pool is still divided, by need.
            let jobs: Vec<JobState> = specs.iter().enumerate()
                .map(|(i, &(goal, m, f, r))| job(i as u32, 0, goal, m + f + r, f, r)).collect();
            let held: u32 = jobs.iter().map(|j| j.phase(Phase::Map).running).sum();
            let cap = held.max(1) + 3;
            let active: Vec<JobId> = jobs.iter().map(|j| j.id).collect();
            let cluster = ClusterView { map_slots: cap, reduce_slots: 0, mode: PoolMode::Split, nodes: 1 };
            let snap = Snapshot::new(now, cluster, &jobs, &active);
            let plan = AdaptivePolicy::new(AdaptiveConfig::default()).plan(&snap);
            let total: u32 = plan.entries.iter().map(|e| e.target[0]).sum();
            let demand: u32 = jobs.iter().map(|j| j.phase(Phase::Map).remaining()).sum();
            prop_assert_eq!(total, cap.min(demand), "the whole pool, not only its free slots");
            for e in &plan.entries {
                prop_assert!(e.target[0] <= snap.job(e.job).phase(Phase::Map).remaining());
            }
        }
    }

    #[test]
    fn a_freed_slot_goes_to_the_needier_newcomer() {
        // Job 0 (goal far away) holds all 4 slots; job 1 arrives with a tight goal. Job 0's target
        // drops below what it holds, so the slot its next finished task frees goes to job 1.
        let jobs = vec![job(0, 0, Some(10_000_000), 100, 1, 4), job(1, 0, Some(40_000), 20, 1, 0)];
        let active = [JobId(0), JobId(1)];
        let cluster = ClusterView { map_slots: 4, reduce_slots: 0, mode: PoolMode::Split, nodes: 1 };
        let snap = Snapshot::new(10_000, cluster, &jobs, &active);
        let plan = AdaptivePolicy::new(AdaptiveConfig::default()).plan(&snap);
        assert_eq!(plan.entry(JobId(1)).unwrap().target, [4, 0]);
        assert_eq!(plan.entry(JobId(0)).unwrap().target, [0, 0]);
    }

    /// An engine running `adaptive` with hardware affinity: one accelerated node `acc` (2 map slots),
    /// three regular nodes (2 map slots each), and two jobs of 40 maps with a goal at 1000 s.
    fn hardware_engine() -> (Engine, NodeId, NodeId, JobId, JobId) {
        let cfg = EngineConfig::from_pairs([
            ("circumflex.policy", "adaptive"),
            ("circumflex.adaptive.accelerated.hosts", "acc"),
        ])
        .unwrap();
        let mut e = crate::new_engine(cfg).unwrap();
        let acc = e.add_node("acc", "/r", 2, 0);
        let reg = e.add_node("reg0", "/r", 2, 0);
        // A YARN node name with its port is matched by host; an unlisted host is not.
        let yarn = e.add_node("acc:8041", "/r", 0, 0);
        let other = e.add_node("acc2:8041", "/r", 0, 0);
        assert!(e.nodes()[yarn.0 as usize].accelerated && !e.nodes()[other.0 as usize].accelerated);
        e.add_node("reg1", "/r", 2, 0);
        e.add_node("reg2", "/r", 2, 0);
        assert!(e.nodes()[acc.0 as usize].accelerated && !e.nodes()[reg.0 as usize].accelerated);
        assert_eq!(e.accelerated_map_slots(), 2);
        let mut spec = JobSpec::new(0, 40, 0);
        spec.goal_ms = Some(1_000_000);
        let a = e.submit(spec.clone(), 0).unwrap().0;
        let b = e.submit(spec, 0).unwrap().0;
        (e, acc, reg, a, b)
    }

    fn offered(choices: &[circumflex_core::engine::Choice], job: JobId) -> u32 {
        choices.iter().filter(|c| c.job == job && c.phase == Phase::Map).map(|c| c.count).sum()
    }

    #[test]
    fn calibration_runs_one_map_on_each_pool_then_classifies() {
        let (mut e, acc, reg, a, b) = hardware_engine();
        e.replan(0);
        // Both jobs calibrate: one accelerated slot each, served before the deficit passes.
        assert_eq!(e.plan().accelerated_targets, vec![(a, 1), (b, 1)]);
        let choices = e.node_update(acc, [2, 0], 0).unwrap().to_vec();
        assert_eq!((offered(&choices, a), offered(&choices, b)), (1, 1));
        for j in [a, b] {
            e.task_started(j, Phase::Map, acc, Locality::Any, 0).unwrap();
            e.task_started(j, Phase::Map, reg, Locality::Any, 0).unwrap();
        }
        // Job a gains 10x on the accelerator, job b (I/O-bound) nothing.
        e.task_finished(a, Phase::Map, acc, 10_000, true, 10_000).unwrap();
        e.task_finished(b, Phase::Map, acc, 100_000, true, 100_000).unwrap();
        e.task_finished(a, Phase::Map, reg, 100_000, true, 100_000).unwrap();
        e.task_finished(b, Phase::Map, reg, 100_000, true, 100_000).unwrap();
        let pools = e.job(a).unwrap().map_pools;
        assert_eq!((pools.finished, pools.finished_ms_sum, pools.running), ([1, 1], [100_000, 10_000], [0, 0]));
        e.replan(100_000);
        // Job a is accelerable: 38 maps of 10 s in 900 s need 1 accelerated slot (Eq. 2), which the
        // pool holds, so Eq. 3 asks for no regular slot; the pool's other slot is left over and goes
        // to job a too (it prefers the pool). Job b is regular and unlisted.
        let plan = e.plan().clone();
        assert_eq!(plan.accelerated_targets, vec![(a, 2)]);
        assert_eq!(plan.entry(a).unwrap().target[0], 2);
        // The accelerated node serves job a first; a regular node gives it nothing beyond Eq. 3.
        let choices = e.node_update(acc, [2, 0], 100_000).unwrap().to_vec();
        assert_eq!(offered(&choices, a), 2);
        let choices = e.node_update(reg, [2, 0], 100_000).unwrap().to_vec();
        assert_eq!((offered(&choices, a), offered(&choices, b)), (0, 2), "{choices:?}");
    }

    #[test]
    fn accelerable_job_overflows_to_regular_slots_by_equation_3() {
        let (mut e, acc, reg, a, b) = hardware_engine();
        e.finish_job(b, 0).unwrap();
        e.task_started(a, Phase::Map, acc, Locality::Any, 0).unwrap();
        e.task_started(a, Phase::Map, reg, Locality::Any, 0).unwrap();
        e.task_finished(a, Phase::Map, acc, 50_000, true, 50_000).unwrap();
        e.task_finished(a, Phase::Map, reg, 100_000, true, 100_000).unwrap();
        // 38 maps of 50 s accelerated in 100 s: Eq. 2 asks 19 accelerated slots, the pool has 2,
        // so Eq. 3 adds (100/50)·(19 − 2) = 34 regular slots: 36 in all.
        e.replan(900_000);
        assert_eq!(e.plan().accelerated_targets, vec![(a, 2)]);
        assert_eq!(e.plan().entry(a).unwrap().target[0], 36);
        let choices = e.node_update(reg, [2, 0], 900_000).unwrap().to_vec();
        assert_eq!(offered(&choices, a), 2);
    }

    proptest! {
        #[test]
        fn accelerated_targets_fit_the_pool_and_the_job_target(
            acc_slots in 0u32..6,
            specs in prop::collection::vec((1u32..40, 0u32..3, 0u32..3, 1i64..200, 1i64..200), 1..6),
        ) {
            // Jobs with (pending, running on regular, running on accelerated, µ_reg s, µ_acc s).
            let mut jobs = Vec::new();
            let mut held = 0;
            for (i, &(pending, run_reg, run_acc, reg, acc)) in specs.iter().enumerate() {
                let mut j = job(i as u32, 0, Some(600_000), pending + run_reg + run_acc + 2, 2, run_reg + run_acc);
                j.map_pools.running = [run_reg, run_acc];
                j.map_pools.finished = [1, 1];
                j.map_pools.finished_ms_sum = [reg * 1000, acc * 1000];
                held += run_reg + run_acc;
                jobs.push(j);
            }
            let cap = held + acc_slots + 4;
            let active: Vec<JobId> = jobs.iter().map(|j| j.id).collect();
            let cluster = ClusterView { map_slots: cap, reduce_slots: 0, mode: PoolMode::Split, nodes: 1 };
            let mut policy = AdaptivePolicy::new(AdaptiveConfig::default());
            policy.on_accelerated_capacity(acc_slots);
            let plan = policy.plan(&Snapshot::new(10_000, cluster, &jobs, &active));
            let listed: u32 = plan.accelerated_targets.iter().map(|t| t.1).sum();
            prop_assert!(listed <= acc_slots);
            for &(job, n) in &plan.accelerated_targets {
                let j = snap_job(&jobs, job);
                let speedup = j.map_pools.mean_ms(0).unwrap() / j.map_pools.mean_ms(1).unwrap();
                prop_assert!(speedup > 1.5, "only accelerable jobs are listed once calibrated");
                prop_assert!(plan.entry(job).unwrap().target[0] >= n);
            }
            if acc_slots == 0 {
                prop_assert!(plan.accelerated_targets.is_empty());
            }
        }
    }

    fn snap_job(jobs: &[JobState], id: JobId) -> &JobState {
        &jobs[id.0 as usize]
    }
}
