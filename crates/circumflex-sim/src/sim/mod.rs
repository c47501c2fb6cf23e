//! The trace-driven, deterministic discrete-event simulator.
//!
//! It drives the same [`crate::Engine`] the Hadoop shims drive, with simulated events in their place:
//! job arrivals become [`crate::Engine::submit`], node heartbeats become [`crate::Engine::node_update`]
//! (and the returned choices become task launches reported with `task_started`), task completions become
//! `task_finished`, and an epoch timer calls `tick`. Every registered policy therefore runs unchanged,
//! through the same assignment layer as in Hadoop.
//!
//! - [`simulator`]: the event loop ([`Simulation`]).
//! - [`workload`]: jobs with true task durations, and the synthetic generators.
//! - [`metrics`]: per-job records, per-run summaries, isolated time (for stretch).
//! - [`bound`]: lower bounds on mean response time, mean stretch and max stretch (how far from optimal).
//! - [`drift`]: the committed results against the same commands run again (`make results-check`).
//! - [`orders`]: every static priority order of a small workload (how far ordering alone can go).
//! - [`sweep`]: the load sweep (policies × cluster sizes × pools × seeds, ratios to fair and to the bounds).
//! - [`report`]: JSON, CSV, the terminal table and SVG plots.
//!
//! **Determinism.** Time is integer milliseconds; events are ordered by time, then by kind (arrivals,
//! completions, epoch, heartbeats by node), then by the order in which they were scheduled; the one random generator ([`SimRng`], PCG-64) is
//! owned by the run and seeded from [`SimConfig::seed`], which every result records. A workload is
//! drawn from the same seed on a separate stream ([`workload_rng`]), so the workload does not change
//! when the simulator's own draws do. The same configuration and workload give byte-identical results.

pub mod bound;
pub mod drift;
pub mod metrics;
pub mod orders;
pub mod report;
pub mod simulator;
pub mod sweep;
pub mod workload;

use serde::{Deserialize, Serialize};

use circumflex_core::config::EngineConfig;
use circumflex_core::error::{Error, Result};
use circumflex_core::model::Time;
use circumflex_core::policy::PoolMode;

pub use metrics::{JobRecord, Summary};
pub use simulator::{Progress, SimResult, Simulation, TaskRecord};
pub use workload::{SimJob, SyntheticSpec, Workload};

/// The simulation's random generator: PCG-64 (`pcg64`), whose output stream is specified and portable.
pub type SimRng = rand_pcg::Pcg64;

/// PCG stream of the simulator's own draws (replica placement).
const SIM_STREAM: u128 = 0x5349_4d55_4c41_5445; // "SIMULATE"
/// PCG stream of workload generation.
const WORKLOAD_STREAM: u128 = 0x574f_524b_4c4f_4144; // "WORKLOAD"

/// The generator a run with `seed` draws its own decisions from.
pub fn sim_rng(seed: u64) -> SimRng {
    SimRng::new(seed as u128, SIM_STREAM)
}

/// The generator synthetic workloads for `seed` are drawn from.
pub fn workload_rng(seed: u64) -> SimRng {
    SimRng::new(seed as u128, WORKLOAD_STREAM)
}

/// The simulated cluster: identical nodes spread evenly over racks.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClusterSpec {
    /// Worker nodes.
    pub nodes: u32,
    /// Map slots per node (MRv1 `mapred.tasktracker.map.tasks.maximum`).
    pub map_slots: u32,
    /// Reduce slots per node (MRv1 `mapred.tasktracker.reduce.tasks.maximum`).
    pub reduce_slots: u32,
    /// Racks; node `i` sits in rack `i * racks / nodes`.
    pub racks: u32,
    /// `split`: separate map and reduce slots (MRv1); `shared`: one pool of `map_slots + reduce_slots`
    /// per node for both phases (YARN containers).
    pub pool: PoolMode,
}

impl Default for ClusterSpec {
    /// 50 nodes with 4 map and 2 reduce slots each, 2 racks, split pools (an MRv1 cluster).
    fn default() -> Self {
        ClusterSpec { nodes: 50, map_slots: 4, reduce_slots: 2, racks: 2, pool: PoolMode::Split }
    }
}

impl ClusterSpec {
    /// Checks that every phase has somewhere to run.
    pub fn validate(&self) -> Result<()> {
        if self.nodes == 0 || self.nodes > 1_000_000 {
            return Err(Error::config("nodes", self.nodes, "1 ..= 1000000"));
        }
        if self.racks == 0 || self.racks > self.nodes {
            return Err(Error::config("racks", self.racks, format!("1 ..= nodes ({})", self.nodes)));
        }
        match self.pool {
            PoolMode::Split if self.map_slots == 0 || self.reduce_slots == 0 => Err(Error::config(
                "map-slots/reduce-slots",
                format!("{}/{}", self.map_slots, self.reduce_slots),
                "at least 1 of each per node with split pools",
            )),
            PoolMode::Shared if self.map_slots + self.reduce_slots == 0 => {
                Err(Error::config("map-slots/reduce-slots", "0/0", "at least 1 slot per node"))
            }
            _ if self.map_slots > 10_000 || self.reduce_slots > 10_000 => Err(Error::config(
                "map-slots/reduce-slots",
                format!("{}/{}", self.map_slots, self.reduce_slots),
                "at most 10000 per node",
            )),
            _ => Ok(()),
        }
    }

    /// Slots one job could use per phase if it had the cluster alone: `[map, reduce]`.
    pub fn phase_capacity(&self) -> [u32; 2] {
        match self.pool {
            PoolMode::Split => [self.nodes * self.map_slots, self.nodes * self.reduce_slots],
            PoolMode::Shared => {
                let all = self.nodes * (self.map_slots + self.reduce_slots);
                [all, all]
            }
        }
    }

    /// Total slots (both pools).
    pub fn total_slots(&self) -> u64 {
        self.nodes as u64 * (self.map_slots + self.reduce_slots) as u64
    }

    /// Slots of one node as the engine takes them: `[map, reduce]`, or `[all, 0]` when shared.
    pub fn node_capacity(&self) -> [u32; 2] {
        match self.pool {
            PoolMode::Split => [self.map_slots, self.reduce_slots],
            PoolMode::Shared => [self.map_slots + self.reduce_slots, 0],
        }
    }
}

/// Everything that defines one simulation run besides the workload.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SimConfig {
    /// The cluster. Its `pool` overrides `engine.pool_mode`.
    pub cluster: ClusterSpec,
    /// The engine's configuration: policy, objective, epoch, locality delays, policy parameters.
    pub engine: EngineConfig,
    /// Interval between two heartbeats of one node (MRv1's minimum is 3 s; YARN's NodeManager 1 s).
    pub heartbeat_ms: Time,
    /// Send a heartbeat at once when a task finishes (`mapreduce.tasktracker.outofband.heartbeat`), so a
    /// freed slot is offered without waiting for the next periodic heartbeat.
    pub out_of_band_heartbeat: bool,
    /// Locality model: each map task's input has this many replicas on distinct random nodes; `0` turns
    /// the model off (every map counts as node-local).
    pub replicas: u32,
    /// Seed of the run's one random generator (and of synthetic workloads).
    pub seed: u64,
    /// Keep one record per task in the result (tests and small runs; off by default).
    pub record_tasks: bool,
    /// Send every periodic heartbeat, even those that cannot launch anything (slow). Off by default:
    /// skipping them changes no outcome, which a property test checks with this switch.
    #[serde(default)]
    pub idle_heartbeats: bool,
    /// YARN's container mechanics (AM containers, AM start-up, container launch): off by default, and
    /// then not serialized, so every result written before it existed reads and compares the same.
    #[serde(default, skip_serializing_if = "YarnModel::is_off")]
    pub yarn: YarnModel,
}

/// When a preemption kill frees the victim's slot, as the host the pool mode stands for carries it out
/// (`docs/simulator.md`, "Preemption"; the shims: `docs/preemption.md`, "Grace period"). It is a property
/// of the host model, chosen by the pool mode ([`SimConfig::kill_timing`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KillTiming {
    /// YARN (the shared pool): the shim puts the victim's containers in a preemption contract and kills
    /// them `circumflex.preemption.grace.ms` after the decision (the stock MapReduce AM ignores the
    /// contract, so the task runs on until then), unless the task ended first.
    Grace,
    /// MRv1 (the split pool): the shim calls `killTask(attempt, false)` at once, the JobTracker hands
    /// the kill action to the victim's tracker with its next heartbeat after the decision, and the
    /// tracker reports the KILLED attempt, with the free slot, at the heartbeat after that. The kill
    /// lands at the victim node's second periodic heartbeat after the decision (3-6 s with 3 s
    /// heartbeats), unless the task ended first; the grace period does not apply.
    TrackerHeartbeats,
}

/// How AM containers start when the engine's AM gate is off (with the gate on, the engine decides).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AmOrder {
    /// Every waiting AM before any task, in arrival order: the Circumflex YARN shim without the gate,
    /// and the FairScheduler (an application without its AM has the smallest share).
    #[default]
    Eager,
    /// AMs get what the tasks of the jobs before them leave, in arrival order: the CapacityScheduler's
    /// FIFO queue, where an AM request waits behind every earlier application's asks.
    Queue,
}

/// YARN's container mechanics as the simulator models them (`docs/simulator.md`, "YARN mechanics").
/// With `am_slots > 0` every job first needs an AM container of that many slots, held on its node for
/// the job's whole life; its tasks become known and runnable `am_startup_ms` after the AM container
/// starts (the shim then learns the job's asks), as on YARN. Each task container holds its slot for
/// `launch_ms` before its work starts (container launch and JVM start-up).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct YarnModel {
    /// Slots of one AM container; 0: no AM containers.
    pub am_slots: u32,
    /// From an AM container's start to its first ask, ms.
    pub am_startup_ms: Time,
    /// From a task container's launch to the start of its work, ms.
    pub launch_ms: Time,
    /// How AMs start while the engine's AM gate is off.
    #[serde(default)]
    pub am_order: AmOrder,
    /// Start-up contention (`docs/simulator.md`, "Start-up contention"): cores of one host, shared by
    /// the container start-ups (AM start-ups and task launches) that overlap on it; 0 (the default):
    /// off, every start-up takes its fixed delay.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub host_cores: u32,
    /// Start-up contention: consecutive nodes per host (0 or 1: one node per host). The mini cluster's
    /// NodeManagers all share one host.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub nodes_per_host: u32,
}

/// Whether `v` is zero (serde's `skip_serializing_if` for counters and options that are absent
/// from files while 0, so files written before they existed read and compare the same).
pub(crate) fn is_zero<T: Default + PartialEq>(v: &T) -> bool {
    *v == T::default()
}

impl YarnModel {
    /// Whether nothing of YARN's mechanics is modelled.
    pub fn is_off(&self) -> bool {
        self.am_slots == 0 && self.launch_ms == 0
    }
}

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig {
            cluster: ClusterSpec::default(),
            engine: EngineConfig::default(),
            heartbeat_ms: 3_000,
            out_of_band_heartbeat: false,
            replicas: 3,
            seed: 1,
            record_tasks: false,
            idle_heartbeats: false,
            yarn: YarnModel::default(),
        }
    }
}

impl SimConfig {
    /// How a preemption kill lands on this host: [`KillTiming::TrackerHeartbeats`] for the split pool
    /// (MRv1's slots), [`KillTiming::Grace`] for the shared pool (YARN's containers).
    pub fn kill_timing(&self) -> KillTiming {
        match self.cluster.pool {
            PoolMode::Split => KillTiming::TrackerHeartbeats,
            PoolMode::Shared => KillTiming::Grace,
        }
    }

    /// Checks the configuration (the policy itself is checked when the engine is built).
    pub fn validate(&self) -> Result<()> {
        self.cluster.validate()?;
        if !(1..=3_600_000).contains(&self.heartbeat_ms) {
            return Err(Error::config("heartbeat-ms", self.heartbeat_ms, "1 ..= 3600000"));
        }
        if !(1..=3_600_000).contains(&self.engine.epoch_ms) {
            return Err(Error::config(circumflex_core::config::KEY_EPOCH_MS, self.engine.epoch_ms, "1 ..= 3600000"));
        }
        let y = &self.yarn;
        if y.am_startup_ms < 0 || y.launch_ms < 0 || y.am_startup_ms > 3_600_000 || y.launch_ms > 3_600_000 {
            return Err(Error::config(
                "am-startup-ms / launch-ms",
                format!("{} / {}", y.am_startup_ms, y.launch_ms),
                "0 ..= 3600000",
            ));
        }
        if y.host_cores > 4096 || y.nodes_per_host > 1_000_000 {
            return Err(Error::config(
                "host-cores / nodes-per-host",
                format!("{} / {}", y.host_cores, y.nodes_per_host),
                "0 ..= 4096 / 0 ..= 1000000",
            ));
        }
        let node_slots = self.cluster.node_capacity()[0];
        if y.am_slots > 0 && (self.cluster.pool != PoolMode::Shared || y.am_slots >= node_slots) {
            return Err(Error::config(
                "am-slots",
                y.am_slots,
                format!("AM containers in a shared pool only, smaller than a node ({node_slots} slots)"),
            ));
        }
        if self.engine.am.enabled && y.am_slots == 0 {
            return Err(Error::config(
                circumflex_core::config::KEY_AM_ADMISSION,
                "true",
                "the simulator's AM containers (am-slots > 0) for the gate to admit",
            ));
        }
        if self.replicas > self.cluster.nodes {
            return Err(Error::config("replicas", self.replicas, format!("0 ..= nodes ({})", self.cluster.nodes)));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod yarn_tests;
