//! Circumflex policies: the research schedulers, each a pure `Policy` (snapshot in, plan out) over
//! the core's contract, and the registry that names them.
//!
//! Code map:
//! - [`registry`] (re-exported here as [`create`], [`new_engine`], [`POLICY_NAMES`]): `circumflex.policy`
//!   name → constructor; validates each policy's own keys once per create or refresh.
//! - [`flex`]: FLEX: the objective family, generalized Smith's rule, the backwards DP and ready-list
//!   malleable packing (reused by CIRCUMFLEX and FlowFlex), and the `flex` policy.
//! - [`circumflex`]: CIRCUMFLEX shared scans: cyclic piggybacking, subjob chains planned with the FLEX
//!   algorithms, the `circumflex` policy.
//! - [`flowflex`]: FlowFlex for flows (DAGs) of jobs: the flow model and lower bounds, Stage 1 pseudo-job
//!   chains, the deadline greedy, minimax bisection, McNaughton shape shifting, the `flowflex` policy.
//! - [`asrpt`]: ASRPT, its SRPT lower bound and the slot-model baselines (efficiency-ratio paper).
//! - [`rtmr`]: the RTMR deadline scheduler with admission control, and the Deadline Constraint baseline.
//! - [`adaptive`]: the Adaptive Scheduler family (completion-time goals), RAS and Reverse-Adaptive.
//!
//! FIFO and Fair live in the core (`circumflex_core::baseline`); the paper studies, simulators and
//! reports live in the lab (`circumflex-sim`).
#![deny(missing_docs)]
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

pub mod adaptive;
pub mod asrpt;
pub mod circumflex;
pub mod flex;
pub mod flowflex;
pub mod registry;
pub mod rtmr;

pub use registry::{create, new_engine, POLICY_NAMES};
