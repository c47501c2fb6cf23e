//! Reproduction of FlowFlex's simulation study (paper §4.1–4.2, digest §4.1, §4.4): FlowFlex
//! against the Fair and FIFO ready-list baselines on random flows, 9 minisum and 8 minimax metrics,
//! each scheduler reported as the average and worst `(ALG + 1)/(LB + 1)` over the instances.
//!
//! Fixed by the paper: `P = 25` slots; 5–20 flows of 2–20 jobs; every forward pair of jobs linked
//! with probability ½ and every sink joined to the flow's last job; weights uniform in `[1, 10]`
//! (stretch weights `1/V_j`); SLAs with at most 5 steps; 25 instances per metric; Fair and FIFO
//! schedule every ready job; the lower bounds (min-cost flow for minisum, the critical-path bound
//! improved by bisection for minimax).
//!
//! Decided here (the paper is silent; digest §6 gaps 17–21):
//! - Counts are integer and inclusive. Flows are "big" with probability ½ (job work ×4); a job is
//!   "wide" (long: work ×5) with probability ¼ and "tall" (`δ_i = P`) with probability ¼, otherwise
//!   `δ_i ∈ U{1..10}`; base work `U{1..10}` slot-time units.
//! - Deadlines are integers "possible to meet", read as *jointly* possible: a reference schedule (the
//!   Fig. 5 greedy over the Stage 1 chains in a uniformly random flow order) completes flow `j` at
//!   `R_j`, and `d_j = ⌈R_j⌉ + U{0..⌈Q_j⌉}` (the "uniform random additional time"). So every instance
//!   has a schedule meeting all deadlines (optimal tardiness and tardy cost 0), as the paper's
//!   "within 1.26 on all 8 minimax sets" needs when the bound is 0. Per-flow meetability only
//!   (`⌈Q_j⌉ + U{…}`) makes most deadlines collectively impossible and every scheduler's tardiness
//!   ratio large (we tried it: averages 28–120 for FlowFlex on the minimax tardiness metrics).
//!   SLA: `U{1..5}` steps, the first due `d_j`, each next one `U{1..⌈Q_j⌉}` later; step increments
//!   are 1 (unweighted) or `U[1, 10]` (weighted), so the unweighted SLA cost counts missed steps.
//! - Each instance draws its structure and every cost parameter once from its own `Pcg64` stream
//!   (seed `base + i`), and all 17 metrics use the same instances, so metrics compare like for like.
//! - Minisum objectives are sums (`Σ_j w_j(C_j)`, not averages); with the `+1` of the ratio this
//!   matters only for the small stretch values.
//! - FlowFlex minisum runs Fig. 6 on the compressed grid (ratio [`StudyConfig::grid_ratio`]) and
//!   keeps the best of the rounding fractions `θ ∈ {0.1, …, 0.9}` (the paper's practical remark);
//!   minimax runs Fig. 8 to a tolerance of `1e-6·max(1, LB0)`. Flow completions are read off the
//!   Stage 3 job schedules.
//! - Minisum LB: our certified min-cost-flow bound on the compressed grid (module [`circumflex_policies::flowflex::minisum`]),
//!   which is never above the optimum; the paper's unit-grid `cost(f)` may be slightly above it for
//!   continuous costs. Minimax LB: [`circumflex_policies::flowflex::minimax::improved_lower_bound`] with `Q_j`.

use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64;
use serde::Serialize;

use crate::stats::Spread;
use circumflex_core::error::Result;
use circumflex_policies::flex::metrics::Penalty;
use circumflex_policies::flowflex::chain::PseudoChain;
use circumflex_policies::flowflex::flow::{Flow, FlowJob};
use circumflex_policies::flowflex::greedy::schedule_in_order;
use circumflex_policies::flowflex::ready_list::{self, ReadyRule};
use circumflex_policies::flowflex::Instance;

/// Whether a metric sums or maximises the flows' costs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Aggregate {
    /// `Σ_j w_j(C_j)`.
    Minisum,
    /// `max_j w_j(C_j)`.
    Minimax,
}

/// The basic cost types of the paper's Fig. 2 (plus stretch).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum CostType {
    /// `ω·t`.
    Completion,
    /// `t / V_j`.
    Stretch,
    /// `ω·[t > d]`.
    Tardy,
    /// `ω·max(0, t − d)`.
    Tardiness,
    /// SLA steps.
    Sla,
}

/// One of the 17 study metrics.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Metric {
    /// Name in the report.
    pub name: &'static str,
    /// Minisum or minimax.
    pub aggregate: Aggregate,
    /// Cost type.
    pub cost: CostType,
    /// Whether the per-flow weights apply.
    pub weighted: bool,
}

const fn metric(name: &'static str, aggregate: Aggregate, cost: CostType, weighted: bool) -> Metric {
    Metric { name, aggregate, cost, weighted }
}

/// The paper's 9 minisum (Fig. 10) and 8 minimax (Fig. 11) metrics (digest §4.1 enumeration).
pub const METRICS: [Metric; 17] = {
    use Aggregate::{Minimax as X, Minisum as S};
    use CostType::*;
    [
        metric("avg completion time", S, Completion, false),
        metric("weighted avg completion time", S, Completion, true),
        metric("avg stretch", S, Stretch, false),
        metric("tardy flows", S, Tardy, false),
        metric("weighted tardy flows", S, Tardy, true),
        metric("total tardiness", S, Tardiness, false),
        metric("weighted total tardiness", S, Tardiness, true),
        metric("total SLA cost", S, Sla, false),
        metric("weighted total SLA cost", S, Sla, true),
        metric("makespan", X, Completion, false),
        metric("max weighted completion time", X, Completion, true),
        metric("max stretch", X, Stretch, false),
        metric("max weighted tardy cost", X, Tardy, true),
        metric("max tardiness", X, Tardiness, false),
        metric("max weighted tardiness", X, Tardiness, true),
        metric("max SLA cost", X, Sla, false),
        metric("max weighted SLA cost", X, Sla, true),
    ]
};

/// Study parameters; the defaults are the paper's where it gives them.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StudyConfig {
    /// Instances per metric (paper: 25).
    pub instances: u64,
    /// Seed of the first instance; instance `i` uses `seed + i`.
    pub seed: u64,
    /// Slots `P` (paper: 25).
    pub slots: u32,
    /// Flows per instance, inclusive range (paper: 5–20).
    pub flows: (u32, u32),
    /// Jobs per flow, inclusive range (paper: 2–20).
    pub jobs: (u32, u32),
    /// Geometric ratio of the compressed minisum grid.
    pub grid_ratio: f64,
    /// Deadline slack: the additional time after the reference completion is `U{0..⌈slack·Q_j⌉}`.
    pub slack: f64,
}

impl Default for StudyConfig {
    fn default() -> Self {
        StudyConfig { instances: 25, seed: 1, slots: 25, flows: (5, 20), jobs: (2, 20), grid_ratio: 1.1, slack: 1.0 }
    }
}

/// One generated flow with every cost parameter the metrics need.
#[derive(Clone, Debug, PartialEq)]
pub struct StudyFlow {
    /// Jobs `(s_i, δ_i)`.
    pub jobs: Vec<FlowJob>,
    /// Precedence edges.
    pub edges: Vec<(usize, usize)>,
    /// Weight `ω_j ∈ [1, 10]`.
    pub weight: f64,
    /// Deadline `d_j` (integer).
    pub due: f64,
    /// SLA steps `(due, weighted increment)`; the unweighted increment is 1.
    pub sla: Vec<(f64, f64)>,
}

impl StudyFlow {
    fn volume(&self) -> f64 {
        self.jobs.iter().map(|j| j.work).sum()
    }

    /// The flow's cost under `metric`.
    pub fn cost(&self, metric: &Metric) -> Penalty {
        let w = if metric.weighted { self.weight } else { 1.0 };
        match metric.cost {
            CostType::Completion => Penalty::Linear { slope: w, origin: 0.0 },
            CostType::Stretch => Penalty::Linear { slope: 1.0 / self.volume(), origin: 0.0 },
            CostType::Tardy => Penalty::Steps(vec![(self.due, w)]),
            CostType::Tardiness => Penalty::Tardiness { slope: w, due: self.due },
            CostType::Sla => {
                let mut level = 0.0;
                Penalty::Steps(
                    self.sla
                        .iter()
                        .map(|&(due, inc)| {
                            level += if metric.weighted { inc } else { 1.0 };
                            (due, level)
                        })
                        .collect(),
                )
            }
        }
    }
}

/// Generates instance `index` (see the module docs).
pub fn generate(cfg: &StudyConfig, index: u64) -> Vec<StudyFlow> {
    let mut rng = Pcg64::seed_from_u64(cfg.seed.wrapping_add(index));
    let p = cfg.slots.max(1);
    let m = rng.random_range(cfg.flows.0..=cfg.flows.1.max(cfg.flows.0));
    let mut flows: Vec<StudyFlow> = (0..m)
        .map(|_| {
            let n = rng.random_range(cfg.jobs.0.max(1)..=cfg.jobs.1.max(cfg.jobs.0.max(1))) as usize;
            let big = if rng.random_bool(0.5) { 4.0 } else { 1.0 };
            let jobs: Vec<FlowJob> = (0..n)
                .map(|_| {
                    let wide = if rng.random_bool(0.25) { 5.0 } else { 1.0 };
                    let work = f64::from(rng.random_range(1u32..=10)) * big * wide;
                    let tall = rng.random_bool(0.25);
                    let max_parallelism = if tall { p } else { rng.random_range(1..=10u32.min(p)) };
                    FlowJob { work, max_parallelism }
                })
                .collect();
            let mut edges = Vec::new();
            for a in 0..n {
                for b in a + 1..n {
                    if rng.random_bool(0.5) {
                        edges.push((a, b));
                    }
                }
            }
            for a in 0..n.saturating_sub(1) {
                if !edges.iter().any(|&(from, _)| from == a) {
                    edges.push((a, n - 1));
                }
            }
            StudyFlow { jobs, edges, weight: rng.random_range(1.0..=10.0), due: 0.0, sla: Vec::new() }
        })
        .collect();
    // Validated by construction (positive work, 1 ≤ δ ≤ P, forward edges), so `ok()` drops nothing.
    let built: Vec<Flow> =
        flows.iter().filter_map(|f| Flow::new(f.jobs.clone(), &f.edges, Penalty::Zero, p).ok()).collect();
    let chains: Vec<PseudoChain> = built.iter().map(PseudoChain::from_flow).collect();
    let mut order: Vec<usize> = (0..chains.len()).collect();
    for i in (1..order.len()).rev() {
        order.swap(i, rng.random_range(0..=i));
    }
    let reference = schedule_in_order(&chains, &order, p).unwrap_or_default();
    for (j, flow) in flows.iter_mut().enumerate() {
        let q = built.get(j).map_or(1.0, |f| f.completion_lower_bound(p).ceil().max(1.0));
        let met_by = reference.get(j).map_or(q, |s| s.completion.ceil());
        flow.due = met_by + f64::from(rng.random_range(0..=(cfg.slack * q).ceil() as u32));
        let steps = rng.random_range(1..=5);
        let mut due = flow.due;
        for _ in 0..steps {
            flow.sla.push((due, rng.random_range(1.0..=10.0)));
            due += f64::from(rng.random_range(1..=q as u32));
        }
    }
    flows
}

/// The three schedulers' objectives and the lower bound on one instance for one metric.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Outcome {
    /// FlowFlex's objective.
    pub flowflex: f64,
    /// Fair's objective.
    pub fair: f64,
    /// FIFO's objective.
    pub fifo: f64,
    /// The lower bound.
    pub lower_bound: f64,
}

fn aggregate(kind: Aggregate, costs: &[Penalty], completions: &[f64]) -> f64 {
    let values = costs.iter().zip(completions).map(|(w, &c)| w.eval(c));
    match kind {
        Aggregate::Minisum => values.sum(),
        Aggregate::Minimax => values.fold(0.0, f64::max),
    }
}

/// Runs FlowFlex, Fair and FIFO on one instance under `metric`.
pub fn evaluate(flows: &[StudyFlow], metric: &Metric, cfg: &StudyConfig) -> Result<Outcome> {
    let built = flows
        .iter()
        .map(|f| Flow::new(f.jobs.clone(), &f.edges, f.cost(metric), cfg.slots))
        .collect::<Result<Vec<Flow>>>()?;
    let costs: Vec<Penalty> = built.iter().map(|f| f.cost().clone()).collect();
    let instance = Instance::new(built.clone(), cfg.slots)?;
    let (schedule, lower_bound) = match metric.aggregate {
        Aggregate::Minisum => {
            let thetas: Vec<f64> = (1..=9).map(|k| f64::from(k) / 10.0).collect();
            let out = instance.minisum_best_rounding(cfg.grid_ratio, &thetas)?;
            (out.schedule, out.lower_bound)
        }
        Aggregate::Minimax => {
            let lb0 = circumflex_policies::flowflex::minimax::basic_lower_bound(instance.chains(), &costs, cfg.slots);
            let tolerance = 1e-6 * lb0.max(1.0);
            let out = instance.minimax(tolerance)?;
            let lb = instance.minimax_lower_bound(out.objective, tolerance)?;
            (out.schedule, lb)
        }
    };
    let completions: Vec<f64> = instance
        .job_schedules(&schedule)
        .iter()
        .map(|pieces| pieces.iter().map(|p| p.end).fold(0.0, f64::max))
        .collect();
    let fair = ready_list::completions(&built, cfg.slots, ReadyRule::Fair)?;
    let fifo = ready_list::completions(&built, cfg.slots, ReadyRule::Fifo)?;
    Ok(Outcome {
        flowflex: aggregate(metric.aggregate, &costs, &completions),
        fair: aggregate(metric.aggregate, &costs, &fair),
        fifo: aggregate(metric.aggregate, &costs, &fifo),
        lower_bound,
    })
}

/// `(ALG + 1)/(LB + 1)` (paper footnote 10).
pub fn ratio(alg: f64, lower_bound: f64) -> f64 {
    (alg + 1.0) / (lower_bound + 1.0)
}

/// One metric's results over all instances.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MetricResult {
    /// The metric.
    pub metric: Metric,
    /// Per instance.
    pub outcomes: Vec<Outcome>,
    /// Ratio statistics for FlowFlex, Fair and FIFO (in that order); `max` is the worst case.
    pub ratios: [Spread; 3],
}

/// The whole study.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Study {
    /// Parameters.
    pub config: StudyConfig,
    /// Flows per instance.
    pub flows_per_instance: Vec<usize>,
    /// One entry per metric, in [`METRICS`] order.
    pub metrics: Vec<MetricResult>,
}

/// Scheduler names in result order.
pub const SCHEDULERS: [&str; 3] = ["FlowFlex", "Fair", "FIFO"];

/// Runs the study; `progress` is called after each metric.
pub fn run(cfg: &StudyConfig, mut progress: impl FnMut(&MetricResult)) -> Result<Study> {
    let instances: Vec<Vec<StudyFlow>> = (0..cfg.instances).map(|i| generate(cfg, i)).collect();
    let mut metrics = Vec::new();
    for metric in &METRICS {
        let outcomes = instances.iter().map(|flows| evaluate(flows, metric, cfg)).collect::<Result<Vec<_>>>()?;
        let pick = |k: usize| -> Vec<f64> {
            outcomes.iter().map(|o| ratio([o.flowflex, o.fair, o.fifo][k], o.lower_bound)).collect()
        };
        let result = MetricResult { metric: *metric, ratios: [0, 1, 2].map(|k| Spread::of(&pick(k))), outcomes };
        progress(&result);
        metrics.push(result);
    }
    Ok(Study { config: cfg.clone(), flows_per_instance: instances.iter().map(Vec::len).collect(), metrics })
}

impl Study {
    fn table(&self, kind: Aggregate) -> String {
        let mut s = String::from(
            "| metric | FlowFlex avg | FlowFlex worst | Fair avg | Fair worst | FIFO avg | FIFO worst |\n\
             |---|---|---|---|---|---|---|\n",
        );
        for r in self.metrics.iter().filter(|r| r.metric.aggregate == kind) {
            s.push_str(&format!("| {} |", r.metric.name));
            for spread in &r.ratios {
                s.push_str(&format!(" {:.3} | {:.3} |", spread.mean, spread.max));
            }
            s.push('\n');
        }
        s
    }

    /// The report's tables.
    pub fn to_markdown(&self) -> String {
        let c = &self.config;
        let mut s = format!(
            "# FlowFlex reproduction: the simulation study (paper §4.1–4.2, Figs. 10 and 11)\n\n\
             P = {} slots; {} instances (seeds {}..={}) of {}–{} flows (this run: {}–{}) of {}–{} jobs; \
             edge probability 0.5, sinks joined; minisum on the compressed grid (ratio {}). \
             Each cell is `(ALG + 1)/(LB + 1)` over the instances: the average and the worst. \
             Decisions: `rust-core/src/flowflex/study.rs` module docs.\n\n",
            c.slots,
            c.instances,
            c.seed,
            c.seed + c.instances.saturating_sub(1),
            c.flows.0,
            c.flows.1,
            self.flows_per_instance.iter().min().unwrap_or(&0),
            self.flows_per_instance.iter().max().unwrap_or(&0),
            c.jobs.0,
            c.jobs.1,
            c.grid_ratio,
        );
        s.push_str("## Minisum metrics (paper Fig. 10)\n\n");
        s.push_str(&self.table(Aggregate::Minisum));
        s.push_str("\n## Minimax metrics (paper Fig. 11)\n\n");
        s.push_str(&self.table(Aggregate::Minimax));
        s
    }

    fn find(&self, name: &str) -> Option<&MetricResult> {
        self.metrics.iter().find(|r| r.metric.name == name)
    }

    /// The paper's claims with our measurements beside them.
    pub fn claims_markdown(&self) -> String {
        let verdict = |ok: bool| if ok { "holds" } else { "does not hold" };
        let mut s = String::from("\n## The paper's claims against these measurements\n\n");
        let minimax: Vec<&MetricResult> =
            self.metrics.iter().filter(|r| r.metric.aggregate == Aggregate::Minimax).collect();
        let worst_avg = minimax.iter().map(|r| r.ratios[0].mean).fold(0.0, f64::max);
        let above: Vec<String> = minimax
            .iter()
            .filter(|r| r.ratios[0].mean > 1.26)
            .map(|r| format!("{} {:.3}", r.metric.name, r.ratios[0].mean))
            .collect();
        s.push_str(&format!(
            "1. *In all 8 minimax sets FlowFlex is within 1.26 of \"optimal\" on average.* Measured: the largest \
             FlowFlex average over the 8 minimax metrics is {worst_avg:.3} ({}{}).\n",
            verdict(worst_avg <= 1.26),
            if above.is_empty() { String::new() } else { format!(": above 1.26 on {}", above.join(", ")) }
        ));
        let beaten: Vec<&str> = self
            .metrics
            .iter()
            .filter(|r| r.metric.name != "makespan")
            .filter(|r| !(r.ratios[0].mean <= r.ratios[1].mean && r.ratios[0].mean <= r.ratios[2].mean))
            .map(|r| r.metric.name)
            .collect();
        s.push_str(&format!(
            "2. *FlowFlex does far better than Fair and FIFO on everything but makespan.* Measured: FlowFlex has \
             the lowest average ratio on {} of the 16 other metrics{} ({}).\n",
            16 - beaten.len(),
            if beaten.is_empty() { String::new() } else { format!("; not on: {}", beaten.join(", ")) },
            verdict(beaten.is_empty())
        ));
        if let Some(r) = self.find("makespan") {
            let worst = r.ratios.iter().map(|x| x.mean).fold(0.0, f64::max);
            s.push_str(&format!(
                "3. *Makespan is fine for all schemes.* Measured averages: FlowFlex {:.3}, Fair {:.3}, FIFO {:.3} \
                 ({}: our criterion is every average within 1.25 of the bound).\n",
                r.ratios[0].mean,
                r.ratios[1].mean,
                r.ratios[2].mean,
                verdict(worst <= 1.25)
            ));
        }
        if let Some(r) = self.find("avg stretch") {
            s.push_str(&format!(
                "4. *FIFO performs particularly poorly on average stretch.* Measured averages: FIFO {:.3}, Fair {:.3}, \
                 FlowFlex {:.3} ({}).\n",
                r.ratios[2].mean,
                r.ratios[1].mean,
                r.ratios[0].mean,
                verdict(r.ratios[2].mean > r.ratios[1].mean && r.ratios[2].mean > r.ratios[0].mean)
            ));
        }
        let tardiness: Vec<&MetricResult> =
            self.metrics.iter().filter(|r| r.metric.cost == CostType::Tardiness).collect();
        let factor = tardiness
            .iter()
            .map(|r| r.ratios[1].mean.min(r.ratios[2].mean) / r.ratios[0].mean)
            .fold(f64::INFINITY, f64::min);
        s.push_str(&format!(
            "5. *FlowFlex does dramatically better on the tardiness metrics.* Measured: on the {} tardiness \
             metrics the better baseline's average ratio is at least {factor:.2}× FlowFlex's ({}).\n",
            tardiness.len(),
            verdict(factor >= 2.0)
        ));
        s
    }

    /// `ratios.csv`: one row per (metric, scheduler).
    pub fn ratios_csv(&self) -> String {
        let mut s = String::from("metric,aggregate,scheduler,avg_ratio,worst_ratio,best_ratio\n");
        for r in &self.metrics {
            for (name, spread) in SCHEDULERS.iter().zip(&r.ratios) {
                s.push_str(&format!(
                    "{},{:?},{name},{:.6},{:.6},{:.6}\n",
                    r.metric.name, r.metric.aggregate, spread.mean, spread.max, spread.min
                ));
            }
        }
        s
    }

    /// Writes `report.md`, `ratios.csv`, `study.json`, `minisum.svg`, `minimax.svg` and `COMMAND`.
    pub fn write_report(&self, dir: &std::path::Path, command: &str) -> Result<()> {
        let out = crate::output::OutDir::create(dir)?;
        let mut md = self.to_markdown();
        md.push_str(&self.claims_markdown());
        md.push_str("\n## Plots\n\nBars: average ratio; whiskers: best to worst instance.\n\n");
        for (kind, file, figure) in
            [(Aggregate::Minisum, "minisum.svg", "Fig. 10"), (Aggregate::Minimax, "minimax.svg", "Fig. 11")]
        {
            let rows: Vec<&MetricResult> = self.metrics.iter().filter(|r| r.metric.aggregate == kind).collect();
            let groups: Vec<String> = rows.iter().map(|r| r.metric.name.to_string()).collect();
            let names: Vec<String> = SCHEDULERS.iter().map(|s| s.to_string()).collect();
            let values: Vec<Vec<f64>> = (0..3).map(|k| rows.iter().map(|r| r.ratios[k].mean).collect()).collect();
            let errors: Vec<Vec<(f64, f64)>> =
                (0..3).map(|k| rows.iter().map(|r| (r.ratios[k].min, r.ratios[k].max)).collect()).collect();
            let svg = crate::plot::grouped_bars(
                &format!("(ALG+1)/(LB+1), {:?} metrics (paper {figure})", kind),
                "ratio to the lower bound",
                &groups,
                &names,
                &values,
                Some(&errors),
                Some(1.0),
            );
            out.write(file, &svg)?;
            md.push_str(&format!("![{figure}]({file})\n\n"));
        }
        md.push_str(&super::discussion("flowflex")?);
        md.push_str(&format!("\n## Reproduce\n\n```\n{command}\n```\n"));
        out.write("report.md", &md)?;
        out.write("ratios.csv", &self.ratios_csv())?;
        let json = serde_json::to_string_pretty(self)
            .map_err(|e| circumflex_core::error::Error::Json { what: "study", message: e.to_string() })?;
        out.write("study.json", &json)?;
        out.write("COMMAND", &format!("{command}\n"))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tiny() -> StudyConfig {
        StudyConfig { instances: 3, seed: 11, slots: 6, flows: (2, 4), jobs: (2, 5), grid_ratio: 1.2, slack: 1.0 }
    }

    #[test]
    fn generator_follows_the_paper_shape() {
        let cfg = StudyConfig::default();
        for i in 0..5 {
            let flows = generate(&cfg, i);
            assert_eq!(flows, generate(&cfg, i), "deterministic");
            assert!((5..=20).contains(&flows.len()));
            for f in &flows {
                let n = f.jobs.len();
                assert!((2..=20).contains(&n));
                // Single sink: every job but the last has a successor.
                for a in 0..n - 1 {
                    assert!(f.edges.iter().any(|&(from, _)| from == a), "job {a} is a sink");
                }
                assert!(f.edges.iter().all(|&(a, b)| a < b && b < n));
                assert!(f.jobs.iter().all(|j| j.max_parallelism >= 1 && j.max_parallelism <= 25 && j.work >= 1.0));
                assert!((1.0..=10.0).contains(&f.weight));
                assert!((1..=5).contains(&f.sla.len()) && f.sla[0].0 == f.due && f.due.fract() == 0.0);
                assert!(f.sla.windows(2).all(|w| w[0].0 < w[1].0));
            }
        }
    }

    #[test]
    fn metric_costs_match_their_definitions() {
        let flow = StudyFlow {
            jobs: vec![FlowJob { work: 4.0, max_parallelism: 1 }],
            edges: vec![],
            weight: 3.0,
            due: 5.0,
            sla: vec![(5.0, 2.0), (7.0, 4.0)],
        };
        let cost = |name: &str| flow.cost(METRICS.iter().find(|m| m.name == name).unwrap());
        assert_eq!(cost("avg completion time").eval(6.0), 6.0);
        assert_eq!(cost("max weighted completion time").eval(6.0), 18.0);
        assert_eq!(cost("avg stretch").eval(6.0), 1.5);
        assert_eq!((cost("tardy flows").eval(5.0), cost("weighted tardy flows").eval(5.5)), (0.0, 3.0));
        assert_eq!(cost("weighted total tardiness").eval(7.0), 6.0);
        assert_eq!((cost("total SLA cost").eval(8.0), cost("max weighted SLA cost").eval(6.0)), (2.0, 2.0));
        assert_eq!(cost("weighted total SLA cost").eval(8.0), 6.0);
        assert_eq!(METRICS.iter().filter(|m| m.aggregate == Aggregate::Minisum).count(), 9);
    }

    /// Every ratio is ≥ 1 (the bounds are valid for all three schedulers) on small instances, and
    /// the run is deterministic.
    #[test]
    fn tiny_study_has_valid_bounds() {
        let cfg = tiny();
        let study = run(&cfg, |_| {}).unwrap();
        assert_eq!(study.metrics.len(), 17);
        for r in &study.metrics {
            for o in &r.outcomes {
                for alg in [o.flowflex, o.fair, o.fifo] {
                    assert!(
                        alg + 1e-6 * alg.max(1.0) >= o.lower_bound,
                        "{}: {alg} < LB {}",
                        r.metric.name,
                        o.lower_bound
                    );
                }
            }
            assert!(r.ratios.iter().all(|s| s.min >= 1.0 - 1e-9), "{}", r.metric.name);
        }
        assert_eq!(run(&cfg, |_| {}).unwrap(), study);
        let md = study.to_markdown() + &study.claims_markdown();
        assert!(md.contains("| makespan |") && md.contains("within 1.26"), "{md}");
    }
}
