//! FlowFlex Stage 1 (digest §2.1): turn one flow's DAG into a chain of pseudo-jobs.
//!
//! The chain is fixed by the as-soon-as-possible pseudo-schedule with unlimited processors: every
//! job runs on exactly `δ_i` slots during `[b_i, b_i + s_i/δ_i)`. The horizon `[0, CP]` is cut at
//! every distinct start and finish, and each maximal interval `I_k` with a constant running set
//! `S_k` becomes pseudo-job `k` with bound `r_k = Σ_{i∈S_k} δ_i` (which may exceed `P`) and size
//! `r_k · |I_k|`. Chain order follows time order.
//!
//! Decisions where the paper is silent:
//! - Breakpoints are compared exactly, not with a tolerance. A successor's start is the `max` of
//!   its predecessors' finish values, computed by the same expression, so related jobs never
//!   overlap even in floating point; a near-coincidence of unrelated times only yields a very short
//!   but valid pseudo-job.
//! - A job's portion in pseudo-job `k` is `s_i · |I_k| / (f_i − b_i)` rather than `δ_i · |I_k|`: the
//!   two are equal in exact arithmetic, and this form makes the portions of a job sum to `s_i`
//!   up to rounding, which Stage 3 relies on to preserve each job's work.

use super::flow::Flow;

/// One job's share of a pseudo-job.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Portion {
    /// Index of the job in its flow.
    pub job: usize,
    /// Its maximum parallelism `δ_i` (its share of the pseudo-job's slots is `δ_i / r_k`).
    pub max_parallelism: u32,
    /// Work of this job inside the pseudo-job's interval.
    pub work: f64,
}

/// A pseudo-job: the jobs running during one interval of the ASAP pseudo-schedule.
#[derive(Clone, Debug, PartialEq)]
pub struct PseudoJob {
    /// Start of `I_k` in the pseudo-schedule.
    pub start: f64,
    /// End of `I_k` in the pseudo-schedule.
    pub end: f64,
    /// `r_k = Σ δ_i` over the running jobs: the pseudo-job's maximum parallelism (may exceed `P`).
    pub bound: u64,
    /// The running jobs (an antichain of the DAG), in increasing job index.
    pub portions: Vec<Portion>,
}

impl PseudoJob {
    /// Size `s(k)`: the work of all portions (`r_k · |I_k|` in exact arithmetic).
    pub fn work(&self) -> f64 {
        self.portions.iter().map(|p| p.work).sum()
    }
}

/// A flow as a chain of pseudo-jobs `1 ≺ 2 ≺ … ≺ h`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PseudoChain {
    /// The pseudo-jobs in chain (time) order.
    pub pseudo_jobs: Vec<PseudoJob>,
}

/// [`PseudoChain::rebuild`]'s working vectors (kept by a caller that runs Stage 1 again; no result
/// depends on what they held).
#[derive(Clone, Debug, Default)]
pub(crate) struct ChainScratch {
    starts: Vec<f64>,
    finishes: Vec<f64>,
    breakpoints: Vec<f64>,
}

impl PseudoChain {
    /// Stage 1 on one flow.
    pub fn from_flow(flow: &Flow) -> PseudoChain {
        let mut chain = PseudoChain { pseudo_jobs: Vec::new() };
        // `Flow::new` rejected cycles, so the order covers every job.
        let order = flow.precedence().topological_order().unwrap_or_default();
        chain.rebuild(flow, &order, &mut ChainScratch::default());
        chain
    }

    /// Stage 1 on `flow` into `self`, reusing its vectors (those of its pseudo-jobs too; issue 20):
    /// afterwards `self` is exactly `PseudoChain::from_flow(flow)` when `order` is the flow's
    /// [`crate::flex::precedence::Precedence::topological_order`] (the only Stage 1 there is:
    /// `from_flow` runs this).
    pub(crate) fn rebuild(&mut self, flow: &Flow, order: &[usize], scratch: &mut ChainScratch) {
        let jobs = flow.jobs();
        if let ([job], [0]) = (jobs, order) {
            // A singleton flow (every plain MapReduce job): the general case below on one job, the
            // same values (the same expressions, but for a ratio that is exactly 1), without its
            // vectors.
            let (start, finish) = (0.0f64, 0.0 + flow.duration_at_full_parallelism(0));
            self.pseudo_jobs.truncate(1);
            // Breakpoints 0 and `finish` (`> 0` unless `s/δ` underflowed: then there are none).
            if finish.total_cmp(&start).is_eq() {
                self.pseudo_jobs.clear();
                return;
            }
            let portion = Portion {
                job: 0,
                max_parallelism: job.max_parallelism,
                // `s · ((f − 0) / (f − 0))`: `f` is finite and `> 0`, so the ratio is exactly 1.
                work: job.work,
            };
            match self.pseudo_jobs.first_mut() {
                Some(k) => {
                    k.portions.clear();
                    k.portions.push(portion);
                    (k.start, k.end, k.bound) = (start, finish, u64::from(job.max_parallelism));
                }
                None => self.pseudo_jobs.push(PseudoJob {
                    start,
                    end: finish,
                    bound: u64::from(job.max_parallelism),
                    portions: vec![portion],
                }),
            }
            return;
        }
        let ChainScratch { starts, finishes, breakpoints } = scratch;
        flow.asap_starts_into(order, starts);
        finishes.clear();
        finishes.extend(starts.iter().enumerate().map(|(i, b)| b + flow.duration_at_full_parallelism(i)));
        breakpoints.clear();
        breakpoints.extend(starts.iter().chain(finishes.iter()).copied());
        // `total_cmp` equates only equal bits, so the unstable sort (no allocation) gives the
        // stable one's order.
        breakpoints.sort_unstable_by(f64::total_cmp);
        breakpoints.dedup();
        let mut used = 0;
        for window in breakpoints.windows(2) {
            let (start, end) = (window[0], window[1]);
            if used == self.pseudo_jobs.len() {
                self.pseudo_jobs.push(PseudoJob { start, end, bound: 0, portions: Vec::new() });
            }
            let k = &mut self.pseudo_jobs[used];
            k.portions.clear();
            k.portions.extend((0..jobs.len()).filter(|&i| starts[i] <= start && finishes[i] >= end).map(|i| {
                let job = jobs[i];
                Portion {
                    job: i,
                    max_parallelism: job.max_parallelism,
                    work: job.work * ((end - start) / (finishes[i] - starts[i])),
                }
            }));
            // Cannot be empty (a critical chain runs back to back), but an empty set would be a
            // zero-work pseudo-job, so skipping it is harmless (its entry is filled next).
            if k.portions.is_empty() {
                continue;
            }
            k.bound = k.portions.iter().map(|p| u64::from(p.max_parallelism)).sum();
            (k.start, k.end) = (start, end);
            used += 1;
        }
        self.pseudo_jobs.truncate(used);
    }

    /// Volume `V_j = Σ s(k)` (equal to the flow's volume).
    pub fn volume(&self) -> f64 {
        self.pseudo_jobs.iter().map(PseudoJob::work).sum()
    }

    /// Critical path `Σ s(k)/δ(k)` (equal to the flow's, the pseudo-schedule's length).
    pub fn critical_path(&self) -> f64 {
        self.pseudo_jobs.iter().map(|k| k.work() / k.bound as f64).sum()
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::super::flow::tests::t1_flow;
    use super::super::flow::{Flow, FlowJob};
    use super::*;
    use crate::flex::metrics::Penalty;
    use proptest::prelude::*;

    /// `(start, end, bound, work, [(job, portion work)])` per pseudo-job.
    type Row = (f64, f64, u64, f64, Vec<(usize, f64)>);

    fn summary(chain: &PseudoChain) -> Vec<Row> {
        chain
            .pseudo_jobs
            .iter()
            .map(|k| (k.start, k.end, k.bound, k.work(), k.portions.iter().map(|p| (p.job, p.work)).collect()))
            .collect()
    }

    /// Digest §5 T1, the whole table.
    #[test]
    fn t1_pseudo_jobs() {
        let chain = PseudoChain::from_flow(&t1_flow(4));
        assert_eq!(
            summary(&chain),
            vec![
                (0.0, 2.0, 3, 6.0, vec![(0, 4.0), (1, 2.0)]),
                (2.0, 3.0, 4, 4.0, vec![(1, 1.0), (2, 3.0)]),
                (3.0, 4.0, 3, 3.0, vec![(2, 3.0)]),
                (4.0, 5.0, 2, 2.0, vec![(3, 2.0)]),
            ]
        );
        assert_eq!(chain.volume(), 15.0);
        assert_eq!(chain.critical_path(), 5.0);
    }

    /// Digest T3: two independent jobs (4,4) and (4,1): pj1 = [0,1) r=5 s=5, pj2 = [1,4) r=1 s=3.
    #[test]
    fn t3_lossy_pseudo_jobs() {
        let jobs = vec![FlowJob { work: 4.0, max_parallelism: 4 }, FlowJob { work: 4.0, max_parallelism: 1 }];
        let flow = Flow::new(jobs, &[], Penalty::Zero, 4).unwrap();
        let chain = PseudoChain::from_flow(&flow);
        assert_eq!(
            summary(&chain),
            vec![(0.0, 1.0, 5, 5.0, vec![(0, 4.0), (1, 1.0)]), (1.0, 4.0, 1, 3.0, vec![(1, 3.0)])]
        );
    }

    /// Random DAG flows in the digest generator's spirit: edges i -> j (i < j) with probability ½.
    pub(crate) fn arb_flow(slots: u32, max_jobs: usize) -> impl Strategy<Value = Flow> {
        (1..=max_jobs)
            .prop_flat_map(move |n| {
                let jobs = proptest::collection::vec((1u32..=40, 1u32..=slots), n);
                let edges = proptest::collection::vec(any::<bool>(), n * n);
                (jobs, edges)
            })
            .prop_map(move |(jobs, coins)| {
                let n = jobs.len();
                let edges: Vec<(usize, usize)> =
                    (0..n).flat_map(|a| (a + 1..n).map(move |b| (a, b))).filter(|&(a, b)| coins[a * n + b]).collect();
                let jobs =
                    jobs.into_iter().map(|(w, d)| FlowJob { work: f64::from(w) * 0.5, max_parallelism: d }).collect();
                Flow::new(jobs, &edges, Penalty::Linear { slope: 1.0, origin: 0.0 }, slots).unwrap()
            })
    }

    /// Stage 1 as it was written before [`PseudoChain::rebuild`] (session 17): the reference the
    /// kept, allocation-free one is pinned to.
    fn reference_from_flow(flow: &Flow) -> PseudoChain {
        let starts = flow.asap_starts();
        let finishes: Vec<f64> =
            starts.iter().enumerate().map(|(i, b)| b + flow.duration_at_full_parallelism(i)).collect();
        let mut breakpoints: Vec<f64> = starts.iter().chain(finishes.iter()).copied().collect();
        breakpoints.sort_by(f64::total_cmp);
        breakpoints.dedup();
        let mut pseudo_jobs = Vec::new();
        for window in breakpoints.windows(2) {
            let (start, end) = (window[0], window[1]);
            let portions: Vec<Portion> = (0..flow.jobs().len())
                .filter(|&i| starts[i] <= start && finishes[i] >= end)
                .map(|i| {
                    let job = flow.jobs()[i];
                    Portion {
                        job: i,
                        max_parallelism: job.max_parallelism,
                        work: job.work * ((end - start) / (finishes[i] - starts[i])),
                    }
                })
                .collect();
            if portions.is_empty() {
                continue;
            }
            let bound = portions.iter().map(|p| u64::from(p.max_parallelism)).sum();
            pseudo_jobs.push(PseudoJob { start, end, bound, portions });
        }
        PseudoChain { pseudo_jobs }
    }

    /// Flows whose `s/δ` underflow to 0, or whose starts and finishes nearly meet.
    fn arb_odd_flow() -> impl Strategy<Value = Flow> {
        (arb_flow(6, 7), proptest::collection::vec(prop_oneof![Just(1.0), Just(1e-300), Just(1.0 + 1e-15)], 7))
            .prop_map(|(flow, scales)| {
                let jobs: Vec<FlowJob> = flow
                    .jobs()
                    .iter()
                    .zip(&scales)
                    .map(|(j, &s)| FlowJob { work: if s == 1e-300 { f64::from_bits(1) } else { j.work * s }, ..*j })
                    .collect();
                let edges: Vec<(usize, usize)> = (0..jobs.len())
                    .flat_map(|a| flow.precedence().successors(a).iter().map(move |&b| (a, b as usize)))
                    .collect();
                Flow::new(jobs, &edges, flow.cost().clone(), 6).unwrap()
            })
    }

    proptest! {
        /// Stage 1 into a kept chain (any other flow's, its vectors reused) and `from_flow` are the
        /// reference Stage 1, bit for bit (`PartialEq` on the floats: no tolerance), on DAG flows,
        /// singletons among them, with underflowing and nearly meeting times.
        #[test]
        fn rebuilt_chains_are_the_reference_ones(a in arb_odd_flow(), b in arb_odd_flow()) {
            let expected = reference_from_flow(&b);
            prop_assert_eq!(&PseudoChain::from_flow(&b), &expected);
            let mut kept = PseudoChain::from_flow(&a);
            let order = b.precedence().topological_order().unwrap();
            kept.rebuild(&b, &order, &mut ChainScratch::default());
            prop_assert_eq!(&kept, &expected);
        }
    }

    proptest! {
        /// Digest §5 invariant 4: area and critical path preserved, h ≤ 2n − 1, r_k ≥ 1,
        /// antichains, portions sum to each job's work, and precedence maps to chain order.
        #[test]
        fn stage1_invariants(flow in arb_flow(6, 9)) {
            let chain = PseudoChain::from_flow(&flow);
            let n = flow.jobs().len();
            prop_assert!(chain.pseudo_jobs.len() < 2 * n);
            prop_assert!((chain.volume() - flow.volume()).abs() < 1e-9);
            prop_assert!((chain.critical_path() - flow.critical_path()).abs() < 1e-9);
            let mut per_job = vec![0.0; n];
            let mut first = vec![usize::MAX; n];
            let mut last = vec![0usize; n];
            for (k, pj) in chain.pseudo_jobs.iter().enumerate() {
                prop_assert!(pj.bound >= 1);
                prop_assert!(pj.end > pj.start);
                for p in &pj.portions {
                    per_job[p.job] += p.work;
                    first[p.job] = first[p.job].min(k);
                    last[p.job] = k;
                    for q in &pj.portions {
                        prop_assert!(!flow.precedence().successors(p.job).contains(&(q.job as u32)));
                    }
                }
            }
            for i in 0..n {
                prop_assert!((per_job[i] - flow.jobs()[i].work).abs() < 1e-9);
                for &s in flow.precedence().successors(i) {
                    prop_assert!(last[i] < first[s as usize]);
                }
            }
        }
    }
}
