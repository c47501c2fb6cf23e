//! Generalized Smith's rule over chains (CIRCUMFLEX appendix B.1; Sidney's rule for
//! `1|chains|Σ w_j C_j`): the optimal single-machine order for any minisum objective that is
//! linear in completion times (weighted and unweighted response time, average stretch, minisum
//! lateness).
//!
//! FLEX calls it with chains of length one, where it is plain Smith's rule (`p_j / w_j`
//! ascending; SPT when unweighted). CIRCUMFLEX calls it with one chain of subjobs per dataset.
//!
//! How it runs in `O(n log n)` (digest §3.3): a chain's best-prefix decomposition does not depend
//! on the other chains, so each chain is decomposed once into consecutive *blocks*, each the
//! minimum-ratio prefix of what remains (ratio = Σp / Σw), and the blocks of all chains are then
//! merged by ratio with a heap. The decomposition uses a stack: push each item as a block and merge
//! the top two blocks while the lower one's ratio is >= the upper one's. Block ratios come out
//! strictly increasing along a chain, so the heap merge keeps every chain in order.
//!
//! Decisions where the paper is silent (digest §7.2), all tested:
//! - Ratio ties inside a chain: the **longest** prefix wins (the stack merges on equality).
//! - Ratio ties between chains: the **lower chain index** first; callers list chains by dataset
//!   id or by their oldest job, so this is "lowest dataset id / oldest job".
//! - Comparisons are division-free and exact: `Σp·Σw' <=> Σp'·Σw` is decided with a fused
//!   multiply-add error term, so it is the exact comparison of the two rationals the floats
//!   represent. Sums are exact while work and weights are integers below 2^53 (slot-ms are).
//! - Weights must be finite and > 0 (FLEX weights are validated; stretch weights are `1/W_j` with
//!   `W_j >= 1 ms`); work must be finite and >= 0. A zero-work item has ratio 0 and goes first.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// One item to sequence: remaining work (any time unit; the order is scale-invariant) and weight.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SmithItem {
    /// Processing time `p`.
    pub work: f64,
    /// Weight `w` (> 0).
    pub weight: f64,
}

/// Exact comparison of the products `a·b` and `c·d` of finite floats.
pub fn cmp_products(a: f64, b: f64, c: f64, d: f64) -> Ordering {
    let x = a * b;
    let y = c * d;
    let scale = x.abs().max(y.abs());
    // Fast path: the rounded products differ by far more than their rounding errors.
    if (x - y).abs() > scale * 1e-14 {
        return x.total_cmp(&y);
    }
    // The exact difference is (x - y) + (ex - ey) with the fma error terms; x - y is exact here
    // (Sterbenz) and the sign survives the final rounding.
    let ex = a.mul_add(b, -x);
    let ey = c.mul_add(d, -y);
    let diff = (x - y) + (ex - ey);
    diff.partial_cmp(&0.0).unwrap_or(Ordering::Equal)
}

/// Compares the ratios `p1/w1` and `p2/w2` (weights > 0) without dividing.
#[inline]
pub fn cmp_ratio(p1: f64, w1: f64, p2: f64, w2: f64) -> Ordering {
    cmp_products(p1, w2, p2, w1)
}

/// Smith's rule for independent items: indices in sequence order (ratio ascending, ties by the
/// lower index). `O(n log n)`.
///
/// Sorted on the rounded quotient first: division rounds monotonically, so unequal quotients
/// order the exact ratios the same way; only equal quotients need the exact cross-product test.
pub fn smith_order(items: &[SmithItem]) -> Vec<usize> {
    // Non-negative floats order like their bit patterns (+ 0.0 turns -0.0 into +0.0), so the
    // main sort compares plain integers; runs of equal quotients are then settled exactly.
    let mut keyed: Vec<(u64, u32)> =
        items.iter().enumerate().map(|(i, it)| ((it.work / it.weight + 0.0).to_bits(), i as u32)).collect();
    keyed.sort_unstable();
    let mut start = 0;
    while start < keyed.len() {
        let mut end = start + 1;
        while end < keyed.len() && keyed[end].0 == keyed[start].0 {
            end += 1;
        }
        if end - start > 1 {
            // The comparator is an exact comparison of rationals plus the index: a total order.
            keyed[start..end].sort_by(|&(_, a), &(_, b)| {
                let (x, y) = (&items[a as usize], &items[b as usize]);
                cmp_ratio(x.work, x.weight, y.work, y.weight).then(a.cmp(&b))
            });
        }
        start = end;
    }
    keyed.into_iter().map(|(_, i)| i as usize).collect()
}

/// One entry of a kept Smith order: the quotient's bits, the item's id and the item.
#[derive(Clone, Copy, Debug)]
struct Keyed {
    bits: u64,
    id: u32,
    /// The item's index in the current call (scratch).
    index: u32,
    item: SmithItem,
}

impl Keyed {
    /// [`smith_order`]'s order, with ids standing for indices (they increase together).
    fn cmp(&self, other: &Keyed) -> Ordering {
        self.bits
            .cmp(&other.bits)
            .then_with(|| {
                if self.bits == other.bits {
                    cmp_ratio(self.item.work, self.item.weight, other.item.work, other.item.weight)
                } else {
                    Ordering::Equal
                }
            })
            .then(self.id.cmp(&other.id))
    }

    fn same_item(&self, item: &SmithItem) -> bool {
        self.item.work.to_bits() == item.work.to_bits() && self.item.weight.to_bits() == item.weight.to_bits()
    }
}

/// Smith's order kept between calls over item sets that change a little (FLEX's re-plans: a few
/// jobs change per epoch, one arrives or leaves): items are named by increasing ids, an item
/// whose id and values are as in the last call keeps its place among the other kept ones, and
/// only new or changed items are sorted and merged in. [`smith_order`]'s order is a strict total
/// order on (quotient, exact ratio, index), and with increasing ids the index order is the id
/// order, so the result is exactly [`smith_order`]'s (pinned by a proptest). `O(J + c log c)`
/// for `c` changed items instead of `O(J log J)` when the ids are dense enough for a position
/// table (a binary search per kept item otherwise).
#[derive(Clone, Debug, Default)]
pub struct SmithOrder {
    last: Vec<Keyed>,
    next: Vec<Keyed>,
    fresh: Vec<Keyed>,
    /// Per item of the current call: kept from the last order.
    kept: Vec<bool>,
    /// Per id: its index in the current call's `ids` when dense enough ([`SmithOrder::index_of`]);
    /// entries of ids absent from the call are stale and checked against `ids`.
    position: Vec<u32>,
}

/// Ids up to this many times the item count (plus a constant) are looked up through a dense
/// position table; sparser ids fall back to a binary search (bounding the table's memory).
const DENSE_IDS_PER_ITEM: usize = 4;

impl SmithOrder {
    /// [`smith_order`] of `items`, named by `ids` (strictly increasing; anything else, or a length
    /// mismatch, falls back to sorting from scratch and forgets the kept order).
    pub fn order(&mut self, ids: &[u32], items: &[SmithItem]) -> Vec<usize> {
        let mut order = Vec::new();
        self.order_into(ids, items, &mut order);
        order
    }

    /// [`SmithOrder::order`] written into `order` (its buffer reused).
    pub fn order_into(&mut self, ids: &[u32], items: &[SmithItem], order: &mut Vec<usize>) {
        if ids.len() != items.len() || !ids.windows(2).all(|w| w[0] < w[1]) {
            self.last.clear();
            *order = smith_order(items);
            return;
        }
        let key = |id: u32, index: usize, item: &SmithItem| Keyed {
            bits: (item.work / item.weight + 0.0).to_bits(),
            id,
            index: index as u32,
            item: *item,
        };
        self.kept.clear();
        self.kept.resize(items.len(), false);
        self.next.clear();
        // Where each id is in `ids`: a dense table when the ids allow it (a binary search per kept
        // item was 13-15% of a re-plan at 10,000 jobs, docs/performance.md §10), else a search.
        let dense = ids.last().is_some_and(|&max| (max as usize) < DENSE_IDS_PER_ITEM * ids.len() + 1024);
        if dense {
            let max = ids.last().map_or(0, |&m| m as usize);
            if self.position.len() <= max {
                self.position.resize(max + 1, u32::MAX);
            }
            for (i, &id) in ids.iter().enumerate() {
                self.position[id as usize] = i as u32;
            }
        }
        let position = &self.position;
        let index_of = |id: u32| -> Option<usize> {
            if dense {
                let i = *position.get(id as usize)? as usize;
                (ids.get(i) == Some(&id)).then_some(i)
            } else {
                ids.binary_search(&id).ok()
            }
        };
        // Survivors of the last order, in their order.
        let mut survivors = std::mem::take(&mut self.last);
        let kept = &mut self.kept;
        survivors.retain_mut(|e| match index_of(e.id) {
            Some(i) if e.same_item(&items[i]) => {
                e.index = i as u32;
                kept[i] = true;
                true
            }
            _ => false,
        });
        self.fresh.clear();
        for (i, item) in items.iter().enumerate() {
            if !self.kept[i] {
                self.fresh.push(key(ids[i], i, item));
            }
        }
        self.fresh.sort_unstable_by(Keyed::cmp);
        // Merge; the comparator is a strict total order, so the merge is the sorted list.
        let (mut a, mut b) = (0, 0);
        while a < survivors.len() && b < self.fresh.len() {
            if survivors[a].cmp(&self.fresh[b]) == Ordering::Less {
                self.next.push(survivors[a]);
                a += 1;
            } else {
                self.next.push(self.fresh[b]);
                b += 1;
            }
        }
        self.next.extend_from_slice(&survivors[a..]);
        self.next.extend_from_slice(&self.fresh[b..]);
        self.last = std::mem::take(&mut self.next);
        self.next = survivors;
        order.clear();
        order.extend(self.last.iter().map(|e| e.index as usize));
    }
}

/// One block of a chain's decomposition: items `start..end`, with their sums.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Block {
    /// First item (position in the chain).
    pub start: usize,
    /// One past the last item.
    pub end: usize,
    /// Σ work of the block.
    pub work: f64,
    /// Σ weight of the block.
    pub weight: f64,
}

/// Decomposes one chain into blocks, each the longest minimum-ratio prefix of the rest.
/// Block ratios are strictly increasing. `O(len)` amortised.
pub fn chain_blocks(chain: &[SmithItem]) -> Vec<Block> {
    let mut stack: Vec<Block> = Vec::with_capacity(chain.len());
    for (k, it) in chain.iter().enumerate() {
        let mut top = Block { start: k, end: k + 1, work: it.work, weight: it.weight };
        while let Some(prev) = stack.last() {
            // Merge while the earlier block is not strictly better: prefix ties go to the longest.
            if cmp_ratio(prev.work, prev.weight, top.work, top.weight) == Ordering::Less {
                break;
            }
            top =
                Block { start: prev.start, end: top.end, work: prev.work + top.work, weight: prev.weight + top.weight };
            stack.pop();
        }
        stack.push(top);
    }
    stack
}

/// Heap entry for the merge: the next block of one chain.
struct Head {
    chain: usize,
    block: usize,
    work: f64,
    weight: f64,
}

impl PartialEq for Head {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Head {}
impl PartialOrd for Head {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Head {
    fn cmp(&self, other: &Self) -> Ordering {
        // Max-heap: invert so the smallest ratio, then the lowest chain index, pops first.
        cmp_ratio(other.work, other.weight, self.work, self.weight).then(other.chain.cmp(&self.chain))
    }
}

/// Generalized Smith's rule over chains. Returns `(chain, position)` pairs in sequence order;
/// every item of every chain appears once and chains keep their internal order.
/// `O(n log n)` for `n` items in total.
pub fn generalized_smith<C: AsRef<[SmithItem]>>(chains: &[C]) -> Vec<(usize, usize)> {
    let blocks: Vec<Vec<Block>> = chains.iter().map(|c| chain_blocks(c.as_ref())).collect();
    let total: usize = chains.iter().map(|c| c.as_ref().len()).sum();
    let mut heap: BinaryHeap<Head> = blocks
        .iter()
        .enumerate()
        .filter_map(|(c, bs)| bs.first().map(|b| Head { chain: c, block: 0, work: b.work, weight: b.weight }))
        .collect();
    let mut out = Vec::with_capacity(total);
    while let Some(head) = heap.pop() {
        let bs = &blocks[head.chain];
        let b = bs[head.block];
        out.extend((b.start..b.end).map(|k| (head.chain, k)));
        if let Some(next) = bs.get(head.block + 1) {
            heap.push(Head { chain: head.chain, block: head.block + 1, work: next.work, weight: next.weight });
        }
    }
    out
}

/// Σ w_j C_j of a single-machine sequence starting at 0 (for tests and reports).
pub fn weighted_completion_sum(items: &[SmithItem], sequence: &[usize]) -> f64 {
    let mut t = 0.0;
    let mut sum = 0.0;
    for &i in sequence {
        t += items[i].work;
        sum += items[i].weight * t;
    }
    sum
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flex::testutil::permutations;
    use proptest::prelude::*;

    fn it(work: f64, weight: f64) -> SmithItem {
        SmithItem { work, weight }
    }

    /// Flattens chains into one item list; returns the items and the flat index of (chain, pos).
    fn flatten(chains: &[Vec<SmithItem>]) -> (Vec<SmithItem>, Vec<Vec<usize>>) {
        let mut items = Vec::new();
        let mut idx = Vec::new();
        for c in chains {
            idx.push((items.len()..items.len() + c.len()).collect());
            items.extend_from_slice(c);
        }
        (items, idx)
    }

    fn cost_of(chains: &[Vec<SmithItem>], seq: &[(usize, usize)]) -> f64 {
        let (items, idx) = flatten(chains);
        let flat: Vec<usize> = seq.iter().map(|&(c, k)| idx[c][k]).collect();
        weighted_completion_sum(&items, &flat)
    }

    /// The literal O(n^2) loop of appendix B.1 (with the missing pointer update), as a reference.
    fn literal_b1(chains: &[Vec<SmithItem>]) -> Vec<(usize, usize)> {
        let mut next = vec![0usize; chains.len()];
        let mut out = Vec::new();
        loop {
            let mut best: Option<(usize, usize, f64, f64)> = None;
            for (d, c) in chains.iter().enumerate() {
                let (mut p, mut w) = (0.0, 0.0);
                for (kappa, item) in c.iter().enumerate().skip(next[d]) {
                    p += item.work;
                    w += item.weight;
                    let better = match best {
                        None => true,
                        Some((bd, _, bp, bw)) => match cmp_ratio(p, w, bp, bw) {
                            Ordering::Less => true,
                            Ordering::Equal => bd == d, // same chain: longer prefix wins
                            Ordering::Greater => false,
                        },
                    };
                    if better {
                        best = Some((d, kappa, p, w));
                    }
                }
            }
            let Some((d, kappa, ..)) = best else { break };
            out.extend((next[d]..=kappa).map(|k| (d, k)));
            next[d] = kappa + 1;
        }
        out
    }

    #[test]
    fn smith_is_spt_when_unweighted() {
        // Digest §6.1: p = [3,1,2] gives job2, job3, job1 with completions 1, 3, 6; Σ C = 10.
        let items = [it(3.0, 1.0), it(1.0, 1.0), it(2.0, 1.0)];
        let order = smith_order(&items);
        assert_eq!(order, vec![1, 2, 0]);
        assert_eq!(weighted_completion_sum(&items, &order), 10.0);
    }

    #[test]
    fn generalized_smith_instance_1_costs_61() {
        let chains = vec![vec![it(4.0, 1.0), it(1.0, 10.0)], vec![it(2.0, 1.0)]];
        let seq = generalized_smith(&chains);
        assert_eq!(seq, vec![(0, 0), (0, 1), (1, 0)]);
        assert_eq!(cost_of(&chains, &seq), 61.0);
        assert_eq!(cost_of(&chains, &[(1, 0), (0, 0), (0, 1)]), 78.0);
        assert_eq!(cost_of(&chains, &[(0, 0), (1, 0), (0, 1)]), 80.0);
    }

    #[test]
    fn generalized_smith_instance_2_costs_33() {
        let chains = vec![vec![it(3.0, 1.0), it(1.0, 4.0)], vec![it(1.0, 1.0), it(4.0, 1.0)]];
        let seq = generalized_smith(&chains);
        assert_eq!(seq, vec![(0, 0), (0, 1), (1, 0), (1, 1)]);
        assert_eq!(cost_of(&chains, &seq), 33.0);
        // Greedy "ready-subjob" Smith starts with B1 and pays 34.
        assert_eq!(cost_of(&chains, &[(1, 0), (0, 0), (0, 1), (1, 1)]), 34.0);
    }

    #[test]
    fn ties_take_the_longest_prefix_then_the_lower_chain() {
        // Chain 0: (2,1),(2,1): prefix ratios 2 and 2 -> one block of both.
        let blocks = chain_blocks(&[it(2.0, 1.0), it(2.0, 1.0)]);
        assert_eq!(blocks.len(), 1);
        // Two chains with equal ratios: chain 0 first.
        let seq = generalized_smith(&[vec![it(4.0, 2.0)], vec![it(2.0, 1.0)]]);
        assert_eq!(seq, vec![(0, 0), (1, 0)]);
        let order = smith_order(&[it(4.0, 2.0), it(2.0, 1.0), it(1.0, 1.0)]);
        assert_eq!(order, vec![2, 0, 1]);
    }

    #[test]
    fn exact_products_see_one_ulp() {
        let a = 1.0 + f64::EPSILON;
        assert_eq!(cmp_products(a, a, 1.0 + 2.0 * f64::EPSILON, 1.0), Ordering::Greater);
        assert_eq!(cmp_products(3.0, 5.0, 5.0, 3.0), Ordering::Equal);
        assert_eq!(cmp_products(1e300, 1e-300, 1.0, 1.0), 1e300f64.mul_add(1e-300, -1.0).partial_cmp(&0.0).unwrap());
    }

    fn chains_strategy() -> impl Strategy<Value = Vec<Vec<SmithItem>>> {
        prop::collection::vec(prop::collection::vec((0u32..20, 1u32..10), 1..4), 1..4).prop_map(|cs| {
            cs.into_iter().map(|c| c.into_iter().map(|(p, w)| it(p as f64, w as f64)).collect()).collect()
        })
    }

    proptest! {
        /// Digest §6.3: on random chains (<= 8 items) the cost equals the brute-force minimum over
        /// all topological orders, and equals the literal B.1 loop's output.
        #[test]
        fn optimal_over_topological_orders(chains in chains_strategy()) {
            let (items, idx) = flatten(&chains);
            prop_assume!(items.len() <= 8);
            let seq = generalized_smith(&chains);
            prop_assert_eq!(&seq, &literal_b1(&chains));
            let lens: Vec<usize> = chains.iter().map(Vec::len).collect();
            let prec = super::super::precedence::Precedence::chains(&lens);
            let flat: Vec<usize> = seq.iter().map(|&(c, k)| idx[c][k]).collect();
            prop_assert!(prec.is_topological(&flat));
            let got = weighted_completion_sum(&items, &flat);
            let best = permutations(items.len())
                .into_iter()
                .filter(|p| prec.is_topological(p))
                .map(|p| weighted_completion_sum(&items, &p))
                .fold(f64::INFINITY, f64::min);
            prop_assert_eq!(got, best);
        }

        /// On a single slot with free preemption, Smith's order is optimal for Σ w_j C_j
        /// (brute force over all orders of up to 7 independent jobs).
        #[test]
        fn kept_order_equals_smith_order(
            steps in prop::collection::vec(
                (prop::collection::vec((0u32..60, 0u8..4, 1u8..4), 0..40), any::<bool>()),
                1..8,
            ),
        ) {
            // Each step is the next call's item set: (id, work class, weight); ids deduplicated
            // and sorted. Few distinct values, so quotients and exact ratios tie often. A sparse
            // step spreads the ids out so far that the ids are looked up by binary search instead
            // of the position table (steps of both kinds share one kept order).
            let mut kept = SmithOrder::default();
            for (step, sparse) in steps {
                let mut step = step;
                step.sort_by_key(|e| e.0);
                step.dedup_by_key(|e| e.0);
                let spread = if sparse { 1 << 20 } else { 1 };
                let ids: Vec<u32> = step.iter().map(|e| e.0 * spread).collect();
                let items: Vec<SmithItem> = step
                    .iter()
                    .map(|&(_, w, q)| it([0.0, 3.0, 0.1 + 0.2, 6.0][w as usize], [1.0, 3.0, 0.3][q as usize - 1]))
                    .collect();
                prop_assert_eq!(kept.order(&ids, &items), smith_order(&items));
            }
            // Ids out of order fall back to the sort.
            let items = [it(2.0, 1.0), it(1.0, 1.0)];
            prop_assert_eq!(kept.order(&[5, 3], &items), smith_order(&items));
        }

        #[test]
        fn single_slot_weighted_rt_is_optimal(jobs in prop::collection::vec((1u32..30, 1u32..8), 1..8)) {
            let items: Vec<SmithItem> = jobs.iter().map(|&(p, w)| it(p as f64, w as f64)).collect();
            let got = weighted_completion_sum(&items, &smith_order(&items));
            let best = permutations(items.len())
                .into_iter()
                .map(|p| weighted_completion_sum(&items, &p))
                .fold(f64::INFINITY, f64::min);
            prop_assert_eq!(got, best);
        }
    }
}
