//! FlowFlex on the paper's largest simulated instances (§4.1: P = 25 slots, 20 flows of 20 jobs,
//! each forward pair of jobs linked with probability ½, sinks joined to the last job): Stage 1 for
//! all flows, Fig. 8 minimax (makespan-style weighted completion), Fig. 6 minisum on a grid of 10 time units,
//! the same on the compressed grid (ratio 1.1), and Stage 3 for a whole schedule.
//!
//! Run: `cargo bench -p circumflex-core --bench flowflex` (add `-- --quick` while iterating).

use std::hint::black_box;

use circumflex::flex::metrics::Penalty;
use circumflex::flowflex::flow::{Flow, FlowJob};
use circumflex::flowflex::Instance;
use criterion::{criterion_group, criterion_main, Criterion};

const SLOTS: u32 = 25;

/// xorshift64*: a fixed, dependency-free stream so every run benches the same instance.
struct Stream(u64);

impl Stream {
    fn next(&mut self, below: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) % below
    }
}

fn instance(flows: usize, jobs: usize, seed: u64) -> Instance {
    let mut rng = Stream(seed.max(1));
    let flows = (0..flows)
        .map(|_| {
            let list: Vec<FlowJob> = (0..jobs)
                .map(|_| FlowJob {
                    work: (1 + rng.next(100)) as f64,
                    max_parallelism: 1 + rng.next(u64::from(SLOTS)) as u32,
                })
                .collect();
            let mut edges = Vec::new();
            for a in 0..jobs {
                for b in a + 1..jobs {
                    if rng.next(2) == 0 {
                        edges.push((a, b));
                    }
                }
            }
            for a in 0..jobs - 1 {
                if !edges.iter().any(|&(from, _)| from == a) {
                    edges.push((a, jobs - 1));
                }
            }
            let cost = Penalty::Linear { slope: (1 + rng.next(10)) as f64, origin: 0.0 };
            Flow::new(list, &edges, cost, SLOTS).unwrap()
        })
        .collect();
    Instance::new(flows, SLOTS).unwrap()
}

fn bench_flowflex(c: &mut Criterion) {
    let inst = instance(20, 20, 7);
    let mut group = c.benchmark_group("flowflex_20x20_p25");
    group.bench_function("stage1", |b| b.iter(|| black_box(Instance::new(inst.flows().to_vec(), SLOTS).unwrap())));
    group.bench_function("minimax_fig8", |b| b.iter(|| black_box(inst.minimax(1e-3).unwrap())));
    group.sample_size(10);
    // On a unit grid (H = 2m⌈max Q_j⌉ slots, m arcs per slot) one solve took 121 s on the 2-core
    // development machine, so the bench uses a grid of 10 time units (10× fewer slots).
    group.bench_function("minisum_fig6_grid10", |b| b.iter(|| black_box(inst.minisum(10.0, 0.5).unwrap())));
    // The compressed grid (geometric ratio 1.1 plus every Q_j): the default of the reproduction.
    group.bench_function("minisum_fig6_compressed_r1.1", |b| {
        b.iter(|| black_box(inst.minisum_compressed(1.1, 0.5).unwrap()))
    });
    let schedule = inst.minimax(1e-3).unwrap().schedule;
    group.bench_function("stage3", |b| b.iter(|| black_box(inst.job_schedules(&schedule))));
    group.finish();
}

criterion_group!(benches, bench_flowflex);
criterion_main!(benches);
