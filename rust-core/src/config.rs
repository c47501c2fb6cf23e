//! Scheduler configuration: the `circumflex.*` keys of `yarn-site.xml` / `mapred-site.xml`.
//!
//! The host passes every `circumflex.*` key it finds as strings; [`EngineConfig::from_pairs`]
//! parses and validates them, and the error names the key, the value and what is allowed, so a
//! bad configuration fails daemon start-up with a message an operator can act on.
//! Keys the engine does not know are kept in [`EngineConfig::params`] for the policy, which
//! validates its own (`circumflex.<policy>.*`, `circumflex.objective`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::model::Time;
use crate::policy::PoolMode;

/// `circumflex.policy`: the policy name (see `policies::POLICY_NAMES`).
pub const KEY_POLICY: &str = "circumflex.policy";
/// `circumflex.objective`: the metric the policy optimizes (policy-specific; FLEX family).
pub const KEY_OBJECTIVE: &str = "circumflex.objective";
/// `circumflex.epoch.ms`: how often the plan is recomputed, in ms.
pub const KEY_EPOCH_MS: &str = "circumflex.epoch.ms";
/// `circumflex.pool.mode`: `split` (MRv1 map and reduce slots) or `shared` (YARN containers).
pub const KEY_POOL_MODE: &str = "circumflex.pool.mode";
/// `circumflex.replan.on.events`: re-plan at once on job arrival and departure (default true).
pub const KEY_REPLAN_ON_EVENTS: &str = "circumflex.replan.on.events";
/// `circumflex.locality.node.delay`: scheduling opportunities a job may skip waiting for a
/// node-local slot (delay scheduling).
pub const KEY_NODE_DELAY: &str = "circumflex.locality.node.delay";
/// `circumflex.locality.rack.delay`: further opportunities it may skip waiting for rack-local.
pub const KEY_RACK_DELAY: &str = "circumflex.locality.rack.delay";

/// Validated engine configuration.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EngineConfig {
    /// Policy name.
    pub policy: String,
    /// Objective name, if set (the policy decides whether it needs one).
    pub objective: Option<String>,
    /// Epoch length.
    pub epoch_ms: Time,
    /// Slot pooling.
    pub pool_mode: PoolMode,
    /// Re-plan on arrivals and departures as well as on epochs.
    pub replan_on_events: bool,
    /// Delay scheduling: skips allowed before accepting rack-local.
    pub node_locality_delay: u32,
    /// Delay scheduling: further skips before accepting off-rack.
    pub rack_locality_delay: u32,
    /// Every other `circumflex.*` key, for the policy.
    pub params: BTreeMap<String, String>,
}

impl Default for EngineConfig {
    fn default() -> Self {
        EngineConfig {
            policy: "fifo".into(),
            objective: None,
            epoch_ms: 2_000,
            pool_mode: PoolMode::Shared,
            replan_on_events: true,
            node_locality_delay: 3,
            rack_locality_delay: 3,
            params: BTreeMap::new(),
        }
    }
}

/// Parses an integer key within `[lo, hi]`.
pub fn parse_int<T>(key: &str, value: &str, lo: T, hi: T) -> Result<T>
where
    T: std::str::FromStr + PartialOrd + std::fmt::Display + Copy,
{
    let allowed = || format!("an integer in [{lo}, {hi}]");
    let v: T = value.trim().parse().map_err(|_| Error::config(key, value, allowed()))?;
    if v < lo || v > hi {
        return Err(Error::config(key, value, allowed()));
    }
    Ok(v)
}

/// Parses a boolean key (`true`/`false`, case-insensitive).
pub fn parse_bool(key: &str, value: &str) -> Result<bool> {
    match value.trim().to_ascii_lowercase().as_str() {
        "true" => Ok(true),
        "false" => Ok(false),
        _ => Err(Error::config(key, value, "true or false")),
    }
}

/// Parses a finite float key within `[lo, hi]`.
pub fn parse_f64(key: &str, value: &str, lo: f64, hi: f64) -> Result<f64> {
    let allowed = || format!("a number in [{lo}, {hi}]");
    let v: f64 = value.trim().parse().map_err(|_| Error::config(key, value, allowed()))?;
    if !v.is_finite() || v < lo || v > hi {
        return Err(Error::config(key, value, allowed()));
    }
    Ok(v)
}

impl EngineConfig {
    /// Builds and validates a configuration from `circumflex.*` key/value pairs. Keys without the
    /// `circumflex.` prefix are ignored (hosts may pass their whole configuration). The policy
    /// name is checked against the registry, and the policy is built once to validate its own keys.
    pub fn from_pairs<'a, I>(pairs: I) -> Result<EngineConfig>
    where
        I: IntoIterator<Item = (&'a str, &'a str)>,
    {
        let mut cfg = EngineConfig::default();
        for (key, value) in pairs {
            if !key.starts_with("circumflex.") || key.starts_with("circumflex.job.") {
                continue;
            }
            match key {
                KEY_POLICY => cfg.policy = value.trim().to_ascii_lowercase(),
                KEY_OBJECTIVE => cfg.objective = Some(value.trim().to_ascii_lowercase()),
                KEY_EPOCH_MS => cfg.epoch_ms = parse_int(key, value, 10, 3_600_000)?,
                KEY_POOL_MODE => {
                    cfg.pool_mode = match value.trim().to_ascii_lowercase().as_str() {
                        "split" => PoolMode::Split,
                        "shared" => PoolMode::Shared,
                        _ => return Err(Error::config(key, value, "split or shared")),
                    }
                }
                KEY_REPLAN_ON_EVENTS => cfg.replan_on_events = parse_bool(key, value)?,
                KEY_NODE_DELAY => cfg.node_locality_delay = parse_int(key, value, 0, 1_000_000)?,
                KEY_RACK_DELAY => cfg.rack_locality_delay = parse_int(key, value, 0, 1_000_000)?,
                _ => {
                    cfg.params.insert(key.to_string(), value.to_string());
                }
            }
        }
        crate::policies::create(&cfg)?;
        Ok(cfg)
    }

    /// A policy parameter, if set.
    pub fn param(&self, key: &str) -> Option<&str> {
        self.params.get(key).map(String::as_str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_overrides() {
        let cfg = EngineConfig::from_pairs([
            ("circumflex.policy", "Fair"),
            ("circumflex.epoch.ms", "500"),
            ("yarn.something", "ignored"),
        ])
        .unwrap();
        assert_eq!(cfg.policy, "fair");
        assert_eq!(cfg.epoch_ms, 500);
    }

    #[test]
    fn errors_name_key_value_and_allowed() {
        let err = EngineConfig::from_pairs([("circumflex.policy", "lottery")]).unwrap_err().to_string();
        assert!(err.contains("circumflex.policy") && err.contains("lottery") && err.contains("fifo"), "{err}");
        let err = EngineConfig::from_pairs([("circumflex.epoch.ms", "-5")]).unwrap_err().to_string();
        assert!(err.contains("circumflex.epoch.ms") && err.contains("-5") && err.contains("integer"), "{err}");
        let err = EngineConfig::from_pairs([("circumflex.pool.mode", "both")]).unwrap_err().to_string();
        assert!(err.contains("split or shared"), "{err}");
    }
}
