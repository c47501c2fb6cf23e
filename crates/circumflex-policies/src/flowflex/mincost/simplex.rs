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
//! scan of the arcs (block pricing) plus a walk of the tree: far cheaper than a Dijkstra. A cold
//! solve still takes about five pivots per node; [`MinCostFlow::solve_simplex_from`] starts instead
//! from a guessed basis (an earlier similar network's, [`MinCostFlow::basis`]), and callers that
//! must reproduce the cold solve's flow use it only with the certificate [`MinCostFlow::unique_on`].
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

/// A warm start: the guessed states, the watched arcs of the certificate, where to put it, and the
/// least cost scale of the tolerances ([`MinCostFlow::solve_simplex_from_scaled`]).
type Warm<'a> = (&'a [ArcState], &'a dyn Fn(usize, usize) -> bool, &'a mut bool, f64);

/// Where a real arc sits in a network simplex basis: a non-tree arc at its lower bound (flow 0) or
/// at its upper bound (flow = capacity), or a tree arc.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ArcState {
    /// Not in the tree, no flow.
    #[default]
    Lower,
    /// Not in the tree, at its (finite) capacity.
    Upper,
    /// In the spanning tree.
    Tree,
}

/// The simplex's working arrays, kept by the network between solves so that a network reused for
/// the next plan ([`MinCostFlow::reset`]) allocates nothing (issue 20). No result depends on what
/// they held: every array is cleared and filled anew by each solve.
#[derive(Clone, Debug, Default)]
pub(super) struct SimplexScratch {
    tail: Vec<usize>,
    head: Vec<usize>,
    cost: Vec<f64>,
    cap: Vec<f64>,
    flow: Vec<f64>,
    parent: Vec<usize>,
    parent_arc: Vec<usize>,
    in_tree: Vec<bool>,
    children: Children,
    potential: Vec<f64>,
    depth: Vec<usize>,
    stack: Vec<usize>,
    up_first: Vec<(usize, bool)>,
    up_second: Vec<(usize, bool)>,
    warm: WarmScratch,
}

/// [`WarmTree::build`]'s arrays.
#[derive(Clone, Debug, Default)]
struct WarmScratch {
    supply: Vec<f64>,
    set: Vec<usize>,
    start: Vec<usize>,
    fill: Vec<usize>,
    forest: Vec<usize>,
    incident: Vec<usize>,
    order: Vec<usize>,
    seen: Vec<bool>,
}

/// Clears `v` and fills it with `n` copies of `x`, keeping its allocation.
fn refill<T: Clone>(v: &mut Vec<T>, n: usize, x: T) {
    v.clear();
    v.resize(n, x);
}

impl MinCostFlow {
    /// Sends `demand` units from `source` to `sink` at minimum cost with the network simplex method
    /// (module docs) and returns that cost. The cost equals [`MinCostFlow::solve`]'s; among equal-cost
    /// optima it may pick another flow (deterministically). Errors when the network cannot carry the
    /// demand or the pivots exceed their budget.
    pub fn solve_simplex(&mut self, source: usize, sink: usize, demand: f64) -> Result<f64> {
        self.simplex(source, sink, demand, None)
    }

    /// [`MinCostFlow::solve_simplex`] started from a basis guessed by the caller (per real arc, in
    /// id order, e.g. an earlier similar network's [`MinCostFlow::basis`]) instead of the
    /// all-artificial one: the guessed tree arcs that form a forest are kept where the flow the
    /// supplies force on them is within bounds (a strongly feasible tree: a tree arc with no flow
    /// points to the root, one at capacity away from it), every other subtree hangs from the
    /// artificial root by its artificial arc, and the guessed non-tree arcs sit at their bound.
    /// The same pivot rule then runs to an optimum (same certificate, same cost). Errors like the
    /// cold solve, or when the pivots exceed a small budget (`10·nodes + 100`: a warm start that
    /// needs more is no use; callers then solve cold).
    ///
    /// Among equal-cost optima it may end at another flow than the cold solve's, so it also
    /// returns a uniqueness certificate for the arcs `from → to` where `watched(from, to)`: `true`
    /// when no non-tree arc of reduced cost 0 (within `1e-9·(max |cost| + 1)`, so near-ties count
    /// as ties) is watched or has a watched arc on its cycle through the final tree. Then every
    /// optimum carries the same flow on the watched arcs (up to rounding): two optima differ by a
    /// circulation on arcs of reduced cost 0 under these (dual optimal) prices, i.e. on tree arcs
    /// and those non-tree arcs, and such a circulation is the sum of those non-tree arcs' tree
    /// cycles, each scaled by its flow on that arc. (Conservative: it ignores the cycles' bounds
    /// and directions.)
    pub fn solve_simplex_from(
        &mut self,
        source: usize,
        sink: usize,
        demand: f64,
        start: &[ArcState],
        watched: impl Fn(usize, usize) -> bool,
    ) -> Result<(f64, bool)> {
        self.solve_simplex_from_scaled(source, sink, demand, start, watched, 0.0)
    }

    /// [`MinCostFlow::solve_simplex_from`] with the pivot tolerance and the certificate's tie margin
    /// scaled by at least `cost_scale` instead of this network's largest arc cost: a caller that
    /// solves a network with some arcs left out (they carry nothing in any optimum) passes the
    /// largest cost of the network it stands for, so near-ties count as ties exactly as they would
    /// there.
    pub fn solve_simplex_from_scaled(
        &mut self,
        source: usize,
        sink: usize,
        demand: f64,
        start: &[ArcState],
        watched: impl Fn(usize, usize) -> bool,
        cost_scale: f64,
    ) -> Result<(f64, bool)> {
        if start.len() != self.head.len() / 2 {
            return Err(Error::job(
                "simplex start",
                start.len(),
                format!("one state per arc ({})", self.head.len() / 2),
            ));
        }
        let mut unique = false;
        let cost = self.simplex(source, sink, demand, Some((start, &watched, &mut unique, cost_scale)))?;
        Ok((cost, unique))
    }

    /// The basis the last simplex solve ended with, per real arc in id order (empty before one, or
    /// after a solve that failed).
    pub fn basis(&self) -> &[ArcState] {
        &self.basis
    }

    /// Pivots the last simplex solve made (tests and probes).
    pub fn pivots(&self) -> usize {
        self.pivots
    }

    fn simplex(&mut self, source: usize, sink: usize, demand: f64, warm: Option<Warm<'_>>) -> Result<f64> {
        let mut scratch = std::mem::take(&mut self.scratch);
        let out = self.simplex_in(&mut scratch, source, sink, demand, warm);
        self.scratch = scratch;
        out
    }

    fn simplex_in(
        &mut self,
        scratch: &mut SimplexScratch,
        source: usize,
        sink: usize,
        demand: f64,
        warm: Option<Warm<'_>>,
    ) -> Result<f64> {
        let start = warm.as_ref().map(|w| w.0);
        self.basis.clear();
        self.pivots = 0;
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
        let SimplexScratch {
            tail,
            head,
            cost,
            cap,
            flow,
            parent,
            parent_arc,
            in_tree,
            children,
            potential,
            depth,
            stack,
            up_first,
            up_second,
            warm: warm_scratch,
        } = scratch;
        tail.clear();
        head.clear();
        cost.clear();
        cap.clear();
        let mut max_cost = 0.0f64;
        for a in 0..real {
            tail.push(self.head[2 * a + 1]);
            head.push(self.head[2 * a]);
            cost.push(self.cost[2 * a]);
            cap.push(self.residual[2 * a] + self.residual[2 * a + 1]);
            max_cost = max_cost.max(self.cost[2 * a].abs());
        }
        if let Some(&(.., scale)) = warm.as_ref() {
            max_cost = max_cost.max(scale);
        }
        refill(flow, total, 0.0);
        let root = nodes;
        let big = (max_cost + 1.0) * (nodes as f64 + 1.0);
        // The initial basis: every node hangs from the root by its artificial arc, directed so it
        // carries the node's supply (source out to the root, root in to the sink; 0 elsewhere).
        refill(parent, nodes + 1, NONE);
        refill(parent_arc, nodes + 1, NONE);
        refill(in_tree, total, false);
        children.reset(nodes + 1);
        let supply = |v: usize| {
            if v == source && v != sink {
                demand
            } else if v == sink && v != source {
                -demand
            } else {
                0.0
            }
        };
        match start {
            None => {
                for v in 0..nodes {
                    let a = real + v;
                    let supply = supply(v);
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
                for v in (0..nodes).rev() {
                    children.add(root, v);
                }
            }
            Some(states) => {
                for v in 0..nodes {
                    tail.push(v);
                    head.push(root);
                    cost.push(big);
                    cap.push(f64::INFINITY);
                }
                warm_scratch.supply.clear();
                warm_scratch.supply.extend((0..nodes).map(supply));
                let mut warm = WarmTree { parent, parent_arc, in_tree };
                // Breadth-first from each component: every node comes after its parent.
                warm.build(states, real, warm_scratch, (tail, head), cap, flow);
                for &v in &warm_scratch.order {
                    children.add(parent[v], v);
                }
            }
        }
        refill(potential, nodes + 1, 0.0);
        refill(depth, nodes + 1, 0);
        let arcs = Arcs { tail, cost };
        refresh(root, children, parent_arc, arcs, potential, depth, stack);
        let tolerance = 1e-12 * (max_cost + 1.0);
        let block = ((total as f64).sqrt().ceil() as usize).max(8);
        let budget = if start.is_some() { 10 * nodes + 100 } else { 64 * total + 1024 };
        let mut next = 0usize;
        // Cycle scratch (`up_first`, `up_second`): (arc, forward along the cycle orientation) per side.
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
            for &(e, along) in up_first.iter().chain(up_second.iter()) {
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
                for &(e, along) in up_first.iter() {
                    if room(e, along) <= delta {
                        leaving = Some((e, true));
                        break;
                    }
                }
            }
            // Augment.
            if delta > 0.0 {
                flow[a] += if forward { delta } else { -delta };
                for &(e, along) in up_first.iter().chain(up_second.iter()) {
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
                up_first.iter().chain(up_second.iter()).find(|&&(e, _)| e == out).is_some_and(|&(_, along)| along);
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
            let arcs = Arcs { tail, cost };
            refresh(start, children, parent_arc, arcs, potential, depth, stack);
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
        if let Some((_, watched, unique, _)) = warm {
            // The certificate of `solve_simplex_from`: no zero-reduced-cost non-tree arc that is
            // watched or whose tree cycle passes a watched arc (artificial arcs carry nothing in
            // any optimum of the real network, and an arc of capacity 0 carries nothing at all).
            let margin = 1e-9 * (max_cost + 1.0);
            let watched_tree = |e: usize| e < real && watched(tail[e], head[e]);
            *unique = (0..real).all(|a| {
                if in_tree[a] || cap[a] <= 0.0 || (cost[a] + potential[tail[a]] - potential[head[a]]).abs() > margin {
                    return true;
                }
                if watched(tail[a], head[a]) {
                    return false;
                }
                let (mut x, mut y) = (tail[a], head[a]);
                while x != y {
                    let lower = if depth[x] >= depth[y] { &mut x } else { &mut y };
                    if watched_tree(parent_arc[*lower]) {
                        return false;
                    }
                    *lower = parent[*lower];
                }
                true
            });
        }
        self.potential.clear();
        self.potential.extend_from_slice(&potential[..nodes]);
        self.pivots = pivots;
        self.basis.extend((0..real).map(|e| {
            if in_tree[e] {
                ArcState::Tree
            } else if flow[e] > 0.0 {
                ArcState::Upper
            } else {
                ArcState::Lower
            }
        }));
        Ok(total_cost)
    }
}

/// The tree arrays a warm start fills ([`MinCostFlow::solve_simplex_from`]).
struct WarmTree<'a> {
    parent: &'a mut [usize],
    parent_arc: &'a mut [usize],
    in_tree: &'a mut [bool],
}

impl WarmTree<'_> {
    /// Builds a strongly feasible spanning tree from the guessed `states` (module docs of
    /// [`MinCostFlow::solve_simplex_from`]): non-tree arcs at their bound, the guessed tree arcs
    /// that form a forest hung from each component's first node, then bottom-up each node keeps
    /// its tree arc if the flow its subtree forces on it is feasible (and strongly so), else it
    /// hangs from the root by its artificial arc (`real + v`, turned to carry the subtree's supply).
    /// Leaves in `scratch.order` the nodes breadth-first from each component's first node (each
    /// after its parent); `scratch.supply` holds the nodes' supplies on entry.
    fn build(
        &mut self,
        states: &[ArcState],
        real: usize,
        scratch: &mut WarmScratch,
        (tail, head): (&mut [usize], &mut [usize]),
        cap: &[f64],
        flow: &mut [f64],
    ) {
        let WarmScratch { supply, set, start, fill, forest, incident, order, seen } = scratch;
        let nodes = supply.len();
        let root = nodes;
        // Union-find over the guessed tree arcs: an arc closing a cycle is left out of the tree.
        set.clear();
        set.extend(0..nodes);
        let find = |set: &mut Vec<usize>, mut x: usize| {
            while set[x] != x {
                set[x] = set[set[x]];
                x = set[x];
            }
            x
        };
        refill(start, nodes + 1, 0);
        forest.clear();
        for (a, &state) in states.iter().enumerate().take(real) {
            match state {
                ArcState::Upper if cap[a].is_finite() && cap[a] > 0.0 => {
                    flow[a] = cap[a];
                    supply[tail[a]] -= cap[a];
                    supply[head[a]] += cap[a];
                }
                ArcState::Tree => {
                    let (x, y) = (find(set, tail[a]), find(set, head[a]));
                    if x != y {
                        set[x] = y;
                        forest.push(a);
                        start[tail[a] + 1] += 1;
                        start[head[a] + 1] += 1;
                    }
                }
                _ => {}
            }
        }
        for v in 0..nodes {
            start[v + 1] += start[v];
        }
        fill.clear();
        fill.extend_from_slice(start);
        refill(incident, 2 * forest.len(), 0);
        for &a in forest.iter() {
            for v in [tail[a], head[a]] {
                incident[fill[v]] = a;
                fill[v] += 1;
            }
        }
        // Breadth-first order from each component's first node (hung from the root for now).
        order.clear();
        refill(seen, nodes, false);
        for first in 0..nodes {
            if seen[first] {
                continue;
            }
            seen[first] = true;
            self.parent[first] = root;
            self.parent_arc[first] = real + first;
            order.push(first);
            let mut i = order.len() - 1;
            while i < order.len() {
                let u = order[i];
                i += 1;
                for &a in &incident[start[u]..start[u + 1]] {
                    let w = if tail[a] == u { head[a] } else { tail[a] };
                    if !seen[w] {
                        seen[w] = true;
                        self.parent[w] = u;
                        self.parent_arc[w] = a;
                        order.push(w);
                    }
                }
            }
        }
        // Bottom-up: `supply[v]` becomes the net supply of v's (kept) subtree.
        for &v in order.iter().rev() {
            let s = supply[v];
            let p = self.parent[v];
            if p != root {
                let e = self.parent_arc[v];
                let up = tail[e] == v;
                let f = if up { s } else { -s };
                // Feasible, and strongly: no flow only towards the root, at capacity only away.
                if f >= 0.0 && f <= cap[e] && (f > 0.0 || up) && (f < cap[e] || !up) {
                    flow[e] = f;
                    self.in_tree[e] = true;
                    supply[p] += s;
                    continue;
                }
                self.parent[v] = root;
                self.parent_arc[v] = real + v;
            }
            let a = real + v;
            if s >= 0.0 {
                (tail[a], head[a]) = (v, root);
                flow[a] = s;
            } else {
                (tail[a], head[a]) = (root, v);
                flow[a] = -s;
            }
            self.in_tree[a] = true;
        }
    }
}

/// The spanning tree's child lists as doubly linked sibling lists: a re-hung node leaves its old
/// parent in O(1). (Only [`refresh`]'s visiting order depends on the order of children, and a
/// node's price and depth follow from its parent's alone, so the order changes no number.)
#[derive(Clone, Debug, Default)]
struct Children {
    first: Vec<usize>,
    next: Vec<usize>,
    prev: Vec<usize>,
}

impl Children {
    /// Empty lists for `nodes` nodes, keeping the allocations.
    fn reset(&mut self, nodes: usize) {
        refill(&mut self.first, nodes, NONE);
        refill(&mut self.next, nodes, NONE);
        refill(&mut self.prev, nodes, NONE);
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
