//! The Adaptive family of the multi-constraint thesis (Polo): completion-time goals,
//! resource-aware placement and co-located transactional load (digest `adaptive.md`).
//!
//! - [`scheduler`]: the Adaptive Scheduler of chapter 3 (`circumflex.policy = adaptive`).
pub mod ch3;
pub mod hardware;
pub mod ras;
pub mod scheduler;
