//! FlowFlex (Nagarajan, Wolf, Balmin, Hildrum, Middleware 2013): malleable scheduling of flows,
//! i.e. DAGs of MapReduce phases, for minisum and minimax cost objectives. This module owns the
//! algorithm core and its engine policy; the reproduction of the paper's simulation study is in the lab.
//!
//! Pipeline (digest `shared/design/algorithms/flowflex.md` §2):
//! - [`flow`]: the validated flow model and the per-flow lower bounds `A_j`, `CP_j`, `Q_j`.
//! - [`chain`]: Stage 1, each DAG to a chain of pseudo-jobs via the ASAP pseudo-schedule.
//! - [`greedy`]: Stage 2a, the strict-deadline greedy of Fig. 5 (list scheduling of chains).
//! - [`minisum`]: Stage 2b, the min-cost-flow relaxation of Fig. 6 rounded into deadlines, on the
//!   solvers in [`mincost`]; when re-planning, first on `fill`'s certified forward fill.
//! - [`minimax`]: Stage 2c, bisection on the cost level (Fig. 8), and the improved minimax lower bound.
//! - [`shape`]: Stage 3, McNaughton wrap-around back to per-job allocations.
//! - [`Instance`]: all flows of one problem, tying the stages together.
//! - [`policy`]: the engine policy `flowflex` (epoch re-planning from the engine's snapshot).
//! - [`ready_list`]: the paper's Fair and FIFO ready-list baselines; the §4 simulation study
//!   (`circumflex reproduce flowflex`) is in the lab, `circumflex_sim::studies::flowflex`.

pub mod chain;
mod fill;
pub mod flow;
pub mod greedy;
pub mod mincost;
pub mod minimax;
pub mod minisum;
pub mod policy;
pub mod ready_list;
pub mod shape;

use crate::flex::metrics::Penalty;
use chain::PseudoChain;
use circumflex_core::error::{Error, Result};
use flow::Flow;
use greedy::DeadlineSchedule;
use minimax::MinimaxSchedule;
use minisum::MinisumSchedule;
use shape::JobPiece;

/// One FlowFlex problem: the flows present, their Stage 1 chains and the cluster's slots `P`.
#[derive(Clone, Debug, PartialEq)]
pub struct Instance {
    slots: u32,
    flows: Vec<Flow>,
    chains: Vec<PseudoChain>,
}

impl Instance {
    /// Runs Stage 1 on every flow. Errors when there are no flows, no slots, or a job's `δ_i`
    /// exceeds `slots` (a flow validated for a larger cluster).
    pub fn new(flows: Vec<Flow>, slots: u32) -> Result<Instance> {
        if slots == 0 {
            return Err(Error::job("slots", slots, "at least 1 processor"));
        }
        if flows.is_empty() {
            return Err(Error::job("flows", "[]", "at least one flow"));
        }
        for (j, flow) in flows.iter().enumerate() {
            if let Some((i, job)) = flow.jobs().iter().enumerate().find(|(_, job)| job.max_parallelism > slots) {
                return Err(Error::job(
                    &format!("flows[{j}].jobs[{i}].max_parallelism"),
                    job.max_parallelism,
                    format!("an integer in 1..={slots} (the cluster's slots)"),
                ));
            }
        }
        let chains = flows.iter().map(PseudoChain::from_flow).collect();
        Ok(Instance { slots, flows, chains })
    }

    /// The cluster's slots `P`.
    pub fn slots(&self) -> u32 {
        self.slots
    }

    /// The flows, as given.
    pub fn flows(&self) -> &[Flow] {
        &self.flows
    }

    /// Stage 1 chains, one per flow.
    pub fn chains(&self) -> &[PseudoChain] {
        &self.chains
    }

    /// Each flow's cost function.
    pub fn costs(&self) -> Vec<Penalty> {
        self.flows.iter().map(|f| f.cost().clone()).collect()
    }

    /// Stage 2a for explicit per-flow deadlines.
    pub fn schedule_by_deadlines(&self, deadlines: &[f64]) -> Result<DeadlineSchedule> {
        greedy::schedule_by_deadlines(&self.chains, deadlines, self.slots)
    }

    /// Stage 2c: minimax over the flows' costs, stopping when the level bracket is `≤ tolerance`.
    pub fn minimax(&self, tolerance: f64) -> Result<MinimaxSchedule> {
        minimax::minimax(&self.chains, &self.costs(), self.slots, tolerance)
    }

    /// Stage 2b: minisum over the flows' costs on a time grid of `step`, rounding at fraction `theta`.
    pub fn minisum(&self, step: f64, theta: f64) -> Result<MinisumSchedule> {
        minisum::minisum(&self.chains, &self.costs(), self.slots, step, theta)
    }

    /// Stage 2b on the compressed grid of geometric `ratio` ([`minisum::compressed_grid`]).
    pub fn minisum_compressed(&self, ratio: f64, theta: f64) -> Result<MinisumSchedule> {
        minisum::minisum_compressed(&self.chains, &self.costs(), self.slots, ratio, theta)
    }

    /// Stage 2b on the compressed grid, keeping the best of several rounding fractions.
    pub fn minisum_best_rounding(&self, ratio: f64, thetas: &[f64]) -> Result<MinisumSchedule> {
        let costs = self.costs();
        let grid = minisum::compressed_grid(&self.chains, &costs, self.slots, ratio)?;
        minisum::minisum_best_rounding(&self.chains, &costs, self.slots, grid, thetas)
    }

    /// The improved minimax lower bound, bisected up to `upper` (e.g. a schedule's objective).
    pub fn minimax_lower_bound(&self, upper: f64, tolerance: f64) -> Result<f64> {
        minimax::improved_lower_bound(&self.chains, &self.costs(), self.slots, upper, tolerance)
    }

    /// Stage 3: per flow, the malleable schedule of its original jobs.
    pub fn job_schedules(&self, schedule: &DeadlineSchedule) -> Vec<Vec<JobPiece>> {
        self.chains.iter().zip(&schedule.chains).map(|(c, s)| shape::shape_shift(c, s)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::chain::tests::arb_flow;
    use super::flow::FlowJob;
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn rejects_flows_too_wide_for_the_cluster() {
        let flow = Flow::new(vec![FlowJob { work: 1.0, max_parallelism: 3 }], &[], Penalty::Zero, 4).unwrap();
        let err = Instance::new(vec![flow], 2).unwrap_err();
        assert!(err.to_string().contains("flows[0].jobs[0].max_parallelism = '3'"), "{err}");
        assert!(Instance::new(vec![], 2).is_err());
    }

    fn arb_instance() -> impl Strategy<Value = Instance> {
        (1u32..=6)
            .prop_flat_map(|slots| (proptest::collection::vec(arb_flow(slots, 7), 1..5), Just(slots)))
            .prop_map(|(flows, slots)| Instance::new(flows, slots).unwrap())
    }

    proptest! {
        /// Digest §5 invariants 1, 2, 3, 10 and 12 end to end (Stage 1 → minimax and minisum →
        /// Stage 3): capacity and every δ_i respected, each job's work preserved, every precedence edge
        /// respected, flow completions equal to the chain completions, and determinism.
        #[test]
        fn end_to_end_schedule_is_valid(instance in arb_instance()) {
            let out = instance.minimax(1e-6).unwrap();
            prop_assert_eq!(&instance.minimax(1e-6).unwrap(), &out);
            let minisum = instance.minisum(2.0, 0.5).unwrap();
            let compressed = instance.minisum_compressed(1.5, 0.5).unwrap();
            for schedule in [&out.schedule, &minisum.schedule, &compressed.schedule] {
                check_job_schedules(&instance, schedule)?;
            }
        }
    }

    fn check_job_schedules(instance: &Instance, schedule: &DeadlineSchedule) -> std::result::Result<(), TestCaseError> {
        let slots = instance.slots();
        let out = schedule;
        {
            let per_flow = instance.job_schedules(out);
            let mut events: Vec<(f64, i64)> = Vec::new();
            for ((flow, pieces), chain) in instance.flows().iter().zip(&per_flow).zip(&out.chains) {
                let n = flow.jobs().len();
                let mut work = vec![0.0; n];
                let mut first = vec![f64::INFINITY; n];
                let mut last = vec![0.0f64; n];
                for p in pieces {
                    prop_assert!(p.end > p.start && p.slots >= 1);
                    prop_assert!(p.slots <= flow.jobs()[p.job].max_parallelism);
                    work[p.job] += f64::from(p.slots) * (p.end - p.start);
                    first[p.job] = first[p.job].min(p.start);
                    last[p.job] = last[p.job].max(p.end);
                    events.push((p.start, i64::from(p.slots)));
                    events.push((p.end, -i64::from(p.slots)));
                }
                for i in 0..n {
                    prop_assert!((work[i] - flow.jobs()[i].work).abs() < 1e-7, "job {} work {}", i, work[i]);
                    for &s in flow.precedence().successors(i) {
                        prop_assert!(last[i] <= first[s as usize] + 1e-9, "edge {} -> {}", i, s);
                    }
                }
                let completion = last.iter().copied().fold(0.0, f64::max);
                prop_assert!((completion - chain.completion).abs() < 1e-9);
            }
            events.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
            let mut load = 0i64;
            for (_, delta) in events {
                load += delta;
                prop_assert!(load <= i64::from(slots));
            }
        }
        Ok(())
    }
}
