//! FlowFlex engine re-plans (`FlowFlexPolicy::plan`) timed in this process's CPU time instead of
//! wall time (see `common/cpu.rs`), on the snapshots of `flowflex.rs`'s `flowflex_replan` group:
//! flows of 20 jobs (random DAGs, the first 5 submitted), 20 flows on 25 slots and 200 flows on 250
//! slots, shared pool, plus 25 singleton flows on 40 slots (the size of the engine soak's pools).
//! Cases, each alternating between two snapshots:
//! - `*_epochs`: this snapshot and the next epoch's (2 s later, one map of every job finished, so
//!   every flow's volume and cost changed): every plan solves its instance anew;
//! - `*_ticks`: the same jobs 2 s apart (`now` moves, nothing else: what a policy sees at an epoch
//!   in which no task started or finished);
//! - `*_same`: the same snapshot twice.
//!
//! Prints, per case, the mean CPU microseconds per plan over at least `CIRCUMFLEX_CPU_S` seconds of
//! CPU (default 2), in rounds, and the best round. Target (issue 20): minisum
//! (`avg_response_time`) at 200 × 20 at most 20 ms.
//!
//! Run: `cargo bench -p circumflex-policies --bench flowflex_cpu [-- FILTER]` (a substring of the
//! case name, e.g. `avg_response_time_epochs/200x20`).

mod common;

use circumflex_core::model::JobId;
use circumflex_core::policy::{ClusterView, PoolMode, Snapshot};
use circumflex_policies::flex::metrics::Objective;
use circumflex_policies::flowflex::policy::FlowFlexPolicy;
use common::flows::{engine_jobs, one_epoch_later};

const NOW: i64 = 1_000_000;

fn main() {
    let filter: Option<String> = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    let budget: f64 = std::env::var("CIRCUMFLEX_CPU_S").ok().and_then(|v| v.parse().ok()).unwrap_or(2.0);
    println!("case, mean CPU us per plan, best round's us per plan");
    for &(flows, jobs_per_flow, slots) in &[(25usize, 1usize, 40u32), (20, 20, 25), (200, 20, 250)] {
        let jobs = engine_jobs(flows, jobs_per_flow, 11);
        let later = one_epoch_later(&jobs);
        let active: Vec<JobId> = jobs.iter().map(|j| j.id).collect();
        let cluster = ClusterView { map_slots: slots, reduce_slots: 0, mode: PoolMode::Shared, nodes: slots / 5 };
        let at = |now: i64, jobs| Snapshot::new(now, cluster, jobs, &active);
        let cases = [
            ("epochs", [at(NOW, &jobs), at(NOW + 2_000, &later)]),
            ("ticks", [at(NOW, &jobs), at(NOW + 2_000, &jobs)]),
            ("same", [at(NOW, &jobs), at(NOW, &jobs)]),
        ];
        for objective in [Objective::AvgResponseTime, Objective::MaxStretch] {
            for (kind, snaps) in &cases {
                let case = format!("{}_{kind}/{flows}x{jobs_per_flow}", objective.name());
                if filter.as_deref().is_some_and(|f| !case.contains(f)) {
                    continue;
                }
                let mut policy = FlowFlexPolicy::new(objective, 2_000);
                let (mean, best) = common::cpu::time(&mut policy, snaps, budget);
                println!("{case}, {mean:.1}, {best:.1}");
            }
        }
    }
}
