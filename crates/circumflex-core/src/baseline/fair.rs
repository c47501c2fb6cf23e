//! Fair: weighted max-min fair shares with per-job minimums and maximums, as Hadoop's
//! FairScheduler computes them for jobs in one pool.
//!
//! Per pool, each job's demand is what it can use now (running plus runnable pending tasks),
//! capped by its maximum. Minimums are granted first, in FIFO order when they do not all fit;
//! the rest is water-filled one slot at a time to the job with the lowest `slots / weight`
//! (ties: earlier submission, then lower id), which is exact max-min fairness on integers.

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

use crate::model::{JobId, JobState, Phase};
use crate::policy::rows::{phase_demands, JobRows};
use crate::policy::{
    pool_demand, slot_bounds, slot_bounds_of, Plan, PlanBuilder, PlanEntry, Policy, PoolMode, Pools, Snapshot,
};

/// A job's `(demand, minimum)` in one pool.
type DemandMin = (u32, u32);

/// What Fair keeps of a job between incremental plans.
#[derive(Clone, Copy, Debug)]
struct Row {
    id: JobId,
    weight: f64,
    min_slots: u32,
    max_slots: Option<u32>,
    /// Per phase: running plus runnable pending tasks.
    demand: [u32; 2],
}

/// Weighted max-min fair sharing.
///
/// Incremental re-plans ([`Snapshot::with_changes`], the engine's) keep the jobs' rows between
/// plans and read only changed jobs and arrivals; the water-filling then runs over those rows.
#[derive(Debug, Default)]
pub struct Fair {
    rows: JobRows<PoolMode, Row>,
    input: Vec<(JobId, u32, u32, f64)>,
}

impl Fair {
    /// The registry's constructor (Fair has no keys of its own).
    pub fn from_config(_cfg: &crate::config::EngineConfig) -> crate::error::Result<Fair> {
        Ok(Fair::default())
    }

    /// The plan from the snapshot alone (no change list): one walk over every job state.
    fn plan_from_scratch(snapshot: &Snapshot<'_>) -> Plan {
        let mut builder = PlanBuilder::new(snapshot, snapshot.active.iter().copied());
        // One walk over the job states for every pool (they are large; this walk is most of the
        // plan's memory traffic), then one water-filling per pool over compact rows.
        let pools = Pools::of(snapshot);
        let rows: Vec<(JobId, f64, [DemandMin; 2])> = snapshot
            .active_jobs()
            .map(|job| {
                let mut per_pool = [(0, 0); 2];
                for (k, pool) in pools.iter() {
                    let (min, max) = slot_bounds(job, pool.capacity);
                    per_pool[k] = (pool_demand(job, pool).min(max), min);
                }
                (job.id, job.spec.weight, per_pool)
            })
            .collect();
        let mut input = Vec::with_capacity(rows.len());
        for (k, pool) in pools.iter() {
            input.clear();
            input.extend(rows.iter().map(|&(id, weight, per_pool)| (id, per_pool[k].0, per_pool[k].1, weight)));
            let alloc = max_min_fair(pool.capacity, &input);
            for (i, &(id, ..)) in input.iter().enumerate() {
                builder.set_pool_target(id, pool, alloc[i]);
            }
        }
        builder.finish()
    }
}

/// Heap entry: smallest `slots / weight` first, then FIFO.
struct Share {
    slots: u32,
    weight: f64,
    rank: usize,
    /// `slots / weight`, kept in step with `slots` (computed once, not at every comparison).
    ratio: f64,
}

impl Share {
    fn new(slots: u32, weight: f64, rank: usize) -> Share {
        Share { slots, weight, rank, ratio: slots as f64 / weight }
    }

    fn ratio(&self) -> f64 {
        self.ratio
    }
}

impl PartialEq for Share {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Share {}
impl PartialOrd for Share {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Share {
    fn cmp(&self, other: &Self) -> Ordering {
        // BinaryHeap is a max-heap: invert so the neediest job is on top.
        other.ratio().total_cmp(&self.ratio()).then_with(|| other.rank.cmp(&self.rank))
    }
}

/// Water-fills `capacity` slots over `(job, demand, min, weight)` in FIFO rank order.
/// Returns the allocation in the same order. Exposed for other policies' "fair" fallbacks.
pub fn max_min_fair(capacity: u32, jobs: &[(JobId, u32, u32, f64)]) -> Vec<u32> {
    let mut alloc = vec![0u32; jobs.len()];
    let mut left = capacity;
    for (i, &(_, demand, min, _)) in jobs.iter().enumerate() {
        let give = min.min(demand).min(left);
        alloc[i] = give;
        left -= give;
    }
    // Minima often take every slot (thousands of jobs with a minimum each): then there is
    // nothing to water-fill and no heap to build.
    if left == 0 || equal_weight_fill(&mut alloc, jobs, left) {
        return alloc;
    }
    // Only the `left` neediest jobs can get a slot: the heap hands out slots in increasing order
    // of `(slots / weight, rank)` over every job's successive slots, and a job's keys never
    // decrease (for finite positive weights), so a job gets a slot only if every job whose first
    // key is smaller got one first. Keeping just those (a bounded heap whose top is the least
    // needy kept; most jobs are turned away by one comparison) makes the heap `O(left)`.
    let left_jobs = left as usize;
    let needy = jobs.iter().enumerate().filter(|(i, j)| alloc[*i] < j.1).map(|(i, j)| Share::new(alloc[i], j.3, i));
    let bounded = jobs.len() > left_jobs && jobs.iter().all(|j| j.3.is_finite() && j.3 > 0.0);
    let mut heap: BinaryHeap<Share> = if bounded {
        let mut kept: BinaryHeap<Reverse<Share>> = BinaryHeap::with_capacity(left_jobs);
        for share in needy {
            if kept.len() < left_jobs {
                kept.push(Reverse(share));
            } else if let Some(mut least) = kept.peek_mut() {
                if share > least.0 {
                    *least = Reverse(share);
                }
            }
        }
        kept.into_iter().map(|r| r.0).collect()
    } else {
        needy.collect()
    };
    // The neediest job takes one slot in place (one sift-down instead of a pop and a push).
    while left > 0 {
        let Some(mut top) = heap.peek_mut() else { break };
        top.slots += 1;
        top.ratio = top.slots as f64 / top.weight;
        alloc[top.rank] = top.slots;
        left -= 1;
        if top.slots >= jobs[top.rank].1 {
            std::collections::binary_heap::PeekMut::pop(top);
        }
    }
    alloc
}

/// The heap's water-filling below in closed form, when every job below its demand has the same weight
/// `w` (finite, positive, and the largest demand over `w` finite); returns false (changing nothing)
/// otherwise. Then a job's successive keys `(s / w, rank)` order as `(s, rank)` (the quotients of
/// distinct slot counts below 2^32 are distinct and in order), so the heap hands out the `left` least
/// pairs `(s, rank)` over every job's `s` from its allocation up to its demand: every job up to the
/// highest level `L` that needs no more than `left` slots, then one more slot at level `L` to the
/// first jobs in rank order while slots remain. `O(jobs × log demand)` instead of a heap step per slot:
/// a day on 1,000 nodes re-plans tens of thousands of times with thousands of slots to hand out, and
/// one heap step per slot was 7-10% of it (`docs/performance.md` §18).
fn equal_weight_fill(alloc: &mut [u32], jobs: &[(JobId, u32, u32, f64)], left: u32) -> bool {
    let mut weight = None;
    let mut highest = 0u32;
    for (j, &a) in jobs.iter().zip(alloc.iter()) {
        if a < j.1 {
            match weight {
                None => weight = Some(j.3),
                Some(w) if w == j.3 => {}
                Some(_) => return false,
            }
            highest = highest.max(j.1);
        }
    }
    let Some(w) = weight else { return true }; // every job at its demand: nothing to hand out
    if !(w.is_finite() && w > 0.0 && (f64::from(highest) / w).is_finite()) {
        return false;
    }
    // Slots the keys below level `l` take.
    let below = |l: u32| -> u64 {
        jobs.iter().zip(alloc.iter()).filter(|(j, &a)| a < j.1).map(|(j, &a)| u64::from(l.clamp(a, j.1) - a)).sum()
    };
    let (mut level, mut top) = (0u32, highest);
    while level < top {
        let mid = level + (top - level).div_ceil(2);
        if below(mid) <= u64::from(left) {
            level = mid;
        } else {
            top = mid - 1;
        }
    }
    let mut rest = u64::from(left) - below(level);
    for (a, j) in alloc.iter_mut().zip(jobs) {
        if *a < j.1 {
            let was = *a;
            *a = level.clamp(was, j.1);
            if rest > 0 && was <= level && level < j.1 {
                *a += 1;
                rest -= 1;
            }
        }
    }
    true
}

impl Policy for Fair {
    fn name(&self) -> &'static str {
        "fair"
    }

    fn plan(&mut self, snapshot: &Snapshot<'_>) -> Plan {
        let read = |j: &JobState| Row {
            id: j.id,
            weight: j.spec.weight,
            min_slots: j.spec.min_slots,
            max_slots: j.spec.max_slots,
            demand: phase_demands(j),
        };
        if self.rows.sync(snapshot, snapshot.cluster.mode, read).is_none() {
            return Self::plan_from_scratch(snapshot);
        }
        let rows = self.rows.rows();
        // Every active id once, all active, in submission order (the incremental snapshot's
        // promise): the entries are exactly what `PlanBuilder` makes of the active list.
        let mut entries: Vec<PlanEntry> =
            rows.iter().map(|r| PlanEntry { job: r.id, target: [0, 0], predicted_completion_ms: None }).collect();
        for (_, pool) in Pools::of(snapshot).iter() {
            self.input.clear();
            self.input.extend(rows.iter().map(|r| {
                let (min, max) = slot_bounds_of(r.min_slots, r.max_slots, pool.capacity);
                let demand: u32 = pool.phases.iter().map(|ph| r.demand[ph.idx()]).sum();
                (r.id, demand.min(max), min, r.weight)
            }));
            let alloc = max_min_fair(pool.capacity, &self.input);
            for ((entry, r), &slots) in entries.iter_mut().zip(rows).zip(&alloc) {
                entry.set_pool_target(pool, slots, || r.demand[Phase::Map.idx()]);
            }
        }
        Plan { computed_at: snapshot.now, entries, ..Plan::default() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Fair as it was first written (one walk over the job states per pool): the one-walk
    /// version must plan exactly the same.
    fn reference(snapshot: &Snapshot<'_>) -> Plan {
        let mut builder = PlanBuilder::new(snapshot, snapshot.active.iter().copied());
        for pool in snapshot.cluster.pools() {
            let input: Vec<_> = snapshot
                .active_jobs()
                .map(|job| {
                    let (min, max) = slot_bounds(job, pool.capacity);
                    (job.id, pool_demand(job, &pool).min(max), min, job.spec.weight)
                })
                .collect();
            let alloc = max_min_fair(pool.capacity, &input);
            for (i, &(id, ..)) in input.iter().enumerate() {
                builder.set_pool_target(id, &pool, alloc[i]);
            }
        }
        builder.finish()
    }

    proptest! {
        #[test]
        fn plans_exactly_as_the_reference((cluster, jobs, active) in crate::baseline::testutil::snapshot_parts()) {
            let snap = Snapshot::new(7, cluster, &jobs, &active);
            prop_assert_eq!(Fair::default().plan(&snap), reference(&snap));
        }
    }

    /// Water-filling as first written: every job below its demand in the heap, a pop and a push
    /// per slot, the ratio computed at each comparison.
    fn max_min_fair_reference(capacity: u32, jobs: &[(JobId, u32, u32, f64)]) -> Vec<u32> {
        let mut alloc = vec![0u32; jobs.len()];
        let mut left = capacity;
        for (i, &(_, demand, min, _)) in jobs.iter().enumerate() {
            let give = min.min(demand).min(left);
            alloc[i] = give;
            left -= give;
        }
        // Ratios are non-negative (positive weights), so their bits order as `total_cmp` does.
        let key = |slots: u32, w: f64, rank: usize| (Reverse((slots as f64 / w).to_bits()), Reverse(rank));
        let mut heap: BinaryHeap<_> =
            (0..jobs.len()).filter(|&i| alloc[i] < jobs[i].1).map(|i| (key(alloc[i], jobs[i].3, i), i)).collect();
        while left > 0 {
            let Some((_, i)) = heap.pop() else { break };
            alloc[i] += 1;
            left -= 1;
            if alloc[i] < jobs[i].1 {
                heap.push((key(alloc[i], jobs[i].3, i), i));
            }
        }
        alloc
    }

    proptest! {
        /// The bounded heap (only the `left` neediest jobs) hands out exactly the slots of the
        /// full heap, ties in ratio included (weights 0.5 to 3 make many).
        #[test]
        fn water_filling_matches_the_full_heap(
            cap in 0u32..120,
            jobs in prop::collection::vec((0u32..30, 0u32..4, 0usize..6), 0..60),
        ) {
            const WEIGHTS: [f64; 6] = [0.5, 1.0, 1.5, 2.0, 3.0, 1.0 / 3.0];
            let input: Vec<_> = jobs.iter().enumerate()
                .map(|(i, &(d, m, w))| (JobId(i as u32), d, m, WEIGHTS[w])).collect();
            prop_assert_eq!(max_min_fair(cap, &input), max_min_fair_reference(cap, &input));
        }
    }

    proptest! {
        /// With one weight for every job (the case the closed form takes), the same slots as the
        /// full heap, ties in level broken by rank.
        #[test]
        fn equal_weights_fill_as_the_full_heap(
            cap in 0u32..300,
            jobs in prop::collection::vec((0u32..40, 0u32..6), 0..40),
            w in prop::sample::select(vec![1.0, 0.5, 3.0, 1.0 / 3.0, 1e-3, 7e5]),
        ) {
            let input: Vec<_> = jobs.iter().enumerate()
                .map(|(i, &(d, m))| (JobId(i as u32), d, m, w)).collect();
            prop_assert_eq!(max_min_fair(cap, &input), max_min_fair_reference(cap, &input));
        }
    }

    #[test]
    fn equal_weights_split_evenly_and_respect_demand() {
        let jobs = [(JobId(0), 10, 0, 1.0), (JobId(1), 2, 0, 1.0), (JobId(2), 10, 0, 1.0)];
        assert_eq!(max_min_fair(10, &jobs), vec![4, 2, 4]);
    }

    #[test]
    fn weights_and_minimums() {
        let jobs = [(JobId(0), 10, 0, 1.0), (JobId(1), 10, 0, 3.0)];
        assert_eq!(max_min_fair(8, &jobs), vec![2, 6]);
        let jobs = [(JobId(0), 10, 5, 1.0), (JobId(1), 10, 0, 3.0)];
        assert_eq!(max_min_fair(8, &jobs), vec![5, 3]);
    }

    proptest! {
        #[test]
        fn never_exceeds_capacity_or_demand(
            cap in 0u32..200,
            jobs in prop::collection::vec((0u32..50, 0u32..10, 1u32..5), 0..30),
        ) {
            let input: Vec<_> = jobs.iter().enumerate()
                .map(|(i, &(d, m, w))| (JobId(i as u32), d, m.min(d), w as f64)).collect();
            let alloc = max_min_fair(cap, &input);
            let total: u32 = alloc.iter().sum();
            prop_assert!(total <= cap);
            let demand: u32 = input.iter().map(|j| j.1).sum();
            prop_assert_eq!(total, cap.min(demand), "work conserving");
            for (a, j) in alloc.iter().zip(&input) {
                prop_assert!(*a <= j.1);
            }
            let mins: u32 = input.iter().map(|j| j.2).sum();
            if mins <= cap {
                for (a, j) in alloc.iter().zip(&input) { prop_assert!(*a >= j.2); }
            }
        }
    }
}
