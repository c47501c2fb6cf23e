//! Hostile input at every boundary (issue 11): job configurations, job specs, flow adjacency,
//! the FFI operations, and the SWIM and Rumen trace readers. Each case must be refused with an
//! error that names the field (or key or argument), shows the value and says what is allowed;
//! none may panic, overflow or allocate without bound.

use std::collections::BTreeMap;

use circumflex::ffi::{close_handle, create_handle, ops, with_handle, ErrorKind};
use circumflex_core::config::job_spec_from_conf;
use circumflex_core::model::{FlowMembership, JobSpec, SlaStep, MAX_TIME};
use circumflex_core::{EngineConfig, Error};
use circumflex_sim::trace::{rumen, swim};

fn conf(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

/// Asserts `err` is an invalid-job error whose message holds every piece of `expect`.
fn assert_job_error(err: Error, expect: &[&str]) {
    assert!(matches!(err, Error::InvalidJob { .. }), "{err:?}");
    let msg = err.to_string();
    for piece in expect {
        assert!(msg.contains(piece), "'{piece}' missing from: {msg}");
    }
}

fn flow_conf(adjacency: &[(&str, &str)]) -> BTreeMap<String, String> {
    let mut c = conf(&[("mapreduce.workflow.id", "f1"), ("mapreduce.workflow.node.name", "a")]);
    for (from, to) in adjacency {
        c.insert(format!("mapreduce.workflow.adjacency.{from}"), to.to_string());
    }
    c
}

#[test]
fn workflow_cycles_self_loops_and_bad_names_are_refused() {
    // A three-node cycle: the error names an adjacency key, the successors and the cycle.
    let err = job_spec_from_conf(&flow_conf(&[("a", "b"), ("b", "c"), ("c", "a")]), 0).unwrap_err();
    assert_job_error(err, &["mapreduce.workflow.adjacency.a", "acyclic", "a -> b -> c -> a"]);
    // A cycle below an acyclic prefix is still found.
    let err = job_spec_from_conf(&flow_conf(&[("a", "b,x"), ("x", "y"), ("y", "z"), ("z", "x")]), 0).unwrap_err();
    assert_job_error(err, &["x -> y -> z -> x"]);
    let err = job_spec_from_conf(&flow_conf(&[("a", "b,a")]), 0).unwrap_err();
    assert_job_error(err, &["mapreduce.workflow.adjacency.a", "b,a", "other than 'a' itself"]);
    let err = job_spec_from_conf(&flow_conf(&[("a\u{7}", "b")]), 0).unwrap_err();
    assert_job_error(err, &["control characters"]);
    // A diamond and an unknown successor (a sink not yet declared) are fine.
    let ok = job_spec_from_conf(&flow_conf(&[("a", "b,c"), ("b", "d"), ("c", "d,later")]), 0).unwrap();
    assert_eq!(ok.flow.unwrap().adjacency.len(), 3);
}

#[test]
fn flow_from_json_rejects_duplicate_sources_and_huge_graphs() {
    let mut spec = JobSpec::new(0, 1, 0);
    spec.flow = Some(FlowMembership {
        flow_id: "f".into(),
        node_name: "a".into(),
        adjacency: vec![("a".into(), vec!["b".into()]), ("a".into(), vec!["c".into()])],
    });
    assert_job_error(spec.validate().unwrap_err(), &["mapreduce.workflow.adjacency.a", "one adjacency entry"]);
    // A long chain (deep, but acyclic) validates without recursion; closing it makes a cycle.
    let n = 9_000;
    let mut chain: Vec<(String, Vec<String>)> =
        (0..n).map(|i| (format!("n{i}"), vec![format!("n{}", i + 1)])).collect();
    spec.flow = Some(FlowMembership { flow_id: "f".into(), node_name: "n0".into(), adjacency: chain.clone() });
    spec.validate().unwrap();
    chain.push((format!("n{n}"), vec!["n0".into()]));
    spec.flow = Some(FlowMembership { flow_id: "f".into(), node_name: "n0".into(), adjacency: chain });
    assert_job_error(spec.validate().unwrap_err(), &["acyclic"]);
    let wide: Vec<(String, Vec<String>)> = (0..20_000).map(|i| (format!("s{i}"), vec![format!("t{i}")])).collect();
    spec.flow = Some(FlowMembership { flow_id: "f".into(), node_name: "s0".into(), adjacency: wide });
    assert_job_error(spec.validate().unwrap_err(), &["at most 10000 nodes"]);
    spec.flow = Some(FlowMembership { flow_id: " ".into(), node_name: "a".into(), adjacency: vec![] });
    assert_job_error(spec.validate().unwrap_err(), &["mapreduce.workflow.id", "non-empty"]);
}

#[test]
fn absurd_numbers_in_job_specs_are_refused() {
    let base = || JobSpec::new(1_000, 2, 1);
    let mut s = base();
    s.weight = f64::INFINITY;
    assert_job_error(s.validate().unwrap_err(), &["weight", "inf", "<= 1e12"]);
    s.weight = 1e300;
    assert_job_error(s.validate().unwrap_err(), &["weight", "1e12"]);
    let mut s = base();
    s.submit_ms = i64::MAX;
    assert_job_error(s.validate().unwrap_err(), &["submit_ms", "9223372036854775807", "2^50"]);
    let mut s = base();
    s.deadline_ms = Some(MAX_TIME + 1);
    assert_job_error(s.validate().unwrap_err(), &["deadline_ms", "2^50"]);
    let mut s = base();
    s.goal_ms = Some(-5);
    assert_job_error(s.validate().unwrap_err(), &["goal_ms", "-5"]);
    let mut s = base();
    s.sla = vec![SlaStep { deadline_ms: 500, penalty: 1.0 }];
    assert_job_error(s.validate().unwrap_err(), &["sla.deadline_ms", "500", "after submission"]);
    s.sla = vec![SlaStep { deadline_ms: 5_000, penalty: f64::NAN }];
    assert_job_error(s.validate().unwrap_err(), &["sla.penalty", "NaN"]);
    s.sla = (0..1_001).map(|i| SlaStep { deadline_ms: 2_000 + i, penalty: i as f64 }).collect();
    assert_job_error(s.validate().unwrap_err(), &["sla", "1001 steps", "at most 1000"]);
    let mut s = base();
    s.maps.tasks = u32::MAX;
    assert_job_error(s.validate().unwrap_err(), &["maps.tasks", "4294967295", "10000000"]);
    let mut s = base();
    s.reduces.task_ms = Some(-1);
    assert_job_error(s.validate().unwrap_err(), &["reduces.task_ms", "-1"]);
    let mut s = base();
    s.priority = i32::MIN;
    assert_job_error(s.validate().unwrap_err(), &["priority", "-2147483648"]);
    let mut s = base();
    s.resources.cpu = f64::NEG_INFINITY;
    assert_job_error(s.validate().unwrap_err(), &["resources.cpu", "-inf"]);
    let mut s = base();
    s.min_slots = u32::MAX;
    assert_job_error(s.validate().unwrap_err(), &["min_slots", "4294967295"]);
    let mut s = base();
    s.name = "x".repeat(5_000);
    assert_job_error(s.validate().unwrap_err(), &["name", "5000 bytes", "at most 4096"]);
    let mut s = base();
    s.user = "eve\nINFO forged log line".into();
    assert_job_error(s.validate().unwrap_err(), &["user", "control characters"]);
    let mut s = base();
    s.dataset = Some(String::new());
    assert_job_error(s.validate().unwrap_err(), &["dataset", "non-empty"]);
}

#[test]
fn absurd_values_in_job_configurations_name_the_key() {
    let cases: &[(&str, &str, &str)] = &[
        ("mapreduce.job.maps", "99999999999", "integer in [0, 10000000]"),
        ("mapreduce.job.maps", "1e9", "integer"),
        ("mapreduce.job.priority", "-2147483648", "-1000000 ..= 1000000"),
        ("circumflex.job.weight", "inf", "> 0"),
        ("circumflex.job.weight", "1e300", "> 0"),
        ("circumflex.job.deadline.ms", "9223372036854775807", "integer"),
        ("circumflex.job.sla", "1000:NaN", "finite"),
        ("circumflex.job.min.slots", "4294967296", "integer"),
        ("mapreduce.map.memory.mb", "-1", "integer"),
    ];
    for (key, value, allowed) in cases {
        let err = job_spec_from_conf(&conf(&[(key, value)]), 0).unwrap_err();
        assert_job_error(err, &[key, value, allowed]);
    }
    let err = job_spec_from_conf(&conf(&[("mapreduce.job.name", "a\u{0}b")]), 0).unwrap_err();
    assert_job_error(err, &["name", "control characters"]);
    assert_job_error(job_spec_from_conf(&BTreeMap::new(), -1).unwrap_err(), &["submit time", "-1"]);
}

#[test]
fn ffi_operations_refuse_absurd_arguments() {
    let h = create_handle(&conf(&[("circumflex.policy", "fair")])).unwrap() as i64;
    let argument_error = |r: Result<(), circumflex::ffi::FfiError>, expect: &[&str]| {
        let err = r.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Argument, "{err}");
        let msg = err.to_string();
        for piece in expect {
            assert!(msg.contains(piece), "'{piece}' missing from: {msg}");
        }
    };
    with_handle(h, |e| {
        argument_error(ops::add_node(e, "n", "/r", i32::MAX, 0).map(drop), &["mapSlots = 2147483647", "1048576"]);
        argument_error(ops::add_node(e, "n", "/r", -1, 0).map(drop), &["mapSlots = -1"]);
        argument_error(ops::add_node(e, "n\r\nforged", "/r", 1, 0).map(drop), &["name", "control characters"]);
        let node = ops::add_node(e, "n", "/r", 4, 0)?;
        let job = ops::submit_job(e, r#"{"mapreduce.job.maps":"2","mapreduce.job.reduces":"0"}"#, 10)?;
        argument_error(ops::tick(e, -1).map(drop), &["now = -1", "0 ..= 2^50"]);
        argument_error(ops::tick(e, i64::MAX).map(drop), &["now = 9223372036854775807"]);
        argument_error(ops::submit_job(e, "{}", i64::MIN).map(drop), &["now = -9223372036854775808"]);
        argument_error(ops::set_pending(e, job, 0, i32::MAX), &["pending = 2147483647", "10000000"]);
        argument_error(ops::task_started(e, job, 0, node, 2, -5), &["now = -5"]);
        ops::task_started(e, job, 0, node, 2, 20)?;
        argument_error(ops::task_finished(e, job, 0, node, -30, true, 50), &["durationMs = -30"]);
        argument_error(ops::task_finished(e, job, 0, node, i64::MAX, true, 50), &["durationMs"]);
        let mut out = [0i32; 16];
        argument_error(ops::node_update(e, node, i32::MAX, 0, 60, &mut out).map(drop), &["freeMap"]);
        argument_error(ops::remove_node(e, node, -1), &["now = -1"]);
        let err = ops::submit_job(
            e,
            r#"{"mapreduce.workflow.id":"f","mapreduce.workflow.node.name":"a",
            "mapreduce.workflow.adjacency.a":"b","mapreduce.workflow.adjacency.b":"a"}"#,
            100,
        )
        .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidJob);
        assert!(err.to_string().contains("acyclic"), "{err}");
        // The engine is still healthy after every refusal.
        ops::task_finished(e, job, 0, node, 30, true, 50)?;
        assert!(ops::tick(e, 10_000)?, "an epoch later it plans again");
        Ok(())
    })
    .unwrap();
    close_handle(h).unwrap();
}

#[test]
fn cluster_totals_saturate_instead_of_wrapping() {
    let mut engine = circumflex_policies::new_engine(EngineConfig::default()).unwrap();
    for i in 0..3 {
        engine.add_node(&format!("n{i}"), "/r", u32::MAX / 2, 0);
    }
    assert_eq!(engine.cluster().map_slots, u32::MAX);
}

#[test]
fn swim_lines_with_absurd_bytes_are_refused_before_allocating() {
    let m = swim::SwimModel::default();
    // u64::MAX input bytes would be 2^38 maps: refused by count, never materialized.
    let text = format!("job0\t1\t1\t{}\t0\t5\n", u64::MAX);
    let err = swim::parse(&text, "t.tsv", &m).unwrap_err().to_string();
    assert!(err.starts_with("t.tsv:1: field 'map_input_bytes'") && err.contains("at most 10000000"), "{err}");
    // A map-only job writing 2^63 bytes needs as many maps: the output column is named.
    let text = format!("job0\t1\t1\t1\t0\t{}\n", u64::MAX / 2);
    let err = swim::parse(&text, "t.tsv", &m).unwrap_err().to_string();
    assert!(err.contains("reduce_output_bytes") && err.contains("maps"), "{err}");
    let err = swim::parse("job0\t1\t1\t18446744073709551616\t0\t5\n", "t.tsv", &m).unwrap_err().to_string();
    assert!(err.contains("map_input_bytes") && err.contains("non-negative integer"), "{err}");
}

#[test]
fn rumen_times_that_would_overflow_are_refused() {
    let task =
        |s: i64, f: i64| format!(r#"{{"jobID":"j","submitTime":5,"mapTasks":[{{"startTime":{s},"finishTime":{f}}}]}}"#);
    // finish - start would overflow an i64.
    let err = rumen::parse(&task(-9_000_000_000_000_000_000, i64::MAX), "r.json").unwrap_err().to_string();
    assert!(err.contains("startTime") && err.contains("-9000000000000000000") && err.contains(">= 0"), "{err}");
    let attempt = r#"{"jobID":"j","submitTime":5,"mapTasks":[{"attempts":[{"result":"SUCCESS","startTime":3,"finishTime":-7}]}]}"#;
    let err = rumen::parse(attempt, "r.json").unwrap_err().to_string();
    assert!(err.contains("finishTime") && err.contains("attempts[0]") && err.contains("-7"), "{err}");
    // A huge but valid duration is clamped to one year, as documented.
    let jobs = rumen::parse(&task(0, i64::MAX), "r.json").unwrap();
    assert_eq!(jobs[0].map_ms, vec![circumflex_core::model::MAX_TASK_MS]);
    // Submit times spanning more than a year are corrupt.
    let two =
        format!("{}\n{}", task(0, 10), task(0, 10).replace("\"submitTime\":5", "\"submitTime\":9000000000000000000"));
    let err = rumen::parse(&two, "r.json").unwrap_err().to_string();
    assert!(err.starts_with("r.json:2: field 'submitTime'") && err.contains("at most one year"), "{err}");
}
