//! ASRPT as a live policy behind the Hadoop shims (`circumflex.policy = asrpt`).
//!
//! The slot model's Algorithm 1 ([`super::slot`]) translated to the engine's snapshot:
//! - A job's **available workload** is its total remaining work, Map plus Reduce, in slot-ms
//!   (the engine's estimate: observed task durations once tasks finish). Jobs are ranked by it,
//!   ascending (ties: submission time, then id). This is the plan's priority order.
//! - The **virtual SRPT** is re-rooted at the current state each epoch: jobs in that order take
//!   capacity greedily up to their parallelism (runnable Maps plus all unfinished Reduces, ignoring
//!   the Map→Reduce dependency), Map tasks first within a job; its Map share is `MapLoad`.
//!   Decision: the paper's SRPT lives in its own virtual world across slots; re-rooting it at
//!   the real state every epoch keeps the policy a pure function of the snapshot, and coincides
//!   with the paper's SRPT whenever ASRPT has kept pace with it (ASRPT's Maps are never behind
//!   SRPT's in the preemptive model).
//! - Targets follow the three phases: (1) Maps that SRPT runs, (2) available Reduces (the job's
//!   Maps are done, or slow start says so), (3) remaining Maps, each phase in ASRPT order.
//! - Split pools (MRv1): the map pool takes phases 1 and 3 and the reduce pool phase 2; SRPT's
//!   Map share is computed over the map pool. Shared pools (YARN): all three phases share it.
//!
//! Hadoop never splits a running reducer, so behind the shims ASRPT is the non-preemptive variant:
//! the engine never preempts, and a target below the running count only stops new launches.

use circumflex_core::config::EngineConfig;
use circumflex_core::error::Result;
use circumflex_core::model::{JobId, JobState, Phase};
use circumflex_core::policy::{Plan, PlanBuilder, Policy, Pool, Snapshot};

/// Live ASRPT.
#[derive(Debug, Default)]
pub struct AsrptPolicy;

impl AsrptPolicy {
    /// The registry's constructor (ASRPT has no keys of its own).
    pub fn from_config(_cfg: &EngineConfig) -> Result<AsrptPolicy> {
        Ok(AsrptPolicy)
    }
}

fn demand(job: &JobState, phase: Phase) -> u32 {
    let p = job.phase(phase);
    p.running + if job.runnable(phase) { p.pending } else { 0 }
}

impl Policy for AsrptPolicy {
    fn name(&self) -> &'static str {
        "asrpt"
    }

    fn plan(&mut self, snapshot: &Snapshot<'_>) -> Plan {
        let mut order: Vec<(f64, i64, JobId)> = snapshot
            .active_jobs()
            .map(|j| (j.remaining_work(Phase::Map) + j.remaining_work(Phase::Reduce), j.spec.submit_ms, j.id))
            .collect();
        order.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
        let ids: Vec<JobId> = order.iter().map(|o| o.2).collect();
        let mut builder = PlanBuilder::new(snapshot, ids.iter().copied());
        for pool in snapshot.cluster.pools() {
            let targets = pool_targets(snapshot, &pool, &ids);
            for (k, &id) in ids.iter().enumerate() {
                let (maps, reduces) = targets[k];
                builder.set_phase_targets(id, &pool, [maps, reduces]);
            }
        }
        builder.finish()
    }
}

/// Per job (in `ids` order): (map target, reduce target) within `pool`.
fn pool_targets(snapshot: &Snapshot<'_>, pool: &Pool, ids: &[JobId]) -> Vec<(u32, u32)> {
    let has = |ph: Phase| pool.phases.contains(&ph);
    let mut out = vec![(0u32, 0u32); ids.len()];
    let mut left = pool.capacity;
    if has(Phase::Map) {
        // Virtual SRPT: parallelism ignores the dependency; Maps first within a job.
        let mut srpt_left = pool.capacity;
        for (k, &id) in ids.iter().enumerate() {
            if srpt_left == 0 {
                break;
            }
            let j = snapshot.job(id);
            let maps = demand(j, Phase::Map);
            let reduces = if has(Phase::Reduce) { j.phase(Phase::Reduce).remaining() } else { 0 };
            let x = (maps + reduces).min(srpt_left);
            srpt_left -= x;
            // Phase 1: the Maps SRPT runs.
            let map_load = x.min(maps).min(left);
            out[k].0 = map_load;
            left -= map_load;
        }
    }
    if has(Phase::Reduce) {
        // Phase 2: available Reduces.
        for (k, &id) in ids.iter().enumerate() {
            if left == 0 {
                break;
            }
            let x = demand(snapshot.job(id), Phase::Reduce).min(left);
            out[k].1 = x;
            left -= x;
        }
    }
    if has(Phase::Map) {
        // Phase 3: remaining Maps.
        for (k, &id) in ids.iter().enumerate() {
            if left == 0 {
                break;
            }
            let more = demand(snapshot.job(id), Phase::Map).saturating_sub(out[k].0).min(left);
            out[k].0 += more;
            left -= more;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use circumflex_core::config::EngineConfig;
    use circumflex_core::model::{JobSpec, Locality};
    use circumflex_core::policy::{ClusterView, PoolMode};
    use proptest::prelude::*;

    #[test]
    fn shortest_available_work_first_and_srpt_maps_before_reduces() {
        // Shared pool of 4. Big job (8 maps) and small job (2 maps, 1 reduce): the small one ranks first.
        let jobs = vec![
            JobState::new(JobId(0), JobSpec::new(0, 8, 0).with_task_ms(1000, 1000)),
            JobState::new(JobId(1), JobSpec::new(5, 2, 1).with_task_ms(1000, 1000)),
        ];
        let active = [JobId(0), JobId(1)];
        let cluster = ClusterView { map_slots: 4, reduce_slots: 0, mode: PoolMode::Shared, nodes: 1 };
        let snap = Snapshot::new(10, cluster, &jobs, &active);
        let plan = AsrptPolicy.plan(&snap);
        assert_eq!(plan.entries[0].job, JobId(1));
        assert_eq!(plan.entries[0].target, [2, 0], "reduce not available before maps finish");
        assert_eq!(plan.entries[1].target, [2, 0]);
    }

    #[test]
    fn available_reduces_come_before_other_jobs_maps() {
        let mut small = JobState::new(JobId(1), JobSpec::new(5, 1, 3).with_task_ms(1000, 1000));
        small.phases[0] =
            circumflex_core::model::PhaseState { total: 1, pending: 0, running: 0, finished: 1, ..Default::default() };
        let jobs = vec![JobState::new(JobId(0), JobSpec::new(0, 8, 0).with_task_ms(1000, 1000)), small];
        let active = [JobId(0), JobId(1)];
        let cluster = ClusterView { map_slots: 4, reduce_slots: 0, mode: PoolMode::Shared, nodes: 1 };
        let snap = Snapshot::new(10, cluster, &jobs, &active);
        let plan = AsrptPolicy.plan(&snap);
        assert_eq!(plan.entry(JobId(1)).unwrap().target, [0, 3]);
        assert_eq!(plan.entry(JobId(0)).unwrap().target, [1, 0]);
    }

    #[test]
    fn split_pools_serve_maps_and_reduces_separately() {
        let cfg = EngineConfig { policy: "asrpt".into(), pool_mode: PoolMode::Split, ..EngineConfig::default() };
        let mut e = crate::new_engine(cfg).unwrap();
        let n = e.add_node("h", "/r", 2, 2);
        let big = e.submit(JobSpec::new(0, 10, 1).with_task_ms(1000, 1000), 0).unwrap().0;
        let small = e.submit(JobSpec::new(1, 1, 1).with_task_ms(1000, 1000), 1).unwrap().0;
        let plan = e.plan().clone();
        assert_eq!(plan.entries[0].job, small);
        assert_eq!(plan.entry(small).unwrap().target, [1, 0]);
        assert_eq!(plan.entry(big).unwrap().target, [1, 0]);
        e.task_started(small, Phase::Map, n, Locality::Any, 2).unwrap();
        e.task_finished(small, Phase::Map, n, 1000, true, 1002).unwrap();
        e.tick(1002);
        assert_eq!(e.plan().entry(small).unwrap().target, [0, 1]);
    }

    proptest! {
        #[test]
        fn targets_respect_capacity_and_demand(
            specs in prop::collection::vec((0i64..100, 1u32..20, 0u32..5, 1i64..5000), 1..25),
            cap in 1u32..40,
            shared in any::<bool>(),
        ) {
            let jobs: Vec<JobState> = specs.iter().enumerate()
                .map(|(i, &(t, m, r, d))| JobState::new(JobId(i as u32), JobSpec::new(t, m, r).with_task_ms(d, d)))
                .collect();
            let active: Vec<JobId> = jobs.iter().map(|j| j.id).collect();
            let mode = if shared { PoolMode::Shared } else { PoolMode::Split };
            let cluster = ClusterView { map_slots: cap, reduce_slots: cap / 2, mode, nodes: 1 };
            let snap = Snapshot::new(0, cluster, &jobs, &active);
            let plan = AsrptPolicy.plan(&snap);
            prop_assert_eq!(plan.entries.len(), jobs.len());
            let total: u32 = plan.entries.iter().map(|e| e.target[0] + e.target[1]).sum();
            prop_assert!(total <= cluster.total_slots());
            for e in &plan.entries {
                let j = snap.job(e.job);
                prop_assert!(e.target[0] <= demand(j, Phase::Map));
                prop_assert!(e.target[1] <= demand(j, Phase::Reduce));
            }
            let again = AsrptPolicy.plan(&snap);
            prop_assert_eq!(plan, again);
        }
    }
}
