//! Simulator throughput: the whole SWIM FB-2009 day (or, when the shared data is absent, a synthetic
//! workload of 2,000 jobs) under each policy, reported by criterion as events per second
//! (`Throughput::Elements` = simulator events of one run).
//!
//! Run: `cargo bench -p circumflex-sim --bench sim`. The SWIM file is looked up at
//! `../shared/data/swim/FB-2009_samples_24_times_1hr_0.tsv` from the repository root, or at the path in
//! `CIRCUMFLEX_SWIM`.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};

use circumflex_policies::POLICY_NAMES;
use circumflex_sim::sim::{workload_rng, ClusterSpec, SimConfig, Simulation, SyntheticSpec, Workload};
use circumflex_sim::trace::swim::{self, SwimModel};

fn workload(cluster: &ClusterSpec) -> Workload {
    let path = std::env::var_os("CIRCUMFLEX_SWIM").map(PathBuf::from).unwrap_or_else(|| {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/swim/FB-2009_samples_24_times_1hr_0.tsv")
    });
    match swim::read(&path, &SwimModel::default()) {
        Ok(w) => w,
        Err(e) => {
            eprintln!("SWIM trace unavailable ({e}); using a synthetic workload");
            let spec = SyntheticSpec { jobs: 2_000, ..SyntheticSpec::default() };
            spec.generate(&mut workload_rng(1), cluster).expect("synthetic workload")
        }
    }
}

/// The policies benchmarked: every registered one with its default objective, plus FLEX's two
/// objectives when FLEX is registered.
fn policies() -> Vec<(String, Option<String>)> {
    let mut out = Vec::new();
    for &p in POLICY_NAMES {
        if p == "flex" {
            out.push((p.to_string(), Some("avg_response_time".to_string())));
            out.push((p.to_string(), Some("max_stretch".to_string())));
        } else {
            out.push((p.to_string(), None));
        }
    }
    out
}

fn bench_sim(c: &mut Criterion) {
    let cluster = ClusterSpec::default();
    let workload = workload(&cluster);
    let mut group = c.benchmark_group(format!("sim/{}", workload.name));
    group.sample_size(10).measurement_time(Duration::from_secs(8)).warm_up_time(Duration::from_secs(1));
    for (policy, objective) in policies() {
        let mut config = SimConfig { cluster: cluster.clone(), ..SimConfig::default() };
        config.engine.policy = policy.clone();
        config.engine.objective = objective.clone();
        let label = objective.map_or(policy.clone(), |o| format!("{policy}:{o}"));
        let started = Instant::now();
        let Ok(sim) = Simulation::new(config.clone(), &workload) else {
            eprintln!("{label}: cannot be configured with defaults; skipped");
            continue;
        };
        let result = sim.run().expect("simulation");
        let secs = started.elapsed().as_secs_f64();
        let events = result.summary.events;
        println!(
            "{label}: {} jobs, {events} events in {secs:.2} s = {:.2e} events/s (one run)",
            workload.jobs.len(),
            events as f64 / secs
        );
        group.throughput(Throughput::Elements(events));
        group.bench_function(&label, |b| {
            b.iter(|| Simulation::new(config.clone(), &workload).and_then(Simulation::run).map(|r| r.summary.events))
        });
    }
    group.finish();
}

criterion_group!(benches, bench_sim);
criterion_main!(benches);
