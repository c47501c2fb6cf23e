//! ASRPT and the efficiency-ratio paper (Zheng, Shroff, Sinha): flow-time scheduling aware of the
//! Map→Reduce dependency.
//!
//! - [`slot`]: the paper's discrete-slot model with ASRPT (preemptive and non-preemptive), the
//!   virtual SRPT lower bound, DSRPT, FIFO, Fair and LRPT, and a brute-force optimum for tiny
//!   instances; this is what the reproduction study runs.
pub mod slot;
