//! The policy registry: maps `circumflex.policy` names to constructors. It sits at the top of the
//! policies crate, above every policy and the core's engine, so neither knows a policy by name.
//!
//! Add a policy by adding its family module to the crate, an arm in [`create`] and its name in
//! [`POLICY_NAMES`]. [`create`] is also where a configuration's policy-specific keys are validated:
//! hosts call it (or [`new_engine`]) once per create or refresh.

use circumflex_core::baseline::{fair, fifo};
use circumflex_core::config::EngineConfig;
use circumflex_core::engine::Engine;
use circumflex_core::error::{Error, Result};
use circumflex_core::policy::Policy;

/// Every policy name `create` accepts (test-only policies excluded).
pub const POLICY_NAMES: &[&str] = &[
    "fifo",
    "fair",
    "flex",
    "circumflex",
    "asrpt",
    "rtmr",
    "deadline-constraint",
    "adaptive",
    "ras",
    "reverse-adaptive",
    "flowflex",
];

/// Builds the configured policy, validating its parameters.
pub fn create(config: &EngineConfig) -> Result<Box<dyn Policy>> {
    match config.policy.as_str() {
        "fifo" => Ok(Box::new(fifo::Fifo)),
        "fair" => Ok(Box::new(fair::Fair)),
        "flex" => Ok(Box::new(crate::flex::FlexPolicy::from_config(config)?)),
        "circumflex" => Ok(Box::new(crate::circumflex::policy::CircumflexPolicy::from_config(config)?)),
        "asrpt" => Ok(Box::new(crate::asrpt::policy::AsrptPolicy)),
        "flowflex" => Ok(Box::new(crate::flowflex::policy::FlowFlexPolicy::from_config(config)?)),
        "adaptive" => Ok(Box::new(crate::adaptive::scheduler::AdaptivePolicy::new(
            crate::adaptive::scheduler::AdaptiveConfig::from_engine(config)?,
        ))),
        "ras" => Ok(Box::new(crate::adaptive::ras::policy::RasPolicy::from_config(config, false)?)),
        "reverse-adaptive" => Ok(Box::new(crate::adaptive::ras::policy::RasPolicy::from_config(config, true)?)),
        "deadline-constraint" => Ok(Box::new(crate::rtmr::dc::DeadlineConstraint::from_engine(config)?)),
        "rtmr" => {
            Ok(Box::new(crate::rtmr::policy::RtmrPolicy::new(crate::rtmr::policy::RtmrConfig::from_engine(config)?)))
        }
        #[cfg(feature = "test-policies")]
        "test-panic" => Ok(Box::new(test_panic::PanicOnPlan)),
        other => Err(Error::config(
            circumflex_core::config::KEY_POLICY,
            other,
            format!("one of {}", POLICY_NAMES.join(", ")),
        )),
    }
}

/// Builds the configured policy and an engine around it: the one way hosts and the lab create an
/// engine from a configuration.
pub fn new_engine(config: EngineConfig) -> Result<Engine> {
    let policy = create(&config)?;
    Ok(Engine::with_policy(config, policy))
}

/// Policies that exist only to test failure handling in the hosts. Compiled only with the
/// `test-policies` feature, which release builds do not enable.
#[cfg(feature = "test-policies")]
pub mod test_panic {
    use circumflex_core::policy::{Plan, Policy, Snapshot};

    /// Panics whenever it is asked for a plan with at least one active job.
    #[derive(Debug)]
    pub struct PanicOnPlan;

    impl Policy for PanicOnPlan {
        fn name(&self) -> &'static str {
            "test-panic"
        }
        fn plan(&mut self, snapshot: &Snapshot<'_>) -> Plan {
            if !snapshot.active.is_empty() {
                panic!("test-panic policy: deliberate panic with {} active jobs", snapshot.active.len());
            }
            Plan { computed_at: snapshot.now, ..Plan::default() }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_policy_names_the_key_the_value_and_the_choices() {
        let cfg = EngineConfig::from_pairs([("circumflex.policy", "lottery")]).unwrap();
        let err = create(&cfg).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(err.contains("circumflex.policy") && err.contains("lottery") && err.contains("fifo"), "{err}");
    }

    #[test]
    fn every_listed_name_builds_with_defaults() {
        for name in POLICY_NAMES {
            let cfg = EngineConfig { policy: (*name).into(), ..EngineConfig::default() };
            assert_eq!(create(&cfg).unwrap().name(), *name);
        }
    }
}
