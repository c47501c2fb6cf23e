//! Workloads: the jobs a simulation replays, each with its true per-task durations, and the synthetic
//! generators the papers' experiments use.
//!
//! A [`SimJob`] pairs the [`JobSpec`] the engine is told (task counts, estimates, deadline, weight) with
//! what only the simulator knows: how long each task really runs. Trace readers (`crate::trace`) and the
//! generators here both produce a [`Workload`].
//!
//! Generators draw from a caller-supplied RNG (the run's one seeded [`crate::sim::SimRng`], on its own
//! stream, see `crate::sim::workload_rng`), so a seed names a workload exactly.
//!
//! Decisions where the papers are silent:
//! - Synthetic arrivals are a Poisson process: exponential gaps with the given mean, rounded to ms.
//! - Task durations are drawn per task (not per job), rounded to ms and clamped to at least 1 ms, so a
//!   job's tasks vary as real tasks do; the spec's estimate is the job's true mean task time (what a
//!   well-calibrated submitter or a profiling run would report).
//! - Zipf-like task counts use `zipf:N:S`, ranks 1..=N with exponent S (heavy-tailed job sizes).
//! - Hardware affinity: a job's `accel_speedup` (workload JSON key; absent = none) divides each of its
//!   map durations on accelerated nodes (`circumflex.adaptive.accelerated.hosts`, the simulator's
//!   nodes are named `node0`, `node1`, ...), rounded to ms and at least 1 ms: a job with accelerated
//!   code runs it there, others run their plain version at the same speed (thesis §3.4.3). Reduces
//!   never speed up (the thesis accelerates maps only).
//! - Deadlines are `arrival + factor × isolated time` (see [`crate::sim::metrics::isolated_time`]), the
//!   construction of the FLEX and RTMR experiments; weights are drawn uniformly from a list.

use rand::RngExt;
use rand_distr::{Distribution, Exp, LogNormal, Zipf};
use serde::{Deserialize, Serialize};

use crate::sim::metrics::isolated_time;
use crate::sim::{ClusterSpec, SimRng};
use circumflex_core::error::{Error, Result};
use circumflex_core::model::{JobSpec, Phase, Time, MAX_TASK_MS};

/// One job of a workload: what the engine is told, and the truth the simulator replays.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SimJob {
    /// The submission the engine sees (`submit_ms` is the arrival time).
    pub spec: JobSpec,
    /// True duration of each map task, in launch order; its length equals `spec.maps.tasks`.
    pub map_ms: Vec<Time>,
    /// True duration of each reduce task, in launch order; its length equals `spec.reduces.tasks`.
    pub reduce_ms: Vec<Time>,
    /// Speedup of this job's maps on accelerated nodes (`> 0`, finite), if it has accelerated code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accel_speedup: Option<f64>,
}

impl SimJob {
    /// A job whose spec estimates are the true mean task times (rounded), with the given durations.
    pub fn new(submit_ms: Time, map_ms: Vec<Time>, reduce_ms: Vec<Time>) -> SimJob {
        let mut spec = JobSpec::new(submit_ms, map_ms.len() as u32, reduce_ms.len() as u32);
        spec.maps.task_ms = mean_ms(&map_ms);
        spec.reduces.task_ms = mean_ms(&reduce_ms);
        SimJob { spec, map_ms, reduce_ms, accel_speedup: None }
    }

    /// The true duration of map or reduce `task` on a node that is (or is not) `accelerated`.
    pub fn duration_on(&self, phase: Phase, task: usize, accelerated: bool) -> Result<Time> {
        let d = *self
            .durations(phase)
            .get(task)
            .ok_or_else(|| Error::job("task index", task, "below the phase's task count"))?;
        match (phase, accelerated, self.accel_speedup) {
            (Phase::Map, true, Some(s)) if s.is_finite() && s > 0.0 => Ok(((d as f64 / s).round() as Time).max(1)),
            (Phase::Map, true, Some(s)) => Err(Error::job("accel_speedup", s, "a finite number > 0")),
            _ => Ok(d),
        }
    }

    /// True durations of `phase`.
    pub fn durations(&self, phase: Phase) -> &[Time] {
        match phase {
            Phase::Map => &self.map_ms,
            Phase::Reduce => &self.reduce_ms,
        }
    }

    /// Total slot-ms of work (sum of every task's duration).
    pub fn work_ms(&self) -> i64 {
        self.map_ms.iter().chain(&self.reduce_ms).sum()
    }
}

fn mean_ms(v: &[Time]) -> Option<Time> {
    if v.is_empty() {
        None
    } else {
        Some((v.iter().sum::<i64>() as f64 / v.len() as f64).round() as Time)
    }
}

/// A named list of jobs, sorted by arrival (stable, so equal arrivals keep their input order).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Workload {
    /// Where it came from (`swim:FILE`, `rumen:FILE`, `synthetic:...`).
    pub name: String,
    /// The jobs, by arrival.
    pub jobs: Vec<SimJob>,
}

impl Workload {
    /// Builds a workload, sorting jobs by arrival and checking each one.
    pub fn new(name: impl Into<String>, mut jobs: Vec<SimJob>) -> Result<Workload> {
        jobs.sort_by_key(|j| j.spec.submit_ms);
        for (i, j) in jobs.iter().enumerate() {
            j.spec.validate().map_err(|e| match e {
                Error::InvalidJob { field, value, allowed } => {
                    Error::InvalidJob { field: format!("job {i} ({}): {field}", j.spec.external_id), value, allowed }
                }
                other => other,
            })?;
            for ph in Phase::ALL {
                if j.durations(ph).len() != j.spec.phase(ph).tasks as usize {
                    return Err(Error::job(
                        &format!("job {i}: {ph:?} durations"),
                        j.durations(ph).len(),
                        format!("one duration per task ({})", j.spec.phase(ph).tasks),
                    ));
                }
                if let Some(&bad) = j.durations(ph).iter().find(|&&d| !(1..=MAX_TASK_MS).contains(&d)) {
                    return Err(Error::job(&format!("job {i}: {ph:?} task duration"), bad, "1 ..= one year in ms"));
                }
            }
        }
        Ok(Workload { name: name.into(), jobs })
    }

    /// The same jobs with the engine told task counts only, no task-duration estimates
    /// (`--no-estimates`): what a host that reads counts from `job.xml` and nothing else submits, as the
    /// Gridmix clusters do. The engine then starts from its default estimate and learns from finished
    /// tasks; the true durations are unchanged.
    pub fn without_estimates(mut self) -> Workload {
        for j in &mut self.jobs {
            j.spec.maps.task_ms = None;
            j.spec.reduces.task_ms = None;
        }
        self.name = format!("{} (no estimates)", self.name);
        self
    }

    /// Total tasks over all jobs and phases.
    pub fn tasks(&self) -> u64 {
        self.jobs.iter().map(|j| (j.map_ms.len() + j.reduce_ms.len()) as u64).sum()
    }

    /// The same size mix at `factor` times the arrival rate (`--scale-jobs`): the whole-day
    /// generator of issue 20. Copy `c` of `k = ceil(factor)` copies of every job arrives `c / k`
    /// of the mean inter-arrival gap after the original, so the day keeps its shape (its bursts
    /// and quiet hours) and its length; the last, partial copy takes an evenly spaced
    /// `factor - (k - 1)` share of the jobs. Offsets are whole seconds; copies are named
    /// `<external id>~<c>`. Deterministic: no randomness.
    pub fn scaled(&self, factor: f64) -> Result<Workload> {
        if !(1.0..=1000.0).contains(&factor) {
            return Err(Error::config("--scale-jobs", factor, "a factor from 1 to 1000"));
        }
        let n = self.jobs.len();
        let span = match (self.jobs.first(), self.jobs.last()) {
            (Some(a), Some(b)) if n > 1 => b.spec.submit_ms - a.spec.submit_ms,
            _ => 0,
        };
        let gap = span as f64 / n.max(1) as f64;
        let copies = factor.ceil() as usize;
        let last_share = factor - (copies - 1) as f64;
        let mut jobs = Vec::with_capacity((factor * n as f64).ceil() as usize);
        for c in 0..copies {
            // Whole seconds, as trace arrivals are (a SWIM file of the copies reads the same).
            let offset = (gap * c as f64 / copies as f64 / 1000.0).round() as Time * 1000;
            for (i, job) in self.jobs.iter().enumerate() {
                // The partial copy keeps job i when the running count of its share steps up.
                let keep = c + 1 < copies || ((i + 1) as f64 * last_share).floor() > (i as f64 * last_share).floor();
                if !keep {
                    continue;
                }
                let mut copy = job.clone();
                copy.spec.submit_ms += offset;
                if c > 0 {
                    copy.spec.external_id = format!("{}~{c}", job.spec.external_id);
                }
                jobs.push(copy);
            }
        }
        Workload::new(format!("{} x{factor}", self.name), jobs)
    }

    /// Gives every job a deadline `arrival + factor × isolated time` on `cluster` (factor > 0).
    pub fn assign_deadlines(&mut self, factor: f64, cluster: &ClusterSpec) -> Result<()> {
        if !(factor.is_finite() && factor > 0.0) {
            return Err(Error::job("deadline factor", factor, "a finite number > 0"));
        }
        for job in &mut self.jobs {
            let iso = isolated_time(job, cluster) as f64;
            job.spec.deadline_ms = Some(job.spec.submit_ms + (factor * iso).ceil() as Time);
        }
        Ok(())
    }
}

/// A distribution of positive numbers, as written on the command line.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Dist {
    /// Always `value`.
    Const {
        /// The value.
        value: f64,
    },
    /// Uniform on `[lo, hi]`.
    Uniform {
        /// Lower bound.
        lo: f64,
        /// Upper bound.
        hi: f64,
    },
    /// Exponential with mean `mean`.
    Exp {
        /// Mean.
        mean: f64,
    },
    /// Log-normal: `exp(N(mu, sigma²))`.
    LogNormal {
        /// Mean of the underlying normal.
        mu: f64,
        /// Standard deviation of the underlying normal.
        sigma: f64,
    },
    /// Zipf on ranks `1..=n` with exponent `s` (heavy-tailed sizes).
    Zipf {
        /// Largest rank.
        n: f64,
        /// Exponent (> 0).
        s: f64,
    },
}

impl Dist {
    /// Parses `const:V`, `uniform:LO:HI`, `exp:MEAN`, `lognormal:MU:SIGMA` or `zipf:N:S` (a bare number
    /// means `const`). `field` names the option in errors.
    pub fn parse(field: &str, text: &str) -> Result<Dist> {
        let allowed = "const:V, uniform:LO:HI, exp:MEAN, lognormal:MU:SIGMA or zipf:N:S with finite numbers";
        let bad = || Error::job(field, text, allowed);
        let parts: Vec<&str> = text.split(':').collect();
        let nums: Vec<f64> = parts[1..]
            .iter()
            .map(|p| p.trim().parse::<f64>())
            .collect::<std::result::Result<_, _>>()
            .map_err(|_| bad())?;
        if nums.iter().any(|x| !x.is_finite()) {
            return Err(bad());
        }
        let dist = match (parts[0].trim(), nums.as_slice()) {
            ("const", [v]) => Dist::Const { value: *v },
            ("uniform", [lo, hi]) if lo <= hi => Dist::Uniform { lo: *lo, hi: *hi },
            ("exp", [mean]) if *mean > 0.0 => Dist::Exp { mean: *mean },
            ("lognormal", [mu, sigma]) if *sigma >= 0.0 => Dist::LogNormal { mu: *mu, sigma: *sigma },
            ("zipf", [n, s]) if *n >= 1.0 && *s > 0.0 => Dist::Zipf { n: *n, s: *s },
            (v, []) => Dist::Const { value: v.parse::<f64>().ok().filter(|x| x.is_finite()).ok_or_else(bad)? },
            _ => return Err(bad()),
        };
        if dist.mean() < 0.0 || matches!(dist, Dist::Uniform { lo, .. } if lo < 0.0) {
            return Err(Error::job(field, text, "a distribution of non-negative values"));
        }
        Ok(dist)
    }

    /// Draws one value.
    pub fn sample(&self, rng: &mut SimRng) -> f64 {
        match *self {
            Dist::Const { value } => value,
            Dist::Uniform { lo, hi } => {
                if hi > lo {
                    rng.random_range(lo..=hi)
                } else {
                    lo
                }
            }
            // Parameters were checked by `parse`; a constructor error can only come from a
            // hand-built invalid value, which then degrades to the mean instead of panicking.
            Dist::Exp { mean } => Exp::new(1.0 / mean).map_or(mean, |d| d.sample(rng)),
            Dist::LogNormal { mu, sigma } => LogNormal::new(mu, sigma).map_or(mu.exp(), |d| d.sample(rng)),
            Dist::Zipf { n, s } => Zipf::new(n, s).map_or(1.0, |d| d.sample(rng)),
        }
    }

    /// The mean (Zipf: computed by summation over its ranks, capped at 10⁶ terms).
    pub fn mean(&self) -> f64 {
        match *self {
            Dist::Const { value } => value,
            Dist::Uniform { lo, hi } => (lo + hi) / 2.0,
            Dist::Exp { mean } => mean,
            Dist::LogNormal { mu, sigma } => (mu + sigma * sigma / 2.0).exp(),
            Dist::Zipf { n, s } => {
                let n = n.min(1e6) as u64;
                let (num, den) = (1..=n).fold((0.0, 0.0), |(a, b), k| {
                    let w = (k as f64).powf(-s);
                    (a + k as f64 * w, b + w)
                });
                num / den
            }
        }
    }
}

/// Parameters of the synthetic generator (`synthetic:key=value,...` on the command line).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SyntheticSpec {
    /// Number of jobs.
    pub jobs: u32,
    /// Mean gap between arrivals (Poisson process), ms.
    pub mean_interarrival_ms: f64,
    /// Map tasks per job.
    pub maps: Dist,
    /// Reduce tasks per job.
    pub reduces: Dist,
    /// Map task duration, ms.
    pub map_ms: Dist,
    /// Reduce task duration, ms.
    pub reduce_ms: Dist,
    /// Deadline factor (deadline = arrival + factor × isolated time), if any.
    pub deadline_factor: Option<f64>,
    /// Weights drawn uniformly from this list.
    pub weights: Vec<f64>,
}

impl Default for SyntheticSpec {
    /// 200 jobs arriving every 20 s on average; heavy-tailed map counts (Zipf, mean about 40); a
    /// quarter as many reduces; log-normal task times with medians of 20 s (maps) and 60 s (reduces).
    fn default() -> Self {
        SyntheticSpec {
            jobs: 200,
            mean_interarrival_ms: 20_000.0,
            maps: Dist::Zipf { n: 400.0, s: 1.1 },
            reduces: Dist::Uniform { lo: 0.0, hi: 20.0 },
            map_ms: Dist::LogNormal { mu: 20_000f64.ln(), sigma: 0.5 },
            reduce_ms: Dist::LogNormal { mu: 60_000f64.ln(), sigma: 0.5 },
            deadline_factor: None,
            weights: vec![1.0],
        }
    }
}

impl SyntheticSpec {
    /// Parses `key=value` pairs separated by commas over the defaults. Keys: `jobs`, `interarrival_ms`,
    /// `maps`, `reduces`, `map_ms`, `reduce_ms` (distributions, see [`Dist::parse`]), `deadline`
    /// (factor), `weights` (values separated by `/`).
    pub fn parse(text: &str) -> Result<SyntheticSpec> {
        let mut spec = SyntheticSpec::default();
        for pair in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let Some((key, value)) = pair.split_once('=') else {
                return Err(Error::job("synthetic", pair, "key=value pairs separated by commas"));
            };
            let field = format!("synthetic.{}", key.trim());
            let number = |lo: f64| {
                value
                    .trim()
                    .parse::<f64>()
                    .ok()
                    .filter(|v| v.is_finite() && *v >= lo)
                    .ok_or_else(|| Error::job(&field, value, format!("a number >= {lo}")))
            };
            match key.trim() {
                "jobs" => spec.jobs = number(1.0)?.min(10_000_000.0) as u32,
                "interarrival_ms" => spec.mean_interarrival_ms = number(0.0)?,
                "maps" => spec.maps = Dist::parse(&field, value)?,
                "reduces" => spec.reduces = Dist::parse(&field, value)?,
                "map_ms" => spec.map_ms = Dist::parse(&field, value)?,
                "reduce_ms" => spec.reduce_ms = Dist::parse(&field, value)?,
                "deadline" => spec.deadline_factor = Some(number(f64::MIN_POSITIVE)?),
                "weights" => {
                    spec.weights = value
                        .split('/')
                        .map(|w| w.trim().parse::<f64>().ok().filter(|w| w.is_finite() && *w > 0.0))
                        .collect::<Option<Vec<f64>>>()
                        .filter(|w| !w.is_empty())
                        .ok_or_else(|| Error::job(&field, value, "weights > 0 separated by '/'"))?;
                }
                other => {
                    return Err(Error::job(
                        "synthetic",
                        other,
                        "one of jobs, interarrival_ms, maps, reduces, map_ms, reduce_ms, deadline, weights",
                    ))
                }
            }
        }
        Ok(spec)
    }

    /// Draws the workload. Every job has at least one map; arrivals start at 0.
    pub fn generate(&self, rng: &mut SimRng, cluster: &ClusterSpec) -> Result<Workload> {
        let gaps = Dist::Exp { mean: self.mean_interarrival_ms.max(f64::MIN_POSITIVE) };
        let mut now: Time = 0;
        let mut jobs = Vec::with_capacity(self.jobs as usize);
        for i in 0..self.jobs {
            if i > 0 && self.mean_interarrival_ms > 0.0 {
                now += gaps.sample(rng).round() as Time;
            }
            let maps = (self.maps.sample(rng).round() as u32).clamp(1, 1_000_000);
            let reduces = (self.reduces.sample(rng).round() as u32).min(1_000_000);
            let draw = |d: &Dist, rng: &mut SimRng| (d.sample(rng).round() as Time).clamp(1, MAX_TASK_MS);
            let map_ms = (0..maps).map(|_| draw(&self.map_ms, rng)).collect();
            let reduce_ms = (0..reduces).map(|_| draw(&self.reduce_ms, rng)).collect();
            let mut job = SimJob::new(now, map_ms, reduce_ms);
            job.spec.external_id = format!("synthetic-{i}");
            job.spec.weight = self.weights[rng.random_range(0..self.weights.len())];
            jobs.push(job);
        }
        let mut workload = Workload::new("synthetic", jobs)?;
        if let Some(f) = self.deadline_factor {
            workload.assign_deadlines(f, cluster)?;
        }
        Ok(workload)
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn accelerated_nodes_divide_only_maps_of_jobs_with_a_speedup() {
        let mut job = SimJob::new(0, vec![100_000, 1], vec![50_000]);
        assert_eq!(job.duration_on(Phase::Map, 0, true).unwrap(), 100_000, "no accelerated code");
        job.accel_speedup = Some(25.0);
        assert_eq!(job.duration_on(Phase::Map, 0, true).unwrap(), 4_000);
        assert_eq!(job.duration_on(Phase::Map, 1, true).unwrap(), 1, "at least 1 ms");
        assert_eq!(job.duration_on(Phase::Map, 0, false).unwrap(), 100_000);
        assert_eq!(job.duration_on(Phase::Reduce, 0, true).unwrap(), 50_000, "reduces never speed up");
        assert!(job.duration_on(Phase::Map, 2, true).is_err());
        job.accel_speedup = Some(0.0);
        assert!(job.duration_on(Phase::Map, 0, true).unwrap_err().to_string().contains("accel_speedup"));
    }
    use super::*;
    use crate::sim::workload_rng;

    #[test]
    fn dist_parsing_names_the_field() {
        assert_eq!(Dist::parse("x", "exp:5").unwrap(), Dist::Exp { mean: 5.0 });
        assert_eq!(Dist::parse("x", "7").unwrap(), Dist::Const { value: 7.0 });
        assert_eq!(Dist::parse("x", "uniform:1:3").unwrap(), Dist::Uniform { lo: 1.0, hi: 3.0 });
        let err = Dist::parse("synthetic.maps", "exp:-1").unwrap_err().to_string();
        assert!(err.contains("synthetic.maps") && err.contains("exp:-1"), "{err}");
        assert!(Dist::parse("x", "uniform:3:1").is_err());
        assert!(Dist::parse("x", "zipf:0:1").is_err());
        assert!(Dist::parse("x", "gamma:1:1").is_err());
    }

    #[test]
    fn sample_means_match() {
        let mut rng = workload_rng(7);
        for d in [Dist::Exp { mean: 100.0 }, Dist::LogNormal { mu: 2.0, sigma: 0.5 }, Dist::Zipf { n: 50.0, s: 1.2 }] {
            let n = 40_000;
            let m = (0..n).map(|_| d.sample(&mut rng)).sum::<f64>() / n as f64;
            assert!((m - d.mean()).abs() < 0.05 * d.mean(), "{d:?}: sample mean {m} vs {}", d.mean());
        }
    }

    #[test]
    fn scaled_keeps_the_size_mix_at_a_higher_rate() {
        let jobs: Vec<SimJob> = (0..8)
            .map(|i| {
                let mut j = SimJob::new(i * 10_000, vec![1_000; 1 + i as usize], vec![2_000; (i % 3) as usize]);
                j.spec.external_id = format!("j{i}");
                j
            })
            .collect();
        let w = Workload::new("w", jobs).unwrap();
        let x = w.scaled(2.5).unwrap();
        assert_eq!(x.jobs.len(), 20, "two full copies and half of the third");
        assert_eq!(w.scaled(1.0).unwrap().jobs, w.jobs, "factor 1 is the workload itself");
        // Every copy of a job has its sizes; copies arrive after the original within one gap.
        for j in &x.jobs {
            let (base, _) = j.spec.external_id.split_once('~').unwrap_or((&j.spec.external_id, ""));
            let orig = w.jobs.iter().find(|o| o.spec.external_id == base).unwrap();
            assert_eq!((&j.map_ms, &j.reduce_ms), (&orig.map_ms, &orig.reduce_ms));
            assert!((0..10_000).contains(&(j.spec.submit_ms - orig.spec.submit_ms)));
        }
        assert!(w.scaled(0.5).is_err() && w.scaled(f64::NAN).is_err());
    }

    #[test]
    fn without_estimates_hides_only_the_estimates() {
        let w = Workload::new("w", vec![SimJob::new(0, vec![30_000, 40_000], vec![50_000])]).unwrap();
        assert_eq!(w.jobs[0].spec.maps.task_ms, Some(35_000));
        let blind = w.clone().without_estimates();
        assert_eq!((blind.jobs[0].spec.maps.task_ms, blind.jobs[0].spec.reduces.task_ms), (None, None));
        assert_eq!((&blind.jobs[0].map_ms, &blind.jobs[0].reduce_ms), (&w.jobs[0].map_ms, &w.jobs[0].reduce_ms));
        assert_eq!(blind.jobs[0].spec.submit_ms, 0);
        assert_eq!(blind.name, "w (no estimates)");
    }

    #[test]
    fn synthetic_is_seeded_and_checks_keys() {
        let spec = SyntheticSpec::parse("jobs=30,maps=uniform:1:5,reduces=2,deadline=2,weights=1/2").unwrap();
        let cluster = ClusterSpec::default();
        let a = spec.generate(&mut workload_rng(1), &cluster).unwrap();
        let b = spec.generate(&mut workload_rng(1), &cluster).unwrap();
        let c = spec.generate(&mut workload_rng(2), &cluster).unwrap();
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_eq!(a.jobs.len(), 30);
        for j in &a.jobs {
            assert!((1..=5).contains(&j.spec.maps.tasks) && j.spec.reduces.tasks == 2);
            let iso = isolated_time(j, &cluster);
            assert_eq!(j.spec.deadline_ms, Some(j.spec.submit_ms + 2 * iso));
            assert!(j.spec.weight == 1.0 || j.spec.weight == 2.0);
        }
        let err = SyntheticSpec::parse("jobs=3,colour=red").unwrap_err().to_string();
        assert!(err.contains("colour") && err.contains("interarrival_ms"), "{err}");
    }

    #[test]
    fn workload_rejects_mismatched_durations() {
        let mut j = SimJob::new(0, vec![5, 5], vec![]);
        j.map_ms.pop();
        let err = Workload::new("w", vec![j]).unwrap_err().to_string();
        assert!(err.contains("Map durations"), "{err}");
    }
}
