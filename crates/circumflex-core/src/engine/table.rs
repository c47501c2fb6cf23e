//! The engine's job table: per-job state by dense id, with retirement.
//!
//! Ids are assigned densely and monotonically at submission and never reused, so the table is a
//! window `[base, next)` over a deque of boxed slots: a lookup is one subtraction and one index.
//! Retiring a job frees its box (the slot keeps `None`, 8 bytes) and pops the front of the window
//! while it is empty, so a table whose jobs all end is as small as its live jobs.
//!
//! **A long-running job pinning the front** would otherwise keep one empty slot per job submitted
//! after it. When the window holds more than `2 * live + WINDOW_SLACK` slots, live jobs at its front
//! move to a small ordered map (`stragglers`) and the window's front advances past them, so memory
//! stays `O(live jobs)` whatever the pattern; lookups of stragglers are `O(log s)`.

use std::collections::{BTreeMap, VecDeque};

use crate::model::JobId;

/// Empty slots the window may hold beyond twice its live entries before stragglers move out.
const WINDOW_SLACK: usize = 1024;

/// Per-job entries of type `T` by [`JobId`], with retirement (module docs).
#[derive(Debug)]
pub(crate) struct JobTable<T> {
    /// Id of `window[0]`.
    base: u32,
    window: VecDeque<Option<Box<T>>>,
    /// Live entries in `window`.
    window_live: usize,
    /// Live entries older than `base`.
    stragglers: BTreeMap<u32, Box<T>>,
    /// The next id to assign.
    next: u32,
}

impl<T> Default for JobTable<T> {
    fn default() -> Self {
        JobTable { base: 0, window: VecDeque::new(), window_live: 0, stragglers: BTreeMap::new(), next: 0 }
    }
}

impl<T> JobTable<T> {
    /// The id the next [`JobTable::push`] assigns, or `None` when ids are exhausted.
    pub(crate) fn next_id(&self) -> Option<JobId> {
        (self.next < u32::MAX).then_some(JobId(self.next))
    }

    /// Adds an entry under [`JobTable::next_id`] (the caller checked it exists).
    pub(crate) fn push(&mut self, entry: T) -> JobId {
        let id = JobId(self.next);
        if self.window.is_empty() {
            self.base = self.next;
        }
        self.window.push_back(Some(Box::new(entry)));
        self.window_live += 1;
        self.next += 1;
        id
    }

    /// Live entries.
    pub(crate) fn len(&self) -> usize {
        self.window_live + self.stragglers.len()
    }

    /// Whether `id` was assigned and its entry has been retired.
    pub(crate) fn is_retired(&self, id: JobId) -> bool {
        id.0 < self.next && self.get(id).is_none()
    }

    /// The live entry of `id`; `None` for retired and never-assigned ids.
    #[inline]
    pub(crate) fn get(&self, id: JobId) -> Option<&T> {
        match id.0.checked_sub(self.base) {
            Some(offset) => self.window.get(offset as usize)?.as_deref(),
            None => self.stragglers.get(&id.0).map(|b| &**b),
        }
    }

    /// The live entry of `id`, mutably.
    #[inline]
    pub(crate) fn get_mut(&mut self, id: JobId) -> Option<&mut T> {
        match id.0.checked_sub(self.base) {
            Some(offset) => self.window.get_mut(offset as usize)?.as_deref_mut(),
            None => self.stragglers.get_mut(&id.0).map(|b| &mut **b),
        }
    }

    /// Frees the entry of `id` and returns it; `None` if it was not live.
    pub(crate) fn retire(&mut self, id: JobId) -> Option<Box<T>> {
        let entry = match id.0.checked_sub(self.base) {
            Some(offset) => {
                let entry = self.window.get_mut(offset as usize)?.take()?;
                self.window_live -= 1;
                entry
            }
            None => self.stragglers.remove(&id.0)?,
        };
        self.compact();
        Some(entry)
    }

    /// Pops empty slots off the front; moves live front entries to `stragglers` while the window
    /// is mostly empty (module docs).
    fn compact(&mut self) {
        loop {
            match self.window.front() {
                Some(None) => {
                    self.window.pop_front();
                    self.base += 1;
                }
                Some(Some(_)) if self.window.len() > 2 * self.window_live + WINDOW_SLACK => {
                    if let Some(Some(entry)) = self.window.pop_front() {
                        self.stragglers.insert(self.base, entry);
                        self.window_live -= 1;
                    }
                    self.base += 1;
                }
                _ => break,
            }
        }
        if self.window.is_empty() {
            self.base = self.next;
        }
        // A burst of live jobs grew the deque; give the memory back once it is mostly unused.
        if self.window.capacity() > 4 * self.window.len() + 4 * WINDOW_SLACK {
            self.window.shrink_to(2 * self.window.len() + WINDOW_SLACK);
        }
    }

    /// Live entries in id order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &T> + '_ {
        self.stragglers.values().map(|b| &**b).chain(self.window.iter().filter_map(|s| s.as_deref()))
    }

    /// Slots the table holds (window slots, live or empty, and stragglers), for tests.
    #[cfg(test)]
    fn slot_count(&self) -> usize {
        self.window.len() + self.stragglers.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn retired_and_unknown_ids_resolve_to_none() {
        let mut t = JobTable::default();
        let a = t.push("a");
        let b = t.push("b");
        assert_eq!(t.get(a), Some(&"a"));
        assert_eq!(*t.retire(a).unwrap(), "a");
        assert_eq!(t.get(a), None);
        assert!(t.is_retired(a));
        assert!(!t.is_retired(b));
        assert!(!t.is_retired(JobId(7)), "never assigned");
        assert_eq!(t.get(JobId(7)), None);
        assert!(t.retire(a).is_none(), "retiring twice is a no-op");
        assert_eq!(t.len(), 1);
    }

    #[test]
    fn a_pinned_front_keeps_memory_bounded_by_live_jobs() {
        let mut t = JobTable::default();
        let pinned = t.push(0u64);
        for k in 0..100_000u64 {
            let id = t.push(k);
            t.retire(id);
        }
        assert_eq!(t.len(), 1);
        assert!(t.slot_count() <= 2 + WINDOW_SLACK, "{} slots for one live job", t.slot_count());
        assert_eq!(t.get(pinned), Some(&0));
        assert_eq!(*t.retire(pinned).unwrap(), 0);
        assert_eq!(t.slot_count(), 0);
        let next = t.push(5);
        assert_eq!(next, JobId(100_001));
        assert_eq!(t.get(next), Some(&5));
    }

    proptest! {
        /// Against a model map: every live id resolves to its entry, every other id to none, the
        /// iteration is in id order, and the slots stay within twice the live count plus the slack.
        #[test]
        fn behaves_like_a_map(ops in proptest::collection::vec((any::<bool>(), any::<u16>()), 1..3000)) {
            let mut t = JobTable::default();
            let mut model: BTreeMap<u32, u32> = BTreeMap::new();
            for (push, pick) in ops {
                if push || model.is_empty() {
                    let id = t.push(t.next.wrapping_mul(3));
                    model.insert(id.0, id.0.wrapping_mul(3));
                } else {
                    let keys: Vec<u32> = model.keys().copied().collect();
                    let id = keys[pick as usize % keys.len()];
                    prop_assert_eq!(t.retire(JobId(id)).map(|b| *b), model.remove(&id));
                }
                prop_assert!(t.slot_count() <= 2 * t.len() + WINDOW_SLACK + 1);
            }
            prop_assert_eq!(t.len(), model.len());
            for id in 0..t.next {
                prop_assert_eq!(t.get(JobId(id)).copied(), model.get(&id).copied());
            }
            prop_assert_eq!(t.iter().copied().collect::<Vec<_>>(), model.values().copied().collect::<Vec<_>>());
        }
    }
}
