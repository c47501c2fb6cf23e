//! One `Engine::node_update` (a heartbeat answer from the current plan) with 1,000 and 10,000
//! active jobs under FLEX (`avg_response_time`) on a split-pool cluster of 500 nodes. Only the
//! `node_update` call is timed; the choices are then applied as task starts and undone as failed
//! tasks outside the timed region, so every iteration sees the same state.
//! Target: under 2 µs median.
//!
//! Run: `cargo bench -p circumflex-policies --bench node_update` (add `-- --quick` while iterating).

mod common;

use std::hint::black_box;
use std::time::{Duration, Instant};

use circumflex_core::engine::{Choice, Engine};
use circumflex_core::model::{Locality, NodeId};
use circumflex_core::policy::PoolMode;
use circumflex_core::EngineConfig;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};

const NOW: i64 = 200_000_000;

fn engine(n: usize) -> (Engine, Vec<NodeId>) {
    let cfg = EngineConfig {
        policy: "flex".into(),
        pool_mode: PoolMode::Split,
        replan_on_events: false,
        ..EngineConfig::default()
    };
    let mut e = match circumflex_policies::new_engine(cfg) {
        Ok(e) => e,
        Err(err) => panic!("bench engine: {err}"),
    };
    let nodes: Vec<NodeId> = (0..common::NODES)
        .map(|i| e.add_node(&format!("h{i}"), &format!("/r{}", i / 20), common::MAP_SLOTS, common::REDUCE_SLOTS))
        .collect();
    for spec in common::specs(n, NOW, 7) {
        if let Err(err) = e.submit(spec, NOW) {
            panic!("bench submit: {err}");
        }
    }
    e.replan(NOW);
    (e, nodes)
}

/// Launches what the host would launch from `choices` on `node`, returning the launches.
fn apply(e: &mut Engine, node: NodeId, choices: &[Choice], free: [u32; 2]) -> Vec<(Choice, u32)> {
    let mut left = free;
    let mut launched = Vec::new();
    for c in choices {
        let b = c.phase.idx();
        let k = c.count.min(left[b]);
        for _ in 0..k {
            if e.task_started(c.job, c.phase, node, Locality::Node, NOW).is_err() {
                panic!("bench: launch refused");
            }
        }
        left[b] -= k;
        if k > 0 {
            launched.push((*c, k));
        }
    }
    launched
}

fn undo(e: &mut Engine, node: NodeId, launched: &[(Choice, u32)]) {
    for (c, k) in launched {
        for _ in 0..*k {
            if e.task_finished(c.job, c.phase, node, 0, false, NOW).is_err() {
                panic!("bench: undo refused");
            }
        }
    }
}

fn bench_node_update(c: &mut Criterion) {
    let mut group = c.benchmark_group("node_update");
    for &n in &[1_000usize, 10_000] {
        let (mut e, nodes) = engine(n);
        let free = [2u32, 1u32];
        group.bench_function(BenchmarkId::new("flex_avg_response_time", n), |b| {
            b.iter_custom(|iters| {
                let mut timed = Duration::ZERO;
                for i in 0..iters {
                    let node = nodes[(i as usize) % nodes.len()];
                    let start = Instant::now();
                    let answer = e.node_update(node, black_box(free), NOW);
                    timed += start.elapsed();
                    let choices: Vec<Choice> = match answer {
                        Ok(c) => c.to_vec(),
                        Err(err) => panic!("bench node_update: {err}"),
                    };
                    let launched = apply(&mut e, node, &choices, free);
                    undo(&mut e, node, &launched);
                }
                timed
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench_node_update);
criterion_main!(benches);
