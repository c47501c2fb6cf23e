//! Scheduler configuration: the `circumflex.*` keys of `yarn-site.xml` / `mapred-site.xml`.
//!
//! The host passes every `circumflex.*` key it finds as strings; [`EngineConfig::from_pairs`]
//! parses and validates them, and the error names the key, the value and what is allowed, so a
//! bad configuration fails daemon start-up with a message an operator can act on.
//! Keys the engine does not know are kept in [`EngineConfig::params`] for the policy, which
//! validates its own (`circumflex.<policy>.*`, `circumflex.objective`) when the registry
//! (`circumflex_policies::create`) builds it, once per create or refresh. This module never names a
//! policy: the policy name is checked by the registry too.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::model::{JobSpec, Time};
use crate::policy::PoolMode;

/// `circumflex.policy`: the policy name (see `circumflex_policies::POLICY_NAMES`).
pub const KEY_POLICY: &str = "circumflex.policy";
/// `circumflex.objective`: the metric the policy optimizes (policy-specific; FLEX family).
pub const KEY_OBJECTIVE: &str = "circumflex.objective";
/// `circumflex.epoch.ms`: how often the plan is recomputed, in ms.
pub const KEY_EPOCH_MS: &str = "circumflex.epoch.ms";
/// `circumflex.pool.mode`: `split` (MRv1 map and reduce slots) or `shared` (YARN containers).
pub const KEY_POOL_MODE: &str = "circumflex.pool.mode";
/// `circumflex.replan.on.events`: re-plan at once on job arrival and departure (default true).
pub const KEY_REPLAN_ON_EVENTS: &str = "circumflex.replan.on.events";
/// `circumflex.locality.node.delay`: scheduling opportunities a job may skip waiting for a
/// node-local slot (delay scheduling).
pub const KEY_NODE_DELAY: &str = "circumflex.locality.node.delay";
/// `circumflex.locality.rack.delay`: further opportunities it may skip waiting for rack-local.
pub const KEY_RACK_DELAY: &str = "circumflex.locality.rack.delay";
/// `circumflex.adaptive.accelerated.hosts`: host names of the accelerated node pool. The engine marks
/// these nodes accelerated at `add_node` (a node property, whatever the policy); the Adaptive family
/// reads and validates the same key for its hardware affinity. The key keeps its historical name.
pub const KEY_ACCELERATED_HOSTS: &str = "circumflex.adaptive.accelerated.hosts";
/// `circumflex.preemption.enabled`: the engine takes slots back from jobs above their plan target
/// for starved jobs below it (default false: behaviour exactly as without preemption).
pub const KEY_PREEMPTION: &str = "circumflex.preemption.enabled";
/// `circumflex.preemption.delay.ms`: how long a job must have been starved (below target, runnable
/// work waiting, its pool's free slots not covering its deficit) before the engine preempts for it.
pub const KEY_PREEMPTION_DELAY_MS: &str = "circumflex.preemption.delay.ms";
/// `circumflex.preemption.grace.ms`: time between asking for a container back and killing it (the
/// YARN shim's strict-preemption grace; the simulator's shared pool models it; MRv1 kills at once and
/// ignores it, as the simulator's split pool does).
pub const KEY_PREEMPTION_GRACE_MS: &str = "circumflex.preemption.grace.ms";
/// `circumflex.preemption.max.fraction`: most of a pool's slots being preempted at once.
pub const KEY_PREEMPTION_MAX_FRACTION: &str = "circumflex.preemption.max.fraction";
/// `circumflex.preemption.long.task.reserve`: the share of each pool that tasks longer than preemption's
/// hand-back (`delay.ms + grace.ms`) may not hold, for plans that ask for the reserve (FLEX); 0 turns it off.
pub const KEY_PREEMPTION_LONG_TASK_RESERVE: &str = "circumflex.preemption.long.task.reserve";
/// `circumflex.am.admission.enabled`: the engine decides when each job's AM container starts
/// (`engine/admission.rs`, default false: hosts start AMs as they did without it).
pub const KEY_AM_ADMISSION: &str = "circumflex.am.admission.enabled";
/// `circumflex.am.max.share`: most of the pool's capacity that AM containers (running, or admitted and
/// not yet placed) may hold, in (0, 1).
pub const KEY_AM_MAX_SHARE: &str = "circumflex.am.max.share";
/// `circumflex.am.max.starting.per.node`: most AMs admitted and not yet registered at once (admitted, or
/// their container starting), per live node: the bound is this times the live nodes; 0 (the default): no
/// bound (`engine/admission.rs`, "Starting AMs").
pub const KEY_AM_MAX_STARTING_PER_NODE: &str = "circumflex.am.max.starting.per.node";
/// `circumflex.am.slots`: slots one AM container holds when the host does not say (YARN says: the AM's
/// memory in slots).
pub const KEY_AM_SLOTS: &str = "circumflex.am.slots";

/// Validated engine configuration.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EngineConfig {
    /// Policy name.
    pub policy: String,
    /// Objective name, if set (the policy decides whether it needs one).
    pub objective: Option<String>,
    /// Epoch length.
    pub epoch_ms: Time,
    /// Slot pooling.
    pub pool_mode: PoolMode,
    /// Re-plan on arrivals and departures as well as on epochs.
    pub replan_on_events: bool,
    /// Delay scheduling: skips allowed before accepting rack-local.
    pub node_locality_delay: u32,
    /// Delay scheduling: further skips before accepting off-rack.
    pub rack_locality_delay: u32,
    /// Every other `circumflex.*` key, for the policy.
    pub params: BTreeMap<String, String>,
    /// Engine-decided preemption (`circumflex.preemption.*`). Not serialized while off, so results
    /// written before preemption existed read and compare the same.
    #[serde(default, skip_serializing_if = "PreemptionConfig::is_off")]
    pub preemption: PreemptionConfig,
    /// Engine-decided AM admission (`circumflex.am.*`). Not serialized while off, so results written
    /// before it existed read and compare the same.
    #[serde(default, skip_serializing_if = "AmAdmissionConfig::is_off")]
    pub am: AmAdmissionConfig,
}

/// The `circumflex.am.*` keys (`engine/admission.rs`, `docs/am-admission.md`).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct AmAdmissionConfig {
    /// Gate AM containers at all.
    pub enabled: bool,
    /// Most of the pool's capacity AM containers may hold, in (0, 1).
    pub max_share: f64,
    /// Slots of one AM container when the host does not say, >= 1.
    pub slots: u32,
    /// Most AMs admitted and not yet registered at once, per live node; 0: no bound. Not serialized while 0, so
    /// results written before it existed read and compare the same.
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub max_starting_per_node: u32,
}

fn is_zero_u32(v: &u32) -> bool {
    *v == 0
}

impl Default for AmAdmissionConfig {
    /// Off; when on, half the pool (the FairScheduler's `maxAMShare`; the reasons, and why not the
    /// CapacityScheduler's 0.1, are in `engine/admission.rs`) and AMs of one slot unless the host says.
    fn default() -> Self {
        AmAdmissionConfig { enabled: false, max_share: 0.5, slots: 1, max_starting_per_node: 0 }
    }
}

impl AmAdmissionConfig {
    /// Whether the gate is off (the serialized form then omits the whole section).
    pub fn is_off(&self) -> bool {
        !self.enabled
    }
}

/// The `circumflex.preemption.*` keys (`docs/preemption.md`).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct PreemptionConfig {
    /// Preempt at all.
    pub enabled: bool,
    /// Starvation a job must have seen before the engine preempts for it, ms.
    pub delay_ms: Time,
    /// Time the host waits between asking for a slot back and killing its task, ms.
    pub grace_ms: Time,
    /// Most of a pool's slots in flight (asked for and not yet freed) at once, in (0, 1].
    pub max_fraction: f64,
    /// Share of each pool kept from long tasks when the plan asks for the reserve, in [0, 1]; 0 is off.
    #[serde(default = "default_long_task_reserve")]
    pub long_task_reserve: f64,
}

fn default_long_task_reserve() -> f64 {
    PreemptionConfig::default().long_task_reserve
}

impl Default for PreemptionConfig {
    /// Off; when turned on, Hadoop's stock timings: the FairScheduler's and CapacityScheduler's
    /// 15 s wait before kill and the CapacityScheduler's 10% of the cluster per round; a job must
    /// have been starved for one 3 s heartbeat interval (an MRv1 TaskTracker's minimum) first. The
    /// long-task reserve keeps the same 10% that one round may take back.
    fn default() -> Self {
        PreemptionConfig {
            enabled: false,
            delay_ms: 3_000,
            grace_ms: 15_000,
            max_fraction: 0.1,
            long_task_reserve: 0.1,
        }
    }
}

impl PreemptionConfig {
    /// Whether preemption is off (the serialized form then omits the whole section).
    pub fn is_off(&self) -> bool {
        !self.enabled
    }
}

impl Default for EngineConfig {
    fn default() -> Self {
        EngineConfig {
            policy: "fifo".into(),
            objective: None,
            epoch_ms: 2_000,
            pool_mode: PoolMode::Shared,
            replan_on_events: true,
            node_locality_delay: 3,
            rack_locality_delay: 3,
            params: BTreeMap::new(),
            preemption: PreemptionConfig::default(),
            am: AmAdmissionConfig::default(),
        }
    }
}

/// Parses an integer key within `[lo, hi]`.
pub fn parse_int<T>(key: &str, value: &str, lo: T, hi: T) -> Result<T>
where
    T: std::str::FromStr + PartialOrd + std::fmt::Display + Copy,
{
    let allowed = || format!("an integer in [{lo}, {hi}]");
    let v: T = value.trim().parse().map_err(|_| Error::config(key, value, allowed()))?;
    if v < lo || v > hi {
        return Err(Error::config(key, value, allowed()));
    }
    Ok(v)
}

/// Parses a boolean key (`true`/`false`, case-insensitive).
pub fn parse_bool(key: &str, value: &str) -> Result<bool> {
    match value.trim().to_ascii_lowercase().as_str() {
        "true" => Ok(true),
        "false" => Ok(false),
        _ => Err(Error::config(key, value, "true or false")),
    }
}

/// Parses a finite float key within `[lo, hi]`.
pub fn parse_f64(key: &str, value: &str, lo: f64, hi: f64) -> Result<f64> {
    let allowed = || format!("a number in [{lo}, {hi}]");
    let v: f64 = value.trim().parse().map_err(|_| Error::config(key, value, allowed()))?;
    if !v.is_finite() || v < lo || v > hi {
        return Err(Error::config(key, value, allowed()));
    }
    Ok(v)
}

/// Every key the engine reads itself (the policy's own keys are the registry's).
const ENGINE_KEYS: [&str; 16] = [
    KEY_POLICY,
    KEY_OBJECTIVE,
    KEY_EPOCH_MS,
    KEY_POOL_MODE,
    KEY_REPLAN_ON_EVENTS,
    KEY_NODE_DELAY,
    KEY_RACK_DELAY,
    KEY_PREEMPTION,
    KEY_PREEMPTION_DELAY_MS,
    KEY_PREEMPTION_GRACE_MS,
    KEY_PREEMPTION_MAX_FRACTION,
    KEY_PREEMPTION_LONG_TASK_RESERVE,
    KEY_AM_ADMISSION,
    KEY_AM_MAX_SHARE,
    KEY_AM_SLOTS,
    KEY_AM_MAX_STARTING_PER_NODE,
];

/// Key families only the engine reads: any other key in them is a mistake, refused by name.
const ENGINE_KEY_FAMILIES: [&str; 6] = [
    "circumflex.am.",
    "circumflex.preemption.",
    "circumflex.locality.",
    "circumflex.pool.",
    "circumflex.epoch.",
    "circumflex.replan.",
];

impl EngineConfig {
    /// Builds and validates a configuration from `circumflex.*` key/value pairs. Keys without the
    /// `circumflex.` prefix are ignored (hosts may pass their whole configuration). The policy name
    /// and the policy's own keys are validated by the registry when it builds the policy.
    pub fn from_pairs<'a, I>(pairs: I) -> Result<EngineConfig>
    where
        I: IntoIterator<Item = (&'a str, &'a str)>,
    {
        let mut cfg = EngineConfig::default();
        for (key, value) in pairs {
            if !key.starts_with("circumflex.") || key.starts_with("circumflex.job.") {
                continue;
            }
            match key {
                KEY_POLICY => cfg.policy = value.trim().to_ascii_lowercase(),
                KEY_OBJECTIVE => cfg.objective = Some(value.trim().to_ascii_lowercase()),
                KEY_EPOCH_MS => cfg.epoch_ms = parse_int(key, value, 10, 3_600_000)?,
                KEY_POOL_MODE => {
                    cfg.pool_mode = match value.trim().to_ascii_lowercase().as_str() {
                        "split" => PoolMode::Split,
                        "shared" => PoolMode::Shared,
                        _ => return Err(Error::config(key, value, "split or shared")),
                    }
                }
                KEY_REPLAN_ON_EVENTS => cfg.replan_on_events = parse_bool(key, value)?,
                KEY_NODE_DELAY => cfg.node_locality_delay = parse_int(key, value, 0, 1_000_000)?,
                KEY_RACK_DELAY => cfg.rack_locality_delay = parse_int(key, value, 0, 1_000_000)?,
                KEY_PREEMPTION => cfg.preemption.enabled = parse_bool(key, value)?,
                KEY_PREEMPTION_DELAY_MS => cfg.preemption.delay_ms = parse_int(key, value, 0, 86_400_000)?,
                KEY_PREEMPTION_GRACE_MS => cfg.preemption.grace_ms = parse_int(key, value, 0, 3_600_000)?,
                KEY_PREEMPTION_MAX_FRACTION => {
                    let f = parse_f64(key, value, 0.0, 1.0)?;
                    if f <= 0.0 {
                        return Err(Error::config(key, value, "a number in (0, 1]"));
                    }
                    cfg.preemption.max_fraction = f;
                }
                KEY_PREEMPTION_LONG_TASK_RESERVE => {
                    cfg.preemption.long_task_reserve = parse_f64(key, value, 0.0, 1.0)?;
                }
                KEY_AM_ADMISSION => cfg.am.enabled = parse_bool(key, value)?,
                KEY_AM_MAX_SHARE => {
                    let f = parse_f64(key, value, 0.0, 1.0)?;
                    if f <= 0.0 || f >= 1.0 {
                        // 1 would let AMs hold the whole pool; the gate keeps a task slot anyway, but a
                        // share that says "all of it" is a mistake worth naming.
                        return Err(Error::config(key, value, "a number in (0, 1)"));
                    }
                    cfg.am.max_share = f;
                }
                KEY_AM_SLOTS => cfg.am.slots = parse_int(key, value, 1, 1_000_000)?,
                KEY_AM_MAX_STARTING_PER_NODE => cfg.am.max_starting_per_node = parse_int(key, value, 0, 1_000_000)?,
                _ => {
                    if let Some(family) = ENGINE_KEY_FAMILIES.iter().find(|f| key.starts_with(*f)) {
                        // A misspelt engine key would otherwise become a policy parameter nobody reads,
                        // and the run would silently go without what it asked for.
                        let known: Vec<&str> = ENGINE_KEYS.iter().copied().filter(|k| k.starts_with(family)).collect();
                        return Err(Error::config(key, value, format!("a known key, not {key}: {}", known.join(", "))));
                    }
                    cfg.params.insert(key.to_string(), value.to_string());
                }
            }
        }
        Ok(cfg)
    }

    /// A policy parameter, if set.
    pub fn param(&self, key: &str) -> Option<&str> {
        self.params.get(key).map(String::as_str)
    }

    /// Whether a node named `name` is in the accelerated pool ([`KEY_ACCELERATED_HOSTS`]). YARN names
    /// nodes `host:port` when the RM includes ports in node names, so the host part matches too.
    pub fn is_accelerated_host(&self, name: &str) -> bool {
        self.param(KEY_ACCELERATED_HOSTS).is_some_and(|hosts| {
            let host = name.rsplit_once(':').filter(|(_, port)| port.parse::<u16>().is_ok()).map_or(name, |(h, _)| h);
            hosts.split(',').map(str::trim).any(|h| h == name || h == host)
        })
    }
}

// ----- per-job settings ---------------------------------------------------------------------

/// `circumflex.job.weight`: relative importance (> 0).
pub const JOB_WEIGHT: &str = "circumflex.job.weight";
/// `circumflex.job.deadline.ms`: deadline in ms RELATIVE to submission.
pub const JOB_DEADLINE_MS: &str = "circumflex.job.deadline.ms";
/// `circumflex.job.sla`: SLA steps `relative_ms:penalty,...`, e.g. `60000:1,120000:5`.
pub const JOB_SLA: &str = "circumflex.job.sla";
/// `circumflex.job.goal.ms`: completion-time goal in ms relative to submission.
pub const JOB_GOAL_MS: &str = "circumflex.job.goal.ms";
/// `circumflex.job.min.slots`: slots guaranteed while the job has work.
pub const JOB_MIN_SLOTS: &str = "circumflex.job.min.slots";
/// `circumflex.job.max.slots`: most slots the job may hold.
pub const JOB_MAX_SLOTS: &str = "circumflex.job.max.slots";
/// `circumflex.job.dataset`: dataset the map phase scans (shared scans).
pub const JOB_DATASET: &str = "circumflex.job.dataset";
/// `circumflex.job.profile.cpu`: CPU one task uses, as a fraction of a node (RAS resource profile).
pub const JOB_PROFILE_CPU: &str = "circumflex.job.profile.cpu";
/// `circumflex.job.profile.io`: disk I/O bandwidth one task uses, as a fraction of a node (RAS).
pub const JOB_PROFILE_IO: &str = "circumflex.job.profile.io";
/// Hadoop 2/3 input paths of a file-based job (comma-separated).
pub const INPUT_DIR: &str = "mapreduce.input.fileinputformat.inputdir";
/// Hadoop 1 input paths of a file-based job (comma-separated).
pub const INPUT_DIR_MRV1: &str = "mapred.input.dir";

/// The dataset a job scans when it does not name one: its set of input paths, each without a
/// trailing slash, sorted and de-duplicated, joined by commas. Two jobs share a scan (CIRCUMFLEX)
/// exactly when they read the same paths. `None` when the job reads no path.
pub fn dataset_of_inputs(paths: &str) -> Option<String> {
    let mut parts: Vec<&str> =
        paths.split(',').map(|p| p.trim().trim_end_matches('/')).filter(|p| !p.is_empty()).collect();
    parts.sort_unstable();
    parts.dedup();
    (!parts.is_empty()).then(|| parts.join(","))
}

/// `circumflex.job.map.ms`: estimated duration of one map task.
pub const JOB_MAP_MS: &str = "circumflex.job.map.ms";
/// `circumflex.job.reduce.ms`: estimated duration of one reduce task.
pub const JOB_REDUCE_MS: &str = "circumflex.job.reduce.ms";
/// `mapreduce.workflow.adjacency.` prefix: `<prefix><node>` = comma-separated successors.
pub const WORKFLOW_ADJACENCY_PREFIX: &str = "mapreduce.workflow.adjacency.";

/// Most tasks accepted in one phase (the same bound `JobSpec::validate` applies).
use crate::model::MAX_TASKS;

/// The first key of `keys` that is set, with its value (new MapReduce names before old ones).
fn first_of<'a>(conf: &'a BTreeMap<String, String>, keys: &[&'a str]) -> Option<(&'a str, &'a str)> {
    keys.iter().find_map(|k| conf.get(*k).map(|v| (*k, v.as_str())))
}

/// [`parse_int`] for a job key: the same checks, reported as [`Error::InvalidJob`].
fn job_int<T>(key: &str, value: &str, lo: T, hi: T) -> Result<T>
where
    T: std::str::FromStr + PartialOrd + std::fmt::Display + Copy,
{
    parse_int(key, value, lo, hi).map_err(config_to_job_error)
}

/// [`parse_f64`] for a job key, with the job-facing description of what is allowed.
fn job_f64(key: &str, value: &str, lo: f64, hi: f64, allowed: &str) -> Result<f64> {
    parse_f64(key, value, lo, hi).map_err(|_| Error::job(key, value, allowed))
}

/// Re-labels a configuration error as a job error (same key, value and allowed values).
fn config_to_job_error(err: Error) -> Error {
    match err {
        Error::InvalidConfig { key, value, allowed } => Error::InvalidJob { field: key, value, allowed },
        other => other,
    }
}

/// Offsets `relative` ms from `now`, refusing overflow.
fn relative_time(key: &str, value: &str, now: Time) -> Result<Time> {
    let rel: Time = job_int(key, value, 0, crate::model::MAX_TASK_MS * 10)?;
    now.checked_add(rel).ok_or_else(|| Error::job(key, value, "a relative time that does not overflow"))
}

/// Parses `mapreduce.job.priority`: Hadoop's names or an integer.
fn job_priority(key: &str, value: &str) -> Result<i32> {
    match value.trim().to_ascii_uppercase().as_str() {
        "VERY_HIGH" => Ok(2),
        "HIGH" => Ok(1),
        "NORMAL" | "DEFAULT" => Ok(0),
        "LOW" => Ok(-1),
        "VERY_LOW" => Ok(-2),
        other => other
            .parse::<i32>()
            .ok()
            .filter(|p| (-crate::model::MAX_PRIORITY..=crate::model::MAX_PRIORITY).contains(p))
            .ok_or_else(|| {
                Error::job(
                    key,
                    value,
                    "VERY_HIGH, HIGH, NORMAL, LOW, VERY_LOW, DEFAULT or an integer in -1000000 ..= 1000000",
                )
            }),
    }
}

/// Parses SLA steps `relative_ms:penalty[,relative_ms:penalty...]` into absolute steps.
fn job_sla(value: &str, now: Time) -> Result<Vec<crate::model::SlaStep>> {
    let allowed = "comma-separated steps relative_ms:penalty, e.g. 60000:1,120000:5";
    let mut steps = Vec::new();
    for part in value.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (ms, penalty) = part.split_once(':').ok_or_else(|| Error::job(JOB_SLA, value, allowed))?;
        let deadline_ms = relative_time(JOB_SLA, ms, now).map_err(|_| Error::job(JOB_SLA, value, allowed))?;
        let penalty: f64 = penalty.trim().parse().map_err(|_| Error::job(JOB_SLA, value, allowed))?;
        if !(penalty.is_finite() && penalty >= 0.0) {
            return Err(Error::job(JOB_SLA, value, "penalties that are finite numbers >= 0"));
        }
        steps.push(crate::model::SlaStep { deadline_ms, penalty });
    }
    if steps.is_empty() {
        return Err(Error::job(JOB_SLA, value, allowed));
    }
    if steps.windows(2).any(|w| w[1].deadline_ms <= w[0].deadline_ms || w[1].penalty < w[0].penalty) {
        return Err(Error::job(JOB_SLA, value, "steps with increasing times and non-decreasing penalties"));
    }
    Ok(steps)
}

/// Maps a job configuration (every key the host forwards, as strings) to a [`JobSpec`] submitted at
/// `now`. Keys, old MapReduce names in brackets:
/// - `mapreduce.job.maps` [`mapred.map.tasks`], `mapreduce.job.reduces` [`mapred.reduce.tasks`];
/// - `mapreduce.job.name` [`mapred.job.name`], `mapreduce.job.user.name` [`user.name`],
///   `mapreduce.job.id` (external id), `mapreduce.job.priority`;
/// - `circumflex.job.weight`, `.deadline.ms`, `.sla`, `.goal.ms` (all times RELATIVE to submission),
///   `.min.slots`, `.max.slots`, `.dataset`, `.map.ms`, `.reduce.ms`;
/// - `mapreduce.job.reduce.slowstart.completedmaps`;
/// - `mapreduce.input.fileinputformat.inputdir` / `mapred.input.dir`: the dataset when
///   `circumflex.job.dataset` is unset ([`dataset_of_inputs`]);
/// - `mapreduce.map.memory.mb`, `mapreduce.map.cpu.vcores` (per-task resources);
/// - `mapreduce.workflow.id`, `mapreduce.workflow.node.name`, `mapreduce.workflow.adjacency.<node>`.
///
/// Other keys are ignored. Every malformed value is an [`Error::InvalidJob`] naming the key, the
/// value and what is allowed.
///
/// Decisions where Hadoop leaves a gap:
/// - A missing map count means 1 map (the job is a black box; a YARN host grows the totals from
///   the application's asks). A missing reduce count means Hadoop's default, 1 reduce.
/// - The slow-start key defaults to 1.0 (reduces after all maps, as the papers assume), not
///   Hadoop's 0.05; hosts that know better (the YARN AM's asks) override readiness directly.
/// - A flow needs both `mapreduce.workflow.id` and `mapreduce.workflow.node.name`; either alone
///   is an error, since a half-declared flow cannot be placed in its DAG.
pub fn job_spec_from_conf(conf: &BTreeMap<String, String>, now: Time) -> Result<JobSpec> {
    if now < 0 {
        return Err(Error::job("submit time", now, "a time >= 0"));
    }
    let maps = match first_of(conf, &["mapreduce.job.maps", "mapred.map.tasks"]) {
        Some((k, v)) => job_int(k, v, 0, MAX_TASKS)?,
        None => 1,
    };
    let reduces = match first_of(conf, &["mapreduce.job.reduces", "mapred.reduce.tasks"]) {
        Some((k, v)) => job_int(k, v, 0, MAX_TASKS)?,
        None => 1,
    };
    let mut spec = JobSpec::new(now, maps, reduces);
    let text = |keys: &[&str]| first_of(conf, keys).map(|(_, v)| v.trim().to_string());
    spec.name = text(&["mapreduce.job.name", "mapred.job.name"]).unwrap_or_default();
    spec.user = text(&["mapreduce.job.user.name", "user.name"]).unwrap_or_default();
    spec.external_id = text(&["mapreduce.job.id"]).unwrap_or_default();
    if let Some((k, v)) = first_of(conf, &["mapreduce.job.priority", "mapred.job.priority"]) {
        spec.priority = job_priority(k, v)?;
    }
    if let Some(v) = conf.get(JOB_WEIGHT) {
        spec.weight = job_f64(JOB_WEIGHT, v, f64::MIN_POSITIVE, 1e12, "a finite number > 0")?;
    }
    if let Some(v) = conf.get(JOB_DEADLINE_MS) {
        spec.deadline_ms = Some(relative_time(JOB_DEADLINE_MS, v, now)?);
    }
    if let Some(v) = conf.get(JOB_SLA) {
        spec.sla = job_sla(v, now)?;
    }
    if let Some(v) = conf.get(JOB_GOAL_MS) {
        spec.goal_ms = Some(relative_time(JOB_GOAL_MS, v, now)?);
    }
    if let Some(v) = conf.get(JOB_MIN_SLOTS) {
        spec.min_slots = job_int(JOB_MIN_SLOTS, v, 0, MAX_TASKS)?;
    }
    if let Some(v) = conf.get(JOB_MAX_SLOTS) {
        spec.max_slots = Some(job_int(JOB_MAX_SLOTS, v, 1, MAX_TASKS)?);
        if let Some(max) = spec.max_slots {
            if spec.min_slots > max {
                let min = spec.min_slots.to_string();
                return Err(Error::job(JOB_MIN_SLOTS, min, format!("at most {JOB_MAX_SLOTS} ({max})")));
            }
        }
    }
    if let Some(v) = conf.get(JOB_DATASET) {
        if v.trim().is_empty() {
            return Err(Error::job(JOB_DATASET, v, "a non-empty dataset name"));
        }
        spec.dataset = Some(v.trim().to_string());
    } else {
        spec.dataset = [INPUT_DIR, INPUT_DIR_MRV1].iter().find_map(|k| conf.get(*k)).and_then(|v| dataset_of_inputs(v));
    }
    if let Some(v) = conf.get(JOB_MAP_MS) {
        spec.maps.task_ms = Some(job_int(JOB_MAP_MS, v, 0, crate::model::MAX_TASK_MS)?);
    }
    if let Some(v) = conf.get(JOB_REDUCE_MS) {
        spec.reduces.task_ms = Some(job_int(JOB_REDUCE_MS, v, 0, crate::model::MAX_TASK_MS)?);
    }
    let slowstart = "mapreduce.job.reduce.slowstart.completedmaps";
    if let Some(v) = conf.get(slowstart) {
        spec.reduce_slowstart = job_f64(slowstart, v, 0.0, 1.0, "a fraction in [0, 1]")?;
    }
    if let Some(v) = conf.get("mapreduce.map.memory.mb") {
        spec.resources.memory_mb = job_int("mapreduce.map.memory.mb", v, 0, 1 << 24)?;
    }
    if let Some(v) = conf.get("mapreduce.map.cpu.vcores") {
        spec.resources.vcores = job_int("mapreduce.map.cpu.vcores", v, 0, 1 << 16)?;
    }
    if let Some(v) = conf.get(JOB_PROFILE_CPU) {
        spec.resources.cpu = job_f64(JOB_PROFILE_CPU, v, 0.0, 1.0, "a fraction of one node in [0, 1]")?;
    }
    if let Some(v) = conf.get(JOB_PROFILE_IO) {
        spec.resources.io = job_f64(JOB_PROFILE_IO, v, 0.0, 1.0, "a fraction of one node in [0, 1]")?;
    }
    spec.flow = job_flow(conf)?;
    spec.validate()?;
    Ok(spec)
}

/// Reads the `mapreduce.workflow.*` keys into a flow membership, if the job declares one.
fn job_flow(conf: &BTreeMap<String, String>) -> Result<Option<crate::model::FlowMembership>> {
    const ID: &str = "mapreduce.workflow.id";
    const NODE: &str = "mapreduce.workflow.node.name";
    let id = conf.get(ID).map(|v| v.trim()).filter(|v| !v.is_empty());
    let node = conf.get(NODE).map(|v| v.trim()).filter(|v| !v.is_empty());
    let (flow_id, node_name) = match (id, node) {
        (None, None) => return Ok(None),
        (Some(f), Some(n)) => (f.to_string(), n.to_string()),
        (Some(f), None) => return Err(Error::job(NODE, "", format!("a node name, since {ID} = '{f}' is set"))),
        (None, Some(n)) => return Err(Error::job(ID, "", format!("a flow id, since {NODE} = '{n}' is set"))),
    };
    let mut adjacency = Vec::new();
    for (key, value) in conf.range(WORKFLOW_ADJACENCY_PREFIX.to_string()..) {
        let Some(from) = key.strip_prefix(WORKFLOW_ADJACENCY_PREFIX) else {
            break;
        };
        if from.is_empty() {
            return Err(Error::job(key, value, "a key mapreduce.workflow.adjacency.<node name>"));
        }
        let successors: Vec<String> =
            value.split(',').map(str::trim).filter(|s| !s.is_empty()).map(str::to_string).collect();
        adjacency.push((from.to_string(), successors));
    }
    Ok(Some(crate::model::FlowMembership { flow_id, node_name, adjacency }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_overrides() {
        let cfg = EngineConfig::from_pairs([
            ("circumflex.policy", "Fair"),
            ("circumflex.epoch.ms", "500"),
            ("yarn.something", "ignored"),
        ])
        .unwrap();
        assert_eq!(cfg.policy, "fair");
        assert_eq!(cfg.epoch_ms, 500);
    }

    #[test]
    fn errors_name_key_value_and_allowed() {
        let err = EngineConfig::from_pairs([("circumflex.epoch.ms", "-5")]).unwrap_err().to_string();
        assert!(err.contains("circumflex.epoch.ms") && err.contains("-5") && err.contains("integer"), "{err}");
        let err = EngineConfig::from_pairs([("circumflex.pool.mode", "both")]).unwrap_err().to_string();
        assert!(err.contains("split or shared"), "{err}");
    }

    #[test]
    fn am_gate_keys_parse_and_bad_values_name_themselves() {
        let off = EngineConfig::from_pairs([("circumflex.policy", "fifo")]).unwrap();
        assert_eq!(off.am, AmAdmissionConfig { enabled: false, max_share: 0.5, slots: 1, max_starting_per_node: 0 });
        assert!(!serde_json::to_string(&off).unwrap().contains("\"am\""), "not serialized while off");
        let on = EngineConfig::from_pairs([(KEY_AM_ADMISSION, "true"), (KEY_AM_MAX_SHARE, "0.3"), (KEY_AM_SLOTS, "2")])
            .unwrap();
        assert_eq!(on.am, AmAdmissionConfig { enabled: true, max_share: 0.3, slots: 2, max_starting_per_node: 0 });
        assert!(!serde_json::to_string(&on).unwrap().contains("max_starting"), "no bound: not serialized");
        let bounded =
            EngineConfig::from_pairs([(KEY_AM_ADMISSION, "true"), (KEY_AM_MAX_STARTING_PER_NODE, "2")]).unwrap();
        assert_eq!(bounded.am.max_starting_per_node, 2);
        assert!(on.params.is_empty(), "engine keys are not policy parameters");
        for (key, value, allowed) in [
            (KEY_AM_MAX_SHARE, "1", "(0, 1)"),
            (KEY_AM_MAX_SHARE, "0", "(0, 1)"),
            (KEY_AM_SLOTS, "0", "integer"),
            (KEY_AM_MAX_STARTING_PER_NODE, "-1", "integer"),
        ] {
            let err = EngineConfig::from_pairs([(key, value)]).unwrap_err().to_string();
            assert!(err.contains(key) && err.contains(allowed), "{err}");
        }
    }

    #[test]
    fn long_task_reserve_parses_defaults_to_a_tenth_and_names_bad_values() {
        assert_eq!(EngineConfig::default().preemption.long_task_reserve, 0.1);
        let off =
            EngineConfig::from_pairs([(KEY_PREEMPTION, "true"), (KEY_PREEMPTION_LONG_TASK_RESERVE, "0")]).unwrap();
        assert_eq!(off.preemption.long_task_reserve, 0.0);
        let wide = EngineConfig::from_pairs([(KEY_PREEMPTION_LONG_TASK_RESERVE, "0.25")]).unwrap();
        assert_eq!(wide.preemption.long_task_reserve, 0.25);
        for value in ["1.5", "-0.1", "ten"] {
            let err = EngineConfig::from_pairs([(KEY_PREEMPTION_LONG_TASK_RESERVE, value)]).unwrap_err().to_string();
            assert!(err.contains(KEY_PREEMPTION_LONG_TASK_RESERVE) && err.contains(value), "{err}");
        }
        // A configuration serialized before the key existed reads with the default.
        let old = r#"{"enabled":true,"delay_ms":3000,"grace_ms":15000,"max_fraction":0.1}"#;
        let parsed: PreemptionConfig = serde_json::from_str(old).unwrap();
        assert_eq!(parsed.long_task_reserve, 0.1);
    }

    #[test]
    fn a_misspelt_engine_key_is_refused_by_name_and_policy_keys_pass() {
        for (key, known) in [
            ("circumflex.am.max.starting", KEY_AM_MAX_STARTING_PER_NODE),
            ("circumflex.preemption.grace", KEY_PREEMPTION_GRACE_MS),
            ("circumflex.locality.delay", KEY_NODE_DELAY),
            ("circumflex.epoch", KEY_EPOCH_MS),
        ] {
            let err = EngineConfig::from_pairs([(key, "1")]);
            match key {
                // No family: a policy parameter, as before.
                "circumflex.epoch" => assert_eq!(err.unwrap().param(key), Some("1")),
                _ => {
                    let msg = err.unwrap_err().to_string();
                    assert!(msg.contains(key) && msg.contains(known), "{msg}");
                }
            }
        }
        let cfg = EngineConfig::from_pairs([("circumflex.flex.horizon", "3"), (KEY_ACCELERATED_HOSTS, "a,b")]).unwrap();
        assert_eq!(cfg.param("circumflex.flex.horizon"), Some("3"));
        assert_eq!(cfg.param(KEY_ACCELERATED_HOSTS), Some("a,b"));
        for key in ENGINE_KEYS {
            assert!(!key.starts_with("circumflex.job."), "{key} would be skipped as a job key");
        }
    }

    fn conf(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn job_conf_maps_every_key() {
        let c = conf(&[
            ("mapreduce.job.maps", "12"),
            ("mapreduce.job.reduces", "3"),
            ("mapreduce.job.name", "wordcount"),
            ("mapreduce.job.user.name", "alice"),
            ("mapreduce.job.priority", "HIGH"),
            ("circumflex.job.weight", "2.5"),
            ("circumflex.job.deadline.ms", "60000"),
            ("circumflex.job.sla", "60000:1, 120000:5"),
            ("circumflex.job.goal.ms", "90000"),
            ("circumflex.job.min.slots", "2"),
            ("circumflex.job.max.slots", "8"),
            ("circumflex.job.dataset", "logs"),
            ("circumflex.job.map.ms", "4000"),
            ("circumflex.job.reduce.ms", "9000"),
            ("mapreduce.job.reduce.slowstart.completedmaps", "0.5"),
            ("mapreduce.workflow.id", "flow-1"),
            ("mapreduce.workflow.node.name", "b"),
            ("mapreduce.workflow.adjacency.a", "b,c"),
            ("mapreduce.workflow.adjacency.b", "c"),
            ("unrelated.key", "x"),
        ]);
        let s = job_spec_from_conf(&c, 1_000).unwrap();
        assert_eq!((s.maps.tasks, s.reduces.tasks), (12, 3));
        assert_eq!((s.name.as_str(), s.user.as_str(), s.priority), ("wordcount", "alice", 1));
        assert_eq!(s.weight, 2.5);
        assert_eq!(s.deadline_ms, Some(61_000), "deadline is relative to submission");
        assert_eq!(
            s.sla.iter().map(|x| (x.deadline_ms, x.penalty)).collect::<Vec<_>>(),
            [(61_000, 1.0), (121_000, 5.0)]
        );
        assert_eq!(s.goal_ms, Some(91_000));
        assert_eq!((s.min_slots, s.max_slots), (2, Some(8)));
        assert_eq!(s.dataset.as_deref(), Some("logs"));
        let derived = job_spec_from_conf(
            &[(INPUT_DIR, "hdfs://nn/logs/day2/, hdfs://nn/logs/day1,hdfs://nn/logs/day2")]
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            0,
        )
        .unwrap();
        assert_eq!(derived.dataset.as_deref(), Some("hdfs://nn/logs/day1,hdfs://nn/logs/day2"));
        assert_eq!(dataset_of_inputs(" , "), None);
        assert_eq!((s.maps.task_ms, s.reduces.task_ms), (Some(4000), Some(9000)));
        assert_eq!(s.reduce_slowstart, 0.5);
        let flow = s.flow.unwrap();
        assert_eq!((flow.flow_id.as_str(), flow.node_name.as_str()), ("flow-1", "b"));
        assert_eq!(flow.adjacency, vec![("a".into(), vec!["b".into(), "c".into()]), ("b".into(), vec!["c".into()])]);
    }

    #[test]
    fn job_conf_old_names_and_defaults() {
        let s = job_spec_from_conf(&conf(&[("mapred.map.tasks", "4"), ("mapred.reduce.tasks", "0")]), 5).unwrap();
        assert_eq!((s.maps.tasks, s.reduces.tasks, s.submit_ms), (4, 0, 5));
        let s = job_spec_from_conf(&conf(&[("mapreduce.job.maps", "4"), ("mapred.map.tasks", "9")]), 0).unwrap();
        assert_eq!(s.maps.tasks, 4, "the new name wins");
        let s = job_spec_from_conf(&BTreeMap::new(), 0).unwrap();
        assert_eq!((s.maps.tasks, s.reduces.tasks, s.weight, s.reduce_slowstart), (1, 1, 1.0, 1.0));
        assert!(s.flow.is_none());
    }

    #[test]
    fn job_conf_errors_name_key_value_and_allowed() {
        let cases: &[(&str, &str, &str)] = &[
            ("mapreduce.job.maps", "many", "integer"),
            ("mapreduce.job.reduces", "-1", "integer"),
            ("circumflex.job.weight", "0", "> 0"),
            ("circumflex.job.weight", "NaN", "> 0"),
            ("circumflex.job.deadline.ms", "-5", "integer"),
            ("circumflex.job.sla", "60000", "relative_ms:penalty"),
            ("circumflex.job.sla", "60000:5,30000:6", "increasing"),
            ("circumflex.job.sla", "60000:x", "relative_ms:penalty"),
            ("circumflex.job.goal.ms", "soon", "integer"),
            ("circumflex.job.max.slots", "0", "integer in [1"),
            ("circumflex.job.dataset", " ", "non-empty"),
            ("circumflex.job.map.ms", "1e3", "integer"),
            ("mapreduce.job.reduce.slowstart.completedmaps", "1.5", "fraction"),
            ("mapreduce.job.priority", "URGENT", "VERY_HIGH"),
        ];
        for (key, value, allowed) in cases {
            let err = job_spec_from_conf(&conf(&[(key, value)]), 0).unwrap_err();
            assert!(matches!(err, Error::InvalidJob { .. }), "{key}: {err:?}");
            let msg = err.to_string();
            assert!(msg.contains(key) && msg.contains(value.trim()) && msg.contains(allowed), "{key}={value}: {msg}");
        }
        let err = job_spec_from_conf(&conf(&[("circumflex.job.min.slots", "5"), ("circumflex.job.max.slots", "3")]), 0)
            .unwrap_err()
            .to_string();
        assert!(err.contains("circumflex.job.min.slots") && err.contains("circumflex.job.max.slots"), "{err}");
        let err = job_spec_from_conf(&conf(&[("mapreduce.workflow.id", "f")]), 0).unwrap_err().to_string();
        assert!(err.contains("mapreduce.workflow.node.name"), "{err}");
        let err = job_spec_from_conf(&conf(&[("mapreduce.job.maps", "0"), ("mapreduce.job.reduces", "0")]), 0);
        assert!(err.unwrap_err().to_string().contains("at least one task"));
    }

    proptest::proptest! {
        #[test]
        fn job_conf_never_panics_and_errors_name_the_key(key_idx in 0usize..12, value in "\\PC{0,12}") {
            let keys = [
                "mapreduce.job.maps", "mapreduce.job.reduces", "circumflex.job.weight", "circumflex.job.deadline.ms",
                "circumflex.job.sla", "circumflex.job.goal.ms", "circumflex.job.min.slots", "circumflex.job.max.slots",
                "circumflex.job.map.ms", "circumflex.job.reduce.ms", "mapreduce.job.reduce.slowstart.completedmaps",
                "mapreduce.job.priority",
            ];
            let key = keys[key_idx];
            if let Err(err) = job_spec_from_conf(&conf(&[(key, &value)]), 1000) {
                let msg = err.to_string();
                proptest::prop_assert!(msg.contains(key) || msg.contains("at least one task"), "{msg}");
            }
        }
    }
}
