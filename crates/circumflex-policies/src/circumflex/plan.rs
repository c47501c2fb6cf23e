//! The CIRCUMFLEX planner (digest §3): subjob chains per dataset, a priority order from the
//! generic FLEX algorithms, and ready-list malleable packing with the subjob bounds.
//!
//! - **Fully shared** ([`plan_chains`]): one chain per dataset. Linear minisum objectives (average
//!   and weighted response time, average stretch, minisum lateness) are sequenced by
//!   [`generalized_smith`] over the chains; any minimax objective by the backwards DP with chain
//!   precedence. Other minisum objectives (tardy jobs, total tardiness, total SLA) are not handled
//!   by the paper and are rejected with an error naming them.
//! - **Semi-shared** ([`plan_semi_shared`]): one item per Venn region with the strict-subset
//!   precedence of [`super::scan::region_edges`]; minimax only, with the region penalty
//!   `G_s(t) = max_{j ∈ rel(s)} F_j(t)` (so `max_s G_s(C_s) = max_j F_j(C_j)`).
//!
//! Durations of the interim single-machine problem are `work / S` from `start` (digest §3.2).
//! The packing is [`pack_with_precedence`] with the chain (or region) precedence, so at most one subjob
//! per dataset is ready, hence has slots, at any time.

use crate::flex::dp::{backwards_dp, backwards_dp_penalties};
use crate::flex::metrics::{Aggregate, JobFacts, Method, Objective, Penalty};
use crate::flex::packing::{pack_with_precedence, PackJob, Packing};
use crate::flex::precedence::Precedence;
use crate::flex::smith::{generalized_smith, SmithItem};
use circumflex_core::config::KEY_OBJECTIVE;
use circumflex_core::error::{Error, Result};

use super::scan::{region_edges, subjob_bounds, Region};

/// One active job of a planning problem.
#[derive(Clone, Debug, PartialEq)]
pub struct ScanJob {
    /// Remaining amount `r_k` of the job's dataset it still has to see (work units).
    pub remaining: f64,
    /// Minimum slots `m_j`.
    pub min: u32,
    /// Maximum slots `M_j` (>= 1).
    pub max: u32,
    /// Arrival, weight, deadline, SLA and isolated time, in the planner's time unit.
    pub facts: JobFacts,
}

/// One subjob `(d,k)` of a fully shared problem.
#[derive(Clone, Debug, PartialEq)]
pub struct Subjob {
    /// Chain (dataset) index.
    pub chain: usize,
    /// Position `k − 1` in the chain (0 = ready subjob, relevant to every active job).
    pub k: usize,
    /// Size `p_{d,k} = r_k − r_{k−1}`.
    pub work: f64,
    /// `m_{d,k}` (clamped to `M_{d,k}`).
    pub min: u32,
    /// `M_{d,k}`.
    pub max: u32,
    /// Concurrency `K_d − k + 1`.
    pub concurrency: usize,
}

/// A fully shared plan: the subjobs (chain by chain, in chain order), the priority order and the
/// malleable packing over them (indices into `subjobs`).
#[derive(Clone, Debug, PartialEq)]
pub struct ChainPlan {
    /// Subjobs, flattened chain by chain.
    pub subjobs: Vec<Subjob>,
    /// Subjob indices in priority order (a topological order of the chains).
    pub order: Vec<usize>,
    /// The packed schedule (times relative to `start`).
    pub packing: Packing,
}

fn unsupported(objective: Objective, what: &str) -> Error {
    Error::config(KEY_OBJECTIVE, objective.name(), what)
}

fn check_job(c: usize, k: usize, job: &ScanJob, prev: f64) -> Result<()> {
    let field = format!("chain {c} job {k} remaining");
    if !job.remaining.is_finite() || job.remaining < prev {
        return Err(Error::job(&field, job.remaining, format!("finite and >= the older job's {prev} (nesting)")));
    }
    if job.max == 0 {
        return Err(Error::job(&format!("chain {c} job {k} max slots"), 0, ">= 1"));
    }
    Ok(())
}

/// The subjobs of `chains` (each chain lists a dataset's active jobs oldest first). Errors when a
/// chain is not nested (`r_k` decreasing) or a maximum is 0.
pub fn decompose(chains: &[Vec<ScanJob>]) -> Result<Vec<Subjob>> {
    let mut out = Vec::with_capacity(chains.iter().map(Vec::len).sum());
    for (c, jobs) in chains.iter().enumerate() {
        let bounds = subjob_bounds(&jobs.iter().map(|j| (j.min, j.max)).collect::<Vec<_>>());
        let mut prev = 0.0;
        for (k, job) in jobs.iter().enumerate() {
            check_job(c, k, job, prev)?;
            out.push(Subjob {
                chain: c,
                k,
                work: job.remaining - prev,
                min: bounds[k].0,
                max: bounds[k].1,
                concurrency: jobs.len() - k,
            });
            prev = job.remaining;
        }
    }
    Ok(out)
}

/// Step 1 for chains: the priority order of the flattened subjobs (module docs).
pub fn sequence_chains(objective: Objective, capacity: u32, start: f64, chains: &[Vec<ScanJob>]) -> Result<Vec<usize>> {
    let subjobs = decompose(chains)?;
    let lengths: Vec<usize> = chains.iter().map(Vec::len).collect();
    let facts: Vec<&JobFacts> = chains.iter().flat_map(|c| c.iter().map(|j| &j.facts)).collect();
    match objective.method() {
        Method::Smith => {
            let mut offset = Vec::with_capacity(chains.len());
            let mut base = 0;
            let items: Vec<Vec<SmithItem>> = chains
                .iter()
                .enumerate()
                .map(|(c, jobs)| {
                    offset.push(base);
                    base += jobs.len();
                    (0..jobs.len())
                        .map(|k| SmithItem {
                            work: subjobs[offset[c] + k].work,
                            weight: objective.smith_weight(facts[offset[c] + k]),
                        })
                        .collect()
                })
                .collect();
            Ok(generalized_smith(&items).into_iter().map(|(c, k)| offset[c] + k).collect())
        }
        Method::BackwardsDp => {
            let s = capacity.max(1) as f64;
            let durations: Vec<f64> = subjobs.iter().map(|sj| sj.work / s).collect();
            let penalties: Vec<Penalty> = facts.iter().map(|f| objective.penalty(f)).collect();
            Ok(backwards_dp_penalties(&durations, &penalties, &Precedence::chains(&lengths), start))
        }
        _ => Err(unsupported(
            objective,
            "a linear minisum objective (avg/weighted response time, avg stretch, avg lateness) or a minimax one",
        )),
    }
}

/// Steps 1 and 2 for a fully shared problem: order the subjobs and pack them malleably on
/// `capacity` slots; `trace` records every interval.
pub fn plan_chains(
    objective: Objective,
    capacity: u32,
    start: f64,
    chains: &[Vec<ScanJob>],
    trace: bool,
) -> Result<ChainPlan> {
    let order = sequence_chains(objective, capacity, start, chains)?;
    let subjobs = decompose(chains)?;
    let lengths: Vec<usize> = chains.iter().map(Vec::len).collect();
    let jobs: Vec<PackJob> = subjobs.iter().map(|s| PackJob { work: s.work, min: s.min, max: s.max }).collect();
    let packing = pack_with_precedence(capacity, &jobs, &order, &Precedence::chains(&lengths), trace);
    Ok(ChainPlan { subjobs, order, packing })
}

/// A semi-shared plan over Venn regions.
#[derive(Clone, Debug, PartialEq)]
pub struct RegionPlan {
    /// Region indices in priority order.
    pub order: Vec<usize>,
    /// `(m, M)` per region: max of the relevant minima (clamped), min of the relevant maxima.
    pub bounds: Vec<(u32, u32)>,
    /// The packed schedule over the regions.
    pub packing: Packing,
}

/// Minimax planning of semi-shared scans: `regions` from [`super::scan::venn_regions`], `jobs`
/// indexed as in the regions (their `remaining` is ignored: a job completes with its last region).
pub fn plan_semi_shared(
    objective: Objective,
    capacity: u32,
    start: f64,
    regions: &[Region],
    jobs: &[ScanJob],
    trace: bool,
) -> Result<RegionPlan> {
    if objective.aggregate() != Aggregate::MiniMax {
        return Err(unsupported(objective, "a minimax objective (semi-shared scans support only minimax)"));
    }
    for (r, region) in regions.iter().enumerate() {
        if region.jobs.is_empty()
            || region.jobs.iter().any(|&j| j >= jobs.len())
            || region.size.is_nan()
            || region.size < 0.0
        {
            return Err(Error::job(
                &format!("region {r}"),
                format!("{:?} size {}", region.jobs, region.size),
                format!("a non-empty set of job indices below {} and a size >= 0", jobs.len()),
            ));
        }
    }
    let precedence = Precedence::from_edges(regions.len(), &region_edges(regions))?;
    let s = capacity.max(1) as f64;
    let durations: Vec<f64> = regions.iter().map(|r| r.size / s).collect();
    let penalties: Vec<Penalty> = jobs.iter().map(|j| objective.penalty(&j.facts)).collect();
    let order = backwards_dp(&durations, &precedence, start, |r, t| {
        regions[r].jobs.iter().map(|&j| penalties[j].eval(t)).fold(f64::NEG_INFINITY, f64::max)
    });
    let bounds: Vec<(u32, u32)> = regions
        .iter()
        .map(|r| {
            let hi = r.jobs.iter().map(|&j| jobs[j].max).min().unwrap_or(0);
            let lo = r.jobs.iter().map(|&j| jobs[j].min).max().unwrap_or(0);
            (lo.min(hi), hi)
        })
        .collect();
    let pack_jobs: Vec<PackJob> =
        regions.iter().zip(&bounds).map(|(r, &(min, max))| PackJob { work: r.size, min, max }).collect();
    let packing = pack_with_precedence(capacity, &pack_jobs, &order, &precedence, trace);
    Ok(RegionPlan { order, bounds, packing })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use proptest::prelude::*;

    pub(crate) fn facts(arrival: f64, isolated: f64) -> JobFacts {
        JobFacts { arrival, weight: 1.0, deadline: None, sla: Vec::new(), isolated, tail: 0.0 }
    }

    fn job(remaining: f64, arrival: f64, isolated: f64) -> ScanJob {
        ScanJob { remaining, min: 0, max: 1, facts: facts(arrival, isolated) }
    }

    /// Digest §6 example 5 at t = 4: X = [x1 (6 left), x2 (10 left)], Y = [y1 (3 left)], S = 1.
    fn example5() -> Vec<Vec<ScanJob>> {
        vec![vec![job(6.0, 0.0, 10.0), job(10.0, 4.0, 10.0)], vec![job(3.0, 4.0, 3.0)]]
    }

    fn completions(plan: &ChainPlan) -> Vec<f64> {
        plan.packing.completion.iter().map(|c| 4.0 + c).collect()
    }

    #[test]
    fn example5_smith_average_response_time() {
        let plan = plan_chains(Objective::AvgResponseTime, 1, 4.0, &example5(), true).unwrap();
        let sizes: Vec<f64> = plan.subjobs.iter().map(|s| s.work).collect();
        assert_eq!(sizes, vec![6.0, 4.0, 3.0], "(X,1) = 6, (X,2) = 4, (Y,1) = 3");
        assert_eq!(plan.order, vec![2, 0, 1], "Y1, X1, X2");
        let c = completions(&plan);
        assert_eq!(c, vec![13.0, 17.0, 7.0]);
        let rt = (c[0] - 0.0) + (c[1] - 4.0) + (c[2] - 4.0);
        assert_eq!(rt, 29.0);
    }

    #[test]
    fn example5_dp_max_stretch_and_flex_comparison() {
        let plan = plan_chains(Objective::MaxStretch, 1, 4.0, &example5(), false).unwrap();
        assert_eq!(plan.order, vec![2, 0, 1]);
        let c = completions(&plan);
        let stretch = [(c[0] - 0.0) / 10.0, (c[1] - 4.0) / 10.0, (c[2] - 4.0) / 3.0];
        let max = stretch.iter().cloned().fold(0.0, f64::max);
        assert!((max - 1.3).abs() < 1e-12, "{stretch:?}");
        // FLEX without sharing: every job is its own chain with its full remaining scan.
        let flex = vec![vec![job(6.0, 0.0, 10.0)], vec![job(10.0, 4.0, 10.0)], vec![job(3.0, 4.0, 3.0)]];
        let plan = plan_chains(Objective::AvgResponseTime, 1, 4.0, &flex, false).unwrap();
        let c: Vec<f64> = plan.packing.completion.iter().map(|c| 4.0 + c).collect();
        assert_eq!(c, vec![13.0, 23.0, 7.0]);
        assert_eq!(c[0] + (c[1] - 4.0) + (c[2] - 4.0), 35.0);
    }

    #[test]
    fn minisum_without_linear_penalty_is_rejected_by_name() {
        let err = plan_chains(Objective::TotalTardiness, 1, 0.0, &example5(), false).unwrap_err().to_string();
        assert!(err.contains("total_tardiness") && err.contains("circumflex.objective"), "{err}");
        let bad = vec![vec![job(6.0, 0.0, 1.0), job(5.0, 1.0, 1.0)]];
        assert!(decompose(&bad).unwrap_err().to_string().contains("nesting"));
    }

    #[test]
    fn semi_shared_plan_orders_regions_by_overlap_and_rejects_minisum() {
        let needs = vec![(0..3).collect::<Vec<u64>>(), (0..7).collect(), (2..10).collect()];
        let regions = super::super::scan::venn_regions(&needs, 1.0);
        let jobs = vec![job(3.0, 0.0, 3.0), job(7.0, 0.0, 7.0), job(8.0, 0.0, 8.0)];
        let plan = plan_semi_shared(Objective::MaxStretch, 2, 0.0, &regions, &jobs, true).unwrap();
        let prec = Precedence::from_edges(regions.len(), &region_edges(&regions)).unwrap();
        assert!(prec.is_topological(&plan.order));
        assert_eq!(plan.order[0], 1, "the 3-way region goes first");
        // Max over jobs of F_j at their completion (last region) equals max over regions of G_s.
        let mut done = [0.0f64; 3];
        for (r, reg) in regions.iter().enumerate() {
            for &j in &reg.jobs {
                done[j] = done[j].max(plan.packing.completion[r]);
            }
        }
        assert!(done.iter().all(|c| c.is_finite() && *c > 0.0));
        assert!(plan_semi_shared(Objective::AvgStretch, 2, 0.0, &regions, &jobs, false).is_err());
    }

    fn chains_strategy() -> impl Strategy<Value = Vec<Vec<ScanJob>>> {
        prop::collection::vec(prop::collection::vec((0u32..20, 0u32..3, 1u32..5, 0u32..10), 1..5), 1..5).prop_map(
            |cs| {
                cs.into_iter()
                    .map(|jobs| {
                        let mut r = 0.0;
                        jobs.into_iter()
                            .enumerate()
                            .map(|(k, (dr, m, mx, a))| {
                                r += dr as f64;
                                ScanJob {
                                    remaining: r,
                                    min: m,
                                    max: mx,
                                    facts: facts(a as f64 + k as f64, 1.0 + dr as f64),
                                }
                            })
                            .collect()
                    })
                    .collect()
            },
        )
    }

    proptest! {
        /// The order is topological; at most one subjob per dataset has slots in any interval;
        /// capacity is respected; subjob sizes sum to r_K; completions are oldest first per chain.
        #[test]
        fn chain_plans_respect_precedence(chains in chains_strategy(), cap in 1u32..8, minimax in any::<bool>()) {
            let objective = if minimax { Objective::MaxStretch } else { Objective::AvgStretch };
            let plan = plan_chains(objective, cap, 0.0, &chains, true).unwrap();
            let lengths: Vec<usize> = chains.iter().map(Vec::len).collect();
            prop_assert!(Precedence::chains(&lengths).is_topological(&plan.order));
            for (c, jobs) in chains.iter().enumerate() {
                let sum: f64 = plan.subjobs.iter().filter(|s| s.chain == c).map(|s| s.work).sum();
                prop_assert!((sum - jobs.last().unwrap().remaining).abs() < 1e-9);
                let comp: Vec<f64> = plan.subjobs.iter().zip(&plan.packing.completion).filter(|(s, _)| s.chain == c).map(|(_, &t)| t).collect();
                prop_assert!(comp.windows(2).all(|w| w[0] <= w[1]));
            }
            for iv in &plan.packing.intervals {
                let total: u32 = iv.alloc.iter().map(|a| a.1).sum();
                prop_assert!(total <= cap);
                for c in 0..chains.len() {
                    let busy = iv.alloc.iter().filter(|&&(j, s)| s > 0 && plan.subjobs[j].chain == c).count();
                    prop_assert!(busy <= 1);
                }
            }
        }
    }
}
