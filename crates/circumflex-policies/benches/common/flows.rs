//! FlowFlex workloads for `flowflex.rs` and `flowflex_cpu.rs`: the engine snapshots of flows of
//! random DAGs (the paper's §4.1 shape), and the same jobs one epoch later.

use circumflex_core::model::{FlowMembership, JobId, JobSpec, JobState, Phase};

/// xorshift64*: a fixed, dependency-free stream so every run benches the same instance.
pub struct Stream(pub u64);

impl Stream {
    pub fn next(&mut self, below: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) % below
    }
}

/// A snapshot of `flows` flows of `jobs` jobs (random DAGs as in `flowflex.rs`'s `instance`), the first 5 submitted.
pub fn engine_jobs(flows: usize, jobs: usize, seed: u64) -> Vec<JobState> {
    let mut rng = Stream(seed.max(1));
    let mut out = Vec::new();
    for f in 0..flows {
        let names: Vec<String> = (0..jobs).map(|i| format!("n{i}")).collect();
        let mut adjacency: Vec<(String, Vec<String>)> = Vec::new();
        for a in 0..jobs {
            let mut succ: Vec<String> = (a + 1..jobs).filter(|_| rng.next(2) == 0).map(|b| names[b].clone()).collect();
            if succ.is_empty() && a + 1 < jobs {
                succ.push(names[jobs - 1].clone());
            }
            adjacency.push((names[a].clone(), succ));
        }
        for (i, name) in names.iter().enumerate().take(5) {
            let maps = 1 + rng.next(40) as u32;
            let reduces = rng.next(10) as u32;
            let mut spec = JobSpec::new((f * 100 + i) as i64, maps, reduces)
                .with_task_ms(1_000 + rng.next(20_000) as i64, 1_000 + rng.next(30_000) as i64);
            spec.flow = Some(FlowMembership {
                flow_id: format!("flow-{f}"),
                node_name: name.clone(),
                adjacency: adjacency.clone(),
            });
            out.push(JobState::new(JobId(out.len() as u32), spec));
        }
    }
    out
}

/// `jobs` one epoch (2 s) later: one pending map of every job finished, so every flow's volume
/// and cost changed.
pub fn one_epoch_later(jobs: &[JobState]) -> Vec<JobState> {
    let mut later = jobs.to_vec();
    for job in &mut later {
        let map = job.phase_mut(Phase::Map);
        if map.pending > 0 {
            map.pending -= 1;
            map.finished += 1;
            map.observed_ms_sum += 2_000;
            map.observed_ms_max = map.observed_ms_max.max(2_000);
        }
    }
    later
}
