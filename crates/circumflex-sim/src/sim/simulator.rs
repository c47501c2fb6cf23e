//! The event loop: arrivals, heartbeats, task completions and the epoch timer, driving one [`Engine`].
//!
//! Events run in time order; events at the same instant run in a fixed order of kinds: arrivals, task
//! completions, the epoch timer, then heartbeats by node index; within a kind, in the order they were
//! scheduled (a sequence number). Three queues hold them and are merged in exactly that order: the
//! arrivals (a sorted list), heartbeats (a heap of compact `(time, node, generation)` keys: most events
//! of a large cluster are heartbeats, `docs/performance.md` §12) and everything else (a heap of
//! [`Scheduled`] events). The fixed order makes a slot freed at `t` visible to
//! a heartbeat at `t` however the two were scheduled, which is what lets dormant heartbeats be skipped
//! without changing any outcome.
//!
//! Heartbeats follow Hadoop: node `i` heartbeats every `heartbeat_ms`, its first heartbeat offset by
//! `i × heartbeat_ms / nodes` (staggered, as TaskTrackers that started at different times are). A
//! heartbeat from a node with free slots calls `node_update`; the simulator walks the returned choices in
//! order and launches tasks while the node has free slots of the right pool, reporting each launch with
//! `task_started`. With the out-of-band option a task completion triggers an immediate heartbeat of its
//! node, and the node's periodic schedule restarts from it (as a TaskTracker's does).
//!
//! **Dormant heartbeats (a speed-up that changes no outcome).** A heartbeat from a node whose free slots
//! are all in pools with no runnable pending task cannot launch anything and has no effect on the engine
//! (no choice, no delay-scheduling skip), so such nodes stop scheduling heartbeats. They resume on their
//! periodic grid (the first grid instant at or after the wake-up, never twice at one instant) when a slot
//! frees or work becomes runnable; the epoch timer likewise sleeps while no job is active and resumes on
//! the grid of multiples of the epoch. A heartbeat that does happen offers all the node's free slots, even
//! in a pool with nothing runnable, because the engine sizes its answer (and so the delay-scheduling skips
//! it counts) by the total. [`SimConfig::idle_heartbeats`] sends every heartbeat instead; a property test
//! and the whole SWIM day check that both give the same jobs, tasks and locality.
//!
//! **Locality model.** With `replicas > 0`, each map task of an arriving job gets that many distinct random
//! nodes holding its input (drawn from the run's generator). A choice allowing only node-local (or
//! rack-local) placement launches a pending map whose data is on the node (or its rack) if one exists,
//! else it is skipped, which is how delay scheduling is exercised. A map always launches at the best level
//! available. Without the model every map counts as node-local. Reduces have no locality.
//!
//! **YARN mechanics** ([`crate::sim::YarnModel`], off by default). With AM containers every arriving job
//! is submitted with pending counts of 0, as the YARN shim submits it (with the engine's AM gate on, the
//! engine keeps the declared counts and plans the job at once), and waits for its AM container. A node's
//! heartbeat places waiting AMs first where they fit (the shim without the gate, and the FairScheduler:
//! [`crate::sim::AmOrder::Eager`]), after the tasks (the CapacityScheduler's queue:
//! [`crate::sim::AmOrder::Queue`]), or the ones the engine's gate admits (`Engine::am_admissions`, in plan
//! order, reported with `Engine::am_started`); the node's engine capacity drops by the AM's slots, as the
//! shim lowers it. An AM that does not fit reserves the node (as the shim's `AmPlacement` and the
//! FairScheduler do, leaving one task slot unreserved; not in the queue order, whose AMs wait behind the
//! earlier applications' tasks): tasks no longer take the reserved slots, which fill as the node's tasks
//! end (or are preempted for it: `engine/preempt.rs`, "AMs"), and the AM is placed once they are free.
//! `am_startup_ms` later the AM asks: the job's pending counts are set to its declared
//! ones (which registers it with the gate). The AM's slots are freed when the job ends. Each task holds its
//! slot `launch_ms` before its work starts; the engine sees the launch at the start and the end after both.
//!
//! **Start-up contention** (`YarnModel::host_cores`, off by default). Container start-ups (an AM's
//! start-up, a task's launch) that overlap on one host share its cores: a start-up that begins while
//! `n − 1` others on the same host are in progress takes `base · max(1, n / cores)`, fixed when it
//! begins (a later start-up does not slow the earlier ones). A batch of `n` that begins together ends
//! by `base · n / cores`, when processor sharing would end all of them; its first ones end sooner, as
//! with first-come use of the cores. A calibrated function, not exact processor sharing: no event is
//! rescheduled, so the model costs nothing while off and little while on. Nodes are grouped into
//! hosts of `nodes_per_host` consecutive nodes. A start-up cut short by preemption still counts until
//! its planned end.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};

use rand::RngExt;
use serde::{Deserialize, Serialize};

use crate::sim::metrics::{isolated_time, JobRecord, LocalityMix, Summary};
use crate::sim::workload::Workload;
use crate::sim::{sim_rng, ClusterSpec, KillTiming, SimConfig, SimRng};
use circumflex_core::engine::{AmPhase, Choice, Engine};
use circumflex_core::error::{Error, Result};
use circumflex_core::model::{JobId, JobStatus, Locality, NodeId, Phase, Time};
use circumflex_core::policy::{Admission, PoolMode};

/// What the simulator does at an instant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Event {
    /// The job at this workload index arrives.
    Arrival(u32),
    /// A node heartbeats; `generation` must match the node's or the event is stale.
    Heartbeat { node: u32, generation: u32 },
    /// A task ends (`task` indexes [`Simulation::running`]; stale once the task was preempted). Its
    /// duration is its `end − start` there: the slot is reused only after this event.
    TaskDone { task: u32 },
    /// The grace period of a preemption is over: kill the task if it still runs.
    Kill { task: u32 },
    /// The epoch timer fires.
    Epoch,
    /// The AM of the job at this workload index asks for its tasks (YARN mechanics).
    AmReady(u32),
}

impl Event {
    /// Rank among events at the same instant: arrivals, then completions, then the epoch timer (so a plan
    /// sees what just happened), then heartbeats by node (so a slot freed at `t` is offered at `t`).
    fn order(&self) -> (u8, u32) {
        match *self {
            Event::Arrival(_) => (0, 0),
            Event::TaskDone { .. } | Event::Kill { .. } | Event::AmReady(_) => (1, 0),
            Event::Epoch => (2, 0),
            Event::Heartbeat { node, .. } => (3, node),
        }
    }
}

/// A scheduled event of the event heap; ordered by time, then [`Event::order`], then scheduling
/// sequence. Packed in 24 bytes (the heap holds one per running task, and a whole day pushes and pops
/// 16.5 million): `rank` is the kind's order at an instant (completions, kills and AM start-ups
/// before the epoch timer) in the top bit above the sequence number, `event` the event itself
/// ([`Scheduled::pack`]). `(time, rank)` is unique, so the derived order never reads `event`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Scheduled {
    time: Time,
    rank: u64,
    event: u64,
}

impl Scheduled {
    /// `event` (neither an arrival nor a heartbeat: those are queued apart) scheduled `seq`-th
    /// (`seq < 2^63`) for `time`.
    #[inline]
    fn new(time: Time, seq: u64, event: Event) -> Scheduled {
        debug_assert!(seq < 1 << 63);
        let (order, _) = event.order();
        debug_assert!(order == 1 || order == 2, "queued apart");
        Scheduled { time, rank: (u64::from(order == 2) << 63) | seq, event: Self::pack(event) }
    }

    /// The event's kind in the high half, its task or job index in the low half.
    #[inline]
    fn pack(event: Event) -> u64 {
        match event {
            Event::TaskDone { task } => u64::from(task),
            Event::Kill { task } => 1 << 32 | u64::from(task),
            Event::AmReady(i) => 2 << 32 | u64::from(i),
            Event::Epoch => 3 << 32,
            Event::Arrival(_) | Event::Heartbeat { .. } => 4 << 32,
        }
    }

    #[inline]
    fn event(&self) -> Event {
        let index = self.event as u32;
        match self.event >> 32 {
            0 => Event::TaskDone { task: index },
            1 => Event::Kill { task: index },
            2 => Event::AmReady(index),
            _ => Event::Epoch,
        }
    }
}

/// One task as it ran (kept when [`SimConfig::record_tasks`] is set).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskRecord {
    /// Workload index of the job.
    pub job: u32,
    /// Phase.
    pub phase: Phase,
    /// Node index.
    pub node: u32,
    /// Launch time, ms.
    pub start_ms: Time,
    /// Completion time, ms.
    pub end_ms: Time,
    /// Locality it launched at.
    pub locality: Locality,
    /// Killed by a preemption at `end_ms` (the task ran again later).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub preempted: bool,
}

/// Everything a run produced. Deterministic: the same configuration and workload give the same value.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SimResult {
    /// The configuration of the run (seed included).
    pub config: SimConfig,
    /// The workload's name.
    pub workload: String,
    /// Totals.
    pub summary: Summary,
    /// One record per job, in workload order.
    pub jobs: Vec<JobRecord>,
    /// One record per task, if requested.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tasks: Vec<TaskRecord>,
}

/// Per node state of the simulator.
#[derive(Clone, Debug)]
struct SimNode {
    rack: u32,
    /// Free slots per engine pool index (`[map, reduce]`, or `[all, 0]` when shared).
    free: [u32; 2],
    /// Reference instant of the node's periodic heartbeat grid.
    anchor: Time,
    /// Last heartbeat instant.
    last: Option<Time>,
    /// Whether a (current-generation) heartbeat is scheduled.
    scheduled: bool,
    generation: u32,
    /// Slots held by AM containers (YARN mechanics).
    am: u32,
    /// Slots reserved for waiting AMs (YARN mechanics): part of `free[0]` that tasks may not take.
    reserved: u32,
}

/// A launched task until it ends or is killed.
#[derive(Clone, Copy, Debug)]
struct RunningTask {
    job: u32,
    phase: Phase,
    node: u32,
    /// Task index within its phase (re-queued under it when preempted).
    index: u32,
    start: Time,
    end: Time,
    /// Index into [`SimResult::tasks`] when tasks are recorded.
    record: u32,
    /// Still running.
    alive: bool,
    /// Chosen for a preemption (its kill is scheduled).
    doomed: bool,
}

/// Per job state of the simulator.
#[derive(Clone, Debug, Default)]
struct JobRun<'w> {
    engine_id: Option<JobId>,
    rejected: bool,
    /// Next reduce index to launch.
    next_reduce: u32,
    /// Next map index for launches without locality (or the "any" scan).
    next_map: u32,
    /// Maps launched and pending maps by node and rack (locality model only).
    local: Placement,
    /// True durations per phase (the workload's, set at the arrival): a launch reads them here, on
    /// the job's own state, instead of in its `SimJob`.
    durations: [&'w [Time]; 2],
    /// Runnable pending tasks last seen in the engine, per pool index.
    runnable: [u64; 2],
    /// Running tasks (indices into [`Simulation::running`]) per phase; kept only with preemption on.
    live: [Vec<u32>; 2],
    /// Tasks preempted and waiting to run again, per phase.
    requeued: [Vec<u32>; 2],
    start_ms: Option<Time>,
    finish_ms: Option<Time>,
    /// The node of its AM container (YARN mechanics).
    am_node: Option<u32>,
    /// The node reserved for its waiting AM container (YARN mechanics).
    am_reserved: Option<u32>,
}

impl JobRun<'_> {
    /// Frees the locality model's per-task lists once the job has finished: nothing reads them
    /// after (the engine offers a finished job nothing), and on a day of millions of tasks they
    /// were most of the run's memory (`docs/performance.md` §9).
    fn release_task_lists(&mut self) {
        self.local = Placement::default();
    }
}

/// A job's locality lists (module docs, locality model): which maps launched, and each node's and
/// rack's maps with input there, in increasing task order. One flat task array per job, each node's
/// and rack's list a run of it, and the launched maps one bit each: a launch reads a run's bounds by
/// node index, where per-node vectors in a hash map cost a probe and a separate buffer per node
/// (`docs/performance.md` §18).
#[derive(Clone, Debug, Default)]
struct Placement {
    /// Launched maps, one bit each.
    launched: Vec<u64>,
    /// Map task indices: the nodes' lists in node order, then the racks' in rack order.
    tasks: Vec<u32>,
    /// Per node: `(next, end)`, its list's still unread part of `tasks` (lazily cleaned: a map
    /// launched elsewhere stays listed until read).
    by_node: Vec<(u32, u32)>,
    /// Per rack: the same.
    by_rack: Vec<(u32, u32)>,
}

impl Placement {
    #[inline]
    fn is_launched(&self, task: u32) -> bool {
        self.launched[(task / 64) as usize] & (1 << (task % 64)) != 0
    }

    #[inline]
    fn set_launched(&mut self, task: u32) {
        self.launched[(task / 64) as usize] |= 1 << (task % 64);
    }

    /// The first unlaunched map of node `key`'s list (`rack` false) or rack `key`'s, taken off the
    /// list with the launched ones read before it.
    #[inline]
    fn pop_unlaunched(&mut self, rack: bool, key: u32) -> Option<u32> {
        let runs = if rack { &mut self.by_rack } else { &mut self.by_node };
        let run = runs.get_mut(key as usize)?;
        while run.0 < run.1 {
            let t = self.tasks[run.0 as usize];
            run.0 += 1;
            if self.launched[(t / 64) as usize] & (1 << (t % 64)) == 0 {
                return Some(t);
            }
        }
        None
    }
}

/// Draws the replica nodes of each of `maps` map tasks (`replicas` distinct nodes each, fewer only if
/// the cluster is smaller) from `rng` and lists every task under its nodes and their racks (`rack_of`,
/// one entry per node; `racks` racks). The draws are those of the per-node lists this layout
/// replaced, task by task and replica by replica, so a seed places every replica where it did.
fn draw_placement(rng: &mut SimRng, maps: usize, rack_of: &[u32], racks: usize, replicas: u32) -> Placement {
    let n = rack_of.len() as u32;
    let r = replicas.min(n) as usize;
    if r == 0 {
        return Placement { launched: vec![0; maps.div_ceil(64)], ..Placement::default() };
    }
    // Every task's nodes (`r` each, in draw order), and its distinct racks as (rack, task).
    let mut nodes: Vec<u32> = Vec::with_capacity(maps * r);
    let mut rack_tasks: Vec<(u32, u32)> = Vec::with_capacity(maps * r);
    let mut task_racks: Vec<u32> = Vec::with_capacity(r);
    for task in 0..maps as u32 {
        let first = nodes.len();
        while nodes.len() - first < r {
            let node = rng.random_range(0..n);
            if !nodes[first..].contains(&node) {
                nodes.push(node);
            }
        }
        // A task with several replicas on one rack is listed once for that rack.
        task_racks.clear();
        task_racks.extend(nodes[first..].iter().map(|&node| rack_of[node as usize]));
        task_racks.sort_unstable();
        task_racks.dedup();
        rack_tasks.extend(task_racks.iter().map(|&rack| (rack, task)));
    }
    // Counting sort by node, then by rack: tasks are visited in increasing order, so every list is.
    let mut by_node = vec![(0u32, 0u32); n as usize];
    let mut by_rack = vec![(0u32, 0u32); racks];
    for &node in &nodes {
        by_node[node as usize].1 += 1;
    }
    for &(rack, _) in &rack_tasks {
        by_rack[rack as usize].1 += 1;
    }
    let mut at = 0u32;
    for run in by_node.iter_mut().chain(by_rack.iter_mut()) {
        let len = run.1;
        *run = (at, at);
        at += len;
    }
    let mut tasks = vec![0u32; at as usize];
    for (k, &node) in nodes.iter().enumerate() {
        let run = &mut by_node[node as usize];
        tasks[run.1 as usize] = (k / r) as u32;
        run.1 += 1;
    }
    for &(rack, task) in &rack_tasks {
        let run = &mut by_rack[rack as usize];
        tasks[run.1 as usize] = task;
        run.1 += 1;
    }
    Placement { launched: vec![0; maps.div_ceil(64)], tasks, by_node, by_rack }
}

/// Workloads with at least this many map tasks draw their replicas on a second thread.
const DRAW_AHEAD_MIN_MAPS: u64 = 100_000;
/// How many jobs (in arrival order) the drawing thread may run ahead of the arrivals: a bound on
/// the lists held for jobs that have not arrived yet.
const DRAW_AHEAD_JOBS: usize = 64;

/// How long (simulated) only epochs may happen while jobs are unfinished, beyond preemption's delay
/// and grace, before the run is declared stalled ([`Simulation::check_stall`]): an hour, far beyond
/// any decision an epoch could still make.
const STALL_PATIENCE_MS: Time = 3_600_000;

/// One job's lists drawn ahead: its workload index, the run's generator before its draws, the lists.
type Drawn = (u32, SimRng, Placement);

/// Where an arriving job's replicas come from.
///
/// The generator serves nothing but replica placement, and jobs draw in arrival order, so a
/// second thread can draw every job's replicas in that order from a copy of the generator while the
/// events run: the same draws, the same lists. The one exception is a job refused at admission,
/// which draws nothing, so the jobs after it draw what it would have: at the first refusal the run
/// takes the generator as it was before the refused job's draws and draws inline from there on.
enum Replicas {
    /// Drawn at the arrival, from the run's generator.
    Inline,
    /// Drawn ahead, received in arrival order.
    Ahead(Receiver<Drawn>),
}

/// The drawing thread: every job's lists in arrival order, until the arrivals are done or the run
/// stops listening; then, while the run goes on, every job's isolated time (workload order), which
/// the result reports and which depends on the workload and the cluster alone.
fn draw_ahead(workload: &Workload, mut d: Drawing, tx: SyncSender<Drawn>) -> Vec<Time> {
    for &i in &d.order {
        let before = d.rng.clone();
        let maps = workload.jobs[i as usize].map_ms.len();
        let p = draw_placement(&mut d.rng, maps, &d.rack_of, d.racks, d.replicas);
        if tx.send((i, before, p)).is_err() {
            break;
        }
    }
    drop(tx);
    workload.jobs.iter().map(|job| isolated_time(job, &d.cluster)).collect()
}

/// What the drawing thread works from: the arrival order (workload indices), the run's generator,
/// each node's rack, the number of racks, the replicas per map and the cluster.
struct Drawing {
    order: Vec<u32>,
    rng: SimRng,
    rack_of: Vec<u32>,
    racks: usize,
    replicas: u32,
    cluster: ClusterSpec,
}

/// The workload's arrivals in the order the event heap would run them: by arrival time, equal
/// times in workload order (a stable sort of the indices).
struct ArrivalQueue {
    order: Vec<(Time, u32)>,
    next: usize,
}

impl ArrivalQueue {
    /// Whether every arrival has been handed out.
    fn is_done(&self) -> bool {
        self.next >= self.order.len()
    }

    fn new(workload: &Workload) -> ArrivalQueue {
        let mut order: Vec<(Time, u32)> =
            workload.jobs.iter().enumerate().map(|(i, j)| (j.spec.submit_ms, i as u32)).collect();
        order.sort_by_key(|&(at, _)| at);
        ArrivalQueue { order, next: 0 }
    }

    /// The next event of the run, in the order one heap of every event would give: the next
    /// arrival when it is due no later than the other queues' first events (arrivals come first at
    /// an instant), else the event heap's first event when it is due no later than the first
    /// heartbeat (its kinds come before heartbeats at an instant), else the first heartbeat.
    #[inline]
    fn next_event(
        &mut self,
        queue: &mut BinaryHeap<Reverse<Scheduled>>,
        heartbeats: &mut BinaryHeap<Reverse<(Time, u32, u32)>>,
    ) -> Option<(Time, Event)> {
        let first = queue.peek().map(|Reverse(s)| s.time);
        let beat = heartbeats.peek().map(|Reverse((t, _, _))| *t);
        if let Some(&(at, i)) = self.order.get(self.next) {
            if first.map_or(true, |t| at <= t) && beat.map_or(true, |t| at <= t) {
                self.next += 1;
                return Some((at, Event::Arrival(i)));
            }
        }
        match (first, beat) {
            (Some(t), Some(b)) if b < t => {}
            (Some(_), _) => return queue.pop().map(|Reverse(s)| (s.time, s.event())),
            (None, _) => {}
        }
        heartbeats.pop().map(|Reverse((at, node, generation))| (at, Event::Heartbeat { node, generation }))
    }
}

/// Where a run stands, as [`Simulation::run_observed`] reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Progress {
    /// Events processed so far.
    pub events: u64,
    /// Jobs finished or rejected.
    pub done: u64,
    /// Jobs in the workload.
    pub total: u64,
    /// Jobs arrived and not yet finished (the backlog).
    pub active: u64,
    /// Simulated time, ms.
    pub now: Time,
}

/// A configured run over one workload. Build with [`Simulation::new`], then [`Simulation::run`].
pub struct Simulation<'w> {
    config: SimConfig,
    workload: &'w Workload,
    engine: Engine,
    rng: SimRng,
    /// Scheduled events other than arrivals and heartbeats.
    queue: BinaryHeap<Reverse<Scheduled>>,
    /// Scheduled heartbeats, `(time, node, generation)`: ordered by time, then node, then generation,
    /// which is their scheduling order (a node's generation only grows; at most one heartbeat per
    /// node and generation is ever scheduled: `SimNode::scheduled`).
    heartbeats: BinaryHeap<Reverse<(Time, u32, u32)>>,
    seq: u64,
    now: Time,
    nodes: Vec<SimNode>,
    jobs: Vec<JobRun<'w>>,
    /// Workload index of each engine job id.
    by_engine_id: Vec<u32>,
    /// Runnable pending tasks of all jobs, per pool index.
    runnable: [u64; 2],
    active: u32,
    epoch_scheduled: bool,
    events: u64,
    busy_ms: i64,
    tasks_run: u64,
    locality: LocalityMix,
    tasks: Vec<TaskRecord>,
    choices: Vec<Choice>,
    /// Launched tasks by id; ids of ended tasks are reused (`free_ids`).
    running: Vec<RunningTask>,
    free_ids: Vec<u32>,
    /// Tasks killed by preemption and the work they had done, ms.
    preempted_tasks: u64,
    preempted_lost_ms: i64,
    /// Jobs neither finished nor rejected yet (arrived or not).
    unfinished: u64,
    /// Heartbeats in a row that launched nothing while no task was running anywhere.
    idle_heartbeats: u64,
    /// Since when the epoch has been the only event left to happen while jobs are unfinished.
    stalled_since: Option<Time>,
    running_tasks: u64,
    /// Jobs waiting for their AM container, workload indices in arrival order (YARN mechanics).
    am_waiting: Vec<u32>,
    /// Start-up contention: per host, the end times of the start-ups begun on it (pruned as they pass).
    startups: Vec<Vec<Time>>,
    /// Draw replicas on a second thread ([`Replicas`]).
    draw_ahead: bool,
    /// Each node's rack, and the number of racks.
    rack_of: Vec<u32>,
    racks: usize,
}

impl std::fmt::Debug for Simulation<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Simulation").field("now", &self.now).field("events", &self.events).finish()
    }
}

impl<'w> Simulation<'w> {
    /// Prepares a run: validates the configuration, builds the engine with the configured policy
    /// (an unknown policy is the registry's error) and registers the nodes.
    pub fn new(mut config: SimConfig, workload: &'w Workload) -> Result<Simulation<'w>> {
        config.validate()?;
        config.engine.pool_mode = config.cluster.pool;
        let mut engine = circumflex_policies::new_engine(config.engine.clone())?;
        let c = &config.cluster;
        let cap = c.node_capacity();
        let mut nodes = Vec::with_capacity(c.nodes as usize);
        for i in 0..c.nodes {
            let rack = (i as u64 * c.racks as u64 / c.nodes as u64) as u32;
            engine.add_node(&format!("node{i}"), &format!("/rack{rack}"), cap[0], cap[1]);
            let anchor = (i as i64 * config.heartbeat_ms) / c.nodes as i64;
            nodes.push(SimNode {
                rack,
                free: cap,
                anchor,
                last: None,
                scheduled: false,
                generation: 0,
                am: 0,
                reserved: 0,
            });
        }
        let rng = sim_rng(config.seed);
        let record = config.record_tasks;
        let rack_of: Vec<u32> = nodes.iter().map(|n| n.rack).collect();
        let racks = rack_of.iter().max().map_or(0, |&r| r as usize + 1);
        Ok(Simulation {
            config,
            workload,
            engine,
            rng,
            queue: BinaryHeap::with_capacity(1024),
            heartbeats: BinaryHeap::with_capacity(nodes.len() + 1),
            seq: 0,
            now: 0,
            nodes,
            jobs: vec![JobRun::default(); workload.jobs.len()],
            by_engine_id: Vec::with_capacity(workload.jobs.len()),
            runnable: [0, 0],
            active: 0,
            epoch_scheduled: false,
            events: 0,
            busy_ms: 0,
            tasks_run: 0,
            locality: LocalityMix::default(),
            tasks: if record { Vec::with_capacity(workload.tasks() as usize) } else { Vec::new() },
            choices: Vec::with_capacity(64),
            running: Vec::new(),
            free_ids: Vec::new(),
            preempted_tasks: 0,
            preempted_lost_ms: 0,
            idle_heartbeats: 0,
            stalled_since: None,
            running_tasks: 0,
            am_waiting: Vec::new(),
            startups: Vec::new(),
            unfinished: workload.jobs.len() as u64,
            rack_of,
            racks,
            draw_ahead: workload.jobs.iter().map(|j| j.map_ms.len() as u64).sum::<u64>() >= DRAW_AHEAD_MIN_MAPS,
        })
    }

    /// Draws replicas on a second thread (`true`) or at each arrival, whatever the workload's size
    /// (the outcome is the same either way; for the tests that check it).
    #[cfg(test)]
    pub(crate) fn with_draw_ahead(mut self, on: bool) -> Self {
        self.draw_ahead = on;
        self
    }

    /// The engine being driven (for inspection in tests).
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    fn schedule(&mut self, time: Time, event: Event) {
        debug_assert!(!matches!(event, Event::Arrival(_) | Event::Heartbeat { .. }), "queued apart");
        self.seq += 1;
        self.queue.push(Reverse(Scheduled::new(time, self.seq, event)));
    }

    /// Runs to the end (every job finished or rejected) and returns the result.
    pub fn run(self) -> Result<SimResult> {
        self.run_with_progress(|_, _| {})
    }

    /// Like [`Simulation::run`], calling `progress(jobs_done, jobs_total)` every few thousand events.
    pub fn run_with_progress(self, mut progress: impl FnMut(u64, u64)) -> Result<SimResult> {
        self.run_observed(|p| progress(p.done, p.total))
    }

    /// Like [`Simulation::run`], calling `observe` every 16,384 events and at the end with the
    /// backlog at that point (for the events/s-against-active-jobs benchmark, `benches/sim_backlog.rs`).
    pub fn run_observed(mut self, observe: impl FnMut(&Progress)) -> Result<SimResult> {
        // Arrivals stay out of the event heap (a day of 25,000 jobs would otherwise start with
        // every one of them in it): they come from the list below, which is exactly the order
        // the heap gave them (time, then workload index, the order they were scheduled in), and
        // an arrival runs before any other event of its instant (its kind comes first).
        let arrivals = ArrivalQueue::new(self.workload);
        let ahead = self.draw_ahead && self.config.replicas > 0;
        let workload = self.workload;
        let isolated = std::thread::scope(|scope| {
            let mut replicas = Replicas::Inline;
            let mut drawing = None;
            if ahead {
                let (tx, rx) = sync_channel(DRAW_AHEAD_JOBS);
                let d = Drawing {
                    order: arrivals.order.iter().map(|&(_, i)| i).collect(),
                    rng: self.rng.clone(),
                    rack_of: self.rack_of.clone(),
                    racks: self.racks,
                    replicas: self.config.replicas,
                    cluster: self.config.cluster.clone(),
                };
                let spawned = std::thread::Builder::new()
                    .name("draw-replicas".into())
                    .spawn_scoped(scope, move || draw_ahead(workload, d, tx));
                // Without a second thread the run draws inline, as it would for a small workload.
                if let Ok(handle) = spawned {
                    replicas = Replicas::Ahead(rx);
                    drawing = Some(handle);
                }
            }
            // `replicas` (the receiving end) is dropped before the drawing thread is joined (and when
            // this closure unwinds, before the scope joins it), so a thread blocked on a full channel
            // always ends.
            let run = self.event_loop(arrivals, &mut replicas, observe);
            drop(replicas);
            // A drawing thread that panicked has failed the run already (its lists never came).
            run.map(|()| drawing.and_then(|h| h.join().ok()))
        })?;
        Ok(self.finish(isolated))
    }

    fn event_loop(
        &mut self,
        mut arrivals: ArrivalQueue,
        replicas: &mut Replicas,
        mut observe: impl FnMut(&Progress),
    ) -> Result<()> {
        if self.config.idle_heartbeats {
            for ni in 0..self.nodes.len() {
                let at = self.nodes[ni].anchor;
                self.schedule_heartbeat(ni, at);
            }
        }
        let total = self.workload.jobs.len() as u64;
        let mut done = 0u64;
        while let Some((time, event)) = arrivals.next_event(&mut self.queue, &mut self.heartbeats) {
            self.now = time;
            self.events += 1;
            match event {
                Event::Arrival(i) => {
                    self.on_arrival(i as usize, replicas)?;
                    if self.jobs[i as usize].rejected {
                        done += 1;
                        self.unfinished -= 1;
                    }
                }
                Event::Heartbeat { node, generation } => self.on_heartbeat(node, generation)?,
                Event::TaskDone { task } => {
                    if self.on_task_done(task)? {
                        done += 1;
                        self.unfinished -= 1;
                    }
                }
                Event::Kill { task } => self.on_kill(task)?,
                Event::Epoch => {
                    self.on_epoch();
                    self.check_stall(arrivals.is_done())?;
                }
                Event::AmReady(i) => self.on_am_ready(i as usize)?,
            }
            if self.events & 0x3fff == 0 {
                observe(&Progress { events: self.events, done, total, active: self.active as u64, now: self.now });
            }
        }
        observe(&Progress { events: self.events, done, total, active: self.active as u64, now: self.now });
        Ok(())
    }

    // ----- events ------------------------------------------------------------------------

    fn on_arrival(&mut self, i: usize, replicas: &mut Replicas) -> Result<()> {
        let now = self.now;
        let spec = self.workload.jobs[i].spec.clone();
        let (id, admission) = self.engine.submit(spec, now)?;
        debug_assert_eq!(id.0 as usize, self.by_engine_id.len());
        self.by_engine_id.push(i as u32);
        if let Admission::Reject { .. } = admission {
            self.jobs[i].rejected = true;
            if let Replicas::Ahead(rx) = replicas {
                // It draws nothing: the jobs after it draw from the generator as it was before its
                // draws, inline from here on (dropping the receiver ends the drawing thread).
                let (_, before, _) = Self::receive(rx, i)?;
                self.rng = before;
                *replicas = Replicas::Inline;
            }
            return Ok(());
        }
        self.jobs[i].engine_id = Some(id);
        self.jobs[i].durations = [&self.workload.jobs[i].map_ms, &self.workload.jobs[i].reduce_ms];
        self.active += 1;
        if self.config.replicas > 0 {
            let p = match replicas {
                Replicas::Inline => {
                    let maps = self.workload.jobs[i].map_ms.len();
                    draw_placement(&mut self.rng, maps, &self.rack_of, self.racks, self.config.replicas)
                }
                Replicas::Ahead(rx) => Self::receive(rx, i)?.2,
            };
            self.jobs[i].local = p;
        }
        if self.config.yarn.am_slots > 0 {
            // As the YARN shim submits: nothing asked yet (the gate, when on, keeps the declared counts).
            self.engine.set_pending(id, Phase::Map, 0)?;
            self.engine.set_pending(id, Phase::Reduce, 0)?;
            self.engine.am_requested(id, self.config.yarn.am_slots, now)?;
            self.am_waiting.push(i as u32);
            for ni in 0..self.nodes.len() {
                self.wake(ni);
            }
        }
        self.refresh_runnable(i);
        if !self.epoch_scheduled {
            let e = self.config.engine.epoch_ms;
            let next = (now / e + 1) * e;
            self.epoch_scheduled = true;
            self.schedule(next, Event::Epoch);
        }
        Ok(())
    }

    /// The next lists drawn ahead, which must be job `i`'s (the thread draws in arrival order).
    fn receive(rx: &Receiver<Drawn>, i: usize) -> Result<Drawn> {
        match rx.recv() {
            Ok(d) if d.0 as usize == i => Ok(d),
            // Unreachable unless the drawing thread panicked (the scope then reports its panic).
            _ => Err(Error::UnknownId { kind: "job", id: i as i64 }),
        }
    }

    fn on_heartbeat(&mut self, node: u32, generation: u32) -> Result<()> {
        let ni = node as usize;
        if self.nodes[ni].generation != generation {
            self.events -= 1; // superseded by an out-of-band heartbeat: not an event of the run
            return Ok(());
        }
        let now = self.now;
        {
            let n = &mut self.nodes[ni];
            n.scheduled = false;
            n.anchor = now;
            n.last = Some(now);
        }
        let always = self.config.idle_heartbeats;
        let queue_ams = self.config.yarn.am_order == crate::sim::AmOrder::Queue && !self.config.engine.am.enabled;
        if !self.am_waiting.is_empty() && !queue_ams {
            self.place_ams(ni)?;
        }
        if always || self.useful(ni) {
            // The true free slots, even in pools with nothing runnable: the engine bounds the choices of
            // one heartbeat (delay-scheduling skips included) by the node's total free slots.
            let free = self.task_free(ni);
            let choices = self.engine.node_update(NodeId(node), free, now)?;
            self.choices.clear();
            self.choices.extend_from_slice(choices);
            let mut launched = 0;
            for k in 0..self.choices.len() {
                let c = self.choices[k];
                launched += self.launch(c, ni)?;
            }
            self.check_progress(launched)?;
        }
        if !self.am_waiting.is_empty() && queue_ams {
            self.place_ams(ni)?;
        }
        let again = if always { self.unfinished > 0 } else { self.useful(ni) };
        if again && !self.nodes[ni].scheduled {
            let next = now + self.config.heartbeat_ms;
            self.schedule_heartbeat(ni, next);
        }
        Ok(())
    }

    /// Guards against a policy that never launches anything on an idle cluster (a bug, reported as an
    /// error instead of an endless run).
    fn check_progress(&mut self, launched: u32) -> Result<()> {
        if launched > 0 || self.running_tasks > 0 || self.runnable == [0, 0] {
            self.idle_heartbeats = 0;
            return Ok(());
        }
        self.idle_heartbeats += 1;
        let cfg = &self.config.engine;
        let patience =
            (cfg.node_locality_delay as u64 + cfg.rack_locality_delay as u64 + 4) * (self.nodes.len() as u64 + 1) * 4
                + 10_000;
        if self.idle_heartbeats > patience {
            return Err(Error::config(
                circumflex_core::config::KEY_POLICY,
                &cfg.policy,
                format!(
                    "a policy that launches runnable tasks on an idle cluster (simulation stalled at {} ms \
                     with {} runnable tasks)",
                    self.now,
                    self.runnable[0] + self.runnable[1]
                ),
            ));
        }
        Ok(())
    }

    /// Guards against a run that can never end (an error instead of epochs forever): jobs are
    /// unfinished, yet after an epoch nothing else is left to happen (no task running, no AM
    /// starting, no heartbeat due, no arrival to come), and it stays so for longer than a delayed
    /// decision (preemption's delay and grace) could take to change it. The case that reaches it is
    /// YARN's AM deadlock: without an AM limit, AM containers fill every slot and no task can start
    /// (the real FairScheduler and CapacityScheduler bound AMs for this reason; so does the AM gate).
    fn check_stall(&mut self, arrivals_done: bool) -> Result<()> {
        // The queue holds the next epoch at most.
        let only_epochs = arrivals_done && self.heartbeats.is_empty() && self.queue.len() <= 1;
        if !only_epochs || self.unfinished == 0 {
            self.stalled_since = None;
            return Ok(());
        }
        let since = *self.stalled_since.get_or_insert(self.now);
        let cfg = &self.config.engine;
        let patience =
            STALL_PATIENCE_MS.saturating_add(cfg.preemption.delay_ms).saturating_add(cfg.preemption.grace_ms);
        if self.now - since <= patience {
            return Ok(());
        }
        let am_slots: u32 = self.nodes.iter().map(|n| n.am).sum();
        let slots = self.config.cluster.node_capacity()[0].saturating_mul(self.nodes.len() as u32);
        let state = format!(
            "the run stalled at {} ms with {} jobs unfinished: no task running or runnable on a free slot, \
             {} of {} slots held by AM containers",
            self.now, self.unfinished, am_slots, slots
        );
        Err(if cfg.am.enabled || am_slots == 0 {
            Error::config(
                circumflex_core::config::KEY_POLICY,
                &cfg.policy,
                format!("a policy that launches runnable tasks ({state})"),
            )
        } else {
            Error::config(
                circumflex_core::config::KEY_AM_ADMISSION,
                false,
                format!(
                    "a bound on AM containers ({state}: AMs filled the cluster; turn the AM gate on, \
                     circumflex.am.admission.enabled=true with circumflex.am.max.share, or give the nodes room \
                     for every AM)"
                ),
            )
        })
    }

    fn on_task_done(&mut self, task: u32) -> Result<bool> {
        let t = self.running[task as usize];
        let duration = t.end - t.start;
        self.free_ids.push(task);
        if !t.alive {
            self.events -= 1; // the task was preempted earlier: not an event of the run
            return Ok(false);
        }
        self.running[task as usize].alive = false;
        let (wi, phase, node) = (t.job as usize, t.phase, t.node);
        if self.config.engine.preemption.enabled {
            self.jobs[wi].live[phase.idx()].retain(|&id| id != task);
        }
        let now = self.now;
        let ni = node as usize;
        let pool = self.pool_of(phase);
        self.nodes[ni].free[pool] += 1;
        self.running_tasks -= 1;
        let id = self.jobs[wi].engine_id.ok_or(Error::UnknownId { kind: "job", id: wi as i64 })?;
        self.engine.task_finished(id, phase, NodeId(node), duration, true, now)?;
        let finished = self.engine.job_status(id) == Some(JobStatus::Finished);
        if finished {
            self.jobs[wi].finish_ms = Some(now);
            self.jobs[wi].release_task_lists();
            self.active -= 1;
            if let Some(am_node) = self.jobs[wi].am_node.take() {
                self.am_released(am_node as usize)?;
            }
        }
        self.refresh_runnable(wi);
        self.slot_freed(ni);
        Ok(finished)
    }

    /// A slot of node `ni` freed now: an out-of-band heartbeat at once, or the node wakes on its grid.
    fn slot_freed(&mut self, ni: usize) {
        if self.config.out_of_band_heartbeat {
            // Sent even when it cannot launch anything: it restarts the node's periodic schedule.
            let n = &mut self.nodes[ni];
            n.generation = n.generation.wrapping_add(1);
            n.scheduled = false;
            self.schedule_heartbeat(ni, self.now);
        } else {
            self.wake(ni);
        }
    }

    fn on_epoch(&mut self) {
        self.epoch_scheduled = false;
        self.engine.tick(self.now);
        if self.config.engine.preemption.enabled {
            self.preempt();
        }
        if self.active > 0 {
            self.epoch_scheduled = true;
            let next = self.now + self.config.engine.epoch_ms;
            self.schedule(next, Event::Epoch);
        }
    }

    // ----- launching ---------------------------------------------------------------------

    /// How long a container start-up of uncontended length `base` that begins now on node `ni` takes
    /// (module docs, start-up contention): `base` while the model is off; otherwise, with `n` start-ups
    /// in progress on the node's host counting this one and `c` cores, `base · max(1, n / c)`, and the
    /// start-up is recorded as in progress until it ends.
    fn startup_delay(&mut self, ni: usize, base: Time) -> Time {
        let cores = self.config.yarn.host_cores;
        if cores == 0 || base == 0 {
            return base;
        }
        let host = ni / self.config.yarn.nodes_per_host.max(1) as usize;
        if self.startups.len() <= host {
            self.startups.resize_with(host + 1, Vec::new);
        }
        let now = self.now;
        let ends = &mut self.startups[host];
        ends.retain(|&end| end > now);
        let n = ends.len() as i64 + 1;
        let delay = if n <= i64::from(cores) { base } else { base.saturating_mul(n) / i64::from(cores) };
        ends.push(now.saturating_add(delay));
        delay
    }

    /// Launches tasks of one choice on node `ni` while it has free slots; returns how many.
    fn launch(&mut self, c: Choice, ni: usize) -> Result<u32> {
        let pool = self.pool_of(c.phase);
        let wi = self
            .by_engine_id
            .get(c.job.0 as usize)
            .copied()
            .ok_or(Error::UnknownId { kind: "job", id: c.job.0 as i64 })? as usize;
        let mut launched = 0;
        while launched < c.count && self.task_free(ni)[pool] > 0 {
            let picked = match c.phase {
                Phase::Reduce => self.pick_reduce(wi),
                Phase::Map => self.pick_map(wi, ni, c.locality),
            };
            let Some((task, locality)) = picked else { break };
            let accelerated = self.engine.nodes().get(ni).is_some_and(|n| n.accelerated);
            // The container holds its slot while it launches (YARN mechanics), then the task's work runs.
            let launch = self.startup_delay(ni, self.config.yarn.launch_ms);
            let duration = self.duration_on(wi, c.phase, task, accelerated)? + launch;
            self.engine.task_started(c.job, c.phase, NodeId(ni as u32), locality, self.now)?;
            self.nodes[ni].free[pool] -= 1;
            self.running_tasks += 1;
            self.busy_ms += duration;
            self.tasks_run += 1;
            if c.phase == Phase::Map {
                match locality {
                    Locality::Node => self.locality.node += 1,
                    Locality::Rack => self.locality.rack += 1,
                    Locality::Any => self.locality.any += 1,
                }
            }
            self.jobs[wi].start_ms.get_or_insert(self.now);
            let end = self.now + duration;
            let record = self.tasks.len() as u32;
            if self.config.record_tasks {
                let rec = TaskRecord {
                    job: wi as u32,
                    phase: c.phase,
                    node: ni as u32,
                    start_ms: self.now,
                    end_ms: end,
                    locality,
                    preempted: false,
                };
                self.tasks.push(rec);
            }
            let run = RunningTask {
                job: wi as u32,
                phase: c.phase,
                node: ni as u32,
                index: task,
                start: self.now,
                end,
                record,
                alive: true,
                doomed: false,
            };
            let id = match self.free_ids.pop() {
                Some(id) => {
                    self.running[id as usize] = run;
                    id
                }
                None => {
                    self.running.push(run);
                    (self.running.len() - 1) as u32
                }
            };
            if self.config.engine.preemption.enabled {
                self.jobs[wi].live[c.phase.idx()].push(id);
            }
            self.schedule(end, Event::TaskDone { task: id });
            launched += 1;
        }
        if launched > 0 {
            self.refresh_runnable(wi);
        }
        Ok(launched)
    }

    /// The true duration of job `wi`'s `phase` task `task` on a node that is (or is not) accelerated:
    /// [`SimJob::duration_on`], read from the job's state when not accelerated.
    #[inline]
    fn duration_on(&self, wi: usize, phase: Phase, task: u32, accelerated: bool) -> Result<Time> {
        if accelerated {
            return self.workload.jobs[wi].duration_on(phase, task as usize, true);
        }
        self.jobs[wi].durations[phase.idx()]
            .get(task as usize)
            .copied()
            .ok_or_else(|| Error::job("task index", task, "below the phase's task count"))
    }

    fn pick_reduce(&mut self, wi: usize) -> Option<(u32, Locality)> {
        let run = &mut self.jobs[wi];
        if let Some(task) = run.requeued[Phase::Reduce.idx()].pop() {
            return Some((task, Locality::Any));
        }
        if (run.next_reduce as usize) < run.durations[Phase::Reduce.idx()].len() {
            run.next_reduce += 1;
            Some((run.next_reduce - 1, Locality::Any))
        } else {
            None
        }
    }

    fn pick_map(&mut self, wi: usize, ni: usize, allowed: Locality) -> Option<(u32, Locality)> {
        let maps = self.jobs[wi].durations[Phase::Map.idx()].len() as u32;
        let rack = self.nodes[ni].rack;
        let run = &mut self.jobs[wi];
        // A preempted map runs again wherever a slot is offered at any locality (its replicas are not
        // remembered), so a node-restricted offer passes it by.
        if allowed == Locality::Any || self.config.replicas == 0 {
            if let Some(task) = run.requeued[Phase::Map.idx()].pop() {
                let level = if self.config.replicas == 0 { Locality::Node } else { Locality::Any };
                return Some((task, level));
            }
        }
        if self.config.replicas == 0 {
            if run.next_map < maps {
                run.next_map += 1;
                return Some((run.next_map - 1, Locality::Node));
            }
            return None;
        }
        let mut pick = run.local.pop_unlaunched(false, ni as u32).map(|t| (t, Locality::Node));
        if pick.is_none() && allowed >= Locality::Rack {
            pick = run.local.pop_unlaunched(true, rack).map(|t| (t, Locality::Rack));
        }
        if pick.is_none() && allowed >= Locality::Any {
            while run.next_map < maps && run.local.is_launched(run.next_map) {
                run.next_map += 1;
            }
            if run.next_map < maps {
                pick = Some((run.next_map, Locality::Any));
            }
        }
        let (task, _) = pick?;
        run.local.set_launched(task);
        pick
    }

    // ----- preemption ----------------------------------------------------------------------

    /// Carries out the engine's preemption decisions as the host's shim does: the victim's youngest
    /// running tasks of the phase (not already chosen) are killed when the kill lands
    /// ([`SimConfig::kill_timing`]: after the grace period on YARN, at the victim node's second
    /// heartbeat on MRv1), unless they end first.
    fn preempt(&mut self) {
        let decisions = self.engine.preemptions(self.now).to_vec();
        for d in decisions {
            let Some(&wi) = self.by_engine_id.get(d.victim.0 as usize) else { continue };
            for _ in 0..d.count {
                let youngest = self.jobs[wi as usize].live[d.phase.idx()]
                    .iter()
                    .copied()
                    .filter(|&id| !self.running[id as usize].doomed)
                    .max_by_key(|&id| (self.running[id as usize].start, id));
                let Some(id) = youngest else { break };
                self.running[id as usize].doomed = true;
                let at = self.kill_lands(self.running[id as usize].node as usize);
                self.schedule(at, Event::Kill { task: id });
            }
        }
    }

    /// When a kill decided now of a task on node `ni` frees its slot ([`KillTiming`]).
    fn kill_lands(&self, ni: usize) -> Time {
        match self.config.kill_timing() {
            KillTiming::Grace => self.now + self.config.engine.preemption.grace_ms,
            KillTiming::TrackerHeartbeats => {
                // The node's periodic grid (`anchor + k × heartbeat_ms`, dormant or not): its first
                // heartbeat after the decision (at this instant too if it has not happened yet: the
                // epoch runs before the heartbeats of its instant) carries the kill action, the next
                // one the KILLED report and the free slot.
                self.next_grid_heartbeat(ni) + self.config.heartbeat_ms
            }
        }
    }

    fn on_kill(&mut self, task: u32) -> Result<()> {
        let t = self.running[task as usize];
        if !t.alive {
            self.events -= 1; // ended by itself before the grace period was over
            return Ok(());
        }
        self.running[task as usize].alive = false;
        let now = self.now;
        let (wi, ni) = (t.job as usize, t.node as usize);
        let pool = self.pool_of(t.phase);
        self.nodes[ni].free[pool] += 1;
        self.running_tasks -= 1;
        self.busy_ms -= t.end - now;
        self.preempted_tasks += 1;
        self.preempted_lost_ms += now - t.start;
        if self.config.record_tasks {
            if let Some(rec) = self.tasks.get_mut(t.record as usize) {
                rec.end_ms = now;
                rec.preempted = true;
            }
        }
        let run = &mut self.jobs[wi];
        run.live[t.phase.idx()].retain(|&id| id != task);
        run.requeued[t.phase.idx()].push(t.index);
        let id = run.engine_id.ok_or(Error::UnknownId { kind: "job", id: wi as i64 })?;
        self.engine.task_preempted(id, t.phase, NodeId(t.node), now - t.start, now)?;
        self.refresh_runnable(wi);
        self.slot_freed(ni);
        Ok(())
    }

    // ----- YARN mechanics: AM containers ------------------------------------------------------

    /// Places waiting AM containers on node `ni` while they fit (module docs): the gate's admissions in
    /// plan order, or every waiting AM in arrival order. An AM that reserved this node is placed once
    /// the node's free slots cover every reservation up to its own; one reserved elsewhere waits for
    /// that node; the first that fits nowhere yet reserves this node if the node could ever hold it
    /// with a task slot left unreserved (the shim's rule; not in the queue order), and placing stops
    /// there.
    fn place_ams(&mut self, ni: usize) -> Result<()> {
        let slots = self.config.yarn.am_slots;
        let order: Vec<u32> = if self.config.engine.am.enabled {
            let admitted = self.engine.am_admissions(self.now);
            admitted.iter().filter_map(|j| self.by_engine_id.get(j.0 as usize).copied()).collect()
        } else {
            self.am_waiting.clone()
        };
        let cap = self.config.cluster.node_capacity()[0];
        // The CapacityScheduler's queue serves an application's AM only once the applications before it
        // ask for nothing more, so it reserves nothing ahead of their tasks.
        let reserves = self.config.engine.am.enabled || self.config.yarn.am_order != crate::sim::AmOrder::Queue;
        // Reserved slots of the AMs placed or passed over so far in this call (their turn came first).
        let mut reserved_ahead = 0u32;
        for wi in order {
            let Some(id) = self.jobs[wi as usize].engine_id else { continue };
            let n = &self.nodes[ni];
            match self.jobs[wi as usize].am_reserved {
                Some(r) if r as usize != ni => continue,
                Some(_) => {
                    if n.free[0] < reserved_ahead + slots {
                        reserved_ahead += slots;
                        continue;
                    }
                    self.nodes[ni].reserved -= slots;
                    self.jobs[wi as usize].am_reserved = None;
                }
                None => {
                    if n.free[0].saturating_sub(n.reserved) < slots {
                        if reserves && n.am + n.reserved + slots < cap {
                            self.nodes[ni].reserved += slots;
                            self.jobs[wi as usize].am_reserved = Some(ni as u32);
                            self.report_am_capacity(ni)?;
                        }
                        break;
                    }
                }
            }
            self.nodes[ni].free[0] -= slots;
            self.nodes[ni].am += slots;
            self.report_am_capacity(ni)?;
            self.engine.am_started(id, slots, self.now)?;
            self.jobs[wi as usize].am_node = Some(ni as u32);
            self.am_waiting.retain(|&w| w != wi);
            let startup = self.startup_delay(ni, self.config.yarn.am_startup_ms);
            self.schedule(self.now + startup, Event::AmReady(wi));
        }
        Ok(())
    }

    /// The AM of job `wi` asks for its tasks: its declared counts become pending (registering it with
    /// the engine's gate).
    fn on_am_ready(&mut self, wi: usize) -> Result<()> {
        let Some(id) = self.jobs[wi].engine_id else { return Ok(()) };
        if self.jobs[wi].finish_ms.is_some() {
            return Ok(());
        }
        let job = &self.workload.jobs[wi];
        let (maps, reduces) = (job.map_ms.len() as u32, job.reduce_ms.len() as u32);
        self.engine.set_pending(id, Phase::Map, maps)?;
        self.engine.set_pending(id, Phase::Reduce, reduces)?;
        self.refresh_runnable(wi);
        Ok(())
    }

    /// An AM container on node `ni` ended: its slots are task capacity again.
    fn am_released(&mut self, ni: usize) -> Result<()> {
        let slots = self.config.yarn.am_slots;
        self.nodes[ni].free[0] += slots;
        self.nodes[ni].am -= slots;
        self.report_am_capacity(ni)?;
        self.slot_freed(ni);
        Ok(())
    }

    // ----- heartbeat bookkeeping -----------------------------------------------------------

    #[inline]
    fn pool_of(&self, phase: Phase) -> usize {
        match self.config.cluster.pool {
            PoolMode::Split => phase.idx(),
            PoolMode::Shared => 0,
        }
    }

    /// Whether a heartbeat of the node could launch something: a free slot in a pool with runnable work.
    #[inline]
    fn useful(&self, ni: usize) -> bool {
        let f = self.task_free(ni);
        // A waiting AM fits in the free slots (those reserved for it included).
        (f[0] > 0 && self.runnable[0] > 0)
            || (f[1] > 0 && self.runnable[1] > 0)
            || (!self.am_waiting.is_empty() && self.nodes[ni].free[0] >= self.config.yarn.am_slots)
    }

    /// Free slots tasks may take on node `ni`: the free slots less those reserved for waiting AMs.
    #[inline]
    fn task_free(&self, ni: usize) -> [u32; 2] {
        let n = &self.nodes[ni];
        [n.free[0].saturating_sub(n.reserved), n.free[1]]
    }

    /// Tells the engine node `ni`'s task capacity: its slots less AM containers and reservations.
    fn report_am_capacity(&mut self, ni: usize) -> Result<()> {
        let cap = self.config.cluster.node_capacity();
        let held = self.nodes[ni].am + self.nodes[ni].reserved;
        self.engine.set_node_capacity(NodeId(ni as u32), cap[0].saturating_sub(held), cap[1])?;
        Ok(())
    }

    fn schedule_heartbeat(&mut self, ni: usize, at: Time) {
        let n = &mut self.nodes[ni];
        n.scheduled = true;
        let generation = n.generation;
        self.heartbeats.push(Reverse((at, ni as u32, generation)));
    }

    /// Schedules a dormant node's next heartbeat on its periodic grid.
    fn wake(&mut self, ni: usize) {
        if self.nodes[ni].scheduled || !self.useful(ni) {
            return;
        }
        let at = self.next_grid_heartbeat(ni);
        self.schedule_heartbeat(ni, at);
    }

    /// Node `ni`'s next heartbeat on its periodic grid (`anchor + k × heartbeat_ms`): the first grid
    /// instant at or after now that it has not sent yet.
    fn next_grid_heartbeat(&self, ni: usize) -> Time {
        let hb = self.config.heartbeat_ms;
        let n = &self.nodes[ni];
        let at = if self.now <= n.anchor { n.anchor } else { n.anchor + (self.now - n.anchor + hb - 1) / hb * hb };
        if n.last == Some(at) {
            at + hb
        } else {
            at
        }
    }

    /// Re-reads the job's runnable pending tasks from the engine; wakes the nodes with free slots in a
    /// pool that goes from nothing runnable to something runnable.
    fn refresh_runnable(&mut self, wi: usize) {
        let mut now_runnable = [0u64; 2];
        // A job whose tasks wait for its AM (the engine's gate) has nothing runnable yet.
        let gated = |e: &Engine, id: JobId| e.am_phase(id).is_some_and(|p| p != AmPhase::Registered);
        if let Some(j) =
            self.jobs[wi].engine_id.filter(|&id| !gated(&self.engine, id)).and_then(|id| self.engine.job(id))
        {
            for ph in Phase::ALL {
                if j.runnable(ph) {
                    now_runnable[self.pool_of(ph)] += j.phase(ph).pending as u64;
                }
            }
        }
        let mut woke = false;
        for (b, &now) in now_runnable.iter().enumerate() {
            let before = self.runnable[b];
            self.runnable[b] = before - self.jobs[wi].runnable[b] + now;
            woke |= before == 0 && self.runnable[b] > 0;
        }
        self.jobs[wi].runnable = now_runnable;
        if woke {
            for ni in 0..self.nodes.len() {
                self.wake(ni);
            }
        }
    }

    // ----- results -----------------------------------------------------------------------

    /// The result; `isolated` holds every job's isolated time if the drawing thread computed them.
    fn finish(self, isolated: Option<Vec<Time>>) -> SimResult {
        let cluster: &ClusterSpec = &self.config.cluster;
        let records: Vec<JobRecord> = self
            .workload
            .jobs
            .iter()
            .zip(&self.jobs)
            .enumerate()
            .map(|(i, (job, run))| {
                let iso =
                    isolated.as_ref().and_then(|v| v.get(i).copied()).unwrap_or_else(|| isolated_time(job, cluster));
                let response = run.finish_ms.map(|f| f - job.spec.submit_ms);
                JobRecord {
                    index: i as u32,
                    external_id: job.spec.external_id.clone(),
                    arrival_ms: job.spec.submit_ms,
                    start_ms: run.start_ms,
                    finish_ms: run.finish_ms,
                    response_ms: response,
                    isolated_ms: iso,
                    stretch: response.map(|r| r as f64 / iso as f64),
                    deadline_ms: job.spec.deadline_ms,
                    tardiness_ms: match (job.spec.deadline_ms, run.finish_ms) {
                        (Some(d), Some(f)) => Some((f - d).max(0)),
                        _ => None,
                    },
                    weight: job.spec.weight,
                    maps: job.spec.maps.tasks,
                    reduces: job.spec.reduces.tasks,
                    rejected: run.rejected,
                }
            })
            .collect();
        let label = policy_label(&self.config.engine.policy, self.config.engine.objective.as_deref());
        let mut summary = Summary::from_jobs(&label, &records, self.busy_ms, cluster.total_slots());
        let stats = self.engine.stats();
        summary.tasks = self.tasks_run;
        summary.locality = self.locality;
        summary.events = self.events;
        summary.heartbeats = stats.node_updates;
        summary.plans = stats.plans;
        summary.preempted_tasks = self.preempted_tasks;
        summary.preempted_lost_s = self.preempted_lost_ms as f64 / 1000.0;
        SimResult {
            config: self.config,
            workload: self.workload.name.clone(),
            summary,
            jobs: records,
            tasks: self.tasks,
        }
    }
}

/// `policy` or `policy:objective`, the label used in tables and file names.
pub fn policy_label(policy: &str, objective: Option<&str>) -> String {
    match objective {
        Some(o) => format!("{policy}:{o}"),
        None => policy.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn queued_event() -> impl Strategy<Value = Event> {
        prop_oneof![
            any::<u32>().prop_map(|task| Event::TaskDone { task }),
            any::<u32>().prop_map(|task| Event::Kill { task }),
            any::<u32>().prop_map(Event::AmReady),
            Just(Event::Epoch),
        ]
    }

    proptest! {
        /// The packed entries come out of the heap in the order of the unpacked key they replaced,
        /// `(time, Event::order, seq)`, and carry their event unchanged.
        #[test]
        fn packed_events_keep_their_order_and_payload(
            events in proptest::collection::vec((0i64..50, queued_event()), 0..200),
        ) {
            let mut heap = BinaryHeap::new();
            let mut reference: Vec<(Time, (u8, u32), u64, Event)> = Vec::new();
            for (k, &(time, event)) in events.iter().enumerate() {
                let seq = k as u64 + 1;
                heap.push(Reverse(Scheduled::new(time, seq, event)));
                reference.push((time, event.order(), seq, event));
            }
            reference.sort_by_key(|&(time, order, seq, _)| (time, order, seq));
            for (time, _, _, event) in reference {
                let Reverse(s) = heap.pop().unwrap();
                prop_assert_eq!((s.time, s.event()), (time, event));
            }
            prop_assert!(heap.is_empty());
        }
    }
}
