//! The FLEX family of objectives: per-job penalty functions `F_j(t)` and how each objective is
//! sequenced (CIRCUMFLEX appendix A.2, digest §1.4).
//!
//! An objective is chosen with `circumflex.objective`; per-job weight, deadline and SLA steps come
//! from the job's settings ([`circumflex_core::model::JobSpec`]). Each objective is a per-job penalty
//! aggregated as a **minisum** (Σ_j F_j(C_j), i.e. the average) or a **minimax** (max_j F_j(C_j)).
//!
//! | objective | F_j(t) | aggregate | sequencing | exact? |
//! |---|---|---|---|---|
//! | `avg_response_time` | t − a_j | minisum | Smith, w = 1 (SPT) | yes |
//! | `weighted_avg_response_time` | w_j (t − a_j) | minisum | Smith | yes |
//! | `avg_stretch` | (t − a_j) / W_j | minisum | Smith, w = 1/W_j | yes |
//! | `weighted_avg_stretch` | w_j (t − a_j) / W_j | minisum | Smith, w = w_j/W_j | yes |
//! | `avg_lateness` | t − D_j | minisum | Smith, w = 1 | yes |
//! | `weighted_avg_lateness` | w_j (t − D_j) | minisum | Smith | yes |
//! | `tardy_jobs` | `1[t > D_j]` | minisum | Moore-Hodgson | yes (1‖ΣU_j) |
//! | `weighted_tardy_jobs` | `w_j 1[t > D_j]` | minisum | Moore-Hodgson, drop least w/p | heuristic |
//! | `total_tardiness` | max(0, t − D_j) | minisum | modified due date (MDD) | heuristic |
//! | `total_sla` | SLA step cost | minisum | backward greedy (least cost last) | heuristic |
//! | `max_response_time` | t − a_j | minimax | backwards DP | yes |
//! | `weighted_max_response_time` | w_j (t − a_j) | minimax | backwards DP | yes |
//! | `max_stretch` | (t − a_j) / W_j | minimax | backwards DP | yes |
//! | `weighted_max_stretch` | w_j (t − a_j) / W_j | minimax | backwards DP | yes |
//! | `makespan` | t | minimax | backwards DP (every order ties; SPT results) | yes |
//! | `max_lateness` | t − D_j | minimax | backwards DP (EDD) | yes |
//! | `weighted_max_lateness` | w_j (t − D_j) | minimax | backwards DP | yes |
//! | `max_tardiness` | max(0, t − D_j) | minimax | backwards DP | yes |
//! | `weighted_max_tardiness` | w_j max(0, t − D_j) | minimax | backwards DP | yes |
//! | `max_sla` | SLA step cost | minimax | backwards DP | yes |
//!
//! "Exact" means optimal for the interim single-machine problem of step 1 (digest §3.2); the
//! malleable packing of step 2 then follows the order, as in the paper.
//!
//! Decisions where the paper is silent (digest §1.4, §7.6-7):
//! - **Stretch** uses `W_j` = the job's isolated time: per phase, its total work divided by
//!   `min(pool capacity, max_slots, tasks of the phase)` (a job cannot use more slots than it has
//!   tasks), summed over phases, at least 1 ms.
//! - **Minisum tardy jobs** (unweighted) uses Moore-Hodgson, optimal for `1‖ΣU_j`. The weighted
//!   variant is NP-hard; it uses the same algorithm but drops the on-time job with the least weight
//!   per unit of processing (largest `p/w`), which is exactly Moore-Hodgson when weights are equal.
//!   On-time jobs run in EDD order; dropped and deadline-free jobs follow in Smith order (weighted
//!   SPT) as a secondary response-time objective.
//! - **Minisum tardiness** is NP-hard; it uses Baker and Bertrand's modified due date rule
//!   (dispatch the job with the smallest `max(p_j, D_j − t)`), in `O(n log n)` with two heaps.
//! - **Minisum SLA** (paper: "only the minimax problem is appropriate") uses the backwards rule
//!   as a greedy heuristic: repeatedly put last the job whose SLA cost at the current end is
//!   smallest (ties: the longer job last, so cost-free jobs run shortest first). It is Lawler's
//!   optimal rule for the minimax problem; for the sum it carries no optimality guarantee, but it
//!   pushes jobs that are already lost, or cost nothing, behind the ones that can still be saved.
//! - **Deadlines missing**: a job without a deadline is never tardy (tardy jobs, tardiness) and
//!   has no SLA cost without SLA steps; for lateness its deadline is its arrival (lateness =
//!   response time), so lateness stays linear and jobs without deadlines are not ignored.
//! - **Later phases**: `F_j` is evaluated at the completion of the pool's work plus `tail_j`, the
//!   estimated time of the job's later phases in other pools (see `super` for the rule).

use circumflex_core::config::KEY_OBJECTIVE;
use circumflex_core::error::{Error, Result};

/// How per-job penalties are aggregated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Aggregate {
    /// Σ_j F_j(C_j) (equivalently the average).
    MiniSum,
    /// max_j F_j(C_j).
    MiniMax,
}

/// Which sequencing algorithm produces the priority order for an objective.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    /// Generalized Smith's rule (linear minisum): [`super::smith`].
    Smith,
    /// Backwards dynamic program (any non-decreasing minimax): [`super::dp`].
    BackwardsDp,
    /// (Weighted) Moore-Hodgson: [`super::heuristics::moore_hodgson`].
    MooreHodgson,
    /// Modified due date dispatching: [`super::heuristics::modified_due_date`].
    ModifiedDueDate,
    /// The backwards rule used as a minisum heuristic: [`super::dp`].
    BackwardGreedy,
}

/// A per-job penalty function `F_j(t)` of the absolute completion time `t` (ms). Non-decreasing.
#[derive(Clone, Debug, PartialEq)]
pub enum Penalty {
    /// `slope · (t − origin)`, slope >= 0 (response time, stretch, lateness, makespan).
    Linear {
        /// Weight per ms.
        slope: f64,
        /// Where the cost crosses zero (arrival or deadline).
        origin: f64,
    },
    /// `slope · max(0, t − due)` (tardiness).
    Tardiness {
        /// Weight per ms late.
        slope: f64,
        /// Deadline.
        due: f64,
    },
    /// Steps `(due, cost)` with increasing dues and non-decreasing costs: the cost of the last
    /// step whose due is missed (`due < t`), 0 before the first (SLA; a tardy-job indicator is
    /// one step).
    Steps(Vec<(f64, f64)>),
    /// Always 0 (a job the objective does not count, e.g. no deadline under tardiness).
    Zero,
}

impl Penalty {
    /// `F(t)`.
    pub fn eval(&self, t: f64) -> f64 {
        match self {
            Penalty::Linear { slope, origin } => Penalty::linear_at(*slope, *origin, t),
            Penalty::Tardiness { slope, due } => slope * (t - due).max(0.0),
            Penalty::Steps(steps) => {
                let k = steps.partition_point(|s| s.0 < t);
                if k == 0 {
                    0.0
                } else {
                    steps[k - 1].1
                }
            }
            Penalty::Zero => 0.0,
        }
    }

    /// `Penalty::Linear { slope, origin }.eval(t)`, for a caller that has the coefficients at hand
    /// (the FlowFlex fill's unit costs, which must be the network's bit for bit).
    #[inline]
    pub fn linear_at(slope: f64, origin: f64, t: f64) -> f64 {
        slope * (t - origin)
    }
}

/// What an objective needs to know about one job (times in absolute ms).
#[derive(Clone, Debug, PartialEq)]
pub struct JobFacts {
    /// Arrival `a_j`.
    pub arrival: f64,
    /// Weight `w_j` (> 0).
    pub weight: f64,
    /// Deadline `D_j`, if any.
    pub deadline: Option<f64>,
    /// SLA steps `(pseudo-deadline, penalty)`, increasing.
    pub sla: Vec<(f64, f64)>,
    /// Isolated time `W_j` (> 0), for stretch.
    pub isolated: f64,
    /// Time the job still needs after this pool's work completes (later phases), >= 0.
    pub tail: f64,
}

macro_rules! objectives {
    ($( $variant:ident => $name:literal, $agg:ident, $method:ident, $exact:literal; )*) => {
        /// A FLEX objective (`circumflex.objective`). See the module docs for the table. The
        /// default (the first) is `avg_response_time`.
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
        pub enum Objective {
            #[default]
            $(
                #[doc = concat!("`", $name, "`")]
                $variant,
            )*
        }

        impl Objective {
            /// Every objective, in documentation order.
            pub const ALL: &'static [Objective] = &[$(Objective::$variant),*];

            /// The configuration name.
            pub fn name(self) -> &'static str {
                match self { $(Objective::$variant => $name),* }
            }

            /// Minisum or minimax.
            pub fn aggregate(self) -> Aggregate {
                match self { $(Objective::$variant => Aggregate::$agg),* }
            }

            /// The sequencing algorithm.
            pub fn method(self) -> Method {
                match self { $(Objective::$variant => Method::$method),* }
            }

            /// Whether the sequencing step is optimal for the interim single-machine problem.
            pub fn is_exact(self) -> bool {
                match self { $(Objective::$variant => $exact),* }
            }
        }
    };
}

objectives! {
    AvgResponseTime => "avg_response_time", MiniSum, Smith, true;
    WeightedAvgResponseTime => "weighted_avg_response_time", MiniSum, Smith, true;
    AvgStretch => "avg_stretch", MiniSum, Smith, true;
    WeightedAvgStretch => "weighted_avg_stretch", MiniSum, Smith, true;
    AvgLateness => "avg_lateness", MiniSum, Smith, true;
    WeightedAvgLateness => "weighted_avg_lateness", MiniSum, Smith, true;
    TardyJobs => "tardy_jobs", MiniSum, MooreHodgson, true;
    WeightedTardyJobs => "weighted_tardy_jobs", MiniSum, MooreHodgson, false;
    TotalTardiness => "total_tardiness", MiniSum, ModifiedDueDate, false;
    TotalSla => "total_sla", MiniSum, BackwardGreedy, false;
    MaxResponseTime => "max_response_time", MiniMax, BackwardsDp, true;
    WeightedMaxResponseTime => "weighted_max_response_time", MiniMax, BackwardsDp, true;
    MaxStretch => "max_stretch", MiniMax, BackwardsDp, true;
    WeightedMaxStretch => "weighted_max_stretch", MiniMax, BackwardsDp, true;
    Makespan => "makespan", MiniMax, BackwardsDp, true;
    MaxLateness => "max_lateness", MiniMax, BackwardsDp, true;
    WeightedMaxLateness => "weighted_max_lateness", MiniMax, BackwardsDp, true;
    MaxTardiness => "max_tardiness", MiniMax, BackwardsDp, true;
    WeightedMaxTardiness => "weighted_max_tardiness", MiniMax, BackwardsDp, true;
    MaxSla => "max_sla", MiniMax, BackwardsDp, true;
}

impl std::fmt::Display for Objective {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl Objective {
    /// Parses a `circumflex.objective` value (case and surrounding space ignored). The error
    /// names the key, the value and every allowed name.
    pub fn parse(value: &str) -> Result<Objective> {
        let v = value.trim().to_ascii_lowercase();
        Objective::ALL.iter().copied().find(|o| o.name() == v).ok_or_else(|| {
            let names: Vec<&str> = Objective::ALL.iter().map(|o| o.name()).collect();
            Error::config(KEY_OBJECTIVE, value, format!("one of {}", names.join(", ")))
        })
    }

    fn weighted(self) -> bool {
        matches!(
            self,
            Objective::WeightedAvgResponseTime
                | Objective::WeightedAvgStretch
                | Objective::WeightedAvgLateness
                | Objective::WeightedTardyJobs
                | Objective::WeightedMaxResponseTime
                | Objective::WeightedMaxStretch
                | Objective::WeightedMaxLateness
                | Objective::WeightedMaxTardiness
        )
    }

    /// The job's penalty `F_j` as a function of the completion time `t` of its work in the pool
    /// (the later-phase tail is folded in: `F_j(t) = cost(t + tail)`).
    pub fn penalty(self, job: &JobFacts) -> Penalty {
        use Objective::*;
        let w = if self.weighted() { job.weight } else { 1.0 };
        let shift = job.tail;
        match self {
            AvgResponseTime | WeightedAvgResponseTime | MaxResponseTime | WeightedMaxResponseTime => {
                Penalty::Linear { slope: w, origin: job.arrival - shift }
            }
            AvgStretch | WeightedAvgStretch | MaxStretch | WeightedMaxStretch => {
                Penalty::Linear { slope: w / job.isolated, origin: job.arrival - shift }
            }
            Makespan => Penalty::Linear { slope: 1.0, origin: -shift },
            AvgLateness | WeightedAvgLateness | MaxLateness | WeightedMaxLateness => {
                Penalty::Linear { slope: w, origin: job.deadline.unwrap_or(job.arrival) - shift }
            }
            TotalTardiness | MaxTardiness | WeightedMaxTardiness => match job.deadline {
                Some(d) => Penalty::Tardiness { slope: w, due: d - shift },
                None => Penalty::Zero,
            },
            TardyJobs | WeightedTardyJobs => match job.deadline {
                Some(d) => Penalty::Steps(vec![(d - shift, w)]),
                None => Penalty::Zero,
            },
            TotalSla | MaxSla => {
                if job.sla.is_empty() {
                    Penalty::Zero
                } else {
                    Penalty::Steps(job.sla.iter().map(|&(d, p)| (d - shift, p)).collect())
                }
            }
        }
    }

    /// The Smith weight of a job for the linear minisum objectives (the slope of its penalty).
    pub fn smith_weight(self, job: &JobFacts) -> f64 {
        match self.penalty(job) {
            Penalty::Linear { slope, .. } => slope,
            _ => {
                if self.weighted() {
                    job.weight
                } else {
                    1.0
                }
            }
        }
    }

    /// Aggregates per-job penalty values (Σ or max; 0 for no jobs).
    pub fn aggregate_values(self, values: impl IntoIterator<Item = f64>) -> f64 {
        match self.aggregate() {
            Aggregate::MiniSum => values.into_iter().sum(),
            Aggregate::MiniMax => values.into_iter().fold(f64::NEG_INFINITY, f64::max).max(f64::MIN),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts() -> JobFacts {
        JobFacts {
            arrival: 100.0,
            weight: 2.0,
            deadline: Some(500.0),
            sla: vec![(300.0, 1.0), (600.0, 5.0)],
            isolated: 50.0,
            tail: 10.0,
        }
    }

    #[test]
    fn names_round_trip_and_errors_list_choices() {
        for &o in Objective::ALL {
            assert_eq!(Objective::parse(o.name()).unwrap(), o);
        }
        assert_eq!(Objective::parse(" Max_Stretch ").unwrap(), Objective::MaxStretch);
        let err = Objective::parse("fastest").unwrap_err().to_string();
        assert!(err.contains("circumflex.objective") && err.contains("fastest"), "{err}");
        assert!(err.contains("avg_response_time") && err.contains("max_sla"), "{err}");
    }

    #[test]
    fn penalties_follow_the_table() {
        let j = facts();
        // Completion of pool work at 190 means the job completes at 200.
        assert_eq!(Objective::AvgResponseTime.penalty(&j).eval(190.0), 100.0);
        assert_eq!(Objective::WeightedAvgResponseTime.penalty(&j).eval(190.0), 200.0);
        assert_eq!(Objective::MaxStretch.penalty(&j).eval(190.0), 2.0);
        assert_eq!(Objective::WeightedMaxStretch.penalty(&j).eval(190.0), 4.0);
        assert_eq!(Objective::Makespan.penalty(&j).eval(190.0), 200.0);
        assert_eq!(Objective::MaxLateness.penalty(&j).eval(190.0), -300.0);
        assert_eq!(Objective::MaxTardiness.penalty(&j).eval(190.0), 0.0);
        assert_eq!(Objective::WeightedMaxTardiness.penalty(&j).eval(590.0), 200.0);
        assert_eq!(Objective::TardyJobs.penalty(&j).eval(490.0), 0.0);
        assert_eq!(Objective::TardyJobs.penalty(&j).eval(491.0), 1.0);
        assert_eq!(Objective::WeightedTardyJobs.penalty(&j).eval(491.0), 2.0);
        let sla = Objective::MaxSla.penalty(&j);
        assert_eq!((sla.eval(290.0), sla.eval(291.0), sla.eval(590.0), sla.eval(591.0)), (0.0, 1.0, 1.0, 5.0));
        let free = JobFacts { deadline: None, sla: vec![], ..facts() };
        assert_eq!(Objective::TotalTardiness.penalty(&free), Penalty::Zero);
        assert_eq!(Objective::TotalSla.penalty(&free), Penalty::Zero);
        assert_eq!(Objective::AvgLateness.penalty(&free).eval(190.0), 100.0, "lateness from arrival");
        assert_eq!(Objective::AvgStretch.smith_weight(&j), 1.0 / 50.0);
    }

    #[test]
    fn methods_match_the_capability_rule() {
        for &o in Objective::ALL {
            match o.method() {
                Method::Smith => assert_eq!(o.aggregate(), Aggregate::MiniSum),
                Method::BackwardsDp => assert_eq!(o.aggregate(), Aggregate::MiniMax),
                _ => assert_eq!(o.aggregate(), Aggregate::MiniSum),
            }
        }
        assert_eq!(Objective::default(), Objective::AvgResponseTime);
        assert_eq!(Objective::TotalSla.aggregate_values([1.0, 2.0]), 3.0);
        assert_eq!(Objective::MaxSla.aggregate_values([1.0, 2.0]), 2.0);
    }
}
