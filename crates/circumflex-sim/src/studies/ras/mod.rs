//! RAS and Reverse-Adaptive reproductions (thesis chapters 4 and 5.3) over the policies' placement
//! code (`circumflex_policies::adaptive::ras`).
//!
//! - [`sim`]: the resource-aware, time-stepped simulator the reproductions run on.
//! - [`ch4`]: `circumflex reproduce ras-ch4` (Table 4.1, Figure 4.3).
//! - [`ch5`]: `circumflex reproduce reverse-ch5` (§5.3.5, Figures 5.20 and 5.21).

pub mod ch4;
pub mod ch5;
pub mod sim;
