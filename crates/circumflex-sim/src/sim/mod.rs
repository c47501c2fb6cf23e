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
//! - [`report`]: JSON, CSV, the terminal table and SVG plots.
//!
//! **Determinism.** Time is integer milliseconds; events are ordered by time, then by kind (arrivals,
//! completions, epoch, heartbeats by node), then by the order in which they were scheduled; the one random generator ([`SimRng`], PCG-64) is
//! owned by the run and seeded from [`SimConfig::seed`], which every result records. A workload is
//! drawn from the same seed on a separate stream ([`workload_rng`]), so the workload does not change
//! when the simulator's own draws do. The same configuration and workload give byte-identical results.

pub mod metrics;
pub mod report;
pub mod simulator;
pub mod workload;

use serde::{Deserialize, Serialize};

use circumflex_core::config::EngineConfig;
use circumflex_core::error::{Error, Result};
use circumflex_core::model::Time;
use circumflex_core::policy::PoolMode;

pub use metrics::{JobRecord, Summary};
pub use simulator::{SimResult, Simulation, TaskRecord};
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
        }
    }
}

impl SimConfig {
    /// Checks the configuration (the policy itself is checked when the engine is built).
    pub fn validate(&self) -> Result<()> {
        self.cluster.validate()?;
        if !(1..=3_600_000).contains(&self.heartbeat_ms) {
            return Err(Error::config("heartbeat-ms", self.heartbeat_ms, "1 ..= 3600000"));
        }
        if !(1..=3_600_000).contains(&self.engine.epoch_ms) {
            return Err(Error::config(circumflex_core::config::KEY_EPOCH_MS, self.engine.epoch_ms, "1 ..= 3600000"));
        }
        if self.replicas > self.cluster.nodes {
            return Err(Error::config("replicas", self.replicas, format!("0 ..= nodes ({})", self.cluster.nodes)));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
