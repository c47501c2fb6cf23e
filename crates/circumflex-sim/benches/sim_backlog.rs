//! Simulator cost per event as the backlog grows: the SWIM FB-2009 day on 3 nodes (`--pool shared
//! --racks 1`, about 4x overload, so thousands of jobs queue up) under each policy, with the wall
//! time of every 16,384 events recorded against the number of active jobs at that point.
//!
//! Prints each run's wall time and a table of events/s per band of 250 active jobs, and writes
//! `events-per-s.svg` and `events-per-s.csv` (one row per band and policy) into `$CIRCUMFLEX_OUT`
//! (default `target/sim-backlog`). The figures are wall-clock measurements: they vary from run to
//! run and machine to machine; compare policies and builds within one run.
//!
//! Run: `cargo bench -p circumflex-sim --bench sim_backlog`
//! (policies from `CIRCUMFLEX_POLICIES`, default `flex,asrpt,fair,fifo`; the SWIM file as for
//! `benches/sim.rs`, or from `CIRCUMFLEX_SWIM`).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::Instant;

use circumflex_core::policy::PoolMode;
use circumflex_sim::plot::{line_chart, Series};
use circumflex_sim::sim::{ClusterSpec, SimConfig, Simulation};
use circumflex_sim::trace::swim::{self, SwimModel};

/// Width of an active-jobs band in the table and the plot.
const BAND: u64 = 250;

fn main() {
    let path = std::env::var_os("CIRCUMFLEX_SWIM").map(PathBuf::from).unwrap_or_else(|| {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/swim/FB-2009_samples_24_times_1hr_0.tsv")
    });
    let workload = match swim::read(&path, &SwimModel::default()) {
        Ok(w) => w,
        Err(e) => {
            eprintln!("SWIM trace unavailable ({e}); nothing to measure");
            return;
        }
    };
    let out = std::env::var_os("CIRCUMFLEX_OUT")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/sim-backlog"));
    let policies = std::env::var("CIRCUMFLEX_POLICIES").unwrap_or_else(|_| "flex,asrpt,fair,fifo".into());
    let cluster = ClusterSpec { nodes: 3, map_slots: 4, reduce_slots: 2, racks: 1, pool: PoolMode::Shared };
    let mut series = Vec::new();
    let mut csv = String::from("policy,active_from,active_to,events,wall_s,events_per_s\n");
    for policy in policies.split(',').filter(|p| !p.is_empty()) {
        let mut config = SimConfig { cluster: cluster.clone(), ..SimConfig::default() };
        config.engine.policy = policy.to_string();
        let sim = match Simulation::new(config, &workload) {
            Ok(sim) => sim,
            Err(e) => {
                eprintln!("{policy}: {e}; skipped");
                continue;
            }
        };
        // band -> (events, seconds) between consecutive observations, at their mean backlog.
        let mut bands: BTreeMap<u64, (u64, f64)> = BTreeMap::new();
        let started = Instant::now();
        let mut last = (0u64, 0u64, 0.0f64); // (events, active, wall s)
        let result = sim.run_observed(|p| {
            let wall = started.elapsed().as_secs_f64();
            let band = (p.active + last.1) / 2 / BAND;
            let cell = bands.entry(band).or_default();
            cell.0 += p.events - last.0;
            cell.1 += wall - last.2;
            last = (p.events, p.active, wall);
        });
        let secs = started.elapsed().as_secs_f64();
        let Ok(result) = result else {
            eprintln!("{policy}: simulation failed");
            continue;
        };
        println!(
            "{policy}: {} events in {secs:.2} s = {:.2e} events/s",
            result.summary.events,
            result.summary.events as f64 / secs
        );
        println!("  active jobs   events/s");
        let mut points = Vec::new();
        for (&band, &(events, wall)) in &bands {
            if wall <= 0.0 || events == 0 {
                continue;
            }
            let rate = events as f64 / wall;
            println!("  {:>5}-{:<5}  {rate:>9.3e}", band * BAND, (band + 1) * BAND);
            let _ = writeln!(csv, "{policy},{},{},{events},{wall:.6},{rate:.1}", band * BAND, (band + 1) * BAND);
            points.push(((band * BAND + BAND / 2) as f64, rate));
        }
        series.push(Series { name: format!("{policy} ({secs:.1} s)"), points });
    }
    if let Err(e) = std::fs::create_dir_all(&out) {
        eprintln!("cannot create {}: {e}", out.display());
        return;
    }
    let svg = line_chart(
        "Simulator throughput against backlog (SWIM FB-2009 day, 3 nodes, shared pool)",
        "active jobs",
        "events per second (wall clock)",
        &series,
        None,
    );
    for (name, text) in [("events-per-s.svg", svg), ("events-per-s.csv", csv)] {
        if let Err(e) = std::fs::write(out.join(name), text) {
            eprintln!("cannot write {name}: {e}");
        }
    }
    println!("wrote {}", out.display());
}
