//! One full re-plan (`Policy::plan`) at 1,000, 10,000 and 100,000 active jobs on a split-pool
//! cluster of 4,000 map and 2,000 reduce slots: FLEX with `avg_response_time` (Smith) and
//! `max_stretch` (backwards DP), plus FIFO and Fair at the same sizes as a same-run baseline.
//! Target: a 10,000-job FLEX re-plan under 5 ms.
//!
//! `replan/*_epoch` and `replan/*_arrival` measure the engine's incremental re-plans of FIFO, Fair and FLEX
//! (`Snapshot::with_changes`, `docs/performance.md` §7): the same policy alternates between two
//! snapshots that differ by one epoch's task ends (every 50th job: a task finished or started,
//! the change list naming those jobs) or by one job leaving and arriving; `plan` above is the
//! plan from the snapshot alone, which every other caller gets.
//!
//! Run: `cargo bench -p circumflex-policies --bench plan` (add `-- --quick` while iterating).

mod common;

use std::hint::black_box;

use circumflex_core::baseline::{fair::Fair, fifo::Fifo};
use circumflex_core::model::JobId;
use circumflex_core::policy::{Policy, Snapshot};
use circumflex_policies::flex::metrics::Objective;
use circumflex_policies::flex::FlexPolicy;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};

const NOW: i64 = 200_000_000;

fn bench_plan(c: &mut Criterion) {
    let mut group = c.benchmark_group("plan");
    for &n in &[1_000usize, 10_000, 100_000] {
        let jobs = common::jobs(n, NOW, 7);
        let active: Vec<JobId> = jobs.iter().map(|j| j.id).collect();
        let snap = Snapshot::new(NOW, common::cluster(), &jobs, &active);
        if n >= 100_000 {
            group.sample_size(10);
        }
        let mut policies: Vec<(String, Box<dyn Policy>)> = vec![
            ("flex_avg_response_time".into(), Box::new(FlexPolicy::new(Objective::AvgResponseTime))),
            ("flex_max_stretch".into(), Box::new(FlexPolicy::new(Objective::MaxStretch))),
            ("fifo".into(), Box::new(Fifo::default())),
            ("fair".into(), Box::new(Fair::default())),
        ];
        for (name, policy) in policies.iter_mut() {
            group.bench_with_input(BenchmarkId::new(name.as_str(), n), &snap, |b, snap| {
                b.iter(|| black_box(policy.plan(black_box(snap))))
            });
        }
    }
    group.finish();
}

fn bench_replan(c: &mut Criterion) {
    let mut group = c.benchmark_group("replan");
    for &n in &[1_000usize, 10_000, 100_000] {
        if n >= 100_000 {
            group.sample_size(10);
        }
        let cases = common::Replans::new(n, NOW);
        let (snaps, arrivals) = (cases.epochs(), cases.arrivals());
        for name in common::REPLAN_POLICIES {
            let mut policy = common::replan_policy(name);
            let mut k = 0;
            group.bench_with_input(BenchmarkId::new(format!("{name}_epoch"), n), &snaps, |b, snaps| {
                b.iter(|| {
                    k ^= 1;
                    black_box(policy.plan(black_box(&snaps[k])))
                })
            });
            let mut policy = common::replan_policy(name);
            group.bench_with_input(BenchmarkId::new(format!("{name}_arrival"), n), &arrivals, |b, snaps| {
                b.iter(|| {
                    k ^= 1;
                    black_box(policy.plan(black_box(&snaps[k])))
                })
            });
        }
    }
    group.finish();
}

criterion_group!(benches, bench_plan, bench_replan);
criterion_main!(benches);
