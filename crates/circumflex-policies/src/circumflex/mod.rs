//! CIRCUMFLEX: shared scans by cyclic piggybacking plus chain-precedence scheduling (Wolf et al.,
//! IBM Research Report; digest `algorithms/circumflex.md`).
//!
//! What this module owns:
//! - [`scan`]: the piggybacking state, per-(job, block) bits ([`scan::BlockScan`]) and the fluid
//!   `f = 1` shortcut ([`scan::FluidScan`]); the subjob decomposition and bounds; Venn regions and
//!   their precedence for semi-shared scans.
//! - [`plan`]: the planner. Subjob chains per dataset are ordered by the generic FLEX algorithms
//!   ([`crate::flex::smith::generalized_smith`] for linear minisum objectives,
//!   [`crate::flex::dp`] with chain precedence for minimax ones) and packed by
//!   [`crate::flex::packing::pack_with_precedence`]; semi-shared regions are planned minimax-only.
//! - [`policy`]: the `circumflex` engine policy (chains by `JobSpec.dataset`, first interval
//!   enforced).
//! - The fluid event-driven simulator of FLEX, CIRCUMFLEX and BATCH and the paper's
//!   225-configuration study (`circumflex reproduce circumflex`) are in the lab,
//!   `circumflex_sim::studies::circumflex`.
//!
//! Decisions where the paper is silent are documented in each submodule (digest §7): subjob
//! weight/penalty = those of the job the subjob completes; subjob bounds = max of minima, min of
//! maxima, `m` clamped to `M`; interim durations `work / S` from now; BATCH windows offset by
//! `i·W/D`; and the study's calibration (`M_j = 5`).

pub mod plan;
pub mod policy;
pub mod scan;
