//! The `circumflex` command line: run the trace-driven simulator on one policy (`simulate`) or on several
//! policies over the same workload and seed (`compare`), print a table and write JSON, CSV and SVG plots.
//!
//! Examples (from the repository root):
//! ```text
//! circumflex simulate --policy fair --workload swim:../shared/data/swim/FB-2009_samples_24_times_1hr_0.tsv
//! circumflex compare --policies fifo,fair,flex:avg_response_time --baseline fair \
//!     --workload synthetic:jobs=300,deadline=3 --nodes 20 --out results/synthetic
//! ```

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::{Args, CommandFactory, FromArgMatches, Parser, Subcommand, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};

use circumflex_core::config::{KEY_EPOCH_MS, KEY_NODE_DELAY, KEY_OBJECTIVE, KEY_POLICY, KEY_POOL_MODE, KEY_RACK_DELAY};
use circumflex_core::policy::PoolMode;
use circumflex_core::{EngineConfig, Error, Result};
use circumflex_sim::sim::report::{self, RunRow};
use circumflex_sim::sim::simulator::policy_label;
use circumflex_sim::sim::{
    workload_rng, AmOrder, ClusterSpec, SimConfig, SimResult, Simulation, SyntheticSpec, Workload, YarnModel,
};
use circumflex_sim::trace::swim::SwimModel;

#[derive(Parser, Debug)]
#[command(name = "circumflex", version, about = "Circumflex scheduling simulator", long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Simulate one policy on a workload; print a summary and write the outputs.
    Simulate {
        /// Policy name (`fifo`, `fair`, ... as registered).
        #[arg(long)]
        policy: String,
        /// Objective for policies that take one (e.g. `avg_response_time`, `max_stretch` for flex).
        #[arg(long)]
        objective: Option<String>,
        #[command(flatten)]
        run: RunArgs,
    },
    /// Simulate several policies on the same workload and seed; print them side by side.
    Compare {
        /// Comma-separated policies, each `name` or `name:objective` (e.g. `fifo,fair,flex:max_stretch`).
        #[arg(long, value_delimiter = ',', required = true)]
        policies: Vec<String>,
        /// Policy whose column the ratios are taken against (default: `fair` if listed, else the first).
        #[arg(long)]
        baseline: Option<String>,
        #[command(flatten)]
        run: RunArgs,
    },
    /// Every static priority order of a small workload (at most 8 jobs), simulated under `fifo` with
    /// the given set-up (gate, contention, preemption): the best and worst mean response time, and the
    /// orders (docs/evaluation.md, "How far ordering alone goes on the burst").
    BestOrder {
        #[command(flatten)]
        run: RunArgs,
    },
    /// Load sweep: every policy at cluster sizes spanning the given utilizations, both pool modes and
    /// several seeds, with the lower bounds of every cell; writes runs.csv, table.md (median ratios to
    /// fair and to the bounds) and SVG plots. `--nodes`, `--pool` and `--seed` are set per run.
    Sweep {
        /// Comma-separated policies, each `name` or `name:objective`.
        #[arg(
            long,
            value_delimiter = ',',
            default_value = "fifo,fair,flex:avg_response_time,flex:avg_stretch,flex:max_stretch,asrpt"
        )]
        policies: Vec<String>,
        /// Target utilizations, turned into node counts (rule in docs/lower-bounds.md).
        #[arg(long, value_delimiter = ',', default_value = "0.25,0.35,0.45,0.55,0.65,0.75,0.85")]
        loads: Vec<f64>,
        /// Pool modes.
        #[arg(long, value_enum, value_delimiter = ',', default_value = "split,shared")]
        pools: Vec<PoolArg>,
        /// Simulator seeds.
        #[arg(long, value_delimiter = ',', default_value = "1,2,3")]
        seeds: Vec<u64>,
        /// Worker threads (each simulation is single-threaded; outputs do not depend on this).
        #[arg(long, default_value_t = 2)]
        threads: usize,
        /// Exit with an error when a FLEX objective or ASRPT loses to fair on its own objective in any
        /// cell (the quality gate, `make quality-gate`).
        #[arg(long)]
        gate: bool,
        /// Losses the gate tolerates up to a recorded ratio (`pool,nodes,policy,ratio` lines): a ratchet
        /// for losses that are known and documented (docs/quality.md); any other loss still fails.
        #[arg(long, requires = "gate")]
        gate_known: Option<PathBuf>,
        #[command(flatten)]
        run: RunArgs,
    },
    /// Compare committed result folders with the same commands' output regenerated elsewhere
    /// (`make results-check`); wall-clock figures aside. Fails when any compared file differs.
    ResultsCheck {
        /// Folder the commands wrote into (their `--out` with `results` replaced by it).
        #[arg(long)]
        fresh: PathBuf,
        /// Folder of the committed results.
        #[arg(long, default_value = "results")]
        committed: PathBuf,
        /// Result folders to compare (relative to both), e.g. `asrpt swim-fb2009`.
        #[arg(required = true)]
        names: Vec<PathBuf>,
    },
    /// FLEX and CIRCUMFLEX of the fluid simulator on the arrivals of a shared-scan benchmark run
    /// (`make scan-bench`'s jobs.csv), one dataset, beside the measured figures; prints a Markdown
    /// table. Without --size-slot-s the dataset's scan work is calibrated on the measured FLEX mean.
    ScanFluid {
        /// The benchmark's jobs.csv.
        #[arg(long, default_value = "results/shared-scans/jobs.csv")]
        jobs: PathBuf,
        /// Slots S of the simulated cluster (the benchmark's task containers).
        #[arg(long, default_value_t = 4)]
        slots: u32,
        /// Most slots one job may use, M_j (the benchmark's splits per job).
        #[arg(long, default_value_t = 8)]
        max_slots: u32,
        /// The dataset's scan work N_d, slot-seconds (default: calibrated).
        #[arg(long)]
        size_slot_s: Option<f64>,
    },
    /// Reproduce a paper's simulation study and write its report folder.
    Reproduce {
        #[command(subcommand)]
        study: Study,
    },
    /// Cut a window of a SWIM day, scale it to a one-node mini cluster and write it as a Rumen trace for
    /// Gridmix (`make gridmix`; scaling rules in docs/evaluation.md). Unset flags take the defaults of
    /// `circumflex_sim::gridmix::Scaling`.
    GridmixTrace {
        /// SWIM TSV file (tasks and durations from the default SWIM model).
        #[arg(long)]
        swim: PathBuf,
        /// First job of the window (0-based, trace order) [default: 406].
        #[arg(long)]
        first_job: Option<usize>,
        /// Jobs in the window [default: 12].
        #[arg(long)]
        jobs: Option<usize>,
        /// Factor on submission gaps [default: 0.25].
        #[arg(long)]
        gap_scale: Option<f64>,
        /// Most maps per job; bigger jobs keep their map work on this many maps [default: 12].
        #[arg(long)]
        max_maps: Option<u32>,
        /// Most reduces per job [default: 2].
        #[arg(long)]
        max_reduces: Option<u32>,
        /// Factor on every task duration, before the cap and the clamp [default: 1].
        #[arg(long)]
        task_scale: Option<f64>,
        /// Shortest task after scaling, ms [default: 2000].
        #[arg(long)]
        min_task_ms: Option<i64>,
        /// Longest task after scaling, ms [default: 60000].
        #[arg(long)]
        max_task_ms: Option<i64>,
        /// Rumen trace to write.
        #[arg(long)]
        out: PathBuf,
    },
    /// Write report.md, summary.csv and SVG plots from the Gridmix harness's jobs-<scheduler>.csv files
    /// (a folder of run<k>/ rounds from --repeat also gets a report over the rounds with 95% intervals).
    GridmixReport {
        /// Folders holding jobs-<scheduler>.csv (one per trace), or run<k>/ folders of them.
        #[arg(required = true)]
        dirs: Vec<PathBuf>,
        /// Task slots of the cluster, for the ideal times behind the stretch.
        #[arg(long, default_value_t = 4)]
        slots: u32,
        /// Scheduler the ratios are taken against.
        #[arg(long, default_value = "hadoop-fair")]
        baseline: String,
    },
    /// Per-job timelines (AM placement, AM start-up, first task's wait, rest) of every Gridmix replay in the
    /// harness's Hadoop log (integration-tests/gridmix/build/gridmix-logs/hadoop.log), as markdown tables
    GridmixTimelines {
        /// The Hadoop log.
        log: PathBuf,
        /// Only runs whose name (<trace>-<scheduler>) contains this.
        #[arg(long, default_value = "")]
        run: String,
        /// Only the last run of each name (a replay stopped and run again under the same name).
        #[arg(long)]
        latest: bool,
    },
}

/// Paper reproductions.
#[derive(Subcommand, Debug)]
enum Study {
    /// ASRPT (efficiency-ratio paper, Section VII): four workloads, both modes, ratios to the SRPT bound.
    Asrpt {
        /// Seeds 1..=N.
        #[arg(long, default_value_t = 10)]
        seeds: u64,
        /// Arrival horizon T in slots.
        #[arg(long, default_value_t = 500)]
        slots: u32,
        /// Output folder.
        #[arg(long, default_value = "results/asrpt")]
        out: PathBuf,
    },
    /// CIRCUMFLEX (shared scans paper, §4): FLEX, CIRCUMFLEX and BATCH over the 225 configurations.
    Circumflex {
        /// Repetitions 1..=N per configuration.
        #[arg(long, default_value_t = 10)]
        seeds: u64,
        /// Per-job maximum slots M_j (the study's calibration; see the report).
        #[arg(long, default_value_t = 5)]
        max_slots: u32,
        /// Worker threads (each simulation is single-threaded).
        #[arg(long, default_value_t = 2)]
        workers: usize,
        /// Utilisation ρ the sizes are scaled to (paper: 0.9).
        #[arg(long, default_value_t = 0.9)]
        rho: f64,
        /// Output folder.
        #[arg(long, default_value = "results/circumflex")]
        out: PathBuf,
        /// Do not simulate: re-render the report from `<out>/study.json` of an earlier run.
        #[arg(long)]
        render_only: bool,
    },
    /// Adaptive Scheduler (multi-constraint thesis, chapter 3): experiment 1 (goals) and 2 (data affinity).
    #[command(name = "adaptive-ch3")]
    AdaptiveCh3 {
        /// Seeds 1..=N.
        #[arg(long, default_value_t = 5)]
        seeds: u64,
        /// Output folder.
        #[arg(long, default_value = "results/adaptive-ch3")]
        out: PathBuf,
    },
    /// RTMR (real-time scheduling paper): Workloads I and II, Tables V and VI.
    Rtmr {
        /// Seeds 1..=N.
        #[arg(long, default_value_t = 10)]
        seeds: u64,
        /// Initial worst-case estimates as a multiple of the longest actual task.
        #[arg(long, default_value_t = 4.0)]
        estimate_factor: f64,
        /// Output folder.
        #[arg(long, default_value = "results/rtmr")]
        out: PathBuf,
    },
    /// RAS (multi-constraint thesis ch. 4): Table 4.1 on 20 nodes, RAS vs Fair with 1..8 map slots, tight goals.
    RasCh4 {
        /// RAS control period T in seconds.
        #[arg(long, default_value_t = 30.0)]
        period: f64,
        /// Output folder.
        #[arg(long, default_value = "results/ras-ch4")]
        out: PathBuf,
    },
    /// Reverse-Adaptive (thesis §5.3.5): missed deadlines of FIFO, Adaptive, Reverse-Adaptive and a reference.
    ReverseCh5 {
        /// Seeds 1..=N per configuration (the thesis used 10).
        #[arg(long, default_value_t = 2)]
        seeds: u64,
        /// Simulated days (statistics over the middle 5/7).
        #[arg(long, default_value_t = 7.0)]
        days: f64,
        /// Nodes (4 tasks each).
        #[arg(long, default_value_t = 100)]
        nodes: usize,
        /// Loads, comma-separated.
        #[arg(long, value_delimiter = ',', default_value = "0.2,0.4,0.6")]
        loads: Vec<f64>,
        /// Upper deadline factors (the lower one is 1.5), comma-separated.
        #[arg(long, value_delimiter = ',', default_value = "4,8,12")]
        factors: Vec<f64>,
        /// Worker threads.
        #[arg(long, default_value_t = 2)]
        workers: usize,
        /// Output folder.
        #[arg(long, default_value = "results/reverse-ch5")]
        out: PathBuf,
    },
    /// FlowFlex (flows of MapReduce jobs, §4): FlowFlex, Fair and FIFO on 9 minisum and 8 minimax metrics.
    Flowflex {
        /// Instances per metric (the paper: 25).
        #[arg(long, default_value_t = 25)]
        instances: u64,
        /// Seed of the first instance (instance i uses seed + i).
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Largest number of flows per instance (the paper: 20; smaller for smoke runs).
        #[arg(long, default_value_t = 20)]
        max_flows: u32,
        /// Deadline slack: additional time after the reference completion is U{0..ceil(slack * Q_j)}.
        #[arg(long, default_value_t = 1.0)]
        slack: f64,
        /// Output folder.
        #[arg(long, default_value = "results/flowflex")]
        out: PathBuf,
    },
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum AmOrderArg {
    /// Every waiting AM before any task, in arrival order (the Circumflex shim without the gate; the
    /// FairScheduler).
    Eager,
    /// AMs get what earlier jobs' tasks leave, in arrival order (the CapacityScheduler's FIFO queue).
    Queue,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum PoolArg {
    /// Separate map and reduce slots (MRv1 TaskTrackers).
    Split,
    /// One pool per node for both phases (YARN containers).
    Shared,
}

/// Workload, cluster and simulator flags shared by both subcommands.
#[derive(Args, Debug)]
struct RunArgs {
    /// `swim:PATH` (SWIM TSV), `rumen:PATH` (Rumen JSON) or `synthetic:key=value,...`
    /// (keys: jobs, interarrival_ms, maps, reduces, map_ms, reduce_ms as distributions `exp:MEAN`,
    /// `uniform:LO:HI`, `lognormal:MU:SIGMA`, `zipf:N:S` or a constant; deadline (factor); weights `1/2/4`).
    #[arg(long)]
    workload: String,
    /// Worker nodes.
    #[arg(long, default_value_t = 50)]
    nodes: u32,
    /// Map slots per node (in a shared pool: added to reduce slots).
    #[arg(long, default_value_t = 4)]
    map_slots: u32,
    /// Reduce slots per node.
    #[arg(long, default_value_t = 2)]
    reduce_slots: u32,
    /// Racks (nodes are spread evenly).
    #[arg(long, default_value_t = 2)]
    racks: u32,
    /// Slot pooling.
    #[arg(long, value_enum, default_value_t = PoolArg::Split)]
    pool: PoolArg,
    /// Heartbeat interval per node, ms (MRv1 minimum 3000).
    #[arg(long, default_value_t = 3_000)]
    heartbeat_ms: i64,
    /// Heartbeat at once when a task finishes (mapreduce.tasktracker.outofband.heartbeat).
    #[arg(long)]
    out_of_band: bool,
    /// Send every periodic heartbeat, even those that cannot launch anything (slow; for checking that
    /// skipping them changes no result).
    #[arg(long)]
    idle_heartbeats: bool,
    /// Keep every task's run (node, start, end, locality, preempted) and write `tasks-<policy>.csv` beside
    /// the per-job files: the per-job timelines of a diagnosis (`docs/quality.md`).
    #[arg(long)]
    record_tasks: bool,
    /// YARN mechanics: slots of each job's AM container, held for the job's life (0 = no AMs; shared
    /// pool only). With `--param circumflex.am.admission.enabled=true` the engine's AM gate decides when
    /// each starts (`docs/simulator.md`, "YARN mechanics").
    #[arg(long, default_value_t = 0)]
    am_slots: u32,
    /// YARN mechanics: from an AM container's start to its first ask, ms.
    #[arg(long, default_value_t = 0)]
    am_startup_ms: i64,
    /// YARN mechanics: from a task container's launch to the start of its work, ms.
    #[arg(long, default_value_t = 0)]
    launch_ms: i64,
    /// YARN mechanics: how AMs start while the engine's AM gate is off.
    #[arg(long, value_enum, default_value_t = AmOrderArg::Eager)]
    am_order: AmOrderArg,
    /// Start-up contention: cores of one host, shared by the AM start-ups and task launches that
    /// overlap on it (0 = off: fixed delays; `docs/simulator.md`, "Start-up contention").
    #[arg(long, default_value_t = 0)]
    host_cores: u32,
    /// Start-up contention: consecutive nodes per host (the mini cluster's NodeManagers share one).
    #[arg(long, default_value_t = 1)]
    nodes_per_host: u32,
    /// Replicas per map input block for the locality model (0 = every map is node-local).
    #[arg(long, default_value_t = 3)]
    replicas: u32,
    /// Re-planning epoch, ms (circumflex.epoch.ms).
    #[arg(long, default_value_t = 2_000)]
    epoch_ms: i64,
    /// Delay scheduling: offers a job may skip waiting for a node-local slot.
    #[arg(long, default_value_t = 3)]
    node_delay: u32,
    /// Delay scheduling: further offers it may skip waiting for a rack-local slot.
    #[arg(long, default_value_t = 3)]
    rack_delay: u32,
    /// Seed of the run's random generator (replica placement, synthetic workloads).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Give every job a deadline of arrival + FACTOR x its isolated time.
    #[arg(long, value_name = "FACTOR")]
    deadline_factor: Option<f64>,
    /// Keep only the first N jobs of the workload.
    #[arg(long, value_name = "N")]
    limit_jobs: Option<usize>,
    /// Replay the workload's size mix at FACTOR times its arrival rate (`Workload::scaled`: the
    /// SWIM day x4.25 is about 25,000 jobs), after --limit-jobs.
    #[arg(long, value_name = "FACTOR")]
    scale_jobs: Option<f64>,
    /// Tell the engine task counts only, no task-duration estimates (a Gridmix or any `job.xml`-only
    /// host): it starts from its default estimate and learns from finished tasks. Without it every
    /// job's estimate is its true mean task time.
    #[arg(long)]
    no_estimates: bool,
    /// Extra `circumflex.*` policy keys, `key=value` (repeatable).
    #[arg(long = "param", value_name = "KEY=VALUE")]
    params: Vec<String>,
    /// SWIM model: HDFS block size in MiB (input bytes per map).
    #[arg(long, default_value_t = 64)]
    swim_block_mb: u64,
    /// SWIM model: per-task start-up overhead, ms (maps and reduces).
    #[arg(long, default_value_t = 4_000)]
    swim_overhead_ms: i64,
    /// SWIM model: map throughput, MiB/s per task.
    #[arg(long, default_value_t = 16.0)]
    swim_map_mb_per_s: f64,
    /// SWIM model: reduce throughput (shuffle, sort, write), MiB/s per task.
    #[arg(long, default_value_t = 8.0)]
    swim_reduce_mb_per_s: f64,
    /// SWIM model: shuffle + output MiB per reduce task.
    #[arg(long, default_value_t = 1024)]
    swim_mb_per_reduce: u64,
    /// SWIM model: most reduces per job.
    #[arg(long, default_value_t = 500)]
    swim_max_reduces: u32,
    /// Output folder (created). Without it nothing is written.
    #[arg(long)]
    out: Option<PathBuf>,
}

impl PoolArg {
    fn mode(self) -> PoolMode {
        match self {
            PoolArg::Split => PoolMode::Split,
            PoolArg::Shared => PoolMode::Shared,
        }
    }
}

impl RunArgs {
    fn cluster(&self) -> ClusterSpec {
        ClusterSpec {
            nodes: self.nodes,
            map_slots: self.map_slots,
            reduce_slots: self.reduce_slots,
            racks: self.racks,
            pool: self.pool.mode(),
        }
    }

    fn swim_model(&self) -> SwimModel {
        const MIB: f64 = 1024.0 * 1024.0;
        SwimModel {
            block_bytes: self.swim_block_mb.saturating_mul(1 << 20),
            map_overhead_ms: self.swim_overhead_ms,
            map_bytes_per_s: self.swim_map_mb_per_s * MIB,
            bytes_per_reduce: self.swim_mb_per_reduce.saturating_mul(1 << 20),
            max_reduces: self.swim_max_reduces,
            reduce_overhead_ms: self.swim_overhead_ms,
            reduce_bytes_per_s: self.swim_reduce_mb_per_s * MIB,
        }
    }

    fn workload(&self, cluster: &ClusterSpec) -> Result<Workload> {
        let mut workload = match self.workload.split_once(':') {
            Some(("synthetic", params)) => {
                SyntheticSpec::parse(params)?.generate(&mut workload_rng(self.seed), cluster)?
            }
            Some(("swim" | "rumen", _)) => circumflex_sim::trace::load(&self.workload, &self.swim_model())?,
            _ => return Err(Error::config("--workload", &self.workload, "swim:PATH, rumen:PATH or synthetic:k=v,...")),
        };
        if let Some(n) = self.limit_jobs {
            workload.jobs.truncate(n);
            workload.name = format!("{} (first {n} jobs)", workload.name);
        }
        if let Some(f) = self.scale_jobs {
            workload = workload.scaled(f)?;
        }
        if let Some(f) = self.deadline_factor {
            workload.assign_deadlines(f, cluster)?;
        }
        if self.no_estimates {
            workload = workload.without_estimates();
        }
        Ok(workload)
    }

    /// One simulation config per `name[:objective]` of `policies`.
    fn sim_configs(&self, policies: &[String]) -> Result<Vec<SimConfig>> {
        policies
            .iter()
            .map(|p| {
                let (name, objective) = split_policy(p);
                self.sim_config(&name, objective.as_deref())
            })
            .collect()
    }

    /// The simulation config for `policy[:objective]`, validated through the engine's own key parser
    /// (an unknown policy gets the registry's error listing what is allowed).
    fn sim_config(&self, policy: &str, objective: Option<&str>) -> Result<SimConfig> {
        let cluster = self.cluster();
        let pool = match cluster.pool {
            PoolMode::Split => "split",
            PoolMode::Shared => "shared",
        };
        let (epoch, node_delay, rack_delay) =
            (self.epoch_ms.to_string(), self.node_delay.to_string(), self.rack_delay.to_string());
        let mut pairs: Vec<(String, String)> = vec![
            (KEY_POLICY.into(), policy.into()),
            (KEY_EPOCH_MS.into(), epoch),
            (KEY_POOL_MODE.into(), pool.into()),
            (KEY_NODE_DELAY.into(), node_delay),
            (KEY_RACK_DELAY.into(), rack_delay),
        ];
        if let Some(o) = objective {
            pairs.push((KEY_OBJECTIVE.into(), o.into()));
        }
        for p in &self.params {
            let Some((k, v)) = p.split_once('=') else {
                return Err(Error::config("--param", p, "KEY=VALUE with a circumflex.* key"));
            };
            pairs.push((k.trim().into(), v.trim().into()));
        }
        let engine = EngineConfig::from_pairs(pairs.iter().map(|(k, v)| (k.as_str(), v.as_str())))?;
        Ok(SimConfig {
            cluster,
            engine,
            heartbeat_ms: self.heartbeat_ms,
            out_of_band_heartbeat: self.out_of_band,
            replicas: self.replicas,
            seed: self.seed,
            record_tasks: self.record_tasks,
            idle_heartbeats: self.idle_heartbeats,
            yarn: YarnModel {
                am_slots: self.am_slots,
                am_startup_ms: self.am_startup_ms,
                launch_ms: self.launch_ms,
                am_order: match self.am_order {
                    AmOrderArg::Eager => AmOrder::Eager,
                    AmOrderArg::Queue => AmOrder::Queue,
                },
                host_cores: self.host_cores,
                nodes_per_host: if self.host_cores == 0 { 0 } else { self.nodes_per_host },
            },
        })
    }
}

/// Splits `name:objective`.
fn split_policy(spec: &str) -> (String, Option<String>) {
    match spec.split_once(':') {
        Some((p, o)) => (p.trim().to_string(), Some(o.trim().to_string())),
        None => (spec.trim().to_string(), None),
    }
}

/// Runs one simulation with a progress bar (hidden when stderr is not a terminal).
fn run_one(config: SimConfig, workload: &Workload) -> Result<(SimResult, RunRow)> {
    let label = policy_label(&config.engine.policy, config.engine.objective.as_deref());
    let bar = ProgressBar::new(workload.jobs.len() as u64);
    if let Ok(style) = ProgressStyle::with_template("{prefix:>24} [{bar:40}] {pos}/{len} jobs {elapsed}") {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.set_prefix(label);
    let started = Instant::now();
    let result = Simulation::new(config, workload)?.run_with_progress(|done, _| bar.set_position(done))?;
    let wall_s = started.elapsed().as_secs_f64();
    bar.finish_and_clear();
    let events_per_s = result.summary.events as f64 / wall_s.max(1e-9);
    let row = RunRow { summary: result.summary.clone(), wall_s, events_per_s };
    Ok((result, row))
}

fn write(path: &Path, text: &str) -> Result<()> {
    fs::write(path, text).map_err(|e| Error::io(path, &e))
}

/// The command line as typed, shell-quoted, with the program name normalised to `circumflex`.
fn command_line() -> String {
    let quote = |a: &str| {
        if !a.is_empty() && a.chars().all(|c| c.is_ascii_alphanumeric() || "-_./:=,+@%".contains(c)) {
            a.to_string()
        } else {
            format!("'{}'", a.replace('\'', "'\\''"))
        }
    };
    std::iter::once("circumflex".to_string())
        .chain(std::env::args().skip(1).map(|a| quote(&a)))
        .collect::<Vec<_>>()
        .join(" ")
}

fn file_label(label: &str) -> String {
    label.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '_' }).collect()
}

/// Writes every output of a set of runs into `out`.
fn write_outputs(out: &Path, workload: &Workload, results: &[SimResult], rows: &[RunRow], table: &str) -> Result<()> {
    fs::create_dir_all(out).map_err(|e| Error::io(out, &e))?;
    write(&out.join("COMMAND"), &format!("{}\n", command_line()))?;
    write(&out.join("table.txt"), table)?;
    write(&out.join("summary.csv"), &report::summaries_csv(rows))?;
    let summary = serde_json::json!({
        "workload": workload.name,
        "jobs": workload.jobs.len(),
        "tasks": workload.tasks(),
        "config": results.first().map(|r| &r.config),
        "runs": rows,
    });
    write(&out.join("summary.json"), &to_json(&summary, true)?)?;
    for r in results {
        let name = file_label(&r.summary.policy);
        write(&out.join(format!("jobs-{name}.csv")), &report::jobs_csv(r))?;
        write(&out.join(format!("result-{name}.json")), &to_json(r, false)?)?;
        if !r.tasks.is_empty() {
            write(&out.join(format!("tasks-{name}.csv")), &report::tasks_csv(r))?;
        }
    }
    let runs: Vec<(&str, &[circumflex_sim::sim::JobRecord])> =
        results.iter().map(|r| (r.summary.policy.as_str(), r.jobs.as_slice())).collect();
    let title = format!("{}: {} jobs", workload.name, workload.jobs.len());
    write(&out.join("response-cdf.svg"), &report::response_cdf_svg(&format!("Response time CDF, {title}"), &runs))?;
    write(&out.join("metrics.svg"), &report::metric_bars_svg(&title, rows))?;
    Ok(())
}

/// Serializes for an output file: pretty for small documents, compact for per-job results.
fn to_json<T: serde::Serialize>(value: &T, pretty: bool) -> Result<String> {
    let text = if pretty { serde_json::to_string_pretty(value) } else { serde_json::to_string(value) };
    text.map(|t| t + "\n").map_err(|e| Error::Json { what: "result", message: e.to_string() })
}

fn describe(workload: &Workload, config: &SimConfig) -> String {
    let c = &config.cluster;
    format!(
        "workload {} ({} jobs, {} tasks); cluster {} nodes x {} map + {} reduce slots ({:?} pools), heartbeat {} ms{}, \
         replicas {}, seed {}",
        workload.name,
        workload.jobs.len(),
        workload.tasks(),
        c.nodes,
        c.map_slots,
        c.reduce_slots,
        c.pool,
        config.heartbeat_ms,
        if config.out_of_band_heartbeat { " + out-of-band" } else { "" },
        config.replicas,
        config.seed
    )
}

fn main_result() -> Result<()> {
    let registered = format!(
        "Registered policies: {}.\nFLEX objectives (flex:OBJECTIVE or --objective): avg_response_time, \
         avg_stretch, max_stretch, max_response_time, total_tardiness, tardy_jobs, max_lateness, ... \
         (see crates/circumflex-policies/src/flex/metrics.rs).",
        circumflex_policies::POLICY_NAMES.join(", ")
    );
    let command = Cli::command()
        .mut_subcommand("simulate", |c| c.after_help(registered.clone()))
        .mut_subcommand("compare", |c| c.after_help(registered.clone()));
    let cli = Cli::from_arg_matches(&command.get_matches()).unwrap_or_else(|e| e.exit());
    match cli.command {
        Command::Simulate { policy, objective, run } => {
            let config = run.sim_config(&policy, objective.as_deref())?;
            let workload = run.workload(&config.cluster)?;
            eprintln!("{}", describe(&workload, &config));
            let (result, row) = run_one(config, &workload)?;
            let rows = vec![row];
            let table = report::table(&rows, None);
            print!("{table}");
            if let Some(out) = &run.out {
                write_outputs(out, &workload, &[result], &rows, &table)?;
                eprintln!("wrote {}", out.display());
            }
        }
        Command::ScanFluid { jobs, slots, max_slots, size_slot_s } => {
            use circumflex_sim::studies::circumflex::bench;
            if slots == 0 || max_slots == 0 {
                return Err(Error::config("--slots / --max-slots", format!("{slots} / {max_slots}"), ">= 1"));
            }
            let text = std::fs::read_to_string(&jobs).map_err(|e| Error::io(&jobs, &e))?;
            let rounds = bench::parse_jobs_csv(&text)?;
            let (size, calibrated) = match size_slot_s {
                Some(s) if s.is_finite() && s > 0.0 => (s, false),
                Some(s) => return Err(Error::config("--size-slot-s", s, "finite and > 0")),
                None => {
                    let flex: Vec<f64> = rounds.iter().filter_map(|r| r.measured.get(bench::FLEX).copied()).collect();
                    if flex.is_empty() {
                        return Err(Error::config(
                            "--size-slot-s",
                            "(unset)",
                            "a size, since the CSV has no FLEX round to calibrate on",
                        ));
                    }
                    let with_flex: Vec<_> =
                        rounds.iter().filter(|r| r.measured.contains_key(bench::FLEX)).cloned().collect();
                    (
                        bench::calibrate(&with_flex, flex.iter().sum::<f64>() / flex.len() as f64, slots, max_slots)?,
                        true,
                    )
                }
            };
            print!("{}", bench::report(&rounds, size, calibrated, slots, max_slots)?);
        }
        Command::Compare { policies, baseline, run } => {
            let configs = run.sim_configs(&policies)?;
            let labels: Vec<String> =
                configs.iter().map(|c| policy_label(&c.engine.policy, c.engine.objective.as_deref())).collect();
            let base = match &baseline {
                Some(b) => Some(labels.iter().position(|l| l == b).ok_or_else(|| {
                    Error::config("--baseline", b, format!("one of the compared policies ({})", labels.join(", ")))
                })?),
                None => labels.iter().position(|l| l == "fair").or(Some(0)),
            };
            let workload = run.workload(&configs[0].cluster)?;
            eprintln!("{}", describe(&workload, &configs[0]));
            // How far from optimal each column is (docs/lower-bounds.md); charges no heartbeat, AM or launch.
            let bounds = circumflex_sim::sim::bound::lower_bounds(&workload, &configs[0].cluster);
            eprintln!(
                "lower bounds: mean response time {:.2} s, mean stretch {:.3}, max stretch {:.3}",
                bounds.mean_response_s, bounds.mean_stretch, bounds.max_stretch
            );
            let mut results = Vec::with_capacity(configs.len());
            let mut rows = Vec::with_capacity(configs.len());
            for config in configs {
                let (result, row) = run_one(config, &workload)?;
                eprintln!("{:>24}: {:.2} s, {:.2e} events/s", row.summary.policy, row.wall_s, row.events_per_s);
                if row.summary.preempted_tasks > 0 {
                    eprintln!(
                        "{:>24}  preempted {} tasks, {:.0} slot-s of work lost",
                        "", row.summary.preempted_tasks, row.summary.preempted_lost_s
                    );
                }
                results.push(result);
                rows.push(row);
            }
            let table = report::table(&rows, base);
            print!("{table}");
            if let Some(out) = &run.out {
                write_outputs(out, &workload, &results, &rows, &table)?;
                eprintln!("wrote {}", out.display());
            }
        }
        Command::BestOrder { run } => {
            let config = run.sim_config("fifo", None)?;
            let workload = run.workload(&config.cluster)?;
            eprintln!("{}", describe(&workload, &config));
            let found = circumflex_sim::sim::orders::search(&config, &workload)?;
            let names = |order: &[usize]| {
                order.iter().map(|&j| workload.jobs[j].spec.external_id.as_str()).collect::<Vec<_>>().join(" ")
            };
            println!("orders simulated: {}", found.orders);
            println!("submission order: mean response {:.1} s", found.submission);
            println!("best order:  mean response {:.1} s: {}", found.best.0, names(&found.best.1));
            println!("worst order: mean response {:.1} s: {}", found.worst.0, names(&found.worst.1));
        }
        Command::Sweep { policies, loads, pools, seeds, threads, gate, gate_known, run } => {
            use circumflex_sim::sim::sweep;
            let configs = run.sim_configs(&policies)?;
            let workload = run.workload(&configs[0].cluster)?;
            let spec =
                sweep::SweepSpec { loads, pools: pools.into_iter().map(PoolArg::mode).collect(), seeds, threads };
            eprintln!("{}", describe(&workload, &configs[0]));
            let started = Instant::now();
            let result = sweep::run(&spec, &configs, &workload, |done, total| {
                if done % 20 == 0 || done == total {
                    eprintln!("  {done}/{total} (bounds and runs)");
                }
            })?;
            let command = command_line();
            let table = result.table_md(&command);
            print!("{table}");
            if let Some(out) = &run.out {
                result.write(out, &command)?;
                eprintln!("wrote {}", out.display());
            }
            // Wall time on stderr only: it is not a result and stays out of the compared outputs.
            eprintln!("sweep wall time: {:.1} s ({} runs)", started.elapsed().as_secs_f64(), result.runs.len());
            if gate {
                let known = match &gate_known {
                    Some(path) => {
                        sweep::parse_known_losses(&fs::read_to_string(path).map_err(|e| Error::io(path, &e))?)?
                    }
                    None => Vec::new(),
                };
                let failures = result.gate_failures(&known);
                for f in &failures {
                    let was = f.known.map(|k| format!(" (known loss, tolerated up to {k:.3}x)")).unwrap_or_default();
                    eprintln!(
                        "quality gate: {} loses to fair on {} in {}: {:.3}x{was}",
                        f.policy, f.objective, f.cell, f.ratio
                    );
                }
                if !failures.is_empty() {
                    return Err(Error::config(
                        "--gate",
                        format!("{} losing cells", failures.len()),
                        "every gated policy at most 1.0x fair on its own objective in every cell",
                    ));
                }
                eprintln!(
                    "quality gate: passed ({} cells, {} known losses tolerated)",
                    result.cells.len(),
                    known.len()
                );
            }
        }
        Command::ResultsCheck { fresh, committed, names } => {
            let mut drifted = 0;
            for name in &names {
                let drifts = circumflex_sim::sim::drift::compare(&committed.join(name), &fresh.join(name))?;
                if drifts.is_empty() {
                    eprintln!("{}: reproduces", committed.join(name).display());
                }
                for d in &drifts {
                    drifted += 1;
                    println!(
                        "{}: line {}\n  committed: {}\n  now:       {}",
                        committed.join(name).join(&d.file).display(),
                        d.line,
                        d.committed,
                        d.fresh
                    );
                }
            }
            if drifted > 0 {
                return Err(Error::config(
                    "results",
                    format!("{drifted} drifted file(s)"),
                    "committed results that the code reproduces: regenerate them with `make results` in a commit \
                     that says which figures changed and why",
                ));
            }
        }
        Command::Reproduce { study: Study::Asrpt { seeds, slots, out } } => {
            use circumflex_sim::studies::asrpt as study;
            let cfg = study::StudyConfig { seeds, slots, ..study::StudyConfig::default() };
            let started = Instant::now();
            let result = study::run(&cfg, |cell| {
                eprintln!("  {} {}: done", cell.setting.name, study::mode_name(cell.mode));
            })?;
            print!("{}", result.to_markdown());
            let command = format!("circumflex reproduce asrpt --seeds {seeds} --slots {slots} --out {}", out.display());
            result.write_report(&out, &command)?;
            eprintln!("wrote {} in {:.1} s", out.display(), started.elapsed().as_secs_f64());
        }
        Command::Reproduce { study: Study::Circumflex { seeds, max_slots, workers, rho, out, render_only } } => {
            use circumflex_sim::studies::circumflex::study;
            let result = if render_only {
                study::Study::load(&out.join("study.json"))?
            } else {
                let cfg = study::StudyConfig { seeds, max_slots, workers, rho, ..study::StudyConfig::default() };
                study::run(&cfg, |done, total| {
                    if done % 250 == 0 || done == total {
                        eprintln!("  {done}/{total} (configuration, repetition) tasks");
                    }
                })?
            };
            print!("{}", result.to_markdown());
            let command = result.command(&out);
            result.write_report(&out, &command, &circumflex_sim::studies::discussion("circumflex")?)?;
            eprintln!("wrote {} in {:.1} s", out.display(), result.seconds);
        }
        Command::Reproduce { study: Study::AdaptiveCh3 { seeds, out } } => {
            let started = Instant::now();
            let command = format!("circumflex reproduce adaptive-ch3 --seeds {seeds} --out {}", out.display());
            print!("{}", circumflex_sim::studies::adaptive_ch3::write_report(&out, seeds, &command)?);
            eprintln!("wrote {} in {:.1} s", out.display(), started.elapsed().as_secs_f64());
        }
        Command::Reproduce { study: Study::Rtmr { seeds, estimate_factor, out } } => {
            use circumflex_sim::studies::rtmr as study;
            let times = study::TaskTimes { estimate_factor, ..study::TaskTimes::default() };
            let started = Instant::now();
            let command = format!(
                "circumflex reproduce rtmr --seeds {seeds} --estimate-factor {estimate_factor} --out {}",
                out.display()
            );
            print!("{}", study::write_report(&out, seeds, times, &command)?);
            eprintln!("wrote {} in {:.1} s", out.display(), started.elapsed().as_secs_f64());
        }
        Command::Reproduce { study: Study::RasCh4 { period, out } } => {
            use circumflex_sim::studies::ras::ch4 as study_ch4;
            let started = Instant::now();
            let command = format!("circumflex reproduce ras-ch4 --period {period} --out {}", out.display());
            print!("{}", study_ch4::run(period).write_report(&out, &command)?);
            eprintln!("wrote {} in {:.1} s", out.display(), started.elapsed().as_secs_f64());
        }
        Command::Reproduce { study: Study::ReverseCh5 { seeds, days, nodes, loads, factors, workers, out } } => {
            use circumflex_sim::studies::ras::ch5 as study_ch5;
            let started = Instant::now();
            let join = |v: &[f64]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(",");
            let command = format!(
                "circumflex reproduce reverse-ch5 --seeds {seeds} --days {days} --nodes {nodes} --loads {} --factors {} --out {}",
                join(&loads),
                join(&factors),
                out.display()
            );
            let cfg = study_ch5::Ch5Config { seeds, days, nodes, loads, factors, workers };
            let cells = study_ch5::run(&cfg, |done, total| {
                if done % 10 == 0 || done == total {
                    eprintln!("  {done}/{total} simulations");
                }
            })?;
            print!("{}", study_ch5::write_report(&cfg, &cells, &out, &command)?);
            eprintln!("wrote {} in {:.1} s", out.display(), started.elapsed().as_secs_f64());
        }
        Command::Reproduce { study: Study::Flowflex { instances, seed, max_flows, slack, out } } => {
            use circumflex_sim::studies::flowflex as study;
            let defaults = study::StudyConfig::default();
            if max_flows < defaults.flows.0 {
                return Err(Error::config("--max-flows", max_flows, format!("at least {}", defaults.flows.0)));
            }
            let cfg = study::StudyConfig { instances, seed, slack, flows: (defaults.flows.0, max_flows), ..defaults };
            let started = Instant::now();
            let result = study::run(&cfg, |r| eprintln!("  {}: done", r.metric.name))?;
            print!("{}", result.to_markdown());
            let command = format!(
                "circumflex reproduce flowflex --instances {instances} --seed {seed} --max-flows {max_flows} --slack {slack} \
                 --out {}",
                out.display()
            );
            result.write_report(&out, &command)?;
            eprintln!("wrote {} in {:.1} s", out.display(), started.elapsed().as_secs_f64());
        }
        Command::GridmixTrace {
            swim,
            first_job,
            jobs,
            gap_scale,
            max_maps,
            max_reduces,
            task_scale,
            min_task_ms,
            max_task_ms,
            out,
        } => {
            use circumflex_sim::gridmix::{scale_window, to_rumen, Scaling};
            let d = Scaling::default();
            let scaling = Scaling {
                first_job: first_job.unwrap_or(d.first_job),
                jobs: jobs.unwrap_or(d.jobs),
                gap_scale: gap_scale.unwrap_or(d.gap_scale),
                max_maps: max_maps.unwrap_or(d.max_maps),
                max_reduces: max_reduces.unwrap_or(d.max_reduces),
                task_scale: task_scale.unwrap_or(d.task_scale),
                min_task_ms: min_task_ms.unwrap_or(d.min_task_ms),
                max_task_ms: max_task_ms.unwrap_or(d.max_task_ms),
            };
            let workload = circumflex_sim::trace::swim::read(&swim, &SwimModel::default())?;
            let window = scale_window(&workload.jobs, &scaling)?;
            // A fixed epoch keeps the trace byte-for-byte reproducible.
            fs::write(&out, to_rumen(&window, 1_700_000_000_000)).map_err(|e| Error::io(&out, &e))?;
            eprintln!("wrote {} jobs to {} ({scaling:?})", window.len(), out.display());
        }
        Command::GridmixReport { dirs, slots, baseline } => {
            for dir in dirs {
                let title = format!(
                    "Gridmix on MiniMRYarnCluster: {}",
                    dir.file_name().map_or_else(String::new, |n| n.to_string_lossy().into_owned())
                );
                // A folder of run<k>/ rounds (the harness's --repeat) gets the report over the rounds.
                if circumflex_sim::gridmix::repeat_rounds(&dir)?.is_empty() {
                    print!("{}", circumflex_sim::gridmix::write_report(&dir, &title, slots, &baseline)?);
                } else {
                    print!("{}", circumflex_sim::gridmix::write_repeat_report(&dir, &title, slots, &baseline)?);
                }
            }
        }
        Command::GridmixTimelines { log, run, latest } => {
            let text = std::fs::read_to_string(&log).map_err(|e| circumflex_core::error::Error::io(&log, &e))?;
            let mut runs: Vec<_> =
                circumflex_sim::gridmix::parse_timelines(&text).into_iter().filter(|r| r.run.contains(&run)).collect();
            if latest {
                runs = circumflex_sim::gridmix::latest_per_run(runs);
            }
            print!("{}", circumflex_sim::gridmix::timelines_markdown(&runs));
        }
    }
    Ok(())
}

fn main() {
    // RUST_LOG=info (or e.g. circumflex_core::engine=debug) shows the engine's and policies' records.
    env_logger::init();
    if let Err(e) = main_result() {
        eprintln!("circumflex: {e}");
        std::process::exit(1);
    }
}
