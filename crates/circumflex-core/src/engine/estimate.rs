//! Task-duration estimates for what the host did not say (`docs/quality.md`, session 14). A host that
//! knows only task counts (a Gridmix `job.xml`, `circumflex compare --no-estimates`) otherwise plans,
//! reserves and prices kills as if every task of every job were 10 s long until one of its tasks ends.
//! Two things replace that fixed default, and only it:
//!
//! - **the prior** (`Engine::task_prior`): a job submitted with no estimate starts from the median mean
//!   task time of the jobs of about its width that ended lately, per phase (the fixed default while none
//!   has);
//! - **the age floor** (`JobState::raise_age_floor`): before each plan, a phase with no submitted
//!   estimate and no finished task has its estimate raised to twice the age of its oldest running task.
//!
//! Engine code, so the simulator and both shims get it alike; it reads only what the engine already
//! keeps (the ring of ended jobs, the task start times of `preempt::Starts`), and a phase with a
//! submitted estimate or a finished task is never touched, so hosts that know their estimates plan
//! exactly as before.

use super::Engine;
use crate::model::{Phase, Time};

impl Engine {
    /// The prior for one task of `phase` of a job submitted now with `tasks` tasks in it, for when
    /// nothing else is known of it: the median, over the recently ended jobs (the engine's ring of
    /// [`super::RECENT_JOBS`]) whose phase had about as many tasks (the same power of two), of their mean
    /// task time in that phase; over all of them when none had; 0 (the fixed default) while no ended job
    /// ran a task of the phase.
    ///
    /// Why: the fixed 10 s default is the one figure nothing corrects for a job whose tasks all start
    /// before any ends, and those are the small jobs the stretch objectives are made of (a 1-map job of
    /// 4 s taken for 10 s is ranked as if 2.5 times its size). The jobs this cluster ran lately are the
    /// better guess (an empirical prior, what Hadoop's job history gives recurring jobs by name). The
    /// median over jobs, not tasks, so that the few jobs of thousands of long tasks do not make every
    /// unknown job look long; and over jobs of about the same width, the one thing a count-only host
    /// knows of a job, because task times grow with the job (a map reads a block whatever the job, but a
    /// reduce of a 1-reduce job shuffles a small job's output, one of 500 reduces a large one's: on the
    /// SWIM day the median reduce of 1-reduce jobs is a sixth of that of all jobs with reduces). Fixed at
    /// submission, so a job's estimate does not move under the plans while nothing of it is known.
    pub(super) fn task_prior(&self, phase: Phase, tasks: u32) -> Time {
        let width = |n: u32| u32::BITS - n.leading_zeros();
        let mut same: Vec<Time> = Vec::new();
        let mut all: Vec<Time> = Vec::new();
        for p in self.recent.iter().map(|j| j.phase(phase)).filter(|p| p.finished > 0) {
            let mean = (p.observed_ms_sum / p.finished as i64).max(1);
            all.push(mean);
            if width(p.total) == width(tasks) {
                same.push(mean);
            }
        }
        let means = if same.is_empty() { &mut all } else { &mut same };
        if means.is_empty() {
            return 0;
        }
        // The upper median for an even count: no averaging, so the prior is some job's own figure.
        let mid = means.len() / 2;
        *means.select_nth_unstable(mid).1
    }

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

    /// Runs a job of `maps` maps of `map_ms` each (no reduces, no estimate) to its end at `at`.
    fn run_job(e: &mut Engine, n: crate::model::NodeId, maps: u32, map_ms: Time, at: Time) {
        let j = e.submit(JobSpec::new(at, maps, 0), at).unwrap().0;
        for _ in 0..maps {
            e.task_started(j, Phase::Map, n, Locality::Any, at).unwrap();
        }
        for _ in 0..maps {
            e.task_finished(j, Phase::Map, n, map_ms, true, at + map_ms).unwrap();
        }
    }

    #[test]
    fn the_prior_is_the_median_job_of_about_the_same_width_that_ended() {
        let mut e = engine();
        let n = e.add_node("h1", "/r1", 64, 2);
        // Nothing ended yet: the fixed default.
        let first = e.submit(JobSpec::new(0, 1, 1), 0).unwrap().0;
        assert_eq!(e.job(first).unwrap().task_ms_estimate(Phase::Map), DEFAULT_TASK_MS);
        // Three jobs of 4 s maps and one of 50 maps of 300 s: the median job, not the median task.
        for k in 0..3 {
            run_job(&mut e, n, 1, 4_000, 1_000 * k);
        }
        run_job(&mut e, n, 50, 300_000, 10_000);
        let j = e.submit(JobSpec::new(400_000, 2, 1), 400_000).unwrap().0;
        let state = e.job(j).unwrap();
        assert_eq!(state.task_ms_estimate(Phase::Map), 4_000);
        // No job ended with a reduce: that phase keeps the fixed default.
        assert_eq!(state.task_ms_estimate(Phase::Reduce), DEFAULT_TASK_MS);
        // Jobs of about its width (32-63 maps) say more than the median job: the wide one's 300 s.
        let wide = e.submit(JobSpec::new(400_000, 40, 0), 400_000).unwrap().0;
        assert_eq!(e.job(wide).unwrap().task_ms_estimate(Phase::Map), 300_000);
        let narrow = e.submit(JobSpec::new(400_000, 1, 0), 400_000).unwrap().0;
        assert_eq!(e.job(narrow).unwrap().task_ms_estimate(Phase::Map), 4_000);
        // Fixed at submission: the job submitted before keeps its default.
        assert_eq!(e.job(first).unwrap().task_ms_estimate(Phase::Map), DEFAULT_TASK_MS);
        // A submitted estimate wins over the prior, and the age floor still raises it.
        let known = e.submit(JobSpec::new(400_000, 2, 0).with_task_ms(7_000, 0), 400_000).unwrap().0;
        assert_eq!(e.job(known).unwrap().task_ms_estimate(Phase::Map), 7_000);
        e.task_started(j, Phase::Map, n, Locality::Any, 400_000).unwrap();
        e.replan(403_000);
        assert_eq!(e.job(j).unwrap().task_ms_estimate(Phase::Map), 6_000);
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
