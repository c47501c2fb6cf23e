//! End-to-end tests of the `circumflex` binary: `compare` writes every output (and the same bytes twice),
//! and bad input (unknown policy, corrupt trace) ends with a message naming what was wrong.

use std::fs;
use std::path::PathBuf;
use std::process::{Command, Output};

fn circumflex(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_circumflex")).args(args).output().expect("run circumflex")
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("circumflex-cli-{}-{name}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    dir
}

#[test]
fn compare_writes_outputs_deterministically() {
    let out = scratch("compare");
    let out_s = out.to_str().unwrap();
    let args = [
        "compare",
        "--policies",
        "fifo,fair",
        "--workload",
        "synthetic:jobs=25,maps=uniform:1:8,deadline=2",
        "--nodes",
        "4",
        "--seed",
        "7",
        "--out",
        out_s,
    ];
    let run = circumflex(&args);
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(stdout.contains("fifo") && stdout.contains("ratios are to fair"), "{stdout}");
    let command = fs::read_to_string(out.join("COMMAND")).unwrap();
    assert!(command.starts_with("circumflex compare --policies fifo,fair --workload"), "{command}");
    assert_eq!(fs::read_to_string(out.join("table.txt")).unwrap(), stdout);
    assert_eq!(fs::read_to_string(out.join("summary.csv")).unwrap().lines().count(), 3);
    assert_eq!(fs::read_to_string(out.join("jobs-fifo.csv")).unwrap().lines().count(), 26);
    for svg in ["response-cdf.svg", "metrics.svg"] {
        assert!(fs::read_to_string(out.join(svg)).unwrap().starts_with("<svg"));
    }
    let summary: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["runs"].as_array().unwrap().len(), 2);
    assert_eq!(summary["config"]["seed"], 7);
    assert_eq!(summary["runs"][0]["summary"]["with_deadline"], 25);

    let first = fs::read(out.join("result-fair.json")).unwrap();
    assert!(circumflex(&args).status.success());
    assert_eq!(fs::read(out.join("result-fair.json")).unwrap(), first, "same seed, same bytes");
    let _ = fs::remove_dir_all(&out);
}

#[test]
fn unknown_policy_lists_the_registry() {
    let run = circumflex(&["simulate", "--policy", "lottery", "--workload", "synthetic:jobs=2"]);
    assert_eq!(run.status.code(), Some(1));
    let err = String::from_utf8_lossy(&run.stderr);
    assert!(err.contains("circumflex.policy = 'lottery'") && err.contains("fifo, fair"), "{err}");
}

#[test]
fn corrupt_trace_names_file_line_and_field() {
    let dir = scratch("corrupt");
    fs::create_dir_all(&dir).unwrap();
    let trace = dir.join("bad.tsv");
    fs::write(&trace, "job0\t1\t1\t100\t0\t5\njob1\t3\t2\t100\tlots\t5\n").unwrap();
    let workload = format!("swim:{}", trace.display());
    let run = circumflex(&["simulate", "--policy", "fair", "--workload", &workload]);
    assert_eq!(run.status.code(), Some(1));
    let err = String::from_utf8_lossy(&run.stderr);
    assert!(err.contains("bad.tsv:2: field 'shuffle_bytes': 'lots'"), "{err}");
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn reproduce_ras_ch4_writes_its_report() {
    let out = scratch("ras-ch4");
    let o = circumflex(&["reproduce", "ras-ch4", "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    for f in ["report.md", "makespan.svg", "exp2.svg", "COMMAND"] {
        assert!(out.join(f).is_file(), "missing {f}");
    }
    let report = fs::read_to_string(out.join("report.md")).unwrap();
    assert!(report.contains("Fair, 8 map slots/node") && report.contains("goals met"), "{report}");
    let _ = fs::remove_dir_all(&out);
}

#[test]
fn reproduce_reverse_ch5_smoke_run() {
    let out = scratch("reverse-ch5");
    let args = ["reproduce", "reverse-ch5", "--seeds", "1", "--days", "1", "--nodes", "10", "--loads", "0.5"];
    let o = circumflex(&[&args[..], &["--factors", "4", "--workers", "1", "--out", out.to_str().unwrap()]].concat());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    for f in ["report.md", "exp1-factor4.svg", "exp2-factor4.svg", "availability.svg", "COMMAND"] {
        assert!(out.join(f).is_file(), "missing {f}");
    }
    let report = fs::read_to_string(out.join("report.md")).unwrap();
    assert!(report.contains("Reverse-Adaptive") && report.contains("| 0.5 |"), "{report}");
    let _ = fs::remove_dir_all(&out);
}

#[test]
fn reproduce_flowflex_writes_the_report_folder() {
    let out = scratch("flowflex");
    let out_s = out.to_str().unwrap();
    let run = circumflex(&["reproduce", "flowflex", "--instances", "2", "--max-flows", "6", "--out", out_s]);
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let report = fs::read_to_string(out.join("report.md")).unwrap();
    for needle in ["| makespan |", "| avg stretch |", "within 1.26", "## Reproduce"] {
        assert!(report.contains(needle), "{needle} missing from {report}");
    }
    let command = fs::read_to_string(out.join("COMMAND")).unwrap();
    assert!(command.starts_with("circumflex reproduce flowflex --instances 2 --seed 1 --max-flows 6"), "{command}");
    // Header plus 17 metrics × 3 schedulers.
    assert_eq!(fs::read_to_string(out.join("ratios.csv")).unwrap().lines().count(), 1 + 17 * 3);
    for svg in ["minisum.svg", "minimax.svg"] {
        assert!(fs::read_to_string(out.join(svg)).unwrap().starts_with("<svg"));
    }
    let bad = circumflex(&["reproduce", "flowflex", "--max-flows", "3", "--out", out_s]);
    assert!(!bad.status.success() && String::from_utf8_lossy(&bad.stderr).contains("--max-flows"));
    let _ = fs::remove_dir_all(&out);
}

#[test]
fn reproduce_adaptive_ch3_writes_its_report_folder() {
    let out = scratch("adaptive-ch3");
    let run = circumflex(&["reproduce", "adaptive-ch3", "--seeds", "1", "--out", out.to_str().unwrap()]);
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let report = fs::read_to_string(out.join("report.md")).unwrap();
    assert!(report.contains("J4 Join") && report.contains("Basic Adaptive"), "{report}");
    assert!(fs::read_to_string(out.join("COMMAND"))
        .unwrap()
        .starts_with("circumflex reproduce adaptive-ch3 --seeds 1"));
    for svg in ["slots-adaptive-a.svg", "slots-fair.svg", "goals.svg", "locality.svg"] {
        assert!(fs::read_to_string(out.join(svg)).unwrap().starts_with("<svg"), "{svg}");
    }
    let _ = fs::remove_dir_all(&out);
}
