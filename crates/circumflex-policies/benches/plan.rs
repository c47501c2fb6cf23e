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
        let jobs = common::jobs(n, NOW, 7);
        let (later, changed) = common::one_epoch_later(&jobs);
        let active: Vec<JobId> = jobs.iter().map(|j| j.id).collect();
        let (all_but_last, last) = active.split_at(n - 1);
        if n >= 100_000 {
            group.sample_size(10);
        }
        let snaps = [
            Snapshot::new(NOW, common::cluster(), &jobs, &active).with_changes(&changed),
            Snapshot::new(NOW + 2_000, common::cluster(), &later, &active).with_changes(&changed),
        ];
        // The last job leaves (the jobs vector still holds it, but it is not active) and comes back.
        let arrivals = [
            Snapshot::new(NOW, common::cluster(), &jobs, &active).with_changes(last),
            Snapshot::new(NOW, common::cluster(), &jobs, all_but_last).with_changes(&[]),
        ];
        for name in ["fifo", "fair", "flex_avg_response_time", "flex_max_stretch"] {
            let make = || -> Box<dyn Policy> {
                match name {
                    "fifo" => Box::new(Fifo::default()),
                    "fair" => Box::new(Fair::default()),
                    "flex_avg_response_time" => Box::new(FlexPolicy::new(Objective::AvgResponseTime)),
                    _ => Box::new(FlexPolicy::new(Objective::MaxStretch)),
                }
            };
            let mut policy = make();
            let mut k = 0;
            group.bench_with_input(BenchmarkId::new(format!("{name}_epoch"), n), &snaps, |b, snaps| {
                b.iter(|| {
                    k ^= 1;
                    black_box(policy.plan(black_box(&snaps[k])))
                })
            });
            let mut policy = make();
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
