//! Circumflex core: what every scheduler instance needs, whatever its policy.
//!
//! The core knows no research policy by name: policies depend on it (`circumflex-policies`, whose
//! registry maps `circumflex.policy` names to constructors), and the native library
//! (`circumflex-ffi`) and the lab (`circumflex-sim`) sit on top. See `ARCHITECTURE.md` at the
//! repository root for the layers and invariants.
//!
//! Code map:
//! - [`model`]: time, ids, phases, job specs and job state.
//! - [`policy`]: the `Policy` trait (snapshot in, plan out) and plan vocabulary.
//! - [`baseline`]: FIFO and Fair.
//! - [`engine`]: per-instance state, events, epochs and the heartbeat assignment layer.
//! - [`config`]: `circumflex.*` keys, parsed and validated (policy keys are validated by the policy).
//! - [`error`]: typed errors whose messages name the bad key or field.
#![deny(missing_docs)]
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

pub mod baseline;
pub mod config;
pub mod engine;
pub mod error;
pub mod model;
pub mod policy;

pub use config::EngineConfig;
pub use engine::{Choice, Engine};
pub use error::{Error, Result};
pub use model::{JobId, JobSpec, JobState, Locality, NodeId, Phase, Time};
pub use policy::{Admission, Plan, Policy, Snapshot};
