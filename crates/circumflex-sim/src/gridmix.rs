//! The Gridmix evaluation's two Rust halves (`make gridmix`, `docs/evaluation.md`); the Java harness in
//! `integration-tests/gridmix` runs Gridmix on the mini cluster between them.
//!
//! 1. **Trace conversion** ([`Scaling`], [`scale_window`], [`to_rumen`]): a contiguous window of a
//!    workload (the SWIM day, turned into tasks by [`crate::trace::swim::SwimModel`]) scaled to fit a
//!    one-node mini cluster, written as a Rumen trace that Gridmix replays in sleep-job mode.
//! 2. **Report** ([`JobRow`], [`Summary`], [`write_report`]): the harness's per-job CSVs (one per
//!    scheduler) become a summary table with ratios to a baseline scheduler, a per-job table, and plots.
//!
//! Scaling decisions (the papers and SWIM are silent; the mini cluster has about four task slots):
//! - **Window**: jobs `first_job .. first_job + jobs` in trace order, so arrivals keep their real
//!   clustering. Submission gaps are multiplied by `gap_scale` (< 1 packs the window tighter).
//! - **Task counts** are capped: a job with more than `max_maps` maps gets `max_maps`, each running
//!   `total map work / max_maps` (same for reduces), so a big job keeps its total work and stays big.
//!   Jobs under the cap keep their own task durations.
//! - **Task durations** are first multiplied by `task_scale` (1 by default; the loaded configuration
//!   uses more, so that queueing rather than JVM start-up dominates a job's response).
//! - Every task duration is then clamped to `[min_task_ms, max_task_ms]`.
//! - Rumen fields: one successful attempt per task; a reduce's `shuffleFinished` and `sortFinished` equal
//!   its start, so Gridmix's sleep reducer (which sleeps merge + reduce time) sleeps the whole duration.
//!
//! 3. **Timelines** ([`parse_timelines`], [`timelines_markdown`]): where each job's response time went,
//!    from the ResourceManager's own INFO lines in the harness's Hadoop log (every scheduler writes them
//!    alike): AM placement, AM start-up, the first task's wait for a container, the rest.
//!
//! Report decisions: response time = finish − submission, as the ResourceManager recorded them.
//! A job's **ideal time** is a lower bound on its run alone on `slots` task slots with no overhead:
//! `max(longest map, map work / slots) + max(longest reduce, reduce work / slots)`; **stretch** =
//! response / ideal. On a mini cluster every job also pays for its AM and task JVM start-ups (seconds
//! each), which the bound leaves out, so short jobs have stretches well above 1 under any scheduler.
//! Makespan = last finish − first submission. A job that did not succeed is counted in `failed` and
//! kept out of the means.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::Path;

use serde_json::{json, Value};

use crate::output::OutDir;
use crate::plot::{grouped_bars, line_chart, Series};
use crate::sim::SimJob;
use crate::stats::mean_ci95;
use circumflex_core::error::{Error, Result};
use circumflex_core::model::Time;

/// How a window of jobs is cut and scaled to the mini cluster. See the module docs.
#[derive(Clone, Debug, PartialEq)]
pub struct Scaling {
    /// Index (0-based, trace order) of the window's first job.
    pub first_job: usize,
    /// Jobs in the window.
    pub jobs: usize,
    /// Factor on submission gaps.
    pub gap_scale: f64,
    /// Most maps per job.
    pub max_maps: u32,
    /// Most reduces per job.
    pub max_reduces: u32,
    /// Factor on every task duration, applied before capping and clamping (> 1 makes tasks long
    /// against the mini cluster's fixed JVM start-up, the loaded regime of `docs/evaluation.md`).
    pub task_scale: f64,
    /// Shortest task, ms.
    pub min_task_ms: Time,
    /// Longest task, ms.
    pub max_task_ms: Time,
}

impl Default for Scaling {
    fn default() -> Self {
        Scaling {
            first_job: 406,
            jobs: 12,
            gap_scale: 0.25,
            max_maps: 12,
            max_reduces: 2,
            task_scale: 1.0,
            min_task_ms: 2_000,
            max_task_ms: 60_000,
        }
    }
}

impl Scaling {
    /// Checks the parameters.
    pub fn validate(&self) -> Result<()> {
        if self.jobs == 0 {
            return Err(Error::config("gridmix.jobs", self.jobs, "at least 1"));
        }
        if !(self.gap_scale.is_finite() && self.gap_scale >= 0.0) {
            return Err(Error::config("gridmix.gap_scale", self.gap_scale, "a finite number >= 0"));
        }
        if !(self.task_scale.is_finite() && self.task_scale > 0.0) {
            return Err(Error::config("gridmix.task_scale", self.task_scale, "a finite number > 0"));
        }
        if self.max_maps == 0 {
            return Err(Error::config("gridmix.max_maps", self.max_maps, "at least 1"));
        }
        if self.min_task_ms < 1 || self.max_task_ms < self.min_task_ms {
            return Err(Error::config(
                "gridmix.min_task_ms..max_task_ms",
                format!("{}..{}", self.min_task_ms, self.max_task_ms),
                "1 <= min <= max",
            ));
        }
        Ok(())
    }
}

/// One job of the scaled window.
#[derive(Clone, Debug, PartialEq)]
pub struct ScaledJob {
    /// Name (the source job's id, e.g. `job408`).
    pub name: String,
    /// Submission, ms after the window's first job.
    pub submit_ms: Time,
    /// Map durations, ms.
    pub map_ms: Vec<Time>,
    /// Reduce durations, ms.
    pub reduce_ms: Vec<Time>,
}

/// Scales a phase's durations by `task_scale`, caps it at `cap` tasks keeping its total work, then
/// clamps each duration.
fn cap_phase(durations: &[Time], cap: u32, s: &Scaling) -> Vec<Time> {
    let cap = cap as usize;
    let durations: Vec<Time> = durations.iter().map(|&d| (d as f64 * s.task_scale).round() as Time).collect();
    let capped: Vec<Time> = if durations.len() > cap {
        let total: i64 = durations.iter().sum();
        let each = (total as f64 / cap as f64).round() as Time;
        vec![each; cap]
    } else {
        durations
    };
    capped.into_iter().map(|d| d.clamp(s.min_task_ms, s.max_task_ms)).collect()
}

/// Cuts and scales the window of `jobs` (in trace order) described by `s`.
pub fn scale_window(jobs: &[SimJob], s: &Scaling) -> Result<Vec<ScaledJob>> {
    s.validate()?;
    let end = s.first_job.checked_add(s.jobs).filter(|&e| e <= jobs.len()).ok_or_else(|| {
        Error::config(
            "gridmix.first_job + jobs",
            format!("{} + {}", s.first_job, s.jobs),
            format!("at most the trace's {} jobs", jobs.len()),
        )
    })?;
    let window = &jobs[s.first_job..end];
    let t0 = window.iter().map(|j| j.spec.submit_ms).min().unwrap_or(0);
    Ok(window
        .iter()
        .map(|j| ScaledJob {
            name: if j.spec.external_id.is_empty() {
                format!("job{}", j.spec.submit_ms)
            } else {
                j.spec.external_id.clone()
            },
            submit_ms: ((j.spec.submit_ms - t0) as f64 * s.gap_scale).round() as Time,
            map_ms: cap_phase(&j.map_ms, s.max_maps, s),
            reduce_ms: cap_phase(&j.reduce_ms, s.max_reduces, s),
        })
        .collect())
}

/// Rumen task object: one successful attempt from `start` lasting `ms`.
fn rumen_task(job_id: &str, kind: char, index: usize, start: i64, ms: Time) -> Value {
    let stem = job_id.trim_start_matches("job_");
    let task_id = format!("task_{stem}_{kind}_{index:06}");
    let attempt_id = format!("attempt_{stem}_{kind}_{index:06}_0");
    let (task_type, phase_end) = if kind == 'm' { ("MAP", -1) } else { ("REDUCE", start) };
    json!({
        "taskID": task_id,
        "taskType": task_type,
        "taskStatus": "SUCCESS",
        "startTime": start,
        "finishTime": start + ms,
        "inputBytes": -1, "inputRecords": -1, "outputBytes": -1, "outputRecords": -1,
        "preferredLocations": [],
        "attempts": [{
            "attemptID": attempt_id,
            "result": "SUCCESS",
            "startTime": start,
            "finishTime": start + ms,
            "hostName": "/default-rack/localhost",
            "shuffleFinished": phase_end,
            "sortFinished": phase_end,
            "hdfsBytesRead": -1, "hdfsBytesWritten": -1, "fileBytesRead": -1, "fileBytesWritten": -1,
            "mapInputRecords": -1, "mapInputBytes": -1, "mapOutputBytes": -1, "mapOutputRecords": -1,
            "combineInputRecords": -1, "reduceInputGroups": -1, "reduceInputRecords": -1,
            "reduceShuffleBytes": -1, "reduceOutputRecords": -1, "spilledRecords": -1
        }]
    })
}

/// Writes `jobs` as a Rumen trace (concatenated pretty-printed job objects), submission times counted
/// from `epoch_ms`. Each job's tasks are laid out as if run alone (maps from launch, reduces after the
/// longest map), which only matters to tools that read job-level times; Gridmix reads task runtimes.
pub fn to_rumen(jobs: &[ScaledJob], epoch_ms: i64) -> String {
    let cluster = epoch_ms - 1;
    let mut out = String::new();
    for (i, j) in jobs.iter().enumerate() {
        let job_id = format!("job_{cluster}_{:04}", i + 1);
        let submit = epoch_ms + j.submit_ms;
        let launch = submit + 1_000;
        let maps: Vec<Value> =
            j.map_ms.iter().enumerate().map(|(k, &ms)| rumen_task(&job_id, 'm', k, launch, ms)).collect();
        let reduce_start = launch + j.map_ms.iter().copied().max().unwrap_or(0);
        let reduces: Vec<Value> =
            j.reduce_ms.iter().enumerate().map(|(k, &ms)| rumen_task(&job_id, 'r', k, reduce_start, ms)).collect();
        let finish = reduce_start + j.reduce_ms.iter().copied().max().unwrap_or(0);
        let job = json!({
            "jobID": job_id,
            "user": "gridmix",
            "jobName": j.name,
            "queue": "default",
            "priority": "NORMAL",
            "outcome": "SUCCESS",
            "jobtype": "JAVA",
            "submitTime": submit,
            "launchTime": launch,
            "finishTime": finish,
            "totalMaps": j.map_ms.len(),
            "totalReduces": j.reduce_ms.len(),
            "heapMegabytes": -1,
            "computonsPerMapInputByte": -1, "computonsPerMapOutputByte": -1,
            "computonsPerReduceInputByte": -1, "computonsPerReduceOutputByte": -1,
            "directDependantJobs": [],
            "mapTasks": maps,
            "reduceTasks": reduces,
            "otherTasks": []
        });
        // Serializing a json! value cannot fail (string keys only); fall back to the compact form anyway.
        out.push_str(&serde_json::to_string_pretty(&job).unwrap_or_else(|_| job.to_string()));
        out.push('\n');
    }
    out
}

/// One line of a harness CSV (`jobs-<scheduler>.csv`).
#[derive(Clone, Debug, PartialEq)]
pub struct JobRow {
    /// Scheduler name.
    pub scheduler: String,
    /// Position in the trace.
    pub seq: usize,
    /// The trace's job id.
    pub original_id: String,
    /// Maps.
    pub maps: u32,
    /// Reduces.
    pub reduces: u32,
    /// Longest map sleep, ms.
    pub map_ms_max: i64,
    /// Total map sleep, ms.
    pub map_ms_sum: i64,
    /// Longest reduce sleep, ms.
    pub reduce_ms_max: i64,
    /// Total reduce sleep, ms.
    pub reduce_ms_sum: i64,
    /// Submission as the RM recorded it, epoch ms.
    pub submit_ms: i64,
    /// Finish as the RM recorded it, epoch ms.
    pub finish_ms: i64,
    /// Final state (`SUCCEEDED` counts).
    pub state: String,
}

impl JobRow {
    /// Finish − submission, ms.
    pub fn response_ms(&self) -> i64 {
        self.finish_ms - self.submit_ms
    }

    /// Lower bound on the job's run alone on `slots` task slots, ms (at least 1).
    pub fn ideal_ms(&self, slots: u32) -> f64 {
        let slots = f64::from(slots.max(1));
        let map = (self.map_ms_max as f64).max(self.map_ms_sum as f64 / slots);
        let reduce = (self.reduce_ms_max as f64).max(self.reduce_ms_sum as f64 / slots);
        (map + reduce).max(1.0)
    }

    /// Whether the job succeeded.
    pub fn succeeded(&self) -> bool {
        self.state == "SUCCEEDED"
    }
}

const CSV_COLUMNS: [&str; 14] = [
    "trace",
    "scheduler",
    "seq",
    "original_id",
    "maps",
    "reduces",
    "map_ms_max",
    "map_ms_sum",
    "reduce_ms_max",
    "reduce_ms_sum",
    "trace_submit_ms",
    "submit_ms",
    "finish_ms",
    "state",
];

/// Parses a harness CSV; `file` names it in errors.
pub fn parse_csv(text: &str, file: &str) -> Result<Vec<JobRow>> {
    let bad = |line: usize, field: &str, message: String| Error::BadInput {
        file: file.to_string(),
        line,
        field: field.to_string(),
        message,
    };
    let mut rows = Vec::new();
    for (i, raw) in text.lines().enumerate().skip(1) {
        let line = i + 1;
        if raw.trim().is_empty() {
            continue;
        }
        let cols: Vec<&str> = raw.split(',').map(str::trim).collect();
        if cols.len() != CSV_COLUMNS.len() {
            return Err(bad(line, "columns", format!("{} columns; expected {}", cols.len(), CSV_COLUMNS.len())));
        }
        let int = |k: usize| -> Result<i64> {
            cols[k].parse::<i64>().map_err(|_| bad(line, CSV_COLUMNS[k], format!("'{}' is not an integer", cols[k])))
        };
        let count = |k: usize| -> Result<u32> {
            u32::try_from(int(k)?).map_err(|_| bad(line, CSV_COLUMNS[k], format!("'{}' is not a count", cols[k])))
        };
        rows.push(JobRow {
            scheduler: cols[1].to_string(),
            seq: count(2)? as usize,
            original_id: cols[3].to_string(),
            maps: count(4)?,
            reduces: count(5)?,
            map_ms_max: int(6)?,
            map_ms_sum: int(7)?,
            reduce_ms_max: int(8)?,
            reduce_ms_sum: int(9)?,
            submit_ms: int(11)?,
            finish_ms: int(12)?,
            state: cols[13].to_string(),
        });
    }
    if rows.is_empty() {
        return Err(bad(1, "rows", "no job rows".into()));
    }
    Ok(rows)
}

/// One scheduler's figures on one trace (times in seconds).
#[derive(Clone, Debug, PartialEq)]
pub struct Summary {
    /// Scheduler name.
    pub scheduler: String,
    /// Jobs in the run.
    pub jobs: usize,
    /// Jobs that did not succeed.
    pub failed: usize,
    /// Mean response time of the succeeded jobs.
    pub mean_rt_s: f64,
    /// Largest response time.
    pub max_rt_s: f64,
    /// Mean stretch.
    pub mean_stretch: f64,
    /// Largest stretch.
    pub max_stretch: f64,
    /// Last finish − first submission.
    pub makespan_s: f64,
}

/// Summarizes one scheduler's rows (see the module docs for the definitions).
pub fn summarize(scheduler: &str, rows: &[JobRow], slots: u32) -> Summary {
    let ok: Vec<&JobRow> = rows.iter().filter(|r| r.succeeded()).collect();
    let n = ok.len().max(1) as f64;
    let rts: Vec<f64> = ok.iter().map(|r| r.response_ms() as f64 / 1000.0).collect();
    let stretches: Vec<f64> = ok.iter().map(|r| r.response_ms() as f64 / r.ideal_ms(slots)).collect();
    let first = rows.iter().map(|r| r.submit_ms).min().unwrap_or(0);
    let last = rows.iter().map(|r| r.finish_ms).max().unwrap_or(first);
    Summary {
        scheduler: scheduler.to_string(),
        jobs: rows.len(),
        failed: rows.len() - ok.len(),
        mean_rt_s: rts.iter().sum::<f64>() / n,
        max_rt_s: rts.iter().copied().fold(0.0, f64::max),
        mean_stretch: stretches.iter().sum::<f64>() / n,
        max_stretch: stretches.iter().copied().fold(0.0, f64::max),
        makespan_s: (last - first) as f64 / 1000.0,
    }
}

/// The entries of `dir` as (file name, path).
fn named_entries(dir: &Path) -> Result<Vec<(String, std::path::PathBuf)>> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(|e| Error::io(dir, &e))? {
        let path = entry.map_err(|e| Error::io(dir, &e))?.path();
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        out.push((name, path));
    }
    Ok(out)
}

/// Every `jobs-<scheduler>.csv` in `dir`, rows in trace order, keyed by scheduler (empty if none).
fn read_runs(dir: &Path) -> Result<BTreeMap<String, Vec<JobRow>>> {
    let mut runs = BTreeMap::new();
    for (name, path) in named_entries(dir)? {
        if let Some(scheduler) = name.strip_prefix("jobs-").and_then(|n| n.strip_suffix(".csv")) {
            let text = std::fs::read_to_string(&path).map_err(|e| Error::io(&path, &e))?;
            let mut rows = parse_csv(&text, &path.display().to_string())?;
            rows.sort_by_key(|r| r.seq);
            runs.insert(scheduler.to_string(), rows);
        }
    }
    Ok(runs)
}

/// The `run<k>` folders of a repeated evaluation (`--repeat`), in round order.
pub fn repeat_rounds(dir: &Path) -> Result<Vec<std::path::PathBuf>> {
    let mut rounds: Vec<(u32, std::path::PathBuf)> = Vec::new();
    for (name, path) in named_entries(dir)? {
        if let Some(k) = name.strip_prefix("run").and_then(|k| k.parse::<u32>().ok()) {
            if path.is_dir() {
                rounds.push((k, path));
            }
        }
    }
    rounds.sort();
    Ok(rounds.into_iter().map(|(_, p)| p).collect())
}

/// The per-job table's header: the trace's columns, then one column per scheduler.
fn per_job_header(md: &mut String, schedulers: &[&str]) {
    let _ = writeln!(md, "| # | trace job | maps | reduces | ideal (s) | {} |", schedulers.join(" | "));
    let _ = writeln!(md, "|---|---|---|---|---|{}", "---|".repeat(schedulers.len()));
}

/// One row of the per-job table: the job's trace columns, then `cells` (one per scheduler).
fn per_job_row(md: &mut String, r: &JobRow, slots: u32, cells: &[String]) {
    let _ = writeln!(
        md,
        "| {} | {} | {} | {} | {:.1} | {} |",
        r.seq,
        r.original_id,
        r.maps,
        r.reduces,
        r.ideal_ms(slots) / 1000.0,
        cells.join(" | ")
    );
}

/// Writes the per-round reports of a repeated evaluation (`dir/run<k>/report.md`) and, in `dir`, a
/// `report.md`, `summary.csv` and `response.svg` (bars with 95% intervals) over the rounds: each
/// scheduler's mean response time and makespan per round, their mean with a 95% confidence interval,
/// and the ratio of mean response times to `baseline` paired by round (the schedulers of one round ran back to back, so a round's ratio cancels most of
/// the machine's drift), with its own interval. Returns the report text.
pub fn write_repeat_report(dir: &Path, title: &str, slots: u32, baseline: &str) -> Result<String> {
    let rounds = repeat_rounds(dir)?;
    if rounds.is_empty() {
        return Err(Error::config("gridmix repeat folder", dir.display(), "a folder holding run<k>/ folders"));
    }
    // scheduler -> its summary per round (None where it did not run); per-job response times over rounds.
    let mut per: BTreeMap<String, Vec<Option<Summary>>> = BTreeMap::new();
    let mut jobs_mean: BTreeMap<String, Vec<Vec<f64>>> = BTreeMap::new();
    let mut reference: Vec<JobRow> = Vec::new();
    for (k, round) in rounds.iter().enumerate() {
        let runs = read_runs(round)?;
        if runs.is_empty() {
            continue;
        }
        write_report(round, &format!("{title}, round {}", k + 1), slots, baseline)?;
        for (scheduler, rows) in &runs {
            let cell = per.entry(scheduler.clone()).or_insert_with(|| vec![None; rounds.len()]);
            cell[k] = Some(summarize(scheduler, rows, slots));
            let rts = jobs_mean.entry(scheduler.clone()).or_default();
            for r in rows.iter().filter(|r| r.succeeded()) {
                if rts.len() <= r.seq {
                    rts.resize(r.seq + 1, Vec::new());
                }
                rts[r.seq].push(r.response_ms() as f64 / 1000.0);
            }
            if reference.len() < rows.len() {
                reference = rows.clone();
            }
        }
    }
    let fmt_ci = |(m, h): (f64, f64)| if h.is_nan() { format!("{m:.2}") } else { format!("{m:.2} ± {h:.2}") };
    let base_rounds = per.get(baseline).cloned().unwrap_or_default();
    let mut md = String::new();
    let _ = writeln!(md, "# {title}: {} rounds\n", rounds.len());
    let _ = writeln!(
        md,
        "Each round replayed the trace once under every scheduler, back to back. Response time = finish − \
         submission (ResourceManager times), seconds; ± is the half-width of a 95% Student t interval over \
         the rounds. The ratio to `{baseline}` is taken per round (paired) and then averaged. Per-round \
         tables: `run<k>/report.md`.\n"
    );
    let _ = writeln!(
        md,
        "| scheduler | rounds | mean RT per round (s) | mean RT (s) | makespan (s) | mean stretch | failed jobs | mean RT / {baseline} (paired) |"
    );
    let _ = writeln!(md, "|---|---|---|---|---|---|---|---|");
    let mut csv = String::from(
        "scheduler,rounds,mean_rt_s,mean_rt_ci95_s,makespan_s,makespan_ci95_s,mean_stretch,failed,ratio_to_baseline,ratio_ci95\n",
    );
    // The bar chart: per scheduler, mean RT and makespan with their 95% intervals.
    let (mut bar_names, mut values, mut errors) = (Vec::new(), Vec::new(), Vec::new());
    for (scheduler, cells) in &per {
        let done: Vec<&Summary> = cells.iter().flatten().collect();
        let rts: Vec<f64> = done.iter().map(|s| s.mean_rt_s).collect();
        let makespans: Vec<f64> = done.iter().map(|s| s.makespan_s).collect();
        let stretches: Vec<f64> = done.iter().map(|s| s.mean_stretch).collect();
        let failed: usize = done.iter().map(|s| s.failed).sum();
        let ratios: Vec<f64> = cells
            .iter()
            .zip(base_rounds.iter())
            .filter_map(|(c, b)| match (c, b) {
                (Some(c), Some(b)) if b.mean_rt_s > 0.0 => Some(c.mean_rt_s / b.mean_rt_s),
                _ => None,
            })
            .collect();
        let (rt, rt_h) = mean_ci95(&rts);
        let (ms, ms_h) = mean_ci95(&makespans);
        let (st, _) = mean_ci95(&stretches);
        let (ra, ra_h) = mean_ci95(&ratios);
        let interval = |m: f64, h: f64| if h.is_finite() { (m - h, m + h) } else { (m, m) };
        bar_names.push(scheduler.clone());
        values.push(vec![rt, ms]);
        errors.push(vec![interval(rt, rt_h), interval(ms, ms_h)]);
        let listed: Vec<String> =
            cells.iter().map(|c| c.as_ref().map_or("–".to_string(), |s| format!("{:.1}", s.mean_rt_s))).collect();
        let _ = writeln!(
            md,
            "| {scheduler} | {} | {} | {} | {} | {st:.2} | {failed} | {} |",
            done.len(),
            listed.join(", "),
            fmt_ci((rt, rt_h)),
            fmt_ci((ms, ms_h)),
            if ratios.is_empty() { "–".to_string() } else { fmt_ci((ra, ra_h)) }
        );
        let _ = writeln!(
            csv,
            "{scheduler},{},{rt:.3},{rt_h:.3},{ms:.3},{ms_h:.3},{st:.4},{failed},{ra:.4},{ra_h:.4}",
            done.len()
        );
    }
    let _ = writeln!(md, "\n## Per-job response time, mean over rounds (s)\n");
    let schedulers: Vec<&String> = jobs_mean.keys().collect();
    let names: Vec<&str> = schedulers.iter().map(|s| s.as_str()).collect();
    per_job_header(&mut md, &names);
    for r in &reference {
        let cells: Vec<String> = schedulers
            .iter()
            .map(|s| {
                jobs_mean
                    .get(*s)
                    .and_then(|v| v.get(r.seq))
                    .filter(|v| !v.is_empty())
                    .map_or("–".to_string(), |v| format!("{:.1}", v.iter().sum::<f64>() / v.len() as f64))
            })
            .collect();
        per_job_row(&mut md, r, slots, &cells);
    }
    let out = OutDir::create(dir)?;
    out.write("report.md", &md)?;
    out.write("summary.csv", &csv)?;
    let metrics = vec!["mean RT".to_string(), "makespan".to_string()];
    out.write(
        "response.svg",
        &grouped_bars(
            &format!("{title}: mean over {} rounds, 95% intervals", rounds.len()),
            "seconds",
            &metrics,
            &bar_names,
            &values,
            Some(errors.as_slice()),
            None,
        ),
    )?;
    Ok(md)
}

/// Reads every `jobs-<scheduler>.csv` in `dir`, writes `report.md`, `summary.csv`, `response.svg` and
/// `response-cdf.svg` there, and returns the report text. Ratios are to `baseline` when it ran.
pub fn write_report(dir: &Path, title: &str, slots: u32, baseline: &str) -> Result<String> {
    let runs = read_runs(dir)?;
    if runs.is_empty() {
        return Err(Error::config(
            "gridmix report folder",
            dir.display(),
            "a folder holding jobs-<scheduler>.csv files (or run<k>/ folders of them, from --repeat)",
        ));
    }
    let summaries: Vec<Summary> = runs.iter().map(|(s, rows)| summarize(s, rows, slots)).collect();
    let base = summaries.iter().find(|s| s.scheduler == baseline);
    let ratio = |v: f64, b: Option<f64>| b.filter(|b| *b > 0.0).map_or("–".to_string(), |b| format!("{:.2}", v / b));

    let mut md = String::new();
    let _ = writeln!(md, "# {title}\n");
    let _ = writeln!(
        md,
        "Response time = finish − submission (ResourceManager times), seconds. Stretch = response / the job's ideal \
         time on {slots} slots without start-up costs (see `docs/evaluation.md`). Ratios: mean response time to \
         `{baseline}`.\n"
    );
    let _ = writeln!(
        md,
        "| scheduler | jobs | failed | mean RT (s) | max RT (s) | mean stretch | max stretch | makespan (s) | mean RT / {baseline} |"
    );
    let _ = writeln!(md, "|---|---|---|---|---|---|---|---|---|");
    let mut csv = String::from("scheduler,jobs,failed,mean_rt_s,max_rt_s,mean_stretch,max_stretch,makespan_s\n");
    for s in &summaries {
        let _ = writeln!(
            md,
            "| {} | {} | {} | {:.1} | {:.1} | {:.2} | {:.2} | {:.1} | {} |",
            s.scheduler,
            s.jobs,
            s.failed,
            s.mean_rt_s,
            s.max_rt_s,
            s.mean_stretch,
            s.max_stretch,
            s.makespan_s,
            ratio(s.mean_rt_s, base.map(|b| b.mean_rt_s))
        );
        let _ = writeln!(
            csv,
            "{},{},{},{:.3},{:.3},{:.4},{:.4},{:.3}",
            s.scheduler, s.jobs, s.failed, s.mean_rt_s, s.max_rt_s, s.mean_stretch, s.max_stretch, s.makespan_s
        );
    }
    let _ = writeln!(md, "\n## Per-job response time (s)\n");
    let schedulers: Vec<String> = runs.keys().cloned().collect();
    per_job_header(&mut md, &schedulers.iter().map(String::as_str).collect::<Vec<_>>());
    if let Some(reference) = runs.values().next() {
        for (i, r) in reference.iter().enumerate() {
            let cells: Vec<String> = runs
                .values()
                .map(|rows| {
                    rows.get(i).map_or("–".into(), |x| {
                        if x.succeeded() {
                            format!("{:.1}", x.response_ms() as f64 / 1000.0)
                        } else {
                            x.state.clone()
                        }
                    })
                })
                .collect();
            per_job_row(&mut md, r, slots, &cells);
        }
    }
    let out = OutDir::create(dir)?;
    out.write("report.md", &md)?;
    out.write("summary.csv", &csv)?;
    let metrics = vec!["mean RT".to_string(), "max RT".to_string(), "makespan".to_string()];
    let values: Vec<Vec<f64>> = summaries.iter().map(|s| vec![s.mean_rt_s, s.max_rt_s, s.makespan_s]).collect();
    out.write(
        "response.svg",
        &grouped_bars(&format!("{title}: response times"), "seconds", &metrics, &schedulers, &values, None, None),
    )?;
    let series: Vec<Series> = runs
        .iter()
        .map(|(s, rows)| {
            let mut rts: Vec<f64> =
                rows.iter().filter(|r| r.succeeded()).map(|r| r.response_ms() as f64 / 1000.0).collect();
            rts.sort_by(f64::total_cmp);
            let n = rts.len().max(1) as f64;
            Series { name: s.clone(), points: rts.iter().enumerate().map(|(i, &x)| (x, (i + 1) as f64 / n)).collect() }
        })
        .collect();
    out.write(
        "response-cdf.svg",
        &line_chart(
            &format!("{title}: response time CDF"),
            "response time (s)",
            "fraction of jobs",
            &series,
            Some((0.0, 1.0)),
        ),
    )?;
    Ok(md)
}

/// Where one application's response time went (seconds), from the ResourceManager's log lines.
#[derive(Clone, Debug, PartialEq)]
pub struct AppTimeline {
    /// `<cluster timestamp>_<sequence>` of the application id.
    pub app: String,
    /// Accepted → AM container allocated (AM placement).
    pub am_wait_s: f64,
    /// AM container → attempt RUNNING (AM JVM start-up and registration).
    pub am_start_s: f64,
    /// Attempt RUNNING → first task container allocated (the first task's wait for a slot).
    pub first_task_wait_s: f64,
    /// First task container → application finished.
    pub rest_s: f64,
    /// Accepted → finished.
    pub response_s: f64,
    /// Task containers allocated (AM excluded).
    pub task_containers: u32,
}

/// The timelines of one replay (one mini cluster), named by its work directory (`<trace>-<scheduler>`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunTimelines {
    /// The run's name.
    pub run: String,
    /// Applications in id order; those missing an event (a run cut short) are left out.
    pub apps: Vec<AppTimeline>,
    /// Container use over the run: how much of the node went to tasks and to AMs.
    pub containers: ContainerUse,
}

/// Container-seconds of one replay, from each container's allocation to its completion (the log's
/// `NEW to ALLOCATED` and `to COMPLETED`/`KILLED`/`RELEASED` lines). Divided by the span they give the
/// mean number of task and AM containers running: on the Gridmix node AMs and tasks share memory, so a
/// scheduler that starts fewer AMs at once has more room for tasks.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ContainerUse {
    /// Task container-seconds.
    pub task_s: f64,
    /// AM container-seconds.
    pub am_s: f64,
    /// First allocation to last completion, s.
    pub span_s: f64,
}

impl ContainerUse {
    /// Mean task containers running over the span.
    pub fn mean_tasks(&self) -> f64 {
        self.over_span(self.task_s)
    }

    /// Mean AM containers running over the span.
    pub fn mean_ams(&self) -> f64 {
        self.over_span(self.am_s)
    }

    fn over_span(&self, container_s: f64) -> f64 {
        if self.span_s > 0.0 {
            container_s / self.span_s
        } else {
            0.0
        }
    }
}

/// Open containers of one run while its log is read.
#[derive(Default)]
struct ContainerTally {
    open: BTreeMap<String, (f64, bool)>,
    use_: ContainerUse,
    first: Option<f64>,
    last: f64,
}

#[derive(Default)]
struct AppEvents {
    accepted: Option<f64>,
    am: Option<f64>,
    registered: Option<f64>,
    first_task: Option<f64>,
    finished: Option<f64>,
    tasks: u32,
}

/// Seconds of the day of a log line starting `HH:MM:SS,mmm`.
fn line_seconds(line: &str) -> Option<f64> {
    let t = line.get(..12)?;
    let (h, m, s, ms) = (t.get(0..2)?, t.get(3..5)?, t.get(6..8)?, t.get(9..12)?);
    let n = |x: &str| x.parse::<u32>().ok().map(f64::from);
    Some(n(h)? * 3600.0 + n(m)? * 60.0 + n(s)? + n(ms)? / 1000.0)
}

/// `<cluster>_<seq>` from the text right after an `application_`, `appattempt_` or `container_` prefix.
fn app_key(rest: &str) -> Option<String> {
    let mut parts = rest.split(|c: char| c == '_' || c.is_whitespace());
    let cluster = parts.next().filter(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))?;
    let seq = parts.next().filter(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))?;
    Some(format!("{cluster}_{seq}"))
}

/// Reads the harness's Hadoop log (`integration-tests/gridmix/build/gridmix-logs/hadoop.log`): a run
/// starts at MiniMRYarnCluster's `mkdir: .../gridmix-work/<run>/` line (the recording cluster,
/// `record`, is skipped); events are `RMAppImpl` ACCEPTED and FINISHED (or FINAL_SAVING), the attempt
/// leaving SCHEDULED (AM container) and entering RUNNING (AM registered), and task containers
/// (`_000002` on) going from NEW to ALLOCATED. The log's times are of the day without a date: a time
/// more than 12 hours before the last one read is the next day's (a run across midnight; lines are
/// written in time order up to the threads' milliseconds).
pub fn parse_timelines(log: &str) -> Vec<RunTimelines> {
    let mut runs: Vec<(String, String, BTreeMap<String, AppEvents>, ContainerTally)> = Vec::new();
    let mut in_run = false;
    let (mut last_of_day, mut days) = (0.0, 0.0);
    let mut clock = |line: &str| {
        let of_day = line_seconds(line)?;
        if of_day + 43_200.0 < last_of_day {
            days += 86_400.0;
        }
        last_of_day = of_day;
        Some(days + of_day)
    };
    for line in log.lines() {
        let now = clock(line);
        if let Some(pos) = line.find("MiniMRYarnCluster: mkdir: ").and_then(|_| line.find("/gridmix-work/")) {
            let path = &line[pos + "/gridmix-work/".len()..];
            let name = path.split('/').next().unwrap_or_default();
            // A cluster instance is `<name>/<name>/yarn-<n>`: a repeated replay under the same name is a new run.
            let instance = path.split('/').find(|p| p.starts_with("yarn-")).unwrap_or_default();
            in_run = !name.is_empty() && name != "record";
            if in_run && runs.last().map_or(true, |(r, i, _, _)| r != name || i != instance) {
                runs.push((name.to_string(), instance.to_string(), BTreeMap::new(), ContainerTally::default()));
            }
            continue;
        }
        let (true, Some(now), Some((_, _, apps, tally))) = (in_run, now, runs.last_mut()) else {
            continue;
        };
        if let Some(i) = line.find("RMAppImpl: application_") {
            let Some(key) = app_key(&line[i + "RMAppImpl: application_".len()..]) else { continue };
            let ev = apps.entry(key).or_default();
            if line.contains("to ACCEPTED on") {
                ev.accepted.get_or_insert(now);
            } else if line.contains("to FINAL_SAVING on") || line.contains("to FINISHED on") {
                ev.finished.get_or_insert(now);
            }
        } else if let Some(i) = line.find("RMAppAttemptImpl: appattempt_") {
            let Some(key) = app_key(&line[i + "RMAppAttemptImpl: appattempt_".len()..]) else { continue };
            let ev = apps.entry(key).or_default();
            if line.contains("State change from SCHEDULED to") {
                ev.am.get_or_insert(now);
            } else if line.contains("to RUNNING on") {
                ev.registered.get_or_insert(now);
            }
        } else if line.contains("Container Transitioned from NEW to ALLOCATED") {
            let Some(i) = line.find("container_") else { continue };
            let rest = &line[i + "container_".len()..];
            let Some(key) = app_key(rest) else { continue };
            // container_<cluster>_<seq>_<attempt>_<number>: number 1 is the AM.
            let id = rest.split_whitespace().next().unwrap_or_default();
            let number = id.rsplit('_').next().and_then(|n| n.parse::<u64>().ok());
            if number.is_some_and(|n| n > 1) {
                let ev = apps.entry(key).or_default();
                ev.first_task.get_or_insert(now);
                ev.tasks += 1;
            }
            if number.is_some() {
                tally.open.insert(id.to_string(), (now, number == Some(1)));
                tally.first.get_or_insert(now);
            }
        } else if line.contains("Container Transitioned from")
            && (line.contains("to COMPLETED") || line.contains("to KILLED") || line.contains("to RELEASED"))
        {
            let Some(i) = line.find("container_") else { continue };
            let id = line[i + "container_".len()..].split_whitespace().next().unwrap_or_default();
            if let Some((start, am)) = tally.open.remove(id) {
                *(if am { &mut tally.use_.am_s } else { &mut tally.use_.task_s }) += now - start;
                tally.last = tally.last.max(now);
            }
        }
    }
    runs.into_iter()
        .map(|(run, _, apps, tally)| RunTimelines {
            run,
            containers: ContainerUse { span_s: tally.first.map_or(0.0, |f| (tally.last - f).max(0.0)), ..tally.use_ },
            apps: apps
                .into_iter()
                .filter_map(|(app, e)| {
                    let (a, m, r, f, d) = (e.accepted?, e.am?, e.registered?, e.first_task?, e.finished?);
                    Some(AppTimeline {
                        app,
                        am_wait_s: m - a,
                        am_start_s: r - m,
                        first_task_wait_s: f - r,
                        rest_s: d - f,
                        response_s: d - a,
                        task_containers: e.tasks,
                    })
                })
                .collect(),
        })
        .filter(|r| !r.apps.is_empty())
        .collect()
}

/// The last run of each name, in log order: a replay stopped part-way and run again under the same name
/// (the harness appends every run to one log) is superseded by the re-run.
pub fn latest_per_run(runs: Vec<RunTimelines>) -> Vec<RunTimelines> {
    let mut kept: Vec<RunTimelines> = Vec::with_capacity(runs.len());
    for r in runs {
        kept.retain(|k| k.run != r.run);
        kept.push(r);
    }
    kept
}

/// One markdown table per run (with a mean row) of [`parse_timelines`]' output.
pub fn timelines_markdown(runs: &[RunTimelines]) -> String {
    let mut md = String::new();
    for r in runs {
        let _ = writeln!(md, "## {}\n", r.run);
        md.push_str("| app | AM wait (s) | AM start-up (s) | first task wait (s) | rest (s) | response (s) | task containers |\n");
        md.push_str("|---|---|---|---|---|---|---|\n");
        let mut sum = [0.0; 5];
        for a in &r.apps {
            let v = [a.am_wait_s, a.am_start_s, a.first_task_wait_s, a.rest_s, a.response_s];
            sum.iter_mut().zip(v).for_each(|(s, x)| *s += x);
            let _ = writeln!(
                md,
                "| {} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {} |",
                a.app, v[0], v[1], v[2], v[3], v[4], a.task_containers
            );
        }
        let n = r.apps.len() as f64;
        let _ = writeln!(
            md,
            "| mean | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | |\n",
            sum[0] / n,
            sum[1] / n,
            sum[2] / n,
            sum[3] / n,
            sum[4] / n
        );
        let c = &r.containers;
        let _ = writeln!(
            md,
            "Containers running on average over {:.0} s (first allocation to last release): {:.1} tasks, {:.1} AMs.\n",
            c.span_s,
            c.mean_tasks(),
            c.mean_ams()
        );
    }
    md
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::rumen;

    fn sim(submit_ms: Time, maps: Vec<Time>, reduces: Vec<Time>, id: &str) -> SimJob {
        let mut j = SimJob::new(submit_ms, maps, reduces);
        j.spec.external_id = id.into();
        j
    }

    fn window() -> Vec<SimJob> {
        vec![
            sim(0, vec![5_000], vec![], "a"),
            sim(10_000, vec![8_000; 20], vec![100_000; 3], "big"),
            sim(30_000, vec![1_000, 3_000], vec![4_000], "c"),
            sim(70_000, vec![90_000_000], vec![], "d"),
        ]
    }

    #[test]
    fn scaling_caps_tasks_keeping_work_scales_gaps_and_clamps() {
        let s = Scaling { first_job: 1, jobs: 3, gap_scale: 0.5, max_maps: 8, max_reduces: 2, ..Scaling::default() };
        let w = scale_window(&window(), &s).unwrap();
        assert_eq!(w.iter().map(|j| j.name.as_str()).collect::<Vec<_>>(), ["big", "c", "d"]);
        assert_eq!(w.iter().map(|j| j.submit_ms).collect::<Vec<_>>(), [0, 10_000, 30_000]);
        // 20 maps x 8 s = 160 s of work over 8 maps: 20 s each; 3 x 100 s over 2 reduces: 150 s, clamped to 60 s.
        assert_eq!(w[0].map_ms, vec![20_000; 8]);
        assert_eq!(w[0].reduce_ms, vec![60_000; 2]);
        // Under the caps: own durations, the 1 s map raised to the 2 s floor.
        assert_eq!(w[1].map_ms, vec![2_000, 3_000]);
        assert_eq!(w[1].reduce_ms, vec![4_000]);
        assert_eq!(w[2].map_ms, vec![60_000]);
    }

    #[test]
    fn task_scale_stretches_every_task_before_the_cap_and_the_clamp() {
        let s =
            Scaling { first_job: 1, jobs: 2, max_maps: 8, task_scale: 3.0, max_task_ms: 90_000, ..Scaling::default() };
        let w = scale_window(&window(), &s).unwrap();
        // 20 maps x 8 s x 3 = 480 s of work over 8 maps: 60 s each; reduces 300 s, clamped to 90 s.
        assert_eq!(w[0].map_ms, vec![60_000; 8]);
        assert_eq!(w[0].reduce_ms, vec![90_000; 2]);
        // Gaps are not task durations: job c arrives 20 s after job big, times the default gap_scale 0.25.
        assert_eq!(w[1].submit_ms, 5_000);
        assert_eq!(w[1].map_ms, vec![3_000, 9_000]);
        assert!(Scaling { task_scale: 0.0, ..Scaling::default() }
            .validate()
            .unwrap_err()
            .to_string()
            .contains("task_scale"));
    }

    #[test]
    fn a_window_past_the_trace_or_bad_parameters_are_named_errors() {
        let err = scale_window(&window(), &Scaling { first_job: 2, jobs: 3, ..Scaling::default() }).unwrap_err();
        assert!(err.to_string().contains("first_job") && err.to_string().contains("4 jobs"), "{err}");
        let err = Scaling { gap_scale: f64::NAN, ..Scaling::default() }.validate().unwrap_err().to_string();
        assert!(err.contains("gap_scale"), "{err}");
        let err = Scaling { min_task_ms: 5, max_task_ms: 4, ..Scaling::default() }.validate().unwrap_err().to_string();
        assert!(err.contains("min_task_ms"), "{err}");
    }

    #[test]
    fn rumen_output_reads_back_with_the_same_tasks_and_arrivals() {
        let s = Scaling { first_job: 0, jobs: 3, gap_scale: 0.25, max_maps: 8, max_reduces: 2, ..Scaling::default() };
        let w = scale_window(&window(), &s).unwrap();
        let text = to_rumen(&w, 1_700_000_000_000);
        let back = rumen::parse(&text, "converted.json").unwrap();
        assert_eq!(back.len(), 3);
        for (b, j) in back.iter().zip(&w) {
            assert_eq!(b.spec.submit_ms, j.submit_ms);
            assert_eq!(b.map_ms, j.map_ms);
            assert_eq!(b.reduce_ms, j.reduce_ms);
        }
        // Hadoop's JobID/TaskID parsers need these exact shapes.
        assert!(text.contains("\"jobID\": \"job_1699999999999_0002\""));
        assert!(text.contains("\"attemptID\": \"attempt_1699999999999_0002_r_000001_0\""));
    }

    fn row(seq: usize, maps: (i64, i64), reduces: (i64, i64), submit: i64, finish: i64, state: &str) -> JobRow {
        JobRow {
            scheduler: "x".into(),
            seq,
            original_id: format!("job{seq}"),
            maps: 1,
            reduces: 0,
            map_ms_max: maps.0,
            map_ms_sum: maps.1,
            reduce_ms_max: reduces.0,
            reduce_ms_sum: reduces.1,
            submit_ms: submit,
            finish_ms: finish,
            state: state.into(),
        }
    }

    #[test]
    fn ideal_time_is_the_larger_of_longest_task_and_work_over_slots_per_phase() {
        // Maps: 16 s of work on 4 slots = 4 s, but one map takes 5 s; reduces: 40 s / 4 = 10 s > 6 s.
        assert_eq!(row(0, (5_000, 16_000), (6_000, 40_000), 0, 1, "SUCCEEDED").ideal_ms(4), 15_000.0);
    }

    #[test]
    fn summary_means_exclude_failed_jobs_and_makespan_spans_all() {
        let rows = vec![
            row(0, (10_000, 10_000), (0, 0), 1_000, 21_000, "SUCCEEDED"),
            row(1, (5_000, 5_000), (0, 0), 2_000, 12_000, "SUCCEEDED"),
            row(2, (5_000, 5_000), (0, 0), 3_000, 50_000, "FAILED"),
        ];
        let s = summarize("x", &rows, 4);
        assert_eq!((s.jobs, s.failed), (3, 1));
        assert!((s.mean_rt_s - 15.0).abs() < 1e-9 && (s.max_rt_s - 20.0).abs() < 1e-9);
        assert!((s.mean_stretch - 2.0).abs() < 1e-9 && (s.max_stretch - 2.0).abs() < 1e-9);
        assert!((s.makespan_s - 49.0).abs() < 1e-9);
    }

    #[test]
    fn report_reads_the_csvs_and_writes_table_ratios_and_plots() {
        let dir = std::env::temp_dir().join(format!("circumflex-gridmix-report-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let header = CSV_COLUMNS.join(",");
        for (sched, finish) in [("hadoop-fair", 21_000), ("circumflex-flex", 11_000)] {
            let text = format!(
                "{header}\nt,{sched},0,job_1_0001,2,0,5000,10000,0,0,0,1000,{finish},SUCCEEDED\n\
                 t,{sched},1,job_1_0002,1,0,5000,5000,0,0,100,2000,12000,SUCCEEDED\n"
            );
            std::fs::write(dir.join(format!("jobs-{sched}.csv")), text).unwrap();
        }
        let md = write_report(&dir, "test", 4, "hadoop-fair").unwrap();
        // fair: (20 + 10) / 2 = 15 s; flex: (10 + 10) / 2 = 10 s; ratio 0.67.
        assert!(md.contains("| circumflex-flex | 2 | 0 | 10.0 | 10.0 |"), "{md}");
        assert!(md.contains("| 0.67 |") && md.contains("| 1.00 |"), "{md}");
        assert!(md.contains("| 0 | job_1_0001 | 2 | 0 | 5.0 | 10.0 | 20.0 |"), "{md}");
        for f in ["report.md", "summary.csv", "response.svg", "response-cdf.svg"] {
            assert!(dir.join(f).exists(), "{f}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn repeat_report_pairs_rounds_and_gives_intervals() {
        let dir = std::env::temp_dir().join(format!("circumflex-gridmix-repeat-{}", std::process::id()));
        let header = CSV_COLUMNS.join(",");
        // Round k: fair's one job takes 20 + k s, flex's 10 + k s.
        for k in 1..=3 {
            let round = dir.join(format!("run{k}"));
            std::fs::create_dir_all(&round).unwrap();
            for (sched, rt) in [("hadoop-fair", 20 + k), ("circumflex-flex", 10 + k)] {
                let text = format!(
                    "{header}\nt,{sched},0,job_1_0001,1,0,5000,5000,0,0,0,1000,{},SUCCEEDED\n",
                    1000 + rt * 1000
                );
                std::fs::write(round.join(format!("jobs-{sched}.csv")), text).unwrap();
            }
        }
        std::fs::create_dir_all(dir.join("run-notes")).unwrap();
        assert_eq!(repeat_rounds(&dir).unwrap().len(), 3);
        let md = write_repeat_report(&dir, "test", 4, "hadoop-fair").unwrap();
        // flex: 11, 12, 13 -> 12.00 ± 2.48; ratios 11/21, 12/22, 13/23 -> 0.545 ± 0.052.
        assert!(md.contains("| circumflex-flex | 3 | 11.0, 12.0, 13.0 | 12.00 ± 2.48 |"), "{md}");
        assert!(md.contains("| 0.54 ± 0.05 |"), "{md}");
        assert!(
            md.contains("| hadoop-fair | 3 | 21.0, 22.0, 23.0 | 22.00 ± 2.48 |") && md.contains("| 1.00 ± 0.00 |"),
            "{md}"
        );
        assert!(md.contains("| 0 | job_1_0001 | 1 | 0 | 5.0 | 12.0 | 22.0 |"), "{md}");
        assert!(dir.join("summary.csv").exists() && dir.join("run2/report.md").exists());
        let svg = std::fs::read_to_string(dir.join("response.svg")).unwrap();
        assert!(
            svg.contains("95% intervals") && svg.contains("circumflex-flex") && svg.contains("hadoop-fair"),
            "{svg}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn bad_csv_lines_name_file_line_and_column() {
        let text = format!("{}\nt,x,0,j,notanumber,0,1,1,0,0,0,1,2,SUCCEEDED\n", CSV_COLUMNS.join(","));
        let err = parse_csv(&text, "jobs-x.csv").unwrap_err().to_string();
        assert!(err.contains("jobs-x.csv") && err.contains("maps") && err.contains("notanumber"), "{err}");
        let err = parse_csv("header\n1,2,3\n", "f.csv").unwrap_err().to_string();
        assert!(err.contains("columns"), "{err}");
    }

    /// A run across midnight: the times after it are the next day's, so no phase comes out negative.
    #[test]
    fn timelines_read_a_run_across_midnight() {
        let log = "\
23:59:50,000 INFO  [main] MiniMRYarnCluster: mkdir: file:/x/gridmix-work/swim-hadoop-fair/swim-hadoop-fair/yarn-1/a\n\
23:59:55,000 INFO  [d] RMAppImpl: application_9_0001 State change from SUBMITTED to ACCEPTED on event = APP_ACCEPTED\n\
23:59:56,000 INFO  [d] RMAppAttemptImpl: appattempt_9_0001_000001 State change from SCHEDULED to ALLOCATED on event = X\n\
23:59:59,500 INFO  [d] RMAppAttemptImpl: appattempt_9_0001_000001 State change from LAUNCHED to RUNNING on event = X\n\
00:00:01,000 INFO  [d] RMContainerImpl: container_9_0001_01_000002 Container Transitioned from NEW to ALLOCATED\n\
00:00:11,000 INFO  [d] RMContainerImpl: container_9_0001_01_000002 Container Transitioned from RUNNING to COMPLETED\n\
00:00:12,000 INFO  [d] RMAppImpl: application_9_0001 State change from RUNNING to FINISHED on event = X\n";
        let runs = parse_timelines(log);
        let a = &runs[0].apps[0];
        let got = [a.am_wait_s, a.am_start_s, a.first_task_wait_s, a.rest_s, a.response_s];
        for (g, want) in got.iter().zip([1.0, 3.5, 1.5, 11.0, 17.0]) {
            assert!((g - want).abs() < 1e-9, "{got:?}");
        }
        assert!((runs[0].containers.task_s - 10.0).abs() < 1e-9, "{:?}", runs[0].containers.task_s);
    }

    #[test]
    fn timelines_split_each_response_into_am_and_task_phases() {
        let log = "\
10:00:00,000 INFO  [main] MiniMRYarnCluster: mkdir: file:/x/gridmix-work/record/record/yarn-1/apps\n\
10:00:00,500 INFO  [d] RMAppImpl: application_7_0001 State change from SUBMITTED to ACCEPTED on event = APP_ACCEPTED\n\
10:00:01,000 INFO  [main] MiniMRYarnCluster: mkdir: file:/x/gridmix-work/swim-circumflex-flex/swim-circumflex-flex/y\n\
10:00:02,000 INFO  [d] RMAppImpl: application_9_0001 State change from SUBMITTED to ACCEPTED on event = APP_ACCEPTED\n\
10:00:02,250 INFO  [d] RMAppAttemptImpl: appattempt_9_0001_000001 State change from SCHEDULED to ALLOCATED_SAVING on event = CONTAINER_ALLOCATED\n\
10:00:02,300 INFO  [d] RMContainerImpl: container_9_0001_01_000001 Container Transitioned from NEW to ALLOCATED\n\
10:00:08,250 INFO  [d] RMAppAttemptImpl: appattempt_9_0001_000001 State change from LAUNCHED to RUNNING on event = REGISTERED\n\
10:00:10,250 INFO  [d] RMContainerImpl: container_9_0001_01_000002 Container Transitioned from NEW to ALLOCATED\n\
10:00:11,000 INFO  [d] RMContainerImpl: container_9_0001_01_000003 Container Transitioned from NEW to ALLOCATED\n\
10:00:16,250 INFO  [d] RMContainerImpl: container_9_0001_01_000002 Container Transitioned from RUNNING to COMPLETED\n\
10:00:17,000 INFO  [d] RMContainerImpl: container_9_0001_01_000003 Container Transitioned from ACQUIRED to RELEASED\n\
10:00:20,000 INFO  [d] RMContainerImpl: container_9_0001_01_000001 Container Transitioned from RUNNING to COMPLETED\n\
10:00:20,000 INFO  [d] RMAppImpl: application_9_0001 State change from RUNNING to FINAL_SAVING on event = ATTEMPT_UNREGISTERED\n\
10:00:20,100 INFO  [d] RMAppImpl: application_9_0001 State change from FINAL_SAVING to FINISHED on event = APP_UPDATE_SAVED\n\
10:00:21,000 INFO  [d] RMAppImpl: application_9_0002 State change from SUBMITTED to ACCEPTED on event = APP_ACCEPTED\n\
10:01:00,000 INFO  [main] MiniMRYarnCluster: mkdir: file:/x/gridmix-work/swim-circumflex-flex/swim-circumflex-flex/yarn-2/a\n\
10:01:01,000 INFO  [d] RMAppImpl: application_10_0001 State change from SUBMITTED to ACCEPTED on event = APP_ACCEPTED\n\
10:01:01,500 INFO  [d] RMAppAttemptImpl: appattempt_10_0001_000001 State change from SCHEDULED to ALLOCATED on event = X\n\
10:01:02,000 INFO  [d] RMAppAttemptImpl: appattempt_10_0001_000001 State change from LAUNCHED to RUNNING on event = X\n\
10:01:03,000 INFO  [d] RMContainerImpl: container_10_0001_01_000002 Container Transitioned from NEW to ALLOCATED\n\
10:01:09,000 INFO  [d] RMAppImpl: application_10_0001 State change from RUNNING to FINAL_SAVING on event = X\n";
        let runs = parse_timelines(log);
        assert_eq!(runs.len(), 2, "the recording cluster and the unfinished app are left out; a repeat is a new run");
        assert_eq!((runs[1].run.as_str(), runs[1].apps[0].response_s), ("swim-circumflex-flex", 8.0));
        assert_eq!(runs[0].run, "swim-circumflex-flex");
        let latest = latest_per_run(parse_timelines(log));
        assert_eq!(latest.len(), 1, "the re-run supersedes the first run of its name");
        assert_eq!(latest[0].apps[0].app, "10_0001");
        let a = &runs[0].apps[0];
        assert_eq!(a.app, "9_0001");
        let got = [a.am_wait_s, a.am_start_s, a.first_task_wait_s, a.rest_s, a.response_s];
        for (g, want) in got.iter().zip([0.25, 6.0, 2.0, 9.75, 18.0]) {
            assert!((g - want).abs() < 1e-9, "{got:?}");
        }
        assert_eq!(a.task_containers, 2);
        let md = timelines_markdown(&runs);
        assert!(md.contains("| 9_0001 | 0.2 | 6.0 | 2.0 | 9.8 | 18.0 | 2 |"), "{md}");
        assert!(md.contains("| mean | 0.2 | 6.0 | 2.0 | 9.8 | 18.0 | |"), "{md}");
        // Tasks 10.25..16.25 and 11.0..17.0 (12 s), the AM 2.3..20.0 (17.7 s), over 17.7 s.
        let c = &runs[0].containers;
        assert!(
            (c.task_s - 12.0).abs() < 1e-9 && (c.am_s - 17.7).abs() < 1e-9 && (c.span_s - 17.7).abs() < 1e-9,
            "{c:?}"
        );
        assert!(md.contains("over 18 s (first allocation to last release): 0.7 tasks, 1.0 AMs."), "{md}");
    }
}
