//! Circumflex: scheduling optimizers for Hadoop.
//!
//! The crate holds all optimization logic of the Circumflex scheduler. Hadoop daemons reach it
//! through a thin Java shim over JNI; C reaches it through a C ABI; the simulator and the CLI use
//! it directly. See `ARCHITECTURE.md` at the repository root for the layers and invariants.
//!
//! Code map:
//! - [`model`]: time, ids, phases, job specs and job state.
//! - [`policy`]: the `Policy` trait (snapshot in, plan out) and plan vocabulary.
//! - [`policies`]: the registry and every policy (FIFO, Fair, ...).
//! - [`engine`]: per-instance state, events, epochs and the heartbeat assignment layer.
//! - [`config`]: `circumflex.*` keys, parsed and validated.
//! - [`error`]: typed errors whose messages name the bad key or field.
//! - [`asrpt`]: ASRPT, its SRPT lower bound and the slot-model baselines (efficiency-ratio paper).
//! - [`adaptive`]: the Adaptive Scheduler family (completion-time goals).
//! - [`rtmr`]: the RTMR deadline scheduler with admission control, and the Deadline Constraint baseline.
//! - [`flex`]: FLEX: the objective family, generalized Smith's rule, the backwards DP and ready-list
//!   malleable packing (reused by CIRCUMFLEX and FlowFlex), and the `flex` policy.
//! - [`flowflex`]: FlowFlex for flows (DAGs) of jobs: the flow model and lower bounds, Stage 1 pseudo-job
//!   chains, the deadline greedy, minimax bisection and McNaughton shape shifting (no policy yet).
//! - [`circumflex`]: CIRCUMFLEX shared scans: cyclic piggybacking, subjob chains planned with the FLEX
//!   algorithms, the fluid FLEX/CIRCUMFLEX/BATCH simulator and the paper's study.
//! - [`output`]: report folders (create, write named files, IO errors naming the path).
//! - [`plot`]: dependency-free, deterministic SVG line and bar charts for reports.
//! - [`sim`]: the deterministic discrete-event simulator driving the [`Engine`], workload generators,
//!   metrics and reports.
//! - [`trace`]: SWIM TSV and Rumen JSON readers producing simulator workloads.
//! - [`ffi`]: the JNI exports and the C ABI over the engine (handles, error mapping, panics).
//! - [`fuzzing`]: one fuzz entry point per untrusted-input boundary (cargo-fuzz targets and the short fuzz test).
#![deny(missing_docs)]
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

pub mod adaptive;
pub mod asrpt;
pub mod circumflex;
pub mod config;
pub mod engine;
pub mod error;
pub mod ffi;
pub mod flex;
pub mod flowflex;
pub mod fuzzing;
pub mod gridmix;
pub mod model;
pub mod output;
pub mod plot;
pub mod policies;
pub mod policy;
pub mod rtmr;
pub mod sim;
pub mod trace;

pub use config::EngineConfig;
pub use engine::{Choice, Engine};
pub use error::{Error, Result};
pub use model::{JobId, JobSpec, JobState, Locality, NodeId, Phase, Time};
pub use policy::{Admission, Plan, Policy, Snapshot};
