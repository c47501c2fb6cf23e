//! The engine policies `ras` (thesis ch. 4) and `reverse-adaptive` (ch. 5.3): run the placement
//! algorithm every epoch (the control cycle T = `circumflex.epoch.ms`) and hand its result to the
//! engine as per-job, per-phase slot targets.
//!
//! **Profiles.** CPU and I/O per task come from `circumflex.job.profile.cpu` and
//! `circumflex.job.profile.io` (fractions of a node). Memory comes from the container request,
//! `mapreduce.map.memory.mb`, divided by `circumflex.ras.node.memory.mb` (default 8192): on YARN
//! the memory profile *is* the container size, so the ResourceManager enforces it per node too.
//! A resource left unset (0) falls back to an even share, `1 / (slots per node)` (digest gap 20).
//! `JobSpec` carries one profile per job, so reduces use the map profile in every sub-phase.
//!
//! **What the slot engine cannot express** (see `docs/adaptive-ras.md`): the engine's plan is a
//! cluster-wide target per job and phase, and heartbeats are answered per slot, without per-node
//! resource accounting. So the policy plans over `nodes` identical virtual nodes of capacity 1.0
//! per resource, seeds the current placement by spreading each job's running tasks round-robin
//! (the snapshot does not say where tasks run), and sets each job's targets to its row sums
//! `s_alloc` and `r_alloc`. The per-node matrix and the Task Scheduler's overload check are not
//! enforced on real nodes: node slot counts (MRv1) or container sizes (YARN) still bound each node.
//! The full per-node model runs in the simulator (`ras::sim`).
//!
//! `s_req` is the remaining map work over the time to the map phase's goal (Eq. 1 with the running
//! tasks counted in, because `s_alloc` counts them; the map goal is the job's goal minus
//! `⌈reduces / nodes⌉ × µ_reduce`); jobs without a goal, or past it, want all their
//! tasks (as early as possible). Reverse-Adaptive adds `s_fit` from Algorithm 2 with the curve in
//! `circumflex.reverse.availability` (default: always 1.0, which makes it behave like RAS).

use super::placement::{place, Placement, PlacementConfig, PlacementJob};
use super::resources::{Demand, Profile};
use super::reverse::{average_need, reverse_fit, Availability, FitJob};
use super::utility::{job_utility, MapNeed};
use circumflex_core::config::{parse_int, EngineConfig};
use circumflex_core::error::Result;
use circumflex_core::model::{JobState, Phase, Time};
use circumflex_core::policy::{Plan, PlanBuilder, Policy, Snapshot};

/// `circumflex.ras.rounds`: rounds of Algorithm 1's map step.
pub const KEY_ROUNDS: &str = "circumflex.ras.rounds";
/// `circumflex.ras.node.memory.mb`: memory of one node, to turn container sizes into fractions.
pub const KEY_NODE_MEMORY_MB: &str = "circumflex.ras.node.memory.mb";
/// `circumflex.reverse.availability`: f(t) per hour, or a file with it.
pub const KEY_AVAILABILITY: &str = "circumflex.reverse.availability";

/// RAS or Reverse-Adaptive behind the engine.
#[derive(Debug)]
pub struct RasPolicy {
    placement: PlacementConfig,
    node_memory_mb: u32,
    epoch_ms: Time,
    /// `Some` for Reverse-Adaptive.
    availability: Option<Availability>,
}

impl RasPolicy {
    /// The registry's constructor for `ras`, from `circumflex.ras.*`.
    pub fn from_config(cfg: &EngineConfig) -> Result<RasPolicy> {
        RasPolicy::with_mode(cfg, false)
    }

    /// The registry's constructor for `reverse-adaptive`, from `circumflex.ras.*` and `circumflex.reverse.*`.
    pub fn reverse_from_config(cfg: &EngineConfig) -> Result<RasPolicy> {
        RasPolicy::with_mode(cfg, true)
    }

    /// `ras` (`reverse = false`) or `reverse-adaptive`.
    fn with_mode(cfg: &EngineConfig, reverse: bool) -> Result<RasPolicy> {
        let mut placement = PlacementConfig::default();
        if let Some(v) = cfg.param(KEY_ROUNDS) {
            placement.rounds = parse_int(KEY_ROUNDS, v, 1u32, 1000)?;
        }
        let node_memory_mb = match cfg.param(KEY_NODE_MEMORY_MB) {
            Some(v) => parse_int(KEY_NODE_MEMORY_MB, v, 1u32, 1 << 24)?,
            None => 8192,
        };
        let availability = if reverse {
            Some(match cfg.param(KEY_AVAILABILITY) {
                Some(v) => Availability::from_config_value(KEY_AVAILABILITY, v)?,
                None => Availability::constant(1.0),
            })
        } else {
            None
        };
        Ok(RasPolicy { placement, node_memory_mb, epoch_ms: cfg.epoch_ms.max(1), availability })
    }

    fn profile(&self, job: &JobState, share: f64) -> Profile {
        let r = &job.spec.resources;
        let or_share = |v: f64| if v > 0.0 { v.min(1.0) } else { share };
        let mem =
            if r.memory_mb > 0 { (f64::from(r.memory_mb) / f64::from(self.node_memory_mb)).min(1.0) } else { share };
        let d = Demand::new(or_share(r.cpu), or_share(r.io), mem);
        Profile { map: d, shuffle: d, reduce: d }
    }
}

/// Remaining map work (task-ms) with running tasks' remainders `max(0, R·µ − Σβ)` (Eq. 1).
fn map_work(job: &JobState, now: Time) -> f64 {
    let p = job.phase(Phase::Map);
    let mu = job.task_ms_estimate(Phase::Map) as f64;
    let running_left = (f64::from(p.running) * mu - p.running_elapsed_ms(now) as f64).max(0.0);
    f64::from(p.pending) * mu + running_left
}

/// The map phase's goal: the job's goal minus the estimated reduce phase, `⌈R / nodes⌉ × µ_reduce`
/// (digest gap 3, as the Adaptive Scheduler derives phase goals).
fn map_goal(job: &JobState, nodes: usize) -> Option<Time> {
    let r = job.phase(Phase::Reduce);
    let waves = i64::from((r.pending + r.running).div_ceil(nodes.max(1) as u32));
    job.spec.goal_ms.map(|g| g.saturating_sub(waves.saturating_mul(job.task_ms_estimate(Phase::Reduce))))
}

impl Policy for RasPolicy {
    fn name(&self) -> &'static str {
        if self.availability.is_some() {
            "reverse-adaptive"
        } else {
            "ras"
        }
    }

    fn plan(&mut self, snapshot: &Snapshot<'_>) -> Plan {
        let now = snapshot.now;
        let nodes = snapshot.cluster.nodes.max(1) as usize;
        let slots_per_node = snapshot.cluster.total_slots().div_ceil(nodes as u32).max(1);
        let share = 1.0 / f64::from(slots_per_node);
        let jobs: Vec<&JobState> = snapshot.active_jobs().collect();
        let profiles: Vec<Profile> = jobs.iter().map(|j| self.profile(j, share)).collect();
        let works: Vec<f64> = jobs.iter().map(|j| map_work(j, now)).collect();
        let s_fit = self.availability.as_ref().map(|f| {
            let fit_jobs: Vec<FitJob> = jobs
                .iter()
                .zip(&works)
                .zip(&profiles)
                .map(|((j, &work_ms), p)| FitJob {
                    work_ms,
                    task_ms: j.task_ms_estimate(Phase::Map) as f64,
                    deadline: map_goal(j, nodes),
                    tasks_per_node: (1.0 / p.map.max_ratio(Demand::NODE).max(1e-9)).floor().max(1.0),
                })
                .collect();
            reverse_fit(&fit_jobs, now, self.epoch_ms, nodes as f64, f)
        });
        let pjobs: Vec<PlacementJob> = jobs
            .iter()
            .enumerate()
            .map(|(i, j)| {
                let maps = j.phase(Phase::Map);
                let s_pend = maps.pending + maps.running;
                let s_req = average_need(works[i], now, map_goal(j, nodes), f64::from(s_pend));
                let need = match &s_fit {
                    Some(fit) => MapNeed::Reverse { s_fit: fit[i], s_req },
                    None => MapNeed::Ras { s_req },
                };
                let reduces = j.phase(Phase::Reduce);
                PlacementJob {
                    profile: profiles[i],
                    need,
                    s_pend,
                    r_pend: reduces.pending + reduces.running,
                    place_reducers: j.reduces_ready(),
                    reducers_reducing: s_pend == 0,
                }
            })
            .collect();
        let mut current = Placement::empty(jobs.len(), nodes);
        let mut next_node = 0usize;
        for (i, j) in jobs.iter().enumerate() {
            for (phase, row) in [(Phase::Map, &mut current.maps[i]), (Phase::Reduce, &mut current.reduces[i])] {
                for _ in 0..j.phase(phase).running {
                    row[next_node % nodes] += 1;
                    next_node += 1;
                }
            }
        }
        let p = place(&pjobs, &vec![Demand::NODE; nodes], &current, self.placement);
        let utility: Vec<f64> = (0..jobs.len())
            .map(|i| {
                let pj = &pjobs[i];
                job_utility(
                    pj.need,
                    f64::from(p.s_alloc(i)),
                    f64::from(pj.s_pend),
                    f64::from(p.r_alloc(i)),
                    f64::from(pj.r_pend),
                )
            })
            .collect();
        let mut order: Vec<usize> = (0..jobs.len()).collect();
        order.sort_by(|&a, &b| utility[a].total_cmp(&utility[b]).then(a.cmp(&b)));
        let mut builder = PlanBuilder::new(snapshot, order.iter().map(|&i| jobs[i].id));
        for pool in snapshot.cluster.pools() {
            for (i, j) in jobs.iter().enumerate() {
                builder.set_phase_targets(j.id, &pool, [p.s_alloc(i), p.r_alloc(i)]);
            }
        }
        builder.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use circumflex_core::model::{JobId, JobSpec};
    use circumflex_core::policy::{ClusterView, PoolMode};

    fn cfg(pairs: &[(&str, &str)]) -> EngineConfig {
        let mut c = EngineConfig { policy: "ras".into(), ..EngineConfig::default() };
        for (k, v) in pairs {
            c.params.insert((*k).into(), (*v).into());
        }
        c
    }

    fn job(id: u32, maps: u32, cpu: f64, goal: Option<Time>) -> JobState {
        let mut spec = JobSpec::new(0, maps, 0).with_task_ms(60_000, 60_000);
        spec.resources.cpu = cpu;
        spec.resources.io = 0.1;
        spec.resources.memory_mb = 1024;
        spec.goal_ms = goal;
        JobState::new(JobId(id), spec)
    }

    #[test]
    fn targets_respect_profiles_and_favour_the_needy_job() {
        // 4 nodes; A's maps take 50% CPU (2 per node), B's 25% (4 per node).
        let jobs = vec![job(0, 100, 0.5, Some(600_000)), job(1, 100, 0.25, Some(60_000_000))];
        let active = [JobId(0), JobId(1)];
        let cluster = ClusterView { map_slots: 32, reduce_slots: 8, mode: PoolMode::Split, nodes: 4 };
        let snap = Snapshot::new(0, cluster, &jobs, &active);
        let mut policy = RasPolicy::from_config(&cfg(&[])).unwrap();
        let plan = policy.plan(&snap);
        let a = plan.entry(JobId(0)).unwrap().target[0];
        let b = plan.entry(JobId(1)).unwrap().target[0];
        // Per node: 0.5·a_n + 0.25·b_n <= 1, so 2a + b <= 16 in total.
        assert!(2 * a + b <= 16, "a={a} b={b}");
        assert!(a >= 7, "A needs 10 maps/min for its goal and must get most of the CPU: a={a} b={b}");
        assert!(b >= 1);
        // A is still below its s_req (utility < 0), B above its tiny one: A comes first.
        assert_eq!(plan.entries[0].job, JobId(0), "poorest (lowest utility) first: {:?}", plan.entries);
    }

    #[test]
    fn registry_builds_both_and_validates_keys() {
        let c = EngineConfig::from_pairs([("circumflex.policy", "ras")]).unwrap();
        assert_eq!(crate::registry::create(&c).unwrap().name(), "ras");
        let c = EngineConfig::from_pairs([
            ("circumflex.policy", "reverse-adaptive"),
            ("circumflex.reverse.availability", "1,0.5,0.25"),
        ])
        .unwrap();
        assert_eq!(crate::registry::create(&c).unwrap().name(), "reverse-adaptive");
        let c = EngineConfig::from_pairs([("circumflex.policy", "reverse-adaptive"), (KEY_AVAILABILITY, "0.5,2")]);
        assert!(crate::registry::create(&c.unwrap()).err().unwrap().to_string().contains(KEY_AVAILABILITY));
        let c = EngineConfig::from_pairs([("circumflex.policy", "ras"), (KEY_ROUNDS, "0")]);
        assert!(crate::registry::create(&c.unwrap()).err().unwrap().to_string().contains(KEY_ROUNDS));
    }

    #[test]
    fn profile_keys_reach_the_job_spec() {
        let conf: std::collections::BTreeMap<String, String> = [
            ("circumflex.job.profile.cpu", "0.3"),
            ("circumflex.job.profile.io", "0.45"),
            ("mapreduce.map.memory.mb", "2048"),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let spec = circumflex_core::config::job_spec_from_conf(&conf, 0).unwrap();
        let policy = RasPolicy::from_config(&cfg(&[])).unwrap();
        let p = policy.profile(&JobState::new(JobId(0), spec), 0.5);
        assert_eq!(p.map, Demand::new(0.3, 0.45, 0.25));
        let mut bad = conf.clone();
        bad.insert("circumflex.job.profile.io".into(), "1.5".into());
        let e = circumflex_core::config::job_spec_from_conf(&bad, 0).unwrap_err().to_string();
        assert!(e.contains("circumflex.job.profile.io") && e.contains("1.5"), "{e}");
    }

    #[test]
    fn runs_behind_the_engine() {
        let c = EngineConfig::from_pairs([("circumflex.policy", "ras")]).unwrap();
        let mut engine = crate::new_engine(c).unwrap();
        let n = engine.add_node("h1", "/r", 4, 2);
        let mut spec = JobSpec::new(0, 6, 1).with_task_ms(1000, 1000);
        spec.resources.cpu = 0.5;
        let (id, _) = engine.submit(spec, 0).unwrap();
        engine.replan(0);
        // One node of 6 slots: the fallback share is 1/6 per resource, CPU 50% fits two maps.
        assert_eq!(engine.plan().entry(id).map(|e| e.target), Some([2, 0]));
        let choices = engine.node_update(n, [4, 2], 0).unwrap().to_vec();
        assert!(choices.iter().any(|c| c.job == id && c.phase == Phase::Map), "{choices:?}");
    }
}
