//! The age floor of task-duration estimates (`JobState::raise_age_floor`): before each plan, every
//! phase whose estimate rests on the 10 s default alone (no submitted estimate, no finished task) has
//! it raised to twice the age of its oldest running task. A host that knows only task counts (a
//! Gridmix `job.xml`, `circumflex compare --no-estimates`) otherwise plans, reserves and prices kills
//! as if every such task were 10 s long until one of them ends (`docs/quality.md`, sessions 13 and 14).
//!
//! Engine code, so the simulator and both shims get it alike; it reads only the task start times the
//! engine already keeps (`preempt::Starts`), and a phase with a submitted estimate or a finished task
//! is never touched, so hosts that know their estimates plan exactly as before.

use super::Engine;
use crate::model::{Phase, Time};

impl Engine {
    /// Raises the age floors at `now` (called by `replan` before the snapshot is taken). A job whose
    /// estimate changed is recorded as changed, so incremental re-plans see the new estimate.
    pub(super) fn raise_age_floors(&mut self, now: Time) {
        for i in 0..self.active.len() {
            let id = self.active[i];
            let Some(slot) = self.jobs.get_mut(id) else { continue };
            let mut raised = false;
            for ph in Phase::ALL {
                if let Some(oldest) = slot.starts[ph.idx()].oldest() {
                    raised |= slot.state.raise_age_floor(ph, oldest, now);
                }
            }
            if raised && !slot.sched.changed {
                slot.sched.changed = true;
                self.changed.push(id);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use crate::baseline::fair::Fair;
    use crate::config::EngineConfig;
    use crate::engine::Engine;
    use crate::model::{JobSpec, Locality, Phase, Time, DEFAULT_TASK_MS};
    use crate::policy::PoolMode;

    fn engine() -> Engine {
        let cfg = EngineConfig {
            policy: "fair".into(),
            pool_mode: PoolMode::Split,
            node_locality_delay: 0,
            rack_locality_delay: 0,
            ..EngineConfig::default()
        };
        Engine::with_policy(cfg, Box::new(Fair::default()))
    }

    #[test]
    fn plans_raise_the_floor_from_the_oldest_running_task() {
        let mut e = engine();
        let n = e.add_node("h1", "/r1", 4, 2);
        let blind = e.submit(JobSpec::new(0, 3, 0), 0).unwrap().0;
        let known = e.submit(JobSpec::new(0, 3, 0).with_task_ms(5_000, 5_000), 0).unwrap().0;
        e.task_started(blind, Phase::Map, n, Locality::Any, 0).unwrap();
        e.task_started(blind, Phase::Map, n, Locality::Any, 50_000).unwrap();
        e.task_started(known, Phase::Map, n, Locality::Any, 0).unwrap();
        e.replan(60_000);
        // The oldest task (60 s) sets it, not the mean age (35 s).
        assert_eq!(e.job(blind).unwrap().task_ms_estimate(Phase::Map), 120_000);
        assert_eq!(e.job(known).unwrap().task_ms_estimate(Phase::Map), 5_000);
        // The oldest ends first and successfully: the learned mean (60 s) rules from then on.
        e.task_finished(blind, Phase::Map, n, 60_000, true, 60_000).unwrap();
        e.replan(100_000);
        assert_eq!(e.job(blind).unwrap().task_ms_estimate(Phase::Map), 60_000);
    }

    #[test]
    fn a_raised_floor_reaches_an_incremental_plan() {
        let mut e = engine();
        let n = e.add_node("h1", "/r1", 4, 2);
        let j = e.submit(JobSpec::new(0, 3, 0), 0).unwrap().0;
        e.task_started(j, Phase::Map, n, Locality::Any, 0).unwrap();
        e.replan(1_000);
        assert!(e.changed.is_empty());
        e.replan(30_000);
        assert_eq!(e.changed, Vec::new(), "the plan consumed the change list");
        assert_eq!(e.job(j).unwrap().task_ms_estimate(Phase::Map), 60_000);
        // Between plans the estimate holds still: it moves at a plan, when the policy hears of it.
        e.raise_age_floors(40_000);
        assert_eq!(e.changed, vec![j]);
    }

    proptest! {
        /// While a phase without a submitted estimate keeps a task running and none finishes, its
        /// estimate never falls, whatever else starts, fails or is preempted, and it is at least twice
        /// the age of the oldest task still running at the last plan.
        #[test]
        fn the_estimate_never_falls_while_nothing_finishes(
            steps in proptest::collection::vec((0u8..3, 1i64..20_000), 1..40),
        ) {
            let mut e = engine();
            let n = e.add_node("h1", "/r1", 64, 2);
            let j = e.submit(JobSpec::new(0, 1_000, 0), 0).unwrap().0;
            let mut now: Time = 0;
            e.task_started(j, Phase::Map, n, Locality::Any, now).unwrap();
            let first = now;
            // Starts of the other running tasks, youngest last.
            let mut others: Vec<Time> = Vec::new();
            let mut last = e.job(j).unwrap().task_ms_estimate(Phase::Map);
            for (op, dt) in steps {
                now += dt;
                match op {
                    0 => {
                        e.task_started(j, Phase::Map, n, Locality::Any, now).unwrap();
                        others.push(now);
                    }
                    1 => {
                        if let Some(s) = others.pop() {
                            e.task_finished(j, Phase::Map, n, now - s, false, now).unwrap();
                        }
                    }
                    _ => {
                        if let Some(s) = others.pop() {
                            e.task_preempted(j, Phase::Map, n, now - s, now).unwrap();
                        }
                    }
                }
                e.replan(now);
                let est = e.job(j).unwrap().task_ms_estimate(Phase::Map);
                prop_assert!(est >= last, "fell from {last} to {est} at {now}");
                prop_assert!(est >= DEFAULT_TASK_MS.max(2 * (now - first)));
                last = est;
            }
        }
    }
}
