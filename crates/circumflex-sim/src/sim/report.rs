//! Reports: per-job CSV, per-run JSON, the side-by-side terminal table, summary CSV, and SVG plots
//! (a CDF of response times per policy and bars of the mean and max metrics).
//!
//! Plots are SVG written by hand: two chart kinds do not justify a plotting library and its font and
//! image dependencies, and plain SVG text diffs well in git and opens in any browser.
//! Everything here is a pure function of results, so outputs are as deterministic as the runs.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use crate::sim::metrics::{JobRecord, Summary};
use crate::sim::simulator::SimResult;

/// One run's summary plus how long the simulator took (the only nondeterministic figures).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunRow {
    /// The run's figures.
    pub summary: Summary,
    /// Wall-clock seconds of the simulation.
    pub wall_s: f64,
    /// Simulator events per wall-clock second.
    pub events_per_s: f64,
}

/// Quotes a CSV field when it needs it.
fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

fn opt<T: ToString>(v: Option<T>) -> String {
    v.map(|x| x.to_string()).unwrap_or_default()
}

/// One CSV line per job (header first). Times in ms; empty cells for missing values.
pub fn jobs_csv(result: &SimResult) -> String {
    let mut out = String::from(
        "index,external_id,arrival_ms,start_ms,finish_ms,response_ms,isolated_ms,stretch,deadline_ms,\
         tardiness_ms,weight,maps,reduces,rejected\n",
    );
    for j in &result.jobs {
        let _ = writeln!(
            out,
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
            j.index,
            csv_field(&j.external_id),
            j.arrival_ms,
            opt(j.start_ms),
            opt(j.finish_ms),
            opt(j.response_ms),
            j.isolated_ms,
            opt(j.stretch.map(|s| format!("{s:.6}"))),
            opt(j.deadline_ms),
            opt(j.tardiness_ms),
            j.weight,
            j.maps,
            j.reduces,
            j.rejected
        );
    }
    out
}

/// One CSV line per task run (recorded runs only): job index, phase, node, start and end (ms), locality,
/// and whether the run was killed by a preemption.
pub fn tasks_csv(result: &SimResult) -> String {
    let mut out = String::from("job,phase,node,start_ms,end_ms,locality,preempted\n");
    for t in &result.tasks {
        let _ = writeln!(
            out,
            "{},{:?},{},{},{},{:?},{}",
            t.job, t.phase, t.node, t.start_ms, t.end_ms, t.locality, t.preempted
        );
    }
    out
}

/// One CSV line per run (header first).
pub fn summaries_csv(rows: &[RunRow]) -> String {
    let mut out = String::from(
        "policy,jobs,finished,rejected,mean_response_s,max_response_s,weighted_mean_response_s,mean_stretch,\
         max_stretch,total_tardiness_s,mean_tardiness_s,with_deadline,deadlines_met,utilization,makespan_s,tasks,\
         node_local,rack_local,off_rack,events,heartbeats,plans,wall_s,events_per_s\n",
    );
    for r in rows {
        let s = &r.summary;
        let _ = writeln!(
            out,
            "{},{},{},{},{:.3},{:.3},{:.3},{:.4},{:.4},{:.3},{:.3},{},{},{:.4},{:.3},{},{},{},{},{},{},{},{:.3},{:.0}",
            csv_field(&s.policy),
            s.jobs,
            s.finished,
            s.rejected,
            s.mean_response_s,
            s.max_response_s,
            s.weighted_mean_response_s,
            s.mean_stretch,
            s.max_stretch,
            s.total_tardiness_s,
            s.mean_tardiness_s,
            s.with_deadline,
            s.deadlines_met,
            s.utilization,
            s.makespan_s,
            s.tasks,
            s.locality.node,
            s.locality.rack,
            s.locality.any,
            s.events,
            s.heartbeats,
            s.plans,
            r.wall_s,
            r.events_per_s
        );
    }
    out
}

/// Formats a value with a ratio to the baseline's, e.g. `123.4 (0.52x)`.
fn with_ratio(value: f64, base: Option<f64>, decimals: usize) -> String {
    match base {
        Some(b) if b > 0.0 => format!("{value:.decimals$} ({:.2}x)", value / b),
        _ => format!("{value:.decimals$}"),
    }
}

/// The side-by-side table: one row per run; the main metrics carry their ratio to the `baseline` row.
pub fn table(rows: &[RunRow], baseline: Option<usize>) -> String {
    let base = baseline.and_then(|b| rows.get(b)).map(|r| &r.summary);
    let headers = [
        "policy",
        "mean resp s",
        "max resp s",
        "mean stretch",
        "max stretch",
        "tardiness s",
        "met",
        "rejected",
        "util",
        "makespan s",
        "node-local",
        "events",
        "wall s",
        "events/s",
    ];
    let mut cells: Vec<Vec<String>> = Vec::with_capacity(rows.len());
    for r in rows {
        let s = &r.summary;
        cells.push(vec![
            s.policy.clone(),
            with_ratio(s.mean_response_s, base.map(|b| b.mean_response_s), 1),
            with_ratio(s.max_response_s, base.map(|b| b.max_response_s), 1),
            with_ratio(s.mean_stretch, base.map(|b| b.mean_stretch), 2),
            with_ratio(s.max_stretch, base.map(|b| b.max_stretch), 1),
            if s.with_deadline > 0 { format!("{:.1}", s.total_tardiness_s) } else { "-".into() },
            if s.with_deadline > 0 { format!("{}/{}", s.deadlines_met, s.with_deadline) } else { "-".into() },
            s.rejected.to_string(),
            format!("{:.1}%", 100.0 * s.utilization),
            format!("{:.0}", s.makespan_s),
            format!("{:.1}%", 100.0 * s.locality.node_fraction()),
            s.events.to_string(),
            format!("{:.2}", r.wall_s),
            format!("{:.2e}", r.events_per_s),
        ]);
    }
    let widths: Vec<usize> = (0..headers.len())
        .map(|c| cells.iter().map(|row| row[c].chars().count()).chain([headers[c].len()]).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    let line = |out: &mut String, row: &[String]| {
        for (c, cell) in row.iter().enumerate() {
            if c == 0 {
                let _ = write!(out, "{cell:<w$}", w = widths[c]);
            } else {
                let _ = write!(out, "  {cell:>w$}", w = widths[c]);
            }
        }
        out.push('\n');
    };
    line(&mut out, &headers.iter().map(|h| h.to_string()).collect::<Vec<_>>());
    line(&mut out, &widths.iter().map(|w| "-".repeat(*w)).collect::<Vec<_>>());
    for row in &cells {
        line(&mut out, row);
    }
    if let Some(b) = base {
        let _ = writeln!(out, "(ratios are to {})", b.policy);
    }
    out
}

/// Escapes text for SVG.
fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

const COLOURS: [&str; 8] = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf"];

/// CDF of response times (log-scale seconds), one line per run.
pub fn response_cdf_svg(title: &str, runs: &[(&str, &[JobRecord])]) -> String {
    let (w, h, left, right, top, bottom) = (760.0, 460.0, 70.0, 190.0, 40.0, 50.0);
    let pw = w - left - right;
    let ph = h - top - bottom;
    let series: Vec<Vec<f64>> = runs
        .iter()
        .map(|(_, jobs)| {
            let mut v: Vec<f64> =
                jobs.iter().filter_map(|j| j.response_ms).map(|r| (r.max(1) as f64) / 1000.0).collect();
            v.sort_by(f64::total_cmp);
            v
        })
        .collect();
    let lo = series.iter().filter_map(|s| s.first()).copied().fold(f64::INFINITY, f64::min).max(1e-3);
    let hi = series.iter().filter_map(|s| s.last()).copied().fold(0.0, f64::max).max(lo * 10.0);
    let (l0, l1) = (lo.log10().floor(), hi.log10().ceil());
    let x = |v: f64| left + (v.log10().max(l0) - l0) / (l1 - l0) * pw;
    let y = |p: f64| top + (1.0 - p) * ph;
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(s, r#"<rect width="{w}" height="{h}" fill="white"/>"#);
    let _ = writeln!(
        s,
        r#"<text x="{}" y="22" font-size="15" text-anchor="middle">{}</text>"#,
        left + pw / 2.0,
        esc(title)
    );
    for d in (l0 as i32)..=(l1 as i32) {
        let xv = x(10f64.powi(d));
        let _ = writeln!(s, r##"<line x1="{xv:.1}" y1="{top}" x2="{xv:.1}" y2="{}" stroke="#ddd"/>"##, top + ph);
        let label = if d >= 0 { format!("{}", 10f64.powi(d)) } else { format!("1e{d}") };
        let _ = writeln!(s, r#"<text x="{xv:.1}" y="{}" text-anchor="middle">{label}</text>"#, top + ph + 16.0);
    }
    for k in 0..=4 {
        let p = k as f64 / 4.0;
        let _ =
            writeln!(s, r##"<line x1="{left}" y1="{:.1}" x2="{}" y2="{:.1}" stroke="#ddd"/>"##, y(p), left + pw, y(p));
        let _ = writeln!(s, r#"<text x="{}" y="{:.1}" text-anchor="end">{p:.2}</text>"#, left - 6.0, y(p) + 4.0);
    }
    let _ = writeln!(s, r##"<rect x="{left}" y="{top}" width="{pw}" height="{ph}" fill="none" stroke="#333"/>"##);
    let _ = writeln!(
        s,
        r#"<text x="{}" y="{}" text-anchor="middle">response time (s, log scale)</text>"#,
        left + pw / 2.0,
        h - 10.0
    );
    let _ = writeln!(
        s,
        r#"<text transform="translate(18,{}) rotate(-90)" text-anchor="middle">fraction of jobs</text>"#,
        top + ph / 2.0
    );
    for (i, ((label, _), v)) in runs.iter().zip(&series).enumerate() {
        let colour = COLOURS[i % COLOURS.len()];
        let n = v.len().max(1) as f64;
        // Step function, thinned to at most ~2000 points so big workloads keep small files.
        let stride = (v.len() / 2000).max(1);
        let mut pts = String::new();
        let mut prev_x = x(lo);
        let _ = write!(pts, "{prev_x:.1},{:.1} ", y(0.0));
        for (k, &r) in v.iter().enumerate() {
            if k % stride != 0 && k + 1 != v.len() {
                continue;
            }
            let xv = x(r);
            let _ = write!(pts, "{xv:.1},{:.1} {xv:.1},{:.1} ", y(k as f64 / n), y((k + 1) as f64 / n));
            prev_x = xv;
        }
        let _ = write!(pts, "{:.1},{:.1}", prev_x.max(left + pw), y(1.0));
        let _ = writeln!(s, r#"<polyline fill="none" stroke="{colour}" stroke-width="1.8" points="{pts}"/>"#);
        let ly = top + 14.0 + 18.0 * i as f64;
        let lx = left + pw + 14.0;
        let _ = writeln!(
            s,
            r#"<line x1="{lx}" y1="{ly}" x2="{}" y2="{ly}" stroke="{colour}" stroke-width="3"/>"#,
            lx + 22.0
        );
        let _ = writeln!(s, r#"<text x="{}" y="{}">{}</text>"#, lx + 28.0, ly + 4.0, esc(label));
    }
    s.push_str("</svg>\n");
    s
}

/// A bar panel: its title and the figure it shows.
type Panel = (&'static str, fn(&Summary) -> f64);

/// Four bar panels (mean and max response time, mean and max stretch), one bar per run.
pub fn metric_bars_svg(title: &str, rows: &[RunRow]) -> String {
    let panels: [Panel; 4] = [
        ("mean response (s)", |s| s.mean_response_s),
        ("max response (s)", |s| s.max_response_s),
        ("mean stretch", |s| s.mean_stretch),
        ("max stretch", |s| s.max_stretch),
    ];
    let (pw, ph, gap, top, bottom) = (220.0, 260.0, 40.0, 50.0, 90.0);
    let w = 30.0 + panels.len() as f64 * (pw + gap) + 60.0; // room for the last slanted label
    let h = top + ph + bottom;
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(s, r#"<rect width="{w}" height="{h}" fill="white"/>"#);
    let _ = writeln!(s, r#"<text x="{}" y="22" font-size="15" text-anchor="middle">{}</text>"#, w / 2.0, esc(title));
    for (p, (name, get)) in panels.iter().enumerate() {
        let x0 = 30.0 + p as f64 * (pw + gap);
        let max = rows.iter().map(|r| get(&r.summary)).fold(0.0, f64::max).max(f64::MIN_POSITIVE);
        let _ =
            writeln!(s, r#"<text x="{}" y="{}" text-anchor="middle">{}</text>"#, x0 + pw / 2.0, top - 8.0, esc(name));
        let _ =
            writeln!(s, r##"<line x1="{x0}" y1="{}" x2="{}" y2="{}" stroke="#333"/>"##, top + ph, x0 + pw, top + ph);
        let bw = pw / rows.len().max(1) as f64;
        for (i, r) in rows.iter().enumerate() {
            let v = get(&r.summary);
            let bh = v / max * (ph - 20.0);
            let bx = x0 + i as f64 * bw + bw * 0.15;
            let by = top + ph - bh;
            let colour = COLOURS[i % COLOURS.len()];
            let _ = writeln!(
                s,
                r#"<rect x="{bx:.1}" y="{by:.1}" width="{:.1}" height="{bh:.1}" fill="{colour}"/>"#,
                bw * 0.7
            );
            let value = if v >= 100.0 { format!("{v:.0}") } else { format!("{v:.2}") };
            let _ = writeln!(
                s,
                r#"<text x="{:.1}" y="{:.1}" text-anchor="middle" font-size="11">{value}</text>"#,
                bx + bw * 0.35,
                by - 4.0
            );
            let _ = writeln!(
                s,
                r#"<text transform="translate({:.1},{:.1}) rotate(35)" font-size="11">{}</text>"#,
                bx + bw * 0.2,
                top + ph + 14.0,
                esc(&r.summary.policy)
            );
        }
    }
    s.push_str("</svg>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::metrics::Summary;

    fn row(policy: &str, mean: f64) -> RunRow {
        let mut summary = Summary::from_jobs(policy, &[], 0, 1);
        summary.mean_response_s = mean;
        summary.max_response_s = 2.0 * mean;
        summary.mean_stretch = 1.5;
        summary.max_stretch = 3.0;
        RunRow { summary, wall_s: 0.5, events_per_s: 1e6 }
    }

    #[test]
    fn table_shows_ratios_to_the_baseline() {
        let t = table(&[row("fair", 100.0), row("fifo", 50.0)], Some(0));
        assert!(t.contains("50.0 (0.50x)"), "{t}");
        assert!(t.contains("100.0 (1.00x)"), "{t}");
        assert!(t.contains("ratios are to fair"), "{t}");
    }

    #[test]
    fn cdf_axis_starts_at_the_decade_below_the_fastest_job() {
        let rec = |ms: i64| JobRecord {
            index: 0,
            external_id: String::new(),
            arrival_ms: 0,
            start_ms: Some(0),
            finish_ms: Some(ms),
            response_ms: Some(ms),
            isolated_ms: ms,
            stretch: Some(1.0),
            deadline_ms: None,
            tardiness_ms: None,
            weight: 1.0,
            maps: 1,
            reduces: 0,
            rejected: false,
        };
        let jobs = [rec(4_000), rec(40_000)];
        let svg = response_cdf_svg("t", &[("fair", &jobs)]);
        // Decades 1 s .. 100 s over the 500 px plot starting at x = 70: "1" at 70, "10" at 320.
        assert!(svg.contains(r#"<text x="70.0" y="426" text-anchor="middle">1</text>"#), "{svg}");
        assert!(svg.contains(r#"<text x="320.0" y="426" text-anchor="middle">10</text>"#), "{svg}");
        // The first job's step is at log10(4) of the way through the first decade.
        assert!(svg.contains("220.5,410.0 220.5,"), "{svg}");
    }

    #[test]
    fn csv_quotes_fields_and_svg_is_well_formed() {
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("plain"), "plain");
        let svg = metric_bars_svg("t <1>", &[row("fair", 10.0), row("fifo", 5.0)]);
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>") && svg.contains("t &lt;1&gt;"));
        assert_eq!(svg.matches("<rect").count(), 1 + 4 * 2);
        let csv = summaries_csv(&[row("fair", 10.0)]);
        assert_eq!(csv.lines().count(), 2);
        assert_eq!(csv.lines().next().unwrap().split(',').count(), csv.lines().nth(1).unwrap().split(',').count());
    }
}
