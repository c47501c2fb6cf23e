//! RTMR: the real-time MapReduce scheduler (`circumflex.policy = rtmr`): admission control over
//! slot-availability vectors, an EDF queue with started jobs first, RTMR's reduce dispatcher, and
//! the feedback controller (digest §2).
//!
//! How the paper's pieces map onto the engine:
//! - **Admission controller** (Algorithm I) is [`Policy::admit`]: the job is tentatively placed in
//!   the queue by EDF among waiting jobs, its vectors computed with CalT from its predecessor's, and
//!   every job behind it re-checked. Rejection leaves every stored vector untouched and returns a
//!   reason with figures: by how much the job, or an admitted job behind it, would miss.
//! - **Queue and dispatcher** (Algorithm IV) are the plan: entries in queue order (started jobs in
//!   start order, then waiting jobs by absolute deadline, ties FIFO) with
//!   `AssignmentRule::StrictPriority { reserve_reduces: true }`, which the engine executes.
//! - **Feedback controller** (Algorithms V and VI) runs in [`Policy::on_job_finished`].
//! - **Cost parameters** `c_m^max`, `c_r^max`, `η` only grow, raised to observed maxima at each job's
//!   end.
//!
//! Decisions where the paper is ambiguous (digest §7), each tested:
//! - A1: reject iff `e > A + D` (equality accepted); the dispatcher breaks on `reserved >= Ra`.
//! - A2: ties in deadline go FIFO (a new job goes after equal deadlines).
//! - A3/§2.1: when the latest-started job finishes, its vectors stay as the base for the next head.
//! - A4: the FC compares the actual finish with the *stored* estimate `J.e`, not a recomputed one.
//! - A5/A6: sizes are measured in "units": a map task's unit is its input MB when the job declares
//!   input bytes, else one task; a reduce task's unit is `η·δ/R` MB when bytes are known, else one
//!   task. `c^max` is milliseconds per unit, initialised from `circumflex.rtmr.map.task.ms` and
//!   `circumflex.rtmr.reduce.task.ms` (per unit), and a job's declared task estimate
//!   (`circumflex.job.map.ms`) raises its own `ε`.
//! - A14: a rejected job gets the engine's `Rejected` status; hosts refuse it at submission.
//! - A15: map-only jobs have `e = e^m`.
//! - A18: the FC threshold Δ is `circumflex.rtmr.feedback.threshold.ms`, else the mean observed
//!   map task duration so far, else one map-task worst case.
//! - Jobs without a deadline: `circumflex.rtmr.no.deadline = best_effort` (default) ranks them after
//!   every deadline job (they use spare capacity only; a running best-effort task can delay a
//!   deadline job by at most one task, the same non-preemption the paper accepts), or `reject`.
//! - Cluster size changes resize the vectors pessimistically: lost slots drop the earliest-free
//!   entries, new slots are free now.

use circumflex_core::config::{parse_bool, parse_f64, parse_int, EngineConfig};
use circumflex_core::error::{Error, Result};
use circumflex_core::model::{JobId, JobState, Phase, Time};
use circumflex_core::policy::{Admission, AssignmentRule, Plan, PlanBuilder, Policy, Snapshot};

use super::vectors::{cal_t, satu, zeros, SlotVec};

const MIB: f64 = 1024.0 * 1024.0;

/// What happens to a job submitted without a deadline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NoDeadline {
    /// Accept it and rank it after every deadline job.
    BestEffort,
    /// Refuse it.
    Reject,
}

/// RTMR configuration (`circumflex.rtmr.*`).
#[derive(Clone, Debug, PartialEq)]
pub struct RtmrConfig {
    /// Run the feedback controller.
    pub feedback: bool,
    /// Initial `c_m^max`, ms per map unit.
    pub map_ms_per_unit: f64,
    /// Initial `c_r^max`, ms per reduce unit.
    pub reduce_ms_per_unit: f64,
    /// Initial `η` (intermediate / input bytes).
    pub eta: f64,
    /// FC threshold Δ; `None` = mean observed map task duration.
    pub feedback_threshold_ms: Option<Time>,
    /// Jobs without a deadline.
    pub no_deadline: NoDeadline,
}

impl Default for RtmrConfig {
    fn default() -> Self {
        RtmrConfig {
            feedback: true,
            map_ms_per_unit: 60_000.0,
            reduce_ms_per_unit: 120_000.0,
            eta: 1.0,
            feedback_threshold_ms: None,
            no_deadline: NoDeadline::BestEffort,
        }
    }
}

impl RtmrConfig {
    /// Reads `circumflex.rtmr.*` keys.
    pub fn from_engine(cfg: &EngineConfig) -> Result<RtmrConfig> {
        let mut c = RtmrConfig::default();
        if let Some(v) = cfg.param("circumflex.rtmr.feedback") {
            c.feedback = parse_bool("circumflex.rtmr.feedback", v)?;
        }
        if let Some(v) = cfg.param("circumflex.rtmr.map.task.ms") {
            c.map_ms_per_unit = parse_f64("circumflex.rtmr.map.task.ms", v, 1.0, 1e12)?;
        }
        if let Some(v) = cfg.param("circumflex.rtmr.reduce.task.ms") {
            c.reduce_ms_per_unit = parse_f64("circumflex.rtmr.reduce.task.ms", v, 1.0, 1e12)?;
        }
        if let Some(v) = cfg.param("circumflex.rtmr.eta") {
            c.eta = parse_f64("circumflex.rtmr.eta", v, 0.0, 1e6)?;
        }
        if let Some(v) = cfg.param("circumflex.rtmr.feedback.threshold.ms") {
            c.feedback_threshold_ms = Some(parse_int("circumflex.rtmr.feedback.threshold.ms", v, 0, i64::MAX / 4)?);
        }
        if let Some(v) = cfg.param("circumflex.rtmr.no.deadline") {
            c.no_deadline = match v.trim() {
                "best_effort" => NoDeadline::BestEffort,
                "reject" => NoDeadline::Reject,
                _ => return Err(Error::config("circumflex.rtmr.no.deadline", v, "best_effort or reject")),
            };
        }
        Ok(c)
    }
}

impl NoDeadline {
    /// Admits a job without a deadline as configured: best-effort jobs are recorded in `best_effort`
    /// (ranked after every deadline job). Shared by RTMR and the Deadline Constraint baseline.
    pub fn admit(self, best_effort: &mut Vec<JobId>, candidate: JobId) -> Admission {
        match self {
            NoDeadline::BestEffort => {
                best_effort.push(candidate);
                Admission::Accept
            }
            NoDeadline::Reject => Admission::Reject {
                reason: "no deadline (circumflex.job.deadline.ms) and circumflex.rtmr.no.deadline=reject".into(),
            },
        }
    }
}

/// Algorithm V's trigger: the stored estimate was off by more than `delta`, or the job missed its
/// deadline.
pub fn feedback_needed(estimate: Time, actual: Time, delta: Time, deadline: Time) -> bool {
    (estimate - actual).abs() > delta || actual > deadline
}

/// Worst-case per-task cost model shared by RTMR and the Deadline Constraint baseline (§1.3).
#[derive(Clone, Debug, PartialEq)]
pub struct CostModel {
    /// `c_m^max`, ms per map unit.
    pub c_m_max: f64,
    /// `c_r^max`, ms per reduce unit.
    pub c_r_max: f64,
    /// `η`.
    pub eta: f64,
    observed_map_ms: f64,
    observed_maps: u64,
}

impl CostModel {
    /// A model with the configured initial values.
    pub fn new(cfg: &RtmrConfig) -> CostModel {
        CostModel {
            c_m_max: cfg.map_ms_per_unit,
            c_r_max: cfg.reduce_ms_per_unit,
            eta: cfg.eta,
            observed_map_ms: 0.0,
            observed_maps: 0,
        }
    }

    fn map_unit(job: &JobState) -> f64 {
        match (job.spec.maps.input_bytes, job.spec.maps.tasks) {
            (Some(b), m) if m > 0 && b > 0 => b as f64 / MIB / m as f64,
            _ => 1.0,
        }
    }

    fn reduce_unit(&self, job: &JobState) -> f64 {
        let r = job.spec.reduces.tasks.max(1) as f64;
        match (job.spec.reduces.input_bytes, job.spec.maps.input_bytes) {
            (Some(b), _) if b > 0 => b as f64 / MIB / r,
            (None, Some(b)) if b > 0 => self.eta * b as f64 / MIB / r,
            _ => 1.0,
        }
    }

    /// `ε^m(J)`: worst-case duration of one of J's map tasks.
    pub fn eps_map(&self, job: &JobState) -> Time {
        let learned = (self.c_m_max * Self::map_unit(job)).ceil() as Time;
        learned.max(job.spec.maps.task_ms.unwrap_or(0)).max(1)
    }

    /// `ε^r(J)`: worst-case duration of one of J's reduce tasks.
    pub fn eps_reduce(&self, job: &JobState) -> Time {
        let learned = (self.c_r_max * self.reduce_unit(job)).ceil() as Time;
        learned.max(job.spec.reduces.task_ms.unwrap_or(0)).max(1)
    }

    /// Raises the parameters to what a finished job observed (they never decrease).
    pub fn learn(&mut self, job: &JobState) {
        let m = job.phase(Phase::Map);
        if m.finished > 0 {
            self.c_m_max = self.c_m_max.max(m.observed_ms_max as f64 / Self::map_unit(job));
            self.observed_map_ms += m.observed_ms_sum as f64;
            self.observed_maps += m.finished as u64;
        }
        if let (Some(r), Some(i)) = (job.spec.reduces.input_bytes, job.spec.maps.input_bytes) {
            if i > 0 {
                self.eta = self.eta.max(r as f64 / i as f64);
            }
        }
        let r = job.phase(Phase::Reduce);
        if r.finished > 0 {
            self.c_r_max = self.c_r_max.max(r.observed_ms_max as f64 / self.reduce_unit(job));
        }
    }

    /// Mean observed map task duration, if any finished.
    pub fn typical_map_ms(&self) -> Option<Time> {
        (self.observed_maps > 0).then(|| (self.observed_map_ms / self.observed_maps as f64) as Time)
    }
}

/// One admitted deadline job in the queue.
#[derive(Clone, Debug, PartialEq)]
struct Record {
    job: JobId,
    deadline: Time,
    maps: u32,
    reduces: u32,
    eps_m: Time,
    eps_r: Time,
    tm: SlotVec,
    tr: SlotVec,
    e: Time,
    started: bool,
}

impl Record {
    fn recompute(&mut self, pred_tm: &[Time], pred_tr: &[Time], now: Time) {
        let c = cal_t(pred_tm, pred_tr, self.maps, self.reduces, self.eps_m, self.eps_r, now);
        self.tm = c.tm;
        self.tr = c.tr;
        self.e = c.e;
    }
}

/// The RTMR policy.
#[derive(Debug)]
pub struct RtmrPolicy {
    cfg: RtmrConfig,
    costs: CostModel,
    /// Started jobs (start order) then waiting jobs (EDF).
    chain: Vec<Record>,
    /// Vectors of the latest-started job once it has left the chain.
    base: Option<(SlotVec, SlotVec)>,
    best_effort: Vec<JobId>,
    slots: (usize, usize),
}

impl RtmrPolicy {
    /// A policy with the given configuration.
    pub fn new(cfg: RtmrConfig) -> RtmrPolicy {
        let costs = CostModel::new(&cfg);
        RtmrPolicy { cfg, costs, chain: Vec::new(), base: None, best_effort: Vec::new(), slots: (0, 0) }
    }

    /// The registry's constructor: the policy from `circumflex.rtmr.*` (validated).
    pub fn from_config(cfg: &EngineConfig) -> Result<RtmrPolicy> {
        Ok(RtmrPolicy::new(RtmrConfig::from_engine(cfg)?))
    }

    /// The current cost parameters.
    pub fn costs(&self) -> &CostModel {
        &self.costs
    }

    fn started_count(&self) -> usize {
        self.chain.iter().take_while(|r| r.started).count()
    }

    /// Vectors of the job ahead of queue position `pos`.
    fn pred_vectors(&self, pos: usize) -> (SlotVec, SlotVec) {
        if pos > 0 {
            let r = &self.chain[pos - 1];
            (r.tm.clone(), r.tr.clone())
        } else {
            self.base.clone().unwrap_or_else(|| (zeros(self.slots.0), zeros(self.slots.1)))
        }
    }

    /// Keeps every vector at the cluster's current slot counts.
    fn sync_slots(&mut self, snapshot: &Snapshot<'_>) {
        let (l, q) = match snapshot.cluster.mode {
            circumflex_core::policy::PoolMode::Split => (snapshot.cluster.map_slots, snapshot.cluster.reduce_slots),
            circumflex_core::policy::PoolMode::Shared => {
                (snapshot.cluster.total_slots(), snapshot.cluster.total_slots())
            }
        };
        let want = (l as usize, q as usize);
        if want == self.slots {
            return;
        }
        let now = snapshot.now;
        let fit = |v: &mut SlotVec, n: usize| {
            while v.len() > n {
                v.remove(0);
            }
            while v.len() < n {
                v.insert(0, now);
            }
            v.sort_unstable();
        };
        for r in &mut self.chain {
            fit(&mut r.tm, want.0);
            fit(&mut r.tr, want.1);
        }
        if let Some((tm, tr)) = &mut self.base {
            fit(tm, want.0);
            fit(tr, want.1);
        }
        self.slots = want;
    }

    fn describe(snapshot: &Snapshot<'_>, id: JobId) -> String {
        let j = snapshot.job(id);
        if j.spec.external_id.is_empty() {
            format!("job {}", id.0)
        } else {
            j.spec.external_id.clone()
        }
    }
}

fn secs(ms: Time) -> String {
    format!("{:.1} s", ms as f64 / 1000.0)
}

impl Policy for RtmrPolicy {
    fn name(&self) -> &'static str {
        "rtmr"
    }

    fn needs_task_finish_times(&self) -> bool {
        true
    }

    fn admit(&mut self, snapshot: &Snapshot<'_>, candidate: JobId) -> Admission {
        self.sync_slots(snapshot);
        let job = snapshot.job(candidate);
        let Some(deadline) = job.spec.deadline_ms else {
            return self.cfg.no_deadline.admit(&mut self.best_effort, candidate);
        };
        if self.slots.0 == 0 || (self.slots.1 == 0 && job.spec.reduces.tasks > 0) {
            return Admission::Reject { reason: "the cluster has no map or reduce slots to run it".into() };
        }
        let now = snapshot.now;
        let started = self.started_count();
        let pos = started + self.chain[started..].iter().take_while(|r| r.deadline <= deadline).count();
        let (ptm, ptr) = self.pred_vectors(pos);
        let mut rec = Record {
            job: candidate,
            deadline,
            maps: job.spec.maps.tasks,
            reduces: job.spec.reduces.tasks,
            eps_m: self.costs.eps_map(job),
            eps_r: self.costs.eps_reduce(job),
            tm: Vec::new(),
            tr: Vec::new(),
            e: 0,
            started: false,
        };
        rec.recompute(&ptm, &ptr, now);
        if rec.e > deadline {
            return Admission::Reject {
                reason: format!(
                    "cannot meet its deadline: estimated finish {} after submission, {} after the deadline \
                     (worst-case map task {}, reduce task {})",
                    secs(rec.e - job.spec.submit_ms),
                    secs(rec.e - deadline),
                    secs(rec.eps_m),
                    secs(rec.eps_r)
                ),
            };
        }
        // Re-check every admitted job behind it on tentative copies.
        let mut tentative: Vec<Record> = Vec::with_capacity(self.chain.len() - pos);
        let (mut tm, mut tr) = (rec.tm.clone(), rec.tr.clone());
        for succ in &self.chain[pos..] {
            let mut s = succ.clone();
            s.recompute(&tm, &tr, now);
            if s.e > s.deadline {
                return Admission::Reject {
                    reason: format!(
                        "accepting it would make admitted {} miss its deadline by {}",
                        Self::describe(snapshot, s.job),
                        secs(s.e - s.deadline)
                    ),
                };
            }
            tm.clone_from(&s.tm);
            tr.clone_from(&s.tr);
            tentative.push(s);
        }
        for (k, s) in tentative.into_iter().enumerate() {
            self.chain[pos + k] = s;
        }
        self.chain.insert(pos, rec);
        Admission::Accept
    }

    fn plan(&mut self, snapshot: &Snapshot<'_>) -> Plan {
        self.sync_slots(snapshot);
        // Jobs that started move into the started prefix, in queue order (dispatch is in order).
        let mut started: Vec<Record> = Vec::new();
        let mut waiting: Vec<Record> = Vec::new();
        for r in self.chain.drain(..) {
            let j = snapshot.job(r.job);
            if r.started || j.started_ms.is_some() {
                started.push(Record { started: true, ..r });
            } else {
                waiting.push(r);
            }
        }
        started.append(&mut waiting);
        self.chain = started;
        let order = self.chain.iter().map(|r| r.job).chain(self.best_effort.iter().copied());
        let mut builder = PlanBuilder::new(snapshot, order);
        for pool in snapshot.cluster.pools() {
            let mut left = pool.capacity;
            for id in self.chain.iter().map(|r| r.job).chain(self.best_effort.iter().copied()) {
                let give = circumflex_core::policy::pool_demand(snapshot.job(id), &pool).min(left);
                builder.set_pool_target(id, &pool, give);
                left -= give;
            }
        }
        for r in &self.chain {
            builder.set_predicted_completion(r.job, r.e);
        }
        builder.set_rule(AssignmentRule::StrictPriority { cap_at_target: false, reserve_reduces: true });
        builder.finish()
    }

    fn on_job_finished(&mut self, snapshot: &Snapshot<'_>, job: JobId) {
        self.best_effort.retain(|&j| j != job);
        let state = snapshot.job(job);
        self.costs.learn(state);
        let Some(pos) = self.chain.iter().position(|r| r.job == job) else { return };
        let now = snapshot.now;
        if self.cfg.feedback {
            let delta =
                self.cfg.feedback_threshold_ms.or_else(|| self.costs.typical_map_ms()).unwrap_or(self.chain[pos].eps_m);
            let r = &self.chain[pos];
            if feedback_needed(r.e, now, delta, r.deadline) {
                let (ptm, ptr) = self.pred_vectors(pos);
                let tm = satu(&ptm, &state.task_finish_ms[Phase::Map.idx()]);
                let tr = satu(&ptr, &state.task_finish_ms[Phase::Reduce.idx()]);
                self.chain[pos].tm = tm;
                self.chain[pos].tr = tr;
                self.chain[pos].e = now;
                for k in pos + 1..self.chain.len() {
                    let (a, b) = self.chain.split_at_mut(k);
                    let p = &a[k - 1];
                    b[0].recompute(&p.tm, &p.tr, now);
                }
            }
        }
        let last_started = self.started_count().checked_sub(1);
        let removed = self.chain.remove(pos);
        if last_started == Some(pos) || (pos == 0 && self.chain.first().map_or(true, |r| !r.started)) {
            self.base = Some((removed.tm, removed.tr));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use circumflex_core::engine::Engine;
    use circumflex_core::model::{JobSpec, Locality};
    use circumflex_core::policy::PoolMode;

    /// Engine with l map and q reduce slots on one node, RTMR, eps_m = 10, eps_r = 20 per task.
    fn engine(l: u32, q: u32, feedback: bool) -> (Engine, circumflex_core::model::NodeId) {
        let mut cfg = EngineConfig {
            policy: "rtmr".into(),
            pool_mode: PoolMode::Split,
            node_locality_delay: 0,
            rack_locality_delay: 0,
            ..EngineConfig::default()
        };
        cfg.params.insert("circumflex.rtmr.map.task.ms".into(), "10".into());
        cfg.params.insert("circumflex.rtmr.reduce.task.ms".into(), "20".into());
        cfg.params.insert("circumflex.rtmr.feedback".into(), feedback.to_string());
        let mut e = crate::new_engine(cfg).unwrap();
        let n = e.add_node("h", "/r", l, q);
        (e, n)
    }

    fn job(deadline: Time, m: u32, r: u32) -> JobSpec {
        let mut s = JobSpec::new(0, m, r);
        s.deadline_ms = Some(deadline);
        s
    }

    #[test]
    fn examples_1_to_4_admission_chain() {
        let mut p =
            RtmrPolicy::new(RtmrConfig { map_ms_per_unit: 10.0, reduce_ms_per_unit: 20.0, ..RtmrConfig::default() });
        let mut jobs = Vec::new();
        let cluster =
            circumflex_core::policy::ClusterView { map_slots: 4, reduce_slots: 2, mode: PoolMode::Split, nodes: 1 };
        let admit = |p: &mut RtmrPolicy, jobs: &mut Vec<JobState>, spec: JobSpec| {
            let id = JobId(jobs.len() as u32);
            jobs.push(JobState::new(id, spec));
            let active: Vec<JobId> = jobs.iter().map(|j| j.id).collect();
            let snap = Snapshot::new(0, cluster, jobs, &active);
            p.admit(&snap, id)
        };
        // Ex1: J1 = (0, 100, 6, 3) accepted with T^m = [10,10,20,20], T^r = [40,60].
        assert_eq!(admit(&mut p, &mut jobs, job(100, 6, 3)), Admission::Accept);
        assert_eq!(
            (p.chain[0].tm.clone(), p.chain[0].tr.clone(), p.chain[0].e),
            (vec![10, 10, 20, 20], vec![40, 60], 60)
        );
        // Ex2: J2 = (0, 90, 4, 2) goes ahead; J1 becomes [20,20,30,30] / [50,70].
        assert_eq!(admit(&mut p, &mut jobs, job(90, 4, 2)), Admission::Accept);
        assert_eq!(p.chain.iter().map(|r| r.job.0).collect::<Vec<_>>(), vec![1, 0]);
        assert_eq!((p.chain[0].tr.clone(), p.chain[0].e), (vec![30, 30], 30));
        assert_eq!(
            (p.chain[1].tm.clone(), p.chain[1].tr.clone(), p.chain[1].e),
            (vec![20, 20, 30, 30], vec![50, 70], 70)
        );
        // Ex4: J4 = (0, 60, 12, 2) would make J1 finish at 110 > 100: rejected, nothing changes.
        let before = p.chain.clone();
        match admit(&mut p, &mut jobs, job(60, 12, 2)) {
            Admission::Reject { reason } => {
                assert!(reason.contains("make admitted job 0 miss its deadline"), "{reason}")
            }
            a => panic!("{a:?}"),
        }
        assert_eq!(p.chain, before);
        // Ex3: J3 = (0, 60, 8, 2) fits exactly: J1 finishes at 100 == its deadline.
        assert_eq!(admit(&mut p, &mut jobs, job(60, 8, 2)), Admission::Accept);
        let es: Vec<(u32, Time)> = p.chain.iter().map(|r| (r.job.0, r.e)).collect();
        assert_eq!(es, vec![(3, 40), (1, 60), (0, 100)]);
        assert_eq!(p.chain[2].tr, vec![80, 100]);
        // Ex5: J5 = (0, 25, 1, 1) on the queue: own deadline missed.
        let mut p5 =
            RtmrPolicy::new(RtmrConfig { map_ms_per_unit: 10.0, reduce_ms_per_unit: 20.0, ..RtmrConfig::default() });
        let mut jobs5 = Vec::new();
        match admit(&mut p5, &mut jobs5, job(25, 1, 1)) {
            Admission::Reject { reason } => assert!(reason.contains("cannot meet its deadline"), "{reason}"),
            a => panic!("{a:?}"),
        }
    }

    #[test]
    fn example_10_reduce_reservation_in_the_engine() {
        for (reduce_slots, expect_l_reduce) in [(3u32, true), (2, false)] {
            let (mut e, n) = engine(4, reduce_slots, true);
            let mut h = job(100_000, 2, 2);
            h.external_id = "H".into();
            let mut l = job(200_000, 1, 1);
            l.external_id = "L".into();
            let h = e.submit(h, 0).unwrap().0;
            let l = e.submit(l, 0).unwrap().0;
            assert_eq!(e.plan().rule, AssignmentRule::StrictPriority { cap_at_target: false, reserve_reduces: true });
            // Maps in queue order: H takes 2, L takes 1.
            let c = e.node_update(n, [4, 0], 1).unwrap().to_vec();
            assert_eq!(
                c.iter().map(|c| (c.job, c.phase, c.count)).collect::<Vec<_>>(),
                vec![(h, Phase::Map, 2), (l, Phase::Map, 1)]
            );
            for c in &c {
                for _ in 0..c.count {
                    e.task_started(c.job, c.phase, n, Locality::Any, 1).unwrap();
                }
            }
            e.task_finished(l, Phase::Map, n, 5, true, 6).unwrap();
            e.tick(6);
            // H is still in its map stage and reserves its 2 reduces; L may go only if Ra > 2.
            let c = e.node_update(n, [0, reduce_slots], 6).unwrap().to_vec();
            let l_got = c.iter().any(|c| c.job == l && c.phase == Phase::Reduce);
            assert_eq!(l_got, expect_l_reduce, "reduce slots {reduce_slots}: {c:?}");
        }
    }

    #[test]
    fn rejected_jobs_never_run_and_the_reason_reaches_the_host() {
        let (mut e, n) = engine(4, 2, true);
        let (id, adm) = e.submit(job(25, 1, 1), 0).unwrap();
        assert!(matches!(adm, Admission::Reject { .. }));
        assert_eq!(e.job_status(id), Some(circumflex_core::model::JobStatus::Rejected));
        assert!(e.node_update(n, [4, 2], 0).unwrap().is_empty());
    }

    #[test]
    fn best_effort_jobs_rank_after_deadline_jobs() {
        let (mut e, _n) = engine(4, 2, true);
        let free = e.submit(JobSpec::new(0, 2, 1), 0).unwrap().0;
        let dl = e.submit(job(1_000, 2, 1), 0).unwrap().0;
        let order: Vec<JobId> = e.plan().entries.iter().map(|p| p.job).collect();
        assert_eq!(order, vec![dl, free]);
    }

    #[test]
    fn feedback_pulls_successor_estimates_back_after_an_early_finish() {
        // Worst case 10 ms per map, actual 2 ms: after J1 finishes early, J2's stored estimate drops.
        let (mut e, n) = engine(1, 1, true);
        let j1 = e.submit(job(1_000, 3, 0), 0).unwrap().0;
        let j2 = e.submit(job(2_000, 3, 0), 0).unwrap().0;
        let before = e.plan().entry(j2).unwrap().predicted_completion_ms.unwrap();
        assert_eq!(before, 60);
        let mut t = 0;
        for _ in 0..3 {
            let c = e.node_update(n, [1, 0], t).unwrap().to_vec();
            assert_eq!(c[0].job, j1);
            e.task_started(j1, Phase::Map, n, Locality::Any, t).unwrap();
            t += 2;
            e.task_finished(j1, Phase::Map, n, 2, true, t).unwrap();
        }
        assert_eq!(e.job_status(j1), Some(circumflex_core::model::JobStatus::Finished));
        e.tick(t);
        let after = e.plan().entry(j2).unwrap().predicted_completion_ms.unwrap();
        assert_eq!(after, t + 30, "recomputed from the actual finish times");
    }

    #[test]
    fn example_11_feedback_trigger() {
        // Estimated e = 100, Δ = 20, deadline 150.
        assert!(feedback_needed(100, 70, 20, 150), "30 early: update");
        assert!(!feedback_needed(100, 90, 20, 150), "10 early and on time: nothing");
        assert!(feedback_needed(100, 160, 20, 150), "a miss updates regardless of Δ");
    }

    #[test]
    fn example_12_parameter_learning_only_grows() {
        // c_m^max = 0.2 s/MB; a finished job ran two 128 MB maps in 30 s and 20 s.
        let cfg = RtmrConfig { map_ms_per_unit: 200.0, ..RtmrConfig::default() };
        let mut costs = CostModel::new(&cfg);
        let mut spec = JobSpec::new(0, 2, 0);
        spec.maps.input_bytes = Some(2 * 128 * 1024 * 1024);
        let mut job = JobState::new(JobId(0), spec);
        job.phases[0].finished = 2;
        job.phases[0].observed_ms_sum = 50_000;
        job.phases[0].observed_ms_max = 30_000;
        costs.learn(&job);
        assert!((costs.c_m_max - 30_000.0 / 128.0).abs() < 1e-9, "{}", costs.c_m_max);
        // The next 128 MB map is estimated at about 30 s.
        assert_eq!(costs.eps_map(&job), 30_000);
        // A faster job never lowers the estimate.
        job.phases[0].observed_ms_max = 10_000;
        costs.learn(&job);
        assert!((costs.c_m_max - 30_000.0 / 128.0).abs() < 1e-9);
    }
}
