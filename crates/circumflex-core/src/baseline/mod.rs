//! The baseline policies every Hadoop user knows, FIFO and Fair, expressed as plan targets like every
//! other policy so the one assignment layer serves them all. They live in the core because the engine's
//! own tests and any host without the research policies need a policy to run.

pub mod fair;
pub mod fifo;

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
