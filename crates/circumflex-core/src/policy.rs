//! The policy contract: a snapshot in, a plan out.
//!
//! A policy answers two questions (design brief, "Policy"):
//! 1. **Every epoch** (and on arrivals and departures): given a [`Snapshot`] of the cluster and the
//!    active jobs, produce a [`Plan`]: target slots per job and phase, in priority order.
//! 2. **At submission**: admit or reject a job ([`Policy::admit`]); the default admits all.
//!
//! The per-heartbeat *assignment* (which jobs get this node's free slots) is mechanism shared by
//! every policy and lives in the engine: it serves the job that is most under-allocated relative
//! to its target, then spare capacity in plan order, with delay scheduling for locality. That is
//! the FLEX assignment layer, and FIFO and Fair are expressed through their targets.
//!
//! **Architecture invariant:** policies are pure and deterministic. A policy never does IO, never
//! reads a clock and never calls into the host; the same snapshot gives the same plan, so what
//! the simulator measures is what runs in Hadoop. Policies may keep internal state across calls
//! (learned cost parameters, admission ledgers) as long as it is a function of the calls made.
//!
//! **Incremental re-plans.** The engine's snapshots say which jobs changed since the policy's
//! previous plan ([`Snapshot::with_changes`]), so a policy may keep what it derived from the jobs
//! and re-read only those ([`rows::JobRows`]: FIFO, Fair and FLEX keep theirs there); the plan
//! must still be exactly the one the snapshot alone gives. Policies that ignore the change list lose nothing.
//!
//! **Predictions on demand.** A plan's predicted completions are for people (the status JSON and
//! the scheduler page), never read by the engine's heartbeats or re-plans. A policy may leave them
//! out ([`Plan::completions_pending`]) and fill them when a status view asks
//! ([`Policy::predict_completions`], through `Engine::predict_completions`), from what it kept of
//! the plan: the predictions are the plan's, as of its snapshot, bit for bit. FLEX does, because
//! its full packing (every job's completion, `O(J log J)`) costs more than its order and its
//! first-interval targets (`docs/performance.md` §17). The method takes no snapshot on purpose: by
//! the time a view asks, the engine's jobs have moved on, and a prediction from them would not be
//! the plan's.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::model::{JobId, JobState, Phase, Time, Work};

pub mod rows;

/// How slots are pooled.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PoolMode {
    /// Separate map and reduce slots (MRv1 TaskTrackers).
    Split,
    /// One pool shared by both phases (YARN containers; FlowFlex and ASRPT's model).
    Shared,
}

/// A set of interchangeable slots that one allocation problem divides.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pool {
    /// Slots in the pool.
    pub capacity: u32,
    /// Phases that draw on this pool.
    pub phases: &'static [Phase],
}

/// The cluster as policies see it: capacities only; node identity is the engine's business.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClusterView {
    /// Total map slots (in [`PoolMode::Shared`], the whole pool is `map_slots + reduce_slots`).
    pub map_slots: u32,
    /// Total reduce slots.
    pub reduce_slots: u32,
    /// Pooling.
    pub mode: PoolMode,
    /// Live nodes.
    pub nodes: u32,
}

const MAP_ONLY: &[Phase] = &[Phase::Map];
const REDUCE_ONLY: &[Phase] = &[Phase::Reduce];
const BOTH: &[Phase] = &[Phase::Map, Phase::Reduce];

impl ClusterView {
    /// The allocation problems this cluster poses: two in split mode, one in shared mode.
    pub fn pools(&self) -> impl Iterator<Item = Pool> {
        let pools: [Option<Pool>; 2] = match self.mode {
            PoolMode::Split => [
                Some(Pool { capacity: self.map_slots, phases: MAP_ONLY }),
                Some(Pool { capacity: self.reduce_slots, phases: REDUCE_ONLY }),
            ],
            PoolMode::Shared => [Some(Pool { capacity: self.map_slots + self.reduce_slots, phases: BOTH }), None],
        };
        pools.into_iter().flatten()
    }

    /// Total slots of all pools.
    pub fn total_slots(&self) -> u32 {
        self.map_slots + self.reduce_slots
    }
}

/// Where a [`Snapshot`] finds jobs by id. The engine implements it over its job table, in which
/// finished and rejected jobs are retired (freed) once they end; a retired id resolves to `None`.
pub trait JobLookup {
    /// The job with id `id`, if the source still holds it.
    fn lookup(&self, id: JobId) -> Option<&JobState>;
}

#[derive(Clone, Copy)]
enum Jobs<'a> {
    /// Indexed by `JobId.0` (tests, benchmarks, studies that build jobs by hand).
    Dense(&'a [JobState]),
    /// The engine's table.
    Lookup(&'a dyn JobLookup),
}

/// What a policy sees at planning time. Borrowed from the engine; cheap to build.
///
/// Policies reach jobs only through [`Snapshot::job`] (ids that are active, or the admission
/// candidate), [`Snapshot::active_jobs`], and [`Snapshot::try_job`] for ids a policy remembers
/// from earlier calls: those may have been retired, and a retired job counts as finished.
#[derive(Clone, Copy)]
pub struct Snapshot<'a> {
    /// Current time.
    pub now: Time,
    /// Capacities.
    pub cluster: ClusterView,
    jobs: Jobs<'a>,
    /// Ids of active jobs, in submission order (then id).
    pub active: &'a [JobId],
    /// What changed since this policy's previous plan, when the caller knows ([`Snapshot::with_changes`]).
    changes: Option<&'a [JobId]>,
}

impl std::fmt::Debug for Snapshot<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Snapshot")
            .field("now", &self.now)
            .field("cluster", &self.cluster)
            .field("active", &self.active)
            .finish()
    }
}

/// What [`Snapshot::job`] answers for an id it does not hold (a policy bug, caught by a debug
/// assertion): a finished job with no tasks, so release builds treat it as retired, never panic.
fn retired_placeholder() -> &'static JobState {
    static RETIRED: std::sync::OnceLock<JobState> = std::sync::OnceLock::new();
    RETIRED.get_or_init(|| {
        let mut job = JobState::new(JobId(u32::MAX), crate::model::JobSpec::new(0, 0, 0));
        job.status = crate::model::JobStatus::Finished;
        job
    })
}

impl<'a> Snapshot<'a> {
    /// A snapshot over `jobs` indexed by `JobId.0` (every job, any status).
    pub fn new(now: Time, cluster: ClusterView, jobs: &'a [JobState], active: &'a [JobId]) -> Snapshot<'a> {
        Snapshot { now, cluster, jobs: Jobs::Dense(jobs), active, changes: None }
    }

    /// A snapshot whose jobs come from `jobs` (the engine's table).
    pub fn with_lookup(now: Time, cluster: ClusterView, jobs: &'a dyn JobLookup, active: &'a [JobId]) -> Snapshot<'a> {
        Snapshot { now, cluster, jobs: Jobs::Lookup(jobs), active, changes: None }
    }

    /// The snapshot of an incremental re-plan: `changed` lists (a superset of) the jobs whose
    /// state changed since the previous [`Policy::plan`] call on the same policy, so a policy that
    /// kept what it derived from that call may re-read only these jobs and the arrivals in
    /// [`Snapshot::active`] (departures are the ids missing from it). The caller promises, for every
    /// snapshot it gives a policy this way (the engine does, `Engine::replan`):
    /// - every id in `active` is listed once and its job's status is Active;
    /// - a job's [`JobSpec`](crate::model::JobSpec) never changes while it is active;
    /// - a job not listed in `changed` has the state it had at that previous call (an id in
    ///   `changed` that is no longer active is ignored).
    ///
    /// A policy may ignore it: the plan must be exactly the one the snapshot alone gives. A policy
    /// that plans through another one passes the list on only if it calls that one at every plan
    /// (else [`Snapshot::without_changes`]).
    pub fn with_changes(mut self, changed: &'a [JobId]) -> Snapshot<'a> {
        self.changes = Some(changed);
        self
    }

    /// The same snapshot without a change list: a policy given it derives everything afresh.
    pub fn without_changes(mut self) -> Snapshot<'a> {
        self.changes = None;
        self
    }

    /// The jobs changed since this policy's previous plan, if the caller said
    /// ([`Snapshot::with_changes`]); `None`: unknown, any job may have changed.
    pub fn changes(&self) -> Option<&'a [JobId]> {
        self.changes
    }

    /// The job with id `id`, or `None` if it is unknown or retired (ended: finished or rejected).
    #[inline]
    pub fn try_job(&self, id: JobId) -> Option<&'a JobState> {
        match self.jobs {
            Jobs::Dense(jobs) => jobs.get(id.0 as usize),
            Jobs::Lookup(lookup) => lookup.lookup(id),
        }
    }

    /// The job with id `id`, which must be active (or the candidate of [`Policy::admit`], or the
    /// job of [`Policy::on_job_finished`]). An id the snapshot does not hold is a policy bug: debug
    /// builds assert; release builds get a finished placeholder with no tasks.
    #[inline]
    pub fn job(&self, id: JobId) -> &'a JobState {
        match self.try_job(id) {
            Some(job) => job,
            None => {
                debug_assert!(false, "snapshot has no job {}: use try_job for ids that may be retired", id.0);
                retired_placeholder()
            }
        }
    }

    /// Whether `id` is known and has ended (finished, rejected, or retired).
    pub fn has_ended(&self, id: JobId) -> bool {
        !self.try_job(id).is_some_and(JobState::is_active)
    }

    /// Active jobs in submission order.
    pub fn active_jobs(&self) -> impl Iterator<Item = &'a JobState> + '_ {
        self.active.iter().map(move |id| self.job(*id))
    }
}

/// Slots a job could use in `pool` right now: running tasks plus runnable pending tasks.
pub fn pool_demand(job: &JobState, pool: &Pool) -> u32 {
    pool.phases
        .iter()
        .map(|&ph| {
            let p = job.phase(ph);
            p.running + if job.runnable(ph) { p.pending } else { 0 }
        })
        .sum()
}

/// The (one or two) pools of a snapshot's cluster on the stack, for policies that read every
/// job's per-pool figures in one walk over the job states instead of one walk per pool.
#[derive(Clone, Copy, Debug)]
pub struct Pools {
    pools: [Option<Pool>; 2],
}

impl Pools {
    /// The pools of `snapshot.cluster`, in [`ClusterView::pools`] order.
    pub fn of(snapshot: &Snapshot<'_>) -> Pools {
        let mut it = snapshot.cluster.pools();
        Pools { pools: [it.next(), it.next()] }
    }

    /// `(k, pool)` for each pool; `k` indexes [`Pools::demands`].
    pub fn iter(&self) -> impl Iterator<Item = (usize, &Pool)> {
        self.pools.iter().enumerate().filter_map(|(k, p)| p.as_ref().map(|p| (k, p)))
    }

    /// [`pool_demand`] of `job` in each pool (0 where there is no second pool).
    pub fn demands(&self, job: &JobState) -> [u32; 2] {
        self.pools.map(|p| p.map_or(0, |p| pool_demand(job, &p)))
    }
}

/// Remaining work of a job in `pool` (all phases of the pool, runnable or not), slot-ms.
pub fn pool_remaining_work(job: &JobState, pool: &Pool) -> Work {
    pool.phases.iter().map(|&ph| job.remaining_work(ph)).sum()
}

/// The job's minimum and maximum slots within a pool of `capacity`, clamped so that
/// `min <= max <= capacity` (FLEX `m_j`, `M_j`).
pub fn slot_bounds(job: &JobState, capacity: u32) -> (u32, u32) {
    slot_bounds_of(job.spec.min_slots, job.spec.max_slots, capacity)
}

/// [`slot_bounds`] from a spec's `min_slots` and `max_slots`.
pub fn slot_bounds_of(min_slots: u32, max_slots: Option<u32>, capacity: u32) -> (u32, u32) {
    let max = max_slots.unwrap_or(capacity).min(capacity);
    (min_slots.min(max), max)
}

/// One job's line in a plan.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct PlanEntry {
    /// The job.
    pub job: JobId,
    /// Target slots per phase, indexed by [`Phase::idx`]. In a shared pool the policy's total
    /// is split map-first by [`PlanBuilder::set_pool_target`].
    pub target: [u32; 2],
    /// The policy's predicted completion time, if it computes one.
    pub predicted_completion_ms: Option<Time>,
}

impl PlanEntry {
    /// Sets the target in `pool` to `slots` ([`PlanBuilder::set_pool_target`]): in a shared pool
    /// the slots go to runnable maps first (`map_demand`: running plus runnable pending maps,
    /// asked only for a non-zero target), then to reduces.
    #[inline]
    pub fn set_pool_target(&mut self, pool: &Pool, slots: u32, map_demand: impl FnOnce() -> u32) {
        if pool.phases.len() == 1 {
            self.target[pool.phases[0].idx()] = slots;
            return;
        }
        if slots == 0 {
            self.target = [0, 0];
            return;
        }
        let maps = slots.min(map_demand());
        self.target[Phase::Map.idx()] = maps;
        self.target[Phase::Reduce.idx()] = slots - maps;
    }
}

/// Admission decision for a submitted job.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "decision", rename_all = "snake_case")]
pub enum Admission {
    /// Run it.
    Accept,
    /// Refuse it; `reason` is shown to the submitter.
    Reject {
        /// Why, with figures (e.g. "finishes at ... 12.3 s after its deadline").
        reason: String,
    },
}

/// How the engine turns a plan into per-heartbeat choices. The policy picks the rule (it is part
/// of the plan, so policies stay pure); the engine executes it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "rule", rename_all = "snake_case")]
pub enum AssignmentRule {
    /// The FLEX assignment layer: most under-allocated job relative to its target first, then
    /// spare capacity in plan order. `O(k log n)` per heartbeat.
    #[default]
    Deficit,
    /// The deficit rule with jobs below their target served in plan order instead of by relative
    /// allocation: a slot that frees goes to the highest-ranked job below its target (so a job whose
    /// target covers all its tasks gets them together rather than one per heartbeat beside every
    /// other job below target), then spare capacity in plan order. The order preemption assumes
    /// natural frees go in (`engine/preempt.rs`); FLEX asks for it when preemption is on
    /// (`docs/quality.md`). `O(k log n)` per heartbeat, as [`AssignmentRule::Deficit`].
    RankedDeficit,
    /// Strict plan order, as Hadoop's JobQueueTaskScheduler and the real-time schedulers dispatch:
    /// free slots go to the highest-ranked runnable job first. `O(n)` per heartbeat, meant for
    /// admission-controlled queues, which are short.
    StrictPriority {
        /// Never run more tasks of a phase than its target (non-work-conserving caps, as the
        /// Deadline Constraint scheduler's `n_m^min`).
        cap_at_target: bool,
        /// RTMR's reduce dispatcher (Algorithm IV): a job may start a reduce only while the cluster's
        /// free reduce slots exceed the reduce counts of all higher-ranked jobs still in their map stage.
        reserve_reduces: bool,
    },
}

/// The unit the engine's preemption prices a kill in (`engine/preempt.rs`, "Only when worth it"): the
/// beneficiary's gain against the victim's loss, each a delay of one job. The policy picks it with the
/// plan (its objective knows what a delay costs); the engine executes it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum KillPrice {
    /// A millisecond of delay costs the same for every job (response-time objectives, fair sharing).
    #[default]
    Time,
    /// A millisecond of delay costs `1 / isolated time` of the job that suffers it: its stretch, what
    /// the stretch objectives sum or maximize. The isolated time is the engine's estimate, FLEX's
    /// definition (per phase, total work over `min(pool capacity, tasks of the phase)`, summed).
    Stretch,
}

impl KillPrice {
    /// Whether this is the default (the serialized plan then omits it).
    pub fn is_time(&self) -> bool {
        *self == KillPrice::Time
    }
}

/// The output of one planning round: priority order and targets.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    /// When it was computed.
    pub computed_at: Time,
    /// Entries in priority order, highest first. Every active job appears exactly once.
    pub entries: Vec<PlanEntry>,
    /// How heartbeats are answered from this plan.
    #[serde(default)]
    pub rule: AssignmentRule,
    /// The flows (DAGs of jobs) the policy planned with, for reports and tests; empty for
    /// policies that do not model flows (FlowFlex fills it). Shared (`Arc`) so a policy can report
    /// an unchanged flow plan after plan without copying its names (issue 20).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flows: Vec<Arc<PlanFlow>>,
    /// The shared scans (subjob chains per dataset) the policy planned with, for the status page
    /// and tests; empty for policies that do not model shared scans (CIRCUMFLEX fills it).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scans: Vec<PlanScan>,
    /// Per-job locality waits that replace the engine's global delay scheduling for those jobs:
    /// `(job, n)` lets each map task of `job` skip at most `n` offers waiting for a node-local slot,
    /// then take any slot (no rack level). Empty for policies that leave locality to the engine.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub locality_waits: Vec<(JobId, u32)>,
    /// Hardware affinity: `(job, n)` says `job` should run `n` of its map slots on accelerated
    /// nodes, and the rest of its map target on regular ones. On an accelerated node the listed jobs
    /// below `n` are served first, in list order; on a regular node a listed job takes maps only
    /// while its regular-node maps are below `target[map] - n`. Unlisted jobs are unrestricted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub accelerated_targets: Vec<(JobId, u32)>,
    /// How preemption prices a kill ([`KillPrice`]); only read with preemption on.
    #[serde(default, skip_serializing_if = "KillPrice::is_time")]
    pub kill_price: KillPrice,
    /// Keep part of each pool out of reach of long tasks (only read with preemption on): tasks
    /// expected to run longer than preemption takes to hand a slot back (`delay.ms + grace.ms`) may
    /// hold at most `1 − max.fraction` of the pool, so that jobs arriving behind them find slots
    /// at the next heartbeats instead of waiting for a kill (`engine.rs`, "Long-task reserve";
    /// `docs/quality.md`, session 12). FLEX asks for it with preemption on.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub long_task_reserve: bool,
    /// The entries' [`PlanEntry::predicted_completion_ms`] are not filled yet: the policy that made
    /// this plan computes them on demand ([`Policy::predict_completions`]), exactly as it would
    /// have at planning time. Nothing on the heartbeat or re-plan path reads predictions, so a
    /// policy whose predictions cost more than its order and targets (FLEX: the full packing)
    /// leaves them out of the plan; the status views ask for them (`Engine::predict_completions`).
    /// Not serialized: a plan is serialized only with its predictions filled.
    #[serde(skip)]
    pub completions_pending: bool,
}

/// A flow as a flow-aware policy saw it when planning.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PlanFlow {
    /// `mapreduce.workflow.id`, or `job-<id>` for a job without a flow (a singleton flow).
    pub flow_id: String,
    /// The flow's unfinished nodes.
    pub nodes: Vec<PlanFlowNode>,
}

/// One node of a [`PlanFlow`].
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PlanFlowNode {
    /// `mapreduce.workflow.node.name`.
    pub name: String,
    /// The engine job, or `None` for a node not yet submitted (known from adjacency keys).
    pub job: Option<JobId>,
    /// Names of the node's unfinished predecessors.
    pub predecessors: Vec<String>,
}

/// A dataset's shared scan as a scan-aware policy saw it when planning: its chain of subjobs.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PlanScan {
    /// `JobSpec.dataset` (`circumflex.job.dataset`, or the job's sorted input paths).
    pub dataset: String,
    /// The jobs with map work left on the dataset, oldest first: the `k`-th owns subjob `(d,k)`,
    /// so `subjobs[0]` is the ready subjob, the one being scanned (the scan's cursor).
    pub subjobs: Vec<PlanSubjob>,
}

/// One subjob `(d,k)` of a [`PlanScan`]: the splits its owning job scans for itself and for every
/// newer job of the chain.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct PlanSubjob {
    /// The owning job.
    pub job: JobId,
    /// Map tasks (splits) of the job not finished yet: pending plus running.
    pub splits_left: u32,
    /// Map tasks of the job already finished: how far the scan of this subjob has come.
    pub splits_done: u32,
    /// The subjob's remaining work `p_{d,k}` in the pool the chain was planned in, slot-ms.
    pub work_ms: f64,
    /// Remaining amount `r_k = p_{d,1} + … + p_{d,k}`, slot-ms: what job `k` still has to see.
    pub remaining_ms: f64,
    /// Jobs the subjob's scan serves, `K_d − k + 1`.
    pub concurrency: u32,
}

impl Plan {
    /// The entry of `job`, if present (linear; for tests and reports, not the hot path).
    pub fn entry(&self, job: JobId) -> Option<&PlanEntry> {
        self.entries.iter().find(|e| e.job == job)
    }

    /// Sum of targets over `phase`.
    pub fn total_target(&self, phase: Phase) -> u32 {
        self.entries.iter().map(|e| e.target[phase.idx()]).sum()
    }

    /// A writer of predicted completions into this plan's entries, by job id (for
    /// [`Policy::predict_completions`]); `O(entries)` to build, `O(1)` per prediction when the
    /// ids are dense. Status path only: it allocates its index.
    pub fn predictor(&mut self) -> Predictor<'_> {
        let ids: Vec<JobId> = self.entries.iter().map(|e| e.job).collect();
        let mut pos = Positions::new(&ids);
        for (i, &id) in ids.iter().enumerate() {
            if let Some(slot) = pos.slot(id) {
                // A job listed twice (never in a built plan) keeps its first entry, as the builder.
                if *slot == UNPLACED {
                    *slot = i as u32;
                }
            }
        }
        Predictor { plan: self, pos }
    }
}

/// Writes predicted completions into a plan's entries ([`Plan::predictor`]).
#[derive(Debug)]
pub struct Predictor<'a> {
    plan: &'a mut Plan,
    pos: Positions,
}

impl Predictor<'_> {
    /// Records a predicted completion for `job` exactly as [`PlanBuilder::set_predicted_completion`]
    /// does (the latest of those given for one job wins); a job not in the plan is ignored.
    pub fn set(&mut self, job: JobId, at: Time) {
        if let Some(p) = self.pos.get(job) {
            let e = &mut self.plan.entries[p];
            e.predicted_completion_ms = Some(e.predicted_completion_ms.map_or(at, |x| x.max(at)));
        }
    }
}

/// Where [`PlanBuilder`] finds a job's plan entry: the one lookup every `set_*` call makes, so
/// it is the plan plumbing's hot path (`docs/performance.md`).
#[derive(Debug)]
enum Positions {
    /// Entry position by `id - base`, for the usual case of active ids in a narrow range (the
    /// engine numbers jobs in submission order, so the active ones are the ids of one window).
    /// [`ABSENT`] marks ids that are not active, [`UNPLACED`] active ids not yet in the order.
    Dense { base: u32, pos: Vec<u32> },
    /// `(job, position)` sorted by job, for sparse id sets: sized by the active jobs, not by ids.
    Sorted(Vec<(JobId, u32)>),
}

/// Not an active job of the snapshot.
const ABSENT: u32 = u32::MAX;
/// Active, but not placed in the plan yet.
const UNPLACED: u32 = u32::MAX - 1;

impl Positions {
    /// The index over `active`, every job [`UNPLACED`]. Dense when the id range is at most four
    /// times the number of active jobs (plus a little), so memory stays `O(active)` either way.
    fn new(active: &[JobId]) -> Positions {
        let (lo, hi) = active.iter().fold((u32::MAX, 0u32), |(lo, hi), id| (lo.min(id.0), hi.max(id.0)));
        if !active.is_empty() && ((hi - lo) as u64) < 4 * active.len() as u64 + 64 {
            let mut pos = vec![ABSENT; (hi - lo) as usize + 1];
            for id in active {
                pos[(id.0 - lo) as usize] = UNPLACED;
            }
            return Positions::Dense { base: lo, pos };
        }
        let mut pos: Vec<(JobId, u32)> = active.iter().map(|&id| (id, UNPLACED)).collect();
        pos.sort_unstable();
        pos.dedup_by_key(|p| p.0);
        Positions::Sorted(pos)
    }

    /// The slot of `id` ([`UNPLACED`] or its position), or `None` if `id` is not active.
    #[inline]
    fn slot(&mut self, id: JobId) -> Option<&mut u32> {
        match self {
            Positions::Dense { base, pos } => {
                let slot = pos.get_mut(id.0.checked_sub(*base)? as usize)?;
                (*slot != ABSENT).then_some(slot)
            }
            Positions::Sorted(pos) => {
                let k = pos.binary_search_by_key(&id, |p| p.0).ok()?;
                Some(&mut pos[k].1)
            }
        }
    }

    /// Position of `id` in the plan's entries, if it is there.
    #[inline]
    fn get(&self, id: JobId) -> Option<usize> {
        let p = match self {
            Positions::Dense { base, pos } => *pos.get(id.0.checked_sub(*base)? as usize)?,
            Positions::Sorted(pos) => pos[pos.binary_search_by_key(&id, |p| p.0).ok()?].1,
        };
        (p < UNPLACED).then_some(p as usize)
    }
}

/// Helps policies assemble a [`Plan`] pool by pool without knowing the pool mode.
#[derive(Debug)]
pub struct PlanBuilder<'a> {
    snapshot: &'a Snapshot<'a>,
    plan: Plan,
    pos: Positions,
}

impl<'a> PlanBuilder<'a> {
    /// Starts a plan whose priority order is `order` (must list every active job once; jobs
    /// missing from it are appended in submission order so none is ever dropped; repeated and
    /// inactive ids are skipped).
    pub fn new(snapshot: &'a Snapshot<'a>, order: impl IntoIterator<Item = JobId>) -> PlanBuilder<'a> {
        let mut pos = Positions::new(snapshot.active);
        let mut entries = Vec::with_capacity(snapshot.active.len());
        // An incremental snapshot promises that every active id is an Active job
        // ([`Snapshot::with_changes`]): no job state is read to check it.
        let checked = snapshot.changes().is_some();
        let mut push = |id: JobId, entries: &mut Vec<PlanEntry>| {
            let Some(slot) = pos.slot(id) else { return };
            if *slot == UNPLACED && (checked || snapshot.try_job(id).is_some_and(JobState::is_active)) {
                *slot = entries.len() as u32;
                entries.push(PlanEntry { job: id, target: [0, 0], predicted_completion_ms: None });
            }
        };
        for id in order {
            push(id, &mut entries);
        }
        // Only when the order forgot someone: re-walking every active id costs a job lookup each.
        if entries.len() < snapshot.active.len() {
            for &id in snapshot.active {
                push(id, &mut entries);
            }
        }
        PlanBuilder { snapshot, plan: Plan { computed_at: snapshot.now, entries, ..Plan::default() }, pos }
    }

    /// Position of `job` in the plan's entries, if it is there.
    #[inline]
    fn position(&self, job: JobId) -> Option<usize> {
        self.pos.get(job)
    }

    /// Sets the job's target in `pool` to `slots`. In a shared pool the slots go to runnable
    /// maps first, then to reduces (a job's phases rarely overlap: slow start defaults to 1.0).
    pub fn set_pool_target(&mut self, job: JobId, pool: &Pool, slots: u32) {
        let Some(p) = self.position(job) else { return };
        let snapshot = self.snapshot;
        // The map demand is read only to split a shared pool's non-zero target (most jobs of a
        // long queue get no slots, and their states are not touched).
        self.plan.entries[p].set_pool_target(pool, slots, || {
            let js = snapshot.job(job);
            let m = js.phase(Phase::Map);
            m.running + if js.runnable(Phase::Map) { m.pending } else { 0 }
        });
    }

    /// Sets the job's targets for the phases of `pool` explicitly, `[map, reduce]` (entries of
    /// phases outside the pool are ignored). For policies that decide per phase even in a shared pool.
    pub fn set_phase_targets(&mut self, job: JobId, pool: &Pool, targets: [u32; 2]) {
        let Some(p) = self.position(job) else { return };
        let entry = &mut self.plan.entries[p];
        for &ph in pool.phases {
            entry.target[ph.idx()] = targets[ph.idx()];
        }
    }

    /// Sets how heartbeats are answered from this plan (default: [`AssignmentRule::Deficit`]).
    pub fn set_rule(&mut self, rule: AssignmentRule) {
        self.plan.rule = rule;
    }

    /// Sets `job`'s locality wait (see [`Plan::locality_waits`]).
    pub fn set_locality_wait(&mut self, job: JobId, waits: u32) {
        match self.plan.locality_waits.iter_mut().find(|w| w.0 == job) {
            Some(w) => w.1 = waits,
            None => self.plan.locality_waits.push((job, waits)),
        }
    }

    /// Sets `job`'s accelerated-pool map target (see [`Plan::accelerated_targets`]).
    pub fn set_accelerated_target(&mut self, job: JobId, slots: u32) {
        match self.plan.accelerated_targets.iter_mut().find(|w| w.0 == job) {
            Some(w) => w.1 = slots,
            None => self.plan.accelerated_targets.push((job, slots)),
        }
    }

    /// Records the policy's predicted completion for `job`.
    pub fn set_predicted_completion(&mut self, job: JobId, at: Time) {
        if let Some(p) = self.position(job) {
            let e = &mut self.plan.entries[p];
            e.predicted_completion_ms = Some(e.predicted_completion_ms.map_or(at, |x| x.max(at)));
        }
    }

    /// The finished plan.
    pub fn finish(self) -> Plan {
        self.plan
    }
}

/// A scheduling policy. See the module docs for the contract.
pub trait Policy: Send {
    /// Registry name (`circumflex.policy` value), e.g. `fifo`.
    fn name(&self) -> &'static str;

    /// Decides whether to accept `candidate` (already in the snapshot, with status Active).
    /// Policies without admission control accept everything.
    fn admit(&mut self, _snapshot: &Snapshot<'_>, _candidate: JobId) -> Admission {
        Admission::Accept
    }

    /// Computes the plan for the snapshot.
    fn plan(&mut self, snapshot: &Snapshot<'_>) -> Plan;

    /// Fills the predicted completions of `plan`, the plan this policy returned from its last
    /// [`Policy::plan`] call, if that plan left them out ([`Plan::completions_pending`]), and clears
    /// the flag. The predictions must be exactly those the plan would have carried had they been
    /// computed at planning time: they describe the plan's own snapshot, not the state at the time
    /// of the call, so the policy keeps what it needs from the plan (the engine's jobs have moved on).
    /// Called on demand from status views, never on a heartbeat or a re-plan. Default: nothing
    /// (policies whose plans carry their predictions, or none).
    fn predict_completions(&mut self, _plan: &mut Plan) {}

    /// Told before each plan how many map slots (shared mode: slots) live accelerated nodes hold
    /// (hardware affinity; 0 when no node is accelerated). Default: ignored.
    fn on_accelerated_capacity(&mut self, _map_slots: u32) {}

    /// Told when a job finishes (for feedback controllers and learned estimates). Default: nothing.
    fn on_job_finished(&mut self, _snapshot: &Snapshot<'_>, _job: JobId) {}

    /// Whether the engine should record every task's finish time in `JobState::task_finish_ms`
    /// (RTMR's feedback controller needs them). Default: no, to keep memory flat.
    fn needs_task_finish_times(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::JobSpec;

    #[test]
    fn shared_pool_targets_go_to_maps_first() {
        let jobs = vec![JobState::new(JobId(0), JobSpec::new(0, 3, 2))];
        let active = [JobId(0)];
        let cluster = ClusterView { map_slots: 4, reduce_slots: 4, mode: PoolMode::Shared, nodes: 1 };
        let snap = Snapshot::new(0, cluster, &jobs, &active);
        let pool = cluster.pools().next().unwrap();
        assert_eq!(pool.capacity, 8);
        let mut b = PlanBuilder::new(&snap, []);
        b.set_pool_target(JobId(0), &pool, 5);
        let plan = b.finish();
        assert_eq!(plan.entries[0].target, [3, 2]);
    }

    /// A lookup that holds only job 1, as the engine's table after job 0 was retired.
    struct OnlyOne(JobState);

    impl JobLookup for OnlyOne {
        fn lookup(&self, id: JobId) -> Option<&JobState> {
            (id == self.0.id).then_some(&self.0)
        }
    }

    #[test]
    fn retired_ids_resolve_to_none_and_count_as_ended() {
        let table = OnlyOne(JobState::new(JobId(1), JobSpec::new(0, 2, 0)));
        let active = [JobId(1)];
        let cluster = ClusterView { map_slots: 2, reduce_slots: 0, mode: PoolMode::Split, nodes: 1 };
        let snap = Snapshot::with_lookup(0, cluster, &table, &active);
        assert!(snap.try_job(JobId(0)).is_none());
        assert!(snap.has_ended(JobId(0)), "retired");
        assert!(!snap.has_ended(JobId(1)));
        assert_eq!(snap.job(JobId(1)).id, JobId(1));
        assert_eq!(snap.active_jobs().count(), 1);
        // A policy's order may still name the retired job: it is skipped, the active one planned.
        let plan = PlanBuilder::new(&snap, [JobId(0), JobId(7), JobId(1)]).finish();
        assert_eq!(plan.entries.iter().map(|e| e.job).collect::<Vec<_>>(), vec![JobId(1)]);
    }

    /// The builder's specification, written the slow obvious way: the order's active ids first
    /// (first occurrence wins), then active ids it forgot, in submission order.
    fn reference_order(snap: &Snapshot<'_>, order: &[JobId]) -> Vec<JobId> {
        let mut out: Vec<JobId> = Vec::new();
        for &id in order.iter().chain(snap.active) {
            if snap.active.contains(&id) && snap.try_job(id).is_some_and(JobState::is_active) && !out.contains(&id) {
                out.push(id);
            }
        }
        out
    }

    proptest::proptest! {
        /// Dense and sorted position indices (narrow and sparse id ranges), duplicates, inactive
        /// and unknown ids: the builder's order is the reference's, and every target lands on its job.
        #[test]
        fn builder_matches_its_specification(
            spread in proptest::prelude::prop_oneof![proptest::prelude::Just(1u32), proptest::prelude::Just(1000u32)],
            active_raw in proptest::collection::vec(0u32..40, 0..30),
            order_raw in proptest::collection::vec(0u32..45, 0..40),
            finished in proptest::collection::vec(proptest::bool::ANY, 40),
        ) {
            let jobs: Vec<JobState> = (0..40 * spread)
                .map(|i| {
                    let mut j = JobState::new(JobId(i), crate::model::JobSpec::new(0, 1, 0));
                    if finished[(i / spread) as usize] {
                        j.status = crate::model::JobStatus::Finished;
                    }
                    j
                })
                .collect();
            let active: Vec<JobId> = active_raw.iter().map(|&i| JobId(i * spread)).collect();
            let order: Vec<JobId> = order_raw.iter().map(|&i| JobId(i * spread)).collect();
            let cluster = ClusterView { map_slots: 4, reduce_slots: 0, mode: PoolMode::Split, nodes: 1 };
            let snap = Snapshot::new(0, cluster, &jobs, &active);
            let pool = Pool { capacity: 4, phases: MAP_ONLY };
            let mut b = PlanBuilder::new(&snap, order.iter().copied());
            for &id in order.iter().chain(&active) {
                b.set_pool_target(id, &pool, id.0 + 1);
            }
            let plan = b.finish();
            let got: Vec<JobId> = plan.entries.iter().map(|e| e.job).collect();
            proptest::prop_assert_eq!(got, reference_order(&snap, &order));
            for e in &plan.entries {
                proptest::prop_assert_eq!(e.target[0], e.job.0 + 1);
            }
            // An incremental snapshot (whose active jobs are all Active, as it promises) skips the
            // status check and builds the same plan.
            if snap.active_jobs().all(JobState::is_active) {
                let trusted = snap.with_changes(&[]);
                let mut b = PlanBuilder::new(&trusted, order.iter().copied());
                for &id in order.iter().chain(&active) {
                    b.set_pool_target(id, &pool, id.0 + 1);
                }
                proptest::prop_assert_eq!(b.finish(), plan);
            }
        }
    }

    #[test]
    fn builder_never_drops_an_active_job() {
        let jobs = vec![JobState::new(JobId(0), JobSpec::new(0, 1, 0)), JobState::new(JobId(1), JobSpec::new(1, 1, 0))];
        let active = [JobId(0), JobId(1)];
        let cluster = ClusterView { map_slots: 1, reduce_slots: 1, mode: PoolMode::Split, nodes: 1 };
        let snap = Snapshot::new(0, cluster, &jobs, &active);
        let plan = PlanBuilder::new(&snap, [JobId(1), JobId(1)]).finish();
        let order: Vec<_> = plan.entries.iter().map(|e| e.job).collect();
        assert_eq!(order, vec![JobId(1), JobId(0)]);
    }
}
