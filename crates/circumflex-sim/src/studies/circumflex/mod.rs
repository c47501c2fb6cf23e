//! CIRCUMFLEX reproduction over the policies' planner (`circumflex_policies::circumflex`).
//!
//! - [`fluid`]: the fluid event-driven simulator of FLEX, CIRCUMFLEX and BATCH.
//! - [`study`]: the paper's 225-configuration study and its report (`circumflex reproduce circumflex`).
//! - [`bench`]: the shared-scan benchmark's arrivals in the fluid simulator (`circumflex scan-fluid`).

pub mod bench;
pub mod fluid;
pub mod study;
