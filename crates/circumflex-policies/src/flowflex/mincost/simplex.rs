//! The primal network simplex method on [`MinCostFlow`]'s arcs: the fast exact solver of the engine
//! policy's minisum relaxation (issue 20).
//!
//! **Why a second solver.** Successive shortest paths ([`MinCostFlow::solve`]) needs one Dijkstra
//! over the whole network per augmentation, and on Fig. 6's network the augmentations are many: 1,252
//! for 200 chains on a 28-interval grid (5,600 chain arcs), because most paths re-route earlier
//! charges and end on a partly used reverse arc. A warm start from the previous epoch's flow
//! ([`MinCostFlow::solve_warm`]) still needed about 256 (one or more per chain whose volume or cost
//! moved, which is every chain after an epoch of progress), and it picks among equal-cost optima
//! according to the history of plans, so a warm plan could differ from a cold one. The network
//! simplex method moves from one spanning-tree basis to the next with a pivot that costs a partial
//! scan of the arcs (block pricing) plus a walk of the tree: far cheaper than a Dijkstra, and a
//! cold solve is fast enough that no warm start is needed, so a plan is a function of its snapshot.
//!
//! Method (Ahuja, Magnanti, Orlin, *Network Flows*, ch. 11): an artificial root joined to every
//! node by an uncapacitated arc of cost `M` (more than any simple path costs) carries the initial
//! flow (the supplies: `+demand` at the source, `−demand` at the sink); the basis is kept strongly
//! feasible (the leaving arc is the last blocking arc of the pivot cycle in its orientation from the
//! apex), which rules out cycling; the entering arc is the most violating one of the first block of
//! `⌈√arcs⌉` arcs, scanned cyclically, that has one. At the end no non-tree arc has a negative
//! reduced cost at its lower bound or a positive one at its upper bound: the same optimality
//! certificate as the other solvers. Deterministic: the pivots depend only on the network (arcs in
//! insertion order). Residual flow on an artificial arc means the demand cannot be carried.

use super::MinCostFlow;
use circumflex_core::error::{Error, Result};

/// No parent (the root).
const NONE: usize = usize::MAX;

impl MinCostFlow {
    /// Sends `demand` units from `source` to `sink` at minimum cost with the network simplex method
    /// (module docs) and returns that cost. The cost equals [`MinCostFlow::solve`]'s; among equal-cost
    /// optima it may pick another flow (deterministically). Errors when the network cannot carry the
    /// demand or the pivots exceed their budget.
    pub fn solve_simplex(&mut self, source: usize, sink: usize, demand: f64) -> Result<f64> {
        let nodes = self.nodes;
        if source >= nodes || sink >= nodes || demand.is_nan() || demand < 0.0 || demand.is_infinite() {
            return Err(Error::job(
                "min-cost flow demand",
                demand,
                format!("a finite amount >= 0 between nodes below {nodes}"),
            ));
        }
        let real = self.head.len() / 2;
        // Arc arrays over real arcs then one artificial arc per node: tail, head, cost, capacity, flow.
        let total = real + nodes;
        let mut tail = Vec::with_capacity(total);
        let mut head = Vec::with_capacity(total);
        let mut cost = Vec::with_capacity(total);
        let mut cap = Vec::with_capacity(total);
        let mut max_cost = 0.0f64;
        for a in 0..real {
            tail.push(self.head[2 * a + 1]);
            head.push(self.head[2 * a]);
            cost.push(self.cost[2 * a]);
            cap.push(self.residual[2 * a] + self.residual[2 * a + 1]);
            max_cost = max_cost.max(self.cost[2 * a].abs());
        }
        let mut flow = vec![0.0f64; total];
        let root = nodes;
        let big = (max_cost + 1.0) * (nodes as f64 + 1.0);
        // The initial basis: every node hangs from the root by its artificial arc, directed so it
        // carries the node's supply (source out to the root, root in to the sink; 0 elsewhere).
        let mut parent = vec![NONE; nodes + 1];
        let mut parent_arc = vec![NONE; nodes + 1];
        let mut in_tree = vec![false; total];
        for v in 0..nodes {
            let a = real + v;
            let supply = if v == source && v != sink {
                demand
            } else if v == sink && v != source {
                -demand
            } else {
                0.0
            };
            if supply >= 0.0 {
                tail.push(v);
                head.push(root);
            } else {
                tail.push(root);
                head.push(v);
            }
            cost.push(big);
            cap.push(f64::INFINITY);
            flow[a] = supply.abs();
            parent[v] = root;
            parent_arc[v] = a;
            in_tree[a] = true;
        }
        let mut potential = vec![0.0f64; nodes + 1];
        let mut depth = vec![0usize; nodes + 1];
        let mut children = Children::new(nodes + 1);
        for v in (0..nodes).rev() {
            children.add(root, v);
        }
        let mut stack = Vec::with_capacity(nodes + 1);
        let arcs = Arcs { tail: &tail, cost: &cost };
        refresh(root, &children, &parent_arc, arcs, &mut potential, &mut depth, &mut stack);
        let tolerance = 1e-12 * (max_cost + 1.0);
        let block = ((total as f64).sqrt().ceil() as usize).max(8);
        let budget = 64 * total + 1024;
        let mut next = 0usize;
        // Cycle scratch: (arc, forward along the cycle orientation) per side.
        let mut up_first: Vec<(usize, bool)> = Vec::new();
        let mut up_second: Vec<(usize, bool)> = Vec::new();
        let mut pivots = 0usize;
        loop {
            // Pricing: the most violating arc of the first block (cyclic) that has one.
            let mut entering = NONE;
            let mut scanned = 0usize;
            while scanned < total && entering == NONE {
                let mut best = tolerance;
                for _ in 0..block.min(total - scanned) {
                    let a = next;
                    next = if next + 1 == total { 0 } else { next + 1 };
                    scanned += 1;
                    if in_tree[a] || cap[a] <= 0.0 {
                        continue;
                    }
                    // Non-tree arcs sit exactly at a bound: 0, or their (finite) capacity.
                    let rc = cost[a] + potential[tail[a]] - potential[head[a]];
                    let violation = if flow[a] <= 0.0 { -rc } else { rc };
                    if violation > best {
                        best = violation;
                        entering = a;
                    }
                }
            }
            if entering == NONE {
                break;
            }
            pivots += 1;
            if pivots > budget {
                return Err(Error::job("min-cost flow simplex", "pivots", format!("at most {budget}")));
            }
            let a = entering;
            // At its lower bound `a` has rc < 0 and its flow rises; at its upper bound rc > 0 and it falls.
            let forward = flow[a] <= 0.0;
            let (first, second) = if forward { (tail[a], head[a]) } else { (head[a], tail[a]) };
            // The cycle: first -> (a) -> second -> up to the apex -> down to first.
            up_first.clear();
            up_second.clear();
            let (mut x, mut y) = (first, second);
            while x != y {
                if depth[x] >= depth[y] && x != root {
                    // Walking up from `first`, the cycle runs down this arc (parent -> child).
                    let e = parent_arc[x];
                    up_first.push((e, head[e] == x));
                    x = parent[x];
                } else {
                    // Walking up from `second`, the cycle runs up this arc (child -> parent).
                    let e = parent_arc[y];
                    up_second.push((e, tail[e] == y));
                    y = parent[y];
                }
            }
            let room = |e: usize, along: bool| if along { cap[e] - flow[e] } else { flow[e] };
            let entering_room = if forward { cap[a] - flow[a] } else { flow[a] };
            let mut delta = entering_room;
            for &(e, along) in up_first.iter().chain(&up_second) {
                delta = delta.min(room(e, along));
            }
            if !delta.is_finite() {
                return Err(Error::job("min-cost flow simplex", "cycle", "a cycle of bounded capacity"));
            }
            let delta = delta.max(0.0);
            // Leaving arc: the last blocking arc from the apex in the cycle's orientation, i.e. the
            // one nearest the apex on the `second` side, else the entering arc, else the one nearest
            // `first` on the `first` side. `None` side marks the entering arc itself.
            let mut leaving: Option<(usize, bool)> = None; // (arc, on the first side)
            for &(e, along) in up_second.iter().rev() {
                if room(e, along) <= delta {
                    leaving = Some((e, false));
                    break;
                }
            }
            if leaving.is_none() && entering_room > delta {
                for &(e, along) in &up_first {
                    if room(e, along) <= delta {
                        leaving = Some((e, true));
                        break;
                    }
                }
            }
            // Augment.
            if delta > 0.0 {
                flow[a] += if forward { delta } else { -delta };
                for &(e, along) in up_first.iter().chain(&up_second) {
                    flow[e] += if along { delta } else { -delta };
                    if flow[e] < 0.0 {
                        flow[e] = 0.0;
                    }
                }
                if flow[a] < 0.0 {
                    flow[a] = 0.0;
                }
            }
            let Some((out, on_first)) = leaving else {
                // The entering arc blocks itself: it moves to its other bound, the tree stays.
                flow[a] = if forward { cap[a] } else { 0.0 };
                continue;
            };
            // The leaving arc reached a bound: put it there exactly.
            let out_along =
                up_first.iter().chain(&up_second).find(|&&(e, _)| e == out).is_some_and(|&(_, along)| along);
            flow[out] = if out_along { cap[out] } else { 0.0 };
            in_tree[out] = false;
            in_tree[a] = true;
            // The leaving arc's child side holds `first` (or `second`): re-hang that subtree from
            // the entering arc, reversing the parent pointers on the path up to the leaving arc.
            let (start, other) = if on_first { (first, second) } else { (second, first) };
            let stop = if parent_arc[tail[out]] == out { tail[out] } else { head[out] };
            let (mut cur, mut new_parent, mut new_arc) = (start, other, a);
            loop {
                let (up, up_arc) = (parent[cur], parent_arc[cur]);
                children.remove(up, cur);
                children.add(new_parent, cur);
                parent[cur] = new_parent;
                parent_arc[cur] = new_arc;
                if cur == stop {
                    break;
                }
                new_parent = cur;
                new_arc = up_arc;
                cur = up;
            }
            // Prices below the entering arc: `start`'s from `other`, then its new subtree.
            potential[start] = if tail[a] == other { potential[other] + cost[a] } else { potential[other] - cost[a] };
            depth[start] = depth[other] + 1;
            let arcs = Arcs { tail: &tail, cost: &cost };
            refresh(start, &children, &parent_arc, arcs, &mut potential, &mut depth, &mut stack);
        }
        if (real..total).any(|e| flow[e] > 1e-9 * demand.max(1.0)) {
            return Err(Error::job("min-cost flow demand", demand, "at most what the network can carry"));
        }
        let mut total_cost = 0.0;
        for e in 0..real {
            let f = flow[e].min(cap[e]);
            self.residual[2 * e] = cap[e] - f;
            self.residual[2 * e + 1] = f;
            total_cost += f * cost[e];
        }
        self.potential = potential[..nodes].to_vec();
        Ok(total_cost)
    }
}

/// The spanning tree's child lists as doubly linked sibling lists: a re-hung node leaves its old
/// parent in O(1). (Only [`refresh`]'s visiting order depends on the order of children, and a
/// node's price and depth follow from its parent's alone, so the order changes no number.)
struct Children {
    first: Vec<usize>,
    next: Vec<usize>,
    prev: Vec<usize>,
}

impl Children {
    fn new(nodes: usize) -> Children {
        Children { first: vec![NONE; nodes], next: vec![NONE; nodes], prev: vec![NONE; nodes] }
    }

    /// Makes `v` (in no list) the first child of `p`.
    fn add(&mut self, p: usize, v: usize) {
        let old = self.first[p];
        self.next[v] = old;
        self.prev[v] = NONE;
        if old != NONE {
            self.prev[old] = v;
        }
        self.first[p] = v;
    }

    /// Takes child `v` out of `p`'s list.
    fn remove(&mut self, p: usize, v: usize) {
        let (before, after) = (self.prev[v], self.next[v]);
        if before != NONE {
            self.next[before] = after;
        } else if self.first[p] == v {
            self.first[p] = after;
        }
        if after != NONE {
            self.prev[after] = before;
        }
        self.next[v] = NONE;
        self.prev[v] = NONE;
    }
}

/// The arc data [`refresh`] reads.
#[derive(Clone, Copy)]
struct Arcs<'a> {
    tail: &'a [usize],
    cost: &'a [f64],
}

/// Potentials and depths of the tree below `top` from `top`'s own, so that every tree arc has
/// reduced cost `cost + π(tail) − π(head)` = 0. Each node's price follows from its parent's, so
/// updating a re-hung subtree gives the same numbers as recomputing the whole tree.
fn refresh(
    top: usize,
    children: &Children,
    parent_arc: &[usize],
    arcs: Arcs<'_>,
    potential: &mut [f64],
    depth: &mut [usize],
    stack: &mut Vec<usize>,
) {
    stack.clear();
    stack.push(top);
    while let Some(u) = stack.pop() {
        let mut v = children.first[u];
        while v != NONE {
            let a = parent_arc[v];
            potential[v] = if arcs.tail[a] == u { potential[u] + arcs.cost[a] } else { potential[u] - arcs.cost[a] };
            depth[v] = depth[u] + 1;
            stack.push(v);
            v = children.next[v];
        }
    }
}
