//! Sequencing rules for the minisum metrics the paper does not solve exactly: the number of tardy
//! jobs (Moore-Hodgson; exact when unweighted) and total tardiness (modified due date). Both
//! sequence independent items on the interim single machine of step 1 (digest §3.2); the minisum
//! SLA heuristic reuses the backwards rule of [`super::dp`]. See [`super::metrics`] for which
//! objective uses which rule and why.
//!
//! Items without a due date are never tardy: they are sequenced after the items the rule keeps on
//! time, together with the items it gives up on, in Smith order (weighted SPT, ties by index), so
//! the jobs that no longer count for the objective at least finish early on average.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use super::smith::{cmp_ratio, smith_order, SmithItem};

/// Max-heap entry for Moore-Hodgson: the on-time item to give up first (largest p/w, then the
/// larger p, then the newer index).
struct Worst {
    p: f64,
    w: f64,
    item: usize,
}
impl PartialEq for Worst {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Worst {}
impl PartialOrd for Worst {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Worst {
    fn cmp(&self, other: &Self) -> Ordering {
        cmp_ratio(self.p, self.w, other.p, other.w).then(self.p.total_cmp(&other.p)).then(self.item.cmp(&other.item))
    }
}

/// (Weighted) Moore-Hodgson for `1‖Σ w_j U_j`, starting at `start`. Optimal when all weights are
/// equal; with weights it drops the on-time item with the largest `p/w` (heuristic).
/// Returns the sequence: on-time items in EDD order, then the rest (see the module docs).
pub fn moore_hodgson(durations: &[f64], due: &[Option<f64>], weights: &[f64], start: f64) -> Vec<usize> {
    let n = durations.len();
    let mut edd: Vec<usize> = (0..n).filter(|&j| due[j].is_some()).collect();
    edd.sort_by(|&a, &b| due[a].unwrap_or(f64::INFINITY).total_cmp(&due[b].unwrap_or(f64::INFINITY)).then(a.cmp(&b)));
    let mut on_time = vec![false; n];
    let mut heap = BinaryHeap::with_capacity(edd.len());
    let mut t = start;
    for &j in &edd {
        on_time[j] = true;
        heap.push(Worst { p: durations[j], w: weights[j], item: j });
        t += durations[j];
        if t > due[j].unwrap_or(f64::INFINITY) {
            if let Some(worst) = heap.pop() {
                on_time[worst.item] = false;
                t -= worst.p;
            }
        }
    }
    finish(durations, weights, &edd, &on_time)
}

/// On-time items in `edd` order, then every other item in Smith order.
fn finish(durations: &[f64], weights: &[f64], edd: &[usize], on_time: &[bool]) -> Vec<usize> {
    let mut seq: Vec<usize> = edd.iter().copied().filter(|&j| on_time[j]).collect();
    let rest: Vec<usize> = (0..durations.len()).filter(|&j| !on_time[j]).collect();
    let items: Vec<SmithItem> = rest.iter().map(|&j| SmithItem { work: durations[j], weight: weights[j] }).collect();
    seq.extend(smith_order(&items).into_iter().map(|k| rest[k]));
    seq
}

/// Min-heap key helper: (key, tie, index) ascending.
#[derive(Clone, Copy, PartialEq)]
struct MinKey(f64, f64, usize);
impl Eq for MinKey {}
impl PartialOrd for MinKey {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for MinKey {
    fn cmp(&self, other: &Self) -> Ordering {
        // Inverted for BinaryHeap (a max-heap).
        other.0.total_cmp(&self.0).then(other.1.total_cmp(&self.1)).then(other.2.cmp(&self.2))
    }
}

/// Modified due date dispatching (Baker and Bertrand) for `1‖Σ T_j`, starting at `start`: the
/// next item is the one with the smallest `max(p_j, D_j − t)` (ties: smaller `p`, then lower index).
/// `O(n log n)`: items with `D_j − p_j <= t` ("critical") are ranked by `p_j`; the others by `D_j`.
/// Items without a due date follow in SPT order.
pub fn modified_due_date(durations: &[f64], due: &[Option<f64>], start: f64) -> Vec<usize> {
    let n = durations.len();
    // Not yet critical, by slack start D - p; and the same items by due date. Their keys never
    // change, so each is a list sorted once and read from the front (a binary heap popped in
    // `MinKey` order gives the same sequence: the order is strict, ties end at the index), cheaper
    // than a heap's pops at 100,000 items (docs/performance.md §17).
    let ascending = |a: &MinKey, b: &MinKey| b.cmp(a);
    let mut by_slack: Vec<MinKey> = Vec::new();
    let mut by_due: Vec<MinKey> = Vec::new();
    for j in 0..n {
        if let Some(d) = due[j] {
            by_slack.push(MinKey(d - durations[j], durations[j], j));
            by_due.push(MinKey(d, durations[j], j));
        }
    }
    by_slack.sort_unstable_by(ascending);
    by_due.sort_unstable_by(ascending);
    let count = by_due.len();
    let (mut next_slack, mut next_due) = (0usize, 0usize);
    let mut critical: BinaryHeap<MinKey> = BinaryHeap::new();
    let mut moved = vec![false; n];
    let mut t = start;
    let mut seq = Vec::with_capacity(n);
    let mut done = vec![false; n];
    while seq.len() < count {
        while let Some(&MinKey(slack, _, j)) = by_slack.get(next_slack) {
            if slack > t {
                break;
            }
            next_slack += 1;
            if moved[j] {
                continue; // already dispatched while it was not critical
            }
            moved[j] = true;
            critical.push(MinKey(durations[j], durations[j], j));
        }
        while by_due.get(next_due).is_some_and(|k| moved[k.2]) {
            next_due += 1;
        }
        let crit = critical.peek().map(|k| (k.0, k.1, k.2));
        let calm = by_due.get(next_due).map(|k| (k.0 - t, k.1, k.2));
        let pick = match (crit, calm) {
            (Some(c), Some(m)) => {
                if MinKey(c.0, c.1, c.2) >= MinKey(m.0, m.1, m.2) {
                    critical.pop();
                    c.2
                } else {
                    next_due += 1;
                    moved[m.2] = true;
                    m.2
                }
            }
            (Some(c), None) => {
                critical.pop();
                c.2
            }
            (None, Some(m)) => {
                next_due += 1;
                moved[m.2] = true;
                m.2
            }
            (None, None) => break,
        };
        done[pick] = true;
        seq.push(pick);
        t += durations[pick];
    }
    finish(durations, &vec![1.0; n], &seq, &done)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flex::testutil::permutations;
    use proptest::prelude::*;

    fn tardy(durations: &[f64], due: &[Option<f64>], w: &[f64], seq: &[usize]) -> f64 {
        let mut t = 0.0;
        let mut sum = 0.0;
        for &j in seq {
            t += durations[j];
            if due[j].is_some_and(|d| t > d) {
                sum += w[j];
            }
        }
        sum
    }

    fn tardiness(durations: &[f64], due: &[Option<f64>], seq: &[usize]) -> f64 {
        let mut t = 0.0;
        let mut sum = 0.0;
        for &j in seq {
            t += durations[j];
            sum += due[j].map_or(0.0, |d| (t - d).max(0.0));
        }
        sum
    }

    #[test]
    fn moore_hodgson_textbook_instance() {
        // p = [2,3,4,5], D = [3,5,7,8]: EDD misses; MH drops job 2 (p = 4) and job 3 -> 2 tardy? No:
        // on time {0,1} then adding 2 (t=9 > 7) drops 2; adding 3 (t=10 > 8) drops 3: 2 tardy.
        let p = [2.0, 3.0, 4.0, 5.0];
        let d = [Some(3.0), Some(5.0), Some(7.0), Some(8.0)];
        let w = [1.0; 4];
        let seq = moore_hodgson(&p, &d, &w, 0.0);
        assert_eq!(seq, vec![0, 1, 2, 3]);
        assert_eq!(tardy(&p, &d, &w, &seq), 2.0);
        // A job without a deadline goes after the on-time ones.
        let d2 = [None, Some(3.0), Some(4.0), None];
        let seq = moore_hodgson(&p, &d2, &w, 0.0);
        assert_eq!(seq[0], 1);
        assert_eq!(tardy(&p, &d2, &w, &seq), 1.0);
    }

    #[test]
    fn mdd_prefers_critical_short_jobs() {
        let p = [4.0, 1.0, 2.0];
        let d = [Some(5.0), Some(20.0), Some(3.0)];
        let seq = modified_due_date(&p, &d, 0.0);
        assert_eq!(seq, vec![2, 0, 1]);
        assert_eq!(tardiness(&p, &d, &seq), 1.0);
        assert_eq!(modified_due_date(&p, &[None, Some(1.0), None], 0.0), vec![1, 2, 0]);
    }

    /// [`modified_due_date`] as it was with binary heaps for its two fixed orders, kept to pin the
    /// sorted lists to it.
    fn modified_due_date_heaps(durations: &[f64], due: &[Option<f64>], start: f64) -> Vec<usize> {
        let n = durations.len();
        // Not yet critical, by slack start D - p; and the same items by due date.
        let mut by_slack: BinaryHeap<MinKey> = BinaryHeap::new();
        let mut by_due: BinaryHeap<MinKey> = BinaryHeap::new();
        let mut critical: BinaryHeap<MinKey> = BinaryHeap::new();
        let mut moved = vec![false; n];
        let mut count = 0usize;
        for j in 0..n {
            if let Some(d) = due[j] {
                by_slack.push(MinKey(d - durations[j], durations[j], j));
                by_due.push(MinKey(d, durations[j], j));
                count += 1;
            }
        }
        let mut t = start;
        let mut seq = Vec::with_capacity(n);
        let mut done = vec![false; n];
        while seq.len() < count {
            while let Some(&MinKey(slack, _, j)) = by_slack.peek() {
                if slack > t {
                    break;
                }
                by_slack.pop();
                if moved[j] {
                    continue; // already dispatched while it was not critical
                }
                moved[j] = true;
                critical.push(MinKey(durations[j], durations[j], j));
            }
            while by_due.peek().is_some_and(|k| moved[k.2]) {
                by_due.pop();
            }
            let crit = critical.peek().map(|k| (k.0, k.1, k.2));
            let calm = by_due.peek().map(|k| (k.0 - t, k.1, k.2));
            let pick = match (crit, calm) {
                (Some(c), Some(m)) => {
                    if MinKey(c.0, c.1, c.2) >= MinKey(m.0, m.1, m.2) {
                        critical.pop();
                        c.2
                    } else {
                        by_due.pop();
                        moved[m.2] = true;
                        m.2
                    }
                }
                (Some(c), None) => {
                    critical.pop();
                    c.2
                }
                (None, Some(m)) => {
                    by_due.pop();
                    moved[m.2] = true;
                    m.2
                }
                (None, None) => break,
            };
            done[pick] = true;
            seq.push(pick);
            t += durations[pick];
        }
        finish(durations, &vec![1.0; n], &seq, &done)
    }

    proptest! {
        /// The sorted lists give the heaps' sequence exactly: few distinct durations and due dates
        /// (ties of keys, broken by index), items without a due date, any start.
        #[test]
        fn mdd_sorted_lists_equal_the_heaps(
            jobs in prop::collection::vec((0u32..6, prop::option::of(0u32..12)), 0..300),
            start in 0u32..40,
        ) {
            let p: Vec<f64> = jobs.iter().map(|j| [0.0, 1.0, 2.5, 4.0, 7.0, 0.5][j.0 as usize]).collect();
            let d: Vec<Option<f64>> = jobs.iter().map(|j| j.1.map(|x| x as f64 * 3.0)).collect();
            let start = start as f64;
            prop_assert_eq!(modified_due_date(&p, &d, start), modified_due_date_heaps(&p, &d, start));
        }

        /// Unweighted Moore-Hodgson is optimal for the number of tardy jobs (brute force, <= 7).
        #[test]
        fn moore_hodgson_is_optimal_unweighted(
            jobs in prop::collection::vec((1u32..10, prop::option::of(1u32..40)), 1..8),
        ) {
            let p: Vec<f64> = jobs.iter().map(|j| j.0 as f64).collect();
            let d: Vec<Option<f64>> = jobs.iter().map(|j| j.1.map(f64::from)).collect();
            let w = vec![1.0; p.len()];
            let seq = moore_hodgson(&p, &d, &w, 0.0);
            let best = permutations(p.len()).iter().map(|o| tardy(&p, &d, &w, o)).fold(f64::INFINITY, f64::min);
            prop_assert_eq!(tardy(&p, &d, &w, &seq), best);
        }

        /// The heuristics always return a permutation.
        #[test]
        fn heuristics_return_permutations(
            jobs in prop::collection::vec((0u32..10, prop::option::of(0u32..40), 1u32..5), 0..40),
        ) {
            let p: Vec<f64> = jobs.iter().map(|j| j.0 as f64).collect();
            let d: Vec<Option<f64>> = jobs.iter().map(|j| j.1.map(f64::from)).collect();
            let w: Vec<f64> = jobs.iter().map(|j| j.2 as f64).collect();
            for mut seq in [moore_hodgson(&p, &d, &w, 0.0), modified_due_date(&p, &d, 0.0)] {
                seq.sort_unstable();
                prop_assert_eq!(seq, (0..p.len()).collect::<Vec<_>>());
            }
        }
    }
}
