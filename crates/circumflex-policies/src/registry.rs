//! The policy registry: maps `circumflex.policy` names to constructors. It sits at the top of the
//! policies crate, above every policy and the core's engine, so neither knows a policy by name.
//!
//! Add a policy by adding its family module to the crate (the policy in `<family>/policy.rs`, built by
//! `from_config(&EngineConfig) -> Result<Self>` like every other), a row in `REGISTRY` and its name in
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

/// A policy constructor: every policy has the same one, `from_config(&EngineConfig) -> Result<Self>`,
/// which reads and validates the policy's own keys.
type Constructor = fn(&EngineConfig) -> Result<Box<dyn Policy>>;

fn boxed<P: Policy + 'static>(policy: Result<P>) -> Result<Box<dyn Policy>> {
    Ok(Box::new(policy?))
}

/// Name → constructor, in [`POLICY_NAMES`] order (a test checks the two agree).
const REGISTRY: &[(&str, Constructor)] = &[
    ("fifo", |c| boxed(fifo::Fifo::from_config(c))),
    ("fair", |c| boxed(fair::Fair::from_config(c))),
    ("flex", |c| boxed(crate::flex::FlexPolicy::from_config(c))),
    ("circumflex", |c| boxed(crate::circumflex::policy::CircumflexPolicy::from_config(c))),
    ("asrpt", |c| boxed(crate::asrpt::policy::AsrptPolicy::from_config(c))),
    ("rtmr", |c| boxed(crate::rtmr::policy::RtmrPolicy::from_config(c))),
    ("deadline-constraint", |c| boxed(crate::rtmr::dc::DeadlineConstraint::from_config(c))),
    ("adaptive", |c| boxed(crate::adaptive::policy::AdaptivePolicy::from_config(c))),
    ("ras", |c| boxed(crate::adaptive::ras::policy::RasPolicy::from_config(c))),
    ("reverse-adaptive", |c| boxed(crate::adaptive::ras::policy::RasPolicy::reverse_from_config(c))),
    ("flowflex", |c| boxed(crate::flowflex::policy::FlowFlexPolicy::from_config(c))),
];

/// Builds the configured policy, validating its parameters.
pub fn create(config: &EngineConfig) -> Result<Box<dyn Policy>> {
    if let Some((_, constructor)) = REGISTRY.iter().find(|(name, _)| *name == config.policy) {
        return constructor(config);
    }
    #[cfg(feature = "test-policies")]
    if config.policy == "test-panic" {
        return Ok(Box::new(test_panic::PanicOnPlan));
    }
    Err(Error::config(
        circumflex_core::config::KEY_POLICY,
        &config.policy,
        format!("one of {}", POLICY_NAMES.join(", ")),
    ))
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
    fn the_names_and_the_table_agree() {
        assert_eq!(POLICY_NAMES, REGISTRY.iter().map(|(name, _)| *name).collect::<Vec<_>>());
    }

    #[test]
    fn every_listed_name_builds_with_defaults() {
        for name in POLICY_NAMES {
            let cfg = EngineConfig { policy: (*name).into(), ..EngineConfig::default() };
            assert_eq!(create(&cfg).unwrap().name(), *name);
        }
    }
}
