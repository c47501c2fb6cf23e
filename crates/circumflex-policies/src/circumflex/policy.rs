//! The `circumflex` engine policy: CIRCUMFLEX's allocation layer over Hadoop jobs that share scans
//! (digest §4.6, §3.7).
//!
//! What the host must send: `JobSpec.dataset` (`circumflex.job.dataset`, or derived by the shims
//! from the job's input paths) for every job whose map phase scans a shared dataset, and jobs
//! submitted through the C-mapper protocol, so that the k-th oldest active Hadoop job on a dataset
//! holds exactly the splits of subjob `(d,k)` (its driver splits; riders ride on older jobs).
//! Then a job's remaining map work *is* the size of its subjob, and chain precedence becomes "give
//! slots to the oldest active job of the dataset first".
//!
//! Per pool, every plan:
//! 1. groups the jobs with work in the pool into chains: jobs with the same dataset and remaining
//!    map work (oldest submission first, then id) form one chain; every other job (no dataset, or
//!    only reduce work left) is a chain of its own, exactly as in FLEX;
//! 2. gives chain position `k` the remaining amount `r_k = Σ_{i≤k} work_i` (nesting by
//!    construction) and runs [`super::plan::plan_chains`] (generalized Smith or the chain DP,
//!    then ready-list packing with the subjob bounds);
//! 3. enforces **only the first interval**: each job's target is its subjob's first-interval
//!    allocation (0 for subjobs that are not ready yet); predicted completions come from the full
//!    packing.
//!
//! The chains of the pool that holds the map phase are recorded in [`Plan::scans`] (dataset, jobs
//! oldest first with their splits left and done, subjob work and `r_k`): the live scans as the
//! policy sees them, which the status page shows. Only chains of a shared dataset are listed.
//!
//! Decisions: an objective CIRCUMFLEX does not handle (minisum tardy jobs, total tardiness, total
//! SLA) falls back to FLEX for that pool, so a misconfiguration degrades to no sharing-aware
//! order rather than to no plan (the registry still validates the name); job facts (including
//! FLEX's later-phase tail in split mode) and the plan assembly are FLEX's own.

use std::collections::BTreeMap;

use crate::flex::metrics::Objective;
use crate::flex::{job_facts, plan_from_pools, solve, FlexItem, FlexProblem, FlexSolution};
use circumflex_core::config::EngineConfig;
use circumflex_core::error::Result;
use circumflex_core::model::{JobId, Phase};
use circumflex_core::policy::{
    pool_demand, pool_remaining_work, slot_bounds, Plan, PlanScan, PlanSubjob, Policy, Snapshot,
};

use super::plan::{plan_chains, ScanJob};

/// The CIRCUMFLEX policy (`circumflex.policy = circumflex`).
#[derive(Debug, Clone)]
pub struct CircumflexPolicy {
    objective: Objective,
}

impl CircumflexPolicy {
    /// CIRCUMFLEX optimizing `objective`.
    pub fn new(objective: Objective) -> CircumflexPolicy {
        CircumflexPolicy { objective }
    }

    /// From `circumflex.objective` (default `avg_response_time`).
    pub fn from_config(config: &EngineConfig) -> Result<CircumflexPolicy> {
        let objective = match config.objective.as_deref() {
            Some(name) => Objective::parse(name)?,
            None => Objective::default(),
        };
        Ok(CircumflexPolicy::new(objective))
    }
}

/// One job with work in a pool.
struct Entry {
    id: JobId,
    item: FlexItem,
}

/// The scan of one dataset's chain (oldest job first) for [`Plan::scans`].
fn plan_scan(snapshot: &Snapshot<'_>, dataset: &str, chain: &[Entry]) -> PlanScan {
    let mut remaining = 0.0;
    let k_d = chain.len();
    let subjobs = chain
        .iter()
        .enumerate()
        .map(|(k, e)| {
            let maps = snapshot.job(e.id).phase(Phase::Map);
            remaining += e.item.work;
            PlanSubjob {
                job: e.id,
                splits_left: maps.remaining(),
                splits_done: maps.finished,
                work_ms: e.item.work,
                remaining_ms: remaining,
                concurrency: u32::try_from(k_d - k).unwrap_or(u32::MAX),
            }
        })
        .collect();
    PlanScan { dataset: dataset.to_string(), subjobs }
}

impl Policy for CircumflexPolicy {
    fn name(&self) -> &'static str {
        "circumflex"
    }

    fn plan(&mut self, snapshot: &Snapshot<'_>) -> Plan {
        let cluster = snapshot.cluster;
        let now = snapshot.now as f64;
        let mut solved: Vec<(circumflex_core::policy::Pool, Vec<JobId>, FlexSolution)> = Vec::new();
        let mut scans: Vec<PlanScan> = Vec::new();
        for pool in cluster.pools() {
            // Chains keyed by dataset (shared) or by the job itself (alone), in first-seen order.
            let mut chains: Vec<Vec<Entry>> = Vec::new();
            let mut by_dataset: BTreeMap<&str, usize> = BTreeMap::new();
            let mut jobs: Vec<_> = snapshot.active_jobs().collect();
            jobs.sort_by_key(|j| (j.spec.submit_ms, j.id.0));
            for job in jobs {
                let demand = pool_demand(job, &pool);
                let work = pool_remaining_work(job, &pool);
                if demand == 0 || work <= 0.0 {
                    continue;
                }
                let (min, max) = slot_bounds(job, pool.capacity);
                let max = max.min(demand).max(1);
                let facts = job_facts(self.objective, job, &cluster, pool.phases);
                let entry = Entry { id: job.id, item: FlexItem { work, min: min.min(max), max, facts } };
                let scans = pool.phases.contains(&Phase::Map) && job.phase(Phase::Map).remaining() > 0;
                match job.spec.dataset.as_deref().filter(|_| scans) {
                    Some(d) => {
                        let c = *by_dataset.entry(d).or_insert_with(|| {
                            chains.push(Vec::new());
                            chains.len() - 1
                        });
                        chains[c].push(entry);
                    }
                    None => chains.push(vec![entry]),
                }
            }
            if pool.phases.contains(&Phase::Map) {
                scans.extend(by_dataset.iter().map(|(d, &c)| plan_scan(snapshot, d, &chains[c])));
            }
            let ids: Vec<JobId> = chains.iter().flat_map(|c| c.iter().map(|e| e.id)).collect();
            let scan_chains: Vec<Vec<ScanJob>> = chains
                .iter()
                .map(|c| {
                    let mut r = 0.0;
                    c.iter()
                        .map(|e| {
                            r += e.item.work;
                            ScanJob { remaining: r, min: e.item.min, max: e.item.max, facts: e.item.facts.clone() }
                        })
                        .collect()
                })
                .collect();
            let solution = match plan_chains(self.objective, pool.capacity, now, &scan_chains, false) {
                Ok(plan) => FlexSolution {
                    order: plan.order,
                    first: plan.packing.first,
                    completion: plan.packing.completion.iter().map(|c| now + c).collect(),
                },
                Err(_) => {
                    let items = chains.into_iter().flatten().map(|e| e.item).collect();
                    solve(self.objective, &FlexProblem { capacity: pool.capacity, start: now, items, precedence: None })
                }
            };
            solved.push((pool, ids, solution));
        }
        let mut plan = plan_from_pools(snapshot, &solved);
        plan.scans = scans;
        plan
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use circumflex_core::model::{JobSpec, JobState, Time};
    use circumflex_core::policy::{ClusterView, PoolMode};

    fn spec(submit: Time, maps: u32, dataset: Option<&str>) -> JobSpec {
        let mut s = JobSpec::new(submit, maps, 0).with_task_ms(1000, 0);
        s.dataset = dataset.map(str::to_string);
        s.max_slots = Some(4);
        s
    }

    fn plan(objective: Objective, specs: Vec<JobSpec>) -> Plan {
        let jobs: Vec<JobState> =
            specs.into_iter().enumerate().map(|(i, s)| JobState::new(JobId(i as u32), s)).collect();
        let active: Vec<JobId> = jobs.iter().map(|j| j.id).collect();
        let cluster = ClusterView { map_slots: 6, reduce_slots: 0, mode: PoolMode::Shared, nodes: 1 };
        CircumflexPolicy::new(objective).plan(&Snapshot::new(5000, cluster, &jobs, &active))
    }

    #[test]
    fn only_the_oldest_job_of_a_dataset_gets_slots_first() {
        // Jobs 0 and 1 share dataset "d" (job 1's own work is its driver splits); job 2 is alone.
        let p = plan(Objective::AvgResponseTime, vec![spec(0, 6, Some("d")), spec(1, 2, Some("d")), spec(2, 3, None)]);
        let t = |j: u32| p.entry(JobId(j)).map_or(0, |e| e.target[0]);
        assert_eq!(t(1), 0, "chain precedence: job 1's subjob waits for job 0's");
        assert!(t(0) > 0 && t(0) + t(2) <= 6);
        for o in [Objective::MaxStretch, Objective::TotalTardiness] {
            let p = plan(o, vec![spec(0, 6, Some("d")), spec(1, 2, Some("d")), spec(2, 3, None)]);
            assert!(p.total_target(Phase::Map) <= 6, "{o}");
        }
    }

    /// The plan records each shared dataset's chain as the planner saw it: jobs oldest first, each
    /// one's splits, subjob work `p_{d,k}`, `r_k` and concurrency; jobs without a dataset or without
    /// map work left are not part of any scan.
    #[test]
    fn the_plan_records_each_datasets_chain() {
        let mut specs = vec![spec(0, 6, Some("d")), spec(1, 2, Some("d")), spec(2, 3, None), spec(3, 4, Some("e"))];
        specs.push(spec(4, 1, Some("d")));
        let mut jobs: Vec<JobState> =
            specs.into_iter().enumerate().map(|(i, s)| JobState::new(JobId(i as u32), s)).collect();
        // Job 0 has scanned 2 of its 6 splits and is scanning 1; job 4 has no map left (reduce-only
        // jobs ride nothing any more).
        let m = &mut jobs[0].phases[Phase::Map.idx()];
        (m.pending, m.running, m.finished, m.observed_ms_sum) = (3, 1, 2, 2000);
        let m = &mut jobs[4].phases[Phase::Map.idx()];
        (m.pending, m.finished, m.observed_ms_sum) = (0, 1, 1000);
        let active: Vec<JobId> = jobs.iter().map(|j| j.id).collect();
        let cluster = ClusterView { map_slots: 6, reduce_slots: 0, mode: PoolMode::Shared, nodes: 1 };
        let p = CircumflexPolicy::new(Objective::AvgResponseTime).plan(&Snapshot::new(5000, cluster, &jobs, &active));
        let datasets: Vec<&str> = p.scans.iter().map(|s| s.dataset.as_str()).collect();
        assert_eq!(datasets, ["d", "e"]);
        let d = &p.scans[0].subjobs;
        assert_eq!(d.iter().map(|s| s.job).collect::<Vec<_>>(), [JobId(0), JobId(1)], "job 4 has no map left");
        assert_eq!((d[0].splits_left, d[0].splits_done, d[0].concurrency), (4, 2, 2));
        assert_eq!((d[1].splits_left, d[1].splits_done, d[1].concurrency), (2, 0, 1));
        // 3 pending of 1 s plus one running counted half: 3.5 s; the newer job sees its own 2 s on top.
        assert_eq!((d[0].work_ms, d[0].remaining_ms), (3500.0, 3500.0));
        assert_eq!((d[1].work_ms, d[1].remaining_ms), (2000.0, 5500.0));
        assert_eq!(p.scans[1].subjobs.iter().map(|s| s.job).collect::<Vec<_>>(), [JobId(3)]);
        // Other policies plan no scans.
        let flex = crate::flex::FlexPolicy::new(Objective::AvgResponseTime)
            .plan(&Snapshot::new(5000, cluster, &jobs, &active));
        assert!(flex.scans.is_empty());
    }

    #[test]
    fn without_datasets_it_is_flex() {
        let specs = [spec(0, 10, None), spec(1, 2, None), spec(2, 5, None)];
        for o in [Objective::AvgResponseTime, Objective::MaxStretch] {
            let jobs: Vec<JobState> =
                specs.iter().cloned().enumerate().map(|(i, s)| JobState::new(JobId(i as u32), s)).collect();
            let active: Vec<JobId> = jobs.iter().map(|j| j.id).collect();
            let cluster = ClusterView { map_slots: 6, reduce_slots: 0, mode: PoolMode::Shared, nodes: 1 };
            let snap = Snapshot::new(5000, cluster, &jobs, &active);
            let a = CircumflexPolicy::new(o).plan(&snap);
            let b = crate::flex::FlexPolicy::new(o).plan(&snap);
            let targets = |p: &Plan| p.entries.iter().map(|e| (e.job, e.target)).collect::<Vec<_>>();
            assert_eq!(targets(&a), targets(&b), "{o}");
        }
    }

    #[test]
    fn registry_builds_circumflex() {
        let cfg =
            EngineConfig::from_pairs([("circumflex.policy", "circumflex"), ("circumflex.objective", "max_stretch")])
                .unwrap();
        assert_eq!(crate::registry::create(&cfg).unwrap().name(), "circumflex");
        assert!(crate::registry::POLICY_NAMES.contains(&"circumflex"));
    }
}
