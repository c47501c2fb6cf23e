//! The policy registry: maps `circumflex.policy` names to constructors.
//!
//! Add a policy by adding a module here, an arm in [`create`] and its name in [`POLICY_NAMES`].

pub mod fair;
pub mod fifo;

use crate::config::EngineConfig;
use crate::error::{Error, Result};
use crate::policy::Policy;

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
        other => Err(Error::config(crate::config::KEY_POLICY, other, format!("one of {}", POLICY_NAMES.join(", ")))),
    }
}

/// Policies that exist only to test failure handling in the hosts. Compiled only with the
/// `test-policies` feature, which release builds do not enable.
#[cfg(feature = "test-policies")]
pub mod test_panic {
    use crate::policy::{Plan, Policy, Snapshot};

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
