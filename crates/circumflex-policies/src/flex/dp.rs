//! The backwards dynamic program (CIRCUMFLEX appendix B.2; Lawler's algorithm for
//! `1|prec|f_max`): the optimal single-machine order for `max_j F_j(C_j)` with any non-decreasing
//! penalties `F_j` and any precedence DAG.
//!
//! The sequence is built from the back: with `P` the total duration of the unscheduled items,
//! the item that goes last is the eligible one with the smallest `F_j(start + P)`; it is removed
//! and the step repeats. The output is the reverse of the removal order.
//!
//! Decisions (digest §3.4, §7.1), all tested:
//! - **Eligibility**: an item may go last only when it has **no unscheduled successor**
//!   (appendix B.2 line 2 prints the no-predecessor set, which is the forward rule; a slip).
//! - **Ties** on `F`: the item with the larger duration goes last, then the larger index (callers
//!   index jobs oldest first, so the newest goes last).
//! - **Time**: `F` is evaluated at absolute times `start + P`; callers pass durations as
//!   `remaining work / S` (the whole pool, digest §3.2) and `start` = now.
//!
//! Speed: the literal loop costs `O(n · |eligible|)`, `O(n²)` for independent jobs. Without
//! precedence, two exact fast paths give the same sequence:
//! - all penalties linear ([`Penalty::Linear`] and [`Penalty::Zero`]), or all tardiness-like
//!   ([`Penalty::Tardiness`] and [`Penalty::Zero`]): a kinetic tournament tree over the lines
//!   `slope · (t − origin)`, queried at decreasing `t`, `O(n log² n)`. For tardiness the tree
//!   ranks by the line, whose minimiser also minimises `max(0, line)`, so ties on a zero penalty
//!   are broken by the line first (still an argmin, hence still optimal).
//! - all step functions ([`Penalty::Steps`] and [`Penalty::Zero`]): an ordered set keyed by the
//!   current cost, updated at each step's due as `t` decreases, `O((n + steps) log n)`.
//!
//! Everything else (mixed kinds, or any precedence) runs the literal loop.

use std::cmp::Ordering;
use std::collections::{BTreeSet, BinaryHeap};

use super::metrics::Penalty;
use super::precedence::Precedence;

/// Whether item `a` should go last rather than `b`, given their costs at the current time.
#[inline]
fn goes_last_before(fa: f64, da: f64, a: usize, fb: f64, db: f64, b: usize) -> bool {
    // `partial_cmp` so that -0.0 and 0.0 tie; costs are never NaN.
    match fa.partial_cmp(&fb).unwrap_or(Ordering::Equal) {
        Ordering::Less => true,
        Ordering::Greater => false,
        Ordering::Equal => match da.total_cmp(&db) {
            Ordering::Greater => true,
            Ordering::Less => false,
            Ordering::Equal => a > b,
        },
    }
}

/// The literal backwards DP for any cost `cost(item, t)` non-decreasing in `t`, under
/// `precedence`. Returns the items in sequence order (first to run first).
pub fn backwards_dp(
    durations: &[f64],
    precedence: &Precedence,
    start: f64,
    cost: impl Fn(usize, f64) -> f64,
) -> Vec<usize> {
    let n = durations.len();
    let mut open_succ: Vec<usize> = (0..n).map(|i| precedence.successors(i).len()).collect();
    let mut eligible: Vec<usize> = (0..n).filter(|&i| open_succ[i] == 0).collect();
    let mut t = start + durations.iter().sum::<f64>();
    let mut removed = Vec::with_capacity(n);
    while !eligible.is_empty() {
        let mut best = 0usize;
        let mut best_cost = cost(eligible[0], t);
        for (k, &j) in eligible.iter().enumerate().skip(1) {
            let c = cost(j, t);
            let b = eligible[best];
            if goes_last_before(c, durations[j], j, best_cost, durations[b], b) {
                best = k;
                best_cost = c;
            }
        }
        let j = eligible.swap_remove(best);
        removed.push(j);
        t -= durations[j];
        for &p in precedence.predecessors(j) {
            let p = p as usize;
            open_succ[p] -= 1;
            if open_succ[p] == 0 {
                eligible.push(p);
            }
        }
    }
    removed.reverse();
    removed
}

/// The backwards DP over [`Penalty`] functions, taking an exact fast path when one applies
/// (see the module docs). Same result as [`backwards_dp`] with `Penalty::eval` as the cost,
/// except that tardiness ties at zero are broken by the underlying line.
pub fn backwards_dp_penalties(
    durations: &[f64],
    penalties: &[Penalty],
    precedence: &Precedence,
    start: f64,
) -> Vec<usize> {
    debug_assert_eq!(durations.len(), penalties.len());
    if precedence.is_unconstrained() {
        let linear = penalties.iter().all(|p| matches!(p, Penalty::Linear { .. } | Penalty::Zero));
        let tardy = penalties.iter().all(|p| matches!(p, Penalty::Tardiness { .. } | Penalty::Zero));
        if linear || tardy {
            let lines: Vec<Line> = penalties.iter().map(Line::proxy).collect();
            return kinetic_lines(durations, &lines, start);
        }
        if penalties.iter().all(|p| matches!(p, Penalty::Steps(_) | Penalty::Zero)) {
            return kinetic_steps(durations, penalties, start);
        }
    }
    backwards_dp(durations, precedence, start, |j, t| penalties[j].eval(t))
}

/// `slope · (t − origin)`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Line {
    /// Slope (>= 0).
    pub slope: f64,
    /// Zero crossing.
    pub origin: f64,
}

impl Line {
    /// The line that ranks a linear, tardiness or zero penalty.
    pub fn proxy(p: &Penalty) -> Line {
        match *p {
            Penalty::Linear { slope, origin } => Line { slope, origin },
            Penalty::Tardiness { slope, due } => Line { slope, origin: due },
            Penalty::Steps(_) | Penalty::Zero => Line { slope: 0.0, origin: 0.0 },
        }
    }
}

const NONE: u32 = u32::MAX;

/// A tournament node: its current winner, copied inline (line, duration and position) so that
/// comparing two siblings touches nothing else and a removal reads nothing else, and its
/// certificate.
#[derive(Clone, Copy, Debug)]
struct Node {
    slope: f64,
    origin: f64,
    duration: f64,
    /// At or below this `t` the node's answer may change (−∞: never).
    cert: f64,
    /// The winner's index (low half) and position in the buckets (high half: `bucket · BUCKET +
    /// slot`), in one word: written as two halves and copied as one, the node's copy up the path
    /// stalled on store forwarding (`docs/performance.md` §20).
    tag: u64,
}

impl Node {
    /// `*to = self`, field by field: a whole-node copy is compiled into two 16-byte moves through
    /// the stack, each reading two 8-byte halves just written, which stalls store forwarding on
    /// the removal's serial walk (`docs/performance.md` §20).
    #[inline(always)]
    fn store(self, to: &mut Node) {
        to.slope = self.slope;
        to.origin = self.origin;
        to.duration = self.duration;
        to.cert = self.cert;
        to.tag = self.tag;
    }

    #[inline(always)]
    fn item(&self) -> u32 {
        self.tag as u32
    }

    #[inline(always)]
    fn pos(&self) -> u32 {
        (self.tag >> 32) as u32
    }
}

/// Winner index and position in a node's `tag`.
#[inline(always)]
fn tag(item: u32, pos: u32) -> u64 {
    item as u64 | (pos as u64) << 32
}

const EMPTY_NODE: Node = Node { slope: 0.0, origin: 0.0, duration: 0.0, cert: f64::NEG_INFINITY, tag: u64::MAX };

/// Conservative by a hair: recomputing early is harmless, late would be wrong. Increasing in `x`,
/// so the margin of the latest crossing is the latest of the margins.
#[inline(always)]
fn with_margin(x: f64) -> f64 {
    x + 1e-9 * x.abs().max(1.0)
}

/// The node over two children `a` and `b` at `t`: the winner of the two (the same whichever
/// side each is on: [`goes_last_before`] is a strict total order) and the certificate, the
/// latest of the children's and the time at or below which the loser may catch up.
#[inline(always)]
fn combine(a: Node, b: Node, t: f64) -> Node {
    if a.item() == NONE || b.item() == NONE {
        return Node { cert: later(b.cert, a.cert), ..if a.item() == NONE { b } else { a } };
    }
    let fa = a.slope * (t - a.origin);
    let fb = b.slope * (t - b.origin);
    let (w, fw, l, fl) = if goes_last_before(fa, a.duration, a.item() as usize, fb, b.duration, b.item() as usize) {
        (a, fa, b, fb)
    } else {
        (b, fb, a, fa)
    };
    // As t decreases the loser catches up only if its slope is larger.
    let local = if l.slope > w.slope { with_margin(t - (fl - fw) / (l.slope - w.slope)) } else { f64::NEG_INFINITY };
    // `a.cert` last: the walks pass as `a` the node that comes from the previous level (the
    // path's node, the level above's `outside`), whose certificate is the one serial input.
    Node { cert: later(later(local, b.cert), a.cert), ..w }
}

/// The later of two certificates (never NaN), in one instruction: `f64::max`'s NaN rule costs four
/// more on the walk's serial chain of certificates.
#[inline(always)]
fn later(x: f64, y: f64) -> f64 {
    if x > y {
        x
    } else {
        y
    }
}

/// Items per bucket, the tournament's leaves.
const BUCKET: usize = 16;

/// Up to [`BUCKET`] items in structure-of-arrays form, live ones in `0..len` (a removal moves the
/// last live item into the hole: the order inside a bucket does not matter).
#[derive(Clone, Copy, Debug)]
#[repr(C, align(64))]
struct Bucket {
    slope: [f64; BUCKET],
    origin: [f64; BUCKET],
    duration: [f64; BUCKET],
    item: [u32; BUCKET],
    len: u32,
}

const EMPTY_BUCKET: Bucket =
    Bucket { slope: [0.0; BUCKET], origin: [0.0; BUCKET], duration: [0.0; BUCKET], item: [NONE; BUCKET], len: 0 };

impl Bucket {
    /// The bucket's node at `t` (bucket number `b`): its winner by one scan of its live items, and
    /// the latest time any of them catches up with the winner as `t` decreases.
    #[inline]
    // One index runs over the bucket's parallel arrays.
    #[allow(clippy::needless_range_loop)]
    fn node(&self, b: usize, t: f64) -> Node {
        let len = self.len as usize;
        if len == 0 {
            return EMPTY_NODE;
        }
        let mut cost = [0.0f64; BUCKET];
        let mut least = f64::INFINITY;
        for k in 0..BUCKET {
            cost[k] = self.slope[k] * (t - self.origin[k]);
        }
        for &c in &cost[..len] {
            least = if c < least { c } else { least };
        }
        // The winner in `goes_last_before`'s order: the least cost (ties as `partial_cmp` sees
        // them, -0.0 = 0.0; costs are never NaN), then the longest, then the largest index.
        let mut w = BUCKET;
        for k in 0..len {
            if cost[k] == least
                && (w == BUCKET
                    || match self.duration[k].total_cmp(&self.duration[w]) {
                        Ordering::Greater => true,
                        Ordering::Less => false,
                        Ordering::Equal => self.item[k] > self.item[w],
                    })
            {
                w = k;
            }
        }
        // Only NaN costs (never built) leave no match; any answer beats a panic then.
        let w = w.min(len - 1);
        let (sw, fw) = (self.slope[w], cost[w]);
        // The earliest catch-up as `t` decreases is at the least ratio (`t − r` falls as `r` grows,
        // rounding included, so `t − min r` is the latest crossing exactly).
        // Over the whole bucket and unconditionally, so that the divisions vectorize; then the
        // slots past `len` and the slopes no larger than the winner's masked.
        let mut ds = [0.0f64; BUCKET];
        let mut r = [0.0f64; BUCKET];
        for k in 0..BUCKET {
            ds[k] = self.slope[k] - sw;
            r[k] = (cost[k] - fw) / ds[k];
        }
        let mut ratio = f64::INFINITY;
        for k in 0..BUCKET {
            let r = if ds[k] > 0.0 && k < len { r[k] } else { f64::INFINITY };
            ratio = if r < ratio { r } else { ratio };
        }
        let latest = if ratio == f64::INFINITY { f64::NEG_INFINITY } else { t - ratio };
        let cert = if latest == f64::NEG_INFINITY { latest } else { with_margin(latest) };
        Node {
            slope: sw,
            origin: self.origin[w],
            duration: self.duration[w],
            cert,
            tag: tag(self.item[w], (b * BUCKET + w) as u32),
        }
    }

    fn remove(&mut self, slot: usize) {
        let last = self.len as usize - 1;
        self.slope[slot] = self.slope[last];
        self.origin[slot] = self.origin[last];
        self.duration[slot] = self.duration[last];
        self.item[slot] = self.item[last];
        self.len -= 1;
    }
}

/// Kinetic tournament tree over buckets of items: each node keeps the item its subtree would put
/// last at the current time and the time (as `t` decreases) at or below which that answer may
/// change; a leaf is a bucket of up to [`BUCKET`] items, scanned whole whenever it changes or its
/// certificate fails (`docs/performance.md` §20: the tree over buckets is `BUCKET` times smaller and
/// `log2 BUCKET` levels shallower than one over items, and a bucket's items are contiguous).
///
/// Items may sit in any order: every node's answer is the minimum of its subtree in a strict
/// total order (cost, then duration, then index), so the root's answer, the item removed, does
/// not depend on where the items sit. The layout only decides which nodes consecutive removals
/// share, and so how many of their walks to the root hit the cache ([`KineticScratch`]).
struct Tournament {
    size: usize,
    nodes: Vec<Node>,
    buckets: Vec<Bucket>,
}

impl Tournament {
    /// The tree over `lines` at time `t` in the buffers `nodes` and `buckets` (their contents
    /// discarded), with item `layout[p]` at position `p` (`None`: item `p`). `layout` must be a
    /// permutation of the items.
    fn build(
        mut nodes: Vec<Node>,
        mut buckets: Vec<Bucket>,
        lines: &[Line],
        durations: &[f64],
        layout: Option<&[u32]>,
        t: f64,
    ) -> Tournament {
        let n = lines.len();
        let count = n.div_ceil(BUCKET);
        let size = count.next_power_of_two().max(1);
        buckets.clear();
        buckets.resize(count, EMPTY_BUCKET);
        let mut place = |p: usize, i: usize| {
            let (bucket, k) = (&mut buckets[p / BUCKET], p % BUCKET);
            bucket.slope[k] = lines[i].slope;
            bucket.origin[k] = lines[i].origin;
            bucket.duration[k] = durations[i];
            bucket.item[k] = i as u32;
            bucket.len += 1;
        };
        match layout {
            Some(layout) => {
                debug_assert_eq!(layout.len(), n);
                for (p, &i) in layout.iter().enumerate() {
                    place(p, i as usize);
                }
            }
            None => {
                for i in 0..n {
                    place(i, i);
                }
            }
        }
        nodes.clear();
        nodes.resize(2 * size, EMPTY_NODE);
        for (b, bucket) in buckets.iter().enumerate() {
            nodes[size + b] = bucket.node(b, t);
        }
        for node in (1..size).rev() {
            nodes[node] = combine(nodes[2 * node], nodes[2 * node + 1], t);
        }
        Tournament { size, nodes, buckets }
    }

    /// Makes the subtree at `node` valid at `t` (each node whose certificate is at or above `t`
    /// recomputed, its children first).
    fn refresh(&mut self, node: usize, t: f64) {
        if self.nodes[node].cert < t {
            return;
        }
        if node >= self.size {
            let b = node - self.size;
            self.nodes[node] = self.buckets[b].node(b, t);
            return;
        }
        self.refresh(2 * node, t);
        self.refresh(2 * node + 1, t);
        self.nodes[node] = combine(self.nodes[2 * node], self.nodes[2 * node + 1], t);
    }

    /// The node at depth `depth` (the root is depth 0, the leaves depth `height`) on the path
    /// from the root to bucket `b`'s leaf.
    #[inline(always)]
    fn on_path(&self, b: usize, depth: usize, height: usize) -> usize {
        (self.size + b) >> (height - depth)
    }

    /// `outside[depth]` for `depth` in `from..=height` along bucket `b`'s path at `t`: the best of
    /// everything outside the subtree of the path's node at that depth (`outside[0]`, above the
    /// root, is empty), each from the sibling at that depth, refreshed at `t`, and the level above.
    fn fill_outside(&mut self, outside: &mut [Node], b: usize, from: usize, height: usize, t: f64) {
        for depth in from..=height {
            let sibling = self.on_path(b, depth, height) ^ 1;
            if self.nodes[sibling].cert >= t {
                self.refresh(sibling, t);
            }
            outside[depth] = combine(outside[depth - 1], self.nodes[sibling], t);
        }
    }

    /// The removal sequence from `t` on, into `removed`: at most `n` items.
    ///
    /// The walk is kept short with a finger on the bucket of the last removal: while the removals
    /// stay in that bucket (items sit in about the previous plan's removal order, so they mostly
    /// do), the nodes on its path to the root are left stale and `outside[depth]` holds the best
    /// item outside the subtree at each depth of that path, so the next item is the bucket's
    /// winner against `outside[height]`, one comparison instead of a walk of `height`. Every node
    /// off the path stays valid (its subtree refreshed at `t` before it is read), every `outside`
    /// has the certificate of all it depends on (the latest of its sibling's, its level above's and
    /// its own crossing), so `outside[height]` valid at `t` means the whole path is. A removal in
    /// another bucket moves the finger: the old path is recomputed up to the two buckets' common
    /// ancestor, and `outside` from there down the new path (neighbouring buckets share all but the
    /// lowest levels). Each answer is still the minimum of all items in the strict total order.
    fn run(&mut self, mut t: f64, n: usize, removed: &mut Vec<usize>) {
        let height = self.size.trailing_zeros() as usize;
        let mut outside = [EMPTY_NODE; usize::BITS as usize + 1];
        let mut finger: Option<usize> = None;
        for _ in 0..n {
            let w = match finger {
                None => self.nodes[1],
                Some(b) => combine(self.nodes[self.size + b], outside[height], t),
            };
            if w.item() == NONE {
                break;
            }
            removed.push(w.item() as usize);
            // The node's copy of the item's duration (`durations[w.item]`, read without a cache miss).
            t -= w.duration;
            let (bw, slot) = (w.pos() as usize / BUCKET, w.pos() as usize % BUCKET);
            self.buckets[bw].remove(slot);
            self.buckets[bw].node(bw, t).store(&mut self.nodes[self.size + bw]);
            // The depth from which `outside` must be computed again along `bw`'s path.
            let from = match finger {
                None => 1,
                Some(b) if b == bw => height + 1,
                Some(b) => {
                    // The old path, recomputed from its leaf up to below the common ancestor.
                    let up = (usize::BITS - (b ^ bw).leading_zeros()) as usize;
                    let mut node = self.size + b;
                    if self.nodes[node].cert >= t {
                        self.refresh(node, t);
                    }
                    for _ in 1..up {
                        let sibling = node ^ 1;
                        if self.nodes[sibling].cert >= t {
                            self.refresh(sibling, t);
                        }
                        node /= 2;
                        combine(self.nodes[2 * node], self.nodes[2 * node + 1], t).store(&mut self.nodes[node]);
                    }
                    height - up + 1
                }
            };
            // Levels whose certificate has passed (a suffix: certificates grow down the path).
            let failed = if outside[height].cert >= t {
                (1..=height).find(|&d| outside[d].cert >= t).unwrap_or(height + 1)
            } else {
                height + 1
            };
            self.fill_outside(&mut outside, bw, from.min(failed), height, t);
            finger = Some(bw);
        }
    }
}

/// The buffers of the linear fast path, kept by a caller that sequences again and again (FLEX's
/// re-plans) so that a sequence allocates nothing once they have grown: at 10,000 jobs the items
/// alone are over a quarter of a megabyte, which a fresh allocation would page-fault in at every
/// plan. Contents between calls mean nothing.
#[derive(Clone, Debug, Default)]
pub struct KineticScratch {
    nodes: Vec<Node>,
    buckets: Vec<Bucket>,
    removed: Vec<usize>,
}

/// Fast path for lines without precedence.
fn kinetic_lines(durations: &[f64], lines: &[Line], start: f64) -> Vec<usize> {
    let mut out = Vec::new();
    kinetic_lines_in(durations, lines, start, None, &mut KineticScratch::default(), &mut out);
    out
}

/// [`kinetic_lines`] into `out` (its buffer reused), with the tournament's items in `layout`
/// order (a permutation of the items; `None`: index order) and buffers from `scratch`: the same
/// sequence for every layout (see [`Tournament`]). A layout close to the removal order (the
/// previous plan's, reversed) makes consecutive removals walk mostly the same nodes.
pub fn kinetic_lines_in(
    durations: &[f64],
    lines: &[Line],
    start: f64,
    layout: Option<&[u32]>,
    scratch: &mut KineticScratch,
    out: &mut Vec<usize>,
) {
    let n = durations.len();
    let t = start + durations.iter().sum::<f64>();
    let nodes = std::mem::take(&mut scratch.nodes);
    let buckets = std::mem::take(&mut scratch.buckets);
    let mut tree = Tournament::build(nodes, buckets, lines, durations, layout, t);
    let removed = &mut scratch.removed;
    removed.clear();
    tree.run(t, n, removed);
    out.clear();
    out.extend(removed.iter().rev());
    scratch.nodes = tree.nodes;
    scratch.buckets = tree.buckets;
}

/// Ordered-set key: smallest cost first, then larger duration, then larger index.
#[derive(Clone, Copy, Debug)]
struct StepKey {
    cost: f64,
    duration: f64,
    item: usize,
}

impl PartialEq for StepKey {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for StepKey {}
impl PartialOrd for StepKey {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for StepKey {
    fn cmp(&self, other: &Self) -> Ordering {
        self.cost.total_cmp(&other.cost).then(other.duration.total_cmp(&self.duration)).then(other.item.cmp(&self.item))
    }
}

/// Max-heap entry: the due at or below which an item's cost drops.
#[derive(Clone, Copy, Debug)]
struct Breakpoint {
    due: f64,
    item: usize,
}
impl PartialEq for Breakpoint {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Breakpoint {}
impl PartialOrd for Breakpoint {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Breakpoint {
    fn cmp(&self, other: &Self) -> Ordering {
        self.due.total_cmp(&other.due).then(self.item.cmp(&other.item))
    }
}

/// Fast path for step functions without precedence.
fn kinetic_steps(durations: &[f64], penalties: &[Penalty], start: f64) -> Vec<usize> {
    const EMPTY: &[(f64, f64)] = &[];
    let steps_of = |j: usize| match &penalties[j] {
        Penalty::Steps(s) => s.as_slice(),
        _ => EMPTY,
    };
    let n = durations.len();
    let mut t = start + durations.iter().sum::<f64>();
    // level[j] = number of steps missed at t (due < t); cost = steps[level-1].1.
    let mut level: Vec<usize> = (0..n).map(|j| steps_of(j).partition_point(|s| s.0 < t)).collect();
    let cost = |j: usize, lvl: usize| {
        if lvl == 0 {
            0.0
        } else {
            steps_of(j)[lvl - 1].1
        }
    };
    // Built in bulk (sorted, then the tree filled from the sorted run; the heap heapified) rather
    // than by an insert per item: the same contents, and both orders are strict, so the same
    // sequence (docs/performance.md §17: the inserts were a third of a max_sla plan at 100,000).
    let mut set: BTreeSet<StepKey> =
        (0..n).map(|j| StepKey { cost: cost(j, level[j]), duration: durations[j], item: j }).collect();
    let mut heap: BinaryHeap<Breakpoint> =
        (0..n).filter(|&j| level[j] > 0).map(|j| Breakpoint { due: steps_of(j)[level[j] - 1].0, item: j }).collect();
    let mut gone = vec![false; n];
    let mut removed = Vec::with_capacity(n);
    while !set.is_empty() {
        while let Some(&bp) = heap.peek() {
            if bp.due < t {
                break;
            }
            heap.pop();
            let j = bp.item;
            if gone[j] {
                continue;
            }
            let old = StepKey { cost: cost(j, level[j]), duration: durations[j], item: j };
            let steps = steps_of(j);
            let mut lvl = level[j];
            while lvl > 0 && steps[lvl - 1].0 >= t {
                lvl -= 1;
            }
            level[j] = lvl;
            set.remove(&old);
            set.insert(StepKey { cost: cost(j, lvl), duration: durations[j], item: j });
            if lvl > 0 {
                heap.push(Breakpoint { due: steps[lvl - 1].0, item: j });
            }
        }
        let Some(first) = set.pop_first() else { break };
        let j = first.item;
        gone[j] = true;
        removed.push(j);
        t -= durations[j];
    }
    removed.reverse();
    removed
}

/// `max_j F_j(C_j)` of a single-machine sequence starting at `start`.
pub fn max_cost(durations: &[f64], sequence: &[usize], start: f64, cost: impl Fn(usize, f64) -> f64) -> f64 {
    let mut t = start;
    let mut worst = f64::NEG_INFINITY;
    for &j in sequence {
        t += durations[j];
        worst = worst.max(cost(j, t));
    }
    worst
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flex::testutil::{permutations, shuffled};
    use proptest::prelude::*;

    /// Main's tournament before session 16 (one item per leaf, a walk at the removal's time, then
    /// a refresh from the root), kept as the oracle of the bucketed one.
    mod oracle {
        use super::super::{goes_last_before, Line};

        const NONE: u32 = u32::MAX;

        /// A tournament node: its current winner, copied inline (line, duration and leaf) so that
        /// comparing two siblings touches one cache line and a removal reads nothing else, and its
        /// certificate.
        #[derive(Clone, Copy, Debug)]
        struct Node {
            slope: f64,
            origin: f64,
            duration: f64,
            /// At or below this `t` the node's answer may change (−∞: never).
            cert: f64,
            item: u32,
            /// The winner's leaf offset.
            leaf: u32,
        }

        const EMPTY_NODE: Node =
            Node { slope: 0.0, origin: 0.0, duration: 0.0, cert: f64::NEG_INFINITY, item: NONE, leaf: NONE };

        /// Kinetic tournament tree: each node keeps the item its subtree would put last at the current
        /// time and the time (as `t` decreases) at or below which that answer may change.
        ///
        /// Leaves may hold the items in any order: every node's answer is the minimum of its subtree in a strict total order (cost,
        /// then duration, then index), so the root's answer, the item removed, does not depend on where
        /// the items sit. The layout only decides which nodes consecutive removals share, and so how many
        /// of their walks to the root hit the cache ([`KineticScratch`]).
        struct Tournament {
            size: usize,
            nodes: Vec<Node>,
        }

        impl Tournament {
            /// The tree over `lines` at time `t` in the buffer `nodes` (its contents discarded), with
            /// item `layout[p]` at leaf offset `p` (`None`: item `p`). `layout` must be a permutation of
            /// the items.
            fn build(
                mut nodes: Vec<Node>,
                lines: &[Line],
                durations: &[f64],
                layout: Option<&[u32]>,
                t: f64,
            ) -> Tournament {
                let size = lines.len().next_power_of_two().max(1);
                nodes.clear();
                nodes.resize(2 * size, EMPTY_NODE);
                let leaf = |p: usize, i: usize| {
                    let (l, d) = (lines[i], durations[i]);
                    let (item, leaf) = (i as u32, p as u32);
                    Node { slope: l.slope, origin: l.origin, duration: d, cert: f64::NEG_INFINITY, item, leaf }
                };
                match layout {
                    Some(layout) => {
                        debug_assert_eq!(layout.len(), lines.len());
                        for (p, &i) in layout.iter().enumerate() {
                            nodes[size + p] = leaf(p, i as usize);
                        }
                    }
                    None => {
                        for i in 0..lines.len() {
                            nodes[size + i] = leaf(i, i);
                        }
                    }
                }
                let mut tr = Tournament { size, nodes };
                for node in (1..size).rev() {
                    tr.recompute(node, t);
                }
                tr
            }

            fn recompute(&mut self, node: usize, t: f64) {
                let (a, b) = (self.nodes[2 * node], self.nodes[2 * node + 1]);
                let child_cert = a.cert.max(b.cert);
                if a.item == NONE || b.item == NONE {
                    self.nodes[node] = Node { cert: child_cert, ..if a.item == NONE { b } else { a } };
                    return;
                }
                let fa = a.slope * (t - a.origin);
                let fb = b.slope * (t - b.origin);
                let (w, fw, l, fl) =
                    if goes_last_before(fa, a.duration, a.item as usize, fb, b.duration, b.item as usize) {
                        (a, fa, b, fb)
                    } else {
                        (b, fb, a, fa)
                    };
                // As t decreases the loser catches up only if its slope is larger.
                let local = if l.slope > w.slope {
                    let x = t - (fl - fw) / (l.slope - w.slope);
                    // Conservative by a hair: recomputing early is harmless, late would be wrong.
                    x + 1e-9 * x.abs().max(1.0)
                } else {
                    f64::NEG_INFINITY
                };
                self.nodes[node] = Node { cert: local.max(child_cert), ..w };
            }

            fn refresh(&mut self, node: usize, t: f64) {
                if node >= self.size || self.nodes[node].cert < t {
                    return;
                }
                self.refresh(2 * node, t);
                self.refresh(2 * node + 1, t);
                self.recompute(node, t);
            }

            /// Removes the item at leaf offset `leaf`.
            fn remove(&mut self, leaf: u32, t: f64) {
                let mut node = self.size + leaf as usize;
                self.nodes[node] = EMPTY_NODE;
                node /= 2;
                while node >= 1 {
                    self.recompute(node, t);
                    node /= 2;
                }
            }
        }

        /// The buffers of the linear fast path, kept by a caller that sequences again and again (FLEX's
        /// re-plans) so that a sequence allocates nothing once they have grown: at 10,000 jobs the tree
        /// alone is over a megabyte, which a fresh allocation page-faults in at every plan. Contents
        /// between calls mean nothing.
        #[derive(Clone, Debug, Default)]
        pub(super) struct KineticScratch {
            nodes: Vec<Node>,
            removed: Vec<usize>,
        }

        /// [`kinetic_lines`] into `out` (its buffer reused), with the tournament's leaves in `layout`
        /// order (a permutation of the items; `None`: index order) and buffers from `scratch`: the same
        /// sequence for every layout (see [`Tournament`]). A layout close to the removal order (the
        /// previous plan's, reversed) makes consecutive removals walk mostly the same nodes.
        pub(super) fn kinetic_lines_in(
            durations: &[f64],
            lines: &[Line],
            start: f64,
            layout: Option<&[u32]>,
            scratch: &mut KineticScratch,
            out: &mut Vec<usize>,
        ) {
            let n = durations.len();
            let mut t = start + durations.iter().sum::<f64>();
            let mut tree = Tournament::build(std::mem::take(&mut scratch.nodes), lines, durations, layout, t);
            let removed = &mut scratch.removed;
            removed.clear();
            for _ in 0..n {
                tree.refresh(1, t);
                let w = tree.nodes[1];
                if w.item == NONE {
                    break;
                }
                removed.push(w.item as usize);
                tree.remove(w.leaf, t);
                // The root's copy of the item's duration (`durations[w.item]`, read without a cache miss).
                t -= w.duration;
            }
            out.clear();
            out.extend(removed.iter().rev());
            scratch.nodes = tree.nodes;
        }
    }

    #[test]
    fn lateness_without_precedence_is_edd() {
        // Digest §6.4: p = [2,3,1], D = [3,6,2]: sequence 3, 1, 2 with max lateness 0.
        let p = [2.0, 3.0, 1.0];
        let pen: Vec<Penalty> = [3.0, 6.0, 2.0].iter().map(|&d| Penalty::Linear { slope: 1.0, origin: d }).collect();
        let none = Precedence::none(3);
        let seq = backwards_dp(&p, &none, 0.0, |j, t| pen[j].eval(t));
        assert_eq!(seq, vec![2, 0, 1]);
        assert_eq!(max_cost(&p, &seq, 0.0, |j, t| pen[j].eval(t)), 0.0);
        assert_eq!(backwards_dp_penalties(&p, &pen, &none, 0.0), seq);
    }

    #[test]
    fn eligibility_is_no_unscheduled_successor() {
        // 0 -> 1; job 0 has the cheapest cost at the end but must not go last.
        let p = [1.0, 1.0];
        let prec = Precedence::from_edges(2, &[(0, 1)]).unwrap();
        let seq = backwards_dp(&p, &prec, 0.0, |j, t| if j == 0 { 0.0 } else { t });
        assert_eq!(seq, vec![0, 1]);
    }

    #[test]
    fn ties_put_the_longer_then_the_newer_last() {
        let p = [1.0, 3.0, 2.0, 2.0];
        let seq = backwards_dp(&p, &Precedence::none(4), 0.0, |_, t| t);
        assert_eq!(seq, vec![0, 2, 3, 1], "makespan ties give SPT, newest last among equals");
        let pen = vec![Penalty::Linear { slope: 1.0, origin: 0.0 }; 4];
        assert_eq!(backwards_dp_penalties(&p, &pen, &Precedence::none(4), 0.0), seq);
    }

    #[test]
    fn max_response_time_is_fifo() {
        let p = [5.0, 1.0, 3.0];
        let arrivals = [0.0, 2.0, 4.0];
        let pen: Vec<Penalty> = arrivals.iter().map(|&a| Penalty::Linear { slope: 1.0, origin: a }).collect();
        assert_eq!(backwards_dp_penalties(&p, &pen, &Precedence::none(3), 10.0), vec![0, 1, 2]);
    }

    fn penalty_strategy() -> impl Strategy<Value = Penalty> {
        prop_oneof![
            (1u32..5, 0u32..30).prop_map(|(s, o)| Penalty::Linear { slope: s as f64, origin: o as f64 }),
            (1u32..5, 0u32..30).prop_map(|(s, d)| Penalty::Tardiness { slope: s as f64, due: d as f64 }),
            prop::collection::vec((1u32..8, 1u32..4), 1..4).prop_map(|v| {
                let mut due = 0.0;
                let mut cost = 0.0;
                Penalty::Steps(
                    v.into_iter()
                        .map(|(dd, dc)| {
                            due += dd as f64;
                            cost += dc as f64;
                            (due, cost)
                        })
                        .collect(),
                )
            }),
            Just(Penalty::Zero),
        ]
    }

    fn brute(p: &[f64], pen: &[Penalty], prec: &Precedence, start: f64) -> f64 {
        permutations(p.len())
            .into_iter()
            .filter(|o| prec.is_topological(o))
            .map(|o| max_cost(p, &o, start, |j, t| pen[j].eval(t)))
            .fold(f64::INFINITY, f64::min)
    }

    proptest! {
        /// Digest §6.4: on random instances (<= 7 items, mixed non-decreasing penalties, no
        /// precedence) the DP's max cost equals the optimum over all orders.
        #[test]
        fn optimal_over_all_orders(jobs in prop::collection::vec((1u32..10, penalty_strategy()), 1..8)) {
            let p: Vec<f64> = jobs.iter().map(|j| j.0 as f64).collect();
            let pen: Vec<Penalty> = jobs.iter().map(|j| j.1.clone()).collect();
            let none = Precedence::none(p.len());
            let seq = backwards_dp_penalties(&p, &pen, &none, 0.0);
            let got = max_cost(&p, &seq, 0.0, |j, t| pen[j].eval(t));
            prop_assert_eq!(got, brute(&p, &pen, &none, 0.0));
        }

        /// The same over topological orders of random DAGs.
        #[test]
        fn optimal_over_topological_orders(
            jobs in prop::collection::vec((1u32..10, penalty_strategy()), 2..8),
            edges in prop::collection::vec((0usize..7, 0usize..7), 0..10),
        ) {
            let n = jobs.len();
            // Orient every edge from lower to higher index: always acyclic.
            let e: Vec<(usize, usize)> = edges.iter()
                .map(|&(a, b)| (a % n, b % n)).filter(|(a, b)| a != b)
                .map(|(a, b)| (a.min(b), a.max(b))).collect();
            let prec = Precedence::from_edges(n, &e).unwrap();
            let p: Vec<f64> = jobs.iter().map(|j| j.0 as f64).collect();
            let pen: Vec<Penalty> = jobs.iter().map(|j| j.1.clone()).collect();
            let seq = backwards_dp_penalties(&p, &pen, &prec, 3.0);
            prop_assert!(prec.is_topological(&seq));
            let got = max_cost(&p, &seq, 3.0, |j, t| pen[j].eval(t));
            prop_assert_eq!(got, brute(&p, &pen, &prec, 3.0));
        }

        /// The tournament gives the same sequence whatever the leaves' layout and whatever a
        /// reused scratch held: each removal is the minimum of a strict total order
        /// ([`Tournament`]). Costs, durations and crossings tie often here.
        #[test]
        fn any_leaf_layout_gives_the_same_sequence(
            instances in prop::collection::vec(
                (prop::collection::vec((1u32..6, 1u32..5, 0u32..40), 1..300), any::<u64>()), 1..4),
        ) {
            let mut scratch = KineticScratch::default();
            let mut out = Vec::new();
            for (jobs, seed) in instances {
                let p: Vec<f64> = jobs.iter().map(|j| j.0 as f64 * 10.0).collect();
                let lines: Vec<Line> =
                    jobs.iter().map(|&(_, s, o)| Line { slope: 1.0 / s as f64, origin: o as f64 * 5.0 }).collect();
                let pen: Vec<Penalty> =
                    lines.iter().map(|l| Penalty::Linear { slope: l.slope, origin: l.origin }).collect();
                let expected = backwards_dp(&p, &Precedence::none(p.len()), 50.0, |j, t| pen[j].eval(t));
                prop_assert_eq!(&kinetic_lines(&p, &lines, 50.0), &expected);
                // A deterministic shuffle, and the reversed expected order (the layout a re-plan uses).
                let layout: Vec<u32> = shuffled(p.len(), seed).into_iter().map(|i| i as u32).collect();
                let reversed: Vec<u32> = expected.iter().rev().map(|&i| i as u32).collect();
                for layout in [Some(layout.as_slice()), Some(reversed.as_slice()), None] {
                    kinetic_lines_in(&p, &lines, 50.0, layout, &mut scratch, &mut out);
                    prop_assert_eq!(&out, &expected);
                }
            }
        }

        /// The bucketed tournament removes exactly what main's tournament (one item per leaf)
        /// removed, on instances of up to 3,000 items (many buckets, partial last buckets) whose
        /// costs, durations and crossings tie often, with zero slopes and durations, in index,
        /// shuffled and removal-order layouts, one scratch reused across instances of all sizes.
        #[test]
        fn buckets_remove_what_the_item_tournament_removed(
            instances in prop::collection::vec(
                (prop::collection::vec((0u32..6, 0u32..5, 0u32..40), 1..3000), any::<u64>(), 0u32..3), 1..4),
        ) {
            let mut scratch = KineticScratch::default();
            let mut old_scratch = oracle::KineticScratch::default();
            let (mut out, mut expected) = (Vec::new(), Vec::new());
            for (jobs, seed, start) in instances {
                let p: Vec<f64> = jobs.iter().map(|j| j.0 as f64 * 10.0).collect();
                let lines: Vec<Line> = jobs.iter().map(|&(_, s, o)| Line {
                    slope: if s == 0 { 0.0 } else { 1.0 / s as f64 },
                    origin: o as f64 * 5.0,
                }).collect();
                let start = [0.0, 50.0, 2e8][start as usize];
                oracle::kinetic_lines_in(&p, &lines, start, None, &mut old_scratch, &mut expected);
                let shuffle: Vec<u32> = shuffled(p.len(), seed).into_iter().map(|i| i as u32).collect();
                let reversed: Vec<u32> = expected.iter().rev().map(|&i| i as u32).collect();
                for layout in [None, Some(shuffle.as_slice()), Some(reversed.as_slice())] {
                    kinetic_lines_in(&p, &lines, start, layout, &mut scratch, &mut out);
                    prop_assert_eq!(&out, &expected);
                }
            }
        }

        /// The kinetic fast paths return exactly the literal loop's sequence.
        #[test]
        fn fast_paths_match_the_literal_loop(
            jobs in prop::collection::vec((1u32..50, 1u32..20, 0u32..500), 1..200),
            kind in 0u8..3,
        ) {
            let p: Vec<f64> = jobs.iter().map(|j| j.0 as f64).collect();
            let pen: Vec<Penalty> = jobs.iter().map(|&(_, s, o)| match kind {
                0 => Penalty::Linear { slope: 1.0 / s as f64, origin: o as f64 },
                1 => Penalty::Linear { slope: s as f64, origin: o as f64 },
                _ => Penalty::Steps(vec![(o as f64, s as f64), (o as f64 + 200.0, s as f64 * 3.0)]),
            }).collect();
            let none = Precedence::none(p.len());
            let fast = backwards_dp_penalties(&p, &pen, &none, 100.0);
            let slow = backwards_dp(&p, &none, 100.0, |j, t| pen[j].eval(t));
            prop_assert_eq!(fast, slow);
        }
    }
}
