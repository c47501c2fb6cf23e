//! FIFO: Hadoop's default order. Jobs run by priority (higher first), then submission time, then
//! id; each job in turn takes all the slots it can use before the next gets any.

use std::cmp::Reverse;

use crate::model::{JobId, Phase, Time};
use crate::policy::rows::{phase_demands, JobRows};
use crate::policy::{Plan, PlanBuilder, PlanEntry, Policy, PoolMode, Pools, Snapshot};

/// FIFO's sort key: higher priority first, then submission time, then id.
type FifoKey = (Reverse<i32>, Time, JobId);

/// What FIFO keeps of a job between incremental plans: its key and per-phase demand.
#[derive(Clone, Copy, Debug)]
struct Row {
    key: FifoKey,
    demand: [u32; 2],
}

/// First in, first out, greedily.
///
/// Incremental re-plans ([`Snapshot::with_changes`], the engine's): the jobs' rows are kept
/// between plans and only changed jobs and arrivals are read; the order is re-sorted only when
/// jobs arrived or left (a key never changes); the grant walks compact rows and stops, per pool,
/// once the pool is full, so only the saturated prefix is visited.
#[derive(Debug, Default)]
pub struct Fifo {
    rows: JobRows<PoolMode, Row>,
    /// Positions in `rows` in FIFO order.
    order: Vec<u32>,
}

impl Fifo {
    /// The registry's constructor (Fifo has no keys of its own).
    pub fn from_config(_cfg: &crate::config::EngineConfig) -> crate::error::Result<Fifo> {
        Ok(Fifo::default())
    }

    /// The plan from the snapshot alone (no change list): one walk over every job state.
    fn plan_from_scratch(snapshot: &Snapshot<'_>) -> Plan {
        // One walk over the job states (the plan's memory traffic) reads the sort key and the
        // demand in every pool; sorting and granting then touch only these rows. The keys are
        // unique (the id is in them), so an unstable sort gives FIFO's one order, and it finds an
        // already-sorted input (the usual case: active ids are in submission order) in one pass.
        let pools = Pools::of(snapshot);
        let mut rows: Vec<(FifoKey, [u32; 2])> = snapshot
            .active_jobs()
            .map(|j| ((Reverse(j.spec.priority), j.spec.submit_ms, j.id), pools.demands(j)))
            .collect();
        rows.sort_unstable_by_key(|r| r.0);
        let mut builder = PlanBuilder::new(snapshot, rows.iter().map(|r| r.0 .2));
        for (k, pool) in pools.iter() {
            let mut left = pool.capacity;
            for &((_, _, id), demand) in &rows {
                let give = demand[k].min(left);
                builder.set_pool_target(id, pool, give);
                left -= give;
            }
        }
        builder.finish()
    }
}

impl Policy for Fifo {
    fn name(&self) -> &'static str {
        "fifo"
    }

    fn plan(&mut self, snapshot: &Snapshot<'_>) -> Plan {
        let read = |j: &crate::model::JobState| Row {
            key: (Reverse(j.spec.priority), j.spec.submit_ms, j.id),
            demand: phase_demands(j),
        };
        let Some(members_changed) = self.rows.sync(snapshot, snapshot.cluster.mode, read) else {
            return Self::plan_from_scratch(snapshot);
        };
        let rows = self.rows.rows();
        if members_changed || self.order.len() != rows.len() {
            self.order.clear();
            self.order.extend(0..rows.len() as u32);
            self.order.sort_unstable_by_key(|&i| rows[i as usize].key);
        }
        // Every active id once, all active (the incremental snapshot's promise): the entries are
        // exactly what `PlanBuilder` makes of this order.
        let mut entries: Vec<PlanEntry> = self
            .order
            .iter()
            .map(|&i| PlanEntry { job: rows[i as usize].key.2, target: [0, 0], predicted_completion_ms: None })
            .collect();
        for (_, pool) in Pools::of(snapshot).iter() {
            let mut left = pool.capacity;
            for (entry, &i) in entries.iter_mut().zip(&self.order) {
                // Behind a full pool every target stays 0, as the full walk would set it.
                if left == 0 {
                    break;
                }
                let demand = &rows[i as usize].demand;
                let give = pool.phases.iter().map(|ph| demand[ph.idx()]).sum::<u32>().min(left);
                entry.set_pool_target(pool, give, || demand[Phase::Map.idx()]);
                left -= give;
            }
        }
        Plan { computed_at: snapshot.now, entries, ..Plan::default() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{JobSpec, JobState, Phase};
    use crate::policy::{pool_demand, ClusterView, PoolMode};
    use proptest::prelude::*;

    /// FIFO as it was first written (a sort by looked-up keys, one walk per pool): the one-walk
    /// version must plan exactly the same.
    fn reference(snapshot: &Snapshot<'_>) -> Plan {
        let mut order: Vec<_> = snapshot.active.to_vec();
        order.sort_by_key(|&id| {
            let j = snapshot.job(id);
            (Reverse(j.spec.priority), j.spec.submit_ms, id)
        });
        let mut builder = PlanBuilder::new(snapshot, order.iter().copied());
        for pool in snapshot.cluster.pools() {
            let mut left = pool.capacity;
            for &id in &order {
                let give = pool_demand(snapshot.job(id), &pool).min(left);
                builder.set_pool_target(id, &pool, give);
                left -= give;
            }
        }
        builder.finish()
    }

    proptest! {
        #[test]
        fn plans_exactly_as_the_reference((cluster, jobs, active) in crate::baseline::testutil::snapshot_parts()) {
            let snap = Snapshot::new(7, cluster, &jobs, &active);
            prop_assert_eq!(Fifo::default().plan(&snap), reference(&snap));
        }
    }

    #[test]
    fn first_job_takes_what_it_can_use() {
        let mut late_high = JobSpec::new(5, 3, 0);
        late_high.priority = 1;
        let jobs = vec![
            JobState::new(JobId(0), JobSpec::new(0, 6, 0)),
            JobState::new(JobId(1), JobSpec::new(1, 6, 0)),
            JobState::new(JobId(2), late_high),
        ];
        let active = [JobId(0), JobId(1), JobId(2)];
        let cluster = ClusterView { map_slots: 10, reduce_slots: 2, mode: PoolMode::Split, nodes: 2 };
        let snap = Snapshot::new(10, cluster, &jobs, &active);
        let plan = Fifo::default().plan(&snap);
        let order: Vec<_> = plan.entries.iter().map(|e| (e.job.0, e.target[Phase::Map.idx()])).collect();
        assert_eq!(order, vec![(2, 3), (0, 6), (1, 1)]);
    }
}
