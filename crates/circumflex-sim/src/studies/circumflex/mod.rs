//! CIRCUMFLEX reproduction over the policies' planner (`circumflex_policies::circumflex`).
//!
//! - [`fluid`]: the fluid event-driven simulator of FLEX, CIRCUMFLEX and BATCH.
//! - [`study`]: the paper's 225-configuration study and its report (`circumflex reproduce circumflex`).

pub mod fluid;
pub mod study;
