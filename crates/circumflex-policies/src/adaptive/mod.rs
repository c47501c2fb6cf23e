//! The Adaptive family of the multi-constraint thesis (Polo): completion-time goals,
//! resource-aware placement and co-located transactional load (digest `adaptive.md`).
//!
//! - [`policy`]: the Adaptive Scheduler of chapter 3 (`circumflex.policy = adaptive`).
//! - [`hardware`]: the accelerated pool (hardware affinity).
//! - [`ras`]: RAS and Reverse-Adaptive (chapters 4 and 5).
//!
//! The chapter reproductions are in the lab (`circumflex_sim::studies`).

pub mod hardware;
pub mod policy;
pub mod ras;
