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

/// Random snapshots for the baseline policies' equivalence tests.
#[cfg(test)]
pub(crate) mod testutil {
    use proptest::prelude::*;

    use crate::model::{JobId, JobSpec, JobState};
    use crate::policy::{ClusterView, PoolMode};

    /// `(cluster, jobs, active)`: up to 40 jobs with random priorities, submission times, sizes,
    /// progress, minima, maxima and weights; `active` in submission order with some repeats.
    pub fn snapshot_parts() -> impl Strategy<Value = (ClusterView, Vec<JobState>, Vec<JobId>)> {
        let job = (0i32..3, 0i64..20, 0u32..12, 0u32..6, 0u32..12, 0u32..4, prop::option::of(1u32..8), 1u32..4);
        (
            prop::bool::ANY,
            0u32..30,
            0u32..15,
            prop::collection::vec(job, 0..40),
            prop::collection::vec(0usize..40, 0..4),
        )
            .prop_map(|(shared, map_slots, reduce_slots, specs, repeats)| {
                let mode = if shared { PoolMode::Shared } else { PoolMode::Split };
                let cluster = ClusterView { map_slots, reduce_slots, mode, nodes: 1 };
                let jobs: Vec<JobState> = specs
                    .iter()
                    .enumerate()
                    .map(|(i, &(priority, submit, maps, reduces, started, min, max, weight))| {
                        let mut spec = JobSpec::new(submit, maps, reduces);
                        spec.priority = priority;
                        spec.min_slots = min;
                        spec.max_slots = max;
                        spec.weight = weight as f64;
                        let mut job = JobState::new(JobId(i as u32), spec);
                        let m = &mut job.phases[0];
                        let run = started.min(m.pending);
                        m.pending -= run;
                        m.running += run;
                        job
                    })
                    .collect();
                let mut active: Vec<JobId> = jobs.iter().map(|j| j.id).collect();
                for r in repeats {
                    if r < active.len() {
                        active.push(active[r]);
                    }
                }
                (cluster, jobs, active)
            })
    }
}
