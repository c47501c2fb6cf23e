//! The scheduling model shared by every policy, the engine, the simulator and the FFI.
//!
//! This module owns the vocabulary: time, identifiers, phases, job specifications (what a
//! submitter asks for) and job state (what the engine has observed). It does no IO and holds no
//! policy logic.
//!
//! Conventions:
//! - Time is an integer number of milliseconds ([`Time`]). Absolute times are milliseconds since
//!   an arbitrary epoch chosen by the host (Hadoop's wall clock, or 0 in the simulator).
//! - Work is measured in slot-milliseconds ([`Work`]): one slot busy for one millisecond.
//! - A *slot* is the unit of capacity. On MRv1 it is a TaskTracker map or reduce slot; on YARN it
//!   is one container of the configured slot size (see `ClusterConfig` in the engine).

use serde::{Deserialize, Serialize};

/// Milliseconds. Signed so that differences and lateness can be negative.
pub type Time = i64;

/// Slot-milliseconds of work.
pub type Work = f64;

/// Engine-assigned job identifier: dense, never reused within one engine instance.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct JobId(pub u32);

/// Engine-assigned node identifier: dense index, never reused within one engine instance.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct NodeId(pub u32);

/// The two phases of a MapReduce job.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Phase {
    /// Map tasks: independent, one per input split.
    Map = 0,
    /// Reduce tasks: runnable once enough maps have finished (slow start).
    Reduce = 1,
}

impl Phase {
    /// Both phases, map first.
    pub const ALL: [Phase; 2] = [Phase::Map, Phase::Reduce];

    /// Index into per-phase arrays.
    #[inline]
    pub fn idx(self) -> usize {
        self as usize
    }

    /// Decodes the integer used on the FFI boundary (0 = map, 1 = reduce).
    pub fn from_code(code: i32) -> Option<Phase> {
        match code {
            0 => Some(Phase::Map),
            1 => Some(Phase::Reduce),
            _ => None,
        }
    }
}

/// Locality of a task placement, from best to worst. Ordered so `a <= b` means "a is at least as local".
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Locality {
    /// The task's data is on this node.
    Node = 0,
    /// The task's data is on this node's rack.
    Rack = 1,
    /// Anywhere.
    Any = 2,
}

impl Locality {
    /// Integer code used on the FFI boundary.
    pub fn code(self) -> i32 {
        self as i32
    }
}

/// One step of an SLA: finishing after `deadline_ms` costs `penalty` (cumulative steps are
/// expressed by increasing penalties, as in the FLEX paper: the cost is the penalty of the last
/// missed step).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct SlaStep {
    /// Absolute pseudo-deadline.
    pub deadline_ms: Time,
    /// Penalty once this pseudo-deadline is missed. Steps must have increasing deadlines and
    /// non-decreasing penalties.
    pub penalty: f64,
}

/// Membership of a job in a flow (a DAG of jobs), as Pig, Hive and Oozie declare it through
/// `mapreduce.workflow.*` keys.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FlowMembership {
    /// `mapreduce.workflow.id`.
    pub flow_id: String,
    /// `mapreduce.workflow.node.name`.
    pub node_name: String,
    /// `mapreduce.workflow.adjacency.<node>` = successors, for every node of the flow the
    /// submitter knows about (not only this job). Lets the planner see jobs not yet submitted.
    #[serde(default)]
    pub adjacency: Vec<(String, Vec<String>)>,
}

/// Per-task resource profile, for resource-aware placement (RAS) and YARN container sizing.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ResourceProfile {
    /// Memory per task in MiB (0 = the cluster's slot size).
    #[serde(default)]
    pub memory_mb: u32,
    /// Virtual cores per task (0 = 1).
    #[serde(default)]
    pub vcores: u32,
    /// CPU demand as a fraction of one node's CPU per task (0 = unknown).
    #[serde(default)]
    pub cpu: f64,
    /// I/O demand as a fraction of one node's I/O bandwidth per task (0 = unknown).
    #[serde(default)]
    pub io: f64,
}

/// What is known about one phase when a job is submitted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PhaseSpec {
    /// Number of tasks in this phase.
    pub tasks: u32,
    /// Estimated duration of one task, if the submitter or a trace knows it. The engine refines
    /// it from observed task durations.
    #[serde(default)]
    pub task_ms: Option<Time>,
    /// Input bytes of the phase, if known (RTMR admission uses per-byte costs).
    #[serde(default)]
    pub input_bytes: Option<u64>,
}

/// A job as submitted: everything the host (Hadoop shim, trace reader, generator) knows up front.
///
/// All per-job settings come from here; see `crate::config::job_spec_from_conf` for the mapping
/// from `circumflex.job.*` keys. Constructed through serde (JSON on the FFI boundary) or directly.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JobSpec {
    /// The host's identifier (Hadoop application or job id, trace job id). Informational.
    #[serde(default)]
    pub external_id: String,
    /// Human-readable name.
    #[serde(default)]
    pub name: String,
    /// Submitting user.
    #[serde(default)]
    pub user: String,
    /// Submission (arrival) time, absolute.
    pub submit_ms: Time,
    /// Map phase.
    pub maps: PhaseSpec,
    /// Reduce phase.
    #[serde(default)]
    pub reduces: PhaseSpec,
    /// Relative importance; must be finite and > 0. Default 1.
    #[serde(default = "default_weight")]
    pub weight: f64,
    /// Hadoop priority (higher runs first under FIFO). Default 0.
    #[serde(default)]
    pub priority: i32,
    /// Absolute deadline, if any.
    #[serde(default)]
    pub deadline_ms: Option<Time>,
    /// SLA steps (absolute pseudo-deadlines), if any.
    #[serde(default)]
    pub sla: Vec<SlaStep>,
    /// Completion-time goal (absolute), for the Adaptive family.
    #[serde(default)]
    pub goal_ms: Option<Time>,
    /// Minimum slots the job is guaranteed when it has work (FLEX `m_j`). Default 0.
    #[serde(default)]
    pub min_slots: u32,
    /// Maximum slots the job may use (FLEX `M_j`). `None` = unbounded (the cluster).
    #[serde(default)]
    pub max_slots: Option<u32>,
    /// Dataset the map phase scans, for shared scans (CIRCUMFLEX).
    #[serde(default)]
    pub dataset: Option<String>,
    /// Flow membership, for FlowFlex.
    #[serde(default)]
    pub flow: Option<FlowMembership>,
    /// Per-task resource profile.
    #[serde(default)]
    pub resources: ResourceProfile,
    /// Fraction of maps that must finish before reduces become runnable (Hadoop's slow start).
    /// Default 1.0: reduces start after all maps, as every paper here assumes.
    #[serde(default = "default_slowstart")]
    pub reduce_slowstart: f64,
}

fn default_weight() -> f64 {
    1.0
}

fn default_slowstart() -> f64 {
    1.0
}

impl JobSpec {
    /// A minimal spec: `maps` map tasks and `reduces` reduce tasks submitted at `submit_ms`.
    pub fn new(submit_ms: Time, maps: u32, reduces: u32) -> JobSpec {
        JobSpec {
            external_id: String::new(),
            name: String::new(),
            user: String::new(),
            submit_ms,
            maps: PhaseSpec { tasks: maps, ..PhaseSpec::default() },
            reduces: PhaseSpec { tasks: reduces, ..PhaseSpec::default() },
            weight: 1.0,
            priority: 0,
            deadline_ms: None,
            sla: Vec::new(),
            goal_ms: None,
            min_slots: 0,
            max_slots: None,
            dataset: None,
            flow: None,
            resources: ResourceProfile::default(),
            reduce_slowstart: 1.0,
        }
    }

    /// Sets per-task duration estimates for both phases (builder style).
    pub fn with_task_ms(mut self, map_ms: Time, reduce_ms: Time) -> JobSpec {
        self.maps.task_ms = Some(map_ms);
        self.reduces.task_ms = Some(reduce_ms);
        self
    }

    /// The phase spec for `phase`.
    pub fn phase(&self, phase: Phase) -> &PhaseSpec {
        match phase {
            Phase::Map => &self.maps,
            Phase::Reduce => &self.reduces,
        }
    }

    /// Checks every field that can come from untrusted input. The error names the field, the
    /// value and what is allowed.
    pub fn validate(&self) -> Result<(), crate::error::Error> {
        use crate::error::Error;
        let bad = |field: &str, value: String, allowed: &str| {
            Err(Error::InvalidJob { field: field.to_string(), value, allowed: allowed.to_string() })
        };
        if !(self.weight.is_finite() && self.weight > 0.0 && self.weight <= MAX_WEIGHT) {
            return bad("weight", self.weight.to_string(), "a finite number > 0 and <= 1e12");
        }
        if !(0..=MAX_TIME).contains(&self.submit_ms) {
            return bad("submit_ms", self.submit_ms.to_string(), "a time in 0 ..= 2^50 ms");
        }
        for (field, text, limit) in [
            ("external_id", &self.external_id, MAX_TEXT_BYTES),
            ("name", &self.name, MAX_TEXT_BYTES),
            ("user", &self.user, MAX_TEXT_BYTES),
        ] {
            check_text(field, text, limit)?;
        }
        if let Some(dataset) = &self.dataset {
            if dataset.trim().is_empty() {
                return bad("dataset", dataset.clone(), "a non-empty dataset name (or unset)");
            }
            check_text("dataset", dataset, MAX_DATASET_BYTES)?;
        }
        if !(-MAX_PRIORITY..=MAX_PRIORITY).contains(&self.priority) {
            return bad("priority", self.priority.to_string(), "an integer in -1000000 ..= 1000000");
        }
        for (name, p) in [("maps", &self.maps), ("reduces", &self.reduces)] {
            if p.tasks > MAX_TASKS {
                return bad(&format!("{name}.tasks"), p.tasks.to_string(), "at most 10000000 tasks");
            }
            if let Some(ms) = p.task_ms {
                if !(0..=MAX_TASK_MS).contains(&ms) {
                    return bad(&format!("{name}.task_ms"), ms.to_string(), "0 ..= 31536000000 (one year)");
                }
            }
        }
        if self.maps.tasks == 0 && self.reduces.tasks == 0 {
            return bad("maps.tasks", "0".into(), "a job with at least one task");
        }
        if let Some(d) = self.deadline_ms {
            if d < self.submit_ms || d > MAX_TIME {
                return bad("deadline_ms", d.to_string(), "a deadline at or after submission and <= 2^50 ms");
            }
        }
        if let Some(g) = self.goal_ms {
            if g < self.submit_ms || g > MAX_TIME {
                return bad("goal_ms", g.to_string(), "a goal at or after submission and <= 2^50 ms");
            }
        }
        if self.sla.len() > MAX_SLA_STEPS {
            return bad("sla", format!("{} steps", self.sla.len()), "at most 1000 steps");
        }
        let mut last: Option<&SlaStep> = None;
        for step in &self.sla {
            if !(step.penalty.is_finite() && (0.0..=MAX_WEIGHT).contains(&step.penalty)) {
                return bad("sla.penalty", step.penalty.to_string(), "a finite number in 0 ..= 1e12");
            }
            if !(self.submit_ms..=MAX_TIME).contains(&step.deadline_ms) {
                return bad(
                    "sla.deadline_ms",
                    step.deadline_ms.to_string(),
                    "a time at or after submission, <= 2^50 ms",
                );
            }
            if let Some(prev) = last {
                if step.deadline_ms <= prev.deadline_ms || step.penalty < prev.penalty {
                    return bad(
                        "sla",
                        format!("{}:{} after {}:{}", step.deadline_ms, step.penalty, prev.deadline_ms, prev.penalty),
                        "steps with increasing deadlines and non-decreasing penalties",
                    );
                }
            }
            last = Some(step);
        }
        if self.min_slots > MAX_TASKS {
            return bad("min_slots", self.min_slots.to_string(), "at most 10000000");
        }
        if let Some(max) = self.max_slots {
            if max > MAX_TASKS {
                return bad("max_slots", max.to_string(), "at most 10000000 (or unset for no maximum)");
            }
            if max == 0 {
                return bad("max_slots", "0".into(), "at least 1 (or unset for no maximum)");
            }
            if self.min_slots > max {
                return bad("min_slots", self.min_slots.to_string(), &format!("at most max_slots ({max})"));
            }
        }
        if !(self.reduce_slowstart.is_finite() && (0.0..=1.0).contains(&self.reduce_slowstart)) {
            return bad("reduce_slowstart", self.reduce_slowstart.to_string(), "a fraction in [0, 1]");
        }
        for (field, v) in [("resources.cpu", self.resources.cpu), ("resources.io", self.resources.io)] {
            if !(v.is_finite() && (0.0..=MAX_RESOURCE_FRACTION).contains(&v)) {
                return bad(field, v.to_string(), "a finite number in 0 ..= 1000 (fractions of one node)");
            }
        }
        if let Some(flow) = &self.flow {
            flow.validate()?;
        }
        Ok(())
    }
}

/// Latest absolute time accepted anywhere (2^50 ms, about 35,700 years): far beyond any clock a
/// host uses, and small enough that sums of a few such times neither overflow an `i64` nor lose
/// precision as an `f64` (exact to 2^53). Hostile times beyond it are refused at the boundary.
pub const MAX_TIME: Time = 1 << 50;

/// Most tasks accepted in one phase of one job.
pub const MAX_TASKS: u32 = 10_000_000;

/// Largest job weight or SLA penalty accepted. Bounding them keeps weighted sums over every job
/// finite (weight x slot-ms x jobs stays far below `f64::MAX`), so no policy sees an infinity.
pub const MAX_WEIGHT: f64 = 1e12;

/// Priorities are bounded so that negating or differencing them can never overflow an `i32`.
pub const MAX_PRIORITY: i32 = 1_000_000;

/// Largest per-task CPU or I/O demand, in fractions of one node.
pub const MAX_RESOURCE_FRACTION: f64 = 1_000.0;

/// Longest job name, user, external id, flow id or flow node name, in bytes.
pub const MAX_TEXT_BYTES: usize = 4_096;

/// Longest dataset name in bytes. Derived datasets are the job's input paths joined by commas,
/// so a job reading many paths needs far more than a name does.
pub const MAX_DATASET_BYTES: usize = 1 << 20;

/// Most SLA steps on one job.
pub const MAX_SLA_STEPS: usize = 1_000;

/// Most nodes a flow's adjacency may name, and most edges it may hold.
pub const MAX_FLOW_NODES: usize = 10_000;
/// See [`MAX_FLOW_NODES`].
pub const MAX_FLOW_EDGES: usize = 100_000;

/// Refuses text longer than `limit` bytes or holding control characters (which would corrupt
/// logs and the web UI), naming the field. Readers of untrusted files use it too.
pub fn check_text(field: &str, text: &str, limit: usize) -> Result<(), crate::error::Error> {
    if text.len() > limit {
        let shown: String = text.chars().take(40).collect();
        return Err(crate::error::Error::job(
            field,
            format!("{shown}... ({} bytes)", text.len()),
            format!("at most {limit} bytes"),
        ));
    }
    if text.chars().any(char::is_control) {
        return Err(crate::error::Error::job(field, text.escape_debug(), "text without control characters"));
    }
    Ok(())
}

impl FlowMembership {
    /// Checks a flow declaration from untrusted input: non-empty ids, bounded size, no node named
    /// twice as a source, no self-loop and no cycle. Errors name the offending
    /// `mapreduce.workflow.*` key (the keys the declaration comes from), the value and what is allowed.
    ///
    /// Decision: successors that have no adjacency entry of their own are sinks, not errors: a
    /// submitter lists only the nodes with successors, and later jobs of the flow may not exist yet.
    pub fn validate(&self) -> Result<(), crate::error::Error> {
        use crate::error::Error;
        use std::collections::BTreeMap;
        const ID: &str = "mapreduce.workflow.id";
        const NODE: &str = "mapreduce.workflow.node.name";
        const ADJ: &str = "mapreduce.workflow.adjacency.";
        for (field, text) in [(ID, &self.flow_id), (NODE, &self.node_name)] {
            if text.trim().is_empty() {
                return Err(Error::job(field, text, "a non-empty name"));
            }
            check_text(field, text, MAX_TEXT_BYTES)?;
        }
        let mut edges = 0usize;
        for (from, successors) in &self.adjacency {
            let key = format!("{ADJ}{from}");
            if from.trim().is_empty() {
                return Err(Error::job(&key, successors.join(","), "a key mapreduce.workflow.adjacency.<node name>"));
            }
            check_text(&key, from, MAX_TEXT_BYTES)?;
            edges = edges.saturating_add(successors.len());
            if edges > MAX_FLOW_EDGES {
                return Err(Error::job(&key, format!("{edges} edges so far"), "at most 100000 edges in one flow"));
            }
            for s in successors {
                if s.trim().is_empty() {
                    return Err(Error::job(&key, successors.join(","), "comma-separated non-empty node names"));
                }
                check_text(&key, s, MAX_TEXT_BYTES)?;
                if s == from {
                    return Err(Error::job(
                        &key,
                        successors.join(","),
                        format!("successors other than '{from}' itself"),
                    ));
                }
            }
        }
        // Intern every node name (sources first) and build successor lists.
        let mut index: BTreeMap<&str, usize> = BTreeMap::new();
        let mut names: Vec<&str> = Vec::new();
        let mut succ: Vec<Vec<usize>> = Vec::new();
        let mut is_source: Vec<bool> = Vec::new();
        for (from, successors) in &self.adjacency {
            let f = *index.entry(from.as_str()).or_insert_with(|| {
                names.push(from.as_str());
                succ.push(Vec::new());
                is_source.push(false);
                names.len() - 1
            });
            if is_source[f] {
                return Err(Error::job(&format!("{ADJ}{from}"), successors.join(","), "one adjacency entry per node"));
            }
            is_source[f] = true;
            for s in successors {
                let t = *index.entry(s.as_str()).or_insert_with(|| {
                    names.push(s.as_str());
                    succ.push(Vec::new());
                    is_source.push(false);
                    names.len() - 1
                });
                succ[f].push(t);
            }
            if names.len() > MAX_FLOW_NODES {
                return Err(Error::job(
                    &format!("{ADJ}{from}"),
                    format!("{} nodes", names.len()),
                    "at most 10000 nodes",
                ));
            }
        }
        if let Some(cycle) = find_cycle(&succ) {
            let path: Vec<&str> = cycle.iter().map(|&i| names[i]).collect();
            let first = path.first().copied().unwrap_or_default();
            return Err(Error::job(
                &format!("{ADJ}{first}"),
                self.adjacency.iter().find(|(f, _)| f == first).map(|(_, s)| s.join(",")).unwrap_or_default(),
                format!("an acyclic flow (cycle: {} -> {first})", path.join(" -> ")),
            ));
        }
        Ok(())
    }
}

/// A cycle of the directed graph `succ` as a list of nodes (each followed by the next, the last
/// by the first), or `None` when the graph is acyclic. Iterative DFS, so deep chains cannot
/// overflow the stack.
fn find_cycle(succ: &[Vec<usize>]) -> Option<Vec<usize>> {
    const NEW: u8 = 0;
    const ON_PATH: u8 = 1;
    const DONE: u8 = 2;
    let mut state = vec![NEW; succ.len()];
    for root in 0..succ.len() {
        if state[root] != NEW {
            continue;
        }
        // Stack of (node, next successor position); it is exactly the current DFS path.
        let mut stack: Vec<(usize, usize)> = vec![(root, 0)];
        state[root] = ON_PATH;
        while let Some(top) = stack.last_mut() {
            let (node, pos) = *top;
            if let Some(&next) = succ[node].get(pos) {
                top.1 += 1;
                match state[next] {
                    NEW => {
                        state[next] = ON_PATH;
                        stack.push((next, 0));
                    }
                    ON_PATH => {
                        let start = stack.iter().position(|&(n, _)| n == next).unwrap_or(0);
                        return Some(stack[start..].iter().map(|&(n, _)| n).collect());
                    }
                    _ => {}
                }
            } else {
                state[node] = DONE;
                stack.pop();
            }
        }
    }
    None
}

/// Upper bound accepted for any single task duration: one year.
pub const MAX_TASK_MS: Time = 365 * 24 * 3600 * 1000;

/// Counters of one phase of a live job, maintained by the engine from host events.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PhaseState {
    /// Total tasks of the phase (may grow on YARN as the AM asks for more).
    pub total: u32,
    /// Tasks not yet started (on YARN: outstanding container requests of this phase).
    pub pending: u32,
    /// Tasks running now.
    pub running: u32,
    /// Tasks finished successfully.
    pub finished: u32,
    /// Sum of observed durations of finished tasks.
    pub observed_ms_sum: i64,
    /// Longest observed task duration.
    pub observed_ms_max: i64,
    /// Sum of the start times of the running tasks, so the total elapsed time of running tasks
    /// at `now` is `running * now - running_start_sum` without per-task state.
    #[serde(default)]
    pub running_start_sum: i64,
    /// Age floor of the estimate, ms (0 = none): while the phase has no submitted estimate and no
    /// finished task, twice the age its oldest running task reached at a plan (a running task's age is
    /// a lower bound on its duration). Raised by the engine at each plan
    /// ([`JobState::raise_age_floor`]), never lowered; see [`JobState::task_ms_estimate`].
    #[serde(default)]
    pub age_floor_ms: Time,
    /// The engine's prior for one task of this phase when nothing else is known (0 = none, then
    /// [`DEFAULT_TASK_MS`]): set at submission from the tasks of the jobs that ended before
    /// (`Engine::task_prior`); see [`JobState::task_ms_estimate`].
    #[serde(default)]
    pub prior_ms: Time,
}

impl PhaseState {
    /// Tasks not yet finished.
    pub fn remaining(&self) -> u32 {
        self.pending + self.running
    }

    /// What one task is assumed to take while nothing is known of this phase: the engine's prior at
    /// submission, else [`DEFAULT_TASK_MS`].
    pub fn default_ms(&self) -> Time {
        if self.prior_ms > 0 {
            self.prior_ms
        } else {
            DEFAULT_TASK_MS
        }
    }

    /// Total time the running tasks have been running at `now`.
    pub fn running_elapsed_ms(&self, now: Time) -> i64 {
        (self.running as i64).saturating_mul(now).saturating_sub(self.running_start_sum).max(0)
    }
}

/// Lifecycle of a job inside the engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum JobStatus {
    /// Accepted and not finished.
    Active,
    /// Refused by admission control; never scheduled.
    Rejected,
    /// All tasks done (or the host removed it).
    Finished,
}

/// Everything the engine knows about one job. Policies read it through the snapshot.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct JobState {
    /// Engine id.
    pub id: JobId,
    /// As submitted (validated).
    pub spec: JobSpec,
    /// Lifecycle.
    pub status: JobStatus,
    /// Per phase counters, indexed by [`Phase::idx`].
    pub phases: [PhaseState; 2],
    /// Time of the first task start, if any.
    pub started_ms: Option<Time>,
    /// Completion time, when finished.
    pub finished_ms: Option<Time>,
    /// Whether the host says the job can run reduces now. When `None` the engine derives it from
    /// `reduce_slowstart`.
    pub reduces_ready_override: Option<bool>,
    /// Finish time of every successful task per phase, in finish order; recorded only when the
    /// policy asks for it (`Policy::needs_task_finish_times`).
    #[serde(default, skip_serializing_if = "task_log_is_empty")]
    pub task_finish_ms: [Vec<Time>; 2],
    /// Map tasks per node pool (hardware affinity): index 0 regular nodes, 1 accelerated nodes.
    #[serde(default)]
    pub map_pools: MapPoolStats,
}

/// Map tasks of one job split by node pool, indexed by [`MapPoolStats::REGULAR`] and
/// [`MapPoolStats::ACCELERATED`]; kept by the engine for the Adaptive Scheduler's calibration.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MapPoolStats {
    /// Running map tasks per pool.
    pub running: [u32; 2],
    /// Successfully finished map tasks per pool.
    pub finished: [u32; 2],
    /// Summed durations of those finished maps per pool, ms.
    pub finished_ms_sum: [Time; 2],
}

impl MapPoolStats {
    /// Index of the regular pool.
    pub const REGULAR: usize = 0;
    /// Index of the accelerated pool.
    pub const ACCELERATED: usize = 1;

    /// Mean finished map length on `pool` in ms, if a map finished there.
    pub fn mean_ms(&self, pool: usize) -> Option<f64> {
        let n = *self.finished.get(pool)?;
        (n > 0).then(|| self.finished_ms_sum[pool] as f64 / n as f64)
    }
}

fn task_log_is_empty(log: &[Vec<Time>; 2]) -> bool {
    log[0].is_empty() && log[1].is_empty()
}

/// Default duration assumed for a task when nothing is known yet (no estimate, nothing observed).
pub const DEFAULT_TASK_MS: Time = 10_000;

impl JobState {
    /// Fresh state for a newly submitted job.
    pub fn new(id: JobId, spec: JobSpec) -> JobState {
        let phases = [
            PhaseState { total: spec.maps.tasks, pending: spec.maps.tasks, ..PhaseState::default() },
            PhaseState { total: spec.reduces.tasks, pending: spec.reduces.tasks, ..PhaseState::default() },
        ];
        JobState {
            id,
            spec,
            status: JobStatus::Active,
            phases,
            started_ms: None,
            finished_ms: None,
            reduces_ready_override: None,
            task_finish_ms: [Vec::new(), Vec::new()],
            map_pools: MapPoolStats::default(),
        }
    }

    /// Counters of `phase`.
    #[inline]
    pub fn phase(&self, phase: Phase) -> &PhaseState {
        &self.phases[phase.idx()]
    }

    /// Mutable counters of `phase`.
    #[inline]
    pub fn phase_mut(&mut self, phase: Phase) -> &mut PhaseState {
        &mut self.phases[phase.idx()]
    }

    /// Whether the job is accepted and unfinished.
    #[inline]
    pub fn is_active(&self) -> bool {
        self.status == JobStatus::Active
    }

    /// Whether reduce tasks may be launched now (slow start reached, or the host says so).
    pub fn reduces_ready(&self) -> bool {
        if let Some(ready) = self.reduces_ready_override {
            return ready;
        }
        let maps = &self.phases[0];
        if maps.total == 0 {
            return true;
        }
        (maps.finished as f64) >= self.spec.reduce_slowstart * maps.total as f64
    }

    /// Whether `phase` has a task that could start right now.
    #[inline]
    pub fn runnable(&self, phase: Phase) -> bool {
        self.is_active() && self.phase(phase).pending > 0 && (phase == Phase::Map || self.reduces_ready())
    }

    /// Estimated duration of one task of `phase`: the observed mean once a task has finished,
    /// else the submitted estimate, else the engine's prior ([`PhaseState::default_ms`]) raised to the
    /// phase's age floor ([`PhaseState::age_floor_ms`]).
    pub fn task_ms_estimate(&self, phase: Phase) -> Time {
        let p = self.phase(phase);
        if p.finished > 0 {
            return (p.observed_ms_sum / p.finished as i64).max(1);
        }
        match self.spec.phase(phase).task_ms {
            Some(ms) => ms.max(1),
            None => p.default_ms().max(p.age_floor_ms).max(1),
        }
    }

    /// Raises the age floor of `phase` to twice the age at `now` of its oldest running task, which
    /// started at `oldest_start`, when the estimate rests on [`DEFAULT_TASK_MS`] alone (no submitted
    /// estimate, no finished task). Returns whether [`JobState::task_ms_estimate`] changed.
    ///
    /// Why: a host that knows task counts only (a Gridmix or plain `job.xml`) would otherwise see
    /// 500 reduces of 35 minutes as 500 x 10 s until the first one ends, and so would every plan, the
    /// long-task reserve and the kill price. A running task's age is a lower bound on its own duration;
    /// doubling it is the standard guess for a size known only to exceed what has been seen (the
    /// expected total of a task observed at a uniformly random point of its life, and the estimate
    /// under which [`JobState::remaining_work`]'s "running tasks are half done" leaves the oldest task
    /// as long again as it has run). Why the oldest task rather than the mean age of all running ones:
    /// tasks of one phase are alike (the assumption every learned mean here makes), and for alike tasks
    /// of which none has ended the oldest age is all the evidence says (every duration exceeds it); the
    /// mean age mostly measures when slots happened to free, so a phase whose tasks start in a stream
    /// would be judged half as long. It stops counting at the first finished task, when the learned
    /// mean takes over, so a straggler among the first tasks misleads it only until a sibling ends.
    /// Never lowered: a task killed or failed does not undo what its age showed.
    pub fn raise_age_floor(&mut self, phase: Phase, oldest_start: Time, now: Time) -> bool {
        let submitted = self.spec.phase(phase).task_ms.is_some();
        let before = self.task_ms_estimate(phase);
        let p = self.phase_mut(phase);
        if submitted || p.finished > 0 || p.running == 0 {
            return false;
        }
        let floor = now.saturating_sub(oldest_start).clamp(0, MAX_TASK_MS / 2) * 2;
        if floor <= p.age_floor_ms {
            return false;
        }
        p.age_floor_ms = floor;
        self.task_ms_estimate(phase) != before
    }

    /// Remaining work of `phase` in slot-ms. Running tasks count as half done: the engine does
    /// not see task progress, and half is the unbiased guess for a task observed at a uniformly
    /// random point of its life.
    pub fn remaining_work(&self, phase: Phase) -> Work {
        let p = self.phase(phase);
        let t = self.task_ms_estimate(phase) as f64;
        p.pending as f64 * t + p.running as f64 * t * 0.5
    }

    /// Work of `phase` for this job run in isolation from start (used for stretch).
    pub fn total_work(&self, phase: Phase) -> Work {
        self.phase(phase).total as f64 * self.task_ms_estimate(phase) as f64
    }

    /// Slots the job occupies now, over both phases.
    #[inline]
    pub fn running_total(&self) -> u32 {
        self.phases[0].running + self.phases[1].running
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validate_names_the_bad_field() {
        let mut s = JobSpec::new(0, 2, 1);
        s.weight = f64::NAN;
        let err = s.validate().unwrap_err().to_string();
        assert!(err.contains("weight"), "{err}");
        assert!(err.contains("NaN"), "{err}");

        let mut s = JobSpec::new(100, 2, 1);
        s.deadline_ms = Some(50);
        assert!(s.validate().unwrap_err().to_string().contains("deadline_ms"));

        let mut s = JobSpec::new(0, 2, 1);
        s.min_slots = 5;
        s.max_slots = Some(3);
        assert!(s.validate().unwrap_err().to_string().contains("min_slots"));

        assert!(JobSpec::new(0, 0, 0).validate().is_err());
        assert!(JobSpec::new(0, 3, 0).validate().is_ok());
    }

    #[test]
    fn reduces_wait_for_slowstart() {
        let mut j = JobState::new(JobId(0), JobSpec::new(0, 4, 2));
        assert!(!j.reduces_ready());
        j.phases[0].finished = 4;
        j.phases[0].pending = 0;
        assert!(j.reduces_ready());
        j.spec.reduce_slowstart = 0.5;
        j.phases[0].finished = 2;
        assert!(j.reduces_ready());
    }

    #[test]
    fn estimates_prefer_observations() {
        let mut j = JobState::new(JobId(0), JobSpec::new(0, 4, 0).with_task_ms(1000, 0));
        assert_eq!(j.task_ms_estimate(Phase::Map), 1000);
        assert_eq!(j.remaining_work(Phase::Map), 4000.0);
        j.phases[0].pending = 2;
        j.phases[0].running = 1;
        j.phases[0].finished = 1;
        j.phases[0].observed_ms_sum = 3000;
        assert_eq!(j.task_ms_estimate(Phase::Map), 3000);
        assert_eq!(j.remaining_work(Phase::Map), 2.0 * 3000.0 + 1500.0);
    }

    /// A phase of `tasks` tasks with no submitted estimate, one of them running since `start`.
    fn one_running(tasks: u32, start: Time) -> JobState {
        let mut j = JobState::new(JobId(0), JobSpec::new(0, tasks, 0));
        j.phases[0].pending = tasks - 1;
        j.phases[0].running = 1;
        j.phases[0].running_start_sum = start;
        j
    }

    #[test]
    fn a_running_task_of_a_minute_makes_the_estimate_at_least_two() {
        let mut j = one_running(4, 0);
        assert_eq!(j.task_ms_estimate(Phase::Map), DEFAULT_TASK_MS);
        // Younger than half the default: the default stands and the plan need not hear of it.
        assert!(!j.raise_age_floor(Phase::Map, 0, 4_000));
        assert_eq!(j.task_ms_estimate(Phase::Map), DEFAULT_TASK_MS);
        assert!(j.raise_age_floor(Phase::Map, 0, 60_000));
        assert!(j.task_ms_estimate(Phase::Map) >= 120_000);
        assert_eq!(j.task_ms_estimate(Phase::Map), 120_000);
        // Three pending tasks of 120 s and the running one half done.
        assert_eq!(j.remaining_work(Phase::Map), 3.0 * 120_000.0 + 60_000.0);
        // An older observation never lowers it (a task killed and restarted is younger).
        assert!(!j.raise_age_floor(Phase::Map, 50_000, 61_000));
        assert_eq!(j.task_ms_estimate(Phase::Map), 120_000);
    }

    #[test]
    fn a_submitted_estimate_is_never_floored() {
        let mut j = one_running(4, 0);
        j.spec.maps.task_ms = Some(5_000);
        assert!(!j.raise_age_floor(Phase::Map, 0, 60_000));
        assert_eq!(j.phases[0].age_floor_ms, 0);
        assert_eq!(j.task_ms_estimate(Phase::Map), 5_000);
    }

    #[test]
    fn once_a_task_finished_the_learned_mean_rules() {
        let mut j = one_running(4, 0);
        assert!(j.raise_age_floor(Phase::Map, 0, 60_000));
        j.phases[0].pending = 1;
        j.phases[0].running = 2;
        j.phases[0].finished = 1;
        j.phases[0].observed_ms_sum = 30_000;
        assert_eq!(j.task_ms_estimate(Phase::Map), 30_000);
        assert!(!j.raise_age_floor(Phase::Map, 0, 100_000));
        assert_eq!(j.task_ms_estimate(Phase::Map), 30_000);
    }

    #[test]
    fn nothing_running_nothing_learned() {
        let mut j = JobState::new(JobId(0), JobSpec::new(0, 4, 2));
        assert!(!j.raise_age_floor(Phase::Reduce, 0, 60_000));
        assert_eq!(j.task_ms_estimate(Phase::Reduce), DEFAULT_TASK_MS);
        // Hostile clocks: a start in the future or a year-long age stay in range.
        let mut j = one_running(2, 0);
        assert!(!j.raise_age_floor(Phase::Map, 10_000, 0));
        assert!(j.raise_age_floor(Phase::Map, Time::MIN, MAX_TIME));
        assert_eq!(j.task_ms_estimate(Phase::Map), MAX_TASK_MS);
    }
}
