//! The efficiency-ratio paper's discrete-slot model and its schedulers (ASRPT, FIFO, Fair, LRPT,
//! DSRPT) plus the virtual SRPT whose flow time is the lower bound of Lemma 1.
//!
//! Model (digest §1): `N` identical machines; time is slotted (slots are numbered from 1); each
//! machine does one unit of work per slot. Job `i` arrives in slot `a_i` with `M_i` unit Map tasks
//! and Reduce tasks of integer sizes. Maps may run in the arrival slot; Reduce work may run only in
//! a slot *after* the slot in which the job's last Map ran. Flow time `F_i = f_i − a_i + 1`.
//!
//! Modes (Definition 1): **preemptive** — Reduce work is divisible into units and any number of
//! machines may work on a job's remaining Reduce units in a slot (the digest's recommended
//! per-unit reading, gap 2); **non-preemptive** — each Reduce task runs on one machine for
//! consecutive slots until done once started.
//!
//! Decisions where the paper is silent (digest §6), applied to every scheduler alike:
//! - Ties everywhere are broken by `(key, arrival, id)` ascending (gap 9).
//! - The virtual SRPT processes a job's Map units before its Reduce units (gap 10).
//! - ASRPT's list is sorted once per slot, before its three phases (gap 11), with the three fixes
//!   to the literal Algorithm 1 (phase-1 guard `um > 0`, phase-2 guard "Maps finished in an earlier
//!   slot", non-preemptive counts unstarted tasks only).
//! - Non-preemptive: when fewer machines than unstarted Reduce tasks are free, tasks start in index
//!   order (gap 13). Running tasks keep their machines before any policy decides.
//! - Fair divides only the free machines; remainders go one each in `(arrival, id)` order (gap 14).
//! - LRPT's key is the total remaining Map + Reduce work (gap 15).
//! - A job with no Reduce work finishes in the slot of its last Map; a job with no Maps has its
//!   Reduce work available from its arrival slot (gap 3).
//!
//! Everything is integer arithmetic and deterministic.

use serde::{Deserialize, Serialize};

/// A job of the slot model.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SlotJob {
    /// Arrival slot (>= 1).
    pub arrival: u32,
    /// Number of unit Map tasks `M_i`.
    pub maps: u32,
    /// Sizes of the Reduce tasks `R_i^(k)` (each >= 1); their sum is `R_i`.
    pub reduce_tasks: Vec<u32>,
}

impl SlotJob {
    /// A job with `maps` unit Maps and the given Reduce task sizes.
    pub fn new(arrival: u32, maps: u32, reduce_tasks: Vec<u32>) -> SlotJob {
        SlotJob { arrival, maps, reduce_tasks }
    }

    /// Total Reduce units `R_i`.
    pub fn reduce_units(&self) -> u64 {
        self.reduce_tasks.iter().map(|&r| r as u64).sum()
    }
}

/// Preemptive or non-preemptive Reduce tasks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Reduce work divisible into units.
    Preemptive,
    /// Each Reduce task runs to completion on one machine once started.
    NonPreemptive,
}

/// The schedulers of the study.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SlotScheduler {
    /// Available Shortest Remaining Processing Time (Algorithm 1, with the digest's fixes).
    Asrpt,
    /// Arrival order, greedy.
    Fifo,
    /// Max-min fair water-filling over jobs with available work.
    Fair,
    /// Largest remaining (Map + Reduce) work first.
    Lrpt,
    /// Delayed SRPT: SRPT's Maps, SRPT's Reduce units one slot later, FCFS (analysis construct;
    /// preemptive only; not work-conserving).
    Dsrpt,
}

impl SlotScheduler {
    /// The four work-conserving schedulers of the paper's figures.
    pub const STUDY: [SlotScheduler; 4] =
        [SlotScheduler::Asrpt, SlotScheduler::Fifo, SlotScheduler::Fair, SlotScheduler::Lrpt];

    /// Lower-case name.
    pub fn name(self) -> &'static str {
        match self {
            SlotScheduler::Asrpt => "asrpt",
            SlotScheduler::Fifo => "fifo",
            SlotScheduler::Fair => "fair",
            SlotScheduler::Lrpt => "lrpt",
            SlotScheduler::Dsrpt => "dsrpt",
        }
    }
}

/// Result of one run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SlotOutcome {
    /// Completion slot of each job (same order as the input).
    pub finish: Vec<u32>,
    /// Flow time `f_i − a_i + 1` of each job.
    pub flow: Vec<u32>,
    /// Sum of flow times.
    pub total_flow: u64,
    /// Busy machines in each slot, from slot 1.
    pub busy: Vec<u32>,
    /// Slots in which a machine idled while some arrived job had available work left unassigned
    /// (digest §1.9). Zero for every work-conserving scheduler; DSRPT may idle.
    pub idle_with_available_work: u32,
}

impl SlotOutcome {
    fn from_finish(jobs: &[SlotJob], finish: Vec<u32>, busy: Vec<u32>) -> SlotOutcome {
        let flow: Vec<u32> = jobs.iter().zip(&finish).map(|(j, &f)| f + 1 - j.arrival).collect();
        let total_flow = flow.iter().map(|&f| f as u64).sum();
        SlotOutcome { finish, flow, total_flow, busy, idle_with_available_work: 0 }
    }

    /// Number of jobs in the system summed over slots `1..=t` (the truncated flow-time measure).
    pub fn jobs_in_system_until(&self, jobs: &[SlotJob], t: u32) -> u64 {
        jobs.iter()
            .zip(&self.finish)
            .map(|(j, &f)| if j.arrival > t { 0 } else { (f.min(t) + 1 - j.arrival) as u64 })
            .sum()
    }
}

/// Checks a job list: arrivals >= 1, Reduce tasks of size >= 1, at least one unit of work.
pub fn validate(jobs: &[SlotJob]) -> circumflex_core::error::Result<()> {
    for (i, j) in jobs.iter().enumerate() {
        if j.arrival == 0 {
            return Err(circumflex_core::error::Error::job(&format!("jobs[{i}].arrival"), 0, "a slot >= 1"));
        }
        if j.reduce_tasks.contains(&0) {
            return Err(circumflex_core::error::Error::job(&format!("jobs[{i}].reduce_tasks"), 0, "task sizes >= 1"));
        }
        if j.maps == 0 && j.reduce_tasks.is_empty() {
            return Err(circumflex_core::error::Error::job(
                &format!("jobs[{i}]"),
                "no work",
                "at least one Map or Reduce unit",
            ));
        }
    }
    Ok(())
}

/// Progress of the virtual SRPT (the relaxed problem without the Map→Reduce dependency).
#[derive(Clone, Debug)]
struct VirtualSrpt {
    /// Remaining Map + Reduce units.
    rem: Vec<u64>,
    /// Remaining Map units.
    rem_map: Vec<u64>,
    finish: Vec<u32>,
    order: Vec<usize>,
}

impl VirtualSrpt {
    fn new(jobs: &[SlotJob]) -> VirtualSrpt {
        VirtualSrpt {
            rem: jobs.iter().map(|j| j.maps as u64 + j.reduce_units()).collect(),
            rem_map: jobs.iter().map(|j| j.maps as u64).collect(),
            finish: vec![0; jobs.len()],
            order: Vec::with_capacity(jobs.len()),
        }
    }

    /// Advances one slot. Fills `map_load[i]` with SRPT's Map units for job i in slot `t` and
    /// `reduce_served` with (job, units) of Reduce work in the order SRPT served them.
    fn step(&mut self, jobs: &[SlotJob], n: u32, t: u32, map_load: &mut [u64], reduce_served: &mut Vec<(usize, u64)>) {
        map_load.iter_mut().for_each(|m| *m = 0);
        reduce_served.clear();
        self.order.clear();
        self.order.extend((0..jobs.len()).filter(|&i| jobs[i].arrival <= t && self.rem[i] > 0));
        let rem = &self.rem;
        self.order.sort_by_key(|&i| (rem[i], jobs[i].arrival, i));
        let mut d = n as u64;
        for k in 0..self.order.len() {
            if d == 0 {
                break;
            }
            let i = self.order[k];
            let x = self.rem[i].min(d);
            let maps = x.min(self.rem_map[i]);
            map_load[i] = maps;
            if x > maps {
                reduce_served.push((i, x - maps));
            }
            self.rem_map[i] -= maps;
            self.rem[i] -= x;
            d -= x;
            if self.rem[i] == 0 {
                self.finish[i] = t;
            }
        }
    }

    fn done(&self) -> bool {
        self.rem.iter().all(|&r| r == 0)
    }
}

/// The SRPT lower bound (Lemma 1): total flow time of the virtual SRPT. Valid for both modes.
pub fn srpt_bound(jobs: &[SlotJob], n: u32) -> SlotOutcome {
    let mut srpt = VirtualSrpt::new(jobs);
    let mut map_load = vec![0; jobs.len()];
    let mut served = Vec::new();
    let mut busy = Vec::new();
    let mut t = 0;
    while !srpt.done() {
        t += 1;
        srpt.step(jobs, n, t, &mut map_load, &mut served);
        let b: u64 = map_load.iter().sum::<u64>() + served.iter().map(|s| s.1).sum::<u64>();
        busy.push(b as u32);
    }
    SlotOutcome::from_finish(jobs, srpt.finish.clone(), busy)
}

/// Per-job state of a real (dependency-respecting) schedule.
#[derive(Clone, Debug)]
struct JobRun {
    /// Unscheduled Map tasks.
    um: u64,
    /// Slot in which the last Map ran (0 = not yet; jobs without Maps use arrival − 1).
    map_done: u32,
    /// Preemptive: remaining Reduce units.
    rr: u64,
    /// Non-preemptive: remaining units per task and whether it has started.
    tasks: Vec<(u32, bool)>,
    finish: u32,
}

impl JobRun {
    fn new(job: &SlotJob) -> JobRun {
        JobRun {
            um: job.maps as u64,
            map_done: if job.maps == 0 { job.arrival - 1 } else { 0 },
            rr: job.reduce_units(),
            tasks: job.reduce_tasks.iter().map(|&r| (r, false)).collect(),
            finish: 0,
        }
    }

    fn maps_finished_before(&self, t: u32) -> bool {
        self.um == 0 && self.map_done < t
    }

    fn reduce_left(&self, mode: Mode) -> u64 {
        match mode {
            Mode::Preemptive => self.rr,
            Mode::NonPreemptive => self.tasks.iter().map(|&(r, _)| r as u64).sum(),
        }
    }

    /// Total remaining real work (Map + Reduce units).
    fn remaining(&self, mode: Mode) -> u64 {
        self.um + self.reduce_left(mode)
    }

    /// Reduce work a policy may assign machines to in slot `t`: remaining units (preemptive) or
    /// unstarted tasks (non-preemptive).
    fn available_reduce(&self, mode: Mode, t: u32) -> u64 {
        if !self.maps_finished_before(t) {
            return 0;
        }
        match mode {
            Mode::Preemptive => self.rr,
            Mode::NonPreemptive => self.tasks.iter().filter(|&&(r, s)| r > 0 && !s).count() as u64,
        }
    }
}

/// A real schedule under construction: shared slot mechanics for every scheduler.
struct Run<'a> {
    jobs: &'a [SlotJob],
    mode: Mode,
    state: Vec<JobRun>,
    busy_now: u64,
}

impl<'a> Run<'a> {
    fn schedule_maps(&mut self, i: usize, x: u64, t: u32) {
        if x == 0 {
            return;
        }
        let s = &mut self.state[i];
        debug_assert!(x <= s.um);
        s.um -= x;
        if s.um == 0 {
            s.map_done = t;
        }
        self.busy_now += x;
    }

    /// Assigns `x` machines to job i's available Reduce work in slot `t`.
    fn schedule_reduces(&mut self, i: usize, x: u64) {
        if x == 0 {
            return;
        }
        let s = &mut self.state[i];
        match self.mode {
            Mode::Preemptive => s.rr -= x,
            Mode::NonPreemptive => {
                let mut left = x;
                for task in s.tasks.iter_mut() {
                    if left == 0 {
                        break;
                    }
                    if task.0 > 0 && !task.1 {
                        task.1 = true;
                        task.0 -= 1; // the first unit runs in the start slot
                        left -= 1;
                    }
                }
            }
        }
        self.busy_now += x;
    }

    /// Non-preemptive: every running task does one unit first. Returns machines used.
    fn run_started_tasks(&mut self) -> u64 {
        if self.mode == Mode::Preemptive {
            return 0;
        }
        let mut used = 0;
        for s in &mut self.state {
            for task in s.tasks.iter_mut() {
                if task.1 && task.0 > 0 {
                    task.0 -= 1;
                    used += 1;
                }
            }
        }
        self.busy_now += used;
        used
    }

    fn close_slot(&mut self, t: u32) {
        for (i, s) in self.state.iter_mut().enumerate() {
            if s.finish == 0 && self.jobs[i].arrival <= t && s.um == 0 && s.reduce_left(self.mode) == 0 {
                s.finish = t;
            }
        }
    }

    fn all_done(&self) -> bool {
        self.state.iter().all(|s| s.finish > 0)
    }

    /// Available work of job i in slot t (Map tasks if any are unscheduled, else Reduce).
    fn available(&self, i: usize, t: u32) -> (u64, bool) {
        let s = &self.state[i];
        if self.jobs[i].arrival > t || s.finish > 0 {
            return (0, true);
        }
        if s.um > 0 {
            (s.um, true)
        } else {
            (s.available_reduce(self.mode, t), false)
        }
    }

    fn assign(&mut self, i: usize, x: u64, is_map: bool, t: u32) {
        if is_map {
            self.schedule_maps(i, x, t)
        } else {
            self.schedule_reduces(i, x)
        }
    }
}

/// Runs `scheduler` on `jobs` with `n` machines until every job finishes.
///
/// `Dsrpt` is defined for the preemptive mode only; in non-preemptive mode it is an error.
pub fn simulate(
    jobs: &[SlotJob],
    n: u32,
    mode: Mode,
    scheduler: SlotScheduler,
) -> circumflex_core::error::Result<SlotOutcome> {
    validate(jobs)?;
    if n == 0 {
        return Err(circumflex_core::error::Error::config("machines", 0, "at least 1 machine"));
    }
    if scheduler == SlotScheduler::Dsrpt {
        if mode != Mode::Preemptive {
            return Err(circumflex_core::error::Error::config(
                "scheduler",
                "dsrpt",
                "dsrpt only in the preemptive mode",
            ));
        }
        return Ok(dsrpt(jobs, n));
    }
    let mut run = Run { jobs, mode, state: jobs.iter().map(JobRun::new).collect(), busy_now: 0 };
    let mut srpt = VirtualSrpt::new(jobs);
    let mut map_load = vec![0u64; jobs.len()];
    let mut served = Vec::new();
    let mut order: Vec<usize> = Vec::with_capacity(jobs.len());
    let mut busy = Vec::new();
    let mut idle_with_work = 0u32;
    let mut t = 0u32;
    while !run.all_done() {
        t += 1;
        run.busy_now = 0;
        if scheduler == SlotScheduler::Asrpt {
            srpt.step(jobs, n, t, &mut map_load, &mut served);
        }
        let mut d = n as u64 - run.run_started_tasks();
        order.clear();
        order.extend((0..jobs.len()).filter(|&i| jobs[i].arrival <= t && run.state[i].finish == 0));
        match scheduler {
            SlotScheduler::Asrpt => {
                let st = &run.state;
                order.sort_by_key(|&i| (st[i].remaining(mode), jobs[i].arrival, i));
                // Phase 1: Maps that the virtual SRPT runs this slot.
                for &i in &order {
                    let x = map_load[i].min(run.state[i].um).min(d);
                    run.schedule_maps(i, x, t);
                    d -= x;
                }
                // Phase 2: available Reduce work (Maps finished in an earlier slot).
                for &i in &order {
                    if d == 0 {
                        break;
                    }
                    let x = run.state[i].available_reduce(mode, t).min(d);
                    run.schedule_reduces(i, x);
                    d -= x;
                }
                // Phase 3: remaining Maps.
                for &i in &order {
                    if d == 0 {
                        break;
                    }
                    let x = run.state[i].um.min(d);
                    run.schedule_maps(i, x, t);
                    d -= x;
                }
            }
            SlotScheduler::Fifo | SlotScheduler::Lrpt => {
                if scheduler == SlotScheduler::Fifo {
                    order.sort_by_key(|&i| (jobs[i].arrival, i));
                } else {
                    let st = &run.state;
                    order.sort_by_key(|&i| (std::cmp::Reverse(st[i].remaining(mode)), jobs[i].arrival, i));
                }
                for &i in &order {
                    if d == 0 {
                        break;
                    }
                    let (avail, is_map) = run.available(i, t);
                    let x = avail.min(d);
                    run.assign(i, x, is_map, t);
                    d -= x;
                }
            }
            SlotScheduler::Fair => {
                order.sort_by_key(|&i| (jobs[i].arrival, i));
                let avail: Vec<(usize, u64, bool)> = order
                    .iter()
                    .map(|&i| {
                        let (c, m) = run.available(i, t);
                        (i, c, m)
                    })
                    .filter(|a| a.1 > 0)
                    .collect();
                let alloc = water_fill(d, &avail.iter().map(|a| a.1).collect::<Vec<_>>());
                for (k, &(i, _, is_map)) in avail.iter().enumerate() {
                    run.assign(i, alloc[k], is_map, t);
                    d -= alloc[k];
                }
            }
            SlotScheduler::Dsrpt => unreachable!("handled above"),
        }
        if d > 0 && (0..jobs.len()).any(|i| run.available(i, t).0 > 0) {
            idle_with_work += 1;
        }
        busy.push(run.busy_now as u32);
        run.close_slot(t);
    }
    let finish = run.state.iter().map(|s| s.finish).collect();
    let mut out = SlotOutcome::from_finish(jobs, finish, busy);
    out.idle_with_available_work = idle_with_work;
    Ok(out)
}

/// Max-min fair division of `d` machines over demands `c` (in priority order): equal rounds of
/// `floor(D / active)`, capped by demand; a remainder smaller than the active count goes one
/// machine each to the first jobs.
pub fn water_fill(d: u64, c: &[u64]) -> Vec<u64> {
    let mut alloc = vec![0u64; c.len()];
    let mut left = d;
    let mut active: Vec<usize> = (0..c.len()).filter(|&k| c[k] > 0).collect();
    while left > 0 && !active.is_empty() {
        let share = left / active.len() as u64;
        if share == 0 {
            for &k in active.iter().take(left as usize) {
                alloc[k] += 1;
            }
            break;
        }
        for &k in &active {
            let y = share.min(c[k] - alloc[k]);
            alloc[k] += y;
            left -= y;
        }
        active.retain(|&k| alloc[k] < c[k]);
    }
    alloc
}

/// Delayed SRPT (§2.3): Maps exactly as SRPT; SRPT's Reduce units of slot t−1 join a FCFS queue
/// served in slot t with the machines SRPT's Maps leave free.
fn dsrpt(jobs: &[SlotJob], n: u32) -> SlotOutcome {
    let mut srpt = VirtualSrpt::new(jobs);
    let mut map_load = vec![0u64; jobs.len()];
    let mut served = Vec::new();
    let mut queue: std::collections::VecDeque<(usize, u64)> = std::collections::VecDeque::new();
    let mut reduce_left: Vec<u64> = jobs.iter().map(|j| j.reduce_units()).collect();
    let mut maps_left: Vec<u64> = jobs.iter().map(|j| j.maps as u64).collect();
    let mut finish = vec![0u32; jobs.len()];
    let mut busy = Vec::new();
    let mut t = 0u32;
    let mut pending_from_last: Vec<(usize, u64)> = Vec::new();
    while finish.contains(&0) {
        t += 1;
        srpt.step(jobs, n, t, &mut map_load, &mut served);
        let maps_now: u64 = map_load.iter().sum();
        for (i, &m) in map_load.iter().enumerate() {
            maps_left[i] -= m;
        }
        queue.extend(pending_from_last.drain(..));
        let mut cap = n as u64 - maps_now;
        let mut used = maps_now;
        while cap > 0 {
            let Some(front) = queue.front_mut() else { break };
            let x = front.1.min(cap);
            front.1 -= x;
            reduce_left[front.0] -= x;
            cap -= x;
            used += x;
            if front.1 == 0 {
                queue.pop_front();
            }
        }
        pending_from_last.extend(served.iter().copied());
        busy.push(used as u32);
        for i in 0..jobs.len() {
            if finish[i] == 0 && jobs[i].arrival <= t && maps_left[i] == 0 && reduce_left[i] == 0 {
                finish[i] = t;
            }
        }
    }
    SlotOutcome::from_finish(jobs, finish, busy)
}

/// The optimal total flow time by exhaustive search (tiny instances only: a handful of jobs, few
/// machines). Explores every feasible per-slot assignment, idling included, with memoisation.
pub fn brute_force_optimum(jobs: &[SlotJob], n: u32, mode: Mode) -> u64 {
    use std::collections::HashMap;
    // State per job: (unscheduled maps, map_done slot relative flag, reduce task remaining + started).
    #[derive(Clone, PartialEq, Eq, Hash)]
    struct St {
        t: u32,
        um: Vec<u32>,
        maps_done_before: Vec<bool>,
        tasks: Vec<Vec<(u32, bool)>>,
        rr: Vec<u32>,
    }
    fn finished(jobs: &[SlotJob], s: &St, mode: Mode, i: usize) -> bool {
        jobs[i].arrival <= s.t
            && s.um[i] == 0
            && match mode {
                Mode::Preemptive => s.rr[i] == 0,
                Mode::NonPreemptive => s.tasks[i].iter().all(|&(r, _)| r == 0),
            }
    }
    fn solve(jobs: &[SlotJob], n: u32, mode: Mode, s: St, memo: &mut HashMap<St, u64>) -> u64 {
        // Cost counted per slot: each arrived unfinished job pays 1 for slot s.t + 1.
        if (0..jobs.len()).all(|i| finished(jobs, &s, mode, i) && jobs[i].arrival <= s.t) {
            return 0;
        }
        if let Some(&c) = memo.get(&s) {
            return c;
        }
        if s.t > horizon(jobs) {
            return INFEASIBLE;
        }
        let t = s.t + 1;
        // Machines forced by running non-preemptive tasks.
        let mut base = s.clone();
        base.t = t;
        let mut forced = 0u32;
        if mode == Mode::NonPreemptive {
            for tasks in base.tasks.iter_mut() {
                for task in tasks.iter_mut() {
                    if task.1 && task.0 > 0 {
                        task.0 -= 1;
                        forced += 1;
                    }
                }
            }
        }
        let present: Vec<usize> =
            (0..jobs.len()).filter(|&i| jobs[i].arrival <= t && !finished(jobs, &s, mode, i)).collect();
        let cost_now = present.len() as u64;
        let free = n - forced.min(n);
        // Enumerate per present job: (maps x, reduce y) with totals <= free.
        let mut best = u64::MAX;
        let mut choice = vec![(0u32, 0u32); present.len()];
        enumerate(jobs, mode, &base, &present, 0, free, &mut choice, &mut |ch: &[(u32, u32)]| {
            let mut next = base.clone();
            for (k, &i) in present.iter().enumerate() {
                let (x, y) = ch[k];
                if y > 0 {
                    match mode {
                        Mode::Preemptive => next.rr[i] -= y,
                        Mode::NonPreemptive => {
                            let mut left = y;
                            for task in next.tasks[i].iter_mut() {
                                if left > 0 && task.0 > 0 && !task.1 {
                                    task.1 = true;
                                    task.0 -= 1;
                                    left -= 1;
                                }
                            }
                        }
                    }
                }
                next.um[i] -= x;
            }
            // Reduce availability for the next slot: Maps all done by the end of this slot.
            for (i, job) in jobs.iter().enumerate() {
                next.maps_done_before[i] = job.arrival <= t && next.um[i] == 0;
            }
            let c = solve(jobs, n, mode, next, memo);
            best = best.min(c);
        });
        let total = cost_now.saturating_add(best);
        memo.insert(s, total);
        total
    }
    const INFEASIBLE: u64 = u64::MAX / 4;
    /// No optimal schedule runs past the last arrival plus the total work plus one slot per job.
    fn horizon(jobs: &[SlotJob]) -> u32 {
        let last = jobs.iter().map(|j| j.arrival).max().unwrap_or(0);
        let work: u64 = jobs.iter().map(|j| j.maps as u64 + j.reduce_units()).sum();
        last + work as u32 + jobs.len() as u32 + 1
    }
    /// Called with each complete per-slot choice of (maps, reduce units) per present job.
    type Visit<'a> = dyn FnMut(&[(u32, u32)]) + 'a;
    #[allow(clippy::too_many_arguments)]
    fn enumerate(
        jobs: &[SlotJob],
        mode: Mode,
        s: &St,
        present: &[usize],
        k: usize,
        free: u32,
        choice: &mut [(u32, u32)],
        f: &mut Visit<'_>,
    ) {
        if k == present.len() {
            f(choice);
            return;
        }
        let i = present[k];
        let max_x = s.um[i].min(free);
        let max_y = if s.maps_done_before[i] {
            match mode {
                Mode::Preemptive => s.rr[i],
                Mode::NonPreemptive => s.tasks[i].iter().filter(|&&(r, st)| r > 0 && !st).count() as u32,
            }
        } else {
            0
        };
        let _ = jobs;
        for x in 0..=max_x {
            for y in 0..=max_y.min(free - x) {
                choice[k] = (x, y);
                enumerate(jobs, mode, s, present, k + 1, free - x - y, choice, f);
            }
        }
    }
    let start = St {
        t: 0,
        um: jobs.iter().map(|j| j.maps).collect(),
        maps_done_before: jobs.iter().map(|j| j.maps == 0).collect(),
        tasks: jobs.iter().map(|j| j.reduce_tasks.iter().map(|&r| (r, false)).collect()).collect(),
        rr: jobs.iter().map(|j| j.reduce_units() as u32).collect(),
    };
    let mut memo = HashMap::new();
    solve(jobs, n, mode, start, &mut memo)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn example_a() -> Vec<SlotJob> {
        // (a, M, R): J1 = (1, 2, 4), J2 = (1, 1, 1), J3 = (2, 1, 2); preemptive.
        vec![SlotJob::new(1, 2, vec![4]), SlotJob::new(1, 1, vec![1]), SlotJob::new(2, 1, vec![2])]
    }

    fn example_b() -> Vec<SlotJob> {
        vec![SlotJob::new(1, 1, vec![4]), SlotJob::new(1, 2, vec![1, 1]), SlotJob::new(2, 1, vec![1])]
    }

    fn total(jobs: &[SlotJob], n: u32, mode: Mode, s: SlotScheduler) -> u64 {
        simulate(jobs, n, mode, s).unwrap().total_flow
    }

    #[test]
    fn example_a_preemptive_matches_the_digest() {
        let jobs = example_a();
        let lb = srpt_bound(&jobs, 2);
        assert_eq!(lb.total_flow, 9);
        assert_eq!(lb.flow, vec![6, 1, 2]);
        let asrpt = simulate(&jobs, 2, Mode::Preemptive, SlotScheduler::Asrpt).unwrap();
        assert_eq!(asrpt.total_flow, 11);
        assert_eq!(asrpt.flow, vec![6, 2, 3]);
        assert_eq!(total(&jobs, 2, Mode::Preemptive, SlotScheduler::Dsrpt), 12);
        let fifo = simulate(&jobs, 2, Mode::Preemptive, SlotScheduler::Fifo).unwrap();
        assert_eq!((fifo.total_flow, fifo.flow.clone()), (13, vec![3, 5, 5]));
        let fair = simulate(&jobs, 2, Mode::Preemptive, SlotScheduler::Fair).unwrap();
        assert_eq!((fair.total_flow, fair.flow.clone()), (12, vec![6, 2, 4]));
        assert_eq!(total(&jobs, 2, Mode::Preemptive, SlotScheduler::Lrpt), 15);
        assert_eq!(brute_force_optimum(&jobs, 2, Mode::Preemptive), 10);
    }

    #[test]
    fn example_b_non_preemptive_matches_the_digest() {
        let jobs = example_b();
        assert_eq!(srpt_bound(&jobs, 2).total_flow, 10);
        let asrpt = simulate(&jobs, 2, Mode::NonPreemptive, SlotScheduler::Asrpt).unwrap();
        assert_eq!((asrpt.total_flow, asrpt.flow.clone()), (12, vec![7, 2, 3]));
        let fifo = simulate(&jobs, 2, Mode::NonPreemptive, SlotScheduler::Fifo).unwrap();
        assert_eq!((fifo.total_flow, fifo.flow.clone()), (14, vec![5, 4, 5]));
        assert_eq!(total(&jobs, 2, Mode::NonPreemptive, SlotScheduler::Fair), 14);
        assert_eq!(total(&jobs, 2, Mode::NonPreemptive, SlotScheduler::Lrpt), 15);
        assert_eq!(brute_force_optimum(&jobs, 2, Mode::NonPreemptive), 12);
        assert_eq!(brute_force_optimum(&jobs, 2, Mode::Preemptive), 11);
    }

    #[test]
    fn example_c_adversary_has_no_constant_competitive_ratio() {
        for (q, online, lrpt, lb, opt) in [
            (1u32, 8u64, 8u64, 8u64, Some(8u64)),
            (2, 18, 19, 14, Some(15)),
            (3, 32, 35, 20, Some(21)),
            (5, 72, 82, 32, None),
        ] {
            let mut jobs = vec![SlotJob::new(1, 1, vec![2 * q + 1])];
            for k in 0..q {
                jobs.push(SlotJob::new(3 + 2 * k, 1, vec![1]));
            }
            for s in [SlotScheduler::Asrpt, SlotScheduler::Fifo, SlotScheduler::Fair] {
                assert_eq!(total(&jobs, 1, Mode::NonPreemptive, s), online, "Q = {q}, {s:?}");
            }
            assert_eq!(online, 2 * (q as u64 + 1).pow(2));
            assert_eq!(total(&jobs, 1, Mode::NonPreemptive, SlotScheduler::Lrpt), lrpt, "Q = {q}");
            assert_eq!(srpt_bound(&jobs, 1).total_flow, lb);
            assert_eq!(lb, 6 * q as u64 + 2);
            if let Some(opt) = opt {
                assert_eq!(brute_force_optimum(&jobs, 1, Mode::NonPreemptive), opt, "Q = {q}");
            }
        }
    }

    #[test]
    fn water_fill_is_max_min() {
        assert_eq!(water_fill(10, &[2, 10, 10]), vec![2, 4, 4]);
        assert_eq!(water_fill(2, &[5, 5, 5]), vec![1, 1, 0]);
        assert_eq!(water_fill(0, &[5]), vec![0]);
    }

    #[test]
    fn invalid_jobs_are_errors() {
        assert!(simulate(&[SlotJob::new(0, 1, vec![1])], 1, Mode::Preemptive, SlotScheduler::Fifo).is_err());
        assert!(simulate(&[SlotJob::new(1, 1, vec![0])], 1, Mode::Preemptive, SlotScheduler::Fifo).is_err());
        assert!(simulate(&[SlotJob::new(1, 1, vec![1])], 1, Mode::NonPreemptive, SlotScheduler::Dsrpt).is_err());
    }

    fn arb_jobs(max_jobs: usize, max_work: u32) -> impl Strategy<Value = Vec<SlotJob>> {
        prop::collection::vec(
            (1u32..5, 1..=max_work, prop::collection::vec(1..=max_work, 1..3))
                .prop_map(|(a, m, r)| SlotJob::new(a, m, r)),
            1..=max_jobs,
        )
    }

    /// Replays a schedule's invariants through an independent check of busy counts and bounds.
    fn check_invariants(jobs: &[SlotJob], n: u32, mode: Mode, s: SlotScheduler, out: &SlotOutcome) {
        assert!(out.busy.iter().all(|&b| b <= n), "capacity");
        let work: u64 = jobs.iter().map(|j| j.maps as u64 + j.reduce_units()).sum();
        assert_eq!(out.busy.iter().map(|&b| b as u64).sum::<u64>(), work, "conservation");
        for (j, &f) in jobs.iter().zip(&out.flow) {
            if !j.reduce_tasks.is_empty() && j.maps > 0 {
                assert!(f >= 2, "map before reduce needs two slots");
            }
            if mode == Mode::NonPreemptive {
                let longest = *j.reduce_tasks.iter().max().unwrap_or(&0);
                assert!(f > longest.min(f), "{s:?}");
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]
        #[test]
        fn srpt_bound_is_below_every_scheduler(jobs in arb_jobs(6, 6), n in 1u32..5) {
            let lb = srpt_bound(&jobs, n).total_flow;
            for mode in [Mode::Preemptive, Mode::NonPreemptive] {
                for s in SlotScheduler::STUDY {
                    let out = simulate(&jobs, n, mode, s).unwrap();
                    check_invariants(&jobs, n, mode, s, &out);
                    prop_assert!(lb <= out.total_flow, "{s:?} {mode:?}: {} < lb {lb}", out.total_flow);
                }
            }
            let d = simulate(&jobs, n, Mode::Preemptive, SlotScheduler::Dsrpt).unwrap();
            prop_assert!(lb <= d.total_flow);
        }

        #[test]
        fn study_schedulers_are_work_conserving(jobs in arb_jobs(6, 5), n in 1u32..5) {
            for mode in [Mode::Preemptive, Mode::NonPreemptive] {
                for s in SlotScheduler::STUDY {
                    let out = simulate(&jobs, n, mode, s).unwrap();
                    prop_assert_eq!(out.idle_with_available_work, 0, "{:?} {:?}", s, mode);
                }
            }
        }

        #[test]
        fn asrpt_within_two_of_the_optimum_on_tiny_preemptive_instances(jobs in arb_jobs(3, 3), n in 1u32..3) {
            let opt = brute_force_optimum(&jobs, n, Mode::Preemptive);
            let asrpt = simulate(&jobs, n, Mode::Preemptive, SlotScheduler::Asrpt).unwrap().total_flow;
            prop_assert!(srpt_bound(&jobs, n).total_flow <= opt);
            prop_assert!(opt <= asrpt);
            prop_assert!(asrpt <= 2 * opt, "asrpt {asrpt} opt {opt}");
        }
    }
}
