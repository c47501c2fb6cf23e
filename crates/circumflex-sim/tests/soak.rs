//! Soak test: the engine under a long stream of random host events (arrivals, heartbeats and
//! task starts, task completions and failures, node loss and re-add, host kills, ticks) for every
//! registered policy, with invariants checked throughout, and peak memory reported at the start and
//! the end.
//!
//! The host is modelled the way the shims behave: it launches tasks only from the engine's choices
//! and only into free slots, reports every launch and every end, fails the running tasks of a lost
//! node before removing it, and kills a job by ending it and then reporting its tasks.
//!
//! Invariants (checked after every event in the default run, every 64 events in long runs):
//! - capacity: no node runs more tasks than it has slots, and the engine's per-node and per-job
//!   counters equal the host's;
//! - choices name only active jobs, with a count no larger than the phase's pending tasks;
//! - the engine's active set equals the host's, and every plan names only active jobs;
//! - no starvation: arrivals come in cycles; after each cycle the host stops submitting and every
//!   accepted job must finish within a bounded number of events;
//! - no leaked state: after each drain no job is active, no node has a running task, and the plan
//!   is empty.
//!
//! Length: `SOAK_EVENTS` events per policy (default 2,500: the short run of the default tests);
//! `make soak` runs millions in release mode. `SOAK_SEED` changes the stream. `SOAK_POLICIES`
//! (comma-separated names) soaks only those policies, e.g. to time `flowflex` against `flex`.
//!
//! Memory: the engine retires every job once it ends (its state is freed; only the last
//! `RECENT_JOBS` ended jobs are kept for reports), so memory is bounded by the live jobs. This
//! binary counts the live heap with a counting global allocator (`Counting`, this test binary
//! only) and reports, per policy, the live heap and its peak over the first measured arrival cycle
//! (the start, after a warm-up that fills the report ring) and over the last one (the end), plus
//! peak RSS at both points. It asserts that the live heap at the end of the run, measured drained
//! (no active job, no running task, as at the start), is within `HEAP_BOUND_BYTES` plus
//! `NODE_RECORD_BYTES` per node added during the run of the live heap at the start: node records
//! are kept for every node ever added (node ids are dense, and nodes churn far more slowly than
//! jobs), so the soak's node re-adds are the only growth the engine is allowed.

use std::alloc::{GlobalAlloc, Layout, System};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

use circumflex_core::engine::Engine;
use circumflex_core::model::{JobId, JobSpec, JobStatus, Locality, NodeId, Phase, Time};
use circumflex_core::policy::{Admission, PoolMode};
use circumflex_core::EngineConfig;
use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64;

/// Most live-heap growth between the drained start and the drained end of a run, beside the node
/// allowance. Justification: with no active job the engine holds nodes, the plan (empty), the
/// report ring (full after the warm-up), the assignment index (empty sets) and the policy's state;
/// what may still differ is the capacity of reusable buffers and the reservations of jobs whose
/// deadlines are still ahead (Deadline Constraint, RTMR): at most 3.5 KiB measured. Over a long run
/// (`make soak`: 25,000 to 50,000 jobs per policy) the bound lets through less than 20 B per job,
/// where keeping ended jobs cost 780 to 880 B each (see docs/hardening.md). The default short run
/// (about 70 jobs) cannot see retention through the heap (a dense vector's spare capacity absorbs
/// it); there `check` guards it: the engine must hold exactly the host's live jobs after every event.
const HEAP_BOUND_BYTES: usize = 16 << 10;
/// Allowance per node added during the run: its `NodeState` (name and rack strings) in the engine
/// and its record in the host.
const NODE_RECORD_BYTES: usize = 256;

/// Counts live heap bytes and their peak (this test binary only).
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

fn grew(bytes: usize) {
    let now = LIVE.fetch_add(bytes, Relaxed) + bytes;
    PEAK.fetch_max(now, Relaxed);
}

// SAFETY: every call forwards to the system allocator with the caller's arguments unchanged; the
// counters are only bookkeeping.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size(), Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            if new_size >= layout.size() {
                grew(new_size - layout.size());
            } else {
                LIVE.fetch_sub(layout.size() - new_size, Relaxed);
            }
        }
        p
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Live heap bytes now, and the peak since the last call (which restarts the peak from now).
fn heap() -> (usize, usize) {
    let live = LIVE.load(Relaxed);
    (live, PEAK.swap(live, Relaxed))
}
/// Jobs submitted per arrival cycle before the host stops submitting and drains.
const JOBS_PER_CYCLE: usize = 60;
/// Most active jobs at once.
const MAX_ACTIVE: usize = 25;
/// Most events a drain may take before a remaining job counts as starved.
const DRAIN_BOUND: u64 = 200_000;

/// Peak and current resident set size in bytes, from /proc/self/status.
fn rss() -> (u64, u64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|kb| kb.parse::<u64>().ok())
            .map_or(0, |kb| kb * 1024)
    };
    (field("VmHWM:"), field("VmRSS:"))
}

struct HostNode {
    id: NodeId,
    capacity: [u32; 2],
    running: [u32; 2],
    alive: bool,
}

#[derive(Clone, Copy)]
struct Task {
    job: JobId,
    phase: Phase,
    node: usize,
    start: Time,
}

#[derive(Default, Clone, Copy)]
struct HostJob {
    /// Per phase: (pending, running, finished).
    counts: [[u32; 3]; 2],
    /// True mean task duration per phase.
    task_ms: [Time; 2],
}

struct Host {
    engine: Engine,
    rng: Pcg64,
    mode: PoolMode,
    policy: &'static str,
    nodes: Vec<HostNode>,
    /// Running tasks keyed by (end time, sequence number).
    tasks: BTreeMap<(Time, u64), Task>,
    seq: u64,
    jobs: BTreeMap<JobId, HostJob>,
    clock: Time,
    events: u64,
    submitted: u64,
    rejected: u64,
    finished: u64,
    failures: u64,
    node_losses: u64,
    check_every: u64,
}

impl Host {
    fn new(policy: &'static str, mode: PoolMode, seed: u64, check_every: u64) -> Host {
        let config = EngineConfig { policy: policy.into(), pool_mode: mode, ..EngineConfig::default() };
        let mut host = Host {
            engine: circumflex_policies::new_engine(config).unwrap(),
            rng: Pcg64::seed_from_u64(seed),
            mode,
            policy,
            nodes: Vec::new(),
            tasks: BTreeMap::new(),
            seq: 0,
            jobs: BTreeMap::new(),
            clock: 0,
            events: 0,
            submitted: 0,
            rejected: 0,
            finished: 0,
            failures: 0,
            node_losses: 0,
            check_every,
        };
        for _ in 0..6 {
            host.add_node();
        }
        host
    }

    fn slot(&self, phase: Phase) -> usize {
        match self.mode {
            PoolMode::Shared => 0,
            PoolMode::Split => phase.idx(),
        }
    }

    fn add_node(&mut self) {
        let capacity = match self.mode {
            PoolMode::Shared => [self.rng.random_range(2..=8), 0],
            PoolMode::Split => [self.rng.random_range(1..=4), self.rng.random_range(1..=2)],
        };
        let n = self.nodes.len();
        let id = self.engine.add_node(&format!("node{n}"), &format!("/rack{}", n % 3), capacity[0], capacity[1]);
        self.nodes.push(HostNode { id, capacity, running: [0, 0], alive: true });
    }

    fn alive(&self) -> Vec<usize> {
        (0..self.nodes.len()).filter(|&i| self.nodes[i].alive).collect()
    }

    fn submit(&mut self) {
        let maps = self.rng.random_range(1..=30);
        let reduces = self.rng.random_range(0..=6);
        let map_ms = self.rng.random_range(200..=5_000);
        let reduce_ms = self.rng.random_range(500..=8_000);
        let mut spec = JobSpec::new(self.clock, maps, reduces).with_task_ms(map_ms, reduce_ms);
        spec.weight = self.rng.random_range(0.5..4.0);
        let isolated = (maps as Time * map_ms + reduces as Time * reduce_ms) / 4 + map_ms + reduce_ms;
        if self.rng.random_bool(0.7) {
            spec.deadline_ms = Some(self.clock + isolated * self.rng.random_range(1..=12));
            spec.goal_ms = spec.deadline_ms;
        }
        if self.rng.random_bool(0.6) {
            spec.dataset = Some(format!("ds{}", self.rng.random_range(0..3)));
        }
        let (id, admission) = self.engine.submit(spec, self.clock).unwrap();
        self.submitted += 1;
        match admission {
            Admission::Accept => {
                let job = HostJob { counts: [[maps, 0, 0], [reduces, 0, 0]], task_ms: [map_ms, reduce_ms] };
                self.jobs.insert(id, job);
            }
            Admission::Reject { .. } => {
                self.rejected += 1;
                assert!(self.engine.job(id).is_none(), "{}: a rejected job is retired at once", self.policy);
                assert_eq!(self.engine.job_status(id), Some(JobStatus::Rejected));
            }
        }
    }

    fn heartbeat(&mut self) {
        let alive = self.alive();
        let n = alive[self.rng.random_range(0..alive.len())];
        let node = &self.nodes[n];
        let mut free = [node.capacity[0] - node.running[0], node.capacity[1] - node.running[1]];
        let id = node.id;
        let choices = self.engine.node_update(id, free, self.clock).unwrap().to_vec();
        for c in &choices {
            let host_job =
                self.jobs.get(&c.job).unwrap_or_else(|| panic!("{}: choice for inactive {:?}", self.policy, c.job));
            let pending = host_job.counts[c.phase.idx()][0];
            assert!(c.count >= 1 && c.count <= pending, "{}: choice {c:?} with {pending} pending", self.policy);
        }
        for c in choices {
            let slot = self.slot(c.phase);
            let mut launches = c.count.min(free[slot]);
            if c.locality != Locality::Any && self.rng.random_bool(0.5) {
                launches = 0; // No task with data on this node or rack: the host declines.
            }
            for _ in 0..launches {
                if self.jobs[&c.job].counts[c.phase.idx()][0] == 0 {
                    break;
                }
                self.engine.task_started(c.job, c.phase, id, c.locality, self.clock).unwrap();
                free[slot] -= 1;
                self.nodes[n].running[slot] += 1;
                let job = self.jobs.get_mut(&c.job).unwrap();
                job.counts[c.phase.idx()][0] -= 1;
                job.counts[c.phase.idx()][1] += 1;
                let mean = job.task_ms[c.phase.idx()];
                let duration = self.rng.random_range(mean / 2..=mean + mean / 2).max(1);
                self.seq += 1;
                let task = Task { job: c.job, phase: c.phase, node: n, start: self.clock };
                self.tasks.insert((self.clock + duration, self.seq), task);
            }
        }
    }

    /// Reports the end of `task` at `now`; returns whether the engine finished the job.
    fn end_task(&mut self, task: Task, success: bool, now: Time) {
        let slot = self.slot(task.phase);
        self.nodes[task.node].running[slot] -= 1;
        let node = self.nodes[task.node].id;
        let active = self.jobs.contains_key(&task.job);
        let result = self.engine.task_finished(task.job, task.phase, node, now - task.start, success, now);
        if !active {
            // The host killed the job first: the engine refuses the report but frees the slot.
            assert!(result.is_err(), "{}: a task of a killed job was accepted", self.policy);
            return;
        }
        result.unwrap();
        let job = self.jobs.get_mut(&task.job).unwrap();
        let c = &mut job.counts[task.phase.idx()];
        c[1] -= 1;
        if success {
            c[2] += 1;
        } else {
            c[0] += 1;
            self.failures += 1;
        }
        if job.counts.iter().all(|c| c[0] == 0 && c[1] == 0) {
            assert_eq!(self.engine.job_status(task.job), Some(JobStatus::Finished), "{}", self.policy);
            assert!(self.engine.job(task.job).is_none(), "{}: an ended job is retired", self.policy);
            self.jobs.remove(&task.job);
            self.finished += 1;
        }
    }

    fn complete_next(&mut self) {
        let Some(((end, _), task)) = self.tasks.pop_first() else { return };
        self.clock = self.clock.max(end);
        let success = self.rng.random_bool(0.97);
        self.end_task(task, success, self.clock);
    }

    fn lose_node(&mut self) {
        let alive = self.alive();
        if alive.len() <= 2 {
            return;
        }
        let n = alive[self.rng.random_range(0..alive.len())];
        let lost: Vec<(Time, u64)> = self.tasks.iter().filter(|(_, t)| t.node == n).map(|(k, _)| *k).collect();
        for key in lost {
            let task = self.tasks.remove(&key).unwrap();
            self.end_task(task, false, self.clock);
        }
        self.engine.remove_node(self.nodes[n].id, self.clock).unwrap();
        self.nodes[n].alive = false;
        self.node_losses += 1;
    }

    fn kill_job(&mut self) {
        let Some(&job) = self.jobs.keys().nth(self.rng.random_range(0..self.jobs.len().max(1))) else { return };
        self.engine.finish_job(job, self.clock).unwrap();
        self.jobs.remove(&job);
        self.finished += 1;
        let keys: Vec<(Time, u64)> = self.tasks.iter().filter(|(_, t)| t.job == job).map(|(k, _)| *k).collect();
        for key in keys {
            let task = self.tasks.remove(&key).unwrap();
            self.end_task(task, false, self.clock);
        }
    }

    /// One random event; `arrivals` says whether the host may submit.
    fn step(&mut self, arrivals: bool) {
        self.clock += self.rng.random_range(0..40);
        let roll = self.rng.random_range(0..1_000u32);
        match roll {
            0..=59 if arrivals && self.jobs.len() < MAX_ACTIVE => self.submit(),
            0..=399 => self.heartbeat(),
            400..=899 => self.complete_next(),
            900..=903 => self.lose_node(),
            904..=907 if self.alive().len() < 6 => self.add_node(),
            908 if self.rng.random_bool(0.3) && !self.jobs.is_empty() => self.kill_job(),
            _ => {
                self.engine.tick(self.clock);
            }
        }
        self.events += 1;
        if self.events % self.check_every == 0 {
            self.check();
        }
    }

    fn check(&self) {
        let p = self.policy;
        for node in self.nodes.iter().filter(|n| n.alive) {
            let engine_node = &self.engine.nodes()[node.id.0 as usize];
            assert_eq!(engine_node.running, node.running, "{p}: node {:?} running", node.id);
            assert!(node.running[0] <= node.capacity[0] && node.running[1] <= node.capacity[1], "{p}: over capacity");
        }
        let engine_active: BTreeSet<JobId> = self.engine.active().iter().copied().collect();
        let host_active: BTreeSet<JobId> = self.jobs.keys().copied().collect();
        assert_eq!(engine_active, host_active, "{p}: active sets differ");
        assert_eq!(self.engine.live_job_count(), self.jobs.len(), "{p}: the engine holds only live jobs");
        for (id, job) in &self.jobs {
            let state = self.engine.job(*id).unwrap();
            for ph in Phase::ALL {
                let s = state.phase(ph);
                assert_eq!([s.pending, s.running, s.finished], job.counts[ph.idx()], "{p}: {id:?} {ph:?} counters");
            }
        }
        for entry in &self.engine.plan().entries {
            let status = self.engine.job(entry.job).map(|j| j.status);
            assert_eq!(status, Some(JobStatus::Active), "{p}: plan names {:?}, which is not active", entry.job);
        }
        let live: u32 = self.nodes.iter().filter(|n| n.alive).map(|n| n.capacity[0]).sum();
        assert_eq!(self.engine.cluster().map_slots, live, "{p}: cluster capacity");
    }

    /// Runs events without arrivals until every accepted job has finished.
    fn drain(&mut self) {
        let start = self.events;
        while !self.jobs.is_empty() || !self.tasks.is_empty() {
            self.step(false);
            if self.events - start > DRAIN_BOUND {
                let (id, job) = self.jobs.iter().next().unwrap();
                let state = self.engine.job(*id).unwrap();
                panic!(
                    "{}: job {id:?} starved for {DRAIN_BOUND} events: host {:?}, engine phases {:?}, plan {:?}",
                    self.policy,
                    job.counts,
                    state.phases,
                    self.engine.plan().entries.iter().find(|e| e.job == *id)
                );
            }
        }
        self.engine.tick(self.clock + 10_000_000);
        self.check();
        assert!(self.engine.active().is_empty(), "{}: active after drain", self.policy);
        assert!(self.engine.nodes().iter().all(|n| n.running == [0, 0]), "{}: running after drain", self.policy);
        assert!(self.engine.plan().entries.is_empty(), "{}: plan not empty after drain", self.policy);
    }

    /// Runs `events` events in arrival cycles, each followed by a drain. Returns the peak live heap
    /// of the first and of the last cycle.
    fn run(&mut self, events: u64) -> (usize, usize) {
        let target = self.events + events;
        let (mut first, mut last) = (None, 0);
        while self.events < target {
            heap();
            let cycle_start = self.submitted;
            while self.submitted - cycle_start < JOBS_PER_CYCLE as u64 && self.events < target {
                self.step(true);
            }
            self.drain();
            last = heap().1;
            first.get_or_insert(last);
        }
        (first.unwrap_or(last), last)
    }

    /// Nodes added so far (the engine keeps a record of each).
    fn nodes_added(&self) -> usize {
        self.nodes.len()
    }
}

const POLICIES: &[(&str, PoolMode)] = &[
    ("fifo", PoolMode::Split),
    ("fair", PoolMode::Shared),
    ("flex", PoolMode::Split),
    ("circumflex", PoolMode::Shared),
    ("asrpt", PoolMode::Split),
    ("rtmr", PoolMode::Split),
    ("deadline-constraint", PoolMode::Split),
    ("adaptive", PoolMode::Shared),
    ("ras", PoolMode::Shared),
    ("reverse-adaptive", PoolMode::Shared),
    ("flowflex", PoolMode::Split),
];

#[test]
fn engine_soak_keeps_invariants_and_memory_flat() {
    let events: u64 = std::env::var("SOAK_EVENTS").ok().and_then(|v| v.parse().ok()).unwrap_or(2_500);
    let seed: u64 = std::env::var("SOAK_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or(7);
    let check_every = if events > 100_000 { 64 } else { 1 };
    assert_eq!(POLICIES.len(), circumflex_policies::POLICY_NAMES.len(), "every policy is soaked");
    let only: Option<Vec<String>> =
        std::env::var("SOAK_POLICIES").ok().map(|v| v.split(',').map(|p| p.trim().to_string()).collect());
    let mut total_events = 0;
    for &(policy, mode) in POLICIES {
        if only.as_ref().is_some_and(|names| !names.iter().any(|n| n == policy)) {
            continue;
        }
        let mut host = Host::new(policy, mode, seed, check_every);
        // Warm-up: enough cycles to fill the engine's ring of recent jobs, so allocator pools, index
        // capacity and the ring are in place before measuring.
        while host.submitted < (circumflex_core::engine::RECENT_JOBS + JOBS_PER_CYCLE) as u64 {
            host.run(1_000);
        }
        let (heap_start, _) = heap();
        let (peak_rss_start, rss_start) = rss();
        let (jobs_start, nodes_start, events_start) = (host.submitted, host.nodes_added(), host.events);
        let started = std::time::Instant::now();
        let plans_start = host.engine.stats();
        let (peak_first, peak_last) = host.run(events);
        let plans = host.engine.stats();
        let (heap_end, _) = heap();
        let (peak_rss_end, rss_end) = rss();
        let jobs = host.submitted - jobs_start;
        let nodes_added = host.nodes_added() - nodes_start;
        total_events += host.events - events_start;
        println!(
            "soak {policy:>19} ({mode:?}): {} events, {jobs} jobs ({} rejected, {} finished in all), {} task \
             failures, {} node losses ({nodes_added} re-added), {:.1} s ({} plans, {:.0} ms planning); live heap drained start {:.1} KiB \
             end {:.1} KiB ({:+} B); peak live heap first cycle {:.1} KiB last cycle {:.1} KiB; peak RSS start \
             {:.1} MiB end {:.1} MiB; RSS {:.1} -> {:.1} MiB",
            host.events - events_start,
            host.rejected,
            host.finished,
            host.failures,
            host.node_losses,
            started.elapsed().as_secs_f64(),
            plans.plans - plans_start.plans,
            (plans.total_plan_ns - plans_start.total_plan_ns) as f64 / 1e6,
            heap_start as f64 / 1024.0,
            heap_end as f64 / 1024.0,
            heap_end as i64 - heap_start as i64,
            peak_first as f64 / 1024.0,
            peak_last as f64 / 1024.0,
            peak_rss_start as f64 / 1048576.0,
            peak_rss_end as f64 / 1048576.0,
            rss_start as f64 / 1048576.0,
            rss_end as f64 / 1048576.0,
        );
        assert!(host.finished + host.rejected == host.submitted, "{policy}: every job finished or was rejected");
        let bound = heap_start + HEAP_BOUND_BYTES + nodes_added * NODE_RECORD_BYTES;
        assert!(
            heap_end <= bound,
            "{policy}: live heap {heap_end} B after {jobs} jobs, above {bound} B ({heap_start} B at the start, \
             {nodes_added} nodes added): per-job state is not freed"
        );
    }
    println!("soak: {total_events} measured events in all");
}
