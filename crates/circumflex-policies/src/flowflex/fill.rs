//! The minisum relaxation's fast path (issue 20): a guessed optimum of Fig. 6's network and a proof
//! that it is the only one, with no network built and no simplex run. This module owns the guess,
//! its dual prices and the certificate; [`super::minisum`] falls back to the network simplex
//! whenever the certificate fails, so a plan never depends on which path solved it.
//!
//! **The relaxation in charge form.** Fig. 6's flow charges `x_jk ≥ 0` of chain `j`'s volume `V_j` to
//! grid interval `k ≥ f_j` (the first `T_k ≥ Q_j`) at unit cost `c_jk = w_j(T_k)/V_j`; the sink and
//! down arcs allow any charges whose prefix sums stay within the capacity `C_k = Σ_{l ≤ k} P·(T_l −
//! T_{l−1})` (work charged by `T_k` can run in any earlier interval). So the LP is: minimise
//! `Σ c_jk x_jk` subject to `Σ_k x_jk = V_j` and `S_k = Σ_j Σ_{l ≤ k} x_jl ≤ C_k`.
//!
//! **Two guesses.** The *forward fill*: interval by interval, the prefix capacity left goes to the
//! eligible chains with volume left, steepest cost first (`slope_j / V_j`; only linear costs are
//! tried: for them `c_jk = α_j T_k`, and among chains eligible at both of two intervals the steeper
//! one belongs in the earlier). It is not always optimal: a flat chain charged early may take
//! capacity that a steep chain eligible only later needs. Where its proof fails, the *insertion*:
//! chains steepest first, each at the earliest intervals from its first where every later prefix
//! still has room (optimal in that case, not always either). On the engine soak (issue 20,
//! `docs/performance.md` §23) the forward fill was certified in 91% of the solves, the insertion in
//! 2% more, and the network solved the other 7%; since the longest paths tolerate rounding (below,
//! §25) the network solves 2.1%, whose guesses are really not optimal (by 1e-9 to 1e-3 of the cost).
//!
//! **The proof.** With prices `Π_k = Σ_{m ≥ k} π_m` (`π_m ≥ 0` the dual of prefix `m`, positive only
//! where `S_m = C_m`) and `u_j` (chain `j`'s), the guess is optimal when every arc has reduced cost
//! `rc_jk = c_jk + Π_k − u_j ≥ 0`, with equality on its charges. The prices are constant on the
//! blocks between the guess's tight prefixes, so they are one potential per block, bound by
//! difference constraints (an arc against its chain's charged arc; blocks non-increasing in time).
//! Both the least and the greatest solution with the tail block at 0 are longest-path potentials;
//! their midpoint is feasible and keeps every constraint strict that either keeps strict. Then the
//! guess is the *only* optimum when (conservatively, near-ties counting as ties): every arc without
//! charge has `rc > margin`; and, merging blocks across prefixes whose price is not above the
//! margin, each chain charges at most one interval per merged block and the chains with the merged
//! blocks they charge form a forest. Any optimum must then charge only the charged arcs and fill
//! every priced prefix to capacity, which fixes every merged block's total, and a transportation
//! problem on a forest has one solution. Last, every rounding fraction must cross each chain's
//! `θ·V_j` farther than `δ` from its charges, as on the simplex's warm path
//! (`minisum::rounding_is_robust`), so the cold simplex's charges, equal up to float rounding,
//! give the same deadlines.
//!
//! **Rounding in the longest paths.** A value moves only when it gains more than `10⁻⁴·margin`
//! (`relax`): a cycle of weight 0 whose float sums do not cancel (a chain charged in two blocks
//! gives `(x + w) − w`) no longer refuses an optimal guess, which it did in about 70% of the solves
//! left to the network (`docs/performance.md` §25). The potentials then satisfy every constraint
//! within `64·10⁻⁴·margin`, and a guess that a cycle of small positive weight `ε` shows not optimal
//! is still refused: the slacks of the cycle's constraints sum to `−ε`, so if it holds the
//! constraint of an arc without charge, that arc's reduced cost is below the margin (refused
//! above); otherwise it runs through charged arcs' equalities and "later blocks never dearer"
//! bounds only, each within the margin of tight, so every block boundary it crosses is merged,
//! and since a chain's equalities are differences of one function over its charged blocks (one
//! per merged block), a walk through them that is not a tree walk closes a cycle of chains and
//! merged blocks (refused by the forest check), while a tree walk weighs exactly 0, not `ε`.

use super::greedy::decreasing_order_into;
use super::minisum::{first_interval, interval_capacities, rounding_is_robust, unit_cost};
use crate::flex::metrics::Penalty;
use std::cmp::Ordering;

/// The longest paths' step, as a fraction of the proof's margin: a value moves only when it gains
/// more than `TOLERANCE · margin`. Below `1/64` (a path has at most 64 edges, one per block), so
/// every constraint the paths leave violated is violated by less than the margin (see [`relax`]).
const TOLERANCE: f64 = 1e-4;

/// No potential yet (longest paths).
const UNSET: f64 = f64::NEG_INFINITY;

/// The guesses' working vectors (the forward fill's and the insertion's), kept across plans (no
/// allocation per plan once warm), and the certified guess: [`ForwardFill::swap_charges`] after
/// [`ForwardFill::certify`] returned `true`.
#[derive(Clone, Debug, Default)]
pub(crate) struct ForwardFill {
    /// Per chain and interval (`j · K + k`), the charge.
    charges: Vec<f64>,
    /// The charged arcs `(j, k)`, in the order the guess made them.
    charged: Vec<(usize, usize)>,
    /// Per chain, its first and last charged intervals and the blocks it charges (a bit per block).
    home: Vec<usize>,
    last: Vec<usize>,
    charged_blocks: Vec<u64>,
    /// Per interval, its block's price.
    interval_price: Vec<f64>,
    /// The largest unit cost (the ties' margin scales with it).
    max_cost: f64,
    /// The relaxation's cost `Σ c_jk x_jk`.
    cost: f64,
    /// Per chain and interval, the unit cost `c_jk` (meaningful from the chain's first interval).
    unit: Vec<f64>,
    first: Vec<usize>,
    /// Per chain, its steepness `slope_j / V_j`, and the sort's keys ([`decreasing_order_into`]).
    steepness: Vec<f64>,
    keys: Vec<(i64, usize)>,
    order: Vec<usize>,
    /// The forward fill's chains with volume left, steepest first (a scratch).
    active: Vec<usize>,
    remaining: Vec<f64>,
    /// Per interval, the prefix capacity `C_k` and what the guess leaves of it.
    capacity: Vec<f64>,
    slack: Vec<f64>,
    /// Per interval, its block; per block, its first interval.
    block: Vec<usize>,
    block_start: Vec<usize>,
    /// Difference constraints `P[to] ≥ P[from] + weight[from · B + to]` (the strongest per pair;
    /// `-∞` where none).
    weight: Vec<f64>,
    /// Per block, the blocks with a constraint to it (a bit each): [`longest_to`]'s rows to redo.
    pred: Vec<u64>,
    low: Vec<f64>,
    reach: Vec<f64>,
    price: Vec<f64>,
    /// Per block, its merged block; union-find over chains then merged blocks.
    merged: Vec<usize>,
    set: Vec<usize>,
}

impl ForwardFill {
    /// The charges of the last certified guess, `j · K + k` (the tests'; the planner takes them
    /// with [`Self::swap_charges`]).
    #[cfg(test)]
    pub(crate) fn charges(&self) -> &[f64] {
        &self.charges
    }

    /// Swaps the charges of the last certified guess into `out` (what `out` held becomes this
    /// fill's scratch, cleared before the next guess): the charges without a copy.
    pub(crate) fn swap_charges(&mut self, out: &mut Vec<f64>) {
        std::mem::swap(&mut self.charges, out);
    }

    /// The relaxation's optimal cost of the last certified guess.
    pub(crate) fn cost(&self) -> f64 {
        self.cost
    }

    /// Fills Fig. 6's network for chains with lower bounds `q`, volumes `volumes` and costs `costs`
    /// on `slots` slots and `grid`, and certifies the fill as the relaxation's unique optimum whose
    /// rounding at every fraction in `thetas` is robust (module docs). `false` when any part of the
    /// certificate fails, or a cost is not linear: the caller then solves the network.
    pub(crate) fn certify(
        &mut self,
        q: &[f64],
        volumes: &[f64],
        slots: u32,
        grid: &[f64],
        costs: &[Penalty],
        thetas: &[f64],
    ) -> bool {
        let (m, intervals) = (volumes.len(), grid.len());
        if m == 0 || intervals == 0 || costs.len() != m || q.len() != m {
            return false;
        }
        if !self.prepare(q, volumes, slots, grid, costs) {
            return false;
        }
        // The forward fill, else the insertion (each optimal where the other is not, module docs).
        (self.forward(volumes) && self.prove(volumes) && self.robust(volumes, thetas, intervals))
            || (self.insert(volumes) && self.prove(volumes) && self.robust(volumes, thetas, intervals))
    }

    /// Per chain its first interval, unit costs and steepness, the chains steepest first, and the
    /// prefix capacities: `false` if a cost is not linear, a volume not positive or a chain has no
    /// interval.
    fn prepare(&mut self, q: &[f64], volumes: &[f64], slots: u32, grid: &[f64], costs: &[Penalty]) -> bool {
        let (m, intervals) = (volumes.len(), grid.len());
        self.first.clear();
        self.steepness.clear();
        self.unit.clear();
        self.unit.resize(m * intervals, 0.0);
        let mut max_cost = 0.0f64;
        for (j, row) in self.unit.chunks_exact_mut(intervals).enumerate() {
            let Penalty::Linear { slope, origin } = costs[j] else { return false };
            let volume = volumes[j];
            if !(volume.is_finite() && volume > 0.0 && slope.is_finite()) {
                return false;
            }
            // As `minisum::build_network_into` reads the first interval and the arc costs
            // (`unit_cost(costs[j].eval(t), volume)`, the linear case's own expression without the
            // match per point: the same bits, in a loop the compiler vectorises).
            let first = first_interval(grid, q[j]);
            if first >= intervals {
                return false;
            }
            self.first.push(first);
            self.steepness.push(slope / volume);
            for (unit, &t) in row.iter_mut().zip(grid) {
                *unit = unit_cost(Penalty::linear_at(slope, origin, t), volume);
            }
            // The margin's largest cost: a linear cost's unit costs are monotone in time (every
            // step below is), so a row's largest is at one of its ends.
            max_cost = max_cost.max(row[0]).max(row[intervals - 1]);
            // The block reduction below reads a chain's cheapest arc in a block at its first
            // interval there: costs must not fall in time. With `slope ≥ 0` they cannot (float
            // subtraction, multiplication by `slope ≥ 0`, the clamp at 0 and the division by
            // `V_j > 0` are all monotone, whatever the origin), so only other slopes are checked.
            if slope < 0.0
                && row[first..]
                    .windows(2)
                    .any(|w| !matches!(w[1].partial_cmp(&w[0]), Some(Ordering::Greater | Ordering::Equal)))
            {
                return false;
            }
        }
        self.max_cost = max_cost;
        // Steepest first, ties by index.
        decreasing_order_into(&self.steepness, &mut self.keys, &mut self.order);
        // The prefix capacities as the network sums its sink arcs.
        self.capacity.clear();
        let mut capacity = 0.0;
        for interval in interval_capacities(grid, slots) {
            capacity += interval;
            self.capacity.push(capacity);
        }
        true
    }

    /// Clears the charges and sets every chain's volume left.
    fn start_guess(&mut self, volumes: &[f64]) {
        self.remaining.clear();
        self.remaining.extend_from_slice(volumes);
        self.charges.clear();
        self.charges.resize(volumes.len() * self.capacity.len(), 0.0);
        self.charged.clear();
    }

    /// The forward fill (module docs); `false` if the grid cannot hold the volume.
    ///
    /// Each interval walks the chains with volume left, steepest first (`active`): a chain filled
    /// is dropped from the walk, where it was only skipped, so the charges are the same
    /// (`forward_reference` in the tests).
    fn forward(&mut self, volumes: &[f64]) -> bool {
        self.start_guess(volumes);
        let intervals = self.capacity.len();
        self.slack.clear();
        self.active.clear();
        self.active.extend_from_slice(&self.order);
        let mut charged = 0.0;
        for k in 0..intervals {
            let capacity = self.capacity[k];
            let mut room = capacity - charged;
            let (mut read, mut write) = (0, 0);
            while read < self.active.len() {
                if room <= 0.0 {
                    break;
                }
                let j = self.active[read];
                read += 1;
                if self.first[j] > k {
                    self.active[write] = j;
                    write += 1;
                    continue;
                }
                // Volume is left (a chain without is dropped): a volume is positive, and what is
                // left after a part is `left − room > 0` for `left > room`.
                let left = self.remaining[j];
                let x = if left <= room {
                    room -= left;
                    self.remaining[j] = 0.0;
                    left
                } else {
                    self.remaining[j] = left - room;
                    self.active[write] = j;
                    write += 1;
                    std::mem::replace(&mut room, 0.0)
                };
                self.charges[j * intervals + k] = x;
                self.charged.push((j, k));
            }
            if write < read {
                self.active.copy_within(read.., write);
                self.active.truncate(self.active.len() - (read - write));
            }
            charged = capacity - room.max(0.0);
            self.slack.push(room.max(0.0));
        }
        self.remaining.iter().all(|&left| left <= 0.0)
    }

    /// [`Self::forward`] as it was before the chains filled were dropped from the walk: the
    /// reference its property test compares it with.
    #[cfg(test)]
    fn forward_reference(&mut self, volumes: &[f64]) -> bool {
        self.start_guess(volumes);
        let intervals = self.capacity.len();
        self.slack.clear();
        let mut charged = 0.0;
        for k in 0..intervals {
            let capacity = self.capacity[k];
            let mut room = capacity - charged;
            for &j in &self.order {
                if room <= 0.0 {
                    break;
                }
                let left = self.remaining[j];
                if self.first[j] > k || left <= 0.0 {
                    continue;
                }
                let x = if left <= room {
                    room -= left;
                    self.remaining[j] = 0.0;
                    left
                } else {
                    self.remaining[j] = left - room;
                    std::mem::replace(&mut room, 0.0)
                };
                self.charges[j * intervals + k] = x;
                self.charged.push((j, k));
            }
            charged = capacity - room.max(0.0);
            self.slack.push(room.max(0.0));
        }
        self.remaining.iter().all(|&left| left <= 0.0)
    }

    /// The insertion: chains steepest first, each charged at the earliest intervals from its first
    /// where every later prefix still has room; `false` if the grid cannot hold the volume.
    fn insert(&mut self, volumes: &[f64]) -> bool {
        self.start_guess(volumes);
        let intervals = self.capacity.len();
        self.slack.clear();
        self.slack.extend_from_slice(&self.capacity);
        for &j in &self.order {
            let mut left = volumes[j];
            for k in self.first[j]..intervals {
                let room = self.slack[k..].iter().copied().fold(f64::INFINITY, f64::min);
                if room <= 0.0 {
                    continue;
                }
                // The binding prefix ends at exactly 0 (`slack − slack`), which the blocks read.
                let x = if left <= room {
                    std::mem::replace(&mut left, 0.0)
                } else {
                    left -= room;
                    room
                };
                for s in &mut self.slack[k..] {
                    *s -= x;
                }
                self.charges[j * intervals + k] = x;
                self.charged.push((j, k));
                if left <= 0.0 {
                    break;
                }
            }
            if left > 0.0 {
                return false;
            }
        }
        true
    }

    /// The blocks of the guess: a prefix filled to capacity ends one (its price may be positive).
    fn blocks(&mut self) {
        let intervals = self.slack.len();
        self.block.clear();
        self.block_start.clear();
        self.block_start.push(0);
        for k in 0..intervals {
            self.block.push(self.block_start.len() - 1);
            if self.slack[k] <= 0.0 && k + 1 < intervals {
                self.block_start.push(k + 1);
            }
        }
    }

    /// Dual prices for the guess and the uniqueness certificate (module docs).
    fn prove(&mut self, volumes: &[f64]) -> bool {
        self.blocks();
        let (m, blocks) = (volumes.len(), self.block_start.len());
        let intervals = self.block.len();
        let tail = blocks - 1;
        if blocks > 64 {
            // One bit per block below; a grid this long is left to the network.
            return false;
        }
        let margin = 1e-9 * (self.max_cost + 1.0);
        self.home.clear();
        self.home.resize(m, usize::MAX);
        self.last.clear();
        self.last.resize(m, 0);
        self.charged_blocks.clear();
        self.charged_blocks.resize(m, 0);
        for &(j, k) in &self.charged {
            self.home[j] = self.home[j].min(k);
            self.last[j] = self.last[j].max(k);
            self.charged_blocks[j] |= 1 << self.block[k];
        }
        // Difference constraints: later blocks never cost more; each arc against its chain's first
        // charged arc (the cheapest arc of a block is its first eligible interval); equalities
        // between a chain's charged blocks.
        let (weight, pred) = (&mut self.weight, &mut self.pred);
        weight.clear();
        weight.resize(blocks * blocks, UNSET);
        pred.clear();
        pred.resize(blocks, 0);
        let mut bound = |from: usize, to: usize, w: f64| {
            let at = &mut weight[from * blocks + to];
            *at = at.max(w);
            pred[to] |= 1 << from;
        };
        for b in 0..tail {
            bound(b + 1, b, 0.0);
        }
        for j in 0..m {
            let s = self.home[j];
            if s == usize::MAX {
                return false;
            }
            let row = &self.unit[j * intervals..(j + 1) * intervals];
            let (home, cost, first) = (self.block[s], row[s], self.first[j]);
            for b in self.block[first]..blocks {
                if b == home {
                    continue;
                }
                let w = cost - row[self.block_start[b].max(first)];
                bound(home, b, w);
                if self.charged_blocks[j] >> b & 1 == 1 {
                    bound(b, home, -w);
                }
            }
        }
        // The least potentials (longest paths from the tail) and the greatest (minus the longest
        // path to it); no positive cycle, or the guess has no prices at all.
        // A value moves only when it gains more than `tolerance` (see `relax`).
        let tolerance = TOLERANCE * margin;
        let Some(()) = longest_from(tail, blocks, &self.weight, tolerance, &mut self.low) else { return false };
        let Some(()) = longest_to(tail, blocks, &self.weight, &self.pred, tolerance, &mut self.reach) else {
            return false;
        };
        self.price.clear();
        for b in 0..blocks {
            let (low, high) = (self.low[b], -self.reach[b]);
            if !(low.is_finite() && high.is_finite() && low <= high + margin) {
                return false;
            }
            self.price.push(0.5 * (low + high));
        }
        self.interval_price.clear();
        self.interval_price.extend(self.block.iter().map(|&b| self.price[b]));
        // Strict complementary slackness: every arc without charge has a reduced cost above the
        // margin, every charged one within it.
        for j in 0..m {
            let (row, s) = (j * intervals, self.home[j]);
            let chain_price = self.unit[row + s] + self.interval_price[s];
            let unit = &self.unit[row..row + intervals];
            let charges = &self.charges[row..row + intervals];
            // Every arc checked before the answer is read (a failure is rare: about 2% of the
            // solves), so the loop has no branch to mispredict.
            let first = self.first[j];
            let mut ok = true;
            for ((&unit, &price), &charge) in
                unit[first..].iter().zip(&self.interval_price[first..]).zip(&charges[first..])
            {
                let reduced = unit + price - chain_price;
                ok &= if charge > 0.0 { reduced.abs() <= margin } else { reduced > margin };
            }
            if !ok {
                return false;
            }
        }
        // Merged blocks: a prefix whose price is within the margin of 0 does not pin its block's total.
        self.merged.clear();
        let mut merged = 0;
        for b in 0..blocks {
            self.merged.push(merged);
            if b + 1 < blocks && self.price[b] - self.price[b + 1] > margin {
                merged += 1;
            }
        }
        // Chains and merged blocks with an edge per charged interval: a forest, at most one
        // charged interval per chain and merged block. And the cost.
        self.set.clear();
        self.set.extend(0..m + merged + 1);
        self.cost = 0.0;
        for &(j, k) in &self.charged {
            let (a, b) = (find(&mut self.set, j), find(&mut self.set, m + self.merged[self.block[k]]));
            if a == b {
                return false;
            }
            self.set[a] = b;
            self.cost += self.charges[j * intervals + k] * self.unit[j * intervals + k];
        }
        true
    }

    /// Every fraction's deadline robust to charges within `δ` ([`rounding_is_robust`], the simplex
    /// warm path's check).
    /// Reads each chain's row from its first charged interval to its last only ([`Self::prove`]
    /// set them, and it ran first): the rounding skips intervals without charge, so the answer is
    /// the whole row's.
    fn robust(&self, volumes: &[f64], thetas: &[f64], intervals: usize) -> bool {
        rounding_is_robust(volumes, thetas, |j| {
            let (home, last) = (self.home[j], self.last[j]);
            let row = &self.charges[j * intervals..(j + 1) * intervals];
            (home..=last).zip(&row[home..=last]).map(|(k, &x)| (k, x))
        })
    }
}

/// Union-find root with path halving.
fn find(set: &mut [usize], mut x: usize) -> usize {
    while set[x] != x {
        set[x] = set[set[x]];
        x = set[x];
    }
    x
}

/// The highest set bit of `mask` below `limit` (at most 64).
fn highest_below(mask: u64, limit: usize) -> Option<usize> {
    let below = if limit >= 64 { mask } else { mask & ((1u64 << limit) - 1) };
    (below != 0).then(|| 63 - below.leading_zeros() as usize)
}

/// Longest paths from `source` over the dense `weight` matrix (`P[to] ≥ P[from] + w`) into `out`;
/// `None` on a positive cycle. At most 64 nodes (a bit each below).
///
/// The rows are relaxed from the last block to the first: most constraints point back in time
/// (a later block's price bounds an earlier one's: blocks never dearer later, and a chain's
/// charged blocks against its first), so one pass in that order carries a value down the whole
/// grid, where the other order took about one pass per block (issue 20, `docs/performance.md`
/// §25: 3.8 passes for about 7.6 blocks on the soak, from 7). Any order converges to the same
/// longest paths; the order only sets the passes.
///
/// A pass relaxes only the rows whose value moved since they were last relaxed (`dirty`, a bit
/// per row): a row whose value has not moved gains nothing, since the values it compares with
/// only grow. So every pass makes exactly the moves of a pass over every row, in the same order,
/// with the same result and the same passes (`longest_from_reference` in the tests; §27).
fn longest_from(source: usize, nodes: usize, weight: &[f64], tolerance: f64, out: &mut Vec<f64>) -> Option<()> {
    out.clear();
    out.resize(nodes, UNSET);
    out[source] = 0.0;
    let mut dirty = 1u64 << source;
    relax(nodes, out, |out| {
        let mut changed = false;
        let mut limit = nodes;
        while let Some(from) = highest_below(dirty, limit) {
            limit = from;
            dirty &= !(1 << from);
            let base = out[from];
            if base == UNSET {
                continue;
            }
            // A select per entry, no branch (most entries are `-∞`, no constraint).
            for (to, (value, &w)) in out.iter_mut().zip(&weight[from * nodes..(from + 1) * nodes]).enumerate() {
                let candidate = base + w;
                let gains = candidate > *value + tolerance;
                *value = if gains { candidate } else { *value };
                changed |= gains;
                dirty |= u64::from(gains) << to;
            }
        }
        changed
    })
}

/// Longest paths to `target` over the same matrix into `out` (`out[from] ≥ w + out[to]`: the
/// longest path from `from`), read row by row, so no transposed copy is built; `None` on a
/// positive cycle. The rows are relaxed from the last block to the first here too: a path to the
/// tail runs forward in time, so a row reads values its later rows set in the same pass (on the
/// soak 3.6 passes a solve for about 7.6 blocks, where the transposed copy took 7).
///
/// `pred[to]` has a bit per row with an entry above `-∞` at `to` (a superset does no harm). A
/// pass relaxes only the rows one of whose entries' values moved since they were last relaxed:
/// the others would find the same best as then, which moved nothing after it. So the moves, the
/// result and the passes are those of a pass over every row (`longest_to_reference` in the tests).
fn longest_to(
    target: usize,
    nodes: usize,
    weight: &[f64],
    pred: &[u64],
    tolerance: f64,
    out: &mut Vec<f64>,
) -> Option<()> {
    out.clear();
    out.resize(nodes, UNSET);
    out[target] = 0.0;
    let mut dirty = pred[target];
    relax(nodes, out, |out| {
        let mut changed = false;
        let mut limit = nodes;
        while let Some(from) = highest_below(dirty, limit) {
            limit = from;
            dirty &= !(1 << from);
            // A compare per entry (not `f64::max`, whose NaN handling chains every entry's
            // latency): a NaN or `-∞` candidate never wins, as in `longest_from`.
            let current = out[from];
            let mut best = current + tolerance;
            for (&w, &to) in weight[from * nodes..(from + 1) * nodes].iter().zip(out.iter()) {
                let candidate = w + to;
                if candidate > best {
                    best = candidate;
                }
            }
            if best > current + tolerance {
                out[from] = best;
                changed = true;
                dirty |= pred[from];
            }
        }
        changed
    })
}

/// [`longest_from`] as it was before it skipped the rows that cannot gain (every row every pass):
/// the reference its property test compares it with.
///
/// Longest paths from `source` over the dense `weight` matrix (`P[to] ≥ P[from] + w`) into `out`;
/// `None` on a positive cycle.
///
/// The rows are relaxed from the last block to the first: most constraints point back in time
/// (a later block's price bounds an earlier one's: blocks never dearer later, and a chain's
/// charged blocks against its first), so one pass in that order carries a value down the whole
/// grid, where the other order took about one pass per block (issue 20, `docs/performance.md`
/// §25: 3.8 passes for about 7.6 blocks on the soak, from 7). Any order converges to the same
/// longest paths; the order only sets the passes.
#[cfg(test)]
fn longest_from_reference(
    source: usize,
    nodes: usize,
    weight: &[f64],
    tolerance: f64,
    out: &mut Vec<f64>,
) -> Option<()> {
    out.clear();
    out.resize(nodes, UNSET);
    out[source] = 0.0;
    relax(nodes, out, |out| {
        let mut changed = false;
        for (from, row) in weight.chunks_exact(nodes).enumerate().rev() {
            let base = out[from];
            if base == UNSET {
                continue;
            }
            for (to, &w) in row.iter().enumerate() {
                if base + w > out[to] + tolerance {
                    out[to] = base + w;
                    changed = true;
                }
            }
        }
        changed
    })
}

/// [`longest_to`] as it was before it skipped the rows that cannot gain: the reference its
/// property test compares it with.
///
/// Longest paths to `target` over the same matrix into `out` (`out[from] ≥ w + out[to]`: the
/// longest path from `from`), read row by row, so no transposed copy is built; `None` on a
/// positive cycle. The rows are relaxed from the last block to the first here too: a path to the
/// tail runs forward in time, so a row reads values its later rows set in the same pass (on the
/// soak 3.6 passes a solve for about 7.6 blocks, where the transposed copy took 7).
#[cfg(test)]
fn longest_to_reference(target: usize, nodes: usize, weight: &[f64], tolerance: f64, out: &mut Vec<f64>) -> Option<()> {
    out.clear();
    out.resize(nodes, UNSET);
    out[target] = 0.0;
    relax(nodes, out, |out| {
        let mut changed = false;
        for (from, row) in weight.chunks_exact(nodes).enumerate().rev() {
            // A compare per entry (not `f64::max`, whose NaN handling chains every entry's
            // latency): a NaN or `-∞` candidate never wins, as in `longest_from`.
            let current = out[from];
            let mut best = current + tolerance;
            for (&w, &to) in row.iter().zip(out.iter()) {
                let candidate = w + to;
                if candidate > best {
                    best = candidate;
                }
            }
            if best > current + tolerance {
                out[from] = best;
                changed = true;
            }
        }
        changed
    })
}

/// Bellman-Ford passes until nothing changes; `None` if the `nodes`-th pass still changes something
/// (a positive cycle). The passes move a value only when it gains more than a `tolerance` far
/// below the proof's margin ([`TOLERANCE`]), so a cycle of weight 0 whose float sums round upwards
/// (a chain charged in two blocks gives one: `(x + w) − w` may exceed `x` by an ulp) ends the
/// passes instead of refusing a guess that is optimal. A cycle of weight up to `tolerance` is then
/// accepted, and every constraint holds within `tolerance` (each value within `tolerance` per
/// edge of its longest path, at most 64 edges); `ForwardFill::prove` explains why its checks
/// still refuse every guess such a cycle would make wrong.
fn relax(nodes: usize, out: &mut [f64], mut pass: impl FnMut(&mut [f64]) -> bool) -> Option<()> {
    for _ in 0..=nodes {
        if !pass(out) {
            return Some(());
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn linear(slope: f64) -> Penalty {
        Penalty::Linear { slope, origin: 0.0 }
    }

    /// Every charge matrix of the relaxation on one slot in quarter units (exact for data in
    /// quarter units: the network's matrix is totally unimodular, so its vertices are too), with
    /// its cost; calls `seen` for each feasible one.
    fn exhaustive(
        q: &[f64],
        volumes: &[f64],
        grid: &[f64],
        costs: &[Penalty],
        seen: &mut dyn FnMut(f64, &[Vec<usize>]),
    ) {
        let m = volumes.len();
        let quarters: Vec<usize> = volumes.iter().map(|v| (v * 4.0).round() as usize).collect();
        let first: Vec<usize> = q.iter().map(|&q| first_interval(grid, q)).collect();
        let mut charged = vec![vec![0usize; grid.len()]; m];
        // Chain by chain, interval by interval: what is left of the chain's quarters.
        let mut stack = vec![(0usize, 0usize, 0usize)];
        charged.iter_mut().for_each(|row| row.fill(0));
        fn walk(
            j: usize,
            k: usize,
            left: usize,
            quarters: &[usize],
            first: &[usize],
            charged: &mut Vec<Vec<usize>>,
            check: &mut dyn FnMut(&[Vec<usize>]),
        ) {
            if j == quarters.len() {
                check(charged);
                return;
            }
            let intervals = charged[j].len();
            if k == intervals {
                if left == 0 {
                    let next = quarters.get(j + 1).copied().unwrap_or(0);
                    walk(j + 1, first.get(j + 1).copied().unwrap_or(0), next, quarters, first, charged, check);
                }
                return;
            }
            for x in 0..=left {
                charged[j][k] = x;
                walk(j, k + 1, left - x, quarters, first, charged, check);
            }
            charged[j][k] = 0;
        }
        stack.clear();
        let mut check = |charged: &[Vec<usize>]| {
            let (mut prefix, mut cost) = (0usize, 0.0);
            for (k, &t) in grid.iter().enumerate() {
                for (i, row) in charged.iter().enumerate() {
                    prefix += row[k];
                    cost += row[k] as f64 / 4.0 * costs[i].eval(t) / volumes[i];
                }
                if prefix as f64 / 4.0 > t + 1e-9 {
                    return;
                }
            }
            seen(cost, charged);
        };
        walk(0, first[0], quarters[0], &quarters, &first, &mut charged, &mut check);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(200))]
        /// A certified guess is the relaxation's optimum, and its only one: exhaustive search over
        /// every feasible charge matrix (one slot, quarter units) finds no other of the same cost.
        #[test]
        fn a_certified_guess_is_the_only_optimum(
            chains in proptest::collection::vec((1usize..=4, 0usize..=3, 1u32..=6), 1..=3),
        ) {
            let grid = [1.0, 2.0, 3.0, 4.0, 6.0];
            let volumes: Vec<f64> = chains.iter().map(|&(v, _, _)| v as f64 / 4.0).collect();
            let q: Vec<f64> = chains.iter().map(|&(v, f, _)| (v as f64 / 4.0).max(f as f64)).collect();
            let costs: Vec<Penalty> = chains.iter().map(|&(_, _, w)| linear(f64::from(w))).collect();
            let mut fill = ForwardFill::default();
            if fill.certify(&q, &volumes, 1, &grid, &costs, &[0.3]) {
                let k = grid.len();
                let mut best = f64::INFINITY;
                exhaustive(&q, &volumes, &grid, &costs, &mut |cost, _| best = best.min(cost));
                proptest::prop_assert!((fill.cost() - best).abs() <= 1e-9 * best.max(1.0), "{} against {best}", fill.cost());
                let mut others = 0;
                exhaustive(&q, &volumes, &grid, &costs, &mut |cost, charged| {
                    let same = charged.iter().enumerate().all(|(j, row)| {
                        row.iter().enumerate().all(|(i, &x)| (x as f64 / 4.0 - fill.charges()[j * k + i]).abs() < 1e-12)
                    });
                    if cost <= best + 1e-9 * best.max(1.0) && !same {
                        others += 1;
                    }
                });
                proptest::prop_assert_eq!(others, 0);
            }
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(500))]
        /// The first interval counted is the binary search's (`minisum::first_interval` against the
        /// search it replaces), on increasing grids, at and around their points.
        #[test]
        fn first_interval_counts_as_the_search(
            steps in proptest::collection::vec(1u32..=40, 1..=30),
            at in 0usize..=31,
            offset in -2i32..=2,
        ) {
            let grid: Vec<f64> = steps.iter().scan(0.0, |t, &s| { *t += f64::from(s) * 0.37; Some(*t) }).collect();
            let base = grid.get(at).copied().unwrap_or(0.0);
            for q in [base, base * (1.0 + 1e-13), base + f64::from(offset) * 0.1, f64::from(offset), f64::NAN, f64::INFINITY] {
                let searched = grid.partition_point(|&t| t < q * (1.0 - 1e-12));
                proptest::prop_assert_eq!(first_interval(&grid, q), searched, "q = {}", q);
            }
        }

        /// `prepare`'s unit costs, first intervals and margin are the reference reading's
        /// (`unit_cost(costs[j].eval(t), V_j)` over the whole row, the largest over every row), bit
        /// for bit, and the forward fill that drops the chains filled is the one that skipped them:
        /// the same charges, arcs, slacks and answer. Linear costs of every sign and origin, odd
        /// volumes, 1-12 slots, so prefixes are tight and chains straddle intervals.
        #[test]
        fn prepare_and_forward_are_the_references(
            slots in 1u32..=12,
            chains in proptest::collection::vec((1u32..=97, 0u32..=40, -10i32..=30, -20i32..=20), 1..=25),
            steps in proptest::collection::vec(1u32..=30, 1..=24),
        ) {
            let grid: Vec<f64> = steps.iter().scan(0.0, |t, &s| { *t += f64::from(s) * 0.53; Some(*t) }).collect();
            let volumes: Vec<f64> = chains.iter().map(|&(v, _, _, _)| f64::from(v) * 0.37).collect();
            let q: Vec<f64> = chains.iter().map(|&(_, f, _, _)| f64::from(f) * 0.41).collect();
            let costs: Vec<Penalty> = chains
                .iter()
                .map(|&(_, _, w, o)| Penalty::Linear { slope: f64::from(w) * 0.3, origin: f64::from(o) * 0.7 })
                .collect();
            let mut fill = ForwardFill::default();
            if !fill.prepare(&q, &volumes, slots, &grid, &costs) {
                // Refused only for a chain without an interval or falling costs.
                let late = q.iter().any(|&q| first_interval(&grid, q) >= grid.len());
                let falling = costs.iter().any(|c| matches!(c, Penalty::Linear { slope, .. } if *slope < 0.0));
                proptest::prop_assert!(late || falling, "refused with no chain late and no slope below 0");
                return Ok(());
            }
            let k = grid.len();
            let mut largest = 0.0f64;
            for (j, cost) in costs.iter().enumerate() {
                for (i, &t) in grid.iter().enumerate() {
                    let unit = unit_cost(cost.eval(t), volumes[j]);
                    proptest::prop_assert_eq!(fill.unit[j * k + i].to_bits(), unit.to_bits());
                    largest = largest.max(unit);
                }
                proptest::prop_assert_eq!(fill.first[j], grid.partition_point(|&t| t < q[j] * (1.0 - 1e-12)));
            }
            proptest::prop_assert_eq!(fill.max_cost.to_bits(), largest.to_bits());
            let done = fill.forward(&volumes);
            let (charges, charged, slack, remaining) =
                (fill.charges.clone(), fill.charged.clone(), fill.slack.clone(), fill.remaining.clone());
            proptest::prop_assert_eq!(fill.forward_reference(&volumes), done);
            let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            proptest::prop_assert_eq!(bits(&charges), bits(&fill.charges));
            proptest::prop_assert_eq!(charged, fill.charged.clone());
            proptest::prop_assert_eq!(bits(&slack), bits(&fill.slack));
            proptest::prop_assert_eq!(bits(&remaining), bits(&fill.remaining));
        }
    }

    /// Per node, the rows with an entry above `-∞` at it (`longest_to`'s `pred`).
    fn predecessors(weight: &[f64], nodes: usize) -> Vec<u64> {
        (0..nodes)
            .map(|to| (0..nodes).filter(|&from| weight[from * nodes + to] > UNSET).fold(0, |m, from| m | 1 << from))
            .collect()
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(1000))]
        /// The longest paths that relax only the rows that can gain are the ones over every row,
        /// bit for bit, with the same answer on positive cycles: sparse and dense matrices of up to
        /// 64 nodes (the proof's limit), weights in float-rounding steps (`0.1`, `0.2`, `−0.3`),
        /// tolerances of 0 and of the proof's size.
        #[test]
        fn longest_paths_skipping_rows_are_the_references(
            nodes in 1usize..=64,
            entries in proptest::collection::vec((0usize..64, 0usize..64, -30i32..=10), 0..=200),
            chain in proptest::bool::ANY,
            end in 0usize..64,
            tolerance in proptest::sample::select(vec![0.0, 1e-13, 1e-4]),
        ) {
            let mut weight = vec![UNSET; nodes * nodes];
            // "Later blocks never dearer", as `prove` sets them, in half the cases.
            if chain {
                for b in 0..nodes - 1 {
                    weight[(b + 1) * nodes + b] = 0.0;
                }
            }
            for &(from, to, w) in &entries {
                let (from, to) = (from % nodes, to % nodes);
                if from != to {
                    let at = &mut weight[from * nodes + to];
                    *at = at.max(f64::from(w) * 0.1);
                }
            }
            let pred = predecessors(&weight, nodes);
            let end = end % nodes;
            let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            let (mut a, mut b) = (Vec::new(), Vec::new());
            let (fast, slow) = (longest_from(end, nodes, &weight, tolerance, &mut a), longest_from_reference(end, nodes, &weight, tolerance, &mut b));
            proptest::prop_assert_eq!(fast, slow);
            proptest::prop_assert_eq!(bits(&a), bits(&b));
            let (fast, slow) = (longest_to(end, nodes, &weight, &pred, tolerance, &mut a), longest_to_reference(end, nodes, &weight, tolerance, &mut b));
            proptest::prop_assert_eq!(fast, slow);
            proptest::prop_assert_eq!(bits(&a), bits(&b));
        }
    }

    /// Two chains on one slot, the steeper eligible from the start: it goes first; the flatter
    /// one, eligible from T = 2, takes what is left of T = 2 and T = 3. The unique optimum (the
    /// other order costs 5), and the proof holds.
    #[test]
    fn steepest_first_is_certified() {
        let mut fill = ForwardFill::default();
        let grid = [1.0, 2.0, 3.0, 5.0, 8.0];
        // Volumes 1 and 2, costs t and t: steepness 1 and 0.5.
        let ok = fill.certify(&[1.0, 2.0], &[1.0, 2.0], 1, &grid, &[linear(1.0), linear(1.0)], &[0.3]);
        assert!(ok);
        let c = fill.charges();
        assert_eq!(&c[..5], &[1.0, 0.0, 0.0, 0.0, 0.0]);
        assert_eq!(&c[5..], &[0.0, 1.0, 1.0, 0.0, 0.0]);
        // cost: 1·1/1 + 1·2/2 + 1·3/2.
        assert!((fill.cost() - 3.5).abs() < 1e-12);
        // At θ = 0.5 the flatter chain's charge reaches half its volume exactly at T = 2: not robust.
        assert!(!fill.certify(&[1.0, 2.0], &[1.0, 2.0], 1, &grid, &[linear(1.0), linear(1.0)], &[0.5]));
    }

    /// The counterexample of the module docs: the forward fill charges the flat chain first and takes
    /// the capacity the steep chain, eligible one interval later, needs, and its proof fails; the
    /// insertion (the steep chain first, at its earliest room) is the optimum and is certified.
    #[test]
    fn a_flat_chain_blocking_a_later_steep_one_is_left_to_the_insertion() {
        let mut fill = ForwardFill::default();
        let grid = [1.0, 2.0, 3.0, 4.0];
        // Chain 0: V = 1, eligible at once, slope 1 (steepness 1). Chain 1: V = 2, eligible from
        // T = 2, slope 10 (steepness 5). Filling chain 0 first costs 1 + 10·(2 + 3)/2 = 26; chain 1
        // first (charged at T = 2) and chain 0 at T = 3 costs 10·2 + 3 = 23.
        let (q, volumes, costs) = ([1.0, 2.0], [1.0, 2.0], [linear(1.0), linear(10.0)]);
        assert!(fill.prepare(&q, &volumes, 1, &grid, &costs));
        assert!(fill.forward(&volumes));
        assert!(!fill.prove(&volumes));
        assert!(fill.certify(&q, &volumes, 1, &grid, &costs, &[0.5]));
        assert_eq!(fill.charges(), &[0.0, 0.0, 1.0, 0.0, 0.0, 2.0, 0.0, 0.0]);
        assert!((fill.cost() - 23.0).abs() < 1e-12);
    }

    /// Equal chains tie: the split between them is free, so there is no unique optimum.
    #[test]
    fn ties_are_refused() {
        let mut fill = ForwardFill::default();
        let grid = [1.0, 2.0, 4.0, 8.0];
        let ok = fill.certify(&[4.0, 4.0], &[4.0, 4.0], 1, &grid, &[linear(1.0), linear(1.0)], &[0.5]);
        assert!(!ok);
    }

    /// The longest paths end on a cycle of weight 0 whose float sums need not cancel
    /// (`0.1 + 0.2 − 0.3 > 0` in floats) and stay within the tolerance of the exact values, and
    /// still refuse a cycle whose weight is above the tolerance.
    #[test]
    fn longest_paths_tolerate_rounding_not_positive_cycles() {
        let n = 4;
        // The tail is node 3; 3 → 0 (0.5), then the cycle 0 → 1 → 2 → 0 of weights 0.1, 0.2, −0.3.
        let mut weight = vec![UNSET; n * n];
        let set = |w: &mut Vec<f64>, from: usize, to: usize, x: f64| w[from * n + to] = x;
        set(&mut weight, 3, 0, 0.5);
        set(&mut weight, 0, 1, 0.1);
        set(&mut weight, 1, 2, 0.2);
        set(&mut weight, 2, 0, -0.3);
        // The way back to the tail, for the paths to it.
        set(&mut weight, 0, 3, -0.5);
        let tolerance = TOLERANCE * 1e-9;
        let (mut low, mut reach) = (Vec::new(), Vec::new());
        assert!(longest_from(3, n, &weight, tolerance, &mut low).is_some());
        for (value, exact) in low.iter().zip([0.5, 0.6, 0.8, 0.0]) {
            assert!((value - exact).abs() <= 4.0 * tolerance, "{low:?}");
        }
        let pred = predecessors(&weight, n);
        assert!(longest_to(3, n, &weight, &pred, tolerance, &mut reach).is_some());
        for (value, exact) in reach.iter().zip([-0.5, -0.6, -0.8, 0.0]) {
            assert!((value - exact).abs() <= 4.0 * tolerance, "{reach:?}");
        }
        // A cycle gaining 1e-9 (far above the tolerance, 1e-13) is refused both ways.
        set(&mut weight, 2, 0, -0.3 + 1e-9);
        assert!(longest_from(3, n, &weight, tolerance, &mut low).is_none());
        assert!(longest_to(3, n, &weight, &pred, tolerance, &mut reach).is_none());
    }

    /// Only linear costs are tried.
    #[test]
    fn other_costs_are_left_to_the_network() {
        let mut fill = ForwardFill::default();
        let tardy = Penalty::Tardiness { slope: 1.0, due: 0.0 };
        assert!(!fill.certify(&[1.0], &[1.0], 1, &[1.0, 2.0], &[tardy], &[0.5]));
    }
}
