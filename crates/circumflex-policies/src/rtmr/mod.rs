//! Deadlines with guarantees: the RTMR real-time scheduler (admission control over slot-availability
//! vectors, EDF queue, reduce dispatcher, feedback controller) and the Kc–Anyanwu Deadline
//! Constraint baseline it improves on (digest `realtime.md`).
//!
//! - [`vectors`]: CalT and SATU, the vector algebra of the admission test.
//! - [`policy`]: `circumflex.policy = rtmr`.
//! - [`dc`]: `circumflex.policy = deadline-constraint`, the baseline.
//! - The reproduction of the paper's Workload I and II experiments is in the lab, `circumflex_sim::studies::rtmr`.
pub mod dc;
pub mod policy;
pub mod vectors;
