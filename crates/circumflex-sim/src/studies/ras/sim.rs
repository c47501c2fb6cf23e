//! A deterministic, time-stepped, resource-aware cluster simulator for the RAS and
//! Reverse-Adaptive reproductions. The slot simulator in `crate::sim` counts slots only; RAS needs
//! per-node CPU, I/O and memory, task slow-down under overcommit, and (chapter 5) a capacity that
//! changes over time. Everything is a function of the inputs: no clock, no randomness here (the
//! studies draw workloads from seeded generators).
//!
//! Model (decisions; the thesis used a real cluster for ch. 4 and a Python simulator for ch. 5):
//! - Time advances in steps of `dt` seconds. Every node's capacity at time t is `f(t)` of a whole
//!   node on every resource (Ω_tt(t), §5.3.3); `f ≡ 1` for chapter 4.
//! - **Contention**: all tasks on a node progress at the same rate `1 / (max(1, cpu, io') · m')`
//!   where cpu, io and mem are the node's load over capacity, `io' = io · (1 + 0.5·(io − 1)⁺)` (seek
//!   thrashing) and `m' = 1 + 2·(mem − 1)⁺` (swapping). So an overcommitted node runs slower than a
//!   full one, which is what makes Fair with many static slots lose (Figure 4.3).
//! - A job's reduces become runnable when all its maps are done (no shuffle overlap: the reduce
//!   task's length includes its shuffle). Tasks are never killed or pre-empted.
//! - Slot schedulers (Fair, FIFO, the EDF reference) have `slots` map (and reduce) slots per node,
//!   scaled by `f(t)` (rounded down) and do not look at resources. Fair gives a free slot to the job
//!   with the fewest running tasks of that type (ties: earlier submission); FIFO to the earliest job.
//! - RAS and Reverse-Adaptive run Algorithm 1 every control period from the tasks running now, then
//!   the Task Scheduler starts tasks on each node within the placement and the node's actual free
//!   capacity. `s_req` uses the mean observed map time (or, before any map completes, the profile's
//!   isolation task time: gap 13) and the running tasks' elapsed times (Eq. 1), against the map
//!   phase's goal (the job's goal minus the estimated reduce phase). Jobs without a goal, or past it,
//!   want all their maps. The Task Scheduler ranks candidates by utility under the needs of the
//!   last placement and the tasks running now.

use circumflex_core::model::Time;
use circumflex_policies::adaptive::ras::placement::{
    fill_node, place, Candidate, Placement, PlacementConfig, PlacementJob,
};
use circumflex_policies::adaptive::ras::resources::{Demand, Profile};
use circumflex_policies::adaptive::ras::reverse::{average_need, reverse_fit, Availability, FitJob};
use circumflex_policies::adaptive::ras::utility::{job_utility, MapNeed};

/// One job of a simulated workload. Times in seconds.
#[derive(Clone, Debug, PartialEq)]
pub struct SimJob {
    /// Label for reports.
    pub name: String,
    /// Submission time.
    pub submit: f64,
    /// Map tasks.
    pub maps: u32,
    /// Length of one map task on an uncontended node.
    pub map_s: f64,
    /// Reduce tasks.
    pub reduces: u32,
    /// Length of one reduce task on an uncontended node.
    pub reduce_s: f64,
    /// Resource profile.
    pub profile: Profile,
    /// Completion-time goal (absolute), if any.
    pub goal: Option<f64>,
}

/// The scheduler under test.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scheduler {
    /// Hadoop's Fair Scheduler with static slots per node.
    Fair {
        /// Map slots per node.
        map_slots: u32,
        /// Reduce slots per node.
        reduce_slots: u32,
    },
    /// FIFO with `slots` slots per node for either phase.
    Fifo {
        /// Slots per node.
        slots: u32,
    },
    /// The minimum-misses reference: EDF that knows f(t) and demotes jobs that cannot make it.
    EdfReference {
        /// Slots per node.
        slots: u32,
    },
    /// RAS placement with `s_req` (chapter 4; chapter 5's "Adaptive").
    Ras,
    /// Reverse-Adaptive: RAS placement with `s_fit` from reverse fitting.
    Reverse,
}

/// Simulation parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct SimConfig {
    /// Nodes.
    pub nodes: usize,
    /// Step, seconds (≥ 1).
    pub dt: f64,
    /// Control period T of RAS / Reverse-Adaptive (and re-ordering of the EDF reference), seconds.
    pub period: f64,
    /// f(t).
    pub availability: Availability,
    /// Algorithm 1 parameters.
    pub placement: PlacementConfig,
    /// Stop at this time even if jobs remain, seconds.
    pub horizon: f64,
    /// How f(t) takes capacity: `false` = every node keeps `f(t)` of each resource; `true` = only
    /// `⌊nodes · f(t)⌋` whole nodes stay available, busy nodes kept first (a task on a node that is
    /// taken anyway is suspended until the node returns).
    pub whole_nodes: bool,
}

/// What happened to one job.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct JobOutcome {
    /// Completion time, if it finished before the horizon.
    pub finish: Option<f64>,
}

/// Result of one run.
#[derive(Clone, Debug, PartialEq)]
pub struct SimOutcome {
    /// Per job, input order.
    pub jobs: Vec<JobOutcome>,
    /// Last completion (or the horizon if some job did not finish).
    pub makespan: f64,
    /// Mean running tasks per node over the time some job was active.
    pub mean_tasks_per_node: f64,
    /// Largest load/capacity ratio any node reached on any resource (RAS keeps it ≤ 1 unless f drops).
    pub peak_overload: f64,
}

#[derive(Clone, Copy, Debug)]
struct Task {
    job: usize,
    reduce: bool,
    left: f64,
    started: f64,
}

#[derive(Clone, Debug, Default)]
struct JobRun {
    pending: [u32; 2],
    running: [u32; 2],
    done: [u32; 2],
    map_time_sum: f64,
    finish: Option<f64>,
}

fn rate(load: Demand, cap: Demand) -> f64 {
    let ratio = |r: usize| {
        if cap.0[r] > 1e-12 {
            load.0[r] / cap.0[r]
        } else if load.0[r] > 0.0 {
            f64::INFINITY
        } else {
            0.0
        }
    };
    let (cpu, io, mem) = (ratio(0), ratio(1), ratio(2));
    let io_eff = io * (1.0 + 0.5 * (io - 1.0).max(0.0));
    let mem_factor = 1.0 + 2.0 * (mem - 1.0).max(0.0);
    let slow = 1.0f64.max(cpu).max(io_eff) * mem_factor;
    if slow.is_finite() {
        1.0 / slow
    } else {
        0.0
    }
}

fn secs_to_ms(s: f64) -> Time {
    (s * 1000.0).round() as Time
}

/// Runs one simulation.
pub fn simulate(jobs: &[SimJob], cfg: &SimConfig, scheduler: Scheduler) -> SimOutcome {
    let nn = cfg.nodes.max(1);
    let dt = cfg.dt.max(1.0);
    let period_steps = ((cfg.period / dt).round() as u64).max(1);
    let mut runs: Vec<JobRun> = jobs.iter().map(|j| JobRun { pending: [j.maps, 0], ..JobRun::default() }).collect();
    let mut node_tasks: Vec<Vec<Task>> = vec![Vec::new(); nn];
    let mut placement = Placement::empty(jobs.len(), nn);
    let mut utilities = vec![0.0; jobs.len()];
    let mut needs = vec![MapNeed::Ras { s_req: 0.0 }; jobs.len()];
    let mut edf_order: Vec<usize> = Vec::new();
    let (mut busy_time, mut task_time, mut peak) = (0.0, 0.0, 0.0f64);
    let mut step: u64 = 0;
    loop {
        let t = step as f64 * dt;
        let active: Vec<usize> = (0..jobs.len()).filter(|&j| jobs[j].submit <= t && runs[j].finish.is_none()).collect();
        let all_done = runs.iter().all(|r| r.finish.is_some());
        if all_done || t >= cfg.horizon {
            break;
        }
        let f = cfg.availability.at(secs_to_ms(t));
        let caps: Vec<Demand> = if cfg.whole_nodes {
            let count = (nn as f64 * f + 1e-9).floor() as usize;
            let mut order: Vec<usize> = (0..nn).collect();
            order.sort_by_key(|&n| (node_tasks[n].is_empty(), n));
            let mut caps = vec![Demand::ZERO; nn];
            for &n in order.iter().take(count) {
                caps[n] = Demand::NODE;
            }
            caps
        } else {
            vec![Demand::NODE.times(f); nn]
        };
        let slot_share = |n: usize| if cfg.whole_nodes { caps[n].0[0] } else { f };
        if step % period_steps == 0 {
            match scheduler {
                Scheduler::Ras | Scheduler::Reverse => {
                    let reverse = scheduler == Scheduler::Reverse;
                    let (pjobs, idx) = placement_jobs(jobs, &runs, &node_tasks, &active, t, cfg, reverse);
                    let mut current = Placement::empty(idx.len(), nn);
                    for (n, tasks) in node_tasks.iter().enumerate() {
                        for task in tasks {
                            if let Some(k) = idx.iter().position(|&j| j == task.job) {
                                let row = if task.reduce { &mut current.reduces[k] } else { &mut current.maps[k] };
                                row[n] += 1;
                            }
                        }
                    }
                    for (k, &j) in idx.iter().enumerate() {
                        needs[j] = pjobs[k].need;
                    }
                    let p = place(&pjobs, &caps, &current, cfg.placement);
                    placement = Placement::empty(jobs.len(), nn);
                    for (k, &j) in idx.iter().enumerate() {
                        placement.maps[j] = p.maps[k].clone();
                        placement.reduces[j] = p.reduces[k].clone();
                    }
                }
                Scheduler::EdfReference { slots } => {
                    edf_order = edf_reference_order(jobs, &runs, &active, t, cfg, slots);
                }
                _ => {}
            }
        }
        // Start tasks.
        match scheduler {
            Scheduler::Ras | Scheduler::Reverse => {
                for &j in &active {
                    let r = &runs[j];
                    let job = &jobs[j];
                    let need = needs[j];
                    utilities[j] = job_utility(
                        need,
                        f64::from(r.running[0]),
                        f64::from(r.pending[0] + r.running[0]),
                        f64::from(r.running[1]),
                        f64::from(if r.done[0] == job.maps { job.reduces - r.done[1] } else { 0 }),
                    );
                }
                for (n, tasks) in node_tasks.iter_mut().enumerate() {
                    let mut used =
                        tasks.iter().fold(Demand::ZERO, |d, task| d.plus(demand_of(&jobs[task.job], task.reduce)));
                    let mut cands = Vec::new();
                    for &j in &active {
                        for reduce in [false, true] {
                            let ph = usize::from(reduce);
                            let here = tasks.iter().filter(|x| x.job == j && x.reduce == reduce).count() as u32;
                            let planned = if reduce { placement.reduces[j][n] } else { placement.maps[j][n] };
                            if runs[j].pending[ph] > 0 && planned > here {
                                cands.push(Candidate {
                                    job: j,
                                    reduce,
                                    demand: demand_of(&jobs[j], reduce),
                                    budget: planned - here,
                                    pending: runs[j].pending[ph],
                                    utility: utilities[j],
                                });
                            }
                        }
                    }
                    for i in fill_node(&mut cands, &mut used, caps[n]) {
                        let c = cands[i];
                        start(&mut runs[c.job], tasks, &jobs[c.job], c.job, c.reduce, t);
                    }
                }
            }
            Scheduler::Fair { map_slots, reduce_slots } => {
                for (n, tasks) in node_tasks.iter_mut().enumerate() {
                    for (reduce, slots) in [(false, map_slots), (true, reduce_slots)] {
                        let ph = usize::from(reduce);
                        let limit = (f64::from(slots) * slot_share(n) + 1e-9).floor() as usize;
                        while tasks.iter().filter(|x| x.reduce == reduce).count() < limit {
                            let pick = active
                                .iter()
                                .copied()
                                .filter(|&j| runs[j].pending[ph] > 0)
                                .min_by_key(|&j| (runs[j].running[ph], j));
                            let Some(j) = pick else { break };
                            start(&mut runs[j], tasks, &jobs[j], j, reduce, t);
                        }
                    }
                }
            }
            Scheduler::Fifo { slots } | Scheduler::EdfReference { slots } => {
                let order: Vec<usize> = if matches!(scheduler, Scheduler::Fifo { .. }) {
                    active.clone()
                } else {
                    edf_order.iter().copied().filter(|j| active.contains(j)).collect()
                };
                for (n, tasks) in node_tasks.iter_mut().enumerate() {
                    let limit = (f64::from(slots) * slot_share(n) + 1e-9).floor() as usize;
                    while tasks.len() < limit {
                        let pick = order.iter().copied().find(|&j| runs[j].pending[0] > 0 || runs[j].pending[1] > 0);
                        let Some(j) = pick else { break };
                        let reduce = runs[j].pending[0] == 0;
                        start(&mut runs[j], tasks, &jobs[j], j, reduce, t);
                    }
                }
            }
        }
        // Progress.
        let mut running_now = 0usize;
        for (n, tasks) in node_tasks.iter_mut().enumerate() {
            let cap = caps[n];
            let load = tasks.iter().fold(Demand::ZERO, |d, task| d.plus(demand_of(&jobs[task.job], task.reduce)));
            peak = peak.max(load.max_ratio(cap));
            let speed = rate(load, cap);
            running_now += tasks.len();
            let mut k = 0;
            while k < tasks.len() {
                let task = &mut tasks[k];
                let progress = speed * dt;
                if progress >= task.left && speed > 0.0 {
                    let end = t + task.left / speed;
                    let done = tasks.swap_remove(k);
                    finish_task(&mut runs[done.job], &jobs[done.job], done, end);
                } else {
                    task.left -= progress;
                    k += 1;
                }
            }
        }
        if !active.is_empty() {
            busy_time += dt;
            task_time += running_now as f64 * dt;
        }
        step += 1;
    }
    let outcomes: Vec<JobOutcome> = runs.iter().map(|r| JobOutcome { finish: r.finish }).collect();
    let makespan = if outcomes.iter().all(|o| o.finish.is_some()) {
        outcomes.iter().filter_map(|o| o.finish).fold(0.0, f64::max)
    } else {
        cfg.horizon
    };
    let mean_tasks_per_node = if busy_time > 0.0 { task_time / busy_time / nn as f64 } else { 0.0 };
    SimOutcome { jobs: outcomes, makespan, mean_tasks_per_node, peak_overload: peak }
}

/// The map phase's goal: the job's goal minus the reduce phase's estimated length (waves of
/// reducers at the reduce profile's tasks per node, times the reduce task length), as the thesis's
/// ch. 3 derives phase goals (digest gap 3).
fn map_goal(job: &SimJob, nodes: usize) -> Option<f64> {
    let per_node = (1.0 / job.profile.reduce.max_ratio(Demand::NODE).max(1e-9)).floor().max(1.0);
    let waves = (f64::from(job.reduces) / (per_node * nodes as f64)).ceil();
    job.goal.map(|g| g - waves * job.reduce_s)
}

fn demand_of(job: &SimJob, reduce: bool) -> Demand {
    if reduce {
        job.profile.reduce
    } else {
        job.profile.map
    }
}

fn start(run: &mut JobRun, tasks: &mut Vec<Task>, job: &SimJob, j: usize, reduce: bool, t: f64) {
    let ph = usize::from(reduce);
    run.pending[ph] -= 1;
    run.running[ph] += 1;
    let left = if reduce { job.reduce_s } else { job.map_s };
    tasks.push(Task { job: j, reduce, left: left.max(1e-6), started: t });
}

fn finish_task(run: &mut JobRun, job: &SimJob, task: Task, end: f64) {
    let ph = usize::from(task.reduce);
    run.running[ph] -= 1;
    run.done[ph] += 1;
    if !task.reduce {
        run.map_time_sum += end - task.started;
        if run.done[0] == job.maps {
            run.pending[1] = job.reduces;
        }
    }
    if run.done[0] == job.maps && run.done[1] == job.reduces {
        run.finish = Some(end);
    }
}

/// Builds Algorithm 1's input for the active jobs; returns it with the job index of each row.
fn placement_jobs(
    jobs: &[SimJob],
    runs: &[JobRun],
    node_tasks: &[Vec<Task>],
    active: &[usize],
    t: f64,
    cfg: &SimConfig,
    reverse: bool,
) -> (Vec<PlacementJob>, Vec<usize>) {
    let mut elapsed = vec![0.0; jobs.len()];
    for task in node_tasks.iter().flatten() {
        if !task.reduce {
            elapsed[task.job] += t - task.started;
        }
    }
    let work: Vec<f64> = active
        .iter()
        .map(|&j| {
            let r = &runs[j];
            let mu = if r.done[0] > 0 { r.map_time_sum / f64::from(r.done[0]) } else { jobs[j].map_s };
            f64::from(r.pending[0]) * mu + (f64::from(r.running[0]) * mu - elapsed[j]).max(0.0)
        })
        .collect();
    let fit = reverse.then(|| {
        let fit_jobs: Vec<FitJob> = active
            .iter()
            .zip(&work)
            .map(|(&j, &w)| {
                let r = &runs[j];
                let mu = if r.done[0] > 0 { r.map_time_sum / f64::from(r.done[0]) } else { jobs[j].map_s };
                FitJob {
                    work_ms: w * 1000.0,
                    task_ms: mu * 1000.0,
                    deadline: map_goal(&jobs[j], cfg.nodes).map(secs_to_ms),
                    tasks_per_node: (1.0 / jobs[j].profile.map.max_ratio(Demand::NODE).max(1e-9)).floor().max(1.0),
                }
            })
            .collect();
        reverse_fit(&fit_jobs, secs_to_ms(t), secs_to_ms(cfg.period), cfg.nodes as f64, &cfg.availability)
    });
    let pjobs = active
        .iter()
        .enumerate()
        .map(|(k, &j)| {
            let r = &runs[j];
            let s_pend = r.pending[0] + r.running[0];
            let goal = map_goal(&jobs[j], cfg.nodes).map(secs_to_ms);
            let s_req = average_need(work[k] * 1000.0, secs_to_ms(t), goal, f64::from(s_pend));
            let need = match &fit {
                Some(fit) => MapNeed::Reverse { s_fit: fit[k], s_req },
                None => MapNeed::Ras { s_req },
            };
            let maps_done = r.done[0] == jobs[j].maps;
            PlacementJob {
                profile: jobs[j].profile,
                need,
                s_pend,
                r_pend: if maps_done { jobs[j].reduces - r.done[1] } else { 0 },
                place_reducers: maps_done,
                reducers_reducing: true,
            }
        })
        .collect();
    (pjobs, active.to_vec())
}

/// The minimum-misses reference's priority order: EDF over the jobs that can still make their
/// deadline, found Moore–Hodgson style against the slot capacity `f(t)` predicts (the job with the
/// most remaining work is demoted whenever the cumulative EDF work overflows the capacity up to a
/// deadline); demoted and goal-less jobs follow, by deadline.
fn edf_reference_order(
    jobs: &[SimJob],
    runs: &[JobRun],
    active: &[usize],
    t: f64,
    cfg: &SimConfig,
    slots: u32,
) -> Vec<usize> {
    let mut by_deadline: Vec<usize> = active.to_vec();
    by_deadline.sort_by(|&a, &b| {
        let da = jobs[a].goal.unwrap_or(f64::INFINITY);
        let db = jobs[b].goal.unwrap_or(f64::INFINITY);
        da.total_cmp(&db).then(a.cmp(&b))
    });
    let work = |j: usize| {
        let r = &runs[j];
        f64::from(r.pending[0] + r.running[0]) * jobs[j].map_s
            + f64::from(jobs[j].reduces - r.done[1]) * jobs[j].reduce_s
    };
    let slot_factor = cfg.nodes as f64 * f64::from(slots);
    let mut kept: Vec<usize> = Vec::new();
    let mut demoted: Vec<usize> = Vec::new();
    let mut total = 0.0;
    for &j in &by_deadline {
        let Some(d) = jobs[j].goal else {
            demoted.push(j);
            continue;
        };
        kept.push(j);
        total += work(j);
        let capacity = slot_factor * cfg.availability.integral(secs_to_ms(t), secs_to_ms(d)) / 1000.0;
        while total > capacity + 1e-9 {
            let Some(pos) = (0..kept.len()).max_by(|&a, &b| work(kept[a]).total_cmp(&work(kept[b]))) else { break };
            let out = kept.remove(pos);
            total -= work(out);
            demoted.push(out);
        }
    }
    demoted.sort_by(|&a, &b| {
        let da = jobs[a].goal.unwrap_or(f64::INFINITY);
        let db = jobs[b].goal.unwrap_or(f64::INFINITY);
        da.total_cmp(&db).then(a.cmp(&b))
    });
    kept.extend(demoted);
    kept
}

#[cfg(test)]
mod tests {
    use super::*;
    use circumflex_policies::adaptive::ras::resources::gridmix;

    fn cfg(nodes: usize) -> SimConfig {
        SimConfig {
            nodes,
            dt: 1.0,
            period: 10.0,
            availability: Availability::constant(1.0),
            placement: PlacementConfig::default(),
            horizon: 1e6,
            whole_nodes: false,
        }
    }

    fn sort_job(maps: u32, goal: Option<f64>) -> SimJob {
        SimJob {
            name: "sort".into(),
            submit: 0.0,
            maps,
            map_s: 10.0,
            reduces: 2,
            reduce_s: 5.0,
            profile: gridmix::sort(),
            goal,
        }
    }

    #[test]
    fn ras_alone_packs_two_sort_maps_per_node_and_never_overloads() {
        let out = simulate(&[sort_job(40, None)], &cfg(2), Scheduler::Ras);
        // 40 maps, 4 at a time (I/O 45%), 10 s each: 10 waves, then one reduce wave of 5 s.
        assert!((out.makespan - 105.0).abs() <= 2.0, "{out:?}");
        assert!(out.peak_overload <= 1.0 + 1e-9);
    }

    #[test]
    fn overcommitted_fair_is_slower_than_fitting_fair() {
        let jobs = [sort_job(40, None)];
        let two = simulate(&jobs, &cfg(2), Scheduler::Fair { map_slots: 2, reduce_slots: 1 });
        let eight = simulate(&jobs, &cfg(2), Scheduler::Fair { map_slots: 8, reduce_slots: 1 });
        assert!(eight.makespan > two.makespan, "{} vs {}", eight.makespan, two.makespan);
        assert!(eight.peak_overload > 1.0);
    }

    #[test]
    fn simulation_is_deterministic_and_every_scheduler_finishes() {
        let mut jobs = vec![sort_job(20, Some(100.0)), sort_job(10, Some(60.0))];
        jobs[1].submit = 5.0;
        jobs[1].profile = gridmix::select();
        for s in [
            Scheduler::Ras,
            Scheduler::Reverse,
            Scheduler::Fifo { slots: 2 },
            Scheduler::EdfReference { slots: 2 },
            Scheduler::Fair { map_slots: 2, reduce_slots: 1 },
        ] {
            let a = simulate(&jobs, &cfg(2), s);
            assert_eq!(a, simulate(&jobs, &cfg(2), s));
            assert!(a.jobs.iter().all(|o| o.finish.is_some()), "{s:?}: {a:?}");
        }
    }

    #[test]
    fn availability_drop_slows_slot_schedulers_and_caps_ras() {
        let mut c = cfg(2);
        c.availability = Availability::constant(0.5);
        let out = simulate(&[sort_job(40, None)], &c, Scheduler::Ras);
        // Half a node fits one Sort map (I/O 45%): 2 at a time, 20 waves.
        assert!(out.makespan >= 200.0, "{out:?}");
        assert!(out.peak_overload <= 1.0 + 1e-9);
    }
}
