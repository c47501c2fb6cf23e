//! The paper reproductions: one module per paper (or thesis chapter), each a `circumflex reproduce`
//! subcommand that writes a report folder under `results/`. The algorithms they measure live in
//! `circumflex-policies`; what lives here is what only a study needs (fluid and resource-aware
//! simulators, workload generators of the papers, tables, plots and prose).
//!
//! - [`asrpt`]: the efficiency-ratio paper's Section VII (`reproduce asrpt`).
//! - [`rtmr`]: RTMR's Workload I and II (`reproduce rtmr`).
//! - [`adaptive_ch3`]: the Adaptive Scheduler, thesis chapter 3 (`reproduce adaptive-ch3`).
//! - [`ras`]: RAS and Reverse-Adaptive, chapters 4 and 5 (`reproduce ras-ch4`, `reverse-ch5`).
//! - [`circumflex`]: CIRCUMFLEX's fluid simulator and 225-configuration study (`reproduce circumflex`).
//! - [`flowflex`]: FlowFlex's §4 study (`reproduce flowflex`).

pub mod adaptive_ch3;
pub mod asrpt;
pub mod circumflex;
pub mod flowflex;
pub mod ras;
pub mod rtmr;
