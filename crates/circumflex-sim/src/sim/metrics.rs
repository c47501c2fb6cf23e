//! Metrics: per-job records and the per-run summary, with their definitions.
//!
//! Definitions (all times in ms internally; summaries report seconds):
//! - **response time** = finish − arrival (arrival = `submit_ms`).
//! - **isolated time** ([`isolated_time`]) = the job's completion time alone on the whole cluster,
//!   honouring its `max_slots`, with every slot free at arrival and no heartbeat delay: its maps are
//!   list-scheduled in task order on `min(max_slots, map capacity)` slots, then (reduces wait for the
//!   last map: slow start 1.0) its reduces likewise on the reduce capacity. In shared pools both phases
//!   see the whole pool. It is the best a job can do, so stretch ≥ 1 up to heartbeat granularity.
//! - **stretch** = response time / isolated time (the FLEX paper's slowdown).
//! - **tardiness** = max(0, finish − deadline) for finished jobs with a deadline; **deadline met** when it
//!   is 0. A job rejected by admission control has no tardiness but counts as a deadline not met.
//! - **utilization** = busy slot-ms / (total slots × makespan), where busy slot-ms is the sum of the
//!   durations of all tasks run and **makespan** = last finish − first arrival.
//! - Rejected jobs (admission control) have no response time and are counted apart.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use serde::{Deserialize, Serialize};

use crate::sim::workload::SimJob;
use crate::sim::{is_zero, ClusterSpec};
use circumflex_core::model::{Phase, Time};

/// Makespan of list-scheduling `durations` in order on `slots` identical slots.
pub fn list_schedule_makespan(durations: &[Time], slots: u32) -> Time {
    if durations.is_empty() {
        return 0;
    }
    let slots = slots.max(1) as usize;
    if slots >= durations.len() {
        return durations.iter().copied().max().unwrap_or(0);
    }
    let mut free_at: BinaryHeap<Reverse<Time>> = (0..slots).map(|_| Reverse(0)).collect();
    let mut end = 0;
    for &d in durations {
        let Reverse(t) = free_at.pop().unwrap_or(Reverse(0));
        end = end.max(t + d);
        free_at.push(Reverse(t + d));
    }
    end
}

/// The job's completion time alone on `cluster` (see the module docs), ms, at least 1.
pub fn isolated_time(job: &SimJob, cluster: &ClusterSpec) -> Time {
    let caps = cluster.phase_capacity();
    let limit = |cap: u32| job.spec.max_slots.map_or(cap, |m| m.min(cap));
    let maps = list_schedule_makespan(&job.map_ms, limit(caps[Phase::Map.idx()]));
    let reduces = list_schedule_makespan(&job.reduce_ms, limit(caps[Phase::Reduce.idx()]));
    (maps + reduces).max(1)
}

/// What happened to one job.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JobRecord {
    /// Position in the workload (arrival order).
    pub index: u32,
    /// The trace's or generator's id.
    pub external_id: String,
    /// Arrival, ms.
    pub arrival_ms: Time,
    /// First task start, ms.
    pub start_ms: Option<Time>,
    /// Completion, ms.
    pub finish_ms: Option<Time>,
    /// finish − arrival, ms.
    pub response_ms: Option<Time>,
    /// Alone on the cluster, ms.
    pub isolated_ms: Time,
    /// response / isolated.
    pub stretch: Option<f64>,
    /// Absolute deadline, ms.
    pub deadline_ms: Option<Time>,
    /// max(0, finish − deadline), ms.
    pub tardiness_ms: Option<Time>,
    /// Whether the job weighs more than others.
    pub weight: f64,
    /// Map tasks.
    pub maps: u32,
    /// Reduce tasks.
    pub reduces: u32,
    /// Refused by admission control.
    pub rejected: bool,
}

impl JobRecord {
    /// Whether the job had a deadline and met it.
    pub fn deadline_met(&self) -> Option<bool> {
        self.tardiness_ms.map(|t| t == 0)
    }
}

/// Map launches by locality.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LocalityMix {
    /// Data on the node.
    pub node: u64,
    /// Data on the rack.
    pub rack: u64,
    /// Elsewhere.
    pub any: u64,
}

impl LocalityMix {
    /// Fraction of map launches that were node-local (1 when none ran).
    pub fn node_fraction(&self) -> f64 {
        let all = self.node + self.rack + self.any;
        if all == 0 {
            1.0
        } else {
            self.node as f64 / all as f64
        }
    }
}

/// The figures of one run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Policy label (`fifo`, `flex:max_stretch`, ...).
    pub policy: String,
    /// Jobs in the workload.
    pub jobs: u32,
    /// Jobs that completed.
    pub finished: u32,
    /// Jobs refused by admission control.
    pub rejected: u32,
    /// Mean response time of finished jobs, s.
    pub mean_response_s: f64,
    /// Largest response time, s.
    pub max_response_s: f64,
    /// Mean of response times weighted by job weight, s.
    pub weighted_mean_response_s: f64,
    /// Mean stretch.
    pub mean_stretch: f64,
    /// Largest stretch.
    pub max_stretch: f64,
    /// Sum of tardiness over jobs with deadlines, s.
    pub total_tardiness_s: f64,
    /// Mean tardiness over finished jobs with deadlines, s (0 when none has one).
    pub mean_tardiness_s: f64,
    /// Jobs with a deadline, rejected ones included (a rejected job misses its deadline).
    pub with_deadline: u32,
    /// Jobs that met their deadline.
    pub deadlines_met: u32,
    /// Busy slot-time over capacity × makespan.
    pub utilization: f64,
    /// Last finish − first arrival, s.
    pub makespan_s: f64,
    /// Tasks run.
    pub tasks: u64,
    /// Map launches by locality.
    pub locality: LocalityMix,
    /// Events processed by the simulator.
    pub events: u64,
    /// Heartbeats answered by the engine.
    pub heartbeats: u64,
    /// Plans computed by the engine.
    pub plans: u64,
    /// Tasks killed by preemption (`circumflex.preemption.*`; absent from files while 0).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub preempted_tasks: u64,
    /// Work those kills threw away, slot-s.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub preempted_lost_s: f64,
}

impl Summary {
    /// Summarizes `jobs`. `busy_ms` is the sum of task durations; `total_slots` the cluster's slots.
    pub fn from_jobs(policy: &str, jobs: &[JobRecord], busy_ms: i64, total_slots: u64) -> Summary {
        let done: Vec<&JobRecord> = jobs.iter().filter(|j| j.response_ms.is_some()).collect();
        let resp: Vec<f64> = done.iter().filter_map(|j| j.response_ms).map(|r| r as f64 / 1000.0).collect();
        let stretch: Vec<f64> = done.iter().filter_map(|j| j.stretch).collect();
        let mean = crate::stats::mean;
        let max = |v: &[f64]| v.iter().copied().fold(0.0, f64::max);
        let weight_sum: f64 = done.iter().map(|j| j.weight).sum();
        let weighted = if weight_sum > 0.0 {
            done.iter().map(|j| j.weight * j.response_ms.unwrap_or(0) as f64 / 1000.0).sum::<f64>() / weight_sum
        } else {
            0.0
        };
        let tard: Vec<f64> = jobs.iter().filter_map(|j| j.tardiness_ms).map(|t| t as f64 / 1000.0).collect();
        let first = jobs.iter().map(|j| j.arrival_ms).min().unwrap_or(0);
        let last = jobs.iter().filter_map(|j| j.finish_ms).max().unwrap_or(first);
        let makespan_ms = (last - first).max(0);
        let capacity = total_slots as f64 * makespan_ms as f64;
        Summary {
            policy: policy.to_string(),
            jobs: jobs.len() as u32,
            finished: done.len() as u32,
            rejected: jobs.iter().filter(|j| j.rejected).count() as u32,
            mean_response_s: mean(&resp),
            max_response_s: max(&resp),
            weighted_mean_response_s: weighted,
            mean_stretch: mean(&stretch),
            max_stretch: max(&stretch),
            // Summing from +0.0: an empty f64 sum is -0.0, which would print as "-0".
            total_tardiness_s: tard.iter().fold(0.0, |a, t| a + t),
            mean_tardiness_s: mean(&tard),
            with_deadline: jobs.iter().filter(|j| j.deadline_ms.is_some()).count() as u32,
            deadlines_met: jobs.iter().filter(|j| j.deadline_met() == Some(true)).count() as u32,
            utilization: if capacity > 0.0 { busy_ms as f64 / capacity } else { 0.0 },
            makespan_s: makespan_ms as f64 / 1000.0,
            tasks: 0,
            locality: LocalityMix::default(),
            events: 0,
            heartbeats: 0,
            plans: 0,
            preempted_tasks: 0,
            preempted_lost_s: 0.0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use circumflex_core::policy::PoolMode;

    #[test]
    fn list_scheduling_by_hand() {
        assert_eq!(list_schedule_makespan(&[], 3), 0);
        assert_eq!(list_schedule_makespan(&[5, 7], 3), 7);
        // Two slots: 4 and 3 start at 0; 2 goes after 3 (t=3..5); 6 after 4 (t=4..10).
        assert_eq!(list_schedule_makespan(&[4, 3, 2, 6], 2), 10);
        assert_eq!(list_schedule_makespan(&[1, 1, 1, 1], 1), 4);
    }

    #[test]
    fn isolated_time_honours_max_slots_and_pools() {
        let cluster = ClusterSpec { nodes: 2, map_slots: 2, reduce_slots: 1, racks: 1, pool: PoolMode::Split };
        let mut job = SimJob::new(0, vec![10; 8], vec![5; 4]);
        // 8 maps on 4 slots: 20; 4 reduces on 2 slots: 10.
        assert_eq!(isolated_time(&job, &cluster), 30);
        job.spec.max_slots = Some(1);
        assert_eq!(isolated_time(&job, &cluster), 80 + 20);
        let shared = ClusterSpec { pool: PoolMode::Shared, ..cluster };
        job.spec.max_slots = None;
        // Shared: 6 slots for each phase: maps 10+10, reduces 5.
        assert_eq!(isolated_time(&job, &shared), 25);
    }

    #[test]
    fn summary_by_hand() {
        let rec = |i: u32, arrival, finish, iso, deadline| JobRecord {
            index: i,
            external_id: String::new(),
            arrival_ms: arrival,
            start_ms: Some(arrival),
            finish_ms: Some(finish),
            response_ms: Some(finish - arrival),
            isolated_ms: iso,
            stretch: Some((finish - arrival) as f64 / iso as f64),
            deadline_ms: deadline,
            tardiness_ms: deadline.map(|d: Time| (finish - d).max(0)),
            weight: 1.0,
            maps: 1,
            reduces: 0,
            rejected: false,
        };
        let mut refused = rec(2, 0, 0, 10_000, Some(30_000));
        (refused.rejected, refused.start_ms, refused.finish_ms, refused.response_ms) = (true, None, None, None);
        (refused.stretch, refused.tardiness_ms) = (None, None);
        let jobs = [rec(0, 0, 10_000, 10_000, Some(12_000)), rec(1, 0, 20_000, 10_000, Some(15_000)), refused];
        let s = Summary::from_jobs("fifo", &jobs, 20_000, 1);
        assert_eq!((s.jobs, s.finished, s.rejected), (3, 2, 1));
        assert_eq!(s.mean_response_s, 15.0);
        assert_eq!(s.max_stretch, 2.0);
        assert_eq!(s.mean_stretch, 1.5);
        assert_eq!(s.total_tardiness_s, 5.0);
        assert_eq!((s.with_deadline, s.deadlines_met), (3, 1), "the rejected job misses its deadline");
        assert_eq!(s.mean_tardiness_s, 2.5);
        assert_eq!(s.utilization, 1.0);
        assert_eq!(s.makespan_s, 20.0);
    }
}
