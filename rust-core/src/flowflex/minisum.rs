//! FlowFlex Stage 2b (digest §2.4, Fig. 6): minisum objectives through the min-cost-flow
//! relaxation, rounding at the half-completion point into deadlines for the Fig. 5 greedy.
//!
//! Network: source `r`, one node `a_j` per chain, one node `b_t` per grid slot `[(t−1)Δ, tΔ)` for
//! `t = 1..H`, sink `r'`. Arcs `r → a_j` (capacity `V_j`), `a_j → b_t` for `tΔ ≥ Q_j` (cost
//! `w_j(tΔ)/V_j`), `b_t → r'` (capacity `P·Δ`) and `b_{t+1} → b_t` (uncapacitated, cost 0). A flow of
//! `Σ V_j` gives `cost(f)`, and chain `j`'s deadline is the first `tΔ` by which a fraction `θ` of its
//! volume is charged (the paper's `θ = ½` gives the (2, 3) guarantee).
//!
//! Decisions where the paper is silent:
//! - The time unit is the caller's grid step `Δ` (the paper assumes integer breakpoints, `Δ = 1`).
//!   `H = 2m⌈max_j Q_j/Δ⌉` slots; the network is refused beyond [`MAX_ARCS`] chain-slot arcs, so a
//!   too-fine grid is an error naming the step rather than a very long solve.
//! - Equal-cost optima are broken by the solver's deterministic order (arcs in chain, then slot
//!   order; Dijkstra ties to the smaller node index).
//! - `cost(f)` charges completions at grid points `tΔ ≥ C`, so it is a lower bound on `opt` only
//!   when the costs do not change between grid points (e.g. steps on the grid); for `ω·t` it is
//!   within `Δ·Σω_j` of one. We report it as the relaxation value, not as a certified bound.

use super::chain::PseudoChain;
use super::greedy::{chain_lower_bound, schedule_by_deadlines, DeadlineSchedule};
use super::mincost::MinCostFlow;
use crate::error::{Error, Result};
use crate::flex::metrics::Penalty;

/// Largest number of chain-to-slot arcs the relaxation will build.
pub const MAX_ARCS: usize = 4_000_000;

/// The outcome of Fig. 6.
#[derive(Clone, Debug, PartialEq)]
pub struct MinisumSchedule {
    /// `cost(f)`: the optimal value of the min-cost-flow relaxation.
    pub relaxation_cost: f64,
    /// Per chain, the work charged to each grid slot `t = 1..H` (index `t − 1`).
    pub charged: Vec<Vec<f64>>,
    /// The rounded deadlines `d_j` (multiples of the grid step).
    pub deadlines: Vec<f64>,
    /// The Fig. 5 greedy schedule for those deadlines.
    pub schedule: DeadlineSchedule,
    /// The minisum objective of the unit-speed schedule, `Σ_j w_j(C_j)`.
    pub objective: f64,
}

/// Fig. 6 with grid step `step` and rounding fraction `theta ∈ (0, 1)` (`½` in the paper).
pub fn minisum(
    chains: &[PseudoChain],
    costs: &[Penalty],
    slots: u32,
    step: f64,
    theta: f64,
) -> Result<MinisumSchedule> {
    let m = chains.len();
    if m == 0 || costs.len() != m {
        return Err(Error::job("costs", costs.len(), format!("one cost per chain, at least one ({m})")));
    }
    if !(step.is_finite() && step > 0.0) {
        return Err(Error::job("minisum grid step", step, "a finite number > 0"));
    }
    if !(theta > 0.0 && theta < 1.0) {
        return Err(Error::job("minisum rounding fraction", theta, "a number strictly between 0 and 1"));
    }
    let q: Vec<f64> = chains.iter().map(|c| chain_lower_bound(c, slots)).collect();
    let max_q_slots = (q.iter().copied().fold(0.0, f64::max) / step).ceil().max(1.0);
    let horizon_f = 2.0 * m as f64 * max_q_slots;
    if horizon_f * m as f64 > MAX_ARCS as f64 {
        return Err(Error::job(
            "minisum grid step",
            step,
            format!("a step giving at most {MAX_ARCS} chain-slot arcs ({horizon_f} slots x {m} chains requested)"),
        ));
    }
    let horizon = horizon_f as usize;
    // Nodes: 0 = r, 1..=m = a_j, m+1..=m+H = b_t, m+H+1 = r'.
    let (source, sink) = (0, m + horizon + 1);
    let slot_node = |t: usize| m + t;
    let mut net = MinCostFlow::new(m + horizon + 2);
    let mut arcs: Vec<Vec<(usize, usize)>> = Vec::with_capacity(m);
    let volumes: Vec<f64> = chains.iter().map(PseudoChain::volume).collect();
    for j in 0..m {
        net.add_arc(source, 1 + j, volumes[j], 0.0)?;
        let first = ((q[j] / step) * (1.0 - 1e-12)).ceil().max(1.0) as usize;
        let mut chain_arcs = Vec::new();
        for t in first..=horizon {
            let unit_cost = costs[j].eval(t as f64 * step).max(0.0) / volumes[j];
            chain_arcs.push((t, net.add_arc(1 + j, slot_node(t), f64::INFINITY, unit_cost)?));
        }
        arcs.push(chain_arcs);
    }
    for t in 1..=horizon {
        net.add_arc(slot_node(t), sink, f64::from(slots) * step, 0.0)?;
        if t < horizon {
            net.add_arc(slot_node(t + 1), slot_node(t), f64::INFINITY, 0.0)?;
        }
    }
    let relaxation_cost = net.solve(source, sink, volumes.iter().sum())?;
    let mut charged = vec![vec![0.0; horizon]; m];
    let mut deadlines = Vec::with_capacity(m);
    for j in 0..m {
        let mut cumulative = 0.0;
        let mut deadline = horizon as f64 * step;
        let mut found = false;
        for &(t, arc) in &arcs[j] {
            let f = net.flow_on(arc);
            charged[j][t - 1] = f;
            cumulative += f;
            if !found && cumulative >= theta * volumes[j] * (1.0 - 1e-12) {
                deadline = t as f64 * step;
                found = true;
            }
        }
        deadlines.push(deadline);
    }
    let schedule = schedule_by_deadlines(chains, &deadlines, slots)?;
    let objective = schedule.chains.iter().zip(costs).map(|(s, w)| w.eval(s.completion)).sum();
    Ok(MinisumSchedule { relaxation_cost, charged, deadlines, schedule, objective })
}

#[cfg(test)]
mod tests {
    use super::super::greedy::tests::{arb_chains, chain, linear};
    use super::*;
    use proptest::prelude::*;

    /// Digest T7: P = 1, two (2, 1) chains with w_1 = t and w_2 = 10t. cost(f) = 23.5, d = (3, 2),
    /// chain 2 on [0, 2), chain 1 on [2, 4), objective 24.
    #[test]
    fn t7_relaxation_and_rounding() {
        let chains = [chain(&[(2.0, 1)]), chain(&[(2.0, 1)])];
        let costs = [linear(1.0), linear(10.0)];
        let out = minisum(&chains, &costs, 1, 1.0, 0.5).unwrap();
        assert!((out.relaxation_cost - 23.5).abs() < 1e-9, "{}", out.relaxation_cost);
        assert_eq!(out.charged[1][1], 2.0);
        assert_eq!(&out.charged[0][2..4], &[1.0, 1.0]);
        assert_eq!(out.deadlines, vec![3.0, 2.0]);
        assert_eq!(out.schedule.order, vec![1, 0]);
        assert_eq!((out.schedule.chains[0].completion, out.schedule.chains[1].completion), (4.0, 2.0));
        assert_eq!(out.objective, 24.0);
        assert!(out.objective <= 2.0 * out.relaxation_cost * 3.0);
    }

    #[test]
    fn rejects_bad_parameters() {
        let chains = [chain(&[(2.0, 1)])];
        let costs = [linear(1.0)];
        let err = minisum(&chains, &costs, 1, 0.0, 0.5).unwrap_err();
        assert!(err.to_string().contains("minisum grid step"), "{err}");
        let err = minisum(&chains, &costs, 1, 1e-9, 0.5).unwrap_err();
        assert!(err.to_string().contains("chain-slot arcs"), "{err}");
        assert!(minisum(&chains, &costs, 1, 1.0, 1.0).is_err());
        assert!(minisum(&chains, &[], 1, 1.0, 0.5).is_err());
    }

    proptest! {
        /// Digest §5 invariant 8 (Δ = 1): d_j ≥ ⌈Q_j⌉, Σ_{d_l ≤ d_j} V_l ≤ 2P·d_j,
        /// Σ w_j(d_j) ≤ 2·cost(f), and C_j ≤ 3·d_j.
        #[test]
        fn minisum_invariants((chains, slots) in arb_chains(), weights in proptest::collection::vec(1u32..=10, 6)) {
            let costs: Vec<Penalty> = (0..chains.len()).map(|j| linear(f64::from(weights[j]))).collect();
            let out = minisum(&chains, &costs, slots, 1.0, 0.5).unwrap();
            let p = f64::from(slots);
            let mut at_deadlines = 0.0;
            for (j, c) in chains.iter().enumerate() {
                let d = out.deadlines[j];
                prop_assert!(d >= chain_lower_bound(c, slots).ceil() - 1e-9);
                let earlier: f64 = chains.iter().zip(&out.deadlines).filter(|(_, &e)| e <= d).map(|(c, _)| c.volume()).sum();
                prop_assert!(earlier <= 2.0 * p * d + 1e-9);
                prop_assert!(out.schedule.chains[j].completion <= 3.0 * d + 1e-9);
                at_deadlines += costs[j].eval(d);
                let charged: f64 = out.charged[j].iter().sum();
                prop_assert!((charged - c.volume()).abs() < 1e-9);
            }
            prop_assert!(at_deadlines <= 2.0 * out.relaxation_cost + 1e-6);
            // Corollary 1: within 6× of cost(f) (which is within the grid rounding of opt).
            prop_assert!(out.objective <= 6.0 * out.relaxation_cost + 1e-6);
        }
    }
}
