//! The incremental re-plans of `plan.rs` (`replan/*_epoch`, `replan/*_arrival`) timed in this
//! process's CPU time instead of wall time: on a loaded machine (other builds, JVM tests) wall
//! time mostly measures waiting for a core, which CPU time does not count (cache and memory-bus
//! contention still inflate it). Prints, per case, the mean CPU microseconds per plan over at
//! least `CIRCUMFLEX_CPU_S` seconds of CPU (default 2), in rounds, and the best round.
//!
//! Run: `cargo bench -p circumflex-policies --bench plan_cpu [-- FILTER]` (a substring of the
//! case name, e.g. `flex_max_stretch_arrival/10000`).

mod common;

use std::hint::black_box;

use circumflex_core::policy::{Policy, Snapshot};

const NOW: i64 = 200_000_000;

/// User plus system CPU seconds of this process (`/proc/self/stat`, clock ticks of 10 ms).
fn cpu_s() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the command name (which is in parentheses and may hold spaces).
    let rest = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    // utime and stime are fields 14 and 15 of the whole line, 12 and 13 after the name.
    (ticks(11) + ticks(12)) / 100.0
}

/// Mean CPU µs per plan alternating between `snaps`, over rounds of at least 0.25 CPU s until
/// `budget` CPU s are spent: (mean over all rounds, best round).
fn time(policy: &mut dyn Policy, snaps: &[Snapshot<'_>; 2], budget: f64) -> (f64, f64) {
    for k in 0..4 {
        black_box(policy.plan(&snaps[k % 2]));
    }
    let (mut total_s, mut total_n, mut best) = (0.0, 0u64, f64::INFINITY);
    while total_s < budget {
        let start = cpu_s();
        let mut n = 0u64;
        while cpu_s() - start < 0.25 {
            for snap in snaps {
                black_box(policy.plan(black_box(snap)));
            }
            n += 2;
        }
        let s = cpu_s() - start;
        total_s += s;
        total_n += n;
        best = best.min(s / n as f64);
    }
    (total_s / total_n as f64 * 1e6, best * 1e6)
}

fn main() {
    let filter: Option<String> = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    let budget: f64 = std::env::var("CIRCUMFLEX_CPU_S").ok().and_then(|v| v.parse().ok()).unwrap_or(2.0);
    println!("case, mean CPU us per plan, best round's us per plan");
    for &n in &[1_000usize, 10_000, 100_000] {
        let cases = common::Replans::new(n, NOW);
        let (epochs, arrivals) = (cases.epochs(), cases.arrivals());
        for name in common::REPLAN_POLICIES {
            for (kind, snaps) in [("epoch", &epochs), ("arrival", &arrivals)] {
                let case = format!("{name}_{kind}/{n}");
                if filter.as_deref().is_some_and(|f| !case.contains(f)) {
                    continue;
                }
                let (mean, best) = time(common::replan_policy(name).as_mut(), snaps, budget);
                println!("{case}, {mean:.1}, {best:.1}");
            }
        }
    }
}
