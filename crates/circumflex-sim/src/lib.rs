//! The Circumflex lab: everything that runs outside a Hadoop daemon.
//!
//! It drives the very same engine and policies the daemons load (`circumflex-core`,
//! `circumflex-policies`) with simulated heartbeats, reads traces, reproduces the papers, writes
//! reports and plots, and is the `circumflex` CLI. Nothing here is linked into the native library
//! (`circumflex-ffi`); `rand*`, `clap` and `indicatif` are dependencies of this crate only.
//!
//! Code map:
//! - [`sim`]: the deterministic discrete-event simulator driving the engine, workload generators,
//!   metrics and reports.
//! - [`trace`]: SWIM TSV and Rumen JSON readers producing simulator workloads.
//! - [`studies`]: one reproduction per paper (`circumflex reproduce <paper>`).
//! - [`gridmix`]: SWIM window → Rumen trace for Gridmix, the Gridmix report and RM-log timelines.
//! - [`output`]: report folders (create, write named files, IO errors naming the path).
//! - [`plot`]: dependency-free, deterministic SVG line and bar charts for reports.
//! - [`stats`]: mean, standard deviations, spread and the Student t interval every study and report uses.
//! - [`fuzzing`]: one fuzz entry point per untrusted-input boundary (cargo-fuzz targets and the short
//!   fuzz test); the `ffi_events` one drives the native library's handle API.
//! - `src/bin/circumflex.rs`: the CLI (`simulate`, `compare`, `reproduce <paper>`, Gridmix tools).
#![deny(missing_docs)]
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

pub mod fuzzing;
pub mod gridmix;
pub mod output;
pub mod plot;
pub mod sim;
pub mod stats;
pub mod studies;
pub mod trace;
