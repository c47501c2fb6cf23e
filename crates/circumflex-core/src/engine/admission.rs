//! Engine-decided AM admission (`circumflex.am.*`, `docs/am-admission.md`): when each job's
//! ApplicationMaster container may start, in plan order, bounded by a share of the pool.
//!
//! On YARN every job first needs its AM container, which holds memory for the job's whole life and
//! runs no task. The shim used to place every AM at once in arrival order, so on a loaded node the
//! AMs of jobs the plan would not serve for minutes held memory the plan's first jobs could have used
//! for tasks (`docs/evaluation.md`, "Loaded regime": the CapacityScheduler, which starts fewer AMs,
//! beat FLEX). With the gate on, the engine decides instead, and hosts only place what it admits.
//!
//! **A job is planned before its AM runs.** A job is submitted with the task counts its host declares
//! (YARN: `mapreduce.job.maps` and `.reduces` of `job.xml`); while its AM has not asked for anything,
//! a host's pending count of 0 is not news and is ignored, so the policy ranks the job by its real size.
//! Its tasks are *gated*: no heartbeat offers them, and no preemption is decided for it, until its AM
//! registers (the host's first positive pending count, or [`Engine::am_registered`]).
//!
//! **The AM life cycle** the engine tracks per job: *waiting* (submitted or [`Engine::am_requested`]),
//! *admitted* (may start: [`Engine::am_admissions`] names it until the host places it), *starting*
//! ([`Engine::am_started`]: the container runs, the AM has not asked yet), *registered* (tasks run),
//! *ended* ([`Engine::am_finished`], until a new attempt asks again).
//!
//! **The gate** (evaluated when a host asks, once per heartbeat batch, and for the status page). The
//! pool's capacity `C` is the task capacity hosts report plus the slots of AM containers that hold
//! capacity (hosts take a running AM's memory out of the node's task capacity, as the YARN shim always
//! did). AMs admitted and not yet placed count as held. Walking the jobs whose AM waits in plan order
//! (unplanned jobs last, by id), each is admitted while, with it, the held slots `h + a`
//! - leave at least one task slot: `C − (h + a) ≥ 1`. AMs never take the last task capacity, so the
//!   jobs whose AMs run can always finish (otherwise *no capacity*);
//! - stay within the share: `h + a ≤ ⌊max_share · C⌋`, unless no AM holds anything (`h = 0`): at least
//!   one AM may always start, so nothing starves however small the share (otherwise *over the share*).
//!
//! - (with `circumflex.am.max.starting.per.node = k > 0`) keep at most `k` AMs *starting* per live
//!   node: admitted, or placed and not yet registered (otherwise *starting full*). See "Starting AMs".
//!
//! The first job that cannot start blocks the ones ranked behind it (*ranked behind*): AMs start in
//! the plan's order, so a small AM of a low-ranked job does not overtake the next job the plan serves.
//! An admission is never taken back.
//!
//! **Why half the pool by default.** The CapacityScheduler caps AMs at 10% of a queue
//! (`maximum-am-resource-percent`), the FairScheduler at half its fair share (`maxAMShare`). At 10% a
//! small cluster runs one AM at a time (on the loaded mini cluster, 24 slots with AMs of 2: one), so no
//! job's AM start-up (5–15 s in the committed timelines) overlaps the jobs before it: in the calibrated
//! simulator that doubles the mean response time of both loaded traces. A quarter was this module's
//! first default; the calibrated simulator found it slower than starting every AM at once on both
//! traces (start-ups queue behind the share), while half the pool was the fastest of 0.25, 0.4, 0.5 and
//! 0.67 on both (`docs/simulator.md`, "YARN mechanics"). What the gate then buys is the order: the AMs
//! of the jobs the plan serves first start first. Those figures used fixed start-up delays; with the
//! simulator's start-up contention (AM JVMs sharing a small host's cores) the share matters less and a
//! bound on starting AMs more (below).
//!
//! **Starting AMs** (`circumflex.am.max.starting.per.node`, off by default). An AM's start-up is a JVM start
//! that takes CPU; on a small host many starting at once stretch each other's start-up (the loaded
//! mini cluster's AMs took 19–29 s to register under FLEX and the FairScheduler against 5–10 s under
//! the CapacityScheduler, which starts one at a time: `docs/evaluation.md`). The bound admits AMs in
//! plan order only while fewer than `k · n` are between admission and registration (`n` live nodes), so
//! the first-ranked jobs' AMs start quickly instead of all AMs slowly. Per node because the contention
//! is a host's: a cluster-wide `k` would throttle job starts on a large cluster for a cost that each
//! host bears alone. The engine does not choose the AM's node (the host places it), so the bound is the
//! cluster-wide `k · n`, not a count per node; on one node, as on the mini cluster, the two are equal.
//! It counts AMs, not slots, and a starting AM always leaves room for the next once it registers, so it
//! cannot deadlock: registration needs only the AM's own container. What it buys is predicted by the simulator's start-up contention model
//! (`docs/simulator.md`, "Start-up contention").
//!
//! Off (the default), nothing here runs: no job is gated and the engine behaves exactly as without it.

use std::collections::BTreeMap;

use serde::Serialize;

use super::Engine;
use crate::error::{Error, Result};
use crate::model::{JobId, Time};

/// Where a job's AM is in its life (module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AmPhase {
    /// Waiting to be admitted.
    Waiting,
    /// May start; the host has not placed its container yet.
    Admitted,
    /// Its container runs; the AM has not asked for tasks yet.
    Starting,
    /// The AM asks for tasks: the job's tasks are no longer gated.
    Registered,
    /// Its container ended; a new attempt asks again with [`Engine::am_requested`].
    Ended,
}

/// Why a job's AM has not started (the status page's column).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AmWaitReason {
    /// Admitted: the host places its container where it fits.
    Admitted,
    /// Starting it would put the AMs over `circumflex.am.max.share`.
    OverShare,
    /// A better-ranked job's AM waits first.
    RankedBehind,
    /// Starting it would leave the running jobs no task capacity (or the pool has none yet).
    NoCapacity,
    /// `circumflex.am.max.starting.per.node` times the live nodes AMs are admitted and not yet registered.
    StartingFull,
}

/// A job waiting for its AM container, as the status page shows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct AmWait {
    /// The job.
    pub job: JobId,
    /// Its plan rank (`u32::MAX`: not planned yet).
    pub rank: u32,
    /// Slots its AM container holds.
    pub slots: u32,
    /// Since when it waits, ms.
    pub since_ms: Time,
    /// Why it has not started.
    pub reason: AmWaitReason,
}

/// The gate's figures for the status page: capacity, held slots, the share's limit.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct AmGateView {
    /// The pool's capacity counting AM containers, slots.
    pub capacity: u32,
    /// Slots AM containers hold (running, or admitted and not placed).
    pub held: u32,
    /// `⌊max_share · capacity⌋`.
    pub limit: u32,
    /// AM containers running (starting or registered).
    pub running: u32,
}

#[derive(Clone, Copy, Debug)]
struct Am {
    phase: AmPhase,
    slots: u32,
    since: Time,
}

impl Am {
    /// Whether the AM holds (or is about to hold) capacity.
    fn holds(&self) -> bool {
        matches!(self.phase, AmPhase::Admitted | AmPhase::Starting | AmPhase::Registered)
    }

    /// Whether it is admitted and not yet registered (`circumflex.am.max.starting.per.node`).
    fn starting(&self) -> bool {
        matches!(self.phase, AmPhase::Admitted | AmPhase::Starting)
    }

    /// Whether its container occupies a node (hosts took it out of the node's task capacity).
    fn placed(&self) -> bool {
        matches!(self.phase, AmPhase::Starting | AmPhase::Registered)
    }
}

/// The engine's AM bookkeeping: one entry per live job while the gate is on.
#[derive(Debug, Default)]
pub(super) struct AdmissionState {
    ams: BTreeMap<JobId, Am>,
    /// The last answer of [`Engine::am_admissions`].
    admitted: Vec<JobId>,
    /// Scratch: the waiting jobs in gate order with their verdicts.
    verdicts: Vec<AmWait>,
}

impl AdmissionState {
    /// Forgets an ended job.
    pub(super) fn forget(&mut self, job: JobId) {
        self.ams.remove(&job);
    }

    /// A job submitted while the gate is on: its AM waits.
    pub(super) fn submitted(&mut self, job: JobId, slots: u32, now: Time) {
        self.ams.insert(job, Am { phase: AmPhase::Waiting, slots, since: now });
    }

    /// Whether the AM of `job` has registered (or the gate does not track it).
    pub(super) fn registered(&self, job: JobId) -> bool {
        match self.ams.get(&job) {
            Some(a) => a.phase == AmPhase::Registered,
            None => true,
        }
    }

    /// Drops every entry (the gate was turned off by a refresh).
    pub(super) fn clear(&mut self) {
        self.ams.clear();
        self.admitted.clear();
        self.verdicts.clear();
    }
}

impl Engine {
    /// An unknown or ended job is an error, whether the gate is on or not.
    fn am_job(&self, job: JobId) -> Result<()> {
        if self.jobs.get(job).is_some_and(|s| s.state.is_active()) {
            Ok(())
        } else {
            Err(Error::UnknownId { kind: "job", id: job.0 as i64 })
        }
    }

    /// Gates or ungates `job`'s tasks and moves its index entries accordingly.
    fn set_gated(&mut self, job: JobId, gated: bool) {
        if let Some(s) = self.sched_mut(job) {
            if s.am_gated == gated {
                return;
            }
            s.am_gated = gated;
        }
        self.dirty = true;
        self.reindex(job);
    }

    /// Moves `job`'s AM to the phase `to` picks from its current one (`None`: the gate has no entry),
    /// with `slots` (0: keep, or `circumflex.am.slots` for a new entry), and gates its tasks unless the
    /// AM registered. A no-op while the gate is off; an unknown job is an error either way.
    fn am_move(
        &mut self,
        job: JobId,
        slots: u32,
        now: Time,
        to: impl FnOnce(Option<AmPhase>) -> AmPhase,
    ) -> Result<()> {
        self.am_job(job)?;
        if !self.config.am.enabled {
            return Ok(());
        }
        let phase = to(self.admission.ams.get(&job).map(|a| a.phase));
        let default = self.config.am.slots;
        let am = self.admission.ams.entry(job).or_insert(Am { phase, slots: default, since: now });
        if am.phase != phase {
            am.phase = phase;
            am.since = now;
        }
        if slots > 0 {
            am.slots = slots;
        }
        self.set_gated(job, phase != AmPhase::Registered);
        Ok(())
    }

    /// The AM of `job` asks for a container of `slots` slots (0: `circumflex.am.slots`): a new
    /// attempt, or the first ask of a host that knows the AM's size. Its tasks are gated until it
    /// registers. A no-op while the gate is off (an unknown job is an error either way).
    pub fn am_requested(&mut self, job: JobId, slots: u32, now: Time) -> Result<()> {
        self.am_move(job, slots, now, |current| match current {
            Some(waiting @ (AmPhase::Waiting | AmPhase::Admitted)) => waiting,
            _ => AmPhase::Waiting,
        })
    }

    /// The AM container of `job` runs now, holding `slots` slots (0: as requested) that the host
    /// took out of its node's task capacity. A no-op while the gate is off.
    pub fn am_started(&mut self, job: JobId, slots: u32, now: Time) -> Result<()> {
        self.am_move(job, slots, now, |current| match current {
            Some(AmPhase::Registered) => AmPhase::Registered,
            _ => AmPhase::Starting,
        })
    }

    /// The AM of `job` asks for tasks: its tasks are no longer gated. Hosts that report pending
    /// counts need not call it: the first positive pending count of a gated job registers its AM.
    /// An AM the engine never heard of (a replay after a refresh) runs, so it holds its slots.
    /// A no-op while the gate is off.
    pub fn am_registered(&mut self, job: JobId, now: Time) -> Result<()> {
        self.am_move(job, 0, now, |_| AmPhase::Registered)
    }

    /// The AM container of `job` ended (the job ends, or a new attempt will ask again): its capacity
    /// is free and its tasks are gated until an AM registers again. A no-op while the gate is off.
    pub fn am_finished(&mut self, job: JobId, now: Time) -> Result<()> {
        self.am_move(job, 0, now, |_| AmPhase::Ended)
    }

    /// While the gate is on and `job`'s AM has not registered: what a host's pending count means.
    /// `Some(true)`: a positive count, the AM asks (it registers now); `Some(false)`: a count of 0
    /// before the AM asked, not news (the declared counts stay); `None`: the gate has no say.
    pub(super) fn am_pending_gate(&mut self, job: JobId, pending: u32, now: Time) -> Option<bool> {
        if !self.config.am.enabled || self.admission.registered(job) {
            return None;
        }
        if pending == 0 {
            return Some(false);
        }
        // Registers it: the pending count is then applied as usual by the caller.
        let _ = self.am_registered(job, now);
        Some(true)
    }

    /// Which waiting AMs may start now, in plan order: the jobs admitted by this call and the ones
    /// admitted earlier whose container the host has not placed yet (module docs: the gate). Hosts
    /// call it once per heartbeat batch while an AM waits, place what fits, and report each start with
    /// [`Engine::am_started`]. Empty while the gate is off.
    pub fn am_admissions(&mut self, now: Time) -> &[JobId] {
        self.admission.admitted.clear();
        if !self.config.am.enabled {
            return &self.admission.admitted;
        }
        let mut verdicts = std::mem::take(&mut self.admission.verdicts);
        self.am_gate(&mut verdicts);
        for v in &verdicts {
            if v.reason != AmWaitReason::Admitted {
                continue;
            }
            if let Some(am) = self.admission.ams.get_mut(&v.job) {
                if am.phase == AmPhase::Waiting {
                    am.phase = AmPhase::Admitted;
                    am.since = now;
                }
            }
            self.admission.admitted.push(v.job);
        }
        self.admission.verdicts = verdicts;
        &self.admission.admitted
    }

    /// The jobs whose AM has not started, in gate order, with why (the status page). Evaluates the
    /// gate without admitting anything.
    pub fn am_waiting(&self) -> Vec<AmWait> {
        let mut verdicts = Vec::new();
        if self.config.am.enabled {
            self.am_gate(&mut verdicts);
        }
        verdicts
    }

    /// The gate's figures now (status page).
    pub fn am_gate_view(&self) -> AmGateView {
        let (capacity, held, running) = self.am_capacity();
        let limit = (self.config.am.max_share * f64::from(capacity)).floor() as u32;
        AmGateView { capacity, held, limit, running }
    }

    /// (pool capacity counting placed AMs, slots held by AMs, AM containers placed).
    fn am_capacity(&self) -> (u32, u32, u32) {
        let tasks: u32 = self.nodes.iter().filter(|n| n.alive).fold(0u32, |sum, n| sum.saturating_add(n.capacity[0]));
        let (mut held, mut placed_slots, mut running) = (0u32, 0u32, 0u32);
        for am in self.admission.ams.values() {
            if am.holds() {
                held = held.saturating_add(am.slots);
            }
            if am.placed() {
                placed_slots = placed_slots.saturating_add(am.slots);
                running += 1;
            }
        }
        (tasks.saturating_add(placed_slots), held, running)
    }

    /// Evaluates the gate (module docs) into `out`: every job whose AM is waiting or admitted, in gate
    /// order, with its verdict. Already admitted AMs keep their admission.
    fn am_gate(&self, out: &mut Vec<AmWait>) {
        out.clear();
        for (&job, am) in &self.admission.ams {
            if matches!(am.phase, AmPhase::Waiting | AmPhase::Admitted) {
                let rank = self.sched(job).map_or(u32::MAX, |s| s.rank);
                let reason =
                    if am.phase == AmPhase::Admitted { AmWaitReason::Admitted } else { AmWaitReason::RankedBehind };
                out.push(AmWait { job, rank, slots: am.slots, since_ms: am.since, reason });
            }
        }
        out.sort_unstable_by_key(|w| (w.rank, w.job));
        let (capacity, mut held, _) = self.am_capacity();
        let limit = (self.config.am.max_share * f64::from(capacity)).floor() as u32;
        let per_node = self.config.am.max_starting_per_node;
        let bounded = per_node > 0;
        // Counted only under a bound: the gate runs on every heartbeat batch while an AM waits.
        let (max_starting, mut starting) = if bounded {
            let live_nodes = self.nodes.iter().filter(|n| n.alive).count() as u32;
            let starting = self.admission.ams.values().filter(|am| am.starting()).count() as u32;
            (per_node.saturating_mul(live_nodes), starting)
        } else {
            (0, 0)
        };
        let mut blocked = false;
        for w in out.iter_mut() {
            if w.reason == AmWaitReason::Admitted {
                continue;
            }
            if blocked {
                w.reason = AmWaitReason::RankedBehind;
                continue;
            }
            let after = held.saturating_add(w.slots);
            w.reason = if capacity.saturating_sub(after) < 1 {
                AmWaitReason::NoCapacity
            } else if held > 0 && after > limit {
                AmWaitReason::OverShare
            } else if bounded && starting >= max_starting {
                AmWaitReason::StartingFull
            } else {
                AmWaitReason::Admitted
            };
            if w.reason == AmWaitReason::Admitted {
                held = after;
                starting += 1;
            } else {
                blocked = true;
            }
        }
    }

    /// Slots of `job`'s AM if the gate admitted it and the host has not placed it yet, in engine pool
    /// `pool` (AM containers exist in a shared pool only); 0 otherwise (`engine/preempt.rs`, "AMs").
    pub(super) fn am_unplaced_slots(&self, job: JobId, pool: usize) -> u32 {
        if !self.config.am.enabled || pool != 0 || self.config.pool_mode != crate::policy::PoolMode::Shared {
            return 0;
        }
        match self.admission.ams.get(&job) {
            Some(am) if am.phase == AmPhase::Admitted => am.slots,
            _ => 0,
        }
    }

    /// The AM phase of `job`, while the gate tracks it.
    pub fn am_phase(&self, job: JobId) -> Option<AmPhase> {
        self.admission.ams.get(&job).map(|a| a.phase)
    }

    /// Whether `job`'s tasks wait for its AM (never while the gate is off).
    #[inline]
    pub(super) fn tasks_gated(&self, job: JobId) -> bool {
        self.sched(job).is_some_and(|s| s.am_gated)
    }

    /// A refresh turned the gate off: every job's tasks are free to run.
    pub(super) fn admission_off(&mut self) {
        let gated: Vec<JobId> = self.admission.ams.keys().copied().collect();
        self.admission.clear();
        for job in gated {
            self.set_gated(job, false);
        }
    }
}

#[cfg(test)]
mod tests;
