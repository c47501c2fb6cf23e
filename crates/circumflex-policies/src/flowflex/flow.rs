//! The FlowFlex flow model (digest §1.1–1.4) and the per-flow lower bounds (§1.3).
//!
//! A [`Flow`] is a DAG of malleable jobs: job `i` has work `s_i > 0` (slot × time units) and a
//! maximum parallelism `δ_i ∈ [1, P]`, runs at rate `p ≤ δ_i` on `p` slots (linear speedup) and may
//! start only once all its predecessors have completed. Each flow carries a non-decreasing cost
//! function `w_j` of its completion time; we reuse the FLEX [`Penalty`] family for it (completion
//! time and stretch are `Linear` with origin 0, tardiness is `Tardiness`, tardy counts and SLAs are
//! `Steps`). Costs are left-continuous: finishing exactly at a deadline is on time.
//!
//! Validation happens once, in [`Flow::new`], so every later stage may rely on positive finite work,
//! `1 ≤ δ_i ≤ P`, an acyclic precedence relation and a non-decreasing, non-negative cost.

use crate::flex::metrics::Penalty;
use crate::flex::precedence::Precedence;
use circumflex_core::error::{Error, Result};

/// One DAG node: a Map or Reduce phase (or a generic job in the simulations).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FlowJob {
    /// Work `s_i` in slot × time units; finite and `> 0`.
    pub work: f64,
    /// Maximum parallelism `δ_i`: the most slots the job may use at once, `1 ≤ δ_i ≤ P`.
    pub max_parallelism: u32,
}

/// A validated flow: jobs, their precedence DAG and the flow's cost function.
#[derive(Clone, Debug, PartialEq)]
pub struct Flow {
    jobs: Vec<FlowJob>,
    precedence: Precedence,
    cost: Penalty,
}

impl Flow {
    /// Builds a flow for a cluster of `slots` processors. Errors name the job or edge at fault:
    /// an empty flow, non-positive or non-finite work, `δ_i` outside `1..=slots`, an edge out of
    /// range, a self-loop or a cycle, or a cost that is negative or decreasing on `t ≥ 0`.
    pub fn new(jobs: Vec<FlowJob>, edges: &[(usize, usize)], cost: Penalty, slots: u32) -> Result<Flow> {
        if slots == 0 {
            return Err(Error::job("slots", slots, "at least 1 processor"));
        }
        if jobs.is_empty() {
            return Err(Error::job("flow.jobs", "[]", "at least one job"));
        }
        validate_jobs(&jobs, slots)?;
        let precedence = Precedence::from_edges(jobs.len(), edges)?;
        validate_cost(&cost)?;
        Ok(Flow { jobs, precedence, cost })
    }

    /// Renews a flow built by [`Flow::new`] from `jobs.len()` jobs and some edges for new jobs and
    /// cost on the same edges and `slots` (issue 20: a flow whose jobs progressed keeps its
    /// structure): afterwards `self` is exactly `Flow::new(jobs, edges, cost, slots)`, reusing its
    /// vectors, and `true`; `false` (and `self` unchanged) when that `new` would fail on the jobs
    /// or the cost, or the job count differs. The precedence is a function of the job count and the
    /// edges alone, so it is kept as it is.
    pub(crate) fn renew(&mut self, jobs: &[FlowJob], cost: &Penalty, slots: u32) -> bool {
        if jobs.len() != self.jobs.len() || validate_jobs(jobs, slots).is_err() || validate_cost(cost).is_err() {
            return false;
        }
        self.jobs.copy_from_slice(jobs);
        match (&mut self.cost, cost) {
            (Penalty::Steps(mine), Penalty::Steps(steps)) => mine.clone_from(steps),
            (mine, cost) => *mine = cost.clone(),
        }
        true
    }

    /// A flow of no jobs, which [`Flow::new`] never gives: a placeholder for one moved out of a
    /// kept vector (allocates nothing).
    pub(crate) fn placeholder() -> Flow {
        Flow { jobs: Vec::new(), precedence: Precedence::none(0), cost: Penalty::Zero }
    }

    /// The jobs, indexed as given.
    pub fn jobs(&self) -> &[FlowJob] {
        &self.jobs
    }

    /// The precedence DAG over job indices.
    pub fn precedence(&self) -> &Precedence {
        &self.precedence
    }

    /// The cost function `w_j`.
    pub fn cost(&self) -> &Penalty {
        &self.cost
    }

    /// Total work `V_j = Σ s_i`.
    pub fn volume(&self) -> f64 {
        self.jobs.iter().map(|j| j.work).sum()
    }

    /// Squashed-area bound `A_j = V_j / P`.
    pub fn squashed_area(&self, slots: u32) -> f64 {
        self.volume() / f64::from(slots.max(1))
    }

    /// Earliest start `b_i` of every job when each job runs alone at its full `δ_i` (the ASAP
    /// pseudo-schedule of Stage 1): `b_i = max over predecessors p of b_p + s_p/δ_p`, 0 for sources.
    pub fn asap_starts(&self) -> Vec<f64> {
        let mut start = Vec::new();
        // `new` rejected cycles, so the order covers every job.
        self.asap_starts_into(&self.precedence.topological_order().unwrap_or_default(), &mut start);
        start
    }

    /// [`Flow::asap_starts`] into `start` (cleared first), given the precedence's
    /// [`Precedence::topological_order`] as `order` (kept by a caller that plans the flow again).
    pub(crate) fn asap_starts_into(&self, order: &[usize], start: &mut Vec<f64>) {
        start.clear();
        start.resize(self.jobs.len(), 0.0);
        for &i in order {
            let finish = start[i] + self.duration_at_full_parallelism(i);
            for &succ in self.precedence.successors(i) {
                let succ = succ as usize;
                start[succ] = start[succ].max(finish);
            }
        }
    }

    /// `s_i / δ_i`: how long job `i` takes at its maximum parallelism.
    pub fn duration_at_full_parallelism(&self, job: usize) -> f64 {
        let j = self.jobs[job];
        j.work / f64::from(j.max_parallelism)
    }

    /// Critical-path bound `CP_j`: the longest chain of `s_i/δ_i`.
    pub fn critical_path(&self) -> f64 {
        let start = self.asap_starts();
        (0..self.jobs.len()).map(|i| start[i] + self.duration_at_full_parallelism(i)).fold(0.0, f64::max)
    }

    /// `Q_j = max(CP_j, A_j)`: no schedule finishes this flow earlier, even alone on the cluster.
    pub fn completion_lower_bound(&self, slots: u32) -> f64 {
        self.critical_path().max(self.squashed_area(slots))
    }
}

/// Every job's work finite and positive and its `δ_i` in `1..=slots` (what [`Flow::new`] and
/// [`Flow::renew`] both require); the error names the first job at fault.
fn validate_jobs(jobs: &[FlowJob], slots: u32) -> Result<()> {
    for (i, job) in jobs.iter().enumerate() {
        if !(job.work.is_finite() && job.work > 0.0) {
            return Err(Error::job(&format!("flow.jobs[{i}].work"), job.work, "a finite number > 0"));
        }
        if job.max_parallelism == 0 || job.max_parallelism > slots {
            return Err(Error::job(
                &format!("flow.jobs[{i}].max_parallelism"),
                job.max_parallelism,
                format!("an integer in 1..={slots} (the cluster's slots)"),
            ));
        }
    }
    Ok(())
}

fn validate_cost(cost: &Penalty) -> Result<()> {
    let bad = |value: String, allowed: &str| Err(Error::job("flow.cost", value, allowed));
    match cost {
        Penalty::Linear { slope, origin } => {
            if !(slope.is_finite() && *slope >= 0.0 && origin.is_finite() && *origin <= 0.0) {
                return bad(format!("linear slope {slope} origin {origin}"), "slope >= 0 and origin <= 0 (cost >= 0)");
            }
        }
        Penalty::Tardiness { slope, due } => {
            if !(slope.is_finite() && *slope >= 0.0 && due.is_finite()) {
                return bad(format!("tardiness slope {slope} due {due}"), "finite slope >= 0 and finite due");
            }
        }
        Penalty::Steps(steps) => {
            let mut previous = (f64::NEG_INFINITY, 0.0f64);
            for &(due, level) in steps {
                if !(due.is_finite() && level.is_finite() && due > previous.0 && level >= previous.1) {
                    return bad(
                        format!("step ({due}, {level})"),
                        "finite steps with increasing dues and non-decreasing costs >= 0",
                    );
                }
                previous = (due, level);
            }
        }
        Penalty::Zero => {}
    }
    Ok(())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    fn job(work: f64, max_parallelism: u32) -> FlowJob {
        FlowJob { work, max_parallelism }
    }

    /// Digest T1: J1=(4,2), J2=(3,1), J3=(6,3), J4=(2,2); J1≺J3, J2≺J4, J3≺J4.
    pub(crate) fn t1_flow(slots: u32) -> Flow {
        let jobs = vec![job(4.0, 2), job(3.0, 1), job(6.0, 3), job(2.0, 2)];
        Flow::new(jobs, &[(0, 2), (1, 3), (2, 3)], Penalty::Linear { slope: 1.0, origin: 0.0 }, slots).unwrap()
    }

    #[test]
    fn t1_bounds() {
        let flow = t1_flow(4);
        assert_eq!(flow.asap_starts(), vec![0.0, 0.0, 2.0, 4.0]);
        assert_eq!(flow.critical_path(), 5.0);
        assert_eq!(flow.squashed_area(4), 15.0 / 4.0);
        assert_eq!(flow.completion_lower_bound(4), 5.0);
        // With 2 slots the area dominates: 15/2 = 7.5.
        assert_eq!(t1_flow(3).completion_lower_bound(2), 7.5);
    }

    #[test]
    fn rejects_cycles_and_bad_fields_naming_them() {
        let linear = Penalty::Linear { slope: 1.0, origin: 0.0 };
        let two = vec![job(1.0, 1), job(1.0, 1)];
        let err = Flow::new(two.clone(), &[(0, 1), (1, 0)], linear.clone(), 2).unwrap_err();
        assert!(err.to_string().contains("acyclic"), "{err}");
        let err = Flow::new(vec![job(1.0, 3)], &[], linear.clone(), 2).unwrap_err();
        assert!(err.to_string().contains("flow.jobs[0].max_parallelism = '3'"), "{err}");
        let err = Flow::new(vec![job(1.0, 1), job(0.0, 1)], &[], linear.clone(), 2).unwrap_err();
        assert!(err.to_string().contains("flow.jobs[1].work = '0'"), "{err}");
        let err = Flow::new(vec![job(f64::NAN, 1)], &[], linear.clone(), 2).unwrap_err();
        assert!(err.to_string().contains("work"), "{err}");
        let err = Flow::new(vec![job(1.0, 0)], &[], linear.clone(), 2).unwrap_err();
        assert!(err.to_string().contains("max_parallelism = '0'"), "{err}");
        assert!(Flow::new(vec![], &[], linear.clone(), 2).is_err());
        let err = Flow::new(two.clone(), &[(0, 2)], linear.clone(), 2).unwrap_err();
        assert!(err.to_string().contains("0 -> 2"), "{err}");
        let decreasing = Penalty::Steps(vec![(1.0, 5.0), (2.0, 3.0)]);
        let err = Flow::new(two, &[], decreasing, 2).unwrap_err();
        assert!(err.to_string().contains("flow.cost"), "{err}");
    }
}
