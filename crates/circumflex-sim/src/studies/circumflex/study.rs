//! Reproduction of the CIRCUMFLEX paper's simulation study (§4; digest §5): FLEX, CIRCUMFLEX and
//! BATCH on 225 workload configurations (θ1, θ2 ∈ {0, .25, .5, .75, 1} × 9 correlation labels),
//! each optimizing and measured on average response time, average stretch and maximum stretch.
//!
//! Fixed by the paper: 1000 Poisson arrivals, D = 20 datasets, Zipf-like popularity (θ1) and sizes
//! (θ2) with `p_i ∝ i^{−θ}`, the κ correlation procedure, S = 100 Map slots, ρ = 0.9 over a
//! nominal T = 100 minutes, f = 1, W = 2 minutes with windows offset by `i·W/D`, 10 repetitions,
//! re-planning at every arrival and following the schedule exactly until the next one.
//!
//! Decided here (the paper is silent; digest §7 items 10–15):
//! - **Slot bounds**: `m_j = 0`, `M_j = 5` for every job (`--max-slots` changes it). With `M_j = S`
//!   a mean job (9 slot-minutes) runs in 5.4 s and a +1 min batching delay makes BATCH 3.5–4.7×
//!   worse than FLEX; with `M_j = 5` a mean job needs ≥ 1.8 min alone, FLEX's average response
//!   time is ≈ 1.9 min, BATCH/FLEX lands in the paper's 1.11–1.48 range and CIRCUMFLEX concurrency
//!   near its 2.8–4.3 (digest §5.6). No single `M_j` matches every paper figure in a fluid model;
//!   the report's discussion and `results/circumflex/sensitivity/` show why.
//! - **Arrivals**: Poisson with rate 10/min (mean gap 0.1 min), so 1000 arrivals span ~100 min.
//! - **Sizes**: deterministic `r^{−θ2}` by size rank `r`, scaled **per realisation** so that
//!   Σ_j N_{d(j)} = ρ·T·S = 9000 slot-minutes exactly.
//! - **κ grid**: labels 0–3 negative with κ = 1, 5, 10, 15; label 4 random (κ = D); labels 5–8
//!   positive with κ = 15, 10, 5, 1. Step `s` (1-based) draws a size rank uniformly from the
//!   unused ranks in `1..=min(κ + s − 1, D)`; positive visits datasets from most to least popular,
//!   negative from least to most popular.
//! - **Random streams**: repetition `r` uses `Pcg64` seeds derived from `r` only (arrival gaps,
//!   dataset draws, κ draws from separate streams), so configurations share common random numbers.
//! - **Ratios**: per configuration, the mean over repetitions of a scheme's metric divided by
//!   FLEX's mean (the paper reports averages over repetitions). Work ratios and concurrency come
//!   from the average-response-time runs.
//! - **Parallelism**: one task per (configuration, repetition), spread over `workers` scoped
//!   threads pulling from a shared counter; every simulation is single-threaded and deterministic
//!   and results are stored by task index, so the output does not depend on the thread count.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64;
use serde::{Deserialize, Serialize};

use super::fluid::{simulate, ScanArrival, Scheme, Workload};
use crate::stats::{mean, min_median_max, population_sd};
use circumflex_core::error::{Error, Result};
use circumflex_policies::flex::metrics::Objective;

/// The θ values of both Zipf-like distributions.
pub const THETAS: [f64; 5] = [0.0, 0.25, 0.5, 0.75, 1.0];
/// The three objectives of the study, each optimized and measured.
pub const OBJECTIVES: [Objective; 3] = [Objective::AvgResponseTime, Objective::AvgStretch, Objective::MaxStretch];
/// Scheme order in records: FLEX, CIRCUMFLEX, BATCH.
pub const SCHEMES: [&str; 3] = ["FLEX", "CIRCUMFLEX", "BATCH"];

/// Study parameters (module docs for the decisions).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StudyConfig {
    /// Repetitions `1..=seeds`.
    pub seeds: u64,
    /// Arrivals per experiment.
    pub jobs: usize,
    /// Datasets `D`.
    pub datasets: usize,
    /// Map slots `S`.
    pub capacity: u32,
    /// Utilisation `ρ`.
    pub rho: f64,
    /// Nominal horizon `T` (minutes).
    pub horizon: f64,
    /// Arrival rate (jobs per minute).
    pub rate: f64,
    /// BATCH window `W` (minutes).
    pub window: f64,
    /// `m_j`.
    pub min_slots: u32,
    /// `M_j`.
    pub max_slots: u32,
    /// Worker threads.
    pub workers: usize,
}

impl Default for StudyConfig {
    fn default() -> Self {
        StudyConfig {
            seeds: 10,
            jobs: 1000,
            datasets: 20,
            capacity: 100,
            rho: 0.9,
            horizon: 100.0,
            rate: 10.0,
            window: 2.0,
            min_slots: 0,
            max_slots: 5,
            workers: 2,
        }
    }
}

/// `(negative?, κ)` of a correlation label 0..=8 for `d` datasets.
pub fn kappa(label: usize, d: usize) -> (bool, usize) {
    let k = |x: usize| x.min(d).max(1);
    match label {
        0..=3 => (true, k([1, 5, 10, 15][label])),
        4 => (false, d),
        _ => (false, k([15, 10, 5, 1][(label - 5).min(3)])),
    }
}

/// Size rank (1-based) per dataset (indexed by popularity rank, 0 = most popular).
pub fn size_ranks(label: usize, d: usize, rng: &mut Pcg64) -> Vec<usize> {
    let (negative, kap) = kappa(label, d);
    let visit: Vec<usize> = if negative { (0..d).rev().collect() } else { (0..d).collect() };
    let mut used = vec![false; d + 1];
    let mut out = vec![0; d];
    for (s, &pop) in visit.iter().enumerate() {
        let lim = (kap + s).min(d);
        let free: Vec<usize> = (1..=lim).filter(|&r| !used[r]).collect();
        let r = free[rng.random_range(0..free.len())];
        used[r] = true;
        out[pop] = r;
    }
    out
}

/// Zipf-like weights `i^{−θ}`, `i = 1..=n`.
pub fn zipf_like(n: usize, theta: f64) -> Vec<f64> {
    (1..=n).map(|i| (i as f64).powf(-theta)).collect()
}

/// One workload realisation.
pub fn generate(cfg: &StudyConfig, theta1: f64, theta2: f64, label: usize, seed: u64) -> Workload {
    let d = cfg.datasets.max(1);
    let mut arrivals_rng = Pcg64::seed_from_u64(seed.wrapping_mul(3).wrapping_add(1));
    let mut kappa_rng = Pcg64::seed_from_u64(seed.wrapping_mul(3).wrapping_add(2));
    let popularity = zipf_like(d, theta1);
    let total: f64 = popularity.iter().sum();
    let mut cdf = Vec::with_capacity(d);
    let mut acc = 0.0;
    for p in &popularity {
        acc += p / total;
        cdf.push(acc);
    }
    let mut t = 0.0;
    let mut jobs = Vec::with_capacity(cfg.jobs);
    for _ in 0..cfg.jobs {
        let u: f64 = arrivals_rng.random::<f64>();
        t += -(1.0 - u).ln() / cfg.rate;
        let v: f64 = arrivals_rng.random::<f64>();
        let dataset = cdf.iter().position(|&c| v < c).unwrap_or(d - 1);
        jobs.push(ScanArrival { arrival: t, dataset });
    }
    let ranks = size_ranks(label, d, &mut kappa_rng);
    let raw: Vec<f64> = ranks.iter().map(|&r| (r as f64).powf(-theta2)).collect();
    let demand: f64 = jobs.iter().map(|j| raw[j.dataset]).sum();
    let target = cfg.rho * cfg.horizon * cfg.capacity as f64;
    let scale = if demand > 0.0 { target / demand } else { 1.0 };
    Workload {
        capacity: cfg.capacity,
        sizes: raw.iter().map(|x| x * scale).collect(),
        jobs,
        min_slots: cfg.min_slots,
        max_slots: cfg.max_slots,
    }
}

/// Results of one (configuration, repetition).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Record {
    /// θ1 index into [`THETAS`].
    pub t1: usize,
    /// θ2 index into [`THETAS`].
    pub t2: usize,
    /// Correlation label 0..=8.
    pub label: usize,
    /// Repetition seed.
    pub seed: u64,
    /// `metric[objective][scheme]` (objective order [`OBJECTIVES`], scheme order [`SCHEMES`]).
    pub metric: [[f64; 3]; 3],
    /// Total work per scheme (avg-RT runs).
    pub work: [f64; 3],
    /// Mean (over datasets) of the maximum concurrency per scheme (avg-RT runs).
    pub concurrency: [f64; 3],
}

fn run_one(cfg: &StudyConfig, t1: usize, t2: usize, label: usize, seed: u64) -> Result<Record> {
    let w = generate(cfg, THETAS[t1], THETAS[t2], label, seed);
    let schemes = [Scheme::Flex, Scheme::Circumflex, Scheme::Batch { window: cfg.window }];
    let mut rec = Record { t1, t2, label, seed, metric: [[0.0; 3]; 3], work: [0.0; 3], concurrency: [0.0; 3] };
    for (o, &objective) in OBJECTIVES.iter().enumerate() {
        for (s, &scheme) in schemes.iter().enumerate() {
            let out = simulate(&w, scheme, objective)?;
            rec.metric[o][s] = out.metric(objective);
            if o == 0 {
                rec.work[s] = out.work;
                rec.concurrency[s] = out.mean_max_concurrency;
            }
        }
    }
    Ok(rec)
}

/// Per-configuration means over repetitions.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Cell {
    /// θ1.
    pub theta1: f64,
    /// θ2.
    pub theta2: f64,
    /// Correlation label.
    pub label: usize,
    /// Mean metric `[objective][scheme]`.
    pub metric: [[f64; 3]; 3],
    /// Standard deviation over repetitions of the CIRCUMFLEX/FLEX and BATCH/FLEX ratios per objective.
    pub ratio_sd: [[f64; 2]; 3],
    /// Mean work per scheme.
    pub work: [f64; 3],
    /// Mean max concurrency per scheme.
    pub concurrency: [f64; 3],
}

impl Cell {
    /// Scheme `s` (1 = CIRCUMFLEX, 2 = BATCH) over FLEX for objective `o`.
    pub fn ratio(&self, o: usize, s: usize) -> f64 {
        self.metric[o][s] / self.metric[o][0]
    }

    /// Work of scheme `s` over FLEX's.
    pub fn work_ratio(&self, s: usize) -> f64 {
        self.work[s] / self.work[0]
    }
}

/// The whole study.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Study {
    /// Parameters.
    pub config: StudyConfig,
    /// Every configuration, ordered by (θ1, θ2, label).
    pub cells: Vec<Cell>,
    /// Wall-clock seconds the grid took.
    pub seconds: f64,
}

/// Runs the grid; `progress(done, total)` after each task.
pub fn run(cfg: &StudyConfig, progress: impl Fn(usize, usize) + Sync) -> Result<Study> {
    let started = std::time::Instant::now();
    let seeds = cfg.seeds.max(1);
    let mut tasks: Vec<(usize, usize, usize, u64)> = Vec::new();
    for t1 in 0..THETAS.len() {
        for t2 in 0..THETAS.len() {
            for label in 0..9 {
                for seed in 1..=seeds {
                    tasks.push((t1, t2, label, seed));
                }
            }
        }
    }
    let results: Mutex<Vec<Option<Result<Record>>>> = Mutex::new(vec![None; tasks.len()]);
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for _ in 0..cfg.workers.max(1) {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(&(t1, t2, label, seed)) = tasks.get(i) else { break };
                let rec = run_one(cfg, t1, t2, label, seed);
                if let Ok(mut r) = results.lock() {
                    r[i] = Some(rec);
                }
                progress(done.fetch_add(1, Ordering::Relaxed) + 1, tasks.len());
            });
        }
    });
    let results = results.into_inner().map_err(|_| Error::job("study", "worker", "no panicking worker"))?;
    let mut records = Vec::with_capacity(results.len());
    for r in results {
        records.push(r.ok_or_else(|| Error::job("study", "missing task", "every task run"))??);
    }
    let per = seeds as usize;
    let cells = records
        .chunks(per)
        .map(|rs| {
            let col = |f: &dyn Fn(&Record) -> f64| rs.iter().map(f).collect::<Vec<f64>>();
            let mut metric = [[0.0; 3]; 3];
            let mut ratio_sd = [[0.0; 2]; 3];
            for (o, row) in metric.iter_mut().enumerate() {
                for (s, m) in row.iter_mut().enumerate() {
                    *m = mean(&col(&|r| r.metric[o][s]));
                }
                ratio_sd[o] = [1, 2].map(|s| population_sd(&col(&|r| r.metric[o][s] / r.metric[o][0])));
            }
            let work = [0, 1, 2].map(|s| mean(&col(&|r| r.work[s])));
            let concurrency = [0, 1, 2].map(|s| mean(&col(&|r| r.concurrency[s])));
            Cell {
                theta1: THETAS[rs[0].t1],
                theta2: THETAS[rs[0].t2],
                label: rs[0].label,
                metric,
                ratio_sd,
                work,
                concurrency,
            }
        })
        .collect();
    Ok(Study { config: cfg.clone(), cells, seconds: started.elapsed().as_secs_f64() })
}

const LABEL_NAMES: [&str; 9] = ["-1 (κ=1)", "-κ5", "-κ10", "-κ15", "random", "+κ15", "+κ10", "+κ5", "+1 (κ=1)"];

impl Study {
    fn cells_of(&self, t1: f64, t2: f64) -> Vec<&Cell> {
        self.cells.iter().filter(|c| c.theta1 == t1 && c.theta2 == t2).collect()
    }

    /// All 225 ratios of scheme `s` for objective `o`.
    fn all_ratios(&self, o: usize, s: usize) -> Vec<f64> {
        self.cells.iter().map(|c| c.ratio(o, s)).collect()
    }

    /// The spread table (Fig. 6) for objective `o` as markdown.
    pub fn spread_markdown(&self, o: usize) -> String {
        let mut s = format!(
            "| θ1 | θ2 | CIRCUMFLEX/FLEX min | median | max | BATCH/FLEX min | median | max | FLEX mean {} |\n|---|---|---|---|---|---|---|---|---|\n",
            OBJECTIVES[o].name()
        );
        for &t1 in &THETAS {
            for &t2 in &THETAS {
                let cells = self.cells_of(t1, t2);
                let c = min_median_max(&cells.iter().map(|c| c.ratio(o, 1)).collect::<Vec<_>>());
                let b = min_median_max(&cells.iter().map(|c| c.ratio(o, 2)).collect::<Vec<_>>());
                let flex = mean(&cells.iter().map(|c| c.metric[o][0]).collect::<Vec<_>>());
                s.push_str(&format!(
                    "| {t1} | {t2} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} | {flex:.3} |\n",
                    c.0, c.1, c.2, b.0, b.1, b.2
                ));
            }
        }
        s
    }

    /// The θ1 = θ2 = 1 curve (Fig. 5) as markdown.
    pub fn fig5_markdown(&self) -> String {
        let mut s = String::from(
            "| label | correlation | FLEX avg RT (min) | C/F avg RT | B/F avg RT | C/F avg stretch | B/F avg stretch | C/F max stretch | B/F max stretch | C/F work | B/F work | C max conc. | B max batch |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|\n",
        );
        for c in self.cells_of(1.0, 1.0) {
            s.push_str(&format!(
                "| {} | {} | {:.2} | {:.3} ±{:.3} | {:.3} ±{:.3} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} | {:.2} | {:.2} |\n",
                c.label,
                LABEL_NAMES[c.label],
                c.metric[0][0],
                c.ratio(0, 1),
                c.ratio_sd[0][0],
                c.ratio(0, 2),
                c.ratio_sd[0][1],
                c.ratio(1, 1),
                c.ratio(1, 2),
                c.ratio(2, 1),
                c.ratio(2, 2),
                c.work_ratio(1),
                c.work_ratio(2),
                c.concurrency[1],
                c.concurrency[2]
            ));
        }
        s
    }

    /// The paper's numbers beside ours.
    pub fn claims_markdown(&self) -> String {
        let f5 = self.cells_of(1.0, 1.0);
        let first = f5.first().copied();
        let last = f5.last().copied();
        let get = |c: Option<&Cell>, f: &dyn Fn(&Cell) -> f64| c.map_or(f64::NAN, f);
        let worst_c = self.all_ratios(0, 1).into_iter().fold(f64::NEG_INFINITY, f64::max);
        let best_b = self.all_ratios(0, 2).into_iter().fold(f64::INFINITY, f64::min);
        let (bmin, _, bmax) = min_median_max(&f5.iter().map(|c| c.ratio(0, 2)).collect::<Vec<_>>());
        let mut overlap = 0;
        for &t1 in &THETAS {
            for &t2 in &THETAS {
                let cells = self.cells_of(t1, t2);
                let wc = cells.iter().map(|c| c.ratio(0, 1)).fold(f64::NEG_INFINITY, f64::max);
                let bb = cells.iter().map(|c| c.ratio(0, 2)).fold(f64::INFINITY, f64::min);
                if wc >= bb {
                    overlap += 1;
                }
            }
        }
        let worse_batch = self.all_ratios(0, 2).iter().filter(|&&r| r > 1.0).count();
        let worst_cs = [1, 2].map(|o| self.all_ratios(o, 1).into_iter().fold(f64::NEG_INFINITY, f64::max));
        let mut s = String::from("| claim | paper | ours |\n|---|---|---|\n");
        s.push_str(&format!(
            "| θ1=θ2=1, perfectly negative: CIRCUMFLEX/FLEX avg RT | 0.81 | {:.3} |\n",
            get(first, &|c| c.ratio(0, 1))
        ));
        s.push_str(&format!(
            "| θ1=θ2=1, perfectly positive: CIRCUMFLEX/FLEX avg RT | 0.47 | {:.3} |\n",
            get(last, &|c| c.ratio(0, 1))
        ));
        s.push_str(&format!(
            "| θ1=θ2=1, perfectly negative: BATCH/FLEX avg RT | 1.48 | {:.3} |\n",
            get(first, &|c| c.ratio(0, 2))
        ));
        s.push_str(&format!(
            "| θ1=θ2=1, perfectly positive: BATCH/FLEX avg RT | 1.11 | {:.3} |\n",
            get(last, &|c| c.ratio(0, 2))
        ));
        s.push_str(&format!("| θ1=θ2=1: BATCH/FLEX range over labels | 1.11–1.48 | {bmin:.3}–{bmax:.3} |\n"));
        s.push_str(&format!(
            "| θ1=θ2=1: CIRCUMFLEX max concurrency (neg → pos) | 2.8 → 4.3 | {:.2} → {:.2} |\n",
            get(first, &|c| c.concurrency[1]),
            get(last, &|c| c.concurrency[1])
        ));
        s.push_str(&format!(
            "| θ1=θ2=1: BATCH max jobs per batch | 4.8 – 5.0 | {:.2} – {:.2} |\n",
            get(first, &|c| c.concurrency[2]),
            get(last, &|c| c.concurrency[2])
        ));
        s.push_str(&format!(
            "| θ1=θ2=1: work ordering BATCH < CIRCUMFLEX < FLEX | yes | C/F {:.3}–{:.3}, B/F {:.3}–{:.3} |\n",
            get(first, &|c| c.work_ratio(1)),
            get(last, &|c| c.work_ratio(1)),
            get(first, &|c| c.work_ratio(2)),
            get(last, &|c| c.work_ratio(2))
        ));
        s.push_str(&format!("| worst CIRCUMFLEX/FLEX avg RT over 225 configs | 0.98 | {worst_c:.3} |\n"));
        s.push_str(&format!("| best BATCH/FLEX avg RT over 225 configs | 0.97 | {best_b:.3} |\n"));
        s.push_str(&format!("| (θ1,θ2) where worst CIRCUMFLEX ≥ best BATCH (avg RT) | 0 of 25 | {overlap} of 25 |\n"));
        s.push_str(&format!(
            "| configs where BATCH is worse than FLEX (avg RT) | nearly all | {worse_batch} of 225 |\n"
        ));
        s.push_str(&format!(
            "| worst CIRCUMFLEX/FLEX avg stretch / max stretch | \"even stronger\", no numbers | {:.3} / {:.3} |\n",
            worst_cs[0], worst_cs[1]
        ));
        s
    }

    /// The report's markdown (without plots).
    pub fn to_markdown(&self) -> String {
        let c = &self.config;
        let mut s = format!(
            "# CIRCUMFLEX study reproduction (paper §4, digest §5)\n\n\
             Grid: 5 θ1 × 5 θ2 × 9 correlation labels = {} configurations × {} repetitions × 3 schemes × 3 objectives \
             ({} simulations). D = {}, {} arrivals at {}/min, S = {}, ρ = {}, T = {} min, W = {} min, f = 1, \
             m_j = {}, M_j = {}. Wall clock: **{:.1} s** on {} worker threads.\n\n",
            self.cells.len(),
            c.seeds,
            self.cells.len() * c.seeds as usize * 9,
            c.datasets,
            c.jobs,
            c.rate,
            c.capacity,
            c.rho,
            c.horizon,
            c.window,
            c.min_slots,
            c.max_slots,
            self.seconds,
            c.workers
        );
        s.push_str("## Paper vs ours\n\n");
        s.push_str(&self.claims_markdown());
        s.push_str(
            "\n## Fig. 5: θ1 = θ2 = 1 against correlation (label 0 = perfectly negative, 8 = perfectly positive)\n\n",
        );
        s.push_str(&self.fig5_markdown());
        for (o, name) in ["Fig. 6(a) average response time", "Fig. 6(b) average stretch", "Fig. 6(c) maximum stretch"]
            .iter()
            .enumerate()
        {
            s.push_str(&format!("\n## {name}: ratio spread over the 9 correlations per (θ1, θ2)\n\n"));
            s.push_str(&self.spread_markdown(o));
        }
        s
    }

    /// Loads a study written by [`Study::write_report`] (`study.json`), to re-render a report.
    pub fn load(path: &std::path::Path) -> Result<Study> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| Error::Io { path: path.display().to_string(), message: e.to_string() })?;
        serde_json::from_str(&text).map_err(|e| Error::Json { what: "study", message: e.to_string() })
    }

    /// The command line that reproduces this study into `out`.
    pub fn command(&self, out: &std::path::Path) -> String {
        format!(
            "circumflex reproduce circumflex --seeds {} --max-slots {} --rho {} --workers {} --out {}",
            self.config.seeds,
            self.config.max_slots,
            self.config.rho,
            self.config.workers,
            out.display()
        )
    }

    /// CSV of every configuration.
    pub fn cells_csv(&self) -> String {
        let mut s = String::from("theta1,theta2,label,objective,flex,circumflex,batch,c_over_f,b_over_f,c_sd,b_sd,work_c_over_f,work_b_over_f,conc_c,conc_b\n");
        for c in &self.cells {
            for (o, obj) in OBJECTIVES.iter().enumerate() {
                s.push_str(&format!(
                    "{},{},{},{},{:.6},{:.6},{:.6},{:.6},{:.6},{:.6},{:.6},{:.6},{:.6},{:.4},{:.4}\n",
                    c.theta1,
                    c.theta2,
                    c.label,
                    obj.name(),
                    c.metric[o][0],
                    c.metric[o][1],
                    c.metric[o][2],
                    c.ratio(o, 1),
                    c.ratio(o, 2),
                    c.ratio_sd[o][0],
                    c.ratio_sd[o][1],
                    c.work_ratio(1),
                    c.work_ratio(2),
                    c.concurrency[1],
                    c.concurrency[2]
                ));
            }
        }
        s
    }

    /// Writes `report.md` (with `discussion` appended), `cells.csv`, `study.json`, the SVG plots
    /// and `COMMAND` into `dir`.
    pub fn write_report(&self, dir: &std::path::Path, command: &str, discussion: &str) -> Result<()> {
        use crate::plot::{grouped_bars, line_chart, Series};
        let out = crate::output::OutDir::create(dir)?;
        let write = |name: &str, text: &str| out.write(name, text);
        let mut md = self.to_markdown();
        md.push_str("\n## Plots\n\n");
        let f5 = self.cells_of(1.0, 1.0);
        let curve = |f: &dyn Fn(&Cell) -> f64| f5.iter().map(|c| (c.label as f64, f(c))).collect::<Vec<_>>();
        let files = ["avg-rt", "avg-stretch", "max-stretch"];
        for (o, file) in files.iter().enumerate() {
            let series = vec![
                Series { name: "CIRCUMFLEX/FLEX".into(), points: curve(&|c| c.ratio(o, 1)) },
                Series { name: "BATCH/FLEX".into(), points: curve(&|c| c.ratio(o, 2)) },
                Series { name: "FLEX".into(), points: curve(&|_| 1.0) },
            ];
            let name = format!("fig5-{file}.svg");
            let svg = line_chart(
                &format!("{} ratio to FLEX, θ1 = θ2 = 1", OBJECTIVES[o].name()),
                "correlation label (0 = perfectly negative, 4 = random, 8 = perfectly positive)",
                "ratio to FLEX",
                &series,
                None,
            );
            write(&name, &svg)?;
            md.push_str(&format!("![{name}]({name})\n\n"));
        }
        let series = vec![
            Series { name: "CIRCUMFLEX/FLEX work".into(), points: curve(&|c| c.work_ratio(1)) },
            Series { name: "BATCH/FLEX work".into(), points: curve(&|c| c.work_ratio(2)) },
        ];
        write(
            "fig5b-work.svg",
            &line_chart("Work ratios, θ1 = θ2 = 1", "correlation label", "work / FLEX work", &series, Some((0.0, 1.0))),
        )?;
        md.push_str("![fig5b-work.svg](fig5b-work.svg)\n\n");
        // Two-digit group labels "τ1τ2" (θ = 0.25·τ) keep 25 groups legible on the axis.
        let mut groups = Vec::new();
        for t1 in 0..THETAS.len() {
            for t2 in 0..THETAS.len() {
                groups.push(format!("{t1}{t2}"));
            }
        }
        for (o, file) in files.iter().enumerate() {
            let mut values = vec![Vec::new(), Vec::new()];
            let mut errors = vec![Vec::new(), Vec::new()];
            for &t1 in &THETAS {
                for &t2 in &THETAS {
                    let cells = self.cells_of(t1, t2);
                    for s in 1..3 {
                        let (lo, med, hi) = min_median_max(&cells.iter().map(|c| c.ratio(o, s)).collect::<Vec<_>>());
                        values[s - 1].push(med);
                        errors[s - 1].push((lo, hi));
                    }
                }
            }
            let name = format!("fig6-{file}.svg");
            let svg = grouped_bars(
                &format!("{}: median, min–max over 9 correlations; groups τ1τ2, θ = τ/4", OBJECTIVES[o].name()),
                "ratio to FLEX",
                &groups,
                &["CIRCUMFLEX/FLEX".to_string(), "BATCH/FLEX".to_string()],
                &values,
                Some(&errors),
                Some(1.0),
            );
            write(&name, &svg)?;
            md.push_str(&format!("![{name}]({name})\n\n"));
        }
        md.push_str(discussion);
        md.push_str(&format!("\n## Reproduce\n\n```\n{command}\n```\n"));
        write("report.md", &md)?;
        write("cells.csv", &self.cells_csv())?;
        let json =
            serde_json::to_string_pretty(self).map_err(|e| Error::Json { what: "study", message: e.to_string() })?;
        write("study.json", &json)?;
        write("COMMAND", &format!("{command}\n"))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kappa_labels_and_rank_procedure() {
        assert_eq!(kappa(0, 20), (true, 1));
        assert_eq!(kappa(4, 20), (false, 20));
        assert_eq!(kappa(8, 20), (false, 1));
        let mut rng = Pcg64::seed_from_u64(1);
        // κ = 1 positive: the most popular dataset is the largest, and so on.
        assert_eq!(size_ranks(8, 5, &mut rng), vec![1, 2, 3, 4, 5]);
        // κ = 1 negative: the least popular is the largest.
        assert_eq!(size_ranks(0, 5, &mut rng), vec![5, 4, 3, 2, 1]);
        for label in 0..9 {
            let mut r = size_ranks(label, 20, &mut rng);
            r.sort();
            assert_eq!(r, (1..=20).collect::<Vec<_>>(), "a permutation");
        }
    }

    #[test]
    fn workloads_hit_the_utilisation_exactly() {
        let cfg = StudyConfig::default();
        let w = generate(&cfg, 1.0, 1.0, 8, 3);
        let total: f64 = w.jobs.iter().map(|j| w.sizes[j.dataset]).sum();
        assert!((total - 9000.0).abs() < 1e-6);
        assert_eq!(w.jobs.len(), 1000);
        assert!(w.jobs.windows(2).all(|p| p[0].arrival <= p[1].arrival));
        let span = w.jobs.last().map_or(0.0, |j| j.arrival);
        assert!(span > 80.0 && span < 120.0, "{span}");
        assert_eq!(generate(&cfg, 1.0, 1.0, 8, 3), w, "deterministic");
    }

    #[test]
    fn small_grid_runs_and_is_thread_count_independent() {
        let cfg = StudyConfig { seeds: 1, jobs: 30, workers: 2, ..StudyConfig::default() };
        let a = run(&cfg, |_, _| {}).unwrap();
        let b = run(&StudyConfig { workers: 1, ..cfg.clone() }, |_, _| {}).unwrap();
        assert_eq!(a.cells, b.cells);
        assert_eq!(a.cells.len(), 225);
        for c in &a.cells {
            assert!(c.work_ratio(1) <= 1.0 + 1e-9, "sharing never adds work");
            assert!(c.concurrency[1] >= 1.0);
        }
    }
}
