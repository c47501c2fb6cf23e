//! CPU-time measurement for the `*_cpu` benches: on a loaded machine (other builds, JVM tests) wall
//! time mostly measures waiting for a core, which CPU time does not count (cache and memory-bus
//! contention still inflate it).

use std::hint::black_box;

use circumflex_core::policy::{Policy, Snapshot};

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
/// `budget` CPU s are spent: (mean over all rounds, best round). The clock is read about 25 times
/// a round (after batches sized from the previous round), so reading it costs little beside plans
/// of a few microseconds.
pub fn time(policy: &mut dyn Policy, snaps: &[Snapshot<'_>; 2], budget: f64) -> (f64, f64) {
    for k in 0..4 {
        black_box(policy.plan(&snaps[k % 2]));
    }
    time_calls(budget, 2, || {
        for snap in snaps {
            black_box(policy.plan(black_box(snap)));
        }
    })
}

/// Mean CPU µs per call of whatever `step` does `calls` times per run (as [`time`]): (mean, best round).
pub fn time_calls(budget: f64, calls: u64, mut step: impl FnMut()) -> (f64, f64) {
    let (mut total_s, mut total_n, mut best) = (0.0, 0u64, f64::INFINITY);
    let mut batch = 1u64;
    while total_s < budget {
        let start = cpu_s();
        let mut n = 0u64;
        while cpu_s() - start < 0.25 {
            for _ in 0..batch {
                step();
            }
            n += calls * batch;
        }
        let s = cpu_s() - start;
        total_s += s;
        total_n += n;
        best = best.min(s / n as f64);
        batch = (n / 50).max(1);
    }
    (total_s / total_n as f64 * 1e6, best * 1e6)
}
