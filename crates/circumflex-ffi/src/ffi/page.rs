//! The scheduler page: the status document rendered as one HTML fragment.
//!
//! **Decision: the HTML is rendered here, once, for both daemons.** The YARN page class and the
//! MRv1 `/scheduler` servlet embed the fragment `nativeStatusHtml` returns. Rendering in Java would
//! need a JSON parser in the shims (Hadoop 1.2.1 and 3.4 ship different, incompatible Jackson
//! lines) and two copies of the same table code; here it is one function over the typed status,
//! unit-tested without a JVM. Every text that comes from outside (job names, ids, reasons, flow
//! and dataset names, parameters) is HTML-escaped.
//!
//! Layout (element ids are stable: the headless-browser test and operators' scripts use them):
//! `circumflex-summary` (policy, objective, epoch, counters, preemption), `circumflex-jobs` (one row
//! per job, active first, then the most recent [`FINISHED_SHOWN`] others), `circumflex-decisions`,
//! `circumflex-preemptions` (the last kills: victim, beneficiary, phase, node, lost work; newest
//! first), `circumflex-flows`, `circumflex-datasets`, `circumflex-scans` (the live shared scans: per
//! dataset, the cursor and the attached jobs in chain order, as the policy planned them). Times are
//! shown relative to the page's `now`.

use std::fmt::Write;

use super::Status;
use circumflex_core::model::{JobStatus, Phase, Time};

/// Finished and rejected jobs listed below the active ones (the newest ones).
pub const FINISHED_SHOWN: usize = 50;

/// Renders the status as an HTML fragment (no `<html>`/`<body>`; the host page wraps it).
pub(super) fn render(s: &Status<'_>) -> String {
    let mut out = String::with_capacity(4096 + 400 * s.jobs.len().min(200));
    summary(&mut out, s);
    jobs(&mut out, s);
    decisions(&mut out, s);
    preemptions(&mut out, s);
    am_waiting(&mut out, s);
    flows(&mut out, s);
    datasets(&mut out, s);
    scans(&mut out, s);
    out
}

fn summary(out: &mut String, s: &Status<'_>) {
    let alive = s.nodes.iter().filter(|n| n.alive).count();
    let params = s.params.iter().map(|(k, v)| format!("{}={}", escape(k), escape(v))).collect::<Vec<_>>().join(", ");
    let p = &s.preemption;
    let preemption = if p.config.enabled {
        format!(
            "on (delay {} ms, grace {} ms, at most {} of a pool at once); {} asked back, {} killed, {:.1} s of \
             work lost; {} in flight",
            p.config.delay_ms,
            p.config.grace_ms,
            p.config.max_fraction,
            s.stats.preemptions,
            s.stats.preempted_tasks,
            s.stats.preempted_lost_ms as f64 / 1000.0,
            p.in_flight
        )
    } else {
        "off".to_string()
    };
    let a = &s.am_admission;
    let am = if a.config.enabled {
        format!(
            "on (AMs hold at most {} of the pool, AMs of {} slot(s) unless the host says); {} running, {} of {} \
             slots held (limit {}); {} waiting",
            a.config.max_share,
            a.config.slots,
            a.gate.running,
            a.gate.held,
            a.gate.capacity,
            a.gate.limit,
            a.waiting.len()
        )
    } else {
        "off".to_string()
    };
    let rows: [(&str, String); 16] = [
        ("Policy", escape(s.policy)),
        ("Objective", escape(s.objective.unwrap_or("(policy default)"))),
        ("Epoch", format!("{} ms", s.epoch_ms)),
        ("Plan computed", relative(s.plan_computed_at_ms, s.now)),
        ("Assignment rule", escape(&format!("{:?}", s.rule))),
        ("Slot pools", escape(&format!("{:?}", s.pool_mode).to_lowercase())),
        ("Nodes", format!("{alive} alive of {}", s.nodes.len())),
        ("Slots", format!("{} map, {} reduce", s.cluster.map_slots, s.cluster.reduce_slots)),
        ("Plans", format!("{} (last {:.3} ms)", s.stats.plans, s.stats.last_plan_ns as f64 / 1e6)),
        ("Node updates", s.stats.node_updates.to_string()),
        ("Jobs admitted / rejected", format!("{} / {}", s.stats.admitted, s.stats.rejected)),
        ("Jobs finished", s.stats.finished.to_string()),
        ("Deadline misses", s.deadline_misses.to_string()),
        ("Preemption", preemption),
        ("AM admission", am),
        ("Parameters", if params.is_empty() { "(none)".to_string() } else { params }),
    ];
    out.push_str("<h2>Circumflex scheduler</h2>\n<table id=\"circumflex-summary\" class=\"info\">\n");
    for (name, value) in rows {
        let _ = writeln!(out, "<tr><th>{name}</th><td>{value}</td></tr>");
    }
    let _ = writeln!(out, "</table>\n<p class=\"version\">library {}</p>", escape(s.version));
}

fn jobs(out: &mut String, s: &Status<'_>) {
    out.push_str(
        "<h3>Jobs</h3>\n<table id=\"circumflex-jobs\" class=\"jobs\">\n<thead><tr><th>Job</th><th>Id</th>\
         <th>Name</th><th>Status</th><th>Target slots (map/reduce)</th><th>Actual slots (map/reduce)</th>\
         <th>Tasks done</th><th>Deadline</th><th>Predicted completion</th><th>Actual completion</th>\
         <th>Admission</th></tr></thead>\n<tbody>\n",
    );
    let active = s.jobs.iter().filter(|j| j.status == JobStatus::Active);
    let others: Vec<_> = s.jobs.iter().filter(|j| j.status != JobStatus::Active).collect();
    let recent = others.iter().rev().take(FINISHED_SHOWN).rev().copied();
    for j in active.chain(recent) {
        let done: u32 = j.phases.iter().map(|p| p.finished).sum();
        let total: u32 = j.phases.iter().map(|p| p.total).sum();
        let deadline = j.deadline_ms.map_or_else(|| "-".to_string(), |d| relative(d, s.now));
        let predicted = j.predicted_completion_ms.map_or_else(|| "-".to_string(), |t| relative(t, s.now));
        let actual = j.finished_ms.map_or_else(
            || "-".to_string(),
            |t| format!("{} ({:.1} s after submit)", relative(t, s.now), (t - j.submit_ms) as f64 / 1000.0),
        );
        let admission = match &j.admission {
            Some(a) => match &a.reason {
                Some(reason) => format!("{}: {}", a.decision, escape(reason)),
                None => a.decision.to_string(),
            },
            None => "-".to_string(),
        };
        let _ = writeln!(
            out,
            "<tr class=\"job {status}\"><td>{id}</td><td>{ext}</td><td>{name}</td><td>{status}</td>\
             <td>{t0} / {t1}</td><td>{r0} / {r1}</td><td>{done} of {total}</td><td>{deadline}</td>\
             <td>{predicted}</td><td>{actual}</td><td>{admission}</td></tr>",
            status = status_name(j.status),
            id = j.id,
            ext = escape(j.external_id),
            name = escape(j.name),
            t0 = j.target[0],
            t1 = j.target[1],
            r0 = j.running[0],
            r1 = j.running[1],
        );
    }
    out.push_str("</tbody>\n</table>\n");
}

fn decisions(out: &mut String, s: &Status<'_>) {
    out.push_str(
        "<h3>Admission decisions</h3>\n<table id=\"circumflex-decisions\">\n<thead><tr><th>Job</th>\
         <th>Id</th><th>Submitted</th><th>Decision</th><th>Reason</th></tr></thead>\n<tbody>\n",
    );
    for d in s.decisions.iter().rev() {
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            d.job,
            escape(&d.external_id),
            relative(d.at_ms, s.now),
            d.decision,
            escape(d.reason.as_deref().unwrap_or("-")),
        );
    }
    out.push_str("</tbody>\n</table>\n");
}

fn preemptions(out: &mut String, s: &Status<'_>) {
    out.push_str(
        "<h3>Preemptions</h3>\n<table id=\"circumflex-preemptions\">\n<thead><tr><th>Killed</th><th>Victim job</th>\
         <th>Beneficiary job</th><th>Phase</th><th>Node</th><th>Work lost</th></tr></thead>\n<tbody>\n",
    );
    for r in &s.preemption.recent {
        let node = s.nodes.iter().find(|n| n.id == r.node).map_or_else(|| r.node.0.to_string(), |n| escape(&n.name));
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{node}</td><td>{:.1} s</td></tr>",
            relative(r.at_ms, s.now),
            r.victim.0,
            r.beneficiary.map_or_else(|| "- (expired)".to_string(), |b| b.0.to_string()),
            match r.phase {
                Phase::Map => "map",
                Phase::Reduce => "reduce",
            },
            r.lost_ms as f64 / 1000.0,
        );
    }
    out.push_str("</tbody>\n</table>\n");
}

fn am_waiting(out: &mut String, s: &Status<'_>) {
    use circumflex_core::engine::AmWaitReason;
    out.push_str(
        "<h3>Jobs waiting for an AM</h3>\n<table id=\"circumflex-am-waiting\">\n<thead><tr><th>Job</th><th>Id</th>\
         <th>Plan rank</th><th>AM slots</th><th>Waiting since</th><th>Why</th></tr></thead>\n<tbody>\n",
    );
    for w in &s.am_admission.waiting {
        let why = match w.reason {
            AmWaitReason::Admitted => "admitted: waiting for a container",
            AmWaitReason::OverShare => "over the AM share",
            AmWaitReason::StartingFull => "too many AMs starting",
            AmWaitReason::RankedBehind => "ranked behind a waiting AM",
            AmWaitReason::NoCapacity => "no capacity: would take the last task slot",
        };
        let rank = if w.rank == u32::MAX { "-".to_string() } else { (w.rank + 1).to_string() };
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td>{}</td><td>{rank}</td><td>{}</td><td>{}</td><td>{why}</td></tr>",
            w.job.0,
            escape(external_id(s, w.job.0)),
            w.slots,
            relative(w.since_ms, s.now),
        );
    }
    out.push_str("</tbody>\n</table>\n");
}

fn flows(out: &mut String, s: &Status<'_>) {
    out.push_str(
        "<h3>Flows</h3>\n<table id=\"circumflex-flows\">\n<thead><tr><th>Flow</th><th>Members (node: job, \
         status)</th><th>Edges</th></tr></thead>\n<tbody>\n",
    );
    for f in &s.flows {
        let members = f
            .members
            .iter()
            .map(|m| format!("{}: {} {}", escape(m.node), m.job, status_name(m.status)))
            .collect::<Vec<_>>()
            .join(", ");
        let edges = f
            .adjacency
            .iter()
            .flat_map(|(from, tos)| tos.iter().map(move |to| format!("{} &rarr; {}", escape(from), escape(to))))
            .collect::<Vec<_>>()
            .join(", ");
        let _ = writeln!(out, "<tr><td>{}</td><td>{members}</td><td>{edges}</td></tr>", escape(f.flow_id));
    }
    out.push_str("</tbody>\n</table>\n");
}

fn datasets(out: &mut String, s: &Status<'_>) {
    out.push_str(
        "<h3>Datasets</h3>\n<table id=\"circumflex-datasets\">\n<thead><tr><th>Dataset</th><th>Jobs reading \
         it</th></tr></thead>\n<tbody>\n",
    );
    for d in &s.datasets {
        let jobs = d.jobs.iter().map(u32::to_string).collect::<Vec<_>>().join(", ");
        let _ = writeln!(out, "<tr><td>{}</td><td>{jobs}</td></tr>", escape(d.dataset));
    }
    out.push_str("</tbody>\n</table>\n");
}

/// The live shared scans. The engine sees no block order, so the cursor is the ready subjob
/// `(d,1)`: the oldest attached job, whose splits are being scanned for every job of the chain, and
/// how many of them are done.
fn scans(out: &mut String, s: &Status<'_>) {
    out.push_str(
        "<h3>Shared scans</h3>\n<table id=\"circumflex-scans\">\n<thead><tr><th>Dataset</th><th>Cursor (ready \
         subjob)</th><th>Attached jobs, chain order (job: splits left, subjob work, remaining r<sub>k</sub>, \
         jobs served, target)</th></tr></thead>\n<tbody>\n",
    );
    for scan in s.scans {
        let cursor = match scan.subjobs.first() {
            Some(ready) => format!(
                "job {} ({}): {} of {} splits scanned",
                ready.job.0,
                escape(external_id(s, ready.job.0)),
                ready.splits_done,
                ready.splits_done + ready.splits_left
            ),
            None => "-".to_string(),
        };
        let members = scan
            .subjobs
            .iter()
            .map(|sj| {
                let target = s.jobs.iter().find(|j| j.id == sj.job.0).map_or([0, 0], |j| j.target);
                format!(
                    "{} ({}): {} left, {:.1} s, r = {:.1} s, serves {}, target {} / {}",
                    sj.job.0,
                    escape(external_id(s, sj.job.0)),
                    sj.splits_left,
                    sj.work_ms / 1000.0,
                    sj.remaining_ms / 1000.0,
                    sj.concurrency,
                    target[0],
                    target[1]
                )
            })
            .collect::<Vec<_>>()
            .join("; ");
        let _ = writeln!(out, "<tr><td>{}</td><td>{cursor}</td><td>{members}</td></tr>", escape(&scan.dataset));
    }
    out.push_str("</tbody>\n</table>\n");
}

/// The Hadoop id of engine job `id` ("-" if the status does not list it).
fn external_id<'a>(s: &'a Status<'_>, id: u32) -> &'a str {
    s.jobs.iter().find(|j| j.id == id).map_or("-", |j| j.external_id)
}

fn status_name(status: JobStatus) -> &'static str {
    match status {
        JobStatus::Active => "active",
        JobStatus::Rejected => "rejected",
        JobStatus::Finished => "finished",
    }
}

/// `t` relative to `now`: "in 3.2 s", "4.0 s ago" or "now".
fn relative(t: Time, now: Time) -> String {
    let delta = t.saturating_sub(now) as f64 / 1000.0;
    if delta.abs() < 0.05 {
        "now".to_string()
    } else if delta > 0.0 {
        format!("in {delta:.1} s")
    } else {
        format!("{:.1} s ago", -delta)
    }
}

/// Escapes text for HTML element content and attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ffi::{close_handle, create_handle, ops, with_handle};
    use std::collections::BTreeMap;

    #[test]
    fn escaping_covers_markup_and_quotes() {
        assert_eq!(
            escape(r#"<script>"a" & 'b'</script>"#),
            "&lt;script&gt;&quot;a&quot; &amp; &#39;b&#39;&lt;/script&gt;"
        );
    }

    #[test]
    fn relative_times_read_naturally() {
        assert_eq!(relative(12_300, 10_000), "in 2.3 s");
        assert_eq!(relative(6_000, 10_000), "4.0 s ago");
        assert_eq!(relative(10_010, 10_000), "now");
    }

    #[test]
    fn the_page_shows_jobs_decisions_flows_and_datasets_with_names_escaped() {
        let cfg = BTreeMap::from([
            ("circumflex.policy".to_string(), "fifo".to_string()),
            ("circumflex.epoch.ms".to_string(), "1500".to_string()),
        ]);
        let h = create_handle(&cfg).unwrap() as i64;
        let html = with_handle(h, |handle| {
            let node = ops::add_node(handle, "h1", "/r1", 4, 0)?;
            let conf = r#"{"mapreduce.job.maps":"3","mapreduce.job.name":"<b>etl</b>","mapreduce.job.id":"job_1",
                "mapreduce.input.fileinputformat.inputdir":"hdfs://nn/logs","circumflex.job.deadline.ms":"60000",
                "mapreduce.workflow.id":"wf1","mapreduce.workflow.node.name":"a","mapreduce.workflow.adjacency.a":"b"}"#;
            let job = ops::submit_job(handle, conf, 0)?;
            ops::task_started(handle, job, 0, node, 2, 1)?;
            ops::tick(handle, 2)?;
            ops::status_html(handle, 1_000)
        })
        .unwrap();
        close_handle(h).unwrap();
        assert!(html.contains("<tr><th>Policy</th><td>fifo</td></tr>"), "{html}");
        assert!(html.contains("<tr><th>Epoch</th><td>1500 ms</td></tr>"), "{html}");
        assert!(html.contains("&lt;b&gt;etl&lt;/b&gt;") && !html.contains("<b>etl"), "job names are escaped: {html}");
        assert!(html.contains("<td>3 / 0</td><td>1 / 0</td>"), "target 3 maps, 1 running: {html}");
        assert!(html.contains("<td>in 59.0 s</td>"), "deadline relative to now: {html}");
        assert!(html.contains("a &rarr; b"), "flow edge: {html}");
        assert!(html.contains("<td>hdfs://nn/logs</td><td>0</td>"), "dataset: {html}");
        for id in ["summary", "jobs", "decisions", "flows", "datasets"] {
            assert!(html.contains(&format!("id=\"circumflex-{id}\"")), "{id}");
        }
    }
}
