//! Every static priority order of a small workload, simulated: how good can any fixed ranking of the
//! jobs be under the same mechanics (AM containers, start-up contention, the AM gate, slots)?
//!
//! A policy that ranks jobs once and for all is a subclass of what a scheduler may do (it cannot idle a
//! slot on purpose or re-rank as work progresses), so the best order is not a lower bound on every
//! scheduler. It answers a narrower question that matters for the Gridmix targets: with these jobs on
//! this node, how far can *ordering* move the mean response time? The search runs the `fifo` policy,
//! which ranks by [`JobSpec::priority`](circumflex_core::model::JobSpec) first, with the priorities set
//! to each permutation in turn; everything else (the gate, preemption, contention) is the configuration's.
//!
//! The cost is `n!` simulations, so the search refuses workloads of more than [`MAX_JOBS`] jobs.

use circumflex_core::error::{Error, Result};

use super::{SimConfig, Simulation, Workload};

/// Most jobs a search accepts: 8! = 40,320 simulations (seconds on the Gridmix traces).
pub const MAX_JOBS: usize = 8;

/// What the search found.
#[derive(Clone, Debug, PartialEq)]
pub struct OrderSearch {
    /// Orders simulated (`n!`).
    pub orders: u64,
    /// The best order's mean response time, s, and the order (job indices in the workload, first = top rank).
    pub best: (f64, Vec<usize>),
    /// The worst order's mean response time, s, and the order.
    pub worst: (f64, Vec<usize>),
    /// The mean response time of submission order (fifo's own ranking), s.
    pub submission: f64,
}

/// Simulates `workload` under `config` (its policy must be `fifo`) once per priority order of its
/// jobs. Ties in the mean keep the first order found (permutations in lexicographic order).
pub fn search(config: &SimConfig, workload: &Workload) -> Result<OrderSearch> {
    if config.engine.policy != "fifo" {
        return Err(Error::config(
            "policy",
            &config.engine.policy,
            "fifo (the search sets job priorities, which fifo ranks by)",
        ));
    }
    let n = workload.jobs.len();
    if n == 0 || n > MAX_JOBS {
        return Err(Error::config(
            "workload",
            format!("{n} jobs"),
            format!("1 to {MAX_JOBS} jobs (the search simulates every one of n! orders)"),
        ));
    }
    let mut perm: Vec<usize> = (0..n).collect();
    let mut ranked = workload.clone();
    let mut found: Option<OrderSearch> = None;
    let mut orders = 0u64;
    loop {
        for (rank, &j) in perm.iter().enumerate() {
            // Higher priority runs first; ranks are distinct, so fifo's order is exactly `perm`.
            ranked.jobs[j].spec.priority = (n - rank) as i32;
        }
        let mean = Simulation::new(config.clone(), &ranked)?.run()?.summary.mean_response_s;
        orders += 1;
        match &mut found {
            None => {
                found = Some(OrderSearch {
                    orders,
                    best: (mean, perm.clone()),
                    worst: (mean, perm.clone()),
                    submission: mean,
                })
            }
            Some(s) => {
                if mean < s.best.0 {
                    s.best = (mean, perm.clone());
                }
                if mean > s.worst.0 {
                    s.worst = (mean, perm.clone());
                }
            }
        }
        if !next_permutation(&mut perm) {
            break;
        }
    }
    // The first permutation is the identity: jobs by arrival, which is fifo's own order.
    found.map(|s| OrderSearch { orders, ..s }).ok_or_else(|| Error::config("workload", "0 jobs", "at least one job"))
}

/// Steps `perm` to the next permutation in lexicographic order; false after the last one.
fn next_permutation(perm: &mut [usize]) -> bool {
    let n = perm.len();
    let Some(i) = (1..n).rev().find(|&i| perm[i - 1] < perm[i]) else {
        return false;
    };
    let Some(k) = (i..n).rev().find(|&k| perm[k] > perm[i - 1]) else {
        return false;
    };
    perm.swap(i - 1, k);
    perm[i..].reverse();
    true
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;
    use crate::sim::{ClusterSpec, SimJob};
    use circumflex_core::config::EngineConfig;
    use circumflex_core::policy::PoolMode;

    #[test]
    fn permutations_are_all_visited_once() {
        for n in 1..=5 {
            let mut perm: Vec<usize> = (0..n).collect();
            let mut seen = BTreeSet::new();
            loop {
                assert!(seen.insert(perm.clone()), "{perm:?} twice");
                if !next_permutation(&mut perm) {
                    break;
                }
            }
            assert_eq!(seen.len(), (1..=n).product::<usize>());
        }
    }

    fn one_slot(policy: &str) -> SimConfig {
        let cluster = ClusterSpec { nodes: 1, map_slots: 1, reduce_slots: 0, racks: 1, pool: PoolMode::Shared };
        let engine = EngineConfig { policy: policy.into(), ..EngineConfig::default() };
        SimConfig { cluster, engine, replicas: 0, ..SimConfig::default() }
    }

    /// A long job and a short one submitted together on one slot (shortest first, the worked example):
    /// submission order finishes them at about 100 and 110 s, the short job first at about 10 and 110 s.
    #[test]
    fn the_short_job_first_beats_arrival_order() {
        let workload = Workload::new(
            "two",
            vec![SimJob::new(0, vec![100_000], Vec::new()), SimJob::new(0, vec![10_000], Vec::new())],
        )
        .expect("valid jobs");
        let s = search(&one_slot("fifo"), &workload).expect("search runs");
        assert_eq!(s.orders, 2);
        assert_eq!(s.worst.1, vec![0, 1]);
        assert_eq!(s.best.1, vec![1, 0]);
        assert!(s.best.0 < s.submission, "{s:?}");
        assert_eq!(s.worst.0, s.submission);
    }

    #[test]
    fn a_policy_other_than_fifo_or_too_many_jobs_is_refused() {
        let workload = Workload::new("one", vec![SimJob::new(0, vec![1_000], Vec::new())]).expect("valid");
        let err = search(&one_slot("fair"), &workload).expect_err("fair ignores priorities").to_string();
        assert!(err.contains("fifo"), "{err}");
        let many = Workload::new("many", (0..9).map(|i| SimJob::new(i * 1_000, vec![1_000], Vec::new())).collect())
            .expect("valid");
        let err = search(&one_slot("fifo"), &many).expect_err("9! is too many").to_string();
        assert!(err.contains("9 jobs"), "{err}");
    }
}
