//! FLEX: malleable slot allocation that optimizes a chosen metric (Wolf et al., Middleware 2010,
//! as restated in CIRCUMFLEX appendices A-B; digest `algorithms/circumflex.md` §1, §3).
//!
//! Every plan, per slot pool, FLEX
//! 1. builds one item per job with work in the pool: remaining work `R_j` (slot-ms), bounds
//!    `m_j`/`M_j` (the job's `min_slots`/`max_slots` clamped to the pool, `M_j` capped by what the
//!    job can use now) and its penalty `F_j` ([`metrics`]);
//! 2. orders the items on an interim single machine (durations `R_j / S`, starting now): Smith's
//!    rule for linear minisum objectives ([`smith`]), the backwards DP for minimax ones ([`dp`]),
//!    or the documented rules for the other minisum ones ([`heuristics`]);
//! 3. packs that order malleably ([`packing`]) and enforces only the first interval: each job's
//!    target is its first-interval allocation. The engine policy computes only that interval
//!    ([`packing::first_into`], `O(prefix)` after the order) and runs the full packing for every
//!    job's predicted completion when a status view asks (`Policy::predict_completions`; [`solve`]
//!    still packs in full).
//!
//! The engine re-plans every epoch and on arrivals and departures, and its assignment layer gives
//! each free slot to the most under-allocated job relative to its target (with delay scheduling).
//! With preemption on (`circumflex.preemption.enabled`) FLEX's plans ask instead for the
//! highest-ranked job below its target ([`circumflex_core::policy::AssignmentRule::RankedDeficit`]),
//! the order in which the engine's preemption restores targets ([`FlexPolicy::with_ranked_assignment`]).
//!
//! The algorithms are generic: [`solve`] takes a [`FlexProblem`] (work, min, max, penalty facts
//! and an optional precedence) and [`smith`], [`dp`] and [`packing`] take plain slices plus a
//! [`precedence::Precedence`], so CIRCUMFLEX (subjob chains), FlowFlex (DAGs) and others reuse
//! them with their own items. The digest's cyclic-piggyback example (§6.5) runs through [`solve`]
//! with chains in the tests.
//!
//! Decisions where the paper is silent:
//! - **Pools and phases.** Pools come from [`circumflex_core::policy::ClusterView::pools`]. In *split*
//!   mode (MRv1) the map and reduce pools are planned separately; a job's penalty in the map pool
//!   is evaluated at its map completion plus a **tail**: its remaining reduce work divided by the
//!   reduce parallelism it could get (`min(reduce slots, max_slots, remaining reduce tasks)`).
//!   In the reduce pool the tail is 0. In *shared* mode (YARN) one pool holds both phases, the
//!   work is their sum and the tail is 0 (the fluid model ignores the map-before-reduce barrier;
//!   the shared target is split maps-first by the plan builder).
//! - **Who is in a pool's problem.** Only jobs that can use the pool now (running or runnable
//!   pending tasks there). A job whose reduces wait on its maps is not in the reduce pool's
//!   problem (it would idle slots and delay the interim sequence); its reduce work is in its map
//!   tail instead.
//! - **Plan order.** In one pool it is the FLEX order. With two pools the plan lists jobs by
//!   their best position in any pool's order (equal positions: the map pool's job first), which
//!   is exact for the usual case of a job having work in one pool at a time.
//! - **Predicted completion** = now + packed completion + tail, rounded up to a ms; none when the
//!   packing says the job cannot finish (no slots for it in any interval). Computed on demand from
//!   the input the plan kept, so it is the plan's (as of its snapshot) whenever it is asked for.

pub mod dp;
pub mod heuristics;
pub mod metrics;
pub mod packing;
pub mod policy;
pub mod precedence;
pub mod smith;

pub use policy::{isolated_time, job_facts, plan_from_pools, FlexPolicy};

/// Helpers shared by the unit tests of the FLEX modules.
#[cfg(test)]
pub(crate) mod testutil {
    /// Every permutation of `0..n` (for brute-force optima; n <= 8).
    pub fn permutations(n: usize) -> Vec<Vec<usize>> {
        if n == 0 {
            return vec![vec![]];
        }
        let mut out = Vec::new();
        for p in permutations(n - 1) {
            for i in 0..=p.len() {
                let mut q = p.clone();
                q.insert(i, n - 1);
                out.push(q);
            }
        }
        out
    }

    /// `0..n` in a deterministic shuffled order drawn from `seed` (xorshift, Fisher-Yates).
    pub fn shuffled(n: usize, seed: u64) -> Vec<usize> {
        let mut order: Vec<usize> = (0..n).collect();
        let mut x = seed | 1;
        for i in (1..n).rev() {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            order.swap(i, (x % (i as u64 + 1)) as usize);
        }
        order
    }
}

use std::borrow::Borrow;

use metrics::{JobFacts, Method, Objective, Penalty};
use packing::PackJob;
use precedence::Precedence;
use smith::SmithItem;

/// One item of a FLEX problem.
#[derive(Clone, Debug, PartialEq)]
pub struct FlexItem {
    /// Remaining work in slot-ms.
    pub work: f64,
    /// Minimum slots `m_j`.
    pub min: u32,
    /// Maximum slots `M_j`.
    pub max: u32,
    /// What the objective needs to know to build `F_j`.
    pub facts: JobFacts,
}

/// One allocation problem: a pool of `capacity` slots at time `start` (absolute ms).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FlexProblem {
    /// Slots `S`.
    pub capacity: u32,
    /// Now, in absolute ms.
    pub start: f64,
    /// The items, in tie-break order (oldest job first).
    pub items: Vec<FlexItem>,
    /// Precedence among the items (`None`: independent, as in FLEX). CIRCUMFLEX passes subjob
    /// chains; any DAG is accepted (see [`sequence`] for what each method does with it). It must
    /// cover exactly the items; one over a different number of items is ignored.
    pub precedence: Option<Precedence>,
}

/// The answer to a [`FlexProblem`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FlexSolution {
    /// Item indices in priority order.
    pub order: Vec<usize>,
    /// Slots per item in the first interval (the enforced targets).
    pub first: Vec<u32>,
    /// Predicted absolute completion per item (including its tail); ∞ = never.
    pub completion: Vec<f64>,
}

/// The priority order of `problem`'s items for `objective` (step 1). It is always a topological
/// order of the problem's precedence:
/// - Smith objectives: chains go through the generalized Smith's rule (optimal); any other DAG
///   (where `1|prec|Σw_jC_j` is NP-hard) gets Smith's order repaired into the nearest topological
///   order ([`Precedence::topological_by_priority`]), a heuristic.
/// - the backwards DP takes any DAG (optimal for the minimax objectives).
/// - Moore-Hodgson and MDD sequence as if independent, then get the same repair (heuristic).
pub fn sequence(objective: Objective, problem: &FlexProblem) -> Vec<usize> {
    sequence_items(objective, problem.capacity, problem.start, &problem.items, problem.precedence.as_ref())
}

/// [`sequence`] over borrowed or owned items (FLEX passes the items it keeps between plans
/// without copying them).
fn sequence_items<B: Borrow<FlexItem>>(
    objective: Objective,
    capacity: u32,
    start: f64,
    items: &[B],
    precedence: Option<&Precedence>,
) -> Vec<usize> {
    let s = capacity.max(1) as f64;
    let durations = || -> Vec<f64> { items.iter().map(|it| it.borrow().work.max(0.0) / s).collect() };
    // Due dates for the pool's completion: the deadline less the tail.
    let due_dates = || -> Vec<Option<f64>> {
        items
            .iter()
            .map(|it| {
                let it = it.borrow();
                it.facts.deadline.map(|d| d - it.facts.tail)
            })
            .collect()
    };
    let prec = precedence.filter(|p| !p.is_unconstrained() && p.len() == items.len());
    let preferred = match objective.method() {
        Method::Smith => {
            let si = smith_items(objective, items);
            if let Some(chains) = prec.and_then(Precedence::as_chains) {
                let chain_items: Vec<Vec<SmithItem>> =
                    chains.iter().map(|c| c.iter().map(|&i| si[i]).collect()).collect();
                return smith::generalized_smith(&chain_items).into_iter().map(|(c, k)| chains[c][k]).collect();
            }
            smith::smith_order(&si)
        }
        Method::BackwardsDp | Method::BackwardGreedy => {
            let pens: Vec<Penalty> = items.iter().map(|it| objective.penalty(&it.borrow().facts)).collect();
            let none;
            let relation = match prec {
                Some(p) => p,
                None => {
                    none = Precedence::none(items.len());
                    &none
                }
            };
            return dp::backwards_dp_penalties(&durations(), &pens, relation, start);
        }
        Method::MooreHodgson => {
            let due = due_dates();
            let w: Vec<f64> = items.iter().map(|it| objective.smith_weight(&it.borrow().facts)).collect();
            heuristics::moore_hodgson(&durations(), &due, &w, start)
        }
        Method::ModifiedDueDate => {
            let due = due_dates();
            heuristics::modified_due_date(&durations(), &due, start)
        }
    };
    match prec {
        Some(p) => {
            let mut position = vec![0usize; items.len()];
            for (k, &i) in preferred.iter().enumerate() {
                position[i] = k;
            }
            p.topological_by_priority(&position)
        }
        None => preferred,
    }
}

/// What the minimax objectives' ordering needs besides its input, kept by a policy between
/// re-plans ([`dp_order_into`]): the tournament's buffers, the durations and lines, and the leaf
/// layout built from the previous plan's order. Contents between calls mean nothing.
#[derive(Clone, Debug, Default)]
pub(crate) struct DpBuffers {
    kinetic: dp::KineticScratch,
    durations: Vec<f64>,
    lines: Vec<dp::Line>,
    layout: Vec<u32>,
    prev_to_cur: Vec<u32>,
    placed: Vec<bool>,
}

/// [`sequence_items`] for a minimax objective without precedence whose penalties are all
/// linear or all tardiness-like (every minimax objective but `max_sla`), written into `order`
/// with reused buffers: the same sequence, bit for bit (the same durations, the same lines, the
/// same kinetic fast path of [`dp::backwards_dp_penalties`]). Returns `false`, `order`
/// untouched, when the objective is not a DP one or the penalties take another path.
///
/// `previous`, when given, is `(ids, order)` of the last plan of this pool and this plan's item
/// ids: the tournament's leaves are then laid out in the previous removal order
/// (items that left dropped, new items after), so that consecutive removals share most of their
/// walks to the root. Any layout gives the same sequence ([`dp::kinetic_lines_in`]); ids that do
/// not increase strictly fall back to the index layout.
pub(crate) fn dp_order_into<B: Borrow<FlexItem>>(
    objective: Objective,
    capacity: u32,
    start: f64,
    items: &[B],
    previous: Option<(&[u32], &[usize], &[u32])>,
    buffers: &mut DpBuffers,
    order: &mut Vec<usize>,
) -> bool {
    if !matches!(objective.method(), Method::BackwardsDp | Method::BackwardGreedy) {
        return false;
    }
    let s = capacity.max(1) as f64;
    let DpBuffers { kinetic, durations, lines, layout, prev_to_cur, placed } = buffers;
    durations.clear();
    durations.extend(items.iter().map(|it| it.borrow().work.max(0.0) / s));
    lines.clear();
    let (mut linear, mut tardy) = (false, false);
    for it in items {
        let p = objective.penalty(&it.borrow().facts);
        match p {
            Penalty::Linear { .. } => linear = true,
            Penalty::Tardiness { .. } => tardy = true,
            Penalty::Zero => {}
            Penalty::Steps(_) => return false,
        }
        lines.push(dp::Line::proxy(&p));
    }
    if linear && tardy {
        return false;
    }
    let hinted = match previous {
        Some((prev_ids, prev_order, ids)) if ids.len() == items.len() => {
            removal_layout(prev_ids, prev_order, ids, layout, prev_to_cur, placed)
        }
        _ => false,
    };
    // The previous order is read above, before `order` is overwritten.
    dp::kinetic_lines_in(durations, lines, start, hinted.then_some(layout.as_slice()), kinetic, order);
    true
}

/// The leaf layout of [`dp_order_into`]: `layout` lists this plan's item indices (ids `ids`) in
/// the previous plan's removal order (`prev_order` reversed, over `prev_ids`), then the items
/// that were not in the previous plan, by index. Always a permutation of `0..ids.len()`.
/// Returns `false` (layout unusable) unless both id lists increase strictly.
fn removal_layout(
    prev_ids: &[u32],
    prev_order: &[usize],
    ids: &[u32],
    layout: &mut Vec<u32>,
    prev_to_cur: &mut Vec<u32>,
    placed: &mut Vec<bool>,
) -> bool {
    const NONE: u32 = u32::MAX;
    let increasing = |v: &[u32]| v.windows(2).all(|w| w[0] < w[1]);
    if !increasing(prev_ids) || !increasing(ids) || ids.len() >= NONE as usize {
        return false;
    }
    // Both lists increase: one merge maps each previous index to this plan's index.
    prev_to_cur.clear();
    prev_to_cur.resize(prev_ids.len(), NONE);
    let mut j = 0;
    for (i, &id) in prev_ids.iter().enumerate() {
        while j < ids.len() && ids[j] < id {
            j += 1;
        }
        if j < ids.len() && ids[j] == id {
            prev_to_cur[i] = j as u32;
        }
    }
    placed.clear();
    placed.resize(ids.len(), false);
    layout.clear();
    for &i in prev_order.iter().rev() {
        if let Some(&c) = prev_to_cur.get(i) {
            if c != NONE && !placed[c as usize] {
                placed[c as usize] = true;
                layout.push(c);
            }
        }
    }
    layout.extend((0..ids.len() as u32).filter(|&c| !placed[c as usize]));
    true
}

/// The Smith items (work, Smith weight) of `items` for `objective`.
pub(crate) fn smith_items<B: Borrow<FlexItem>>(objective: Objective, items: &[B]) -> Vec<SmithItem> {
    items.iter().map(|it| smith_item(objective, it.borrow())).collect()
}

/// The Smith item (work, Smith weight) of `item` for `objective`.
pub(crate) fn smith_item(objective: Objective, item: &FlexItem) -> SmithItem {
    SmithItem { work: item.work.max(0.0), weight: objective.smith_weight(&item.facts) }
}

/// Orders and packs `problem` (steps 1 and 2).
pub fn solve(objective: Objective, problem: &FlexProblem) -> FlexSolution {
    solve_items(objective, problem.capacity, problem.start, &problem.items, problem.precedence.as_ref())
}

/// [`solve`] over borrowed or owned items.
pub(crate) fn solve_items<B: Borrow<FlexItem>>(
    objective: Objective,
    capacity: u32,
    start: f64,
    items: &[B],
    precedence: Option<&Precedence>,
) -> FlexSolution {
    let mut solution =
        FlexSolution { order: sequence_items(objective, capacity, start, items, precedence), ..Default::default() };
    pack_items_into(capacity, start, items, precedence, &mut PackBuffers::default(), &mut solution);
    solution
}

/// What packing needs besides its input, kept by a policy between re-plans so that a re-plan's
/// packing allocates nothing once the buffers have grown (`docs/performance.md` §10): the
/// packing's input, its working buffers and its raw output. Contents between calls mean nothing.
#[derive(Clone, Debug, Default)]
pub(crate) struct PackBuffers {
    jobs: Vec<PackJob>,
    scratch: packing::PackScratch,
    packed: packing::Packing,
}

/// Packs `items` in `solution.order` (step 2) into `solution.first` and `solution.completion`
/// (their vectors reused), with `buffers`.
pub(crate) fn pack_items_into<B: Borrow<FlexItem>>(
    capacity: u32,
    start: f64,
    items: &[B],
    precedence: Option<&Precedence>,
    buffers: &mut PackBuffers,
    solution: &mut FlexSolution,
) {
    let PackBuffers { jobs, scratch, packed } = buffers;
    jobs.clear();
    jobs.extend(items.iter().map(|it| {
        let it = it.borrow();
        PackJob { work: it.work, min: it.min, max: it.max }
    }));
    match precedence.filter(|p| !p.is_unconstrained() && p.len() == jobs.len()) {
        Some(p) => *packed = packing::pack_with_precedence(capacity, jobs, &solution.order, p, false),
        None => packing::pack_into(capacity, jobs, &solution.order, scratch, packed),
    }
    for (c, it) in packed.completion.iter_mut().zip(items) {
        *c = if c.is_finite() { start + *c + it.borrow().facts.tail } else { f64::INFINITY };
    }
    // The raw output's vectors become the solution's; the solution's old ones are the next buffers.
    std::mem::swap(&mut solution.first, &mut packed.first);
    std::mem::swap(&mut solution.completion, &mut packed.completion);
}

/// One pool's packing input as a plan saw it, kept by FLEX until a status view asks for the plan's
/// predicted completions ([`predict_from`]): the packed jobs (work, min, max) and each item's tail.
/// Filled by [`first_items_into`]; its buffers are reused from plan to plan.
#[derive(Clone, Debug, Default)]
pub(crate) struct PackInput {
    jobs: Vec<PackJob>,
    tails: Vec<f64>,
}

/// Step 2 for a plan, without the schedule: `solution.first` from `items` in `solution.order`
/// ([`packing::first_into`], `O(prefix)` after the order, equal to [`pack_items_into`]'s `first`),
/// `solution.completion` left empty; what [`predict_from`] needs later is kept in `input`.
pub(crate) fn first_items_into<B: Borrow<FlexItem>>(
    capacity: u32,
    items: &[B],
    input: &mut PackInput,
    scratch: &mut packing::FirstScratch,
    solution: &mut FlexSolution,
) {
    let PackInput { jobs, tails } = input;
    jobs.clear();
    tails.clear();
    for it in items {
        let it = it.borrow();
        jobs.push(PackJob { work: it.work, min: it.min, max: it.max });
        tails.push(it.facts.tail);
    }
    packing::first_into(capacity, jobs, &solution.order, scratch, &mut solution.first);
    solution.completion.clear();
}

/// The predicted completions [`pack_items_into`] would have written for the input [`first_items_into`]
/// kept and the same `order` and `start`: the full packing, run now, each finite absolute completion
/// (`start + packed + tail`, the same sum in the same order, so bit for bit) handed to `set` with
/// its item's index. Never-completing items (∞) are skipped, as the plan skips them.
pub(crate) fn predict_from(
    capacity: u32,
    start: f64,
    order: &[usize],
    input: &PackInput,
    buffers: &mut PackBuffers,
    mut set: impl FnMut(usize, f64),
) {
    let PackBuffers { scratch, packed, .. } = buffers;
    packing::pack_into(capacity, &input.jobs, order, scratch, packed);
    for (i, (&c, &tail)) in packed.completion.iter().zip(&input.tails).enumerate() {
        let c = if c.is_finite() { start + c + tail } else { f64::INFINITY };
        if c.is_finite() {
            set(i, c);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use circumflex_core::config::EngineConfig;
    use circumflex_core::engine::Choice;
    use circumflex_core::model::{JobId, JobSpec, JobState, Locality, Phase, Time};
    use circumflex_core::policy::{pool_demand, slot_bounds, ClusterView, Plan, Policy, PoolMode, Snapshot};
    use proptest::prelude::*;
    use testutil::permutations;

    fn snapshot_jobs(specs: Vec<JobSpec>) -> (Vec<JobState>, Vec<JobId>) {
        let jobs: Vec<JobState> =
            specs.into_iter().enumerate().map(|(i, s)| JobState::new(JobId(i as u32), s)).collect();
        let active = jobs.iter().map(|j| j.id).collect();
        (jobs, active)
    }

    /// The random re-plan sequences' world: a cluster, the jobs, and the active ones (the first half
    /// of the jobs at once, the others as steps admit them).
    struct Sequence {
        cluster: ClusterView,
        jobs: Vec<JobState>,
        active: Vec<JobId>,
        next: usize,
    }

    impl Sequence {
        fn new(specs: Vec<JobSpec>, split: bool) -> Sequence {
            let mode = if split { PoolMode::Split } else { PoolMode::Shared };
            let (jobs, _) = snapshot_jobs(specs);
            let next = jobs.len().div_ceil(2);
            let active = (0..next as u32).map(JobId).collect();
            Sequence { cluster: ClusterView { map_slots: 12, reduce_slots: 4, mode, nodes: 1 }, jobs, active, next }
        }

        /// One step: `what` 0 admits the next job, 1 finishes an active one, 2 starts and 3 ends a
        /// task of one (its id is returned as changed), 4 resizes the map pool.
        fn step(&mut self, k: usize, what: u8) -> Vec<JobId> {
            let mut changed = Vec::new();
            match what {
                0 if self.next < self.jobs.len() => {
                    self.active.push(JobId(self.next as u32));
                    self.next += 1;
                }
                1 if !self.active.is_empty() => {
                    let id = self.active.remove(k % self.active.len());
                    self.jobs[id.0 as usize].status = circumflex_core::model::JobStatus::Finished;
                }
                2 | 3 if !self.active.is_empty() => {
                    let id = self.active[k % self.active.len()];
                    let j = &mut self.jobs[id.0 as usize];
                    let ph = if j.phases[0].pending + j.phases[0].running > 0 { 0 } else { 1 };
                    let p = &mut j.phases[ph];
                    if what == 2 && p.pending > 0 {
                        p.pending -= 1;
                        p.running += 1;
                    } else if p.running > 0 {
                        p.running -= 1;
                        p.finished += 1;
                        p.observed_ms_sum += 400 + 50 * k as i64;
                    }
                    changed.push(id);
                }
                4 => self.cluster.map_slots = 4 + (k as u32 % 12),
                _ => {}
            }
            changed
        }

        fn snapshot(&self, now: Time) -> Snapshot<'_> {
            Snapshot::new(now, self.cluster, &self.jobs, &self.active)
        }
    }

    /// FLEX's plan of `specs` at `now`, with its predicted completions (asked for, as a status view does).
    fn plan_for(objective: Objective, cluster: ClusterView, specs: Vec<JobSpec>, now: Time) -> Plan {
        let (jobs, active) = snapshot_jobs(specs);
        let snap = Snapshot::new(now, cluster, &jobs, &active);
        let mut policy = FlexPolicy::new(objective);
        let mut plan = policy.plan(&snap);
        assert!(plan.completions_pending && plan.entries.iter().all(|e| e.predicted_completion_ms.is_none()));
        policy.predict_completions(&mut plan);
        assert!(!plan.completions_pending);
        plan
    }

    fn shared(slots: u32) -> ClusterView {
        ClusterView { map_slots: slots, reduce_slots: 0, mode: PoolMode::Shared, nodes: 1 }
    }

    #[test]
    fn avg_response_time_is_shortest_first_with_malleable_packing() {
        let specs = vec![
            JobSpec::new(0, 10, 0).with_task_ms(1000, 0),
            JobSpec::new(1, 2, 0).with_task_ms(1000, 0),
            JobSpec::new(2, 5, 0).with_task_ms(1000, 0),
        ];
        let plan = plan_for(Objective::AvgResponseTime, shared(6), specs, 10);
        let got: Vec<(u32, u32)> = plan.entries.iter().map(|e| (e.job.0, e.target[0])).collect();
        assert_eq!(got, vec![(1, 2), (2, 4), (0, 0)]);
        // Job 1: 2 tasks on 2 slots -> 1 s. Job 2: 4 slots for 1 s, then 5 slots: 1 + 1000/5 ms.
        assert_eq!(plan.entry(JobId(1)).unwrap().predicted_completion_ms, Some(1010));
        assert_eq!(plan.entry(JobId(2)).unwrap().predicted_completion_ms, Some(1210));
        assert_eq!(plan.total_target(Phase::Map), 6);
    }

    #[test]
    fn max_stretch_protects_the_small_late_job_and_max_rt_is_fifo() {
        let specs = vec![JobSpec::new(0, 20, 0).with_task_ms(1000, 0), JobSpec::new(900, 1, 0).with_task_ms(1000, 0)];
        let plan = plan_for(Objective::MaxStretch, shared(4), specs.clone(), 1000);
        assert_eq!(plan.entries[0].job, JobId(1));
        let plan = plan_for(Objective::MaxResponseTime, shared(4), specs, 1000);
        assert_eq!(plan.entries[0].job, JobId(0));
    }

    #[test]
    fn split_mode_plans_both_pools_with_a_reduce_tail() {
        let cluster = ClusterView { map_slots: 4, reduce_slots: 2, mode: PoolMode::Split, nodes: 1 };
        let mut reducing = JobSpec::new(0, 1, 4).with_task_ms(100, 1000);
        reducing.name = "reducing".into();
        let (mut jobs, active) = snapshot_jobs(vec![reducing, JobSpec::new(5, 8, 2).with_task_ms(500, 500)]);
        jobs[0].phases[0] = circumflex_core::model::PhaseState { total: 1, finished: 1, ..Default::default() };
        let snap = Snapshot::new(100, cluster, &jobs, &active);
        let mut policy = FlexPolicy::new(Objective::AvgResponseTime);
        let mut plan = policy.plan(&snap);
        policy.predict_completions(&mut plan);
        let e0 = plan.entry(JobId(0)).unwrap();
        let e1 = plan.entry(JobId(1)).unwrap();
        assert_eq!(e0.target, [0, 2]);
        assert_eq!(e1.target, [4, 0], "job 1's reduces wait on its maps");
        // Job 1: 8 maps x 500 ms on 4 slots = 1 s, then 2 reduces x 500 ms on 2 slots = 0.5 s.
        assert_eq!(e1.predicted_completion_ms, Some(100 + 1000 + 500));
        assert_eq!(e0.predicted_completion_ms, Some(100 + 2000));
    }

    #[test]
    fn deadlines_drive_the_deadline_objectives() {
        let mut urgent = JobSpec::new(0, 4, 0).with_task_ms(1000, 0);
        urgent.deadline_ms = Some(3000);
        let mut relaxed = JobSpec::new(0, 2, 0).with_task_ms(1000, 0);
        relaxed.deadline_ms = Some(60_000);
        for o in [Objective::MaxLateness, Objective::MaxTardiness, Objective::TardyJobs, Objective::TotalTardiness] {
            let plan = plan_for(o, shared(2), vec![relaxed.clone(), urgent.clone()], 0);
            assert_eq!(plan.entries[0].job, JobId(1), "{o}");
            assert_eq!(plan.entries[0].target[0], 2, "{o}");
        }
        let mut sla = JobSpec::new(0, 4, 0).with_task_ms(1000, 0);
        sla.sla = vec![circumflex_core::model::SlaStep { deadline_ms: 2500, penalty: 10.0 }];
        for o in [Objective::MaxSla, Objective::TotalSla] {
            let plan = plan_for(o, shared(2), vec![JobSpec::new(0, 2, 0).with_task_ms(1000, 0), sla.clone()], 0);
            assert_eq!(plan.entries[0].job, JobId(1), "{o}");
        }
    }

    #[test]
    fn chains_reproduce_the_cyclic_piggyback_example() {
        // Digest §6.5 at t = 4 on S = 1: subjobs (X,1) = 6 (job x1, a = 0), (X,2) = 4 (job x2,
        // a = 4) chained; (Y,1) = 3 (job y1, a = 4). W = N/S: 10, 10, 3.
        let item = |work: f64, arrival: f64, isolated: f64| FlexItem {
            work,
            min: 0,
            max: 1,
            facts: JobFacts { arrival, weight: 1.0, deadline: None, sla: vec![], isolated, tail: 0.0 },
        };
        let problem = FlexProblem {
            capacity: 1,
            start: 4.0,
            items: vec![item(6.0, 0.0, 10.0), item(4.0, 4.0, 10.0), item(3.0, 4.0, 3.0)],
            precedence: Some(Precedence::chains(&[2, 1])),
        };
        let sol = solve(Objective::AvgResponseTime, &problem);
        assert_eq!(sol.order, vec![2, 0, 1]);
        assert_eq!(sol.completion, vec![13.0, 17.0, 7.0]);
        let rt: f64 = problem.items.iter().zip(&sol.completion).map(|(it, c)| c - it.facts.arrival).sum();
        assert_eq!(rt, 29.0);
        let sol = solve(Objective::MaxStretch, &problem);
        assert_eq!(sol.order, vec![2, 0, 1]);
        let worst = problem
            .items
            .iter()
            .zip(&sol.completion)
            .map(|(it, c)| (c - it.facts.arrival) / it.facts.isolated)
            .fold(0.0, f64::max);
        assert!((worst - 1.3).abs() < 1e-12, "{worst}");
        // Every method returns a topological order, even on a general DAG.
        let dag = Precedence::from_edges(3, &[(1, 0), (2, 0)]).unwrap();
        for &o in Objective::ALL {
            let p = FlexProblem { precedence: Some(dag.clone()), ..problem.clone() };
            assert!(dag.is_topological(&sequence(o, &p)), "{o}");
        }
    }

    #[test]
    fn registry_builds_flex_and_rejects_unknown_objectives() {
        let cfg =
            EngineConfig::from_pairs([("circumflex.policy", "flex"), ("circumflex.objective", "max_stretch")]).unwrap();
        let policy = crate::registry::create(&cfg).unwrap();
        assert_eq!(policy.name(), "flex");
        assert!(crate::registry::POLICY_NAMES.contains(&"flex"));
        let bad = EngineConfig::from_pairs([("circumflex.policy", "flex"), ("circumflex.objective", "speed")]).unwrap();
        let err = crate::registry::create(&bad).err().unwrap().to_string();
        assert!(err.contains("circumflex.objective") && err.contains("speed") && err.contains("max_stretch"), "{err}");
        assert_eq!(FlexPolicy::from_config(&EngineConfig::default()).unwrap().objective(), Objective::AvgResponseTime);
    }

    #[test]
    fn engine_answers_node_updates_consistently_with_flex_targets() {
        let cfg = EngineConfig {
            policy: "flex".into(),
            pool_mode: PoolMode::Shared,
            node_locality_delay: 0,
            rack_locality_delay: 0,
            ..EngineConfig::default()
        };
        let mut e = crate::new_engine(cfg).unwrap();
        let n1 = e.add_node("h1", "/r1", 3, 0);
        let n2 = e.add_node("h2", "/r1", 3, 0);
        e.submit(JobSpec::new(0, 10, 0).with_task_ms(1000, 0), 0).unwrap();
        e.submit(JobSpec::new(1, 2, 0).with_task_ms(1000, 0), 1).unwrap();
        e.submit(JobSpec::new(2, 5, 0).with_task_ms(1000, 0), 2).unwrap();
        e.tick(3);
        let targets: Vec<(u32, u32)> = e.plan().entries.iter().map(|x| (x.job.0, x.target[0])).collect();
        assert_eq!(targets, vec![(1, 2), (2, 4), (0, 0)]);
        let mut launched = [0u32; 3];
        for node in [n1, n2] {
            let choices: Vec<Choice> = e.node_update(node, [3, 0], 3).unwrap().to_vec();
            let mut free = 3;
            for c in choices {
                let k = c.count.min(free);
                for _ in 0..k {
                    e.task_started(c.job, c.phase, node, Locality::Any, 3).unwrap();
                }
                launched[c.job.0 as usize] += k;
                free -= k;
            }
        }
        assert_eq!(launched, [0, 2, 4], "every slot went where the FLEX targets said");
    }

    /// The Gridmix defect (docs/evaluation.md, "Why FLEX lost to circumflex-fair"): on YARN every
    /// MapReduce ask without a preferred host counts as node-local on any node, so the shim launches
    /// a job's tasks from a restricted-locality choice and reports them node-local. With the default
    /// delay scheduling the job's next offer is restricted again. FLEX's first job must still get
    /// every free slot of a heartbeat up to its target, not one per heartbeat with the rest spilling
    /// to the large job in the work-conserving pass (where 18 s tasks then block the small jobs).
    #[test]
    fn the_first_job_gets_every_free_slot_when_its_asks_run_anywhere() {
        let cfg = EngineConfig { policy: "flex".into(), pool_mode: PoolMode::Shared, ..EngineConfig::default() };
        let mut e = crate::new_engine(cfg).unwrap();
        let n = e.add_node("localhost", "/default-rack", 8, 0);
        let big = e.submit(JobSpec::new(0, 12, 0), 0).unwrap().0;
        let small = e.submit(JobSpec::new(1, 7, 0), 1).unwrap().0;
        e.tick(2);
        assert_eq!(e.plan().entries[0].job, small, "fewest tasks first (avg response time)");
        assert_eq!(e.plan().entry(small).unwrap().target[0], 7);
        // The host walks the choices in order and can place every ask here (placement-free asks).
        let mut launched = [0u32; 2];
        for heartbeat in 0..4 {
            let free = 8 - launched[0] - launched[1];
            if free == 0 {
                break;
            }
            let choices: Vec<Choice> = e.node_update(n, [free, 0], 3 + heartbeat).unwrap().to_vec();
            let mut left = free;
            for c in choices {
                let job = c.job.0 as usize;
                let pending = [12, 7][job] - launched[job];
                let k = c.count.min(left).min(pending);
                for _ in 0..k {
                    e.task_started(c.job, Phase::Map, n, Locality::Node, 3 + heartbeat).unwrap();
                }
                launched[job] += k;
                left -= k;
            }
        }
        assert_eq!(launched[small.0 as usize], 7, "the small job takes its whole target: {launched:?}");
        assert_eq!(launched[big.0 as usize], 1, "the big job only the spare slot: {launched:?}");
    }

    fn spec_strategy() -> impl Strategy<Value = JobSpec> {
        (0i64..5000, 1u32..30, 0u32..6, 1u32..5, 0u32..4, prop::option::of(1u32..12), prop::option::of(0i64..60_000))
            .prop_map(|(submit, maps, reduces, weight, min, max, deadline)| {
                let mut s = JobSpec::new(submit, maps, reduces).with_task_ms(500 + submit % 700, 900);
                s.weight = weight as f64;
                s.min_slots = min;
                s.max_slots = max.map(|m| m.max(min));
                s.deadline_ms = deadline.map(|d| submit + d);
                s
            })
    }

    /// A single-slot problem (S = 1, every job m = 0, M = 1) of jobs `(work, weight, arrival)`.
    fn single_slot(jobs: &[(u32, u32, u32)]) -> FlexProblem {
        let items = jobs
            .iter()
            .map(|&(p, w, a)| FlexItem {
                work: p as f64,
                min: 0,
                max: 1,
                facts: JobFacts {
                    arrival: a as f64,
                    weight: w as f64,
                    deadline: Some(a as f64 + 2.0 * p as f64),
                    sla: vec![],
                    isolated: p as f64,
                    tail: 0.0,
                },
            })
            .collect();
        FlexProblem { capacity: 1, start: 100.0, items, precedence: None }
    }

    /// The objective's value when the items run one after another in `order` from the start.
    fn value_of_order(objective: Objective, problem: &FlexProblem, order: &[usize]) -> f64 {
        let mut t = problem.start;
        let mut values = Vec::new();
        for &i in order {
            t += problem.items[i].work;
            values.push(objective.penalty(&problem.items[i].facts).eval(t));
        }
        objective.aggregate_values(values)
    }

    proptest! {
        /// On a single slot the whole pipeline (order + packing) is optimal for the exact
        /// objectives: its schedule's value equals the best over all orders (up to 7 jobs). One
        /// slot with free preemption gains nothing over some order for these regular objectives.
        #[test]
        fn single_slot_pipeline_is_optimal(
            jobs in prop::collection::vec((1u32..20, 1u32..6, 0u32..50), 1..8),
            which in 0usize..20,
        ) {
            let exact: Vec<Objective> = Objective::ALL.iter().copied()
                .filter(|o| o.is_exact() && !matches!(o, Objective::TotalSla | Objective::MaxSla)).collect();
            let objective = exact[which % exact.len()];
            let problem = single_slot(&jobs);
            let sol = solve(objective, &problem);
            // The packed schedule runs jobs back to back in priority order.
            let got = objective.aggregate_values(
                problem.items.iter().zip(&sol.completion).map(|(it, &c)| objective.penalty(&it.facts).eval(c)),
            );
            let best = permutations(jobs.len()).iter()
                .map(|o| value_of_order(objective, &problem, o)).fold(f64::INFINITY, f64::min);
            prop_assert!((got - best).abs() <= 1e-9 * best.abs().max(1.0), "{}: {} vs best {}", objective, got, best);
            let by_order = value_of_order(objective, &problem, &sol.order);
            prop_assert!((by_order - got).abs() <= 1e-9 * got.abs().max(1.0), "{}: {} vs {}", objective, by_order, got);
        }
    }

    proptest! {
        /// The minimax objectives' path with reused buffers ([`dp_order_into`]) orders exactly as
        /// [`sequence`], without a previous plan, with a previous plan unrelated to this one
        /// (indices out of range and repeated included) and with this plan's own order as the
        /// previous one; one set of buffers serves every call.
        #[test]
        fn dp_order_into_equals_sequence(
            jobs in prop::collection::vec(
                (1u32..8, 1u32..4, 0u32..30, 1u32..6, prop::option::of(0u32..100), any::<bool>()), 1..80),
            prev in prop::collection::vec(0u32..90, 0..80),
            start in 0u32..50,
            which in 0usize..20,
        ) {
            let minimax: Vec<Objective> = Objective::ALL.iter().copied()
                .filter(|o| matches!(o.method(), Method::BackwardsDp | Method::BackwardGreedy)).collect();
            let objective = minimax[which % minimax.len()];
            let items: Vec<FlexItem> = jobs.iter().map(|&(w, weight, a, iso, d, sla)| FlexItem {
                work: w as f64 * 100.0,
                min: 0,
                max: 3,
                facts: JobFacts {
                    arrival: a as f64 * 10.0,
                    weight: weight as f64,
                    deadline: d.map(|d| d as f64 * 20.0),
                    sla: if sla { vec![(a as f64 * 10.0 + 500.0, 1.0)] } else { vec![] },
                    isolated: iso as f64 * 50.0,
                    tail: (w % 3) as f64 * 7.0,
                },
            }).collect();
            let start = start as f64 * 100.0;
            let expected = sequence(objective, &FlexProblem { capacity: 3, start, items: items.clone(), precedence: None });
            let ids: Vec<u32> = (0..items.len() as u32).map(|i| 2 * i + 1).collect();
            let mut prev_ids = prev.clone();
            prev_ids.sort_unstable();
            prev_ids.dedup();
            let prev_order: Vec<usize> = prev.iter().map(|&x| x as usize).collect();
            let (mut buffers, mut order) = (DpBuffers::default(), Vec::new());
            let previous = [
                None,
                Some((prev_ids.as_slice(), prev_order.as_slice(), ids.as_slice())),
                Some((ids.as_slice(), expected.as_slice(), ids.as_slice())),
            ];
            for previous in previous {
                let took = dp_order_into(objective, 3, start, &items, previous, &mut buffers, &mut order);
                let steps = matches!(objective, Objective::MaxSla | Objective::TotalSla) && jobs.iter().any(|j| j.5);
                prop_assert_eq!(took, !steps, "{}", objective);
                if took {
                    prop_assert_eq!(&order, &expected, "{}", objective);
                }
            }
        }
    }

    proptest! {
        /// Incremental re-plans (the engine's snapshots with a change list) plan exactly as a fresh
        /// policy from the snapshot alone, for every objective, across epochs in which tasks start
        /// and finish, jobs arrive and leave and the capacity changes.
        #[test]
        fn incremental_plans_equal_plans_from_scratch(
            specs in prop::collection::vec(spec_strategy(), 1..20),
            steps in prop::collection::vec((0usize..64, 0u8..5), 1..40),
            split in any::<bool>(),
            which in 0usize..20,
        ) {
            let objective = Objective::ALL[which % Objective::ALL.len()];
            let mut world = Sequence::new(specs, split);
            let mut policy = FlexPolicy::new(objective);
            for (t, &(k, what)) in steps.iter().enumerate() {
                let changed = world.step(k, what);
                let now = 6000 + 1000 * t as Time;
                let plain = world.snapshot(now);
                let got = policy.plan(&plain.with_changes(&changed));
                prop_assert_eq!(got, FlexPolicy::new(objective).plan(&plain), "step {}", t);
            }
        }
    }

    /// FLEX's plan as it was made before its predictions went lazy, kept as the reference: per pool
    /// the items in active order, [`solve_items`] (the order and the full packing, every
    /// completion), then the builder given every job's target and predicted completion.
    fn eager_plan(objective: Objective, snapshot: &Snapshot<'_>) -> Plan {
        let cluster = snapshot.cluster;
        let mut solved = Vec::new();
        for pool in cluster.pools() {
            let (mut ids, mut items) = (Vec::new(), Vec::new());
            for job in snapshot.active_jobs() {
                if let Some(it) = policy::item(objective, job, &cluster, &pool) {
                    ids.push(job.id);
                    items.push(it);
                }
            }
            solved.push((pool, ids, solve_items(objective, pool.capacity, snapshot.now as f64, &items, None)));
        }
        let longest = solved.iter().map(|(_, _, sol)| sol.order.len()).max().unwrap_or(0);
        let order = (0..longest)
            .flat_map(|pos| solved.iter().filter_map(move |(_, ids, sol)| sol.order.get(pos).map(|&i| ids[i])));
        let mut builder = circumflex_core::policy::PlanBuilder::new(snapshot, order);
        for (pool, ids, sol) in &solved {
            for (i, &id) in ids.iter().enumerate() {
                builder.set_pool_target(id, pool, sol.first[i]);
                if sol.completion[i].is_finite() {
                    builder.set_predicted_completion(id, sol.completion[i].ceil() as Time);
                }
            }
        }
        builder.finish()
    }

    proptest! {
        /// FLEX's plans carry no predictions ([`Plan::completions_pending`]) and the same order and
        /// targets as the eager reference; asked later, after the jobs have moved on, the
        /// predictions are the eager plan's of the plan's own snapshot, bit for bit. Every
        /// objective, both pool modes, incremental re-plans (arrivals, departures, task starts and
        /// ends, capacity changes) and a fresh policy alike.
        #[test]
        fn lazy_predictions_equal_the_eager_plans(
            specs in prop::collection::vec(spec_strategy(), 1..20),
            steps in prop::collection::vec((0usize..64, 0u8..5), 1..30),
            split in any::<bool>(),
            which in 0usize..20,
        ) {
            let objective = Objective::ALL[which % Objective::ALL.len()];
            let mut world = Sequence::new(specs, split);
            let mut policy = FlexPolicy::new(objective);
            // The previous step's plan and its eager reference, predicted only after the jobs changed.
            let mut previous: Option<(Plan, Plan)> = None;
            for (t, &(k, what)) in steps.iter().enumerate() {
                let changed = world.step(k, what);
                if let Some((mut lazy, eager)) = previous.take() {
                    policy.predict_completions(&mut lazy);
                    prop_assert_eq!(lazy, eager, "step {}", t - 1);
                }
                let now = 6000 + 1000 * t as Time;
                let plain = world.snapshot(now);
                let got = policy.plan(&plain.with_changes(&changed));
                let eager = eager_plan(objective, &plain);
                prop_assert!(got.completions_pending);
                prop_assert!(got.entries.iter().all(|e| e.predicted_completion_ms.is_none()));
                let shape = |p: &Plan| p.entries.iter().map(|e| (e.job, e.target)).collect::<Vec<_>>();
                prop_assert_eq!(shape(&got), shape(&eager), "step {}", t);
                let mut fresh_policy = FlexPolicy::new(objective);
                let mut fresh = fresh_policy.plan(&plain);
                fresh_policy.predict_completions(&mut fresh);
                prop_assert_eq!(&fresh, &eager, "step {}", t);
                previous = Some((got, eager));
            }
            if let Some((mut lazy, eager)) = previous {
                policy.predict_completions(&mut lazy);
                prop_assert_eq!(lazy, eager);
            }
        }
    }

    proptest! {
        /// For every objective and pool mode: targets within capacity, within [min, max] when the
        /// minima fit, never above demand; every active job listed once; deterministic.
        #[test]
        fn plans_respect_bounds_and_are_deterministic(
            specs in prop::collection::vec(spec_strategy(), 1..25),
            map_slots in 0u32..30,
            reduce_slots in 0u32..10,
            split in any::<bool>(),
            which in 0usize..20,
        ) {
            let objective = Objective::ALL[which % Objective::ALL.len()];
            let mode = if split { PoolMode::Split } else { PoolMode::Shared };
            let cluster = ClusterView { map_slots, reduce_slots, mode, nodes: 1 };
            let (jobs, active) = snapshot_jobs(specs);
            let snap = Snapshot::new(6000, cluster, &jobs, &active);
            let plan = FlexPolicy::new(objective).plan(&snap);
            prop_assert_eq!(plan.entries.len(), jobs.len());
            prop_assert_eq!(&FlexPolicy::new(objective).plan(&snap), &plan);
            for pool in cluster.pools() {
                let in_pool = |e: &circumflex_core::policy::PlanEntry| pool.phases.iter().map(|p| e.target[p.idx()]).sum::<u32>();
                let total: u32 = plan.entries.iter().map(in_pool).sum();
                prop_assert!(total <= pool.capacity);
                let sum_min: u32 = jobs.iter().filter(|j| pool_demand(j, &pool) > 0)
                    .map(|j| {
                        let (m, mx) = slot_bounds(j, pool.capacity);
                        m.min(mx.min(pool_demand(j, &pool)))
                    })
                    .sum();
                for e in &plan.entries {
                    let j = &jobs[e.job.0 as usize];
                    let got: u32 = in_pool(e);
                    let demand = pool_demand(j, &pool);
                    let (min, max) = slot_bounds(j, pool.capacity);
                    prop_assert!(got <= demand && got <= max);
                    if sum_min <= pool.capacity && demand > 0 {
                        prop_assert!(got >= min.min(demand));
                    }
                }
            }
        }
    }
}
