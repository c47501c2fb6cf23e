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

mod simplex;

pub use simplex::ArcState;

use circumflex_core::error::{Error, Result};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

const EPSILON: f64 = 1e-12;

/// A directed network with capacities and per-unit costs; arcs are stored with their reverses.
#[derive(Clone, Debug, Default)]
pub struct MinCostFlow {
    nodes: usize,
    /// Per node, its residual arcs in id order; built by the solvers that walk it
    /// ([`MinCostFlow::index`]), not by `add_arc`: the network simplex never needs it.
    adjacency: Vec<Vec<usize>>,
    head: Vec<usize>,
    residual: Vec<f64>,
    cost: Vec<f64>,
    /// The node prices the last solve ended with (reduced costs `≥ 0` on every residual arc).
    potential: Vec<f64>,
    /// The basis the last simplex solve ended with ([`MinCostFlow::basis`]).
    basis: Vec<simplex::ArcState>,
    /// Pivots of the last simplex solve ([`MinCostFlow::pivots`]).
    pivots: usize,
    /// The simplex's working arrays, kept across solves and [`MinCostFlow::reset`].
    scratch: simplex::SimplexScratch,
}

impl MinCostFlow {
    /// A network with `nodes` nodes and no arcs.
    pub fn new(nodes: usize) -> MinCostFlow {
        MinCostFlow { nodes, ..MinCostFlow::default() }
    }

    /// Makes this an empty network of `nodes` nodes, as [`MinCostFlow::new`] would, keeping the
    /// allocations (a network rebuilt for every plan allocates nothing once warm).
    pub fn reset(&mut self, nodes: usize) {
        self.nodes = nodes;
        self.adjacency.clear();
        self.head.clear();
        self.residual.clear();
        self.cost.clear();
        self.potential.clear();
        self.basis.clear();
        self.pivots = 0;
    }

    /// Builds the adjacency lists of every arc added so far (the order `add_arc` once pushed them
    /// in: each node's arcs by increasing id).
    fn index(&mut self) {
        if self.adjacency.len() == self.nodes && self.adjacency.iter().map(Vec::len).sum::<usize>() == self.head.len() {
            return;
        }
        self.adjacency = vec![Vec::new(); self.nodes];
        for arc in 0..self.head.len() {
            self.adjacency[self.head[arc ^ 1]].push(arc);
        }
    }

    /// Adds arc `from → to` with `capacity` (may be `+∞`) and per-unit `cost` (finite, `≥ 0`);
    /// returns its id for [`MinCostFlow::flow_on`].
    pub fn add_arc(&mut self, from: usize, to: usize, capacity: f64, cost: f64) -> Result<usize> {
        let nodes = self.nodes;
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
        for (head, residual, cost) in [(to, capacity, cost), (from, 0.0, -cost)] {
            self.head.push(head);
            self.residual.push(residual);
            self.cost.push(cost);
        }
        Ok(id)
    }

    /// The node prices the last [`MinCostFlow::solve`] or [`MinCostFlow::solve_warm`] ended with
    /// (empty before any solve): the warm start of a later, similar network.
    pub fn potentials(&self) -> &[f64] {
        &self.potential
    }

    /// Arcs added so far (ids `0, 2, 4, …`: arc `i` has id `2i`).
    pub fn arc_count(&self) -> usize {
        self.head.len() / 2
    }

    /// Flow currently on arc `arc` (an id from [`MinCostFlow::add_arc`]).
    pub fn flow_on(&self, arc: usize) -> f64 {
        self.residual.get(arc ^ 1).copied().unwrap_or(0.0)
    }

    /// Sends `demand` units from `source` to `sink` at minimum cost and returns that cost. Errors
    /// when the network cannot carry the demand.
    pub fn solve(&mut self, source: usize, sink: usize, demand: f64) -> Result<f64> {
        self.index();
        let nodes = self.nodes;
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
        self.potential = potential;
        Ok(total)
    }

    /// Like [`MinCostFlow::solve`], but started from a guess: `start` gives a flow per arc id (clamped
    /// to the arc's capacity; the guess need not conserve flow) and `potential` node prices (any
    /// values; wrong length means all 0). Returns the cost; the final potentials are kept as the
    /// next warm start's prices ([`MinCostFlow::potentials`]).
    ///
    /// The guess is repaired into an optimal flow by the successive-shortest-path method on a
    /// pseudo-flow: (1) raise potentials until every uncapacitated residual arc has a non-negative
    /// reduced cost (a longest-path relaxation over those arcs, whose costs are `≥ 0`); (2) saturate
    /// every capacitated residual arc whose reduced cost is still negative; (3) while a node has
    /// excess, send flow along a shortest (reduced-cost) path from the excess nodes to the nearest
    /// node in deficit, updating potentials by `min(d, d_deficit)` (the early-stop rule that keeps
    /// every residual reduced cost `≥ 0`). When nothing is left unbalanced, the flow carries `demand`
    /// and has no residual arc of negative reduced cost, so it is a minimum-cost flow (the same
    /// certificate as the cold [`MinCostFlow::solve`]): its cost equals the cold solve's, though
    /// among equal-cost optima it may pick another. A guess close to the optimum (the previous
    /// epoch's) needs few augmentations. Errors when the demand cannot be carried or the repair
    /// does not converge within its iteration budget (callers then solve cold).
    pub fn solve_warm(
        &mut self,
        source: usize,
        sink: usize,
        demand: f64,
        start: &[(usize, f64)],
        potential: Vec<f64>,
    ) -> Result<f64> {
        self.index();
        let nodes = self.nodes;
        let arcs = self.head.len();
        let mut potential = if potential.len() == nodes && potential.iter().all(|p| p.is_finite()) {
            potential
        } else {
            vec![0.0; nodes]
        };
        for &(arc, amount) in start {
            if arc % 2 == 1 || arc >= arcs || amount.is_nan() || amount <= 0.0 {
                continue;
            }
            let amount = amount.min(self.residual[arc]);
            self.residual[arc] -= amount;
            self.residual[arc ^ 1] += amount;
        }
        let tolerance = 1e-10 * demand.max(1.0);
        let mut excess = vec![0.0f64; nodes];
        if source < nodes && sink < nodes {
            excess[source] += demand;
            excess[sink] -= demand;
        }
        for arc in (0..arcs).step_by(2) {
            let flow = self.residual[arc ^ 1];
            excess[self.head[arc ^ 1]] -= flow;
            excess[self.head[arc]] += flow;
        }
        // (1) Uncapacitated arcs cannot be saturated: fix their reduced costs through the tails' prices.
        let mut settled = false;
        for _ in 0..=nodes {
            let mut changed = false;
            for arc in 0..arcs {
                if self.residual[arc].is_infinite() {
                    let (tail, head) = (self.head[arc ^ 1], self.head[arc]);
                    let wanted = potential[head] - self.cost[arc];
                    if potential[tail] < wanted {
                        potential[tail] = wanted;
                        changed = true;
                    }
                }
            }
            if !changed {
                settled = true;
                break;
            }
        }
        if !settled {
            return Err(Error::job("min-cost flow warm start", "potentials", "a relaxation that settles"));
        }
        // (2) Saturate the capacitated residual arcs that still have a negative reduced cost.
        for arc in 0..arcs {
            let r = self.residual[arc];
            if r > EPSILON && r.is_finite() {
                let (tail, head) = (self.head[arc ^ 1], self.head[arc]);
                // Float noise in prices (a few ulps) is not a reason to move flow: the solver treats
                // such arcs as reduced cost 0, as the cold solve does (`max(0.0)` in Dijkstra).
                let noise = 1e-9 * (self.cost[arc].abs() + potential[tail].abs() + potential[head].abs()).max(1e-3);
                if self.cost[arc] + potential[tail] - potential[head] < -noise {
                    self.residual[arc] = 0.0;
                    self.residual[arc ^ 1] += r;
                    excess[tail] -= r;
                    excess[head] += r;
                }
            }
        }
        // (3) Successive shortest paths from the excess nodes to the nearest deficit.
        let budget = 4 * arcs + 4 * nodes + 64;
        let mut distance = vec![f64::INFINITY; nodes];
        let mut via = vec![usize::MAX; nodes];
        let mut done = vec![false; nodes];
        let mut heap = BinaryHeap::new();
        for _ in 0..budget {
            if excess.iter().all(|&e| e <= tolerance) {
                let total = (0..arcs).step_by(2).map(|a| self.residual[a ^ 1] * self.cost[a]).sum();
                self.potential = potential;
                return Ok(total);
            }
            distance.fill(f64::INFINITY);
            via.fill(usize::MAX);
            done.fill(false);
            heap.clear();
            for (node, &e) in excess.iter().enumerate() {
                if e > tolerance {
                    distance[node] = 0.0;
                    heap.push(Reverse((0.0f64.to_bits(), node)));
                }
            }
            let mut target = None;
            while let Some(Reverse((_, node))) = heap.pop() {
                if std::mem::replace(&mut done[node], true) {
                    continue;
                }
                if excess[node] < -tolerance {
                    target = Some(node);
                    break;
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
            let Some(target) = target else {
                let left: f64 = excess.iter().filter(|&&e| e > tolerance).sum();
                return Err(Error::job(
                    "min-cost flow demand",
                    demand,
                    format!("at most what the network can carry ({left} unplaced)"),
                ));
            };
            let reached = distance[target];
            for (p, d) in potential.iter_mut().zip(&distance) {
                *p += d.min(reached);
            }
            let mut amount = -excess[target];
            let mut at = target;
            while via[at] != usize::MAX {
                let arc = via[at];
                amount = amount.min(self.residual[arc]);
                at = self.head[arc ^ 1];
            }
            amount = amount.min(excess[at]);
            let start_node = at;
            let mut at = target;
            while via[at] != usize::MAX {
                let arc = via[at];
                self.residual[arc] -= amount;
                self.residual[arc ^ 1] += amount;
                at = self.head[arc ^ 1];
            }
            excess[start_node] -= amount;
            excess[target] += amount;
        }
        Err(Error::job("min-cost flow warm start", "augmentations", format!("at most {budget}")))
    }

    /// Dijkstra on reduced costs from `source`: distances and the arc used to reach each node.
    fn shortest_paths(&self, source: usize, potential: &[f64]) -> (Vec<f64>, Vec<usize>) {
        let nodes = self.nodes;
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
        let mut indexed = self.clone();
        indexed.index();
        let nodes = self.nodes;
        let mut distance = vec![0.0f64; nodes];
        for round in 0..=nodes {
            let mut changed = false;
            for node in 0..nodes {
                for &arc in &indexed.adjacency[node] {
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

        /// A warm solve from any guess (random flows on random arcs, random prices) reaches the cold
        /// solve's cost with the same certificate (no negative residual cycle) and conserves flow.
        #[test]
        fn warm_solve_matches_cold_from_any_guess(
            arcs in proptest::collection::vec((0usize..6, 0usize..6, 1u32..6, 0u32..9), 1..25),
            guess in proptest::collection::vec((0usize..64, 0u32..8), 0..30),
            prices in proptest::collection::vec(-20i32..20, 8),
            uncapacitated in 0usize..6,
        ) {
            let build = || {
                let mut net = MinCostFlow::new(8);
                let mut ids = Vec::new();
                for i in 1..=6 {
                    let cap = if i == uncapacitated + 1 { f64::INFINITY } else { 2.0 };
                    ids.push((0, i, net.add_arc(0, i, cap, 20.0).unwrap()));
                    ids.push((i, 7, net.add_arc(i, 7, 2.0, 0.0).unwrap()));
                }
                for &(a, b, cap, cost) in &arcs {
                    if a != b {
                        let cap = if cap == 5 { f64::INFINITY } else { f64::from(cap) };
                        ids.push((a + 1, b + 1, net.add_arc(a + 1, b + 1, cap, f64::from(cost)).unwrap()));
                    }
                }
                (net, ids)
            };
            let (mut cold, _) = build();
            let cold_cost = cold.solve(0, 7, 10.0).unwrap();
            let (mut warm, ids) = build();
            let start: Vec<(usize, f64)> = guess.iter().map(|&(i, f)| (ids[i % ids.len()].2, f64::from(f) * 0.5)).collect();
            let potential: Vec<f64> = prices.iter().map(|&p| f64::from(p)).collect();
            let warm_cost = warm.solve_warm(0, 7, 10.0, &start, potential).unwrap();
            prop_assert!((warm_cost - cold_cost).abs() < 1e-7 * cold_cost.max(1.0), "{} {}", warm_cost, cold_cost);
            prop_assert!(!warm.has_negative_residual_cycle());
            let mut balance = [0.0f64; 8];
            for &(a, b, id) in &ids {
                let f = warm.flow_on(id);
                prop_assert!(f >= -1e-9);
                balance[a] -= f;
                balance[b] += f;
            }
            for inner in &balance[1..=6] {
                prop_assert!(inner.abs() < 1e-7);
            }
            prop_assert!((balance[7] - 10.0).abs() < 1e-7);
        }
    }

    /// The inputs of [`random_network`] and a demand.
    #[allow(clippy::type_complexity)]
    fn arb_network() -> impl Strategy<Value = (Vec<(usize, usize, u32, u32)>, Vec<(u32, u32)>, u32)> {
        (
            proptest::collection::vec((0usize..6, 0usize..6, 0u32..6, 0u32..9), 1..30),
            proptest::collection::vec((0u32..4, 0u32..30), 6),
            1u32..14,
        )
    }

    /// The simplex tests' random network on nodes 0-7: source 0, sink 7, a direct arc pair
    /// `0 → i → 7` per `direct` entry `(capacity (3 = ∞), cost)` (the second of capacity 2, cost 0),
    /// and the `arcs` `(a, b, capacity (5 = ∞), cost)` between inner nodes `a + 1 → b + 1` (loops
    /// left out). Returns the network and its arcs as `(from, to, id, capacity)`.
    fn random_network(
        direct: &[(u32, u32)],
        arcs: &[(usize, usize, u32, u32)],
    ) -> (MinCostFlow, Vec<(usize, usize, usize, f64)>) {
        let mut net = MinCostFlow::new(8);
        let mut ids = Vec::new();
        for (i, &(cap, cost)) in direct.iter().enumerate() {
            let cap = if cap == 3 { f64::INFINITY } else { f64::from(cap) };
            ids.push((0, i + 1, net.add_arc(0, i + 1, cap, f64::from(cost)).unwrap(), cap));
            ids.push((i + 1, 7, net.add_arc(i + 1, 7, 2.0, 0.0).unwrap(), 2.0));
        }
        for &(a, b, cap, cost) in arcs {
            if a != b {
                let cap = if cap == 5 { f64::INFINITY } else { f64::from(cap) };
                ids.push((a + 1, b + 1, net.add_arc(a + 1, b + 1, cap, f64::from(cost)).unwrap(), cap));
            }
        }
        (net, ids)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]
        /// The network simplex method reaches the successive-shortest-path cost on random networks
        /// (capacitated and uncapacitated arcs, zero-cost ties, parallel arcs), with the same
        /// certificate (no negative residual cycle), flow conserved and capacities respected; it
        /// reports a demand the network cannot carry, as `solve` does; and it is deterministic.
        #[test]
        fn simplex_matches_successive_shortest_paths((arcs, direct, demand) in arb_network()) {
            let build = || random_network(&direct, &arcs);
            let demand = f64::from(demand);
            let (mut cold, _) = build();
            let (mut fast, ids) = build();
            match (cold.solve(0, 7, demand), fast.solve_simplex(0, 7, demand)) {
                (Ok(want), Ok(got)) => {
                    prop_assert!((want - got).abs() <= 1e-9 * want.max(1.0), "ssp {} simplex {}", want, got);
                    prop_assert!(!fast.has_negative_residual_cycle());
                    let mut balance = [0.0f64; 8];
                    for &(a, b, id, cap) in &ids {
                        let f = fast.flow_on(id);
                        prop_assert!(f >= 0.0 && f <= cap, "{} on capacity {}", f, cap);
                        balance[a] -= f;
                        balance[b] += f;
                    }
                    for inner in &balance[1..=6] {
                        prop_assert!(inner.abs() < 1e-9);
                    }
                    prop_assert!((balance[7] - demand).abs() < 1e-9);
                    let (mut again, _) = build();
                    again.solve_simplex(0, 7, demand).unwrap();
                    for &(_, _, id, _) in &ids {
                        prop_assert_eq!(again.flow_on(id), fast.flow_on(id));
                    }
                }
                (Err(_), Err(e)) => prop_assert!(e.to_string().contains("min-cost flow demand"), "{}", e),
                (want, got) => prop_assert!(false, "ssp {:?} simplex {:?}", want, got),
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]
        /// The simplex started from any guessed basis (random states per arc, as a warm start from
        /// another network's basis would give) reaches the cold cost, or fails only where the cold
        /// solve fails or on its pivot budget; and its certificate is sound: where it says the
        /// flow on every arc is every optimum's, the cold simplex and successive shortest paths
        /// put the same flow on every arc.
        #[test]
        fn simplex_from_any_basis_is_optimal_and_the_certificate_is_sound(
            (arcs, direct, demand) in arb_network(),
            states in proptest::collection::vec(0u8..3, 48),
        ) {
            let build = || random_network(&direct, &arcs);
            let demand = f64::from(demand);
            let (mut cold, ids) = build();
            let ids: Vec<usize> = ids.iter().map(|&(_, _, id, _)| id).collect();
            let (mut warm, _) = build();
            let (mut paths, _) = build();
            let guess: Vec<ArcState> = (0..ids.len())
                .map(|i| [ArcState::Lower, ArcState::Upper, ArcState::Tree][usize::from(states[i % states.len()])])
                .collect();
            let want = cold.solve_simplex(0, 7, demand);
            match (&want, warm.solve_simplex_from(0, 7, demand, &guess, |_, _| true)) {
                (Ok(want), Ok((got, unique))) => {
                    prop_assert!((want - got).abs() <= 1e-9 * want.max(1.0), "cold {} warm {}", want, got);
                    prop_assert!(!warm.has_negative_residual_cycle());
                    prop_assert_eq!(warm.basis().len(), ids.len());
                    if unique {
                        paths.solve(0, 7, demand).unwrap();
                        for &id in &ids {
                            prop_assert!((paths.flow_on(id) - warm.flow_on(id)).abs() < 1e-9, "arc {}", id);
                            prop_assert!((cold.flow_on(id) - warm.flow_on(id)).abs() < 1e-9, "arc {}", id);
                        }
                    }
                }
                (Err(_), Err(_)) => {}
                (Ok(_), Err(e)) => prop_assert!(e.to_string().contains("pivots"), "{}", e),
                (Err(e), Ok(_)) => prop_assert!(false, "cold failed ({}) where warm did not", e),
            }
        }
    }

    /// Two equal parallel routes: the optimum is not unique and the certificate says so; with one
    /// route cheaper it is. Re-solved from its own final basis, the simplex keeps the flow (at most
    /// one pivot: a node the cold tree held by a degenerate artificial arc hangs from the root again).
    #[test]
    fn certificate_sees_ties_and_a_warm_start_from_the_optimum_keeps_it() {
        let build = |second: f64| {
            let mut net = MinCostFlow::new(4);
            net.add_arc(0, 1, f64::INFINITY, 0.0).unwrap();
            net.add_arc(1, 2, f64::INFINITY, 1.0).unwrap();
            net.add_arc(1, 3, 2.0, second).unwrap();
            net.add_arc(2, 3, f64::INFINITY, 0.0).unwrap();
            net
        };
        for (second, unique) in [(1.0, false), (0.5, true)] {
            let mut cold = build(second);
            cold.solve_simplex(0, 3, 1.0).unwrap();
            let basis = cold.basis().to_vec();
            let mut again = build(second);
            let (cost, certified) = again.solve_simplex_from(0, 3, 1.0, &basis, |_, _| true).unwrap();
            assert_eq!((cost, certified), (second, unique));
            assert!(again.pivots() <= 1, "{} pivots", again.pivots());
            assert!(again.solve_simplex_from(0, 3, 1.0, &basis[1..], |_, _| true).is_err());
        }
        let mut strict = build(0.5);
        let (_, certified) = strict.solve_simplex_from(0, 3, 1.0, &[ArcState::Lower; 4], |_, _| true).unwrap();
        assert!(certified);
        assert_eq!(strict.flow_on(4), 1.0);
    }

    /// Started from its own optimum (flows and prices), a warm solve makes no augmentation and keeps
    /// the flow.
    #[test]
    fn warm_solve_from_the_optimum_keeps_it() {
        let build = || {
            let mut net = MinCostFlow::new(4);
            let ids = [
                net.add_arc(0, 1, 3.0, 1.0).unwrap(),
                net.add_arc(1, 3, f64::INFINITY, 0.0).unwrap(),
                net.add_arc(0, 2, f64::INFINITY, 5.0).unwrap(),
                net.add_arc(2, 3, 10.0, 0.0).unwrap(),
            ];
            (net, ids)
        };
        let (mut cold, ids) = build();
        let cost = cold.solve(0, 3, 5.0).unwrap();
        let start: Vec<(usize, f64)> = ids.iter().map(|&a| (a, cold.flow_on(a))).collect();
        let (mut warm, _) = build();
        assert_eq!(warm.solve_warm(0, 3, 5.0, &start, cold.potentials().to_vec()).unwrap(), cost);
        for &a in &ids {
            assert_eq!(warm.flow_on(a), cold.flow_on(a));
        }
    }
}
