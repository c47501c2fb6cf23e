//! Order labels for the assignment index, so a re-plan touches only the index entries it changes.
//!
//! The index (`Engine::under`, `Engine::spare`) orders entries by plan rank. Keyed by the dense
//! rank, a departure shifts the rank of every job behind it and an arrival ahead of others does
//! the same, so every re-plan rebuilt both sets: `O(n log n)` tree inserts per arrival and
//! departure, which was most of the simulator's time under overload (`docs/performance.md`).
//! Keyed instead by a **label**, a `u32` that increases strictly along the plan order but may have
//! gaps, a job keeps its label as long as the jobs that had labels keep their relative order: a
//! departure changes no label, and a newcomer takes a label inside the gap where the plan puts it.
//! Only when the surviving order changed, or a gap is too narrow, are all jobs relabelled.
//!
//! Exactness: every comparison the heartbeat makes between index entries compares `(key, rank)`
//! or `rank` of two entries (or an entry with itself), and labels order exactly as ranks do, so
//! the heartbeat chooses the same jobs in the same order as with dense ranks (tested in
//! `tests::incremental_index_equals_a_rebuild` below, against a from-scratch rebuild).

use std::time::Instant;

use super::{Engine, NO_LABEL};
use crate::model::{JobId, Time};
use crate::policy::Plan;

/// Room left below `u32::MAX` when relabelling from scratch: half the label space stays free for
/// jobs appended behind the last one (FIFO and Fair append every arrival).
const SPREAD: u64 = 1 << 31;

impl Engine {
    /// Applies `plan` by touching only the jobs whose target changed, when that is exactly what
    /// the full application would do: the active jobs are those of the last full application and
    /// the plan lists the same jobs in the same order with the same locality waits and accelerated
    /// targets (so every rank, wait and accelerated target stays). Every event that changes a
    /// job's state re-indexes that job, so the other jobs' index entries are current. Returns
    /// false, changing nothing, when the full path is needed; the caller stores the plan.
    pub(super) fn apply_in_place(&mut self, plan: &Plan) -> bool {
        let same_shape = self.planned_active == self.active
            && plan.entries.len() == self.plan.entries.len()
            && plan.entries.iter().zip(&self.plan.entries).all(|(a, b)| a.job == b.job)
            && plan.locality_waits == self.plan.locality_waits
            && plan.accelerated_targets == self.plan.accelerated_targets
            && plan.rule == self.plan.rule;
        if !same_shape {
            return false;
        }
        let changed: Vec<usize> =
            (0..plan.entries.len()).filter(|&i| plan.entries[i].target != self.plan.entries[i].target).collect();
        for i in changed {
            let e = plan.entries[i];
            // A job listed twice takes its last entry, as in the full path (its rank says which).
            if let Some(s) = self.sched_mut(e.job).filter(|s| s.rank == i as u32) {
                s.target = e.target;
                self.reindex(e.job);
            }
        }
        true
    }

    /// Book-keeping after a plan is applied: epoch, dirty flag and the plan's cost in the stats.
    pub(super) fn plan_done(&mut self, now: Time, started: Instant) {
        self.recount_long_tasks();
        self.dirty = false;
        self.next_epoch = now.saturating_add(self.config.epoch_ms);
        let ns = started.elapsed().as_nanos() as u64;
        self.stats.plans += 1;
        self.stats.last_plan_ns = ns;
        self.stats.total_plan_ns += ns;
    }

    /// Gives every ranked active job a label that increases along its rank, keeping old labels
    /// where it can; a job whose label changes is unindexed first (its entries name the old one).
    /// Returns whether labels had to be reassigned from scratch.
    pub(super) fn relabel(&mut self) -> bool {
        // Jobs in rank order: ranks are unique per job (one plan entry each, then the extras).
        let slots = self.plan.entries.len() + self.active.len();
        let mut by_rank: Vec<Option<JobId>> = vec![None; slots];
        for &id in &self.active {
            if let Some(s) = self.sched(id) {
                if let Some(cell) = by_rank.get_mut(s.rank as usize) {
                    *cell = Some(id);
                }
            }
        }
        let order: Vec<JobId> = by_rank.into_iter().flatten().collect();
        if self.keep_labels(&order) {
            return false;
        }
        let gap = (SPREAD / (order.len() as u64 + 1)).max(1);
        self.label_gap = gap as u32;
        for (i, &id) in order.iter().enumerate() {
            self.set_label(id, ((i as u64 + 1) * gap).min(NO_LABEL as u64 - 1) as u32);
        }
        true
    }

    /// Labels newcomers inside the gaps of the kept labels when the labelled jobs are still in
    /// label order and every gap has room; otherwise changes nothing and returns false.
    fn keep_labels(&mut self, order: &[JobId]) -> bool {
        let label = |e: &Engine, id: JobId| e.sched(id).map_or(NO_LABEL, |s| s.label);
        // Runs of newcomers (no label yet): (first position, length, first label, step).
        let mut runs: Vec<(usize, u64, u64, u64)> = Vec::new();
        let mut lo: u64 = 0;
        let mut run_start = 0;
        for i in 0..=order.len() {
            let l = order.get(i).map(|&id| label(self, id));
            if l == Some(NO_LABEL) {
                continue;
            }
            if let Some(l) = l {
                if (l as u64) <= lo {
                    return false; // the labelled jobs changed their relative order
                }
            }
            let run = (i - run_start) as u64;
            if run > 0 {
                let step = match l {
                    // Behind the last labelled job: the usual spacing, while it fits.
                    None => self.label_gap as u64,
                    Some(hi) => (hi as u64 - lo) / (run + 1),
                };
                let last = lo + step * run;
                if step == 0 || last >= l.unwrap_or(NO_LABEL) as u64 {
                    return false;
                }
                runs.push((run_start, run, lo + step, step));
            }
            if let Some(l) = l {
                lo = l as u64;
            }
            run_start = i + 1;
        }
        for (start, run, first, step) in runs {
            for k in 0..run {
                self.set_label(order[start + k as usize], (first + k * step) as u32);
            }
        }
        true
    }

    fn set_label(&mut self, id: JobId, label: u32) {
        if self.sched(id).is_some_and(|s| s.label != label) {
            self.unindex(id);
            if let Some(s) = self.sched_mut(id) {
                s.label = label;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::EngineConfig;
    use crate::engine::{Choice, SCALE};
    use crate::model::{JobSpec, Locality, NodeId, Phase};
    use crate::policy::PoolMode;
    use proptest::prelude::*;

    /// The index as a from-scratch rebuild keyed by dense rank would hold it, in set order, with
    /// the rank replaced by the job: `(key, phase, job)` per under entry and `(phase, job)` per spare
    /// entry. The live sets (keyed by labels) must list the same entries in the same order.
    fn check_index(e: &Engine) {
        let mut under: [Vec<(u32, u32, u8, u32)>; 2] = [Vec::new(), Vec::new()];
        let mut spare: [Vec<(u32, u8, u32)>; 2] = [Vec::new(), Vec::new()];
        for &id in &e.active {
            let Some(slot) = e.jobs.get(id) else { continue };
            let (j, s) = (&slot.state, &slot.sched);
            if s.rank == u32::MAX || !j.is_active() {
                continue;
            }
            for ph in Phase::ALL {
                if !j.runnable(ph) {
                    continue;
                }
                let (running, target) = (j.phase(ph).running, s.target[ph.idx()]);
                if running < target {
                    under[ph.idx()].push(((running as u64 * SCALE / target as u64) as u32, s.rank, ph as u8, id.0));
                }
                spare[ph.idx()].push((s.rank, ph as u8, id.0));
            }
        }
        for ph in 0..2 {
            under[ph].sort_unstable();
            spare[ph].sort_unstable();
            let want: Vec<_> = under[ph].iter().map(|&(k, _, p, j)| (k, p, j)).collect();
            let got: Vec<_> = e.under[ph].iter().map(|&(k, _, p, j)| (k, p, j)).collect();
            assert_eq!(got, want, "under index, phase {ph}");
            let want: Vec<_> = spare[ph].iter().map(|&(_, p, j)| (p, j)).collect();
            let got: Vec<_> = e.spare[ph].iter().map(|&(_, p, j)| (p, j)).collect();
            assert_eq!(got, want, "spare index, phase {ph}");
        }
    }

    /// One step of a random event sequence.
    #[derive(Clone, Debug)]
    enum Op {
        Submit { maps: u32, reduces: u32, priority: i32, submit_back: i64 },
        Heartbeat { node: u32 },
        Finish { pick: usize },
        Tick,
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            (1u32..6, 0u32..3, 0i32..2, 0i64..5).prop_map(|(maps, reduces, priority, submit_back)| Op::Submit {
                maps,
                reduces,
                priority,
                submit_back
            }),
            (0u32..3).prop_map(|node| Op::Heartbeat { node }),
            (0usize..64).prop_map(|pick| Op::Finish { pick }),
            Just(Op::Tick),
        ]
    }

    /// FIFO's targets in a scattered order (by a hash of the id), so newcomers land anywhere in
    /// the plan and departures leave gaps in the middle, as FLEX's reorderings do.
    struct Scattered;

    impl crate::policy::Policy for Scattered {
        fn name(&self) -> &'static str {
            "scattered"
        }

        fn plan(&mut self, snapshot: &crate::policy::Snapshot<'_>) -> Plan {
            let fifo = crate::baseline::fifo::Fifo::default().plan(snapshot);
            let mut order: Vec<JobId> = snapshot.active.to_vec();
            order.sort_by_key(|id| (id.0.wrapping_mul(2_654_435_761) % 97, id.0));
            let mut b = crate::policy::PlanBuilder::new(snapshot, order);
            for pool in snapshot.cluster.pools() {
                for e in &fifo.entries {
                    let slots = pool.phases.iter().map(|ph| e.target[ph.idx()]).sum();
                    b.set_pool_target(e.job, &pool, slots);
                }
            }
            b.finish()
        }
    }

    proptest! {
        /// Arrivals, departures, launches and epochs under FIFO (with priorities, so newcomers may
        /// go first), Fair and a scattered order: after every step the label-keyed index holds
        /// exactly what a rebuild by dense rank would, in the same order.
        #[test]
        fn incremental_index_equals_a_rebuild(
            policy in prop_oneof![Just("fifo"), Just("fair"), Just("scattered")],
            shared in any::<bool>(),
            ops in prop::collection::vec(op(), 1..120),
        ) {
            let mode = if shared { PoolMode::Shared } else { PoolMode::Split };
            let cfg = EngineConfig { policy: policy.into(), pool_mode: mode, ..EngineConfig::default() };
            let p: Box<dyn crate::policy::Policy> = match policy {
                "fifo" => Box::new(crate::baseline::fifo::Fifo::default()),
                "fair" => Box::new(crate::baseline::fair::Fair::default()),
                _ => Box::new(Scattered),
            };
            let mut e = Engine::with_policy(cfg, p);
            for n in 0..3 {
                e.add_node(&format!("n{n}"), "r", 2, 1);
            }
            let mut running: Vec<(JobId, Phase, NodeId)> = Vec::new();
            let mut now = 10_000;
            for op in ops {
                now += 500;
                match op {
                    Op::Submit { maps, reduces, priority, submit_back } => {
                        let mut spec = JobSpec::new(now - submit_back * 1000, maps, reduces).with_task_ms(1000, 1000);
                        spec.priority = priority;
                        e.submit(spec, now).unwrap();
                    }
                    Op::Heartbeat { node } => {
                        let node = NodeId(node);
                        let choices: Vec<Choice> = e.node_update(node, [2, 1], now).unwrap().to_vec();
                        let mut free = [2u32, 1];
                        for c in choices {
                            let b = if shared { 0 } else { c.phase.idx() };
                            for _ in 0..c.count {
                                let pending = e.jobs.get(c.job).map_or(0, |s| s.state.phase(c.phase).pending);
                                if free[b] == 0 || pending == 0 {
                                    break;
                                }
                                free[b] -= 1;
                                e.task_started(c.job, c.phase, node, Locality::Node, now).unwrap();
                                running.push((c.job, c.phase, node));
                            }
                        }
                    }
                    Op::Finish { pick } => {
                        if !running.is_empty() {
                            let (job, phase, node) = running.swap_remove(pick % running.len());
                            e.task_finished(job, phase, node, 1000, true, now).unwrap();
                        }
                    }
                    Op::Tick => {
                        if e.tick(now) {
                            // The policy re-planned from the engine's change list: exactly the plan
                            // a fresh policy makes from the snapshot alone.
                            let mut fresh: Box<dyn crate::policy::Policy> = match policy {
                                "fifo" => Box::new(crate::baseline::fifo::Fifo::default()),
                                "fair" => Box::new(crate::baseline::fair::Fair::default()),
                                _ => Box::new(Scattered),
                            };
                            prop_assert_eq!(e.plan(), &fresh.plan(&e.snapshot(now)));
                        }
                    }
                }
                check_index(&e);
            }
        }
    }
}
