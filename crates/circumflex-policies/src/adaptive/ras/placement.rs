//! The RAS Placement Algorithm (thesis Algorithm 1, §4.2.4) and the Task Scheduler that applies a
//! placement gradually (§4.2.5). Pure functions: jobs, node capacities and the current placement
//! in; a new placement (or the next task to start on a node) out.
//!
//! Algorithm 1, as implemented:
//! 1. **Reducers first**, spread out: per job (in input order), visit nodes by (reducers already on
//!    the node, this job's reducers there, node index) and put at most one reducer per node per
//!    pass, passes repeating while reducers remain unplaced and some node takes one. So no node
//!    gets two reducers of a job before every node that has room holds one. Placed reducers are
//!    never removed (they are not pre-emptible); their demand is the shuffle profile until the
//!    caller says the map phase ends this cycle (`reducers_reducing`, step 3), then the reduce one.
//! 2. **Maps, max-min over utility**, for up to `rounds` rounds, nodes visited in index order:
//!    (a) move a map from the happiest job on the node to the poorest job that fits, as long as the
//!    donor stays **strictly** above the receiver's old utility (strict, so equal jobs do not churn;
//!    the thesis's last, unfair removal is undone); (b) greedily fill the node, always with the
//!    lowest-utility job that fits and still has unplaced maps (`s_alloc < s_pend`, decision for gap 14).
//!    Rounds stop early when the ascending utility vector does not improve lexicographically.
//!    Ties: lowest utility, then fewer maps placed, then lower job index (submission order).
//!
//! If the current placement already overloads a node (capacity fell, e.g. Reverse-Adaptive's f(t),
//! or reducers switched to the reduce profile), maps are removed there first, happiest job first,
//! until the node fits or only reducers are left. Jobs holding more maps than they have left are
//! trimmed too. Limitation kept from the thesis: step 2a frees one map at a time, so a receiver
//! whose task needs two freed maps' worth of room is not considered.

use super::resources::{Demand, Profile};
use super::utility::{job_utility, MapNeed};

/// One job as the placement sees it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PlacementJob {
    /// Resource profile.
    pub profile: Profile,
    /// What the job needs from the maps (`s_req`, or `s_fit` and `s_req`).
    pub need: MapNeed,
    /// Map tasks not completed (running + unstarted).
    pub s_pend: u32,
    /// Reduce tasks not completed.
    pub r_pend: u32,
    /// Whether reducers may be placed now.
    pub place_reducers: bool,
    /// Whether placed reducers are in their reduce sub-phase (the map phase ends this cycle).
    pub reducers_reducing: bool,
}

impl PlacementJob {
    /// Demand of one placed reducer of this job.
    pub fn reducer_demand(&self) -> Demand {
        if self.reducers_reducing {
            self.profile.reduce
        } else {
            self.profile.shuffle
        }
    }
}

/// Placement matrices `P^M` and `P^R`, indexed `[job][node]`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Placement {
    /// Map tasks of each job on each node.
    pub maps: Vec<Vec<u32>>,
    /// Reduce tasks of each job on each node.
    pub reduces: Vec<Vec<u32>>,
}

impl Placement {
    /// An empty placement for `jobs` jobs on `nodes` nodes.
    pub fn empty(jobs: usize, nodes: usize) -> Placement {
        Placement { maps: vec![vec![0; nodes]; jobs], reduces: vec![vec![0; nodes]; jobs] }
    }

    /// `s_alloc` of job `j`.
    pub fn s_alloc(&self, j: usize) -> u32 {
        self.maps.get(j).map_or(0, |row| row.iter().sum())
    }

    /// `r_alloc` of job `j`.
    pub fn r_alloc(&self, j: usize) -> u32 {
        self.reduces.get(j).map_or(0, |row| row.iter().sum())
    }

    /// Demand placed on node `n`.
    pub fn node_load(&self, jobs: &[PlacementJob], n: usize) -> Demand {
        let mut load = Demand::ZERO;
        for (j, job) in jobs.iter().enumerate() {
            let m = self.maps.get(j).and_then(|r| r.get(n)).copied().unwrap_or(0);
            let r = self.reduces.get(j).and_then(|r| r.get(n)).copied().unwrap_or(0);
            load = load.plus(job.profile.map.times(f64::from(m))).plus(job.reducer_demand().times(f64::from(r)));
        }
        load
    }
}

/// Placement parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlacementConfig {
    /// Most rounds of step 2 (the thesis's `rounds`; no default is given, we use 3).
    pub rounds: u32,
}

impl Default for PlacementConfig {
    fn default() -> Self {
        PlacementConfig { rounds: 3 }
    }
}

/// Working state of one run of Algorithm 1.
struct State<'a> {
    jobs: &'a [PlacementJob],
    capacity: &'a [Demand],
    p: Placement,
    load: Vec<Demand>,
    s_alloc: Vec<u32>,
    r_alloc: Vec<u32>,
}

impl State<'_> {
    fn utility(&self, j: usize) -> f64 {
        let job = &self.jobs[j];
        job_utility(
            job.need,
            f64::from(self.s_alloc[j]),
            f64::from(job.s_pend),
            f64::from(self.r_alloc[j]),
            f64::from(job.r_pend),
        )
    }

    /// Sort key for "poorest first": utility, then fewer maps, then index.
    fn key(&self, j: usize) -> (f64, u32, usize) {
        (self.utility(j), self.s_alloc[j], j)
    }

    fn room_for_map(&self, j: usize, n: usize) -> bool {
        let job = &self.jobs[j];
        self.s_alloc[j] < job.s_pend && self.load[n].fits(job.profile.map, self.capacity[n])
    }

    fn add_map(&mut self, j: usize, n: usize) {
        self.p.maps[j][n] += 1;
        self.s_alloc[j] += 1;
        self.load[n] = self.load[n].plus(self.jobs[j].profile.map);
    }

    fn remove_map(&mut self, j: usize, n: usize) {
        self.p.maps[j][n] -= 1;
        self.s_alloc[j] -= 1;
        self.load[n] = self.load[n].minus(self.jobs[j].profile.map);
    }

    fn poorest_with_room(&self, n: usize) -> Option<usize> {
        (0..self.jobs.len()).filter(|&j| self.room_for_map(j, n)).min_by(|&a, &b| cmp_key(self.key(a), self.key(b)))
    }

    fn happiest_on(&self, n: usize) -> Option<usize> {
        (0..self.jobs.len()).filter(|&j| self.p.maps[j][n] > 0).max_by(|&a, &b| cmp_key(self.key(a), self.key(b)))
    }

    fn sorted_utilities(&self) -> Vec<f64> {
        let mut u: Vec<f64> = (0..self.jobs.len()).map(|j| self.utility(j)).collect();
        u.sort_by(f64::total_cmp);
        u
    }
}

fn cmp_key(a: (f64, u32, usize), b: (f64, u32, usize)) -> std::cmp::Ordering {
    a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2))
}

/// Runs Algorithm 1. `current` is the placement in force (running tasks and last cycle's plan);
/// rows or columns it lacks count as zero. Returns the new placement.
pub fn place(jobs: &[PlacementJob], capacity: &[Demand], current: &Placement, cfg: PlacementConfig) -> Placement {
    let (nj, nn) = (jobs.len(), capacity.len());
    let mut p = Placement::empty(nj, nn);
    for j in 0..nj {
        for n in 0..nn {
            p.maps[j][n] = current.maps.get(j).and_then(|r| r.get(n)).copied().unwrap_or(0);
            p.reduces[j][n] = current.reduces.get(j).and_then(|r| r.get(n)).copied().unwrap_or(0);
        }
    }
    let load = (0..nn).map(|n| p.node_load(jobs, n)).collect();
    let s_alloc = (0..nj).map(|j| p.s_alloc(j)).collect();
    let r_alloc = (0..nj).map(|j| p.r_alloc(j)).collect();
    let mut st = State { jobs, capacity, p, load, s_alloc, r_alloc };
    trim(&mut st);
    place_reducers(&mut st);
    let mut best = st.sorted_utilities();
    for _ in 0..cfg.rounds.max(1) {
        for n in 0..nn {
            rebalance_node(&mut st, n);
            while let Some(j) = st.poorest_with_room(n) {
                st.add_map(j, n);
            }
        }
        let now = st.sorted_utilities();
        let improved = now.iter().zip(&best).find(|(a, b)| a != b).is_some_and(|(a, b)| a > b);
        best = now;
        if !improved {
            break;
        }
    }
    st.p
}

/// Removes maps a job no longer has, and maps on overloaded nodes (happiest job first).
fn trim(st: &mut State<'_>) {
    for j in 0..st.jobs.len() {
        let mut n = st.capacity.len();
        while st.s_alloc[j] > st.jobs[j].s_pend && n > 0 {
            n -= 1;
            while st.p.maps[j][n] > 0 && st.s_alloc[j] > st.jobs[j].s_pend {
                st.remove_map(j, n);
            }
        }
    }
    for n in 0..st.capacity.len() {
        while !st.load[n].fits(Demand::ZERO, st.capacity[n]) {
            let Some(j) = st.happiest_on(n) else { break };
            st.remove_map(j, n);
        }
    }
}

fn place_reducers(st: &mut State<'_>) {
    let nn = st.capacity.len();
    for j in 0..st.jobs.len() {
        let job = st.jobs[j];
        if !job.place_reducers {
            continue;
        }
        let demand = job.reducer_demand();
        loop {
            let mut order: Vec<usize> = (0..nn).collect();
            let total_on = |n: usize| -> u32 { st.p.reduces.iter().map(|row| row[n]).sum() };
            order.sort_by_key(|&n| (total_on(n), st.p.reduces[j][n], n));
            let mut placed = false;
            for n in order {
                if st.r_alloc[j] >= job.r_pend {
                    break;
                }
                if st.load[n].fits(demand, st.capacity[n]) {
                    st.p.reduces[j][n] += 1;
                    st.r_alloc[j] += 1;
                    st.load[n] = st.load[n].plus(demand);
                    placed = true;
                }
            }
            if !placed || st.r_alloc[j] >= job.r_pend {
                break;
            }
        }
    }
}

/// Step 2a on node `n`: move maps from the happiest to the poorest job while that is fair.
fn rebalance_node(st: &mut State<'_>, n: usize) {
    while let Some(out) = st.happiest_on(n) {
        st.remove_map(out, n);
        let receiver = st.poorest_with_room(n);
        let keep = match receiver {
            Some(inn) if inn != out => {
                // The receiver's utility is unchanged by the removal (it is another job).
                st.utility(out) > st.utility(inn)
            }
            _ => false,
        };
        if !keep {
            st.add_map(out, n);
            return;
        }
        if let Some(inn) = receiver {
            st.add_map(inn, n);
        }
    }
}

/// A job's option on one node for the Task Scheduler.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Candidate {
    /// Caller's job index.
    pub job: usize,
    /// Whether this is a reduce task (else a map task).
    pub reduce: bool,
    /// Demand of one task.
    pub demand: Demand,
    /// Placement budget left on this node: `P(job, node) − running(job, node)`.
    pub budget: u32,
    /// Unstarted tasks of this type.
    pub pending: u32,
    /// The job's current utility (lowest is served first).
    pub utility: f64,
}

/// The Task Scheduler (§4.2.5) on one node: starts tasks of jobs that still have budget on the node
/// under the new placement and whose task fits the node's **actual** free capacity, lowest utility
/// first (ties: job index, maps before reduces). Never starts a task that would overload the node.
/// Returns the candidate indices started, in order, one entry per task; `used` is updated.
pub fn fill_node(cands: &mut [Candidate], used: &mut Demand, capacity: Demand) -> Vec<usize> {
    let mut started = Vec::new();
    loop {
        let pick = (0..cands.len())
            .filter(|&i| cands[i].budget > 0 && cands[i].pending > 0 && used.fits(cands[i].demand, capacity))
            .min_by(|&a, &b| {
                let (x, y) = (&cands[a], &cands[b]);
                x.utility.total_cmp(&y.utility).then(x.job.cmp(&y.job)).then(x.reduce.cmp(&y.reduce))
            });
        let Some(i) = pick else { break };
        cands[i].budget -= 1;
        cands[i].pending -= 1;
        *used = used.plus(cands[i].demand);
        started.push(i);
    }
    started
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::adaptive::ras::resources::gridmix;
    use proptest::prelude::*;

    fn cpu_job(cpu: f64, s_req: f64, s_pend: u32) -> PlacementJob {
        let d = Demand::new(cpu, 0.0, 0.0);
        PlacementJob {
            profile: Profile { map: d, shuffle: d, reduce: d },
            need: MapNeed::Ras { s_req },
            s_pend,
            r_pend: 0,
            place_reducers: false,
            reducers_reducing: false,
        }
    }

    fn feasible(jobs: &[PlacementJob], cap: &[Demand], p: &Placement) -> bool {
        (0..cap.len()).all(|n| p.node_load(jobs, n).fits(Demand::ZERO, cap[n]))
    }

    #[test]
    fn tiny_example_shares_six_slots_three_each() {
        let jobs = [cpu_job(0.3, 3.0, 10), cpu_job(0.3, 3.0, 10)];
        let cap = [Demand::NODE; 2];
        let p = place(&jobs, &cap, &Placement::default(), PlacementConfig::default());
        assert_eq!((p.s_alloc(0), p.s_alloc(1)), (3, 3));
        assert!(feasible(&jobs, &cap, &p));
    }

    #[test]
    fn greedy_fill_leaves_no_room_for_any_job() {
        let jobs = [cpu_job(0.3, 3.0, 10), cpu_job(0.6, 3.0, 10)];
        let cap = [Demand::NODE; 2];
        let p = place(&jobs, &cap, &Placement::default(), PlacementConfig::default());
        for (n, c) in cap.iter().enumerate() {
            let load = p.node_load(&jobs, n);
            assert!(!load.fits(jobs[0].profile.map, *c), "node {n} could take another A task");
        }
        assert!(p.s_alloc(1) >= 1, "the big job gets at least one slot");
    }

    #[test]
    fn rebalancing_moves_maps_from_a_happy_job_to_a_new_one() {
        let jobs = [cpu_job(0.25, 2.0, 40), cpu_job(0.25, 4.0, 40)];
        let cap = [Demand::NODE; 2];
        let mut current = Placement::empty(2, 2);
        current.maps[0] = vec![4, 4];
        let p = place(&jobs, &cap, &current, PlacementConfig::default());
        assert!(p.s_alloc(1) >= 4, "the needy newcomer gets its s_req: {:?}", p);
        assert_eq!(p.s_alloc(0) + p.s_alloc(1), 8);
    }

    #[test]
    fn reducers_spread_one_per_node_before_doubling() {
        let mut a = cpu_job(0.1, 1.0, 0);
        a.r_pend = 3;
        a.place_reducers = true;
        let mut b = a;
        b.r_pend = 4;
        let cap = [Demand::NODE; 4];
        let p = place(&[a, b], &cap, &Placement::default(), PlacementConfig::default());
        assert_eq!(p.reduces[0], vec![1, 1, 1, 0]);
        // B fills the node A left empty first, then spreads: no node has two of B.
        assert_eq!(p.reduces[1], vec![1, 1, 1, 1]);
        let mut c = a;
        c.r_pend = 6;
        let p = place(&[c], &cap[..2], &Placement::default(), PlacementConfig::default());
        assert_eq!(p.reduces[0], vec![3, 3]);
    }

    #[test]
    fn overloaded_nodes_are_trimmed_and_extra_maps_dropped() {
        let jobs = [cpu_job(0.5, 1.0, 3)];
        let mut current = Placement::empty(1, 2);
        current.maps[0] = vec![3, 2];
        let cap = [Demand::new(0.5, 1.0, 1.0), Demand::NODE];
        let p = place(&jobs, &cap, &current, PlacementConfig::default());
        assert!(feasible(&jobs, &cap, &p));
        assert_eq!(p.s_alloc(0), 3);
    }

    #[test]
    fn task_scheduler_waits_for_capacity_and_serves_lowest_utility_first() {
        let sort = gridmix::sort().map;
        let mut cands = [
            Candidate { job: 0, reduce: false, demand: sort, budget: 4, pending: 10, utility: 0.5 },
            Candidate { job: 1, reduce: false, demand: sort, budget: 4, pending: 10, utility: -0.2 },
        ];
        // A node running one Sort map of another job has room for one more (I/O 45% each).
        let mut used = sort;
        let started = fill_node(&mut cands, &mut used, Demand::NODE);
        assert_eq!(started, vec![1]);
        assert!(used.fits(Demand::ZERO, Demand::NODE));
        assert!(fill_node(&mut cands, &mut used, Demand::NODE).is_empty());
    }

    fn arb_job() -> impl Strategy<Value = PlacementJob> {
        (0.05f64..0.7, 0.0f64..0.7, 0.02f64..0.7, 0.0f64..30.0, 0u32..30, 0u32..6, any::<bool>(), any::<bool>())
            .prop_map(|(c, i, m, req, pend, rp, pr, rr)| PlacementJob {
                profile: Profile {
                    map: Demand::new(c, i, m),
                    shuffle: Demand::new(0.0, i / 10.0, m),
                    reduce: Demand::new(c / 2.0, i, (m * 2.0).min(1.0)),
                },
                need: if req > 15.0 {
                    MapNeed::Reverse { s_fit: req - 15.0, s_req: req / 2.0 }
                } else {
                    MapNeed::Ras { s_req: req }
                },
                s_pend: pend,
                r_pend: rp,
                place_reducers: pr,
                reducers_reducing: rr,
            })
    }

    proptest! {
        #[test]
        fn placement_never_overloads_and_fills_greedily(
            jobs in prop::collection::vec(arb_job(), 1..6),
            caps in prop::collection::vec((0.3f64..1.0, 0.3f64..1.0, 0.3f64..1.0), 1..5),
        ) {
            let cap: Vec<Demand> = caps.iter().map(|&(a, b, c)| Demand::new(a, b, c)).collect();
            let p = place(&jobs, &cap, &Placement::default(), PlacementConfig::default());
            prop_assert!(feasible(&jobs, &cap, &p));
            for (j, job) in jobs.iter().enumerate() {
                prop_assert!(p.s_alloc(j) <= job.s_pend);
                prop_assert!(p.r_alloc(j) <= job.r_pend);
                if p.s_alloc(j) < job.s_pend {
                    for (n, c) in cap.iter().enumerate() {
                        prop_assert!(!p.node_load(&jobs, n).fits(job.profile.map, *c), "room left for job {j} on {n}");
                    }
                }
            }
            // Re-running from its own output keeps it feasible (the next control cycle).
            let again = place(&jobs, &cap, &p, PlacementConfig::default());
            prop_assert!(feasible(&jobs, &cap, &again));
        }

        #[test]
        fn task_scheduler_never_overloads(
            demands in prop::collection::vec((0.0f64..0.6, 0.0f64..0.6, 0.0f64..0.6, 0u32..5, 0u32..5), 1..6),
            start in (0.0f64..1.0, 0.0f64..1.0, 0.0f64..1.0),
        ) {
            let mut cands: Vec<Candidate> = demands.iter().enumerate().map(|(j, &(c, i, m, b, p))| Candidate {
                job: j, reduce: false, demand: Demand::new(c, i, m), budget: b, pending: p, utility: -(j as f64),
            }).collect();
            let mut used = Demand::new(start.0, start.1, start.2);
            fill_node(&mut cands, &mut used, Demand::NODE);
            prop_assert!(used.fits(Demand::ZERO, Demand::NODE));
        }
    }
}
