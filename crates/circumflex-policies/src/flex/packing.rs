//! Ready-list malleable packing (CIRCUMFLEX appendix B.3, digest §3.5): turns a priority order
//! into a malleable schedule, a sequence of intervals `[T_{i−1}, T_i)` each ending with one
//! completion, with integer slot allocations that honour every job's minimum `m_j`, maximum
//! `M_j` and the total `S`.
//!
//! **The allocation rule** of one interval, over the ready jobs in priority order ([`allocate`]):
//! - if the minima fit (`Σ m_j <= S`): every ready job gets `m_j`; the slack `S − Σ m_j` (summed
//!   over the **ready** list L1, not all jobs: digest §7.3) is handed out in priority order, each
//!   job taking up to `M_j − m_j`, stopping when the slack or the list runs out (the "L2 empty"
//!   guard; leftover slots idle only when every ready job is at its maximum). The shape is a
//!   prefix at `M_j`, at most one partial job, the rest at `m_j`.
//! - if they do not fit (**minimum normalisation**, unspecified in the paper): minima are granted
//!   in priority order; the first job that does not fit gets what is left, later jobs get 0. This
//!   keeps the packing's "priority first" character and matches how the Fair policy grants
//!   minimums; it is re-applied every interval, so lower jobs get their minima as soon as
//!   higher-priority jobs complete.
//! - `m_j > M_j` is clamped to `M_j`.
//!
//! **Completions.** Work is fluid with linear speed-up: a job with remaining `R` and `s` slots
//! finishes after `R / s`. A job with `s = 0` and `R > 0` does not complete in that interval
//! (time ∞); if no ready job can progress the schedule stops and the rest never complete
//! (`f64::INFINITY`). A job with `R = 0` completes at once. Simultaneous completions (equal
//! times) go in priority order, each in its own (zero-length) interval. Near-equal times that
//! differ only by float rounding may complete in either order; the state after both is the same,
//! so only a zero-length interval differs.
//!
//! **Two implementations, one rule.**
//! - [`pack_with_precedence`] is the literal loop with a ready list for any [`Precedence`] (chains, DAGs):
//!   it recomputes the allocation each interval, `O(J · |L1|)`, and can record every interval.
//! - [`pack`] is the fast path for independent jobs (FLEX). Without precedence the ready list only
//!   shrinks, so allocations only grow and only the *frontier* moves: when a job completes its
//!   slots go to the partial job, which may reach its maximum and pass the rest on down the list.
//!   Each job is promoted to its maximum at most once and the partial job changes once per
//!   completion, so there are `O(J)` allocation changes. Jobs whose allocation is unchanged keep
//!   a fixed predicted completion (`t0 + R0 / s`) in a heap with lazy invalidation; jobs at 0
//!   slots are not in the heap at all. Total `O(J log J)`. While minima do not fit the same
//!   frontier walk runs over minima (band `0..m_j`); the one switch to the normal band recomputes
//!   all allocations once.
//!
//! What is computed exactly: the first interval's allocation (the one the engine enforces) and
//! every job's predicted completion under the full schedule; later intervals' allocations are
//! not materialised by [`pack`] (they would cost `O(J²)` memory) and tests compare both
//! implementations on the completions.
//!
//! **The first interval alone.** [`first_into`] computes [`pack`]'s `first` without the schedule:
//! the allocation rule over the jobs with work, in rank order, walked only as far as the rule needs
//! (when minima do not fit, the prefix that exhausts the pool; when they fit, every job keeps its
//! minimum and the slack stops at the first job it cannot fill). A job with no work completes at
//! once, in a zero-length interval, so it holds nothing in the first interval of positive length.
//! FLEX's plans use it and run the full packing only when a status view asks for predicted
//! completions (`circumflex_core::policy::Policy::predict_completions`, `docs/performance.md` §17).

use std::cmp::Ordering;
use std::collections::{BTreeSet, BinaryHeap};

use super::precedence::Precedence;

/// One job (or subjob) to pack.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PackJob {
    /// Remaining work in slot-time units (e.g. slot-ms); >= 0.
    pub work: f64,
    /// Minimum slots `m_j` while ready.
    pub min: u32,
    /// Maximum slots `M_j`.
    pub max: u32,
}

impl PackJob {
    #[inline]
    fn lo(&self) -> u32 {
        self.min.min(self.max)
    }
}

/// One interval of a traced schedule.
#[derive(Clone, Debug, PartialEq)]
pub struct Interval {
    /// Start (relative time).
    pub start: f64,
    /// End (the completion that closes it).
    pub end: f64,
    /// The job that completes at `end`.
    pub completed: usize,
    /// `(job, slots)` of the ready jobs, in priority order (zero allocations included).
    pub alloc: Vec<(usize, u32)>,
}

/// A packed schedule.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Packing {
    /// Slots per job (by input index) in the first interval of positive length.
    pub first: Vec<u32>,
    /// Completion time per job, relative to the start (∞ = never, see the module docs).
    pub completion: Vec<f64>,
    /// Every interval, when traced ([`pack_with_precedence`] with `trace = true`); empty otherwise.
    pub intervals: Vec<Interval>,
}

/// Priority rank per job: position in `order`; jobs missing from it follow by index, and repeats
/// are ignored.
fn ranks(order: &[usize], n: usize) -> Vec<usize> {
    let mut rank = Vec::new();
    ranks_into(order, n, &mut rank);
    rank
}

/// [`ranks`] written into `rank` (its buffer reused).
fn ranks_into(order: &[usize], n: usize, rank: &mut Vec<usize>) {
    rank.clear();
    rank.resize(n, usize::MAX);
    let mut next = 0;
    for &j in order {
        if j < n && rank[j] == usize::MAX {
            rank[j] = next;
            next += 1;
        }
    }
    for r in rank.iter_mut() {
        if *r == usize::MAX {
            *r = next;
            next += 1;
        }
    }
}

/// The allocation rule (module docs) for `ready` jobs listed in priority order; writes `out[j]`.
pub fn allocate(capacity: u32, ready: &[usize], jobs: &[PackJob], out: &mut [u32]) {
    let sum_min: u64 = ready.iter().map(|&j| jobs[j].lo() as u64).sum();
    if sum_min > capacity as u64 {
        let mut left = capacity;
        for &j in ready {
            let g = jobs[j].lo().min(left);
            out[j] = g;
            left -= g;
        }
        return;
    }
    let mut slack = capacity - sum_min as u32;
    for &j in ready {
        let lo = jobs[j].lo();
        let add = (jobs[j].max - lo).min(slack);
        out[j] = lo + add;
        slack -= add;
    }
}

/// The literal ready-list packing for any precedence; records intervals when `trace`.
pub fn pack_with_precedence(
    capacity: u32,
    jobs: &[PackJob],
    order: &[usize],
    precedence: &Precedence,
    trace: bool,
) -> Packing {
    let n = jobs.len();
    let rank = ranks(order, n);
    let mut open_pred: Vec<usize> = (0..n).map(|j| precedence.predecessors(j).len()).collect();
    let mut ready: BTreeSet<(usize, usize)> = (0..n).filter(|&j| open_pred[j] == 0).map(|j| (rank[j], j)).collect();
    let mut remaining: Vec<f64> = jobs.iter().map(|j| j.work.max(0.0)).collect();
    let mut out = Packing { first: vec![0; n], completion: vec![f64::INFINITY; n], intervals: Vec::new() };
    let mut alloc = vec![0u32; n];
    let mut list: Vec<usize> = Vec::with_capacity(n);
    let mut first_set = false;
    let mut t = 0.0f64;
    while !ready.is_empty() {
        list.clear();
        list.extend(ready.iter().map(|&(_, j)| j));
        allocate(capacity, &list, jobs, &mut alloc);
        // The earliest completion; equal times go to the higher priority (the first in `list`).
        let finish = |j: usize| {
            if remaining[j] <= 0.0 {
                t
            } else if alloc[j] > 0 {
                t + remaining[j] / alloc[j] as f64
            } else {
                f64::INFINITY
            }
        };
        let tmin = list.iter().map(|&j| finish(j)).fold(f64::INFINITY, f64::min);
        if tmin == f64::INFINITY {
            break;
        }
        let Some(&pick) = list.iter().find(|&&j| finish(j) <= tmin) else { break };
        let end = finish(pick).max(t);
        if !first_set && end > t {
            for &j in &list {
                out.first[j] = alloc[j];
            }
            first_set = true;
        }
        for &j in &list {
            remaining[j] = (remaining[j] - alloc[j] as f64 * (end - t)).max(0.0);
        }
        remaining[pick] = 0.0;
        if trace {
            out.intervals.push(Interval {
                start: t,
                end,
                completed: pick,
                alloc: list.iter().map(|&j| (j, alloc[j])).collect(),
            });
        }
        out.completion[pick] = end;
        ready.remove(&(rank[pick], pick));
        for &s in precedence.successors(pick) {
            let s = s as usize;
            open_pred[s] -= 1;
            if open_pred[s] == 0 {
                ready.insert((rank[s], s));
            }
        }
        t = end;
    }
    out
}

/// Heap entry of the fast path: predicted completion of the job at rank `rank`. The time is kept
/// as the bit pattern of a non-negative float, which orders like the float and compares as an
/// integer (the heap's hot loop).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Due {
    time_bits: u64,
    rank: u32,
    version: u32,
}

impl Due {
    fn new(time: f64, rank: usize, version: u32) -> Due {
        // `+ 0.0` turns a -0.0 into +0.0; times are never negative.
        Due { time_bits: (time.max(0.0) + 0.0).to_bits(), rank: rank as u32, version }
    }

    fn time(&self) -> f64 {
        f64::from_bits(self.time_bits)
    }
}

impl PartialOrd for Due {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Due {
    fn cmp(&self, other: &Self) -> Ordering {
        // Min-heap on (time, rank); the version never decides (at most one valid entry per rank).
        (other.time_bits, other.rank, other.version).cmp(&(self.time_bits, self.rank, self.version))
    }
}

const NIL: u32 = u32::MAX;

/// One job of the fast path, by rank: its bounds, its place in the list of live jobs and its
/// current allocation, in one record (one cache line per job instead of one per array).
#[derive(Clone, Copy, Debug)]
struct Slot {
    /// `m_j` clamped to `M_j`.
    lo: u32,
    /// `M_j`.
    max: u32,
    next: u32,
    prev: u32,
    /// Slots held now.
    slots: u32,
    /// Bumped at every change: heap entries of an older version are stale.
    version: u32,
    /// When `slots` was last set.
    t0: f64,
    /// Remaining work at `t0`.
    r0: f64,
}

/// State of the fast path, indexed by rank.
///
/// Every valid completion entry (one per job holding slots) is either in the heap or in `side`.
/// `side` holds the latest entry of the frontier job, whose allocation changes at almost every
/// completion: replacing it there instead of pushing a new heap entry each time (and popping
/// the stale one later) halves the heap's traffic. The next completion is the smaller of
/// `side` and the heap's first valid entry, in the heap's order, so the schedule is the one a
/// heap holding every entry gives.
struct Frontier {
    slots: Vec<Slot>,
    head: u32,
    heap: BinaryHeap<Due>,
    side: Option<Due>,
    /// Minima do not fit: the band is `0..m` instead of `m..M`.
    minima_mode: bool,
    /// The frontier rank (first job below the top of its band), or NIL.
    f: u32,
    /// Slots beyond the band bottom held by `f` (idle slots when `f` is NIL).
    extra: u32,
}

impl Frontier {
    #[inline]
    fn band(&self, r: u32) -> (u32, u32) {
        let j = &self.slots[r as usize];
        if self.minima_mode {
            (0, j.lo)
        } else {
            (j.lo, j.max)
        }
    }

    #[inline]
    fn valid(&self, e: &Due) -> bool {
        e.version == self.slots[e.rank as usize].version
    }

    fn set(&mut self, r: u32, s: u32, t: f64) {
        let job = &mut self.slots[r as usize];
        if job.slots == s {
            return;
        }
        let r_now = (job.r0 - job.slots as f64 * (t - job.t0)).max(0.0);
        job.r0 = r_now;
        job.t0 = t;
        job.slots = s;
        job.version = job.version.wrapping_add(1);
        if s > 0 {
            let due = Due::new(t + r_now / s as f64, r as usize, job.version);
            if r == self.f {
                if let Some(old) = self.side.replace(due) {
                    if old.rank != r && self.valid(&old) {
                        self.heap.push(old);
                    }
                }
            } else {
                self.heap.push(due);
            }
        }
    }

    /// Hands `avail` slots (beyond band bottoms) down the list from the frontier `f`.
    fn advance(&mut self, mut avail: u32, t: f64) {
        while self.f != NIL {
            let (lo, hi) = self.band(self.f);
            if avail < hi - lo {
                break;
            }
            self.set(self.f, hi, t);
            avail -= hi - lo;
            self.f = self.slots[self.f as usize].next;
        }
        if self.f != NIL {
            let (lo, _) = self.band(self.f);
            self.set(self.f, lo + avail, t);
        }
        self.extra = avail;
    }

    /// Recomputes every allocation from scratch at time `t` (start, and the one mode switch).
    fn reset(&mut self, capacity: u32, t: f64) {
        let mut sum_lo: u64 = 0;
        let mut r = self.head;
        while r != NIL {
            let (lo, _) = self.band(r);
            sum_lo += lo as u64;
            r = self.slots[r as usize].next;
        }
        let mut r = self.head;
        while r != NIL {
            let (lo, _) = self.band(r);
            self.set(r, lo, t);
            r = self.slots[r as usize].next;
        }
        self.f = self.head;
        self.advance(capacity.saturating_sub(sum_lo.min(u32::MAX as u64) as u32), t);
    }

    fn unlink(&mut self, r: u32) {
        let Slot { prev: p, next: n, .. } = self.slots[r as usize];
        if p != NIL {
            self.slots[p as usize].next = n;
        } else {
            self.head = n;
        }
        if n != NIL {
            self.slots[n as usize].prev = p;
        }
        let job = &mut self.slots[r as usize];
        job.version = job.version.wrapping_add(1);
    }

    /// The next completion: the earliest valid entry (ties to the lowest rank, by the heap order).
    fn pop_next(&mut self) -> Option<Due> {
        while let Some(top) = self.heap.peek() {
            if self.valid(top) {
                break;
            }
            self.heap.pop();
        }
        let side = self.side.filter(|e| self.valid(e));
        match (self.heap.peek().copied(), side) {
            (Some(h), Some(s)) if (s.time_bits, s.rank) > (h.time_bits, h.rank) => self.heap.pop(),
            (_, Some(s)) => {
                self.side = None;
                Some(s)
            }
            (_, None) => {
                self.side = None;
                self.heap.pop()
            }
        }
    }
}

/// The working buffers of [`pack`], kept by a caller that packs again and again (a policy's
/// re-plans: [`pack_into`]) so that a pack allocates nothing once they have grown to the largest
/// problem seen. Their contents between calls mean nothing.
#[derive(Clone, Debug, Default)]
pub struct PackScratch {
    rank: Vec<usize>,
    by_rank: Vec<usize>,
    slots: Vec<Slot>,
    heap: BinaryHeap<Due>,
}

/// The working buffer of [`first_into`]: which jobs the rank walk has met (a bit per job), kept
/// by a caller that computes first allocations again and again. Its contents between calls mean nothing.
#[derive(Clone, Debug, Default)]
pub struct FirstScratch {
    seen: Vec<u64>,
}

/// The jobs in rank order ([`ranks`]: `order`'s first occurrences of indices below `n`, then the
/// jobs it misses, by index), handed to `visit` until it returns `false`. `O(k + n / 64)` for `k`
/// jobs visited when `order` covers them, so a walk that stops early reads only a prefix.
fn walk_ranks(order: &[usize], n: usize, seen: &mut Vec<u64>, mut visit: impl FnMut(usize) -> bool) {
    seen.clear();
    seen.resize(n.div_ceil(64), 0);
    let mut met = 0;
    for &j in order {
        if j >= n {
            continue;
        }
        let (w, b) = (j / 64, 1u64 << (j % 64));
        if seen[w] & b != 0 {
            continue;
        }
        seen[w] |= b;
        met += 1;
        if !visit(j) {
            return;
        }
    }
    if met < n {
        for j in 0..n {
            if seen[j / 64] & (1u64 << (j % 64)) == 0 && !visit(j) {
                return;
            }
        }
    }
}

/// [`pack`]'s `first` alone (the first interval's allocation, the one the engine enforces), written
/// into `first` (its vector reused), without the schedule: the allocation rule (module docs) over the
/// jobs with work, in rank order, walked only as far as it must. One sequential pass grants every job
/// with work its minimum and sums them. If they fit, a walk in rank order hands the slack out (each
/// job up to its maximum) and stops at the first job it cannot fill; every later job keeps its
/// minimum. If they do not (minimum normalisation), the grants are cleared and a walk in rank order
/// grants minima until the pool runs out: the job that passes it gets what is left, every later job
/// 0, and the walk stops there. So the work is `O(J)` sequential (the pass, and `J / 64` words of the
/// walk's marks) plus the prefix the rule reaches, in random order. Zero-work jobs complete at once
/// and hold no slot in the first interval of positive length; they get 0, as in [`pack`]. Equal to
/// [`pack`]'s `first` bit for bit (`tests::first_into_equals_pack`).
pub fn first_into(capacity: u32, jobs: &[PackJob], order: &[usize], scratch: &mut FirstScratch, first: &mut Vec<u32>) {
    let n = jobs.len();
    first.clear();
    first.resize(n, 0);
    let cap = capacity as u64;
    let mut sum_lo: u64 = 0;
    for (f, job) in first.iter_mut().zip(jobs) {
        if job.work > 0.0 {
            *f = job.lo();
            sum_lo += *f as u64;
        }
    }
    if sum_lo > cap {
        // Minima do not fit: granted in rank order until the pool runs out.
        first.fill(0);
        let mut left = cap;
        walk_ranks(order, n, &mut scratch.seen, |j| {
            let job = &jobs[j];
            if job.work > 0.0 {
                let lo = job.lo() as u64;
                if left < lo {
                    // The frontier: what is left (less than its minimum); later jobs get 0.
                    first[j] = left as u32;
                    return false;
                }
                first[j] = lo as u32;
                left -= lo;
            }
            true
        });
        return;
    }
    // Every job with work holds its minimum; the slack goes down the list up to each maximum.
    let mut slack = cap - sum_lo;
    walk_ranks(order, n, &mut scratch.seen, |j| {
        let job = &jobs[j];
        if job.work > 0.0 {
            let (lo, hi) = (job.lo(), job.max);
            let band = (hi - lo) as u64;
            if slack < band {
                first[j] = lo + slack as u32;
                return false;
            }
            first[j] = hi;
            slack -= band;
        }
        true
    });
}

/// Fast packing for independent jobs: the first allocation and every completion, `O(J log J)`.
/// Same results as [`pack_with_precedence`] with no precedence (up to float rounding of completions).
pub fn pack(capacity: u32, jobs: &[PackJob], order: &[usize]) -> Packing {
    let mut out = Packing::default();
    pack_into(capacity, jobs, order, &mut PackScratch::default(), &mut out);
    out
}

/// [`pack`] into `out` (its vectors reused; `intervals` left empty), with working buffers from
/// `scratch`: the same result bit for bit, without allocating when the buffers are large enough.
pub fn pack_into(capacity: u32, jobs: &[PackJob], order: &[usize], scratch: &mut PackScratch, out: &mut Packing) {
    let n = jobs.len();
    let PackScratch { rank, by_rank, slots, heap } = scratch;
    ranks_into(order, n, rank);
    by_rank.clear();
    by_rank.resize(n, 0);
    for (j, &r) in rank.iter().enumerate() {
        by_rank[r] = j;
    }
    out.first.clear();
    out.first.resize(n, 0);
    out.completion.clear();
    out.completion.resize(n, f64::INFINITY);
    out.intervals.clear();
    // Zero-work jobs complete at once and never hold slots; the others are linked in rank order.
    let mut slots = std::mem::take(slots);
    slots.clear();
    slots.reserve(n);
    let (mut head, mut last) = (NIL, NIL);
    let mut sum_min: u64 = 0;
    for (r, &j) in by_rank.iter().enumerate() {
        let job = &jobs[j];
        let mut slot = Slot {
            lo: job.lo(),
            max: job.max,
            next: NIL,
            prev: NIL,
            slots: 0,
            version: 0,
            t0: 0.0,
            r0: job.work.max(0.0),
        };
        if job.work > 0.0 {
            slot.prev = last;
            if last == NIL {
                head = r as u32;
            } else {
                let prev: &mut Slot = &mut slots[last as usize];
                prev.next = r as u32;
            }
            last = r as u32;
            sum_min += slot.lo as u64;
        } else {
            out.completion[j] = 0.0;
        }
        slots.push(slot);
    }
    let mut heap = std::mem::take(heap);
    heap.clear();
    heap.reserve(n);
    let mut fr = Frontier { slots, head, heap, side: None, minima_mode: sum_min > capacity as u64, f: NIL, extra: 0 };
    fr.reset(capacity, 0.0);
    for (r, &j) in by_rank.iter().enumerate() {
        out.first[j] = fr.slots[r].slots;
    }
    let mut t = 0.0f64;
    while let Some(e) = fr.pop_next() {
        let r = e.rank;
        t = e.time().max(t);
        out.completion[by_rank[r as usize]] = t;
        let (lo, hi) = fr.band(r);
        let before_frontier = fr.f == NIL || r < fr.f;
        let freed = if before_frontier { hi } else { lo };
        let mut avail = fr.extra + freed;
        if r == fr.f {
            avail = fr.extra + lo;
            fr.f = fr.slots[r as usize].next;
        }
        fr.unlink(r);
        fr.slots[r as usize].slots = 0;
        sum_min -= fr.slots[r as usize].lo as u64;
        if fr.minima_mode && sum_min <= capacity as u64 {
            fr.minima_mode = false;
            fr.reset(capacity, t);
        } else {
            fr.advance(avail, t);
        }
    }
    scratch.slots = fr.slots;
    scratch.heap = fr.heap;
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The fast path as it was before the one-record-per-job layout and the frontier's side
    /// entry (`docs/performance.md` §9), kept to pin the new one to it bit for bit.
    mod reference {
        use super::super::{ranks, Due, PackJob, Packing};
        use std::collections::BinaryHeap;

        const NIL: usize = usize::MAX;

        /// State of the fast path, indexed by rank.
        struct Frontier<'a> {
            jobs: Vec<&'a PackJob>,
            next: Vec<usize>,
            prev: Vec<usize>,
            head: usize,
            slots: Vec<u32>,
            t0: Vec<f64>,
            r0: Vec<f64>,
            version: Vec<u32>,
            heap: BinaryHeap<Due>,
            /// Minima do not fit: the band is `0..m` instead of `m..M`.
            minima_mode: bool,
            /// The frontier rank (first job below the top of its band), or NIL.
            f: usize,
            /// Slots beyond the band bottom held by `f` (idle slots when `f` is NIL).
            extra: u32,
        }

        impl Frontier<'_> {
            #[inline]
            fn band(&self, r: usize) -> (u32, u32) {
                let j = self.jobs[r];
                if self.minima_mode {
                    (0, j.lo())
                } else {
                    (j.lo(), j.max)
                }
            }

            fn set(&mut self, r: usize, s: u32, t: f64) {
                if self.slots[r] == s {
                    return;
                }
                let r_now = (self.r0[r] - self.slots[r] as f64 * (t - self.t0[r])).max(0.0);
                self.r0[r] = r_now;
                self.t0[r] = t;
                self.slots[r] = s;
                self.version[r] = self.version[r].wrapping_add(1);
                if s > 0 {
                    self.heap.push(Due::new(t + r_now / s as f64, r, self.version[r]));
                }
            }

            /// Hands `avail` slots (beyond band bottoms) down the list from the frontier `f`.
            fn advance(&mut self, mut avail: u32, t: f64) {
                while self.f != NIL {
                    let (lo, hi) = self.band(self.f);
                    if avail < hi - lo {
                        break;
                    }
                    self.set(self.f, hi, t);
                    avail -= hi - lo;
                    self.f = self.next[self.f];
                }
                if self.f != NIL {
                    let (lo, _) = self.band(self.f);
                    self.set(self.f, lo + avail, t);
                }
                self.extra = avail;
            }

            /// Recomputes every allocation from scratch at time `t` (start, and the one mode switch).
            fn reset(&mut self, capacity: u32, t: f64) {
                let mut sum_lo: u64 = 0;
                let mut r = self.head;
                while r != NIL {
                    let (lo, _) = self.band(r);
                    sum_lo += lo as u64;
                    r = self.next[r];
                }
                let mut r = self.head;
                while r != NIL {
                    let (lo, _) = self.band(r);
                    self.set(r, lo, t);
                    r = self.next[r];
                }
                self.f = self.head;
                self.advance(capacity.saturating_sub(sum_lo.min(u32::MAX as u64) as u32), t);
            }

            fn unlink(&mut self, r: usize) {
                let (p, n) = (self.prev[r], self.next[r]);
                if p != NIL {
                    self.next[p] = n;
                } else {
                    self.head = n;
                }
                if n != NIL {
                    self.prev[n] = p;
                }
                self.version[r] = self.version[r].wrapping_add(1);
            }

            /// The next completion: the earliest valid entry (ties to the lowest rank, by the heap order).
            fn pop_next(&mut self) -> Option<Due> {
                loop {
                    let e = self.heap.pop()?;
                    if e.version == self.version[e.rank as usize] {
                        return Some(e);
                    }
                }
            }
        }

        /// Fast packing for independent jobs: the first allocation and every completion, `O(J log J)`.
        /// Same results as [`pack_with_precedence`] with no precedence (up to float rounding of completions).
        pub fn pack(capacity: u32, jobs: &[PackJob], order: &[usize]) -> Packing {
            let n = jobs.len();
            let rank = ranks(order, n);
            let mut by_rank = vec![0usize; n];
            for (j, &r) in rank.iter().enumerate() {
                by_rank[r] = j;
            }
            let mut out = Packing { first: vec![0; n], completion: vec![f64::INFINITY; n], intervals: Vec::new() };
            // Zero-work jobs complete at once and never hold slots.
            let live: Vec<usize> = (0..n).filter(|&r| jobs[by_rank[r]].work > 0.0).collect();
            for r in 0..n {
                if jobs[by_rank[r]].work <= 0.0 {
                    out.completion[by_rank[r]] = 0.0;
                }
            }
            let mut fr = Frontier {
                jobs: by_rank.iter().map(|&j| &jobs[j]).collect(),
                next: vec![NIL; n],
                prev: vec![NIL; n],
                head: live.first().copied().unwrap_or(NIL),
                slots: vec![0; n],
                t0: vec![0.0; n],
                r0: by_rank.iter().map(|&j| jobs[j].work.max(0.0)).collect(),
                version: vec![0; n],
                heap: BinaryHeap::with_capacity(n),
                minima_mode: false,
                f: NIL,
                extra: 0,
            };
            for w in live.windows(2) {
                fr.next[w[0]] = w[1];
                fr.prev[w[1]] = w[0];
            }
            let mut sum_min: u64 = live.iter().map(|&r| fr.jobs[r].lo() as u64).sum();
            fr.minima_mode = sum_min > capacity as u64;
            fr.reset(capacity, 0.0);
            for &r in &live {
                out.first[by_rank[r]] = fr.slots[r];
            }
            let mut t = 0.0f64;
            while let Some(e) = fr.pop_next() {
                let r = e.rank as usize;
                t = e.time().max(t);
                out.completion[by_rank[r]] = t;
                let (lo, hi) = fr.band(r);
                let before_frontier = fr.f == NIL || r < fr.f;
                let freed = if before_frontier { hi } else { lo };
                let mut avail = fr.extra + freed;
                if r == fr.f {
                    avail = fr.extra + lo;
                    fr.f = fr.next[r];
                }
                fr.unlink(r);
                fr.slots[r] = 0;
                sum_min -= fr.jobs[r].lo() as u64;
                if fr.minima_mode && sum_min <= capacity as u64 {
                    fr.minima_mode = false;
                    fr.reset(capacity, t);
                } else {
                    fr.advance(avail, t);
                }
            }
            out
        }
    }

    fn job(work: f64, min: u32, max: u32) -> PackJob {
        PackJob { work, min, max }
    }

    fn close(a: f64, b: f64) -> bool {
        (a == b) || (a - b).abs() <= 1e-6 * a.abs().max(b.abs()).max(1.0)
    }

    fn allocs(p: &Packing) -> Vec<Vec<u32>> {
        p.intervals.iter().map(|iv| iv.alloc.iter().filter(|a| a.1 > 0).map(|a| a.1).collect()).collect()
    }

    #[test]
    fn example_abc() {
        // Digest §3.5: S = 10; A = (24,2,6), B = (30,1,10), C = (15,3,4): T = 4, 5, 6.9.
        let jobs = [job(24.0, 2, 6), job(30.0, 1, 10), job(15.0, 3, 4)];
        let p = pack_with_precedence(10, &jobs, &[0, 1, 2], &Precedence::none(3), true);
        let ends: Vec<f64> = p.intervals.iter().map(|i| i.end).collect();
        assert!(close(ends[0], 4.0) && close(ends[1], 5.0) && close(ends[2], 6.9), "{ends:?}");
        assert_eq!(allocs(&p), vec![vec![6, 1, 3], vec![7, 3], vec![10]]);
        assert_eq!(p.first, vec![6, 1, 3]);
        let fast = pack(10, &jobs, &[0, 1, 2]);
        assert_eq!(fast.first, vec![6, 1, 3]);
        for j in 0..3 {
            assert!(close(fast.completion[j], p.completion[j]));
        }
    }

    #[test]
    fn example_chain_uses_the_ready_list_slack() {
        // d1 -> d2 plus e1; S = 4; d1 = (6,1,3), d2 = (4,1,3), e1 = (8,1,4): T = 2, 10/3, 4.5.
        let jobs = [job(6.0, 1, 3), job(4.0, 1, 3), job(8.0, 1, 4)];
        let prec = Precedence::chains(&[2, 1]);
        let p = pack_with_precedence(4, &jobs, &[0, 1, 2], &prec, true);
        let ends: Vec<f64> = p.intervals.iter().map(|i| i.end).collect();
        assert!(close(ends[0], 2.0) && close(ends[1], 10.0 / 3.0) && close(ends[2], 4.5), "{ends:?}");
        assert_eq!(allocs(&p), vec![vec![3, 1], vec![3, 1], vec![4]]);
        assert_eq!(p.intervals[0].alloc, vec![(0, 3), (2, 1)], "d2 is not ready: no slots, no reserved minimum");
    }

    #[test]
    fn example_tie_goes_by_priority_then_zero_length() {
        // A = (20,2,6), B = (30,1,10), C = (10,3,4): A and C both finish at 10/3.
        let jobs = [job(20.0, 2, 6), job(30.0, 1, 10), job(10.0, 3, 4)];
        let p = pack_with_precedence(10, &jobs, &[0, 1, 2], &Precedence::none(3), true);
        assert_eq!(p.intervals[0].completed, 0);
        assert_eq!(p.intervals[1].completed, 2);
        assert!(close(p.intervals[0].end, 10.0 / 3.0));
        assert_eq!(p.intervals[1].start, p.intervals[1].end, "zero-length interval");
        let fast = pack(10, &jobs, &[0, 1, 2]);
        assert_eq!(fast.completion[0], fast.completion[2]);
    }

    #[test]
    fn zero_slots_never_complete_and_minima_normalise_by_priority() {
        let jobs = [job(10.0, 0, 0), job(10.0, 0, 2)];
        let p = pack(2, &jobs, &[0, 1]);
        assert_eq!(p.first, vec![0, 2]);
        assert_eq!(p.completion[0], f64::INFINITY);
        assert!(close(p.completion[1], 5.0));
        // Minima 3 + 3 + 3 > S = 7: priority order gets 3, 3, 1; then 3 + 3 after the first ends.
        let jobs = [job(3.0, 3, 5), job(30.0, 3, 5), job(30.0, 3, 5)];
        let slow = pack_with_precedence(7, &jobs, &[0, 1, 2], &Precedence::none(3), true);
        assert_eq!(slow.first, vec![3, 3, 1]);
        assert_eq!(slow.intervals[1].alloc, vec![(1, 4), (2, 3)]);
        let fast = pack(7, &jobs, &[0, 1, 2]);
        assert_eq!(fast.first, vec![3, 3, 1]);
        for j in 0..3 {
            assert!(close(fast.completion[j], slow.completion[j]), "{:?} vs {:?}", fast.completion, slow.completion);
        }
        // Degenerate: no capacity.
        let p = pack(0, &[job(1.0, 1, 1)], &[0]);
        assert_eq!((p.first[0], p.completion[0]), (0, f64::INFINITY));
    }

    fn instance() -> impl Strategy<Value = (u32, Vec<PackJob>, Vec<usize>)> {
        (0u32..40, prop::collection::vec((0u32..60, 0u32..6, 0u32..12), 0..40), any::<u64>()).prop_map(
            |(s, js, seed)| {
                let jobs: Vec<PackJob> = js.iter().map(|&(w, m, mx)| job(w as f64, m, mx)).collect();
                // A deterministic shuffle of the priority order from the seed.
                let order = crate::flex::testutil::shuffled(jobs.len(), seed);
                (s, jobs, order)
            },
        )
    }

    proptest! {
        /// Capacity, minima (when they fit), maxima, packing shape and work conservation, on every
        /// interval of the traced schedule; and the fast path agrees with it.
        #[test]
        fn invariants_hold((cap, jobs, order) in instance()) {
            let n = jobs.len();
            let p = pack_with_precedence(cap, &jobs, &order, &Precedence::none(n), true);
            let mut done_work = vec![0.0f64; n];
            for iv in &p.intervals {
                let total: u32 = iv.alloc.iter().map(|a| a.1).sum();
                prop_assert!(total <= cap);
                let sum_min: u32 = iv.alloc.iter().map(|a| jobs[a.0].lo()).sum();
                for &(j, s) in &iv.alloc {
                    prop_assert!(s <= jobs[j].max);
                    if sum_min <= cap {
                        prop_assert!(s >= jobs[j].lo());
                    }
                    done_work[j] += s as f64 * (iv.end - iv.start);
                }
                if sum_min <= cap {
                    // Shape: full prefix, at most one partial, minima after.
                    let mut stage = 0; // 0 = at max, 1 = after the partial
                    for &(j, s) in &iv.alloc {
                        let (lo, hi) = (jobs[j].lo(), jobs[j].max);
                        if stage == 0 && s < hi {
                            stage = 1;
                        } else if stage == 1 {
                            prop_assert_eq!(s, lo);
                        }
                    }
                    if iv.alloc.iter().any(|&(j, s)| s < jobs[j].max) {
                        prop_assert_eq!(total, cap, "slack left while a job is below its maximum");
                    }
                }
                prop_assert!(iv.end >= iv.start);
            }
            for j in 0..n {
                if p.completion[j].is_finite() {
                    let (did, had) = (done_work[j], jobs[j].work);
                    prop_assert!(close(did, had), "job {} did {} of {}", j, did, had);
                }
            }
            let fast = pack(cap, &jobs, &order);
            prop_assert_eq!(&fast.first, &p.first);
            for j in 0..n {
                let (a, b) = (fast.completion[j], p.completion[j]);
                prop_assert!(close(a, b), "job {}: {} vs {}", j, a, b);
            }
            // Deterministic.
            prop_assert_eq!(pack(cap, &jobs, &order), fast);
        }

        /// The fast path equals the one before its one-record layout and side entry, bit for bit
        /// (first allocations and completion times), on small and on larger instances where
        /// minima do not fit, many completions tie and the frontier moves often.
        #[test]
        fn fast_path_equals_the_reference(
            (cap, jobs, order) in instance(),
            big in prop::collection::vec((0u32..5, 0u32..4, 1u32..30), 0..400),
            big_cap in 0u32..600,
        ) {
            prop_assert_eq!(pack(cap, &jobs, &order), reference::pack(cap, &jobs, &order));
            // Work from a few values so that completion times tie exactly.
            let jobs: Vec<PackJob> = big.iter().map(|&(w, m, mx)| job([0.0, 100.0, 250.0, 1000.0, 7.5][w as usize], m, mx)).collect();
            let order: Vec<usize> = (0..jobs.len()).rev().collect();
            prop_assert_eq!(pack(big_cap, &jobs, &order), reference::pack(big_cap, &jobs, &order));
        }

        /// A scratch and an output reused across packs of different sizes give each pack the
        /// result of the kept reference path bit for bit (nothing of one pack leaks into the next).
        #[test]
        fn reused_buffers_equal_fresh_packs(instances in prop::collection::vec(instance(), 1..6)) {
            let mut scratch = PackScratch::default();
            let stale = Interval { start: 0.0, end: 1.0, completed: 0, alloc: vec![] };
            let mut out = Packing { intervals: vec![stale], ..Packing::default() };
            for (cap, jobs, order) in &instances {
                pack_into(*cap, jobs, order, &mut scratch, &mut out);
                prop_assert_eq!(&out, &reference::pack(*cap, jobs, order));
            }
        }

        /// The first allocation alone ([`first_into`], walked only as far as the rule needs) is
        /// [`pack`]'s and the literal loop's `first`, bit for bit: minima that fit and minima that do
        /// not, zero-work jobs, zero capacity, and orders with repeated, out-of-range and missing
        /// indices (which rank as [`ranks`] says); one scratch and one output reused throughout.
        #[test]
        fn first_into_equals_pack(
            instances in prop::collection::vec(instance(), 1..6),
            big in prop::collection::vec((0u32..5, 0u32..4, 0u32..30), 0..400),
            big_cap in 0u32..600,
            noise in prop::collection::vec(0usize..450, 0..30),
        ) {
            let mut scratch = FirstScratch::default();
            let mut first = vec![7u32; 3];
            for (cap, jobs, order) in &instances {
                first_into(*cap, jobs, order, &mut scratch, &mut first);
                prop_assert_eq!(&first, &pack(*cap, jobs, order).first);
                let literal = pack_with_precedence(*cap, jobs, order, &Precedence::none(jobs.len()), false);
                prop_assert_eq!(&first, &literal.first);
            }
            let jobs: Vec<PackJob> = big.iter().map(|&(w, m, mx)| job([0.0, 100.0, 250.0, 1000.0, 7.5][w as usize], m, mx)).collect();
            // A reversed order with some entries repeated or out of range, and the last few missing.
            let n = jobs.len();
            let mut order: Vec<usize> = (0..n.saturating_sub(noise.len() % 5)).rev().collect();
            for (k, &x) in noise.iter().enumerate() {
                order.insert((k * 7) % (order.len() + 1), x);
            }
            for order in [order, (0..n).collect()] {
                first_into(big_cap, &jobs, &order, &mut scratch, &mut first);
                prop_assert_eq!(&first, &pack(big_cap, &jobs, &order).first);
            }
        }

        /// Chains: a successor gets slots only after its predecessor completes.
        #[test]
        fn chains_respect_precedence((cap, jobs, order) in instance()) {
            let n = jobs.len();
            let lens: Vec<usize> = (0..n).step_by(3).map(|k| (n - k).min(3)).collect();
            let prec = Precedence::chains(&lens);
            // Topological priority order: sort the random order's chains by their first item.
            let mut topo: Vec<usize> = order.clone();
            topo.sort_by_key(|&j| j);
            let p = pack_with_precedence(cap.max(1), &jobs, &topo, &prec, true);
            for iv in &p.intervals {
                for &(j, s) in &iv.alloc {
                    if s > 0 {
                        for &q in prec.predecessors(j) {
                            prop_assert!(p.completion[q as usize] <= iv.start);
                        }
                    }
                }
            }
        }
    }
}
