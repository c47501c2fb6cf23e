//! Resource-aware Adaptive Scheduler (RAS, thesis chapter 4) and Reverse-Adaptive (chapter 5.3):
//! job slots sized from per-job resource profiles, utility-driven max-min placement, and
//! placement under a time-varying capacity left over by a co-located transactional workload.
//!
//! - [`resources`]: CPU/I-O/memory demands, node capacities, job profiles (Table 4.2).
//! - [`utility`]: the utility functions (Eqs. 5–7 and 13–15).
//! - [`placement`]: Algorithm 1 and the Task Scheduler.
//! - [`policy`]: the engine policies `ras` and `reverse-adaptive`.
//! - The resource-aware, time-stepped simulator the reproductions run on and the reproductions
//!   themselves (`circumflex reproduce ras-ch4`, `reverse-ch5`) are in the lab, `circumflex_sim::studies::ras`.
//! - [`reverse`]: the availability curve f(t) and reverse fitting (Algorithm 2) for `s_fit`.
//!
//! Design decisions are in each module's docs and in `docs/adaptive-ras.md`.
pub mod placement;
pub mod policy;
pub mod resources;
pub mod reverse;
pub mod utility;
