//! FlowFlex Stage 2a (digest §2.3, Fig. 5): the strict-deadline greedy over chains of pseudo-jobs.
//!
//! Chains are taken in priority order. Each pseudo-job starts when its chain predecessor completes
//! and, at every instant, takes `min(P − σ(t), δ(k))` slots, where `σ` is the utilisation already
//! reserved by earlier pseudo-jobs, until its work is done. `σ` is kept as a piecewise-constant step
//! function; a pseudo-job walks its segments and adds at most two breakpoints. When every chain has
//! at most one pseudo-job (flows without edges: the common case), every pseudo-job starts at 0 and
//! `σ` is a non-increasing staircase, kept without its saturated prefix (`Staircase`, the engine's
//! planning path); the schedule is the same bit for bit.
//!
//! Decisions where the paper is silent:
//! - Deadline ties (which matter, digest T4) go to the chain with the larger lower bound
//!   `Q = max(CP, V/P)` first, then to the smaller chain index: the chain that can least afford to
//!   wait goes first.
//! - The result is always a valid unit-speed schedule; [`DeadlineSchedule::meets_doubled_deadlines`]
//!   is Fig. 5's feasibility flag (`C_j ≤ 2·d_j` for every chain). A relative tolerance of `1e-9`
//!   absorbs floating-point noise in that comparison.
//! - Deadlines may be `+∞` (no deadline); `NaN` is rejected.

use super::chain::PseudoChain;
use circumflex_core::error::{Error, Result};

/// A constant-rate stretch of one pseudo-job's (or job's) schedule: `slots` processors on `[start, end)`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Piece {
    /// Start time.
    pub start: f64,
    /// End time (`> start`).
    pub end: f64,
    /// Processors used, `≥ 1`.
    pub slots: u32,
}

impl Piece {
    /// Work done in the piece.
    pub fn work(&self) -> f64 {
        f64::from(self.slots) * (self.end - self.start)
    }
}

/// One chain's Stage 2 schedule: the histogram of every pseudo-job, in chain order.
#[derive(Clone, Debug, PartialEq)]
pub struct ChainSchedule {
    /// `pieces[k]` is pseudo-job `k`'s histogram, in time order.
    pub pieces: Vec<Vec<Piece>>,
    /// Completion time of the chain (of its last pseudo-job).
    pub completion: f64,
}

/// The greedy's result for a set of deadlines.
#[derive(Clone, Debug, PartialEq)]
pub struct DeadlineSchedule {
    /// Per chain (indexed like the input), its schedule.
    pub chains: Vec<ChainSchedule>,
    /// The priority order used (chain indices, first scheduled first).
    pub order: Vec<usize>,
    /// Fig. 5's flag: every chain completes by twice its deadline. When false, no unit-speed
    /// schedule meets all the deadlines.
    pub meets_doubled_deadlines: bool,
}

/// The utilisation step function `σ`: segment `k` is `[starts[k], starts[k+1])` with `used[k]`
/// processors reserved; the last segment is unbounded and always has `used = 0`.
///
/// `full` lists the maximal time ranges `[a, b)` whose segments are all saturated (`used = P`), in
/// time order, so a pseudo-job jumps over them instead of walking every segment there (issue 20:
/// with hundreds of chains most of the early horizon is saturated, and every chain's first
/// pseudo-job starts at 0). A saturated segment stays saturated (`used` only grows; a split copies
/// `used`), its bounds are breakpoints, and a pseudo-job takes nothing from it (rate 0), so the
/// jump changes no result.
#[derive(Clone, Debug)]
struct Utilisation {
    slots: u32,
    starts: Vec<f64>,
    used: Vec<u32>,
    full: Vec<(f64, f64)>,
    /// Whether to jump over `full` (false only in the test that pins the jump to the walk).
    jump: bool,
}

impl Utilisation {
    fn new(slots: u32) -> Utilisation {
        Utilisation { slots, starts: vec![0.0], used: vec![0], full: Vec::new(), jump: true }
    }

    /// Empty again on `slots` processors, keeping the allocations (issue 20: a greedy per rounding
    /// fraction per plan). The same state as [`Utilisation::new`] but for `jump`, which is kept.
    fn reset(&mut self, slots: u32) {
        self.slots = slots;
        self.starts.clear();
        self.starts.push(0.0);
        self.used.clear();
        self.used.push(0);
        self.full.clear();
    }

    /// Records that `[a, b)` became saturated, merging it with the ranges it touches.
    fn saturated(&mut self, a: f64, b: f64) {
        let i = self.full.partition_point(|r| r.1 < a);
        let joins_left = self.full.get(i).is_some_and(|r| r.1 == a);
        let j = if joins_left { i + 1 } else { i };
        let joins_right = self.full.get(j).is_some_and(|r| r.0 == b);
        match (joins_left, joins_right) {
            (true, true) => {
                self.full[i].1 = self.full[j].1;
                self.full.remove(j);
            }
            (true, false) => self.full[i].1 = b,
            (false, true) => self.full[j].0 = a,
            (false, false) => self.full.insert(i, (a, b)),
        }
    }

    /// The index of the first segment at or after `k` that is not saturated.
    fn skip_full(&self, k: usize) -> usize {
        if !self.jump || self.used[k] < self.slots {
            return k;
        }
        let at = self.starts[k];
        let run = self.full.partition_point(|r| r.1 <= at);
        match self.full.get(run) {
            Some(&(_, end)) => self.starts.partition_point(|&s| s < end),
            None => k, // unreachable: a saturated segment lies in a recorded range
        }
    }

    /// Makes `t ≥ 0` a breakpoint and returns the index of the segment starting there.
    fn split_at(&mut self, t: f64) -> usize {
        let after = self.starts.partition_point(|&s| s <= t);
        let containing = after.saturating_sub(1);
        if self.starts[containing] == t {
            return containing;
        }
        self.starts.insert(after, t);
        self.used.insert(after, self.used[containing]);
        after
    }

    /// Runs `work` from `from` on, at rate `min(P − σ, bound)`, reserving what it uses; its pieces
    /// are appended to `pieces`.
    fn fill(&mut self, from: f64, work: f64, bound: u64, pieces: &mut Vec<Piece>) {
        let bound = u32::try_from(bound).unwrap_or(u32::MAX).min(self.slots);
        let mut remaining = work;
        let mut k = self.split_at(from.max(0.0));
        while remaining > 0.0 && k < self.starts.len() {
            k = self.skip_full(k);
            if k >= self.starts.len() {
                break;
            }
            let seg_start = self.starts[k];
            let seg_end = self.starts.get(k + 1).copied().unwrap_or(f64::INFINITY);
            let rate = (self.slots - self.used[k]).min(bound);
            if rate > 0 {
                let capacity = f64::from(rate) * (seg_end - seg_start);
                if remaining <= capacity * (1.0 + 1e-12) {
                    let finish = (seg_start + remaining / f64::from(rate)).min(seg_end);
                    if finish <= seg_start {
                        break; // Rounding residue: nothing left worth scheduling.
                    }
                    if finish < seg_end {
                        self.split_at(finish);
                    }
                    self.used[k] += rate;
                    if self.used[k] == self.slots {
                        self.saturated(seg_start, finish);
                    }
                    pieces.push(Piece { start: seg_start, end: finish, slots: rate });
                    break;
                }
                self.used[k] += rate;
                if self.used[k] == self.slots {
                    self.saturated(seg_start, seg_end);
                }
                pieces.push(Piece { start: seg_start, end: seg_end, slots: rate });
                remaining -= capacity;
            }
            k += 1;
        }
    }
}

/// `σ` when every pseudo-job is filled from time 0 (every chain has at most one pseudo-job: a flow
/// without edges, the plain MapReduce job, is one), kept as a staircase (issue 20).
///
/// Why it is a staircase: `σ` starts at 0, and a pseudo-job filled from 0 with bound `b` adds
/// `min(P − σ(t), b)` on `[0, finish)`, i.e. sets `σ(t)` to `min(P, σ(t) + b)` there: a
/// non-increasing `σ` stays non-increasing. Its saturated segments are then a prefix of the
/// segments, which [`Utilisation::skip_full`] jumps over at every fill, so only the segments after
/// it are kept, in reverse time order (the unbounded last one at index 0, the first unsaturated
/// one on top): a fill walks from the top down, a split moves only the segments it walked, and
/// segments that become saturated are popped. The walk is [`Utilisation::fill`]'s from the first
/// unsaturated segment, with the same float operations in the same order, so the pieces are the same
/// bit for bit (`staircase_fills_as_the_utilisation` pins it).
#[derive(Clone, Debug, Default)]
struct Staircase {
    slots: u32,
    /// `(start, used)` of every unsaturated segment, latest first; segment `i` ends where segment
    /// `i − 1` starts (segment 0 never ends and has `used = 0`).
    segments: Vec<(f64, u32)>,
}

impl Staircase {
    /// Empty on `slots ≥ 1` processors, keeping the allocation.
    fn reset(&mut self, slots: u32) {
        self.slots = slots;
        self.segments.clear();
        self.segments.push((0.0, 0));
    }

    /// [`Utilisation::fill`] from time 0.
    fn fill(&mut self, work: f64, bound: u64, pieces: &mut Vec<Piece>) {
        let bound = u32::try_from(bound).unwrap_or(u32::MAX).min(self.slots);
        if bound == 0 {
            return; // Rate 0 everywhere: the walk takes nothing.
        }
        let mut remaining = work;
        let mut i = self.segments.len();
        while remaining > 0.0 && i > 0 {
            i -= 1;
            let (seg_start, used) = self.segments[i];
            let seg_end = if i == 0 { f64::INFINITY } else { self.segments[i - 1].0 };
            // `used < P` (saturated segments are popped) and `bound ≥ 1`: `rate > 0`.
            let rate = (self.slots - used).min(bound);
            let capacity = f64::from(rate) * (seg_end - seg_start);
            if remaining <= capacity * (1.0 + 1e-12) {
                let finish = (seg_start + remaining / f64::from(rate)).min(seg_end);
                if finish <= seg_start {
                    break; // Rounding residue: nothing left worth scheduling.
                }
                if finish < seg_end {
                    self.segments[i].0 = finish;
                    self.segments.insert(i + 1, (seg_start, used + rate));
                } else {
                    self.segments[i].1 = used + rate;
                }
                pieces.push(Piece { start: seg_start, end: finish, slots: rate });
                break;
            }
            self.segments[i].1 = used + rate;
            pieces.push(Piece { start: seg_start, end: seg_end, slots: rate });
            remaining -= capacity;
        }
        while self.segments.last().is_some_and(|&(_, used)| used == self.slots) {
            self.segments.pop();
        }
    }
}

/// A greedy schedule laid out flat, so that one kept across plans allocates nothing (issue 20):
/// every piece in one vector, chain by chain in priority order and pseudo-job by pseudo-job.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct FlatSchedule {
    /// The pieces.
    pieces: Vec<Piece>,
    /// Per chain (by index), the index of its first pseudo-job in `jobs`.
    first_job: Vec<usize>,
    /// Per pseudo-job (chain by chain, by index), its pieces' range in `pieces`.
    jobs: Vec<(usize, usize)>,
    /// Per chain (by index), its completion time.
    completion: Vec<f64>,
}

impl FlatSchedule {
    /// Chain `c`'s histograms, one per pseudo-job in chain order.
    pub(crate) fn histograms(&self, c: usize) -> impl Iterator<Item = &[Piece]> + '_ {
        let from = self.first_job.get(c).copied().unwrap_or(0);
        let to = self.first_job.get(c + 1).copied().unwrap_or(from);
        self.jobs[from..to].iter().map(|&(a, b)| &self.pieces[a..b])
    }

    /// Per chain (by index), its completion time.
    pub(crate) fn completions(&self) -> &[f64] {
        &self.completion
    }

    /// The nested form ([`ChainSchedule`] per chain).
    pub(crate) fn to_chains(&self) -> Vec<ChainSchedule> {
        (0..self.completion.len())
            .map(|c| ChainSchedule {
                pieces: self.histograms(c).map(<[Piece]>::to_vec).collect(),
                completion: self.completion[c],
            })
            .collect()
    }

    /// The flat form of `chains` (the fallback and minimax paths, which build the nested one).
    pub(crate) fn from_chains(chains: &[ChainSchedule]) -> FlatSchedule {
        let mut out = FlatSchedule::default();
        for chain in chains {
            out.first_job.push(out.jobs.len());
            for histogram in &chain.pieces {
                let start = out.pieces.len();
                out.pieces.extend_from_slice(histogram);
                out.jobs.push((start, out.pieces.len()));
            }
            out.completion.push(chain.completion);
        }
        out.first_job.push(out.jobs.len());
        out
    }
}

/// The greedy's working state, kept across runs so that a run allocates nothing once warm
/// (issue 20). No result depends on what it held: every run resets it.
#[derive(Clone, Debug)]
pub(crate) struct Greedy {
    sigma: Utilisation,
    stairs: Staircase,
    seen: Vec<bool>,
    /// What [`Greedy::prepare_bounds`] read of the chains: per chain, its pseudo-job's work and bound if
    /// every chain has at most one (`None` for an empty chain), else nothing.
    singles: Vec<Option<(f64, u64)>>,
    /// Whether `singles` describes the prepared chains (every chain has at most one pseudo-job).
    single: bool,
    /// For the prepared chains, per chain its first pseudo-job's index, and the total (the last entry).
    first_job: Vec<usize>,
}

impl Default for Greedy {
    /// Allocates nothing (it is taken out of its owner per plan); `schedule` resets `sigma` first.
    fn default() -> Greedy {
        let sigma = Utilisation { slots: 1, starts: Vec::new(), used: Vec::new(), full: Vec::new(), jump: true };
        Greedy {
            sigma,
            stairs: Staircase::default(),
            seen: Vec::new(),
            singles: Vec::new(),
            single: false,
            first_job: Vec::new(),
        }
    }
}

impl Greedy {
    /// [`schedule_in_order`] into `out` (whatever it held). Chains of at most one pseudo-job each
    /// are scheduled on a [`Staircase`] (the same schedule). The engine's path prepares once per
    /// set of chains instead ([`Greedy::prepare_bounds`]).
    #[cfg(test)]
    pub(crate) fn schedule(
        &mut self,
        chains: &[PseudoChain],
        order: &[usize],
        slots: u32,
        out: &mut FlatSchedule,
    ) -> Result<()> {
        self.prepare(chains);
        self.schedule_prepared(chains, order, slots, out)
    }

    /// [`Greedy::prepare_bounds`] without the bounds (the tests' schedules).
    #[cfg(test)]
    pub(crate) fn prepare(&mut self, chains: &[PseudoChain]) {
        self.prepare_bounds(chains, 1, &mut Vec::new(), &mut Vec::new());
    }

    /// Reads what the staircase needs of `chains` once (issue 20: the rounding runs the greedy for
    /// several orders of the same chains): whether every chain has at most one pseudo-job and, if
    /// so, each one's work (`PseudoJob::work`, the sum the fill would take) and bound, and the
    /// pseudo-jobs' layout ([`Greedy::schedule_prepared`] reads them); and, in the same pass, every
    /// chain's lower bound `Q` ([`chain_lower_bound`]) into `q` and its volume
    /// ([`PseudoChain::volume`]) into `volumes` (whatever they held: the planning path reads all
    /// three per solve). For a chain of one pseudo-job
    /// its work is summed once and the volume and critical path are the same one-term sums the
    /// chain's methods take, so every value is theirs bit for bit (`prepare_bounds_is_the_chains`).
    pub(crate) fn prepare_bounds(
        &mut self,
        chains: &[PseudoChain],
        slots: u32,
        q: &mut Vec<f64>,
        volumes: &mut Vec<f64>,
    ) {
        self.singles.clear();
        self.first_job.clear();
        self.single = true;
        q.clear();
        volumes.clear();
        let per_slot = f64::from(slots.max(1));
        let mut total = 0;
        for chain in chains {
            let (volume, critical_path) = match chain.pseudo_jobs.as_slice() {
                [] => {
                    self.singles.push(None);
                    (chain.volume(), chain.critical_path())
                }
                [pj] => {
                    let work = pj.work();
                    self.singles.push(Some((work, pj.bound)));
                    (std::iter::once(work).sum::<f64>(), std::iter::once(work / pj.bound as f64).sum::<f64>())
                }
                _ => {
                    self.single = false;
                    (chain.volume(), chain.critical_path())
                }
            };
            self.first_job.push(total);
            total += chain.pseudo_jobs.len();
            q.push(critical_path.max(volume / per_slot));
            volumes.push(volume);
        }
        self.first_job.push(total);
        if !self.single {
            // The general path reads the chains.
            self.singles.clear();
            self.first_job.clear();
        }
    }

    /// [`Greedy::schedule`] of the chains last given to [`Greedy::prepare_bounds`] (`chains` must be
    /// them): the staircase reads the prepared works and bounds, not the chains.
    pub(crate) fn schedule_prepared(
        &mut self,
        chains: &[PseudoChain],
        order: &[usize],
        slots: u32,
        out: &mut FlatSchedule,
    ) -> Result<()> {
        if !self.single || self.singles.len() != chains.len() {
            self.sigma.reset(slots);
            return run_greedy(chains, order, &mut self.sigma, &mut self.seen, out);
        }
        check_order(chains.len(), order, slots, &mut self.seen)?;
        out.pieces.clear();
        out.first_job.clone_from(&self.first_job);
        out.jobs.clear();
        out.jobs.resize(self.first_job.last().copied().unwrap_or(0), (0, 0));
        out.completion.clear();
        out.completion.resize(chains.len(), 0.0);
        self.stairs.reset(slots);
        for &c in order {
            let mut ready = 0.0f64;
            if let Some((work, bound)) = self.singles[c] {
                let start = out.pieces.len();
                self.stairs.fill(work, bound, &mut out.pieces);
                let end = out.pieces.len();
                if end > start {
                    ready = out.pieces[end - 1].end;
                }
                out.jobs[self.first_job[c]] = (start, end);
            }
            out.completion[c] = ready;
        }
        Ok(())
    }
}

/// List-schedules the chains greedily in `order` (a permutation of chain indices).
pub fn schedule_in_order(chains: &[PseudoChain], order: &[usize], slots: u32) -> Result<Vec<ChainSchedule>> {
    schedule_with(chains, order, Utilisation::new(slots))
}

fn schedule_with(chains: &[PseudoChain], order: &[usize], mut sigma: Utilisation) -> Result<Vec<ChainSchedule>> {
    let mut out = FlatSchedule::default();
    run_greedy(chains, order, &mut sigma, &mut Vec::new(), &mut out)?;
    Ok(out.to_chains())
}

/// The greedy on `sigma` (fresh), into `out`; `seen` is a scratch.
fn run_greedy(
    chains: &[PseudoChain],
    order: &[usize],
    sigma: &mut Utilisation,
    seen: &mut Vec<bool>,
    out: &mut FlatSchedule,
) -> Result<()> {
    lay_out(chains, order, sigma.slots, seen, out)?;
    for &c in order {
        let mut ready = 0.0f64;
        for (k, pj) in chains[c].pseudo_jobs.iter().enumerate() {
            let start = out.pieces.len();
            sigma.fill(ready, pj.work(), pj.bound, &mut out.pieces);
            let end = out.pieces.len();
            if end > start {
                ready = out.pieces[end - 1].end;
            }
            out.jobs[out.first_job[c] + k] = (start, end);
        }
        out.completion[c] = ready;
    }
    Ok(())
}

/// Checks that `order` is a permutation of the chains and `slots ≥ 1`, and empties `out` for a
/// greedy run: no pieces, every pseudo-job's range empty, every completion 0. `seen` is a scratch.
fn lay_out(
    chains: &[PseudoChain],
    order: &[usize],
    slots: u32,
    seen: &mut Vec<bool>,
    out: &mut FlatSchedule,
) -> Result<()> {
    check_order(chains.len(), order, slots, seen)?;
    out.pieces.clear();
    out.first_job.clear();
    let mut total = 0;
    for chain in chains {
        out.first_job.push(total);
        total += chain.pseudo_jobs.len();
    }
    out.first_job.push(total);
    out.jobs.clear();
    out.jobs.resize(total, (0, 0));
    out.completion.clear();
    out.completion.resize(chains.len(), 0.0);
    Ok(())
}

/// Checks that `order` is a permutation of `0..chains` and `slots ≥ 1`. `seen` is a scratch.
fn check_order(chains: usize, order: &[usize], slots: u32, seen: &mut Vec<bool>) -> Result<()> {
    seen.clear();
    seen.resize(chains, false);
    for &c in order {
        if c >= chains || std::mem::replace(&mut seen[c], true) {
            return Err(Error::job("flowflex order", format!("{order:?}"), "a permutation of the chain indices"));
        }
    }
    if order.len() != chains {
        return Err(Error::job("flowflex order", format!("{order:?}"), "a permutation of the chain indices"));
    }
    if slots == 0 {
        return Err(Error::job("slots", slots, "at least 1 processor"));
    }
    Ok(())
}

/// Lower bound `Q = max(CP, V/P)` of one chain.
pub fn chain_lower_bound(chain: &PseudoChain, slots: u32) -> f64 {
    chain.critical_path().max(chain.volume() / f64::from(slots.max(1)))
}

/// The priority order for `deadlines`: increasing deadline, ties to the larger `Q`, then index.
pub fn deadline_order(chains: &[PseudoChain], deadlines: &[f64], slots: u32) -> Vec<usize> {
    let q: Vec<f64> = chains.iter().map(|c| chain_lower_bound(c, slots)).collect();
    deadline_order_by(&q, deadlines)
}

/// [`deadline_order`] with the chains' lower bounds `q` (`chain_lower_bound(chain, slots)` each)
/// already computed, as the minisum rounding has them for every fraction it tries.
pub(crate) fn deadline_order_by(q: &[f64], deadlines: &[f64]) -> Vec<usize> {
    let mut order = Vec::with_capacity(q.len());
    deadline_order_into(q, deadlines, &mut order);
    order
}

/// [`deadline_order_by`] into `order` (whatever it held). The comparison is a total order (the
/// index breaks every tie), so the unstable sort, which needs no scratch allocation, gives the
/// stable one's order.
pub(crate) fn deadline_order_into(q: &[f64], deadlines: &[f64], order: &mut Vec<usize>) {
    order.clear();
    order.extend(0..q.len());
    order.sort_unstable_by(|&a, &b| deadlines[a].total_cmp(&deadlines[b]).then(q[b].total_cmp(&q[a])).then(a.cmp(&b)));
}

/// The indices of `values` by decreasing value (in `f64::total_cmp`'s order), ties to the smaller
/// index, into `order`: the chains by decreasing `Q` (the tie-break of [`deadline_order_into`]'s
/// order among equal deadlines) and the fill's chains steepest first. `keys` is a scratch: the
/// indices are sorted as `(!total_key(v_j), j)` pairs, which compare as the comparator
/// `values[b].total_cmp(&values[a]).then(a.cmp(&b))` does, without reading the values through the
/// index at every comparison (issue 20); the order is unique, so the unstable sort gives it.
pub(crate) fn decreasing_order_into(values: &[f64], keys: &mut Vec<(i64, usize)>, order: &mut Vec<usize>) {
    keys.clear();
    keys.extend(values.iter().enumerate().map(|(j, &v)| (!total_key(v), j)));
    keys.sort_unstable();
    order.clear();
    order.extend(keys.iter().map(|&(_, j)| j));
}

/// An integer that orders as `f64::total_cmp` orders: `total_key(a).cmp(&total_key(b))` is
/// `a.total_cmp(&b)` (the standard library's own transform: negative values have their other bits
/// flipped, so they order backwards, below the positive ones). `!` reverses it.
fn total_key(x: f64) -> i64 {
    let bits = x.to_bits() as i64;
    bits ^ (((bits >> 63) as u64) >> 1) as i64
}

/// [`deadline_order_into`] for deadlines that are points of an increasing grid of `points` points,
/// given as indices (`deadlines[j] = grid[intervals[j]]`; distinct indices, distinct deadlines),
/// with the chains sorted by `q` ([`decreasing_order_into`]): a stable counting sort of `by_q` by index. Its
/// order is the sort's, which is unique (the comparison is a total order). `counts` is a scratch.
pub(crate) fn order_by_intervals(
    by_q: &[usize],
    intervals: &[usize],
    points: usize,
    counts: &mut Vec<usize>,
    order: &mut Vec<usize>,
) {
    counts.clear();
    counts.resize(points + 1, 0);
    for &k in intervals {
        counts[k + 1] += 1;
    }
    for k in 1..counts.len() {
        counts[k] += counts[k - 1];
    }
    order.clear();
    order.resize(by_q.len(), 0);
    for &j in by_q {
        let at = &mut counts[intervals[j]];
        order[*at] = j;
        *at += 1;
    }
}

/// Fig. 5: schedule the chains in deadline order and flag whether every chain meets twice its deadline.
pub fn schedule_by_deadlines(chains: &[PseudoChain], deadlines: &[f64], slots: u32) -> Result<DeadlineSchedule> {
    if deadlines.len() != chains.len() {
        return Err(Error::job("deadlines", deadlines.len(), format!("one deadline per chain ({})", chains.len())));
    }
    if let Some((j, d)) = deadlines.iter().enumerate().find(|(_, d)| d.is_nan()) {
        return Err(Error::job(&format!("deadlines[{j}]"), d, "a number or +inf"));
    }
    let order = deadline_order(chains, deadlines, slots);
    schedule_in_deadline_order(chains, deadlines, order, slots)
}

/// [`schedule_by_deadlines`] with its order already computed (`deadline_order(chains, deadlines,
/// slots)`).
pub(crate) fn schedule_in_deadline_order(
    chains: &[PseudoChain],
    deadlines: &[f64],
    order: Vec<usize>,
    slots: u32,
) -> Result<DeadlineSchedule> {
    let schedules = schedule_in_order(chains, &order, slots)?;
    let meets = schedules.iter().zip(deadlines).all(|(s, &d)| within(s.completion, 2.0 * d));
    Ok(DeadlineSchedule { chains: schedules, order, meets_doubled_deadlines: meets })
}

/// `value ≤ limit` up to a relative tolerance of 1e-9.
pub(crate) fn within(value: f64, limit: f64) -> bool {
    value <= limit + 1e-9 * limit.abs().max(1.0)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::super::chain::{Portion, PseudoJob};
    use super::super::flow::tests::t1_flow;
    use super::*;
    use proptest::prelude::*;

    /// Weighted completion time `slope · t`.
    pub(crate) fn linear(slope: f64) -> crate::flex::metrics::Penalty {
        crate::flex::metrics::Penalty::Linear { slope, origin: 0.0 }
    }

    /// A chain of single-job pseudo-jobs `(work, bound)`.
    pub(crate) fn chain(parts: &[(f64, u64)]) -> PseudoChain {
        let mut at = 0.0;
        let pseudo_jobs = parts
            .iter()
            .map(|&(work, bound)| {
                let start = at;
                at += work / bound as f64;
                let portion = Portion { job: 0, max_parallelism: bound as u32, work };
                PseudoJob { start, end: at, bound, portions: vec![portion] }
            })
            .collect();
        PseudoChain { pseudo_jobs }
    }

    fn spans(s: &ChainSchedule) -> Vec<Vec<(f64, f64, u32)>> {
        s.pieces.iter().map(|h| h.iter().map(|p| (p.start, p.end, p.slots)).collect()).collect()
    }

    /// Digest T2: the T1 chain alone with P = 2 runs at rate 2 throughout and ends at 7.5; with
    /// P ≥ 4 it ends at CP = 5.
    #[test]
    fn t2_single_chain() {
        let c = PseudoChain::from_flow(&t1_flow(4));
        let s = schedule_in_order(std::slice::from_ref(&c), &[0], 2).unwrap();
        assert_eq!(
            spans(&s[0]),
            vec![vec![(0.0, 3.0, 2)], vec![(3.0, 5.0, 2)], vec![(5.0, 6.5, 2)], vec![(6.5, 7.5, 2)]]
        );
        assert_eq!(s[0].completion, 7.5);
        assert_eq!(schedule_in_order(&[c], &[0], 4).unwrap()[0].completion, 5.0);
    }

    /// Digest T3: pj1 (5 work, r = 5) at rate 4 on [0, 1.25), pj2 at rate 1 on [1.25, 4.25).
    #[test]
    fn t3_greedy_completion() {
        let c = chain(&[(5.0, 5), (3.0, 1)]);
        let s = schedule_in_order(&[c], &[0], 4).unwrap();
        assert_eq!(spans(&s[0]), vec![vec![(0.0, 1.25, 4)], vec![(1.25, 4.25, 1)]]);
    }

    /// Digest T4: equal deadlines; order (A, B) gives C_A = 2, C_B = 6 and Fig. 5 still reports
    /// feasible (6 ≤ 8); our tie-break (larger Q first) picks (B, A): C_A = 8/3, C_B = 4.
    #[test]
    fn t4_tie_break_matters() {
        let chains = [chain(&[(8.0, 4)]), chain(&[(4.0, 1)])];
        let ab = schedule_in_order(&chains, &[0, 1], 4).unwrap();
        assert_eq!((ab[0].completion, ab[1].completion), (2.0, 6.0));
        assert_eq!(spans(&ab[1]), vec![vec![(2.0, 6.0, 1)]]);
        let out = schedule_by_deadlines(&chains, &[4.0, 4.0], 4).unwrap();
        assert_eq!(out.order, vec![1, 0]);
        assert!(out.meets_doubled_deadlines);
        assert!((out.chains[0].completion - 8.0 / 3.0).abs() < 1e-12);
        assert_eq!(out.chains[1].completion, 4.0);
        let tight = schedule_by_deadlines(&chains, &[1.0, 1.0], 4).unwrap();
        assert!(!tight.meets_doubled_deadlines);
    }

    /// Digest T5: lower priority fills holes (rate 3 on [0,2)), waits while A takes all 4 slots,
    /// then finishes at 5.5 ≤ (V_A + V_B)/P + CP_B = 8.5.
    #[test]
    fn t5_fills_holes_and_waits() {
        let chains = [chain(&[(2.0, 1), (8.0, 4)]), chain(&[(12.0, 4)])];
        let s = schedule_by_deadlines(&chains, &[1.0, 2.0], 4).unwrap();
        assert_eq!(spans(&s.chains[0]), vec![vec![(0.0, 2.0, 1)], vec![(2.0, 4.0, 4)]]);
        assert_eq!(spans(&s.chains[1]), vec![vec![(0.0, 2.0, 3), (4.0, 5.5, 4)]]);
    }

    #[test]
    fn rejects_bad_orders_and_deadlines() {
        let chains = [chain(&[(1.0, 1)]), chain(&[(1.0, 1)])];
        assert!(schedule_in_order(&chains, &[0, 0], 2).is_err());
        assert!(schedule_in_order(&chains, &[0], 2).is_err());
        assert!(schedule_in_order(&chains, &[0, 2], 2).is_err());
        let err = schedule_by_deadlines(&chains, &[1.0, f64::NAN], 2).unwrap_err();
        assert!(err.to_string().contains("deadlines[1]"), "{err}");
        assert!(schedule_by_deadlines(&chains, &[1.0], 2).is_err());
    }

    pub(crate) fn arb_chains() -> impl Strategy<Value = (Vec<PseudoChain>, u32)> {
        (1u32..=6)
            .prop_flat_map(|slots| {
                let part = (1u32..=30, 1u64..=(2 * u64::from(slots)));
                let chain_parts = proptest::collection::vec(part, 1..5);
                (proptest::collection::vec(chain_parts, 1..6), Just(slots))
            })
            .prop_map(|(parts, slots)| {
                let chains = parts
                    .iter()
                    .map(|c| chain(&c.iter().map(|&(w, b)| (f64::from(w) * 0.25, b)).collect::<Vec<_>>()))
                    .collect();
                (chains, slots)
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(128))]
        /// The jump over saturated ranges (issue 20) gives exactly the schedule of the plain walk
        /// over every segment: many chains on few slots, odd work sizes, any order.
        #[test]
        fn jumping_saturated_ranges_matches_the_walk(
            slots in 1u32..=8,
            parts in proptest::collection::vec(proptest::collection::vec((1u32..=97, 1u64..=12), 1..7), 1..14),
            keys in proptest::collection::vec(any::<u32>(), 14),
        ) {
            let chains: Vec<PseudoChain> = parts
                .iter()
                .map(|c| chain(&c.iter().map(|&(w, b)| (f64::from(w) / 7.0, b)).collect::<Vec<_>>()))
                .collect();
            let mut order: Vec<usize> = (0..chains.len()).collect();
            order.sort_by_key(|&c| keys[c]);
            let jumped = schedule_with(&chains, &order, Utilisation::new(slots)).unwrap();
            let walked = schedule_with(&chains, &order, Utilisation { jump: false, ..Utilisation::new(slots) }).unwrap();
            prop_assert_eq!(jumped, walked);
        }
    }

    /// A piece's start and end as bits, and its slots.
    pub(crate) type PieceBits = (u64, u64, u32);

    /// The schedule's every float as bits (so `-0.0` and `0.0` differ), with its slot counts.
    pub(crate) fn bits(chains: &[ChainSchedule]) -> Vec<(u64, Vec<Vec<PieceBits>>)> {
        chains
            .iter()
            .map(|s| {
                let pieces =
                    s.pieces.iter().map(|h| h.iter().map(|p| (p.start.to_bits(), p.end.to_bits(), p.slots)).collect());
                (s.completion.to_bits(), pieces.collect())
            })
            .collect()
    }

    /// A chain of one pseudo-job of `work` (split over `portions` jobs) and bound `bound` (as given,
    /// even 0 or above `u32::MAX`).
    fn singleton(work: f64, portions: usize, bound: u64) -> PseudoChain {
        let share = work / portions as f64;
        let portions = (0..portions).map(|job| Portion { job, max_parallelism: 1 + job as u32, work: share }).collect();
        PseudoChain { pseudo_jobs: vec![PseudoJob { start: 0.0, end: 1.0, bound, portions }] }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]
        /// The staircase (chains of at most one pseudo-job) gives the walk's schedule over the
        /// `Utilisation` bit for bit: works in sevenths (exact ties between pieces) or arbitrary,
        /// bounds from 0 to far above `P`, empty chains, any order, one `Greedy` reused across runs.
        #[test]
        fn staircase_fills_as_the_utilisation(
            slots in 1u32..=9,
            parts in proptest::collection::vec((0u32..=97, any::<bool>(), 0.0f64..50.0, 1usize..=3, 0u64..=20), 1..30),
            empty in proptest::collection::vec(any::<bool>(), 30),
            keys in proptest::collection::vec(any::<u32>(), 30),
            huge in any::<bool>(),
        ) {
            let chains: Vec<PseudoChain> = parts
                .iter()
                .enumerate()
                .map(|(c, &(sevenths, exact, any, portions, bound))| {
                    if empty[c] && c % 3 == 0 {
                        return PseudoChain { pseudo_jobs: Vec::new() };
                    }
                    let work = if exact { f64::from(sevenths) / 7.0 } else { any };
                    let bound = if huge && c % 5 == 1 { u64::MAX - bound } else { bound };
                    singleton(work, portions, bound)
                })
                .collect();
            let mut order: Vec<usize> = (0..chains.len()).collect();
            order.sort_by_key(|&c| keys[c]);
            let walked = schedule_with(&chains, &order, Utilisation::new(slots)).unwrap();
            let mut greedy = Greedy::default();
            let mut out = FlatSchedule::default();
            for _ in 0..2 {
                greedy.schedule(&chains, &order, slots, &mut out).unwrap();
                prop_assert_eq!(bits(&out.to_chains()), bits(&walked));
            }
            // The other path (a chain of several pseudo-jobs) on the same kept state.
            let mut mixed = chains.clone();
            mixed.push(chain(&[(1.5, 2), (2.0, 1)]));
            order.push(chains.len());
            greedy.schedule(&mixed, &order, slots, &mut out).unwrap();
            prop_assert_eq!(bits(&out.to_chains()), bits(&schedule_in_order(&mixed, &order, slots).unwrap()));
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]
        /// `prepare_bounds` gives `chain_lower_bound` and `volume` bit for bit, and the prepared
        /// greedy the walk's schedule, on chains of one pseudo-job (one to three jobs, odd works,
        /// bounds 0 to 20), empty chains and chains of several pseudo-jobs (then the general path),
        /// one `Greedy` reused across instances.
        #[test]
        fn prepare_bounds_is_the_chains(
            instances in proptest::collection::vec((
                1u32..=9,
                proptest::collection::vec((0u32..=97, any::<bool>(), 0.0f64..50.0, 1usize..=3, 0u64..=20, 0u8..8), 1..25),
                proptest::collection::vec(any::<u32>(), 25),
            ), 3),
        ) {
            let mut greedy = Greedy::default();
            let (mut q, mut volumes, mut out) = (vec![7.0], Vec::new(), FlatSchedule::default());
            for (slots, parts, keys) in instances {
                let chains: Vec<PseudoChain> = parts
                    .iter()
                    .map(|&(sevenths, exact, any, portions, bound, kind)| {
                        let work = if exact { f64::from(sevenths) / 7.0 } else { any };
                        match kind {
                            0 => PseudoChain { pseudo_jobs: Vec::new() },
                            1 => chain(&[(work, bound.max(1)), (1.0 + work / 3.0, 2)]),
                            _ => singleton(work, portions, bound),
                        }
                    })
                    .collect();
                greedy.prepare_bounds(&chains, slots, &mut q, &mut volumes);
                let expected_q: Vec<u64> = chains.iter().map(|c| chain_lower_bound(c, slots).to_bits()).collect();
                let expected_v: Vec<u64> = chains.iter().map(|c| c.volume().to_bits()).collect();
                prop_assert_eq!(q.iter().map(|x| x.to_bits()).collect::<Vec<_>>(), expected_q);
                prop_assert_eq!(volumes.iter().map(|x| x.to_bits()).collect::<Vec<_>>(), expected_v);
                let mut order: Vec<usize> = (0..chains.len()).collect();
                order.sort_by_key(|&c| keys[c]);
                greedy.schedule_prepared(&chains, &order, slots, &mut out).unwrap();
                prop_assert_eq!(bits(&out.to_chains()), bits(&schedule_in_order(&chains, &order, slots).unwrap()));
            }
        }

        /// `decreasing_order_into`'s keyed sort is the comparator's sort (decreasing by `total_cmp`,
        /// ties to the smaller index) on values with ties, signed zeros, negatives, infinities and NaNs.
        #[test]
        fn decreasing_order_sorts_as_the_comparator(
            picks in proptest::collection::vec((0usize..10, -5.0f64..5.0, any::<f64>()), 0..30),
        ) {
            let special = [0.0, -0.0, 1.0, 1.0 + f64::EPSILON, -1.0, f64::INFINITY, f64::NEG_INFINITY, f64::NAN, -f64::NAN];
            let q: Vec<f64> = picks
                .iter()
                .map(|&(kind, small, any)| match kind {
                    0..=4 => special[kind * 2 % special.len()],
                    5 | 6 => small,
                    7 => special[7 + kind % 2],
                    _ => any,
                })
                .collect();
            let (mut keys, mut by_q) = (Vec::new(), vec![3]);
            decreasing_order_into(&q, &mut keys, &mut by_q);
            let mut expected: Vec<usize> = (0..q.len()).collect();
            expected.sort_by(|&a, &b| q[b].total_cmp(&q[a]).then(a.cmp(&b)));
            prop_assert_eq!(by_q, expected);
        }
    }

    proptest! {
        /// Digest §5 invariants 1, 2, 3, 5 and 6 for the greedy in index order.
        #[test]
        fn greedy_invariants((chains, slots) in arb_chains()) {
            let order: Vec<usize> = (0..chains.len()).collect();
            let out = schedule_in_order(&chains, &order, slots).unwrap();
            let mut events: Vec<(f64, i64)> = Vec::new();
            let mut prefix_volume = 0.0;
            for (c, s) in chains.iter().zip(&out) {
                let mut ready = 0.0;
                for (pj, h) in c.pseudo_jobs.iter().zip(&s.pieces) {
                    let work: f64 = h.iter().map(Piece::work).sum();
                    prop_assert!((work - pj.work()).abs() < 1e-9);
                    for p in h {
                        prop_assert!(p.start >= ready - 1e-12 && p.end > p.start);
                        prop_assert!(u64::from(p.slots) <= pj.bound.min(u64::from(slots)));
                        events.push((p.start, i64::from(p.slots)));
                        events.push((p.end, -i64::from(p.slots)));
                    }
                    ready = h.last().map_or(ready, |p| p.end);
                }
                prefix_volume += c.volume();
                prop_assert!(s.completion <= prefix_volume / f64::from(slots) + c.critical_path() + 1e-9);
            }
            events.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
            let mut load = 0i64;
            for (_, delta) in events {
                load += delta;
                prop_assert!(load <= i64::from(slots));
            }
            if chains.len() == 1 {
                let alone: f64 = chains[0].pseudo_jobs.iter()
                    .map(|k| k.work() / k.bound.min(u64::from(slots)) as f64).sum();
                prop_assert!((out[0].completion - alone).abs() < 1e-9);
            }
            // A chain's schedule does not depend on chains of lower priority.
            let prefix = schedule_in_order(&chains[..1], &[0], slots).unwrap();
            prop_assert_eq!(&prefix[0], &out[0]);
        }
    }
}
