//! The FLEX engine policy (`circumflex.policy = flex`): per slot pool, one [`FlexProblem`] from the
//! snapshot's jobs, solved by [`solve`], enforced through its first interval (module docs of
//! [`crate::flex`] for the steps and the decisions). Also the pieces CIRCUMFLEX reuses: a job's facts
//! in a pool ([`job_facts`], [`isolated_time`]) and the plan from per-pool solutions ([`plan_from_pools`]).
//!
//! **What a plan computes.** A re-plan computes each pool's order and its first interval only
//! ([`crate::flex::packing::first_into`]: the prefix of the order that the allocation rule reaches),
//! and its plan leaves the predicted completions out ([`Plan::completions_pending`]): nothing on the
//! engine's heartbeat or re-plan path reads them, and the full packing that predicts them
//! (`O(J log J)`, a completion heap over every job) was about half of a re-plan
//! (`docs/performance.md` §14, §17). The policy keeps each pool's packing input, order and the
//! plan's time, and [`Policy::predict_completions`] packs them in full when a status view asks:
//! the predictions are the plan's, bit for bit, however far the jobs have moved since
//! (`flex::tests::lazy_predictions_equal_the_eager_plans` pins them to the eager path it replaced).
//! Jobs outside the first interval keep the builder's zero target without a call. CIRCUMFLEX's plans
//! still carry their predictions ([`plan_from_pools`]): its packing is the literal ready-list loop with
//! chains, whose first interval needs the same loop, and it is not re-planned incrementally.

use std::borrow::Borrow;

use circumflex_core::config::EngineConfig;
use circumflex_core::error::Result;
use circumflex_core::model::{JobId, JobState, Phase, Time};
use circumflex_core::policy::rows::JobRows;
use circumflex_core::policy::{
    pool_demand, pool_remaining_work, slot_bounds, AssignmentRule, ClusterView, KillPrice, Plan, PlanBuilder, Policy,
    Pool, PoolMode, Snapshot,
};

use super::metrics::{JobFacts, Method, Objective};
use super::smith::{SmithItem, SmithOrder};

use super::packing::FirstScratch;
use super::{
    dp_order_into, first_items_into, predict_from, sequence_items, smith_item, DpBuffers, FlexItem, FlexSolution,
    PackBuffers, PackInput,
};

/// What an item depends on besides its job: the pool capacities and the pooling.
type ItemContext = (u32, u32, PoolMode);

/// The FLEX policy (`circumflex.policy = flex`).
///
/// Incremental re-plans ([`Snapshot::with_changes`], the engine's) keep every job's items (one
/// per pool) between plans and rebuild only those of changed jobs and arrivals; an item depends
/// on its job's state and the cluster's capacities only, never on the time.
#[derive(Debug, Clone)]
pub struct FlexPolicy {
    objective: Objective,
    items: JobRows<ItemContext, [Option<FlexItem>; 2]>,
    /// Per pool, Smith's order of the last incremental re-plan (Smith objectives), kept so that a
    /// re-plan sorts only the jobs whose items changed ([`SmithOrder`]).
    smith: [SmithOrder; 2],
    /// Whether its plans ask for [`AssignmentRule::RankedDeficit`] (with preemption on).
    ranked: bool,
    /// The previous plan's per-pool solutions and working vectors, whose buffers the next plan
    /// reuses: a re-plan of thousands of jobs would otherwise allocate (and page-fault) them anew.
    scratch: Scratch,
}

/// Buffers reused from plan to plan (their contents between plans mean nothing).
#[derive(Debug, Clone, Default)]
struct Scratch {
    /// Per pool: the pool, its items' job ids and its solution (order and first-interval targets;
    /// the completions are left to [`Policy::predict_completions`]).
    solved: Vec<(Pool, Vec<JobId>, FlexSolution)>,
    /// Per pool, the last plan's packing input, kept for its predicted completions on demand.
    inputs: Vec<PackInput>,
    /// `computed_at` of the plan `solved` and `inputs` describe (`None` before the first plan).
    planned_at: Option<Time>,
    first: FirstScratch,
    /// The full packing's buffers, used only when predictions are asked for.
    pack: PackBuffers,
    smith: Vec<SmithItem>,
    raw_ids: Vec<u32>,
    /// Minimax objectives: the DP's buffers, and per pool the previous plan's item ids and order,
    /// from which the DP lays out its tournament (speed only: [`dp_order_into`]).
    dp: DpBuffers,
    prev_ids: Vec<Vec<u32>>,
    prev_order: Vec<usize>,
}

impl FlexPolicy {
    /// FLEX optimizing `objective`.
    pub fn new(objective: Objective) -> FlexPolicy {
        FlexPolicy {
            objective,
            items: JobRows::default(),
            smith: Default::default(),
            ranked: false,
            scratch: Scratch::default(),
        }
    }

    /// Whether the engine serves the jobs below their target in plan order
    /// ([`AssignmentRule::RankedDeficit`]) rather than by relative allocation (the paper's rule,
    /// the default). With preemption the engine restores the targets of starved jobs, in plan order,
    /// and prices a kill by when the beneficiary would get a natural free in that order
    /// (`engine/preempt.rs`); the ranked rule makes the slots that free by themselves go the same
    /// way, so the job FLEX's order puts first (a wide short job late under max stretch, the smallest
    /// under mean response time) gets its whole target at once instead of one slot per heartbeat
    /// beside every other job below its target (`docs/quality.md`).
    pub fn with_ranked_assignment(mut self, ranked: bool) -> FlexPolicy {
        self.ranked = ranked;
        self
    }

    /// FLEX with `circumflex.objective` (default `avg_response_time`); an unknown objective is an
    /// error naming the key, the value and the allowed names.
    pub fn from_config(config: &EngineConfig) -> Result<FlexPolicy> {
        let objective = match config.objective.as_deref() {
            Some(name) => Objective::parse(name)?,
            None => Objective::default(),
        };
        Ok(FlexPolicy::new(objective).with_ranked_assignment(config.preemption.enabled))
    }

    /// The objective.
    pub fn objective(&self) -> Objective {
        self.objective
    }
}

/// Slots of the pool that serves `phase`.
fn phase_capacity(cluster: &ClusterView, phase: Phase) -> u32 {
    match (cluster.mode, phase) {
        (PoolMode::Shared, _) => cluster.total_slots(),
        (PoolMode::Split, Phase::Map) => cluster.map_slots,
        (PoolMode::Split, Phase::Reduce) => cluster.reduce_slots,
    }
}

/// Parallelism a job can get in `phase` with `tasks` tasks to run.
fn parallelism(job: &JobState, cluster: &ClusterView, phase: Phase, tasks: u32) -> f64 {
    let cap = phase_capacity(cluster, phase);
    job.spec.max_slots.unwrap_or(cap).min(cap).min(tasks).max(1) as f64
}

/// `W_j`: the job's response time alone on the cluster (module docs of [`metrics`]), >= 1 ms.
pub fn isolated_time(job: &JobState, cluster: &ClusterView) -> f64 {
    let w: f64 = Phase::ALL
        .iter()
        .filter(|&&ph| job.phase(ph).total > 0)
        .map(|&ph| job.total_work(ph) / parallelism(job, cluster, ph, job.phase(ph).total))
        .sum();
    w.max(1.0)
}

/// Time the job still needs after its work in a pool serving `phases` completes.
fn tail(job: &JobState, cluster: &ClusterView, phases: &[Phase]) -> f64 {
    if cluster.mode == PoolMode::Split && phases == [Phase::Map] {
        let r = job.phase(Phase::Reduce);
        if r.remaining() > 0 {
            return job.remaining_work(Phase::Reduce) / parallelism(job, cluster, Phase::Reduce, r.remaining());
        }
    }
    0.0
}

/// The facts of `job` for a pool serving `phases`; SLA steps and `W_j` only when `objective`
/// uses them (they cost an allocation and a few divisions per job).
pub fn job_facts(objective: Objective, job: &JobState, cluster: &ClusterView, phases: &[Phase]) -> JobFacts {
    use Objective::*;
    let uses_sla = matches!(objective, TotalSla | MaxSla);
    let uses_stretch = matches!(objective, AvgStretch | WeightedAvgStretch | MaxStretch | WeightedMaxStretch);
    JobFacts {
        arrival: job.spec.submit_ms as f64,
        weight: job.spec.weight,
        deadline: job.spec.deadline_ms.map(|d| d as f64),
        sla: if uses_sla {
            job.spec.sla.iter().map(|s| (s.deadline_ms as f64, s.penalty)).collect()
        } else {
            Vec::new()
        },
        isolated: if uses_stretch { isolated_time(job, cluster) } else { 1.0 },
        tail: tail(job, cluster, phases),
    }
}

/// The item of `job` in `pool`, or `None` when the job cannot use the pool now or has no work in it.
pub(super) fn item(objective: Objective, job: &JobState, cluster: &ClusterView, pool: &Pool) -> Option<FlexItem> {
    let demand = pool_demand(job, pool);
    if demand == 0 {
        return None;
    }
    let work = pool_remaining_work(job, pool);
    if work <= 0.0 {
        return None;
    }
    let (min, max) = slot_bounds(job, pool.capacity);
    let max = max.min(demand);
    Some(FlexItem { work, min: min.min(max), max, facts: job_facts(objective, job, cluster, pool.phases) })
}

impl Policy for FlexPolicy {
    fn name(&self) -> &'static str {
        "flex"
    }

    fn plan(&mut self, snapshot: &Snapshot<'_>) -> Plan {
        let cluster = snapshot.cluster;
        let pools: Vec<Pool> = cluster.pools().collect();
        let start = snapshot.now as f64;
        let objective = self.objective;
        let read = |job: &JobState| {
            let mut items = [None, None];
            for (k, pool) in pools.iter().enumerate() {
                items[k] = item(objective, job, &cluster, pool);
            }
            items
        };
        let context = (cluster.map_slots, cluster.reduce_slots, cluster.mode);
        let mut solved = std::mem::take(&mut self.scratch.solved);
        solved.truncate(pools.len());
        let minimax = matches!(objective.method(), Method::BackwardsDp | Method::BackwardGreedy);
        self.scratch.prev_ids.resize_with(pools.len(), Vec::new);
        for (k, &pool) in pools.iter().enumerate() {
            let prev_ids = &mut self.scratch.prev_ids[k];
            prev_ids.clear();
            match solved.get_mut(k) {
                Some((p, ids, _)) => {
                    *p = pool;
                    if minimax {
                        prev_ids.extend(ids.iter().map(|id| id.0));
                    }
                    ids.clear();
                }
                None => solved.push((pool, Vec::new(), FlexSolution::default())),
            }
        }
        if self.items.sync(snapshot, context, read).is_some() {
            // The kept items, borrowed in the active order the full walk below visits the jobs in.
            let mut problems: Vec<Vec<&FlexItem>> = pools.iter().map(|_| Vec::new()).collect();
            for (&id, items) in self.items.ids().iter().zip(self.items.rows()) {
                for (item, ((_, ids, _), problem)) in items.iter().zip(solved.iter_mut().zip(problems.iter_mut())) {
                    if let Some(item) = item {
                        ids.push(id);
                        problem.push(item);
                    }
                }
            }
            solve_pools(objective, start, &mut solved, &problems, Some(&mut self.smith), &mut self.scratch);
        } else {
            // One pass over the jobs for all pools: job states are large, and this walk is most of
            // the plan's memory traffic.
            let mut problems: Vec<Vec<FlexItem>> = pools.iter().map(|_| Vec::new()).collect();
            for job in snapshot.active_jobs() {
                for (pool, ((_, ids, _), problem)) in pools.iter().zip(solved.iter_mut().zip(problems.iter_mut())) {
                    if let Some(item) = item(objective, job, &cluster, pool) {
                        ids.push(job.id);
                        problem.push(item);
                    }
                }
            }
            solve_pools(objective, start, &mut solved, &problems, None, &mut self.scratch);
        }
        let mut plan = plan_without_predictions(snapshot, &solved);
        self.scratch.solved = solved;
        self.scratch.planned_at = Some(plan.computed_at);
        if self.ranked {
            plan.rule = AssignmentRule::RankedDeficit;
            // Long tasks started on slots the plan gives away for a moment hold them far beyond it:
            // keep preemption's share of the pool for tasks that end soon (docs/quality.md, session 12).
            plan.long_task_reserve = true;
            // A kill is worth it when it lowers the objective, not the sum of delays (docs/quality.md).
            if matches!(
                self.objective,
                Objective::AvgStretch
                    | Objective::WeightedAvgStretch
                    | Objective::MaxStretch
                    | Objective::WeightedMaxStretch
            ) {
                plan.kill_price = KillPrice::Stretch;
            }
        }
        plan
    }

    /// The last plan's predicted completions: each pool's full packing, run now from the input and
    /// order that plan kept (`flex::predict_from`), `O(J log J)`; exactly what the plan would have
    /// carried had it packed in full (`flex::tests::lazy_predictions_equal_the_eager_plans`).
    fn predict_completions(&mut self, plan: &mut Plan) {
        if !plan.completions_pending || self.scratch.planned_at != Some(plan.computed_at) {
            return;
        }
        let start = plan.computed_at as f64;
        let Scratch { solved, inputs, pack, .. } = &mut self.scratch;
        let mut predictor = plan.predictor();
        for ((pool, ids, solution), input) in solved.iter().zip(inputs.iter()) {
            predict_from(pool.capacity, start, &solution.order, input, pack, |i, at| {
                if let Some(&id) = ids.get(i) {
                    predictor.set(id, at.ceil() as Time);
                }
            });
        }
        plan.completions_pending = false;
    }
}

/// Each pool's problem (its items, owned or borrowed; its job ids are already in `solved`) solved
/// at `start` into `solved`: order and first-interval allocation, no completions (their input is
/// kept in `scratch.inputs`); Smith orders through the pool's kept order when `kept` is given
/// (incremental re-plans). Working vectors come from `scratch` (its `solved` is not used).
fn solve_pools<B: Borrow<FlexItem>>(
    objective: Objective,
    start: f64,
    solved: &mut [(Pool, Vec<JobId>, FlexSolution)],
    problems: &[Vec<B>],
    mut kept: Option<&mut [SmithOrder; 2]>,
    scratch: &mut Scratch,
) {
    scratch.inputs.resize_with(solved.len(), PackInput::default);
    for (k, ((pool, ids, solution), items)) in solved.iter_mut().zip(problems).enumerate() {
        // The previous plan's order of this pool (over `scratch.prev_ids[k]`) moves aside for the
        // DP's layout; its buffer becomes the next plan's.
        std::mem::swap(&mut scratch.prev_order, &mut solution.order);
        scratch.raw_ids.clear();
        scratch.raw_ids.extend(ids.iter().map(|id| id.0));
        let previous =
            scratch.prev_ids.get(k).map(|p| (p.as_slice(), scratch.prev_order.as_slice(), scratch.raw_ids.as_slice()));
        let input = &mut scratch.inputs[k];
        if dp_order_into(objective, pool.capacity, start, items, previous, &mut scratch.dp, &mut solution.order) {
            first_items_into(pool.capacity, items, input, &mut scratch.first, solution);
            continue;
        }
        match kept.as_deref_mut() {
            Some(kept) if objective.method() == Method::Smith => {
                scratch.smith.clear();
                scratch.smith.extend(items.iter().map(|it| smith_item(objective, it.borrow())));
                kept[k].order_into(&scratch.raw_ids, &scratch.smith, &mut solution.order);
            }
            _ => solution.order = sequence_items(objective, pool.capacity, start, items, None),
        }
        first_items_into(pool.capacity, items, input, &mut scratch.first, solution);
    }
}

/// The plan from per-pool solutions `(pool, job ids by item, solution)`: the plan order is each
/// job's best position in any pool's order (ties: earlier pool, then submission order), each job's
/// target in a pool is its first-interval allocation there, and predicted completions come from
/// the full packings (each solution's `completion`). CIRCUMFLEX's plans; FLEX's leave the
/// completions out (`plan_without_predictions`).
pub fn plan_from_pools(snapshot: &Snapshot<'_>, solved: &[(Pool, Vec<JobId>, FlexSolution)]) -> Plan {
    build_plan(snapshot, solved, true)
}

/// [`plan_from_pools`] without predicted completions (the solutions need none):
/// [`Plan::completions_pending`] is set and FLEX fills them on demand ([`Policy::predict_completions`]).
pub(crate) fn plan_without_predictions(snapshot: &Snapshot<'_>, solved: &[(Pool, Vec<JobId>, FlexSolution)]) -> Plan {
    build_plan(snapshot, solved, false)
}

fn build_plan(snapshot: &Snapshot<'_>, solved: &[(Pool, Vec<JobId>, FlexSolution)], predictions: bool) -> Plan {
    // Plan order: best position in any pool (module docs). Walking positions in step, pools in
    // order, meets every job first at its best (position, pool): a linear merge. A job's later
    // occurrences are dropped by the builder, which keeps the first (no set of seen ids here).
    let longest = solved.iter().map(|(_, _, sol)| sol.order.len()).max().unwrap_or(0);
    let order =
        (0..longest).flat_map(|pos| solved.iter().filter_map(move |(_, ids, sol)| sol.order.get(pos).map(|&i| ids[i])));
    let mut builder = PlanBuilder::new(snapshot, order);
    for (pool, ids, sol) in solved {
        // A job gets an item at most once per pool and entries start at a zero target, so a zero
        // allocation needs no call (most of a long queue: no lookup, no write).
        for (&id, &slots) in ids.iter().zip(&sol.first) {
            if slots > 0 {
                builder.set_pool_target(id, pool, slots);
            }
        }
        if predictions {
            for (&id, &at) in ids.iter().zip(&sol.completion) {
                if at.is_finite() {
                    builder.set_predicted_completion(id, at.ceil() as Time);
                }
            }
        }
    }
    let mut plan = builder.finish();
    plan.completions_pending = !predictions;
    plan
}
