//! Engine-decided preemption (`circumflex.preemption.*`, `docs/preemption.md`): which running tasks
//! to take back, for whom, and where the freed slot goes. Hosts carry the decisions out (the YARN shim
//! through a strict preemption contract and a kill with the `PREEMPTED` exit status after the grace
//! period, MRv1 through `killTask(attempt, false)`, the simulator by modelling both) and report each
//! kill with [`Engine::task_preempted`].
//!
//! **When.** A job is *starved* in a pool when it is below its plan target there with runnable tasks
//! waiting and the pool's free slots do not cover its deficit once better-ranked jobs below target have
//! taken theirs (free slots go to jobs below target in plan order at the next heartbeats; a slot that
//! is free for a moment between heartbeats, while a few short tasks churn beside long ones, does not
//! end the wait of a job that needs many). Once it has been starved for `delay_ms`, the engine asks
//! for slots back on its behalf, in plan order of the starved jobs, never more than `max_fraction` of
//! the pool in flight at once (the CapacityScheduler's per-round cap).
//!
//! With the long-task reserve (`engine.rs`), free slots the reserve keeps from long tasks do not cover a
//! long deficit, and a job the reserve keeps waiting may take lower-ranked jobs' long tasks even below
//! their target (the reserve keeps them from reaching it).
//!
//! **From whom.** Only from jobs above their own target in that pool, lowest-ranked first, and never
//! below their target (so two jobs never preempt each other back and forth: a victim stays at or
//! above its target, a beneficiary at or below its own). Within a victim, youngest tasks first (the
//! FairScheduler's rule: the least work is lost), and hosts pick the same youngest tasks.
//!
//! **Only when worth it.** A task expected to run `r` more ms (the phase's estimate minus its age)
//! frees its slot by itself in `r`; preempted, it frees it after the grace period `g` and its job must
//! redo its age `a` plus `g` of work. Without the kill the beneficiary would take a slot of the pool
//! that frees by itself, expected in `w`: the `k`-th smallest expected remaining time of the pool's
//! running tasks, `k` being the starved slots of better-ranked jobs (they take the earlier ones: exact
//! under [`crate::policy::AssignmentRule::RankedDeficit`], an estimate under the relative rule) plus
//! the slots the beneficiary takes before this one (its fifth slot waits for the fifth free, not the
//! first: a wide job beside a few short tasks is not served by their churn); so it
//! starts `min(r, w) − g` sooner; the victim, which keeps
//! its other running tasks, finishes about `(a + g) / p` later (the redone work spread over its
//! parallelism `p`, the fluid view FLEX plans in) while more of its tasks wait behind the running ones;
//! in its last wave every task is on its critical path, so `p` is its running tasks in the pool capped
//! at its waiting tasks of that phase plus one. The engine preempts a task only when the first exceeds
//! the second: `(min(r, w) − g) · p > a + g`. Short tasks are therefore never preempted (they end before the
//! kill would), a lone long task only while young, and a wide job's long tasks (the 500 reduces of
//! 2,100 s that hold a whole pool on the SWIM day, `docs/quality.md`) for as long as a starved job
//! would otherwise wait much longer than the victim loses.
//!
//! **AMs.** With the AM gate on (`engine/admission.rs`), a job whose AM the engine admitted but the
//! host could not place (no node had the AM's room free) is starved for the AM's slots in the shared
//! pool, ranked where the plan ranks the job, and preempted for exactly as a job's waiting tasks are:
//! otherwise the AM of the job the plan serves first waits for the running tasks of lower-ranked jobs
//! to end by themselves, which on a loaded cluster of long tasks is most of a short job's life. The
//! YARN FairScheduler does the same for an application whose AM container is starved. The freed room
//! goes to the AM through the host's reservation of the node (the shim's `AmPlacement`, modelled by
//! the simulator), which already holds it out of the node's task capacity; the earmark of such a kill
//! is not spent on tasks.
//!
//! **Where the slot goes.** A kill earmarks the freed slot on its node for the beneficiary: that node's
//! next heartbeat offers it to the beneficiary first (the FairScheduler's `assignPreemptedContainers`),
//! so the slot cannot go back to the victim's re-queued task.
//!
//! Off (the default) nothing here runs and the engine behaves exactly as without it.

use std::collections::VecDeque;

use serde::Serialize;

use super::{Engine, Slot};
use crate::error::Result;
use crate::model::{JobId, NodeId, Phase, Time};
use crate::policy::PoolMode;
use crate::policy::{JobLookup, KillPrice};

/// Preemptions the engine keeps for reports (status page, status JSON), newest last.
pub const RECENT_PREEMPTIONS: usize = 256;

/// A decision: take `count` running tasks of `victim`'s `phase` back (youngest first) for `beneficiary`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Preemption {
    /// The job giving slots back.
    pub victim: JobId,
    /// The phase of its tasks to take.
    pub phase: Phase,
    /// How many.
    pub count: u32,
    /// The starved job the freed slots are earmarked for.
    pub beneficiary: JobId,
}

/// One task the host killed for a preemption, as reported.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct PreemptionRecord {
    /// When it was killed, ms.
    pub at_ms: Time,
    /// The job that lost the task.
    pub victim: JobId,
    /// The task's phase.
    pub phase: Phase,
    /// The node it ran on.
    pub node: NodeId,
    /// The job the slot was earmarked for (`None`: the decision had expired).
    pub beneficiary: Option<JobId>,
    /// Work thrown away: how long the task had run, ms.
    pub lost_ms: Time,
}

#[derive(Clone, Copy, Debug)]
struct InFlight {
    victim: JobId,
    phase: Phase,
    beneficiary: JobId,
    count: u32,
    /// After this the decision is forgotten (the victim's task ended by itself, or the host never
    /// carried it out); the engine may then decide again.
    expires: Time,
}

#[derive(Clone, Copy, Debug)]
struct Earmark {
    node: NodeId,
    /// The slot pool the freed slot is in.
    pool: usize,
    job: JobId,
    expires: Time,
}

/// The engine's preemption bookkeeping.
#[derive(Debug, Default)]
pub(super) struct PreemptState {
    inflight: Vec<InFlight>,
    earmarks: Vec<Earmark>,
    decisions: Vec<Preemption>,
    recent: VecDeque<PreemptionRecord>,
}

/// Start times of one (job, phase)'s running tasks (`engine/starts.rs`).
pub(super) use super::starts::Starts;

impl Engine {
    /// Decides preemptions now (module docs); hosts call it from their timer, after [`Engine::tick`],
    /// never from a heartbeat, and carry out what it returns. Empty when preemption is off.
    pub fn preemptions(&mut self, now: Time) -> &[Preemption] {
        self.preempt.decisions.clear();
        if !self.config.preemption.enabled {
            return &self.preempt.decisions;
        }
        self.preempt.inflight.retain(|f| f.expires >= now);
        self.preempt.earmarks.retain(|m| m.expires >= now);
        let pools: &[usize] = match self.config.pool_mode {
            PoolMode::Shared => &[0],
            PoolMode::Split => &[0, 1],
        };
        for &pool in pools {
            self.preempt_in_pool(pool, now);
        }
        self.stats.preemptions += self.preempt.decisions.iter().map(|d| d.count as u64).sum::<u64>();
        &self.preempt.decisions
    }

    /// The phases whose tasks use slot pool `pool`.
    fn pool_phases(&self, pool: usize) -> &'static [Phase] {
        match (self.config.pool_mode, pool) {
            (PoolMode::Shared, _) => &Phase::ALL,
            (PoolMode::Split, 0) => &[Phase::Map],
            (PoolMode::Split, _) => &[Phase::Reduce],
        }
    }

    fn preempt_in_pool(&mut self, pool: usize, now: Time) {
        let cfg = self.config.preemption;
        let (mut free, mut capacity) = (0u64, 0u64);
        for n in self.nodes.iter().filter(|n| n.alive) {
            free += n.capacity[pool].saturating_sub(n.running[pool]) as u64;
            capacity += n.capacity[pool] as u64;
        }
        let phases = self.pool_phases(pool);
        let in_pool = |ph: Phase| phases.contains(&ph);
        let inflight: u64 = self.preempt.inflight.iter().filter(|f| in_pool(f.phase)).map(|f| f.count as u64).sum();
        let cap = ((cfg.max_fraction * capacity as f64).floor() as u64).max(1);
        let mut budget = cap.saturating_sub(inflight);
        // Free slots, then slots that free by themselves, go to jobs below target in plan order:
        // `ahead` counts the deficits of better-ranked jobs, which take the `free` free slots and then
        // the first `ahead − free` natural frees.
        let mut frees: Option<Vec<Time>> = None;
        let mut ahead = 0u64;
        // The long-task reserve (`engine.rs`): free slots beyond the room long tasks have left are not
        // for long tasks, so they do not end a long deficit's wait (`u32::MAX`-sized when off).
        let long_room = u64::from(self.long_cap[pool].saturating_sub(self.long_running[pool]));
        let mut long_ahead = 0u64;
        // Kills already in flight in this pool land anyway: they go to the starved jobs in plan order
        // as they stand now (a job ranked above the one a kill was decided for takes it first), not to
        // the job they were decided for. `claims`: (job, kills), in plan order.
        let mut unclaimed = inflight;
        let mut claims: Vec<(JobId, u32)> = Vec::new();
        for rank in 0..self.plan.entries.len() {
            let job = self.plan.entries[rank].job;
            let Some(Slot { state, sched, .. }) = self.jobs.get(job) else { continue };
            let deficit_of = |ph: Phase| {
                // A job whose tasks wait for its AM (`engine/admission.rs`) cannot use a slot yet.
                if state.runnable(ph) && !sched.am_gated {
                    sched.target[ph.idx()].saturating_sub(state.phase(ph).running).min(state.phase(ph).pending)
                } else {
                    0
                }
            };
            let mut deficit: u32 = phases.iter().map(|&ph| deficit_of(ph)).sum();
            let long_deficit: u32 = phases.iter().filter(|&&ph| sched.long[ph.idx()]).map(|&ph| deficit_of(ph)).sum();
            // An admitted AM the host has not placed (no node had room: the YARN shim reserves a node
            // for it, which takes the room out of the pool's task capacity) is starved for its slots
            // like a task (module docs, "AMs").
            // Slots already freed for it wait in that reservation (their earmarks stand until the AM is
            // placed or they lapse): not asked for twice.
            let am = self.am_unplaced_slots(job, pool);
            if am > 0 {
                let freed = self.preempt.earmarks.iter().filter(|m| m.job == job && m.pool == pool).count();
                deficit = deficit.saturating_add(am.saturating_sub(u32::try_from(freed).unwrap_or(u32::MAX)));
            }
            // The pool's free slots go to the jobs below target in plan order at the next heartbeats:
            // the job is starved for what they leave of its deficit (a free slot elsewhere, about to go
            // to a better-ranked job or to this one, does not end its wait for the rest), less the kills
            // in flight it claims.
            let free_for_it = free.saturating_sub(ahead);
            let long_deficit = u64::from(long_deficit);
            let long_free = free_for_it.min(long_room.saturating_sub(long_ahead)).min(long_deficit);
            long_ahead += long_deficit;
            let usable = (u64::from(deficit) - long_deficit).saturating_add(long_free);
            let rest = u64::from(deficit).saturating_sub(free_for_it.min(usable));
            // Its wait is the reserve's doing when long tasks fill their share and part of its deficit is long.
            let reserve_bound = long_deficit > long_free;
            let claimed = rest.min(unclaimed);
            if claimed > 0 {
                unclaimed -= claimed;
                claims.push((job, claimed as u32));
            }
            let starving = rest - claimed;
            // Its first preempted slot would otherwise be this natural free (index into `frees`).
            let queued = ahead.saturating_sub(free) as usize;
            ahead += u64::from(deficit) - claimed;
            let Some(s) = self.sched_mut(job) else { continue };
            if starving == 0 {
                s.starved_since[pool] = None;
                continue;
            }
            let since = *s.starved_since[pool].get_or_insert(now);
            if now - since < cfg.delay_ms || budget == 0 {
                continue;
            }
            let want = starving.min(budget) as u32;
            let frees = frees.get_or_insert_with(|| self.natural_frees(pool, now));
            // The beneficiary's `k`-th preempted slot is the `(queued + k)`-th natural free.
            let waits = frees.get(queued..).unwrap_or(&[]);
            let got = self.take_from_victims(job, rank, pool, want, waits, reserve_bound, now);
            budget -= got as u64;
        }
        if !claims.is_empty() {
            self.hand_over_inflight(pool, &claims);
        }
    }

    /// Re-points the kills in flight in `pool` (those that land soonest first) to the jobs of `claims`
    /// (plan order); kills nobody claims keep their beneficiary.
    fn hand_over_inflight(&mut self, pool: usize, claims: &[(JobId, u32)]) {
        let phases = self.pool_phases(pool);
        let (mut mine, mut others): (Vec<InFlight>, Vec<InFlight>) =
            self.preempt.inflight.drain(..).partition(|f| phases.contains(&f.phase));
        mine.sort_by_key(|f| f.expires);
        let mut out = Vec::with_capacity(mine.len() + claims.len());
        let mut claims = claims.iter().copied();
        let mut claim = claims.next();
        for mut f in mine {
            while f.count > 0 {
                let Some((job, left)) = claim.as_mut() else { break };
                let n = f.count.min(*left);
                out.push(InFlight { beneficiary: *job, count: n, ..f });
                f.count -= n;
                *left -= n;
                if *left == 0 {
                    claim = claims.next();
                }
            }
            if f.count > 0 {
                out.push(f);
            }
        }
        others.append(&mut out);
        self.preempt.inflight = others;
    }

    /// When the running tasks of `pool` are expected to free their slots by themselves, soonest first:
    /// each task's phase estimate minus its age. A task past its estimate is assumed to need a quarter of
    /// its estimate more (its true length is unknown; it is not about to free for sure).
    fn natural_frees(&self, pool: usize, now: Time) -> Vec<Time> {
        let phases = self.pool_phases(pool);
        let mut frees = Vec::new();
        for &job in &self.active {
            let Some(Slot { state, starts, .. }) = self.jobs.get(job) else { continue };
            for &ph in phases {
                let est = state.task_ms_estimate(ph);
                frees.extend(starts[ph.idx()].youngest_first().map(|start| {
                    let left = est - (now - start).max(0);
                    if left > 0 {
                        left
                    } else {
                        (est / 4).max(1)
                    }
                }));
            }
        }
        frees.sort_unstable();
        frees
    }

    /// Chooses up to `want` tasks in `pool` to take back for `beneficiary` (plan rank `rank`) from jobs
    /// above their target, lowest-ranked first, when the beneficiary would otherwise wait `waits[k]` for
    /// its `k`-th slot to free by itself (`Time::MAX` past the end); records the decisions. Returns how
    /// many. `reserve_bound`: the long-task reserve keeps the beneficiary waiting (its long deficit
    /// exceeds what the reserve leaves long tasks); lower-ranked jobs' long tasks may then be taken below
    /// their target.
    #[allow(clippy::too_many_arguments)]
    fn take_from_victims(
        &mut self,
        beneficiary: JobId,
        rank: usize,
        pool: usize,
        want: u32,
        waits: &[Time],
        reserve_bound: bool,
        now: Time,
    ) -> u32 {
        let cfg = self.config.preemption;
        let phases = self.pool_phases(pool);
        let expires = now + self.in_flight_window();
        let mut capacity: Option<[u64; 2]> = None;
        let mut got = 0;
        for v in (0..self.plan.entries.len()).rev() {
            if got == want {
                break;
            }
            let victim = self.plan.entries[v].job;
            if v == rank || victim == beneficiary {
                continue;
            }
            let Some(Slot { state, sched, starts }) = self.jobs.get(victim) else { continue };
            if !state.is_active() {
                continue;
            }
            let mut asked = [0u32; 2];
            for f in self.preempt.inflight.iter().filter(|f| f.victim == victim) {
                asked[f.phase.idx()] += f.count;
            }
            let running: u32 = phases.iter().map(|&ph| state.phase(ph).running).sum();
            let mut target: u32 = phases.iter().map(|&ph| sched.target[ph.idx()]).sum();
            // A beneficiary the long-task reserve keeps waiting can only get a slot from a long task: a
            // lower-ranked job's long tasks are then fair game even below its target, which the reserve
            // keeps it from reaching anyway (it cannot take the slot back: it ranks lower, and the
            // beneficiary stays at or below its own target).
            if reserve_bound && v > rank && phases.iter().any(|&ph| sched.long[ph.idx()]) {
                target = 0;
            }
            let mut over = running.saturating_sub(target).saturating_sub(asked.iter().sum());
            if over == 0 {
                continue;
            }
            // Youngest first across the pool's phases, skipping the tasks already asked for (hosts take
            // the youngest, so those are they); stop at the first task not worth preempting.
            let mut take = [0u32; 2];
            let mut iters: Vec<(Phase, Time, std::iter::Peekable<_>)> = phases
                .iter()
                .map(|&ph| {
                    let est = state.task_ms_estimate(ph);
                    (ph, est, starts[ph.idx()].youngest_first().skip(asked[ph.idx()] as usize).peekable())
                })
                .collect();
            // What a millisecond of delay costs the victim against the beneficiary ([`KillPrice`]).
            let weights = match self.plan.kill_price {
                KillPrice::Time => None,
                KillPrice::Stretch => {
                    let capacity = *capacity.get_or_insert_with(|| self.pool_capacities());
                    Some((self.isolated_ms(beneficiary, capacity), self.isolated_ms(victim, capacity)))
                }
            };
            while over > 0 && got + take.iter().sum::<u32>() < want {
                let next = iters
                    .iter_mut()
                    .enumerate()
                    .filter_map(|(i, (_, _, it))| it.peek().map(|&t| (t, i)))
                    .max_by_key(|&(t, i)| (t, std::cmp::Reverse(i)));
                let Some((start, i)) = next else { break };
                let (ph, est, it) = &mut iters[i];
                let age = (now - start).max(0);
                // The beneficiary gets a slot `min(remaining, wait) − grace` sooner (it would otherwise take
                // the slot `wait` names: its turn among the pool's natural frees); the victim redoes
                // `age + grace` of work spread over the slots it keeps running, so its completion moves by about
                // `(age + grace) / parallelism`, but only while more tasks of the phase wait behind the
                // running ones: in its last wave every task is on its critical path (module docs).
                let waiting = state.phase(*ph).pending;
                let parallelism = Time::from(running.min(waiting.saturating_add(1)).max(1));
                // This kill gives the beneficiary its `k`-th slot, which would otherwise be the `k`-th
                // natural free after those of better-ranked starved jobs.
                let k = (got + take.iter().sum::<u32>()) as usize;
                let wait = waits.get(k).copied().unwrap_or(Time::MAX);
                let gain = (*est - age).min(wait) - cfg.grace_ms;
                let worth = match weights {
                    None => gain > 0 && gain.saturating_mul(parallelism) > age + cfg.grace_ms,
                    // In stretch: gain / isolated(beneficiary) · p > (age + grace) / isolated(victim).
                    Some((iso_b, iso_v)) => {
                        gain > 0 && gain as f64 * parallelism as f64 * iso_v > (age + cfg.grace_ms) as f64 * iso_b
                    }
                };
                if !worth {
                    // Older tasks of this phase are even less worth it.
                    while it.next().is_some() {}
                    continue;
                }
                it.next();
                take[ph.idx()] += 1;
                over -= 1;
            }
            drop(iters);
            for ph in Phase::ALL {
                let count = take[ph.idx()];
                if count == 0 {
                    continue;
                }
                got += count;
                self.preempt.decisions.push(Preemption { victim, phase: ph, count, beneficiary });
                self.preempt.inflight.push(InFlight { victim, phase: ph, beneficiary, count, expires });
            }
        }
        got
    }

    /// The job's isolated time as the stretch objectives take it (FLEX's definition, [`KillPrice::Stretch`]):
    /// per phase, its total work over `min(pool capacity, tasks of the phase)`, summed; at least 1 ms.
    fn isolated_ms(&self, job: JobId, capacity: [u64; 2]) -> f64 {
        let Some(Slot { state, .. }) = self.jobs.get(job) else { return 1.0 };
        let mut iso = 0.0;
        for ph in Phase::ALL {
            let pool = if self.config.pool_mode == PoolMode::Shared { 0 } else { ph.idx() };
            let width = capacity[pool].min(state.phase(ph).total as u64).max(1) as f64;
            iso += state.total_work(ph) / width;
        }
        iso.max(1.0)
    }

    /// Slots of each pool over the live nodes.
    fn pool_capacities(&self) -> [u64; 2] {
        let mut capacity = [0u64; 2];
        for n in self.nodes.iter().filter(|n| n.alive) {
            capacity[0] += n.capacity[0] as u64;
            capacity[1] += n.capacity[1] as u64;
        }
        capacity
    }

    /// The host killed a task of `job`'s `phase` on `node` for a preemption after it had run `ran_ms`.
    /// The task goes back to pending (it is re-run; a preempted attempt is not a failure), the work is
    /// counted as lost, and the freed slot is earmarked for the job the decision named.
    pub fn task_preempted(&mut self, job: JobId, phase: Phase, node: NodeId, ran_ms: Time, now: Time) -> Result<()> {
        let ran_ms = ran_ms.clamp(0, crate::model::MAX_TASK_MS);
        self.task_finished(job, phase, node, ran_ms, false, now)?;
        let beneficiary = match self.preempt.inflight.iter().position(|f| f.victim == job && f.phase == phase) {
            Some(i) => {
                let f = &mut self.preempt.inflight[i];
                let b = f.beneficiary;
                f.count -= 1;
                if f.count == 0 {
                    self.preempt.inflight.swap_remove(i);
                }
                Some(b)
            }
            None => None,
        };
        if let Some(b) = beneficiary {
            // A host may report the kill well before the slot is free again (MRv1: the killed attempt's
            // clean-up attempt holds the slot for a JVM start, seconds on a loaded tracker): the earmark
            // stands as long as a kill may be in flight, and the node's heartbeats that find the pool still
            // full extend it (`refresh_earmarks`).
            let expires = now + self.in_flight_window();
            let pool = self.slot_of(phase);
            self.preempt.earmarks.push(Earmark { node, pool, job: b, expires });
        }
        self.stats.preempted_tasks += 1;
        self.stats.preempted_lost_ms = self.stats.preempted_lost_ms.saturating_add(ran_ms as u64);
        if self.preempt.recent.len() >= RECENT_PREEMPTIONS {
            self.preempt.recent.pop_front();
        }
        self.preempt.recent.push_back(PreemptionRecord {
            at_ms: now,
            victim: job,
            phase,
            node,
            beneficiary,
            lost_ms: ran_ms,
        });
        Ok(())
    }

    /// The last [`RECENT_PREEMPTIONS`] preempted tasks, oldest first.
    pub fn recent_preemptions(&self) -> impl DoubleEndedIterator<Item = &PreemptionRecord> + '_ {
        self.preempt.recent.iter()
    }

    /// Tasks asked back and not yet killed.
    pub fn preemptions_in_flight(&self) -> u32 {
        self.preempt.inflight.iter().map(|f| f.count).sum()
    }

    /// How long a kill may be in flight: the grace period, the delay and two epochs. A decision is
    /// forgotten after it, and an earmark waits that long for its slot.
    fn in_flight_window(&self) -> Time {
        let cfg = &self.config.preemption;
        cfg.grace_ms + cfg.delay_ms + 2 * self.config.epoch_ms
    }

    /// A heartbeat of `node` with `free` slots per pool: its earmarks whose pool is still full (the host
    /// has not handed the killed task's slot back yet) wait on, [`Engine::in_flight_window`] from now. An
    /// earmark lapses only once its node stops reporting a full pool, so a slot held back by a slow
    /// clean-up still goes to the job it was taken for, never to the victim's re-queued task.
    pub(super) fn refresh_earmarks(&mut self, node: NodeId, free: [u32; 2], shared: bool, now: Time) {
        if self.preempt.earmarks.is_empty() {
            return;
        }
        let until = now + self.in_flight_window();
        for m in self.preempt.earmarks.iter_mut().filter(|m| m.node == node) {
            let pool_free = if shared { free[0] } else { free[m.pool] };
            if pool_free == 0 && m.expires < until {
                m.expires = until;
            }
        }
    }

    /// Forgets the earmarks of a lost node.
    pub(super) fn drop_earmarks(&mut self, node: NodeId) {
        self.preempt.earmarks.retain(|m| m.node != node);
    }

    /// First choices of a heartbeat of `node`: the slots freed there by preemption go to the jobs they
    /// were taken for (one task each, any locality), then the earmarks are spent.
    pub(super) fn earmarked_choices(&mut self, node: NodeId, budget: &mut [u32; 2], shared: bool) {
        if self.preempt.earmarks.is_empty() {
            return;
        }
        let mut i = 0;
        while i < self.preempt.earmarks.len() {
            let m = self.preempt.earmarks[i];
            // A host may report the kill before the slot is free again (MRv1: the attempt's clean-up still
            // holds it): keep the earmark for a heartbeat with a free slot in its pool (`refresh_earmarks`).
            if m.node != node || budget[m.pool] == 0 {
                i += 1;
                continue;
            }
            // A slot freed for an AM is held by the host's reservation, not offered to tasks: the job's
            // tasks wait for its AM, and the earmark lapses.
            if self.tasks_gated(m.job) {
                i += 1;
                continue;
            }
            self.preempt.earmarks.swap_remove(i);
            let Some(j) = self.jobs.lookup(m.job) else { continue };
            let phase = Phase::ALL.into_iter().find(|&ph| {
                let b = if shared { 0 } else { ph.idx() };
                budget[b] > 0 && j.runnable(ph) && {
                    let offered: u32 =
                        self.choices.iter().filter(|c| c.job == m.job && c.phase == ph).map(|c| c.count).sum();
                    j.phase(ph).pending > offered
                }
            });
            if let Some(ph) = phase {
                self.push_choice(m.job, ph, crate::model::Locality::Any);
                Self::spend(budget, shared, ph);
            }
        }
    }
}

#[cfg(test)]
mod tests;
