//! The FlowFlex engine policy (`circumflex.policy = flowflex`, paper §3.3 and digest §3.4): every
//! epoch it rebuilds the FlowFlex problem from the snapshot, solves it and hands the first epoch of
//! the malleable schedule to the assignment layer as per-job slot targets.
//!
//! The problem, per pool of [`ClusterView::pools`] (the paper has one pool; YARN's shared pool is
//! that case):
//! - **Flows** are the jobs grouped by `JobSpec.flow.flow_id`; a job without one is a singleton
//!   flow `job-<id>`. A flow is planned while at least one of its jobs is active.
//! - **Nodes** are the flow's unfinished jobs: the active ones, and the ones named in any of the
//!   flow's `mapreduce.workflow.adjacency.*` keys that no job has declared yet (future work).
//!   Finished and rejected jobs are dropped; precedence through them is already satisfied. Edges
//!   come from the union of the adjacency keys of the flow's submitted jobs.
//! - **Ended jobs are remembered here, not in the engine**: the engine retires a job once it ends,
//!   so the policy keeps, per flow, what the planner needs of its ended jobs (`FlowHistory`:
//!   finished node names, their adjacency, and their cost and size facts), learnt in
//!   [`Policy::on_job_finished`]. Without it a finished predecessor would look like a node not yet
//!   submitted and block its successors forever. **Decision (the paper is silent on memory):** a
//!   flow's history is dropped once the flow has had no live job for [`FLOW_HISTORY_MS`] (a day):
//!   a flow whose next job comes later than that is planned as a new flow. An operator refresh
//!   starts a new policy with no history (a flow in flight across a refresh plans its remaining
//!   jobs without the finished predecessors' edges, which only frees them earlier).
//! - **Work** of an active job is its remaining work in all phases (map and reduce coalesced into
//!   one node, digest §6.13); `δ` is its maximum slots in the pool, capped by its remaining tasks
//!   (at least 1). A future node's work is the mean total work of the flow's submitted jobs and its
//!   `δ` the largest of theirs (the paper's "default work prediction"; nothing better is known).
//! - **Time** is in seconds from `now`. The flow's cost is the objective's penalty (the FLEX
//!   objective keys, `circumflex.objective`, default `avg_response_time`) built from flow-level
//!   facts: arrival = earliest submission among its jobs, weight = their largest weight,
//!   deadline = their latest deadline, SLA steps of the first job that has some, and for stretch the
//!   isolated time `V/P` of the whole flow (paper: stretch weight 1/work). Linear costs whose zero
//!   lies in the future (lateness) are shifted so they are non-negative from `now` on, which changes
//!   no decision: per flow for minisum (a constant), by a common amount for minimax.
//! - **Stage 2**: minisum objectives run Fig. 6 on a coarse geometric grid (ratio 1.5, no per-flow
//!   points: [`super::minisum::geometric_grid`], so the network's size does not grow with the number
//!   of flows) keeping the best of `θ ∈ {0.3, 0.5, 0.7}`; minimax ones run Fig. 8 to a relative tolerance of 1e-3. If a flow's
//!   adjacency has a cycle, its edges are ignored (its jobs become singleton flows) rather than
//!   failing the plan; if the solver fails, flows are list-scheduled by their lower bound `Q_j`.
//!   The minisum relaxation is solved by the network simplex method, warm-started from the basis
//!   the pool's last solve ended with ([`super::minisum::minisum_for_planning_from`]; flows are
//!   named across plans by a hash of their id). **Decision (issue 20):** a warm optimum is used only
//!   when it is certified to round like the cold simplex's (every optimum charges the flows within a
//!   tiny `δ` of it, and every deadline's crossing of `θ·V` is farther than `δ`: `minisum` module);
//!   otherwise the cold simplex runs. The warm solve runs on the grid cut at the last interval
//!   any optimum can charge (`minisum::prune_point`: strictly growing costs past it, capacity for
//!   the whole volume by it), the cold one on the whole grid. Before either, for linear costs, a
//!   guessed optimum (`fill`: a forward fill, else an insertion) is used with no network when its
//!   prices prove it the relaxation's only optimum and its rounding robust, so it is the cold
//!   simplex's too. So every plan stays a function of its snapshot (and of the
//!   ended jobs the policy was told of), as with the cold solve alone; the kept basis (`PoolSolve`)
//!   is a scratch that changes only how fast a plan comes. (An earlier warm successive-shortest-path
//!   repair had no such certificate and could pick another optimum among equal-cost ones depending
//!   on the history of plans.) What the policy also keeps between plans is exact: the flow views
//!   (nodes, edges, the reported [`Plan::flows`] entry), reused while a flow's live jobs and history
//!   are unchanged (the whole list while the active jobs and the history are); per pool the last Stages 1-3 input (every flow's jobs, edges and cost) and
//!   schedule, reused when the next plan's input is the same bit for bit (`PoolSolve`); and per pool
//!   and flow the last Stage 1 (validated flow and pseudo-chain), reused for a flow whose input is
//!   the same bit for bit (`Stage1`: an arrival, a departure or a task's end changes one flow), and
//!   renewed in place, to the same values as a fresh Stage 1, for a flow whose jobs progressed on the
//!   same edges (every flow with a running job; a singleton flow then costs a few float operations).
//!   For that, minisum objectives drop a linear cost's constant term (`origin := 0`): it is a
//!   per-flow constant, which changes no Stage 2 decision in exact arithmetic, and without it an
//!   epoch in which no job of a pool progressed has the same input as the last (only `now` moved).
//!   **Decision (issue 20):** the full solve is defined on these constant-free costs, so among
//!   near-ties (floating-point noise) a plan may differ from one that kept the constant; the
//!   reused schedule is exactly the full solve's.
//! - **Targets**: each job's average slots over the next epoch of the Stage 3 schedule, rounded by
//!   largest remainder so the pool total never exceeds its capacity, then capped by the job's
//!   runnable demand and maximum slots. A job with an unfinished predecessor gets 0 (digest §5
//!   invariant 11; averaging over an epoch could otherwise let it start early). The plan lists flows
//!   in Stage 2 priority order and records them in [`Plan::flows`].

use std::collections::{BTreeMap, BTreeSet};
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use super::chain::{ChainScratch, PseudoChain};
use super::flow::{Flow, FlowJob};
use super::minisum::PlanningBasis;
use crate::flex::metrics::{Aggregate, JobFacts, Objective, Penalty};
use circumflex_core::config::EngineConfig;
use circumflex_core::error::Result;
use circumflex_core::model::{JobId, JobState, Phase, Time};
use circumflex_core::policy::{
    pool_demand, slot_bounds, Plan, PlanBuilder, PlanFlow, PlanFlowNode, Policy, Pool, Snapshot,
};

/// Geometric ratio of the minisum grid used when re-planning (see the module docs).
const ENGINE_GRID_RATIO: f64 = 1.5;

/// Milliseconds per planning time unit.
const UNIT_MS: f64 = 1000.0;

/// How long a flow's history outlives its last live job (module docs).
pub const FLOW_HISTORY_MS: Time = 24 * 3600 * 1000;

/// The FlowFlex policy.
#[derive(Clone, Debug)]
pub struct FlowFlexPolicy {
    objective: Objective,
    epoch_ms: Time,
    /// Per flow id: what the planner needs of the flow's ended jobs.
    history: BTreeMap<String, FlowHistory>,
    /// Changes to `history` so far (a job learnt, a flow forgotten): the flow views of the last
    /// plan stand while neither it nor the active jobs changed ([`ViewCache::views`]).
    history_changes: u64,
    /// The views of the last plan, by flow id and by job for singleton flows (module docs).
    views: ViewCache,
    /// Per pool (in [`circumflex_core::policy::ClusterView::pools`] order), the last plan's Stage
    /// 1-3 input and result ([`PoolSolve`]).
    solved: [PoolSolve; 2],
    /// `plan`'s working vectors ([`PlanScratch`]).
    scratch: PlanScratch,
}

/// The working vectors of [`FlowFlexPolicy::plan`], kept across plans (issue 20: no allocation per
/// plan for them once warm); each is cleared before it is filled, so no plan reads what the last
/// one left.
#[derive(Clone, Debug, Default)]
struct PlanScratch {
    /// Plans so far: the mark of a flow history with a live job in this plan ([`FlowHistory::live`]).
    plans: u64,
    /// Per view, its flow's key ([`flow_key`]).
    keys: Vec<u64>,
    /// Per pool planned: the pool and its jobs' range in `targets`.
    pools: Vec<(Pool, usize, usize)>,
    /// Every planned pool's `(job, slots)` targets, pool after pool.
    targets: Vec<(JobId, u32)>,
    /// One pool's jobs in plan order, their average slots over the epoch, and those rounded.
    jobs: Vec<JobId>,
    averages: Vec<f64>,
    rounded: Vec<u32>,
    /// [`round_targets_into`]'s order by remainder.
    by_remainder: Vec<usize>,
    /// The first planned pool's job order and predicted completions.
    order: Vec<JobId>,
    predicted: Vec<(JobId, Time)>,
    /// One flow's per-node area in the epoch and end ([`job_areas_into`]).
    areas: Vec<(f64, f64)>,
}

/// The flow views of the last plan, kept while their inputs are unchanged: a view is a function of
/// the flow's live jobs (their ids, in submission order: a job's flow membership never changes) and
/// of its history, which only grows (`FlowHistory::count` counts what it learnt). Each entry carries
/// the generation (plan) that last used it; entries the current plan did not use are dropped.
#[derive(Clone, Debug, Default)]
struct ViewCache {
    flows: BTreeMap<String, (u64, Arc<FlowView>)>,
    jobs: BTreeMap<JobId, (u64, Arc<FlowView>)>,
    generation: u64,
    /// The last plan's views, its active jobs (in snapshot order) and the history's change count
    /// then (`FlowFlexPolicy::history_changes`): a plan with the same active jobs and no change
    /// to the history has exactly these views (each is reused from the maps above), so they are
    /// taken whole (issue 20: about half the plans; `kept_views_are_fresh_ones` pins it).
    views: Vec<Arc<FlowView>>,
    active: Vec<JobId>,
    history_changes: u64,
}

/// What FlowFlex keeps of a flow's ended jobs (module docs).
#[derive(Clone, Debug, Default)]
struct FlowHistory {
    /// Node names of ended jobs.
    finished: BTreeSet<String>,
    /// Union of the ended jobs' adjacency keys.
    adjacency: BTreeMap<String, Vec<String>>,
    /// Ended jobs.
    count: u32,
    /// The last plan in which the flow had a live job ([`PlanScratch::plans`]; what a plan reads
    /// only while it forgets idle flows).
    live: u64,
    /// Earliest submission among them.
    earliest_submit: Time,
    /// Largest weight.
    weight: f64,
    /// Latest deadline.
    deadline: Option<Time>,
    /// SLA steps of the first ended job that had some.
    sla: Option<Vec<(f64, f64)>>,
    /// Their total work, slot-ms.
    work: f64,
    /// Largest `min(max_slots, tasks of the wider phase)` among them (before the pool's cap).
    widest: u32,
    /// When the last of them ended.
    last_end_ms: Time,
}

/// Adds `from`'s successor lists into `into` (no duplicates, first-seen order).
fn merge_adjacency<'a>(
    into: &mut BTreeMap<String, Vec<String>>,
    from: impl IntoIterator<Item = (&'a String, &'a Vec<String>)>,
) {
    for (node, to) in from {
        if !into.contains_key(node) {
            into.insert(node.clone(), Vec::new());
        }
        let Some(list) = into.get_mut(node) else { continue };
        for t in to {
            if !list.contains(t) {
                list.push(t.clone());
            }
        }
    }
}

impl FlowHistory {
    fn learn(&mut self, job: &JobState, now: Time) {
        let Some(flow) = &job.spec.flow else { return };
        self.finished.insert(flow.node_name.clone());
        merge_adjacency(&mut self.adjacency, flow.adjacency.iter().map(|(a, b)| (a, b)));
        self.earliest_submit =
            if self.count == 0 { job.spec.submit_ms } else { self.earliest_submit.min(job.spec.submit_ms) };
        self.weight = self.weight.max(job.spec.weight);
        self.deadline = self.deadline.max(job.spec.deadline_ms);
        if self.sla.is_none() && !job.spec.sla.is_empty() {
            self.sla = Some(job.spec.sla.iter().map(|s| (s.deadline_ms as f64, s.penalty)).collect());
        }
        self.work += job_total_work(job);
        let max = job.spec.max_slots.unwrap_or(u32::MAX);
        self.widest = self.widest.max(max.min(job.spec.maps.tasks.max(job.spec.reduces.tasks)));
        self.count += 1;
        self.last_end_ms = self.last_end_ms.max(now);
    }
}

/// One unfinished node of a flow.
#[derive(Clone, Debug)]
struct Node {
    name: String,
    job: Option<JobId>,
}

/// A flow as the planner sees it.
#[derive(Clone, Debug)]
struct FlowView {
    nodes: Vec<Node>,
    /// Edges between unfinished nodes (indices into `nodes`).
    edges: Vec<(usize, usize)>,
    /// The flow's live (active) jobs, for facts and estimates.
    known: Vec<JobId>,
    /// The flow's ended jobs.
    ended: FlowHistory,
    /// The view as the plan reports it ([`Plan::flows`]).
    reported: Arc<PlanFlow>,
    /// Its flow's key across plans ([`flow_key`] of the reported id), hashed once per view.
    key: u64,
    /// Per node, whether an edge enters it (an unfinished predecessor: its target is 0); empty
    /// when the flow has no edges (every singleton flow). Computed once per view, not per plan.
    blocked: Vec<bool>,
}

impl FlowView {
    fn new(
        id: String,
        nodes: Vec<Node>,
        edges: Vec<(usize, usize)>,
        known: Vec<JobId>,
        ended: FlowHistory,
    ) -> FlowView {
        let reported = Arc::new(PlanFlow {
            flow_id: id.clone(),
            nodes: nodes
                .iter()
                .enumerate()
                .map(|(i, n)| PlanFlowNode {
                    name: n.name.clone(),
                    job: n.job,
                    predecessors: edges.iter().filter(|e| e.1 == i).map(|e| nodes[e.0].name.clone()).collect(),
                })
                .collect(),
        });
        let key = flow_key(&reported.flow_id);
        let blocked = if edges.is_empty() {
            Vec::new()
        } else {
            (0..nodes.len()).map(|i| edges.iter().any(|e| e.1 == i)).collect()
        };
        FlowView { nodes, edges, known, ended, reported, key, blocked }
    }
}

impl FlowFlexPolicy {
    /// FlowFlex optimizing `objective`, averaging targets over epochs of `epoch_ms`.
    pub fn new(objective: Objective, epoch_ms: Time) -> FlowFlexPolicy {
        FlowFlexPolicy {
            objective,
            epoch_ms,
            history: BTreeMap::new(),
            history_changes: 0,
            views: ViewCache::default(),
            solved: Default::default(),
            scratch: PlanScratch::default(),
        }
    }

    /// From `circumflex.objective` (default `avg_response_time`) and `circumflex.epoch.ms`.
    pub fn from_config(config: &EngineConfig) -> Result<FlowFlexPolicy> {
        let objective = match config.objective.as_deref() {
            Some(name) => Objective::parse(name)?,
            None => Objective::default(),
        };
        Ok(FlowFlexPolicy::new(objective, config.epoch_ms))
    }
}

/// Groups the snapshot's jobs into flows (module docs), in order of their first active job. Views
/// whose inputs did not change since the last plan are taken from `cache`, which then holds exactly
/// this plan's views (updated in place: a flow planned again costs no allocation of its key).
fn flow_views<'c>(
    snapshot: &Snapshot<'_>,
    history: &BTreeMap<String, FlowHistory>,
    history_changes: u64,
    cache: &'c mut ViewCache,
) -> &'c [Arc<FlowView>] {
    if cache.generation > 0 && cache.history_changes == history_changes && cache.active == snapshot.active {
        return &cache.views;
    }
    let mut views = std::mem::take(&mut cache.views);
    views.clear();
    fill_views(snapshot, history, cache, &mut views);
    cache.views = views;
    cache.active.clear();
    cache.active.extend_from_slice(snapshot.active);
    cache.history_changes = history_changes;
    &cache.views
}

/// [`flow_views`] looked up or built view by view into `views`.
fn fill_views(
    snapshot: &Snapshot<'_>,
    history: &BTreeMap<String, FlowHistory>,
    cache: &mut ViewCache,
    views: &mut Vec<Arc<FlowView>>,
) {
    let mut by_id: BTreeMap<&str, Vec<JobId>> = BTreeMap::new();
    for job in snapshot.active_jobs() {
        if let Some(flow) = &job.spec.flow {
            by_id.entry(flow.flow_id.as_str()).or_default().push(job.id);
        }
    }
    cache.generation += 1;
    let generation = cache.generation;
    for job in snapshot.active_jobs() {
        let Some(flow) = &job.spec.flow else {
            let entry = cache.jobs.entry(job.id).or_insert_with(|| {
                let view = FlowView::new(
                    format!("job-{}", job.id.0),
                    vec![Node { name: job.spec.name.clone(), job: Some(job.id) }],
                    Vec::new(),
                    vec![job.id],
                    FlowHistory::default(),
                );
                (generation, Arc::new(view))
            });
            entry.0 = generation;
            views.push(Arc::clone(&entry.1));
            continue;
        };
        let id = flow.flow_id.as_str();
        let known = by_id.get(id).map(Vec::as_slice).unwrap_or_default();
        let learnt = history.get(id).map_or(0, |h| h.count);
        let fresh = || {
            let ended = history.get(id).cloned().unwrap_or_default();
            Arc::new(build_view(snapshot, id, known.to_vec(), ended))
        };
        match cache.flows.get_mut(id) {
            // Already listed by an earlier job of the flow.
            Some(entry) if entry.0 == generation => continue,
            Some(entry) => {
                if !(entry.1.known == known && entry.1.ended.count == learnt) {
                    entry.1 = fresh();
                }
                entry.0 = generation;
                views.push(Arc::clone(&entry.1));
            }
            None => {
                let view = fresh();
                views.push(Arc::clone(&view));
                cache.flows.insert(id.to_string(), (generation, view));
            }
        }
    }
    cache.flows.retain(|_, entry| entry.0 == generation);
    cache.jobs.retain(|_, entry| entry.0 == generation);
}

fn build_view(snapshot: &Snapshot<'_>, flow_id: &str, known: Vec<JobId>, ended: FlowHistory) -> FlowView {
    // Node name -> active job (a later active job with the same name wins), and finished names.
    let mut active: BTreeMap<&str, JobId> = BTreeMap::new();
    let mut adjacency: BTreeMap<String, Vec<String>> = ended.adjacency.clone();
    // The jobs of a flow usually carry the same adjacency keys: merge each distinct list once.
    let mut merged: Vec<&[(String, Vec<String>)]> = Vec::new();
    for &id in &known {
        let job = snapshot.job(id);
        let Some(flow) = &job.spec.flow else { continue };
        active.insert(flow.node_name.as_str(), id);
        if !merged.contains(&flow.adjacency.as_slice()) {
            merge_adjacency(&mut adjacency, flow.adjacency.iter().map(|(a, b)| (a, b)));
            merged.push(flow.adjacency.as_slice());
        }
    }
    // An active job's node is unfinished even if an earlier attempt of it finished.
    let finished = |name: &str| ended.finished.contains(name) && !active.contains_key(name);
    let mut names: Vec<&str> = Vec::new();
    let mut position: BTreeMap<&str, usize> = BTreeMap::new();
    // Active jobs first in submission order, then future nodes in name order.
    let mut candidates: Vec<&str> = Vec::new();
    for &id in &known {
        if let Some(flow) = &snapshot.job(id).spec.flow {
            if active.get(flow.node_name.as_str()) == Some(&id) {
                candidates.push(flow.node_name.as_str());
            }
        }
    }
    for (from, to) in &adjacency {
        candidates.push(from.as_str());
        candidates.extend(to.iter().map(String::as_str));
    }
    for name in candidates {
        if !finished(name) && !position.contains_key(name) {
            position.insert(name, names.len());
            names.push(name);
        }
    }
    let mut edges = Vec::new();
    let mut seen: BTreeSet<(usize, usize)> = BTreeSet::new();
    for (from, to) in &adjacency {
        for t in to {
            if let (Some(&a), Some(&b)) = (position.get(from.as_str()), position.get(t.as_str())) {
                if a != b && seen.insert((a, b)) {
                    edges.push((a, b));
                }
            }
        }
    }
    let nodes = names.iter().map(|n| Node { name: n.to_string(), job: active.get(n).copied() }).collect();
    FlowView::new(flow_id.to_string(), nodes, edges, known, ended)
}

/// Slots the job could ever use in `pool`: its maximum, capped by its unfinished tasks there.
fn job_parallelism(job: &JobState, pool: &Pool) -> u32 {
    let tasks: u32 = pool.phases.iter().map(|&ph| job.phase(ph).remaining()).sum();
    slot_bounds(job, pool.capacity).1.min(tasks).max(1)
}

fn job_total_work(job: &JobState) -> f64 {
    Phase::ALL.iter().map(|&ph| job.total_work(ph)).sum()
}

/// The flow's cost facts (module docs), with `volume` its estimated total work in slot-ms. One pass
/// over the live jobs, looking each up once, with no vector (issue 20): the same folds in the same
/// order as one per fact.
fn flow_facts(snapshot: &Snapshot<'_>, view: &FlowView, volume: f64, capacity: u32) -> JobFacts {
    let ended = &view.ended;
    let mut arrival = (ended.count > 0).then_some(ended.earliest_submit);
    let mut weight = ended.weight.max(f64::MIN_POSITIVE);
    let mut deadline = ended.deadline;
    // Ended jobs were submitted before the live ones: theirs is the first SLA.
    let mut sla: Option<&JobState> = None;
    for &id in &view.known {
        let job = snapshot.job(id);
        arrival = Some(arrival.map_or(job.spec.submit_ms, |a| a.min(job.spec.submit_ms)));
        weight = weight.max(job.spec.weight);
        deadline = deadline.max(job.spec.deadline_ms);
        if sla.is_none() && !job.spec.sla.is_empty() {
            sla = Some(job);
        }
    }
    let sla = match (&ended.sla, sla) {
        (Some(steps), _) => steps.clone(),
        (None, Some(job)) => job.spec.sla.iter().map(|s| (s.deadline_ms as f64, s.penalty)).collect(),
        (None, None) => Vec::new(),
    };
    JobFacts {
        arrival: arrival.unwrap_or(snapshot.now) as f64,
        weight,
        deadline: deadline.map(|d| d as f64),
        sla,
        isolated: (volume / f64::from(capacity.max(1))).max(1.0),
        tail: 0.0,
    }
}

/// The penalty in planning units (seconds from `now`).
fn relative(cost: Penalty, now: f64) -> Penalty {
    match cost {
        Penalty::Linear { slope, origin } => {
            Penalty::Linear { slope: slope * UNIT_MS, origin: (origin - now) / UNIT_MS }
        }
        Penalty::Tardiness { slope, due } => Penalty::Tardiness { slope: slope * UNIT_MS, due: (due - now) / UNIT_MS },
        Penalty::Steps(steps) => Penalty::Steps(steps.into_iter().map(|(d, c)| ((d - now) / UNIT_MS, c)).collect()),
        Penalty::Zero => Penalty::Zero,
    }
}

/// Makes linear costs non-negative from 0 on (module docs).
fn shift_linear(costs: &mut [Penalty], aggregate: Aggregate) {
    let excess = costs
        .iter()
        .filter_map(|c| match c {
            Penalty::Linear { slope, origin } if *origin > 0.0 => Some(slope * origin),
            _ => None,
        })
        .fold(0.0, f64::max);
    if excess <= 0.0 {
        return;
    }
    for cost in costs.iter_mut() {
        if let Penalty::Linear { slope, origin } = cost {
            *origin = match aggregate {
                Aggregate::MiniSum => origin.min(0.0),
                Aggregate::MiniMax if *slope > 0.0 => *origin - excess / *slope,
                Aggregate::MiniMax => origin.min(0.0),
            };
        }
    }
}

/// A flow before validation: its jobs, edges and cost, the whole input of the Stage 1-3 pipeline
/// for that flow.
#[derive(Clone, Debug)]
struct FlowSpec {
    jobs: Vec<FlowJob>,
    edges: Vec<(usize, usize)>,
    cost: Penalty,
}

impl FlowSpec {
    /// Bit for bit the same input (`==` on floats would equate `0.0` and `-0.0`).
    fn same_bits(&self, other: &FlowSpec) -> bool {
        self.edges == other.edges
            && self.jobs.len() == other.jobs.len()
            && self
                .jobs
                .iter()
                .zip(&other.jobs)
                .all(|(a, b)| a.work.to_bits() == b.work.to_bits() && a.max_parallelism == b.max_parallelism)
            && same_penalty_bits(&self.cost, &other.cost)
    }
}

fn same_penalty_bits(a: &Penalty, b: &Penalty) -> bool {
    let bits = |x: &f64, y: &f64| x.to_bits() == y.to_bits();
    match (a, b) {
        (Penalty::Linear { slope: s1, origin: o1 }, Penalty::Linear { slope: s2, origin: o2 }) => {
            bits(s1, s2) && bits(o1, o2)
        }
        (Penalty::Tardiness { slope: s1, due: d1 }, Penalty::Tardiness { slope: s2, due: d2 }) => {
            bits(s1, s2) && bits(d1, d2)
        }
        (Penalty::Steps(x), Penalty::Steps(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| bits(&p.0, &q.0) && bits(&p.1, &q.1))
        }
        (Penalty::Zero, Penalty::Zero) => true,
        _ => false,
    }
}

/// The planned flows' inputs for one pool, one per view: jobs, edges and cost (module docs).
/// Minisum objectives drop a linear cost's constant term (`origin` set to 0): a per-flow constant
/// changes no Stage 2 decision (each flow's whole volume is charged once in the relaxation, and every
/// rounding fraction's objective moves by the same sum), and without it a pool whose jobs made no
/// progress has the same inputs, bit for bit, at the next epoch (`PoolSolve`).
/// The specs are written into `specs` (one per view; its vectors and those of its entries are
/// reused, issue 20), with `costs` a scratch.
fn build_flows(
    snapshot: &Snapshot<'_>,
    views: &[Arc<FlowView>],
    pool: &Pool,
    objective: Objective,
    specs: &mut Vec<FlowSpec>,
    costs: &mut Vec<Penalty>,
) {
    let now = snapshot.now as f64;
    specs.truncate(views.len());
    costs.clear();
    for (f, view) in views.iter().enumerate() {
        let ended = &view.ended;
        // A future node's work and width, computed only for a flow that has one (not for a
        // singleton flow, the common case).
        let future = view.nodes.iter().any(|node| node.job.is_none()).then(|| {
            let submitted = view.known.iter().map(|&id| snapshot.job(id));
            let mean_work = (submitted.clone().map(job_total_work).sum::<f64>() + ended.work)
                / (view.known.len() + ended.count as usize).max(1) as f64;
            let widest = submitted
                .map(|j| slot_bounds(j, pool.capacity).1.min(j.spec.maps.tasks.max(j.spec.reduces.tasks)))
                .chain((ended.count > 0).then_some(ended.widest.min(pool.capacity)))
                .max()
                .unwrap_or(1)
                .max(1);
            FlowJob { work: (mean_work / UNIT_MS).max(1e-3), max_parallelism: widest.min(pool.capacity) }
        });
        if specs.len() == f {
            specs.push(FlowSpec { jobs: Vec::new(), edges: Vec::new(), cost: Penalty::Zero });
        }
        let spec = &mut specs[f];
        spec.jobs.clear();
        spec.jobs.extend(view.nodes.iter().map(|node| match node.job {
            Some(id) => {
                let job = snapshot.job(id);
                let work: f64 = Phase::ALL.iter().map(|&ph| job.remaining_work(ph)).sum();
                FlowJob { work: (work / UNIT_MS).max(1e-3), max_parallelism: job_parallelism(job, pool) }
            }
            // A node with no job made `future` `Some`.
            None => future.unwrap_or(FlowJob { work: 1e-3, max_parallelism: 1 }),
        }));
        let volume = spec.jobs.iter().map(|j| j.work * UNIT_MS).sum::<f64>() + ended.work;
        spec.edges.clear();
        spec.edges.extend_from_slice(&view.edges);
        costs.push(relative(objective.penalty(&flow_facts(snapshot, view, volume, pool.capacity)), now));
    }
    shift_linear(costs, objective.aggregate());
    for (spec, cost) in specs.iter_mut().zip(costs.drain(..)) {
        spec.cost = cost;
        if let (Aggregate::MiniSum, Penalty::Linear { origin, .. }) = (objective.aggregate(), &mut spec.cost) {
            *origin = 0.0;
        }
    }
}

/// The validated flow of `spec` (a cyclic adjacency is the submitter's error: its jobs are then
/// planned without its edges), and whether it was built on the spec's edges and cost (then
/// [`Flow::renew`] gives it for any spec of the same edges and job count).
fn validated(spec: &FlowSpec, capacity: u32) -> Result<(Flow, bool)> {
    Flow::new(spec.jobs.clone(), &spec.edges, spec.cost.clone(), capacity)
        .map(|flow| (flow, true))
        .or_else(|_| Flow::new(spec.jobs.clone(), &[], spec.cost.clone(), capacity).map(|flow| (flow, false)))
        .or_else(|_| Flow::new(spec.jobs.clone(), &[], Penalty::Zero, capacity).map(|flow| (flow, false)))
}

/// One pool's Stage 1-3 result: per flow (index into the plan's views) its jobs' pieces, and the
/// Stage 2 flow order, laid out flat so that one kept across plans allocates nothing (issue 20).
#[derive(Clone, Debug, Default)]
struct PoolSchedule {
    /// Every flow's pieces, flow by flow (by index).
    pieces: Vec<super::shape::JobPiece>,
    /// Per flow (by index), its pieces' range in `pieces`.
    flows: Vec<(usize, usize)>,
    /// The Stage 2 flow order.
    order: Vec<usize>,
}

impl PoolSchedule {
    /// Flow `f`'s job pieces, sorted by start time then job ([`super::shape::shape_shift`]).
    fn pieces(&self, f: usize) -> &[super::shape::JobPiece] {
        self.flows.get(f).map_or(&[], |&(a, b)| &self.pieces[a..b])
    }
}

/// The last plan's Stage 1 per flow of one pool, kept for the next plan (issue 20): a flow's
/// validated [`Flow`] and its pseudo-chain are a function of its [`FlowSpec`] and the pool's
/// capacity alone, so a flow whose input is the same bit for bit as in the last plan (a flow none
/// of whose jobs made progress; an arrival or a departure changes only its own flow) takes them
/// from here instead of running Stage 1 again (after a change of the pool's capacity too, once its
/// jobs' `δ` fit). Exact: an entry is reused only on equal bits, a key
/// (a hash of the flow id) only finds the candidate (`plans_equal_a_fresh_policys` and
/// `arrivals_and_departures_plan_as_a_fresh_policy` pin it).
///
/// The common change is cheaper still: a flow whose jobs progressed (its work, parallelism or cost
/// moved) but whose structure did not (the same job count and edges, validated on them) has its
/// kept entry renewed in place ([`Flow::renew`], [`PseudoChain::rebuild`]: the same values as
/// validating and running Stage 1 afresh, bit for bit, reusing the entry's vectors;
/// `renewed_stage1_is_a_fresh_one` pins it). A singleton flow costs a handful of float operations.
#[derive(Clone, Debug, Default)]
struct Stage1 {
    /// The capacity of the last run (the entries passed its `δ ≤ capacity`).
    capacity: u32,
    /// Per flow of the last successful run (aligned with its `specs`): flow and chain.
    flows: Vec<Flow>,
    chains: Vec<PseudoChain>,
    /// Per flow: whether it was validated on its spec's edges and cost (`validated`), and its
    /// precedence's topological order (what renewing it needs).
    orders: Vec<(bool, Vec<usize>)>,
    /// Their keys, in order, and `(key, index)` of them, sorted: the lookup.
    keys: Vec<u64>,
    by_key: Vec<(u64, usize)>,
    /// Whether `by_key` still names the entries of `keys` (a merged run leaves it to the next run
    /// that looks entries up, which sorts it then).
    by_key_stale: bool,
    /// Flows whose Stage 1 was reused, renewed and run (tests and probes).
    counts: [u64; 3],
    /// The last run's entries while a run looks them up (a scratch, empty between runs).
    old: Stage1Vecs,
    /// [`PseudoChain::rebuild`]'s scratch.
    chain: ChainScratch,
}

/// Arrivals up to which [`Stage1::merge`] pairs entries (more, and the last order may have been
/// shuffled rather than thinned: the key lookup pairs them instead).
const MERGED_ARRIVALS: usize = 4;

/// [`Stage1`]'s per-flow vectors: flows, chains, and whether on edges with the topological order.
type Stage1Vecs = (Vec<Flow>, Vec<PseudoChain>, Vec<(bool, Vec<usize>)>);

/// One flow's kept Stage 1 ([`Stage1`]'s vectors, entry by entry).
type Stage1Entry = (Flow, PseudoChain, (bool, Vec<usize>));

impl Stage1 {
    /// Stage 1 of `specs` (`keys` name the flows) on `capacity` slots into `self.flows` and
    /// `self.chains`, reusing the entries of the last run, whose inputs were `last`. `false` when a
    /// flow fails validation (as `Instance::new` would fail; nothing is kept then).
    fn run(&mut self, last: &[FlowSpec], specs: &[FlowSpec], keys: &[u64], capacity: u32) -> bool {
        // A flow's validation depends on the capacity only through `δ ≤ capacity`: across a change
        // of capacity (a node lost or added) the entries stay usable once their jobs pass it.
        let reusable = last.len() == self.flows.len();
        let recapped = self.capacity != capacity;
        self.capacity = capacity;
        if reusable && specs.len() == last.len() && keys.get(..specs.len()) == Some(&self.keys[..]) {
            // The same flows in the same order as the last run (no arrival, departure or
            // reordering): each entry is kept, renewed or replaced where it is, and the lookup
            // stands.
            for (j, spec) in specs.iter().enumerate() {
                let (flow, chain, order) = (&mut self.flows[j], &mut self.chains[j], &self.orders[j]);
                if keep(flow, chain, order, &last[j], spec, capacity, recapped, &mut self.chain, &mut self.counts) {
                    continue;
                }
                self.counts[2] += 1;
                match fresh(spec, capacity, &mut self.chain) {
                    Some((flow, chain, order)) => {
                        (self.flows[j], self.chains[j], self.orders[j]) = (flow, chain, order);
                    }
                    None => return self.fail(),
                }
            }
            return true;
        }
        if let Some(ok) = if reusable { self.merge(last, specs, keys, capacity, recapped) } else { None } {
            return ok;
        }
        if reusable && self.by_key_stale {
            self.by_key.clear();
            self.by_key.extend(self.keys.iter().enumerate().map(|(i, &k)| (k, i)));
            self.by_key.sort_unstable();
        }
        self.by_key_stale = false;
        // The last run's entries move to `old` whole (the vectors swap); each found one moves
        // once, into this run's place, leaving a placeholder (no jobs: no real flow has none).
        let old = &mut self.old;
        std::mem::swap(&mut self.flows, &mut old.0);
        std::mem::swap(&mut self.chains, &mut old.1);
        std::mem::swap(&mut self.orders, &mut old.2);
        self.flows.clear();
        self.chains.clear();
        self.orders.clear();
        if !reusable {
            self.by_key.clear();
        }
        self.flows.reserve(specs.len());
        self.chains.reserve(specs.len());
        self.orders.reserve(specs.len());
        // Cloning an empty flow is cheaper than building one.
        let spare = Flow::placeholder();
        for (j, spec) in specs.iter().enumerate() {
            let key = keys.get(j).copied().unwrap_or(0);
            let found = self.by_key.binary_search_by_key(&key, |&(k, _)| k).ok().map(|i| self.by_key[i].1);
            // The kept entry, if its flow's input is the same bit for bit, or renewed in place if
            // only its jobs and cost moved on the same edges.
            let kept = found.filter(|&i| {
                let (flows, chains, orders) = (&mut old.0, &mut old.1, &old.2);
                !flows[i].jobs().is_empty()
                    && keep(
                        &mut flows[i],
                        &mut chains[i],
                        &orders[i],
                        &last[i],
                        spec,
                        capacity,
                        recapped,
                        &mut self.chain,
                        &mut self.counts,
                    )
            });
            if let Some(i) = kept {
                self.flows.push(std::mem::replace(&mut old.0[i], spare.clone()));
                self.chains.push(std::mem::take(&mut old.1[i]));
                self.orders.push(std::mem::take(&mut old.2[i]));
                continue;
            }
            self.counts[2] += 1;
            let Some((flow, chain, order)) = fresh(spec, capacity, &mut self.chain) else {
                old.0.clear();
                old.1.clear();
                old.2.clear();
                return self.fail();
            };
            self.flows.push(flow);
            self.chains.push(chain);
            self.orders.push(order);
        }
        self.keys.clear();
        self.keys.extend(keys.iter().take(specs.len()));
        self.by_key.clear();
        self.by_key.extend(self.keys.iter().enumerate().map(|(i, &k)| (k, i)));
        // A duplicate key (a hash collision) finds one of its flows: the bits decide.
        self.by_key.sort_unstable();
        old.0.clear();
        old.1.clear();
        old.2.clear();
        true
    }

    /// The common change between runs in place (issue 20): this run's flows are the last run's
    /// in the same order with some gone (departures), then a few new ones (arrivals, fewer than
    /// [`MERGED_ARRIVALS`], none of whose keys the last run had). Each kept entry slides down over the departed ones (swaps, no
    /// clone), is kept, renewed or replaced there as [`keep`] and [`fresh`] decide, and the
    /// arrivals run [`fresh`] at the end; the key lookup is left to sort when next needed.
    /// `None` (nothing touched) when the keys do not line up so; otherwise whether the run
    /// succeeded, as [`Stage1::run`]. Keys only pair entries with specs:
    /// an entry paired with another flow of the same key fails [`keep`]'s bit comparison and runs
    /// [`fresh`], so the entries are exactly those of a fresh Stage 1 in any case
    /// (`renewed_stage1_is_a_fresh_one` drives arrivals, departures and colliding keys through it).
    fn merge(
        &mut self,
        last: &[FlowSpec],
        specs: &[FlowSpec],
        keys: &[u64],
        capacity: u32,
        recapped: bool,
    ) -> Option<bool> {
        let keys = keys.get(..specs.len())?;
        // Pair the last run's keys in order with a prefix of this run's.
        let mut matched = 0;
        for &k in &self.keys {
            if keys.get(matched) == Some(&k) {
                matched += 1;
            }
        }
        // Few arrivals, none of them a flow of the last run (that would be a reordering, whose
        // entries the lookup finds).
        let arrivals = &keys[matched..];
        if arrivals.len() >= MERGED_ARRIVALS || arrivals.iter().any(|k| self.keys.contains(k)) {
            return None;
        }
        let mut w = 0;
        // `last` is aligned with the entries (the caller checked their lengths).
        for (i, before) in last.iter().enumerate().take(self.flows.len()) {
            if w >= matched || self.keys[i] != keys[w] {
                continue;
            }
            if i != w {
                self.flows.swap(w, i);
                self.chains.swap(w, i);
                self.orders.swap(w, i);
            }
            let (flow, chain, order) = (&mut self.flows[w], &mut self.chains[w], &self.orders[w]);
            if !keep(flow, chain, order, before, &specs[w], capacity, recapped, &mut self.chain, &mut self.counts) {
                self.counts[2] += 1;
                match fresh(&specs[w], capacity, &mut self.chain) {
                    Some((flow, chain, order)) => {
                        (self.flows[w], self.chains[w], self.orders[w]) = (flow, chain, order)
                    }
                    None => return Some(self.fail()),
                }
            }
            w += 1;
        }
        self.flows.truncate(matched);
        self.chains.truncate(matched);
        self.orders.truncate(matched);
        for spec in &specs[matched..] {
            self.counts[2] += 1;
            let Some((flow, chain, order)) = fresh(spec, capacity, &mut self.chain) else {
                return Some(self.fail());
            };
            self.flows.push(flow);
            self.chains.push(chain);
            self.orders.push(order);
        }
        self.keys.clear();
        self.keys.extend_from_slice(keys);
        self.by_key_stale = true;
        Some(true)
    }

    /// A failed run: nothing is kept.
    fn fail(&mut self) -> bool {
        self.flows.clear();
        self.chains.clear();
        self.orders.clear();
        self.keys.clear();
        self.by_key.clear();
        self.by_key_stale = false;
        false
    }
}

/// Brings a kept Stage 1 entry, built from `last`, to `spec` on `capacity` slots (`recapped`: not
/// the last run's) where it is: kept on equal bits (if its jobs fit the capacity), renewed in place
/// if only the jobs and cost moved on the same edges; `false` (the entry unchanged) when neither
/// gives exactly what [`fresh`] would.
#[allow(clippy::too_many_arguments)]
fn keep(
    flow: &mut Flow,
    chain: &mut PseudoChain,
    order: &(bool, Vec<usize>),
    last: &FlowSpec,
    spec: &FlowSpec,
    capacity: u32,
    recapped: bool,
    scratch: &mut ChainScratch,
    counts: &mut [u64; 3],
) -> bool {
    if last.same_bits(spec) && (!recapped || flow.jobs().iter().all(|job| job.max_parallelism <= capacity)) {
        counts[0] += 1;
        return true;
    }
    if order.0
        && last.edges == spec.edges
        && last.jobs.len() == spec.jobs.len()
        && flow.renew(&spec.jobs, &spec.cost, capacity)
    {
        chain.rebuild(flow, &order.1, scratch);
        counts[1] += 1;
        return true;
    }
    false
}

/// Stage 1 of `spec` on `capacity` slots from scratch; `None` when it fails validation.
fn fresh(spec: &FlowSpec, capacity: u32, scratch: &mut ChainScratch) -> Option<Stage1Entry> {
    let (flow, on_edges) = validated(spec, capacity).ok()?;
    if !flow.jobs().iter().all(|job| job.max_parallelism <= capacity) {
        return None;
    }
    // `Flow::new` rejected cycles, so the order covers every job.
    let order = flow.precedence().topological_order().unwrap_or_default();
    let mut chain = PseudoChain { pseudo_jobs: Vec::new() };
    chain.rebuild(&flow, &order, scratch);
    Some((flow, chain, (on_edges, order)))
}

/// Per-plan working vectors of one pool's solve, kept across plans (issue 20); no result depends
/// on what they held.
#[derive(Clone, Debug, Default)]
struct PoolScratch {
    grid: Vec<f64>,
    costs: Vec<Penalty>,
    shape: super::shape::ShapeScratch,
}

/// Stages 1-3 for one pool's flows into `out` (`keys` name them across plans, for the Stage 1
/// entries and the warm start kept in `stage1` and `basis`; `last` are the inputs of the last run
/// of `stage1`); `false` when no schedule comes out. The same result as building an `Instance` of
/// the validated flows and solving it.
#[allow(clippy::too_many_arguments)]
fn schedule_pool(
    last: &[FlowSpec],
    specs: &[FlowSpec],
    capacity: u32,
    objective: Objective,
    keys: &[u64],
    stage1: &mut Stage1,
    basis: &mut PlanningBasis,
    scratch: &mut PoolScratch,
    out: &mut PoolSchedule,
) -> bool {
    if capacity == 0 || specs.is_empty() || !stage1.run(last, specs, keys, capacity) {
        return false;
    }
    let chains = &stage1.chains;
    scratch.costs.clear();
    scratch.costs.extend(stage1.flows.iter().map(|f| f.cost().clone()));
    let fallback;
    let (schedule, order) = match solve(chains, &scratch.costs, capacity, objective, keys, basis, &mut scratch.grid) {
        Some(Solved::Kept) => super::minisum::planned(basis),
        Some(Solved::Built(s)) => {
            fallback = (super::greedy::FlatSchedule::from_chains(&s.chains), s.order);
            (&fallback.0, fallback.1.as_slice())
        }
        None => return false,
    };
    out.pieces.clear();
    out.flows.clear();
    for (c, chain) in chains.iter().enumerate() {
        let start = out.pieces.len();
        super::shape::shape_shift_into(chain, schedule.histograms(c), &mut scratch.shape, &mut out.pieces);
        out.flows.push((start, out.pieces.len()));
    }
    out.order.clear();
    out.order.extend_from_slice(order);
    true
}

/// The last plan's Stage 1-3 input and result for one pool: Stages 1-3 are a deterministic function
/// of the flows' inputs ([`FlowSpec`]), the pool's capacity and the objective (fixed per policy), so
/// when the next plan's inputs are the same bit for bit (an epoch in which no job of the pool made
/// progress, or a re-plan at the same instant) the result is reused instead of solved again: the
/// plan is exactly the one a full solve gives (`plans_equal_a_fresh_policys` pins it).
#[derive(Clone, Debug, Default)]
struct PoolSolve {
    capacity: u32,
    specs: Vec<FlowSpec>,
    /// The next plan's input while it is compared and solved (a scratch: `build_flows` writes it,
    /// then it becomes `specs`).
    next: Vec<FlowSpec>,
    /// Whether `result` holds a schedule.
    scheduled: bool,
    result: PoolSchedule,
    /// Full solves so far (tests check that an unchanged pool is not solved again).
    solves: u64,
    /// Per flow, the last plan's Stage 1 ([`Stage1`]).
    stage1: Stage1,
    /// The minisum relaxation's last simplex basis: a scratch for the next solve's warm start,
    /// which is used only when it is certified to give the cold solve's charges (module docs).
    basis: PlanningBasis,
    scratch: PoolScratch,
}

impl PoolSolve {
    /// The schedule of the input in `self.next` on `capacity` slots, reusing the last one when the
    /// inputs are equal; the input then becomes `self.specs`.
    fn schedule(&mut self, capacity: u32, objective: Objective, keys: &[u64]) -> Option<&PoolSchedule> {
        let same = self.capacity == capacity
            && self.specs.len() == self.next.len()
            && self.specs.iter().zip(&self.next).all(|(a, b)| a.same_bits(b));
        if !same {
            self.scheduled = schedule_pool(
                &self.specs,
                &self.next,
                capacity,
                objective,
                keys,
                &mut self.stage1,
                &mut self.basis,
                &mut self.scratch,
                &mut self.result,
            );
            self.capacity = capacity;
            self.solves += 1;
        }
        std::mem::swap(&mut self.specs, &mut self.next);
        self.scheduled.then_some(&self.result)
    }
}

/// What [`solve`] produced: a minisum plan kept in the pool's [`PlanningBasis`]
/// ([`super::minisum::planned`]), or a schedule built by another path.
enum Solved {
    Kept,
    Built(super::greedy::DeadlineSchedule),
}

/// Solves Stage 2 for the chains (with their flows' costs); the greedy by lower bound if the chosen
/// stage fails. `grid` is a scratch.
fn solve(
    chains: &[PseudoChain],
    costs: &[Penalty],
    slots: u32,
    objective: Objective,
    keys: &[u64],
    basis: &mut PlanningBasis,
    grid: &mut Vec<f64>,
) -> Option<Solved> {
    let outcome = match objective.aggregate() {
        Aggregate::MiniSum => super::minisum::plan_on_geometric_grid(
            chains,
            costs,
            slots,
            ENGINE_GRID_RATIO,
            &[0.3, 0.5, 0.7],
            keys,
            basis,
            grid,
        )
        .map(|()| Solved::Kept),
        Aggregate::MiniMax => {
            let lb0 = super::minimax::basic_lower_bound(chains, costs, slots);
            super::minimax::minimax(chains, costs, slots, 1e-3 * lb0.abs().max(1.0)).map(|m| Solved::Built(m.schedule))
        }
    };
    outcome
        .or_else(|_| {
            super::greedy::schedule_by_deadlines(chains, &vec![f64::INFINITY; chains.len()], slots).map(Solved::Built)
        })
        .ok()
}

/// A flow's name across plans for the minisum warm start ([`PlanningBasis`]): a hash of its id
/// (a collision costs only speed).
fn flow_key(id: &str) -> u64 {
    let mut hasher = std::hash::DefaultHasher::new();
    id.hash(&mut hasher);
    hasher.finish()
}

/// Per node of a flow (`nodes` of them), the area of its `pieces` within the first `window` and
/// the end of its last piece, in one pass over the flow's pieces into `out` (issue 20: a filter
/// of the pieces per node cost `nodes` passes). Each node's sums and maxima fold its pieces in
/// their order, as a filter per node does, so the values are the same bit for bit
/// (`one_pass_areas_are_the_filtered_ones` pins it).
fn job_areas_into(pieces: &[super::shape::JobPiece], nodes: usize, window: f64, out: &mut Vec<(f64, f64)>) {
    // The empty sum of `Iterator::sum` (its sign is the standard library's choice).
    let zero: f64 = std::iter::empty::<f64>().sum();
    out.clear();
    out.resize(nodes, (zero, 0.0));
    for p in pieces {
        if let Some((area, end)) = out.get_mut(p.job) {
            *area += f64::from(p.slots) * (p.end.min(window) - p.start).max(0.0);
            *end = f64::max(*end, p.end);
        }
    }
}

/// Integer targets from fractional averages: floors, then +1 by largest remainder up to the
/// floor of the total (never above `capacity`), each at most `⌈average⌉`.
#[cfg(test)]
fn round_targets(averages: &[f64], capacity: u32) -> Vec<u32> {
    let mut out = Vec::new();
    round_targets_into(averages, capacity, &mut out, &mut Vec::new());
    out
}

/// [`round_targets`] into `out`, with `by_remainder` a scratch (both kept across plans). The order
/// by remainder breaks ties by index, so no two entries compare equal and the unstable sort (which
/// allocates nothing) gives the stable sort's order.
fn round_targets_into(averages: &[f64], capacity: u32, out: &mut Vec<u32>, by_remainder: &mut Vec<usize>) {
    out.clear();
    out.extend(averages.iter().map(|a| (a + 1e-9).floor().max(0.0) as u32));
    let total = (averages.iter().sum::<f64>() + 1e-9).floor().min(f64::from(capacity)) as u32;
    let mut given: u32 = out.iter().sum();
    by_remainder.clear();
    by_remainder.extend(0..averages.len());
    by_remainder.sort_unstable_by(|&a, &b| {
        let (ra, rb) = (averages[a] - f64::from(out[a]), averages[b] - f64::from(out[b]));
        rb.total_cmp(&ra).then(a.cmp(&b))
    });
    for &i in by_remainder.iter() {
        if given >= total {
            break;
        }
        if averages[i] - f64::from(out[i]) > 1e-9 {
            out[i] += 1;
            given += 1;
        }
    }
}

impl Policy for FlowFlexPolicy {
    fn name(&self) -> &'static str {
        "flowflex"
    }

    fn on_job_finished(&mut self, snapshot: &Snapshot<'_>, job: JobId) {
        let Some(state) = snapshot.try_job(job) else { return };
        if let Some(flow) = &state.spec.flow {
            self.history.entry(flow.flow_id.clone()).or_default().learn(state, snapshot.now);
            self.history_changes += 1;
        }
    }

    fn plan(&mut self, snapshot: &Snapshot<'_>) -> Plan {
        let scratch = &mut self.scratch;
        scratch.plans += 1;
        // Forget flows idle for longer than the history horizon (module docs): a history is kept if
        // a live job names its flow (marked with this plan's number) or it ended recently.
        if !self.history.is_empty() {
            let mark = scratch.plans;
            for flow in snapshot.active_jobs().filter_map(|j| j.spec.flow.as_ref()) {
                if let Some(h) = self.history.get_mut(flow.flow_id.as_str()) {
                    h.live = mark;
                }
            }
            let before = self.history.len();
            self.history.retain(|_, h| h.live == mark || h.last_end_ms.saturating_add(FLOW_HISTORY_MS) >= snapshot.now);
            if self.history.len() != before {
                self.history_changes += 1;
            }
        }
        let views = flow_views(snapshot, &self.history, self.history_changes, &mut self.views);
        let window = (self.epoch_ms.max(1) as f64 / UNIT_MS).max(1e-6);
        // Per pool: (pool, its jobs' targets), and the Stage 2 order of the first pool's jobs.
        let PlanScratch {
            keys, pools, targets, jobs, averages, rounded, by_remainder, order, predicted, areas, ..
        } = scratch;
        keys.clear();
        pools.clear();
        targets.clear();
        order.clear();
        predicted.clear();
        for (p, pool) in snapshot.cluster.pools().enumerate() {
            if pool.capacity == 0 || views.is_empty() {
                // Nothing kept for a pool with nothing to plan (a drained engine holds no instance).
                self.solved[p] = PoolSolve::default();
                continue;
            }
            let solved = &mut self.solved[p];
            build_flows(snapshot, views, &pool, self.objective, &mut solved.next, &mut solved.scratch.costs);
            if keys.is_empty() {
                keys.extend(views.iter().map(|v| v.key));
            }
            let Some(schedule) = solved.schedule(pool.capacity, self.objective, keys) else {
                continue;
            };
            let first = pools.is_empty();
            jobs.clear();
            averages.clear();
            for &f in &schedule.order {
                let view = &views[f];
                job_areas_into(schedule.pieces(f), view.nodes.len(), window, areas);
                for ((i, node), &(area, end)) in view.nodes.iter().enumerate().zip(areas.iter()) {
                    let Some(id) = node.job else { continue };
                    let blocked = view.blocked.get(i).copied().unwrap_or(false);
                    jobs.push(id);
                    averages.push(if blocked { 0.0 } else { area / window });
                    if first {
                        order.push(id);
                        predicted.push((id, snapshot.now.saturating_add((end * UNIT_MS).ceil() as Time)));
                    }
                }
            }
            round_targets_into(averages, pool.capacity, rounded, by_remainder);
            let start = targets.len();
            targets.extend(jobs.iter().zip(rounded.iter()).map(|(&id, &t)| {
                let job = snapshot.job(id);
                (id, t.min(pool_demand(job, &pool)).min(slot_bounds(job, pool.capacity).1))
            }));
            pools.push((pool, start, targets.len()));
        }
        let mut builder = PlanBuilder::new(snapshot, order.iter().copied());
        for &(pool, start, end) in pools.iter() {
            for &(id, slots) in &targets[start..end] {
                builder.set_pool_target(id, &pool, slots);
            }
        }
        for &(id, at) in predicted.iter() {
            builder.set_predicted_completion(id, at);
        }
        let mut plan = builder.finish();
        plan.flows = views.iter().map(|v| Arc::clone(&v.reported)).collect();
        plan
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use circumflex_core::model::{FlowMembership, JobSpec, JobStatus};
    use circumflex_core::policy::{ClusterView, PoolMode};
    use proptest::prelude::*;

    type Adjacency<'a> = &'a [(&'a str, &'a [&'a str])];

    fn spec(submit: Time, maps: u32, reduces: u32, flow: Option<(&str, &str, Adjacency<'_>)>) -> JobSpec {
        let mut s = JobSpec::new(submit, maps, reduces).with_task_ms(2_000, 3_000);
        s.flow = flow.map(|(id, node, adj)| FlowMembership {
            flow_id: id.into(),
            node_name: node.into(),
            adjacency: adj.iter().map(|(a, b)| (a.to_string(), b.iter().map(|x| x.to_string()).collect())).collect(),
        });
        s
    }

    fn shared(slots: u32) -> ClusterView {
        ClusterView { map_slots: slots, reduce_slots: 0, mode: PoolMode::Shared, nodes: 1 }
    }

    /// Plans `jobs` with a fresh policy that was told of every ended job first (as the engine
    /// does before retiring them).
    fn plan(objective: Objective, cluster: ClusterView, jobs: &[JobState]) -> Plan {
        let active: Vec<JobId> = jobs.iter().filter(|j| j.is_active()).map(|j| j.id).collect();
        let snap = Snapshot::new(10_000, cluster, jobs, &active);
        let mut policy = FlowFlexPolicy::new(objective, 2_000);
        for job in jobs.iter().filter(|j| !j.is_active()) {
            policy.on_job_finished(&snap, job.id);
        }
        policy.plan(&snap)
    }

    fn states(specs: Vec<JobSpec>) -> Vec<JobState> {
        specs.into_iter().enumerate().map(|(i, s)| JobState::new(JobId(i as u32), s)).collect()
    }

    fn node<'a>(plan: &'a Plan, flow: &str, name: &str) -> &'a PlanFlowNode {
        let f = plan.flows.iter().find(|f| f.flow_id == flow).unwrap();
        f.nodes.iter().find(|n| n.name == name).unwrap()
    }

    #[test]
    fn groups_flows_and_knows_unsubmitted_successors() {
        let chain: Adjacency<'_> = &[("a", &["b"]), ("b", &["c"])];
        let jobs = states(vec![
            spec(0, 4, 1, Some(("f1", "a", chain))),
            spec(0, 6, 0, Some(("f2", "x", &[("x", &["y"])]))),
            spec(0, 2, 0, None),
        ]);
        let out = plan(Objective::AvgResponseTime, shared(10), &jobs);
        let ids: Vec<&str> = out.flows.iter().map(|f| f.flow_id.as_str()).collect();
        assert_eq!(ids, vec!["f1", "f2", "job-2"]);
        assert_eq!(node(&out, "f1", "a").job, Some(JobId(0)));
        assert_eq!((node(&out, "f1", "b").job, node(&out, "f1", "b").predecessors.clone()), (None, vec!["a".into()]));
        assert_eq!(node(&out, "f1", "c").predecessors, vec!["b".to_string()]);
        assert_eq!(node(&out, "f2", "y").predecessors, vec!["x".to_string()]);
        let total: u32 = out.entries.iter().map(|e| e.target.iter().sum::<u32>()).sum();
        assert!(total <= 10 && total > 0, "{total}");
        assert!(out.entries.iter().all(|e| e.predicted_completion_ms.is_some()));
        let json = serde_json::to_string(&out).unwrap();
        assert!(json.contains("\"flows\"") && json.contains("\"predecessors\":[\"a\"]"), "{json}");
        // Other policies' plans serialize without the field.
        assert!(!serde_json::to_string(&Plan::default()).unwrap().contains("flows"));
    }

    #[test]
    fn a_job_waits_for_its_unfinished_predecessor_and_runs_once_it_finished() {
        let adj: Adjacency<'_> = &[("a", &["b"])];
        let mut jobs = states(vec![spec(0, 4, 0, Some(("f", "a", adj))), spec(0, 4, 0, Some(("f", "b", adj)))]);
        let out = plan(Objective::Makespan, shared(8), &jobs);
        assert_eq!(out.entry(JobId(1)).unwrap().target, [0, 0]);
        assert_eq!(out.entry(JobId(0)).unwrap().target, [4, 0]);
        jobs[0].status = JobStatus::Finished;
        let out = plan(Objective::Makespan, shared(8), &jobs);
        assert_eq!(out.entry(JobId(1)).unwrap().target, [4, 0]);
        assert_eq!(out.flows[0].nodes.len(), 1);
        assert!(out.flows[0].nodes[0].predecessors.is_empty());
    }

    /// Through the engine, which retires `a` once it ends: `b`, submitted afterwards, must not
    /// wait for `a` as if it were a node not yet submitted, and the flow's facts keep `a`.
    #[test]
    fn a_retired_predecessor_counts_as_finished() {
        let cfg = EngineConfig { policy: "flowflex".into(), pool_mode: PoolMode::Shared, ..EngineConfig::default() };
        let mut e = crate::new_engine(cfg).unwrap();
        let n = e.add_node("h1", "/r1", 4, 0);
        let adj: Adjacency<'_> = &[("a", &["b"])];
        let a = e.submit(spec(0, 2, 0, Some(("f", "a", adj))), 0).unwrap().0;
        for _ in 0..2 {
            e.task_started(a, Phase::Map, n, circumflex_core::model::Locality::Any, 0).unwrap();
        }
        for t in [2_000, 2_100] {
            e.task_finished(a, Phase::Map, n, t, true, t).unwrap();
        }
        assert!(e.job(a).is_none(), "a is retired");
        let b = e.submit(spec(5_000, 4, 0, Some(("f", "b", &[]))), 5_000).unwrap().0;
        e.replan(5_000);
        assert_eq!(e.plan().entry(b).unwrap().target, [4, 0], "{:?}", e.plan());
        let flow = &e.plan().flows[0];
        assert_eq!(flow.nodes.len(), 1, "a is not planned as a future node: {flow:?}");
        assert!(flow.nodes[0].predecessors.is_empty());
        // Without the history (a fresh policy), b would be blocked by a phantom a.
        let snap = e.snapshot(5_000);
        let blind = FlowFlexPolicy::new(Objective::AvgResponseTime, 30_000).plan(&snap);
        assert_eq!(blind.entry(b).unwrap().target, [0, 0]);
    }

    #[test]
    fn flow_history_is_forgotten_after_the_horizon() {
        let adj: Adjacency<'_> = &[("a", &["b"])];
        let mut jobs = states(vec![spec(0, 2, 0, Some(("f", "a", adj))), spec(0, 2, 0, Some(("g", "x", &[])))]);
        jobs[0].status = JobStatus::Finished;
        let mut policy = FlowFlexPolicy::new(Objective::AvgResponseTime, 2_000);
        let active = [JobId(1)];
        policy.on_job_finished(&Snapshot::new(1_000, shared(4), &jobs, &active), JobId(0));
        policy.plan(&Snapshot::new(1_000 + FLOW_HISTORY_MS, shared(4), &jobs, &active));
        assert!(policy.history.contains_key("f"), "kept within the horizon");
        policy.plan(&Snapshot::new(1_001 + FLOW_HISTORY_MS, shared(4), &jobs, &active));
        assert!(policy.history.is_empty(), "idle longer than the horizon");
    }

    /// Minisum weighted completion time: the heavy flow is planned first.
    #[test]
    fn minisum_prefers_the_heavier_flow() {
        let mut light = spec(0, 8, 0, Some(("light", "a", &[])));
        let mut heavy = spec(0, 8, 0, Some(("heavy", "a", &[])));
        light.weight = 1.0;
        heavy.weight = 10.0;
        let out = plan(Objective::WeightedAvgResponseTime, shared(8), &states(vec![light, heavy]));
        assert_eq!(out.entries[0].job, JobId(1));
        assert_eq!(out.entry(JobId(1)).unwrap().target, [8, 0]);
    }

    /// A minisum pool whose jobs made no progress is not solved again as `now` moves, and the plan
    /// is the full solve's; progress solves again. (Minimax costs move with `now`: always solved.)
    #[test]
    fn an_unchanged_minisum_pool_reuses_its_solve() {
        let chain: Adjacency<'_> = &[("a", &["b"]), ("b", &["c"])];
        let jobs = states(vec![spec(0, 4, 1, Some(("f1", "a", chain))), spec(0, 6, 2, None), spec(0, 3, 0, None)]);
        let active: Vec<JobId> = jobs.iter().map(|j| j.id).collect();
        let mut policy = FlowFlexPolicy::new(Objective::AvgResponseTime, 2_000);
        let first = policy.plan(&Snapshot::new(10_000, shared(6), &jobs, &active));
        let tick = Snapshot::new(12_000, shared(6), &jobs, &active);
        let again = policy.plan(&tick);
        assert_eq!(policy.solved[0].solves, 1);
        assert_eq!(again, FlowFlexPolicy::new(Objective::AvgResponseTime, 2_000).plan(&tick));
        assert_eq!(
            first.entries.iter().map(|e| e.target).collect::<Vec<_>>(),
            again.entries.iter().map(|e| e.target).collect::<Vec<_>>()
        );
        let mut later = jobs.clone();
        later[1].phase_mut(Phase::Map).pending -= 1;
        later[1].phase_mut(Phase::Map).running += 1;
        policy.plan(&Snapshot::new(12_000, shared(6), &later, &active));
        assert_eq!(policy.solved[0].solves, 2);
    }

    /// A random flow input for Stage 1: up to 6 jobs with random edges (forward ones, and now and
    /// then a backward one: a cycle, or a self-loop), work down to the least subnormal (so `s/δ`
    /// may underflow) and now and then 0 (invalid), `δ` now and then above some capacities (4 to 6)
    /// or all (7), and a cost of every kind, now and then invalid (a negative slope, decreasing steps).
    fn arb_flow_spec() -> impl Strategy<Value = FlowSpec> {
        (1usize..=6)
            .prop_flat_map(|n| {
                let work = prop_oneof![40 => 1u32..40, 1 => Just(0u32)].prop_map(|w| f64::from(w) * 0.25);
                // 0 (invalid), or tiny: the least subnormal (`s/δ` underflows to 0 for `δ > 1`).
                let tiny = prop_oneof![19 => Just(None), 1 => Just(Some(f64::from_bits(1)))];
                let width = prop_oneof![40 => 1u32..=3, 2 => 4u32..=6, 1 => Just(7u32)];
                let jobs = proptest::collection::vec((work, tiny, width), n);
                let edges = proptest::collection::vec((0..n, 0..n, 0u8..12), 0..=n * 2);
                (jobs, edges, arb_cost())
            })
            .prop_map(|(jobs, edges, cost)| FlowSpec {
                jobs: jobs
                    .into_iter()
                    .map(|(w, t, d)| FlowJob { work: t.filter(|_| w > 0.0).unwrap_or(w), max_parallelism: d })
                    .collect(),
                // Mostly forward edges (a DAG); a backward edge or a self-loop one time in twelve.
                edges: edges
                    .into_iter()
                    .filter_map(|(a, b, c)| if c == 0 { Some((b, a)) } else { (a < b).then_some((a, b)) })
                    .collect(),
                cost,
            })
    }

    fn arb_cost() -> impl Strategy<Value = Penalty> {
        let slope =
            prop_oneof![40 => 0u32..5, 1 => Just(99u32)].prop_map(|s| if s == 99 { -1.0 } else { f64::from(s) * 0.5 });
        prop_oneof![
            (slope.clone(), -3i32..=0).prop_map(|(slope, o)| Penalty::Linear { slope, origin: f64::from(o) }),
            (slope, -3i32..5).prop_map(|(slope, d)| Penalty::Tardiness { slope, due: f64::from(d) }),
            proptest::collection::vec((0u32..5, 0u32..5), 0..4)
                .prop_map(|v| Penalty::Steps(v.into_iter().map(|(d, c)| (f64::from(d), f64::from(c))).collect())),
            Just(Penalty::Zero),
        ]
    }

    /// What a plan may do to one flow's input since the last: nothing, move its jobs' work and
    /// `δ` (as progress does; or to another flow's job's values, so that breakpoints meet and part,
    /// and tiny or invalid values come and go), change its cost, or replace it.
    fn changed(spec: &FlowSpec, change: u8, seed: u32, other: &FlowSpec) -> FlowSpec {
        let mut next = spec.clone();
        match change % 5 {
            0 => {}
            1 | 2 => {
                for (i, job) in next.jobs.iter_mut().enumerate() {
                    let theirs = other.jobs[i % other.jobs.len()];
                    match (seed >> (2 * (i % 16))) & 3 {
                        0 => {}
                        1 => job.work = (job.work - 0.25).max(0.25),
                        2 => job.work = theirs.work,
                        _ => *job = theirs,
                    }
                }
            }
            3 => next.cost = other.cost.clone(),
            _ => next = other.clone(),
        }
        next
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1024))]
        /// Stage 1 kept across plans (reused on equal bits, renewed in place when only the jobs and
        /// cost moved, run afresh otherwise) gives exactly `validated` + `PseudoChain::from_flow` on
        /// every plan's input, over random flows with edges, random changes, arrivals, departures,
        /// reorderings, colliding keys and capacity changes; and it fails exactly when one flow fails.
        #[test]
        fn renewed_stage1_is_a_fresh_one(
            initial in proptest::collection::vec(arb_flow_spec(), 1..5),
            others in proptest::collection::vec(arb_flow_spec(), 8),
            steps in proptest::collection::vec((proptest::collection::vec((0u8..5, any::<u32>()), 6), 0u8..8, 3u32..7), 1..6),
        ) {
            let mut stage1 = Stage1::default();
            let mut flows: Vec<(u64, FlowSpec)> = initial.into_iter().enumerate().map(|(i, s)| (i as u64, s)).collect();
            let mut last: Vec<FlowSpec> = Vec::new();
            let mut next_id = flows.len() as u64;
            let mut capacity = 6;
            for (step, (changes, event, cap)) in steps.iter().enumerate() {
                for (f, (_, spec)) in flows.iter_mut().enumerate() {
                    let (change, seed) = changes[f % changes.len()];
                    *spec = changed(spec, change, seed, &others[(f + step) % others.len()]);
                }
                match event {
                    0 => {
                        flows.push((next_id, others[step % others.len()].clone()));
                        next_id += 1;
                    }
                    1 if flows.len() > 1 => {
                        flows.remove(step % flows.len());
                    }
                    2 => flows.reverse(),
                    3 => capacity = *cap,
                    _ => {}
                }
                // Keys collide now and then (a hash collision costs only speed).
                let keys: Vec<u64> = flows.iter().map(|(id, _)| id % 5).collect();
                let specs: Vec<FlowSpec> = flows.iter().map(|(_, s)| s.clone()).collect();
                let ok = stage1.run(&last, &specs, &keys, capacity);
                let fresh: Vec<Option<Flow>> = specs
                    .iter()
                    .map(|s| validated(s, capacity).ok().map(|(f, _)| f).filter(|f| f.jobs().iter().all(|j| j.max_parallelism <= capacity)))
                    .collect();
                prop_assert_eq!(ok, fresh.iter().all(Option::is_some), "step {}", step);
                if ok {
                    prop_assert_eq!(stage1.flows.len(), specs.len());
                    for (j, flow) in fresh.iter().enumerate() {
                        let flow = flow.as_ref().unwrap();
                        prop_assert_eq!(&stage1.flows[j], flow, "step {} flow {}", step, j);
                        prop_assert_eq!(&stage1.chains[j], &PseudoChain::from_flow(flow), "step {} flow {}", step, j);
                    }
                    last = specs;
                } else {
                    prop_assert!(stage1.flows.is_empty() && stage1.chains.is_empty() && stage1.orders.is_empty());
                    // As `PoolSolve` does: the failed input becomes the last.
                    last = specs;
                }
            }
        }
    }

    /// A singleton flow whose job progressed is renewed in place, not validated again.
    #[test]
    fn a_progressing_singleton_is_renewed() {
        let spec = |work: f64| FlowSpec {
            jobs: vec![FlowJob { work, max_parallelism: 3 }],
            edges: Vec::new(),
            cost: Penalty::Linear { slope: 1.0, origin: 0.0 },
        };
        let mut stage1 = Stage1::default();
        assert!(stage1.run(&[], &[spec(5.0)], &[7], 4));
        assert!(stage1.run(&[spec(5.0)], &[spec(4.5)], &[7], 4));
        assert!(stage1.run(&[spec(4.5)], &[spec(4.5)], &[7], 4));
        assert_eq!(stage1.counts, [1, 1, 1]);
        let fresh = validated(&spec(4.5), 4).unwrap().0;
        assert_eq!(stage1.chains[0], PseudoChain::from_flow(&fresh));
        assert_eq!(stage1.flows[0], fresh);
    }

    /// A departure and an arrival keep every other entry (merged in place, not looked up), and a
    /// reordering afterwards finds them through the key lookup the merge left to sort.
    #[test]
    fn departures_and_arrivals_keep_the_other_entries() {
        let spec = |work: f64| FlowSpec {
            jobs: vec![FlowJob { work, max_parallelism: 2 }],
            edges: Vec::new(),
            cost: Penalty::Linear { slope: 1.0, origin: 0.0 },
        };
        let (a, b, c, d) = (spec(1.0), spec(2.0), spec(3.0), spec(4.0));
        let mut stage1 = Stage1::default();
        let first = [a.clone(), b.clone(), c.clone()];
        assert!(stage1.run(&[], &first, &[1, 2, 3], 4));
        let second = [a.clone(), c.clone(), d.clone()];
        assert!(stage1.run(&first, &second, &[1, 3, 4], 4));
        assert_eq!(stage1.counts, [2, 0, 4]);
        assert!(stage1.by_key_stale);
        let third = [d.clone(), c.clone(), a.clone()];
        assert!(stage1.run(&second, &third, &[4, 3, 1], 4));
        assert_eq!(stage1.counts, [5, 0, 4]);
        for (flow, spec) in stage1.flows.iter().zip(&third) {
            assert_eq!(flow, &validated(spec, 4).unwrap().0);
        }
    }

    #[test]
    fn round_targets_never_exceed_capacity() {
        assert_eq!(round_targets(&[1.5, 1.5, 1.0], 4), vec![2, 1, 1]);
        assert_eq!(round_targets(&[0.4, 0.4, 0.4], 2), vec![1, 0, 0]);
        assert_eq!(round_targets(&[3.0, 2.0], 5), vec![3, 2]);
    }

    #[test]
    fn registered_under_its_name() {
        let config = EngineConfig {
            policy: "flowflex".into(),
            objective: Some("max_stretch".into()),
            ..EngineConfig::default()
        };
        assert_eq!(crate::registry::create(&config).unwrap().name(), "flowflex");
        let bad = EngineConfig { policy: "flowflex".into(), objective: Some("nope".into()), ..EngineConfig::default() };
        assert!(crate::registry::create(&bad).is_err());
    }

    /// A random world: flows of up to 5 nodes with forward edges; each node unsubmitted, active or
    /// finished; random caps and cluster. `(submitted?, finished?, maps, reduces, max_slots)` per node.
    fn arb_world() -> impl Strategy<Value = (Vec<JobState>, ClusterView, usize)> {
        let node = (any::<bool>(), 0u8..4, 1u32..8, 0u32..4, proptest::option::of(1u32..6));
        let flow = (proptest::collection::vec(node, 1..6), proptest::collection::vec(any::<bool>(), 10));
        let cluster = (1u32..12, 1u32..6, any::<bool>()).prop_map(|(m, r, split)| ClusterView {
            map_slots: m,
            reduce_slots: r,
            mode: if split { PoolMode::Split } else { PoolMode::Shared },
            nodes: 1,
        });
        (proptest::collection::vec(flow, 1..4), cluster, 0usize..7).prop_map(|(flows, cluster, objective)| {
            let mut specs = Vec::new();
            let mut finished = Vec::new();
            for (f, (nodes, edge_bits)) in flows.iter().enumerate() {
                let names: Vec<String> = (0..nodes.len()).map(|i| format!("n{i}")).collect();
                let mut bits = edge_bits.iter();
                let mut adjacency: Vec<(String, Vec<String>)> = Vec::new();
                for a in 0..nodes.len() {
                    let succ: Vec<String> = (a + 1..nodes.len())
                        .filter(|_| *bits.next().unwrap_or(&false))
                        .map(|b| names[b].clone())
                        .collect();
                    adjacency.push((names[a].clone(), succ));
                }
                for (i, &(submitted, status, maps, reduces, max)) in nodes.iter().enumerate() {
                    if !submitted && f > 0 {
                        continue;
                    }
                    let mut s = JobSpec::new(i as Time, maps, reduces).with_task_ms(1_500, 2_500);
                    s.max_slots = max;
                    s.weight = 1.0 + i as f64;
                    s.deadline_ms = Some(5_000 * (i as Time + 1));
                    s.flow = Some(FlowMembership {
                        flow_id: format!("f{f}"),
                        node_name: names[i].clone(),
                        adjacency: adjacency.clone(),
                    });
                    finished.push(status == 0);
                    specs.push(s);
                }
            }
            let mut jobs = states(specs);
            for (job, done) in jobs.iter_mut().zip(finished) {
                if done {
                    job.status = JobStatus::Finished;
                }
            }
            (jobs, cluster, objective)
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        /// A plan is a function of its snapshot (and of the ended jobs the policy was told of): a
        /// policy fed a sequence of snapshots (epochs in which tasks finish, then a departure it is told of), whose
        /// view cache carries over from plan to plan, plans each exactly as a fresh policy does, for
        /// every objective; and every plan respects the pools' capacities.
        #[test]
        fn plans_equal_a_fresh_policys((jobs, cluster, k) in arb_world(), steps in 1usize..5) {
            let objectives = [
                Objective::AvgResponseTime, Objective::WeightedAvgStretch, Objective::TotalTardiness,
                Objective::Makespan, Objective::MaxStretch, Objective::MaxLateness, Objective::TardyJobs,
            ];
            let objective = objectives[k];
            let mut first = FlowFlexPolicy::new(objective, 2_000);
            let mut jobs = jobs;
            let mut retired = Vec::new();
            for step in 0..=steps {
                let now = 10_000 + 2_000 * step as Time;
                let active: Vec<JobId> = jobs.iter().filter(|j| j.is_active()).map(|j| j.id).collect();
                let snap = Snapshot::new(now, cluster, &jobs, &active);
                let mut fresh = FlowFlexPolicy::new(objective, 2_000);
                for &id in &retired {
                    fresh.on_job_finished(&snap, id);
                }
                let (a, b) = (first.plan(&snap), fresh.plan(&snap));
                prop_assert_eq!(&a, &b);
                // A tick: `now` moves, no job progressed (minisum pools reuse the last solve).
                let tick = Snapshot::new(now + 1_000, cluster, &jobs, &active);
                let mut fresh = FlowFlexPolicy::new(objective, 2_000);
                for &id in &retired {
                    fresh.on_job_finished(&tick, id);
                }
                prop_assert_eq!(&first.plan(&tick), &fresh.plan(&tick));
                for pool in cluster.pools() {
                    let used: u32 = a.entries.iter().map(|e| pool.phases.iter().map(|ph| e.target[ph.idx()]).sum::<u32>()).sum();
                    prop_assert!(used <= pool.capacity, "{} > {}", used, pool.capacity);
                }
                // An epoch's progress: one pending map of every active job finishes; the last step
                // also retires the first active job (a departure).
                for job in jobs.iter_mut().filter(|j| j.is_active()) {
                    let map = job.phase_mut(Phase::Map);
                    if map.pending > 1 {
                        map.pending -= 1;
                        map.finished += 1;
                    }
                }
                if step + 1 == steps {
                    if let Some(job) = jobs.iter_mut().find(|j| j.is_active()) {
                        job.status = JobStatus::Finished;
                        retired.push(job.id);
                    }
                    if let Some(&id) = retired.last() {
                        first.on_job_finished(&Snapshot::new(now, cluster, &jobs, &active), id);
                    }
                }
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// The kept state (views, Stage 1 per flow, the pool's last solve, the simplex basis and its
        /// network) gives exactly a fresh policy's plans over random sequences of arrivals (the next
        /// job of the world becomes active), departures (an active job ends; the policy is told, as
        /// the engine does before retiring it), one job's progress (a map finishes: its flow's input
        /// changes, every other flow's Stage 1 is reused) and re-plans at the same instant, for every
        /// objective, in both pool modes.
        #[test]
        fn arrivals_and_departures_plan_as_a_fresh_policy(
            (jobs, cluster, k) in arb_world(),
            ops in proptest::collection::vec((0u8..4, any::<usize>()), 1..16),
        ) {
            let objectives = [
                Objective::AvgResponseTime, Objective::WeightedAvgStretch, Objective::TotalTardiness,
                Objective::Makespan, Objective::MaxStretch, Objective::MaxLateness, Objective::TardyJobs,
            ];
            let objective = objectives[k];
            let mut jobs = jobs;
            // Ended jobs of the world are ended before the sequence starts; the others arrive in id order.
            let mut retired: Vec<JobId> = jobs.iter().filter(|j| !j.is_active()).map(|j| j.id).collect();
            let waiting: Vec<JobId> = jobs.iter().filter(|j| j.is_active()).map(|j| j.id).collect();
            let mut arrived = 1.min(waiting.len());
            let mut policy = FlowFlexPolicy::new(objective, 2_000);
            let start = Snapshot::new(10_000, cluster, &jobs, &[]);
            for &id in &retired {
                policy.on_job_finished(&start, id);
            }
            for (step, &(op, pick)) in ops.iter().enumerate() {
                let now = 10_000 + 500 * step as Time;
                let active: Vec<JobId> =
                    waiting[..arrived].iter().copied().filter(|&id| jobs[id.0 as usize].is_active()).collect();
                match op {
                    0 if arrived < waiting.len() => arrived += 1,
                    1 if !active.is_empty() => {
                        let id = active[pick % active.len()];
                        policy.on_job_finished(&Snapshot::new(now, cluster, &jobs, &active), id);
                        jobs[id.0 as usize].status = JobStatus::Finished;
                        retired.push(id);
                    }
                    2 if !active.is_empty() => {
                        let map = jobs[active[pick % active.len()].0 as usize].phase_mut(Phase::Map);
                        if map.pending > 1 {
                            map.pending -= 1;
                            map.finished += 1;
                        }
                    }
                    _ => {}
                }
                let active: Vec<JobId> =
                    waiting[..arrived].iter().copied().filter(|&id| jobs[id.0 as usize].is_active()).collect();
                let snap = Snapshot::new(now, cluster, &jobs, &active);
                let mut fresh = FlowFlexPolicy::new(objective, 2_000);
                for &id in &retired {
                    fresh.on_job_finished(&snap, id);
                }
                prop_assert_eq!(policy.plan(&snap), fresh.plan(&snap), "step {} op {}", step, op);
            }
        }
    }

    /// What of a view the plan reads, with its blocked flags spelt out per node.
    #[allow(clippy::type_complexity)]
    fn view_facts(
        view: &FlowView,
    ) -> (PlanFlow, Vec<(String, Option<JobId>)>, Vec<(usize, usize)>, Vec<JobId>, u32, u64, Vec<bool>) {
        let blocked = (0..view.nodes.len()).map(|i| view.blocked.get(i).copied().unwrap_or(false)).collect();
        (
            (*view.reported).clone(),
            view.nodes.iter().map(|n| (n.name.clone(), n.job)).collect(),
            view.edges.clone(),
            view.known.clone(),
            view.ended.count,
            view.key,
            blocked,
        )
    }

    proptest! {
        /// The views a plan takes from the last plan's (same active jobs, no history change) or
        /// from the cache are the ones a fresh cache builds, and each view's blocked flags are
        /// the scan of its edges they replace.
        #[test]
        fn kept_views_are_fresh_ones(
            (jobs, cluster, k) in arb_world(),
            plain in 0usize..4,
            ops in proptest::collection::vec((0u8..5, any::<usize>()), 1..16),
        ) {
            let mut jobs = jobs;
            // Jobs without a flow (singleton flows) among the flows' jobs.
            for i in 0..plain {
                let id = JobId(jobs.len() as u32);
                jobs.push(JobState::new(id, spec(i as Time, 2, 1, None)));
            }
            let mut retired: Vec<JobId> = jobs.iter().filter(|j| !j.is_active()).map(|j| j.id).collect();
            let waiting: Vec<JobId> = jobs.iter().filter(|j| j.is_active()).map(|j| j.id).collect();
            let mut arrived = 1.min(waiting.len());
            let mut policy = FlowFlexPolicy::new([Objective::AvgResponseTime, Objective::Makespan][k % 2], 2_000);
            let start = Snapshot::new(10_000, cluster, &jobs, &[]);
            for &id in &retired {
                policy.on_job_finished(&start, id);
            }
            for (step, &(op, pick)) in ops.iter().enumerate() {
                let now = 10_000 + 500 * step as Time;
                let active: Vec<JobId> =
                    waiting[..arrived].iter().copied().filter(|&id| jobs[id.0 as usize].is_active()).collect();
                match op {
                    0 if arrived < waiting.len() => arrived += 1,
                    1 if !active.is_empty() => {
                        let id = active[pick % active.len()];
                        policy.on_job_finished(&Snapshot::new(now, cluster, &jobs, &active), id);
                        jobs[id.0 as usize].status = JobStatus::Finished;
                        retired.push(id);
                    }
                    // A job told ended that stays active (an attempt ended; the history changes alone).
                    2 if !active.is_empty() => {
                        policy.on_job_finished(&Snapshot::new(now, cluster, &jobs, &active), active[pick % active.len()]);
                    }
                    _ => {}
                }
                let active: Vec<JobId> =
                    waiting[..arrived].iter().copied().filter(|&id| jobs[id.0 as usize].is_active()).collect();
                let snap = Snapshot::new(now, cluster, &jobs, &active);
                let plan = policy.plan(&snap);
                let mut fresh = Vec::new();
                fill_views(&snap, &policy.history, &mut ViewCache::default(), &mut fresh);
                let kept: Vec<_> = policy.views.views.iter().map(|v| view_facts(v)).collect();
                let built: Vec<_> = fresh.iter().map(|v| view_facts(v)).collect();
                prop_assert_eq!(&kept, &built, "step {} op {}", step, op);
                for (view, facts) in fresh.iter().zip(&built) {
                    let scanned: Vec<bool> =
                        (0..view.nodes.len()).map(|i| view.edges.iter().any(|&(_, b)| b == i)).collect();
                    prop_assert_eq!(&facts.6, &scanned);
                }
                let reported: Vec<PlanFlow> = plan.flows.iter().map(|f| (**f).clone()).collect();
                prop_assert_eq!(reported, built.into_iter().map(|f| f.0).collect::<Vec<_>>());
            }
        }

        /// One pass over a flow's pieces gives, per node, the area and end a filter of the pieces
        /// per node gives (the code it replaced), bit for bit, pieces of nodes out of range ignored.
        #[test]
        fn one_pass_areas_are_the_filtered_ones(
            raw in proptest::collection::vec((0usize..5, -2.0f64..6.0, 0.0f64..4.0, 1u32..9), 0..24),
            nodes in 1usize..5,
            window in prop_oneof![Just(1e-6), 0.0f64..5.0, Just(2.0)],
        ) {
            let mut pieces: Vec<super::super::shape::JobPiece> = raw
                .iter()
                .map(|&(job, start, len, slots)| super::super::shape::JobPiece { job, start, end: start + len.max(1e-12), slots })
                .collect();
            pieces.sort_by(|a, b| a.start.total_cmp(&b.start).then(a.job.cmp(&b.job)));
            let mut out = Vec::new();
            job_areas_into(&pieces, nodes, window, &mut out);
            prop_assert_eq!(out.len(), nodes);
            for (i, &(area, end)) in out.iter().enumerate() {
                let mine = pieces.iter().filter(|p| p.job == i);
                let want: f64 =
                    mine.clone().map(|p| f64::from(p.slots) * (p.end.min(window) - p.start).max(0.0)).sum();
                let last = mine.map(|p| p.end).fold(0.0, f64::max);
                prop_assert_eq!((area.to_bits(), end.to_bits()), (want.to_bits(), last.to_bits()), "node {}", i);
            }
        }
    }

    proptest! {
        /// The plan never exceeds any pool's capacity nor a job's maximum slots, gives nothing to a
        /// job with an unfinished (active or unsubmitted) predecessor, lists every active job once,
        /// and is deterministic.
        #[test]
        fn plan_respects_capacity_precedence_and_caps((jobs, cluster, k) in arb_world()) {
            let objectives = [
                Objective::AvgResponseTime, Objective::WeightedAvgStretch, Objective::TotalTardiness,
                Objective::Makespan, Objective::MaxStretch, Objective::MaxLateness, Objective::TardyJobs,
            ];
            let objective = objectives[k];
            let out = plan(objective, cluster, &jobs);
            prop_assert_eq!(&plan(objective, cluster, &jobs), &out);
            let active: Vec<&JobState> = jobs.iter().filter(|j| j.is_active()).collect();
            prop_assert_eq!(out.entries.len(), active.len());
            for pool in cluster.pools() {
                let used: u32 = out.entries.iter().map(|e| pool.phases.iter().map(|ph| e.target[ph.idx()]).sum::<u32>()).sum();
                prop_assert!(used <= pool.capacity, "{} > {}", used, pool.capacity);
            }
            for job in &active {
                let e = out.entry(job.id).unwrap();
                let total: u32 = e.target.iter().sum();
                if let Some(max) = job.spec.max_slots {
                    prop_assert!(total <= max * 2, "{} > 2 x {}", total, max);
                    if cluster.mode == PoolMode::Shared {
                        prop_assert!(total <= max);
                    }
                }
                let flow = job.spec.flow.as_ref().unwrap();
                let done = |name: &str| jobs.iter().any(|j| {
                    !j.is_active() && j.spec.flow.as_ref().is_some_and(|f| f.flow_id == flow.flow_id && f.node_name == name)
                });
                let blocked = flow.adjacency.iter().any(|(from, to)| to.contains(&flow.node_name) && !done(from));
                if blocked {
                    prop_assert_eq!(total, 0, "{} has an unfinished predecessor", flow.node_name);
                }
            }
        }
    }
}
