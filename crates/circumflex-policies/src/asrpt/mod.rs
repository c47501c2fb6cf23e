//! ASRPT and the efficiency-ratio paper (Zheng, Shroff, Sinha): flow-time scheduling aware of the
//! Map→Reduce dependency.
//!
//! - [`slot`]: the paper's discrete-slot model with ASRPT (preemptive and non-preemptive), the
//!   virtual SRPT lower bound, DSRPT, FIFO, Fair and LRPT, and a brute-force optimum for tiny
//!   instances.
//! - The reproduction of the paper's Section VII simulations (ratios to the SRPT bound, flow-time
//!   CDFs) is in the lab, `circumflex_sim::studies::asrpt`.
//! - [`policy`]: ASRPT as a live engine policy (`circumflex.policy = asrpt`).
pub mod policy;
pub mod slot;
