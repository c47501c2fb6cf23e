//! The Deadline Constraint scheduler of Kc and Anyanwu, as the RTMR paper describes it and the
//! digest operationalizes it (§3.2), with RTMR's cost model so the comparison is like for like
//! (`circumflex.policy = deadline-constraint`).
//!
//! - Reduce stage at full parallelism: it starts at `S_r^max = A + D − ε^r` at the latest, so the
//!   map window is `W = D − ε^r`; a job with `W < ε^m` or `R > q` is rejected.
//! - Map stage at minimum parallelism `n_m^min`: discrete `⌈M / ⌊W/ε^m⌋⌉` (default) or the fluid
//!   `⌈M·ε^m / W⌉` of the original (`circumflex.dc.min.maps = fluid`), which can under-provision.
//! - "Available" is a reservation ledger: an accepted job holds `n_m^min` map slots over
//!   `[A, S_r^max)` and `R` reduce slots over `[S_r^max, A + D]`. The test checks free map slots at
//!   `A` and free reduce slots **at the single instant** `S_r^max`: the flaw the paper points out.
//! - Dispatch: EDF, each job capped at `n_m^min` running maps (non-work-conserving, as the text
//!   reads), reduces in EDF order once a job's maps are done.
//! - Jobs without a deadline follow `circumflex.rtmr.no.deadline` like RTMR.

use circumflex_core::config::EngineConfig;
use circumflex_core::error::{Error, Result};
use circumflex_core::model::{JobId, Time};
use circumflex_core::policy::{Admission, AssignmentRule, Plan, PlanBuilder, Policy, Snapshot};

use super::policy::{CostModel, RtmrConfig};

/// How `n_m^min` is computed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MinMaps {
    /// `⌈M / ⌊W/ε^m⌋⌉`: enough slots for indivisible tasks.
    Discrete,
    /// `⌈M·ε^m / W⌉`: the original fluid formula.
    Fluid,
}

#[derive(Clone, Debug, PartialEq)]
struct Reservation {
    job: JobId,
    deadline: Time,
    maps: u32,
    map_until: Time,
    map_from: Time,
    reduces: u32,
    reduce_from: Time,
}

/// The Deadline Constraint baseline.
#[derive(Debug)]
pub struct DeadlineConstraint {
    cfg: RtmrConfig,
    min_maps: MinMaps,
    costs: CostModel,
    ledger: Vec<Reservation>,
    best_effort: Vec<JobId>,
}

impl DeadlineConstraint {
    /// From `circumflex.rtmr.*` and `circumflex.dc.min.maps`.
    pub fn from_config(config: &EngineConfig) -> Result<DeadlineConstraint> {
        let cfg = RtmrConfig::from_engine(config)?;
        let min_maps = match config.param("circumflex.dc.min.maps").map(str::trim) {
            None | Some("discrete") => MinMaps::Discrete,
            Some("fluid") => MinMaps::Fluid,
            Some(v) => return Err(Error::config("circumflex.dc.min.maps", v, "discrete or fluid")),
        };
        let costs = CostModel::new(&cfg);
        Ok(DeadlineConstraint { cfg, min_maps, costs, ledger: Vec::new(), best_effort: Vec::new() })
    }

    fn maps_reserved_at(&self, t: Time) -> u64 {
        self.ledger.iter().filter(|r| r.map_from <= t && t < r.map_until).map(|r| r.maps as u64).sum()
    }

    fn reduces_reserved_at(&self, t: Time) -> u64 {
        self.ledger.iter().filter(|r| r.reduce_from <= t && t <= r.deadline).map(|r| r.reduces as u64).sum()
    }
}

impl Policy for DeadlineConstraint {
    fn name(&self) -> &'static str {
        "deadline-constraint"
    }

    fn admit(&mut self, snapshot: &Snapshot<'_>, candidate: JobId) -> Admission {
        let job = snapshot.job(candidate);
        let Some(deadline) = job.spec.deadline_ms else {
            return self.cfg.no_deadline.admit(&mut self.best_effort, candidate);
        };
        let (l, q) = (snapshot.cluster.map_slots as u64, snapshot.cluster.reduce_slots as u64);
        let (m, r) = (job.spec.maps.tasks, job.spec.reduces.tasks);
        if r as u64 > q {
            return Admission::Reject { reason: format!("{r} reduce tasks exceed the cluster's {q} reduce slots") };
        }
        let a = snapshot.now;
        let eps_m = self.costs.eps_map(job);
        let eps_r = if r > 0 { self.costs.eps_reduce(job) } else { 0 };
        let latest_reduce_start = deadline - eps_r;
        let window = latest_reduce_start - a;
        if m > 0 && window < eps_m {
            return Admission::Reject {
                reason: format!("map window {window} ms is shorter than one map task ({eps_m} ms)"),
            };
        }
        let n_min = if m == 0 {
            0
        } else {
            match self.min_maps {
                MinMaps::Discrete => {
                    let per_slot = (window / eps_m).max(1) as u64;
                    (m as u64).div_ceil(per_slot)
                }
                MinMaps::Fluid => ((m as u64 * eps_m as u64) as f64 / window.max(1) as f64).ceil() as u64,
            }
        };
        let free_maps = l.saturating_sub(self.maps_reserved_at(a));
        if n_min > free_maps {
            return Admission::Reject { reason: format!("needs {n_min} map slots at arrival, {free_maps} free") };
        }
        let free_reduces = q.saturating_sub(self.reduces_reserved_at(latest_reduce_start));
        if r as u64 > free_reduces {
            return Admission::Reject {
                reason: format!("needs {r} reduce slots at {latest_reduce_start} ms, {free_reduces} free"),
            };
        }
        self.ledger.push(Reservation {
            job: candidate,
            deadline,
            maps: n_min as u32,
            map_from: a,
            map_until: latest_reduce_start,
            reduces: r,
            reduce_from: latest_reduce_start,
        });
        Admission::Accept
    }

    fn plan(&mut self, snapshot: &Snapshot<'_>) -> Plan {
        // Reservations end at their deadline; finished jobs leave the ledger.
        // A retired job (the engine frees ended jobs) has finished: its reservation stays until
        // its deadline like any finished job's.
        self.ledger.retain(|r| !snapshot.has_ended(r.job) || r.deadline >= snapshot.now);
        let mut active: Vec<&Reservation> = self.ledger.iter().filter(|r| !snapshot.has_ended(r.job)).collect();
        active.sort_by_key(|r| (r.deadline, snapshot.job(r.job).spec.submit_ms, r.job));
        let order: Vec<JobId> = active.iter().map(|r| r.job).chain(self.best_effort.iter().copied()).collect();
        let mut builder = PlanBuilder::new(snapshot, order.iter().copied());
        for pool in snapshot.cluster.pools() {
            for r in &active {
                let j = snapshot.job(r.job);
                let cap: u32 = pool
                    .phases
                    .iter()
                    .map(|&ph| match ph {
                        circumflex_core::model::Phase::Map => {
                            r.maps.min(circumflex_core::policy::pool_demand(j, &pool))
                        }
                        circumflex_core::model::Phase::Reduce => r.reduces,
                    })
                    .sum();
                builder.set_pool_target(r.job, &pool, cap);
            }
            for &id in &self.best_effort {
                let d = circumflex_core::policy::pool_demand(snapshot.job(id), &pool);
                builder.set_pool_target(id, &pool, d);
            }
        }
        builder.set_rule(AssignmentRule::StrictPriority { cap_at_target: true, reserve_reduces: false });
        builder.finish()
    }

    fn on_job_finished(&mut self, snapshot: &Snapshot<'_>, job: JobId) {
        self.best_effort.retain(|&j| j != job);
        self.costs.learn(snapshot.job(job));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use circumflex_core::model::{JobSpec, JobState};
    use circumflex_core::policy::{ClusterView, PoolMode};

    fn dc(min_maps: &str) -> DeadlineConstraint {
        let mut cfg = EngineConfig::default();
        cfg.params.insert("circumflex.rtmr.map.task.ms".into(), "10".into());
        cfg.params.insert("circumflex.rtmr.reduce.task.ms".into(), "50".into());
        cfg.params.insert("circumflex.dc.min.maps".into(), min_maps.into());
        DeadlineConstraint::from_config(&cfg).unwrap()
    }

    fn admit(
        p: &mut DeadlineConstraint,
        jobs: &mut Vec<JobState>,
        now: Time,
        d: Time,
        m: u32,
        r: u32,
        q: u32,
    ) -> Admission {
        let id = JobId(jobs.len() as u32);
        let mut s = JobSpec::new(now, m, r);
        s.deadline_ms = Some(now + d);
        jobs.push(JobState::new(id, s));
        let active: Vec<JobId> = jobs.iter().map(|j| j.id).collect();
        let cluster = ClusterView { map_slots: 4, reduce_slots: q, mode: PoolMode::Split, nodes: 1 };
        p.admit(&Snapshot::new(now, cluster, jobs, &active), id)
    }

    #[test]
    fn example_8_single_instant_reduce_check_accepts_both() {
        let mut p = dc("discrete");
        let mut jobs = Vec::new();
        // X = (0, 200, M=15, R=2): S_r^max = 150, n_min = 1. Y = (10, 170, M=12, R=2): S_r^max = 130.
        assert_eq!(admit(&mut p, &mut jobs, 0, 200, 15, 2, 2), Admission::Accept);
        assert_eq!(p.ledger[0].maps, 1);
        assert_eq!(admit(&mut p, &mut jobs, 10, 170, 12, 2, 2), Admission::Accept, "the flaw: 2 free at 130 only");
        assert_eq!(p.ledger[1].maps, 1);
    }

    #[test]
    fn example_9_unnecessary_rejection_and_r_over_q() {
        let mut p = dc("discrete");
        p.costs.c_r_max = 20.0;
        let mut jobs = Vec::new();
        assert_eq!(admit(&mut p, &mut jobs, 0, 60, 16, 1, 2), Admission::Accept);
        assert_eq!(p.ledger[0].maps, 4);
        assert!(matches!(admit(&mut p, &mut jobs, 1, 200, 1, 1, 2), Admission::Reject { .. }));
        assert!(
            matches!(admit(&mut p, &mut jobs, 100, 1000, 1, 3, 2), Admission::Reject { reason } if reason.contains("exceed"))
        );
    }

    /// The engine retires a job once it ends: its reservation must still hold until its deadline
    /// (as a finished job's did) and then leave the ledger, and planning must not need the job.
    #[test]
    fn a_retired_job_keeps_its_reservation_until_its_deadline() {
        let mut p = dc("discrete");
        let mut jobs = Vec::new();
        assert_eq!(admit(&mut p, &mut jobs, 0, 200, 15, 2, 2), Admission::Accept);
        let cluster = ClusterView { map_slots: 4, reduce_slots: 2, mode: PoolMode::Split, nodes: 1 };
        // Retired: the snapshot no longer holds job 0.
        let plan = p.plan(&Snapshot::new(100, cluster, &[], &[]));
        assert!(plan.entries.is_empty());
        assert_eq!(p.ledger.len(), 1, "kept until its deadline");
        p.plan(&Snapshot::new(201, cluster, &[], &[]));
        assert!(p.ledger.is_empty(), "past its deadline");
    }

    #[test]
    fn fluid_formula_can_under_provision() {
        // M = 3, eps_m = 10, W = 15: fluid gives 2 slots (which need 20 > 15), discrete 3.
        for (mode, want) in [("fluid", 2), ("discrete", 3)] {
            let mut p = dc(mode);
            p.costs.c_r_max = 5.0;
            let mut jobs = Vec::new();
            assert_eq!(admit(&mut p, &mut jobs, 0, 20, 3, 1, 2), Admission::Accept);
            assert_eq!(p.ledger[0].maps, want, "{mode}");
        }
    }

    #[test]
    fn rejected_jobs_are_retired_with_their_status() {
        let cfg = EngineConfig { policy: "deadline-constraint".into(), ..EngineConfig::default() };
        let mut e = crate::new_engine(cfg).unwrap();
        e.add_node("h1", "/r1", 1, 1);
        let mut spec = JobSpec::new(0, 50, 1).with_task_ms(10_000, 10_000);
        spec.deadline_ms = Some(1_000);
        let (id, admission) = e.submit(spec, 0).unwrap();
        assert!(matches!(admission, circumflex_core::policy::Admission::Reject { .. }), "{admission:?}");
        assert_eq!(e.live_job_count(), 0);
        assert_eq!(e.job_status(id), Some(circumflex_core::model::JobStatus::Rejected));
        assert_eq!(e.recent_jobs().last().map(|j| j.status), Some(circumflex_core::model::JobStatus::Rejected));
    }
}
