//! FlowFlex Stage 2b (digest §2.4, Fig. 6): minisum objectives through the min-cost-flow
//! relaxation, rounding at the half-completion point into deadlines for the Fig. 5 greedy.
//!
//! Network on a time grid `0 = T_0 < T_1 < … < T_K = H`: source `r`, one node `a_j` per chain, one
//! node `b_k` per grid interval `(T_{k−1}, T_k]`, sink `r'`. Arcs `r → a_j` (capacity `V_j`),
//! `a_j → b_k` for `T_k ≥ Q_j` (cost `w_j(T_k)/V_j`), `b_k → r'` (capacity `P·(T_k − T_{k−1})`) and
//! `b_{k+1} → b_k` (uncapacitated, cost 0). A flow of `Σ V_j` gives `cost(f)`, and chain `j`'s
//! deadline is the first `T_k` by which a fraction `θ` of its volume is charged (the paper's `θ = ½`
//! gives the (2, 3) guarantee). The paper's network is the unit grid `T_k = k` ([`unit_grid`]).
//!
//! Decisions where the paper is silent:
//! - **Two grids.** The unit grid (step `Δ`, `H = 2m⌈max_j Q_j/Δ⌉` intervals) is the exact
//!   reference; it is pseudo-polynomial (121 s for 20 flows × 20 jobs at `Δ = 1`) and refused beyond
//!   [`MAX_ARCS`] chain-interval arcs. The compressed grid ([`compressed_grid`], the digest's §6.3
//!   suggestion) keeps integer points only where they matter: every `⌈Q_j⌉`, every step-cost due
//!   `⌊d⌋`, and geometric offsets `o_1 = 1`, `o_{i+1} = max(o_i + 1, ⌈r·o_i⌉)` from 0 and from every
//!   integer tardiness due, capped at `H`. An interval `(T_{k−1}, T_k]` then holds the unit slots
//!   `t` with `T_k ≤ r·t` (relative to the anchor), so for completion-time costs `ω·t`, tardiness
//!   with integer dues and step costs: `cost_unit(f) ≤ cost_compressed(f) ≤ r · cost_unit(f)`
//!   (lower: a compressed flow is a unit flow charging at `T_k`; upper: moving unit charges to the end
//!   of their interval multiplies each charge by at most `r`). Tested on small instances.
//! - **A certified lower bound.** `cost(f)` charges completions at interval ends, so it may exceed
//!   `opt` for continuous costs. [`MinisumSchedule::lower_bound`] solves the same network with the
//!   cheapest cost a completion in the interval can have, `w_j(Q_j)` when `T_{k−1} < Q_j` and the
//!   right limit `w_j(T_{k−1}⁺)` otherwise: routing every flow's volume to the interval of its true
//!   completion and down to where its work ran is a feasible flow of cost `≤ opt`. We also take the
//!   max with `Σ_j w_j(Q_j)`. (The paper's horizon argument — some optimal schedule ends by `H` — is
//!   assumed, as in the paper.)
//! - Equal-cost optima are broken by the solver's deterministic order (arcs in chain, then interval
//!   order; Dijkstra ties to the smaller node index; the simplex's pivots follow the arc order too).
//! - **Two solvers.** The reproduction's functions use successive shortest paths
//!   ([`MinCostFlow::solve`]); epoch re-planning ([`minisum_for_planning`]) uses the network simplex
//!   method ([`MinCostFlow::solve_simplex`]), several times faster on the engine's networks (issue 20,
//!   `docs/performance.md`). Both are exact; they may break cost ties differently. The engine
//!   policy warm-starts the simplex from its last basis ([`minisum_for_planning_from`]) and keeps
//!   the warm optimum only where a certificate shows it rounds like the cold simplex's.

use super::chain::PseudoChain;
use super::fill::ForwardFill;
use super::greedy::{
    chain_lower_bound, deadline_order_by, decreasing_order_into, order_by_intervals, schedule_in_deadline_order,
    within, DeadlineSchedule, FlatSchedule, Greedy,
};
use super::mincost::{ArcState, MinCostFlow};
use crate::flex::metrics::Penalty;
use circumflex_core::error::{Error, Result};

/// Relative slack for comparisons against `Q_j` and volumes: Stage 1's float sums may put `Q_j` a few
/// ulps above the integer it equals exactly (proptest found `Q_j = 11.000000000000002`).
const FLOAT_SLACK: f64 = 1e-12;

/// The first grid interval a chain with lower bound `q` may be charged to (`T_k ≥ Q_j` within the
/// float slack): where its arcs start. One reading for the network, its pruning and the fill (`fill`),
/// which must agree on it.
///
/// Counted over the whole grid, not searched: on an increasing grid (every caller's, checked by
/// `check_rounding_inputs`) the count of points below the bound is the binary search's partition
/// point, and on the planner's grids (about 18 points) a count without branches is faster than a
/// search's unpredictable ones (issue 20, `docs/performance.md` §27). The callers then walk the
/// intervals from it, so the count adds no order of work.
pub(crate) fn first_interval(grid: &[f64], q: f64) -> usize {
    let bound = q * (1.0 - FLOAT_SLACK);
    grid.iter().map(|&t| usize::from(t < bound)).sum()
}

/// A chain arc's unit cost: the chain's cost `w_j(T_k)` at the interval's end, clamped at 0, per unit
/// of its volume `V_j`.
pub(crate) fn unit_cost(cost: f64, volume: f64) -> f64 {
    cost.max(0.0) / volume
}

/// Per grid interval, its capacity `P·(T_k − T_{k−1})` (its sink arc's; the prefix sums of these
/// are the relaxation's prefix capacities).
pub(crate) fn interval_capacities(grid: &[f64], slots: u32) -> impl Iterator<Item = f64> + '_ {
    grid.iter().scan(0.0, move |previous, &end| {
        let capacity = f64::from(slots) * (end - *previous);
        *previous = end;
        Some(capacity)
    })
}

/// The earliest integer grid point a chain with lower bound `q` may finish at, tolerating float noise.
fn earliest_integer_deadline(q: f64) -> f64 {
    (q * (1.0 - FLOAT_SLACK)).ceil()
}

/// `w(Q)`, a chain's cost at its lower bound `Q`. A step cost reads `Q` as the grid does (within
/// [`FLOAT_SLACK`] below, as [`earliest_integer_deadline`] does): a `Q` that float rounding puts a hair
/// past a step's due (6.000000000000001 for 6) would otherwise be charged a step that the relaxation, on
/// grid point 6, rightly does not charge, and the "lower bound" would exceed the relaxation. Costs never
/// decrease in time, so the earlier point is still a lower bound. Continuous costs move by rounding
/// only there, so they read `Q` itself.
fn cost_at_lower_bound(cost: &Penalty, q: f64) -> f64 {
    match cost {
        Penalty::Steps(_) => cost.eval(q * (1.0 - FLOAT_SLACK)),
        _ => cost.eval(q),
    }
}

/// `Σ_j w_j(Q_j)`, each at [`cost_at_lower_bound`].
fn trivial_bound(costs: &[Penalty], q: &[f64]) -> f64 {
    costs.iter().zip(q).map(|(w, &q)| cost_at_lower_bound(w, q)).sum()
}

/// Largest number of chain-to-interval arcs the relaxation will build.
pub const MAX_ARCS: usize = 4_000_000;

/// The outcome of Fig. 6.
#[derive(Clone, Debug, PartialEq)]
pub struct MinisumSchedule {
    /// The grid's interval ends `T_1 < … < T_K`.
    pub grid: Vec<f64>,
    /// The rounding fraction `θ` whose deadlines gave the schedule.
    pub theta: f64,
    /// `cost(f)`: the optimal value of the min-cost-flow relaxation (charging at interval ends).
    pub relaxation_cost: f64,
    /// A certified lower bound on the optimal minisum cost (see the module docs).
    pub lower_bound: f64,
    /// Per chain, the work charged to each grid interval `k = 1..K` (index `k − 1`).
    pub charged: Vec<Vec<f64>>,
    /// The rounded deadlines `d_j` (grid points).
    pub deadlines: Vec<f64>,
    /// The Fig. 5 greedy schedule for those deadlines.
    pub schedule: DeadlineSchedule,
    /// The minisum objective of the unit-speed schedule, `Σ_j w_j(C_j)`.
    pub objective: f64,
}

fn check_inputs(chains: &[PseudoChain], costs: &[Penalty]) -> Result<()> {
    let m = chains.len();
    if m == 0 || costs.len() != m {
        return Err(Error::job("costs", costs.len(), format!("one cost per chain, at least one ({m})")));
    }
    Ok(())
}

/// The horizon in `unit`s: `H/unit = 2m⌈max_j Q_j / unit⌉` (at least 2m).
fn horizon_units(chains: &[PseudoChain], slots: u32, unit: f64) -> f64 {
    let max_q = chains.iter().map(|c| chain_lower_bound(c, slots)).fold(0.0, f64::max);
    horizon_from(max_q, chains.len(), unit)
}

/// [`horizon_units`] of `chains` chains whose largest `Q_j` is `max_q`.
fn horizon_from(max_q: f64, chains: usize, unit: f64) -> f64 {
    2.0 * chains as f64 * (max_q / unit).ceil().max(1.0)
}

/// The geometric grids' next offset after `offset`: `max(o + 1, ⌈r·o⌉)`.
fn next_offset(offset: f64, ratio: f64) -> f64 {
    (offset + 1.0).max((offset * ratio).ceil())
}

/// The paper's grid: multiples of `step` up to `H`. Errors when `step` is not positive and finite
/// or the grid would exceed [`MAX_ARCS`] chain-interval arcs.
pub fn unit_grid(chains: &[PseudoChain], slots: u32, step: f64) -> Result<Vec<f64>> {
    if !(step.is_finite() && step > 0.0) {
        return Err(Error::job("minisum grid step", step, "a finite number > 0"));
    }
    let intervals = horizon_units(chains, slots, step);
    if intervals * chains.len() as f64 > MAX_ARCS as f64 {
        return Err(Error::job(
            "minisum grid step",
            step,
            format!("a step giving at most {MAX_ARCS} chain-slot arcs ({intervals} slots x {} chains)", chains.len()),
        ));
    }
    Ok((1..=intervals as usize).map(|t| t as f64 * step).collect())
}

/// The compressed grid of the module docs, with geometric ratio `ratio > 1`, in unit time steps.
pub fn compressed_grid(chains: &[PseudoChain], costs: &[Penalty], slots: u32, ratio: f64) -> Result<Vec<f64>> {
    check_inputs(chains, costs)?;
    if !(ratio.is_finite() && ratio > 1.0) {
        return Err(Error::job("minisum grid ratio", ratio, "a finite number > 1"));
    }
    let horizon = horizon_units(chains, slots, 1.0);
    let mut points: Vec<f64> = chains.iter().map(|c| earliest_integer_deadline(chain_lower_bound(c, slots))).collect();
    let mut anchors = vec![0.0];
    for cost in costs {
        match cost {
            Penalty::Tardiness { due, .. } if *due > 0.0 => anchors.push(due.floor()),
            Penalty::Steps(steps) => points.extend(steps.iter().map(|s| s.0.floor())),
            _ => {}
        }
    }
    for anchor in anchors {
        points.push(anchor);
        let mut offset = 1.0f64;
        while anchor + offset < horizon {
            points.push(anchor + offset);
            offset = next_offset(offset, ratio);
        }
    }
    points.push(horizon);
    points.retain(|&t| t > 0.0 && t <= horizon);
    points.sort_by(f64::total_cmp);
    points.dedup();
    Ok(points)
}

/// A coarse grid for epoch re-planning: geometric points `o_{i+1} = max(o_i + 1, ⌈r·o_i⌉)` from 0 up
/// to `H` only (no `⌈Q_j⌉` or cost breakpoints), so its size is `O(log_r H)` whatever the number of
/// chains. A chain's arcs start at the first point `≥ Q_j`, at most `r·Q_j + 1`; no bound on the
/// relaxation's distance to the unit grid is claimed for it.
pub fn geometric_grid(chains: &[PseudoChain], slots: u32, ratio: f64) -> Result<Vec<f64>> {
    let mut points = Vec::new();
    geometric_grid_into(chains, slots, ratio, &mut points)?;
    Ok(points)
}

/// [`geometric_grid`] into `points` (whatever it held; issue 20, a grid per plan).
fn geometric_grid_into(chains: &[PseudoChain], slots: u32, ratio: f64, points: &mut Vec<f64>) -> Result<()> {
    if !(ratio.is_finite() && ratio > 1.0) {
        return Err(Error::job("minisum grid ratio", ratio, "a finite number > 1"));
    }
    let horizon = horizon_units(chains, slots, 1.0);
    points.clear();
    let mut offset = 1.0f64;
    while offset < horizon {
        points.push(offset);
        offset = next_offset(offset, ratio);
    }
    points.push(horizon);
    Ok(())
}

/// Fig. 6 with grid step `step` and rounding fraction `theta ∈ (0, 1)` (`½` in the paper).
pub fn minisum(
    chains: &[PseudoChain],
    costs: &[Penalty],
    slots: u32,
    step: f64,
    theta: f64,
) -> Result<MinisumSchedule> {
    check_inputs(chains, costs)?;
    let grid = unit_grid(chains, slots, step)?;
    minisum_on_grid(chains, costs, slots, grid, theta)
}

/// Fig. 6 on the compressed grid with geometric `ratio` (see the module docs).
pub fn minisum_compressed(
    chains: &[PseudoChain],
    costs: &[Penalty],
    slots: u32,
    ratio: f64,
    theta: f64,
) -> Result<MinisumSchedule> {
    let grid = compressed_grid(chains, costs, slots, ratio)?;
    minisum_on_grid(chains, costs, slots, grid, theta)
}

/// The cost of a completion inside `(previous, end]` at the earliest, for the lower-bound network.
fn cheapest_in_interval(cost: &Penalty, q: f64, previous: f64) -> f64 {
    if previous < q {
        return cost_at_lower_bound(cost, q);
    }
    match cost {
        // Steps are left-continuous; just after `previous` every due `≤ previous` is missed.
        Penalty::Steps(steps) => {
            let k = steps.partition_point(|s| s.0 <= previous);
            if k == 0 {
                0.0
            } else {
                steps[k - 1].1
            }
        }
        _ => cost.eval(previous),
    }
}

/// A solved network: its cost, the solver (for arc flows and prices) and per chain the arcs
/// `(interval, arc id)`.
type SolvedNetwork = (f64, MinCostFlow, Vec<Vec<(usize, usize)>>);

/// Node prices of a solved Fig. 6 network, by role: what a later warm start reuses.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Prices {
    /// The source's price.
    pub source: f64,
    /// The sink's price.
    pub sink: f64,
    /// Per chain, its node's price.
    pub chains: Vec<f64>,
    /// Per grid interval (by index), its node's price.
    pub intervals: Vec<f64>,
}

/// A warm start for [`minisum_for_planning_warm`]: an earlier relaxation's solution, aligned by the
/// caller to the new instance's chains.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct WarmStart {
    /// Per chain of the new instance (same order): the work it charged to each interval index in
    /// the earlier solution, or `None` for a chain the earlier instance did not have.
    pub charged: Vec<Option<Vec<f64>>>,
    /// The earlier prices, `chains` aligned like `charged` (any value for a new chain).
    pub prices: Prices,
}

/// The initial flow of a warm start on the network `solve_network` builds: the earlier charges,
/// clamped to each chain's arcs and volume (latest intervals given up first), the source arcs carrying
/// what the chains charge, and the interval nodes passing what exceeds their capacity down to earlier
/// intervals. It need not be feasible; [`MinCostFlow::solve_warm`] repairs it.
fn warm_flow(
    warm: &WarmStart,
    volumes: &[f64],
    capacities: &[f64],
    source_arcs: &[usize],
    arcs: &[Vec<(usize, usize)>],
    sink_arcs: &[usize],
    down_arcs: &[usize],
) -> Vec<(usize, f64)> {
    let intervals = capacities.len();
    let mut start = Vec::new();
    let mut at_interval = vec![0.0f64; intervals];
    for (j, chain_arcs) in arcs.iter().enumerate() {
        let Some(Some(earlier)) = warm.charged.get(j) else { continue };
        let mut left = volumes[j];
        let mut wanted: Vec<(usize, usize, f64)> = Vec::with_capacity(chain_arcs.len());
        for &(k, arc) in chain_arcs {
            let amount = earlier.get(k).copied().unwrap_or(0.0);
            if amount > 0.0 && amount.is_finite() {
                let amount = amount.min(left);
                left -= amount;
                wanted.push((k, arc, amount));
            }
        }
        let total: f64 = wanted.iter().map(|w| w.2).sum();
        start.push((source_arcs[j], total));
        for (k, arc, amount) in wanted {
            start.push((arc, amount));
            at_interval[k] += amount;
        }
    }
    let mut carry = 0.0;
    for k in (0..intervals).rev() {
        let arriving = at_interval[k] + carry;
        start.push((sink_arcs[k], arriving.min(capacities[k])));
        carry = (arriving - capacities[k]).max(0.0);
        if k > 0 && carry > 0.0 {
            start.push((down_arcs[k - 1], carry));
        }
    }
    start
}

/// Which solver runs Fig. 6's network.
#[derive(Clone, Copy, Debug)]
enum Solver<'a> {
    /// Successive shortest paths ([`MinCostFlow::solve`]): the reproduction's solver.
    Paths,
    /// Successive shortest paths repaired from an earlier solution ([`MinCostFlow::solve_warm`]).
    Warm(&'a WarmStart),
    /// The network simplex method ([`MinCostFlow::solve_simplex`]): epoch re-planning.
    Simplex,
}

/// Fig. 6's network on a grid, built and not yet solved, with its arcs by role.
#[derive(Clone, Debug, Default)]
struct Network {
    net: MinCostFlow,
    source: usize,
    sink: usize,
    demand: f64,
    /// Per chain, its arcs `(interval, arc id)`.
    arcs: Vec<Vec<(usize, usize)>>,
    /// Per chain, its arc from the source.
    source_arcs: Vec<usize>,
    /// Per interval, its capacity and its arc to the sink.
    capacities: Vec<f64>,
    sink_arcs: Vec<usize>,
    /// Per interval but the last, the arc from the next interval down to it.
    down_arcs: Vec<usize>,
}

/// Builds Fig. 6's network on `grid` with per-(chain, interval) costs from `charge`.
fn build_network(
    q: &[f64],
    volumes: &[f64],
    slots: u32,
    grid: &[f64],
    charge: &impl Fn(usize, usize) -> f64,
) -> Result<Network> {
    let mut network = Network::default();
    build_network_into(&mut network, q, volumes, slots, grid, charge)?;
    Ok(network)
}

/// [`build_network`] into `network`, whatever it held (its allocations are kept: issue 20, a
/// network rebuilt for every plan).
fn build_network_into(
    network: &mut Network,
    q: &[f64],
    volumes: &[f64],
    slots: u32,
    grid: &[f64],
    charge: &impl Fn(usize, usize) -> f64,
) -> Result<()> {
    let (m, intervals) = (volumes.len(), grid.len());
    // Nodes: 0 = r, 1..=m = a_j, m+1..=m+K = b_k, m+K+1 = r'.
    let (source, sink) = (0, m + intervals + 1);
    let interval_node = |k: usize| m + 1 + k;
    let Network { net, arcs, source_arcs, capacities, sink_arcs, down_arcs, .. } = network;
    net.reset(m + intervals + 2);
    arcs.truncate(m);
    arcs.resize_with(m, Vec::new);
    source_arcs.clear();
    for (j, chain_arcs) in arcs.iter_mut().enumerate() {
        source_arcs.push(net.add_arc(source, 1 + j, volumes[j], 0.0)?);
        chain_arcs.clear();
        for k in first_interval(grid, q[j])..intervals {
            let cost = unit_cost(charge(j, k), volumes[j]);
            chain_arcs.push((k, net.add_arc(1 + j, interval_node(k), f64::INFINITY, cost)?));
        }
    }
    capacities.clear();
    down_arcs.clear();
    sink_arcs.clear();
    for (k, capacity) in interval_capacities(grid, slots).enumerate() {
        capacities.push(capacity);
        sink_arcs.push(net.add_arc(interval_node(k), sink, capacity, 0.0)?);
        if k + 1 < intervals {
            down_arcs.push(net.add_arc(interval_node(k + 1), interval_node(k), f64::INFINITY, 0.0)?);
        }
    }
    network.source = source;
    network.sink = sink;
    network.demand = volumes.iter().sum();
    Ok(())
}

/// Builds and solves Fig. 6's network on `grid` with per-(chain, interval) costs from `charge`;
/// returns the cost and, per chain, the arcs `(interval, arc id)` with the network. With `warm`, the
/// solve starts from that solution ([`MinCostFlow::solve_warm`]; same optimal cost).
fn solve_network(
    chains: &[PseudoChain],
    q: &[f64],
    volumes: &[f64],
    slots: u32,
    grid: &[f64],
    charge: impl Fn(usize, usize) -> f64,
    solver: Solver<'_>,
) -> Result<SolvedNetwork> {
    let (m, intervals) = (chains.len(), grid.len());
    let Network { mut net, source, sink, demand, arcs, source_arcs, capacities, sink_arcs, down_arcs } =
        build_network(q, volumes, slots, grid, &charge)?;
    let cost = match solver {
        Solver::Simplex => net.solve_simplex(source, sink, demand)?,
        Solver::Paths => net.solve(source, sink, demand)?,
        Solver::Warm(warm) => {
            let start = warm_flow(warm, volumes, &capacities, &source_arcs, &arcs, &sink_arcs, &down_arcs);
            let p = &warm.prices;
            let mut potential = Vec::with_capacity(m + intervals + 2);
            potential.push(p.source);
            potential.extend((0..m).map(|j| p.chains.get(j).copied().unwrap_or(p.source)));
            potential.extend((0..intervals).map(|k| p.intervals.get(k).copied().unwrap_or(p.sink)));
            potential.push(p.sink);
            net.solve_warm(source, sink, demand, &start, potential)?
        }
    };
    Ok((cost, net, arcs))
}

/// The simplex basis the last epoch-planning solve of a pool ended with, by role (source arc and
/// chain arcs per chain key, sink and down arcs per interval index): the warm start of the next
/// plan's network ([`minisum_for_planning_from`]). A scratch: no schedule depends on what it holds
/// (a warm start's optimum is used only when certified to be the cold solve's), only how fast it
/// comes.
#[derive(Clone, Debug, Default)]
pub struct PlanningBasis {
    /// The chain keys of the last network with their chain index, sorted.
    keys: Vec<(u64, usize)>,
    /// Per chain, its source arc's state.
    source: Vec<ArcState>,
    /// Per chain and interval index (`chain · intervals + k`), its chain arc's state (`Lower` where none).
    chain: Vec<ArcState>,
    /// Per interval index, its sink arc's state.
    sink: Vec<ArcState>,
    /// Per interval index but the last, its down arc's state.
    down: Vec<ArcState>,
    /// Solves warm-started and certified (the cold solve's charges), warm-started and then solved
    /// cold (not certified, or the warm start failed), and cold without a basis.
    pub counts: [u64; 3],
    /// Of the certified warm solves, those on a pruned grid ([`prune_point`]).
    pub pruned: u64,
    /// Plans whose relaxation was the certified forward fill (`fill`), no network solved.
    pub filled: u64,
    /// The last network, kept only for its allocations (the next plan's is built into it).
    network: Network,
    /// The warm start's guessed arc states (a scratch).
    start: Vec<ArcState>,
    /// The last plan's rounding: its working vectors and its result ([`plan_from`]).
    rounding: Rounding,
}

/// The rounding of [`plan_from`]: working vectors kept across plans (issue 20: no allocation per
/// plan once warm; every one is cleared and filled before it is read) and the result, the best
/// fraction's deadlines, order and greedy schedule.
#[derive(Clone, Debug, Default)]
struct Rounding {
    q: Vec<f64>,
    volumes: Vec<f64>,
    /// The chains by decreasing `q`, ties to the smaller index: the deadline order's tie-break.
    by_q: Vec<usize>,
    /// [`decreasing_order_into`]'s sort keys: a scratch.
    q_keys: Vec<(i64, usize)>,
    /// The geometric grid's offsets `o_1 = 1, o_{i+1} = max(o_i + 1, ⌈r·o_i⌉)` for the ratio
    /// `offsets_ratio`, as far as a grid has needed them ([`plan_on_geometric_grid`]): the same
    /// numbers for every plan, computed once.
    offsets: Vec<f64>,
    offsets_ratio: f64,
    /// Per fraction and chain (`t · m + j`), the grid index of its deadline.
    crossings: Vec<usize>,
    /// Per fraction, chain `j`'s threshold `θ·V_j` (slack included): a scratch.
    thresholds: Vec<f64>,
    /// The counting sort's counts per grid index: a scratch.
    counts: Vec<usize>,
    order: Vec<usize>,
    schedule: FlatSchedule,
    /// The orders already scheduled, `m` entries each.
    tried: Vec<usize>,
    greedy: Greedy,
    best_deadlines: Vec<f64>,
    best_order: Vec<usize>,
    best: FlatSchedule,
    /// The relaxation's charges, chain by chain over the whole grid (`j · K + k`), from whichever
    /// path solved it.
    charges: Vec<f64>,
    fill: ForwardFill,
    theta: f64,
    objective: f64,
    relaxation_cost: f64,
}

impl PlanningBasis {
    /// Whether a basis is recorded (a warm start can be guessed).
    fn has_start(&self) -> bool {
        !self.sink.is_empty()
    }

    /// The new network's arc states guessed from the recorded basis, into `self.start`; `false`
    /// without one. The recorded network may have had another number of intervals (a pruned grid,
    /// [`prune_point`]): states are read by interval index where both have it.
    fn start_for(&mut self, network: &Network, keys: &[u64]) -> bool {
        if !self.has_start() {
            return false;
        }
        let intervals = self.sink.len();
        let mut states = std::mem::take(&mut self.start);
        states.clear();
        states.resize(network.net.arc_count(), ArcState::Lower);
        for (j, key) in keys.iter().enumerate().take(network.arcs.len()) {
            let Ok(i) = self.keys.binary_search_by_key(key, |&(k, _)| k) else { continue };
            let old = self.keys[i].1;
            states[network.source_arcs[j] / 2] = self.source[old];
            for &(k, arc) in network.arcs[j].iter().filter(|(k, _)| *k < intervals) {
                states[arc / 2] = self.chain[old * intervals + k];
            }
        }
        for (k, &arc) in network.sink_arcs.iter().enumerate().take(intervals) {
            states[arc / 2] = self.sink[k];
        }
        for (k, &arc) in network.down_arcs.iter().enumerate().take(self.down.len()) {
            states[arc / 2] = self.down[k];
        }
        self.start = states;
        true
    }

    /// Records the basis a simplex solve of `network` ended with (forgets it if there is none).
    fn record(&mut self, network: &Network, keys: &[u64]) {
        let basis = network.net.basis();
        let (m, intervals) = (network.arcs.len(), network.sink_arcs.len());
        if basis.len() != network.net.arc_count() || keys.len() != m {
            self.sink.clear();
            return;
        }
        let state = |arc: usize| basis[arc / 2];
        self.keys.clear();
        self.keys.extend(keys.iter().enumerate().map(|(j, &k)| (k, j)));
        self.keys.sort_unstable();
        self.source.clear();
        self.source.extend(network.source_arcs.iter().map(|&a| state(a)));
        self.chain.clear();
        self.chain.resize(m * intervals, ArcState::Lower);
        for (j, chain_arcs) in network.arcs.iter().enumerate() {
            for &(k, arc) in chain_arcs {
                self.chain[j * intervals + k] = state(arc);
            }
        }
        self.sink.clear();
        self.sink.extend(network.sink_arcs.iter().map(|&a| state(a)));
        self.down.clear();
        self.down.extend(network.down_arcs.iter().map(|&a| state(a)));
    }
}

/// The deadline rule of Fig. 6's rounding ([`best_rounding`]): the first interval where a
/// positive charge brings the cumulative charge to `θ·V` (within the float slack), else `None`.
/// Also returns the cumulative charge before that interval and at it.
fn rounding_interval(charges: impl Iterator<Item = (usize, f64)>, threshold: f64) -> Option<(usize, f64, f64)> {
    let mut cumulative = 0.0;
    for (k, f) in charges {
        let before = cumulative;
        cumulative += f;
        if f > 0.0 && cumulative >= threshold {
            return Some((k, before, cumulative));
        }
    }
    None
}

/// Whether every rounding fraction gives every chain the same deadline for any charges within
/// `δ = 1e-9·ΣV_j` of the given ones (in total per chain; `charges_of(j)`: chain `j`'s `(interval,
/// charge)` in interval order, from a solved network or the certified fill): the cumulative charge
/// must cross `θ·V_j` by more than `δ` at the deadline and stay more than `δ` below it before.
pub(crate) fn rounding_is_robust<I: Iterator<Item = (usize, f64)>>(
    volumes: &[f64],
    thetas: &[f64],
    charges_of: impl Fn(usize) -> I,
) -> bool {
    let delta = 1e-9 * volumes.iter().sum::<f64>().max(1.0);
    volumes.iter().enumerate().all(|(j, &volume)| {
        thetas.iter().all(|&theta| {
            let threshold = theta * volume * (1.0 - FLOAT_SLACK);
            rounding_interval(charges_of(j), threshold)
                .is_some_and(|(_, before, at)| before < threshold - delta && at >= threshold + delta)
        })
    })
}

/// Where the planning network's warm solve may stop its grid: `Some((cut, scale))` when every
/// optimum of the network on `grid` charges nothing past interval `cut < K − 1`, so the network on
/// `grid[..=cut]` has the same optimal charges (and cost); `scale` is the largest unit cost of the
/// chain arcs left out, for the simplex's tolerances ([`MinCostFlow::solve_simplex_from_scaled`]).
///
/// `cut` is the first interval that every chain has an arc to (`T_cut ≥ Q_j` as the network reads
/// it) and by which the sink arcs can take the whole demand, `P·T_cut ≥ Σ V_j` (the capacities summed
/// as the network builds them, with a margin of `δ = 1e-9·ΣV`, the rounding certificate's). The
/// pruning is used only if every chain's unit cost at `cut` (as the network computes it, clamped
/// at 0 and divided by `V_j`) is strictly below its unit cost at every later interval: checked
/// arc by arc, so it holds whatever the [`Penalty`] (on the engine's default, average response
/// time, the costs are `Linear` with slope > 0, strictly increasing; a `Tardiness` whose due is
/// past `T_cut`, `Steps` without a step after it, or `Zero` give equal costs and no pruning).
///
/// Why: take an optimal flow of the whole network that charges `ε > 0` of chain `j` to an
/// interval `k > cut`. Decompose it into source-sink paths; one carries some `ε' > 0` along
/// `r → a_j → b_k → … → b_i → r'`. If `i ≤ cut`, send `ε'` along `a_j → b_cut → … → b_i` instead;
/// if `i > cut`, the sink arcs of intervals `≤ cut` carry less than `ΣV ≤ P·T_cut`, their capacity,
/// so one of them, `b_{i'}`, has room, and `ε'` goes `a_j → b_cut → … → b_{i'} → r'` (down arcs are
/// uncapacitated; `a_j → b_cut` exists). The flow stays feasible and its cost falls by
/// `ε'·(c_j(T_k) − c_j(T_cut)) > 0`: a contradiction. So every optimum of the whole network
/// charges only intervals `≤ cut`, carries nothing into `b_{cut+1}, …`, and is a flow of the pruned
/// network; the pruned network's flows are flows of the whole one. The optimal values are equal and
/// the optimal sets are the same; a certified-unique optimum of the pruned network
/// ([`solve_planning_network`]) is the whole network's unique optimum, whose charges the cold
/// simplex finds. Interval indices are the same in both, so the rounding reads `grid` as before
/// (the certificate also requires every deadline to be found, so the horizon is not read).
fn prune_point(
    q: &[f64],
    volumes: &[f64],
    slots: u32,
    grid: &[f64],
    charge: &impl Fn(usize, usize) -> f64,
) -> Option<(usize, f64)> {
    let intervals = grid.len();
    let first_all = q.iter().map(|&q| first_interval(grid, q)).max().unwrap_or(0);
    let demand: f64 = volumes.iter().sum();
    let needed = demand + 1e-9 * demand.max(1.0);
    let mut capacity = 0.0;
    let mut cut = None;
    for (k, interval) in interval_capacities(grid, slots).enumerate() {
        capacity += interval;
        if k >= first_all && capacity >= needed {
            cut = Some(k);
            break;
        }
    }
    let cut = cut.filter(|&cut| cut + 1 < intervals)?;
    let mut scale = 0.0f64;
    for (j, &volume) in volumes.iter().enumerate() {
        let unit = |k: usize| unit_cost(charge(j, k), volume);
        let at_cut = unit(cut);
        for k in cut + 1..intervals {
            let later = unit(k);
            // Also false for NaN; an infinite cost would make the tolerances infinite: no pruning.
            if !(at_cut < later && later.is_finite()) {
                return None;
            }
            scale = scale.max(later.abs());
        }
    }
    Some((cut, scale))
}

/// Solves Fig. 6's network for epoch planning: warm-started from `basis` when it holds one, and
/// the warm optimum kept only if it is certified to round like the cold simplex's: every optimum
/// charges the chains alike ([`MinCostFlow::solve_simplex_from`]'s certificate over the chain
/// arcs), and every fraction in `thetas` puts each chain's deadline where its cumulative charge
/// crosses `θ·V_j` by more than `δ = 1e-9·demand` ([`rounding_is_robust`]), far above the rounding
/// in which the two solves' sums may differ, so the cold simplex's charges give the same deadlines,
/// hence the same schedule. Otherwise (and without a basis) the cold simplex runs on a network
/// built anew. Records the final basis in `basis`.
#[allow(clippy::too_many_arguments)]
fn solve_planning_network(
    q: &[f64],
    volumes: &[f64],
    slots: u32,
    grid: &[f64],
    charge: &impl Fn(usize, usize) -> f64,
    thetas: &[f64],
    keys: &[u64],
    basis: &mut PlanningBasis,
) -> Result<SolvedNetwork> {
    let m = volumes.len();
    let mut network = std::mem::take(&mut basis.network);
    let mut cost = None;
    if basis.has_start() {
        // The warm solve runs on the grid pruned at the last useful interval where that leaves the
        // optimal charges unchanged ([`prune_point`]); the cold fallback below on the whole grid.
        let prune = prune_point(q, volumes, slots, grid, charge);
        let warm_grid = prune.map_or(grid, |(cut, _)| &grid[..=cut]);
        build_network_into(&mut network, q, volumes, slots, warm_grid, charge)?;
        basis.start_for(&network, keys);
        let Network { net, source, sink, demand, .. } = &mut network;
        let chain_arc = |from: usize, _| (1..=m).contains(&from);
        let scale = prune.map_or(0.0, |(_, scale)| scale);
        match net.solve_simplex_from_scaled(*source, *sink, *demand, &basis.start, chain_arc, scale) {
            Ok((c, true))
                if rounding_is_robust(volumes, thetas, |j| {
                    network.arcs[j].iter().map(|&(k, arc)| (k, network.net.flow_on(arc)))
                }) =>
            {
                cost = Some(c);
                basis.counts[0] += 1;
                basis.pruned += u64::from(prune.is_some());
            }
            _ => basis.counts[1] += 1,
        }
    } else {
        basis.counts[2] += 1;
    }
    let cost = match cost {
        Some(c) => c,
        None => {
            // The cold solve reads capacities from the residuals: start from a network built anew.
            build_network_into(&mut network, q, volumes, slots, grid, charge)?;
            let Network { net, source, sink, demand, .. } = &mut network;
            net.solve_simplex(*source, *sink, *demand)?
        }
    };
    basis.record(&network, keys);
    let (net, arcs) = (std::mem::take(&mut network.net), std::mem::take(&mut network.arcs));
    basis.network = network;
    Ok((cost, net, arcs))
}

/// The prices of a network `solve_network` solved, by role.
fn network_prices(net: &MinCostFlow, chains: usize, intervals: usize) -> Prices {
    let p = net.potentials();
    let at = |i: usize| p.get(i).copied().unwrap_or(0.0);
    Prices {
        source: at(0),
        sink: at(chains + intervals + 1),
        chains: (1..=chains).map(at).collect(),
        intervals: (chains + 1..=chains + intervals).map(at).collect(),
    }
}

/// Fig. 6 on an explicit grid of increasing interval ends `T_1 < … < T_K` (`T_K ≥` the horizon).
pub fn minisum_on_grid(
    chains: &[PseudoChain],
    costs: &[Penalty],
    slots: u32,
    grid: Vec<f64>,
    theta: f64,
) -> Result<MinisumSchedule> {
    minisum_best_rounding(chains, costs, slots, grid, &[theta])
}

/// Fig. 6 with the paper's practical remark (§2.4: "round the flow based on multiple values … and
/// the best result could then be employed"): one relaxation, one greedy per rounding fraction in
/// `thetas`, and the schedule with the smallest objective is kept (ties to the earlier fraction).
pub fn minisum_best_rounding(
    chains: &[PseudoChain],
    costs: &[Penalty],
    slots: u32,
    grid: Vec<f64>,
    thetas: &[f64],
) -> Result<MinisumSchedule> {
    best_rounding(chains, costs, slots, grid, thetas, true, Solver::Paths, None).map(|(out, _)| out)
}

/// [`minisum_best_rounding`] without the certified bound's second solve (epoch re-planning needs
/// only the schedule): `lower_bound` is then just `Σ_j w_j(Q_j)`. The relaxation is solved cold by
/// the network simplex method ([`MinCostFlow::solve_simplex`], the engine policy's solver; why:
/// its module docs): the same optimal cost as [`minisum_best_rounding`]'s successive shortest paths,
/// and a deterministic function of the instance, though among equal-cost optima it may pick another
/// flow. If the simplex fails (its pivot budget), successive shortest paths run.
pub fn minisum_for_planning(
    chains: &[PseudoChain],
    costs: &[Penalty],
    slots: u32,
    grid: Vec<f64>,
    thetas: &[f64],
) -> Result<MinisumSchedule> {
    best_rounding(chains, costs, slots, grid, thetas, false, Solver::Simplex, None).map(|(out, _)| out)
}

/// [`minisum_for_planning`] warm-started from the basis the last call with the same `basis` ended
/// with (a scratch the caller keeps, e.g. per pool; `keys` name the chains across calls, one per
/// chain, such as a hash of the flow id: a chain's arcs start in the state its key's had). Exactly
/// [`minisum_for_planning`]'s schedule: the warm optimum is used only when the certificate
/// [`MinCostFlow::unique_on`] shows that every optimum charges the chains alike, so the cold
/// simplex's charges are the same (up to float rounding in the last bits: the charges are sums
/// taken in another order, and a deadline could move only if a chain's cumulative charge fell
/// within that rounding of `θ·V_j` on the `1e-12`-relative slack's edge); otherwise the cold
/// simplex runs. The property test `planning_from_a_basis_is_the_cold_plan` pins it. A wrong or
/// missing key costs only speed.
pub fn minisum_for_planning_from(
    chains: &[PseudoChain],
    costs: &[Penalty],
    slots: u32,
    grid: Vec<f64>,
    thetas: &[f64],
    keys: &[u64],
    basis: &mut PlanningBasis,
) -> Result<MinisumSchedule> {
    plan_from(chains, costs, slots, &grid, thetas, keys, basis)?;
    let r = &basis.rounding;
    let q: Vec<f64> = chains.iter().map(|c| chain_lower_bound(c, slots)).collect();
    let trivial = trivial_bound(costs, &q);
    let charged = r.charges.chunks_exact(grid.len()).map(<[f64]>::to_vec).collect();
    let meets = r.best.completions().iter().zip(&r.best_deadlines).all(|(&c, &d)| within(c, 2.0 * d));
    let schedule =
        DeadlineSchedule { chains: r.best.to_chains(), order: r.best_order.clone(), meets_doubled_deadlines: meets };
    Ok(MinisumSchedule {
        grid,
        theta: r.theta,
        relaxation_cost: r.relaxation_cost,
        lower_bound: 0.0f64.max(trivial),
        charged,
        deadlines: r.best_deadlines.clone(),
        schedule,
        objective: r.objective,
    })
}

/// [`minisum_for_planning_from`] for the engine policy: the result stays in `basis` (read it with
/// [`planned`]), and once warm nothing is allocated per plan (issue 20). The same operations in the
/// same order as [`best_rounding`]'s planning path, on kept vectors: the charges come from the
/// certified forward fill (`fill`: the relaxation's only optimum, so the cold simplex's charges up to
/// float rounding, which the robustness check covers) or else from the solved network's arcs (an
/// interval without an arc charges 0, which adds nothing to the cumulative charge), and the greedy
/// runs on a flat schedule ([`Greedy`]).
pub(crate) fn plan_from(
    chains: &[PseudoChain],
    costs: &[Penalty],
    slots: u32,
    grid: &[f64],
    thetas: &[f64],
    keys: &[u64],
    basis: &mut PlanningBasis,
) -> Result<()> {
    check_rounding_inputs(chains, costs, grid, thetas)?;
    let r = &mut basis.rounding;
    r.greedy.prepare_bounds(chains, slots, &mut r.q, &mut r.volumes);
    plan_with_inputs(chains, costs, slots, grid, thetas, keys, basis)
}

/// [`geometric_grid_into`] into `grid`, then [`plan_from`] on it, computing the chains' lower
/// bounds `Q_j` (and volumes) once for both (issue 20: the grid's horizon reads `max_j Q_j`, and
/// the relaxation and the rounding read every `Q_j`), and the grid's offsets only when the ratio
/// changes or a horizon needs more of them. The same grid and plan as the two calls.
#[allow(clippy::too_many_arguments)]
pub(crate) fn plan_on_geometric_grid(
    chains: &[PseudoChain],
    costs: &[Penalty],
    slots: u32,
    ratio: f64,
    thetas: &[f64],
    keys: &[u64],
    basis: &mut PlanningBasis,
    grid: &mut Vec<f64>,
) -> Result<()> {
    if !(ratio.is_finite() && ratio > 1.0) {
        return Err(Error::job("minisum grid ratio", ratio, "a finite number > 1"));
    }
    let r = &mut basis.rounding;
    r.greedy.prepare_bounds(chains, slots, &mut r.q, &mut r.volumes);
    // `horizon_units(chains, slots, 1.0)` from the same `Q_j`.
    let horizon = horizon_from(r.q.iter().copied().fold(0.0, f64::max), chains.len(), 1.0);
    if r.offsets_ratio.to_bits() != ratio.to_bits() {
        r.offsets.clear();
        r.offsets_ratio = ratio;
    }
    // The offsets up to the first one at or past the horizon (which ends `geometric_grid_into`'s loop).
    while r.offsets.last().map_or(true, |&o| o < horizon) {
        let next = r.offsets.last().map_or(1.0, |&o| next_offset(o, ratio));
        r.offsets.push(next);
    }
    grid.clear();
    grid.extend(r.offsets.iter().take_while(|&&o| o < horizon));
    grid.push(horizon);
    check_rounding_inputs(chains, costs, grid, thetas)?;
    plan_with_inputs(chains, costs, slots, grid, thetas, keys, basis)
}

/// [`plan_from`] once `basis.rounding` holds the chains' `Q_j` and volumes and its greedy is
/// prepared for them ([`Greedy::prepare_bounds`]).
fn plan_with_inputs(
    chains: &[PseudoChain],
    costs: &[Penalty],
    slots: u32,
    grid: &[f64],
    thetas: &[f64],
    keys: &[u64],
    basis: &mut PlanningBasis,
) -> Result<()> {
    let mut r = std::mem::take(&mut basis.rounding);
    let intervals = grid.len();
    r.charges.clear();
    if r.fill.certify(&r.q, &r.volumes, slots, grid, costs, thetas) {
        // The certified fill is the network's only optimum (module docs of `fill`): no network.
        basis.filled += 1;
        r.fill.swap_charges(&mut r.charges);
        r.relaxation_cost = r.fill.cost();
    } else {
        let charge = |j: usize, k: usize| costs[j].eval(grid[k]);
        let solved = solve_planning_network(&r.q, &r.volumes, slots, grid, &charge, thetas, keys, basis)
            .or_else(|_| solve_network(chains, &r.q, &r.volumes, slots, grid, charge, Solver::Paths));
        let (relaxation_cost, net, arcs) = match solved {
            Ok(solved) => solved,
            Err(e) => {
                basis.rounding = r;
                return Err(e);
            }
        };
        r.charges.resize(chains.len() * intervals, 0.0);
        for (j, chain_arcs) in arcs.iter().enumerate() {
            for &(k, arc) in chain_arcs {
                r.charges[j * intervals + k] = net.flow_on(arc);
            }
        }
        r.relaxation_cost = relaxation_cost;
        // Back to the scratch, for the next plan's network.
        basis.network.net = net;
        basis.network.arcs = arcs;
    }
    let outcome = round_into(&mut r, chains, costs, slots, grid, thetas);
    basis.rounding = r;
    outcome
}

/// The best plan [`plan_from`] left in `basis`: the greedy schedule and its priority order.
pub(crate) fn planned(basis: &PlanningBasis) -> (&FlatSchedule, &[usize]) {
    (&basis.rounding.best, &basis.rounding.best_order)
}

/// [`best_rounding`]'s loop over the fractions, on `r`'s vectors, from the relaxation's charges
/// (`r.charges`), with `r.greedy` prepared for `chains` ([`Greedy::prepare_bounds`]). The same deadlines, orders and greedies, found with less work (issue 20): every
/// fraction's deadline of a chain in one pass over its row ([`crossings_into`]), and each fraction's
/// order by a counting sort of the deadlines' grid indices over the chains sorted once by `Q`
/// ([`order_by_intervals`]).
fn round_into(
    r: &mut Rounding,
    chains: &[PseudoChain],
    costs: &[Penalty],
    slots: u32,
    grid: &[f64],
    thetas: &[f64],
) -> Result<()> {
    let (m, intervals) = (chains.len(), grid.len());
    let Rounding { crossings, thresholds, charges, volumes, .. } = &mut *r;
    crossings.clear();
    crossings.resize(thetas.len() * m, 0);
    for (j, &volume) in volumes.iter().enumerate() {
        thresholds.clear();
        thresholds.extend(thetas.iter().map(|&theta| theta * volume * (1.0 - FLOAT_SLACK)));
        let row = &charges[j * intervals..(j + 1) * intervals];
        crossings_into(row, thresholds, &mut crossings[j..], m);
    }
    decreasing_order_into(&r.q, &mut r.q_keys, &mut r.by_q);
    r.tried.clear();
    let mut best = None;
    for (t, &theta) in thetas.iter().enumerate() {
        let crossings = &r.crossings[t * m..(t + 1) * m];
        // The order is a function of the deadlines (and `by_q`): a fraction with an earlier one's
        // deadlines has its order, which was scheduled already (or skipped as one that was).
        if r.crossings[..t * m].chunks_exact(m).any(|earlier| earlier == crossings) {
            continue;
        }
        order_by_intervals(&r.by_q, crossings, intervals, &mut r.counts, &mut r.order);
        // As in `best_rounding`: an order already scheduled is not scheduled again.
        if r.tried.chunks_exact(m).any(|o| o == r.order.as_slice()) {
            continue;
        }
        r.tried.extend_from_slice(&r.order);
        r.greedy.schedule_prepared(chains, &r.order, slots, &mut r.schedule)?;
        let objective: f64 = r.schedule.completions().iter().zip(costs).map(|(&c, w)| w.eval(c)).sum();
        if best.is_none() || objective < r.objective {
            best = Some(t);
            r.theta = theta;
            r.objective = objective;
            std::mem::swap(&mut r.order, &mut r.best_order);
            std::mem::swap(&mut r.schedule, &mut r.best);
        }
    }
    let Some(t) = best else {
        return Err(Error::job("minisum rounding fraction", "[]", "at least one fraction"));
    };
    // Only the kept fraction's deadlines are read.
    r.best_deadlines.clear();
    r.best_deadlines.extend(r.crossings[t * m..(t + 1) * m].iter().map(|&k| grid[k]));
    Ok(())
}

/// [`rounding_interval`] of one chain's charges over the whole grid (`row`, `K` entries) for every
/// threshold at once, as grid indices (the horizon, `K − 1`, where the charge never reaches it: the
/// deadline is then `T_{K−1}` either way): `out[t · stride]` for `thresholds[t]`. The cumulative
/// charge is summed in the same order as `rounding_interval` sums it, so each index is the one a
/// pass of its own finds.
fn crossings_into(row: &[f64], thresholds: &[f64], out: &mut [usize], stride: usize) {
    const NONE: usize = usize::MAX;
    for t in 0..thresholds.len() {
        out[t * stride] = NONE;
    }
    let mut left = thresholds.len();
    let mut cumulative = 0.0;
    for (k, &f) in row.iter().enumerate() {
        cumulative += f;
        if f > 0.0 {
            for (t, &threshold) in thresholds.iter().enumerate() {
                let at = &mut out[t * stride];
                if *at == NONE && cumulative >= threshold {
                    *at = k;
                    left -= 1;
                }
            }
            if left == 0 {
                return;
            }
        }
    }
    for t in 0..thresholds.len() {
        if out[t * stride] == NONE {
            out[t * stride] = row.len().saturating_sub(1);
        }
    }
}

/// Fig. 6 without the certified bound, warm-started from an earlier solution by successive shortest
/// paths ([`MinCostFlow::solve_warm`]; `None`: the cold successive-shortest-path solve), also
/// returning the solved network's prices for the next warm start. The engine policy no longer uses it
/// (its plans would depend on the history of plans; [`minisum_for_planning`] solves cold faster).
///
/// The relaxation's optimal cost is the cold solve's (the warm solver ends with the same optimality
/// certificate, [`MinCostFlow::solve_warm`]); where the relaxation has several optimal flows the warm
/// solve may return another one than the cold solve, and the rounding then sees other charges.
/// Every optimal flow carries the paper's guarantee (digest §5 invariant 8 and Corollary 1 only use
/// optimality), so the schedule is as good in the paper's sense; the property test
/// `warm_start_is_as_good_as_cold` checks the equal cost and the invariants on random instances. If the
/// warm solve fails (its iteration budget), the cold solve runs.
pub fn minisum_for_planning_warm(
    chains: &[PseudoChain],
    costs: &[Penalty],
    slots: u32,
    grid: Vec<f64>,
    thetas: &[f64],
    warm: Option<&WarmStart>,
) -> Result<(MinisumSchedule, Prices)> {
    best_rounding(chains, costs, slots, grid, thetas, false, warm.map_or(Solver::Paths, Solver::Warm), None)
}

/// The checks every rounding path makes before building a network: the chains and their costs, the
/// rounding fractions (strictly between 0 and 1, at least one) and the grid (increasing, positive, and
/// small enough for the network).
fn check_rounding_inputs(chains: &[PseudoChain], costs: &[Penalty], grid: &[f64], thetas: &[f64]) -> Result<()> {
    check_inputs(chains, costs)?;
    if let Some(theta) = thetas.iter().find(|t| !(**t > 0.0 && **t < 1.0)).or(thetas.is_empty().then_some(&0.0)) {
        return Err(Error::job("minisum rounding fraction", theta, "numbers strictly between 0 and 1 (at least one)"));
    }
    let increasing = grid.first().is_some_and(|&t| t > 0.0) && grid.windows(2).all(|w| w[0] < w[1]);
    if !increasing || grid.len() * chains.len() > MAX_ARCS {
        return Err(Error::job(
            "minisum grid",
            format!("{} points", grid.len()),
            format!("increasing points > 0, at most {MAX_ARCS} chain-interval arcs"),
        ));
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn best_rounding(
    chains: &[PseudoChain],
    costs: &[Penalty],
    slots: u32,
    grid: Vec<f64>,
    thetas: &[f64],
    certify: bool,
    solver: Solver<'_>,
    planning: Option<(&[u64], &mut PlanningBasis)>,
) -> Result<(MinisumSchedule, Prices)> {
    check_rounding_inputs(chains, costs, &grid, thetas)?;
    let m = chains.len();
    let q: Vec<f64> = chains.iter().map(|c| chain_lower_bound(c, slots)).collect();
    let volumes: Vec<f64> = chains.iter().map(PseudoChain::volume).collect();
    let charge = |j: usize, k: usize| costs[j].eval(grid[k]);
    // A failed warm start or simplex (an iteration budget) falls back to successive shortest paths.
    let mut planning = planning;
    let (relaxation_cost, net, arcs) = match (solver, planning.as_mut()) {
        (Solver::Simplex, Some((keys, basis))) => {
            solve_planning_network(&q, &volumes, slots, &grid, &charge, thetas, keys, basis)
                .or_else(|_| solve_network(chains, &q, &volumes, slots, &grid, charge, Solver::Paths))?
        }
        (Solver::Paths, _) => solve_network(chains, &q, &volumes, slots, &grid, charge, Solver::Paths)?,
        (solver, _) => solve_network(chains, &q, &volumes, slots, &grid, charge, solver)
            .or_else(|_| solve_network(chains, &q, &volumes, slots, &grid, charge, Solver::Paths))?,
    };
    let prices = network_prices(&net, m, grid.len());
    let certified = if certify {
        solve_network(
            chains,
            &q,
            &volumes,
            slots,
            &grid,
            |j, k| cheapest_in_interval(&costs[j], q[j], if k == 0 { 0.0 } else { grid[k - 1] }),
            Solver::Paths,
        )?
        .0
    } else {
        0.0
    };
    let trivial = trivial_bound(costs, &q);
    let horizon = grid.last().copied().unwrap_or(0.0);
    let mut charged = vec![vec![0.0; grid.len()]; m];
    for j in 0..m {
        for &(k, arc) in &arcs[j] {
            charged[j][k] = net.flow_on(arc);
        }
    }
    let mut best: Option<(f64, Vec<f64>, DeadlineSchedule, f64)> = None;
    let mut tried: Vec<Vec<usize>> = Vec::with_capacity(thetas.len());
    for &theta in thetas {
        let deadlines: Vec<f64> = (0..m)
            .map(|j| {
                let charges = charged[j].iter().copied().enumerate();
                rounding_interval(charges, theta * volumes[j] * (1.0 - FLOAT_SLACK)).map_or(horizon, |(k, ..)| grid[k])
            })
            .collect();
        // The greedy's schedule is a function of the order the deadlines give: a fraction whose
        // deadlines give the order of an earlier one has the same schedule and objective, which
        // cannot replace the earlier (ties keep the earlier fraction), so it is not scheduled again.
        let order = deadline_order_by(&q, &deadlines);
        if tried.contains(&order) {
            continue;
        }
        tried.push(order.clone());
        let schedule = schedule_in_deadline_order(chains, &deadlines, order, slots)?;
        let objective = minisum_objective(&schedule, costs);
        if best.as_ref().map_or(true, |b| objective < b.3) {
            best = Some((theta, deadlines, schedule, objective));
        }
    }
    let (theta, deadlines, schedule, objective) =
        best.ok_or_else(|| Error::job("minisum rounding fraction", "[]", "at least one fraction"))?;
    let lower_bound = certified.max(trivial);
    if let Some((_, basis)) = planning {
        // Back to the scratch, for the next plan's network.
        basis.network.net = net;
        basis.network.arcs = arcs;
    }
    Ok((MinisumSchedule { grid, theta, relaxation_cost, lower_bound, charged, deadlines, schedule, objective }, prices))
}

/// `Σ_j w_j(C_j)` of a schedule.
pub fn minisum_objective(schedule: &DeadlineSchedule, costs: &[Penalty]) -> f64 {
    schedule.chains.iter().zip(costs).map(|(s, w)| w.eval(s.completion)).sum()
}

#[cfg(test)]
mod tests {
    use super::super::flow::{Flow, FlowJob};
    use super::super::greedy::tests::{arb_chains, chain, linear};
    use super::super::greedy::ChainSchedule;
    use super::*;
    use proptest::prelude::*;

    /// Digest T7: P = 1, two (2, 1) chains with w_1 = t and w_2 = 10t. cost(f) = 23.5, d = (3, 2),
    /// chain 2 on [0, 2), chain 1 on [2, 4), objective 24.
    #[test]
    fn t7_relaxation_and_rounding() {
        let chains = [chain(&[(2.0, 1)]), chain(&[(2.0, 1)])];
        let costs = [linear(1.0), linear(10.0)];
        let out = minisum(&chains, &costs, 1, 1.0, 0.5).unwrap();
        assert!((out.relaxation_cost - 23.5).abs() < 1e-9, "{}", out.relaxation_cost);
        assert_eq!(out.charged[1][1], 2.0);
        assert_eq!(&out.charged[0][2..4], &[1.0, 1.0]);
        assert_eq!(out.deadlines, vec![3.0, 2.0]);
        assert_eq!(out.schedule.order, vec![1, 0]);
        assert_eq!((out.schedule.chains[0].completion, out.schedule.chains[1].completion), (4.0, 2.0));
        assert_eq!(out.objective, 24.0);
        assert!(out.objective <= 2.0 * out.relaxation_cost * 3.0);
    }

    #[test]
    fn rejects_bad_parameters() {
        let chains = [chain(&[(2.0, 1)])];
        let costs = [linear(1.0)];
        let err = minisum(&chains, &costs, 1, 0.0, 0.5).unwrap_err();
        assert!(err.to_string().contains("minisum grid step"), "{err}");
        let err = minisum(&chains, &costs, 1, 1e-9, 0.5).unwrap_err();
        assert!(err.to_string().contains("chain-slot arcs"), "{err}");
        assert!(minisum(&chains, &costs, 1, 1.0, 1.0).is_err());
        assert!(minisum(&chains, &[], 1, 1.0, 0.5).is_err());
    }

    proptest! {
        /// Digest §5 invariant 8 (Δ = 1): d_j ≥ ⌈Q_j⌉, Σ_{d_l ≤ d_j} V_l ≤ 2P·d_j,
        /// Σ w_j(d_j) ≤ 2·cost(f), and C_j ≤ 3·d_j.
        #[test]
        fn minisum_invariants((chains, slots) in arb_chains(), weights in proptest::collection::vec(1u32..=10, 6)) {
            let costs: Vec<Penalty> = (0..chains.len()).map(|j| linear(f64::from(weights[j]))).collect();
            let out = minisum(&chains, &costs, slots, 1.0, 0.5).unwrap();
            check_invariant_8(&chains, &costs, slots, &out)?;
            // Corollary 1: within 6× of cost(f) (which is within the grid rounding of opt).
            prop_assert!(out.objective <= 6.0 * out.relaxation_cost + 1e-6);
        }
    }

    /// The T7 instance on the compressed grid: with ratio 2 the grid is {1, 2, 4, 8} (Q = 2,
    /// H = 8), charge points coincide with the unit grid's where flow goes, so the result is the
    /// same; the certified bound charges interval starts: chain 2 at w(Q) = 20, chain 1's two units
    /// in (2, 4] at w(2) = 2 each → 22.
    #[test]
    fn t7_on_the_compressed_grid() {
        let chains = [chain(&[(2.0, 1)]), chain(&[(2.0, 1)])];
        let costs = [linear(1.0), linear(10.0)];
        let grid = compressed_grid(&chains, &costs, 1, 2.0).unwrap();
        assert_eq!(grid, vec![1.0, 2.0, 4.0, 8.0]);
        let out = minisum_compressed(&chains, &costs, 1, 2.0, 0.5).unwrap();
        assert_eq!(out.deadlines, vec![4.0, 2.0]);
        assert_eq!(out.objective, 24.0);
        assert!((out.relaxation_cost - 24.0).abs() < 1e-9, "{}", out.relaxation_cost);
        assert!((out.lower_bound - 22.0).abs() < 1e-9, "{}", out.lower_bound);
        let unit = minisum(&chains, &costs, 1, 1.0, 0.5).unwrap();
        assert!((unit.lower_bound - 22.5).abs() < 1e-9, "{}", unit.lower_bound);
    }

    #[test]
    fn compressed_grid_has_anchors_and_bounds() {
        let chains = [chain(&[(30.0, 1)]), chain(&[(2.0, 1)])];
        let costs = [Penalty::Tardiness { slope: 1.0, due: 20.5 }, Penalty::Steps(vec![(6.5, 1.0), (9.0, 2.0)])];
        let grid = compressed_grid(&chains, &costs, 1, 2.0).unwrap();
        // H = 2·2·30 = 120; Q = 30 and 2; step dues ⌊6.5⌋ = 6, 9; tardiness anchor 20 + 1, 2, 4, ….
        for point in [2.0, 6.0, 9.0, 20.0, 21.0, 22.0, 24.0, 28.0, 30.0, 32.0, 36.0, 52.0, 64.0, 84.0, 120.0] {
            assert!(grid.contains(&point), "{point} missing from {grid:?}");
        }
        assert_eq!(grid.last(), Some(&120.0));
        assert!(grid.len() < 30, "{}", grid.len());
        assert!(compressed_grid(&chains, &costs, 1, 1.0).is_err());
        let err = minisum_on_grid(&chains, &costs, 1, vec![2.0, 1.0], 0.5).unwrap_err();
        assert!(err.to_string().contains("minisum grid"), "{err}");
    }

    /// The change from instance A to B of [`changed_instance`]: per chain a work scale and whether
    /// it is dropped, and the shift of linear costs.
    fn arb_change() -> impl Strategy<Value = (Vec<f64>, Vec<bool>, u32)> {
        (
            proptest::collection::vec(0.05f64..1.0, 6),
            proptest::collection::vec(proptest::bool::weighted(0.2), 6),
            0u32..4,
        )
    }

    fn arb_costs(count: usize) -> impl Strategy<Value = Vec<Penalty>> {
        let one = prop_oneof![
            (1u32..=10).prop_map(|w| linear(f64::from(w))),
            (1u32..=10, 0u32..=20).prop_map(|(w, d)| Penalty::Tardiness { slope: f64::from(w), due: f64::from(d) }),
            (1u32..=10, 0u32..=15, 1u32..=10).prop_map(|(w, d, e)| Penalty::Steps(vec![
                (f64::from(d), f64::from(w)),
                (f64::from(d + e), f64::from(2 * w))
            ])),
        ];
        proptest::collection::vec(one, count)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// The documented factor: unit ≤ compressed ≤ r · unit for the relaxation, with costs of all
        /// three kinds; both certified bounds are below every greedy order's objective (brute force
        /// over the orders of up to 4 chains) and below the relaxation of their own grid.
        #[test]
        fn compressed_within_ratio_of_unit((chains, slots) in arb_chains(), costs in arb_costs(6), ratio in 1.2f64..3.0) {
            let costs = &costs[..chains.len()];
            let unit = minisum(&chains, costs, slots, 1.0, 0.5).unwrap();
            let fast = minisum_compressed(&chains, costs, slots, ratio, 0.5).unwrap();
            let tol = 1e-6 * unit.relaxation_cost.max(1.0);
            prop_assert!(unit.relaxation_cost <= fast.relaxation_cost + tol, "{} {}", unit.relaxation_cost, fast.relaxation_cost);
            prop_assert!(fast.relaxation_cost <= ratio * unit.relaxation_cost + tol, "{} {}", unit.relaxation_cost, fast.relaxation_cost);
            for out in [&unit, &fast] {
                prop_assert!(out.lower_bound <= out.relaxation_cost + tol);
                prop_assert!(out.lower_bound <= out.objective + tol);
            }
            if chains.len() <= 4 {
                let best = crate::flex::testutil::permutations(chains.len()).iter().map(|order| {
                    let s = super::super::greedy::schedule_in_order(&chains, order, slots).unwrap();
                    s.iter().zip(costs).map(|(c, w)| w.eval(c.completion)).sum::<f64>()
                }).fold(f64::INFINITY, f64::min);
                prop_assert!(unit.lower_bound <= best + tol && fast.lower_bound <= best + tol);
            }
        }

        /// Digest §5 invariant 8 holds on the compressed grid too (the proof only uses grid points).
        #[test]
        fn compressed_minisum_invariants((chains, slots) in arb_chains(), costs in arb_costs(6)) {
            let costs = &costs[..chains.len()];
            let out = minisum_compressed(&chains, costs, slots, 1.5, 0.5).unwrap();
            check_invariant_8(&chains, costs, slots, &out)?;
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(96))]
        /// Warm vs cold (issue 20): solve instance A cold, change it into B (chains dropped, added and
        /// shrunk as an epoch's progress, arrivals and departures do, costs shifted as `now` moves),
        /// then solve B warm from A's solution: the relaxation's cost equals B's cold solve, the
        /// rounded schedule meets digest §5 invariant 8 (the (2, 3) guarantee), and so does every
        /// warm solve chained from it. Aligning by chain identity is the caller's job; here a chain
        /// keeps its position unless dropped.
        #[test]
        fn warm_start_is_as_good_as_cold(
            (chains, slots) in arb_chains(),
            costs in arb_costs(6),
            (shrink, dropped, shift) in arb_change(),
        ) {
            let costs = &costs[..chains.len()];
            let thetas = [0.5]; // invariant 8 is stated for θ = ½; the relaxation does not depend on θ
            let grid_a = geometric_grid(&chains, slots, 1.5).unwrap();
            let (a, prices_a) = minisum_for_planning_warm(&chains, costs, slots, grid_a, &thetas, None).unwrap();
            // B: keep the chains not dropped (at least one), each with its work scaled by `shrink`.
            let (chains_b, costs_b, kept) = changed_instance(&chains, costs, &shrink, &dropped, shift);
            let kept: Vec<usize> = kept.iter().map(|&j| j as usize).collect();
            let warm = WarmStart {
                charged: kept.iter().map(|&j| Some(a.charged[j].clone())).collect(),
                prices: Prices { chains: kept.iter().map(|&j| prices_a.chains[j]).collect(), ..prices_a.clone() },
            };
            let grid_b = geometric_grid(&chains_b, slots, 1.5).unwrap();
            let (cold, _) = minisum_for_planning_warm(&chains_b, &costs_b, slots, grid_b.clone(), &thetas, None).unwrap();
            let (hot, prices_b) = minisum_for_planning_warm(&chains_b, &costs_b, slots, grid_b.clone(), &thetas, Some(&warm)).unwrap();
            let tol = 1e-7 * cold.relaxation_cost.abs().max(1.0);
            prop_assert!((hot.relaxation_cost - cold.relaxation_cost).abs() <= tol, "warm {} cold {}", hot.relaxation_cost, cold.relaxation_cost);
            check_invariant_8(&chains_b, &costs_b, slots, &hot)?;
            // Re-solving B warm from B's own solution keeps the cost (and is the steady state of
            // an epoch where nothing changed).
            let again = WarmStart { charged: hot.charged.iter().cloned().map(Some).collect(), prices: prices_b };
            let (same, _) = minisum_for_planning_warm(&chains_b, &costs_b, slots, grid_b, &thetas, Some(&again)).unwrap();
            prop_assert!((same.relaxation_cost - cold.relaxation_cost).abs() <= tol);
            for (x, y) in same.charged.iter().flatten().zip(hot.charged.iter().flatten()) {
                prop_assert!((x - y).abs() <= 1e-9 * x.abs().max(1.0), "{:?} {:?}", same.charged, hot.charged);
            }
            check_invariant_8(&chains_b, &costs_b, slots, &same)?;
        }
    }

    /// A planning result warm-started from a basis against the cold one: the same schedule, bit for
    /// bit, and the same charges (up to rounding).
    fn same_plan(warm: &MinisumSchedule, cold: &MinisumSchedule) -> std::result::Result<(), TestCaseError> {
        prop_assert_eq!(&warm.grid, &cold.grid);
        prop_assert_eq!(warm.theta, cold.theta);
        prop_assert_eq!(&warm.deadlines, &cold.deadlines);
        prop_assert_eq!(&warm.schedule, &cold.schedule);
        prop_assert_eq!(warm.objective, cold.objective);
        prop_assert_eq!(warm.lower_bound, cold.lower_bound);
        prop_assert!((warm.relaxation_cost - cold.relaxation_cost).abs() <= 1e-9 * cold.relaxation_cost.abs().max(1.0));
        for (w, c) in warm.charged.iter().zip(&cold.charged) {
            for (x, y) in w.iter().zip(c) {
                prop_assert!((x - y).abs() <= 1e-9 * y.abs().max(1.0), "charged {:?} against {:?}", w, c);
            }
        }
        Ok(())
    }

    /// Instance B from A: A's chains but the dropped ones (the first is always kept), each chain's
    /// work scaled by `shrink`, linear costs shifted by `shift`; with the kept chains' indices.
    fn changed_instance(
        chains: &[PseudoChain],
        costs: &[Penalty],
        shrink: &[f64],
        dropped: &[bool],
        shift: u32,
    ) -> (Vec<PseudoChain>, Vec<Penalty>, Vec<u64>) {
        let kept: Vec<usize> = (0..chains.len()).filter(|&j| !dropped[j] || j == 0).collect();
        let chains_b = kept
            .iter()
            .map(|&j| {
                let mut c = chains[j].clone();
                for pj in &mut c.pseudo_jobs {
                    pj.start *= shrink[j];
                    pj.end *= shrink[j];
                    for portion in &mut pj.portions {
                        portion.work *= shrink[j];
                    }
                }
                c
            })
            .collect();
        let costs_b = kept
            .iter()
            .map(|&j| match &costs[j] {
                Penalty::Linear { slope, origin } => {
                    Penalty::Linear { slope: *slope, origin: origin - f64::from(shift) }
                }
                other => other.clone(),
            })
            .collect();
        (chains_b, costs_b, kept.iter().map(|&j| j as u64).collect())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        /// Epoch planning warm-started from the last solve's basis gives exactly the cold plan:
        /// A cold (no basis), B from A's basis, A from B's, B from A's again (the same basis twice
        /// in a row for B's second solve's own basis), each compared with `minisum_for_planning`.
        #[test]
        fn planning_from_a_basis_is_the_cold_plan(
            (chains, slots) in arb_chains(),
            costs in arb_costs(6),
            (shrink, dropped, shift) in arb_change(),
            keep_keys in proptest::bool::ANY,
        ) {
            let costs = &costs[..chains.len()];
            let thetas = [0.3, 0.5, 0.7];
            let keys_a: Vec<u64> = (0..chains.len() as u64).collect();
            let (chains_b, costs_b, keys_b) = changed_instance(&chains, costs, &shrink, &dropped, shift);
            // Without stable keys the warm start is only a worse guess: still the cold plan.
            let keys_b = if keep_keys { keys_b } else { keys_b.iter().map(|k| k + 100).collect() };
            let mut basis = PlanningBasis::default();
            let sequence = [(&chains[..], costs, &keys_a), (&chains_b[..], &costs_b[..], &keys_b), (&chains[..], costs, &keys_a), (&chains_b[..], &costs_b[..], &keys_b), (&chains_b[..], &costs_b[..], &keys_b)];
            for (c, w, keys) in sequence {
                let grid = geometric_grid(c, slots, 1.5).unwrap();
                let cold = minisum_for_planning(c, w, slots, grid.clone(), &thetas).unwrap();
                let warm = minisum_for_planning_from(c, w, slots, grid, &thetas, keys, &mut basis).unwrap();
                same_plan(&warm, &cold)?;
            }
            // Every plan solved once: by the certified fill, or by the network, the first network
            // solve without a basis (a fill records none).
            let networks = basis.counts.iter().sum::<u64>();
            prop_assert_eq!(networks + basis.filled, 5);
            prop_assert_eq!(basis.counts[2], u64::from(networks > 0));
        }

        /// Linear costs only, so the forward fill is tried on every plan: whether certified or
        /// not, each plan of the sequence is the cold simplex's (the same deadlines and schedule,
        /// the same charges up to rounding).
        #[test]
        fn a_certified_fill_is_the_cold_plan(
            (chains, slots) in arb_chains(),
            slopes in proptest::collection::vec(1u32..=10, 6),
            (shrink, dropped, shift) in arb_change(),
        ) {
            let costs: Vec<Penalty> = slopes[..chains.len()].iter().map(|&w| linear(f64::from(w))).collect();
            let thetas = [0.3, 0.5, 0.7];
            let keys_a: Vec<u64> = (0..chains.len() as u64).collect();
            let (chains_b, costs_b, keys_b) = changed_instance(&chains, &costs, &shrink, &dropped, shift);
            let mut basis = PlanningBasis::default();
            for (c, w, keys) in [(&chains[..], &costs[..], &keys_a), (&chains_b[..], &costs_b[..], &keys_b), (&chains[..], &costs[..], &keys_a)] {
                let grid = geometric_grid(c, slots, 1.5).unwrap();
                let cold = minisum_for_planning(c, w, slots, grid.clone(), &thetas).unwrap();
                let planned = minisum_for_planning_from(c, w, slots, grid, &thetas, keys, &mut basis).unwrap();
                same_plan(&planned, &cold)?;
            }
            prop_assert_eq!(basis.counts.iter().sum::<u64>() + basis.filled, 3);
        }

        /// At the engine soak's scale (up to 20 chains of up to four pseudo-jobs, odd works and
        /// slopes, many chains per slot, so most prefixes are tight and chains straddle blocks:
        /// the near-zero cycles the proof's longest paths tolerate, `fill::relax`): wherever the
        /// fill is certified, its charges are the cold simplex's, and the plan is the cold one.
        #[test]
        fn a_certified_fill_is_the_cold_plan_at_scale(
            slots in 1u32..=12,
            parts in proptest::collection::vec(proptest::collection::vec((1u32..=97, 1u64..=12), 1..5), 1..=20),
            slopes in proptest::collection::vec(1u32..=30, 20),
        ) {
            let chains: Vec<PseudoChain> = parts
                .iter()
                .map(|c| chain(&c.iter().map(|&(w, b)| (f64::from(w) * 0.37, b.min(u64::from(slots)))).collect::<Vec<_>>()))
                .collect();
            let costs: Vec<Penalty> = slopes[..chains.len()].iter().map(|&w| linear(f64::from(w) * 0.3)).collect();
            let thetas = [0.3, 0.5, 0.7];
            let grid = geometric_grid(&chains, slots, 1.5).unwrap();
            let q: Vec<f64> = chains.iter().map(|c| chain_lower_bound(c, slots)).collect();
            let volumes: Vec<f64> = chains.iter().map(PseudoChain::volume).collect();
            let mut fill = ForwardFill::default();
            let cold = minisum_for_planning(&chains, &costs, slots, grid.clone(), &thetas).unwrap();
            if fill.certify(&q, &volumes, slots, &grid, &costs, &thetas) {
                let delta = 1e-9 * volumes.iter().sum::<f64>().max(1.0);
                for (j, row) in cold.charged.iter().enumerate() {
                    for (k, &c) in row.iter().enumerate() {
                        let x = fill.charges()[j * grid.len() + k];
                        prop_assert!((x - c).abs() <= delta, "chain {j} interval {k}: fill {x}, simplex {c}");
                    }
                }
            }
            let keys: Vec<u64> = (0..chains.len() as u64).collect();
            let planned = minisum_for_planning_from(&chains, &costs, slots, grid, &thetas, &keys, &mut PlanningBasis::default()).unwrap();
            same_plan(&planned, &cold)?;
        }
    }

    /// Session 17's `round_into` (before the one-pass crossings, the counting sort and the
    /// staircase greedy), kept as the oracle of the rounding: per fraction, the deadlines by
    /// `rounding_interval`, the order by `deadline_order_by`, the greedy on the general
    /// `Utilisation` (`schedule_in_order`). Returns `(θ, deadlines, order, schedule, objective)`.
    #[allow(clippy::type_complexity)]
    fn oracle_rounding(
        chains: &[PseudoChain],
        costs: &[Penalty],
        slots: u32,
        grid: &[f64],
        thetas: &[f64],
        charges: &[f64],
    ) -> Option<(f64, Vec<f64>, Vec<usize>, Vec<ChainSchedule>, f64)> {
        let (m, intervals) = (chains.len(), grid.len());
        let q: Vec<f64> = chains.iter().map(|c| chain_lower_bound(c, slots)).collect();
        let horizon = grid.last().copied().unwrap_or(0.0);
        let mut tried: Vec<Vec<usize>> = Vec::new();
        let mut best: Option<(f64, Vec<f64>, Vec<usize>, Vec<ChainSchedule>, f64)> = None;
        for &theta in thetas {
            let deadlines: Vec<f64> = (0..m)
                .map(|j| {
                    let row = charges[j * intervals..(j + 1) * intervals].iter().copied().enumerate();
                    rounding_interval(row, theta * chains[j].volume() * (1.0 - FLOAT_SLACK))
                        .map_or(horizon, |(k, ..)| grid[k])
                })
                .collect();
            let order = deadline_order_by(&q, &deadlines);
            if tried.contains(&order) {
                continue;
            }
            tried.push(order.clone());
            let schedule = super::super::greedy::schedule_in_order(chains, &order, slots).unwrap();
            let objective: f64 = schedule.iter().zip(costs).map(|(s, w)| w.eval(s.completion)).sum();
            if best.as_ref().map_or(true, |b| objective < b.4) {
                best = Some((theta, deadlines, order, schedule, objective));
            }
        }
        best
    }

    /// A chain of one of three kinds: one pseudo-job of one job (`chain`), one pseudo-job of
    /// several jobs (a flow without edges), or several pseudo-jobs (a flow with edges).
    fn arb_any_chain() -> impl Strategy<Value = PseudoChain> {
        let jobs = proptest::collection::vec((1u32..=40, 1u32..=4), 1..4);
        (0u8..3, 1u32..=40, 1u64..=9, jobs).prop_map(|(kind, work, bound, jobs)| match kind {
            0 => chain(&[(f64::from(work) * 0.25, bound)]),
            _ => {
                let flow_jobs: Vec<FlowJob> =
                    jobs.iter().map(|&(w, d)| FlowJob { work: f64::from(w) * 0.25, max_parallelism: d }).collect();
                let edges: Vec<(usize, usize)> =
                    if kind == 2 { (1..flow_jobs.len()).map(|i| (i - 1, i)).collect() } else { Vec::new() };
                PseudoChain::from_flow(&Flow::new(flow_jobs, &edges, Penalty::Zero, 4).unwrap())
            }
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]
        /// `round_into` gives the oracle's fraction, deadlines, order, schedule and objective bit for
        /// bit, from arbitrary charges (zero, quarters of a chain's volume, a threshold exactly, or
        /// arbitrary), fractions in any order with repeats, singleton
        /// chains only (the staircase greedy) or mixed with chains of several pseudo-jobs (the
        /// general one), one `Rounding` reused across three instances.
        #[test]
        fn the_rounding_is_the_oracles(
            instances in proptest::collection::vec((
                proptest::collection::vec(arb_any_chain(), 1..20),
                any::<bool>(),
                1u32..=8,
                2usize..=12,
                proptest::collection::vec((0u8..8, 0.0f64..1.0), 20 * 12),
                proptest::collection::vec(1u32..=9, 1..5),
                proptest::collection::vec(1u32..=10, 20),
            ), 3),
        ) {
            let mut r = Rounding::default();
            for (chains, singletons, slots, points, cells, tenths, slopes) in instances {
                let chains: Vec<PseudoChain> = if singletons {
                    chains.into_iter().filter(|c| c.pseudo_jobs.len() == 1).collect()
                } else {
                    chains
                };
                if chains.is_empty() {
                    continue;
                }
                let slots = slots.max(chains.iter().flat_map(|c| &c.pseudo_jobs).flat_map(|k| &k.portions).map(|p| p.max_parallelism).max().unwrap_or(1));
                let (m, intervals) = (chains.len(), points);
                let grid: Vec<f64> = (1..=points).map(|k| 1.5f64.powi(k as i32)).collect();
                let thetas: Vec<f64> = tenths.iter().map(|&t| f64::from(t) / 10.0).collect();
                let costs: Vec<Penalty> = slopes[..m].iter().map(|&w| linear(f64::from(w))).collect();
                let mut charges = vec![0.0; m * intervals];
                for j in 0..m {
                    let volume = chains[j].volume();
                    for k in 0..intervals {
                        let (kind, x) = cells[j * 12 + k];
                        charges[j * intervals + k] = match kind {
                            0..=3 => 0.0,
                            4 | 5 => f64::from(kind - 3) * volume / 4.0,
                            // A threshold exactly (met only with no charge before it).
                            6 => thetas[k % thetas.len()] * volume * (1.0 - FLOAT_SLACK),
                            _ => x * volume / 2.0,
                        };
                    }
                }
                r.q.clear();
                r.q.extend(chains.iter().map(|c| chain_lower_bound(c, slots)));
                r.volumes.clear();
                r.volumes.extend(chains.iter().map(PseudoChain::volume));
                r.charges.clone_from(&charges);
                r.greedy.prepare(&chains);
                round_into(&mut r, &chains, &costs, slots, &grid, &thetas).unwrap();
                let (theta, deadlines, order, schedule, objective) =
                    oracle_rounding(&chains, &costs, slots, &grid, &thetas, &charges).unwrap();
                prop_assert_eq!(r.theta.to_bits(), theta.to_bits());
                prop_assert_eq!(r.objective.to_bits(), objective.to_bits());
                prop_assert_eq!(
                    r.best_deadlines.iter().map(|d| d.to_bits()).collect::<Vec<_>>(),
                    deadlines.iter().map(|d| d.to_bits()).collect::<Vec<_>>()
                );
                prop_assert_eq!(&r.best_order, &order);
                prop_assert_eq!(
                    super::super::greedy::tests::bits(&r.best.to_chains()),
                    super::super::greedy::tests::bits(&schedule)
                );
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        /// `plan_on_geometric_grid` is `geometric_grid_into` then `plan_from`: the same grid and the
        /// same plan (fraction, objective, deadlines, order, schedule) bit for bit, on one basis
        /// each kept across a sequence of instances (singletons only or mixed with flows with and
        /// without edges), ratios changing or not between them (the offsets kept or recomputed),
        /// linear costs (the fill's path) or tardiness (the network's); chains with no pseudo-job
        /// (no work) too, which leave `Q = 0` and errors to both.
        #[test]
        fn the_geometric_plan_is_grid_then_plan(
            instances in proptest::collection::vec((
                proptest::collection::vec(arb_any_chain(), 1..20),
                any::<bool>(),
                1u32..=8,
                0usize..4,
                proptest::collection::vec(1u32..=10, 20),
                any::<bool>(),
            ), 4),
            empty in any::<bool>(),
        ) {
            let ratios = [1.5, 1.5, 2.0, 1.25];
            let thetas = [0.3, 0.5, 0.7];
            let (mut basis, mut reference) = (PlanningBasis::default(), PlanningBasis::default());
            let (mut grid, mut expected_grid) = (Vec::new(), Vec::new());
            for (chains, singletons, slots, ratio, slopes, tardy_costs) in instances {
                let mut chains: Vec<PseudoChain> = if singletons {
                    chains.into_iter().filter(|c| c.pseudo_jobs.len() == 1).collect()
                } else {
                    chains
                };
                if empty {
                    chains.push(PseudoChain { pseudo_jobs: Vec::new() });
                }
                let ratio = ratios[ratio];
                let costs: Vec<Penalty> = slopes[..chains.len().min(20)]
                    .iter()
                    .map(|&w| if tardy_costs { tardy(f64::from(w)) } else { linear(f64::from(w)) })
                    .chain(std::iter::repeat(linear(1.0)))
                    .take(chains.len())
                    .collect();
                let keys: Vec<u64> = (0..chains.len() as u64).collect();
                let got = plan_on_geometric_grid(&chains, &costs, slots, ratio, &thetas, &keys, &mut basis, &mut grid);
                let want = geometric_grid_into(&chains, slots, ratio, &mut expected_grid)
                    .and_then(|()| plan_from(&chains, &costs, slots, &expected_grid, &thetas, &keys, &mut reference));
                prop_assert_eq!(got.is_ok(), want.is_ok());
                prop_assert_eq!(
                    grid.iter().map(|t| t.to_bits()).collect::<Vec<_>>(),
                    expected_grid.iter().map(|t| t.to_bits()).collect::<Vec<_>>()
                );
                if got.is_err() {
                    continue;
                }
                let (a, b) = (&basis.rounding, &reference.rounding);
                prop_assert_eq!(a.theta.to_bits(), b.theta.to_bits());
                prop_assert_eq!(a.objective.to_bits(), b.objective.to_bits());
                prop_assert_eq!(
                    a.best_deadlines.iter().map(|d| d.to_bits()).collect::<Vec<_>>(),
                    b.best_deadlines.iter().map(|d| d.to_bits()).collect::<Vec<_>>()
                );
                prop_assert_eq!(&a.best_order, &b.best_order);
                prop_assert_eq!(
                    super::super::greedy::tests::bits(&a.best.to_chains()),
                    super::super::greedy::tests::bits(&b.best.to_chains())
                );
            }
        }
    }

    /// Tardiness from 0: linear in effect, but not `Penalty::Linear`, so the network always solves it.
    fn tardy(slope: f64) -> Penalty {
        Penalty::Tardiness { slope, due: 0.0 }
    }

    /// Chains of distinct sizes and weights have one optimal relaxation: planned again from its own
    /// basis, the warm start is certified and used; two identical chains tie, and the certificate
    /// sends the solve to the cold simplex. Both give the cold plan. (Costs the forward fill does not
    /// try, so the network solves every plan.)
    #[test]
    fn a_certified_warm_start_is_used_and_a_tie_solves_cold() {
        let thetas = [0.3, 0.5, 0.7];
        let distinct = [chain(&[(3.0, 1)]), chain(&[(5.0, 2)]), chain(&[(8.0, 1)])];
        let costs = [tardy(1.0), tardy(3.0), tardy(2.0)];
        let tied = [chain(&[(4.0, 1)]), chain(&[(4.0, 1)])];
        let tied_costs = [tardy(1.0), tardy(1.0)];
        // On one slot the tied chains cannot both be charged by T = 5: how the later charge is
        // split between them is free.
        for (chains, costs, slots, certified) in [(&distinct[..], &costs[..], 2, 1), (&tied[..], &tied_costs[..], 1, 0)]
        {
            let keys: Vec<u64> = (0..chains.len() as u64).collect();
            let mut basis = PlanningBasis::default();
            let grid = geometric_grid(chains, slots, 1.5).unwrap();
            let cold = minisum_for_planning(chains, costs, slots, grid.clone(), &thetas).unwrap();
            for _ in 0..2 {
                let warm =
                    minisum_for_planning_from(chains, costs, slots, grid.clone(), &thetas, &keys, &mut basis).unwrap();
                assert_eq!((&warm.deadlines, &warm.schedule), (&cold.deadlines, &cold.schedule));
            }
            assert_eq!((basis.counts, basis.filled), ([certified, 1 - certified, 1], 0), "{chains:?}");
        }
    }

    /// The same instances with linear costs: the distinct chains' relaxation is the certified
    /// forward fill on both plans (no network solved); the tied chains' is not (a tie has no unique
    /// optimum), so the network solves them, cold then from the basis. Every plan is the cold one.
    #[test]
    fn a_certified_fill_skips_the_network_and_a_tie_does_not() {
        let thetas = [0.3, 0.5, 0.7];
        let distinct = [chain(&[(3.0, 1)]), chain(&[(5.0, 2)]), chain(&[(8.0, 1)])];
        let costs = [linear(1.0), linear(3.0), linear(2.0)];
        let tied = [chain(&[(4.0, 1)]), chain(&[(4.0, 1)])];
        let tied_costs = [linear(1.0), linear(1.0)];
        for (chains, costs, slots, filled, counts) in
            [(&distinct[..], &costs[..], 2, 2, [0, 0, 0]), (&tied[..], &tied_costs[..], 1, 0, [0, 1, 1])]
        {
            let keys: Vec<u64> = (0..chains.len() as u64).collect();
            let mut basis = PlanningBasis::default();
            let grid = geometric_grid(chains, slots, 1.5).unwrap();
            let cold = minisum_for_planning(chains, costs, slots, grid.clone(), &thetas).unwrap();
            for _ in 0..2 {
                let planned =
                    minisum_for_planning_from(chains, costs, slots, grid.clone(), &thetas, &keys, &mut basis).unwrap();
                assert_eq!((&planned.deadlines, &planned.schedule), (&cold.deadlines, &cold.schedule));
                assert!((planned.relaxation_cost - cold.relaxation_cost).abs() < 1e-9 * cold.relaxation_cost);
            }
            assert_eq!((basis.counts, basis.filled), (counts, filled), "{chains:?}");
        }
    }

    /// Per chain and interval of `grid`, what a solved network charged.
    fn charges_of(net: &MinCostFlow, arcs: &[Vec<(usize, usize)>], intervals: usize) -> Vec<Vec<f64>> {
        arcs.iter()
            .map(|chain_arcs| {
                let mut row = vec![0.0; intervals];
                for &(k, arc) in chain_arcs {
                    row[k] = net.flow_on(arc);
                }
                row
            })
            .collect()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        /// The grid pruning of the warm solve ([`prune_point`]): wherever it applies, the whole
        /// network's cold optimum (simplex and successive shortest paths) charges nothing past the
        /// cut, and a certified warm solve on the pruned grid gives the whole network's charges
        /// and cost. Instances as in `planning_from_a_basis_is_the_cold_plan`, each planned
        /// after the other's basis; half of them with linear costs only (the engine's default).
        #[test]
        fn a_pruned_certified_solve_gives_the_whole_networks_charges(
            (chains, slots) in arb_chains(),
            mixed in arb_costs(6),
            weights in proptest::collection::vec(1u32..=10, 6),
            only_linear in proptest::bool::ANY,
            (shrink, dropped, shift) in arb_change(),
        ) {
            let costs: Vec<Penalty> = if only_linear {
                weights.iter().take(chains.len()).map(|&w| linear(f64::from(w))).collect()
            } else {
                mixed[..chains.len()].to_vec()
            };
            let keys_a: Vec<u64> = (0..chains.len() as u64).collect();
            let (chains_b, costs_b, keys_b) = changed_instance(&chains, &costs, &shrink, &dropped, shift);
            let thetas = [0.3, 0.5, 0.7];
            let mut basis = PlanningBasis::default();
            let sequence = [(&chains[..], &costs[..], &keys_a), (&chains_b[..], &costs_b[..], &keys_b), (&chains[..], &costs[..], &keys_a), (&chains_b[..], &costs_b[..], &keys_b)];
            for (c, w, keys) in sequence {
                let grid = geometric_grid(c, slots, 1.5).unwrap();
                let q: Vec<f64> = c.iter().map(|c| chain_lower_bound(c, slots)).collect();
                let volumes: Vec<f64> = c.iter().map(PseudoChain::volume).collect();
                let demand: f64 = volumes.iter().sum();
                let charge = |j: usize, k: usize| w[j].eval(grid[k]);
                let cut = prune_point(&q, &volumes, slots, &grid, &charge).map(|(cut, _)| cut);
                let (cold_cost, cold_net, cold_arcs) =
                    solve_network(c, &q, &volumes, slots, &grid, charge, Solver::Simplex).unwrap();
                let cold = charges_of(&cold_net, &cold_arcs, grid.len());
                if let Some(cut) = cut {
                    prop_assert!(cut + 1 < grid.len());
                    let (_, paths_net, paths_arcs) =
                        solve_network(c, &q, &volumes, slots, &grid, charge, Solver::Paths).unwrap();
                    for row in cold.iter().chain(&charges_of(&paths_net, &paths_arcs, grid.len())) {
                        prop_assert!(row[cut + 1..].iter().all(|&f| f <= 1e-9 * demand), "{:?} past {}", row, cut);
                    }
                }
                let before = (basis.counts[0], basis.pruned);
                let (cost, net, arcs) =
                    solve_planning_network(&q, &volumes, slots, &grid, &charge, &thetas, keys, &mut basis).unwrap();
                let pruned = basis.pruned > before.1;
                prop_assert!(!pruned || cut.is_some());
                if pruned {
                    prop_assert_eq!(basis.counts[0], before.0 + 1);
                    prop_assert_eq!(arcs.iter().flatten().map(|&(k, _)| k).max(), cut);
                }
                prop_assert!((cost - cold_cost).abs() <= 1e-9 * cold_cost.abs().max(1.0));
                let warm = charges_of(&net, &arcs, grid.len());
                for (w, c) in warm.iter().zip(&cold) {
                    for (x, y) in w.iter().zip(c) {
                        prop_assert!((x - y).abs() <= 1e-9 * demand.max(1.0), "charged {:?} against {:?}", w, c);
                    }
                }
                basis.network.net = net;
                basis.network.arcs = arcs;
            }
        }
    }

    /// The engine's default shape (costs linear in time, distinct chains; as tardiness from 0, so
    /// that the forward fill leaves them to the network): planned again from its own basis, the
    /// warm solve runs on the pruned grid, is certified, and gives the cold plan; a cost that does
    /// not grow after the cut (a tardiness due past the horizon) is not pruned.
    #[test]
    fn linear_costs_prune_the_warm_solve_and_plan_as_cold() {
        let thetas = [0.3, 0.5, 0.7];
        let chains = [chain(&[(3.0, 1)]), chain(&[(5.0, 2)]), chain(&[(8.0, 1)])];
        let late = Penalty::Tardiness { slope: 1.0, due: 1e6 };
        for (costs, pruned) in
            [(vec![tardy(1.0), tardy(3.0), tardy(2.0)], 1), (vec![linear(1.0), late, linear(2.0)], 0)]
        {
            let keys: Vec<u64> = (0..chains.len() as u64).collect();
            let grid = geometric_grid(&chains, 2, 1.5).unwrap();
            let cold = minisum_for_planning(&chains, &costs, 2, grid.clone(), &thetas).unwrap();
            let mut basis = PlanningBasis::default();
            for _ in 0..2 {
                let warm =
                    minisum_for_planning_from(&chains, &costs, 2, grid.clone(), &thetas, &keys, &mut basis).unwrap();
                assert_eq!((&warm.deadlines, &warm.schedule), (&cold.deadlines, &cold.schedule));
            }
            // Without the pruning the costs tie past the cut, and the certificate refuses the warm
            // optimum too.
            assert_eq!((basis.counts, basis.pruned, basis.filled), ([pruned, 1 - pruned, 1], pruned, 0), "{costs:?}");
        }
    }

    /// Digest §5 invariant 8 for one result: `d_j ≥ ⌈Q_j⌉`, `Σ_{d_l ≤ d_j} V_l ≤ 2P·d_j`,
    /// `C_j ≤ 3·d_j`, every chain's volume charged, and `Σ w_j(d_j) ≤ 2·cost(f)`.
    fn check_invariant_8(
        chains: &[PseudoChain],
        costs: &[Penalty],
        slots: u32,
        out: &MinisumSchedule,
    ) -> std::result::Result<(), TestCaseError> {
        let p = f64::from(slots);
        let mut at_deadlines = 0.0;
        for (j, c) in chains.iter().enumerate() {
            let d = out.deadlines[j];
            prop_assert!(d >= earliest_integer_deadline(chain_lower_bound(c, slots)) - 1e-9);
            let earlier: f64 =
                chains.iter().zip(&out.deadlines).filter(|(_, &e)| e <= d).map(|(c, _)| c.volume()).sum();
            prop_assert!(earlier <= 2.0 * p * d + 1e-9);
            prop_assert!(out.schedule.chains[j].completion <= 3.0 * d + 1e-9);
            at_deadlines += costs[j].eval(d);
            let charged: f64 = out.charged[j].iter().sum();
            prop_assert!((charged - c.volume()).abs() < 1e-9 * c.volume().max(1.0));
        }
        prop_assert!(at_deadlines <= 2.0 * out.relaxation_cost + 1e-6);
        Ok(())
    }
}
