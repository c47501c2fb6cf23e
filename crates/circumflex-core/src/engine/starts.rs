//! Start times of one (job, phase)'s running tasks: a multiset (time → count) kept as a sorted
//! vector of runs.
//!
//! Every task start and end of a run updates one of these (a whole day of 16.5 million tasks does
//! it 33 million times), and a host reports starts at a clock that only moves forward, so a start
//! is almost always an append at the end. A removal finds its run by a binary search over
//! contiguous memory and only decrements its count: a run whose count reaches 0 stays in place,
//! dead, until the dead runs outnumber the live ones, when one pass drops them (amortised `O(1)`
//! per removal, memory `O(live runs)`). This replaced a `BTreeMap<Time, u32>` with the same
//! answers (`docs/performance.md` §18; the property test below pins it to that map).

use crate::model::Time;

/// A multiset of start times.
#[derive(Debug, Default)]
pub(crate) struct Starts {
    /// `(start time, count)`, strictly increasing in time; a count of 0 is a dead run, skipped.
    /// The last run is live whenever the vector is not empty.
    runs: Vec<(Time, u32)>,
    /// Every run before `head` is dead; `runs[head]` is live when any run is.
    head: usize,
    /// Live runs (count > 0).
    live: usize,
}

impl Starts {
    /// Adds a start at `at`.
    pub(crate) fn add(&mut self, at: Time) {
        match self.runs.last_mut() {
            None => {
                self.runs.push((at, 1));
                self.head = 0;
                self.live = 1;
                return;
            }
            // The last run is always live.
            Some(last) if last.0 == at => {
                last.1 += 1;
                return;
            }
            Some(last) if last.0 < at => {
                self.runs.push((at, 1));
                self.live += 1;
                return;
            }
            Some(_) => {}
        }
        let pos = self.runs.partition_point(|r| r.0 < at);
        match self.runs.get_mut(pos) {
            Some(r) if r.0 == at => {
                if r.1 == 0 {
                    self.live += 1;
                }
                r.1 += 1;
            }
            _ => {
                self.runs.insert(pos, (at, 1));
                self.live += 1;
                if pos < self.head {
                    // The runs from the old head on moved up by one; the new one is the first live.
                    self.head = pos;
                    return;
                }
            }
        }
        self.head = self.head.min(pos);
    }

    /// Removes the start of a task that began at `at` (as the host computes it from the duration it
    /// reports): that entry if present, else the nearest one (the earlier one on a tie), so a host
    /// whose clocks disagree by a few ms never leaves stale starts behind.
    pub(crate) fn remove_near(&mut self, at: Time) {
        if self.live == 0 {
            return;
        }
        // The runs before `at` end at `lt`, those at or before it at `le` (times are distinct): the
        // nearest live run below is among the first, the nearest live one above among the rest.
        // Tasks mostly end in the order they started, so the search gallops from the oldest run.
        let lt = self.head + gallop_before(&self.runs[self.head..], at);
        let le = if self.runs.get(lt).is_some_and(|r| r.0 == at) { lt + 1 } else { lt };
        let below = (self.head..le).rev().find(|&i| self.runs[i].1 > 0);
        let above = (lt..self.runs.len()).find(|&i| self.runs[i].1 > 0);
        let i = match (below, above) {
            (Some(b), Some(a)) => {
                if at - self.runs[b].0 <= self.runs[a].0 - at {
                    b
                } else {
                    a
                }
            }
            (Some(k), None) | (None, Some(k)) => k,
            (None, None) => return,
        };
        self.runs[i].1 -= 1;
        if self.runs[i].1 > 0 {
            return;
        }
        self.live -= 1;
        if self.live == 0 {
            self.runs.clear();
            self.head = 0;
            return;
        }
        while self.runs.last().is_some_and(|r| r.1 == 0) {
            self.runs.pop();
        }
        while self.runs[self.head].1 == 0 {
            self.head += 1;
        }
        let dead = self.runs.len() - self.live;
        if dead > 2 * self.live + 32 {
            self.runs.retain(|r| r.1 > 0);
            self.head = 0;
        }
    }

    /// Start time of the oldest running task (the age floor of the estimate, `engine/estimate.rs`).
    pub(crate) fn oldest(&self) -> Option<Time> {
        (self.live > 0).then(|| self.runs[self.head].0)
    }

    /// Start times, youngest first.
    pub(crate) fn youngest_first(&self) -> impl Iterator<Item = Time> + '_ {
        self.runs[self.head.min(self.runs.len())..]
            .iter()
            .rev()
            .flat_map(|&(t, c)| std::iter::repeat(t).take(c as usize))
    }
}

/// The number of runs before `at` (`runs` is increasing in time): the doubling probes 1, 2, 4, ...
/// from the front, then a binary search inside the last step, so a run near the front costs a few
/// reads of memory the last removal touched.
fn gallop_before(runs: &[(Time, u32)], at: Time) -> usize {
    let mut end = 1;
    while end <= runs.len() && runs[end - 1].0 < at {
        end *= 2;
    }
    // Every run before index `end / 2` is before `at`; from `end - 1` on (if any) none is.
    let lo = end / 2;
    let hi = end.min(runs.len());
    lo + runs[lo..hi].partition_point(|r| r.0 < at)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use proptest::prelude::*;

    use super::*;

    /// The structure this one replaced, as it was.
    #[derive(Default)]
    struct Reference(BTreeMap<Time, u32>);

    impl Reference {
        fn add(&mut self, at: Time) {
            *self.0.entry(at).or_insert(0) += 1;
        }

        fn remove_near(&mut self, at: Time) {
            let below = self.0.range(..=at).next_back().map(|(&t, _)| t);
            let above = self.0.range(at..).next().map(|(&t, _)| t);
            let key = match (below, above) {
                (Some(b), Some(a)) => {
                    if at - b <= a - at {
                        b
                    } else {
                        a
                    }
                }
                (Some(k), None) | (None, Some(k)) => k,
                (None, None) => return,
            };
            if let Some(c) = self.0.get_mut(&key) {
                *c -= 1;
                if *c == 0 {
                    self.0.remove(&key);
                }
            }
        }

        fn oldest(&self) -> Option<Time> {
            self.0.keys().next().copied()
        }

        fn youngest_first(&self) -> Vec<Time> {
            self.0.iter().rev().flat_map(|(&t, &c)| std::iter::repeat(t).take(c as usize)).collect()
        }
    }

    #[test]
    fn removes_the_nearest_entry_and_ties_go_to_the_earlier() {
        let mut s = Starts::default();
        for t in [10, 10, 20, 30] {
            s.add(t);
        }
        s.remove_near(25); // 20 and 30 are as near: the earlier goes
        assert_eq!(s.youngest_first().collect::<Vec<_>>(), vec![30, 10, 10]);
        s.remove_near(10);
        s.remove_near(-100);
        assert_eq!((s.oldest(), s.youngest_first().collect::<Vec<_>>()), (Some(30), vec![30]));
        s.remove_near(1_000);
        assert_eq!((s.oldest(), s.youngest_first().count()), (None, 0));
        s.remove_near(1); // empty: nothing to remove
        s.add(5);
        assert_eq!(s.oldest(), Some(5));
    }

    proptest! {
        #[test]
        fn galloping_counts_the_runs_before(times in proptest::collection::btree_set(-50i64..50, 0..40), at in -60i64..60) {
            let runs: Vec<(Time, u32)> = times.iter().map(|&t| (t, 1)).collect();
            prop_assert_eq!(gallop_before(&runs, at), runs.partition_point(|r| r.0 < at));
        }
    }

    #[derive(Clone, Debug)]
    enum Op {
        Add(Time),
        Remove(Time),
    }

    fn op() -> impl Strategy<Value = Op> {
        // Mostly forward-moving clocks with exact removals (the simulator), but any order and any
        // nearby instant too (a host whose clocks disagree), over a narrow range so times repeat.
        prop_oneof![
            3 => (0i64..200).prop_map(Op::Add),
            3 => (0i64..200).prop_map(Op::Remove),
            1 => (-20i64..220).prop_map(Op::Remove),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        /// Every answer equals the `BTreeMap` multiset's after every operation.
        #[test]
        fn equals_the_btree_multiset(ops in proptest::collection::vec(op(), 0..400), forward in any::<bool>()) {
            let mut s = Starts::default();
            let mut r = Reference::default();
            let mut clock = 0;
            for o in ops {
                match o {
                    Op::Add(t) => {
                        // Half the cases add at a clock that never goes back, as the simulator does.
                        let t = if forward { clock = clock.max(t); clock } else { t };
                        s.add(t);
                        r.add(t);
                    }
                    Op::Remove(t) => {
                        s.remove_near(t);
                        r.remove_near(t);
                    }
                }
                prop_assert_eq!(s.oldest(), r.oldest());
                prop_assert_eq!(s.youngest_first().collect::<Vec<_>>(), r.youngest_first());
                prop_assert!(s.runs.len() <= 3 * s.live + 32, "dead runs are dropped");
            }
        }
    }
}
