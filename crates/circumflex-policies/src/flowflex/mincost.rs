//! A minimum-cost flow solver (successive shortest paths with Dijkstra on reduced costs), the
//! engine of FlowFlex's minisum relaxation (digest §2.4, Definition 3 and Fig. 6).
//!
//! Written here rather than taken from a crate: the network is small and structured, we need
//! real-valued capacities (chain volumes), infinite capacities and a deterministic choice among
//! equal-cost optima (§6.2), and the solver is short enough to test fully, including an
//! optimality certificate (no negative-cost cycle in the residual graph).
//!
//! Requirements: every arc cost is finite and `≥ 0` (true for the Fig. 6 network, whose costs are
//! `w_j(t)/V_j ≥ 0`), so Dijkstra is valid from the start; potentials keep reduced costs
//! non-negative afterwards. Ties in Dijkstra go to the smaller node index, so the flow is a
//! deterministic function of the arc insertion order. Residual capacities below `1e-12` count as 0.

use circumflex_core::error::{Error, Result};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

const EPSILON: f64 = 1e-12;

/// A directed network with capacities and per-unit costs; arcs are stored with their reverses.
#[derive(Clone, Debug, Default)]
pub struct MinCostFlow {
    adjacency: Vec<Vec<usize>>,
    head: Vec<usize>,
    residual: Vec<f64>,
    cost: Vec<f64>,
}

impl MinCostFlow {
    /// A network with `nodes` nodes and no arcs.
    pub fn new(nodes: usize) -> MinCostFlow {
        MinCostFlow { adjacency: vec![Vec::new(); nodes], ..MinCostFlow::default() }
    }

    /// Adds arc `from → to` with `capacity` (may be `+∞`) and per-unit `cost` (finite, `≥ 0`);
    /// returns its id for [`MinCostFlow::flow_on`].
    pub fn add_arc(&mut self, from: usize, to: usize, capacity: f64, cost: f64) -> Result<usize> {
        let nodes = self.adjacency.len();
        if from >= nodes || to >= nodes {
            return Err(Error::job("min-cost flow arc", format!("{from} -> {to}"), format!("nodes below {nodes}")));
        }
        let capacity_ok = capacity >= 0.0; // false for NaN
        if !capacity_ok || !cost.is_finite() || cost < 0.0 {
            return Err(Error::job(
                "min-cost flow arc",
                format!("capacity {capacity} cost {cost}"),
                "capacity >= 0 and a finite cost >= 0",
            ));
        }
        let id = self.head.len();
        for (tail, head, residual, cost) in [(from, to, capacity, cost), (to, from, 0.0, -cost)] {
            self.adjacency[tail].push(self.head.len());
            self.head.push(head);
            self.residual.push(residual);
            self.cost.push(cost);
        }
        Ok(id)
    }

    /// Flow currently on arc `arc` (an id from [`MinCostFlow::add_arc`]).
    pub fn flow_on(&self, arc: usize) -> f64 {
        self.residual.get(arc ^ 1).copied().unwrap_or(0.0)
    }

    /// Sends `demand` units from `source` to `sink` at minimum cost and returns that cost. Errors
    /// when the network cannot carry the demand.
    pub fn solve(&mut self, source: usize, sink: usize, demand: f64) -> Result<f64> {
        let nodes = self.adjacency.len();
        let mut potential = vec![0.0f64; nodes];
        let mut remaining = demand;
        let mut total = 0.0;
        while remaining > EPSILON * demand.max(1.0) {
            let (distance, via) = self.shortest_paths(source, &potential);
            if !distance[sink].is_finite() {
                return Err(Error::job(
                    "min-cost flow demand",
                    demand,
                    format!("at most what the network can carry ({} sent)", demand - remaining),
                ));
            }
            for (p, d) in potential.iter_mut().zip(&distance) {
                if d.is_finite() {
                    *p += d;
                }
            }
            let mut amount = remaining;
            let mut at = sink;
            while at != source {
                let arc = via[at];
                amount = amount.min(self.residual[arc]);
                at = self.head[arc ^ 1];
            }
            let mut at = sink;
            while at != source {
                let arc = via[at];
                self.residual[arc] -= amount;
                self.residual[arc ^ 1] += amount;
                total += amount * self.cost[arc];
                at = self.head[arc ^ 1];
            }
            remaining -= amount;
        }
        Ok(total)
    }

    /// Dijkstra on reduced costs from `source`: distances and the arc used to reach each node.
    fn shortest_paths(&self, source: usize, potential: &[f64]) -> (Vec<f64>, Vec<usize>) {
        let nodes = self.adjacency.len();
        let mut distance = vec![f64::INFINITY; nodes];
        let mut via = vec![usize::MAX; nodes];
        let mut done = vec![false; nodes];
        let mut heap = BinaryHeap::new();
        distance[source] = 0.0;
        // Non-negative f64s order like their bit patterns, which gives a total order for the heap.
        heap.push(Reverse((0.0f64.to_bits(), source)));
        while let Some(Reverse((_, node))) = heap.pop() {
            if std::mem::replace(&mut done[node], true) {
                continue;
            }
            for &arc in &self.adjacency[node] {
                if self.residual[arc] <= EPSILON {
                    continue;
                }
                let next = self.head[arc];
                let reduced = (self.cost[arc] + potential[node] - potential[next]).max(0.0);
                let candidate = distance[node] + reduced;
                if candidate < distance[next] {
                    distance[next] = candidate;
                    via[next] = arc;
                    heap.push(Reverse((candidate.to_bits(), next)));
                }
            }
        }
        (distance, via)
    }

    /// Whether the residual graph has a negative-cost cycle (Bellman–Ford); none means the current
    /// flow is a minimum-cost flow for its value. Used by tests as an optimality certificate.
    pub fn has_negative_residual_cycle(&self) -> bool {
        let nodes = self.adjacency.len();
        let mut distance = vec![0.0f64; nodes];
        for round in 0..=nodes {
            let mut changed = false;
            for node in 0..nodes {
                for &arc in &self.adjacency[node] {
                    let next = self.head[arc];
                    if self.residual[arc] > 1e-9 && distance[node] + self.cost[arc] < distance[next] - 1e-9 {
                        distance[next] = distance[node] + self.cost[arc];
                        changed = true;
                    }
                }
            }
            if !changed {
                return false;
            }
            if round == nodes {
                return true;
            }
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Two parallel routes: the cheap one (capacity 3, cost 1) fills first, the rest pays 5.
    #[test]
    fn prefers_cheap_routes_up_to_capacity() {
        let mut net = MinCostFlow::new(4);
        let cheap = net.add_arc(0, 1, 3.0, 1.0).unwrap();
        net.add_arc(1, 3, f64::INFINITY, 0.0).unwrap();
        let dear = net.add_arc(0, 2, f64::INFINITY, 5.0).unwrap();
        net.add_arc(2, 3, 10.0, 0.0).unwrap();
        assert_eq!(net.solve(0, 3, 5.0).unwrap(), 3.0 + 2.0 * 5.0);
        assert_eq!((net.flow_on(cheap), net.flow_on(dear)), (3.0, 2.0));
        assert!(!net.has_negative_residual_cycle());
    }

    /// A path needing a reverse (cancelling) arc: the classic crossing network.
    #[test]
    fn cancels_flow_when_that_is_cheaper() {
        let mut net = MinCostFlow::new(4);
        net.add_arc(0, 1, 1.0, 0.0).unwrap();
        net.add_arc(0, 2, 1.0, 2.0).unwrap();
        net.add_arc(1, 2, 1.0, 0.0).unwrap();
        net.add_arc(1, 3, 1.0, 2.0).unwrap();
        net.add_arc(2, 3, 1.0, 0.0).unwrap();
        assert_eq!(net.solve(0, 3, 2.0).unwrap(), 4.0);
        assert!(!net.has_negative_residual_cycle());
    }

    #[test]
    fn reports_excess_demand_and_bad_arcs() {
        let mut net = MinCostFlow::new(2);
        net.add_arc(0, 1, 1.0, 1.0).unwrap();
        let err = net.solve(0, 1, 2.0).unwrap_err();
        assert!(err.to_string().contains("min-cost flow demand"), "{err}");
        assert!(net.add_arc(0, 5, 1.0, 1.0).is_err());
        assert!(net.add_arc(0, 1, 1.0, -1.0).is_err());
        assert!(net.add_arc(0, 1, f64::NAN, 1.0).is_err());
    }

    proptest! {
        /// On random layered networks the result is optimal: no negative residual cycle, flow
        /// conservation at every inner node, and capacities respected.
        #[test]
        fn random_networks_are_solved_optimally(
            arcs in proptest::collection::vec((0usize..6, 0usize..6, 1u32..6, 0u32..9), 1..25),
        ) {
            // Source 0, sink 7, inner nodes 1..=6; every inner node also has a dear direct route.
            let mut net = MinCostFlow::new(8);
            let mut ids = Vec::new();
            for i in 1..=6 {
                ids.push((0, i, net.add_arc(0, i, 2.0, 20.0).unwrap(), 2.0));
                ids.push((i, 7, net.add_arc(i, 7, 2.0, 0.0).unwrap(), 2.0));
            }
            for &(a, b, cap, cost) in &arcs {
                if a != b {
                    let id = net.add_arc(a + 1, b + 1, f64::from(cap), f64::from(cost)).unwrap();
                    ids.push((a + 1, b + 1, id, f64::from(cap)));
                }
            }
            net.solve(0, 7, 10.0).unwrap();
            prop_assert!(!net.has_negative_residual_cycle());
            let mut balance = [0.0f64; 8];
            for &(a, b, id, cap) in &ids {
                let f = net.flow_on(id);
                prop_assert!(f >= -1e-9 && f <= cap + 1e-9);
                balance[a] -= f;
                balance[b] += f;
            }
            for inner in &balance[1..=6] {
                prop_assert!(inner.abs() < 1e-9);
            }
            prop_assert!((balance[7] - 10.0).abs() < 1e-9);
        }
    }
}
