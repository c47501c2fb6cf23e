//! The shared-scan benchmark's arrivals in the fluid simulator (`circumflex scan-fluid`): FLEX and
//! CIRCUMFLEX of [`super::fluid`] on exactly the arrivals `ScanBench` used (its `jobs.csv`,
//! `results/shared-scans/`), one dataset, beside what the benchmark measured.
//!
//! The fluid model has one free parameter here, the dataset's scan work `N_d` (slot-seconds a job
//! needs alone). Unless it is given, it is **calibrated**: the `N_d` for which the simulated FLEX mean
//! response time, averaged over the rounds, equals the measured FLEX one (bisection; FLEX's mean
//! response time grows with `N_d`). CIRCUMFLEX is then a prediction, not a fit. The model is the
//! paper's `f = 1` (the whole map work is the shared scan), so its CIRCUMFLEX figure is what sharing
//! could give at best: in the benchmark each job still runs its own map function on every record.

use std::collections::BTreeMap;

use circumflex_core::error::{Error, Result};
use circumflex_policies::flex::metrics::Objective;

use super::fluid::{simulate, ScanArrival, Scheme, Workload};

/// The set-up names `ScanBench` writes.
pub const SHARED: &str = "circumflex+sharing";
/// FLEX without sharing.
pub const FLEX: &str = "flex";

/// One round of the benchmark: its arrivals and the measured mean response times.
#[derive(Clone, Debug, PartialEq)]
pub struct BenchRound {
    /// Round number as in the CSV.
    pub round: u32,
    /// Arrival times (s from the round's start), ascending.
    pub arrivals_s: Vec<f64>,
    /// Measured mean response time per set-up (s), if the CSV holds that set-up's round.
    pub measured: BTreeMap<String, f64>,
}

/// One CSV row's job: (job, arrival s, response s).
type JobRow = (u32, f64, f64);

/// Parses `jobs.csv` (header `setup,round,job,kind,arrival_s,response_s,...`). Both set-ups of a
/// round must have the same arrivals when both are present.
pub fn parse_jobs_csv(text: &str) -> Result<Vec<BenchRound>> {
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    let header: Vec<&str> =
        lines.next().ok_or_else(|| Error::job("jobs.csv", "(empty)", "a header line"))?.split(',').collect();
    let col = |name: &str| {
        header
            .iter()
            .position(|h| h.trim() == name)
            .ok_or_else(|| Error::job("jobs.csv header", header.join(","), format!("a column named {name}")))
    };
    let (c_setup, c_round, c_job, c_arrival, c_response) =
        (col("setup")?, col("round")?, col("job")?, col("arrival_s")?, col("response_s")?);
    let mut rows: BTreeMap<(u32, String), Vec<JobRow>> = BTreeMap::new();
    for (n, line) in lines.enumerate() {
        let f: Vec<&str> = line.split(',').map(str::trim).collect();
        let field = |c: usize| {
            f.get(c).copied().ok_or_else(|| Error::job(&format!("jobs.csv row {}", n + 2), line, "every header column"))
        };
        let number = |c: usize, what: &str| -> Result<f64> {
            let v = field(c)?;
            v.parse::<f64>()
                .ok()
                .filter(|x| x.is_finite() && *x >= 0.0)
                .ok_or_else(|| Error::job(&format!("jobs.csv row {} {what}", n + 2), v, "a finite number >= 0"))
        };
        let round = field(c_round)?;
        let round: u32 =
            round.parse().map_err(|_| Error::job(&format!("jobs.csv row {} round", n + 2), round, "a round number"))?;
        let job = field(c_job)?;
        let job: u32 =
            job.parse().map_err(|_| Error::job(&format!("jobs.csv row {} job", n + 2), job, "a job number"))?;
        let setup = field(c_setup)?.to_string();
        if setup != SHARED && setup != FLEX {
            return Err(Error::job(&format!("jobs.csv row {} setup", n + 2), setup, format!("{SHARED} or {FLEX}")));
        }
        rows.entry((round, setup)).or_default().push((
            job,
            number(c_arrival, "arrival_s")?,
            number(c_response, "response_s")?,
        ));
    }
    let mut rounds: BTreeMap<u32, BenchRound> = BTreeMap::new();
    for ((round, setup), mut jobs) in rows {
        jobs.sort_by_key(|j| j.0);
        let mut arrivals: Vec<f64> = jobs.iter().map(|j| j.1).collect();
        arrivals.sort_by(f64::total_cmp);
        let mean = jobs.iter().map(|j| j.2).sum::<f64>() / jobs.len() as f64;
        let r = rounds.entry(round).or_insert_with(|| BenchRound {
            round,
            arrivals_s: arrivals.clone(),
            measured: BTreeMap::new(),
        });
        if r.arrivals_s.len() != arrivals.len() || r.arrivals_s.iter().zip(&arrivals).any(|(a, b)| (a - b).abs() > 1e-6)
        {
            return Err(Error::job(
                &format!("jobs.csv round {round}"),
                format!("{setup} arrivals {arrivals:?}"),
                format!("the other set-up's arrivals {:?}", r.arrivals_s),
            ));
        }
        r.measured.insert(setup, mean);
    }
    if rounds.is_empty() {
        return Err(Error::job("jobs.csv", "(no rows)", "at least one job row"));
    }
    Ok(rounds.into_values().collect())
}

/// The fluid workload of one round: one dataset of `size` slot-seconds, `slots` slots, jobs capped
/// at `max_slots` slots each.
pub fn workload(round: &BenchRound, size: f64, slots: u32, max_slots: u32) -> Workload {
    Workload {
        capacity: slots,
        sizes: vec![size],
        jobs: round.arrivals_s.iter().map(|&arrival| ScanArrival { arrival, dataset: 0 }).collect(),
        min_slots: 0,
        max_slots,
    }
}

/// Simulated mean response time of `scheme` per round (s), optimizing average response time.
pub fn simulated(rounds: &[BenchRound], size: f64, slots: u32, max_slots: u32, scheme: Scheme) -> Result<Vec<f64>> {
    rounds
        .iter()
        .map(|r| Ok(simulate(&workload(r, size, slots, max_slots), scheme, Objective::AvgResponseTime)?.avg_response))
        .collect()
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len().max(1) as f64
}

/// The `N_d` (slot-seconds) for which simulated FLEX's mean response time over `rounds` equals
/// `target` (s). Errors when `target` is not positive or no size up to 10^9 reaches it.
pub fn calibrate(rounds: &[BenchRound], target: f64, slots: u32, max_slots: u32) -> Result<f64> {
    if !(target.is_finite() && target > 0.0) {
        return Err(Error::job("measured FLEX mean response time", target, "finite and > 0"));
    }
    let flex = |size: f64| simulated(rounds, size, slots, max_slots, Scheme::Flex).map(|v| mean(&v));
    let (mut lo, mut hi) = (1e-6, 1.0);
    while flex(hi)? < target {
        hi *= 2.0;
        if hi > 1e9 {
            return Err(Error::job("measured FLEX mean response time", target, "reachable with N_d <= 1e9 slot-s"));
        }
    }
    for _ in 0..100 {
        let mid = 0.5 * (lo + hi);
        if flex(mid)? < target {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Ok(0.5 * (lo + hi))
}

/// The comparison as a Markdown table (one row per round, then the means), with `size` the `N_d`
/// used and whether it was calibrated.
pub fn report(rounds: &[BenchRound], size: f64, calibrated: bool, slots: u32, max_slots: u32) -> Result<String> {
    let flex = simulated(rounds, size, slots, max_slots, Scheme::Flex)?;
    let circ = simulated(rounds, size, slots, max_slots, Scheme::Circumflex)?;
    let cell = |v: Option<f64>| v.map_or_else(|| "-".to_string(), |x| format!("{x:.1}"));
    let ratio = |a: Option<f64>, b: Option<f64>| match (a, b) {
        (Some(a), Some(b)) if b > 0.0 => format!("{:.2}", a / b),
        _ => "-".to_string(),
    };
    let mut out = format!(
        "Fluid simulator (`f = 1`, one dataset of N_d = {size:.1} slot-s{}, S = {slots} slots, M_j = {max_slots}), \
         the benchmark's arrivals, objective average response time.\n\n\
         | round | arrivals (s) | measured FLEX (s) | measured CIRCUMFLEX+sharing (s) | measured ratio | simulated FLEX (s) \
         | simulated CIRCUMFLEX (s) | simulated ratio |\n|---|---|---|---|---|---|---|---|\n",
        if calibrated { ", calibrated on the measured FLEX mean" } else { "" }
    );
    for (k, r) in rounds.iter().enumerate() {
        let arrivals = r.arrivals_s.iter().map(|a| format!("{a:.1}")).collect::<Vec<_>>().join(" ");
        let (mf, ms) = (r.measured.get(FLEX).copied(), r.measured.get(SHARED).copied());
        out.push_str(&format!(
            "| {} | {arrivals} | {} | {} | {} | {:.1} | {:.1} | {:.2} |\n",
            r.round,
            cell(mf),
            cell(ms),
            ratio(ms, mf),
            flex[k],
            circ[k],
            circ[k] / flex[k]
        ));
    }
    let both: Vec<&BenchRound> = rounds.iter().filter(|r| r.measured.len() == 2).collect();
    let measured_mean = |setup: &str| {
        (!both.is_empty()).then(|| both.iter().filter_map(|r| r.measured.get(setup)).sum::<f64>() / both.len() as f64)
    };
    let (mf, ms) = (measured_mean(FLEX), measured_mean(SHARED));
    out.push_str(&format!(
        "| mean | | {} | {} | {} | {:.1} | {:.1} | {:.2} |\n",
        cell(mf),
        cell(ms),
        ratio(ms, mf),
        mean(&flex),
        mean(&circ),
        mean(&circ) / mean(&flex)
    ));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const CSV: &str = "setup,round,job,kind,arrival_s,response_s,dataset_bytes_read,hdfs_bytes_read\n\
        circumflex+sharing,0,0,WORDCOUNT,0.000,50.0,1,1\n\
        circumflex+sharing,0,1,GREP,10.000,60.0,0,1\n\
        flex,0,0,WORDCOUNT,0.000,40.0,1,1\n\
        flex,0,1,GREP,10.000,100.0,1,1\n\
        flex,1,0,WORDCOUNT,0.000,30.0,1,1\n";

    #[test]
    fn parses_rounds_and_measured_means() {
        let rounds = parse_jobs_csv(CSV).unwrap();
        assert_eq!(rounds.len(), 2);
        assert_eq!(rounds[0].arrivals_s, vec![0.0, 10.0]);
        assert_eq!(rounds[0].measured[SHARED], 55.0);
        assert_eq!(rounds[0].measured[FLEX], 70.0);
        assert_eq!(rounds[1].measured.get(SHARED), None, "a round cut short");
    }

    #[test]
    fn bad_input_is_named() {
        let e = parse_jobs_csv("setup,round\nflex,0\n").unwrap_err().to_string();
        assert!(e.contains("job"), "{e}");
        let e = parse_jobs_csv(&CSV.replace("10.000,60.0", "11.000,60.0")).unwrap_err().to_string();
        assert!(e.contains("round 0"), "{e}");
        let e = parse_jobs_csv(&CSV.replace("flex,1,0", "fair,1,0")).unwrap_err().to_string();
        assert!(e.contains("setup"), "{e}");
        let e = parse_jobs_csv(&CSV.replace("40.0", "NaN")).unwrap_err().to_string();
        assert!(e.contains("response_s"), "{e}");
        assert!(parse_jobs_csv("").is_err());
        assert!(calibrate(&parse_jobs_csv(CSV).unwrap(), 0.0, 4, 4).is_err());
    }

    /// Two jobs 10 s apart on 4 slots, N_d = 80 slot-s: FLEX (Smith = SRPT here) runs job 0 alone for
    /// 10 s (40 left), then the shorter job 0 first: it ends at 20 s, job 1 at 40 s: mean (20 + 30)/2.
    /// CIRCUMFLEX: job 1 rides job 0's remaining 40 and then scans the 40 job 0 had read: job 0 ends at
    /// 20 s, job 1 at 30 s: mean (20 + 20)/2. Calibration recovers N_d from FLEX's mean.
    #[test]
    fn simulates_and_calibrates_on_a_worked_example() {
        let rounds = vec![BenchRound { round: 0, arrivals_s: vec![0.0, 10.0], measured: BTreeMap::new() }];
        let flex = simulated(&rounds, 80.0, 4, 4, Scheme::Flex).unwrap();
        let circ = simulated(&rounds, 80.0, 4, 4, Scheme::Circumflex).unwrap();
        assert!((flex[0] - 25.0).abs() < 1e-6, "{flex:?}");
        assert!((circ[0] - 20.0).abs() < 1e-6, "{circ:?}");
        let size = calibrate(&rounds, 25.0, 4, 4).unwrap();
        assert!((size - 80.0).abs() < 1e-3, "{size}");
        let md = report(&rounds, size, true, 4, 4).unwrap();
        assert!(md.contains("| 0 | 0.0 10.0 | - | - | - | 25.0 | 20.0 | 0.80 |"), "{md}");
    }
}
