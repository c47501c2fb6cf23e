//! Compact per-job rows a policy keeps between plans, so an incremental re-plan
//! ([`Snapshot::with_changes`]) reads only the job states that changed and the arrivals instead of
//! walking every large `JobState` (`docs/performance.md` §7). FIFO and Fair keep their sort keys
//! and demands here, FLEX its items.
//!
//! A row must be a pure function of its job's state and of the context the caller passes (what
//! else the row depends on, e.g. the pool capacities), so a plan computed from the rows is exactly
//! the plan computed from the snapshot (each user's tests compare the two over random sequences
//! of snapshots).

use crate::model::{JobId, JobState, Phase};
use crate::policy::Snapshot;

/// Rows `R` for the active jobs of the last incremental snapshot, in `snapshot.active` order,
/// read under context `K`.
#[derive(Clone, Debug)]
pub struct JobRows<K, R> {
    /// The context the rows were read under (`None`: nothing kept).
    context: Option<K>,
    /// The active ids the rows belong to, strictly increasing.
    ids: Vec<JobId>,
    rows: Vec<R>,
    /// The buffer of the previous merge, empty, reused by the next one.
    spare: Vec<R>,
}

impl<K, R> Default for JobRows<K, R> {
    fn default() -> Self {
        JobRows { context: None, ids: Vec::new(), rows: Vec::new(), spare: Vec::new() }
    }
}

impl<K: PartialEq, R: Clone> JobRows<K, R> {
    /// Brings the rows in line with `snapshot` and returns whether the set of jobs changed
    /// (arrivals or departures), or `None` when the snapshot does not allow an incremental update:
    /// it carries no change list, or its active ids are not strictly increasing (the engine's
    /// always are: ids are assigned in submission order). Every row is read again when `context`
    /// differs from the last one. `read` derives a job's row.
    pub fn sync(&mut self, snapshot: &Snapshot<'_>, context: K, mut read: impl FnMut(&JobState) -> R) -> Option<bool> {
        let changed = snapshot.changes()?;
        let active = snapshot.active;
        if !active.windows(2).all(|w| w[0] < w[1]) {
            return None;
        }
        if self.context.as_ref() != Some(&context) {
            self.context = Some(context);
            self.ids.clear();
            self.ids.extend_from_slice(active);
            self.rows.clear();
            self.rows.extend(active.iter().map(|&id| read(snapshot.job(id))));
            return Some(true);
        }
        let members_changed = self.ids != active;
        if members_changed && self.arrivals_follow_survivors(active) {
            // The engine's case (ids are assigned in submission order, so arrivals come last): the
            // survivors' rows are compacted in place (departures removed, nothing cloned or moved
            // before the first departure) and the arrivals read onto the end.
            let JobRows { ids, rows, .. } = self;
            let (mut at, mut k) = (0, 0);
            rows.retain(|_| {
                let id = ids[at];
                at += 1;
                while k < active.len() && active[k] < id {
                    k += 1;
                }
                k < active.len() && active[k] == id
            });
            let kept = rows.len();
            rows.extend(active[kept..].iter().map(|&id| read(snapshot.job(id))));
            self.ids.clear();
            self.ids.extend_from_slice(active);
        } else if members_changed {
            // Both id lists are increasing: one merge keeps the survivors' rows and reads arrivals,
            // into the spare buffer kept from the last merge (no allocation once it has grown).
            let mut rows = std::mem::take(&mut self.spare);
            rows.clear();
            rows.reserve(active.len());
            let mut j = 0;
            for &id in active {
                while j < self.ids.len() && self.ids[j] < id {
                    j += 1;
                }
                if j < self.ids.len() && self.ids[j] == id {
                    rows.push(self.rows[j].clone());
                    j += 1;
                } else {
                    rows.push(read(snapshot.job(id)));
                }
            }
            self.spare = std::mem::replace(&mut self.rows, rows);
            self.ids.clear();
            self.ids.extend_from_slice(active);
        }
        for &id in changed {
            if let Ok(p) = self.ids.binary_search(&id) {
                self.rows[p] = read(snapshot.job(id));
            }
        }
        Some(members_changed)
    }

    /// Whether every id of `active` missing from the kept ids (an arrival) comes after every kept id
    /// that is still in `active` (a survivor): then the new rows are the survivors' in order, then the
    /// arrivals'. Both lists increase; a walk over the ids, no row touched.
    fn arrivals_follow_survivors(&self, active: &[JobId]) -> bool {
        let mut j = 0;
        let mut arrived = false;
        for &id in active {
            while j < self.ids.len() && self.ids[j] < id {
                j += 1;
            }
            let survives = j < self.ids.len() && self.ids[j] == id;
            if survives && arrived {
                return false;
            }
            arrived |= !survives;
        }
        true
    }

    /// The rows, in `snapshot.active` order of the last [`JobRows::sync`].
    pub fn rows(&self) -> &[R] {
        &self.rows
    }

    /// The ids of [`JobRows::rows`], row by row.
    pub fn ids(&self) -> &[JobId] {
        &self.ids
    }
}

/// Slots a job could use per phase right now, indexed by [`Phase::idx`]: running plus runnable
/// pending tasks (a pool's demand, [`crate::policy::pool_demand`], is the sum over its phases).
pub fn phase_demands(job: &JobState) -> [u32; 2] {
    Phase::ALL.map(|ph| {
        let p = job.phase(ph);
        p.running + if job.runnable(ph) { p.pending } else { 0 }
    })
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use crate::baseline::{fair::Fair, fifo::Fifo};
    use crate::model::{JobId, JobSpec, JobState, JobStatus, Phase};
    use crate::policy::{ClusterView, Policy, PoolMode, Snapshot};

    /// One step between two plans.
    #[derive(Clone, Debug)]
    enum Step {
        /// A job arrives: (priority, submit back in s, maps, reduces, min slots, max slots, weight).
        Arrive(i32, i64, u32, u32, u32, Option<u32>, u32),
        /// The `pick`-th active job ends.
        Leave(usize),
        /// The `pick`-th active job starts (`true`) or finishes a task of `phase`.
        Task(usize, bool, bool),
        /// The cluster's map capacity becomes `n` (a node joins or leaves).
        Capacity(u32),
    }

    fn step() -> impl Strategy<Value = Step> {
        prop_oneof![
            (0i32..3, 0i64..20, 0u32..10, 0u32..5, 0u32..4, prop::option::of(1u32..8), 1u32..4)
                .prop_map(|(p, s, m, r, min, max, w)| Step::Arrive(p, s, m, r, min, max, w)),
            (0usize..64).prop_map(Step::Leave),
            (0usize..64, any::<bool>(), any::<bool>()).prop_map(|(k, start, map)| Step::Task(k, start, map)),
            (0usize..64, any::<bool>(), any::<bool>()).prop_map(|(k, start, map)| Step::Task(k, start, map)),
            (0u32..30).prop_map(Step::Capacity),
        ]
    }

    proptest! {
        /// The rows after any sequence of active sets (arrivals after the survivors, the engine's
        /// case kept in place, and arrivals between survivors, merged) and changed jobs are the rows
        /// read afresh from each snapshot.
        #[test]
        fn rows_equal_rows_read_afresh(
            sets in prop::collection::vec((prop::collection::btree_set(0u32..40, 0..25), prop::collection::vec(0u32..40, 0..6)), 1..30),
        ) {
            use super::JobRows;
            let mut jobs: Vec<JobState> = (0..40).map(|i| JobState::new(JobId(i), JobSpec::new(0, 50, 0))).collect();
            let cluster = ClusterView { map_slots: 8, reduce_slots: 0, mode: PoolMode::Split, nodes: 1 };
            let read = |j: &JobState| (j.id, j.phases[0].finished);
            let mut rows: JobRows<u32, (JobId, u32)> = JobRows::default();
            for (active, touched) in sets {
                let active: Vec<JobId> = active.into_iter().map(JobId).collect();
                let mut changed = Vec::new();
                for id in touched {
                    jobs[id as usize].phases[0].finished += 1;
                    changed.push(JobId(id));
                }
                let snap = Snapshot::new(0, cluster, &jobs, &active).with_changes(&changed);
                prop_assert!(rows.sync(&snap, 0, read).is_some());
                let fresh: Vec<(JobId, u32)> = active.iter().map(|&id| read(&jobs[id.0 as usize])).collect();
                prop_assert_eq!(rows.rows(), fresh.as_slice());
                prop_assert_eq!(rows.ids(), active.as_slice());
            }
        }

        /// FIFO and Fair fed incremental snapshots (the change list of each step) plan exactly
        /// as a fresh policy does from the snapshot alone, after every step: arrivals (with
        /// priorities, so a newcomer may go first), departures, task starts and ends that change
        /// demands and make reduces runnable, and capacity changes.
        #[test]
        fn incremental_plans_equal_plans_from_scratch(
            shared in any::<bool>(),
            reduce_slots in 0u32..10,
            steps in prop::collection::vec(prop::collection::vec(step(), 0..6), 1..40),
        ) {
            let mode = if shared { PoolMode::Shared } else { PoolMode::Split };
            let mut cluster = ClusterView { map_slots: 8, reduce_slots, mode, nodes: 1 };
            let mut jobs: Vec<JobState> = Vec::new();
            let mut active: Vec<JobId> = Vec::new();
            let (mut fifo, mut fair) = (Fifo::default(), Fair::default());
            for (t, batch) in steps.into_iter().enumerate() {
                let now = 100_000 + t as i64 * 1000;
                let mut changed: Vec<JobId> = Vec::new();
                for s in batch {
                    match s {
                        Step::Arrive(priority, back, maps, reduces, min, max, weight) => {
                            let mut spec = JobSpec::new(now - back * 1000, maps, reduces);
                            spec.priority = priority;
                            spec.min_slots = min;
                            spec.max_slots = max;
                            spec.weight = weight as f64;
                            let id = JobId(jobs.len() as u32);
                            jobs.push(JobState::new(id, spec));
                            active.push(id);
                        }
                        Step::Leave(k) if !active.is_empty() => {
                            let id = active.remove(k % active.len());
                            jobs[id.0 as usize].status = JobStatus::Finished;
                            // A departed job may still be listed as changed: it must be ignored.
                            changed.push(id);
                        }
                        Step::Task(k, start, map) if !active.is_empty() => {
                            let id = active[k % active.len()];
                            let phase = if map { Phase::Map } else { Phase::Reduce };
                            let p = &mut jobs[id.0 as usize].phases[phase.idx()];
                            if start && p.pending > 0 {
                                p.pending -= 1;
                                p.running += 1;
                            } else if !start && p.running > 0 {
                                p.running -= 1;
                                p.finished += 1;
                            }
                            changed.push(id);
                        }
                        Step::Capacity(n) => cluster.map_slots = n,
                        _ => {}
                    }
                }
                let plain = Snapshot::new(now, cluster, &jobs, &active);
                let incremental = plain.with_changes(&changed);
                prop_assert_eq!(fifo.plan(&incremental), Fifo::default().plan(&plain), "fifo, step {}", t);
                prop_assert_eq!(fair.plan(&incremental), Fair::default().plan(&plain), "fair, step {}", t);
            }
        }
    }
}
