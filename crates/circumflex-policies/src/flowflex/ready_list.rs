//! The paper's Fair and FIFO baselines (§4.1): ready-list schedulers that know nothing of the
//! metric or of jobs that are not ready yet. They "simply schedule all ready jobs by either Fair or
//! FIFO rules, repeating as new jobs become ready".
//!
//! Both run on the same model as FlowFlex's schedules: `P` identical slots, integer allocations,
//! each job at most `δ_i` slots, linear speedup, continuous time; allocations are recomputed
//! whenever a job completes (which is when jobs become ready; all flows are present at time 0).
//!
//! Decisions where the paper is silent (digest §6 gap 20):
//! - **Fair** is max-min fair among the ready *jobs* (not flows), in integer slots: every ready job
//!   receives `⌊R/|U|⌋` more slots (capped by its `δ_i`) while some can take more; when fewer slots
//!   than unsatisfied jobs remain, one each goes to the jobs first in (flow, job) index order.
//! - **FIFO** orders ready jobs by (flow arrival order = flow index, the time the job became ready,
//!   job index); each takes `min(δ_i, slots left)`.

use super::flow::Flow;
use circumflex_core::error::{Error, Result};

/// Which ready-list rule to apply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReadyRule {
    /// Max-min fair shares among ready jobs.
    Fair,
    /// First come, first served by flow, then by ready time.
    Fifo,
}

impl ReadyRule {
    /// The name used in reports.
    pub fn name(self) -> &'static str {
        match self {
            ReadyRule::Fair => "Fair",
            ReadyRule::Fifo => "FIFO",
        }
    }
}

struct JobState {
    flow: usize,
    job: usize,
    remaining: f64,
    max_parallelism: u32,
    waiting_for: usize,
    ready_at: f64,
    done: bool,
}

/// Integer max-min fair shares of `slots` among jobs with caps `caps` (in priority order for the
/// leftover single slots).
pub fn fair_shares(caps: &[u32], slots: u32) -> Vec<u32> {
    let mut alloc = vec![0u32; caps.len()];
    let mut left = slots;
    loop {
        let open: Vec<usize> = (0..caps.len()).filter(|&i| alloc[i] < caps[i]).collect();
        if left == 0 || open.is_empty() {
            return alloc;
        }
        let share = left / open.len() as u32;
        if share == 0 {
            for &i in open.iter().take(left as usize) {
                alloc[i] += 1;
            }
            return alloc;
        }
        for &i in &open {
            let give = share.min(caps[i] - alloc[i]);
            alloc[i] += give;
            left -= give;
        }
    }
}

/// Simulates `rule` on `flows` sharing `slots` processors; returns every flow's completion time.
pub fn completions(flows: &[Flow], slots: u32, rule: ReadyRule) -> Result<Vec<f64>> {
    if slots == 0 {
        return Err(Error::job("slots", slots, "at least 1 processor"));
    }
    let mut jobs = Vec::new();
    let mut first = Vec::with_capacity(flows.len());
    for (f, flow) in flows.iter().enumerate() {
        first.push(jobs.len());
        for (i, job) in flow.jobs().iter().enumerate() {
            jobs.push(JobState {
                flow: f,
                job: i,
                remaining: job.work,
                max_parallelism: job.max_parallelism.min(slots),
                waiting_for: flow.precedence().predecessors(i).len(),
                ready_at: 0.0,
                done: false,
            });
        }
    }
    let mut completion = vec![0.0f64; flows.len()];
    let mut now = 0.0f64;
    let mut left = jobs.len();
    while left > 0 {
        let mut ready: Vec<usize> = (0..jobs.len()).filter(|&k| !jobs[k].done && jobs[k].waiting_for == 0).collect();
        if rule == ReadyRule::Fifo {
            ready.sort_by(|&a, &b| {
                let (x, y) = (&jobs[a], &jobs[b]);
                x.flow.cmp(&y.flow).then(x.ready_at.total_cmp(&y.ready_at)).then(x.job.cmp(&y.job))
            });
        }
        let caps: Vec<u32> = ready.iter().map(|&k| jobs[k].max_parallelism).collect();
        let rates = match rule {
            ReadyRule::Fair => fair_shares(&caps, slots),
            ReadyRule::Fifo => {
                let mut free = slots;
                caps.iter()
                    .map(|&c| {
                        let take = c.min(free);
                        free -= take;
                        take
                    })
                    .collect()
            }
        };
        // Every ready job has a positive cap and there is at least one slot, so some rate is > 0.
        let step = ready
            .iter()
            .zip(&rates)
            .filter(|(_, &r)| r > 0)
            .map(|(&k, &r)| jobs[k].remaining / f64::from(r))
            .fold(f64::INFINITY, f64::min);
        if !step.is_finite() {
            return Err(Error::job("flows", "a job with no ready path", "acyclic flows"));
        }
        now += step;
        let mut finished = Vec::new();
        for (&k, &r) in ready.iter().zip(&rates) {
            if r == 0 {
                continue;
            }
            let job = &mut jobs[k];
            job.remaining -= step * f64::from(r);
            if job.remaining <= 1e-9 * (1.0 + step * f64::from(r)) {
                finished.push(k);
            }
        }
        for k in finished {
            let (f, i) = (jobs[k].flow, jobs[k].job);
            jobs[k].done = true;
            left -= 1;
            completion[f] = completion[f].max(now);
            for &s in flows[f].precedence().successors(i) {
                let succ = &mut jobs[first[f] + s as usize];
                succ.waiting_for -= 1;
                if succ.waiting_for == 0 {
                    succ.ready_at = now;
                }
            }
        }
    }
    Ok(completion)
}

#[cfg(test)]
mod tests {
    use super::super::flow::tests::t1_flow;
    use super::super::flow::FlowJob;
    use super::*;
    use crate::flex::metrics::Penalty;

    #[test]
    fn fair_shares_are_max_min_and_integer() {
        assert_eq!(fair_shares(&[10, 1, 10], 7), vec![3, 1, 3]);
        assert_eq!(fair_shares(&[10, 10, 10], 2), vec![1, 1, 0]);
        assert_eq!(fair_shares(&[2, 2], 9), vec![2, 2]);
        assert_eq!(fair_shares(&[], 3), Vec::<u32>::new());
    }

    /// T1 alone on P = 4: J1 (4,2) and J2 (3,1) start; Fair gives 2 + 1 (caps) as FIFO does.
    /// J1 ends at 2, J3 (6,3) takes 3 slots on [2, 4); J2 ends at 3; J4 (2,2) on [4, 5): C = 5 = CP.
    #[test]
    fn single_flow_follows_its_critical_path_when_slots_suffice() {
        for rule in [ReadyRule::Fair, ReadyRule::Fifo] {
            assert_eq!(completions(&[t1_flow(4)], 4, rule).unwrap(), vec![5.0]);
        }
    }

    /// Two single-job flows (4, 2) on P = 2: FIFO runs flow 0 then flow 1 (2, 4); Fair splits
    /// 1 + 1 and both end at 4.
    #[test]
    fn fifo_serves_flows_in_order_and_fair_shares() {
        let flow = || Flow::new(vec![FlowJob { work: 4.0, max_parallelism: 2 }], &[], Penalty::Zero, 2).unwrap();
        let flows = [flow(), flow()];
        assert_eq!(completions(&flows, 2, ReadyRule::Fifo).unwrap(), vec![2.0, 4.0]);
        assert_eq!(completions(&flows, 2, ReadyRule::Fair).unwrap(), vec![4.0, 4.0]);
        assert!(completions(&flows, 0, ReadyRule::Fair).is_err());
    }
}
