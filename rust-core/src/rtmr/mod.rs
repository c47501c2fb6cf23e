//! Deadlines with guarantees: the RTMR real-time scheduler (admission control over slot-availability
//! vectors, EDF queue, reduce dispatcher, feedback controller) and the Kc–Anyanwu Deadline
//! Constraint baseline it improves on (digest `realtime.md`).
//!
//! - [`vectors`]: CalT and SATU, the vector algebra of the admission test.
//! - [`policy`]: `circumflex.policy = rtmr`.
//! - [`dc`]: `circumflex.policy = deadline-constraint`, the baseline.
//! - [`study`]: the reproduction of the paper's Workload I and II experiments.
pub mod dc;
pub mod policy;
pub mod study;
pub mod vectors;
