//! Cyclic piggybacking state and the subjob decomposition (digest §2.2–2.4, §2.6).
//!
//! Two representations of the same mechanism:
//! - [`BlockScan`]: the implementation model. One bit per (active job, block) says whether the
//!   block was already scanned for that job. There is **no physical block order**: a scan of any
//!   block counts for every active job that still needs it, and the next block may be any block of
//!   the ready subjob (the assignment layer picks one, e.g. by locality).
//! - [`FluidScan`]: the `f = 1` fluid shortcut used by the simulator. Under chain precedence only
//!   the ready subjob `(d,1)` is scanned and it is relevant to every active job, so every active job's
//!   remaining amount drops at the scan rate. The state is one counter `scanned` per dataset plus,
//!   per job, the counter value at which it completes (`scanned at arrival + N_d`); a job's
//!   remaining amount is `finish − scanned`. Advancing a scan is `O(1)`.
//!
//! **Subjobs** (§2.3): with jobs `1..K` in arrival order and remaining amounts `r_1 ≤ … ≤ r_K`,
//! subjob `(d,k)` has size `p_{d,k} = r_k − r_{k−1}` (`r_0 = 0`), is relevant to jobs `k..K`
//! (concurrency `K − k + 1`), completes job `k` and inherits job `k`'s penalty and weight; its slot
//! bounds are `m = max_{i≥k} m_i` and `M = min_{i≥k} M_i`, and `m` is clamped to `M` when the
//! relevant jobs disagree (decision, digest §7.4). Indices are from the newest job's view: `(d,1)`
//! is always the set relevant to all active jobs.
//!
//! **Semi-shared scans** (§2.6): [`venn_regions`] groups blocks by the exact set of jobs that
//! still need them. Region `A` precedes region `B` iff `jobs(B) ⊊ jobs(A)` (more-overlapped
//! first); the relation is a DAG but not a chain.

use std::collections::BTreeMap;

use circumflex_core::error::{Error, Result};

/// One active job's view of a block-level scan: a key chosen by the caller and one bit per block.
#[derive(Clone, Debug, PartialEq, Eq)]
struct BlockJob {
    key: u64,
    needs: Vec<bool>,
    left: usize,
}

/// A dataset of `blocks` blocks scanned by cyclic piggybacking, with per-(job, block) bits.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BlockScan {
    blocks: usize,
    /// Active jobs in arrival order (oldest first).
    jobs: Vec<BlockJob>,
}

impl BlockScan {
    /// A dataset of `blocks` blocks with no active job.
    pub fn new(blocks: usize) -> BlockScan {
        BlockScan { blocks, jobs: Vec::new() }
    }

    /// Number of blocks `N_d`.
    pub fn blocks(&self) -> usize {
        self.blocks
    }

    /// Keys of the active jobs, oldest first.
    pub fn active(&self) -> Vec<u64> {
        self.jobs.iter().map(|j| j.key).collect()
    }

    /// A new job joins: it needs every block and piggybacks from the next scanned block on.
    /// A job with zero blocks to read completes at once and is not added (returns `false`).
    pub fn join(&mut self, key: u64) -> Result<bool> {
        if self.jobs.iter().any(|j| j.key == key) {
            return Err(Error::job("scan job key", key, "a key not already active on this dataset"));
        }
        if self.blocks == 0 {
            return Ok(false);
        }
        self.jobs.push(BlockJob { key, needs: vec![true; self.blocks], left: self.blocks });
        Ok(true)
    }

    /// Remaining blocks `r_k` per active job, oldest first.
    pub fn remaining(&self) -> Vec<usize> {
        self.jobs.iter().map(|j| j.left).collect()
    }

    /// The block sets of the subjobs `(d,1)..(d,K)`: set `k` holds the blocks whose oldest
    /// interested active job is job `k`. Under chain-order scanning they are exactly
    /// `R_k \ R_{k−1}` (see [`BlockScan::is_nested`]).
    pub fn subjob_blocks(&self) -> Vec<Vec<usize>> {
        let mut sets = vec![Vec::new(); self.jobs.len()];
        for b in 0..self.blocks {
            if let Some(k) = self.jobs.iter().position(|j| j.needs[b]) {
                sets[k].push(b);
            }
        }
        sets
    }

    /// Whether the needed sets are nested, `R_1 ⊆ R_2 ⊆ … ⊆ R_K` (holds when every scanned block
    /// came from the ready subjob).
    pub fn is_nested(&self) -> bool {
        self.jobs.windows(2).all(|w| (0..self.blocks).all(|b| !w[0].needs[b] || w[1].needs[b]))
    }

    /// Blocks of the ready subjob `(d,1)`: the ones the chain rule allows to scan now.
    pub fn ready_blocks(&self) -> Vec<usize> {
        match self.jobs.first() {
            Some(j) => (0..self.blocks).filter(|&b| j.needs[b]).collect(),
            None => Vec::new(),
        }
    }

    /// Scans `block` once for every active job that still needs it; returns the keys of the jobs
    /// that thereby completed (oldest first) and removes them. Returns how many jobs shared the
    /// scan as well (the concurrency of the scan, 0 if nobody needed the block).
    pub fn scan(&mut self, block: usize) -> Result<(Vec<u64>, usize)> {
        if block >= self.blocks {
            return Err(Error::job("block", block, format!("a block index below {}", self.blocks)));
        }
        let mut shared = 0;
        for j in self.jobs.iter_mut() {
            if j.needs[block] {
                j.needs[block] = false;
                j.left -= 1;
                shared += 1;
            }
        }
        let done: Vec<u64> = self.jobs.iter().filter(|j| j.left == 0).map(|j| j.key).collect();
        self.jobs.retain(|j| j.left > 0);
        Ok((done, shared))
    }
}

/// Fluid (`f = 1`) cyclic piggybacking on one dataset: a scan counter plus, per active job, the
/// counter value at which it completes (module docs).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FluidScan {
    /// Dataset size `N_d` (work units, e.g. slot-minutes).
    pub size: f64,
    /// Total amount scanned so far on this dataset (the shared work done).
    pub scanned: f64,
    /// Completion marks `scanned at arrival + N_d`, oldest job first (non-decreasing).
    pub finish: Vec<f64>,
    /// Caller keys of the active jobs, parallel to `finish`.
    pub keys: Vec<usize>,
}

impl FluidScan {
    /// An idle dataset of size `size`.
    pub fn new(size: f64) -> FluidScan {
        FluidScan { size, ..FluidScan::default() }
    }

    /// A job arrives: it needs the whole dataset, `r_K = N_d`.
    pub fn join(&mut self, key: usize) {
        self.finish.push(self.scanned + self.size);
        self.keys.push(key);
    }

    /// Remaining amounts `r_k`, oldest first.
    pub fn remaining(&self) -> Vec<f64> {
        self.finish.iter().map(|f| (f - self.scanned).max(0.0)).collect()
    }

    /// Subjob sizes `p_{d,k} = r_k − r_{k−1}`, `k = 1..K`.
    pub fn subjob_sizes(&self) -> Vec<f64> {
        let mut prev = self.scanned;
        self.finish
            .iter()
            .map(|&f| {
                let p = (f - prev).max(0.0);
                prev = prev.max(f);
                p
            })
            .collect()
    }

    /// Scans `amount` for every active job (the ready subjob is relevant to all of them).
    pub fn advance(&mut self, amount: f64) {
        self.scanned += amount.max(0.0);
    }

    /// Removes and returns the keys of the jobs whose remaining amount is at most `eps`
    /// (always the oldest ones: completion within a dataset is FIFO).
    pub fn take_completed(&mut self, eps: f64) -> Vec<usize> {
        let n = self.finish.iter().take_while(|&&f| f - self.scanned <= eps).count();
        self.finish.drain(..n);
        self.keys.drain(..n).collect()
    }
}

/// Slot bounds of the subjobs of one chain from the per-job bounds (oldest first):
/// `m_k = max_{i≥k} m_i`, `M_k = min_{i≥k} M_i`, with `m_k` clamped to `M_k`.
pub fn subjob_bounds(job_bounds: &[(u32, u32)]) -> Vec<(u32, u32)> {
    let mut out = vec![(0, 0); job_bounds.len()];
    let (mut lo, mut hi) = (0u32, u32::MAX);
    for k in (0..job_bounds.len()).rev() {
        lo = lo.max(job_bounds[k].0);
        hi = hi.min(job_bounds[k].1);
        out[k] = (lo.min(hi), hi);
    }
    out
}

/// One Venn region of a semi-shared workload: `size` units needed by exactly the jobs `jobs`.
#[derive(Clone, Debug, PartialEq)]
pub struct Region {
    /// Indices (into the caller's job list) of the jobs that still need this region, ascending.
    pub jobs: Vec<usize>,
    /// Remaining work of the region (blocks times per-block work).
    pub size: f64,
}

/// Groups blocks into Venn regions by the set of jobs that still need them. `needs[j]` lists the
/// (global) block ids job `j` still needs; `block_work` is the work of one block. Regions come out
/// sorted by their job sets, which makes the result deterministic.
pub fn venn_regions(needs: &[Vec<u64>], block_work: f64) -> Vec<Region> {
    let mut by_block: BTreeMap<u64, Vec<usize>> = BTreeMap::new();
    for (j, blocks) in needs.iter().enumerate() {
        for &b in blocks {
            let v = by_block.entry(b).or_default();
            if v.last() != Some(&j) {
                v.push(j);
            }
        }
    }
    let mut by_set: BTreeMap<Vec<usize>, usize> = BTreeMap::new();
    for (_, jobs) in by_block {
        *by_set.entry(jobs).or_default() += 1;
    }
    by_set.into_iter().map(|(jobs, n)| Region { jobs, size: n as f64 * block_work }).collect()
}

/// The semi-shared precedence: `a ≺ b` iff `jobs(b) ⊊ jobs(a)` (every pair, not only the Hasse
/// edges; the DP and the packing accept transitive edges).
pub fn region_edges(regions: &[Region]) -> Vec<(usize, usize)> {
    let subset = |small: &[usize], big: &[usize]| small.iter().all(|j| big.binary_search(j).is_ok());
    let mut edges = Vec::new();
    for (a, ra) in regions.iter().enumerate() {
        for (b, rb) in regions.iter().enumerate() {
            if a != b && rb.jobs.len() < ra.jobs.len() && subset(&rb.jobs, &ra.jobs) {
                edges.push((a, b));
            }
        }
    }
    edges
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn block_scan_fig3_decomposition() {
        // N = 10; job A scans 4 blocks alone, then B joins: (d,1) = 6 blocks, (d,2) = 4 blocks.
        let mut s = BlockScan::new(10);
        s.join(1).unwrap();
        for b in [7, 2, 9, 0] {
            s.scan(b).unwrap();
        }
        s.join(2).unwrap();
        let sets = s.subjob_blocks();
        assert_eq!(sets.iter().map(Vec::len).collect::<Vec<_>>(), vec![6, 4]);
        assert_eq!(sets[1], vec![0, 2, 7, 9]);
        assert_eq!(s.remaining(), vec![6, 10]);
        // Scanning the ready subjob serves both jobs; A completes after 6 shared scans.
        let ready = s.ready_blocks();
        let mut done = Vec::new();
        for b in ready {
            let (d, shared) = s.scan(b).unwrap();
            assert_eq!(shared, 2);
            done.extend(d);
        }
        assert_eq!(done, vec![1]);
        assert_eq!(s.remaining(), vec![4]);
        assert!(s.join(2).is_err(), "duplicate key");
        assert!(s.scan(10).is_err());
    }

    proptest! {
        /// Random joins and chain-order scans: nesting holds, subjob sizes sum to r_K <= N_d (= N_d
        /// right after an arrival), completions are oldest first, and the fluid model agrees.
        #[test]
        fn piggybacking_invariants(n in 1usize..12, ops in prop::collection::vec((any::<bool>(), 0usize..64), 1..80)) {
            let mut s = BlockScan::new(n);
            let mut fluid = FluidScan::new(n as f64);
            let mut next_key = 0u64;
            let mut completed: Vec<u64> = Vec::new();
            for (arrive, pick) in ops {
                if arrive || s.active().is_empty() {
                    s.join(next_key).unwrap();
                    fluid.join(next_key as usize);
                    next_key += 1;
                    let sizes: usize = s.subjob_blocks().iter().map(Vec::len).sum();
                    prop_assert_eq!(sizes, n);
                } else {
                    let ready = s.ready_blocks();
                    let b = ready[pick % ready.len()];
                    let (done, shared) = s.scan(b).unwrap();
                    prop_assert!(shared >= 1);
                    let newly = done.len();
                    completed.extend(done);
                    fluid.advance(1.0);
                    let fdone: Vec<u64> = fluid.take_completed(1e-9).into_iter().map(|k| k as u64).collect();
                    prop_assert_eq!(fdone.len(), newly);
                    prop_assert_eq!(&fdone[..], &completed[completed.len() - newly..]);
                }
                prop_assert!(s.is_nested());
                let r = s.remaining();
                prop_assert!(r.windows(2).all(|w| w[0] <= w[1]));
                let sets = s.subjob_blocks();
                let total: usize = sets.iter().map(Vec::len).sum();
                prop_assert_eq!(total, r.last().copied().unwrap_or(0));
                prop_assert!(total <= n);
                let fr: Vec<usize> = fluid.remaining().iter().map(|x| x.round() as usize).collect();
                prop_assert_eq!(&fr, &r);
                let fs: f64 = fluid.subjob_sizes().iter().sum();
                prop_assert!((fs - total as f64).abs() < 1e-9);
            }
            prop_assert!(completed.windows(2).all(|w| w[0] < w[1]), "FIFO completion: {:?}", completed);
        }
    }

    #[test]
    fn bounds_take_max_min_and_clamp() {
        assert_eq!(subjob_bounds(&[(1, 10), (3, 8), (2, 9)]), vec![(3, 8), (3, 8), (2, 9)]);
        assert_eq!(subjob_bounds(&[(5, 10), (0, 3)]), vec![(3, 3), (0, 3)], "m > M is clamped to M");
    }

    #[test]
    fn venn_regions_of_three_overlapping_jobs() {
        // Fig. 4 style: day ⊂ week, month overlapping the week partly: blocks 0..10.
        let needs = vec![(0..3).collect::<Vec<u64>>(), (0..7).collect(), (2..10).collect()];
        let regions = venn_regions(&needs, 1.0);
        let got: Vec<(Vec<usize>, f64)> = regions.iter().map(|r| (r.jobs.clone(), r.size)).collect();
        assert_eq!(got, vec![(vec![0, 1], 2.0), (vec![0, 1, 2], 1.0), (vec![1, 2], 4.0), (vec![2], 3.0)]);
        let edges = region_edges(&regions);
        // {0,1,2} precedes {0,1}, {1,2} and {2}; {0,1} and {1,2} are incomparable; {1,2} precedes {2}.
        let names: Vec<(Vec<usize>, Vec<usize>)> =
            edges.iter().map(|&(a, b)| (regions[a].jobs.clone(), regions[b].jobs.clone())).collect();
        assert!(names.contains(&(vec![0, 1, 2], vec![0, 1])));
        assert!(names.contains(&(vec![0, 1, 2], vec![2])));
        assert!(names.contains(&(vec![1, 2], vec![2])));
        assert!(!names.iter().any(|(a, b)| a == &vec![0, 1] && b == &vec![1, 2]));
        assert_eq!(edges.len(), 4);
    }
}
