//! Preemption in the reduce phase (split pools, MRv1 reduce slots): a long job's two long reduces hold
//! both reduce slots; a short job whose maps are done starves for a reduce slot. The engine takes one
//! reduce back (the phase the slot serves), the kill re-queues it, and the freed reduce slot goes to the
//! short job's reduce, not back to the victim. Through the public API only.

use circumflex_core::baseline::fair::Fair;
use circumflex_core::config::{EngineConfig, PreemptionConfig};
use circumflex_core::engine::{Choice, Engine, Preemption};
use circumflex_core::model::{JobSpec, Locality, Phase};
use circumflex_core::policy::PoolMode;

#[test]
fn a_starved_reduce_takes_a_reduce_slot_back_and_the_freed_slot_is_its_own() {
    let cfg = EngineConfig {
        policy: "fair".into(),
        pool_mode: PoolMode::Split,
        node_locality_delay: 0,
        rack_locality_delay: 0,
        preemption: PreemptionConfig {
            enabled: true,
            delay_ms: 1_000,
            grace_ms: 1_000,
            max_fraction: 1.0,
            ..PreemptionConfig::default()
        },
        ..EngineConfig::default()
    };
    let mut e = Engine::with_policy(cfg, Box::new(Fair::default()));
    let n = e.add_node("n0", "/r", 2, 2);
    let (long, _) = e.submit(JobSpec::new(0, 1, 2).with_task_ms(1_000, 600_000), 0).unwrap();
    e.task_started(long, Phase::Map, n, Locality::Node, 0).unwrap();
    e.task_finished(long, Phase::Map, n, 1_000, true, 1_000).unwrap();
    e.tick(1_000);
    assert_eq!(
        e.node_update(n, [2, 2], 1_000).unwrap(),
        &[Choice { job: long, phase: Phase::Reduce, count: 2, locality: Locality::Any }]
    );
    for _ in 0..2 {
        e.task_started(long, Phase::Reduce, n, Locality::Any, 1_000).unwrap();
    }
    // The short job's map runs in a free map slot; then its reduce finds both reduce slots taken.
    let (short, _) = e.submit(JobSpec::new(2_000, 1, 1).with_task_ms(1_000, 5_000), 2_000).unwrap();
    e.tick(2_000);
    e.task_started(short, Phase::Map, n, Locality::Node, 2_000).unwrap();
    e.task_finished(short, Phase::Map, n, 1_000, true, 3_000).unwrap();
    e.tick(3_000);
    assert!(e.node_update(n, [2, 0], 3_000).unwrap().is_empty(), "no reduce slot free, no map left");
    // Starved since 3 s; decided after the 1 s delay: one of the long job's reduces, for the short one.
    // The host's timer asks from 3 s on: starved since then (the engine notices starvation when asked).
    assert!(e.preemptions(3_000).is_empty());
    assert!(e.preemptions(3_500).is_empty());
    let decided = e.preemptions(4_000).to_vec();
    assert_eq!(decided, vec![Preemption { victim: long, phase: Phase::Reduce, count: 1, beneficiary: short }]);
    // The host kills it after the grace; it is re-queued, and the freed reduce slot goes to the short job.
    e.task_preempted(long, Phase::Reduce, n, 4_000, 5_000).unwrap();
    let j = e.job(long).unwrap();
    assert_eq!((j.phase(Phase::Reduce).running, j.phase(Phase::Reduce).pending), (1, 1));
    assert_eq!(
        e.node_update(n, [2, 1], 5_000).unwrap(),
        &[Choice { job: short, phase: Phase::Reduce, count: 1, locality: Locality::Any }]
    );
    e.task_started(short, Phase::Reduce, n, Locality::Any, 5_000).unwrap();
    e.tick(5_000);
    // Each at its fair share of one reduce slot: nothing more is taken.
    for t in [6_000, 30_000, 300_000] {
        assert!(e.preemptions(t).is_empty());
    }
    let st = e.stats();
    assert_eq!((st.preemptions, st.preempted_tasks, st.preempted_lost_ms), (1, 1, 4_000));
}
