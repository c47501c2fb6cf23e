//! Reverse-Adaptive (thesis §5.3): the capacity a co-located transactional workload leaves to
//! MapReduce over time, f(t), and reverse fitting (Algorithm 2), which gives each job `s_fit`, the
//! minimum concurrency it needs **now** given the predicted availability.
//!
//! Decisions (digest gaps 21–23):
//! - f(t) is the **fraction of each node's capacity available to MapReduce** (the area below the
//!   curve in Figures 5.14/5.15), given per hour and repeated with its own period (24 values = one
//!   day). It is piecewise constant within an hour. Configuration: `circumflex.reverse.availability`
//!   = comma-separated fractions, or the path of a file holding them (commas or newlines; `#`
//!   comments). The file is read once when the policy is configured, never while planning.
//! - Algorithm 2 walks deadlines from the latest back to now. Interval k is
//!   `[deadline of the next earlier job, this job's deadline]`; the earliest interval starts at the
//!   **end of the current control step** (`now + step`), so what does not fit after it is what must
//!   run now. In each interval the jobs already processed (later deadlines) are fitted first, then
//!   the job itself; each fit uses up the interval's capacity, so jobs never double-book.
//! - `fit()` is profile-aware: capacity is counted in node-milliseconds, and one node holds
//!   `tasks_per_node` tasks of the job (from its profile). A job also cannot run more tasks at once
//!   than it has left, so an interval takes at most `(b − a) × tasks left` of its work.
//! - The leftover work `L` (task-ms) becomes a concurrency: `s_fit = L / max(µ, step)` (a task started
//!   now runs `µ`; if the step is longer than a task, the step's length is what is available).
//! - Jobs already past their deadline: all their work is leftover (as soon as possible). Jobs
//!   without a deadline: `s_fit = 0` (they take what is left).
//! - `s_req` (§5.3.4, "average tasks … with fixed availability"): remaining work over the time to
//!   the deadline, `W / (deadline − now)`, which is Eq. 1 with the running tasks counted in; past
//!   the deadline it is the job's remaining tasks.

use circumflex_core::error::{Error, Result};
use circumflex_core::model::Time;

const HOUR_MS: Time = 3_600_000;

/// The transactional availability curve f(t): fraction of node capacity MapReduce may use.
#[derive(Clone, Debug, PartialEq)]
pub struct Availability {
    per_hour: Vec<f64>,
}

impl Availability {
    /// Full availability at all times (no transactional workload).
    pub fn constant(fraction: f64) -> Availability {
        Availability { per_hour: vec![fraction.clamp(0.0, 1.0)] }
    }

    /// From per-hour fractions; each must be in `[0, 1]`. `key` names the source in errors.
    pub fn from_fractions(key: &str, per_hour: Vec<f64>) -> Result<Availability> {
        if per_hour.is_empty() {
            return Err(Error::config(key, "(empty)", "at least one fraction per hour"));
        }
        if let Some(bad) = per_hour.iter().find(|v| !(v.is_finite() && (0.0..=1.0).contains(*v))) {
            return Err(Error::config(key, bad, "fractions in [0, 1]"));
        }
        Ok(Availability { per_hour })
    }

    /// Parses `0.9,0.85,...` (commas, whitespace or newlines; `#` starts a comment).
    pub fn parse(key: &str, text: &str) -> Result<Availability> {
        let mut values = Vec::new();
        for line in text.lines() {
            let line = line.split('#').next().unwrap_or("");
            for item in line.split([',', ' ', '\t']).filter(|s| !s.trim().is_empty()) {
                let v: f64 =
                    item.trim().parse().map_err(|_| Error::config(key, item.trim(), "a fraction in [0, 1]"))?;
                values.push(v);
            }
        }
        Availability::from_fractions(key, values)
    }

    /// A configuration value: a list of fractions, or else the path of a file holding one.
    pub fn from_config_value(key: &str, value: &str) -> Result<Availability> {
        let v = value.trim();
        if v.starts_with(|c: char| c.is_ascii_digit() || c == '.') && !std::path::Path::new(v).is_file() {
            return Availability::parse(key, v);
        }
        let path = std::path::Path::new(v);
        let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, &e))?;
        Availability::parse(&format!("{key} ({v})"), &text)
    }

    /// A synthetic daily curve with the transactional peak at `peak_hour` (thesis: near hour 18):
    /// availability `1 − low_use − (peak_use − low_use)·bump(h)`, with a raised-cosine bump 12 hours wide.
    pub fn synthetic_daily(peak_hour: f64, low_use: f64, peak_use: f64) -> Availability {
        let per_hour = (0..24)
            .map(|h| {
                let mid = f64::from(h) + 0.5;
                let mut d = (mid - peak_hour).abs() % 24.0;
                d = d.min(24.0 - d);
                let bump = if d < 6.0 { 0.5 * (1.0 + (std::f64::consts::PI * d / 6.0).cos()) } else { 0.0 };
                (1.0 - low_use - (peak_use - low_use) * bump).clamp(0.0, 1.0)
            })
            .collect();
        Availability { per_hour }
    }

    /// The per-hour fractions.
    pub fn fractions(&self) -> &[f64] {
        &self.per_hour
    }

    /// f(t).
    pub fn at(&self, t: Time) -> f64 {
        let n = self.per_hour.len() as i64;
        let h = t.div_euclid(HOUR_MS).rem_euclid(n);
        self.per_hour[h as usize]
    }

    /// `∫_a^b f(t) dt` in milliseconds (0 when `b ≤ a`).
    pub fn integral(&self, a: Time, b: Time) -> f64 {
        let mut total = 0.0;
        let mut t = a;
        while t < b {
            let next = ((t.div_euclid(HOUR_MS) + 1) * HOUR_MS).min(b);
            total += self.at(t) * (next - t) as f64;
            t = next;
        }
        total
    }

    /// Mean of f over `[a, b]` (f(a) when the interval is empty).
    pub fn mean(&self, a: Time, b: Time) -> f64 {
        if b <= a {
            self.at(a)
        } else {
            self.integral(a, b) / (b - a) as f64
        }
    }
}

/// One job as reverse fitting sees it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FitJob {
    /// Remaining map work in task-milliseconds (running tasks' remainders + unstarted × µ).
    pub work_ms: f64,
    /// Mean task length µ (ms, > 0).
    pub task_ms: f64,
    /// Absolute deadline (completion-time goal), if any.
    pub deadline: Option<Time>,
    /// Tasks of this job one whole node holds (from its profile; ≥ 1 in practice).
    pub tasks_per_node: f64,
}

/// Algorithm 2: `s_fit` per job (input order). `nodes` nodes whose MapReduce share is `f(t)`;
/// `step_ms` is the control period.
pub fn reverse_fit(jobs: &[FitJob], now: Time, step_ms: Time, nodes: f64, f: &Availability) -> Vec<f64> {
    let mut left: Vec<f64> = jobs.iter().map(|j| j.work_ms.max(0.0)).collect();
    let mut order: Vec<usize> = (0..jobs.len()).filter(|&j| jobs[j].deadline.is_some()).collect();
    order.sort_by_key(|&j| (std::cmp::Reverse(jobs[j].deadline), std::cmp::Reverse(j)));
    let horizon = now + step_ms.max(1);
    let mut processed: Vec<usize> = Vec::with_capacity(order.len());
    for (k, &j) in order.iter().enumerate() {
        let b = jobs[j].deadline.unwrap_or(horizon);
        let a = order.get(k + 1).and_then(|&e| jobs[e].deadline).unwrap_or(horizon).max(horizon);
        processed.push(j);
        if b <= a {
            continue;
        }
        let mut node_ms = nodes * f.integral(a, b);
        for &p in &processed {
            if left[p] <= 0.0 || node_ms <= 0.0 {
                continue;
            }
            let job = &jobs[p];
            let tasks_left = (left[p] / job.task_ms.max(1.0)).ceil();
            let parallel_cap = (b - a) as f64 * tasks_left;
            let take = left[p].min(node_ms * job.tasks_per_node.max(1e-9)).min(parallel_cap);
            left[p] -= take;
            node_ms -= take / job.tasks_per_node.max(1e-9);
        }
    }
    jobs.iter()
        .enumerate()
        .map(|(j, job)| if job.deadline.is_none() { 0.0 } else { left[j] / job.task_ms.max(step_ms as f64).max(1.0) })
        .collect()
}

/// `s_req` at average availability: remaining work over time to the deadline; past the deadline
/// (or without one), `tasks_left` (as soon as possible).
pub fn average_need(work_ms: f64, now: Time, deadline: Option<Time>, tasks_left: f64) -> f64 {
    match deadline {
        Some(d) if d > now => work_ms / (d - now) as f64,
        _ => tasks_left,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const MIN: Time = 60_000;

    fn job(tasks: f64, task_min: f64, deadline_min: Option<i64>) -> FitJob {
        FitJob {
            work_ms: tasks * task_min * MIN as f64,
            task_ms: task_min * MIN as f64,
            deadline: deadline_min.map(|d| d * MIN),
            tasks_per_node: 1.0,
        }
    }

    #[test]
    fn ample_capacity_needs_nothing_now() {
        let f = Availability::constant(1.0);
        let s = reverse_fit(&[job(20.0, 10.0, Some(120)), job(5.0, 10.0, Some(60))], 0, 10 * MIN, 100.0, &f);
        assert_eq!(s, vec![0.0, 0.0]);
    }

    #[test]
    fn work_due_within_the_step_must_start_now() {
        let f = Availability::constant(1.0);
        // Deadline at the end of the step: all 30 tasks of 10 min must run now.
        let s = reverse_fit(&[job(30.0, 10.0, Some(10))], 0, 10 * MIN, 100.0, &f);
        assert!((s[0] - 30.0).abs() < 1e-9);
        // 50 tasks due in 20 min on 10 nodes: 10 fit in [10, 20], 40 must run now... as 40 tasks.
        let s = reverse_fit(&[job(50.0, 10.0, Some(20))], 0, 10 * MIN, 10.0, &f);
        assert!((s[0] - 40.0).abs() < 1e-9, "{s:?}");
    }

    #[test]
    fn later_deadlines_fit_first_and_overflow_moves_back() {
        let f = Availability::constant(1.0);
        // 10 nodes. J_late (deadline 30 min) has 25 tasks, J_early (deadline 20) has 10.
        // [20,30]: 10 of J_late fit. [10,20]: J_late first (10 more), J_early gets nothing.
        // Now: J_late 5 tasks, J_early 10.
        let s = reverse_fit(&[job(10.0, 10.0, Some(20)), job(25.0, 10.0, Some(30))], 0, 10 * MIN, 10.0, &f);
        assert!((s[0] - 10.0).abs() < 1e-9 && (s[1] - 5.0).abs() < 1e-9, "{s:?}");
    }

    #[test]
    fn a_job_cannot_fit_more_parallel_tasks_than_it_has() {
        let f = Availability::constant(1.0);
        // One 60-minute task, deadline in 60 min, step 10: it cannot fit into [10, 60] at all.
        let s = reverse_fit(&[job(1.0, 60.0, Some(60))], 0, 10 * MIN, 100.0, &f);
        assert!(s[0] > 0.0);
    }

    #[test]
    fn curve_parses_validates_and_integrates() {
        let f = Availability::parse("k", "0.5, 1.0 # comment\n0.25").unwrap();
        assert_eq!(f.fractions(), &[0.5, 1.0, 0.25]);
        assert_eq!(f.at(HOUR_MS * 4), 1.0);
        assert!((f.integral(HOUR_MS / 2, HOUR_MS * 3 / 2) - 0.75 * HOUR_MS as f64).abs() < 1e-6);
        let e = Availability::parse("circumflex.reverse.availability", "0.5,1.5").unwrap_err().to_string();
        assert!(e.contains("circumflex.reverse.availability") && e.contains("1.5"), "{e}");
        assert!(Availability::parse("k", "x").is_err());
        let daily = Availability::synthetic_daily(18.0, 0.1, 0.7);
        let low = (0..24).min_by(|&a, &b| daily.fractions()[a].total_cmp(&daily.fractions()[b])).unwrap();
        assert!((17..=18).contains(&low), "peak transactional use near hour 18, got {low}");
    }

    #[test]
    fn average_need_is_work_over_time_left() {
        assert!((average_need(600.0, 0, Some(60), 10.0) - 10.0).abs() < 1e-12);
        assert_eq!(average_need(600.0, 100, Some(60), 7.0), 7.0);
    }

    proptest! {
        #[test]
        fn less_availability_never_lowers_total_s_fit(
            specs in prop::collection::vec((1u32..40, 1u32..30, 1i64..300), 1..6),
            full in 0.3f64..1.0, cut in 0.0f64..0.3, nodes in 1u32..20,
        ) {
            let jobs: Vec<FitJob> = specs.iter().map(|&(t, m, d)| job(f64::from(t), f64::from(m), Some(d))).collect();
            let hi = reverse_fit(&jobs, 0, 10 * MIN, f64::from(nodes), &Availability::constant(full));
            let lo = reverse_fit(&jobs, 0, 10 * MIN, f64::from(nodes), &Availability::constant(full - cut));
            let (sh, sl): (f64, f64) = (hi.iter().sum(), lo.iter().sum());
            prop_assert!(sl + 1e-6 >= sh, "{sl} < {sh}");
            prop_assert!(hi.iter().all(|s| *s >= 0.0));
        }
    }
}
