//! The incremental re-plans of `plan.rs` (`replan/*_epoch`, `replan/*_arrival`) timed in this
//! process's CPU time instead of wall time: on a loaded machine (other builds, JVM tests) wall
//! time mostly measures waiting for a core, which CPU time does not count (cache and memory-bus
//! contention still inflate it). Prints, per case, the mean CPU microseconds per plan over at
//! least `CIRCUMFLEX_CPU_S` seconds of CPU (default 2), in rounds, and the best round.
//!
//! Run: `cargo bench -p circumflex-policies --bench plan_cpu [-- FILTER]` (a substring of the
//! case name, e.g. `flex_max_stretch_arrival/10000`).
//!
//! With `CIRCUMFLEX_ALL_OBJECTIVES=1` every other FLEX objective is timed too (`flex_<objective>_*`).
//!
//! `*_predict/N` (FLEX): what a status view adds, the plan's predicted completions computed on
//! demand (`Policy::predict_completions`, the full packing of every pool) after an epoch re-plan.

mod common;

const NOW: i64 = 200_000_000;

fn main() {
    let filter: Option<String> = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    let budget: f64 = std::env::var("CIRCUMFLEX_CPU_S").ok().and_then(|v| v.parse().ok()).unwrap_or(2.0);
    println!("case, mean CPU us per plan, best round's us per plan");
    for &n in &[1_000usize, 10_000, 100_000] {
        let cases = common::Replans::new(n, NOW);
        let (epochs, arrivals) = (cases.epochs(), cases.arrivals());
        let mut names: Vec<String> = common::REPLAN_POLICIES.iter().map(|n| n.to_string()).collect();
        if std::env::var_os("CIRCUMFLEX_ALL_OBJECTIVES").is_some() {
            names.extend(common::flex_names());
        }
        for name in &names {
            for (kind, snaps) in [("epoch", &epochs), ("arrival", &arrivals)] {
                let case = format!("{name}_{kind}/{n}");
                if filter.as_deref().is_some_and(|f| !case.contains(f)) {
                    continue;
                }
                let (mean, best) = common::cpu::time(common::replan_policy(name).as_mut(), snaps, budget);
                println!("{case}, {mean:.1}, {best:.1}");
            }
            let case = format!("{name}_predict/{n}");
            if !name.starts_with("flex") || filter.as_deref().is_some_and(|f| !case.contains(f)) {
                continue;
            }
            let mut policy = common::replan_policy(name);
            policy.plan(&epochs[0]);
            let mut plan = policy.plan(&epochs[1]);
            let (mean, best) = common::cpu::time_calls(budget, 1, || {
                // The first view of a plan pays this (the engine keeps the result for later views).
                plan.completions_pending = true;
                policy.predict_completions(std::hint::black_box(&mut plan));
            });
            println!("{case}, {mean:.1}, {best:.1}");
        }
    }
}
