//! Reproduction of the RTMR paper's experiments (digest §5): Workload I (88 Facebook-binned jobs)
//! and Workload II (89 larger jobs) on the paper's 100 map + 30 reduce slots, run in the simulator
//! under RTMR, RTMR without feedback, the Deadline Constraint baseline and FIFO.
//!
//! Decisions where the paper is silent (digest A17, §5.7), all recorded in the report:
//! - **Cluster**: 10 identical nodes of 10 map and 3 reduce slots (l = 100, q = 30). The paper's
//!   mix of 4- and 2-map-slot nodes matters only through per-node heartbeats; the admission test
//!   treats slots as anonymous.
//! - **Task times** (Loadgen's keepmap/keepred are not given): map tasks U[8, 16] s and reduce
//!   tasks U[12, 24] s. Calibrated so that FIFO's utilization lands near the paper's (21.3% and
//!   69.7%): Workload I has about 2,410 maps and 717 reduces, and 21.3% of 130 slots over its
//!   ~25-minute turnaround is about 12 s per map and 18 s per reduce.
//! - **Cost parameters**: the paper's `c^max` covers the worst case over memory, local and remote
//!   disk and the slowest node type, so it is pessimistic against a typical task. We start it at
//!   `estimate_factor` × the longest actual task; the factor (4) is the one calibration knob, chosen
//!   on 3 seeds to bring one number of the paper close (RTMR without feedback accepting 46.6% of
//!   Workload I; 45.5% on those seeds, 38.2% over the report's 10). Every other figure is a prediction. With factor ≥ 1 the estimates hold and RTMR's guarantee
//!   applies; the property test checks it at factor 1, the tightest case.
//! - **Heartbeats**: 3 s with out-of-band heartbeats on task completion (Hadoop 0.21's behaviour).
//! - **Arrivals**: exponential gaps with mean 14 s for both workloads; bins shuffled per seed;
//!   uniform integers inside every interval of Tables III and IV.
//! - **DC on Workload II** runs without the jobs that have more reduces than reduce slots, as the
//!   paper did (81 of 89 jobs there).
//! - **Utilization** (A19): slot time of successful jobs (all jobs for FIFO) over 130 slots times the
//!   span from the first submission to the last completion of an accepted job.

use rand::RngExt;
use serde::Serialize;

use crate::sim::simulator::SimResult;
use crate::sim::{workload_rng, ClusterSpec, SimConfig, SimJob, Simulation, Workload};
use crate::stats;
use circumflex_core::config::EngineConfig;
use circumflex_core::error::Result;
use circumflex_core::model::Time;
use circumflex_core::policy::PoolMode;

/// Which of the paper's workloads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum WorkloadKind {
    /// Table III: 88 jobs in 6 bins.
    I,
    /// Table IV: 89 jobs in 5 bins.
    II,
}

/// Task duration model (actual times, uniform per task) and how pessimistic the scheduler's
/// initial worst-case estimates are.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct TaskTimes {
    /// Map task range, ms.
    pub map_ms: (Time, Time),
    /// Reduce task range, ms.
    pub reduce_ms: (Time, Time),
    /// Initial `c^max` = this factor × the longest actual task (≥ 1 keeps the guarantee).
    pub estimate_factor: f64,
    /// The Deadline Constraint baseline's `n_m^min`: the original fluid formula (true) or the
    /// discrete one.
    pub dc_fluid: bool,
}

impl Default for TaskTimes {
    fn default() -> Self {
        TaskTimes { map_ms: (8_000, 16_000), reduce_ms: (12_000, 24_000), estimate_factor: 4.0, dc_fluid: false }
    }
}

/// A bin: job count, map range, reduce range, relative deadline range in seconds.
type Bin = (u32, (u32, u32), (u32, u32), (u32, u32));

const WORKLOAD_I: [Bin; 6] = [
    (38, (1, 1), (1, 5), (200, 300)),
    (16, (2, 2), (1, 5), (200, 300)),
    (14, (10, 10), (5, 10), (300, 400)),
    (8, (50, 50), (10, 20), (500, 800)),
    (6, (100, 100), (20, 30), (1000, 1500)),
    (6, (200, 200), (30, 30), (2000, 2500)),
];

const WORKLOAD_II: [Bin; 5] = [
    (9, (1, 10), (1, 5), (200, 300)),
    (24, (10, 50), (5, 10), (300, 500)),
    (25, (50, 100), (15, 30), (1000, 1500)),
    (18, (100, 200), (25, 50), (1500, 2500)),
    (13, (200, 300), (35, 70), (2500, 3500)),
];

/// Draws a workload: bins shuffled, exponential arrivals (mean 14 s), uniform sizes and deadlines.
pub fn generate(kind: WorkloadKind, seed: u64, times: TaskTimes) -> Result<Workload> {
    let mut rng = workload_rng(seed);
    let bins: &[Bin] = match kind {
        WorkloadKind::I => &WORKLOAD_I,
        WorkloadKind::II => &WORKLOAD_II,
    };
    let mut kinds: Vec<usize> =
        bins.iter().enumerate().flat_map(|(b, bin)| std::iter::repeat(b).take(bin.0 as usize)).collect();
    // Fisher-Yates with the workload stream.
    for i in (1..kinds.len()).rev() {
        let j = rng.random_range(0..=i);
        kinds.swap(i, j);
    }
    let mut t: Time = 0;
    let mut jobs = Vec::with_capacity(kinds.len());
    for (n, &b) in kinds.iter().enumerate() {
        let (_, maps, reduces, deadline) = bins[b];
        let m = rng.random_range(maps.0..=maps.1);
        let r = rng.random_range(reduces.0..=reduces.1);
        let d = rng.random_range(deadline.0..=deadline.1) as Time * 1000;
        let map_ms = (0..m).map(|_| rng.random_range(times.map_ms.0..=times.map_ms.1)).collect();
        let reduce_ms = (0..r).map(|_| rng.random_range(times.reduce_ms.0..=times.reduce_ms.1)).collect();
        let mut job = SimJob::new(t, map_ms, reduce_ms);
        job.spec.deadline_ms = Some(t + d);
        job.spec.external_id = format!("{kind:?}-bin{}-job{n}", b + 1);
        jobs.push(job);
        // Exponential gap, mean 14 s.
        let u: f64 = rng.random_range(f64::EPSILON..1.0);
        t += (-u.ln() * 14_000.0).round() as Time;
    }
    Workload::new(format!("rtmr-workload-{kind:?}-seed{seed}"), jobs)
}

/// The schedulers of Tables V and VI.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Scheduler {
    /// Deadline Constraint (Kc–Anyanwu).
    Dc,
    /// RTMR with the feedback controller.
    Rtmr,
    /// RTMR without it.
    RtmrNoFeedback,
    /// Hadoop FIFO (accepts all).
    Fifo,
}

impl Scheduler {
    /// All four, in the paper's column order.
    pub const ALL: [Scheduler; 4] = [Scheduler::Dc, Scheduler::Rtmr, Scheduler::RtmrNoFeedback, Scheduler::Fifo];

    /// Column title.
    pub fn label(self) -> &'static str {
        match self {
            Scheduler::Dc => "Deadline Constraint",
            Scheduler::Rtmr => "RTMR",
            Scheduler::RtmrNoFeedback => "RTMR w/o Feedback",
            Scheduler::Fifo => "Hadoop FIFO",
        }
    }
}

/// The paper's cluster: l = 100 map and q = 30 reduce slots.
pub fn paper_cluster() -> ClusterSpec {
    ClusterSpec { nodes: 10, map_slots: 10, reduce_slots: 3, racks: 1, pool: PoolMode::Split }
}

/// Simulator configuration for `scheduler`, with cost parameters at the task-time maxima.
pub fn sim_config(scheduler: Scheduler, cluster: ClusterSpec, times: TaskTimes, seed: u64) -> SimConfig {
    let mut engine = EngineConfig {
        policy: match scheduler {
            Scheduler::Dc => "deadline-constraint",
            Scheduler::Rtmr | Scheduler::RtmrNoFeedback => "rtmr",
            Scheduler::Fifo => "fifo",
        }
        .into(),
        pool_mode: cluster.pool,
        node_locality_delay: 0,
        rack_locality_delay: 0,
        ..EngineConfig::default()
    };
    let worst = |ms: Time| ((ms as f64) * times.estimate_factor.max(1.0)).round().to_string();
    engine.params.insert("circumflex.rtmr.map.task.ms".into(), worst(times.map_ms.1));
    engine.params.insert("circumflex.rtmr.reduce.task.ms".into(), worst(times.reduce_ms.1));
    engine.params.insert("circumflex.rtmr.feedback".into(), (scheduler != Scheduler::RtmrNoFeedback).to_string());
    engine.params.insert("circumflex.dc.min.maps".into(), if times.dc_fluid { "fluid" } else { "discrete" }.into());
    SimConfig {
        cluster,
        engine,
        heartbeat_ms: 3_000,
        out_of_band_heartbeat: true,
        replicas: 0,
        seed,
        record_tasks: true,
        ..SimConfig::default()
    }
}

/// Table V/VI metrics of one run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Outcome {
    /// Jobs submitted.
    pub jobs: u32,
    /// Jobs accepted.
    pub accepted: u32,
    /// Accepted jobs finished by their deadline.
    pub successful: u32,
    /// `accepted / jobs`.
    pub accept_ratio: f64,
    /// `successful / accepted`.
    pub success_ratio: f64,
    /// Slot time of successful jobs (FIFO: all jobs) over 130 slots × the workload's span.
    pub utilization: f64,
}

/// Computes the paper's metrics from a run.
pub fn outcome(result: &SimResult, all_count_for_utilization: bool) -> Outcome {
    let slots = result.config.cluster.total_slots() as f64;
    let mut slot_time = vec![0i64; result.jobs.len()];
    for t in &result.tasks {
        slot_time[t.job as usize] += t.end_ms - t.start_ms;
    }
    let first = result.jobs.iter().map(|j| j.arrival_ms).min().unwrap_or(0);
    let last = result.jobs.iter().filter(|j| !j.rejected).filter_map(|j| j.finish_ms).max().unwrap_or(first);
    let mut o = Outcome { jobs: result.jobs.len() as u32, ..Outcome::default() };
    let mut used = 0i64;
    for (j, st) in result.jobs.iter().zip(&slot_time) {
        if j.rejected {
            continue;
        }
        o.accepted += 1;
        let ok = j.deadline_met() == Some(true);
        if ok {
            o.successful += 1;
        }
        if ok || all_count_for_utilization {
            used += st;
        }
    }
    o.accept_ratio = o.accepted as f64 / o.jobs.max(1) as f64;
    o.success_ratio = o.successful as f64 / o.accepted.max(1) as f64;
    o.utilization = used as f64 / (slots * (last - first).max(1) as f64);
    o
}

/// Runs one scheduler on one seed of a workload.
pub fn run_one(kind: WorkloadKind, scheduler: Scheduler, seed: u64, times: TaskTimes) -> Result<Outcome> {
    let mut workload = generate(kind, seed, times)?;
    let cluster = paper_cluster();
    if scheduler == Scheduler::Dc {
        // The paper ran DC without the jobs it can never accept (R > q).
        let q = cluster.nodes * cluster.reduce_slots;
        workload = Workload::new(
            workload.name.clone(),
            workload.jobs.into_iter().filter(|j| j.reduce_ms.len() as u32 <= q).collect(),
        )?;
    }
    let result = Simulation::new(sim_config(scheduler, cluster, times, seed), &workload)?.run()?;
    Ok(outcome(&result, scheduler == Scheduler::Fifo))
}

/// Mean and spread of outcomes over seeds.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Row {
    /// Scheduler.
    pub scheduler: Scheduler,
    /// One outcome per seed.
    pub runs: Vec<Outcome>,
}

impl Row {
    /// Mean and sample standard deviation over the seeds of `f`.
    fn mean(&self, f: impl Fn(&Outcome) -> f64) -> (f64, f64) {
        let xs: Vec<f64> = self.runs.iter().map(f).collect();
        (stats::mean(&xs), stats::sample_sd(&xs))
    }
}

/// The paper's Table V / VI values: (accept, success, utilization) per scheduler, in percent.
fn paper(kind: WorkloadKind, s: Scheduler) -> (Option<f64>, Option<f64>, f64) {
    match (kind, s) {
        (WorkloadKind::I, Scheduler::Dc) => (Some(71.6), Some(85.7), 5.7),
        (WorkloadKind::I, Scheduler::Rtmr) => (Some(56.8), Some(100.0), 15.5),
        (WorkloadKind::I, Scheduler::RtmrNoFeedback) => (Some(46.6), Some(100.0), 11.6),
        (WorkloadKind::I, Scheduler::Fifo) => (None, None, 21.3),
        (WorkloadKind::II, Scheduler::Dc) => (Some(49.4), Some(22.5), 0.7),
        (WorkloadKind::II, Scheduler::Rtmr) => (Some(24.7), Some(100.0), 64.6),
        (WorkloadKind::II, Scheduler::RtmrNoFeedback) => (Some(15.7), Some(100.0), 49.8),
        (WorkloadKind::II, Scheduler::Fifo) => (None, None, 69.7),
    }
}

/// Runs every scheduler on seeds `1..=seeds` of `kind`.
pub fn run_workload(kind: WorkloadKind, seeds: u64, times: TaskTimes) -> Result<Vec<Row>> {
    Scheduler::ALL
        .iter()
        .map(|&s| {
            Ok(Row {
                scheduler: s,
                runs: (1..=seeds).map(|seed| run_one(kind, s, seed, times)).collect::<Result<_>>()?,
            })
        })
        .collect()
}

/// A Markdown table: ours (mean ± sd over seeds) next to the paper's.
pub fn table(kind: WorkloadKind, rows: &[Row]) -> String {
    let mut s = format!(
        "| {kind:?} | accept % (ours) | accept % (paper) | on time % of accepted (ours) | (paper) | utilization % (ours) | (paper) |\n|---|---|---|---|---|---|---|\n"
    );
    for r in rows {
        let (pa, ps, pu) = paper(kind, r.scheduler);
        let (a, asd) = r.mean(|o| 100.0 * o.accept_ratio);
        let (o, osd) = r.mean(|o| 100.0 * o.success_ratio);
        let (u, usd) = r.mean(|o| 100.0 * o.utilization);
        let fifo = r.scheduler == Scheduler::Fifo;
        s.push_str(&format!(
            "| {} | {} | {} | {o:.1} ± {osd:.1} | {} | {u:.1} ± {usd:.1} | {pu} |\n",
            r.scheduler.label(),
            if fifo { "n/a".into() } else { format!("{a:.1} ± {asd:.1}") },
            pa.map_or("n/a".into(), |v| format!("{v}")),
            ps.map_or("n/a".into(), |v| format!("{v}")),
        ));
    }
    s
}

/// Runs both workloads and writes `report.md`, `study.json` and `COMMAND` into `dir`.
pub fn write_report(dir: &std::path::Path, seeds: u64, times: TaskTimes, command: &str) -> Result<String> {
    let out = crate::output::OutDir::create(dir)?;
    let w1 = run_workload(WorkloadKind::I, seeds, times)?;
    let w2 = run_workload(WorkloadKind::II, seeds, times)?;
    let mean = |rows: &[Row], s: Scheduler, f: &dyn Fn(&Outcome) -> f64| {
        rows.iter().find(|r| r.scheduler == s).map_or(0.0, |r| r.mean(f).0)
    };
    let acc = |o: &Outcome| 100.0 * o.accept_ratio;
    let ok = |o: &Outcome| 100.0 * o.success_ratio;
    let util = |o: &Outcome| 100.0 * o.utilization;
    let mut md = format!(
        "# RTMR reproduction: Workloads I and II (Tables V and VI)\n\n\
         Simulated cluster: 100 map + 30 reduce slots (10 nodes x 10 + 3), 3 s heartbeats with out-of-band \
         heartbeats; map tasks U[{}, {}] s, reduce tasks U[{}, {}] s; initial worst-case estimates {}x the longest \
         task; DC's n_min {}; seeds 1..={seeds}; mean ± sd over seeds. Decisions and calibration: \
         `rust-core/src/rtmr/study.rs` module docs.\n\n",
        times.map_ms.0 / 1000,
        times.map_ms.1 / 1000,
        times.reduce_ms.0 / 1000,
        times.reduce_ms.1 / 1000,
        times.estimate_factor,
        if times.dc_fluid { "fluid" } else { "discrete" }
    );
    md.push_str("## Workload I (88 jobs)\n\n");
    md.push_str(&table(WorkloadKind::I, &w1));
    md.push_str("\n## Workload II (89 jobs; DC runs the jobs with at most 30 reduces)\n\n");
    md.push_str(&table(WorkloadKind::II, &w2));
    let rt_ok = [&w1, &w2].iter().all(|w| {
        w.iter()
            .filter(|r| matches!(r.scheduler, Scheduler::Rtmr | Scheduler::RtmrNoFeedback))
            .all(|r| r.runs.iter().all(|o| o.successful == o.accepted))
    });
    md.push_str(&format!(
        "\n## The paper's claims against these measurements\n\n\
         1. *RTMR achieves a 100% job success ratio.* Measured: {} \n\
         2. *Feedback raises acceptance and utilization* (46.6→56.8% and 11.6→15.5% on I; 15.7→24.7% and \
         49.8→64.6% on II). Measured: acceptance {:.1}→{:.1}% and utilization {:.1}→{:.1}% on I; \
         {:.1}→{:.1}% and {:.1}→{:.1}% on II.\n\
         3. *DC accepts more jobs than RTMR but misses deadlines* (85.7% and 22.5% on time). Measured: DC accepts \
         {:.1}% (I) and {:.1}% (II) against RTMR's {:.1}% and {:.1}%, and is on time for {:.1}% and {:.1}%.\n\
         4. *RTMR's utilization approaches FIFO's* (15.5 vs 21.3%, 64.6 vs 69.7%). Measured: {:.1} vs {:.1}% and \
         {:.1} vs {:.1}%.\n\n",
        if rt_ok {
            "every job RTMR accepted, with and without feedback, on every seed, met its deadline (holds)."
        } else {
            "**some accepted jobs missed** (see the on-time column)."
        },
        mean(&w1, Scheduler::RtmrNoFeedback, &acc),
        mean(&w1, Scheduler::Rtmr, &acc),
        mean(&w1, Scheduler::RtmrNoFeedback, &util),
        mean(&w1, Scheduler::Rtmr, &util),
        mean(&w2, Scheduler::RtmrNoFeedback, &acc),
        mean(&w2, Scheduler::Rtmr, &acc),
        mean(&w2, Scheduler::RtmrNoFeedback, &util),
        mean(&w2, Scheduler::Rtmr, &util),
        mean(&w1, Scheduler::Dc, &acc),
        mean(&w2, Scheduler::Dc, &acc),
        mean(&w1, Scheduler::Rtmr, &acc),
        mean(&w2, Scheduler::Rtmr, &acc),
        mean(&w1, Scheduler::Dc, &ok),
        mean(&w2, Scheduler::Dc, &ok),
        mean(&w1, Scheduler::Rtmr, &util),
        mean(&w1, Scheduler::Fifo, &util),
        mean(&w2, Scheduler::Rtmr, &util),
        mean(&w2, Scheduler::Fifo, &util),
    ));
    md.push_str(
        "## Why the numbers differ from the paper\n\n\
         - **Absolute acceptance.** Our workloads are synthetic (the paper's Loadgen inputs and task times are not \
         given) and one knob, the estimates' pessimism, was fitted to one number. Acceptance is very sensitive to \
         it: with exact worst cases (factor 1) RTMR accepts almost every job of both workloads; at factor 4 it accepts \
         fewer. On the real cluster `c^max` also only ever grows: one straggler on a slow node or a remote read \
         inflates every later estimate (digest A6). Our task times are bounded, so `c^max` never grows during a run, \
         and Workload II (large jobs, judged later in the run) keeps a higher acceptance than the paper's 24.7%.\n\
         - **DC's misses.** In our simulation actual tasks never exceed DC's worst-case estimates, so DC's \
         single-instant reduce check, its one real flaw, is covered by the slack those estimates leave, and DC is on \
         time for every job it accepts. The paper's DC ran on heterogeneous hardware with real stragglers, where its \
         minimum-parallelism map plan and all-at-once reduce stage have no slack; that is where its misses (and its \
         very low utilization, since missed jobs do not count) come from. The digest's examples 8 and 9 show both DC \
         flaws on hand-built instances (unit tests in `rtmr/dc.rs`).\n\
         - **Utilization** is higher for everyone because our synthetic task times were calibrated to FIFO's \
         utilization (21.3% and 69.7%); RTMR's share of FIFO's is the comparable figure.\n",
    );
    md.push_str(&format!("\n## Reproduce\n\n```\n{command}\n```\n"));
    let write = |name: &str, text: &str| out.write(name, text);
    write("report.md", &md)?;
    let json = serde_json::to_string_pretty(&(times, &w1, &w2))
        .map_err(|e| circumflex_core::error::Error::Json { what: "rtmr study", message: e.to_string() })?;
    write("study.json", &json)?;
    write("COMMAND", &format!("{command}\n"))?;
    Ok(md)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn workloads_match_the_paper_tables() {
        let w1 = generate(WorkloadKind::I, 1, TaskTimes::default()).unwrap();
        assert_eq!(w1.jobs.len(), 88);
        assert_eq!(w1.jobs.iter().filter(|j| j.map_ms.len() == 200).count(), 6);
        let w2 = generate(WorkloadKind::II, 1, TaskTimes::default()).unwrap();
        assert_eq!(w2.jobs.len(), 89);
        assert!(w2.jobs.iter().all(|j| j.spec.deadline_ms.is_some()));
        assert_eq!(w1, generate(WorkloadKind::I, 1, TaskTimes::default()).unwrap());
    }

    /// P8 (the paper's theorem): with actual task times within the estimates, every job RTMR
    /// accepts finishes by its deadline, with or without the feedback controller.
    fn all_accepted_meet_deadlines(seed: u64, feedback: bool, lo_fraction: f64) -> (u32, u32) {
        let times = TaskTimes { estimate_factor: 1.0, ..TaskTimes::default() };
        let real = TaskTimes {
            map_ms: (((times.map_ms.1 as f64) * lo_fraction) as Time, times.map_ms.1),
            reduce_ms: (((times.reduce_ms.1 as f64) * lo_fraction) as Time, times.reduce_ms.1),
            ..times
        };
        let workload = generate(WorkloadKind::I, seed, real).unwrap();
        let s = if feedback { Scheduler::Rtmr } else { Scheduler::RtmrNoFeedback };
        let mut cfg = sim_config(s, paper_cluster(), times, seed);
        // The admission model dispatches the instant a slot frees; heartbeats every 50 ms with
        // out-of-band heartbeats keep the simulated dispatch latency negligible against the slack.
        cfg.heartbeat_ms = 50;
        let r = Simulation::new(cfg, &workload).unwrap().run().unwrap();
        let o = outcome(&r, false);
        (o.accepted, o.successful)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(12))]
        #[test]
        fn accepted_jobs_meet_their_deadlines_when_estimates_hold(
            seed in 1u64..10_000, feedback in any::<bool>(), lo in 0.3f64..1.0,
        ) {
            let (accepted, successful) = all_accepted_meet_deadlines(seed, feedback, lo);
            prop_assert!(accepted > 0);
            prop_assert_eq!(accepted, successful, "seed {}, feedback {}, lo {}", seed, feedback, lo);
        }
    }

    #[test]
    fn a_job_whose_minimum_work_cannot_fit_is_always_rejected() {
        // 300 maps of at least 16 s on 100 slots need 3 waves = 48 s before any reduce; a 40 s
        // deadline can never be met, on an empty cluster or not.
        let times = TaskTimes::default();
        let mut job = SimJob::new(0, vec![16_000; 300], vec![24_000]);
        job.spec.deadline_ms = Some(40_000);
        let w = Workload::new("impossible", vec![job]).unwrap();
        let r = Simulation::new(sim_config(Scheduler::Rtmr, paper_cluster(), times, 1), &w).unwrap().run().unwrap();
        assert!(r.jobs[0].rejected);
    }
}
