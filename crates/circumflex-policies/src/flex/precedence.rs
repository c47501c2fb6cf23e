//! Precedence relations between the items the FLEX algorithms sequence and pack.
//!
//! FLEX itself sequences independent jobs; CIRCUMFLEX adds chains of subjobs per dataset and
//! FlowFlex adds DAGs of jobs per flow. The backwards dynamic program ([`super::dp`]) and the
//! ready-list packing ([`super::packing`]) take a [`Precedence`] so one implementation serves all
//! three. Items are dense indices `0..n`; an edge `a -> b` means `a` must complete before `b`
//! may start (`a ≺ b`).

use circumflex_core::error::{Error, Result};

/// A DAG over items `0..n`, stored as successor and predecessor adjacency lists.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Precedence {
    succ: Vec<Vec<u32>>,
    pred: Vec<Vec<u32>>,
    edges: usize,
}

impl Precedence {
    /// No constraints among `n` items (FLEX).
    pub fn none(n: usize) -> Precedence {
        Precedence { succ: vec![Vec::new(); n], pred: vec![Vec::new(); n], edges: 0 }
    }

    /// Consecutive chains: items `0..lengths[0]` form the first chain in order, the next
    /// `lengths[1]` items the second, and so on (CIRCUMFLEX subjobs per dataset).
    pub fn chains(lengths: &[usize]) -> Precedence {
        let n = lengths.iter().sum();
        let mut p = Precedence::none(n);
        let mut base = 0usize;
        for &len in lengths {
            for k in 1..len {
                p.push_edge(base + k - 1, base + k);
            }
            base += len;
        }
        p
    }

    /// A DAG from explicit edges `(before, after)`. Errors (naming the edge) on an index out of
    /// range, a self-loop or a cycle. Duplicate edges are kept once.
    pub fn from_edges(n: usize, edges: &[(usize, usize)]) -> Result<Precedence> {
        let mut p = Precedence::none(n);
        for &(a, b) in edges {
            if a >= n || b >= n || a == b {
                return Err(Error::job(
                    "precedence edge",
                    format!("{a} -> {b}"),
                    format!("two different item indices below {n}"),
                ));
            }
            if !p.succ[a].contains(&(b as u32)) {
                p.push_edge(a, b);
            }
        }
        if p.topological_order().is_none() {
            return Err(Error::job("precedence", format!("{} edges", p.edges), "an acyclic relation (a DAG)"));
        }
        Ok(p)
    }

    fn push_edge(&mut self, a: usize, b: usize) {
        self.succ[a].push(b as u32);
        self.pred[b].push(a as u32);
        self.edges += 1;
    }

    /// Number of items.
    pub fn len(&self) -> usize {
        self.succ.len()
    }

    /// Whether there are no items.
    pub fn is_empty(&self) -> bool {
        self.succ.is_empty()
    }

    /// Whether there is no constraint at all (independent items).
    pub fn is_unconstrained(&self) -> bool {
        self.edges == 0
    }

    /// Immediate successors of `item`.
    pub fn successors(&self, item: usize) -> &[u32] {
        &self.succ[item]
    }

    /// Immediate predecessors of `item`.
    pub fn predecessors(&self, item: usize) -> &[u32] {
        &self.pred[item]
    }

    /// A topological order (Kahn, smallest index first), or `None` when there is a cycle.
    pub fn topological_order(&self) -> Option<Vec<usize>> {
        let n = self.len();
        let mut indeg: Vec<usize> = self.pred.iter().map(Vec::len).collect();
        let mut ready: std::collections::BinaryHeap<std::cmp::Reverse<usize>> =
            (0..n).filter(|&i| indeg[i] == 0).map(std::cmp::Reverse).collect();
        let mut out = Vec::with_capacity(n);
        while let Some(std::cmp::Reverse(i)) = ready.pop() {
            out.push(i);
            for &s in &self.succ[i] {
                indeg[s as usize] -= 1;
                if indeg[s as usize] == 0 {
                    ready.push(std::cmp::Reverse(s as usize));
                }
            }
        }
        (out.len() == n).then_some(out)
    }

    /// The chains, when the relation is a set of disjoint chains (every item has at most one
    /// predecessor and one successor): each chain from its head, chains ordered by their head's
    /// index. `None` for any other DAG.
    pub fn as_chains(&self) -> Option<Vec<Vec<usize>>> {
        if self.succ.iter().any(|s| s.len() > 1) || self.pred.iter().any(|p| p.len() > 1) {
            return None;
        }
        let mut chains = Vec::new();
        for head in (0..self.len()).filter(|&i| self.pred[i].is_empty()) {
            let mut chain = vec![head];
            let mut at = head;
            while let Some(&next) = self.succ[at].first() {
                at = next as usize;
                chain.push(at);
            }
            chains.push(chain);
        }
        // A cycle would leave items unvisited; `from_edges` rejects cycles, `chains` cannot make one.
        (chains.iter().map(Vec::len).sum::<usize>() == self.len()).then_some(chains)
    }

    /// The topological order closest to a preferred order: Kahn's algorithm that always takes the
    /// ready item with the smallest `priority` (ties: smaller index). Returns `priority`'s order
    /// itself when that is already topological.
    pub fn topological_by_priority(&self, priority: &[usize]) -> Vec<usize> {
        let n = self.len();
        let mut indeg: Vec<usize> = self.pred.iter().map(Vec::len).collect();
        let mut ready: std::collections::BinaryHeap<std::cmp::Reverse<(usize, usize)>> =
            (0..n).filter(|&i| indeg[i] == 0).map(|i| std::cmp::Reverse((priority[i], i))).collect();
        let mut out = Vec::with_capacity(n);
        while let Some(std::cmp::Reverse((_, i))) = ready.pop() {
            out.push(i);
            for &s in &self.succ[i] {
                let s = s as usize;
                indeg[s] -= 1;
                if indeg[s] == 0 {
                    ready.push(std::cmp::Reverse((priority[s], s)));
                }
            }
        }
        out
    }

    /// Whether `order` (a permutation of the items) respects every edge.
    pub fn is_topological(&self, order: &[usize]) -> bool {
        if order.len() != self.len() {
            return false;
        }
        let mut pos = vec![usize::MAX; self.len()];
        for (k, &i) in order.iter().enumerate() {
            if i >= self.len() || pos[i] != usize::MAX {
                return false;
            }
            pos[i] = k;
        }
        (0..self.len()).all(|a| self.succ[a].iter().all(|&b| pos[a] < pos[b as usize]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chains_and_dags() {
        let p = Precedence::chains(&[2, 1, 3]);
        assert_eq!(p.len(), 6);
        assert_eq!(p.successors(0), &[1]);
        assert!(p.successors(1).is_empty());
        assert_eq!(p.predecessors(5), &[4]);
        assert!(p.is_topological(&[2, 3, 0, 4, 1, 5]));
        assert!(!p.is_topological(&[1, 0, 2, 3, 4, 5]));
        assert!(Precedence::from_edges(3, &[(0, 1), (1, 2), (2, 0)]).is_err());
        let err = Precedence::from_edges(3, &[(0, 3)]).unwrap_err().to_string();
        assert!(err.contains("0 -> 3"), "{err}");
        assert!(Precedence::none(4).is_unconstrained());
        assert_eq!(p.as_chains(), Some(vec![vec![0, 1], vec![2], vec![3, 4, 5]]));
        let dag = Precedence::from_edges(4, &[(0, 2), (1, 2), (2, 3)]).unwrap();
        assert_eq!(dag.as_chains(), None);
        // Preferred order 3, 2, 1, 0 is repaired to the closest topological order.
        assert_eq!(dag.topological_by_priority(&[3, 2, 1, 0]), vec![1, 0, 2, 3]);
        assert_eq!(p.topological_by_priority(&[0, 1, 2, 3, 4, 5]), vec![0, 1, 2, 3, 4, 5]);
    }
}
