//! Hardware affinity for the Adaptive Scheduler (thesis §3.4.3–3.4.4, digest §1.6): the accelerated
//! node pool's configuration, job calibration and classification by observed speedup, the slots an
//! accelerable job needs on the pool (Eq. 2), the overflow converted to regular slots (Eq. 3) and the
//! pool's load (Eq. 4).
//!
//! Configuration (read by both shims through the engine's parameters):
//! - `circumflex.adaptive.accelerated.hosts`: comma-separated host names of the accelerated pool
//!   (MRv1: TaskTracker hosts; YARN: NodeManager hosts). Blank entries are ignored; a name may not
//!   contain whitespace.
//! - `circumflex.adaptive.accelerated.label`: on YARN, a node label whose nodes join the pool too
//!   (validated, but not yet read by the YARN shim: see `docs/adaptive.md`).
//! - `circumflex.adaptive.speedup.threshold`: a job is accelerable when `µ_reg / µ_acc` exceeds it.
//!
//! Decisions where the thesis is silent (gap 9):
//! - **Threshold default 1.5**: the thesis gives none. Its accelerable examples gain 2.5x (Crypt) and
//!   25x (Montecarlo) and its regular example (WordCount, I/O-bound) about 1x; 1.5 separates them
//!   with room for noise in the calibration tasks.
//! - **Calibration**: until the job has a finished map on each pool it is [`Affinity::Calibrating`]
//!   and competes in the scheduler's "no completed task" class; a job with no accelerated code
//!   simply calibrates at about 1x and becomes regular.
//! - **Eq. 3** is clamped at 0: when the accelerated pool suffices, no regular slot is asked for.
//!   The thesis's example: pool of 10 slots, `µ_reg = 100`, `µ_acc = 50`, 15 accelerated slots needed
//!   gives 10 accelerated + (100/50)·(15−10) = 10 regular slots.
//!
//! Wiring: the engine marks nodes accelerated at `add_node` (host list) and keeps each job's maps per
//! pool (`JobState::map_pools`); the Adaptive policy divides the pool (`policy.rs` module docs) and
//! the plan carries `Plan::accelerated_targets`, which the engine's assignment layer honours.

use std::collections::BTreeSet;

use circumflex_core::config::{parse_f64, EngineConfig};
use circumflex_core::error::{Error, Result};

/// Key: accelerated host names (a core key: the engine marks the nodes, this module validates the list).
pub use circumflex_core::config::KEY_ACCELERATED_HOSTS;
/// Key: YARN node label of accelerated nodes.
pub const KEY_ACCELERATED_LABEL: &str = "circumflex.adaptive.accelerated.label";
/// Key: speedup threshold.
pub const KEY_SPEEDUP_THRESHOLD: &str = "circumflex.adaptive.speedup.threshold";
/// Default speedup threshold (see the module docs).
pub const DEFAULT_SPEEDUP_THRESHOLD: f64 = 1.5;

/// The accelerated pool's membership and the classification threshold.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HardwareConfig {
    /// Host names of accelerated nodes.
    pub hosts: BTreeSet<String>,
    /// YARN node label of accelerated nodes, if any.
    pub label: Option<String>,
    /// `µ_reg / µ_acc` above which a job is accelerable.
    pub speedup_threshold: f64,
}

impl HardwareConfig {
    /// Reads the `circumflex.adaptive.accelerated.*` and `speedup.threshold` keys.
    pub fn from_engine(cfg: &EngineConfig) -> Result<HardwareConfig> {
        let mut c = HardwareConfig { speedup_threshold: DEFAULT_SPEEDUP_THRESHOLD, ..HardwareConfig::default() };
        if let Some(v) = cfg.param(KEY_ACCELERATED_HOSTS) {
            for host in v.split(',').map(str::trim).filter(|h| !h.is_empty()) {
                if host.chars().any(char::is_whitespace) {
                    return Err(Error::config(KEY_ACCELERATED_HOSTS, v, "comma-separated host names"));
                }
                c.hosts.insert(host.to_string());
            }
        }
        if let Some(v) = cfg.param(KEY_ACCELERATED_LABEL) {
            let v = v.trim();
            if !v.is_empty() {
                c.label = Some(v.to_string());
            }
        }
        if let Some(v) = cfg.param(KEY_SPEEDUP_THRESHOLD) {
            c.speedup_threshold = parse_f64(KEY_SPEEDUP_THRESHOLD, v, 1.0, 1e6)?;
        }
        Ok(c)
    }

    /// Whether the node `host` (with YARN `labels`, empty on MRv1) belongs to the accelerated pool.
    pub fn is_accelerated(&self, host: &str, labels: &[&str]) -> bool {
        self.hosts.contains(host) || self.label.as_deref().is_some_and(|l| labels.contains(&l))
    }
}

/// Where a job prefers to run its maps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Affinity {
    /// Not yet a finished map on both pools.
    Calibrating,
    /// Speedup above the threshold: runs on the accelerated pool first.
    Accelerable,
    /// Runs on regular nodes first.
    Regular,
}

/// Classifies a job from its mean map length on each pool (`None` = no finished map there yet).
pub fn classify(mu_reg: Option<f64>, mu_acc: Option<f64>, threshold: f64) -> Affinity {
    match (mu_reg, mu_acc) {
        (Some(reg), Some(acc)) if acc > 0.0 && reg / acc > threshold => Affinity::Accelerable,
        (Some(_), Some(_)) => Affinity::Regular,
        _ => Affinity::Calibrating,
    }
}

/// Equation (3): regular slots that replace the accelerated demand the pool cannot hold, at the
/// observed speedup; 0 when `s_req_acc` fits in the pool's `acc_capacity` slots.
pub fn extra_regular_slots(mu_reg: f64, mu_acc: f64, s_req_acc: f64, acc_capacity: u32) -> f64 {
    if mu_acc <= 0.0 {
        return 0.0;
    }
    (mu_reg / mu_acc) * (s_req_acc - acc_capacity as f64).max(0.0)
}

/// Equation (4): the fraction of the accelerated pool a job needs (1 = the whole pool).
pub fn pool_load(s_req_acc: f64, acc_capacity: u32) -> f64 {
    if acc_capacity == 0 {
        return f64::INFINITY;
    }
    s_req_acc / acc_capacity as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::adaptive::policy::slots_required;
    use proptest::prelude::*;

    #[test]
    fn digest_example_5_accelerator_overflow() {
        // 10 accelerated slots, µ_reg = 100, µ_acc = 50: 15 needed gives 10 regular slots on top.
        assert_eq!(extra_regular_slots(100.0, 50.0, 15.0, 10), 10.0);
        assert_eq!(extra_regular_slots(100.0, 50.0, 8.0, 10), 0.0, "fits: accelerators only");
        assert_eq!(pool_load(5.0, 10), 0.5);
        // Eq. 2 is Eq. 1 over accelerated tasks only: 30 unstarted 50 s maps, 100 s left, none running.
        assert_eq!(slots_required(50.0, 0, 0.0, 30, 100.0), 15.0);
    }

    #[test]
    fn digest_example_6_classification() {
        assert_eq!(classify(Some(2500.0), Some(100.0), 1.5), Affinity::Accelerable, "Montecarlo 25x");
        assert_eq!(classify(Some(250.0), Some(100.0), 1.5), Affinity::Accelerable, "Crypt 2.5x");
        assert_eq!(classify(Some(93.0), Some(92.0), 1.5), Affinity::Regular, "WordCount ~1x");
        assert_eq!(classify(Some(93.0), None, 1.5), Affinity::Calibrating);
        assert_eq!(classify(None, Some(1.0), 1.5), Affinity::Calibrating);
    }

    #[test]
    fn configuration_keys() {
        let cfg = EngineConfig::from_pairs([
            (KEY_ACCELERATED_HOSTS, " cell01, cell02,,cell03 "),
            (KEY_ACCELERATED_LABEL, "accel"),
            (KEY_SPEEDUP_THRESHOLD, "2"),
        ])
        .unwrap();
        let hw = HardwareConfig::from_engine(&cfg).unwrap();
        assert_eq!(hw.hosts.len(), 3);
        assert!(hw.is_accelerated("cell02", &[]));
        assert!(hw.is_accelerated("node9", &["gpu", "accel"]));
        assert!(!hw.is_accelerated("node9", &["gpu"]));
        assert_eq!(hw.speedup_threshold, 2.0);
        let none = HardwareConfig::from_engine(&EngineConfig::default()).unwrap();
        assert!(none.hosts.is_empty() && none.label.is_none());
        assert_eq!(none.speedup_threshold, DEFAULT_SPEEDUP_THRESHOLD);
        let bad = EngineConfig::from_pairs([(KEY_SPEEDUP_THRESHOLD, "0.5")]).unwrap();
        let err = HardwareConfig::from_engine(&bad).unwrap_err().to_string();
        assert!(err.contains(KEY_SPEEDUP_THRESHOLD) && err.contains("0.5"), "{err}");
        let bad = EngineConfig::from_pairs([(KEY_ACCELERATED_HOSTS, "a b,c")]).unwrap();
        assert!(HardwareConfig::from_engine(&bad).unwrap_err().to_string().contains(KEY_ACCELERATED_HOSTS));
    }

    proptest! {
        #[test]
        fn overflow_is_monotone_and_zero_inside_the_pool(
            reg in 1.0f64..1000.0, acc in 1.0f64..1000.0, need in 0.0f64..200.0, cap in 0u32..100,
        ) {
            let x = extra_regular_slots(reg, acc, need, cap);
            prop_assert!(x >= 0.0);
            prop_assert_eq!(x == 0.0, need <= cap as f64);
            prop_assert!(extra_regular_slots(reg, acc, need + 1.0, cap) >= x);
        }
    }
}
