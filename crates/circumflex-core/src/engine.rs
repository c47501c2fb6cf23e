//! The engine: one scheduler instance's state, fed by host events, answering node updates.
//!
//! The engine owns jobs, nodes, the current [`Plan`] and the assignment index. Hosts (the JNI
//! shims, the C ABI, the simulator) call it with events stamped with the host's time; it never
//! reads a clock for scheduling decisions.
//!
//! Data flow: events ([`Engine::submit`], [`Engine::task_started`], [`Engine::task_finished`], ...)
//! update state; [`Engine::tick`] re-plans when an epoch has passed (and arrivals and departures
//! re-plan at once when `replan_on_events`); [`Engine::node_update`] answers a heartbeat from the
//! current plan.
//!
//! **Job retirement**: a job that ends is freed at once (see [`Engine`]; the table is in
//! `engine/table.rs`), so the engine's memory is bounded by its live jobs and a small ring of
//! recently ended ones, however long the daemon runs.
//!
//! **The assignment layer** (FLEX appendix A.1): a free slot goes to the runnable job that is most
//! under-allocated relative to its target (`running / target` smallest, ties by plan rank); when
//! no job is under target, spare slots go to runnable jobs in plan order (work conservation).
//! Map slots obey delay scheduling: a job may skip `node_locality_delay` offers waiting for a
//! node-local slot, then `rack_locality_delay` more for rack-local, before taking any slot.
//! A restricted offer is one choice for up to the job's deficit (target − running; in the spare pass,
//! its pending tasks) that spends no budget: the host takes as many as are local on this node, and
//! the choices after it are the fallbacks. (One task per restricted offer gave a job whose asks are
//! local everywhere, as YARN asks without hosts are, one container per heartbeat and handed the rest
//! of the node to lower-ranked jobs: the Gridmix FLEX defect in `docs/evaluation.md`.)
//! A plan with [`AssignmentRule::RankedDeficit`] serves the jobs below target in plan order instead
//! (the key is the rank alone): the top-ranked one takes every slot that frees until it reaches its
//! target.
//! **Long-task reserve** ([`Plan::long_task_reserve`], read only with preemption on): tasks of a phase
//! whose estimate exceeds `delay.ms + grace.ms` may hold at most `1 − long.task.reserve` of each pool, in
//! both passes, so jobs arriving behind long tasks find slots at the next heartbeats (`docs/preemption.md`).
//! The counts are re-derived at each plan and kept by task events; a heartbeat compares two counters.
//! A plan may replace that rule per job ([`Plan::locality_waits`], the Adaptive Scheduler's data
//! affinity): such a job's map tasks each wait at most its own number of offers for a node-local
//! slot, then take any; every launch starts the next task's count from zero.
//!
//! A heartbeat never offers more than the node's capacity minus its running tasks (hosts reserve room
//! for non-task containers, such as a waiting YARN AM, by lowering the capacity).
//!
//! **Hardware affinity** (the Adaptive Scheduler's accelerated pool): a node is accelerated when its
//! host name is listed in `circumflex.adaptive.accelerated.hosts` at [`Engine::add_node`] (or the host
//! marks it with [`Engine::set_node_accelerated`], e.g. from a YARN node label). The engine counts
//! each job's running and finished maps per pool ([`crate::model::MapPoolStats`]). A plan's
//! [`Plan::accelerated_targets`] are honoured before the deficit passes: on an accelerated node the
//! listed jobs below their accelerated target get the map slots first (in list order, any locality:
//! accelerated work is CPU-bound); on a regular node a listed job takes maps only up to the rest of
//! its map target (Eq. 3's overflow), also in the work-conserving pass, so an accelerable job does
//! not spread over regular nodes beyond what its goal asks for.
//!
//! **Hot path invariant:** `node_update` never re-plans and never changes the index (the entries it
//! re-keys tentatively sit in a scratch list until the host's `task_started` makes them real), and
//! allocates only when a scratch list grows; it is `O(k log n)` for `k` choices over `n` indexed
//! (job, phase) entries. The
//! indices are kept per phase so that a heartbeat with slots of one phase left never walks the
//! entries of the other (that walk made a 10,000-job heartbeat cost ~0.9 ms; see `benches/`).

mod admission;
mod estimate;
mod labels;
mod preempt;
mod starts;
mod table;

pub use admission::{AmGateView, AmPhase, AmWait, AmWaitReason};
pub use preempt::{Preemption, PreemptionRecord, RECENT_PREEMPTIONS};

use std::collections::{BTreeSet, VecDeque};
use std::time::Instant;

use serde::Serialize;

use crate::config::EngineConfig;
use crate::error::{Error, Result};
use crate::model::{JobId, JobSpec, JobState, JobStatus, Locality, NodeId, Phase, Time};
use crate::policy::{Admission, AssignmentRule, ClusterView, JobLookup, Plan, Policy, PoolMode, Snapshot};
use table::JobTable;

/// Ended jobs whose final state the engine keeps for reports (status page, status JSON), newest last.
pub const RECENT_JOBS: usize = 256;

/// One entry of a node-update answer: offer up to `count` tasks of `job`'s `phase` on the node,
/// at locality no worse than `locality`. The host walks choices in order until the node is full;
/// choices beyond the free slots are fallbacks for restricted-locality offers that may not fit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Choice {
    /// The job.
    pub job: JobId,
    /// The phase.
    pub phase: Phase,
    /// Most tasks to launch from this choice.
    pub count: u32,
    /// Worst acceptable locality.
    pub locality: Locality,
}

/// A worker node as the engine tracks it.
#[derive(Clone, Debug, Serialize)]
pub struct NodeState {
    /// Engine id.
    pub id: NodeId,
    /// Host name.
    pub name: String,
    /// Rack name.
    pub rack: String,
    /// Slots per phase (shared mode: all in `[0]`).
    pub capacity: [u32; 2],
    /// Tasks running per phase, from task events.
    pub running: [u32; 2],
    /// False once removed.
    pub alive: bool,
    /// Member of the accelerated pool (hardware affinity).
    pub accelerated: bool,
}

/// Counters for observability and benchmarks.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct EngineStats {
    /// Plans computed.
    pub plans: u64,
    /// Nanoseconds spent in the last plan (policy plus re-index).
    pub last_plan_ns: u64,
    /// Total nanoseconds spent planning.
    pub total_plan_ns: u64,
    /// Node updates answered.
    pub node_updates: u64,
    /// Jobs accepted.
    pub admitted: u64,
    /// Jobs rejected by admission control.
    pub rejected: u64,
    /// Jobs finished.
    pub finished: u64,
    /// Finished jobs whose finish came after their deadline.
    pub deadline_misses: u64,
    /// Tasks the engine decided to take back (`circumflex.preemption.*`).
    pub preemptions: u64,
    /// Tasks hosts killed for a preemption.
    pub preempted_tasks: u64,
    /// Work those kills threw away, slot-ms.
    pub preempted_lost_ms: u64,
}

/// An entry of the under-allocated index: (relative allocation, rank, phase, job).
type UnderEntry = (u32, u32, u8, u32);

/// A job without an order label yet.
const NO_LABEL: u32 = u32::MAX;

/// Per-(job, phase) key in the under-allocated index: relative allocation in millionths.
const SCALE: u64 = 1_000_000;

/// The key of a (job, phase) running `running` tasks below its `target` in the under-allocated
/// index: its relative allocation, or 0 under [`AssignmentRule::RankedDeficit`] (the entries then
/// sort by plan rank alone).
#[inline]
fn under_key(ranked: bool, running: u32, target: u32) -> u32 {
    if ranked {
        0
    } else {
        (running as u64 * SCALE / target.max(1) as u64) as u32
    }
}

#[derive(Clone, Copy, Debug, Default)]
struct IndexSlot {
    /// Key currently in `under`, if any.
    under: Option<u32>,
    /// Whether the entry is in `spare`.
    spare: bool,
}

/// The engine's per-job assignment state, beside the job's [`JobState`].
#[derive(Clone, Copy, Debug)]
struct Sched {
    /// Plan rank (`u32::MAX` = not in plan).
    rank: u32,
    /// The rank's order label, which keys the job's index entries (`engine/labels.rs`).
    label: u32,
    /// Plan targets per phase.
    target: [u32; 2],
    /// Delay scheduling: offers skipped waiting for locality.
    skips: u32,
    /// The plan's locality wait, replacing the global delays (`None` = global rule).
    locality_wait: Option<u32>,
    /// The plan's accelerated-pool map target (`None` = not listed, unrestricted).
    accel_target: Option<u32>,
    /// Per slot pool: since when the job has been starved there (preemption, `engine/preempt.rs`).
    starved_since: [Option<Time>; 2],
    /// Its tasks wait for its AM (`engine/admission.rs`; never while the AM gate is off).
    am_gated: bool,
    index: [IndexSlot; 2],
    /// Listed in `Engine::changed` (its state changed since the last plan).
    changed: bool,
    /// Per phase: its tasks count as long for the plan's long-task reserve (set at each plan).
    long: [bool; 2],
}

impl Default for Sched {
    fn default() -> Self {
        Sched {
            rank: u32::MAX,
            label: NO_LABEL,
            target: [0, 0],
            skips: 0,
            locality_wait: None,
            accel_target: None,
            starved_since: [None, None],
            am_gated: false,
            index: [IndexSlot::default(); 2],
            changed: false,
            long: [false, false],
        }
    }
}

/// One live job in the engine's table.
#[derive(Debug)]
struct Slot {
    state: JobState,
    sched: Sched,
    /// Start times of the running tasks per phase (youngest-first preemption).
    starts: [preempt::Starts; 2],
}

impl JobLookup for JobTable<Slot> {
    #[inline]
    fn lookup(&self, id: JobId) -> Option<&JobState> {
        self.get(id).map(|s| &s.state)
    }
}

/// A scheduler instance. Not thread-safe by itself: hosts wrap it in a mutex.
///
/// **Retirement:** a job that ends (finishes, is ended by the host, or is rejected at submission)
/// is retired at once: the policy hears of it ([`Policy::on_job_finished`], or the rejection),
/// the event's caller can read its final state from [`Engine::recent_jobs`] / [`Engine::job_status`],
/// and its per-job state is freed. The engine keeps the last [`RECENT_JOBS`] ended jobs for
/// reports. Events naming a retired job are refused with [`Error::UnknownId`] (hosts log them at
/// debug level), so memory is bounded by the live jobs, not by every job ever submitted.
pub struct Engine {
    config: EngineConfig,
    policy: Box<dyn Policy>,
    jobs: JobTable<Slot>,
    /// The last [`RECENT_JOBS`] ended jobs, oldest first.
    recent: VecDeque<JobState>,
    active: Vec<JobId>,
    nodes: Vec<NodeState>,
    plan: Plan,
    next_epoch: Time,
    dirty: bool,
    /// Per phase: (relative allocation, rank label, phase, job) of runnable entries below target.
    /// One set per phase so a heartbeat never walks entries of a phase it has no slot for.
    under: [BTreeSet<(u32, u32, u8, u32)>; 2],
    /// Per phase: (rank label, phase, job) of every runnable entry.
    spare: [BTreeSet<(u32, u8, u32)>; 2],
    /// Label spacing of the last from-scratch relabelling (`engine/labels.rs`).
    label_gap: u32,
    /// The active jobs when the plan was last applied in full (`engine/labels.rs`).
    planned_active: Vec<JobId>,
    choices: Vec<Choice>,
    /// Jobs whose state changed since the last plan, for the policy's incremental re-plan
    /// ([`Snapshot::with_changes`]): every change to a live job's state goes through
    /// `live_slot_mut`, which records it.
    changed: Vec<JobId>,
    /// Preemption decisions in flight, earmarked slots, recent kills (`engine/preempt.rs`).
    preempt: preempt::PreemptState,
    /// AM containers and the gate's bookkeeping (`engine/admission.rs`).
    admission: admission::AdmissionState,
    /// Pass 1 of one heartbeat: the under entries it re-keyed tentatively (module docs of
    /// `node_update`: pass 1 reads the index through `first_under_with_budget` and never changes it).
    tentative: Vec<UnderEntry>,
    /// The long-task reserve (`Plan::long_task_reserve`), per slot pool: how many slots long tasks
    /// may hold, and how many they hold (recounted at each plan, kept up to date by task events).
    long_cap: [u32; 2],
    long_running: [u32; 2],
    stats: EngineStats,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("policy", &self.policy.name())
            .field("jobs", &self.jobs.len())
            .field("active", &self.active.len())
            .field("nodes", &self.nodes.len())
            .finish()
    }
}

impl Engine {
    /// Creates an engine around `policy`, which the caller built for `config` (hosts and the lab
    /// build it through the registry, `circumflex_policies::new_engine`; tests may pass any policy).
    pub fn with_policy(config: EngineConfig, policy: Box<dyn Policy>) -> Engine {
        Engine {
            config,
            policy,
            jobs: JobTable::default(),
            recent: VecDeque::with_capacity(RECENT_JOBS),
            active: Vec::new(),
            nodes: Vec::new(),
            plan: Plan::default(),
            next_epoch: Time::MIN,
            dirty: true,
            under: [BTreeSet::new(), BTreeSet::new()],
            spare: [BTreeSet::new(), BTreeSet::new()],
            label_gap: 0,
            planned_active: Vec::new(),
            choices: Vec::with_capacity(64),
            changed: Vec::new(),
            preempt: preempt::PreemptState::default(),
            admission: admission::AdmissionState::default(),
            tentative: Vec::with_capacity(64),
            long_cap: [u32::MAX; 2],
            long_running: [0; 2],
            stats: EngineStats::default(),
        }
    }

    /// The configuration.
    pub fn config(&self) -> &EngineConfig {
        &self.config
    }

    /// The policy's name.
    pub fn policy_name(&self) -> &'static str {
        self.policy.name()
    }

    /// Replaces the configuration and policy (operator refresh); the caller built `policy` for
    /// `config` through the registry, so a bad refresh fails there and the old ones stay.
    pub fn reconfigure(&mut self, config: EngineConfig, policy: Box<dyn Policy>, now: Time) {
        let gate_off = self.config.am.enabled && !config.am.enabled;
        self.policy = policy;
        self.config = config;
        if gate_off {
            self.admission_off();
        }
        self.replan(now);
    }

    // ----- nodes -------------------------------------------------------------------------

    /// Registers a node with `map_slots` and `reduce_slots` (shared mode: pass all slots as
    /// `map_slots` and 0). Returns its id.
    pub fn add_node(&mut self, name: &str, rack: &str, map_slots: u32, reduce_slots: u32) -> NodeId {
        let id = NodeId(self.nodes.len() as u32);
        let accelerated = self.config.is_accelerated_host(name);
        self.nodes.push(NodeState {
            id,
            name: name.to_string(),
            rack: rack.to_string(),
            capacity: [map_slots, reduce_slots],
            running: [0, 0],
            alive: true,
            accelerated,
        });
        self.dirty = true;
        id
    }

    /// Puts a node in or out of the accelerated pool (hosts that know it otherwise, e.g. a YARN
    /// node label equal to `circumflex.adaptive.accelerated.label`).
    pub fn set_node_accelerated(&mut self, node: NodeId, accelerated: bool) -> Result<()> {
        let n = self.node_mut(node)?;
        n.accelerated = accelerated;
        self.dirty = true;
        Ok(())
    }

    /// Map slots (shared mode: slots) of live accelerated nodes.
    pub fn accelerated_map_slots(&self) -> u32 {
        self.nodes.iter().filter(|n| n.alive && n.accelerated).map(|n| n.capacity[0]).sum()
    }

    /// Changes a node's capacity.
    pub fn set_node_capacity(&mut self, node: NodeId, map_slots: u32, reduce_slots: u32) -> Result<()> {
        let n = self.node_mut(node)?;
        n.capacity = [map_slots, reduce_slots];
        self.dirty = true;
        Ok(())
    }

    /// Marks a node lost. The host must report its running tasks as failed
    /// ([`Engine::task_finished`] with `success = false`) so they are re-run.
    pub fn remove_node(&mut self, node: NodeId, now: Time) -> Result<()> {
        self.node_mut(node)?.alive = false;
        self.drop_earmarks(node);
        self.replan(now);
        Ok(())
    }

    fn node_mut(&mut self, node: NodeId) -> Result<&mut NodeState> {
        self.nodes
            .get_mut(node.0 as usize)
            .filter(|n| n.alive)
            .ok_or(Error::UnknownId { kind: "node", id: node.0 as i64 })
    }

    /// All nodes ever added.
    pub fn nodes(&self) -> &[NodeState] {
        &self.nodes
    }

    /// Capacities of live nodes.
    pub fn cluster(&self) -> ClusterView {
        let mut view = ClusterView { map_slots: 0, reduce_slots: 0, mode: self.config.pool_mode, nodes: 0 };
        for n in self.nodes.iter().filter(|n| n.alive) {
            // Saturating: a host may register many nodes with huge capacities; a cluster total that
            // wrapped around would make every policy plan for a tiny cluster.
            view.map_slots = view.map_slots.saturating_add(n.capacity[0]);
            view.reduce_slots = view.reduce_slots.saturating_add(n.capacity[1]);
            view.nodes += 1;
        }
        view
    }

    // ----- jobs --------------------------------------------------------------------------

    /// Submits a job at `now`. Validates the spec, asks the policy for admission, and re-plans
    /// when configured to. A rejected job is never scheduled: it is retired at once (its final
    /// state, status `Rejected`, is among [`Engine::recent_jobs`]).
    pub fn submit(&mut self, spec: JobSpec, now: Time) -> Result<(JobId, Admission)> {
        spec.validate()?;
        let id = self.jobs.next_id().ok_or_else(|| Error::job("job count", u32::MAX, "fewer than 2^32 - 1 jobs"))?;
        let am_gated = self.config.am.enabled;
        let sched = Sched { am_gated, ..Sched::default() };
        let mut state = JobState::new(id, spec);
        for ph in Phase::ALL {
            let tasks = state.phase(ph).total;
            state.phase_mut(ph).prior_ms = self.task_prior(ph, tasks);
        }
        self.jobs.push(Slot { state, sched, starts: Default::default() });
        self.active.push(id);
        if am_gated {
            self.admission.submitted(id, self.config.am.slots, now);
        }
        let admission = {
            let snap = Snapshot::with_lookup(now, self.cluster(), &self.jobs, &self.active);
            self.policy.admit(&snap, id)
        };
        match admission {
            Admission::Accept => {
                self.stats.admitted += 1;
                self.dirty = true;
                if self.config.replan_on_events {
                    self.replan(now);
                }
            }
            Admission::Reject { .. } => {
                self.stats.rejected += 1;
                self.active.pop();
                self.retire(id, JobStatus::Rejected, None);
            }
        }
        Ok((id, admission))
    }

    /// Frees an ended job's state, keeping its final state among the recent jobs.
    fn retire(&mut self, job: JobId, status: JobStatus, finished_ms: Option<Time>) {
        let Some(slot) = self.jobs.retire(job) else { return };
        self.admission.forget(job);
        let mut state = slot.state;
        state.status = status;
        state.finished_ms = finished_ms;
        // The per-task log (RTMR's feedback) is no report material; do not keep it in the ring.
        state.task_finish_ms = [Vec::new(), Vec::new()];
        if self.recent.len() >= RECENT_JOBS {
            self.recent.pop_front();
        }
        self.recent.push_back(state);
    }

    fn job_mut(&mut self, job: JobId) -> Result<&mut JobState> {
        self.live_slot_mut(job).map(|s| &mut s.state)
    }

    /// The table entry of active job `job` (its state and its assignment bookkeeping).
    /// Every change to a live job's state goes through here, which records the job as changed.
    fn live_slot_mut(&mut self, job: JobId) -> Result<&mut Slot> {
        let slot = self
            .jobs
            .get_mut(job)
            .filter(|s| s.state.is_active())
            .ok_or(Error::UnknownId { kind: "job", id: job.0 as i64 })?;
        if !slot.sched.changed {
            slot.sched.changed = true;
            self.changed.push(job);
        }
        Ok(slot)
    }

    /// The live (active) job with id `job`; `None` for unknown ids and for ended jobs, which are
    /// retired (see [`Engine::job_status`] and [`Engine::recent_jobs`] for those).
    pub fn job(&self, job: JobId) -> Option<&JobState> {
        self.jobs.lookup(job)
    }

    /// The live jobs in id order.
    pub fn live_jobs(&self) -> impl Iterator<Item = &JobState> + '_ {
        self.jobs.iter().map(|s| &s.state)
    }

    /// The last [`RECENT_JOBS`] ended (finished or rejected) jobs, oldest first, as they ended.
    pub fn recent_jobs(&self) -> impl DoubleEndedIterator<Item = &JobState> + '_ {
        self.recent.iter()
    }

    /// The status of job `job`: live jobs and recently ended ones answer exactly; an older
    /// retired job answers [`JobStatus::Finished`] (rejected jobs end the same way: past the ring
    /// the engine no longer tells them apart); an id never assigned answers `None`.
    pub fn job_status(&self, job: JobId) -> Option<JobStatus> {
        if let Some(j) = self.jobs.lookup(job) {
            return Some(j.status);
        }
        if let Some(j) = self.recent.iter().rev().find(|j| j.id == job) {
            return Some(j.status);
        }
        self.jobs.is_retired(job).then_some(JobStatus::Finished)
    }

    /// Number of live jobs (the size of the job table).
    pub fn live_job_count(&self) -> usize {
        self.jobs.len()
    }

    /// Active job ids in submission order.
    pub fn active(&self) -> &[JobId] {
        &self.active
    }

    /// Sets the number of pending tasks of a phase (YARN: the AM's outstanding asks). Grows
    /// `total` when the host asks for more tasks than announced. With the AM gate on, a count of 0
    /// before the job's AM asked is ignored (the declared counts stay) and a positive one registers
    /// the AM (`engine/admission.rs`).
    pub fn set_pending(&mut self, job: JobId, phase: Phase, pending: u32) -> Result<()> {
        self.job_mut(job)?;
        if self.am_pending_gate(job, pending, 0) == Some(false) {
            return Ok(());
        }
        let j = self.job_mut(job)?;
        let p = j.phase_mut(phase);
        p.pending = pending;
        p.total = p.total.max(p.finished + p.running + pending);
        self.reindex(job);
        Ok(())
    }

    /// Overrides whether reduces may run (the host knows its slow-start state best).
    pub fn set_reduces_ready(&mut self, job: JobId, ready: bool) -> Result<()> {
        self.job_mut(job)?.reduces_ready_override = Some(ready);
        self.reindex(job);
        Ok(())
    }

    /// A task of `job`'s `phase` started on `node` at `locality`.
    pub fn task_started(
        &mut self,
        job: JobId,
        phase: Phase,
        node: NodeId,
        locality: Locality,
        now: Time,
    ) -> Result<()> {
        let slot = self.slot_of(phase);
        let n = self.node_mut(node)?;
        n.running[slot] += 1;
        let pool = usize::from(n.accelerated);
        let slot_entry = self.live_slot_mut(job)?;
        slot_entry.starts[phase.idx()].add(now);
        let long = slot_entry.sched.long[phase.idx()];
        let j = &mut slot_entry.state;
        if phase == Phase::Map {
            j.map_pools.running[pool] += 1;
        }
        let p = j.phase_mut(phase);
        p.pending = p.pending.saturating_sub(1);
        p.running += 1;
        p.running_start_sum = p.running_start_sum.saturating_add(now);
        p.total = p.total.max(p.finished + p.running + p.pending);
        j.started_ms.get_or_insert(now);
        if long {
            self.long_running[slot] = self.long_running[slot].saturating_add(1);
        }
        if phase == Phase::Map {
            let (node_delay, rack_delay) = (self.config.node_locality_delay, self.config.rack_locality_delay);
            if let Some(s) = self.sched_mut(job) {
                // Delay scheduling: the job's allowed level becomes the level it just launched at.
                s.skips = match locality {
                    _ if s.locality_wait.is_some() => 0,
                    Locality::Node => 0,
                    Locality::Rack => node_delay,
                    Locality::Any => node_delay + rack_delay,
                };
            }
        }
        self.reindex(job);
        Ok(())
    }

    /// A task of `job`'s `phase` on `node` ended after `duration_ms`. A failed task goes back to
    /// pending. When every task of the job has finished the job completes (and re-plans).
    pub fn task_finished(
        &mut self,
        job: JobId,
        phase: Phase,
        node: NodeId,
        duration_ms: Time,
        success: bool,
        now: Time,
    ) -> Result<()> {
        let slot = self.slot_of(phase);
        let mut pool = 0;
        if let Some(n) = self.nodes.get_mut(node.0 as usize) {
            n.running[slot] = n.running[slot].saturating_sub(1);
            pool = usize::from(n.accelerated);
        }
        let log_finishes = self.policy.needs_task_finish_times();
        let slot_entry = self.live_slot_mut(job)?;
        slot_entry.starts[phase.idx()].remove_near(now.saturating_sub(duration_ms.max(0)));
        let long = slot_entry.sched.long[phase.idx()];
        let j = &mut slot_entry.state;
        if success && log_finishes {
            j.task_finish_ms[phase.idx()].push(now);
        }
        if phase == Phase::Map {
            let mp = &mut j.map_pools;
            mp.running[pool] = mp.running[pool].saturating_sub(1);
            if success {
                mp.finished[pool] += 1;
                mp.finished_ms_sum[pool] =
                    mp.finished_ms_sum[pool].saturating_add(duration_ms.clamp(0, crate::model::MAX_TASK_MS));
            }
        }
        let p = j.phase_mut(phase);
        if p.running > 0 {
            p.running_start_sum = p.running_start_sum.saturating_sub(now.saturating_sub(duration_ms.max(0)));
        }
        p.running = p.running.saturating_sub(1);
        if p.running == 0 {
            p.running_start_sum = 0;
        }
        if success {
            p.finished += 1;
            let d = duration_ms.clamp(0, crate::model::MAX_TASK_MS);
            p.observed_ms_sum = p.observed_ms_sum.saturating_add(d);
            p.observed_ms_max = p.observed_ms_max.max(d);
        } else {
            p.pending += 1;
        }
        // A finished map phase makes reduces runnable: a significant event, re-plan at the next tick.
        let map_phase_done = phase == Phase::Map && success && p.pending == 0 && p.running == 0;
        let done = j.phases.iter().all(|p| p.pending == 0 && p.running == 0 && p.finished >= p.total);
        if map_phase_done {
            self.dirty = true;
        }
        if long {
            self.long_running[slot] = self.long_running[slot].saturating_sub(1);
        }
        if done {
            self.finish_job(job, now)?;
        } else {
            self.reindex(job);
        }
        Ok(())
    }

    /// Ends a job (all tasks done, or removed by the host: killed, failed). Idempotent for jobs
    /// that are already finished.
    pub fn finish_job(&mut self, job: JobId, now: Time) -> Result<()> {
        let retired = self.jobs.is_retired(job);
        let deadline = match self.jobs.get_mut(job).map(|s| &mut s.state) {
            Some(j) if j.is_active() => {
                j.status = JobStatus::Finished;
                j.finished_ms = Some(now);
                j.spec.deadline_ms
            }
            Some(_) => return Ok(()),
            // Ended earlier and retired: ending it again is the idempotent no-op it always was.
            None if retired => {
                log::debug!("finish_job for job {} that already ended; ignored", job.0);
                return Ok(());
            }
            None => return Err(Error::UnknownId { kind: "job", id: job.0 as i64 }),
        };
        self.active.retain(|&a| a != job);
        self.unindex(job);
        self.stats.finished += 1;
        if deadline.is_some_and(|due| now > due) {
            self.stats.deadline_misses += 1;
        }
        {
            let snap = Snapshot::with_lookup(now, self.cluster(), &self.jobs, &self.active);
            self.policy.on_job_finished(&snap, job);
        }
        self.retire(job, JobStatus::Finished, Some(now));
        self.dirty = true;
        if self.config.replan_on_events {
            self.replan(now);
        }
        Ok(())
    }

    // ----- planning ----------------------------------------------------------------------

    /// Re-plans if an epoch boundary has passed or state changed since the last plan.
    /// Returns whether it planned. Hosts call this from a timer, never from a heartbeat.
    pub fn tick(&mut self, now: Time) -> bool {
        if self.dirty || now >= self.next_epoch {
            self.replan(now);
            true
        } else {
            false
        }
    }

    /// Computes a new plan now and rebuilds the assignment index.
    pub fn replan(&mut self, now: Time) {
        let started = Instant::now();
        self.raise_age_floors(now);
        let accelerated = self.accelerated_map_slots();
        self.policy.on_accelerated_capacity(accelerated);
        let plan = {
            let snap = Snapshot::with_lookup(now, self.cluster(), &self.jobs, &self.active).with_changes(&self.changed);
            self.policy.plan(&snap)
        };
        for id in self.changed.drain(..) {
            if let Some(s) = self.jobs.get_mut(id) {
                s.sched.changed = false;
            }
        }
        if self.apply_in_place(&plan) {
            self.plan = plan;
            self.plan_done(now, started);
            return;
        }
        for i in 0..self.active.len() {
            if let Some(s) = self.jobs.get_mut(self.active[i]).map(|s| &mut s.sched) {
                s.rank = u32::MAX;
                s.target = [0, 0];
                s.locality_wait = None;
                s.accel_target = None;
            }
        }
        for &(job, slots) in &plan.accelerated_targets {
            if let Some(s) = self.sched_mut(job) {
                s.accel_target = Some(slots);
            }
        }
        for &(job, waits) in &plan.locality_waits {
            if let Some(s) = self.sched_mut(job) {
                s.locality_wait = Some(waits);
            }
        }
        for (r, e) in plan.entries.iter().enumerate() {
            if let Some(s) = self.sched_mut(e.job) {
                s.rank = r as u32;
                s.target = e.target;
            }
        }
        self.plan = plan;
        // Jobs the policy left out of its plan still get spare capacity, after all planned ones.
        let mut extra = self.plan.entries.len() as u32;
        for i in 0..self.active.len() {
            if let Some(s) = self.sched_mut(self.active[i]) {
                if s.rank == u32::MAX {
                    s.rank = extra;
                    extra += 1;
                }
            }
        }
        // The index is updated in place: only jobs whose label, target or state changed move.
        self.relabel();
        for i in 0..self.active.len() {
            self.reindex(self.active[i]);
        }
        self.planned_active.clone_from(&self.active);
        self.plan_done(now, started);
    }

    /// The long-task reserve (`Plan::long_task_reserve`, with preemption on), re-derived at each
    /// plan: a phase's tasks are long when its estimate exceeds `delay.ms + grace.ms`, the time
    /// preemption needs to hand a slot back; long tasks may hold at most `1 − long.task.reserve` of each
    /// pool (the heartbeat path then only compares two counters). Off: no limit.
    fn recount_long_tasks(&mut self) {
        let pre = self.config.preemption;
        let on = pre.enabled && pre.long_task_reserve > 0.0 && self.plan.long_task_reserve;
        if !on && self.long_cap == [u32::MAX; 2] {
            // Off now and at the last plan: every flag is already clear.
            return;
        }
        let threshold = pre.delay_ms.saturating_add(pre.grace_ms);
        let mut held = [0u32; 2];
        let shared = self.config.pool_mode == PoolMode::Shared;
        for i in 0..self.active.len() {
            let Some(Slot { state, sched, .. }) = self.jobs.get_mut(self.active[i]) else { continue };
            for ph in Phase::ALL {
                let long = on && state.task_ms_estimate(ph) > threshold;
                sched.long[ph.idx()] = long;
                if long {
                    let s = if shared { 0 } else { ph.idx() };
                    held[s] = held[s].saturating_add(state.phase(ph).running);
                }
            }
        }
        self.long_running = held;
        self.long_cap = if on {
            let cluster = self.cluster();
            // At least one slot stays open to long tasks: a pool that only long tasks can use never idles
            // for good (a one-slot pool, or a reserve of 1, would otherwise run none).
            let keep = |slots: u32| {
                let reserve = (f64::from(slots) * pre.long_task_reserve.clamp(0.0, 1.0)).floor() as u32;
                slots.saturating_sub(reserve).max(1)
            };
            if shared {
                [keep(cluster.total_slots()), 0]
            } else {
                [keep(cluster.map_slots), keep(cluster.reduce_slots)]
            }
        } else {
            [u32::MAX; 2]
        };
    }

    /// The current plan. Its predicted completions may be pending ([`Plan::completions_pending`]):
    /// status views call [`Engine::predict_completions`] first.
    pub fn plan(&self) -> &Plan {
        &self.plan
    }

    /// Fills the current plan's predicted completions if its policy left them out
    /// ([`Policy::predict_completions`]: exactly what the plan would have carried, as of its own
    /// snapshot). For status views; never called on a heartbeat or a re-plan, which read none.
    pub fn predict_completions(&mut self) {
        if self.plan.completions_pending {
            self.policy.predict_completions(&mut self.plan);
            self.plan.completions_pending = false;
        }
    }

    /// Counters.
    pub fn stats(&self) -> EngineStats {
        self.stats
    }

    /// A snapshot of the current state, for reports and tests.
    pub fn snapshot(&self, now: Time) -> Snapshot<'_> {
        Snapshot::with_lookup(now, self.cluster(), &self.jobs, &self.active)
    }

    /// The assignment state of live job `job`.
    #[inline]
    fn sched(&self, job: JobId) -> Option<&Sched> {
        self.jobs.get(job).map(|s| &s.sched)
    }

    #[inline]
    fn sched_mut(&mut self, job: JobId) -> Option<&mut Sched> {
        self.jobs.get_mut(job).map(|s| &mut s.sched)
    }

    #[inline]
    fn slot_of(&self, phase: Phase) -> usize {
        match self.config.pool_mode {
            PoolMode::Shared => 0,
            PoolMode::Split => phase.idx(),
        }
    }

    fn unindex(&mut self, job: JobId) {
        let Some(s) = self.jobs.get_mut(job).map(|s| &mut s.sched) else { return };
        let rank = s.label;
        for ph in Phase::ALL {
            let slot = &mut s.index[ph.idx()];
            if let Some(key) = slot.under.take() {
                self.under[ph.idx()].remove(&(key, rank, ph as u8, job.0));
            }
            if std::mem::take(&mut slot.spare) {
                self.spare[ph.idx()].remove(&(rank, ph as u8, job.0));
            }
        }
    }

    /// Re-derives the index entries of `job` from its true state. Entries that are already
    /// right stay (a re-plan calls this for every active job; most are unchanged).
    fn reindex(&mut self, job: JobId) {
        let ranked = self.plan.rule == AssignmentRule::RankedDeficit;
        let Some(Slot { state: j, sched: s, .. }) = self.jobs.get_mut(job) else { return };
        let rank = s.label;
        let planned = s.rank != u32::MAX && rank != NO_LABEL && j.is_active() && !s.am_gated;
        let mut want = [IndexSlot::default(); 2];
        for ph in Phase::ALL {
            if !planned || !j.runnable(ph) {
                continue;
            }
            let running = j.phase(ph).running;
            let target = s.target[ph.idx()];
            let slot = &mut want[ph.idx()];
            if running < target {
                slot.under = Some(under_key(ranked, running, target));
            }
            slot.spare = true;
        }
        // The entries in the sets carry `s.label` (a label change unindexes first), so equal
        // slots mean equal entries, and only the entries whose slot differs move: a task start or
        // end usually changes one phase's under key and nothing else (`docs/performance.md` §18).
        for ph in Phase::ALL {
            let (have, slot) = (s.index[ph.idx()], want[ph.idx()]);
            if have.under != slot.under {
                if let Some(key) = have.under {
                    self.under[ph.idx()].remove(&(key, rank, ph as u8, job.0));
                }
                if let Some(key) = slot.under {
                    self.under[ph.idx()].insert((key, rank, ph as u8, job.0));
                }
            }
            if have.spare != slot.spare {
                if have.spare {
                    self.spare[ph.idx()].remove(&(rank, ph as u8, job.0));
                } else {
                    self.spare[ph.idx()].insert((rank, ph as u8, job.0));
                }
            }
            s.index[ph.idx()] = slot;
        }
    }

    fn allowed_locality(&self, job: JobId, phase: Phase) -> Locality {
        if phase == Phase::Reduce {
            return Locality::Any;
        }
        let Some(sched) = self.sched(job) else { return Locality::Any };
        let s = sched.skips;
        if let Some(waits) = sched.locality_wait {
            return if s < waits { Locality::Node } else { Locality::Any };
        }
        if s < self.config.node_locality_delay {
            Locality::Node
        } else if s < self.config.node_locality_delay + self.config.rack_locality_delay {
            Locality::Rack
        } else {
            Locality::Any
        }
    }

    // ----- the hot path ------------------------------------------------------------------

    /// Answers a heartbeat: `node` has `free` slots per phase (shared mode: `free[0]` is the
    /// total and `free[1]` is ignored). Returns choices in order; the host launches tasks from
    /// them and reports each launch with [`Engine::task_started`].
    ///
    /// Never re-plans. Counts a skipped scheduling opportunity for each restricted-locality offer.
    pub fn node_update(&mut self, node: NodeId, free: [u32; 2], now: Time) -> Result<&[Choice]> {
        if !self.nodes.get(node.0 as usize).is_some_and(|n| n.alive) {
            return Err(Error::UnknownId { kind: "node", id: node.0 as i64 });
        }
        self.stats.node_updates += 1;
        self.choices.clear();
        self.tentative.clear();
        // Never offer more than the node's capacity minus its running tasks, whatever the host's
        // free count says: a host holds capacity back this way (the YARN shim reserves a waiting
        // AM's memory by lowering the node's capacity, so freed task slots are not refilled first).
        let n = &self.nodes[node.0 as usize];
        let free = [0, 1].map(|s| free[s].min(n.capacity[s].saturating_sub(n.running[s])));
        let shared = self.config.pool_mode == PoolMode::Shared;
        self.refresh_earmarks(node, free, shared, now);
        if let AssignmentRule::StrictPriority { cap_at_target, reserve_reduces } = self.plan.rule {
            self.strict_priority_choices(free, cap_at_target, reserve_reduces);
            return Ok(&self.choices);
        }
        let mut budget = if shared { [free[0], free[0]] } else { free };
        let total_free = if shared { free[0] } else { free[0] + free[1] };
        if total_free == 0 {
            return Ok(&self.choices);
        }
        // Offers with restricted locality may not fit; allow that many extra fallbacks.
        let max_choices = (2 * total_free as usize + 8).min(1024);
        let accelerated = self.nodes[node.0 as usize].accelerated;
        let ranked = self.plan.rule == AssignmentRule::RankedDeficit;
        self.earmarked_choices(node, &mut budget, shared);
        // Long-task reserve: how many more long tasks each slot pool may start (`u32::MAX`: no limit),
        // less the long tasks the earmarks just offered.
        let mut long_room = [0, 1].map(|s| self.long_cap[s].saturating_sub(self.long_running[s]));
        for c in &self.choices {
            if self.sched(c.job).is_some_and(|s| s.long[c.phase.idx()]) {
                let r = &mut long_room[self.slot_of(c.phase)];
                *r = r.saturating_sub(c.count);
            }
        }
        if accelerated {
            self.accelerated_choices(&mut budget, shared, max_choices);
        }

        // Pass 1: under-allocated entries, most under-allocated first, one slot at a time (a restricted
        // offer: up to the job's deficit at once, see below). Each step takes the least entry and may put
        // it back re-keyed; the host's task_started events make the changes real, so the index itself is
        // left as it is: the entries taken from it are a prefix of each phase's set (`taken`, the last
        // one taken), the re-keyed ones sit in `tentative`, and the two together are the set the
        // steps see (removing and re-inserting in the sets, then undoing it all, gave the same steps).
        let mut taken: [Option<UnderEntry>; 2] = [None, None];
        while self.choices.len() < max_choices && budget.iter().any(|&b| b > 0) {
            let Some((entry, from)) = self.first_under_with_budget(&budget, &taken) else { break };
            let (_, rank, ph, jid) = entry;
            let phase = if ph == 0 { Phase::Map } else { Phase::Reduce };
            let job = JobId(jid);
            match from {
                None => taken[ph as usize] = Some(entry),
                Some(i) => {
                    self.tentative.swap_remove(i);
                }
            }
            if !accelerated && phase == Phase::Map && self.regular_allowance_used(job) {
                continue;
            }
            let locality = self.allowed_locality(job, phase);
            let Some(Slot { state: j, sched, .. }) = self.jobs.get(job) else { continue };
            let long = sched.long[phase.idx()];
            let room = if long { long_room[self.slot_of(phase)] } else { u32::MAX };
            if room == 0 {
                continue;
            }
            let already =
                self.choices.iter().filter(|c| c.job == job && c.phase == phase).map(|c| c.count).sum::<u32>();
            let running = j.phase(phase).running + already + 1;
            let target = sched.target[phase.idx()];
            let pending_left = j.phase(phase).pending.saturating_sub(already + 1);
            let offered = if locality == Locality::Any {
                self.push_choice(job, phase, locality);
                1
            } else {
                // A restricted offer takes as many tasks as are local here, up to the job's deficit:
                // one per heartbeat would leave the rest of the node to lower-ranked jobs (or idle)
                // whenever the job's tasks are local here (YARN asks without hosts always are).
                let node_free = if shared { free[0] } else { free[phase.idx()] };
                let deficit = target.saturating_sub(running - 1).min(pending_left + 1).min(node_free).min(room);
                self.push_choice_n(job, phase, deficit.max(1), locality);
                deficit.max(1)
            };
            if long {
                // A restricted offer may start fewer than it offers: counting them all keeps within the cap.
                let r = &mut long_room[self.slot_of(phase)];
                *r = r.saturating_sub(offered);
            }
            if locality == Locality::Any {
                Self::spend(&mut budget, shared, phase);
                if running < target && pending_left > 0 {
                    let key = under_key(ranked, running, target);
                    self.tentative.push((key, rank, ph, jid));
                }
            } else {
                self.count_skip(job);
            }
        }
        // Pass 2: spare capacity to runnable entries in plan order (work conservation).
        if budget.iter().any(|&b| b > 0) {
            let mut iter_from: Option<(u32, u8, u32)> = None;
            while self.choices.len() < max_choices && budget.iter().any(|&b| b > 0) {
                let next = self.next_spare_with_budget(iter_from, &budget);
                let Some(entry) = next else { break };
                iter_from = Some(entry);
                let (_, ph, jid) = entry;
                let phase = if ph == 0 { Phase::Map } else { Phase::Reduce };
                let b = if shared { 0 } else { phase.idx() };
                if budget[b] == 0 {
                    continue;
                }
                let job = JobId(jid);
                let already: u32 =
                    self.choices.iter().filter(|c| c.job == job && c.phase == phase).map(|c| c.count).sum();
                let Some(pending) = self.jobs.lookup(job).map(|j| j.phase(phase).pending) else { continue };
                if pending <= already {
                    continue;
                }
                let pending = match self.regular_allowance(job) {
                    Some(allow) if !accelerated && phase == Phase::Map => pending.min(allow),
                    _ => pending,
                };
                if pending <= already {
                    continue;
                }
                let long = self.sched(job).is_some_and(|s| s.long[phase.idx()]);
                let room = long_room[self.slot_of(phase)];
                if long && room == 0 {
                    continue;
                }
                let locality = self.allowed_locality(job, phase);
                if locality != Locality::Any && already > 0 {
                    // Already offered at restricted locality in pass 1: one skip per heartbeat.
                    continue;
                }
                // Restricted: as many as may be local here; the budget stays for the fallbacks.
                let count = (pending - already).min(if locality == Locality::Any { budget[b] } else { free[b] });
                let count = if long { count.min(room) } else { count };
                if long {
                    long_room[self.slot_of(phase)] = room - count;
                }
                self.push_choice_n(job, phase, count, locality);
                if locality == Locality::Any {
                    for _ in 0..count {
                        Self::spend(&mut budget, shared, phase);
                    }
                } else {
                    self.count_skip(job);
                }
            }
        }
        Ok(&self.choices)
    }

    /// Maps `job` may still start on regular nodes under its plan's accelerated target (`None` =
    /// unrestricted), counting this heartbeat's choices so far as started.
    fn regular_allowance(&self, job: JobId) -> Option<u32> {
        let Slot { state, sched, .. } = self.jobs.get(job)?;
        let acc = sched.accel_target?;
        let allow = sched.target[Phase::Map.idx()].saturating_sub(acc);
        Some(allow.saturating_sub(state.map_pools.running[0]))
    }

    /// Delay scheduling: `job` was offered a slot at restricted locality.
    fn count_skip(&mut self, job: JobId) {
        if let Some(s) = self.sched_mut(job) {
            s.skips += 1;
        }
    }

    /// Whether `job` may start no more maps on regular nodes in this heartbeat.
    fn regular_allowance_used(&self, job: JobId) -> bool {
        let Some(allow) = self.regular_allowance(job) else { return false };
        let already: u32 = self.choices.iter().filter(|c| c.job == job && c.phase == Phase::Map).map(|c| c.count).sum();
        already >= allow
    }

    /// Hardware affinity, before the deficit passes on an accelerated node: jobs listed in
    /// [`Plan::accelerated_targets`] below their target take the node's map slots, in list order.
    fn accelerated_choices(&mut self, budget: &mut [u32; 2], shared: bool, max_choices: usize) {
        for i in 0..self.plan.accelerated_targets.len() {
            let (job, acc_target) = self.plan.accelerated_targets[i];
            if budget[0] == 0 || self.choices.len() >= max_choices {
                return;
            }
            let Some(j) = self.jobs.lookup(job) else { continue };
            if !j.is_active() || !j.runnable(Phase::Map) || self.tasks_gated(job) {
                continue;
            }
            let want = acc_target.saturating_sub(j.map_pools.running[1]).min(j.phase(Phase::Map).pending);
            let count = want.min(budget[0]);
            if count > 0 {
                self.push_choice_n(job, Phase::Map, count, Locality::Any);
                for _ in 0..count {
                    Self::spend(budget, shared, Phase::Map);
                }
            }
        }
    }

    /// [`AssignmentRule::StrictPriority`]: walk the plan in rank order. Maps: each runnable job in
    /// turn takes what it can (up to its target when capped). Reduces: with `reserve_reduces`,
    /// RTMR's Algorithm IV, repeated for each free reduce slot of the node (one call per slot is
    /// what "a freed slot is reused at once" means in the paper's model); otherwise plan order.
    fn strict_priority_choices(&mut self, free: [u32; 2], cap_at_target: bool, reserve_reduces: bool) {
        let shared = self.config.pool_mode == PoolMode::Shared;
        let mut budget = if shared { [free[0], free[0]] } else { free };
        let max_choices = (2 * (budget[0] + budget[1]) as usize + 8).min(1024);
        // Cluster-wide free reduce slots (shared pool: free slots of the pool), for reservations.
        let slot = self.slot_of(Phase::Reduce);
        let mut cluster_free: u32 =
            self.nodes.iter().filter(|n| n.alive).map(|n| n.capacity[slot].saturating_sub(n.running[slot])).sum();
        for phase in Phase::ALL {
            let b = if shared { 0 } else { phase.idx() };
            loop {
                if budget[b] == 0 || self.choices.len() >= max_choices {
                    break;
                }
                let mut reserved: u64 = 0;
                let mut picked = None;
                for e in &self.plan.entries {
                    let Some(j) = self.jobs.lookup(e.job) else { continue };
                    if !j.is_active() || self.tasks_gated(e.job) {
                        continue;
                    }
                    if phase == Phase::Reduce && reserve_reduces && reserved >= cluster_free as u64 {
                        break;
                    }
                    let mut offered = 0;
                    let mut waits_for_locality = false;
                    for c in self.choices.iter().filter(|c| c.job == e.job && c.phase == phase) {
                        offered += c.count;
                        waits_for_locality |= c.locality != Locality::Any;
                    }
                    if waits_for_locality {
                        // Delay scheduling: skipped for locality this heartbeat; lower ranks may go.
                        continue;
                    }
                    let p = j.phase(phase);
                    let mut can = if j.runnable(phase) { p.pending.saturating_sub(offered) } else { 0 };
                    if cap_at_target {
                        can = can.min(e.target[phase.idx()].saturating_sub(p.running + offered));
                    }
                    if can > 0 {
                        picked = Some((e.job, can));
                        break;
                    }
                    if phase == Phase::Reduce && reserve_reduces && !j.reduces_ready() {
                        reserved += j.phase(Phase::Reduce).total as u64;
                    }
                }
                let Some((job, can)) = picked else { break };
                let locality = self.allowed_locality(job, phase);
                let count = if locality == Locality::Any {
                    if phase == Phase::Reduce && reserve_reduces {
                        1
                    } else {
                        can.min(budget[b])
                    }
                } else {
                    1
                };
                self.push_choice_n(job, phase, count, locality);
                if locality == Locality::Any {
                    for _ in 0..count {
                        Self::spend(&mut budget, shared, phase);
                    }
                    if phase == Phase::Reduce {
                        cluster_free = cluster_free.saturating_sub(count);
                    }
                } else {
                    // A restricted offer may not fit the node; it spends no budget, so the host
                    // falls through to lower-ranked choices when it cannot be taken.
                    self.count_skip(job);
                }
            }
        }
    }

    /// Whether a slot of `phase` is still free in this heartbeat.
    fn has_budget(&self, budget: &[u32; 2], phase: usize) -> bool {
        match self.config.pool_mode {
            PoolMode::Shared => budget[0] > 0,
            PoolMode::Split => budget[phase] > 0,
        }
    }

    /// The first under-allocated entry (in the combined order of both phases) whose phase still
    /// has a free slot, in pass 1's view of the index: each phase's set after its entries up to
    /// `taken[phase]`, and the re-keyed entries of `self.tentative` (whose index it returns when the
    /// entry is one of those). `O(log n)` plus the few re-keyed entries.
    fn first_under_with_budget(
        &self,
        budget: &[u32; 2],
        taken: &[Option<UnderEntry>; 2],
    ) -> Option<(UnderEntry, Option<usize>)> {
        use std::ops::Bound::{Excluded, Unbounded};
        let mut best: Option<(UnderEntry, Option<usize>)> = None;
        for ph in (0..2).filter(|&ph| self.has_budget(budget, ph)) {
            let next = match taken[ph] {
                None => self.under[ph].first(),
                Some(k) => self.under[ph].range((Excluded(k), Unbounded)).next(),
            };
            if let Some(&e) = next {
                if best.map_or(true, |(b, _)| e < b) {
                    best = Some((e, None));
                }
            }
        }
        for (i, &e) in self.tentative.iter().enumerate() {
            if self.has_budget(budget, e.2 as usize) && best.map_or(true, |(b, _)| e < b) {
                best = Some((e, Some(i)));
            }
        }
        best
    }

    /// The next runnable entry after `from` in plan order whose phase still has a free slot: the
    /// smaller of the per-phase successors. `O(log n)`.
    fn next_spare_with_budget(&self, from: Option<(u32, u8, u32)>, budget: &[u32; 2]) -> Option<(u32, u8, u32)> {
        use std::ops::Bound::{Excluded, Unbounded};
        (0..2)
            .filter(|&ph| self.has_budget(budget, ph))
            .filter_map(|ph| match from {
                None => self.spare[ph].first().copied(),
                Some(k) => self.spare[ph].range((Excluded(k), Unbounded)).next().copied(),
            })
            .min()
    }

    fn spend(budget: &mut [u32; 2], shared: bool, phase: Phase) {
        if shared {
            budget[0] = budget[0].saturating_sub(1);
            budget[1] = budget[0];
        } else {
            budget[phase.idx()] = budget[phase.idx()].saturating_sub(1);
        }
    }

    fn push_choice(&mut self, job: JobId, phase: Phase, locality: Locality) {
        self.push_choice_n(job, phase, 1, locality)
    }

    fn push_choice_n(&mut self, job: JobId, phase: Phase, count: u32, locality: Locality) {
        if let Some(last) = self.choices.last_mut() {
            if last.job == job && last.phase == phase && last.locality == locality {
                last.count += count;
                return;
            }
        }
        self.choices.push(Choice { job, phase, count, locality });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An engine with one of the core's baseline policies (the research policies' engine tests live
    /// with them in circumflex-policies).
    fn baseline_engine(cfg: EngineConfig) -> Engine {
        let policy: Box<dyn Policy> = match cfg.policy.as_str() {
            "fifo" => Box::new(crate::baseline::fifo::Fifo::default()),
            "fair" => Box::new(crate::baseline::fair::Fair::default()),
            other => panic!("engine tests use fifo or fair, not {other}"),
        };
        Engine::with_policy(cfg, policy)
    }

    fn engine(policy: &str, mode: PoolMode) -> Engine {
        let cfg = EngineConfig {
            policy: policy.into(),
            pool_mode: mode,
            node_locality_delay: 0,
            rack_locality_delay: 0,
            ..EngineConfig::default()
        };
        baseline_engine(cfg)
    }

    /// Launches every choice on `node` (as a host would) and returns (job, phase, count).
    fn launch_all(e: &mut Engine, node: NodeId, free: [u32; 2]) -> Vec<(u32, Phase, u32)> {
        let choices: Vec<Choice> = e.node_update(node, free, 0).unwrap().to_vec();
        let mut left = free;
        let mut out = Vec::new();
        for c in choices {
            let b = if e.config.pool_mode == PoolMode::Shared { 0 } else { c.phase.idx() };
            let n = c.count.min(left[b]);
            for _ in 0..n {
                e.task_started(c.job, c.phase, node, Locality::Any, 0).unwrap();
            }
            left[b] -= n;
            if n > 0 {
                out.push((c.job.0, c.phase, n));
            }
        }
        out
    }

    #[test]
    fn fifo_gives_everything_to_the_first_job() {
        let mut e = engine("fifo", PoolMode::Split);
        let n = e.add_node("h1", "/r1", 4, 2);
        let a = e.submit(JobSpec::new(0, 6, 1), 0).unwrap().0;
        let _b = e.submit(JobSpec::new(1, 6, 1), 1).unwrap().0;
        let got = launch_all(&mut e, n, [4, 2]);
        assert_eq!(got, vec![(a.0, Phase::Map, 4)]);
    }

    #[test]
    fn fair_splits_between_jobs() {
        let mut e = engine("fair", PoolMode::Shared);
        let n = e.add_node("h1", "/r1", 6, 0);
        e.submit(JobSpec::new(0, 10, 0), 0).unwrap();
        e.submit(JobSpec::new(1, 10, 0), 1).unwrap();
        e.submit(JobSpec::new(2, 10, 0), 2).unwrap();
        let got = launch_all(&mut e, n, [6, 0]);
        let mut per_job = [0u32; 3];
        for (j, _, c) in got {
            per_job[j as usize] += c;
        }
        assert_eq!(per_job, [2, 2, 2]);
    }

    #[test]
    fn spare_capacity_is_used_beyond_targets() {
        let mut e = engine("fair", PoolMode::Shared);
        let n = e.add_node("h1", "/r1", 4, 0);
        let a = e.submit(JobSpec::new(0, 10, 0), 0).unwrap().0;
        // Plan says 4 for the only job; a second node appears after the plan.
        let n2 = e.add_node("h2", "/r1", 4, 0);
        let got = launch_all(&mut e, n, [4, 0]);
        assert_eq!(got, vec![(a.0, Phase::Map, 4)]);
        let got = launch_all(&mut e, n2, [4, 0]);
        assert_eq!(got, vec![(a.0, Phase::Map, 4)], "work conserving before the next epoch");
    }

    #[test]
    fn job_completes_and_reduces_follow_maps() {
        let mut e = engine("fifo", PoolMode::Shared);
        let n = e.add_node("h1", "/r1", 4, 0);
        let a = e.submit(JobSpec::new(0, 2, 1), 0).unwrap().0;
        let got = launch_all(&mut e, n, [4, 0]);
        assert_eq!(got, vec![(a.0, Phase::Map, 2)], "reduces wait for maps");
        e.task_finished(a, Phase::Map, n, 100, true, 100).unwrap();
        e.task_finished(a, Phase::Map, n, 120, true, 120).unwrap();
        e.tick(120);
        let got = launch_all(&mut e, n, [4, 0]);
        assert_eq!(got, vec![(a.0, Phase::Reduce, 1)]);
        e.task_finished(a, Phase::Reduce, n, 50, true, 170).unwrap();
        assert_eq!(e.job_status(a), Some(JobStatus::Finished));
        assert!(e.job(a).is_none(), "retired");
        assert_eq!(e.recent_jobs().last().map(|j| (j.id, j.finished_ms)), Some((a, Some(170))));
        assert!(e.active().is_empty());
    }

    #[test]
    fn unanswered_heartbeats_leave_the_index_as_it_was() {
        let mut e = engine("fair", PoolMode::Split);
        let n = e.add_node("h1", "/r1", 3, 2);
        for k in 0..4 {
            e.submit(JobSpec::new(k, 5, 2), k).unwrap();
        }
        let first: Vec<Choice> = e.node_update(n, [3, 2], 0).unwrap().to_vec();
        assert!(!first.is_empty());
        // Nothing launched: the next heartbeat sees the same state and answers the same.
        for _ in 0..3 {
            assert_eq!(e.node_update(n, [3, 2], 0).unwrap(), first.as_slice());
        }
        assert_eq!(launch_all(&mut e, n, [3, 2]).iter().map(|l| l.2).sum::<u32>(), 3);
    }

    #[test]
    fn failed_tasks_are_rerun() {
        let mut e = engine("fifo", PoolMode::Shared);
        let n = e.add_node("h1", "/r1", 1, 0);
        let a = e.submit(JobSpec::new(0, 1, 0), 0).unwrap().0;
        launch_all(&mut e, n, [1, 0]);
        e.task_finished(a, Phase::Map, n, 10, false, 10).unwrap();
        assert_eq!(e.job(a).unwrap().phase(Phase::Map).pending, 1);
        let got = launch_all(&mut e, n, [1, 0]);
        assert_eq!(got, vec![(a.0, Phase::Map, 1)]);
    }

    #[test]
    fn delay_scheduling_restricts_then_relaxes() {
        let cfg = EngineConfig {
            policy: "fifo".into(),
            node_locality_delay: 2,
            rack_locality_delay: 1,
            ..EngineConfig::default()
        };
        let mut e = baseline_engine(cfg);
        // Two slots: after the launch below one is still free (the engine offers at most capacity - running).
        let n = e.add_node("h1", "/r1", 2, 0);
        let a = e.submit(JobSpec::new(0, 5, 0), 0).unwrap().0;
        let loc = |e: &mut Engine| e.node_update(n, [1, 0], 0).unwrap()[0].locality;
        assert_eq!(loc(&mut e), Locality::Node);
        assert_eq!(loc(&mut e), Locality::Node);
        assert_eq!(loc(&mut e), Locality::Rack);
        assert_eq!(loc(&mut e), Locality::Any);
        e.task_started(a, Phase::Map, n, Locality::Node, 0).unwrap();
        let c = e.node_update(n, [1, 0], 0).unwrap();
        assert_eq!(c[0].locality, Locality::Node, "a local launch resets the wait");
    }

    /// Runs one single-map job to its end on `n`.
    fn run_one(e: &mut Engine, n: NodeId, now: Time) -> JobId {
        let id = e.submit(JobSpec::new(now, 1, 0), now).unwrap().0;
        e.tick(now);
        launch_all(e, n, [1, 0]);
        e.task_finished(id, Phase::Map, n, 1, true, now + 1).unwrap();
        id
    }

    #[test]
    fn ended_jobs_are_retired_and_late_events_are_refused_not_panics() {
        let mut e = engine("fair", PoolMode::Shared);
        let n = e.add_node("h1", "/r1", 1, 0);
        let first = run_one(&mut e, n, 0);
        for k in 1..(RECENT_JOBS as Time + 10) {
            run_one(&mut e, n, 10 * k);
        }
        assert_eq!(e.live_job_count(), 0, "every ended job was freed");
        assert_eq!(e.recent_jobs().count(), RECENT_JOBS, "the report ring is bounded");
        assert!(e.job(first).is_none());
        assert_eq!(e.job_status(first), Some(JobStatus::Finished), "retired beyond the ring");
        assert_eq!(e.job_status(JobId(1_000_000)), None, "never assigned");
        // A late task report of a retired job is an unknown-id error; ending it again is a no-op.
        assert!(matches!(
            e.task_finished(first, Phase::Map, n, 1, true, 99_999),
            Err(Error::UnknownId { kind: "job", .. })
        ));
        assert!(e.task_started(first, Phase::Map, n, Locality::Any, 99_999).is_err());
        assert!(e.set_pending(first, Phase::Map, 3).is_err());
        assert!(e.finish_job(first, 99_999).is_ok());
        assert!(e.finish_job(JobId(1_000_000), 99_999).is_err());
        assert_eq!(e.stats().finished, RECENT_JOBS as u64 + 10);
        assert_eq!(e.node_update(n, [1, 0], 99_999).unwrap(), &[] as &[Choice]);
    }

    #[test]
    fn a_long_job_pinning_the_front_does_not_keep_the_others() {
        let mut e = engine("fair", PoolMode::Shared);
        let n = e.add_node("h1", "/r1", 2, 0);
        let long = e.submit(JobSpec::new(0, 1_000, 0), 0).unwrap().0;
        for k in 1..5_000 {
            let id = e.submit(JobSpec::new(k, 1, 0), k).unwrap().0;
            e.finish_job(id, k).unwrap();
        }
        assert_eq!(e.live_job_count(), 1);
        assert_eq!(e.job(long).map(|j| j.id), Some(long));
        assert_eq!(e.active(), &[long]);
        e.tick(10_000);
        let got = launch_all(&mut e, n, [2, 0]);
        assert_eq!(got, vec![(long.0, Phase::Map, 2)], "the pinned job is still scheduled");
    }

    #[test]
    fn offers_never_exceed_capacity_minus_running() {
        let mut e = engine("fifo", PoolMode::Shared);
        let n = e.add_node("h9", "/r1", 3, 0);
        let a = e.submit(JobSpec::new(0, 10, 0), 0).unwrap().0;
        e.tick(0);
        let offered = |e: &mut Engine| -> u32 {
            e.node_update(n, [8, 0], 0).unwrap().iter().filter(|c| c.locality == Locality::Any).map(|c| c.count).sum()
        };
        assert_eq!(offered(&mut e), 3, "the host said 8 free; the node holds 3");
        e.task_started(a, Phase::Map, n, Locality::Any, 0).unwrap();
        assert_eq!(offered(&mut e), 2);
        // A host reserving room (a waiting YARN AM) lowers the capacity: nothing is offered.
        e.set_node_capacity(n, 1, 0).unwrap();
        assert!(e.node_update(n, [8, 0], 0).unwrap().is_empty());
    }

    /// A policy with fixed map targets in submission order and a chosen assignment rule.
    struct FixedTargets(Vec<u32>, AssignmentRule);

    impl Policy for FixedTargets {
        fn name(&self) -> &'static str {
            "fixed"
        }

        fn plan(&mut self, snapshot: &Snapshot<'_>) -> Plan {
            let targets: Vec<[u32; 2]> = self.0.iter().map(|&t| [t, 0]).collect();
            Plan { rule: self.1, ..fixed_plan(snapshot, &targets) }
        }
    }

    /// A plan of the active jobs in submission order with `targets` (map, reduce) in that order.
    fn fixed_plan(snapshot: &Snapshot<'_>, targets: &[[u32; 2]]) -> Plan {
        let entries = snapshot
            .active_jobs()
            .zip(targets)
            .map(|(j, &target)| crate::policy::PlanEntry { job: j.id, target, predicted_completion_ms: None })
            .collect();
        Plan { computed_at: snapshot.now, entries, ..Plan::default() }
    }

    /// Job 0 (rank 0, target 4) runs 2 of its tasks, job 1 (rank 1, target 2) none; 2 slots free.
    fn two_under_target(rule: AssignmentRule) -> (Engine, NodeId) {
        let cfg = EngineConfig {
            pool_mode: PoolMode::Shared,
            node_locality_delay: 0,
            rack_locality_delay: 0,
            ..EngineConfig::default()
        };
        let mut e = Engine::with_policy(cfg, Box::new(FixedTargets(vec![4, 2], rule)));
        let n = e.add_node("h1", "/r1", 4, 0);
        let a = e.submit(JobSpec::new(0, 10, 0), 0).unwrap().0;
        e.submit(JobSpec::new(0, 10, 0), 0).unwrap();
        e.tick(0);
        for _ in 0..2 {
            e.task_started(a, Phase::Map, n, Locality::Any, 0).unwrap();
        }
        (e, n)
    }

    #[test]
    fn ranked_deficit_fills_the_top_ranked_job_below_target_first() {
        // The paper's rule: the most under-allocated job relative to its target first: job 1 (0/2),
        // then job 0 (2/4 ties job 1's 1/2; rank decides).
        let (mut e, n) = two_under_target(AssignmentRule::Deficit);
        assert_eq!(launch_all(&mut e, n, [2, 0]), vec![(1, Phase::Map, 1), (0, Phase::Map, 1)]);
        // Ranked: job 0 takes both slots (its target is 4), job 1 waits.
        let (mut e, n) = two_under_target(AssignmentRule::RankedDeficit);
        assert_eq!(launch_all(&mut e, n, [2, 0]), vec![(0, Phase::Map, 2)]);
        // Once job 0 is at its target, job 1 is next; the rule survives an in-place re-plan.
        e.tick(10_000);
        let n2 = e.add_node("h2", "/r1", 4, 0);
        assert_eq!(launch_all(&mut e, n2, [1, 0]), vec![(1, Phase::Map, 1)]);
    }

    /// [`FixedTargets`] whose plans ask for the long-task reserve.
    struct Reserving(FixedTargets);

    impl Policy for Reserving {
        fn name(&self) -> &'static str {
            "reserving"
        }

        fn plan(&mut self, snapshot: &Snapshot<'_>) -> Plan {
            Plan { long_task_reserve: true, ..self.0.plan(snapshot) }
        }
    }

    /// One shared node of 10 slots; job 0 (rank 0, target 10) has 20 maps of 10 minutes, job 1
    /// (rank 1, target 0) 5 maps of 2 s; the long-task reserve at its default.
    fn long_and_short(preemption: bool) -> (Engine, NodeId, JobId, JobId) {
        long_and_short_reserving(preemption, crate::config::PreemptionConfig::default().long_task_reserve)
    }

    fn long_and_short_reserving(preemption: bool, reserve: f64) -> (Engine, NodeId, JobId, JobId) {
        let mut cfg = EngineConfig {
            pool_mode: PoolMode::Shared,
            node_locality_delay: 0,
            rack_locality_delay: 0,
            ..EngineConfig::default()
        };
        cfg.preemption.enabled = preemption;
        cfg.preemption.long_task_reserve = reserve;
        let policy = Reserving(FixedTargets(vec![10, 0], AssignmentRule::RankedDeficit));
        let mut e = Engine::with_policy(cfg, Box::new(policy));
        let n = e.add_node("h1", "/r1", 10, 0);
        let mut long = JobSpec::new(0, 20, 0);
        long.maps.task_ms = Some(600_000);
        let mut short = JobSpec::new(0, 5, 0);
        short.maps.task_ms = Some(2_000);
        let a = e.submit(long, 0).unwrap().0;
        let b = e.submit(short, 0).unwrap().0;
        e.tick(0);
        (e, n, a, b)
    }

    #[test]
    fn long_tasks_leave_preemptions_share_of_the_pool_to_short_ones() {
        // Off (preemption off: the plan's ask is not read): the top-ranked long job takes every slot.
        let (mut e, n, _, _) = long_and_short(false);
        assert_eq!(launch_all(&mut e, n, [10, 0]), vec![(0, Phase::Map, 10)]);
        // On: tasks longer than delay + grace (18 s) hold at most 90% of the pool; the short job,
        // ranked below, gets the rest as spare capacity.
        let (mut e, n, a, b) = long_and_short(true);
        assert_eq!(launch_all(&mut e, n, [10, 0]), vec![(0, Phase::Map, 9), (1, Phase::Map, 1)]);
        // When a long task ends, its slot may go to another long task; the short job's stays short.
        e.task_finished(a, Phase::Map, n, 600_000, true, 600_000).unwrap();
        assert_eq!(launch_all(&mut e, n, [1, 0]), vec![(0, Phase::Map, 1)]);
        e.task_finished(b, Phase::Map, n, 2_000, true, 600_000).unwrap();
        assert_eq!(launch_all(&mut e, n, [1, 0]), vec![(1, Phase::Map, 1)]);
        // A re-plan recounts the long tasks from the jobs' states: the same cap.
        e.tick(700_000);
        e.task_finished(b, Phase::Map, n, 2_000, true, 700_000).unwrap();
        assert_eq!(launch_all(&mut e, n, [1, 0]), vec![(1, Phase::Map, 1)]);
    }

    #[test]
    fn a_reserve_of_zero_is_off_and_a_larger_one_keeps_more() {
        let with_reserve = |reserve: f64| {
            let (mut e, n, _, _) = long_and_short_reserving(true, reserve);
            launch_all(&mut e, n, [10, 0])
        };
        assert_eq!(with_reserve(0.0), vec![(0, Phase::Map, 10)]);
        assert_eq!(with_reserve(0.3), vec![(0, Phase::Map, 7), (1, Phase::Map, 3)]);
        // A reserve of the whole pool still leaves long tasks one slot.
        assert_eq!(with_reserve(1.0), vec![(0, Phase::Map, 1), (1, Phase::Map, 5)]);
    }

    /// Fixed (map, reduce) targets in submission order, ranked deficit, the long-task reserve.
    struct FixedPairs(Vec<[u32; 2]>);

    impl Policy for FixedPairs {
        fn name(&self) -> &'static str {
            "fixed-pairs"
        }

        fn plan(&mut self, snapshot: &Snapshot<'_>) -> Plan {
            Plan { rule: AssignmentRule::RankedDeficit, long_task_reserve: true, ..fixed_plan(snapshot, &self.0) }
        }
    }

    #[test]
    fn a_long_deficit_the_reserve_keeps_from_free_slots_is_starved_and_preempts() {
        // Job 0 (rank 0): a 2 s map, then a reduce of 10 minutes, target 1 each. Job 1 (rank 1, target
        // 0): 20 maps of 10 minutes on spare capacity, 9 of the 10 slots (the reserve keeps 1).
        let mut cfg = EngineConfig {
            pool_mode: PoolMode::Shared,
            node_locality_delay: 0,
            rack_locality_delay: 0,
            ..EngineConfig::default()
        };
        cfg.preemption.enabled = true;
        let mut e = Engine::with_policy(cfg, Box::new(FixedPairs(vec![[1, 1], [0, 0]])));
        let n = e.add_node("h1", "/r1", 10, 0);
        let mut first = JobSpec::new(0, 1, 1);
        first.maps.task_ms = Some(2_000);
        first.reduces.task_ms = Some(600_000);
        let mut wide = JobSpec::new(0, 20, 0);
        wide.maps.task_ms = Some(600_000);
        let a = e.submit(first, 0).unwrap().0;
        let b = e.submit(wide, 0).unwrap().0;
        e.tick(0);
        assert_eq!(launch_all(&mut e, n, [10, 0]), vec![(a.0, Phase::Map, 1), (b.0, Phase::Map, 9)]);
        // Job 0's map ends: its long reduce may not take the free slot (long tasks hold 9 of 9), and
        // that slot must not count as covering its deficit, or nothing would ever free one for it.
        e.task_finished(a, Phase::Map, n, 2_000, true, 2_000).unwrap();
        e.tick(2_000);
        assert!(launch_all(&mut e, n, [1, 0]).is_empty());
        assert!(e.preemptions(2_000).is_empty(), "starved since now; the delay runs");
        let decided = e.preemptions(5_000).to_vec();
        assert_eq!(decided.len(), 1);
        assert_eq!((decided[0].victim, decided[0].beneficiary, decided[0].count), (b, a, 1));
    }

    #[test]
    fn rejected_and_unknown_ids_are_errors_not_panics() {
        let mut e = engine("fifo", PoolMode::Shared);
        assert!(e.task_started(JobId(9), Phase::Map, NodeId(0), Locality::Any, 0).is_err());
        assert!(e.node_update(NodeId(3), [1, 0], 0).is_err());
        let mut bad = JobSpec::new(0, 1, 0);
        bad.weight = -1.0;
        assert!(e.submit(bad, 0).is_err());
        assert!(e.active().is_empty());
    }
}
