//! ASRPT and the efficiency-ratio paper (Zheng, Shroff, Sinha): flow-time scheduling aware of the
//! Map→Reduce dependency.
//!
//! - [`slot`]: the paper's discrete-slot model with ASRPT (preemptive and non-preemptive), the
//!   virtual SRPT lower bound, DSRPT, FIFO, Fair and LRPT, and a brute-force optimum for tiny
//!   instances.
//! - [`study`]: the reproduction of the paper's Section VII simulations (ratios to the SRPT bound,
//!   flow-time CDFs) in both modes.
//! - [`policy`]: ASRPT as a live engine policy (`circumflex.policy = asrpt`).
pub mod policy;
pub mod slot;
pub mod study;
